// `isostencil run` with kernel.name = "advection": linear advection
// u_t + v . grad u = 0 with the first-order corner-transport upwind scheme,
// written as a user kernel (kernels/user_kernel.hpp) on the upwind stencil
// (an asymmetric neighborhood: only the upwind faces, edges and corners are
// exchanged).
//
// The update is the product of one-dimensional upwind steps,
//   u_new = prod_j (1 - c_j D_j) u,   D_j u(x) = u(x) - u(x + s_j e_j),  c_j = |v_j| dt,
// s_j = -sign(v_j); expanded, u_new(x) = sum over subsets S of the moving
// dimensions of  prod_{j in S} c_j  prod_{j not in S} (1 - c_j)  u(x + sum_{j in S} s_j e_j):
// non-negative weights summing to 1 (c_j <= 1), so the scheme is monotone and
// conserves mass on a periodic grid; with c_j = 1 it translates exactly.
#include "builtin_kernels.hpp"

#include "isostencil/driver/run.hpp"
#include "isostencil/driver/models.hpp"

#include "isostencil/kernels/user_kernel.hpp"

#include <fmt/format.h>

#include <cmath>

namespace isostencil::driver {

namespace {

constexpr int max_terms = 16;  // 2^4 subsets for 4 dimensions

template <int D>
struct UpwindCell {
  Kokkos::Array<double, max_terms> weight;
  Kokkos::Array<kernels::Index<D>, max_terms> offset;
  int terms = 0;

  template <class Neighbors>
  KOKKOS_INLINE_FUNCTION double operator()(const Neighbors& u) const {
    double sum = 0.0;
    for (int t = 0; t < terms; ++t) sum += weight[t] * u(offset[t]);
    return sum;
  }
};

template <int D>
class AdvectionModel {
public:
  using Field = core::Field<double, D>;

  AdvectionModel(const Setup& setup, std::shared_ptr<const core::Decomposition> decomposition)
      : deck_(*setup.deck), grid_(make_grid<D>(deck_, std::move(decomposition), deck_.make_stencil(), setup.depth)) {
    double speed = 0.0;
    for (const double v : deck_.kernel.floats("velocity")) speed += std::fabs(v);
    dt_ = deck_.kernel.floating("courant") / speed;
    UpwindCell<D> cell;
    for (int mask = 0; mask < (1 << D); ++mask) {
      double weight = 1.0;
      kernels::Index<D> offset{};
      bool used = true;
      for (int j = 0; j < D; ++j) {
        const double v = deck_.kernel.floats("velocity")[static_cast<std::size_t>(j)];
        const double c = std::fabs(v) * dt_;
        const bool shifted = ((mask >> j) & 1) != 0;
        if (v == 0.0) {
          used = used && !shifted;  // a still dimension contributes no shift
          continue;
        }
        weight *= shifted ? c : 1.0 - c;
        offset[j] = shifted ? (v > 0 ? -1 : 1) : 0;
      }
      if (!used) continue;
      cell.weight[cell.terms] = weight;
      cell.offset[cell.terms] = offset;
      ++cell.terms;
    }
    Field u = grid_.template make_field<double>("u");
    if (setup.restart)
      setup.restart->read("u", grid_, u);
    else
      initialize(u);
    const FieldStats stats = field_stats<D>(grid_, u);
    initial_ = stats;
    kernels::StencilUpdateOptions options;
    options.overlap = deck_.run.overlap;
    options.halo = halo_options(deck_);
    options.label = "isostencil::advection";
    update_.emplace(kernels::make_stencil_update(grid_, u, grid_.template make_field<double>("u next"),
                                                 cell, options));
  }

  const core::Decomposition& decomposition() const { return grid_.decomposition(); }
  std::string stencil_text() const { return stencil_and_depth<D>(grid_); }
  std::string describe() const {
    std::string velocity;
    for (const double v : deck_.kernel.floats("velocity"))
      velocity += (velocity.empty() ? "" : ", ") + fmt::format("{:g}", v);
    return fmt::format("u_t + v.grad u = 0, v = ({}), corner-transport upwind, courant {:g} (dt {:g}), "
                       "start {}",
                       velocity, deck_.kernel.floating("courant"), dt_, deck_.init.type);
  }
  std::vector<std::string> fields() const { return {"u"}; }

  kernels::UpdateTimes advance(long steps) { return update_->advance(steps); }

  Metric measure(long) {
    last_ = field_stats<D>(grid_, update_->input());
    Metric metric;
    metric.name = "mass";
    metric.value = last_.sum;
    metric.text = fmt::format("mass {:.10e}  range [{:.4f}, {:.4f}]", last_.sum, last_.min, last_.max);
    metric.figures = {{"mass", last_.sum}, {"min", last_.min}, {"max", last_.max}};
    return metric;
  }

  iso::HaloValidation validate_halo() { return update_->input_halo().validate(); }
  const iso::Operation& halo_operation() { return update_->input_halo().operation(); }
  const std::string& halo_note() { return update_->input_halo().pattern().algorithm_note(); }
  double time(long step) const { return static_cast<double>(step) * dt_; }
  void write_fields(core::FieldSeries& series) { series.write("u", grid_, update_->input()); }
  void write_state(core::CheckpointWriter& writer) { writer.write("u", grid_, update_->input()); }
  std::string first_non_finite() { return driver::first_non_finite<D>("u", grid_, update_->input()); }

  std::vector<Check> checks(long) {
    const FieldStats stats = field_stats<D>(grid_, update_->input());
    std::vector<Check> checks;
    bool periodic = true;
    for (const bool p : grid_.decomposition().periodic()) periodic = periodic && p;
    const double scale = std::max(1e-300, initial_.sum_abs);
    if (periodic)
      checks.push_back({"mass conserved", std::fabs(stats.sum - initial_.sum) <= 1e-10 * scale,
                        fmt::format("relative change {:.1e}", std::fabs(stats.sum - initial_.sum) / scale)});
    // Inflow through bounded sides brings the ghost value 0.
    const double low = periodic ? initial_.min : std::min(initial_.min, 0.0);
    const double high = periodic ? initial_.max : std::max(initial_.max, 0.0);
    const double slack = 1e-12 * std::max({1.0, std::fabs(low), std::fabs(high)});
    checks.push_back({"monotone (no new extrema)", stats.min >= low - slack && stats.max <= high + slack,
                      fmt::format("u in [{:.6g}, {:.6g}] within [{:.6g}, {:.6g}]", stats.min, stats.max,
                                  low, high)});
    return checks;
  }

private:
  void initialize(const Field& u) {
    const deck::Deck::Init& init = deck_.init;
    // Interior only: bounded sides keep 0 beyond the boundary (inflow of nothing).
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    for_each_interior<D>(grid_, [&](const std::array<int, D>& local, const std::array<long, D>& global) {
      double value = 0.0;
      if (init.type == "constant") {
        value = init.value;
      } else if (init.type == "random") {
        value = init.low + (init.high - init.low) * random_unit(init.seed, global_linear<D>(grid_, global));
      } else {  // gaussian
        double r2 = 0.0;
        for (int j = 0; j < D; ++j) {
          const double d = static_cast<double>(global[j]) - init.center[static_cast<std::size_t>(j)];
          r2 += d * d;
        }
        value = init.amplitude * std::exp(-r2 / (2.0 * init.width * init.width));
      }
      host.data()[local_offset<D>(grid_, local)] = value;
    });
    Kokkos::deep_copy(u, host);
  }

  const deck::Deck& deck_;
  core::Grid<D> grid_;
  double dt_ = 0.0;
  std::optional<kernels::StencilUpdate<D, Field, UpwindCell<D>>> update_;
  FieldStats initial_, last_;
};

/// The upwind side is where the flow comes from: stencil.signs = -sign(velocity)
/// unless the deck gives them; a velocity of 0 everywhere moves nothing.
void resolve_advection_deck(deck::DeckCheck& check) {
  deck::Deck& d = check.deck();
  const std::vector<double>& velocity = d.kernel.floats("velocity");
  bool any_velocity = false;
  for (const double v : velocity) any_velocity = any_velocity || v != 0.0;
  if (!any_velocity) check.error("kernel.velocity", "kernel.velocity is 0 in every dimension: nothing moves");
  if (check.given("stencil.signs")) return;
  d.stencil.signs.clear();
  for (const double v : velocity) d.stencil.signs.push_back(v > 0 ? -1 : v < 0 ? 1 : 0);
}

/// The first-order upwind scheme reads one cell upwind in every moving dimension.
void check_advection_deck(deck::DeckCheck& check) {
  const deck::Deck& d = check.deck();
  if (d.kernel.name != "advection") return;
  if (d.stencil.shape != "upwind") {
    check.error("stencil.shape", "kernel.name = \"advection\" is the first-order upwind scheme: "
                                 "it needs stencil.shape = \"upwind\" (or \"auto\"); this deck has " +
                                     deck_quoted(d.stencil.shape));
    return;
  }
  if (d.stencil.radius != 1)
    check.error("stencil.radius", "kernel.name = \"advection\" reads one cell upwind: it needs "
                                  "stencil.radius = 1; this deck has " +
                                      std::to_string(d.stencil.radius));
  const std::vector<double>& velocity = d.kernel.floats("velocity");
  for (int j = 0; j < d.grid.dims; ++j) {
    const double v = velocity[static_cast<std::size_t>(j)];
    const int want = v > 0 ? -1 : v < 0 ? 1 : 0;
    const int have = d.stencil.signs[static_cast<std::size_t>(j)];
    if (have != want && !(v == 0.0)) {
      check.error("stencil.signs", "stencil.signs[" + std::to_string(j) + "] = " + std::to_string(have) +
                                       " reads downwind: kernel.velocity[" + std::to_string(j) + "] = " +
                                       deck::deck_float(v) + " needs sign " + std::to_string(want) +
                                       " (leave stencil.signs out to derive it)");
      break;
    }
  }
}

}  // namespace

int run_advection(const Setup& setup) { return dispatch_dims<AdvectionModel>(setup); }

KernelEntry advection_kernel() {
  deck::DeckKernel kernel;
  kernel.name = "advection";
  kernel.meaning = "upwind advection";
  kernel.default_shape = "upwind";
  kernel.default_init = "gaussian";
  deck::DeckKernelParameter velocity{"velocity", deck::DeckValueKind::floats, "1.0", "finite, not all 0",
                                     "velocity in cells per unit time (one per dimension, or one value for all)",
                                     "1.0 in every dimension"};
  deck::DeckKernelParameter courant{"courant", deck::DeckValueKind::floating, "0.5", "0 < courant <= 1",
                                    "time step as sum_j |v_j| dt (the stable range of the upwind scheme)"};
  courant.check = [](const deck::DeckValue& value) {
    if (value.floating > 0.0 && value.floating <= 1.0) return std::string();
    return "kernel.courant = " + deck::deck_float(value.floating) +
           " is out of range; allowed: 0 < courant <= 1 (the upwind scheme is unstable above 1)";
  };
  kernel.parameters = {velocity, courant};
  kernel.resolve = resolve_advection_deck;
  kernel.validate = check_advection_deck;
  return {kernel, &run_advection, {}};
}

}  // namespace isostencil::driver
