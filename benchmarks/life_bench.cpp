// isostencil-bench-life: cell updates per second of Life-like automata
// (kernels::Life<D>: 2-D B3/S23, 3-D B5/S45) with overlap off and on, the
// share of a generation spent in the halo exchange, and a byte-copy bound
// measured in the same run.
//
// For each case the global grid is extent^D cells, periodic, decomposed by
// MPI_Dims_create, seeded by fill_random(seed, 0.3):
//
//   bound        a Kokkos copy of uint8 arrays as large as the local field:
//                a Life update reads and writes at least one byte per cell,
//                so the bound is copy bandwidth / 2 B per cell update (per rank)
//   kernel rate  local cells * generations / (time in the update kernels), per rank
//   step rate    global cells * generations / (wall time, max over ranks)
//   halo share   exposed start/wait time / wall time (mean over ranks)
//
// The run validates itself: both overlap settings start from the same seeded
// field and step the same generations, so their live counts must agree.
//
//   mpirun -np 2 isostencil-bench-life --dims 2 --extent 2048 --dims 3 --extent 128
#include "isostencil/kernels/life.hpp"

#include "bench_main.hpp"
#include "isostencil/bench/report.hpp"
#include "isostencil/bench/timing.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

struct Settings {
  std::vector<int> dims{2, 3};
  std::vector<long> extents{2048, 128};
  int generations = 20;
  int repeats = 3;
  int warmup = 2;
  double density = 0.3;
  std::string csv;
};

struct Row {
  int dims = 0;
  long extent = 0;
  std::string rule;
  bool overlap = false;
  long local_cells = 0;
  double seconds_per_generation = 0;
  double kernel_rate = 0;  ///< per rank
  double step_rate = 0;    ///< whole grid
  double halo_share = 0;
  double bound_rate = 0;  ///< per rank
  long live = 0;
  bool valid = true;
};

using isobench::max_over_ranks;
using isobench::mean_over_ranks;

/// Bytes moved per second per rank (read + write) by a copy of `cells`
/// bytes, all ranks at once, best of `repeats` batches of 10.
double copy_bandwidth(long cells, int repeats) {
  Kokkos::View<std::uint8_t*> source("life_bench:source", static_cast<std::size_t>(cells));
  Kokkos::View<std::uint8_t*> target("life_bench:target", static_cast<std::size_t>(cells));
  Kokkos::deep_copy(source, std::uint8_t{1});
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {
    Kokkos::fence();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < 10; ++k)
      Kokkos::parallel_for(
          "life_bench:copy", Kokkos::RangePolicy<>(0, cells),
          KOKKOS_LAMBDA(const long i) { target(i) = source(i); });
    Kokkos::fence();
    const double elapsed = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0) / 10;
    if (r > 0) best = std::min(best, elapsed);  // the first batch warms up
  }
  return 2.0 * static_cast<double>(cells) / best;
}

template <int D>
std::vector<Row> run(const Settings& settings, long extent, const kernels::LifeRule& rule) {
  std::array<long, D> global_extent;
  global_extent.fill(extent);
  std::array<bool, D> periodic;
  periodic.fill(true);
  std::vector<Row> rows;
  for (const bool overlap : {false, true}) {
    kernels::Life<D> life(MPI_COMM_WORLD, global_extent, periodic, rule,
                          kernels::LifeOptions{overlap, {}});
    Row row;
    row.dims = D;
    row.extent = extent;
    row.rule = rule.to_string();
    row.overlap = overlap;
    row.local_cells = 1;
    for (int j = 0; j < D; ++j)
      row.local_cells *= life.grid().interior_extent()[j];
    life.fill_random(2024, settings.density);
    life.step(settings.warmup);
    double best = 1e30;
    for (int r = 0; r < settings.repeats; ++r) {
      life.reset_times();
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      life.step(settings.generations);
      const double elapsed = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);
      const double kernel = max_over_ranks(MPI_COMM_WORLD, life.times().kernel);
      const double halo_share = mean_over_ranks(MPI_COMM_WORLD, life.times().halo / elapsed);
      if (elapsed < best) {
        best = elapsed;
        row.seconds_per_generation = elapsed / settings.generations;
        row.kernel_rate = static_cast<double>(row.local_cells) * settings.generations / kernel;
        row.step_rate = static_cast<double>(life.global_cells()) * settings.generations / elapsed;
        row.halo_share = halo_share;
      }
    }
    row.live = life.live_cells();
    rows.push_back(row);
  }
  // Same seed, same generations: the live counts must agree.
  const bool valid = rows[0].live == rows[1].live;
  const double bound = copy_bandwidth(rows[0].local_cells, settings.repeats) / 2;
  for (Row& row : rows) {
    row.valid = valid;
    row.bound_rate = bound;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  isobench::BenchMain bench(argc, argv, "isostencil-bench-life");
  Settings s;
  CLI::App app{"Life-like automata: cell updates per second, halo shares, a byte-copy bound"};
  app.add_option("--dims", s.dims, "dimension of each case: 2 (B3/S23) or 3 (B5/S45)")
      ->check(CLI::IsMember({2, 3}));
  app.add_option("--extent", s.extents, "global cells per dimension of each case")
      ->check(CLI::PositiveNumber);
  app.add_option("--generations", s.generations, "generations per measurement")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", s.repeats, "measurements per case (the best counts)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", s.warmup, "unmeasured generations first")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--density", s.density, "live fraction of the seeded fill")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--csv", s.csv, "write the results as CSV to this file (rank 0)");
  app.callback([&] {
    if (s.dims.size() != s.extents.size())
      throw CLI::ValidationError("--dims and --extent", "give one --extent per --dims");
  });
  if (const auto code = bench.parse(app)) return *code;

  Kokkos::ScopeGuard kokkos(argc, argv);
  return bench.run([&] {
    isobench::check_output_path(MPI_COMM_WORLD, s.csv);  // a directory or a device: refused before measuring
    std::vector<Row> rows;
    for (std::size_t c = 0; c < s.dims.size(); ++c) {
      const std::vector<Row> more = s.dims[c] == 2
                                        ? run<2>(s, s.extents[c], kernels::LifeRule("B3/S23", 2))
                                        : run<3>(s, s.extents[c], kernels::LifeRule("B5/S45", 3));
      rows.insert(rows.end(), more.begin(), more.end());
    }
    if (bench.rank() == 0) {
      std::printf("isostencil-bench-life: %d rank(s), %d generations x best of %d\n", bench.size(),
                  s.generations, s.repeats);
      std::printf("  %-4s %-7s %-8s %-7s %10s %12s %14s %12s %10s %12s %s\n", "dims", "extent",
                  "rule", "overlap", "ms/gen", "kernel Mu/s", "(% of bound)", "step Mu/s", "halo",
                  "bound Mu/s", "check");
      for (const Row& row : rows)
        std::printf("  %-4d %-7ld %-8s %-7s %10.3f %12.1f %13.1f%% %12.1f %9.1f%% %12.1f %s\n",
                    row.dims, row.extent, row.rule.c_str(), row.overlap ? "on" : "off",
                    1e3 * row.seconds_per_generation, row.kernel_rate / 1e6,
                    100 * row.kernel_rate / row.bound_rate, row.step_rate / 1e6,
                    100 * row.halo_share, row.bound_rate / 1e6,
                    row.valid ? "validates" : "MISMATCH");
      std::printf("  (kernel and bound rates per rank; step rate for the whole grid)\n");
      if (!s.csv.empty()) {
        std::ostringstream csv;
        csv << "ranks,dims,extent,rule,overlap,local_cells,seconds_per_generation,"
               "kernel_updates_per_s_per_rank,step_updates_per_s,halo_share,"
               "bound_updates_per_s_per_rank,live,valid\n";
        for (const Row& row : rows)
          isobench::write_csv_fields(csv, bench.size(), row.dims, row.extent, row.rule,
                                     row.overlap ? 1 : 0, row.local_cells,
                                     row.seconds_per_generation, row.kernel_rate, row.step_rate,
                                     row.halo_share, row.bound_rate, row.live, row.valid ? 1 : 0);
        isobench::write_text_file(s.csv, csv.str());
      }
    }
    int status = 0;
    for (const Row& row : rows)
      if (!row.valid) status = 1;
    return status;
  });
}
