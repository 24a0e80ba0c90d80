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
//   Kokkos' MDRangePolicy tiling (for_each_cell_mdrange; row() is not used).
//
// Measured on the project's 2-core machines (benchmarks/stencil_bench.cpp,
// 3-D 7-point sweep, 256^3 per rank, 1 rank): Kokkos' host MDRange (one
// functor call per cell) ~46% of the copy bound, rows cell by cell ~44%,
// rows through a vectorized row() with prefetching 63-71%; docs/kernels.md
// has the figures and what else was tried.
//
// The reductions combine values with `+=` (Kokkos' default join), so a Value
// type may define += to mean any associative combine.
#pragma once

#include "isostencil/core/grid.hpp"

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

template <int D, class ExecutionSpace>
auto box_policy(const Box<D>& box) {
  if constexpr (D == 1) {
    return Kokkos::RangePolicy<ExecutionSpace>(box.begin[0], box.end[0]);
  } else {
    using Policy = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<D>>;
    typename Policy::point_type first{}, last{};
    for (int j = 0; j < D; ++j) {
      first[j] = box.begin[j];
      last[j] = box.end[j];
    }
    return Policy(first, last);
  }
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
using HostItemPolicy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
}  // namespace detail

/// Calls functor(Index<D>) for every cell of the box (no-op when empty) as
/// one cell per index of Kokkos' MDRangePolicy, on any execution space.
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void for_each_cell_mdrange(const std::string& label, const Box<D>& box, const Functor& functor) {
  if (box.empty()) return;
  Kokkos::parallel_for(label, detail::box_policy<D, ExecutionSpace>(box),
                       detail::IndexAdapter<D, Functor>{functor});
}

/// reduce_cells through Kokkos' MDRangePolicy, on any execution space.
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void reduce_cells_mdrange(const std::string& label, const Box<D>& box, const Functor& functor,
                          Value& result) {
  if (box.empty()) return;
  Value partial{};
  Kokkos::parallel_reduce(label, detail::box_policy<D, ExecutionSpace>(box),
                          detail::ReduceAdapter<D, Functor, Value>{functor}, partial);
  result += partial;
}

/// Calls functor(Index<D>) (or functor.row(), see the header comment) for
/// every cell of the box (no-op when empty): rows on host spaces, MDRange on
/// devices.
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void for_each_cell(const std::string& label, const Box<D>& box, const Functor& functor) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>) {
    using Policy = detail::HostItemPolicy<ExecutionSpace>;
    if constexpr (D >= 2) {
      if (detail::thin_in_last_dimension(box)) {
        const detail::LineItems<D> items(box);
        Kokkos::parallel_for(label, Policy(0, items.count),
                             detail::LineLoop<D, Functor>{functor, items});
        return;
      }
    }
    const detail::RowItems<D> items(box);
    Kokkos::parallel_for(label, Policy(0, items.count),
                         detail::RowLoop<D, Functor>{functor, items});
  } else {
    for_each_cell_mdrange<D, Functor, ExecutionSpace>(label, box, functor);
  }
}

/// Combines functor(Index<D>, Value&) over the cells of the box into `result`
/// with `+=` (so several boxes accumulate): rows on host spaces, MDRange on
/// devices.
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void reduce_cells(const std::string& label, const Box<D>& box, const Functor& functor,
                  Value& result) {
  if (box.empty()) return;
  if constexpr (detail::runs_on_host<ExecutionSpace>) {
    using Policy = detail::HostItemPolicy<ExecutionSpace>;
    Value partial{};
    bool lines = false;
    if constexpr (D >= 2) {
      lines = detail::thin_in_last_dimension(box);
      if (lines) {
        const detail::LineItems<D> items(box);
        Kokkos::parallel_reduce(label, Policy(0, items.count),
                                detail::LineReduceLoop<D, Functor, Value>{functor, items}, partial);
      }
    }
    if (!lines) {
      const detail::RowItems<D> items(box);
      Kokkos::parallel_reduce(label, Policy(0, items.count),
                              detail::RowReduceLoop<D, Functor, Value>{functor, items}, partial);
    }
    result += partial;
  } else {
    reduce_cells_mdrange<D, Value, Functor, ExecutionSpace>(label, box, functor, result);
  }
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

/// The overlap logic shared by every update: run_box(label, box) runs the
/// kernel on a box; device work is fenced before MPI (by the exchange) and
/// before returning.
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
/// exchange completes, so that a floating-point sum comes out bit-identical
/// from run to run. Without it the cut would follow the message timing.
template <int D, class RunBox>
UpdateTimes run_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo, bool overlap,
                          bool fixed_boxes, const RunBox& run_box) {
  UpdateTimes times;
  const Box<D>& interior = plan.split.interior;
  const Box<D>& inner = plan.split.inner;
  overlap = overlap && plan.overlap_pays;
  if (fixed_boxes && !overlap && !inner.empty()) {
    const double t0 = MPI_Wtime();
    halo.run();
    const double t1 = MPI_Wtime();
    run_fixed_boxes(plan, run_box);
    Kokkos::fence();
    times.halo = t1 - t0;
    times.kernel = MPI_Wtime() - t1;
    return times;
  }
  if (!overlap || inner.empty()) {
    const double t0 = MPI_Wtime();
    halo.run();
    const double t1 = MPI_Wtime();
    run_box(plan.label, interior);
    Kokkos::fence();
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
  halo.start();
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
      arrived = halo.test();
      lap(times.halo);
    }
  }
  Kokkos::fence();
  lap(times.kernel);
  halo.wait();  // returns at once when a test saw the exchange complete
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
  Kokkos::fence();
  lap(times.kernel);
  return times;
}
}  // namespace detail

/// One stencil update: exchange the halos of the fields `halo` covers, then
/// call functor(Index<D>) on every interior cell (for_each_cell). With
/// `overlap`, the cells that read no ghost run between start() and wait().
template <int D, class Functor>
UpdateTimes apply_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo, bool overlap,
                            const Functor& functor) {
  return detail::run_with_halo(
      plan, halo, overlap, false,
      [&](const std::string& label, const Box<D>& box) { for_each_cell<D>(label, box, functor); });
}

/// apply_with_halo for a functor(Index<D>, Value&) that also reduces: the
/// values of all interior cells are combined into `result` with `+=`, in an
/// order that depends on the grid alone (not on overlap or message timing),
/// so floating-point results repeat bit for bit.
template <int D, class Value, class Functor>
UpdateTimes apply_reduce_with_halo(const UpdatePlan<D>& plan, core::HaloExchange& halo,
                                   bool overlap, const Functor& functor, Value& result) {
  return detail::run_with_halo(plan, halo, overlap, true,
                               [&](const std::string& label, const Box<D>& box) {
                                 reduce_cells<D>(label, box, functor, result);
                               });
}

/// apply_with_halo planning on each call (for one-off updates; loops keep an
/// UpdatePlan).
template <int D, class Functor>
UpdateTimes apply_with_halo(const core::Grid<D>& grid, core::HaloExchange& halo,
                            const std::string& label, bool overlap, const Functor& functor) {
  return apply_with_halo<D>(plan_update(grid, label), halo, overlap, functor);
}

}  // namespace isostencil::kernels
