// `isostencil run` with kernel.name = "jacobi": kernels::Jacobi<D> on the
// deck's grid, Laplacian (or the deck's weights), constant source and
// Dirichlet boundary.
#include "builtin_kernels.hpp"

#include "isostencil/driver/run.hpp"
#include "isostencil/driver/models.hpp"

#include "isostencil/kernels/jacobi.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace isostencil::driver {

namespace {

core::Stencil jacobi_stencil(const deck::Deck& deck, int dims) {
  if (!deck.stencil.weights.empty()) return deck.make_stencil();
  if (deck.stencil.shape == "box") return kernels::box_laplacian(dims);
  return kernels::star_laplacian(dims);
}

template <int D>
class JacobiModel {
public:
  using Field = core::Field<double, D>;

  JacobiModel(const Setup& setup, std::shared_ptr<const core::Decomposition> decomposition)
      : setup_(setup),
        deck_(*setup.deck),
        grid_(make_grid<D>(deck_, std::move(decomposition), jacobi_stencil(deck_, D), setup.depth)) {
    Field u = grid_.template make_field<double>("u");
    if (setup.restart) {
      setup.restart->read("u", grid_, u);
    } else {
      initialize(u);
    }
    const double boundary = deck_.kernel.floating("boundary");
    kernels::set_dirichlet_ghosts<D>(grid_, u, [boundary](const auto&) { return boundary; });
    Field source;
    if (deck_.kernel.floating("source") != 0.0) {
      source = grid_.template make_field<double>("f");
      Kokkos::deep_copy(source, deck_.kernel.floating("source"));
    }
    kernels::JacobiOptions options;
    options.residual_every = 0;  // measured explicitly (measure()), at the deck's steps
    options.final_residual = false;
    options.overlap = deck_.run.overlap;
    options.halo = halo_options(deck_);
    jacobi_.emplace(grid_, u, source, options);
    const FieldStats stats = field_stats<D>(grid_, u);
    lowest_ = stats.min;
    highest_ = stats.max;
    bool bounded = false;
    for (const bool periodic : grid_.decomposition().periodic())
      bounded = bounded || !periodic;
    if (bounded) {
      lowest_ = std::min(lowest_, boundary);
      highest_ = std::max(highest_, boundary);
    }
  }

  const core::Decomposition& decomposition() const { return grid_.decomposition(); }
  std::string stencil_text() const { return stencil_and_depth<D>(grid_); }
  std::string describe() const {
    std::string weights =
        deck_.stencil.weights.empty()
            ? (deck_.stencil.shape == "box" ? "box (Mehrstellen) Laplacian" : "star Laplacian")
            : "the deck's weights";
    std::string text = fmt::format(
        "-L u = f, L = {}, f = {}, boundary u = {}, tolerance {}", weights, deck_.kernel.floating("source"),
        deck_.kernel.floating("boundary"),
        deck_.run.tolerance > 0 ? fmt::format("{:g}", deck_.run.tolerance) : std::string("none"));
    // Deep halos: whether blocks of sweeps run tile by tile (kernels/tiles.hpp).
    const std::string tiling = jacobi_->tiling();
    if (!tiling.empty()) text += "; substeps " + tiling;
    return text;
  }
  std::vector<std::string> fields() const { return {"u"}; }

  kernels::UpdateTimes advance(long steps) {
    const kernels::JacobiSummary summary = jacobi_->run(steps);
    return kernels::UpdateTimes{summary.kernel_seconds, summary.halo_seconds};
  }

  Metric measure(long) {
    const kernels::Residual residual = jacobi_->residual();
    if (first_l2_ < 0) first_l2_ = residual.l2;
    last_l2_ = residual.l2;
    last_max_ = residual.max;
    Metric metric;
    metric.name = "residual";
    metric.value = residual.max;
    metric.text = fmt::format("residual {:.3e} (l2 {:.3e})", residual.max, residual.l2);
    metric.converged = deck_.run.tolerance > 0 && residual.max <= deck_.run.tolerance;
    metric.figures = {{"residual_max", residual.max}, {"residual_l2", residual.l2}};
    return metric;
  }

  iso::HaloValidation validate_halo() { return jacobi_->halo().validate(); }
  const iso::Operation& halo_operation() { return jacobi_->halo().operation(); }
  const std::string& halo_note() { return jacobi_->halo().pattern().algorithm_note(); }
  double time(long step) const { return static_cast<double>(step); }
  void write_fields(core::FieldSeries& series) { series.write("u", grid_, jacobi_->solution()); }
  void write_state(core::CheckpointWriter& writer) {
    writer.write("u", grid_, jacobi_->solution());
  }
  std::string first_non_finite() { return driver::first_non_finite<D>("u", grid_, jacobi_->solution()); }

  std::vector<Check> checks(long) {
    std::vector<Check> checks;
    checks.push_back({"residual finite", std::isfinite(last_l2_) && std::isfinite(last_max_),
                      fmt::format("max {:.3e}", last_max_)});
    // Written so that a NaN fails it. A converged iterate's residual wanders
    // at the rounding level (a restart near convergence starts there), so a
    // rise below the floor that rounding reaches is not an increase.
    const FieldStats now = field_stats<D>(grid_, jacobi_->solution());
    const double floor = rounding_floor(std::max(std::fabs(now.min), std::fabs(now.max)));
    checks.push_back({"residual not increased",
                      last_l2_ <= first_l2_ * (1 + 1e-12) + 1e-300 || last_l2_ <= floor,
                      fmt::format("l2 {:.3e} -> {:.3e}", first_l2_, last_l2_) +
                          (last_l2_ > first_l2_ && last_l2_ <= floor
                               ? fmt::format(", within rounding (l2 {:.3e})", floor)
                               : std::string())});
    // Maximum principle: with f = 0 and non-negative neighbour weights a sweep
    // averages, so the iterate stays within the initial and boundary values.
    bool averaging = deck_.kernel.floating("source") == 0.0;
    const core::Stencil& stencil = grid_.stencil();
    for (int i = 0; i < stencil.size(); ++i) {
      bool centre = true;
      for (int j = 0; j < D; ++j)
        centre = centre && stencil.offsets()[i][j] == 0;
      if (!centre && stencil.weights()[static_cast<std::size_t>(i)] < 0) averaging = false;
    }
    if (averaging) {
      const FieldStats& stats = now;
      const double slack = 1e-12 * std::max({1.0, std::fabs(lowest_), std::fabs(highest_)});
      checks.push_back({"maximum principle",
                        stats.min >= lowest_ - slack && stats.max <= highest_ + slack,
                        fmt::format("u in [{:.6g}, {:.6g}] within [{:.6g}, {:.6g}]", stats.min,
                                    stats.max, lowest_, highest_)});
    }
    return checks;
  }

private:
  /// The l2 residual that rounding alone leaves: a few ulps of each cell's
  /// terms (|f| + sum |w| |u|), over all cells.
  double rounding_floor(double largest_u) const {
    double weights = 0.0;
    for (const double w : grid_.stencil().weights())
      weights += std::fabs(w);
    double cells = 1.0;
    for (const long n : grid_.decomposition().global_extent())
      cells *= static_cast<double>(n);
    const double term = std::fabs(deck_.kernel.floating("source")) + weights * largest_u;
    return 64.0 * std::numeric_limits<double>::epsilon() * term * std::sqrt(cells);
  }

  void initialize(const Field& u) {
    const deck::Deck::Init& init = deck_.init;
    if (init.type == "constant") {
      Kokkos::deep_copy(u, init.value);
      return;
    }
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), u);
    for_each_interior<D>(
        grid_, [&](const std::array<int, D>& local, const std::array<long, D>& global) {
          double value = 0.0;
          if (init.type == "random") {
            value = init.low + (init.high - init.low) *
                                   random_unit(init.seed, global_linear<D>(grid_, global));
          } else {  // gaussian
            double r2 = 0.0;
            for (int j = 0; j < D; ++j) {
              const double d =
                  static_cast<double>(global[j]) - init.center[static_cast<std::size_t>(j)];
              r2 += d * d;
            }
            value = init.amplitude * std::exp(-r2 / (2.0 * init.width * init.width));
          }
          host.data()[local_offset<D>(grid_, local)] = value;
        });
    Kokkos::deep_copy(u, host);
  }

  const Setup& setup_;
  const deck::Deck& deck_;
  core::Grid<D> grid_;
  std::optional<kernels::Jacobi<D>> jacobi_;
  double lowest_ = 0, highest_ = 0;
  double first_l2_ = -1, last_l2_ = 0, last_max_ = 0;
};

/// What the Jacobi iteration cannot run: an explicit stencil without the
/// operator's weights, a source with no steady state, a centre weight that
/// is not the (negated) diagonal.
void check_jacobi_deck(deck::DeckCheck& check) {
  const deck::Deck& d = check.deck();
  if (d.kernel.name != "jacobi") return;
  const int dims = d.grid.dims;
  if (d.stencil.weights.empty()) {
    if (d.stencil.shape == "upwind" || d.stencil.shape == "offsets")
      check.error("stencil.shape", "kernel.name = \"jacobi\" with stencil.shape = " + deck_quoted(d.stencil.shape) +
                                       " needs stencil.weights (the operator; the centre's weight < 0)");
    else if (d.stencil.radius != 1)
      check.error("stencil.radius", "kernel.name = \"jacobi\" has default weights (the Laplacian) "
                                    "for radius 1 only; give stencil.weights for radius " +
                                        std::to_string(d.stencil.radius));
  }
  double weight_sum = 0.0, weight_scale = 0.0;
  for (const double w : d.stencil.weights) {
    weight_sum += w;
    weight_scale += std::fabs(w);
  }
  const bool singular = d.stencil.weights.empty() || std::fabs(weight_sum) <= 1e-12 * weight_scale;
  const double source = d.kernel.floating("source");
  if (source != 0.0 && singular) {
    bool all_periodic = true;
    for (const bool p : d.grid.periodic) all_periodic = all_periodic && p;
    if (all_periodic)
      check.error("kernel.source", "kernel.source = " + deck::deck_float(source) +
                                       " on a grid periodic in every dimension has no steady state "
                                       "(the constant mode grows each sweep); make a dimension "
                                       "non-periodic (grid.periodic) or set source = 0");
  }
  if (!check.clean()) return;
  core::Stencil stencil;
  try {
    stencil = d.make_stencil();
  } catch (const iso::Error&) {
    return;  // the deck's own stencil check names it
  }
  if (static_cast<int>(d.stencil.weights.size()) != stencil.size()) return;
  int centres = 0;
  double centre_weight = 0.0;
  for (int i = 0; i < stencil.size(); ++i) {
    bool zero = true;
    for (int j = 0; j < dims; ++j) zero = zero && stencil.offsets()[i][j] == 0;
    if (zero) {
      ++centres;
      centre_weight = d.stencil.weights[static_cast<std::size_t>(i)];
    }
  }
  if (centres != 1 || !(centre_weight < 0.0))
    check.error("stencil.weights",
                "kernel.name = \"jacobi\" needs the centre offset exactly once with a "
                "negative weight (the diagonal of -L); " +
                    (centres == 0  ? std::string("the stencil has no centre offset")
                     : centres > 1 ? std::string("the centre appears ") + std::to_string(centres) + " times"
                                   : "its weight is " + deck::deck_float(centre_weight)));
}

}  // namespace

int run_jacobi(const Setup& setup) {
  return dispatch_dims<JacobiModel>(setup);
}

KernelEntry jacobi_kernel() {
  deck::DeckKernel kernel;
  kernel.name = "jacobi";
  kernel.meaning = "Jacobi iteration";
  kernel.default_shape = "star";
  kernel.default_init = "constant";
  kernel.weights = true;
  kernel.takes = {"init.low", "init.high", "run.tolerance"};
  kernel.parameters = {
      {"source", deck::DeckValueKind::floating, "0.0", "finite",
       "the right-hand side f of -L u = f (the same in every cell)"},
      {"boundary", deck::DeckValueKind::floating, "0.0", "finite",
       "Dirichlet value of the cells beyond non-periodic sides"},
  };
  kernel.validate = check_jacobi_deck;
  return {kernel, &run_jacobi, {}};
}

}  // namespace isostencil::driver
