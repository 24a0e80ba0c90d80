// Halo exchange of structured-grid arrays over isomorphic alltoallw, plus the
// naive per-direction reference it is validated against. Plain pointers and
// MPI datatypes only: the Kokkos grid in core/ hands in View data pointers.
#pragma once

#include "iso/collectives.hpp"
#include "iso/geometry.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <string>
#include <vector>

namespace iso {

/// Halo widths of a stencil per dimension and side: the farthest reach.
struct HaloWidths {
  std::vector<int> lo;  ///< w_j^- = max(0, max_c -c_j)
  std::vector<int> hi;  ///< w_j^+ = max(0, max_c c_j)
};
HaloWidths stencil_halo_widths(const OffsetList& stencil);

/// The one rule for halo widths, used by decks, the grid and HaloExchange: a
/// dimension is exchanged when it has more than one process or is periodic
/// (one periodic process is its own neighbor), and there the wider side of
/// the halo must not exceed `smallest_extent[j]`, the smallest subdomain
/// extent in that dimension, so every ghost cell comes from the nearest
/// process. Returns the first dimension that breaks it, or -1. Pure.
int halo_misfit_dimension(const HaloWidths& widths, const std::vector<int>& process_dims,
                          const std::vector<bool>& periodic, const std::vector<long>& smallest_extent);

/// Ghost directions e in {-1,0,1}^d a stencil reads: the closure under zeroing
/// of {sign(c)}, minus 0, in lexicographic order. Box stencils give all 3^d-1,
/// star stencils the 2d faces, one-sided stencils an asymmetric subset.
OffsetList stencil_directions(const OffsetList& stencil);

/// One local array with ghost layers, row-major (C order: the last index runs
/// fastest, as Kokkos::LayoutRight). Extent j = ghost_lo[j] + interior[j] + ghost_hi[j].
struct ArrayLayout {
  std::vector<int> interior;
  std::vector<int> ghost_lo;
  std::vector<int> ghost_hi;
  std::vector<long> global_offset;  ///< global index of the first interior cell (for reports)
  MPI_Datatype element = MPI_DOUBLE;  ///< contiguous element type (extent == size)

  int dims() const { return static_cast<int>(interior.size()); }
  std::vector<int> extent() const;
};

struct HaloOptions {
  Algorithm algorithm = Algorithm::torus;
  /// Verify at creation that the neighborhood agrees over all ranks.
  bool verify = true;
};

/// Compares two arrays of one layout bitwise: the ghost cells, and the interior
/// too when `interior_too`. Returns a description of the first differing cell
/// (ghost or interior, direction, global and local index, both values' bytes
/// labelled `first_name` and `second_name`), empty when they agree; adds the
/// number of cells compared to `compared`. Local: no communication.
std::string compare_cells(const ArrayLayout& layout, const void* first, const void* second, bool interior_too,
                          long& compared, const std::string& first_name = "first field",
                          const std::string& second_name = "second");

struct HaloValidation {
  bool ok = true;
  long cells_compared = 0;  ///< ghost cells compared on this rank
  std::string message;      ///< the first mismatch over all ranks (empty when ok)
};

/// A persistent halo exchange of one or several fields with the same layout.
/// Ghost region in direction e is received from x + e; the neighborhood holds
/// v = -e for each direction. Non-periodic boundaries leave ghosts untouched.
/// Collective over `cart`. Field memory must stay put while the exchange lives.
class HaloExchange {
public:
  HaloExchange(MPI_Comm cart, ArrayLayout layout, const OffsetList& directions, std::vector<void*> fields,
               const HaloOptions& options = {});
  HaloExchange(HaloExchange&&) noexcept;
  HaloExchange& operator=(HaloExchange&&) noexcept;
  ~HaloExchange();

  void start() { operation_.start(); }
  bool test() { return operation_.test(); }
  void wait() { operation_.wait(); }
  void run() { operation_.run(); }

  /// The reference: one message per direction, packed by hand, no combining.
  void run_naive();
  /// Runs both exchanges from the same field contents and compares every ghost
  /// cell bitwise (collective). The fields end with the isomorphic result.
  HaloValidation validate();

  const Neighborhood& neighborhood() const { return *neighborhood_; }
  const Operation& operation() const { return operation_; }
  const ArrayLayout& layout() const { return layout_; }
  const OffsetList& directions() const { return directions_; }
  Algorithm algorithm() const { return operation_.algorithm(); }

private:
  struct Region {
    std::vector<int> start, size;
  };
  Region send_region(int block) const;
  Region recv_region(int block) const;
  void pack(const char* field, const Region& region, char* out) const;
  void unpack(const char* in, const Region& region, char* field) const;
  long region_bytes(const Region& region) const;

  ArrayLayout layout_;
  OffsetList directions_;
  std::vector<void*> fields_;
  std::unique_ptr<Neighborhood> neighborhood_;
  std::vector<MPI_Datatype> types_;  // owned block types
  Operation operation_;
  Comm naive_comm_;
  int element_size_ = 0;
};

}  // namespace iso
