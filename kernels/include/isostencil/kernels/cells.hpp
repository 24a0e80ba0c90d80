// Cell loops over boxes of local indices (for_each_cell and its MDRange
// form), the Box and Index types and the box arithmetic the updates share.
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
// Measured on the project's 2-core machines (benchmarks/stencil_bench.cpp,
// 3-D 7-point sweep, 256^3 per rank, 1 rank): Kokkos' host MDRange (one
// functor call per cell) ~46% of the copy bound, rows cell by cell ~44%,
// rows through a vectorized row() with prefetching 63-71%; docs/kernels.md
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

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

}  // namespace isostencil::kernels
