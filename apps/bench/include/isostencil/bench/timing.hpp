// The timing method every benchmark here shares (the paper's Section IV):
// a barrier before each timed call, each repetition's time the maximum over
// the ranks; and the reductions over ranks the benchmarks report. Under
// SimGrid SMPI a common start in simulated time replaces the barrier
// (CommonStart; docs/simulating.md#a-common-start).
#pragma once

#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

#if defined(SMPI_H)  // SimGrid SMPI's mpi.h (halo/src/smpi_compat.hpp)
#include <simgrid/actor.h>
#endif

namespace isobench {

#if defined(SMPI_H)
/// Under SMPI, MPI_Wtime is the simulation's one clock, shared by every
/// rank, so each timed call can start at the same simulated instant: the
/// ranks agree on t0 = the latest rank's clock + a margin (one allreduce)
/// and each sleeps until t0. No barrier lines the ranks up exactly: they
/// leave it at instants that depend on the collectives before it (an
/// allreduce's algorithm moved 8 B points by 10-20 %), and real clocks are
/// not global, so other MPIs keep the barrier. The margin must outlast the
/// agreement's own allreduce. A simulated sleep costs the simulation one
/// event, so it starts generous (1 ms; an allreduce of recursive doubling
/// takes tens of µs at 12 000 ranks) and doubles, alike on every rank,
/// whenever the next agreement learns that a rank found t0 already past.
class CommonStart {
public:
  /// Collective over `comm`: returns t0, on every rank's clock once it
  /// returns (or later, by late(), where the margin was too short).
  double operator()(MPI_Comm comm) {
    double mine[2] = {MPI_Wtime(), late_}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm);
    if (all[1] > 0) margin_ = 2 * (margin_ + all[1]);
    const double t0 = all[0] + margin_;
    const double now = MPI_Wtime();
    late_ = std::max(0.0, now - t0);
    if (now < t0) {
      smpi_bench_end();  // what SMPI's own sleeps do around a simulated sleep
      sg_actor_sleep_until(t0);
      smpi_bench_begin();
    }
    return t0;
  }
  /// How far this rank was past the last t0 when it learnt it (0: on time).
  double late() const { return late_; }

private:
  double margin_ = 1e-3;
  double late_ = 0;
};
#endif

/// Runs `call` (then `after`, untimed) `warmup` times, then `reps` times each
/// after an MPI_Barrier on `comm`, timing `call` alone; each repetition's time
/// is the maximum over the ranks of `comm`. Returns those maxima on every rank.
/// Under SMPI each call starts at a common instant t0 (CommonStart) instead,
/// and a rank's time is its end less t0.
template <class Call, class After>
std::vector<double> time_repetitions(MPI_Comm comm, int warmup, int reps, Call&& call, After&& after) {
#if defined(SMPI_H)
  CommonStart start;
  for (int k = 0; k < warmup; ++k) {
    start(comm);
    call();
    after();
  }
  // Each repetition's time, then how late this rank was for its t0 (a late
  // rank's time includes that delay: never shorter than the truth).
  std::vector<double> local(2 * static_cast<std::size_t>(reps)), global(local.size());
  for (int k = 0; k < reps; ++k) {
    const double t0 = start(comm);
    local[static_cast<std::size_t>(reps + k)] = start.late();
    call();
    local[static_cast<std::size_t>(k)] = MPI_Wtime() - t0;
    after();
  }
  MPI_Allreduce(local.data(), global.data(), 2 * reps, MPI_DOUBLE, MPI_MAX, comm);
  const double late = *std::max_element(global.begin() + reps, global.end());
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (late > 0 && rank == 0)
    std::fprintf(stderr, "iso-bench: a rank started a timed call %.3g us after the common start\n", late * 1e6);
  global.resize(static_cast<std::size_t>(reps));
  return global;
#else
  for (int k = 0; k < warmup; ++k) {
    MPI_Barrier(comm);
    call();
    after();
  }
  std::vector<double> local(static_cast<std::size_t>(reps)), global(static_cast<std::size_t>(reps));
  for (auto& t : local) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    call();
    t = MPI_Wtime() - start;
    after();
  }
  MPI_Allreduce(local.data(), global.data(), reps, MPI_DOUBLE, MPI_MAX, comm);
  return global;
#endif
}

template <class Call>
std::vector<double> time_repetitions(MPI_Comm comm, int warmup, int reps, Call&& call) {
  return time_repetitions(comm, warmup, reps, call, [] {});
}

/// Adds one launch's repetitions to a row: Tukey's rule, median.
inline TukeySummary add_launch(ResultRow& row, const std::vector<double>& times, double tukey_k) {
  const TukeySummary summary = tukey_median(times, tukey_k);
  row.launch_medians.push_back(summary.median);
  row.reps = static_cast<long long>(times.size());
  row.reps_kept += static_cast<long long>(summary.kept);
  row.outliers += static_cast<long long>(summary.removed);
  return summary;
}

/// The maximum of each value over the ranks of `comm`, in place.
inline void max_over_ranks(MPI_Comm comm, double* values, int count) {
  MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, comm);
}
inline double max_over_ranks(MPI_Comm comm, double value) {
  max_over_ranks(comm, &value, 1);
  return value;
}

/// The mean of `value` over the ranks of `comm`.
inline double mean_over_ranks(MPI_Comm comm, double value) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, comm);
  return value / size;
}

}  // namespace isobench
