// Reductions over boxes of cells in a fixed order (reduce_cells and its
// device form): the same floating-point value on every host backend and
// thread count. Cell loops are in cells.hpp.
//
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
#pragma once

#include "isostencil/kernels/cells.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace isostencil::kernels {

namespace detail {
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

}  // namespace isostencil::kernels
