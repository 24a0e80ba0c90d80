// heat: the explicit heat equation with a source term,
//   u_t = alpha * lap u + q,
// as a kernel of its own, registered by name ("heat") so that decks select
// it with [kernel] name = "heat" and set alpha, dt and heat_source as
// [kernel] keys. Everything else (the grid in 1 to 4 dimensions, the
// decomposition, initial conditions, halo exchange and its validation,
// HDF5 + XDMF output, checkpoints and --restart, the summary) comes from
// the isostencil driver:
//   mpirun -np 2 heat run heat.toml
//   heat check heat.toml --effective
//   heat --version
#include "isostencil/driver/driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace deck = isostencil::deck;
namespace driver = isostencil::driver;
namespace kernels = isostencil::kernels;

/// One cell's update: u + dt * (alpha * sum_j (u(+e_j) - 2 u + u(-e_j)) + q).
template <int D>
struct Heat {
  double alpha, dt, q;

  explicit Heat(const deck::Deck& deck)
      : alpha(deck.kernel.floating("alpha")),
        dt(deck.kernel.floating("dt")),
        q(deck.kernel.floating("heat_source")) {}

  std::string describe() const {
    char text[160];
    std::snprintf(text, sizeof text, "u_t = alpha lap u + q, alpha %g, dt %g, q %g (forward Euler)",
                  alpha, dt, q);
    return text;
  }
  double time_step() const { return dt; }

  template <class U>
  KOKKOS_INLINE_FUNCTION double operator()(const U& u) const {
    kernels::Index<D> at{};
    const double centre = u(at);
    double laplacian = 0.0;
    for (int j = 0; j < D; ++j) {
      at[j] = 1;
      laplacian += u(at);
      at[j] = -1;
      laplacian += u(at);
      at[j] = 0;
      laplacian -= 2.0 * centre;
    }
    return centre + dt * (alpha * laplacian + q);
  }

  // On a torus the Laplacian sums to zero, so the total grows by exactly
  // q dt per cell and step; anywhere the scheme (dt alpha 2D <= 1) keeps
  // u within the initial range, the 0 beyond bounded sides, plus the source.
  std::vector<driver::Check> checks(const driver::CellRun& run) const {
    const double steps = static_cast<double>(run.last_step - run.first_step);
    const double added = q * dt * steps;
    std::vector<driver::Check> checks;
    if (run.periodic) {
      const double expected = run.initial.sum + added * static_cast<double>(run.cells);
      const double error = std::fabs(run.final.sum - expected);
      const double scale = std::fabs(run.initial.sum_abs) + std::fabs(added) * static_cast<double>(run.cells);
      char detail[128];
      std::snprintf(detail, sizeof detail, "sum %.12g, expected %.12g", run.final.sum, expected);
      checks.push_back({"heat balance", error <= 1e-10 * std::max(1.0, scale), detail});
    }
    const double low = std::min(run.initial.min, run.periodic ? run.initial.min : 0.0) + std::min(0.0, added);
    const double high = std::max(run.initial.max, run.periodic ? run.initial.max : 0.0) + std::max(0.0, added);
    const double slack = 1e-12 * std::max({1.0, std::fabs(low), std::fabs(high)});
    char detail[128];
    std::snprintf(detail, sizeof detail, "u in [%.6g, %.6g] within [%.6g, %.6g]", run.final.min,
                  run.final.max, low, high);
    checks.push_back({"maximum principle", run.final.min >= low - slack && run.final.max <= high + slack,
                      detail});
    return checks;
  }
};

/// Deck checks made before anything runs (`run` and `check`), the same on every rank.
void check_heat(const deck::Deck& deck) {
  const double alpha = deck.kernel.floating("alpha"), dt = deck.kernel.floating("dt");
  if (!(alpha > 0.0)) deck.fail("kernel.alpha", "kernel.alpha must be > 0");
  if (!(dt > 0.0)) deck.fail("kernel.dt", "kernel.dt must be > 0");
  const double courant = 2.0 * deck.grid.dims * alpha * dt;
  if (courant > 1.0)
    deck.fail("kernel.dt", "kernel.dt = " + std::to_string(dt) + " is unstable: 2 d alpha dt = " +
                               std::to_string(courant) + " > 1");
  if (deck.stencil.shape != "star" && deck.stencil.shape != "box")
    deck.fail("stencil.shape", "the heat kernel reads the face neighbours: stencil.shape = \"star\" or \"box\"");
}

}  // namespace

int main(int argc, char** argv) {
  deck::DeckKernel heat;
  heat.name = "heat";
  heat.meaning = "explicit heat equation with a source";
  heat.default_shape = "star";
  heat.default_init = "gaussian";
  heat.parameters = {
      {"alpha", deck::DeckValueKind::floating, "0.2", "> 0", "diffusivity (cells^2 per unit time)"},
      {"dt", deck::DeckValueKind::floating, "1.0", "2 d alpha dt <= 1", "time step"},
      {"heat_source", deck::DeckValueKind::floating, "0.0", "finite", "source q, the same in every cell"},
  };
  try {
    driver::register_cell_kernel<Heat>(heat, check_heat);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "heat: %s\n", error.what());
    return 2;
  }
  return driver::main(argc, argv, {"heat", "heat: the heat equation with a source, on isostencil.", "1.0"});
}
