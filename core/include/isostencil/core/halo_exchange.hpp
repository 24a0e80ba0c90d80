// The halo exchange of one or several fields of a grid: a thin Kokkos-aware
// owner of an iso::HaloExchange (isomorphic alltoallw over subarray
// datatypes, halo/) bound to the grid's halo pattern. Made by
// Grid<D>::halo_exchange; every exchange of a grid (with the same options)
// shares the grid's one pattern, Grid<D>::halo_pattern().
#pragma once

#include "isostencil/core/decomposition.hpp"

#include "iso/halo_exchange.hpp"

#include <Kokkos_Core.hpp>

#include <any>
#include <memory>
#include <vector>

namespace isostencil::core {

/// Algorithm (iso::Algorithm::torus by default; automatic consults the cost
/// model, see iso::CostModel::for_comm) and creation-time verification.
using HaloOptions = iso::HaloOptions;
/// The neighborhood, blocks and options shared by a grid's exchanges.
using HaloPattern = iso::HaloPattern;

/// Memory: the Views' data pointers go to MPI as they are. That is right for
/// host-accessible memory spaces (Serial, OpenMP, Threads, CudaUVMSpace...).
/// Device memory (CudaSpace, HIPSpace, ...) is accepted only when the MPI
/// library is GPU-aware and the build defines ISOSTENCIL_GPU_AWARE_MPI; staging
/// through host buffers for other MPI libraries is not implemented (the grid
/// rejects such fields with an iso::Error). run_naive() and validate() read
/// and write the fields on the host and need host-accessible memory.
///
/// Threads and execution spaces: start/test/wait/run, and the progress engine
/// they drive, are called from the host thread only. `execution_space` names
/// the space the fields are computed on (today always the default space, and
/// start() fences every space); it is where a per-space exchange (fencing and
/// packing on one space instance handed in here) attaches.
class HaloExchange {
public:
  using execution_space = Kokkos::DefaultExecutionSpace;

  /// Use Grid<D>::halo_exchange. Binds `fields` (elements of type `element`)
  /// to `pattern`; `keep_alive` holds the Views so their memory outlives the
  /// exchange (MPI keeps their addresses). Collective.
  HaloExchange(std::shared_ptr<const Decomposition> decomposition,
               std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
               std::vector<void*> fields, std::vector<std::any> keep_alive, bool host_accessible);
  HaloExchange(HaloExchange&&) noexcept = default;
  HaloExchange& operator=(HaloExchange&&) noexcept = default;

  /// Fences all Kokkos execution spaces (kernels writing the interior must
  /// have finished before MPI reads it), then posts the first round.
  void start();
  /// Advances as far as arrived messages allow; true once complete.
  bool test() { return exchange_.test(); }
  /// Completes the exchange: ghost cells in every direction the stencil reads
  /// hold the neighbors' interior values. Boundary ghosts of non-periodic
  /// dimensions are left untouched.
  void wait() { exchange_.wait(); }
  void run() {
    start();
    wait();
  }

  /// The reference exchange: one message per direction, packed by hand.
  void run_naive();
  /// Runs both exchanges from the same contents and compares every ghost cell
  /// bitwise (collective); the fields end with the isomorphic result.
  iso::HaloValidation validate();

  const iso::HaloExchange& exchange() const { return exchange_; }
  const HaloPattern& pattern() const { return exchange_.pattern(); }
  const iso::Operation& operation() const { return exchange_.operation(); }
  const iso::Neighborhood& neighborhood() const { return exchange_.neighborhood(); }
  const iso::ArrayLayout& layout() const { return exchange_.layout(); }
  /// Ghost directions e exchanged (the neighborhood lists v = -e).
  const iso::OffsetList& directions() const { return exchange_.directions(); }
  /// The algorithm that runs (automatic resolved).
  iso::Algorithm algorithm() const { return exchange_.algorithm(); }
  int num_fields() const { return static_cast<int>(keep_alive_.size()); }

private:
  void require_host_access(const char* what) const;

  std::shared_ptr<const Decomposition> decomposition_;
  std::vector<std::any> keep_alive_;  // declared before exchange_: released after it
  bool host_accessible_ = true;
  iso::HaloExchange exchange_;
};

}  // namespace isostencil::core
