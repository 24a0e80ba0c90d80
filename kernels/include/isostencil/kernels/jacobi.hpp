// Jacobi iteration for the Laplace/Poisson problem -Δu = f on a distributed
// grid, with the grid's weighted stencil as the discrete Laplacian L. This
// header is the solver and the umbrella of its parts:
//   jacobi_operator.hpp  the operator: Laplacian stencils, analyze_operator
//   jacobi_sweeps.hpp    the sweep kernels (star, box, general), residual forms
//   jacobi_residual.hpp  residual norms and the solver's report
//
// Iteration. With A = -L and diag = -w_0 (the "classic" Jacobi form):
//     u_new(x) = (f(x) + Σ_{c≠0} w_c u(x+c)) / diag
// one of three kernels runs, chosen from the weights (kernel_name(); see
// jacobi_sweeps.hpp). The residual r = f + L u of the iterate a sweep reads
// is fused into that sweep when asked for (jacobi_residual.hpp).
//
// Boundaries. Periodic dimensions are filled by the halo exchange. In
// non-periodic dimensions the ghost cells beyond the global boundary hold the
// Dirichlet values: the caller writes them into `u` (with the initial guess)
// and the exchange never touches them; the solver's second field starts as a
// copy of `u`, so both fields carry them (see set_dirichlet_ghosts()).
//
// Deep halos: on a grid of depth k (core::Grid's depth) one exchange serves a
// block of up to k sweeps over the shrinking substep boxes of substeps.hpp;
// run(n) and solve() cut the last block short, so every sweep count, residual
// and iterate is that of depth 1, bit for bit. A source field is exchanged
// once at construction (the boxes read it in the ghost region). With
// JacobiOptions::tiles (off by default), blocks of two or more sweeps that
// measure no residual run tile by tile in cache (tiles.hpp) where tiled()
// says so: the star and box kernels on a host execution space; their
// exchange completes before the tiles run (no overlap). The result is the
// same, bit for bit.
//
// Each of the two fields has its own persistent halo exchange, made once and
// bound to the grid's one halo pattern (halo() is the current one); a sweep
// reads one and writes the other, then they swap. Overlap (default on):
// cells whose stencil reads no ghost cell are updated while the exchange is in
// flight, the boundary shell after wait().
//
//   core::Grid<3> grid(MPI_COMM_WORLD, {n, n, n}, {false, false, false},
//                      kernels::star_laplacian(3, h));
//   auto u = grid.make_field<double>("u");   // initial guess + Dirichlet ghosts
//   auto f = grid.make_field<double>("f");   // source (optional)
//   kernels::JacobiOptions options;
//   options.max_sweeps = 5000;
//   options.tolerance = 1e-8;
//   kernels::Jacobi<3> jacobi(grid, u, f, options);
//   kernels::JacobiSummary summary = jacobi.solve();
//   auto solution = jacobi.solution();
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/jacobi_operator.hpp"
#include "isostencil/kernels/jacobi_residual.hpp"
#include "isostencil/kernels/jacobi_sweeps.hpp"
#include "isostencil/kernels/sweep.hpp"
#include "isostencil/kernels/tiles.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace isostencil::kernels {

struct JacobiOptions {
  /// solve(): stop after this many sweeps at the latest.
  long max_sweeps = 1000;
  /// solve(): stop once a measured residual has l2 <= tolerance (0: never).
  double tolerance = 0;
  /// solve(): stop once l2 <= relative_tolerance * (first measured l2) (0: never).
  double relative_tolerance = 0;
  /// Measure the residual of the iterate every this many sweeps (0: never;
  /// solve() then runs max_sweeps). It is fused into the sweep: no extra
  /// exchange, one reduction and two MPI_Allreduce.
  int residual_every = 10;
  /// Measure the residual of the final iterate too (one extra exchange).
  bool final_residual = true;
  /// Update the interior while the halo exchange is in flight.
  bool overlap = true;
  /// Deep halos: run blocks of sweeps tile by tile in cache where the kernel
  /// and execution space allow (Jacobi::tiled()). Off by default: on the
  /// project's machines the sweep is nearly compute-bound and tiled blocks
  /// gain little or lose (docs/results/depth/README.md#tiled-substeps says why).
  bool tiles = false;
  /// Tile extents, one per dimension (empty: kernels::default_wavefront_extent
  /// for D >= 2, kernels::default_tile_extent in 1-D). A tile spanning
  /// dimension 0 runs as a wavefront, others as overlapped tiles.
  std::vector<int> tile_extent;
  core::HaloOptions halo{};
  /// Prefix of the Kokkos kernel labels.
  std::string label = "isostencil::Jacobi";
};

// ---------------------------------------------------------------------------
// Applying the operator once

/// out(x) = Σ_c w_c in(x + c) (the grid's weighted stencil) on every interior
/// cell, after exchanging `in`'s halo through `halo` (made by
/// grid.halo_exchange(in)); with `overlap`, the inner cells run during the
/// exchange. Runs on `space` (and fences it). Collective over the grid's
/// communicator.
template <int D, class ExecutionSpace,
          std::enable_if_t<detail::is_execution_space<ExecutionSpace>, int> = 0>
UpdateTimes apply_stencil(const ExecutionSpace& space, const core::Grid<D>& grid,
                          core::HaloExchange& halo, const core::Field<double, D>& in,
                          const core::Field<double, D>& out, bool overlap = true) {
  const char* where = "isostencil::kernels::apply_stencil";
  const detail::JacobiOperator op = detail::analyze_operator(grid.stencil(), D, where);
  std::string error = detail::check_grid_field(grid, where, "in", in);
  if (error.empty()) error = detail::check_grid_field(grid, where, "out", out);
  if (error.empty() && in.data() == out.data())
    error = std::string(where) + ": in and out are the same field";
  iso::agree_on_errors(grid.decomposition().comm(), where, error);
  const auto stride = detail::layout_right_strides<D>(in);
  const Kokkos::View<detail::Term*> terms = detail::make_terms<D>(op, stride);
  const detail::ApplyStencil<D> functor{in.data(),    out.data(),
                                        terms.data(), static_cast<int>(terms.extent(0)),
                                        stride,       op.center_weight};
  return apply_with_halo<D>(space, grid, halo, "isostencil::apply_stencil", overlap, functor);
}
/// apply_stencil on the default execution space.
template <int D>
UpdateTimes apply_stencil(const core::Grid<D>& grid, core::HaloExchange& halo,
                          const core::Field<double, D>& in, const core::Field<double, D>& out,
                          bool overlap = true) {
  return apply_stencil<D>(Kokkos::DefaultExecutionSpace(), grid, halo, in, out, overlap);
}

/// Writes value(global index) into every ghost cell of `field` that lies
/// beyond the global boundary in some non-periodic dimension (the Dirichlet
/// cells; corners included), on the host. `value` is called with a
/// std::array<long, D> of global indices (below 0 or >= N in the boundary
/// dimensions, wrapped into [0, N) in the periodic ones).
template <int D, class View, class Value>
void set_dirichlet_ghosts(const core::Grid<D>& grid, const View& field, const Value& value) {
  const char* where = "isostencil::kernels::set_dirichlet_ghosts";
  const std::string error = detail::check_grid_field(grid, where, "field", field);
  if (!error.empty()) throw iso::Error(error);  // local: no collective here
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  const auto extent = grid.field_extent();
  const auto& periodic = grid.decomposition().periodic();
  std::array<int, D> local{};
  const std::size_t cells = host.span();
  for (std::size_t linear = 0; linear < cells; ++linear) {
    std::size_t rest = linear;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(extent[j]));
      rest /= static_cast<std::size_t>(extent[j]);
    }
    auto global = grid.to_global(local);
    bool boundary = false;
    for (int j = 0; j < D; ++j)
      boundary =
          boundary || (!periodic[j] && (global[j] < 0 || global[j] >= grid.global_extent()[j]));
    if (!boundary) continue;
    // A periodic dimension's ghost stands for the cell it wraps to (deep
    // halos update such cells next to the boundary and read their values).
    for (int j = 0; j < D; ++j)
      if (periodic[j]) global[j] = *grid.wrap(j, global[j]);
    host.data()[linear] = value(global);
  }
  Kokkos::deep_copy(field, host);
}

// ---------------------------------------------------------------------------
// The solver

template <int D>
class Jacobi {
public:
  using field_type = core::Field<double, D>;
  /// The space the sweeps run on (that of the fields and of the exchanges).
  using execution_space = Kokkos::DefaultExecutionSpace;

  /// The grid's stencil is the operator (weighted, centre weight < 0). `u`
  /// holds the initial guess in the interior and the Dirichlet values in the
  /// boundary ghosts; it becomes one of the two iterates (the solver keeps a
  /// reference). `source` (f in -Δu = f) may be an empty View. Collective:
  /// builds the two persistent halo exchanges. Throws iso::Error for a
  /// stencil without weights or centre, or fields of the wrong shape.
  Jacobi(const core::Grid<D>& grid, field_type u, field_type source = field_type(),
         JacobiOptions options = {})
      : grid_(grid),
        options_(std::move(options)),
        op_(detail::analyze_operator(grid.stencil(), D, "isostencil::kernels::Jacobi")),
        source_(std::move(source)) {
    const char* where = "isostencil::kernels::Jacobi";
    std::string error = detail::check_grid_field(grid_, where, "u", u);
    if (error.empty() && source_.data() != nullptr)
      error = detail::check_grid_field(grid_, where, "source", source_);
    if (error.empty() && source_.data() == u.data())
      error = std::string(where) + ": the source is the field u itself";
    if (error.empty() && (options_.residual_every < 0 || options_.max_sweeps < 0))
      error = std::string(where) + ": residual_every and max_sweeps must be >= 0";
    if (error.empty() && !options_.tile_extent.empty()) {
      bool positive = static_cast<int>(options_.tile_extent.size()) == D;
      for (const int extent : options_.tile_extent) positive = positive && extent >= 1;
      if (!positive)
        error = std::string(where) + ": tile_extent needs " + std::to_string(D) +
                " extents >= 1 (or none), got " + std::to_string(options_.tile_extent.size());
    }
    iso::agree_on_errors(grid_.decomposition().comm(), where, error);
    fields_[0] = std::move(u);
    fields_[1] =
        field_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, fields_[0].label() + ":next"),
                   fields_[0].layout());
    // Both fields carry the Dirichlet ghosts (the exchange never writes them).
    Kokkos::deep_copy(fields_[1], fields_[0]);
    stride_ = detail::layout_right_strides<D>(fields_[0]);
    terms_ = detail::make_terms<D>(op_, stride_);
    sweep_plan_ = plan_update(grid_, options_.label + ":sweep");
    sweep_residual_plan_ = plan_update(grid_, options_.label + ":sweep+residual");
    residual_plan_ = plan_update(grid_, options_.label + ":residual");
    if (tiled()) {
      // One tile plan per block length (the last block of a run may be short).
      for (int length = 2; length <= grid_.depth(); ++length)
        tile_plans_.push_back(plan_tiles(grid_, sweep_plan_.boxes, length, options_.tile_extent,
                                         options_.label + ":tiles", space_.concurrency()));
    }
    halos_.reserve(2);
    halos_.push_back(grid_.halo_exchange(fields_[0], options_.halo));
    halos_.push_back(grid_.halo_exchange(fields_[1], options_.halo));
    // Deep halos update ghost cells too, which read f there: one exchange
    // makes the source valid in the ghost region (it does not change).
    if (grid_.depth() > 1 && source_.data() != nullptr) {
      core::HaloExchange source_halo = grid_.halo_exchange(source_, options_.halo);
      source_halo.start();
      source_halo.wait();
    }
  }

  /// Sweeps until a tolerance is met or max_sweeps; see JacobiOptions.
  JacobiSummary solve() { return iterate(options_.max_sweeps, true); }
  /// Exactly `sweeps` sweeps (residuals every residual_every, no early stop).
  JacobiSummary run(long sweeps) { return iterate(sweeps, false); }

  /// Residual norms of the current iterate (collective: one exchange).
  Residual residual() {
    ResidualSums local;
    residual_sweep(local);
    return detail::reduce_residual(grid_.comm(), local, sweeps_done_);
  }

  /// The current iterate (the latest sweep's output). Its interior and
  /// boundary ghosts are valid; other ghosts hold the last exchange.
  const field_type& solution() const { return fields_[current_]; }
  long sweeps_done() const { return sweeps_done_; }
  const core::Grid<D>& grid() const { return grid_; }
  const JacobiOptions& options() const { return options_; }
  /// The execution space instance the sweeps and residuals launch on and
  /// fence (default: a default-made instance); not collective.
  const execution_space& space() const { return space_; }
  void set_space(const execution_space& space) { space_ = space; }
  /// Which kernel runs: "star" (uniform star), "box" (box by class) or
  /// "general" (any weighted stencil, weights looked up per term).
  std::string kernel_name() const {
    return op_.uniform_star ? "star" : op_.box_by_class ? "box" : "general";
  }
  bool uses_star_kernel() const { return op_.uniform_star; }
  /// Whether blocks of sweeps run tile by tile (tiles.hpp): depth > 1, the
  /// star or box kernel, a host execution space and JacobiOptions::tiles.
  bool tiled() const {
    return detail::runs_on_host<execution_space> && options_.tiles && grid_.depth() > 1 &&
           (op_.uniform_star || op_.box_by_class);
  }
  /// How blocks of sweeps run, for reports: "tiled 16x16x64" or
  /// "untiled (<why>)"; empty at depth 1.
  std::string tiling() const {
    if (grid_.depth() == 1) return {};
    if (tiled()) {
      const TilePlan<D>& plan = tile_plans_.back();
      std::string text = plan.wavefront ? "wavefront " : "tiled ";
      for (int j = 0; j < D; ++j) text += (j ? "x" : "") + std::to_string(plan.tile[j]);
      if (plan.wavefront) text += ", rings of " + std::to_string(plan.ring_planes) + " planes";
      return text + " (blocks without a residual; exchange not overlapped)";
    }
    if (!detail::runs_on_host<execution_space>) return "untiled (device execution space)";
    if (!options_.tiles) return "untiled (tiles off)";
    return "untiled (general weights: no row kernel)";
  }
  /// The exchange the next sweep runs: that of the current iterate (each of
  /// the two fields has its own, both bound to the grid's halo pattern).
  core::HaloExchange& halo() { return halos_[current_]; }
  const core::HaloExchange& halo() const { return halos_[current_]; }
  /// The algorithm the exchanges run (automatic resolved).
  iso::Algorithm algorithm() const { return halo().algorithm(); }

private:
  JacobiSummary iterate(long sweeps, bool stop_at_tolerance) {
    JacobiSummary summary;
    const double start = MPI_Wtime();
    double first_l2 = -1;
    // Blocks of depth() sweeps per exchange (the last one shorter, so that
    // `sweeps` are done exactly); `left` sweeps of the block follow this one.
    int left = 0;
    for (long s = 0; s < sweeps; ++s) {
      const bool first_of_block = left == 0;
      if (first_of_block) {
        left = static_cast<int>(std::min<long>(grid_.depth(), sweeps - s));
        if (left >= 2 && tiled() && !block_measures(left)) {
          const UpdateTimes times = tiled_block(left);
          summary.kernel_seconds += times.kernel;
          summary.halo_seconds += times.halo;
          summary.sweeps += left;
          s += left - 1;
          left = 0;
          continue;
        }
      }
      --left;
      const bool measure =
          options_.residual_every > 0 && sweeps_done_ % options_.residual_every == 0;
      ResidualSums local;
      const UpdateTimes times = sweep(measure, local, first_of_block, left);
      summary.kernel_seconds += times.kernel;
      summary.halo_seconds += times.halo;
      ++summary.sweeps;
      if (!measure) continue;
      const double t0 = MPI_Wtime();
      const Residual norms = detail::reduce_residual(grid_.comm(), local, sweeps_done_ - 1);
      summary.reduce_seconds += MPI_Wtime() - t0;
      summary.history.push_back(norms);
      if (first_l2 < 0) first_l2 = norms.l2;
      // Every rank sees the same reduced norms, so all stop together.
      if (stop_at_tolerance && ((options_.tolerance > 0 && norms.l2 <= options_.tolerance) ||
                                (options_.relative_tolerance > 0 &&
                                 norms.l2 <= options_.relative_tolerance * first_l2))) {
        summary.converged = true;
        break;
      }
    }
    if (options_.final_residual) {
      ResidualSums local;
      const UpdateTimes times = residual_sweep(local);
      summary.kernel_seconds += times.kernel;
      summary.halo_seconds += times.halo;
      const double t0 = MPI_Wtime();
      summary.history.push_back(detail::reduce_residual(grid_.comm(), local, sweeps_done_));
      summary.reduce_seconds += MPI_Wtime() - t0;
    }
    summary.total_seconds = MPI_Wtime() - start;
    return summary;
  }

  enum class Kernel { star, box, terms };

  /// Whether a block of `length` sweeps from here measures a residual.
  bool block_measures(int length) const {
    const long every = options_.residual_every;
    if (every <= 0) return false;
    const long first = (sweeps_done_ + every - 1) / every * every;
    return first < sweeps_done_ + length;
  }

  /// A block of `length` sweeps tile by tile: the exchange, then the tiles,
  /// which write the block's result into the other field.
  UpdateTimes tiled_block(int length) {
    UpdateTimes times;
    if constexpr (detail::runs_on_host<execution_space>) {
      const core::ProfilingRegion region("isostencil::kernel");
      const double t0 = MPI_Wtime();
      detail::start_exchange(space_, halos_[current_]);
      detail::wait_exchange(space_, halos_[current_]);
      const double t1 = MPI_Wtime();
      const TilePlan<D>& plan = tile_plans_[static_cast<std::size_t>(length - 2)];
      const bool source = source_.data() != nullptr;
      if (op_.uniform_star) {
        if (source)
          run_tiles<D>(space_, plan, sweep_functor<Kernel::star, true, false>(), stride_);
        else
          run_tiles<D>(space_, plan, sweep_functor<Kernel::star, false, false>(), stride_);
      } else {
        if (source)
          run_tiles<D>(space_, plan, sweep_functor<Kernel::box, true, false>(), stride_);
        else
          run_tiles<D>(space_, plan, sweep_functor<Kernel::box, false, false>(), stride_);
      }
      times.halo = t1 - t0;
      times.kernel = MPI_Wtime() - t1;
      current_ = 1 - current_;
      sweeps_done_ += length;
    }
    return times;
  }

  /// One sweep: a substep of a block (substeps.hpp); `exchange` for the
  /// block's first, `growth` sweeps of the block after this one.
  UpdateTimes sweep(bool with_residual, ResidualSums& norms, bool exchange, int growth) {
    const Substep step{exchange, growth};
    if (op_.uniform_star) return sweep_with<Kernel::star>(with_residual, norms, step);
    if (op_.box_by_class) return sweep_with<Kernel::box>(with_residual, norms, step);
    return sweep_with<Kernel::terms>(with_residual, norms, step);
  }

  struct Substep {
    bool exchange = true;
    int growth = 0;
  };

  template <Kernel K>
  UpdateTimes sweep_with(bool with_residual, ResidualSums& norms, const Substep& step) {
    if (source_.data() != nullptr)
      return with_residual ? run_sweep<true>(sweep_functor<K, true, true>(), norms, step)
                           : run_sweep<false>(sweep_functor<K, true, false>(), norms, step);
    return with_residual ? run_sweep<true>(sweep_functor<K, false, true>(), norms, step)
                         : run_sweep<false>(sweep_functor<K, false, false>(), norms, step);
  }

  /// Kernel K of the next sweep: reads the current iterate, writes the other.
  template <Kernel K, bool HasSource, bool WithResidual>
  auto sweep_functor() const {
    const double* in = fields_[current_].data();
    double* out = fields_[1 - current_].data();
    const double diag = -op_.center_weight;
    if constexpr (K == Kernel::star) {
      return detail::StarSweep<D, HasSource, WithResidual>{in,
                                                           out,
                                                           source_.data(),
                                                           stride_,
                                                           op_.neighbor_weight / diag,
                                                           1.0 / diag,
                                                           op_.center_weight,
                                                           op_.neighbor_weight};
    } else if constexpr (K == Kernel::box) {
      Kokkos::Array<double, D + 1> weight;
      for (int k = 0; k <= D; ++k)
        weight[k] = op_.class_weights[static_cast<std::size_t>(k)];
      return detail::BoxSweep<D, HasSource, WithResidual>{in,      out,   source_.data(),
                                                          stride_, weight, 1.0 / diag};
    } else {
      return detail::TermSweep<D, HasSource, WithResidual>{in,
                                                           out,
                                                           source_.data(),
                                                           terms_.data(),
                                                           static_cast<int>(terms_.extent(0)),
                                                           stride_,
                                                           1.0 / diag,
                                                           op_.center_weight};
    }
  }

  template <bool WithResidual, class Functor>
  UpdateTimes run_sweep(const Functor& functor, ResidualSums& norms, const Substep& step) {
    UpdateTimes times;
    core::HaloExchange* halo = step.exchange ? &halos_[current_] : nullptr;
    if constexpr (WithResidual)
      times = apply_reduce_substep<D>(space_, sweep_residual_plan_, halo, options_.overlap,
                                      step.growth, functor, norms);
    else
      times = apply_substep<D>(space_, sweep_plan_, halo, options_.overlap, step.growth, functor);
    current_ = 1 - current_;
    ++sweeps_done_;
    return times;
  }

  UpdateTimes residual_sweep(ResidualSums& norms) {
    return source_.data() != nullptr ? residual_sweep_with<true>(norms)
                                     : residual_sweep_with<false>(norms);
  }

  template <bool HasSource>
  UpdateTimes residual_sweep_with(ResidualSums& norms) {
    const detail::ResidualOnly<D, HasSource> functor{
        fields_[current_].data(), HasSource ? source_.data() : nullptr,
        terms_.data(),            static_cast<int>(terms_.extent(0)),
        stride_,                  op_.center_weight};
    return apply_reduce_with_halo<D>(space_, residual_plan_, halos_[current_], options_.overlap,
                                     functor, norms);
  }

  core::Grid<D> grid_;
  JacobiOptions options_;
  execution_space space_{};
  detail::JacobiOperator op_;
  field_type source_;
  field_type fields_[2];
  detail::Strides<D> stride_{};
  Kokkos::View<detail::Term*> terms_;
  // Interior split and kernel labels, made once (a sweep allocates nothing).
  UpdatePlan<D> sweep_plan_, sweep_residual_plan_, residual_plan_;
  std::vector<TilePlan<D>> tile_plans_;  // [j - 2]: blocks of j sweeps, when tiled()
  std::vector<core::HaloExchange> halos_;  // halos_[i] exchanges fields_[i]
  int current_ = 0;
  long sweeps_done_ = 0;
};

}  // namespace isostencil::kernels

