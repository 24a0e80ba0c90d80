// Running a stencil update over a grid's interior, with the halo exchange
// overlapped: cells whose stencil reads no ghost cell are updated while the
// exchange is in flight, the boundary shell after it completes.
//
// The cell loops are in cells.hpp, the ordered reductions in
// reductions.hpp; the substep boxes of deep halos in substeps.hpp.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/core/profiling.hpp"
#include "isostencil/kernels/cells.hpp"
#include "isostencil/kernels/reductions.hpp"
#include "isostencil/kernels/substeps.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::kernels {

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
    // A cell reads ghosts below when fewer than the stencil's reach (its
    // ghost width at depth 1) separate it from the low ghost layer; likewise
    // above. The reach, not the grid's ghost width: at any depth the cut is
    // that of depth 1, so reductions add in the same order.
    split.inner.begin[j] = first + grid.reach().lo[static_cast<std::size_t>(j)];
    split.inner.end[j] = last - grid.reach().hi[static_cast<std::size_t>(j)];
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
/// the planes per slab of the inner box; for deep halos the substep boxes
/// (substeps.hpp) and what they add to the interior.
template <int D>
struct UpdatePlan {
  InteriorSplit<D> split;
  std::string label, inner_label, shell_label;
  int slab = 1;
  bool overlap_pays = true;  ///< false: updates ignore their overlap flag
  /// boxes[g]: the substep box of growth g (0 <= g < grid depth; boxes[0]
  /// is the interior); rims[g]: boxes[g] minus the interior.
  std::vector<Box<D>> boxes;
  std::vector<std::vector<Box<D>>> rims;
  std::string rim_label;
  int depth() const { return static_cast<int>(boxes.size()); }
};

/// `min_overlap_cells`: the smallest interior that overlaps (tests pass 0 to
/// run the overlapped path on any grid).
template <int D>
UpdatePlan<D> plan_update(const core::Grid<D>& grid, const std::string& label,
                          long min_overlap_cells = overlap_min_cells) {
  UpdatePlan<D> plan;
  plan.split = split_interior(grid);
  plan.label = label;
  plan.inner_label = label + ":inner";
  plan.shell_label = label + ":shell";
  const int planes = plan.split.inner.end[0] - plan.split.inner.begin[0];
  plan.slab = planes > overlap_slabs ? (planes + overlap_slabs - 1) / overlap_slabs : 1;
  plan.overlap_pays = plan.split.interior.cells() >= min_overlap_cells;
  plan.rim_label = label + ":rim";
  for (int growth = 0; growth < grid.depth(); ++growth) {
    plan.boxes.push_back(growth == 0 ? plan.split.interior : substep_box(grid, growth));
    plan.rims.push_back(growth == 0 ? std::vector<Box<D>>{}
                                    : substep_rim(plan.boxes.back(), plan.split.interior));
  }
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

/// The interior in the cut reductions use, with or without overlap (that of
/// run_with_halo).
template <int D, class RunBox>
void run_interior_fixed(const UpdatePlan<D>& plan, const RunBox& run_box) {
  if (!plan.split.inner.empty())
    run_fixed_boxes(plan, run_box);
  else
    run_box(plan.label, plan.split.interior);
}

/// A reducing functor run for its update alone (the rim of a substep: cells
/// outside the interior add nothing to the result).
template <int D, class Functor, class Value>
struct WithoutValue {
  Functor functor;
  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x) const {
    Value ignored{};
    functor(x, ignored);
  }
};

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
    if (fixed_boxes)
      run_interior_fixed(plan, run_box);
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

/// One substep of a block of updates over a deep halo (substeps.hpp): with
/// `halo` (the block's first substep) the exchange runs first, overlapped
/// with the inner cells as in apply_with_halo; without (nullptr) none does.
/// Then functor(Index<D>) runs on every cell of the substep box of growth
/// `growth` (0: the interior only, as apply_with_halo). Fences `space`.
template <int D, class ExecutionSpace, class Functor,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_substep(const ExecutionSpace& space, const UpdatePlan<D>& plan,
                          core::HaloExchange* halo, bool overlap, int growth,
                          const Functor& functor) {
  UpdateTimes times;
  if (halo != nullptr) {
    times = apply_with_halo<D>(space, plan, *halo, overlap, functor);
    if (growth == 0) return times;
  }
  const core::ProfilingRegion region("isostencil::kernel");
  const double t0 = MPI_Wtime();
  if (halo != nullptr) {
    for (const Box<D>& box : plan.rims[static_cast<std::size_t>(growth)])
      for_each_cell<D>(space, plan.rim_label, box, functor);
  } else {
    for_each_cell<D>(space, growth == 0 ? plan.label : plan.rim_label,
                     plan.boxes[static_cast<std::size_t>(growth)], functor);
  }
  space.fence();
  times.kernel += MPI_Wtime() - t0;
  return times;
}

/// apply_substep for a reducing functor(Index<D>, Value&): the interior's
/// values are combined into `result` in the order apply_reduce_with_halo
/// uses (the same at any depth and growth); the rim's are not combined.
template <int D, class Value, class ExecutionSpace, class Functor,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_reduce_substep(const ExecutionSpace& space, const UpdatePlan<D>& plan,
                                 core::HaloExchange* halo, bool overlap, int growth,
                                 const Functor& functor, Value& result) {
  UpdateTimes times;
  const auto reduce_box = [&](const std::string& label, const Box<D>& box) {
    reduce_cells<D>(space, label, box, functor, result);
  };
  if (halo != nullptr) {
    times = detail::run_with_halo(space, plan, *halo, overlap, true, reduce_box);
    if (growth == 0) return times;
  }
  const core::ProfilingRegion region("isostencil::kernel");
  const double t0 = MPI_Wtime();
  if (halo == nullptr) detail::run_interior_fixed(plan, reduce_box);
  for (const Box<D>& box : plan.rims[static_cast<std::size_t>(growth)])
    for_each_cell<D>(space, plan.rim_label, box,
                     detail::WithoutValue<D, Functor, Value>{functor});
  space.fence();
  times.kernel += MPI_Wtime() - t0;
  return times;
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
