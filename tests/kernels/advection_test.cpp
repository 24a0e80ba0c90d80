// Upwind advection as a user kernel moves a pulse by the expected distance:
// the centre of mass shifts by exactly (cx, cy) cells per step on a periodic
// grid (linear, conservative, positive scheme), across rank boundaries, with
// and without overlap; mass is conserved; the one-sided halo exchanges only
// the upwind directions.
#include "isostencil/kernels/user_kernel.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace isostencil;

struct Moments {
  double mass = 0, dx = 0, dy = 0;
};

Moments moments(const core::Grid<2>& grid, const core::Field<double, 2>& c, double ex, double ey) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  const double lx = static_cast<double>(grid.global_extent()[0]);
  const double ly = static_cast<double>(grid.global_extent()[1]);
  auto wrap = [](double d, double l) { return d - l * std::floor(d / l + 0.5); };
  double sums[3] = {0, 0, 0};
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j) {
      sums[0] += host(i, j);
      sums[1] += host(i, j) * wrap(static_cast<double>(grid.to_global(0, i)) - ex, lx);
      sums[2] += host(i, j) * wrap(static_cast<double>(grid.to_global(1, j)) - ey, ly);
    }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {sums[0], sums[1] / sums[0], sums[2] / sums[0]};
}

void fill_pulse(const core::Grid<2>& grid, const core::Field<double, 2>& c, double x0, double y0,
                double sigma) {
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), c);
  const double lx = static_cast<double>(grid.global_extent()[0]);
  const double ly = static_cast<double>(grid.global_extent()[1]);
  auto wrap = [](double d, double l) { return d - l * std::floor(d / l + 0.5); };
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j) {
      const double dx = wrap(static_cast<double>(grid.to_global(0, i)) - x0, lx);
      const double dy = wrap(static_cast<double>(grid.to_global(1, j)) - y0, ly);
      host(i, j) = std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
    }
  Kokkos::deep_copy(c, host);
}

void check_pulse_moves(bool corner_transport, bool overlap) {
  SCOPED_TRACE(std::string(corner_transport ? "ctu" : "donor") +
               (overlap ? ", overlap" : ", no overlap"));
  // The domain is wide enough that the pulse's tails at half a period away
  // weigh nothing (σ² grows by c(1-c) per step: at most 12 here; e^{-32²/24}).
  const long nx = 64, ny = 64;
  const double cx = 0.5, cy = 0.25, sigma = 2;
  const int steps = 32;
  const core::Stencil shape = corner_transport ? core::Stencil::upwind(2, 1, {-1, -1})
                                               : core::Stencil::one_sided_star(2, 1, {-1, -1});
  core::Grid<2> grid(MPI_COMM_WORLD, {nx, ny}, {true, true}, shape);
  EXPECT_EQ(grid.directions().size(), corner_transport ? 3 : 2);
  auto in = grid.make_field<double>("c"), out = grid.make_field<double>("c next");
  // Start near the wrap-around edge so the pulse crosses the periodic boundary
  // and (on several ranks) rank boundaries.
  const double x0 = 56, y0 = 60;
  fill_pulse(grid, in, x0, y0, sigma);
  kernels::StencilUpdateOptions options;
  options.overlap = overlap;
  const Moments before = moments(grid, in, x0, y0);
  EXPECT_NEAR(before.dx, 0.0, 1e-13);
  EXPECT_NEAR(before.dy, 0.0, 1e-13);

  auto run = [&](auto kernel) {
    auto step = kernels::make_stencil_update(grid, in, out, kernel, options);
    for (int n = 0; n < steps; ++n)
      step.advance();
    return step.input();
  };
  core::Field<double, 2> result;
  if (corner_transport)
    result = run(KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& c) {
      return (1 - cx) * (1 - cy) * c(0, 0) + cx * (1 - cy) * c(-1, 0) + (1 - cx) * cy * c(0, -1) +
             cx * cy * c(-1, -1);
    });
  else
    result = run(KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& c) {
      return c(0, 0) - cx * (c(0, 0) - c(-1, 0)) - cy * (c(0, 0) - c(0, -1));
    });

  const double ex = std::fmod(x0 + cx * steps, static_cast<double>(nx));  // 72 -> 8
  const double ey = std::fmod(y0 + cy * steps, static_cast<double>(ny));  // 68 -> 4
  const Moments after = moments(grid, result, ex, ey);
  // The centre of mass is where Courant number x steps says, to rounding.
  EXPECT_NEAR(after.dx, 0.0, 1e-10);
  EXPECT_NEAR(after.dy, 0.0, 1e-10);
  EXPECT_NEAR(after.mass, before.mass, 1e-12 * before.mass);
}

TEST(Advection, PulseMovesByCourantTimesSteps) {
  for (bool overlap : {true, false}) {
    check_pulse_moves(false, overlap);
    check_pulse_moves(true, overlap);
  }
}

// The checks live in free functions, their TESTs call them: CUDA allows no
// device lambda in gtest's private TestBody().
void pulse_does_not_move_without_velocity() {
  core::Grid<2> grid(MPI_COMM_WORLD, {24, 20}, {true, true},
                     core::Stencil::one_sided_star(2, 1, {-1, -1}));
  auto in = grid.make_field<double>("c"), out = grid.make_field<double>("c next");
  auto initial = grid.make_field<double>("initial");
  fill_pulse(grid, in, 10, 10, 2);
  Kokkos::deep_copy(initial, in);
  const double cx = 0, cy = 0;
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& c) {
        return c(0, 0) - cx * (c(0, 0) - c(-1, 0)) - cy * (c(0, 0) - c(0, -1));
      });
  for (int n = 0; n < 5; ++n)
    step.advance();
  // c - 0 * (...) == c exactly: the interior is unchanged.
  auto now = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), step.input());
  auto then = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), initial);
  bool same = true;
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j)
      same = same && now(i, j) == then(i, j);
  EXPECT_TRUE(iso_test::all_ranks(same));
}
TEST(Advection, PulseDoesNotMoveWithoutVelocity) { pulse_does_not_move_without_velocity(); }

}  // namespace
