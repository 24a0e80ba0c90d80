// isostencil-bench-petsc: the framework users would otherwise pick, PETSc's
// DMDA, against ours on the same local sizes (n^3 per rank, periodic,
// MPI_Dims_create process grid), in one run:
//
//   setup   DMDACreate3d + DMSetUp (box stencil, width 1) vs core::Grid<3>
//           (27-point box stencil) + its persistent halo exchange (auto); the
//           fields themselves are allocated outside the timed region on both
//           sides (DMSetUp allocates no vector either)
//   ghost   DMGlobalToLocalBegin/End (INSERT_VALUES) vs our 27-point halo
//           exchange (run(): start + wait), algorithm auto (the contender)
//           and, for the analysis, linear, torus and direct; all take turns
//           within each repetition, in an order drawn afresh for each
//   jacobi  one 7-point Jacobi step (ghost update + sweep) with DMDA: the
//           global-to-local update, then DMDAVecGetArray loops over the owned
//           cells; vs kernels::Jacobi<3> (star Laplacian, no residual,
//           overlap on): cell updates per second per rank for the step and
//           for the sweep alone
//
// Correctness first: after the ghost update both local arrays must hold the
// periodic neighbours' values of the same global pattern, and one Jacobi step
// from the same field must give the same values (cell by cell, by global
// index); otherwise exit 1 before timing.
//
// Method as iso-bench: per repetition MPI_Barrier, the operation, the maximum
// over ranks; Tukey's rule (3 x IQR), median. CSV with the environment.
//
//   mpirun -np 2 isostencil-bench-petsc --csv petsc.csv
#include "isostencil/kernels/jacobi.hpp"

#include "bench_main.hpp"
#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"
#include "isostencil/bench/timing.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <petscdmda.h>
#include <petscversion.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

struct Settings {
  std::vector<long> sizes{8, 32, 128};
  int reps = 30;
  int setup_reps = 10;
  double tukey = 3.0;
  std::string csv;
};

void petsc_check(PetscErrorCode code, const char* what) {
  if (code != 0) throw std::runtime_error(std::string("PETSc error ") + std::to_string(code) + " in " + what);
}
#define PCHECK(call) petsc_check((call), #call)

/// Times `body` `reps` times after a barrier each, max over ranks; Tukey median.
isobench::TukeySummary measure(int reps, double tukey, const std::function<void()>& body) {
  return isobench::tukey_median(isobench::time_repetitions(MPI_COMM_WORLD, 0, reps, body), tukey);
}

/// The field value at a global cell (ours: dims 0,1,2 = PETSc's z,y,x).
double pattern(long g0, long g1, long g2) {
  return static_cast<double>((g0 * 7919 + g1 * 104729 + g2 * 1299709) % 1000003) * 1e-3;
}

struct Row {
  long n = 0;
  std::string what, contender, chosen, status, note;
  isobench::TukeySummary stats;
  double rate = 0;  ///< cell updates/s per rank (jacobi rows)
};

/// A DMDA matching our grid: PETSc's x (fastest) is our dimension 2, z our 0.
DM create_dmda(long n, int stencil_width, DMDAStencilType type) {
  const std::array<int, 3> dims = isobench::process_dims<3>();
  DM da = nullptr;
  PCHECK(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, type,
                      static_cast<PetscInt>(n * dims[2]), static_cast<PetscInt>(n * dims[1]),
                      static_cast<PetscInt>(n * dims[0]), dims[2], dims[1], dims[0], 1, stencil_width, nullptr,
                      nullptr, nullptr, &da));
  PCHECK(DMSetUp(da));
  return da;
}

core::Grid<3> make_grid(long n, core::Stencil stencil) {
  const std::array<int, 3> dims = isobench::process_dims<3>();
  return core::Grid<3>(MPI_COMM_WORLD, core::Grid<3>::global_index{n * dims[0], n * dims[1], n * dims[2]},
                       {true, true, true}, std::move(stencil), dims);
}

/// Fills our field's interior with the pattern (ghosts -1).
void fill_ours(const core::Grid<3>& grid, const core::Field<double, 3>& u) {
  auto host = Kokkos::create_mirror_view(u);
  for (int a = 0; a < grid.field_extent()[0]; ++a)
    for (int b = 0; b < grid.field_extent()[1]; ++b)
      for (int c = 0; c < grid.field_extent()[2]; ++c)
        host(a, b, c) = grid.is_interior({a, b, c})
                            ? pattern(grid.to_global(0, a), grid.to_global(1, b), grid.to_global(2, c))
                            : -1.0;
  Kokkos::deep_copy(u, host);
}

void fill_petsc(DM da, Vec global) {
  PetscInt xs, ys, zs, xm, ym, zm;
  PCHECK(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscScalar*** v = nullptr;
  PCHECK(DMDAVecGetArray(da, global, &v));
  for (PetscInt k = zs; k < zs + zm; ++k)
    for (PetscInt j = ys; j < ys + ym; ++j)
      for (PetscInt i = xs; i < xs + xm; ++i) v[k][j][i] = pattern(k, j, i);
  PCHECK(DMDAVecRestoreArray(da, global, &v));
}

long wrap(long g, long n) { return ((g % n) + n) % n; }

/// Every ghost and owned cell of our exchanged field and of the DMDA local
/// vector holds the pattern of its (wrapped) global index; empty when so.
std::string check_ghosts(const core::Grid<3>& grid, const core::Field<double, 3>& u, DM da, Vec local) {
  std::string error;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  const auto& N = grid.global_extent();
  for (int a = 0; a < grid.field_extent()[0] && error.empty(); ++a)
    for (int b = 0; b < grid.field_extent()[1] && error.empty(); ++b)
      for (int c = 0; c < grid.field_extent()[2] && error.empty(); ++c) {
        const double want = pattern(wrap(grid.to_global(0, a), N[0]), wrap(grid.to_global(1, b), N[1]),
                                    wrap(grid.to_global(2, c), N[2]));
        if (host(a, b, c) != want) error = "ours: wrong value at local (" + std::to_string(a) + "," +
                                           std::to_string(b) + "," + std::to_string(c) + ")";
      }
  PetscInt gxs, gys, gzs, gxm, gym, gzm, M, Nn, P;
  PCHECK(DMDAGetGhostCorners(da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  PCHECK(DMDAGetInfo(da, nullptr, &M, &Nn, &P, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                     nullptr, nullptr));
  PetscScalar*** v = nullptr;
  PCHECK(DMDAVecGetArrayRead(da, local, &v));
  for (PetscInt k = gzs; k < gzs + gzm && error.empty(); ++k)
    for (PetscInt j = gys; j < gys + gym && error.empty(); ++j)
      for (PetscInt i = gxs; i < gxs + gxm && error.empty(); ++i)
        if (v[k][j][i] != pattern(wrap(k, P), wrap(j, Nn), wrap(i, M)))
          error = "DMDA: wrong value at (" + std::to_string(k) + "," + std::to_string(j) + "," + std::to_string(i) + ")";
  PCHECK(DMDAVecRestoreArrayRead(da, local, &v));
  return error;
}

/// One 7-point Jacobi sweep on the DMDA: out = (sum of the 6 neighbours) * scale,
/// neighbours summed in our kernel's order (-e0, +e0, -e1, +e1, -e2, +e2).
void dmda_sweep(DM da, Vec local, Vec out, double scale) {
  PetscInt xs, ys, zs, xm, ym, zm;
  PCHECK(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  const PetscScalar*** u = nullptr;
  PetscScalar*** v = nullptr;
  PCHECK(DMDAVecGetArrayRead(da, local, &u));
  PCHECK(DMDAVecGetArray(da, out, &v));
  for (PetscInt k = zs; k < zs + zm; ++k)
    for (PetscInt j = ys; j < ys + ym; ++j)
      for (PetscInt i = xs; i < xs + xm; ++i) {
        double sum = u[k - 1][j][i];
        sum += u[k + 1][j][i];
        sum += u[k][j - 1][i];
        sum += u[k][j + 1][i];
        sum += u[k][j][i - 1];
        sum += u[k][j][i + 1];
        v[k][j][i] = sum * scale;
      }
  PCHECK(DMDAVecRestoreArray(da, out, &v));
  PCHECK(DMDAVecRestoreArrayRead(da, local, &u));
}

/// Our Jacobi iterate and the DMDA's, compared at every owned cell by global index.
std::string check_jacobi(const core::Grid<3>& grid, const core::Field<double, 3>& ours, DM da, Vec theirs) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
  // Gather the DMDA values of our owned cells: both decompositions give each
  // rank the same block only if the rank orders agree, so look them up
  // through a natural-ordered copy scattered to every rank.
  Vec natural = nullptr, all = nullptr;
  VecScatter to_all = nullptr;
  PCHECK(DMDACreateNaturalVector(da, &natural));
  PCHECK(DMDAGlobalToNaturalBegin(da, theirs, INSERT_VALUES, natural));
  PCHECK(DMDAGlobalToNaturalEnd(da, theirs, INSERT_VALUES, natural));
  PCHECK(VecScatterCreateToAll(natural, &to_all, &all));
  PCHECK(VecScatterBegin(to_all, natural, all, INSERT_VALUES, SCATTER_FORWARD));
  PCHECK(VecScatterEnd(to_all, natural, all, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* values = nullptr;
  PCHECK(VecGetArrayRead(all, &values));
  const auto& N = grid.global_extent();
  std::string error;
  for (int a = grid.ghost_lo()[0]; a < grid.ghost_lo()[0] + grid.interior_extent()[0] && error.empty(); ++a)
    for (int b = grid.ghost_lo()[1]; b < grid.ghost_lo()[1] + grid.interior_extent()[1] && error.empty(); ++b)
      for (int c = grid.ghost_lo()[2]; c < grid.ghost_lo()[2] + grid.interior_extent()[2] && error.empty(); ++c) {
        const long at = (grid.to_global(0, a) * N[1] + grid.to_global(1, b)) * N[2] + grid.to_global(2, c);
        if (std::abs(values[at] - host(a, b, c)) > 1e-12 * (1 + std::abs(host(a, b, c))))
          error = "Jacobi iterates differ at global (" + std::to_string(grid.to_global(0, a)) + "," +
                  std::to_string(grid.to_global(1, b)) + "," + std::to_string(grid.to_global(2, c)) + ")";
      }
  PCHECK(VecRestoreArrayRead(all, &values));
  PCHECK(VecScatterDestroy(&to_all));
  PCHECK(VecDestroy(&all));
  PCHECK(VecDestroy(&natural));
  return error;
}

/// The rows of one local size n.
struct SizeRows {
  long n = 0;
  std::vector<Row> rows;
  void add(const std::string& what, const std::string& contender, const isobench::TukeySummary& stats,
           double rate = 0, const std::string& chosen = {}) {
    Row row;
    row.n = n;
    row.what = what;
    row.contender = contender;
    row.chosen = chosen;
    row.status = "ok";
    row.stats = stats;
    row.rate = rate;
    rows.push_back(row);
  }
};

// Set-up: one untimed round first (the cost model, PETSc's first-use work).
void measure_setup(const Settings& s, const core::HaloOptions& options, SizeRows& out) {
  const long n = out.n;
  DM da = create_dmda(n, 1, DMDA_STENCIL_BOX);
  PCHECK(DMDestroy(&da));
  out.add("setup", "dmda", measure(s.setup_reps, s.tukey, [&] {
        DM d = create_dmda(n, 1, DMDA_STENCIL_BOX);
        PCHECK(DMDestroy(&d));
      }));
  // A field of the grid's shape, allocated once (untimed), for the exchange.
  core::Grid<3> shape = make_grid(n, core::Stencil::box(3, 1));
  auto u = shape.make_field<double>("u");
  { auto warm = shape.halo_exchange(u, options); }
  // The whole set-up, and its two parts (for the analysis): the grid
  // (decomposition, Cartesian communicator, stencil agreement) and the
  // persistent exchange (neighborhood, schedule, datatypes, requests).
  std::vector<double> whole, grid_part, halo_part;
  for (int r = 0; r < s.setup_reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double a = MPI_Wtime();
    core::Grid<3> grid = make_grid(n, core::Stencil::box(3, 1));
    const double b = MPI_Wtime();
    auto halo = grid.halo_exchange(u, options);
    double t[3] = {MPI_Wtime() - a, b - a, 0};
    t[2] = t[0] - t[1];
    isobench::max_over_ranks(MPI_COMM_WORLD, t, 3);
    whole.push_back(t[0]);
    grid_part.push_back(t[1]);
    halo_part.push_back(t[2]);
  }
  out.add("setup", "isostencil", isobench::tukey_median(whole, s.tukey));
  out.add("setup-grid", "isostencil", isobench::tukey_median(grid_part, s.tukey));
  out.add("setup-halo", "isostencil", isobench::tukey_median(halo_part, s.tukey));
}

// Ghost update, 27-point box.
void measure_ghost(const Settings& s, SizeRows& out) {
  const long n = out.n;
  core::Grid<3> grid = make_grid(n, core::Stencil::box(3, 1));
  auto u = grid.make_field<double>("u");
  // auto is the contender; the fixed algorithms show what each would give.
  const std::vector<std::string> names{"auto", "linear", "torus", "direct"};
  std::vector<core::HaloExchange> halos;
  for (const std::string& name : names) {
    core::HaloOptions o;
    o.algorithm = iso::parse_algorithm(name);
    halos.push_back(grid.halo_exchange(u, o));
  }
  DM da = create_dmda(n, 1, DMDA_STENCIL_BOX);
  Vec global = nullptr, local = nullptr;
  PCHECK(DMCreateGlobalVector(da, &global));
  PCHECK(DMCreateLocalVector(da, &local));
  fill_petsc(da, global);
  PCHECK(DMGlobalToLocalBegin(da, global, INSERT_VALUES, local));
  PCHECK(DMGlobalToLocalEnd(da, global, INSERT_VALUES, local));
  for (auto& halo : halos) {
    fill_ours(grid, u);
    halo.run();
    iso::agree_on_errors(MPI_COMM_WORLD, "ghost update check", check_ghosts(grid, u, da, local));
  }
  // Contender 0 is DMDA, then ours; they take turns within each repetition, in an order drawn
  // afresh for each (the same on every rank): a fixed rotation let one contender follow DMDA's
  // 16 MiB copy in most repetitions, and at 128^3 the one that follows it runs ~2x slower.
  std::vector<std::function<void()>> ops;
  ops.emplace_back([&] {
    PCHECK(DMGlobalToLocalBegin(da, global, INSERT_VALUES, local));
    PCHECK(DMGlobalToLocalEnd(da, global, INSERT_VALUES, local));
  });
  for (auto& halo : halos) ops.emplace_back([&halo] { halo.run(); });
  for (int w = 0; w < 3; ++w)
    for (auto& op : ops) op();
  std::vector<std::vector<double>> times(ops.size());
  std::vector<std::size_t> order(ops.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 draw(20261206);
  for (int r = 0; r < s.reps; ++r) {
    std::shuffle(order.begin(), order.end(), draw);
    for (const std::size_t c : order) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      ops[c]();
      times[c].push_back(isobench::max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - start));
    }
  }
  out.add("ghost27", "dmda", isobench::tukey_median(times[0], s.tukey));
  for (std::size_t h = 0; h < halos.size(); ++h)
    out.add("ghost27", h == 0 ? "isostencil" : "isostencil-" + names[h], isobench::tukey_median(times[h + 1], s.tukey),
        0, iso::to_string(halos[h].algorithm()));
  PCHECK(VecDestroy(&local));
  PCHECK(VecDestroy(&global));
  PCHECK(DMDestroy(&da));
}

// Jacobi 7-point step: ghost update + sweep.
void measure_jacobi(const Settings& s, const core::HaloOptions& options, SizeRows& out) {
  const long n = out.n;
  const long cells = n * n * n;
  const long steps = std::clamp(2'000'000L / cells, 1L, 50L);
  core::Grid<3> grid = make_grid(n, kernels::star_laplacian(3, 1.0));
  auto u = grid.make_field<double>("u");
  fill_ours(grid, u);
  kernels::JacobiOptions jo;
  jo.residual_every = 0;
  jo.final_residual = false;
  jo.halo = options;
  kernels::Jacobi<3> jacobi(grid, u, {}, jo);
  DM da = create_dmda(n, 1, DMDA_STENCIL_STAR);
  Vec x = nullptr, y = nullptr, local = nullptr;
  PCHECK(DMCreateGlobalVector(da, &x));
  PCHECK(DMCreateGlobalVector(da, &y));
  PCHECK(DMCreateLocalVector(da, &local));
  fill_petsc(da, x);
  const double scale = 1.0 / 6.0;  // star_laplacian(3, 1): w / diag
  auto dmda_step = [&](double& halo_s, double& sweep_s) {
    const double a = MPI_Wtime();
    PCHECK(DMGlobalToLocalBegin(da, x, INSERT_VALUES, local));
    PCHECK(DMGlobalToLocalEnd(da, x, INSERT_VALUES, local));
    const double b = MPI_Wtime();
    dmda_sweep(da, local, y, scale);
    halo_s += b - a;
    sweep_s += MPI_Wtime() - b;
    std::swap(x, y);
  };
  jacobi.run(1);
  double ignore_h = 0, ignore_s = 0;
  dmda_step(ignore_h, ignore_s);
  iso::agree_on_errors(MPI_COMM_WORLD, "Jacobi check", check_jacobi(grid, jacobi.solution(), da, x));
  jacobi.run(2);
  dmda_step(ignore_h, ignore_s);
  dmda_step(ignore_h, ignore_s);
  // Per repetition `steps` steps; the sweep-only time is each side's own split.
  std::vector<double> ours_step, ours_sweep, theirs_step, theirs_sweep;
  for (int r = 0; r < s.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const kernels::JacobiSummary summary = jacobi.run(steps);
    double t[2] = {summary.total_seconds, summary.kernel_seconds};
    isobench::max_over_ranks(MPI_COMM_WORLD, t, 2);
    ours_step.push_back(t[0] / steps);
    ours_sweep.push_back(t[1] / steps);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    double h = 0, w = 0;
    for (long k = 0; k < steps; ++k) dmda_step(h, w);
    double p[2] = {MPI_Wtime() - start, w};
    isobench::max_over_ranks(MPI_COMM_WORLD, p, 2);
    theirs_step.push_back(p[0] / steps);
    theirs_sweep.push_back(p[1] / steps);
  }
  const double c = static_cast<double>(cells);
  auto tukey_of = [&](const std::vector<double>& v) { return isobench::tukey_median(v, s.tukey); };
  const auto os = tukey_of(ours_step), ok = tukey_of(ours_sweep), ts = tukey_of(theirs_step),
             tk = tukey_of(theirs_sweep);
  out.add("jacobi7-step", "isostencil", os, c / os.median, iso::to_string(options.algorithm));
  out.add("jacobi7-step", "dmda", ts, c / ts.median);
  out.add("jacobi7-sweep", "isostencil", ok, c / ok.median);
  out.add("jacobi7-sweep", "dmda", tk, c / tk.median);
  PCHECK(VecDestroy(&local));
  PCHECK(VecDestroy(&y));
  PCHECK(VecDestroy(&x));
  PCHECK(DMDestroy(&da));
}

std::vector<Row> run_size(const Settings& s, long n) {
  SizeRows out;
  out.n = n;
  core::HaloOptions options;
  options.algorithm = iso::Algorithm::automatic;
  measure_setup(s, options, out);
  measure_ghost(s, out);
  measure_jacobi(s, options, out);
  return out.rows;
}

}  // namespace

int main(int argc, char** argv) {
  isobench::BenchMain bench(argc, argv, "isostencil-bench-petsc");
  Settings s;
  CLI::App app{"isostencil vs PETSc DMDA: setup, 27-point ghost update, 7-point Jacobi"};
  app.add_option("--size", s.sizes, "local n (n^3 per rank); repeat for several (default 8 32 128)")
      ->check(CLI::Range(2L, 1024L));
  app.add_option("--reps", s.reps, "timed repetitions")->check(CLI::Range(1, 100000));
  app.add_option("--setup-reps", s.setup_reps, "timed set-up repetitions")->check(CLI::Range(1, 100000));
  app.add_option("--tukey", s.tukey, "Tukey fence factor")->check(CLI::PositiveNumber);
  app.add_option("--csv", s.csv, "write the rows as CSV to this file (rank 0)");
  if (const auto code = bench.parse(app)) return *code;
  // PETSc's own options stay out of its way: it sees no arguments.
  int petsc_argc = 1;
  char** petsc_argv = argv;
  if (PetscInitialize(&petsc_argc, &petsc_argv, nullptr, nullptr) != 0) {
    std::fprintf(stderr, "isostencil-bench-petsc: PetscInitialize failed\n");
    return 1;
  }
  // PETSc ends after Kokkos and before MPI (destroyed in reverse order).
  struct PetscScope {
    ~PetscScope() { PetscFinalize(); }
  } petsc;
  Kokkos::ScopeGuard kokkos(argc, argv);
  return bench.run([&] {
    isobench::check_output_path(MPI_COMM_WORLD, s.csv);  // a directory or a device: refused before measuring
    const int rank = bench.rank();
    const isobench::Environment env = isobench::Environment::collect(MPI_COMM_WORLD);
    const std::array<int, 3> dims = isobench::process_dims<3>();
    const std::string proc_dims = isobench::format_dims(std::vector<int>(dims.begin(), dims.end()));
    if (rank == 0)
      std::printf("isostencil-bench-petsc: %d rank(s), PETSc %d.%d.%d, %s, %d reps (Tukey %.1f x IQR, median)\n",
                  bench.size(), PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR,
                  env.mpi_library.c_str(), s.reps, s.tukey);
    std::vector<Row> rows;
    for (long n : s.sizes) {
      std::vector<Row> more = run_size(s, n);
      if (rank == 0)
        for (const Row& r : more)
          std::printf("  n=%-4ld %-14s %-11s %12.2f us %s\n", n, r.what.c_str(), r.contender.c_str(),
                      r.stats.median * 1e6,
                      r.rate > 0 ? (std::to_string(r.rate / 1e6) + " M cell updates/s per rank").c_str() : "");
      std::fflush(stdout);
      rows.insert(rows.end(), more.begin(), more.end());
    }
    if (rank == 0 && !s.csv.empty()) {
      std::ostringstream out;
      out << "local_n,cells_per_rank,measure,contender,chosen,status,median_us,reps_kept,outliers,"
             "updates_per_s_per_rank,petsc_version,mpi_library,mpi_version,np,proc_dims,hostname,date\n";
      const std::string petsc_version = std::to_string(PETSC_VERSION_MAJOR) + "." +
                                        std::to_string(PETSC_VERSION_MINOR) + "." +
                                        std::to_string(PETSC_VERSION_SUBMINOR);
      for (const Row& r : rows)
        isobench::write_csv_fields(out, r.n, r.n * r.n * r.n, r.what, r.contender, r.chosen, r.status,
                                   r.stats.median * 1e6, r.stats.kept, r.stats.removed,
                                   r.rate > 0 ? std::to_string(r.rate) : "", petsc_version,
                                   isobench::csv_field(env.mpi_library), env.mpi_version, env.np, proc_dims,
                                   isobench::csv_field(env.hostname), env.date);
      isobench::write_text_file(s.csv, out.str());
    }
    return 0;
  });
}
