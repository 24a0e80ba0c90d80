#include "iso/cost_model.hpp"

#include "cost_model_internal.hpp"
#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace iso {

namespace {

// Median of per-repetition times, maxed over ranks.
double measure(MPI_Comm comm, int repetitions, const std::function<void()>& body) {
  // Three batches, each the median of its repetitions and the slowest rank's;
  // the least batch counts: a busy moment of the machine (another job, a
  // daemon, a cold start) inflates one batch, and a calibration taken then
  // would stay in the cache for good.
  const int batch = std::max(3, repetitions / 3);
  std::vector<double> times(static_cast<std::size_t>(batch));
  double least = 0;
  for (int b = 0; b < 3; ++b) {
    for (double& time : times) {
      ISO_MPI_CHECK(MPI_Barrier(comm));
      const double begin = MPI_Wtime();
      body();
      time = MPI_Wtime() - begin;
    }
    std::nth_element(times.begin(), times.begin() + batch / 2, times.end());
    double median = times[static_cast<std::size_t>(batch / 2)];
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MAX, comm));
    least = b == 0 ? median : std::min(least, median);
  }
  return least;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace

const std::vector<Algorithm>& automatic_candidates() {
  static const std::vector<Algorithm> candidates = [] {
    std::vector<Algorithm> out;
    for (const AlgorithmInfo& info : algorithm_table())
      if (info.algorithm != Algorithm::automatic && info.algorithm != Algorithm::tune)
        out.push_back(info.algorithm);
    return out;
  }();
  return candidates;
}

Algorithm cheapest_algorithm(const std::vector<double>& seconds, bool mpi_candidate) {
  const std::vector<Algorithm>& candidates = automatic_candidates();
  if (seconds.size() != candidates.size())
    throw Error("iso::cheapest_algorithm: " + std::to_string(seconds.size()) + " predictions for " +
                std::to_string(candidates.size()) + " candidates");
  std::size_t best = candidates.size();
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (candidates[k] == Algorithm::mpi && !mpi_candidate) continue;
    if (best == candidates.size() || seconds[k] < seconds[best]) best = k;
  }
  return candidates[best];
}

std::vector<int> candidate_port_counts(int ports) {
  if (ports < 0) throw Error("iso::candidate_port_counts: ports is " + std::to_string(ports));
  return ports == 0 ? std::vector<int>{0, 1, 2} : std::vector<int>{ports};
}

CheapestChoice cheapest_choice(const std::vector<double>& seconds, const std::vector<int>& port_counts,
                               bool mpi_candidate) {
  const std::vector<Algorithm>& candidates = automatic_candidates();
  const std::size_t n = port_counts.size();
  if (n == 0 || seconds.size() != candidates.size() * n)
    throw Error("iso::cheapest_choice: " + std::to_string(seconds.size()) + " predictions for " +
                std::to_string(candidates.size()) + " candidates at " + std::to_string(n) + " port counts");
  // Each candidate at its best port count (the first of least time), then
  // the candidates by cheapest_algorithm's rule.
  std::vector<double> least(candidates.size());
  std::vector<int> at(candidates.size());
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    std::size_t best = 0;
    for (std::size_t p = 1; p < n; ++p)
      if (seconds[k * n + p] < seconds[k * n + best]) best = p;
    least[k] = seconds[k * n + best];
    at[k] = port_counts[best];
  }
  const Algorithm algorithm = cheapest_algorithm(least, mpi_candidate);
  const std::size_t index =
      static_cast<std::size_t>(std::find(candidates.begin(), candidates.end(), algorithm) - candidates.begin());
  return {algorithm, algorithm == Algorithm::mpi ? 0 : at[index], least[index]};
}

bool mpi_is_candidate(std::vector<int> targets) {
  targets.erase(std::remove(targets.begin(), targets.end(), -1), targets.end());
  std::sort(targets.begin(), targets.end());
  return std::adjacent_find(targets.begin(), targets.end()) == targets.end();
}

CostModel CostModel::load(const std::string& path) {
  // A directory or a FIFO would read as nothing, or block: say what it is.
  const PathTarget target = inspect_path(path, PathUse::output);
  if (target.kind != PathTarget::Kind::regular && target.kind != PathTarget::Kind::missing)
    throw Error("iso::CostModel::load: \"" + path + "\"" +
                (target.target != path ? " (a link to \"" + target.target + "\")" : std::string()) + " is " +
                describe(target.kind) + ", not a file of figures");
  std::ifstream in(path);
  if (!in) throw Error("iso::CostModel::load: cannot read " + path);
  CostModel model;
  model.source = path;
  std::string line;
  int number = 0;
  constexpr int n = 17;
  const char* keys[n] = {"alpha",       "beta",       "gamma",   "delta",     "eager_limit",   "alpha_large",
                         "beta_large",  "version",    "beta_copy", "delta_large", "beta_scattered",
                         "alpha_gathered", "delta_gathered", "ranks_per_node", "alpha_node", "beta_node",
                         "delta_post"};
  double version = 0;
  double* slots[n] = {&model.alpha,      &model.beta,        &model.gamma,       &model.delta,
                      &model.eager_limit, &model.alpha_large, &model.beta_large,  &version,
                      &model.beta_copy,  &model.delta_large, &model.beta_scattered,
                      &model.alpha_gathered, &model.delta_gathered, &model.ranks_per_node,
                      &model.alpha_node, &model.beta_node, &model.delta_post};
  bool seen[n] = {};
  while (std::getline(in, line)) {
    ++number;
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string key, equals;
    double value = 0;
    if (!(fields >> key >> equals >> value) || equals != "=" || !(value >= 0) || !(fields >> std::ws).eof())
      throw Error(path + ":" + std::to_string(number) + ": expected \"key = non-negative number\", got \"" + line + "\"");
    const auto* found = std::find_if(std::begin(keys), std::end(keys), [&](const char* k) { return key == k; });
    if (found == std::end(keys))
      throw Error(path + ":" + std::to_string(number) + ": unknown key \"" + key +
                  "\" (allowed: alpha, beta, gamma, delta, eager_limit, alpha_large, beta_large, beta_copy, "
                  "delta_large, beta_scattered, alpha_gathered, delta_gathered, ranks_per_node, alpha_node, "
                  "beta_node, delta_post, version)");
    if (key == "version" && value != 1 && value != 2)
      throw Error(path + ":" + std::to_string(number) + ": version must be 1 or 2, got \"" + line + "\"");
    *slots[found - std::begin(keys)] = value;
    seen[found - std::begin(keys)] = true;
  }
  for (int k = 0; k < 4; ++k)
    if (!seen[k]) throw Error(path + ": missing key \"" + keys[k] + "\" (a cost model needs alpha, beta, gamma and delta)");
  const int regime = seen[4] + seen[5] + seen[6];
  if (regime != 0 && regime != 3)
    throw Error(path + ": eager_limit, alpha_large and beta_large go together (a second regime needs all three)");
  model.version = seen[7] ? static_cast<int>(version) : (regime ? 2 : 1);
  if (model.version == 2 && regime == 0)
    throw Error(path + ": version 2 needs eager_limit, alpha_large and beta_large");
  if (model.version == 1 && (regime != 0 || std::any_of(seen + 8, seen + n, [](bool b) { return b; })))
    throw Error(path + ": version 1 has no eager_limit, alpha_large, beta_large, beta_copy, delta_large, "
                       "beta_scattered, alpha_gathered, delta_gathered, ranks_per_node, alpha_node, beta_node "
                       "or delta_post");
  if (seen[11] != seen[12])
    throw Error(path + ": alpha_gathered and delta_gathered go together (the line of gathered messages needs both)");
  if (seen[13] != seen[14] || seen[13] != seen[15])
    throw Error(path + ": ranks_per_node, alpha_node and beta_node go together (a second route class needs all three)");
  if (seen[13] && (model.ranks_per_node < 1 || model.ranks_per_node != static_cast<double>(
                                                                            static_cast<long>(model.ranks_per_node))))
    throw Error(path + ": ranks_per_node must be a whole number of at least 1, got " +
                std::to_string(model.ranks_per_node));
  return model;
}

namespace {

// The file a model is saved as (CostModel::save and the calibration cache).
std::string model_text(const CostModel& model, const std::string& machine) {
  std::ostringstream out;
  out << "# isostencil cost model (seconds): round = alpha + beta*bytes + gamma*entries, messages of\n"
      << "# more than eager_limit bytes alpha_large + beta_large*bytes (eager_limit 0: one regime);\n"
      << "# copies inside the process beta_copy*bytes (0: beta); each further message of a step\n"
      << "# delta (eager) or delta_large (rendezvous; 0: delta); a rendezvous message of several\n"
      << "# blocks beta_scattered per byte (0: beta_large), with start-up alpha_gathered and each\n"
      << "# further one delta_gathered (0: alpha_large, delta_large);\n"
      << "# native neighborhood collective adds delta per extra message. Delete to recalibrate.\n";
  if (!machine.empty()) out << "# measured on: " << machine << "\n";
  out.precision(17);  // loads back exactly: every rank and run sees the same model
  out << "version = 2\nalpha = " << model.alpha << "\nbeta = " << model.beta << "\ngamma = " << model.gamma
      << "\ndelta = " << model.delta << "\neager_limit = " << model.eager_limit
      << "\nalpha_large = " << model.alpha_large << "\nbeta_large = " << model.beta_large
      << "\nbeta_copy = " << model.beta_copy << "\ndelta_large = " << model.delta_large
      << "\nbeta_scattered = " << model.beta_scattered << "\nalpha_gathered = " << model.alpha_gathered
      << "\ndelta_gathered = " << model.delta_gathered << "\n";
  // Written only where set, so a model without them saves as it always did.
  if (model.ranks_per_node > 0)
    out << "ranks_per_node = " << model.ranks_per_node << "\nalpha_node = " << model.alpha_node
        << "\nbeta_node = " << model.beta_node << "\n";
  if (model.delta_post > 0) out << "delta_post = " << model.delta_post << "\n";
  return out.str();
}

}  // namespace

void CostModel::save(const std::string& path, const std::string& machine) const {
  // An output (--save-model): iso/file_write.hpp's rule, a reader (another
  // job, or one racing a job killed mid-write) sees the old file or the new
  // one whole, never a truncated figure that still parses.
  try {
    write_file(path, model_text(*this, machine), PathUse::output);
  } catch (const Error& error) {
    throw Error(std::string("iso::CostModel::save: ") + error.what());
  }
}

CostModel CostModel::calibrate(MPI_Comm comm, double budget_seconds) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Pairs (0,1), (2,3), ...; a lone last rank talks to itself.
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  const int large = 1 << 20, entries = 512, burst = 16, rendezvous_burst = 8;
  std::vector<char> send(large), recv(large);
  const int repetitions = std::max(5, static_cast<int>(budget_seconds * 25));
  std::vector<MPI_Request> requests(2 * burst);
  // `count` messages of `bytes` each way started together and completed,
  // through persistent requests: a step as an operation runs it (its
  // start-up and per-message costs differ from MPI_Sendrecv's).
  auto step = [&](int count, int bytes, int reps) {
    for (int k = 0; k < count; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * static_cast<std::size_t>(bytes);
      ISO_MPI_CHECK(MPI_Recv_init(recv.data() + at, bytes, MPI_BYTE, partner, 2, comm, &requests[2 * k]));
      ISO_MPI_CHECK(MPI_Send_init(send.data() + at, bytes, MPI_BYTE, partner, 2, comm, &requests[2 * k + 1]));
    }
    const double seconds = measure(comm, reps, [&] {
      ISO_MPI_CHECK(MPI_Startall(2 * count, requests.data()));
      ISO_MPI_CHECK(MPI_Waitall(2 * count, requests.data(), MPI_STATUSES_IGNORE));
    });
    for (int k = 0; k < 2 * count; ++k) ISO_MPI_CHECK(MPI_Request_free(&requests[k]));
    return seconds;
  };
  // Message times from 1 byte to 1 MiB, powers of two from 256 B to 64 KiB
  // in between: both sides of any common eager limit.
  std::vector<double> sizes{1}, times;
  for (int b = 256; b <= 65536; b *= 2) sizes.push_back(b);
  sizes.push_back(large);
  for (double b : sizes) times.push_back(step(1, static_cast<int>(b), b <= 4096 ? repetitions * 3 : repetitions));
  const double small = times.front(), big = times.back();
  // Scattered entries versus the same bytes contiguous: the datatype cost.
  MPI_Datatype scattered = MPI_DATATYPE_NULL;
  ISO_MPI_CHECK(MPI_Type_vector(entries, 8, 16, MPI_BYTE, &scattered));
  ISO_MPI_CHECK(MPI_Type_commit(&scattered));
  const double strided = measure(comm, repetitions * 2, [&] {
    ISO_MPI_CHECK(MPI_Sendrecv(send.data(), 1, scattered, partner, 1, recv.data(), 1, scattered, partner, 1, comm,
                               MPI_STATUS_IGNORE));
  });
  ISO_MPI_CHECK(MPI_Type_free(&scattered));
  const double packed = measure(comm, repetitions * 2, [&] {
    ISO_MPI_CHECK(MPI_Sendrecv(send.data(), entries * 8, MPI_BYTE, partner, 1, recv.data(), entries * 8, MPI_BYTE,
                               partner, 1, comm, MPI_STATUS_IGNORE));
  });
  const double many = step(burst, 1, repetitions * 2);
  CostModel model;
  model.source = "calibrated";
  model.gamma = std::max((strided - packed) / (2.0 * entries), 1e-11);
  model.delta = std::max((many - small) / (burst - 1), 1e-10);
  // The eager limit: of the candidate switch points (each measured size below
  // 64 KiB), the one whose two straight lines, eager through 1 B and the
  // limit, rendezvous through the next size and 1 MiB, fit every measured
  // time best (relative error). Every rank has the same times (maxed over
  // ranks), hence the same fit.
  double best_error = -1;
  std::size_t switch_index = 1;
  for (std::size_t k = 1; k + 2 < sizes.size(); ++k) {
    CostModel fit = model;
    fit.alpha = std::max(small, 1e-9);
    fit.beta = std::max((times[k] - small) / (sizes[k] - 1), 1e-13);
    fit.eager_limit = sizes[k];
    fit.beta_large = std::max((big - times[k + 1]) / (sizes.back() - sizes[k + 1]), 1e-13);
    fit.alpha_large = std::max(times[k + 1] - fit.beta_large * sizes[k + 1], 1e-9);
    double error = 0;
    for (std::size_t j = 0; j < sizes.size(); ++j) {
      const double relative = fit.message_seconds(sizes[j]) / times[j] - 1;
      error += relative * relative;
    }
    if (best_error < 0 || error < best_error) best_error = error, model = fit, switch_index = k;
  }
  // The switch lies somewhere between the two sizes (Open MPI's shared
  // memory: a 4 KiB fragment less its header): bisect, a size counting as
  // rendezvous where its time lies nearer that line. Messages just below a
  // power of two (a 9-block message of 448 B blocks) then fall on the right
  // side.
  double eager = sizes[switch_index], beyond = sizes[switch_index + 1];
  while (beyond - eager > 64) {
    const int middle = static_cast<int>((eager + beyond) / 2) / 8 * 8;
    const double t = step(1, middle, repetitions * 3);
    const double as_eager = model.alpha + model.beta * middle;
    const double as_rendezvous = model.alpha_large + model.beta_large * middle;
    if (2 * t < as_eager + as_rendezvous) eager = middle;
    else beyond = middle;
  }
  model.eager_limit = eager;
  // Many eager messages at once (a step of the straightforward algorithm)
  // cost more per byte than one: each is copied in and out of shared
  // fragments that run short. Their rate at the limit is the eager beta.
  const int limit = static_cast<int>(model.eager_limit);
  // At worst the messages go one after another: a longer burst is a process
  // descheduled mid-measurement (oversubscribed or loaded nodes), not a rate.
  const double full = std::min(step(burst, limit, repetitions), burst * step(1, limit, repetitions * 3));
  model.beta = std::max(model.beta, (full - model.alpha - (burst - 1) * model.delta) / (double(burst) * limit));
  // Rendezvous messages at once: each handshake costs about a start-up of
  // its own (measured: nearly in series), far above an eager delta. Timed at
  // 8 KiB (or just beyond a higher limit), a halo block's size: just beyond
  // a low limit (1.5 KiB on Open MPI's shared memory) a further message
  // costs half what one of 8 KiB does, whose single-copy transfer is a
  // system call of its own.
  const std::size_t beyond_index = static_cast<std::size_t>(
      std::find_if(sizes.begin() + static_cast<long>(switch_index) + 1, sizes.end(),
                   [](double b) { return b >= 8192; }) -
      sizes.begin());
  const std::size_t burst_index = beyond_index < sizes.size() - 1 ? beyond_index : switch_index + 1;
  const int beyond_bytes = static_cast<int>(sizes[burst_index]);
  const double handshakes =
      std::min(step(rendezvous_burst, beyond_bytes, repetitions), rendezvous_burst * times[burst_index]);
  model.delta_large = std::max((handshakes - model.alpha_large -
                                rendezvous_burst * model.beta_large * beyond_bytes) / (rendezvous_burst - 1),
                               model.delta);
  // Messages gathered by a derived datatype from 9 pieces with gaps between
  // them (as a torus step sends a face's combined blocks), one and two each
  // way: just above the eager limit (start-up and further message) and four
  // times larger, at least 72 KiB (per byte). Two at once for the slope,
  // since a step's gathered messages overlap part of their packing and steps
  // of two are what the schedules send most.
  const int pieces = 9;
  const int small_piece = (static_cast<int>(model.eager_limit) / pieces + 64) / 64 * 64;
  const int large_piece = std::max(8192, 4 * small_piece);
  const std::size_t needed = static_cast<std::size_t>(2 * 2 * pieces) * static_cast<std::size_t>(large_piece);
  if (send.size() < needed) send.resize(needed), recv.resize(needed);
  auto gathered_step = [&](int count, int piece, int reps) {
    MPI_Datatype gathered = MPI_DATATYPE_NULL;
    ISO_MPI_CHECK(MPI_Type_vector(pieces, piece, 2 * piece, MPI_BYTE, &gathered));
    ISO_MPI_CHECK(MPI_Type_commit(&gathered));
    const std::size_t span = static_cast<std::size_t>(2 * pieces) * static_cast<std::size_t>(piece);
    for (int k = 0; k < count; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * span;
      ISO_MPI_CHECK(MPI_Recv_init(recv.data() + at, 1, gathered, partner, 3, comm, &requests[2 * k]));
      ISO_MPI_CHECK(MPI_Send_init(send.data() + at, 1, gathered, partner, 3, comm, &requests[2 * k + 1]));
    }
    const double seconds = measure(comm, reps, [&] {
      ISO_MPI_CHECK(MPI_Startall(2 * count, requests.data()));
      ISO_MPI_CHECK(MPI_Waitall(2 * count, requests.data(), MPI_STATUSES_IGNORE));
    });
    for (int k = 0; k < 2 * count; ++k) ISO_MPI_CHECK(MPI_Request_free(&requests[k]));
    ISO_MPI_CHECK(MPI_Type_free(&gathered));
    return seconds;
  };
  const double small_bytes = double(pieces) * small_piece, large_bytes = double(pieces) * large_piece;
  // The three times fit the line exactly; a busy moment in one of them (TCP
  // under load: one measurement 50 times its neighbours) gives a line with a
  // negative start-up or a slope far off the contiguous one. Such a fit is
  // measured again, and after three tries the line falls back to the
  // contiguous per-byte figure through the small message's time.
  bool fitted = false;
  double one_small = 0, two_small = 0;
  for (int attempt = 0; attempt < 3 && !fitted; ++attempt) {
    one_small = gathered_step(1, small_piece, repetitions * 3);
    two_small = gathered_step(2, small_piece, repetitions * 3);
    const double two_large = gathered_step(2, large_piece, repetitions);
    const double slope = (two_large - two_small) / (2 * (large_bytes - small_bytes));
    const double start = one_small - slope * small_bytes, further = two_small - one_small - slope * small_bytes;
    fitted = slope > 0 && slope <= 20 * model.beta_large && start >= 0.2 * one_small && further >= 0;
    if (fitted) model.beta_scattered = slope, model.alpha_gathered = start, model.delta_gathered = further;
  }
  if (!fitted) {
    model.beta_scattered = model.beta_large;
    model.alpha_gathered = std::max(one_small - model.beta_large * small_bytes, 0.2 * one_small);
    model.delta_gathered = std::max(two_small - one_small - model.beta_large * small_bytes, model.delta);
  }
  model.beta_scattered = std::max(model.beta_scattered, 1e-13);
  model.alpha_gathered = std::max(model.alpha_gathered, 1e-9);
  model.delta_gathered = std::max(model.delta_gathered, 1e-10);
  // Copies inside the process: memcpy of 256 KiB, the size of a halo's
  // blocks (26 of 8 KiB), which stay in cache between an operation's steps;
  // 1 MiB, out of cache, costs about 1.7 times as much per byte.
  const int copied = 1 << 18;
  model.beta_copy = std::max(measure(comm, repetitions, [&] { std::memcpy(recv.data(), send.data(), copied); }) / copied,
                             1e-13);
  return model;
}

CostModel CostModel::builtin() {
  // Open MPI 4.1.4, shared memory (vader, CMA), 2 ranks on the project's
  // 2-core machine, idle; medians of repeated calibrations, rounded.
  CostModel model;
  model.alpha = 7e-7, model.beta = 3e-10, model.gamma = 2e-9, model.delta = 2.5e-7;
  model.eager_limit = 1792, model.alpha_large = 1.3e-6, model.beta_large = 8e-11;
  model.beta_copy = 2e-11, model.delta_large = 1.2e-6, model.beta_scattered = 1.7e-10;
  model.version = 2;
  model.source = "defaults";
  return model;
}

std::string CostModel::cache_directory() {
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::string(dir) + "/isostencil/";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/isostencil/";
  return "";
}

bool detail::model_contradicted(const std::vector<TuneTrial>& trials, Algorithm algorithm, int ports) {
  if (trials.empty()) return false;
  double fastest = trials.front().seconds;
  for (const TuneTrial& trial : trials) fastest = std::min(fastest, trial.seconds);
  for (const TuneTrial& trial : trials)
    if (trial.algorithm == algorithm && (algorithm == Algorithm::mpi || trial.ports == ports))
      return trial.seconds > 1.5 * fastest;
  return false;
}

std::uint64_t detail::text_digest(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

std::string detail::hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string CostModel::cache_path(const std::string& machine) {
  const std::string name = "cost_model-" + detail::hex16(detail::text_digest(machine)) + ".txt";
  const std::string directory = cache_directory();
  return directory.empty() ? "isostencil_" + name : directory + name;
}

std::string CostModel::default_cache_path() { return cache_path(machine_signature(MPI_COMM_SELF)); }

std::string machine_signature(MPI_Comm comm) {
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Hosts: processes that share memory form one domain; count the domains.
  MPI_Comm local = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  int local_rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(local, &local_rank));
  ISO_MPI_CHECK(MPI_Comm_free(&local));
  int hosts = local_rank == 0 ? 1 : 0;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &hosts, 1, MPI_INT, MPI_SUM, comm));

  std::string text;
  if (rank == 0) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    ISO_MPI_CHECK(MPI_Get_library_version(library, &length));
    std::string name(library, static_cast<std::size_t>(length));
    name = name.substr(0, name.find_first_of("\n,"));
    text = name + "; hosts " + std::to_string(hosts);
    for (const char* variable : {"OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl", "MPIR_CVAR_CH4_NETMOD",
                                 "MPIR_CVAR_NEMESIS_NETMOD", "FI_PROVIDER", "UCX_TLS", "I_MPI_FABRICS"})
      if (const char* value = std::getenv(variable); value && *value)
        text += std::string("; ") + variable + "=" + value;
  }
  int size = static_cast<int>(text.size());
  ISO_MPI_CHECK(MPI_Bcast(&size, 1, MPI_INT, 0, comm));
  text.resize(static_cast<std::size_t>(size));
  ISO_MPI_CHECK(MPI_Bcast(text.data(), size, MPI_CHAR, 0, comm));
  return text;
}

CostModelSource cost_model_source(MPI_Comm comm) {
  // Every rank takes part in the signature, whatever rank 0's environment says.
  const std::string machine = machine_signature(comm);
  if (const char* chosen = std::getenv("ISO_COST_MODEL"); chosen && *chosen) return {chosen, true, {}};
  return {CostModel::cache_path(machine), false, machine};
}

const CostModel& CostModel::for_comm(MPI_Comm comm) {
  static std::unique_ptr<CostModel> cached;
  if (cached) return *cached;
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const CostModelSource source = cost_model_source(comm);
  const std::string& path = source.path;
  // Rank 0 decides and broadcasts, so every rank takes the same branch.
  // loaded?, alpha, beta, gamma, delta, eager_limit, alpha_large, beta_large, version
  // ..., beta_copy, delta_large, beta_scattered, alpha_gathered, delta_gathered
  // ..., ranks_per_node, alpha_node, beta_node, delta_post
  double figures[18] = {};
  std::string error;
  bool keep_nothing = false;  // a character device (/dev/null): read nothing, write nothing
  if (rank == 0) {
    CostModel model;
    const PathTarget target =
        path == "defaults" ? PathTarget{PathTarget::Kind::regular, path, {}, false} : inspect_path(path, PathUse::cache);
    keep_nothing = target.keep_nothing;
    if (path == "defaults") {
      model = CostModel::builtin();
      figures[0] = 1;
    } else if (!target.error.empty()) {
      error = target.error;  // named or not: a path of a kind no cache may be
    } else if (!keep_nothing) {
      try {
        model = CostModel::load(path);
        // Our own cache of the one-regime format, or from before rendezvous
        // bursts or gathered messages were measured: measured again below.
        figures[0] =
            source.named || (model.version >= 2 && model.delta_large > 0 && model.beta_scattered > 0 &&
                             model.alpha_gathered > 0)
                ? 1
                : 0;
      } catch (const Error& e) {
        if (source.named) error = e.what();  // a file the user named must work
      }
    }
    if (figures[0] != 0) {
      figures[1] = model.alpha, figures[2] = model.beta, figures[3] = model.gamma, figures[4] = model.delta;
      figures[5] = model.eager_limit, figures[6] = model.alpha_large, figures[7] = model.beta_large;
      figures[8] = model.version, figures[9] = model.beta_copy, figures[10] = model.delta_large;
      figures[11] = model.beta_scattered;
      figures[12] = model.alpha_gathered, figures[13] = model.delta_gathered;
      figures[14] = model.ranks_per_node, figures[15] = model.alpha_node, figures[16] = model.beta_node;
      figures[17] = model.delta_post;
    }
    if (!error.empty()) figures[0] = -1;
  }
  ISO_MPI_CHECK(MPI_Bcast(figures, 18, MPI_DOUBLE, 0, comm));
  if (figures[0] < 0 || !error.empty())
    agree_on_errors(comm, "iso::CostModel",
                    (source.named ? "ISO_COST_MODEL=" + path : "the cost model cache " + path) +
                        " cannot be used: " + error);
  if (figures[0] > 0) {
    cached = std::make_unique<CostModel>();
    cached->alpha = figures[1], cached->beta = figures[2], cached->gamma = figures[3], cached->delta = figures[4];
    cached->eager_limit = figures[5], cached->alpha_large = figures[6], cached->beta_large = figures[7];
    cached->version = static_cast<int>(figures[8]);
    cached->beta_copy = figures[9];
    cached->delta_large = figures[10];
    cached->beta_scattered = figures[11];
    cached->alpha_gathered = figures[12];
    cached->delta_gathered = figures[13];
    cached->ranks_per_node = figures[14], cached->alpha_node = figures[15], cached->beta_node = figures[16];
    cached->delta_post = figures[17];
    cached->source = path;
  } else if (size_of(comm) == 1) {
    // One rank can only time messages to itself: nothing worth caching for
    // later multi-rank runs. Its choice hardly matters; use the defaults.
    cached = std::make_unique<CostModel>(CostModel::builtin());
  } else {
    cached = std::make_unique<CostModel>(CostModel::calibrate(comm));
    if (rank == 0 && !keep_nothing) {
      try {
        write_file(path, model_text(*cached, source.machine), PathUse::cache);
      } catch (const Error&) {
        // An unwritable cache only costs a calibration next time.
      }
    }
  }
  return *cached;
}

}  // namespace iso
