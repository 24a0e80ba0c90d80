// The timing method every benchmark here shares (the paper's Section IV):
// a barrier before each timed call, each repetition's time the maximum over
// the ranks; and the reductions over ranks the benchmarks report.
#pragma once

#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace isobench {

/// Runs `call` (then `after`, untimed) `warmup` times, then `reps` times each
/// after an MPI_Barrier on `comm`, timing `call` alone; each repetition's time
/// is the maximum over the ranks of `comm`. Returns those maxima on every rank.
template <class Call, class After>
std::vector<double> time_repetitions(MPI_Comm comm, int warmup, int reps, Call&& call, After&& after) {
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
