// `isostencil run`: the time loop shared by every kernel, templated on a
// Model (one per kernel and dimension: run_jacobi.cpp, run_life.cpp,
// run_advection.cpp). The loop runs the model in chunks between the steps
// where something else happens (a progress line, a halo validation, an
// output or checkpoint step), so the kernels run many steps per call.
//
// A Model provides (all collective unless noted):
//   const core::Decomposition& decomposition() const;   // not collective
//   std::string describe() const;          // "rule B3/S23", ... (not collective)
//   std::vector<std::string> fields() const;  // checkpointed field names
//   kernels::UpdateTimes advance(long steps);
//   Metric measure(long step);             // residual / live cells / mass
//   iso::HaloValidation validate_halo();   // the current field, naive vs isomorphic,
//                                          // on the kernel's own exchange
//   const iso::Operation& halo_operation();  // the kernel's exchange (what runs, tune's trials)
//   const std::string& halo_note();        // why the algorithm was replaced (HaloPattern::algorithm_note)
//   double time(long step) const;          // simulated time of a step
//   void write_fields(core::FieldSeries&);
//   void write_state(core::CheckpointWriter&);
//   std::vector<Check> checks(long step);  // self-validation at the end
//   std::string first_non_finite();        // optional: finite.hpp
#pragma once

#include "isostencil/driver/context.hpp"
#include "isostencil/driver/signals.hpp"
#include "isostencil/driver/finite.hpp"

#include "isostencil/core/checkpoint.hpp"
#include "isostencil/core/grid.hpp"
#include "isostencil/core/output.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/collectives.hpp"
#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace isostencil::driver {

/// What `run` was asked to do.
struct Setup {
  const deck::Deck* deck = nullptr;
  MpiContext mpi;
  bool quiet = false;
  /// Open checkpoint when restarting (the models read their state from it;
  /// run_model closes it once they have).
  core::CheckpointReader* restart = nullptr;
  std::string restart_path;
  long start_step = 0;
  /// The halo depth the models use (0: the deck's halo.depth); set where
  /// halo.depth = "auto" chose it, with the reason for the run header.
  int depth = 0;
  std::string depth_note;
};

/// One measurement of the state (the progress line shows `text`).
struct Metric {
  std::string name;      ///< "residual", "live cells", "mass"
  double value = 0;      ///< the figure the summary keeps
  std::string text;      ///< "residual 1.2e-03 (l2 3.4e-02)"
  bool converged = false;
  std::map<std::string, double> figures;  ///< for the JSON summary
};

/// One self-check of the solution.
struct Check {
  std::string name;
  bool ok = true;
  std::string detail;
};

/// Deterministic value in [0, 1) from a seed and a global cell index (the
/// same on every decomposition).
KOKKOS_INLINE_FUNCTION double random_unit(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = index + 0x9E3779B97F4A7C15ULL * (seed + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

/// Calls f(local_index, global_index) on the host for every interior cell.
template <int D, class F>
void for_each_interior(const core::Grid<D>& grid, F&& f) {
  std::array<int, D> local{};
  for (int j = 0; j < D; ++j) {
    if (grid.interior_extent()[j] == 0) return;
    local[j] = grid.ghost_lo()[j];
  }
  while (true) {
    f(local, grid.to_global(local));
    int j = D - 1;
    for (; j >= 0; --j) {
      if (++local[j] < grid.ghost_lo()[j] + grid.interior_extent()[j]) break;
      local[j] = grid.ghost_lo()[j];
    }
    if (j < 0) return;
  }
}

/// Row-major offset of a local index in a field of the grid.
template <int D>
std::size_t local_offset(const core::Grid<D>& grid, const std::array<int, D>& local) {
  std::size_t offset = 0;
  for (int j = 0; j < D; ++j)
    offset = offset * static_cast<std::size_t>(grid.field_extent()[j]) + static_cast<std::size_t>(local[j]);
  return offset;
}

/// Global row-major index of a global cell.
template <int D>
std::uint64_t global_linear(const core::Grid<D>& grid, const std::array<long, D>& global) {
  std::uint64_t index = 0;
  for (int j = 0; j < D; ++j)
    index = index * static_cast<std::uint64_t>(grid.global_extent()[j]) +
            static_cast<std::uint64_t>(global[j]);
  return index;
}

/// Min, max and sum of a double field's interior over all ranks (collective).
/// Non-finite values are never hidden: a NaN anywhere makes every figure NaN
/// (MPI_MAX and std::max would drop it), infinities reach min, max and sums.
struct FieldStats {
  double min = 0, max = 0, sum = 0, sum_abs = 0;
};
template <int D, class View>
FieldStats field_stats(const core::Grid<D>& grid, const View& field) {
  Kokkos::fence();
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  double extremes[2] = {-1e300, -1e300};  // -min, max
  double sums[2] = {0.0, 0.0};              // sum, sum of |v|
  for_each_interior<D>(grid, [&](const std::array<int, D>& local, const std::array<long, D>&) {
    const double v = static_cast<double>(host.data()[local_offset<D>(grid, local)]);
    extremes[0] = std::max(extremes[0], -v);
    extremes[1] = std::max(extremes[1], v);
    sums[0] += v;
    sums[1] += v < 0 ? -v : v;
  });
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_DOUBLE, MPI_MAX, grid.comm()));
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, grid.comm()));
  // The sum of |v| is NaN exactly when some v is (no cancellation of
  // infinities in it): then the extremes are NaN too.
  if (sums[1] != sums[1]) return FieldStats{sums[1], sums[1], sums[1], sums[1]};
  return FieldStats{-extremes[0], extremes[1], sums[0], sums[1]};
}

/// Testing aid: with ISOSTENCIL_FAULT_INJECT=RANK:STEP[:PHASE] in the
/// environment, rank RANK throws (on that rank only) once the run reaches
/// STEP at PHASE: "step" (the time loop, default), "output" (after its fields
/// went into the output file, before the step is finished) or "checkpoint"
/// (after its state went into the temporary checkpoint, before the commit).
/// Tests use it to show that a failure on one rank ends the whole job.
void inject_fault(const Setup& setup, long step, const char* phase);

/// The root attributes of the output file.
std::vector<std::pair<std::string, std::string>> output_attributes(const Setup& setup,
                                                                   const std::string& kernel_text);

/// Everything the summary reports; filled by drive().
struct Report {
  std::string kernel, describe, stencil, algorithm_requested, algorithm_chosen;
  std::string algorithm_text;  // iso::describe_choice: with the port limit and tune's reason
  int halo_ports = 0;
  std::vector<iso::TuneTrial> tune_trials;
  bool tune_cached = false;
  long first_step = 0, last_step = 0, steps_requested = 0;
  bool converged = false;
  Metric first_metric, last_metric;
  double total_seconds = 0;
  double kernel_seconds = 0, halo_seconds = 0, io_seconds = 0, validation_seconds = 0,
         measure_seconds = 0, setup_seconds = 0;  ///< maxima over ranks
  long validations = 0;
  bool validation_ok = true;
  std::string validation_message;
  long validated_cells = 0;  ///< ghost cells compared, summed over ranks and validations
  std::vector<long> output_steps;
  std::vector<long> checkpoint_steps;
  std::string h5_path, xmf_path, xdmf_note, checkpoint_path, summary_path;
  std::vector<Check> checks;
  int stopped_signal = 0;  ///< the signal the ranks agreed to stop on (0: ran to the end)
  std::string non_finite;  ///< the finite check that stopped the run (finite.hpp); "" if none
  bool validates() const {
    if (!validation_ok || !non_finite.empty()) return false;
    for (const Check& check : checks)
      if (!check.ok) return false;
    return true;
  }
};

/// Prints the header (rank 0).
void print_header(const Setup& setup, const core::Decomposition& decomposition,
                  const std::string& stencil, const std::string& describe,
                  const std::string& algorithm);
/// One progress line (rank 0): step, metric, time per step, halo share, ETA.
void print_progress(const Setup& setup, long step, const Metric& metric, double seconds_per_step,
                    double halo_share, double eta_seconds);
/// The summary (rank 0) and its JSON file; returns the exit code
/// (stopped_exit_code for a run stopped by a signal).
int finish(const Setup& setup, const core::Decomposition& decomposition, Report& report);

/// Chunks of steps between stop-signal agreements are capped so the ranks
/// agree at least every stop_check_seconds of wall time: the cap is that
/// time over the slowest rank's time per step in the last chunk (agreed in
/// the same reduction, so every rank uses the same cap), starting at 1 step
/// and growing at most 8-fold a chunk.
inline constexpr double stop_check_seconds = 0.5;
inline long next_stop_cap(long cap, long steps, double max_seconds) {
  const double per_step = max_seconds / static_cast<double>(std::max(1L, steps));
  const double fit = per_step > 0 ? stop_check_seconds / per_step : 8.0 * static_cast<double>(cap);
  return std::max(1L, static_cast<long>(std::min(fit, 8.0 * static_cast<double>(cap))));
}

/// The time loop (collective).
template <class Model>
int drive(Model& model, const Setup& setup, const std::string& stencil_text, double setup_seconds) {
  const deck::Deck& deck = *setup.deck;
  const core::Decomposition& decomposition = model.decomposition();
  Report report;
  report.kernel = deck.kernel.name;
  report.describe = model.describe();
  report.stencil = stencil_text;
  report.algorithm_requested = deck.halo.algorithm;
  const iso::Operation& halo = model.halo_operation();
  report.algorithm_chosen = iso::to_string(halo.algorithm());
  report.algorithm_text = iso::describe_choice(halo);
  // A wide halo over uneven blocks runs linear in place of what was asked: say why.
  if (!model.halo_note().empty()) report.algorithm_text += " (" + model.halo_note() + ")";
  report.halo_ports = halo.ports();
  report.tune_trials = halo.tune_trials();
  report.tune_cached = halo.tune_cached();
  report.first_step = setup.start_step;
  report.steps_requested = deck.run.steps;
  report.setup_seconds = setup_seconds;
  print_header(setup, decomposition, stencil_text, report.describe, report.algorithm_text);

  const double start = MPI_Wtime();
  double kernel_seconds = 0, halo_seconds = 0, io_seconds = 0, validation_seconds = 0,
         measure_seconds = 0;
  long step = setup.start_step;
  const long last = deck.run.steps;

  std::optional<core::FieldSeries> series;
  if (deck.output.format == "hdf5") {
    const double t0 = MPI_Wtime();
    series.emplace(decomposition, deck.output_path(".h5"), deck.output_path(".xmf"),
                   output_attributes(setup, report.describe), setup.restart ? step : -1);
    io_seconds += MPI_Wtime() - t0;
    report.h5_path = series->h5_path();
    report.xdmf_note = series->xdmf_note();
    if (report.xdmf_note.empty()) report.xmf_path = series->xmf_path();
  }
  long last_output = -1;
  const auto write_output = [&](long s) {
    const double t0 = MPI_Wtime();
    series->begin_step(s, model.time(s));
    model.write_fields(*series);
    inject_fault(setup, s, "output");
    series->end_step();
    io_seconds += MPI_Wtime() - t0;
    report.output_steps.push_back(s);
    last_output = s;
  };
  const auto write_checkpoint = [&](long s) {
    const double t0 = MPI_Wtime();
    core::CheckpointInfo info;
    info.step = s;
    info.time = model.time(s);
    info.kernel = deck.kernel.name;
    info.deck = deck.effective_toml();
    info.fields = model.fields();
    core::CheckpointWriter writer(decomposition, deck.output_path(".checkpoint.h5"), info);
    model.write_state(writer);
    inject_fault(setup, s, "checkpoint");
    writer.commit();
    io_seconds += MPI_Wtime() - t0;
    report.checkpoint_steps.push_back(s);
    report.checkpoint_path = writer.path();
  };

  // The initial state: output (a fresh run with a series), first measurement.
  if (series && !setup.restart && (deck.output.every > 0 || step == last)) write_output(step);
  double t0 = MPI_Wtime();
  Metric metric = model.measure(step);
  measure_seconds += MPI_Wtime() - t0;
  report.first_metric = metric;
  if (!setup.quiet) print_progress(setup, step, metric, 0.0, 0.0, -1.0);

  const auto next_multiple = [](long s, long every) { return (s / every + 1) * every; };
  double chunk_start = MPI_Wtime();
  long chunk_first = step;
  double chunk_halo = 0, chunk_kernel = 0;
  // A converged state at a measuring step stops here, as it would have
  // stopped the run that wrote a checkpoint at this step.
  bool stop = metric.converged && step % deck.run.residual_every == 0;
  report.converged = stop;
  long measured = step;  // the step `metric` belongs to
  long stop_cap = 1;     // steps per chunk between stop-signal agreements (next_stop_cap)
  // NaN or infinity in a field stops the run (finite.hpp).
  const auto not_finite = [&](long s) {
    report.non_finite = check_finite(model, deck, s, s == setup.start_step || s == last);
    return !report.non_finite.empty();
  };
  if (not_finite(step)) stop = true;
  while (step < last && !stop) {
    // Validation precedes the exchange of step `step` (steps 0, N, 2N, ...).
    if (deck.halo.validate_every > 0 && step % deck.halo.validate_every == 0) {
      t0 = MPI_Wtime();
      const iso::HaloValidation validation = model.validate_halo();
      validation_seconds += MPI_Wtime() - t0;
      ++report.validations;
      long cells = validation.cells_compared;
      ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cells, 1, MPI_LONG, MPI_SUM, decomposition.comm()));
      report.validated_cells += cells;
      if (!validation.ok) {
        report.validation_ok = false;
        report.validation_message = "step " + std::to_string(step) + ": " + validation.message;
        break;
      }
    }
    long next = std::min(last, step + stop_cap);
    for (const long every : {deck.run.residual_every, deck.output.format == "hdf5" ? deck.output.every : 0L,
                             deck.output.checkpoint_every, deck.halo.validate_every,
                             deck.run.check_finite_every})
      if (every > 0) next = std::min(next, next_multiple(step, every));
    const double advance_start = MPI_Wtime();
    const kernels::UpdateTimes times = model.advance(next - step);
    const double advance_seconds = MPI_Wtime() - advance_start;
    kernel_seconds += times.kernel;
    halo_seconds += times.halo;
    chunk_kernel += times.kernel;
    chunk_halo += times.halo;
    const long chunk_steps = next - step;
    step = next;
    inject_fault(setup, step, "step");
    // Stop signals: every rank learns at this step whether any rank got one.
    double max_seconds = 0;
    const int stop_signal = stop_agreed(decomposition.comm(), advance_seconds, max_seconds);
    stop_cap = next_stop_cap(stop_cap, chunk_steps, max_seconds);

    if (step % deck.run.residual_every == 0 || step == last) {
      t0 = MPI_Wtime();
      metric = model.measure(step);
      measured = step;
      measure_seconds += MPI_Wtime() - t0;
      const double now = MPI_Wtime();
      const double per_step = (now - chunk_start) / static_cast<double>(std::max(1L, step - chunk_first));
      const double share = chunk_kernel + chunk_halo > 0 ? chunk_halo / (chunk_kernel + chunk_halo) : 0;
      const double elapsed_per_step =
          (now - start) / static_cast<double>(std::max(1L, step - setup.start_step));
      if (!setup.quiet)
        print_progress(setup, step, metric, per_step, share,
                       elapsed_per_step * static_cast<double>(last - step));
      chunk_start = now;
      chunk_first = step;
      chunk_kernel = chunk_halo = 0;
      if (metric.converged) {
        report.converged = true;
        stop = true;
      }
    }
    if (not_finite(step)) break;  // before the fields go to output or a checkpoint
    if (series && deck.output.every > 0 && step % deck.output.every == 0) write_output(step);
    if (deck.output.checkpoint_every > 0 && step % deck.output.checkpoint_every == 0)
      write_checkpoint(step);
    if (stop_signal != 0 && step < last && !stop) {
      // Stop here: the state of this step as the final output (below), a
      // checkpoint to restart from, the measurement the summary reports.
      test_stop_delay();
      report.stopped_signal = stop_signal;
      if (report.checkpoint_steps.empty() || report.checkpoint_steps.back() != step)
        write_checkpoint(step);
      if (measured != step) {
        t0 = MPI_Wtime();
        metric = model.measure(step);
        measure_seconds += MPI_Wtime() - t0;
        metric.converged = false;  // not a measuring step: the run would have gone on
      }
      break;
    }
  }
  if (series && last_output != step && report.validation_ok) write_output(step);
  if (series) {
    const double t1 = MPI_Wtime();
    series->close();
    io_seconds += MPI_Wtime() - t1;
  }
  report.last_step = step;
  report.last_metric = metric;
  report.total_seconds = MPI_Wtime() - start;
  if (report.validation_ok) report.checks = model.checks(step);

  double timings[6] = {kernel_seconds, halo_seconds, io_seconds, validation_seconds, measure_seconds,
                       report.total_seconds};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, timings, 6, MPI_DOUBLE, MPI_MAX, decomposition.comm()));
  report.kernel_seconds = timings[0];
  report.halo_seconds = timings[1];
  report.io_seconds = timings[2];
  report.validation_seconds = timings[3];
  report.measure_seconds = timings[4];
  report.total_seconds = timings[5];
  return finish(setup, decomposition, report);
}

/// Entry points per kernel (dims dispatched inside); collective.
int run_jacobi(const Setup& setup);
int run_life(const Setup& setup);
int run_advection(const Setup& setup);

/// Collective: the kernel inputs the deck schema cannot judge (a Life rule,
/// an RLE pattern file: read by rank 0, parsed by every rank), checked before
/// anything is created or computed. Throws DeckError on every rank alike.
void check_kernel_inputs(const deck::Deck& deck);

/// `deck.fail(key, ...)` for an iso::Error the kernels raise while the deck
/// is turned into a run (every rank throws the same): "<location>: error: <message>".
[[noreturn]] void fail_with(const deck::Deck& deck, const std::string& key, const std::exception& error);

}  // namespace isostencil::driver
