// Running a stencil update over a grid's interior, with the halo exchange
// overlapped: cells whose stencil reads no ghost cell are updated while the
// exchange is in flight, the boundary shell after it completes.
#pragma once

#include "isostencil/core/grid.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
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
    for (int j = 0; j < D; ++j) n *= end[j] - begin[j];
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
  // Peel one dimension at a time: the slabs below and above the inner range,
  // then narrow that dimension to the inner range for the next ones.
  Box<D> rest = split.interior;
  for (int j = 0; j < D; ++j) {
    Box<D> below = rest, above = rest;
    below.end[j] = split.inner.begin[j];
    above.begin[j] = split.inner.end[j];
    if (!below.empty()) split.shell.push_back(below);
    if (!above.empty()) split.shell.push_back(above);
    rest.begin[j] = split.inner.begin[j];
    rest.end[j] = split.inner.end[j];
  }
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
}  // namespace detail

/// Calls functor(Index<D>) for every cell of the box (no-op when empty).
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void for_each_cell(const std::string& label, const Box<D>& box, const Functor& functor) {
  if (box.empty()) return;
  Kokkos::parallel_for(label, detail::box_policy<D, ExecutionSpace>(box),
                       detail::IndexAdapter<D, Functor>{functor});
}

/// Sums functor(Index<D>, Value&) over the cells of the box into `result`
/// (added to, so several boxes accumulate).
template <int D, class Value, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void reduce_cells(const std::string& label, const Box<D>& box, const Functor& functor, Value& result) {
  if (box.empty()) return;
  Value partial{};
  Kokkos::parallel_reduce(label, detail::box_policy<D, ExecutionSpace>(box),
                          detail::ReduceAdapter<D, Functor, Value>{functor}, partial);
  result += partial;
}

/// Where the time of one update went (seconds, this rank).
struct UpdateTimes {
  double kernel = 0;
  double halo = 0;  ///< time spent in start/wait (exposed communication)
};

/// One stencil update: exchange the halos of the fields `halo` covers, then
/// call functor(Index<D>) on every interior cell. With `overlap`, the cells
/// that read no ghost run between start() and wait(). Device work is fenced
/// before MPI by the exchange and before returning here.
template <int D, class Functor>
UpdateTimes apply_with_halo(const core::Grid<D>& grid, core::HaloExchange& halo, const std::string& label,
                            bool overlap, const Functor& functor) {
  UpdateTimes times;
  if (!overlap) {
    double t0 = MPI_Wtime();
    halo.run();
    double t1 = MPI_Wtime();
    for_each_cell<D>(label, split_interior(grid).interior, functor);
    Kokkos::fence();
    times.halo = t1 - t0;
    times.kernel = MPI_Wtime() - t1;
    return times;
  }
  const InteriorSplit<D> split = split_interior(grid);
  double t0 = MPI_Wtime();
  halo.start();
  double t1 = MPI_Wtime();
  for_each_cell<D>(label + ":inner", split.inner, functor);
  Kokkos::fence();
  double t2 = MPI_Wtime();
  halo.wait();
  double t3 = MPI_Wtime();
  for (const Box<D>& box : split.shell) for_each_cell<D>(label + ":shell", box, functor);
  Kokkos::fence();
  times.halo = (t1 - t0) + (t3 - t2);
  times.kernel = (t2 - t1) + (MPI_Wtime() - t3);
  return times;
}

}  // namespace isostencil::kernels
