// Life-like cellular automata in 1 to 6 dimensions on the Moore neighborhood
// (core::Stencil::box(D, 1)): rules in B/S notation, periodic (torus) or dead
// boundaries, cells as bytes (0 dead, 1 alive), two fields swapped each
// generation with one persistent halo exchange each (both bound to the grid's
// halo pattern; halo() is the current one), the update overlapped with the
// exchange through apply_with_halo. With LifeOptions::depth k, one exchange
// serves up to k generations (substeps.hpp), the same cells as depth 1.
//
//   auto rule = isostencil::kernels::LifeRule("B3/S23", 2);
//   isostencil::kernels::Life<2> life(MPI_COMM_WORLD, {64, 64}, {true, true}, rule);
//   life.place(isostencil::kernels::read_rle("inputs/patterns/glider.rle"), {10, 10});
//   life.step(4);
//   long alive = life.live_cells();                   // collective
//   std::vector<std::uint8_t> all = life.gather(0);   // global field on rank 0
//
// Rule notation (LifeRule): "B<births>/S<survivals>", letters in either case
// and either order ("S23/B3" is Conway's Life too); a list may be empty
// ("B2/S" is Seeds). A list is either
//   - digits only: every digit is one count ("S23" is {2, 3}); the usual
//     notation, enough while every count is below 10; or
//   - comma-separated items, each a count or an inclusive range a-b:
//     "B5,6/S4-7,12" is births {5, 6}, survivals {4, 5, 6, 7, 12}.
// A list with a ',' or '-' is read the second way, any other list the first:
// "S12" is {1, 2}; a lone count from 10 up is written as a range, "S12-12".
// Counts run from 0 to 3^d - 1 (the neighbors of a cell in d dimensions: 8 in
// 2-D, 26 in 3-D, 80 in 4-D, 728 in 6-D); a larger count is an error for that d.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace isostencil::kernels {

/// 3^dims: the Moore box of radius 1 including its centre.
constexpr int moore_box_size(int dims) {
  return dims <= 0 ? 1 : 3 * moore_box_size(dims - 1);
}

/// A Life-like rule: the neighbor counts at which a dead cell is born and a
/// live cell survives, for a given dimension (counts 0 .. 3^d - 1).
class LifeRule {
public:
  static constexpr int max_dims = 6;
  static constexpr int max_count = moore_box_size(max_dims) - 1;  // 728
  static constexpr int mask_words = max_count / 64 + 1;           // 12
  /// Bit c of the mask (word c / 64, bit c % 64) set: count c is in the set.
  using Mask = Kokkos::Array<std::uint64_t, mask_words>;

  /// Conway's Life, B3/S23 in 2-D.
  LifeRule() : LifeRule(conway()) {}
  /// Parses `text` (notation above) for a `dims`-dimensional grid; throws
  /// iso::Error naming the character position, what was found and what is
  /// allowed there.
  LifeRule(std::string_view text, int dims);
  /// From explicit counts (any order, duplicates allowed); throws iso::Error
  /// for a count outside 0 .. 3^dims - 1.
  static LifeRule from_counts(const std::vector<int>& births, const std::vector<int>& survivals,
                              int dims);
  static LifeRule conway();

  int dims() const { return dims_; }
  /// 3^dims - 1: the largest count of this dimension.
  int max_neighbors() const { return moore_box_size(dims_) - 1; }
  bool births(int count) const { return test(birth_, count); }
  bool survives(int count) const { return test(survival_, count); }
  std::vector<int> birth_counts() const { return counts(birth_); }
  std::vector<int> survival_counts() const { return counts(survival_); }
  const Mask& birth_mask() const { return birth_; }
  const Mask& survival_mask() const { return survival_; }

  /// Canonical text: "B3/S23" (digits while every count is below 10), else
  /// "B5,6/S4-7,12" (runs of three or more as ranges). Parsing it with the
  /// same dims gives an equal rule.
  std::string to_string() const;

  friend bool operator==(const LifeRule& a, const LifeRule& b);
  friend bool operator!=(const LifeRule& a, const LifeRule& b) { return !(a == b); }

private:
  LifeRule(int dims, Mask birth, Mask survival) : dims_(dims), birth_(birth), survival_(survival) {}
  static bool test(const Mask& mask, int count) {
    return count >= 0 && count <= max_count && ((mask[count / 64] >> (count % 64)) & 1U) != 0;
  }
  static std::vector<int> counts(const Mask& mask);

  int dims_ = 2;
  Mask birth_{};
  Mask survival_{};
};

std::ostream& operator<<(std::ostream& out, const LifeRule& rule);

/// A finite pattern of live cells. Coordinates are in field index order:
/// for a 2-D pattern read from RLE, index 0 is the row (RLE y, growing
/// downwards) and index 1 the column (RLE x).
struct LifePattern {
  std::string name;                      ///< the "#N" line, else the file name
  std::string rule;                      ///< the header's rule (empty when it has none)
  std::vector<long> extent;              ///< bounding box per dimension (RLE: {y, x})
  std::vector<std::vector<long>> cells;  ///< live cells, each `dims()` indices

  int dims() const { return static_cast<int>(extent.size()); }
  /// A 2-D pattern from a picture: one string per row, 'O', 'o', '*' or '#'
  /// alive and '.', 'b' or ' ' dead ({".O.", "..O", "OOO"} is a glider).
  static LifePattern from_picture(const std::vector<std::string>& rows, std::string name = {});
  /// The pattern mirrored in dimension `dim` (i -> extent - 1 - i).
  LifePattern flipped(int dim) const;
};

/// Reads a two-state RLE pattern: optional '#' lines ("#N name" names it),
/// the header "x = <columns>, y = <rows>[, rule = <rule>]", then runs of 'b'
/// (dead), 'o' (alive) and '$' (end of row) with optional run counts, ended by
/// '!'; whitespace and line breaks between items are ignored, as is anything
/// after '!'. Throws iso::Error naming the file, line and column.
LifePattern read_rle(const std::string& path);
/// The same from text; `source` names it in error messages.
LifePattern parse_rle(std::istream& in, const std::string& source);
LifePattern parse_rle_string(const std::string& text, const std::string& source = "<string>");

/// The seeded random fill Life::fill_random uses, as a function of the global
/// row-major cell index alone (so every decomposition gives the same field):
/// 1 with probability `density`.
KOKKOS_INLINE_FUNCTION std::uint8_t life_random_cell(std::uint64_t seed, std::uint64_t global_index,
                                                     double density) {
  // splitmix64 of the index mixed with the seed: cheap, well distributed.
  std::uint64_t z = global_index + 0x9E3779B97F4A7C15ULL * (seed + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return static_cast<std::uint8_t>(static_cast<double>(z >> 11) * 0x1.0p-53 < density ? 1 : 0);
}

/// Options of a Life run.
struct LifeOptions {
  /// Update the cells that read no ghost while the halo exchange is in flight.
  bool overlap = true;
  /// Algorithm and verification of the two persistent halo exchanges.
  core::HaloOptions halo = {};
  /// Generations per exchange (deep halos, update.hpp/substeps.hpp): ghost
  /// layers `depth` cells wide, exchanged once every `depth` generations.
  /// The same cells as depth 1 at every generation.
  int depth = 1;
};

namespace detail {

/// Sum of the 3^(D-J) box cells around `cell` in dimensions J..D-1 (centre
/// included), unrolled at compile time.
template <int J, int D>
struct BoxSum {
  KOKKOS_FORCEINLINE_FUNCTION static int at(const std::uint8_t* cell,
                                            const Kokkos::Array<std::ptrdiff_t, D>& stride) {
    return BoxSum<J + 1, D>::at(cell - stride[J], stride) + BoxSum<J + 1, D>::at(cell, stride) +
           BoxSum<J + 1, D>::at(cell + stride[J], stride);
  }
};
template <int D>
struct BoxSum<D, D> {
  KOKKOS_FORCEINLINE_FUNCTION static int at(const std::uint8_t* cell,
                                            const Kokkos::Array<std::ptrdiff_t, D>&) {
    return *cell;
  }
};

/// The rule as the kernel reads it: one bit per (state, count), bit
/// alive * 3^D + count, so the lookup needs no branch on the cell's state
/// (random fields would mispredict it half the time).
template <int D>
struct LifeTable {
  static constexpr int states_per_side = moore_box_size(D);  // counts 0 .. 3^D - 1
  static constexpr int words = (2 * states_per_side - 1) / 64 + 1;
  Kokkos::Array<std::uint64_t, words> bits{};

  static LifeTable from(const LifeRule& rule) {
    LifeTable table;
    for (int count = 0; count < states_per_side; ++count) {
      if (rule.births(count)) table.set(count);
      if (rule.survives(count)) table.set(states_per_side + count);
    }
    return table;
  }
  KOKKOS_FORCEINLINE_FUNCTION std::uint8_t next(std::uint8_t alive, int neighbors) const {
    const int bit = alive * states_per_side + neighbors;
    const std::uint64_t word = words == 1 ? bits[0] : bits[bit >> 6];
    return static_cast<std::uint8_t>((word >> (bit & 63)) & 1U);
  }

private:
  void set(int bit) { bits[bit / 64] |= std::uint64_t{1} << (bit % 64); }
};

template <int D>
KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t linear(const Index<D>& x,
                                                  const Kokkos::Array<std::ptrdiff_t, D>& stride) {
  std::ptrdiff_t offset = 0;
  for (int j = 0; j < D; ++j)
    offset += static_cast<std::ptrdiff_t>(x[j]) * stride[j];
  return offset;
}

/// One generation at one cell: count the live Moore neighbors in `current`,
/// write the next state to `next`.
template <int D>
struct LifeUpdate {
  core::Field<const std::uint8_t, D> current;
  core::Field<std::uint8_t, D> next;
  Kokkos::Array<std::ptrdiff_t, D> stride;
  LifeTable<D> table;

  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t offset = linear<D>(x, stride);
    const std::uint8_t* cell = current.data() + offset;
    const std::uint8_t alive = *cell;
    next.data()[offset] = table.next(alive, BoxSum<0, D>::at(cell, stride) - alive);
  }
};

template <int D>
struct LiveCount {
  core::Field<const std::uint8_t, D> cells;
  Kokkos::Array<std::ptrdiff_t, D> stride;
  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x, long& count) const {
    count += cells.data()[linear<D>(x, stride)] != 0 ? 1 : 0;
  }
};

template <int D>
struct RandomFill {
  core::Field<std::uint8_t, D> cells;
  Kokkos::Array<std::ptrdiff_t, D> stride;
  Kokkos::Array<long, D> first_global;  ///< global index of local index 0 (a ghost)
  Kokkos::Array<long, D> global_stride;
  std::uint64_t seed;
  double density;
  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x) const {
    long global = 0;
    for (int j = 0; j < D; ++j)
      global += (first_global[j] + x[j]) * global_stride[j];
    cells.data()[linear<D>(x, stride)] =
        life_random_cell(seed, static_cast<std::uint64_t>(global), density);
  }
};

/// Collective over the decomposition: the interiors `local` (row-major over
/// each rank's local extent) assembled into the global row-major field on
/// `root`; an empty vector elsewhere.
std::vector<std::uint8_t> gather_global(const core::Decomposition& decomposition,
                                        const std::vector<std::uint8_t>& local, int root);
/// Collective: the sum of `value` over the communicator.
long sum_over_ranks(MPI_Comm comm, long value);
/// iso::Error("isostencil::kernels::Life::<function>: <message>").
[[noreturn]] void throw_life_error(const char* function, const std::string& message);
std::string format_index(const long* index, int dims);

}  // namespace detail

/// A distributed Life-like automaton on a D-dimensional grid.
template <int D>
class Life {
  static_assert(D >= 1 && D <= 6, "isostencil::kernels::Life supports 1 to 6 dimensions");

public:
  using Cells = core::Field<std::uint8_t, D>;
  /// The space the generations run on (that of the fields and exchanges).
  using execution_space = Kokkos::DefaultExecutionSpace;
  using global_index = typename core::Grid<D>::global_index;
  using local_index = typename core::Grid<D>::local_index;

  /// Collective over `comm`: decomposes `global_extent` (zero entries of
  /// `process_dims` chosen by MPI_Dims_create), creates both fields (all
  /// dead) and their persistent halo exchanges. `periodic[j]` false makes
  /// dimension j bounded by dead cells. Throws iso::Error, the same on every
  /// rank, when the rule is for another dimension or the grid is invalid.
  Life(MPI_Comm comm, const global_index& global_extent, const std::array<bool, D>& periodic,
       const LifeRule& rule, const LifeOptions& options = {},
       const std::array<int, D>& process_dims = {})
      : Life(std::make_shared<const core::Decomposition>(
                 comm, std::vector<long>(global_extent.begin(), global_extent.end()),
                 std::vector<bool>(periodic.begin(), periodic.end()),
                 std::vector<int>(process_dims.begin(), process_dims.end())),
             rule, options) {}

  Life(std::shared_ptr<const core::Decomposition> decomposition, const LifeRule& rule,
       const LifeOptions& options = {})
      : grid_(std::move(decomposition), core::Stencil::box(D, 1), options.depth),
        rule_(checked_rule(rule)),
        table_(detail::LifeTable<D>::from(rule)),
        options_(options),
        plan_(plan_update(grid_, "isostencil::life")) {
    // Dead boundaries: the exchange leaves the ghosts of the global boundary
    // alone and the update writes only the interior, so the zeros both
    // fields start with stay there.
    fields_[0] = grid_.template make_field<std::uint8_t>("isostencil::life:cells0");
    fields_[1] = grid_.template make_field<std::uint8_t>("isostencil::life:cells1");
    for (int j = D - 1; j >= 0; --j) {
      stride_[j] = j == D - 1 ? 1 : stride_[j + 1] * grid_.field_extent()[j + 1];
      global_stride_[j] = j == D - 1 ? 1 : global_stride_[j + 1] * grid_.global_extent()[j + 1];
    }
    halos_.reserve(2);
    halos_.push_back(grid_.halo_exchange(fields_[0], options_.halo));
    halos_.push_back(grid_.halo_exchange(fields_[1], options_.halo));
  }

  const core::Grid<D>& grid() const { return grid_; }
  const LifeRule& rule() const { return rule_; }
  const LifeOptions& options() const { return options_; }
  /// The execution space instance the kernels launch on and fence (default:
  /// a default-made instance); not collective.
  const execution_space& space() const { return space_; }
  void set_space(const execution_space& space) { space_ = space; }
  bool overlap() const { return options_.overlap; }
  void set_overlap(bool overlap) { options_.overlap = overlap; }
  /// The current generation's field (ghost layers included). Cells hold 0
  /// (dead) or 1 (alive); the update counts neighbors by adding bytes, so
  /// write nothing else through this View (the setters below normalize).
  const Cells& cells() const { return fields_[current_]; }
  /// Generations stepped since construction.
  long generation() const { return generation_; }
  /// Kernel and exposed halo seconds summed over all steps on this rank.
  const UpdateTimes& times() const { return times_; }
  void reset_times() { times_ = UpdateTimes{}; }
  /// The exchange the next generation runs: that of the current field (each
  /// field has its own, both bound to the grid's halo pattern).
  core::HaloExchange& halo() { return halos_[static_cast<std::size_t>(current_)]; }
  const core::HaloExchange& halo() const { return halos_[static_cast<std::size_t>(current_)]; }
  /// The algorithm the exchanges run (automatic resolved).
  iso::Algorithm algorithm() const { return halo().algorithm(); }

  /// Advances `generations` generations (collective): one exchange per
  /// block of up to depth generations, the last block shorter.
  UpdateTimes step(int generations = 1) {
    UpdateTimes total;
    int left = 0;  // generations of the block after this one
    for (int g = 0; g < generations; ++g) {
      const bool exchange = left == 0;
      if (exchange) left = std::min(grid_.depth(), generations - g);
      --left;
      const detail::LifeUpdate<D> update{fields_[current_], fields_[1 - current_], stride_, table_};
      const UpdateTimes times = apply_substep<D>(
          space_, plan_, exchange ? &halos_[static_cast<std::size_t>(current_)] : nullptr,
          options_.overlap, left, update);
      total += times;
      current_ = 1 - current_;
      ++generation_;
    }
    times_ += total;
    return total;
  }

  /// Live cells over all ranks (collective).
  long live_cells() const {
    long local = 0;
    reduce_cells<D>(space_, "isostencil::life:count", plan_.split.interior,
                    detail::LiveCount<D>{fields_[current_], stride_}, local);
    return detail::sum_over_ranks(grid_.comm(), local);
  }

  /// Kills every cell (not collective).
  void clear() { Kokkos::deep_copy(fields_[current_], std::uint8_t{0}); }

  /// Sets cells by global index (not collective: every rank passes the same
  /// cells and writes those it owns). Periodic dimensions wrap; a cell outside
  /// a non-periodic dimension is an iso::Error (on every rank alike).
  void set_cells(const std::vector<global_index>& cells, std::uint8_t alive = 1) {
    std::vector<global_index> wrapped;
    wrapped.reserve(cells.size());
    for (const global_index& cell : cells)
      wrapped.push_back(checked_wrap("set_cells", cell));
    modify_host([&](std::uint8_t* data) {
      for (const global_index& cell : wrapped)
        if (grid_.owns(cell)) data[host_offset(grid_.to_local(cell))] = alive != 0 ? 1 : 0;
    });
  }
  void set_cell(const global_index& cell, std::uint8_t alive = 1) { set_cells({cell}, alive); }

  /// Makes the pattern's live cells alive with its index 0 at `offset` (not
  /// collective, as set_cells); the pattern must have D dimensions.
  void place(const LifePattern& pattern, const global_index& offset) {
    if (pattern.dims() != D)
      detail::throw_life_error("place", "pattern \"" + pattern.name + "\" has " +
                                            std::to_string(pattern.dims()) +
                                            " dimensions, the grid " + std::to_string(D));
    std::vector<global_index> cells;
    cells.reserve(pattern.cells.size());
    for (const std::vector<long>& cell : pattern.cells) {
      global_index global{};
      for (int j = 0; j < D; ++j)
        global[j] = offset[j] + cell[static_cast<std::size_t>(j)];
      cells.push_back(global);
    }
    set_cells(cells, 1);
  }

  /// Fills the interior with life_random_cell(seed, global row-major index,
  /// density): the same field on every decomposition (not collective).
  void fill_random(std::uint64_t seed, double density) {
    detail::RandomFill<D> fill{fields_[current_], stride_, {}, global_stride_, seed, density};
    for (int j = 0; j < D; ++j)
      fill.first_global[j] = grid_.to_global(j, 0);
    for_each_cell<D>(space_, "isostencil::life:fill_random", plan_.split.interior, fill);
    space_.fence();
  }

  /// Loads the whole global field (row-major, global_extent cells; every rank
  /// passes the same vector and keeps its part; not collective).
  void set_global(const std::vector<std::uint8_t>& global) {
    if (global.size() != static_cast<std::size_t>(global_cells()))
      detail::throw_life_error("set_global", "got " + std::to_string(global.size()) +
                                                 " cells, the global grid has " +
                                                 std::to_string(global_cells()));
    modify_host([&](std::uint8_t* data) {
      for_each_interior([&](const local_index& local, const global_index& cell) {
        long g = 0;
        for (int j = 0; j < D; ++j)
          g += cell[j] * global_stride_[j];
        data[host_offset(local)] = global[static_cast<std::size_t>(g)] != 0 ? 1 : 0;
      });
    });
  }

  /// The global field, row-major, on rank `root` of the grid's communicator;
  /// an empty vector on the other ranks (collective).
  std::vector<std::uint8_t> gather(int root = 0) const {
    space_.fence();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fields_[current_]);
    std::vector<std::uint8_t> local;
    long local_cells = 1;
    for (int j = 0; j < D; ++j)
      local_cells *= grid_.interior_extent()[j];
    local.reserve(static_cast<std::size_t>(local_cells));
    for_each_interior([&](const local_index& x, const global_index&) {
      local.push_back(host.data()[host_offset(x)]);
    });
    return detail::gather_global(grid_.decomposition(), local, root);
  }

  long global_cells() const {
    long cells = 1;
    for (int j = 0; j < D; ++j)
      cells *= grid_.global_extent()[j];
    return cells;
  }

private:
  static const LifeRule& checked_rule(const LifeRule& rule) {
    if (rule.dims() != D)
      detail::throw_life_error("Life", "rule " + rule.to_string() + " is for " +
                                           std::to_string(rule.dims()) + "-D grids, this grid is " +
                                           std::to_string(D) +
                                           "-D (parse it with dims = " + std::to_string(D) + ")");
    return rule;
  }

  global_index checked_wrap(const char* function, const global_index& cell) const {
    const std::optional<global_index> wrapped = grid_.wrap(cell);
    if (!wrapped) {
      std::string which;
      for (int j = 0; j < D; ++j)
        if (!grid_.wrap(j, cell[j]))
          which = "dimension " + std::to_string(j) + " (non-periodic, cells 0.." +
                  std::to_string(grid_.global_extent()[j] - 1) + ")";
      detail::throw_life_error(
          function, "cell " + detail::format_index(cell.data(), D) + " lies outside " + which);
    }
    return *wrapped;
  }

  std::ptrdiff_t host_offset(const local_index& local) const {
    std::ptrdiff_t offset = 0;
    for (int j = 0; j < D; ++j)
      offset += static_cast<std::ptrdiff_t>(local[j]) * stride_[j];
    return offset;
  }

  /// Calls f(local, global) for each interior cell, in row-major order.
  template <class F>
  void for_each_interior(F&& f) const {
    local_index local{};
    for (int j = 0; j < D; ++j) {
      if (grid_.interior_extent()[j] == 0) return;
      local[j] = grid_.ghost_lo()[j];
    }
    while (true) {
      f(local, grid_.to_global(local));
      int j = D - 1;
      for (; j >= 0; --j) {
        if (++local[j] < grid_.ghost_lo()[j] + grid_.interior_extent()[j]) break;
        local[j] = grid_.ghost_lo()[j];
      }
      if (j < 0) return;
    }
  }

  /// Host access to the current field, copied back afterwards (a no-op copy
  /// when the field lives in host memory).
  template <class F>
  void modify_host(F&& f) {
    space_.fence();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fields_[current_]);
    f(host.data());
    Kokkos::deep_copy(fields_[current_], host);
  }

  core::Grid<D> grid_;
  LifeRule rule_;
  detail::LifeTable<D> table_;
  LifeOptions options_;
  execution_space space_{};
  Cells fields_[2];
  Kokkos::Array<std::ptrdiff_t, D> stride_{};
  Kokkos::Array<long, D> global_stride_{};
  UpdatePlan<D> plan_;  // interior split and labels, made once
  std::vector<core::HaloExchange> halos_;  // halos_[i] exchanges fields_[i]
  int current_ = 0;
  long generation_ = 0;
  UpdateTimes times_;
};

}  // namespace isostencil::kernels
