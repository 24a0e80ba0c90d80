// Cell loops tuned for stencil sweeps, with the same contract as update.hpp's
// for_each_cell / reduce_cells / apply_with_halo (functor(Index<D>), boxes of
// local indices, interior/shell overlap), but a different iteration:
//
// - On host execution spaces (Serial, OpenMP, Threads) one work item is a row
//   of the box along the last dimension, which is contiguous in LayoutRight.
//   The inner loop is a plain unit-stride loop over that row; neighbouring
//   rows and planes stay in cache. A functor may process the whole row
//   itself (row(), below): the built-in Jacobi kernels and user kernels do,
//   as a vectorizable loop with software prefetch. Boxes only a few cells
//   thick in the last dimension (overlap shells) run as lines along
//   dimension D-2 instead. Measured on the project's 2-core machines
//   (benchmarks/stencil_bench.cpp, 3-D 7-point sweep, 256^3 per rank, median
//   of 8 runs): Kokkos' default host MDRange (2 x 2 x ... x full-extent tiles,
//   one functor call per cell) 46% of the copy bound, these rows cell by cell
//   45%, rows through row() 67% (1 rank) and 79% (2 ranks).
// - On device execution spaces (CUDA, HIP, SYCL) a row per thread would make
//   neighbouring threads read addresses a row apart; there the loops fall
//   back to update.hpp's MDRangePolicy (one cell per thread, Kokkos' tiling).
//
// A functor may also provide row(Index<D> first, int length), called instead
// of the per-cell operator() for each row on host spaces, to write the row as
// one loop the compiler vectorizes (restrict pointers, fixed-length chunks:
// GCC's -O2 cost model vectorizes only loops that need no alias checks and no
// scalar epilogue). It must compute exactly what operator() computes.
//
// The reduction variants combine values with `+=` (Kokkos' default join), so
// a Value type may define += to mean any associative combine.
#pragma once

#include "isostencil/kernels/update.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::kernels {

namespace detail {

/// True for execution spaces that run on the host (and can read host memory).
template <class ExecutionSpace>
inline constexpr bool runs_on_host =
    Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

/// Number of rows (cells of all dimensions but the last) of a non-empty box.
template <int D>
std::int64_t box_rows(const Box<D>& box) {
  std::int64_t rows = 1;
  for (int j = 0; j + 1 < D; ++j)
    rows *= box.end[j] - box.begin[j];
  return rows;
}

/// The first cell of row `row` of a box (row-major over dimensions 0..D-2).
template <int D>
KOKKOS_INLINE_FUNCTION Index<D> row_start(std::int64_t row, const Index<D>& begin,
                                          const Index<D>& extent) {
  Index<D> x;
  for (int j = D - 2; j >= 0; --j) {
    x[j] = begin[j] + static_cast<int>(row % extent[j]);
    row /= extent[j];
  }
  x[D - 1] = begin[D - 1];
  return x;
}

/// True when the functor has row(Index<D> first, int length): a whole row
/// in one call, which a kernel can write as a plain loop over restrict
/// pointers (see jacobi.hpp).
template <int D, class Functor, class = void>
struct has_row : std::false_type {};
template <int D, class Functor>
struct has_row<
    D, Functor,
    std::void_t<decltype(std::declval<const Functor&>().row(std::declval<const Index<D>&>(), 0))>>
    : std::true_type {};

template <int D, class Functor>
struct RowLoop {
  Functor functor;
  Index<D> begin, extent;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t row) const {
    Index<D> x = row_start<D>(row, begin, extent);
    if constexpr (has_row<D, Functor>::value) {
      functor.row(x, extent[D - 1]);
    } else {
      const int last = begin[D - 1] + extent[D - 1];
      for (int k = begin[D - 1]; k < last; ++k) {
        x[D - 1] = k;
        functor(x);
      }
    }
  }
};

template <int D, class Functor, class Value>
struct RowReduceLoop {
  Functor functor;
  Index<D> begin, extent;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t row, Value& value) const {
    Index<D> x = row_start<D>(row, begin, extent);
    const int last = begin[D - 1] + extent[D - 1];
    for (int k = begin[D - 1]; k < last; ++k) {
      x[D - 1] = k;
      functor(x, value);
    }
  }
};

/// Boxes thin in the last dimension (the overlap's shell slabs next to the
/// last dimension's ghost layers) would make rows of one or two cells, each
/// paying a row's setup. Such boxes run as lines along dimension D-2
/// instead, cell by cell. One work item: a line; `item` runs over the other
/// dimensions, row-major.
template <int D>
KOKKOS_INLINE_FUNCTION Index<D> line_start(std::int64_t item, const Index<D>& begin,
                                           const Index<D>& extent) {
  Index<D> x;
  for (int j = D - 1; j >= 0; --j) {
    if (j == D - 2) continue;
    x[j] = begin[j] + static_cast<int>(item % extent[j]);
    item /= extent[j];
  }
  x[D - 2] = begin[D - 2];
  return x;
}

template <int D, class Functor>
struct LineLoop {
  Functor functor;
  Index<D> begin, extent;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    Index<D> x = line_start<D>(item, begin, extent);
    const int last = begin[D - 2] + extent[D - 2];
    for (int i = begin[D - 2]; i < last; ++i) {
      x[D - 2] = i;
      functor(x);
    }
  }
};

template <int D, class Functor, class Value>
struct LineReduceLoop {
  Functor functor;
  Index<D> begin, extent;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, Value& value) const {
    Index<D> x = line_start<D>(item, begin, extent);
    const int last = begin[D - 2] + extent[D - 2];
    for (int i = begin[D - 2]; i < last; ++i) {
      x[D - 2] = i;
      functor(x, value);
    }
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

/// Number of lines along dimension D-2 of a non-empty box.
template <int D>
std::int64_t box_lines(const Box<D>& box) {
  std::int64_t lines = 1;
  for (int j = 0; j < D; ++j)
    if (j != D - 2) lines *= box.end[j] - box.begin[j];
  return lines;
}

template <int D>
void box_begin_extent(const Box<D>& box, Index<D>& begin, Index<D>& extent) {
  for (int j = 0; j < D; ++j) {
    begin[j] = box.begin[j];
    extent[j] = box.end[j] - box.begin[j];
  }
}

/// For row() helpers whose restrict parameters must keep their meaning: GCC
/// (12) drops it for pointers that pass through a struct (e.g. a Neighbors
/// object) once the function is inlined into its caller, and then cannot
/// vectorize the row. One call per row costs nothing measurable.
#if defined(__GNUC__) || defined(__clang__)
#define ISOSTENCIL_ROW_NOINLINE __attribute__((noinline))
#else
#define ISOSTENCIL_ROW_NOINLINE
#endif

/// Cells per chunk of a row's inner loop in row() implementations: a fixed
/// trip count that GCC's -O2 ("very cheap") vectorization model accepts, and
/// one 64-byte cache line of doubles (one prefetch per line and stream).
inline constexpr int row_chunk = 8;

/// Software prefetch in row() loops, host compilers only (a no-op in device
/// passes and elsewhere). A sweep over a large field reads its leading
/// stream (the plane ahead) and writes its output from memory; with the
/// hardware prefetchers alone the vectorized 7-point sweep stayed at ~45% of
/// the copy bandwidth on the project's machines, prefetching those two
/// streams this far ahead raised it to ~65% (one rank, 256^3; blocking the
/// planes, non-temporal stores and prefetching the other streams were
/// slower). Only used for fields large enough to need it. A prefetch never faults; near the end of
/// the field it may name an address past it, so the address is formed as an
/// integer (ISOSTENCIL_PREFETCH_*(pointer, elements ahead)).
inline constexpr int row_prefetch_distance = 384;  // elements (3 KB of doubles)
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define ISOSTENCIL_PREFETCH_AT(pointer, ahead)                              \
  reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(pointer) + \
                                sizeof(*(pointer)) * (ahead))
#define ISOSTENCIL_PREFETCH_READ(pointer, ahead) \
  __builtin_prefetch(ISOSTENCIL_PREFETCH_AT(pointer, ahead), 0, 3)
#define ISOSTENCIL_PREFETCH_WRITE(pointer, ahead) \
  __builtin_prefetch(ISOSTENCIL_PREFETCH_AT(pointer, ahead), 1, 3)
#else
#define ISOSTENCIL_PREFETCH_READ(pointer, ahead) ((void)0)
#define ISOSTENCIL_PREFETCH_WRITE(pointer, ahead) ((void)0)
#endif

/// Element strides of a field (LayoutRight: the last index is contiguous).
template <int D>
using Strides = Kokkos::Array<std::ptrdiff_t, D>;

template <int D>
KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t linear_index(const Index<D>& x,
                                                        const Strides<D>& stride) {
  std::ptrdiff_t at = x[D - 1];
  for (int j = 0; j + 1 < D; ++j)
    at += static_cast<std::ptrdiff_t>(x[j]) * stride[j];
  return at;
}

/// Strides of a contiguous LayoutRight rank-D view.
template <int D, class View>
Strides<D> layout_right_strides(const View& view) {
  Strides<D> stride;
  stride[D - 1] = 1;
  for (int j = D - 2; j >= 0; --j)
    stride[j] = stride[j + 1] * static_cast<std::ptrdiff_t>(view.extent(j + 1));
  return stride;
}

/// Empty when `field` has the grid's field extents and is contiguous, else
/// the error message (starting with `where`).
template <int D, class View>
std::string check_grid_field(const core::Grid<D>& grid, const char* where, const char* what,
                             const View& field) {
  static_assert(static_cast<int>(View::rank) == D, "the field's rank differs from the grid's");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "fields must be LayoutRight, as Grid::make_field gives them");
  const std::string which = std::string(where) + ": field " + what + " (\"" + field.label() + "\")";
  if (field.data() == nullptr || !field.span_is_contiguous())
    return which + " is not allocated or not contiguous";
  for (int j = 0; j < D; ++j)
    if (field.extent(j) != static_cast<std::size_t>(grid.field_extent()[j]))
      return which + " has extent " + std::to_string(field.extent(j)) + " in dimension " +
             std::to_string(j) + ", the grid's fields have " +
             std::to_string(grid.field_extent()[j]) + "; make it with Grid::make_field";
  return {};
}

/// Collective over the grid: every rank throws iso::Error when any rank has an error.
template <int D>
void agree(const core::Grid<D>& grid, const char* where, const std::string& error) {
  core::detail::agree_on_field_errors(grid.decomposition(), where, error);
}

}  // namespace detail

/// Calls functor(Index<D>) for every cell of the box (no-op when empty): rows
/// along the last dimension on host spaces, update.hpp's for_each_cell on devices.
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void sweep_cells(const std::string& label, const Box<D>& box, const Functor& functor) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>) {
    using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
    if (detail::thin_in_last_dimension(box)) {
      detail::LineLoop<D, Functor> loop{functor, {}, {}};
      detail::box_begin_extent<D>(box, loop.begin, loop.extent);
      Kokkos::parallel_for(label, Policy(0, detail::box_lines(box)), loop);
      return;
    }
    detail::RowLoop<D, Functor> loop{functor, {}, {}};
    detail::box_begin_extent<D>(box, loop.begin, loop.extent);
    Kokkos::parallel_for(label, Policy(0, detail::box_rows(box)), loop);
  } else {
    for_each_cell<D, Functor, ExecutionSpace>(label, box, functor);
  }
}

/// Combines functor(Index<D>, Value&) over the cells of the box into `result`
/// with `+=` (so several boxes accumulate).
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void sweep_reduce_cells(const std::string& label, const Box<D>& box, const Functor& functor,
                        Value& result) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>) {
    using Policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
    Value partial{};
    if (detail::thin_in_last_dimension(box)) {
      detail::LineReduceLoop<D, Functor, Value> loop{functor, {}, {}};
      detail::box_begin_extent<D>(box, loop.begin, loop.extent);
      Kokkos::parallel_reduce(label, Policy(0, detail::box_lines(box)), loop, partial);
    } else {
      detail::RowReduceLoop<D, Functor, Value> loop{functor, {}, {}};
      detail::box_begin_extent<D>(box, loop.begin, loop.extent);
      Kokkos::parallel_reduce(label, Policy(0, detail::box_rows(box)), loop, partial);
    }
    result += partial;
  } else {
    reduce_cells<D, Value, Functor, ExecutionSpace>(label, box, functor, result);
  }
}

/// apply_with_halo (update.hpp) on sweep_cells: exchange the halos `halo`
/// covers, then functor(Index<D>) on every interior cell; with `overlap`, the
/// cells that read no ghost run between start() and wait().
template <int D, class Functor>
UpdateTimes sweep_with_halo(const core::Grid<D>& grid, core::HaloExchange& halo,
                            const std::string& label, bool overlap, const Functor& functor) {
  UpdateTimes times;
  const InteriorSplit<D> split = split_interior(grid);
  if (!overlap) {
    const double t0 = MPI_Wtime();
    halo.run();
    const double t1 = MPI_Wtime();
    sweep_cells<D>(label, split.interior, functor);
    Kokkos::fence();
    times.halo = t1 - t0;
    times.kernel = MPI_Wtime() - t1;
    return times;
  }
  const double t0 = MPI_Wtime();
  halo.start();
  const double t1 = MPI_Wtime();
  sweep_cells<D>(label + ":inner", split.inner, functor);
  Kokkos::fence();
  const double t2 = MPI_Wtime();
  halo.wait();
  const double t3 = MPI_Wtime();
  for (const Box<D>& box : split.shell)
    sweep_cells<D>(label + ":shell", box, functor);
  Kokkos::fence();
  times.halo = (t1 - t0) + (t3 - t2);
  times.kernel = (t2 - t1) + (MPI_Wtime() - t3);
  return times;
}

/// sweep_with_halo for a functor(Index<D>, Value&) that also reduces: the
/// values of all interior cells are combined into `result` with `+=`.
template <int D, class Value, class Functor>
UpdateTimes sweep_reduce_with_halo(const core::Grid<D>& grid, core::HaloExchange& halo,
                                   const std::string& label, bool overlap, const Functor& functor,
                                   Value& result) {
  UpdateTimes times;
  const InteriorSplit<D> split = split_interior(grid);
  if (!overlap) {
    const double t0 = MPI_Wtime();
    halo.run();
    const double t1 = MPI_Wtime();
    sweep_reduce_cells<D>(label, split.interior, functor, result);
    Kokkos::fence();
    times.halo = t1 - t0;
    times.kernel = MPI_Wtime() - t1;
    return times;
  }
  const double t0 = MPI_Wtime();
  halo.start();
  const double t1 = MPI_Wtime();
  sweep_reduce_cells<D>(label + ":inner", split.inner, functor, result);
  Kokkos::fence();
  const double t2 = MPI_Wtime();
  halo.wait();
  const double t3 = MPI_Wtime();
  for (const Box<D>& box : split.shell)
    sweep_reduce_cells<D>(label + ":shell", box, functor, result);
  Kokkos::fence();
  times.halo = (t1 - t0) + (t3 - t2);
  times.kernel = (t2 - t1) + (MPI_Wtime() - t3);
  return times;
}

}  // namespace isostencil::kernels
