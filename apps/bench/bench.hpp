// Shared pieces of iso-bench's subcommands: the timing loop of the paper's
// method and the subcommand interface.
#pragma once

#include "report.hpp"
#include "stats.hpp"

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace isobench {

/// Runs `call` `warmup` times untimed, then `reps` times each after an
/// MPI_Barrier on `comm`; each repetition's time is the maximum over the
/// ranks of `comm`. Returns those maxima on every rank.
template <class Call>
std::vector<double> time_repetitions(MPI_Comm comm, int warmup, int reps, Call&& call) {
  for (int k = 0; k < warmup; ++k) {
    MPI_Barrier(comm);
    call();
  }
  std::vector<double> local(static_cast<std::size_t>(reps)), global(static_cast<std::size_t>(reps));
  for (auto& t : local) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    call();
    t = MPI_Wtime() - start;
  }
  MPI_Allreduce(local.data(), global.data(), reps, MPI_DOUBLE, MPI_MAX, comm);
  return global;
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

class Subcommand {
public:
  virtual ~Subcommand() = default;
  virtual CLI::App* app() const = 0;
  /// Runs on every rank after parsing; returns the exit code.
  virtual int run(MPI_Comm world) = 0;
};

std::unique_ptr<Subcommand> make_collectives_command(CLI::App& parent);
std::unique_ptr<Subcommand> make_setup_command(CLI::App& parent);

/// "2x1x1" and "1,1,1".
std::string format_dims(const std::vector<int>& dims);
std::string format_periodic(const std::vector<bool>& periodic);

}  // namespace isobench
