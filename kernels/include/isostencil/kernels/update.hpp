// Running a stencil update over a grid's interior, with the halo exchange
// overlapped: cells whose stencil reads no ghost cell are updated while the
// exchange is in flight, the boundary shell after it completes.
//
// Cell loops (for_each_cell, reduce_cells) call functor(Index<D>) for every
// cell of a box of local indices; how they iterate depends on where the
// execution space runs:
//
// - Host spaces (Serial, OpenMP, Threads): one work item is a group of rows
//   along the last dimension, which is contiguous in LayoutRight, so the
//   innermost loop is unit-stride and neighbouring rows and planes stay in
//   cache. A functor may process a whole row itself with row(Index<D> first,
//   int length), called instead of operator() for each row; it must compute
//   exactly what operator() computes. The built-in Jacobi kernels and user
//   kernels do (see sweep.hpp), as loops the compiler vectorizes. Boxes only a
//   few cells thick in the last dimension (the overlap's shell slabs) run as
//   lines along dimension D-2 instead, cell by cell.
// - Device spaces (CUDA, HIP, SYCL): a row per thread would make neighbouring
//   threads read addresses a row apart, so one cell per thread through
//   Kokkos' MDRangePolicy tiling (for_each_cell_mdrange; row() is not used),
//   iterating row-major (Rank<D, Iterate::Right, Iterate::Right>) like the
//   fields: Kokkos' default order on GPUs is the opposite one.
//
// Execution spaces: every loop and update has an overload whose first
// argument is an execution space instance (the others use a default-made
// instance of the default space); its kernels are launched on that instance,
// which alone is fenced (space.fence(), never a global Kokkos::fence()).
//
// Reductions (reduce_cells, apply_reduce_with_halo) combine values with `+=`,
// so a Value type may define += to mean any associative combine, in an order
// fixed by the box alone, never by the thread count or the scheduling, so that
// floating-point results are bit-identical on Serial, on OpenMP at any number
// of threads, and from run to run. A box is cut into parts, each reduced by
// one thread from Value{} in a fixed order into a partial value:
// - Host spaces: the parts are the work items above (groups of rows, or
//   lines for thin boxes), numbered row-major; an item adds its cells
//   row-major.
// - Device spaces (and reduce_cells_mdrange anywhere): with the box's n cells
//   numbered row-major, part c of C = min(n, device_reduce_chunks) holds the
//   cells c, c + C, c + 2C, ... in that order (neighbouring threads read
//   neighbouring cells).
// The partial values are then combined by one rule: while more than
// reduce_fan_in are left, each run of reduce_fan_in consecutive ones (the
// last run may be shorter) is replaced by its sum, added in order from
// Value{}; the ones left are added in order from Value{}; the result gets
// `+= that sum`. Devices follow the same rule (in kernels) but cut the box
// otherwise, so host and device results may differ (fused multiply-adds
// make device fields differ anyway). apply_reduce_with_halo adds the sums
// of its boxes in one fixed box order, with or without overlap.
// Testing aid: compiled with ISOSTENCIL_UNORDERED_REDUCTIONS defined nonzero
// (CMake option of the same name) the reductions go through Kokkos'
// parallel_reduce, whose grouping follows the thread count; the backends
// test (tests/backends) must then fail.
//
// Measured on the project's 2-core machines (benchmarks/stencil_bench.cpp,
// 3-D 7-point sweep, 256^3 per rank, 1 rank): Kokkos' host MDRange (one
// functor call per cell) ~46% of the copy bound, rows cell by cell ~44%,
// rows through a vectorized row() with prefetching 63-71%; docs/kernels.md
// has the figures and what else was tried.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/core/profiling.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::kernels {

/// A local cell index (field coordinates, ghost layers included).
template <int D>
using Index = Kokkos::Array<int, D>;

/// Half-open box [begin, end) of local cell indices.
template <int D>
struct Box {
  Kokkos::Array<int, D> begin{};
  Kokkos::Array<int, D> end{};
  bool empty() const {
    for (int j = 0; j < D; ++j)
      if (end[j] <= begin[j]) return true;
    return false;
  }
  long cells() const {
    if (empty()) return 0;
    long n = 1;
    for (int j = 0; j < D; ++j)
      n *= end[j] - begin[j];
    return n;
  }
};

/// The interior split for overlap: `inner` reads no ghost cell, `shell` (at
/// most 2D disjoint boxes) covers the rest of the interior.
template <int D>
struct InteriorSplit {
  Box<D> interior;
  Box<D> inner;
  std::vector<Box<D>> shell;
};

namespace detail {
/// Calls emit(box) for disjoint boxes covering `outer` minus `inner`, where
/// the two agree in dimensions below `from` and inner lies within outer:
/// one dimension at a time, the slabs below and above the inner range, then
/// that dimension narrowed to the inner range for the next ones. The first
/// dimensions' slabs are whole planes and rows (contiguous); only the last
/// dimension's are strided.
template <int D, class Emit>
void peel(Box<D> outer, const Box<D>& inner, int from, const Emit& emit) {
  for (int j = from; j < D; ++j) {
    Box<D> below = outer, above = outer;
    below.end[j] = inner.begin[j];
    above.begin[j] = inner.end[j];
    if (!below.empty()) emit(below);
    if (!above.empty()) emit(above);
    outer.begin[j] = inner.begin[j];
    outer.end[j] = inner.end[j];
  }
}
}  // namespace detail

template <int D>
InteriorSplit<D> split_interior(const core::Grid<D>& grid) {
  InteriorSplit<D> split;
  for (int j = 0; j < D; ++j) {
    const auto [first, last] = grid.interior_range(j);
    split.interior.begin[j] = first;
    split.interior.end[j] = last;
    // A cell reads ghosts below when fewer than ghost_lo cells separate it
    // from the low ghost layer; likewise above.
    split.inner.begin[j] = first + grid.ghost_lo()[j];
    split.inner.end[j] = last - grid.ghost_hi()[j];
    if (split.inner.end[j] < split.inner.begin[j]) split.inner.end[j] = split.inner.begin[j];
  }
  if (split.inner.empty()) {
    split.inner = Box<D>{};
    split.shell.push_back(split.interior);
    return split;
  }
  detail::peel(split.interior, split.inner, 0,
               [&](const Box<D>& box) { split.shell.push_back(box); });
  return split;
}

namespace detail {
template <std::size_t>
using index_t = std::int64_t;

/// True for Kokkos execution space types (instances are the first argument
/// of the loops' and updates' space overloads).
template <class T>
inline constexpr bool is_execution_space = Kokkos::is_execution_space<T>::value;

// Kokkos calls functors with D separate indices; ours take one Index<D>.
template <int D, class Functor, class Dims = std::make_index_sequence<D>>
struct IndexAdapter;
template <int D, class Functor, std::size_t... J>
struct IndexAdapter<D, Functor, std::index_sequence<J...>> {
  Functor functor;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t<J>... i) const {
    functor(Index<D>{{static_cast<int>(i)...}});
  }
};

template <int D, class Functor, class Value, class Dims = std::make_index_sequence<D>>
struct ReduceAdapter;
template <int D, class Functor, class Value, std::size_t... J>
struct ReduceAdapter<D, Functor, Value, std::index_sequence<J...>> {
  Functor functor;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t<J>... i, Value& value) const {
    functor(Index<D>{{static_cast<int>(i)...}}, value);
  }
};

/// One index per cell of the box, row-major (the last index fastest, as the
/// fields are laid out; Kokkos' default on GPUs iterates the other way).
template <int D, class ExecutionSpace>
auto box_policy(const ExecutionSpace& space, const Box<D>& box) {
  if constexpr (D == 1) {
    return Kokkos::RangePolicy<ExecutionSpace>(space, box.begin[0], box.end[0]);
  } else {
    using Policy = Kokkos::MDRangePolicy<
        ExecutionSpace, Kokkos::Rank<D, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
    typename Policy::point_type first{}, last{};
    for (int j = 0; j < D; ++j) {
      first[j] = box.begin[j];
      last[j] = box.end[j];
    }
    return Policy(space, first, last);
  }
}
template <int D, class ExecutionSpace>
auto box_policy(const Box<D>& box) {
  return box_policy<D>(ExecutionSpace(), box);
}

/// True for execution spaces that run on the host (and can read host memory).
template <class ExecutionSpace>
inline constexpr bool runs_on_host =
    Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

/// True when the functor has row(Index<D> first, int length).
template <int D, class Functor, class = void>
struct has_row : std::false_type {};
template <int D, class Functor>
struct has_row<
    D, Functor,
    std::void_t<decltype(std::declval<const Functor&>().row(std::declval<const Index<D>&>(), 0))>>
    : std::true_type {};

/// Rows per work item of the host row loops: an item's first row costs a
/// few integer divisions (its index from the item number), the next ones an
/// increment; items stay small enough to spread over threads.
inline constexpr int rows_per_item = 16;

/// The work items of a box run as rows: groups of up to rows_per_item
/// consecutive rows along dimension D-2, `groups` of them per line of rows,
/// numbered row-major over dimensions 0..D-3, then the group.
template <int D>
struct RowItems {
  Index<D> begin{}, extent{};
  int groups = 1;
  std::int64_t count = 0;

  explicit RowItems(const Box<D>& box) {
    for (int j = 0; j < D; ++j) {
      begin[j] = box.begin[j];
      extent[j] = box.end[j] - box.begin[j];
    }
    count = 1;
    if constexpr (D > 1) {
      groups = (extent[D - 2] + rows_per_item - 1) / rows_per_item;
      count = groups;
      for (int j = 0; j + 2 < D; ++j)
        count *= extent[j];
    }
  }
  /// The first cell of item `item` and its number of rows.
  KOKKOS_INLINE_FUNCTION Index<D> first(std::int64_t item, int& rows) const {
    Index<D> x;
    x[D - 1] = begin[D - 1];
    rows = 1;
    if constexpr (D > 1) {
      const int group = static_cast<int>(item % groups);
      item /= groups;
      for (int j = D - 3; j >= 0; --j) {
        x[j] = begin[j] + static_cast<int>(item % extent[j]);
        item /= extent[j];
      }
      x[D - 2] = begin[D - 2] + group * rows_per_item;
      const int left = extent[D - 2] - group * rows_per_item;
      rows = left < rows_per_item ? left : rows_per_item;
    }
    return x;
  }
};

template <int D, class Functor>
struct RowLoop {
  Functor functor;
  RowItems<D> items;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    int rows = 0;
    Index<D> x = items.first(item, rows);
    const int length = items.extent[D - 1];
    for (int r = 0; r < rows; ++r) {
      if constexpr (has_row<D, Functor>::value) {
        functor.row(x, length);
      } else {
        Index<D> cell = x;
        for (int k = 0; k < length; ++k, ++cell[D - 1])
          functor(cell);
      }
      if constexpr (D > 1) ++x[D - 2];
    }
  }
};

/// One item's cells, row by row, each row in order, into `value`.
template <int D, class Functor, class Value>
struct RowReduceLoop {
  Functor functor;
  RowItems<D> items;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, Value& value) const {
    int rows = 0;
    Index<D> x = items.first(item, rows);
    const int length = items.extent[D - 1];
    for (int r = 0; r < rows; ++r) {
      Index<D> cell = x;
      for (int k = 0; k < length; ++k, ++cell[D - 1])
        functor(cell, value);
      if constexpr (D > 1) ++x[D - 2];
    }
  }
};

/// Boxes thin in the last dimension (the overlap's shell slabs next to the
/// last dimension's ghost layers) would make rows of one or two cells, each
/// paying a row's setup; they run as lines along dimension D-2 instead, one
/// line per work item, items row-major over the other dimensions.
template <int D>
struct LineItems {
  Index<D> begin{}, extent{};
  std::int64_t count = 1;

  explicit LineItems(const Box<D>& box) {
    for (int j = 0; j < D; ++j) {
      begin[j] = box.begin[j];
      extent[j] = box.end[j] - box.begin[j];
      if (j != D - 2) count *= extent[j];
    }
  }
  KOKKOS_INLINE_FUNCTION Index<D> first(std::int64_t item) const {
    Index<D> x;
    for (int j = D - 1; j >= 0; --j) {
      if (j == D - 2) continue;
      x[j] = begin[j] + static_cast<int>(item % extent[j]);
      item /= extent[j];
    }
    x[D - 2] = begin[D - 2];
    return x;
  }
};

template <int D, class Functor>
struct LineLoop {
  Functor functor;
  LineItems<D> items;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    Index<D> x = items.first(item);
    for (int i = 0; i < items.extent[D - 2]; ++i, ++x[D - 2])
      functor(x);
  }
};

/// One line's cells, in order, into `value`.
template <int D, class Functor, class Value>
struct LineReduceLoop {
  Functor functor;
  LineItems<D> items;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, Value& value) const {
    Index<D> x = items.first(item);
    for (int i = 0; i < items.extent[D - 2]; ++i, ++x[D - 2])
      functor(x, value);
  }
};

/// Whether a box is better run as lines along dimension D-2 than as rows.
template <int D>
bool thin_in_last_dimension(const Box<D>& box) {
  if constexpr (D < 2) {
    return false;
  } else {
    const int last = box.end[D - 1] - box.begin[D - 1];
    const int second = box.end[D - 2] - box.begin[D - 2];
    return last < 8 && second > last;
  }
}

template <class ExecutionSpace>
using ItemPolicy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
template <class ExecutionSpace>
using HostItemPolicy = ItemPolicy<ExecutionSpace>;

/// Chunks of a device reduction (see the header comment): enough threads to
/// fill a GPU at a few cells each, few enough that their partial values stay
/// a small fraction of the field.
inline constexpr std::int64_t device_reduce_chunks = std::int64_t{1} << 15;
/// Partial values added per thread when a device reduction combines them.
inline constexpr std::int64_t reduce_fan_in = 256;

/// The device order: chunk c adds the cells c, c + chunks, c + 2 chunks, ...
/// of the box (row-major numbering) into `value`.
template <int D, class Functor, class Value>
struct StridedReduceLoop {
  Functor functor;
  Index<D> begin{}, extent{};
  std::int64_t cells = 0, chunks = 1;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t chunk, Value& value) const {
    for (std::int64_t at = chunk; at < cells; at += chunks) {
      Index<D> x;
      std::int64_t rest = at;
      for (int j = D - 1; j >= 0; --j) {
        x[j] = begin[j] + static_cast<int>(rest % extent[j]);
        rest /= extent[j];
      }
      functor(x, value);
    }
  }
};

/// Work item `item` reduced from Value{} into its own slot of `partials`.
template <class Value, class ItemReduce>
struct ReduceItemInto {
  ItemReduce reduce;
  Value* partials;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    Value value{};
    reduce(item, value);
    partials[item] = value;
  }
};

/// out[g] = in[g * fan_in] + ... + in[min(count, (g + 1) * fan_in) - 1], in order.
template <class Value>
struct CombineGroup {
  const Value* in;
  Value* out;
  std::int64_t count;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t group) const {
    Value value{};
    const std::int64_t last =
        (group + 1) * reduce_fan_in < count ? (group + 1) * reduce_fan_in : count;
    for (std::int64_t i = group * reduce_fan_in; i < last; ++i)
      value += in[i];
    out[group] = value;
  }
};

template <class Value>
Value add_in_order(const Value* partials, std::int64_t count) {
  Value total{};
  for (std::int64_t i = 0; i < count; ++i)
    total += partials[i];
  return total;
}

/// CombineGroup's tree on the host, in place (group g's sum lands at g,
/// before any later group is read): the same result as on a device.
template <class Value>
Value combine_on_host(Value* partials, std::int64_t count) {
  while (count > reduce_fan_in) {
    const std::int64_t groups = (count + reduce_fan_in - 1) / reduce_fan_in;
    for (std::int64_t group = 0; group < groups; ++group)
      CombineGroup<Value>{partials, partials, count}(group);
    count = groups;
  }
  return add_in_order(partials, count);
}

/// The items 0..count-1, each reduced by reduce(item, value) on `space`, then
/// combined by the fixed tree of CombineGroup (on the device or the host,
/// same result). Fences `space` (the value is returned to the host).
template <class Value, class ExecutionSpace, class ItemReduce>
Value reduce_items(const ExecutionSpace& space, const std::string& label, std::int64_t count,
                   const ItemReduce& reduce) {
  using Policy = ItemPolicy<ExecutionSpace>;
  if constexpr (runs_on_host<ExecutionSpace>) {
    std::vector<Value> partials(static_cast<std::size_t>(count));
    Kokkos::parallel_for(label, Policy(space, 0, count),
                         ReduceItemInto<Value, ItemReduce>{reduce, partials.data()});
    space.fence();
    return combine_on_host(partials.data(), count);
  } else {
    static_assert(std::is_trivially_copyable_v<Value>,
                  "reductions on a device copy their Value to the host bytewise");
    using Memory = typename ExecutionSpace::memory_space;
    Kokkos::View<Value*, Memory> partials(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, label + ":partials"),
        static_cast<std::size_t>(count));
    Kokkos::parallel_for(label, Policy(space, 0, count),
                         ReduceItemInto<Value, ItemReduce>{reduce, partials.data()});
    while (count > reduce_fan_in) {
      const std::int64_t groups = (count + reduce_fan_in - 1) / reduce_fan_in;
      Kokkos::View<Value*, Memory> sums(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, label + ":partials"),
          static_cast<std::size_t>(groups));
      Kokkos::parallel_for(label + ":combine", Policy(space, 0, groups),
                           CombineGroup<Value>{partials.data(), sums.data(), count});
      partials = sums;
      count = groups;
    }
    Kokkos::View<Value*, Kokkos::HostSpace> host(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, label + ":partials"),
        static_cast<std::size_t>(count));
    Kokkos::deep_copy(space, host, partials);
    space.fence();
    return add_in_order(host.data(), count);
  }
}

#if defined(ISOSTENCIL_UNORDERED_REDUCTIONS) && ISOSTENCIL_UNORDERED_REDUCTIONS
inline constexpr bool unordered_reductions = true;
#else
/// Set by the testing aid ISOSTENCIL_UNORDERED_REDUCTIONS (header comment).
inline constexpr bool unordered_reductions = false;
#endif

/// The testing aid: Kokkos' parallel_reduce over the same items, grouped by
/// thread.
template <class Value, class ExecutionSpace, class ItemReduce>
Value reduce_items_unordered(const ExecutionSpace& space, const std::string& label,
                             std::int64_t count, const ItemReduce& reduce) {
  Value value{};
  Kokkos::parallel_reduce(label, ItemPolicy<ExecutionSpace>(space, 0, count), reduce, value);
  space.fence();
  return value;
}

/// The box's value in the device order (header comment), on any space.
template <int D, class Value, class Functor, class ExecutionSpace>
Value reduce_box_strided(const ExecutionSpace& space, const std::string& label, const Box<D>& box,
                         const Functor& functor) {
  StridedReduceLoop<D, Functor, Value> loop{functor, {}, {}, box.cells(), 1};
  for (int j = 0; j < D; ++j) {
    loop.begin[j] = box.begin[j];
    loop.extent[j] = box.end[j] - box.begin[j];
  }
  loop.chunks = loop.cells < device_reduce_chunks ? loop.cells : device_reduce_chunks;
  if constexpr (unordered_reductions) {
    Value value{};
    Kokkos::parallel_reduce(label, box_policy<D>(space, box),
                            ReduceAdapter<D, Functor, Value>{functor}, value);
    space.fence();
    return value;
  } else {
    return reduce_items<Value>(space, label, loop.chunks, loop);
  }
}

/// The box's value in the host order (header comment).
template <int D, class Value, class Functor, class ExecutionSpace>
Value reduce_box_rows(const ExecutionSpace& space, const std::string& label, const Box<D>& box,
                      const Functor& functor) {
  const auto run = [&](std::int64_t count, const auto& loop) {
    using Loop = std::decay_t<decltype(loop)>;
    if constexpr (unordered_reductions)
      return reduce_items_unordered<Value, ExecutionSpace, Loop>(space, label, count, loop);
    else
      return reduce_items<Value, ExecutionSpace, Loop>(space, label, count, loop);
  };
  if constexpr (D >= 2) {
    if (thin_in_last_dimension(box)) {
      const LineItems<D> items(box);
      return run(items.count, LineReduceLoop<D, Functor, Value>{functor, items});
    }
  }
  const RowItems<D> items(box);
  return run(items.count, RowReduceLoop<D, Functor, Value>{functor, items});
}
}  // namespace detail

/// Calls functor(Index<D>) for every cell of the box (no-op when empty) as
/// one cell per index of Kokkos' MDRangePolicy (row-major), on `space`.
/// Does not fence.
template <int D, class Functor, class ExecutionSpace,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
void for_each_cell_mdrange(const ExecutionSpace& space, const std::string& label,
                           const Box<D>& box, const Functor& functor) {
  if (box.empty()) return;
  Kokkos::parallel_for(label, detail::box_policy<D>(space, box),
                       detail::IndexAdapter<D, Functor>{functor});
}
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void for_each_cell_mdrange(const std::string& label, const Box<D>& box, const Functor& functor) {
  for_each_cell_mdrange<D>(ExecutionSpace(), label, box, functor);
}

/// reduce_cells in the device order (header comment: one chunk per thread,
/// cells strided across chunks, a fixed tree of partial values) on any
/// space; with ISOSTENCIL_UNORDERED_REDUCTIONS, Kokkos' MDRange reduction.
/// Fences `space`.
template <int D, class Value, class Functor, class ExecutionSpace,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
void reduce_cells_mdrange(const ExecutionSpace& space, const std::string& label,
                          const Box<D>& box, const Functor& functor, Value& result) {
  if (box.empty()) return;
  result += detail::reduce_box_strided<D, Value>(space, label, box, functor);
}
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void reduce_cells_mdrange(const std::string& label, const Box<D>& box, const Functor& functor,
                          Value& result) {
  reduce_cells_mdrange<D>(ExecutionSpace(), label, box, functor, result);
}

/// Calls functor(Index<D>) (or functor.row(), see the header comment) for
/// every cell of the box (no-op when empty) on `space`: rows on host spaces,
/// MDRange on devices. Does not fence.
template <int D, class Functor, class ExecutionSpace,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
void for_each_cell(const ExecutionSpace& space, const std::string& label, const Box<D>& box,
                   const Functor& functor) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>) {
    using Policy = detail::ItemPolicy<ExecutionSpace>;
    if constexpr (D >= 2) {
      if (detail::thin_in_last_dimension(box)) {
        const detail::LineItems<D> items(box);
        Kokkos::parallel_for(label, Policy(space, 0, items.count),
                             detail::LineLoop<D, Functor>{functor, items});
        return;
      }
    }
    const detail::RowItems<D> items(box);
    Kokkos::parallel_for(label, Policy(space, 0, items.count),
                         detail::RowLoop<D, Functor>{functor, items});
  } else {
    for_each_cell_mdrange<D>(space, label, box, functor);
  }
}
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void for_each_cell(const std::string& label, const Box<D>& box, const Functor& functor) {
  for_each_cell<D>(ExecutionSpace(), label, box, functor);
}

/// Combines functor(Index<D>, Value&) over the cells of the box into `result`
/// with `+=` (so several boxes accumulate), on `space`, in the fixed order of
/// the header comment: the same value on every host backend and thread count.
/// Fences `space` (the value is needed on the host).
template <int D, class Value, class Functor, class ExecutionSpace,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
void reduce_cells(const ExecutionSpace& space, const std::string& label, const Box<D>& box,
                  const Functor& functor, Value& result) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>)
    result += detail::reduce_box_rows<D, Value>(space, label, box, functor);
  else
    result += detail::reduce_box_strided<D, Value>(space, label, box, functor);
}
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void reduce_cells(const std::string& label, const Box<D>& box, const Functor& functor,
                  Value& result) {
  reduce_cells<D>(ExecutionSpace(), label, box, functor, result);
}

/// Where the time of one update went (seconds, this rank).
struct UpdateTimes {
  double kernel = 0;
  double halo = 0;  ///< time spent in start/wait (exposed communication)
  UpdateTimes& operator+=(const UpdateTimes& other) {
    kernel += other.kernel;
    halo += other.halo;
    return *this;
  }
};

/// Planes (dimension 0) of the inner box are updated in about this many
/// slabs while the exchange is in flight, testing it between slabs.
inline constexpr int overlap_slabs = 16;

/// An interior of fewer cells runs without overlap even when overlap is asked
/// for: its boundary shell, cut into thin boxes run cell by cell, costs more
/// than the little compute there is to hide the exchange behind (8^3 per rank,
/// 7-point Jacobi: 24 % more instructions per sweep than one loop over the
/// whole interior, callgrind).
inline constexpr long overlap_min_cells = 4096;

/// What an update loop needs besides the functor, made once per grid and
/// kernel (plan_update) so that a step allocates nothing: the interior split,
/// the Kokkos labels of the whole interior, the inner box and the rest, and
/// the planes per slab of the inner box.
template <int D>
struct UpdatePlan {
  InteriorSplit<D> split;
  std::string label, inner_label, shell_label;
  int slab = 1;
  bool overlap_pays = true;  ///< false: updates ignore their overlap flag
};

/// `min_overlap_cells`: the smallest interior that overlaps (tests pass 0 to
/// run the overlapped path on any grid).
template <int D>
UpdatePlan<D> plan_update(const core::Grid<D>& grid, const std::string& label,
                          long min_overlap_cells = overlap_min_cells) {
  UpdatePlan<D> plan{split_interior(grid), label, label + ":inner", label + ":shell", 1, true};
  const int planes = plan.split.inner.end[0] - plan.split.inner.begin[0];
  plan.slab = planes > overlap_slabs ? (planes + overlap_slabs - 1) / overlap_slabs : 1;
  plan.overlap_pays = plan.split.interior.cells() >= min_overlap_cells;
  return plan;
}

namespace detail {
/// The inner box in the slabs of the overlap loop, then the planes below and
/// above it, then the shell of the inner planes: the one fixed cut of the
/// interior that reductions use (see run_with_halo).
template <int D, class RunBox>
void run_fixed_boxes(const UpdatePlan<D>& plan, const RunBox& run_box) {
  const Box<D>& interior = plan.split.interior;
  const Box<D>& inner = plan.split.inner;
  for (int done = inner.begin[0]; done < inner.end[0];) {
    Box<D> slab = inner;
    slab.begin[0] = done;
    slab.end[0] = done + plan.slab < inner.end[0] ? done + plan.slab : inner.end[0];
    run_box(plan.inner_label, slab);
    done = slab.end[0];
  }
  Box<D> below = interior, above = interior, planes = interior;
  below.end[0] = inner.begin[0];
  above.begin[0] = inner.end[0];
  planes.begin[0] = inner.begin[0];
  planes.end[0] = inner.end[0];
  if (!below.empty()) run_box(plan.shell_label, below);
  if (!above.empty()) run_box(plan.shell_label, above);
  if (!planes.empty())
    peel(planes, inner, 1, [&](const Box<D>& box) { run_box(plan.shell_label, box); });
}

// The exchange's calls with the execution space where the exchange takes one
// (fencing and packing on that instance), else the plain ones.
template <class Halo, class Space, class = void>
struct starts_on_space : std::false_type {};
template <class Halo, class Space>
struct starts_on_space<
    Halo, Space, std::void_t<decltype(std::declval<Halo&>().start(std::declval<const Space&>()))>>
    : std::true_type {};
template <class Halo, class Space, class = void>
struct tests_on_space : std::false_type {};
template <class Halo, class Space>
struct tests_on_space<
    Halo, Space, std::void_t<decltype(std::declval<Halo&>().test(std::declval<const Space&>()))>>
    : std::true_type {};
template <class Halo, class Space, class = void>
struct waits_on_space : std::false_type {};
template <class Halo, class Space>
struct waits_on_space<
    Halo, Space, std::void_t<decltype(std::declval<Halo&>().wait(std::declval<const Space&>()))>>
    : std::true_type {};

template <class Space, class Halo>
void start_exchange(const Space& space, Halo& halo) {
  if constexpr (starts_on_space<Halo, Space>::value)
    halo.start(space);
  else
    halo.start();
}
template <class Space, class Halo>
bool test_exchange(const Space& space, Halo& halo) {
  if constexpr (tests_on_space<Halo, Space>::value)
    return halo.test(space);
  else
    return halo.test();
}
template <class Space, class Halo>
void wait_exchange(const Space& space, Halo& halo) {
  if constexpr (waits_on_space<Halo, Space>::value)
    halo.wait(space);
  else
    halo.wait();
}

/// The overlap logic shared by every update: run_box(label, box) runs the
/// kernel on a box on `space`; that instance is fenced before MPI reads the
/// fields (by the exchange) and before returning. The exchange is driven
/// from the calling (host) thread only, between kernel launches.
///
/// With overlap, the inner box (no ghost reads) runs in slabs of planes
/// while the exchange is in flight, the exchange tested between slabs. Once
/// it has completed, the planes left are run whole (rows of the full
/// interior width); only the planes done before that need the boundary
/// shell, whose slabs in the last dimension are strided and cost far more
/// per cell than whole rows. Each interior cell is still run exactly once.
///
/// With `fixed_boxes` (reductions) the interior is always cut into the same
/// boxes, run in the same order — every inner slab, then the planes below
/// and above, then the shell — whether or not overlap is on and whenever the
/// exchange completes; each box's value comes in the fixed order of
/// reduce_cells and is added to the result in that box order, so that a
/// floating-point sum comes out bit-identical from run to run, on any number
/// of threads. Without it the cut would follow the message timing.
template <int D, class ExecutionSpace, class RunBox,
          std::enable_if_t<is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes run_with_halo(const ExecutionSpace& space, const UpdatePlan<D>& plan,
                          core::HaloExchange& halo, bool overlap, bool fixed_boxes,
                          const RunBox& run_box) {
  const core::ProfilingRegion region("isostencil::kernel");
  UpdateTimes times;
  const Box<D>& interior = plan.split.interior;
  const Box<D>& inner = plan.split.inner;
  overlap = overlap && plan.overlap_pays;
  if (!overlap || inner.empty()) {
    const double t0 = MPI_Wtime();
    start_exchange(space, halo);
    wait_exchange(space, halo);
    const double t1 = MPI_Wtime();
    if (fixed_boxes && !inner.empty())
      run_fixed_boxes(plan, run_box);
    else
      run_box(plan.label, interior);
    space.fence();
    times.halo = t1 - t0;
    times.kernel = MPI_Wtime() - t1;
    return times;
  }
  double t = MPI_Wtime();
  const auto lap = [&t](double& total) {
    const double now = MPI_Wtime();
    total += now - t;
    t = now;
  };
  start_exchange(space, halo);
  lap(times.halo);
  // Inner planes [inner.begin[0], done) are updated; the exchange is
  // complete once `arrived`.
  int done = inner.begin[0];
  bool arrived = false;
  while (done < inner.end[0] && (fixed_boxes || !arrived)) {
    Box<D> slab = inner;
    slab.begin[0] = done;
    slab.end[0] = done + plan.slab < inner.end[0] ? done + plan.slab : inner.end[0];
    run_box(plan.inner_label, slab);
    done = slab.end[0];
    lap(times.kernel);
    if (done < inner.end[0] && !arrived) {
      arrived = test_exchange(space, halo);
      lap(times.halo);
    }
  }
  space.fence();
  lap(times.kernel);
  wait_exchange(space, halo);  // returns at once when a test saw the exchange complete
  lap(times.halo);
  // The rest of the interior: the planes below and above the inner range,
  // the shell of the planes done, and the inner planes not done, whole.
  Box<D> below = interior, above = interior, rest = interior, done_planes = interior;
  below.end[0] = inner.begin[0];
  above.begin[0] = inner.end[0];
  done_planes.begin[0] = inner.begin[0];
  done_planes.end[0] = done;
  rest.begin[0] = done;
  rest.end[0] = inner.end[0];
  if (!below.empty()) run_box(plan.shell_label, below);
  if (!above.empty()) run_box(plan.shell_label, above);
  if (!done_planes.empty())
    peel(done_planes, inner, 1, [&](const Box<D>& box) { run_box(plan.shell_label, box); });
  if (!rest.empty()) run_box(plan.shell_label, rest);
  space.fence();
  lap(times.kernel);
  return times;
}
/// run_with_halo on the default execution space.
template <int D, class RunBox>
UpdateTimes run_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo, bool overlap,
                          bool fixed_boxes, const RunBox& run_box) {
  return run_with_halo(Kokkos::DefaultExecutionSpace(), plan, halo, overlap, fixed_boxes,
                       run_box);
}
}  // namespace detail

/// One stencil update on `space`: exchange the halos of the fields `halo`
/// covers, then call functor(Index<D>) on every interior cell
/// (for_each_cell). With `overlap`, the cells that read no ghost run between
/// start() and wait(). Fences `space` before returning.
template <int D, class ExecutionSpace, class Functor,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_with_halo(const ExecutionSpace& space, const UpdatePlan<D>& plan,
                            core::HaloExchange& halo, bool overlap, const Functor& functor) {
  return detail::run_with_halo(space, plan, halo, overlap, false,
                               [&](const std::string& label, const Box<D>& box) {
                                 for_each_cell<D>(space, label, box, functor);
                               });
}
template <int D, class Functor>
UpdateTimes apply_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo, bool overlap,
                            const Functor& functor) {
  return apply_with_halo<D>(Kokkos::DefaultExecutionSpace(), plan, halo, overlap, functor);
}

/// apply_with_halo for a functor(Index<D>, Value&) that also reduces: the
/// values of all interior cells are combined into `result` with `+=`, in an
/// order that depends on the grid alone (not on overlap, message timing,
/// backend or thread count), so floating-point results repeat bit for bit.
template <int D, class Value, class ExecutionSpace, class Functor,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_reduce_with_halo(const ExecutionSpace& space, const UpdatePlan<D>& plan,
                                   core::HaloExchange& halo, bool overlap, const Functor& functor,
                                   Value& result) {
  return detail::run_with_halo(space, plan, halo, overlap, true,
                               [&](const std::string& label, const Box<D>& box) {
                                 reduce_cells<D>(space, label, box, functor, result);
                               });
}
template <int D, class Value, class Functor>
UpdateTimes apply_reduce_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo,
                                   bool overlap, const Functor& functor, Value& result) {
  return apply_reduce_with_halo<D>(Kokkos::DefaultExecutionSpace(), plan, halo, overlap, functor,
                                   result);
}

/// apply_with_halo planning on each call (for one-off updates; loops keep an
/// UpdatePlan).
template <int D, class ExecutionSpace, class Functor,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_with_halo(const ExecutionSpace& space, const core::Grid<D>& grid,
                            core::HaloExchange& halo, const std::string& label, bool overlap,
                            const Functor& functor) {
  return apply_with_halo<D>(space, plan_update(grid, label), halo, overlap, functor);
}
template <int D, class Functor>
UpdateTimes apply_with_halo(const core::Grid<D>& grid, core::HaloExchange& halo,
                            const std::string& label, bool overlap, const Functor& functor) {
  return apply_with_halo<D>(Kokkos::DefaultExecutionSpace(), grid, halo, label, overlap, functor);
}

}  // namespace isostencil::kernels
