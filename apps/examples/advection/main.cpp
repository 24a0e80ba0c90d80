// isostencil-advection: first-order upwind advection of a Gaussian pulse,
// ∂c/∂t + v·∇c = 0 with v > 0 in both dimensions, on a periodic 2-D grid, as a
// user kernel. With Courant numbers cx = vx Δt/h, cy = vy Δt/h:
//
//   donor cell:  c'(x) = c - cx (c - c(-1,0)) - cy (c - c(0,-1))
//                shape {(0,0), (-1,0), (0,-1)} = Stencil::one_sided_star(2, 1, {-1,-1})
//                (stable for cx + cy <= 1)
//   ctu:         corner transport upwind, adds the (-1,-1) neighbour
//                shape Stencil::upwind(2, 1, {-1,-1}) (stable for cx, cy <= 1)
//
// Only upwind cells are read, so the halo is one-sided: ghost layers below
// only, and the exchange receives from the -x and -y sides (plus the corner
// for ctu) instead of all 8 neighbours. Both schemes are linear, conservative
// and positive, so the pulse's centre of mass moves by exactly (cx, cy) cells
// per step; the program checks that (and mass conservation) and prints
// "Solution validates".
//
//   mpirun -np 2 isostencil-advection --n 128 --steps 200 --cx 0.5 --cy 0.25
#include "isostencil/driver/kokkos_args.hpp"
#include "isostencil/kernels/user_kernel.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace {

using namespace isostencil;

struct Settings {
  long n = 128;
  int steps = 200;
  double cx = 0.5;
  double cy = 0.25;
  double sigma = 6;
  std::string scheme = "donor";
  bool overlap = true;
};

/// Mass and centre of mass relative to `expected`, with displacements
/// wrapped into [-L/2, L/2) (the domain is a torus).
struct Moments {
  double mass = 0;
  double dx = 0;
  double dy = 0;
};

Moments moments(const core::Grid<2>& grid, const core::Field<double, 2>& c, double expected_x,
                double expected_y) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  const double lx = static_cast<double>(grid.global_extent()[0]);
  const double ly = static_cast<double>(grid.global_extent()[1]);
  auto wrap = [](double d, double l) { return d - l * std::floor(d / l + 0.5); };
  double sums[3] = {0, 0, 0};
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j) {
      const double m = host(i, j);
      sums[0] += m;
      sums[1] += m * wrap(static_cast<double>(grid.to_global(0, i)) - expected_x, lx);
      sums[2] += m * wrap(static_cast<double>(grid.to_global(1, j)) - expected_y, ly);
    }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, grid.comm());
  return {sums[0], sums[1] / sums[0], sums[2] / sums[0]};
}

int run(const Settings& s, int rank) {
  const bool ctu = s.scheme == "ctu";
  const core::Stencil shape =
      ctu ? core::Stencil::upwind(2, 1, {-1, -1}) : core::Stencil::one_sided_star(2, 1, {-1, -1});
  core::Grid<2> grid(MPI_COMM_WORLD, {s.n, s.n}, {true, true}, shape);
  auto in = grid.make_field<double>("c");
  auto out = grid.make_field<double>("c next");

  // Gaussian pulse centred at (n/4, n/4), evaluated on the torus.
  const double x0 = static_cast<double>(s.n) / 4, y0 = static_cast<double>(s.n) / 4;
  {
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), in);
    const double l = static_cast<double>(s.n);
    auto wrap = [l](double d) { return d - l * std::floor(d / l + 0.5); };
    for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
      for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j) {
        const double dx = wrap(static_cast<double>(grid.to_global(0, i)) - x0);
        const double dy = wrap(static_cast<double>(grid.to_global(1, j)) - y0);
        host(i, j) = std::exp(-(dx * dx + dy * dy) / (2 * s.sigma * s.sigma));
      }
    Kokkos::deep_copy(in, host);
  }

  const double cx = s.cx, cy = s.cy;
  kernels::StencilUpdateOptions options;
  options.overlap = s.overlap;
  options.label = "advection";
  // The two schemes are two kernels; each is a lambda reading upwind cells.
  auto donor = [=] KOKKOS_FUNCTION(const kernels::Neighbors<double, 2>& c) {
    return c(0, 0) - cx * (c(0, 0) - c(-1, 0)) - cy * (c(0, 0) - c(0, -1));
  };
  auto corner = [=] KOKKOS_FUNCTION(const kernels::Neighbors<double, 2>& c) {
    return (1 - cx) * (1 - cy) * c(0, 0) + cx * (1 - cy) * c(-1, 0) + (1 - cx) * cy * c(0, -1) +
           cx * cy * c(-1, -1);
  };

  if (rank == 0) {
    const auto& dims = grid.decomposition().process_dims();
    std::printf(
        "isostencil-advection: 2-D first-order upwind (%s), %ldx%ld periodic on %d rank(s) "
        "(%dx%d)\n",
        ctu ? "corner transport upwind" : "donor cell", s.n, s.n, grid.decomposition().num_procs(),
        dims[0], dims[1]);
    std::printf("stencil %s\n", shape.describe().c_str());
    std::printf("ghost layers lo (%d,%d) hi (%d,%d); exchanged ghost directions e: %s\n",
                grid.ghost_lo()[0], grid.ghost_lo()[1], grid.ghost_hi()[0], grid.ghost_hi()[1],
                kernels::detail::offsets_text(grid.directions()).c_str());
    std::printf(
        "pulse: Gaussian, sigma %.1f cells, at (%.1f, %.1f); Courant (%.3f, %.3f); %d steps; "
        "overlap %s\n",
        s.sigma, x0, y0, cx, cy, s.steps, s.overlap ? "on" : "off");
  }

  const Moments before = moments(grid, in, x0, y0);
  double kernel = 0, halo = 0;
  const double start = MPI_Wtime();
  auto advance = [&](auto& step) {
    for (int n = 0; n < s.steps; ++n) {
      const kernels::UpdateTimes t = step.advance();
      kernel += t.kernel;
      halo += t.halo;
    }
    return step.input();
  };
  core::Field<double, 2> result;
  if (ctu) {
    auto step = kernels::make_stencil_update(grid, in, out, corner, options);
    result = advance(step);
  } else {
    auto step = kernels::make_stencil_update(grid, in, out, donor, options);
    result = advance(step);
  }
  const double seconds = MPI_Wtime() - start;

  // Expected centre after the run, on the torus.
  const double l = static_cast<double>(s.n);
  const double shift_x = cx * s.steps, shift_y = cy * s.steps;
  const double ex = std::fmod(x0 + shift_x, l), ey = std::fmod(y0 + shift_y, l);
  const Moments after = moments(grid, result, ex, ey);
  const double error = std::hypot(after.dx, after.dy);
  const double mass_change = std::abs(after.mass - before.mass) / before.mass;
  double times[2] = {kernel, halo};
  MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // The centre of mass moves exactly, up to the pulse's tails half a period
  // away, which the torus folds over: bound their pull. The pulse's variance
  // grows by c(1-c) per step in each dimension (numerical diffusion).
  const double spread2 = s.sigma * s.sigma + s.steps * std::max(cx * (1 - cx), cy * (1 - cy));
  const double half = l / 2;
  const double tolerance = 1e-6 + 4 * half * std::exp(-half * half / (2 * spread2));
  const bool valid = error < tolerance && mass_change < 1e-12;
  if (rank == 0) {
    std::printf(
        "expected displacement (%.4f, %.4f) cells = Courant x steps; centre expected at (%.4f, "
        "%.4f)\n",
        shift_x, shift_y, ex, ey);
    std::printf(
        "measured centre of mass (%.4f, %.4f): displacement (%.4f, %.4f), error %.2e cells "
        "(allowed %.1e)\n",
        std::fmod(ex + after.dx + l, l), std::fmod(ey + after.dy + l, l), shift_x + after.dx,
        shift_y + after.dy, error, tolerance);
    std::printf("mass %.12g -> %.12g (relative change %.1e)\n", before.mass, after.mass,
                mass_change);
    std::printf("%s\n", valid ? "Solution validates" : "Solution does NOT validate");
    const double updates = static_cast<double>(s.n) * static_cast<double>(s.n) * s.steps;
    std::printf(
        "rate: %.1f M cell updates/s (%.4f s; kernel %.4f s, halo %.4f s, max over ranks)\n",
        updates / seconds / 1e6, seconds, times[0], times[1]);
  }
  return valid ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!driver::init_mpi_funneled(argc, argv, "isostencil-advection")) return 2;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Kokkos' flags (--kokkos-num-threads=2, ...) go to Kokkos, the rest to CLI11.
  const driver::KokkosArgs kokkos(argc, argv);
  if (kokkos.help()) {
    if (rank == 0) kokkos.print_help();
    MPI_Finalize();
    return 0;
  }
  Settings s;
  CLI::App app{"2-D first-order upwind advection of a Gaussian pulse (isostencil user kernel)"};
  app.add_option("--n", s.n, "global cells per dimension")->check(CLI::Range(8L, 1L << 20));
  app.add_option("--steps", s.steps, "time steps")->check(CLI::NonNegativeNumber);
  app.add_option("--cx", s.cx, "Courant number in x (vx dt / h), > 0")->check(CLI::Range(0.0, 1.0));
  app.add_option("--cy", s.cy, "Courant number in y (vy dt / h), > 0")->check(CLI::Range(0.0, 1.0));
  app.add_option("--sigma", s.sigma, "pulse width (cells)")->check(CLI::PositiveNumber);
  app.add_option("--scheme", s.scheme, "donor (reads (-1,0),(0,-1)) or ctu (also (-1,-1))")
      ->check(CLI::IsMember({"donor", "ctu"}));
  app.add_flag("!--no-overlap", s.overlap, "exchange the halo before updating (no overlap)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = rank == 0 ? app.exit(error) : (error.get_exit_code() != 0);
    MPI_Finalize();
    return code;
  }
  if (s.scheme == "donor" && s.cx + s.cy > 1) {
    if (rank == 0) std::fprintf(stderr, "isostencil-advection: donor cell needs cx + cy <= 1\n");
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  try {
    const driver::KokkosScope scope(kokkos);
    status = run(s, rank);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "isostencil-advection: rank %d: %s\n", rank, error.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
