// Halo exchange of structured-grid arrays over isomorphic alltoallw, plus the
// naive per-direction reference it is validated against. The path is one
// way: a stencil's offsets -> stencil_geometry (widths, directions,
// neighborhood) -> HaloPattern (made once per grid) -> HaloExchange (fields
// bound to a pattern). Plain pointers and MPI datatypes only: the Kokkos grid
// in core/ hands in View data pointers.
#pragma once

#include "iso/collectives.hpp"
#include "iso/geometry.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace iso {

namespace detail {
struct PreparedInit;
}

/// Halo widths of a stencil per dimension and side: the farthest reach.
struct HaloWidths {
  std::vector<int> lo;  ///< w_j^- = max(0, max_c -c_j)
  std::vector<int> hi;  ///< w_j^+ = max(0, max_c c_j)
};

/// What a stencil needs exchanged, computed once by stencil_geometry and
/// handed on unchanged (stencil -> geometry -> HaloPattern):
/// - widths: the ghost layers per dimension and side;
/// - directions: the ghost directions e read, in lexicographic order. A
///   component e_j = k names the part of the ghost region owned by the
///   process k steps away in dimension j: k is in {-1,0,1} while the halo is
///   no wider than the smallest subdomain, and reaches further (up to
///   halo_reach) where it is wider. Box stencils read every direction of
///   that range, star stencils the axes, one-sided stencils one side;
/// - neighborhood: v_i = -e_i, the isomorphic neighborhood: block i goes to
///   x + v_i, the process that reads it as its direction e_i.
struct HaloGeometry {
  HaloWidths widths;
  OffsetList directions;
  OffsetList neighborhood;

  int dims() const { return static_cast<int>(widths.lo.size()); }
  /// The geometry of given widths and directions (a hand-made layout): adds
  /// the neighborhood. The one place v = -e is formed.
  static HaloGeometry of(HaloWidths widths, OffsetList directions);
};

/// How many processes away a ghost layer of `width` cells reaches when every
/// subdomain in that dimension holds at least `smallest_extent` cells:
/// ceil(width / smallest_extent); 0 for no ghost layer, 1 where
/// `smallest_extent` <= 0 (unknown or not exchanged). Pure.
int halo_reach(int width, long smallest_extent);

/// The most processes away a halo may reach in a dimension (the width rule).
inline constexpr int max_halo_reach = 8;

/// The one stencil-geometry function: widths, directions and neighborhood
/// of the offsets `stencil`. `smallest_extent[j]` is the smallest subdomain
/// extent in dimension j where that dimension is exchanged (0 or absent:
/// unit directions, as for a dimension that is not exchanged): an offset
/// c_j reads the directions 0..halo_reach(|c_j|) on its side. Directions
/// are the closure of those ranges over the stencil's offsets, minus 0. Pure.
HaloGeometry stencil_geometry(const OffsetList& stencil, const std::vector<long>& smallest_extent = {});

/// The one rule for halo widths, used by decks, the grid and HaloPattern: a
/// dimension is exchanged when it has more than one process or is periodic
/// (one periodic process is its own neighbor), and there the halo may reach
/// at most max_halo_reach processes away (halo_reach of the wider side over
/// `smallest_extent[j]`, the smallest subdomain extent in that dimension).
/// Returns the first dimension that breaks it, or -1. Pure.
int halo_misfit_dimension(const HaloWidths& widths, const std::vector<int>& process_dims,
                          const std::vector<bool>& periodic, const std::vector<long>& smallest_extent);

/// Where the grid exchanges anything (as halo_misfit_dimension decides
/// "exchanged"): the smallest extent of dimension j, or 0 where it is not
/// exchanged. The argument stencil_geometry takes. Pure.
std::vector<long> exchanged_extents(const std::vector<int>& process_dims, const std::vector<bool>& periodic,
                                    const std::vector<long>& smallest_extent);

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
  /// Messages in flight each way at once (OperationOptions::ports; 0: no limit).
  int ports = 0;
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

/// The halo pattern of one process's subdomain: everything an exchange
/// needs that does not depend on the fields (as Cabana Grid's halo pattern or
/// GHEX's pattern): the neighborhood v = -e on the Cartesian communicator,
/// the send and receive block of each direction in cells, and the options
/// (requested algorithm, verification). Made once (collective over `cart`),
/// shared by every exchange bound to it (HaloExchange), which then only adds
/// datatypes and requests. The neighborhood keeps one schedule per algorithm,
/// so exchanges of one pattern share them. Immutable after construction.
///
/// Threads: a pattern and its exchanges (and the progress engine behind
/// them, see Operation) are used from the host thread only.
class HaloPattern {
public:
  /// Cells [start, start + size) of a block in a field's local indices.
  struct Block {
    std::vector<int> start, size;
    long cells() const;
  };

  /// Collective over `cart`. `interior`: this process's cells per dimension
  /// (at least one each); `global_offset`: the global index of its first
  /// interior cell (for reports; empty means zeros). A halo wider than the
  /// smallest subdomain takes its ghosts from several processes per
  /// dimension (directions with |e_j| > 1); the interior extents must then
  /// form a block decomposition (one extent per process coordinate and
  /// dimension). Throws iso::Error, the same on every rank, for a geometry
  /// that does not fit the communicator or that the width rule refuses.
  HaloPattern(MPI_Comm cart, std::vector<int> interior, HaloGeometry geometry,
              std::vector<long> global_offset = {}, const HaloOptions& options = {});
  HaloPattern(const HaloPattern&) = delete;
  HaloPattern& operator=(const HaloPattern&) = delete;
  ~HaloPattern();

  int dims() const { return static_cast<int>(interior_.size()); }
  const HaloGeometry& geometry() const { return geometry_; }
  /// Ghost directions e; block i is direction i.
  const OffsetList& directions() const { return geometry_.directions; }
  const Neighborhood& neighborhood() const { return *neighborhood_; }
  const HaloOptions& options() const { return options_; }
  /// The layout of a field of this pattern with elements of type `element`.
  ArrayLayout layout(MPI_Datatype element) const;
  /// Block i as received: my ghost slab in direction e_i.
  const Block& recv_block(int i) const { return recv_blocks_[static_cast<std::size_t>(i)]; }
  /// Block i as sent: my interior slab that the process x - e_i reads as its
  /// direction e_i, as wide as its ghost layer there.
  const Block& send_block(int i) const { return send_blocks_[static_cast<std::size_t>(i)]; }
  /// The communicator of the reference exchange: the neighborhood's. The
  /// reference runs collective calls only, which never match the
  /// operations' point-to-point messages, so it needs no duplicate of its
  /// own (a duplicate per pattern was a context-id agreement in every grid's
  /// set-up, docs/results/petsc-small).
  MPI_Comm naive_comm() const { return neighborhood_->comm(); }
  /// How many processes away the ghosts come from, per dimension: the
  /// largest |e_j| over the directions (1 for a halo no wider than the
  /// smallest subdomain, 0 where nothing is exchanged).
  const std::vector<int>& reach() const { return reach_; }
  /// Why the pattern runs another algorithm than the options asked for, or
  /// empty. A halo wider than the smallest subdomain over an uneven
  /// decomposition has blocks whose size depends on where they travel, which
  /// message combining cannot forward (docs/design/halo-exchange.md#wide-halos):
  /// there linear replaces the forwarding algorithms.
  const std::string& algorithm_note() const { return algorithm_note_; }

private:
  friend class HaloExchange;
  HaloPattern(const char* where, MPI_Comm cart, std::vector<int> interior, HaloGeometry geometry,
              std::vector<long> global_offset, const HaloOptions& options);

  std::vector<int> interior_;
  HaloGeometry geometry_;
  std::vector<long> global_offset_;
  HaloOptions options_;
  std::unique_ptr<Neighborhood> neighborhood_;
  std::vector<Block> send_blocks_, recv_blocks_;
  std::vector<int> reach_;
  std::string algorithm_note_;
  // The block types of the last single-field exchange bound to this pattern
  // (send, recv per direction; a predefined element), kept while the pattern
  // lives: the next exchange of that element takes them. The library is
  // called from one thread.
  mutable std::shared_ptr<const std::vector<MPI_Datatype>> single_field_types_;
  mutable MPI_Datatype single_field_element_ = MPI_DATATYPE_NULL;
};

/// The reference exchange (what HaloExchange::run_naive runs), independent of
/// the pattern's blocks and neighborhood: every process works out from the
/// gathered subdomain extents which process owns each of its ghost cells
/// (by global index, wrapping periodic dimensions as often as needed),
/// keeps those whose direction the pattern lists, asks the owners for them
/// by local index and gets the values back (two MPI_Alltoallv on
/// `pattern.naive_comm()`): no schedule, no combining, no datatypes. `fields` are row-major arrays of
/// `pattern.layout(element)` in memory the host reads and writes (a device
/// field's host copy, say); they need not be bound to any exchange.
/// Collective over the pattern's communicator.
void naive_exchange(const HaloPattern& pattern, MPI_Datatype element, const std::vector<void*>& fields);

/// A persistent halo exchange of one or several fields bound to a pattern
/// (many fields and exchanges, one pattern). Ghost region in direction e is
/// received from x + e. Non-periodic boundaries leave ghosts untouched.
/// Field memory must stay put while the exchange lives.
///
/// Threads: start/test/wait/run (and the progress engine they drive) are
/// called from the host thread only; the execution space a device-aware
/// exchange will be tied to attaches to the exchange, not to the pattern
/// (core::HaloExchange carries it).
class HaloExchange {
public:
  /// Binds `fields`, each a row-major array of `pattern->layout(element)`,
  /// to the pattern. Collective over the pattern's communicator; the
  /// algorithm is the pattern's (automatic is resolved here, from the bytes
  /// these fields move).
  HaloExchange(std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element, std::vector<void*> fields);
  /// For a layer that makes one agreement for several (a grid's exchange on
  /// a pattern it found: core/include/isostencil/core/grid.hpp): binds
  /// locally, with no collective call. `ready`: no error here, and the
  /// operation can be made without a collective call (a scheduled algorithm
  /// named, or auto's choice kept: docs/design/cost-model.md#kept-choices).
  /// The caller agrees that every rank is ready with the same `fingerprint`,
  /// then calls finish() on every rank; where they are not, every rank drops
  /// this exchange (nothing was reserved) and binds with the constructor above.
  struct Deferred {
    bool ready = false;
    std::uint64_t fingerprint = 0;
  };
  HaloExchange(std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element, std::vector<void*> fields,
               Deferred& deferred);
  /// Makes the operation of a ready Deferred binding (no collective call).
  void finish();
  /// A one-off exchange with a pattern of its own, made from `layout` and the
  /// ghost directions `directions`. Collective over `cart`.
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

  const HaloPattern& pattern() const { return *pattern_; }
  const std::shared_ptr<const HaloPattern>& shared_pattern() const { return pattern_; }
  const Neighborhood& neighborhood() const { return pattern_->neighborhood(); }
  const Operation& operation() const { return operation_; }
  const ArrayLayout& layout() const { return layout_; }
  const OffsetList& directions() const { return pattern_->directions(); }
  Algorithm algorithm() const { return operation_.algorithm(); }

private:
  void bind(const char* where, Deferred* deferred = nullptr);
  long block_bytes(const HaloPattern::Block& block) const { return block.cells() * element_size_; }

  std::shared_ptr<const HaloPattern> pattern_;
  ArrayLayout layout_;
  std::vector<void*> fields_;
  // The block types (owned; a single field's are shared with the other
  // exchanges of its pattern and element).
  std::shared_ptr<const std::vector<MPI_Datatype>> types_;
  Operation operation_;
  int element_size_ = 0;
  std::unique_ptr<detail::PreparedInit> prepared_;  // a Deferred binding until finish()
};

}  // namespace iso
