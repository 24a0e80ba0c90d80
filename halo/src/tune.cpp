// Algorithm::tune (docs/design/cost-model.md#tune): every candidate timed
// at init, the choice kept in the tune cache; and auto's reading of that
// cache (docs/design/cost-model.md#auto-follows-measurements).
#include "cost_model_internal.hpp"
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/file_write.hpp"
#include "iso/tune_cache.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace iso {

namespace {

using detail::Buffers;
using detail::build_native;
using detail::build_scheduled;
using detail::bytes_of;
using detail::Choice;
using detail::model_choice;

// Whether a cached choice is still a candidate of this operation: one of
// auto's, at a port limit considered for it, mpi only where it is a
// candidate on every process (the same verdict on every rank).
bool still_a_candidate(Algorithm algorithm, int ports, const std::vector<int>& port_counts, bool mpi_everywhere) {
  const std::vector<Algorithm>& candidates = automatic_candidates();
  return std::find(candidates.begin(), candidates.end(), algorithm) != candidates.end() &&
         (algorithm == Algorithm::mpi ? mpi_everywhere && ports == 0
                                      : std::find(port_counts.begin(), port_counts.end(), ports) != port_counts.end());
}

// Algorithm::tune (docs/design/cost-model.md#tune): every candidate of auto
// that applies, scheduled ones at every port count auto considers, runs on
// the caller's buffers: one warm-up call each, then turns of one call of
// every candidate, as many as fit in tune_budget_seconds a candidate (at
// least 1, at most tune_max_calls), each call alone after a barrier. Every
// decision uses times maxed over processes, so every rank agrees; the first
// least time wins. A candidate that would post exactly the messages of an
// earlier one is not timed again. The choice is cached
// (docs/design/cost-model.md#the-tune-cache).
constexpr double tune_budget_seconds = 0.01;
constexpr int tune_max_calls = 9;

// What an operation posts, step by step, at every process: ranks, slots and
// local copies (not tags or shifts), combined over ranks. Two candidates of
// equal fingerprints run the same messages.
std::uint64_t execution_fingerprint(const Neighborhood& neighborhood, const Schedule& schedule, int ports) {
  std::uint64_t hash = 0;
  auto refs = [&](const std::vector<BlockRef>& list) {
    hash = mix_fingerprint(hash, list.size());
    for (const BlockRef& ref : list)
      hash = mix_fingerprint(hash, static_cast<std::uint64_t>(ref.buffer) * 1000003u + static_cast<unsigned>(ref.block));
  };
  for (const ExecutionStep& step : execution_steps(schedule, ports, neighborhood.rank())) {
    hash = mix_fingerprint(hash, 0x5bd1e995u + (step.copies ? 1u : 0u));
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
      hash = mix_fingerprint(hash, static_cast<std::uint64_t>(round.send_rank + 2));
      hash = mix_fingerprint(hash, static_cast<std::uint64_t>(round.recv_rank + 2));
      refs(round.send);
      refs(round.recv);
    }
  }
  for (const LocalCopy& copy : schedule.copies) refs({copy.from, copy.to});
  std::uint64_t combined = mix_fingerprint(static_cast<std::uint64_t>(neighborhood.rank()), hash);
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &combined, 1, MPI_UINT64_T, MPI_SUM, neighborhood.comm()));
  return combined;
}

double max_over_ranks(MPI_Comm comm, double value) {
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm));
  return value;
}

// The tune cache's key of this operation, on rank 0 (empty elsewhere, and
// everywhere when rank 0 keeps no cache). Collective.
std::string tune_key(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers, int ports,
                     const std::string& path, std::string& note) {
  const MPI_Comm comm = neighborhood.comm();
  int use = neighborhood.rank() == 0 && !path.empty() ? 1 : 0;
  ISO_MPI_CHECK(MPI_Bcast(&use, 1, MPI_INT, 0, comm));
  if (!use) return {};
  const std::string& machine = neighborhood.machine_signature();
  const BlockBytes bytes = bytes_of(buffers);
  const std::uint64_t mine = block_bytes_digest(bytes);
  // Equal sizes everywhere: the one digest (what `plan --predict` computes);
  // otherwise a combination over ranks.
  std::uint64_t range[2] = {mine, ~mine};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_UINT64_T, MPI_MIN, comm));
  std::uint64_t digest = mine;
  const bool uniform = range[0] == ~range[1];
  if (!uniform) {
    digest = mix_fingerprint(static_cast<std::uint64_t>(neighborhood.rank()), mine);
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &digest, 1, MPI_UINT64_T, MPI_SUM, comm));
  }
  if (neighborhood.rank() != 0) return {};
  const CartGeometry& grid = neighborhood.geometry();
  std::string dims;
  for (int p : grid.sizes) dims += (dims.empty() ? "" : "x") + std::to_string(p);
  std::string sizes = "no blocks";
  if (!bytes.recv.empty()) {
    const auto [least, most] = std::minmax_element(bytes.recv.begin(), bytes.recv.end());
    sizes = *least == *most ? "blocks of " + std::to_string(*least) + " B"
                            : "blocks of " + std::to_string(*least) + " to " + std::to_string(*most) + " B";
    if (!uniform) sizes += " (rank 0; other ranks differ)";
  }
  note = std::string(to_string(collective)) + ", " + std::to_string(neighborhood.size()) + " offsets in " +
         std::to_string(grid.dims()) + "-D, grid " + dims + ", " + sizes +
         ", ports " + std::to_string(ports) + "; " + machine;
  return tune_cache_key(machine, collective, neighborhood.offsets(), grid, ports, digest);
}

// A cached calibration whose choice a tuning measured at more than 1.5
// times the fastest candidate (detail::model_contradicted) is removed, so
// the next job calibrates again instead of keeping the misjudgment for good.
// Only our own cache file that exists: a model the user named (or the
// defaults) is theirs, and a tuning never triggers a calibration of its own.
void expire_contradicted_model(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers,
                               int ports, const std::vector<TuneTrial>& trials) {
  const MPI_Comm comm = neighborhood.comm();
  const CostModelSource source = cost_model_source(comm);
  int ours = 0;  // rank 0's view decides for all
  if (neighborhood.rank() == 0 && !source.named) {
    const PathTarget target = inspect_path(source.path, PathUse::cache);
    ours = target.kind == PathTarget::Kind::regular && target.target == source.path ? 1 : 0;
  }
  ISO_MPI_CHECK(MPI_Bcast(&ours, 1, MPI_INT, 0, comm));
  if (!ours) return;
  Choice choice{Algorithm::automatic, 0, {}};
  try {
    choice = model_choice(neighborhood, collective, buffers, ports);
  } catch (const Error&) {
    return;  // a schedule these offsets do not allow: alike on every rank, as for tune
  }
  // Trials are maxima over ranks: the same verdict everywhere.
  if (neighborhood.rank() == 0 && detail::model_contradicted(trials, choice.algorithm, choice.ports))
    std::remove(source.path.c_str());
}

}  // namespace

namespace detail {

Operation tune(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers,
               const OperationOptions& options) {
  const MPI_Comm comm = neighborhood.comm();
  std::vector<int> targets;
  for (int i = 0; i < neighborhood.size(); ++i) targets.push_back(neighborhood.target_rank(i));
  // mpi merges repeated partners' blocks (see mpi_is_candidate) and refuses
  // them where the library reverses repeated edges: a candidate where it is
  // one at every process.
  const bool mpi_here = !ISO_SMPI && mpi_is_candidate(std::move(targets)) &&
                        (mpi_pairs_repeated_edges_in_order() || !neighborhood.has_repeated_partner());
  const bool mpi_everywhere = max_over_ranks(comm, mpi_here ? 0.0 : 1.0) == 0.0;
  const std::vector<int> port_counts = candidate_port_counts(options.ports);
  // A schedule the offsets do not allow (the torus limits) is no candidate;
  // it fails alike on every rank, and the flag is agreed anyway.
  auto schedule_of = [&](Algorithm algorithm) -> const Schedule* {
    const Schedule* schedule = nullptr;  // the neighborhood's, built once and kept
    try {
      schedule = &neighborhood.schedule(algorithm, collective);
    } catch (const Error&) {
    }
    return max_over_ranks(comm, schedule ? 0.0 : 1.0) == 0.0 ? schedule : nullptr;
  };
  // Scheduled candidates come from the neighborhood's schedules (see schedule_of).
  auto build = [&](Algorithm algorithm, int ports) {
    return algorithm == Algorithm::mpi ? build_native(neighborhood, collective, buffers)
                                       : build_scheduled(neighborhood, algorithm, collective, buffers, ports,
                                                         options.posting);
  };

  // Rank 0 reads the cache and broadcasts what it found: found, algorithm,
  // ports, trial count, then algorithm, ports, calls, seconds per trial.
  std::string path = neighborhood.rank() == 0 ? tune_cache_path() : std::string();
  // A cache path of a kind no cache may be (a directory, a FIFO, ...) is the
  // same error on every rank before anything is timed; a character device
  // (/dev/null) keeps nothing, as "off" does (iso/file_write.hpp).
  std::string path_error;
  if (!path.empty()) {
    const PathTarget target = inspect_path(path, PathUse::cache);
    if (!target.error.empty()) path_error = "the tune cache: " + target.error;
    if (target.keep_nothing) path.clear();
  }
  agree_on_errors(comm, "iso::Algorithm::tune", path_error);
  std::string note;
  const std::string key = tune_key(neighborhood, collective, buffers, options.ports, path, note);
  std::vector<double> found{0};
  std::optional<TuneChoice> cached;
  try {
    if (!key.empty()) cached = tune_cache_find(path, key);
  } catch (const Error&) {
    // Rank 0 alone: the path changed kind since it was looked at. No entry.
  }
  if (cached) {
    found = {1, static_cast<double>(cached->algorithm), static_cast<double>(cached->ports),
             static_cast<double>(cached->trials.size())};
    for (const TuneTrial& t : cached->trials)
      found.insert(found.end(), {static_cast<double>(t.algorithm), static_cast<double>(t.ports),
                                 static_cast<double>(t.calls), t.seconds});
  }
  int count = static_cast<int>(found.size());
  ISO_MPI_CHECK(MPI_Bcast(&count, 1, MPI_INT, 0, comm));
  found.resize(static_cast<std::size_t>(count));
  ISO_MPI_CHECK(MPI_Bcast(found.data(), count, MPI_DOUBLE, 0, comm));
  if (found[0] == 1) {
    const auto algorithm = static_cast<Algorithm>(static_cast<int>(found[1]));
    const int ports = static_cast<int>(found[2]);
    const bool known = still_a_candidate(algorithm, ports, port_counts, mpi_everywhere);
    const Schedule* schedule = known && algorithm != Algorithm::mpi ? schedule_of(algorithm) : nullptr;
    if (known && (algorithm == Algorithm::mpi || schedule)) {
      std::unique_ptr<Operation::Impl> impl = build(algorithm, ports);
      for (std::size_t k = 4; k + 3 < found.size(); k += 4)
        impl->trials.push_back({static_cast<Algorithm>(static_cast<int>(found[k])), static_cast<int>(found[k + 1]),
                                static_cast<int>(found[k + 2]), found[k + 3]});
      impl->tune_cached = true;
      return make_operation(std::move(impl));
    }
  }

  // Every candidate is built and warmed up first, then timed in turns: one
  // call of each per turn, so that every candidate samples the same moments
  // of a machine whose speed drifts (a busy spell falls on all of them, not
  // on whichever ran then).
  std::vector<Operation> ops;
  std::vector<Operation::Impl*> impls;  // ops' own, which moves keep in place
  std::vector<TuneTrial> trials;
  std::vector<std::uint64_t> timed;  // execution fingerprints of the scheduled candidates built
  std::vector<double> warm;
  for (Algorithm algorithm : automatic_candidates()) {
    if (algorithm == Algorithm::mpi && !mpi_everywhere) continue;
    const bool scheduled = algorithm != Algorithm::mpi;
    const Schedule* schedule = scheduled ? schedule_of(algorithm) : nullptr;
    if (scheduled && !schedule) continue;
    for (int ports : scheduled ? port_counts : std::vector<int>{0}) {
      if (scheduled) {
        // On small grids schedules coincide (torus and direct on 2x1x1, a
        // port limit no step reaches): timing twice would only pick noise.
        const std::uint64_t fingerprint = execution_fingerprint(neighborhood, *schedule, ports);
        if (std::find(timed.begin(), timed.end(), fingerprint) != timed.end()) continue;
        timed.push_back(fingerprint);
      }
      std::unique_ptr<Operation::Impl> impl = build(algorithm, ports);
      impls.push_back(impl.get());
      ops.push_back(make_operation(std::move(impl)));
      const double start = MPI_Wtime();
      ops.back().run();
      warm.push_back(MPI_Wtime() - start);
      trials.push_back({algorithm, scheduled ? ports : 0, 0, 0.0});
    }
  }
  // As many turns as fit in tune_budget_seconds a candidate (from the
  // warm-up calls, maximum over ranks), at least 1, at most tune_max_calls.
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, warm.data(), static_cast<int>(warm.size()), MPI_DOUBLE, MPI_MAX, comm));
  double warm_sum = 0;
  for (double w : warm) warm_sum += w;
  const int calls = static_cast<int>(std::clamp(tune_budget_seconds * static_cast<double>(ops.size()) /
                                                    std::max(warm_sum, 1e-9),
                                                1.0, static_cast<double>(tune_max_calls)));
  // Each call alone, started together: calls back to back overlap one
  // call's first step with the last one's tail, which a halo exchange
  // between computations never sees.
  std::vector<std::vector<double>> times(ops.size());
  for (int k = 0; k < calls; ++k)
    for (std::size_t c = 0; c < ops.size(); ++c) {
      ISO_MPI_CHECK(MPI_Barrier(comm));
      const double start = MPI_Wtime();
      ops[c].run();
      times[c].push_back(MPI_Wtime() - start);
    }
  // Each process's median (a spike of the machine's other work decides
  // nothing), maximum over ranks: every rank sees the same figures.
  std::vector<double> medians;
  for (std::vector<double>& t : times) {
    std::nth_element(t.begin(), t.begin() + calls / 2, t.end());
    medians.push_back(t[static_cast<std::size_t>(calls / 2)]);
  }
  ISO_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, medians.data(), static_cast<int>(medians.size()), MPI_DOUBLE, MPI_MAX, comm));
  std::size_t best_trial = 0;
  for (std::size_t c = 0; c < ops.size(); ++c) {
    trials[c].calls = calls;
    trials[c].seconds = medians[c];
    if (medians[c] < medians[best_trial]) best_trial = c;
  }
  Operation best = std::move(ops[best_trial]);
  Operation::Impl* best_impl = impls[best_trial];
  ops.clear();  // the others are freed
  expire_contradicted_model(neighborhood, collective, buffers, options.ports, trials);
  if (!key.empty()) {
    try {
      tune_cache_store(path, key, {trials[best_trial].algorithm, trials[best_trial].ports, trials}, note);
    } catch (const Error&) {
      // An unwritable cache only costs a tuning next time.
    }
  }
  best_impl->trials = std::move(trials);
  return best;
}
// Rank 0's tune cache file when one exists (ISO_TUNE_CACHE or the default
// path; a link is followed), else empty: auto reads nothing then. A path of a
// kind no cache may be is tune's error to report, not auto's.
std::string existing_tune_cache() {
  const std::string path = tune_cache_path();
  if (path.empty()) return {};
  const PathTarget target = inspect_path(path, PathUse::cache);
  return target.error.empty() && !target.keep_nothing && target.kind == PathTarget::Kind::regular ? path
                                                                                                   : std::string();
}

// What tune measured for this operation in an earlier run, where the tune
// cache (at `path`, rank 0) holds an entry that is still a candidate here
// (docs/design/cost-model.md#auto-follows-measurements). Collective: rank 0
// looks up and broadcasts the entry (found, algorithm, ports, then algorithm,
// ports, calls, seconds per trial) in one call of a fixed length.
std::optional<Choice> measured_choice(const Neighborhood& neighborhood, Collective collective,
                                      const BlockBytes& bytes, int ports, const std::vector<int>& port_counts,
                                      bool mpi_everywhere, const Choice& model, const std::string& path) {
  constexpr int most_trials = 16;  // auto's candidates at three port limits: 13
  std::array<double, 3 + 4 * most_trials> found{};
  const std::string& machine = neighborhood.machine_signature();
  if (neighborhood.rank() == 0) {
    std::optional<TuneChoice> cached;
    try {
      cached = tune_cache_find(path, tune_cache_key(machine, collective, neighborhood.offsets(),
                                                    neighborhood.geometry(), ports, block_bytes_digest(bytes)));
    } catch (const Error&) {
      // The path changed kind since it was looked at: no entry.
    }
    const bool usable = cached && cached->trials.size() <= static_cast<std::size_t>(most_trials) &&
                        still_a_candidate(cached->algorithm, cached->ports, port_counts, mpi_everywhere);
    // Within the margin the model's choice stays: there the difference is
    // the noise of tune's few calls (under load its picks among near-equal
    // candidates vary).
    const bool contradicted = usable && tune_entry_contradicts(*cached, model.algorithm, model.ports);
    if (usable && contradicted) {
      found[0] = static_cast<double>(cached->trials.size()) + 1;
      found[1] = static_cast<double>(cached->algorithm);
      found[2] = cached->ports;
      std::size_t k = 3;
      for (const TuneTrial& t : cached->trials) {
        found[k++] = static_cast<double>(t.algorithm);
        found[k++] = t.ports;
        found[k++] = t.calls;
        found[k++] = t.seconds;
      }
    }
  }
  ISO_MPI_CHECK(MPI_Bcast(found.data(), static_cast<int>(found.size()), MPI_DOUBLE, 0, neighborhood.comm()));
  if (found[0] == 0) return std::nullopt;
  Choice choice{static_cast<Algorithm>(static_cast<int>(found[1])), static_cast<int>(found[2]), {}};
  for (std::size_t t = 0, k = 3; t + 1 < static_cast<std::size_t>(found[0]); ++t, k += 4)
    choice.measured.push_back({static_cast<Algorithm>(static_cast<int>(found[k])), static_cast<int>(found[k + 1]),
                               static_cast<int>(found[k + 2]), found[k + 3]});
  return choice;
}

BlockBytes bytes_of(const Buffers& buffers) {
  BlockBytes bytes;
  for (const BlockDesc& block : buffers.send) bytes.send.push_back(block_bytes(block));
  for (const BlockDesc& block : buffers.recv) bytes.recv.push_back(block_bytes(block));
  return bytes;
}

}  // namespace detail

}  // namespace iso
