// Block decomposition of a d-dimensional global grid over a Cartesian process
// grid. Uneven sizes are fine: in each dimension the first N % p processes own
// one cell more than the others.
#pragma once

#include "iso/error.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <string>
#include <vector>

namespace isostencil::core {

class Decomposition {
public:
  /// Collective over `comm`. `process_dims` entries of 0 (or an empty vector)
  /// are chosen by MPI_Dims_create; `periodic` empty means all periodic. Every
  /// rank must pass the same arguments; errors (mismatched lengths, a
  /// dimension with fewer cells than processes, arguments that differ between
  /// ranks) are the same iso::Error on every rank.
  Decomposition(MPI_Comm comm, std::vector<long> global_extent, std::vector<bool> periodic = {},
                std::vector<int> process_dims = {});

  /// What a layer above agrees on in the decomposition's own agreement (the
  /// grid: its stencil and depth), so that both cost one collective call:
  /// its local error and a fingerprint that must match on every rank.
  struct AlsoAgreed {
    std::string error;
    iso::MustMatch must_match;
  };
  Decomposition(MPI_Comm comm, std::vector<long> global_extent, std::vector<bool> periodic,
                std::vector<int> process_dims, const AlsoAgreed& also);

  /// The process grid MPI_Dims_create gives `num_procs` processes in `dims`
  /// dimensions with the nonzero entries of `fixed` kept (what the constructor
  /// uses); throws iso::Error when the fixed entries do not divide num_procs.
  static std::vector<int> choose_process_dims(int num_procs, std::vector<int> fixed);

  int dims() const { return static_cast<int>(global_extent_.size()); }
  /// The Cartesian communicator (row-major ranks, no reordering), shared with
  /// the live decompositions of equal process grid and periods over the same
  /// processes (docs/design/halo-exchange.md#shared-communicators-and-patterns).
  MPI_Comm comm() const { return cart_.get(); }
  const iso::CartComm& cart() const { return cart_; }
  const iso::CartGeometry& geometry() const { return cart_.geometry(); }
  int rank() const { return rank_; }
  int num_procs() const { return cart_.geometry().num_procs(); }

  const std::vector<long>& global_extent() const { return global_extent_; }
  const std::vector<bool>& periodic() const { return cart_.geometry().periodic; }
  const std::vector<int>& process_dims() const { return cart_.geometry().sizes; }
  const std::vector<int>& coords() const { return coords_; }

  /// This process's interior cells per dimension and the global index of its first one.
  const std::vector<int>& local_extent() const { return local_extent_; }
  const std::vector<long>& global_offset() const { return global_offset_; }

  /// The same figures for the process at coordinate `coord` of dimension `dim`.
  int local_extent_of(int dim, int coord) const;
  long global_offset_of(int dim, int coord) const;
  /// The smallest subdomain extent in `dim` (floor(N/p)).
  int smallest_local_extent(int dim) const;
  /// Process coordinate owning global index `global` (0 <= global < N) in `dim`.
  int owner_coord(int dim, long global) const;

  /// "global 10x7 (periodic, non-periodic) on 2x2 processes; rank 3 at (1,1) owns 5x3 from (5,4)".
  std::string describe() const;

private:
  Decomposition(MPI_Comm comm, std::vector<long> global_extent, std::vector<bool> periodic,
                std::vector<int> process_dims, const AlsoAgreed* also);

  std::vector<long> global_extent_;
  iso::CartComm cart_;
  int rank_ = 0;
  std::vector<int> coords_;
  std::vector<int> local_extent_;
  std::vector<long> global_offset_;
};

}  // namespace isostencil::core
