// isostencil-bench-stencil: cell updates per second of the stencil sweeps
// next to a memory-bandwidth bound measured in the same run, and the share of
// a step spent in the halo exchange with and without overlap.
//
// For each local size n (an n³ block per rank, periodic in all dimensions,
// global grid n·P per dimension on the MPI_Dims_create process grid):
//
//   bound    STREAM-like copy (b = a) and triad (c = a + s b) with Kokkos on
//            1-D arrays of (n+2)³ doubles (one field with its ghost layers),
//            all ranks at once. A Jacobi sweep must read u and write u_new at
//            least once: 16 B per cell update, so the bound is
//            copy bandwidth / 16 B (per rank), the same accounting as STREAM's
//            copy (whose write-allocate traffic is not counted either). The
//            copy and triad are sampled before every repeat of every kernel;
//            each row's bound is the best sample taken around its repeats.
//   jacobi7  kernels::Jacobi<3>, star_laplacian (7 points, uniform-star path)
//   jacobi27 kernels::Jacobi<3>, box_laplacian (27 points, box-by-class path)
//   user7    the 7-point Jacobi update written as a user kernel
//            (kernels::make_stencil_update, Neighbors reads)
//   jacobi7 dK, jacobi27 dK (with --depth K > 1): the same on a grid of halo
//            depth K, one exchange per block of K sweeps, "tiled" (blocks run
//            tile by tile in cache, kernels/tiles.hpp) or "untiled" (box by
//            box, each sweep streaming the fields through memory); --tiles
//            picks which. Their rate counts interior updates only, so a tiled
//            row may pass the copy bound: that is what tiling is for.
//   jacobi7-mdrange, jacobi7-cells (on request, for comparison): the jacobi7
//            functor through Kokkos' MDRangePolicy (for_each_cell_mdrange,
//            one call per cell) and through the host row loops cell by cell
//            (without the vectorized row()).
//
// Each kernel runs `--sweeps` sweeps per measurement, `--repeats` times, with
// overlap off and on; the best repeat (smallest time, max over ranks) counts.
//   kernel rate  n³ · sweeps / (time in the update kernels), per rank: the
//                sweep itself, compared with the bound (% of bound)
//   step rate    n³ · sweeps / (wall time of the sweeps), per rank
//   halo share   exposed start/wait time / wall time (mean over ranks)
// Residuals are not computed during the measured sweeps.
//
//   mpirun -np 2 isostencil-bench-stencil --size 256 --size 128 --csv stencil.csv
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil/kernels/user_kernel.hpp"

#include "bench_main.hpp"
#include "isostencil/bench/report.hpp"
#include "isostencil/bench/timing.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

struct Settings {
  std::vector<long> sizes;
  int sweeps = 10;
  int repeats = 3;
  int warmup = 2;
  std::vector<std::string> kernels{"jacobi7", "jacobi27", "user7"};
  std::vector<int> depths{1};
  std::string tiles = "both";    // for depths > 1: on, off or both
  std::string overlap = "both";  // off, on or both
  std::vector<int> tile;         // tile extents (empty: the default)
  bool narrow_rows = false;
  std::string csv;
};

std::vector<bool> overlaps(const Settings& s) {
  if (s.overlap == "on") return {true};
  if (s.overlap == "off") return {false};
  return {false, true};
}

struct Stream {
  double copy_gbps = 0;   ///< per rank, best sample
  double triad_gbps = 0;  ///< per rank, best sample
};

using StreamPolicy = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<long>>;

/// Initializes the STREAM-like arrays (a free function: CUDA allows no device
/// lambda in a constructor).
void stream_init(long cells, const Kokkos::View<double*>& a, const Kokkos::View<double*>& b,
                 const Kokkos::View<double*>& c) {
  Kokkos::parallel_for(
      "stream init", StreamPolicy(0, cells), KOKKOS_LAMBDA(const long i) {
        a(i) = 1.0;
        b(i) = 2.0;
        c(i) = 0.0;
      });
  Kokkos::fence();
}

/// The STREAM-like arrays of one size, kept for the whole size so that the
/// bound can be sampled between the kernels' repeats (the machine's memory
/// bandwidth drifts when other work shares it; interleaving keeps each
/// kernel's rate and its bound from the same stretch of time).
class StreamProbe {
public:
  StreamProbe(long cells, MPI_Comm comm)
      : cells_(cells),
        comm_(comm),
        a_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream a"), cells),
        b_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream b"), cells),
        c_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream c"), cells) {
    stream_init(cells_, a_, b_, c_);
    sample();  // warm up
    best_ = Stream{};
  }
  /// Times one copy and one triad (all ranks at once, max over ranks) and
  /// keeps the best of each since the last reset().
  void sample() {
    auto a = a_, b = b_, c = c_;
    const double copy = timed([&] {
      Kokkos::parallel_for(
          "stream copy", Policy(0, cells_), KOKKOS_LAMBDA(const long i) { b(i) = a(i); });
    });
    const double scalar = 3.0;
    const double triad = timed([&] {
      Kokkos::parallel_for(
          "stream triad", Policy(0, cells_),
          KOKKOS_LAMBDA(const long i) { c(i) = a(i) + scalar * b(i); });
    });
    best_.copy_gbps = std::max(best_.copy_gbps, 16.0 * static_cast<double>(cells_) / copy / 1e9);
    best_.triad_gbps = std::max(best_.triad_gbps, 24.0 * static_cast<double>(cells_) / triad / 1e9);
  }
  Stream best() const { return best_; }
  void reset() { best_ = Stream{}; }

private:
  using Policy = StreamPolicy;
  template <class Body>
  double timed(const Body& body) {
    return isobench::time_repetitions(comm_, 0, 1, [&] {
      body();
      Kokkos::fence();
    })[0];
  }

  long cells_;
  MPI_Comm comm_;
  Kokkos::View<double*> a_, b_, c_;
  Stream best_;
};

/// One batch of sweeps on this rank.
struct Batch {
  double total = 0, kernel = 0, halo = 0;
};

/// A batch as all ranks saw it: max times, mean halo share.
struct BatchOverRanks {
  double total = 0, kernel = 0, halo = 0, halo_share = 0;
};

BatchOverRanks over_ranks(const Batch& batch, MPI_Comm comm) {
  double max[3] = {batch.total, batch.kernel, batch.halo};
  isobench::max_over_ranks(comm, max, 3);
  return {max[0], max[1], max[2],
          isobench::mean_over_ranks(comm, batch.total > 0 ? batch.halo / batch.total : 0)};
}

/// The best (smallest max time) of `repeats` batches, all ranks starting
/// together, with a bound sample before each batch.
struct Measured {
  BatchOverRanks batch;
  Stream stream;
};
template <class RunBatch>
Measured best_of(int repeats, MPI_Comm comm, StreamProbe& probe, const RunBatch& run_batch) {
  Measured best;
  probe.reset();
  for (int r = 0; r < repeats; ++r) {
    probe.sample();
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    Batch batch = run_batch();
    batch.total = MPI_Wtime() - start;
    const BatchOverRanks result = over_ranks(batch, comm);
    if (r == 0 || result.total < best.batch.total) best.batch = result;
  }
  best.stream = probe.best();
  return best;
}

struct Row {
  long n = 0;
  std::string kernel;
  bool overlap = false;
  Measured measured;
};

void fill(const core::Grid<3>& grid, const core::Field<double, 3>& u) {
  Kokkos::Array<long, 3> offset;
  Kokkos::Array<int, 3> lo;
  for (int j = 0; j < 3; ++j) {
    offset[j] = grid.global_offset()[j];
    lo[j] = grid.ghost_lo()[j];
  }
  kernels::for_each_cell<3>(
      "bench fill", kernels::split_interior(grid).interior,
      KOKKOS_LAMBDA(const kernels::Index<3>& x) {
        const long g = (offset[0] + x[0] - lo[0]) * 7 + (offset[1] + x[1] - lo[1]) * 3 +
                       (offset[2] + x[2] - lo[2]);
        u(x[0], x[1], x[2]) = static_cast<double>(g % 17) * 0.0625;
      });
  Kokkos::fence();
}

std::vector<Row> run_jacobi(const Settings& s, long n, bool box, int depth, bool tiles,
                            StreamProbe& probe) {
  const std::array<long, 3> local{n, n, n};
  const std::array<int, 3> dims = isobench::process_dims<3>();
  const double h = 1.0 / static_cast<double>(n);
  core::Grid<3> grid(MPI_COMM_WORLD, {local[0] * dims[0], local[1] * dims[1], local[2] * dims[2]},
                     {true, true, true},
                     box ? kernels::box_laplacian(3, h) : kernels::star_laplacian(3, h), dims,
                     depth);
  auto u = grid.make_field<double>("u");
  fill(grid, u);
  std::string name = box ? "jacobi27" : "jacobi7";
  if (depth > 1) name += " d" + std::to_string(depth) + (tiles ? " tiled" : " untiled");
  int rank = 0;
  MPI_Comm_rank(grid.comm(), &rank);
  std::vector<Row> rows;
  for (bool overlap : overlaps(s)) {
    kernels::JacobiOptions options;
    options.residual_every = 0;
    options.final_residual = false;
    options.overlap = overlap;
    options.tiles = tiles;
    options.tile_extent = s.tile;
    kernels::Jacobi<3> jacobi(grid, u, {}, options);
    if (depth > 1 && rank == 0) std::printf("  (%s: %s)\n", name.c_str(), jacobi.tiling().c_str());
    jacobi.run(s.warmup);
    const Measured best = best_of(s.repeats, grid.comm(), probe, [&] {
      const kernels::JacobiSummary summary = jacobi.run(s.sweeps);
      return Batch{0, summary.kernel_seconds, summary.halo_seconds};
    });
    rows.push_back({n, name, overlap, best});
  }
  return rows;
}

/// Hides a functor's row(): the row loop then calls it cell by cell.
template <class Functor>
struct CellByCell {
  Functor functor;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const kernels::Index<3>& x) const { functor(x); }
};

/// The 7-point sweep of jacobi7 driven another way, for comparison:
/// "mdrange" through Kokkos' MDRangePolicy (default tiling, one functor call
/// per cell), "cells" through the host row loops but one call per cell (no
/// vectorized row()).
std::vector<Row> run_jacobi_variant(const Settings& s, long n, const std::string& variant,
                                    StreamProbe& probe) {
  const std::array<int, 3> dims = isobench::process_dims<3>();
  const double h = 1.0 / static_cast<double>(n);
  core::Grid<3> grid(MPI_COMM_WORLD, {n * dims[0], n * dims[1], n * dims[2]}, {true, true, true},
                     kernels::star_laplacian(3, h), dims);
  core::Field<double, 3> fields[2] = {grid.make_field<double>("u"), grid.make_field<double>("v")};
  fill(grid, fields[0]);
  Kokkos::deep_copy(fields[1], fields[0]);
  std::vector<core::HaloExchange> halos;
  halos.push_back(grid.halo_exchange(fields[0]));
  halos.push_back(grid.halo_exchange(fields[1]));
  const auto stride = kernels::detail::layout_right_strides<3>(fields[0]);
  const kernels::UpdatePlan<3> plan = kernels::plan_update(grid, "bench jacobi7 " + variant);
  std::vector<Row> rows;
  for (bool overlap : overlaps(s)) {
    int current = 0;
    auto sweep = [&] {
      const kernels::detail::StarSweep<3, false, false> functor{fields[current].data(),
                                                                fields[1 - current].data(),
                                                                nullptr,
                                                                stride,
                                                                1.0 / 6,
                                                                h * h / 6,
                                                                -6 / (h * h),
                                                                1 / (h * h)};
      kernels::UpdateTimes t;
      if (variant == "mdrange")
        t = kernels::detail::run_with_halo(
            plan, halos[current], overlap, false,
            [&](const std::string& label, const kernels::Box<3>& box) {
              kernels::for_each_cell_mdrange<3>(label, box, functor);
            });
      else
        t = kernels::apply_with_halo<3>(plan, halos[current], overlap,
                                        CellByCell<decltype(functor)>{functor});
      current = 1 - current;
      return t;
    };
    for (int w = 0; w < s.warmup; ++w)
      sweep();
    const Measured best = best_of(s.repeats, grid.comm(), probe, [&] {
      Batch batch;
      for (int k = 0; k < s.sweeps; ++k) {
        const kernels::UpdateTimes t = sweep();
        batch.kernel += t.kernel;
        batch.halo += t.halo;
      }
      return batch;
    });
    rows.push_back({n, "jacobi7-" + variant, overlap, best});
  }
  return rows;
}

std::vector<Row> run_user(const Settings& s, long n, StreamProbe& probe) {
  const std::array<int, 3> dims = isobench::process_dims<3>();
  core::Grid<3> grid(MPI_COMM_WORLD, {n * dims[0], n * dims[1], n * dims[2]}, {true, true, true},
                     core::Stencil::star(3, 1), dims);
  std::vector<Row> rows;
  for (bool overlap : overlaps(s)) {
    auto in = grid.make_field<double>("in");
    auto out = grid.make_field<double>("out");
    fill(grid, in);
    kernels::StencilUpdateOptions options;
    options.overlap = overlap;
    options.label = "bench user7";
    const double sixth = 1.0 / 6.0;
    auto step = kernels::make_stencil_update(
        grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 3>& u) {
          double sum = u(-1, 0, 0);
          sum += u(1, 0, 0);
          sum += u(0, -1, 0);
          sum += u(0, 1, 0);
          sum += u(0, 0, -1);
          sum += u(0, 0, 1);
          return sum * sixth;
        });
    for (int w = 0; w < s.warmup; ++w)
      step.advance();
    const Measured best = best_of(s.repeats, grid.comm(), probe, [&] {
      Batch batch;
      for (int k = 0; k < s.sweeps; ++k) {
        const kernels::UpdateTimes t = step.advance();
        batch.kernel += t.kernel;
        batch.halo += t.halo;
      }
      return batch;
    });
    rows.push_back({n, "user7", overlap, best});
  }
  return rows;
}

/// One local size: the bound first, then every kernel's rows, printed and
/// (rank 0, when `csv`) written.
void run_size(const Settings& s, long n, int rank, int size, std::ostringstream* csv) {
  const long field_cells = (n + 2) * (n + 2) * (n + 2);
  StreamProbe probe(field_cells, MPI_COMM_WORLD);
  for (int r = 0; r < s.repeats; ++r)
    probe.sample();
  const Stream first = probe.best();
  if (rank == 0) {
    std::printf(
        "\nlocal %ld^3 per rank: copy %.2f GB/s, triad %.2f GB/s per rank -> bound %.1f M "
        "updates/s per "
        "rank (16 B/update); each row samples its own bound between repeats\n",
        n, first.copy_gbps, first.triad_gbps, first.copy_gbps * 1e9 / 16.0 / 1e6);
    std::printf("  %-21s %-7s %12s %10s %9s %12s %12s %10s\n", "kernel", "overlap",
                "kernel Mu/s", "bound Mu/s", "% bound", "step Mu/s", "total Mu/s",
                "halo share");
  }
  std::vector<Row> rows;
  for (const std::string& kernel : s.kernels) {
    if (kernel == "jacobi7" || kernel == "jacobi27") {
      for (const int depth : s.depths)
        for (const bool tiles : {false, true}) {
          if (depth > 1 && (tiles ? s.tiles == "off" : s.tiles == "on")) continue;
          if (depth == 1 && tiles) continue;
          std::vector<Row> more = run_jacobi(s, n, kernel == "jacobi27", depth, tiles, probe);
          rows.insert(rows.end(), more.begin(), more.end());
        }
      continue;
    }
    std::vector<Row> more = kernel == "user7"             ? run_user(s, n, probe)
                            : kernel == "jacobi7-mdrange" ? run_jacobi_variant(s, n, "mdrange", probe)
                                                          : run_jacobi_variant(s, n, "cells", probe);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  for (const Row& row : rows) {
    const BatchOverRanks& batch = row.measured.batch;
    const Stream& stream = row.measured.stream;
    const double bound = stream.copy_gbps * 1e9 / 16.0;  // updates/s per rank
    const double updates = static_cast<double>(n) * n * n * s.sweeps;
    const double kernel_rate = updates / batch.kernel;
    const double step_rate = updates / batch.total;
    const double pct = 100.0 * kernel_rate / bound;
    if (rank == 0) {
      std::printf("  %-21s %-7s %12.1f %10.1f %8.1f%% %12.1f %12.1f %9.1f%%\n",
                  row.kernel.c_str(), row.overlap ? "on" : "off", kernel_rate / 1e6,
                  bound / 1e6, pct, step_rate / 1e6, step_rate * size / 1e6,
                  100.0 * batch.halo_share);
      if (csv)
        isobench::write_csv_fields(*csv, size, n, row.kernel, row.overlap ? "on" : "off",
                                   s.sweeps, batch.total, batch.kernel, batch.halo,
                                   batch.halo_share, kernel_rate, step_rate, step_rate * size,
                                   stream.copy_gbps, stream.triad_gbps, bound, pct);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  isobench::BenchMain bench(argc, argv, "isostencil-bench-stencil");
  Settings s;
  CLI::App app{"Stencil sweep rates vs a STREAM-like bandwidth bound, and halo-exchange shares"};
  app.add_option("--size", s.sizes,
                 "local cells per dimension (n³ per rank); repeat for several (default 64)")
      ->check(CLI::Range(4L, 2048L));
  app.add_option("--sweeps", s.sweeps, "sweeps per measurement")->check(CLI::PositiveNumber);
  app.add_option("--repeats", s.repeats, "measurements per case (the best counts)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", s.warmup, "unmeasured sweeps first")->check(CLI::NonNegativeNumber);
  app.add_option(
         "--kernels", s.kernels,
         "kernels to run: jacobi7, jacobi27, user7; for comparison also jacobi7-mdrange "
         "(Kokkos' MDRangePolicy) and jacobi7-cells (row loops without the vectorized row())")
      ->check(CLI::IsMember({"jacobi7", "jacobi27", "user7", "jacobi7-mdrange", "jacobi7-cells"}));
  app.add_option("--depth", s.depths,
                 "halo depths of the jacobi7/jacobi27 rows; repeat for several (default 1)")
      ->check(CLI::Range(1, 8));
  app.add_option("--tiles", s.tiles,
                 "depths > 1: blocks tiled in cache (on), box by box (off) or both (default)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  app.add_option("--tile", s.tile, "tile extents, 3 values (default: the kernels' choice)")
      ->expected(3);
  app.add_option("--overlap", s.overlap, "overlap of exchange and update: off, on or both (default)")
      ->check(CLI::IsMember({"off", "on", "both"}));
  app.add_flag("--narrow-rows", s.narrow_rows,
               "7-point rows in the SSE2 build even where the CPU has AVX2 (kernels' wide_rows off)");
  app.add_option("--csv", s.csv, "write the results as CSV to this file (rank 0)");
  if (const auto code = bench.parse(app)) return *code;
  if (s.sizes.empty()) s.sizes.push_back(64);

  if (s.narrow_rows) kernels::detail::wide_rows = false;
  Kokkos::ScopeGuard kokkos(argc, argv);
  return bench.run([&] {
    const int rank = bench.rank(), size = bench.size();
    isobench::check_output_path(MPI_COMM_WORLD, s.csv);  // a directory or a device: refused before measuring
    std::unique_ptr<std::ostringstream> csv;
    if (rank == 0 && !s.csv.empty()) {
      csv = std::make_unique<std::ostringstream>();
      *csv << "ranks,local_n,kernel,overlap,sweeps,time_s,kernel_s,halo_s,halo_share,"
              "kernel_updates_per_s_per_rank,step_updates_per_s_per_rank,step_updates_per_s_total,"
              "copy_GBps_per_rank,triad_GBps_per_rank,bound_updates_per_s_per_rank,kernel_pct_of_"
              "bound\n";
    }
    if (rank == 0)
      std::printf("isostencil-bench-stencil: %d rank(s), Kokkos %s, %d sweeps x best of %d, "
                  "7-point rows %s\n",
                  size, Kokkos::DefaultExecutionSpace::name(), s.sweeps, s.repeats,
                  kernels::detail::wide_rows ? "AVX2" : "SSE2");
    for (long n : s.sizes) {
      run_size(s, n, rank, size, csv.get());
      if (csv) isobench::write_text_file(s.csv, csv->str());  // whole after each size: a killed run keeps its rows
    }
    return 0;
  });
}
