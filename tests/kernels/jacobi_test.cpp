// Jacobi: the Laplacian weights (moment conditions, exactness on
// polynomials), monotone residual for Laplace, second-order convergence to a
// manufactured solution, and errors for unusable stencils.
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace {

using namespace isostencil;
constexpr double pi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// Weights

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  double value = 1;
  for (int i = 1; i <= k; ++i)
    value = value * (n - k + i) / i;
  return value;
}

TEST(JacobiWeights, BoxClassWeightsMeetTheMomentConditions) {
  for (int d = 1; d <= 6; ++d) {
    const std::vector<double> w = kernels::box_laplacian_class_weights(d);
    ASSERT_EQ(static_cast<int>(w.size()), d + 1);
    // Σ w = 0, Σ w c_1² = 2, Σ w c_1² c_2² = 2/3 (isotropic fourth-order error).
    double sum = 0, second = 0, mixed = 0;
    for (int k = 0; k <= d; ++k) {
      sum += binomial(d, k) * std::pow(2.0, k) * w[k];
      second += binomial(d - 1, k - 1) * std::pow(2.0, k) * w[k];
      mixed += binomial(d - 2, k - 2) * std::pow(2.0, k) * w[k];
    }
    EXPECT_NEAR(sum, 0.0, 1e-13) << "d = " << d;
    EXPECT_NEAR(second, 2.0, 1e-13) << "d = " << d;
    if (d >= 2) {
      EXPECT_NEAR(mixed, 2.0 / 3.0, 1e-13) << "d = " << d;
    }
    EXPECT_LT(w[0], 0.0);
    for (int k = 1; k <= d; ++k)
      EXPECT_GE(w[k], -1e-15) << "d = " << d << ", k = " << k;
  }
  // The familiar cases.
  const auto w2 = kernels::box_laplacian_class_weights(2);
  EXPECT_NEAR(w2[0], -20.0 / 6, 1e-15);
  EXPECT_NEAR(w2[1], 4.0 / 6, 1e-15);
  EXPECT_NEAR(w2[2], 1.0 / 6, 1e-15);
  const auto w3 = kernels::box_laplacian_class_weights(3);
  EXPECT_NEAR(w3[0], -200.0 / 48, 1e-14);
  EXPECT_NEAR(w3[1], 20.0 / 48, 1e-14);
  EXPECT_NEAR(w3[2], 6.0 / 48, 1e-14);
  EXPECT_NEAR(w3[3], 1.0 / 48, 1e-14);
  const auto w1 = kernels::box_laplacian_class_weights(1);
  EXPECT_NEAR(w1[0], -2.0, 1e-15);
  EXPECT_NEAR(w1[1], 1.0, 1e-15);
}

TEST(JacobiWeights, StencilsHaveTheExpectedShapes) {
  for (int d = 1; d <= 6; ++d) {
    const core::Stencil star = kernels::star_laplacian(d, 0.5);
    const core::Stencil box = kernels::box_laplacian(d, 0.5);
    EXPECT_EQ(star.size(), 2 * d + 1);
    EXPECT_EQ(box.size(), static_cast<int>(std::pow(3, d)));
    const double star_sum = std::accumulate(star.weights().begin(), star.weights().end(), 0.0);
    const double box_sum = std::accumulate(box.weights().begin(), box.weights().end(), 0.0);
    EXPECT_NEAR(star_sum, 0.0, 1e-12);
    EXPECT_NEAR(box_sum, 0.0, 1e-12);
    EXPECT_EQ(star.geometry().directions.size(), 2 * d);
    EXPECT_EQ(box.geometry().directions.size(), static_cast<int>(std::pow(3, d)) - 1);
  }
  EXPECT_THROW(kernels::box_laplacian(7, 1.0), iso::Error);
  EXPECT_THROW(kernels::star_laplacian(2, 0.0), iso::Error);
}

// ---------------------------------------------------------------------------
// Exactness on polynomials: apply the operator once and compare with the
// analytic Laplacian plus the known h² term (zero for cubics).

enum class Correction { none, fourth_derivatives, bilaplacian };

template <int D>
double max_operator_error(const core::Stencil& stencil, long n, double h,
                          const iso_test::Polynomial<D>& p, Correction correction) {
  typename core::Grid<D>::global_index extent;
  extent.fill(n);
  std::array<bool, D> periodic{};
  core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, stencil);
  auto u = grid.template make_field<double>("u");
  auto lu = grid.template make_field<double>("Lu");
  auto position = [h](const std::array<long, D>& g) {
    std::array<double, D> x{};
    for (int j = 0; j < D; ++j)
      x[j] = static_cast<double>(g[j]) * h;
    return x;
  };
  iso_test::fill_cells<D>(grid, u, [&](const std::array<long, D>& g) { return p(position(g)); });
  auto halo = grid.halo_exchange(u);
  kernels::apply_stencil<D>(grid, halo, u, lu, true);

  iso_test::Polynomial<D> expected = p.laplacian();
  iso_test::Polynomial<D> extra;
  if (correction == Correction::fourth_derivatives) extra = p.fourth_derivatives();
  if (correction == Correction::bilaplacian) extra = p.laplacian().laplacian();
  for (auto& term : extra.terms)
    term.coefficient *= h * h / 12;
  expected = expected + extra;

  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lu);
  double worst = 0;
  std::array<int, D> local{};
  const auto split = kernels::split_interior(grid);
  const long cells = split.interior.cells();
  for (long c = 0; c < cells; ++c) {
    long rest = c;
    for (int j = D - 1; j >= 0; --j) {
      const int span = split.interior.end[j] - split.interior.begin[j];
      local[j] = split.interior.begin[j] + static_cast<int>(rest % span);
      rest /= span;
    }
    std::size_t linear = 0;
    for (int j = 0; j < D; ++j)
      linear = linear * static_cast<std::size_t>(grid.field_extent()[j]) +
               static_cast<std::size_t>(local[j]);
    const double want = expected(position(grid.to_global(local)));
    worst = std::max(worst, std::abs(host.data()[linear] - want) / (1 + std::abs(want)));
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

template <int D>
iso_test::Polynomial<D> cubic() {
  iso_test::Polynomial<D> p;
  std::array<int, D> e{};
  p.add(1.5, e);
  for (int j = 0; j < D; ++j) {
    std::array<int, D> q{};
    q[j] = 1;
    p.add(0.5 + j, q);
    q[j] = 2;
    p.add(1.0 - 0.3 * j, q);
    q[j] = 3;
    p.add(0.7 - 0.2 * j, q);
    if (D > 1) {
      std::array<int, D> mixed{};
      mixed[j] = 2;
      mixed[(j + 1) % D] = 1;
      p.add(-0.4 + 0.1 * j, mixed);
    }
  }
  if (D >= 3) {
    std::array<int, D> q{};
    q[0] = q[1] = q[2] = 1;
    p.add(1.1, q);
  }
  return p;
}

template <int D>
iso_test::Polynomial<D> quartic() {
  iso_test::Polynomial<D> p = cubic<D>();
  for (int j = 0; j < D; ++j) {
    std::array<int, D> q{};
    q[j] = 4;
    p.add(0.9 - 0.15 * j, q);
    if (D > 1) {
      std::array<int, D> mixed{};
      mixed[j] = 2;
      mixed[(j + 1) % D] = 2;
      p.add(0.6 + 0.05 * j, mixed);
      mixed[j] = 3;
      mixed[(j + 1) % D] = 1;
      p.add(-0.35, mixed);
    }
  }
  return p;
}

template <int D>
void check_polynomials(long n) {
  const double h = 1.0 / 8;
  const double tolerance = 1e-11;
  SCOPED_TRACE("d = " + std::to_string(D));
  // Cubics: exact, no correction term.
  EXPECT_LT(
      max_operator_error<D>(kernels::star_laplacian(D, h), n, h, cubic<D>(), Correction::none),
      tolerance);
  EXPECT_LT(max_operator_error<D>(kernels::box_laplacian(D, h), n, h, cubic<D>(), Correction::none),
            tolerance);
  // Quartics: exact up to the known h²/12 term; the box's is isotropic.
  EXPECT_LT(max_operator_error<D>(kernels::star_laplacian(D, h), n, h, quartic<D>(),
                                  Correction::fourth_derivatives),
            tolerance);
  EXPECT_LT(max_operator_error<D>(kernels::box_laplacian(D, h), n, h, quartic<D>(),
                                  Correction::bilaplacian),
            tolerance);
  // ... and without the term they are not exact (the test can fail).
  if (D >= 2) {
    EXPECT_GT(
        max_operator_error<D>(kernels::box_laplacian(D, h), n, h, quartic<D>(), Correction::none),
        1e-4);
  }
}

TEST(JacobiWeights, ExactOnPolynomials2D3D) {
  check_polynomials<2>(11);
  check_polynomials<3>(9);
}

TEST(JacobiWeights, ExactOnPolynomialsHigherDimensions) {
  check_polynomials<1>(16);
  check_polynomials<4>(5);
  check_polynomials<5>(4);
  check_polynomials<6>(4);
}

TEST(JacobiWeights, Classic27PointWeightsAreExactToo) {
  // (-128, 14, 3, 1)/30h² meets the same moment conditions as box_laplacian(3).
  const double h = 1.0 / 8;
  const core::Stencil shape = core::Stencil::box(3, 1);
  const double by_class[4] = {-128.0 / 30, 14.0 / 30, 3.0 / 30, 1.0 / 30};
  std::vector<double> weights;
  for (int i = 0; i < shape.size(); ++i) {
    int nonzero = 0;
    for (int j = 0; j < 3; ++j)
      nonzero += shape.offsets()[i][j] != 0;
    weights.push_back(by_class[nonzero] / (h * h));
  }
  const core::Stencil classic = shape.with_weights(weights);
  EXPECT_LT(max_operator_error<3>(classic, 9, h, cubic<3>(), Correction::none), 1e-11);
  EXPECT_LT(max_operator_error<3>(classic, 9, h, quartic<3>(), Correction::bilaplacian), 1e-11);
}

// ---------------------------------------------------------------------------
// Residual of the Laplace problem falls monotonically

template <int D>
void check_monotone_residual(const core::Stencil& stencil, const std::array<long, D>& extent,
                             const std::array<bool, D>& periodic, bool overlap) {
  SCOPED_TRACE(stencil.name() + (overlap ? ", overlap" : ", no overlap"));
  core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, stencil);
  auto u = grid.template make_field<double>("u");
  // Zero initial guess, rough Dirichlet values on the boundary.
  iso_test::fill_cells<D>(grid, u, [&](const std::array<long, D>& g) {
    bool boundary = false;
    long hash = 17;
    for (int j = 0; j < D; ++j) {
      boundary = boundary || g[j] < 0 || g[j] >= extent[j];
      hash = hash * 31 + g[j] + 3;
    }
    return boundary ? static_cast<double>((hash * 2654435761L) % 1000) / 1000.0 : 0.0;
  });
  kernels::JacobiOptions options;
  options.residual_every = 1;
  options.overlap = overlap;
  kernels::Jacobi<D> jacobi(grid, u, {}, options);
  const kernels::JacobiSummary summary = jacobi.run(60);
  ASSERT_EQ(summary.history.size(), 61U);
  bool l2_falls = true, max_falls = true;
  for (std::size_t i = 1; i < summary.history.size(); ++i) {
    l2_falls = l2_falls && summary.history[i].l2 < summary.history[i - 1].l2;
    max_falls = max_falls && summary.history[i].max <= summary.history[i - 1].max * (1 + 1e-13);
    EXPECT_EQ(summary.history[i].sweep, static_cast<long>(i));
  }
  EXPECT_TRUE(l2_falls);
  EXPECT_TRUE(max_falls);
  EXPECT_GT(summary.history.front().l2, 0.0);
  EXPECT_LT(summary.history.back().l2, summary.history.front().l2);
}

TEST(Jacobi, LaplaceResidualFallsMonotonically) {
  check_monotone_residual<2>(kernels::star_laplacian(2, 1.0 / 25), {24, 20}, {false, false}, true);
  check_monotone_residual<2>(kernels::box_laplacian(2, 1.0 / 25), {24, 20}, {false, true}, false);
  check_monotone_residual<3>(kernels::star_laplacian(3, 0.1), {10, 9, 8}, {false, false, false},
                             true);
  check_monotone_residual<3>(kernels::box_laplacian(3, 0.1), {10, 9, 8}, {false, true, false},
                             true);
  check_monotone_residual<4>(kernels::box_laplacian(4, 0.2), {5, 5, 4, 4},
                             {false, false, true, false}, false);
}

// ---------------------------------------------------------------------------
// Manufactured solution: -Δu = f on (0,1)², u* = sin(πx) sin(2πy) + eˣ sin y
// (harmonic part through the Dirichlet values). Nodes at x_i = (i+1)h,
// h = 1/(N+1); the ghost cells i = -1, N are the boundary nodes.

double exact(double x, double y) {
  return std::sin(pi * x) * std::sin(2 * pi * y) + std::exp(x) * std::sin(y);
}
double source(double x, double y) {
  return 5 * pi * pi * std::sin(pi * x) * std::sin(2 * pi * y);
}

struct ConvergenceRun {
  double error = 0;
  long sweeps = 0;
  bool converged = false;
};

ConvergenceRun solve_manufactured(bool box, long n) {
  const double h = 1.0 / static_cast<double>(n + 1);
  core::Grid<2> grid(MPI_COMM_WORLD, {n, n}, {false, false},
                     box ? kernels::box_laplacian(2, h) : kernels::star_laplacian(2, h));
  auto u = grid.make_field<double>("u");
  auto f = grid.make_field<double>("f");
  auto node = [h](long i) { return static_cast<double>(i + 1) * h; };
  // Initial guess: the exact solution sampled (the discrete solution differs
  // from it by O(h²)); boundary ghosts: the exact boundary values.
  iso_test::fill_cells<2>(
      grid, u, [&](const std::array<long, 2>& g) { return exact(node(g[0]), node(g[1])); });
  iso_test::fill_cells<2>(
      grid, f, [&](const std::array<long, 2>& g) { return source(node(g[0]), node(g[1])); });
  kernels::JacobiOptions options;
  options.max_sweeps = 20000;
  options.relative_tolerance = 1e-4;
  options.residual_every = 25;
  kernels::Jacobi<2> jacobi(grid, u, f, options);
  const kernels::JacobiSummary summary = jacobi.solve();

  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jacobi.solution());
  double error = 0;
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j)
      error = std::max(error, std::abs(host(i, j) - exact(node(grid.to_global(0, i)),
                                                          node(grid.to_global(1, j)))));
  MPI_Allreduce(MPI_IN_PLACE, &error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {error, summary.sweeps, summary.converged};
}

TEST(Jacobi, ManufacturedSolutionConvergesAtSecondOrder) {
  for (bool box : {false, true}) {
    SCOPED_TRACE(box ? "box (9-point)" : "star (5-point)");
    std::vector<ConvergenceRun> runs;
    for (long n : {7L, 15L, 31L})
      runs.push_back(solve_manufactured(box, n));
    for (const ConvergenceRun& run : runs)
      EXPECT_TRUE(run.converged);
    for (std::size_t i = 1; i < runs.size(); ++i) {
      const double ratio = runs[i - 1].error / runs[i].error;
      if (iso_test::world_rank() == 0)
        std::printf("  %s: error %.3e -> %.3e (ratio %.2f, %ld sweeps)\n", box ? "box " : "star",
                    runs[i - 1].error, runs[i].error, ratio, runs[i].sweeps);
      EXPECT_GT(ratio, 3.6);
      EXPECT_LT(ratio, 4.4);
    }
  }
}

// ---------------------------------------------------------------------------
// Periodic Poisson with a mean-zero source, solve() stopping at a tolerance

TEST(Jacobi, SolveStopsAtTolerance) {
  const long n = 16;
  const double h = 1.0 / n;
  core::Grid<2> grid(MPI_COMM_WORLD, {n, n}, {true, true}, kernels::star_laplacian(2, h));
  auto u = grid.make_field<double>("u");
  auto f = grid.make_field<double>("f");
  iso_test::fill_cells<2>(grid, f, [&](const std::array<long, 2>& g) {
    return std::cos(2 * pi * g[0] * h) * std::sin(4 * pi * g[1] * h);
  });
  kernels::JacobiOptions options;
  options.max_sweeps = 5000;
  options.tolerance = 1e-6;
  options.residual_every = 5;
  kernels::Jacobi<2> jacobi(grid, u, f, options);
  EXPECT_TRUE(jacobi.uses_star_kernel());
  const kernels::JacobiSummary summary = jacobi.solve();
  EXPECT_TRUE(summary.converged);
  EXPECT_LT(summary.sweeps, 5000);
  ASSERT_GE(summary.history.size(), 2U);
  const kernels::Residual& met = summary.history[summary.history.size() - 2];
  EXPECT_LE(met.l2, 1e-6);
  EXPECT_EQ(met.sweep % 5, 0);
  EXPECT_EQ(summary.history.back().sweep, summary.sweeps);
  EXPECT_LE(summary.history.back().l2, met.l2);
  EXPECT_EQ(jacobi.residual().l2, summary.history.back().l2);
  EXPECT_FALSE(summary.describe().empty());
}

// One sweep of each kernel path agrees with u + (L u) / diag computed by
// apply_stencil (the general loop), in every dimension.
template <int D>
double sweep_vs_operator(const core::Stencil& stencil, long n) {
  typename core::Grid<D>::global_index extent;
  extent.fill(n);
  std::array<bool, D> periodic{};
  for (int j = 0; j < D; ++j)
    periodic[j] = j % 2 == 0;
  core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, stencil);
  auto u = grid.template make_field<double>("u");
  auto lu = grid.template make_field<double>("Lu");
  iso_test::fill_cells<D>(grid, u, [](const std::array<long, D>& g) {
    long hash = 7;
    for (int j = 0; j < D; ++j)
      hash = hash * 131 + g[j] + 5;
    return static_cast<double>(hash % 1009) / 1009.0;
  });
  auto halo = grid.halo_exchange(u);
  kernels::apply_stencil<D>(grid, halo, u, lu, false);
  kernels::JacobiOptions options;
  options.final_residual = false;
  kernels::Jacobi<D> jacobi(grid, u, {}, options);
  // The initial u is read again below: Jacobi writes its sweep into its second field.
  const kernels::JacobiSummary summary = jacobi.run(1);
  double diag = 0;
  for (int i = 0; i < stencil.size(); ++i) {
    bool centre = true;
    for (int j = 0; j < D; ++j)
      centre = centre && stencil.offsets()[i][j] == 0;
    if (centre) diag = -stencil.weights()[static_cast<std::size_t>(i)];
  }
  auto u_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  auto lu_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lu);
  auto next = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jacobi.solution());
  double worst = 0, residual = 0;
  const auto split = kernels::split_interior(grid);
  std::array<int, D> local{};
  for (long c = 0; c < split.interior.cells(); ++c) {
    long rest = c;
    for (int j = D - 1; j >= 0; --j) {
      const int span = split.interior.end[j] - split.interior.begin[j];
      local[j] = split.interior.begin[j] + static_cast<int>(rest % span);
      rest /= span;
    }
    std::size_t at = 0;
    for (int j = 0; j < D; ++j)
      at = at * static_cast<std::size_t>(grid.field_extent()[j]) +
           static_cast<std::size_t>(local[j]);
    const double want = u_host.data()[at] + lu_host.data()[at] / diag;
    worst = std::max(worst, std::abs(next.data()[at] - want));
    residual += lu_host.data()[at] * lu_host.data()[at];
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  // The fused residual of the sweep is that of the initial u.
  EXPECT_NEAR(summary.history.at(0).l2, std::sqrt(residual), 1e-10 * std::sqrt(residual));
  return worst;
}

template <int D>
void check_sweep(long n) {
  SCOPED_TRACE("d = " + std::to_string(D));
  EXPECT_LT(sweep_vs_operator<D>(kernels::star_laplacian(D, 0.5), n), 1e-13);
  EXPECT_LT(sweep_vs_operator<D>(kernels::box_laplacian(D, 0.5), n), 1e-13);
}

TEST(Jacobi, SweepMatchesTheOperatorInEveryDimension) {
  check_sweep<1>(20);
  check_sweep<2>(10);
  check_sweep<3>(8);
  check_sweep<4>(5);
  check_sweep<5>(4);
  check_sweep<6>(4);
}

TEST(Jacobi, PicksTheKernelFromTheWeights) {
  auto kernel_of = [](const core::Stencil& stencil) {
    core::Grid<3> grid(MPI_COMM_WORLD, {8, 8, 8}, {true, true, true}, stencil);
    return kernels::Jacobi<3>(grid, grid.make_field<double>("u")).kernel_name();
  };
  EXPECT_EQ(kernel_of(kernels::star_laplacian(3, 0.5)), "star");
  EXPECT_EQ(kernel_of(kernels::box_laplacian(3, 0.5)), "box");
  std::vector<double> weights = kernels::box_laplacian(3, 1.0).weights();
  weights[1] *= 1.5;  // one edge weight differs from the others of its class
  EXPECT_EQ(kernel_of(core::Stencil::box(3, 1).with_weights(weights)), "general");
  EXPECT_EQ(kernel_of(kernels::star_laplacian(3, 1.0).with_weights({-8, 1, 1, 1, 1, 2, 2})),
            "general");
}

TEST(Jacobi, ExposesTheExchangeThatRuns) {
  core::Grid<2> grid(MPI_COMM_WORLD, {12, 10}, {true, false}, kernels::star_laplacian(2, 1.0));
  kernels::JacobiOptions options;
  options.halo.algorithm = iso::Algorithm::direct;
  kernels::Jacobi<2> jacobi(grid, grid.make_field<double>("u"), {}, options);
  // Both exchanges are bound to the grid's one pattern for these options.
  EXPECT_EQ(&jacobi.halo().pattern(), grid.halo_pattern(options.halo).get());
  EXPECT_EQ(jacobi.algorithm(), iso::Algorithm::direct);
  const core::HaloExchange* first = &jacobi.halo();
  EXPECT_EQ(jacobi.halo().layout().ghost_lo[0], 1);
  jacobi.run(1);
  // The next sweep reads the other iterate, through the other exchange.
  EXPECT_NE(&jacobi.halo(), first);
  EXPECT_EQ(&jacobi.halo().pattern(), &first->pattern());
  const iso::HaloValidation validation = jacobi.halo().validate();
  EXPECT_TRUE(validation.ok) << validation.message;
}

// ---------------------------------------------------------------------------
// Errors

TEST(Jacobi, RejectsUnusableStencils) {
  core::Grid<2> unweighted(MPI_COMM_WORLD, {8, 8}, {true, true}, core::Stencil::star(2, 1));
  auto u = unweighted.make_field<double>("u");
  EXPECT_THROW(kernels::Jacobi<2>(unweighted, u), iso::Error);

  const core::Stencil no_centre = core::Stencil(iso::OffsetList(2, {1, 0, -1, 0}), {1.0, 1.0});
  core::Grid<2> off(MPI_COMM_WORLD, {8, 8}, {true, true}, no_centre);
  auto v = off.make_field<double>("v");
  EXPECT_THROW(kernels::Jacobi<2>(off, v), iso::Error);

  const core::Stencil positive = kernels::star_laplacian(2, 1.0).with_weights({4, -1, -1, -1, -1});
  core::Grid<2> wrong_sign(MPI_COMM_WORLD, {8, 8}, {true, true}, positive);
  auto w = wrong_sign.make_field<double>("w");
  EXPECT_THROW(kernels::Jacobi<2>(wrong_sign, w), iso::Error);

  core::Grid<2> fine(MPI_COMM_WORLD, {8, 8}, {true, true}, kernels::star_laplacian(2, 1.0));
  core::Grid<2> larger(MPI_COMM_WORLD, {10, 8}, {true, true}, kernels::star_laplacian(2, 1.0));
  auto wrong_size = larger.make_field<double>("wrong size");
  EXPECT_THROW(kernels::Jacobi<2>(fine, wrong_size), iso::Error);
}

}  // namespace
