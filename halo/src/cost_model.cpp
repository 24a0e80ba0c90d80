#include "iso/cost_model.hpp"

#include "agree.hpp"
#include "iso/error.hpp"

#include <algorithm>
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

long entry_bytes(BlockRef ref, const BlockBytes& bytes) {
  const std::vector<long>& sizes = ref.buffer == Buffer::send ? bytes.send : bytes.recv;
  return ref.block < static_cast<int>(sizes.size()) ? sizes[ref.block] : 0;
}

long sum_bytes(const std::vector<BlockRef>& entries, const BlockBytes& bytes) {
  long total = 0;
  for (BlockRef ref : entries) total += entry_bytes(ref, bytes);
  return total;
}

// Median of per-repetition times, maxed over ranks.
double measure(MPI_Comm comm, int repetitions, const std::function<void()>& body) {
  std::vector<double> times;
  times.reserve(repetitions);
  for (int r = 0; r < repetitions; ++r) {
    ISO_MPI_CHECK(MPI_Barrier(comm));
    const double begin = MPI_Wtime();
    body();
    times.push_back(MPI_Wtime() - begin);
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  double median = times[repetitions / 2];
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MAX, comm));
  return median;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

void make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
    mkdir(path.substr(0, slash).c_str(), 0755);
}

}  // namespace

double predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes) {
  double seconds = 0;
  for (const Round& round : schedule.rounds) {
    const long moved = std::max(sum_bytes(round.send, bytes), sum_bytes(round.recv, bytes));
    seconds += model.message_seconds(static_cast<double>(moved)) +
               model.gamma * static_cast<double>(round.send.size() + round.recv.size());
  }
  for (const LocalCopy& copy : schedule.copies)
    seconds += model.beta * static_cast<double>(entry_bytes(copy.to, bytes)) + 2 * model.gamma;
  return seconds;
}

double predict_native_seconds(const CostModel& model, int neighbors, const BlockBytes& bytes) {
  // Each block is its own message, in the regime of its size; the start-up
  // that counts is the largest one.
  double start = model.alpha, sent = 0, received = 0;
  auto add = [&](long b, double& total) {
    const double size = static_cast<double>(b);
    const double whole = model.message_seconds(size);
    const double startup = model.eager_limit > 0 && size > model.eager_limit ? model.alpha_large : model.alpha;
    start = std::max(start, startup);
    total += whole - startup;
  };
  for (long b : bytes.send) add(b, sent);
  if (bytes.send.size() == 1) sent *= neighbors;  // allgather: one block to every neighbor
  for (long b : bytes.recv) add(b, received);
  return start + model.delta * std::max(0, neighbors - 1) + std::max(sent, received) + model.gamma * 2.0 * neighbors;
}

std::vector<ExecutionStep> execution_steps(const Schedule& schedule) {
  // Slot flags per (buffer, block): read or written by the current step.
  const std::size_t s = static_cast<std::size_t>(std::max(schedule.num_blocks, 1));
  std::vector<char> reads(4 * s, 0), writes(4 * s, 0);
  std::vector<std::size_t> touched;
  auto slot = [s](BlockRef ref) { return static_cast<std::size_t>(ref.buffer) * s + static_cast<std::size_t>(ref.block); };
  auto conflicts = [&](const std::vector<BlockRef>& read, const std::vector<BlockRef>& written) {
    for (BlockRef ref : read)
      if (writes[slot(ref)]) return true;
    for (BlockRef ref : written)
      if (reads[slot(ref)] || writes[slot(ref)]) return true;
    return false;
  };
  auto mark = [&](const std::vector<BlockRef>& read, const std::vector<BlockRef>& written) {
    for (BlockRef ref : read) reads[slot(ref)] = 1, touched.push_back(slot(ref));
    for (BlockRef ref : written) writes[slot(ref)] = 1, touched.push_back(slot(ref));
  };
  auto clear = [&] {
    for (std::size_t k : touched) reads[k] = writes[k] = 0;
    touched.clear();
  };
  static const std::vector<BlockRef> none;
  std::vector<ExecutionStep> steps;
  const int rounds = static_cast<int>(schedule.rounds.size());
  for (int r = 0; r < rounds; ++r) {
    const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
    const std::vector<BlockRef>& read = round.send_rank >= 0 ? round.send : none;
    const std::vector<BlockRef>& written = round.recv_rank >= 0 ? round.recv : none;
    if (steps.empty() || conflicts(read, written)) {
      clear();
      steps.push_back({r, r, false});
    }
    mark(read, written);
    steps.back().last = r + 1;
  }
  if (!schedule.copies.empty()) {
    std::vector<BlockRef> from, to;
    for (const LocalCopy& copy : schedule.copies) from.push_back(copy.from), to.push_back(copy.to);
    if (steps.empty() || conflicts(from, to)) steps.push_back({rounds, rounds, false});
    steps.back().copies = true;
  }
  return steps;
}

double predict_execution_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes,
                                 int self_rank) {
  double seconds = 0;
  auto copy_seconds = [&](BlockRef to) {
    return model.copy_seconds(static_cast<double>(entry_bytes(to, bytes))) + 2 * model.gamma;
  };
  for (const ExecutionStep& step : execution_steps(schedule)) {
    double start = 0, sent = 0, received = 0, local = 0;
    long sends = 0, receives = 0, entries = 0;
    auto message = [&](const std::vector<BlockRef>& refs, long& count, double& total) {
      const long b = sum_bytes(refs, bytes);
      if (b == 0) return;
      const double size = static_cast<double>(b);
      const double startup = model.eager_limit > 0 && size > model.eager_limit ? model.alpha_large : model.alpha;
      start = std::max(start, startup);
      total += model.message_seconds(size) - startup;
      ++count;
      entries += static_cast<long>(refs.size());
    };
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
      if (is_local_round(round, self_rank)) {
        for (BlockRef to : round.recv) local += copy_seconds(to);
        continue;
      }
      if (round.send_rank >= 0) message(round.send, sends, sent);
      if (round.recv_rank >= 0) message(round.recv, receives, received);
    }
    if (step.copies)
      for (const LocalCopy& copy : schedule.copies) local += copy_seconds(copy.to);
    const long messages = std::max(sends, receives);
    if (messages > 0) seconds += start + model.delta * static_cast<double>(messages - 1);
    seconds += std::max(sent, received) + model.gamma * static_cast<double>(entries) + local;
  }
  return seconds;
}

CostModel CostModel::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("iso::CostModel::load: cannot read " + path);
  CostModel model;
  model.source = path;
  std::string line;
  int number = 0;
  constexpr int n = 9;
  const char* keys[n] = {"alpha",      "beta",       "gamma",   "delta",    "eager_limit",
                         "alpha_large", "beta_large", "version", "beta_copy"};
  double version = 0;
  double* slots[n] = {&model.alpha,       &model.beta,       &model.gamma, &model.delta,    &model.eager_limit,
                      &model.alpha_large, &model.beta_large, &version,     &model.beta_copy};
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
                  "\" (allowed: alpha, beta, gamma, delta, eager_limit, alpha_large, beta_large, beta_copy, version)");
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
  if (model.version == 1 && (regime != 0 || seen[8]))
    throw Error(path + ": version 1 has no eager_limit, alpha_large, beta_large or beta_copy");
  return model;
}

void CostModel::save(const std::string& path) const {
  make_directories(path);
  // Written beside the target and renamed over it: a reader (another job on
  // the same cache, or one racing a job killed mid-write) sees the old file or
  // the new one whole, never a truncated figure that still parses. Something
  // other than a regular file (/dev/stdout) is written in place.
  struct stat existing {};
  const bool in_place = stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode);
  const std::string partial = in_place ? path : path + ".tmp." + std::to_string(getpid());
  std::ofstream out(partial);
  out << "# isostencil cost model (seconds): round = alpha + beta*bytes + gamma*entries, messages of\n"
      << "# more than eager_limit bytes alpha_large + beta_large*bytes (eager_limit 0: one regime);\n"
      << "# copies inside the process beta_copy*bytes (0: beta);\n"
      << "# native neighborhood collective adds delta per extra message. Delete to recalibrate.\n";
  out.precision(17);  // loads back exactly: every rank and run sees the same model
  out << "version = 2\nalpha = " << alpha << "\nbeta = " << beta << "\ngamma = " << gamma << "\ndelta = " << delta
      << "\neager_limit = " << eager_limit << "\nalpha_large = " << alpha_large << "\nbeta_large = " << beta_large
      << "\nbeta_copy = " << beta_copy << "\n";
  out.close();
  if (!out || (!in_place && std::rename(partial.c_str(), path.c_str()) != 0)) {
    if (!in_place) std::remove(partial.c_str());
    throw Error("iso::CostModel::save: cannot write " + path);
  }
}

CostModel CostModel::calibrate(MPI_Comm comm, double budget_seconds) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Pairs (0,1), (2,3), ...; a lone last rank talks to itself.
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  const int large = 1 << 20, entries = 512, burst = 16;
  std::vector<char> send(large), recv(large);
  const int repetitions = std::max(5, static_cast<int>(budget_seconds * 25));
  auto exchange = [&](int bytes) {
    ISO_MPI_CHECK(MPI_Sendrecv(send.data(), bytes, MPI_BYTE, partner, 0, recv.data(), bytes, MPI_BYTE, partner, 0,
                               comm, MPI_STATUS_IGNORE));
  };
  // Message times from 1 byte to 1 MiB, powers of two from 256 B to 64 KiB
  // in between: both sides of any common eager limit.
  std::vector<double> sizes{1}, times;
  for (int b = 256; b <= 65536; b *= 2) sizes.push_back(b);
  sizes.push_back(large);
  for (double b : sizes)
    times.push_back(measure(comm, b <= 4096 ? repetitions * 3 : repetitions, [&] { exchange(static_cast<int>(b)); }));
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
  const double packed = measure(comm, repetitions * 2, [&] { exchange(entries * 8); });
  std::vector<MPI_Request> requests(2 * burst);
  const double many = measure(comm, repetitions * 2, [&] {
    for (int k = 0; k < burst; ++k) {
      ISO_MPI_CHECK(MPI_Irecv(recv.data() + k, 1, MPI_BYTE, partner, 2, comm, &requests[2 * k]));
      ISO_MPI_CHECK(MPI_Isend(send.data() + k, 1, MPI_BYTE, partner, 2, comm, &requests[2 * k + 1]));
    }
    ISO_MPI_CHECK(MPI_Waitall(2 * burst, requests.data(), MPI_STATUSES_IGNORE));
  });
  CostModel model;
  model.source = "calibrated";
  model.gamma = std::max((strided - packed) / (2.0 * entries), 1e-11);
  model.delta = std::max((many - small) / (burst - 1), 1e-10);
  // The eager limit: of the candidate switch points (each measured size below
  // 64 KiB), the one whose two straight lines, eager through 1 B and the
  // limit, rendezvous through twice the limit and 1 MiB, fit every measured
  // time best (relative error). Every rank has the same times (maxed over
  // ranks), hence the same fit.
  double best_error = -1;
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
    if (best_error < 0 || error < best_error) best_error = error, model = fit;
  }
  // Many eager messages at once (a step of the straightforward algorithm)
  // cost more per byte than one: each is copied in and out of shared
  // fragments that run short. Their rate at the limit is the eager beta.
  const int limit = static_cast<int>(model.eager_limit);
  const double full = measure(comm, repetitions, [&] {
    for (int k = 0; k < burst; ++k) {
      ISO_MPI_CHECK(MPI_Irecv(recv.data() + static_cast<std::size_t>(k) * limit, limit, MPI_BYTE, partner, 3, comm,
                              &requests[2 * k]));
      ISO_MPI_CHECK(MPI_Isend(send.data() + static_cast<std::size_t>(k) * limit, limit, MPI_BYTE, partner, 3, comm,
                              &requests[2 * k + 1]));
    }
    ISO_MPI_CHECK(MPI_Waitall(2 * burst, requests.data(), MPI_STATUSES_IGNORE));
  });
  model.beta = std::max(model.beta, (full - model.alpha - (burst - 1) * model.delta) / (double(burst) * limit));
  // Copies inside the process: memcpy of the large buffer.
  model.beta_copy = std::max(measure(comm, repetitions, [&] { std::memcpy(recv.data(), send.data(), large); }) / large,
                             1e-13);
  return model;
}

std::string CostModel::default_cache_path() {
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::string(dir) + "/isostencil/cost_model.txt";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/isostencil/cost_model.txt";
  return "isostencil_cost_model.txt";
}

const CostModel& CostModel::for_comm(MPI_Comm comm) {
  static std::unique_ptr<CostModel> cached;
  if (cached) return *cached;
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const char* chosen = std::getenv("ISO_COST_MODEL");
  const std::string path = chosen && *chosen ? chosen : default_cache_path();
  // Rank 0 decides and broadcasts, so every rank takes the same branch.
  // loaded?, alpha, beta, gamma, delta, eager_limit, alpha_large, beta_large, version
  double figures[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // ..., beta_copy
  std::string error;
  if (rank == 0) {
    CostModel model;
    if (path == "defaults") {
      figures[0] = 1;
    } else {
      try {
        model = CostModel::load(path);
        // Our own cache of the one-regime format: measured again below.
        figures[0] = (chosen && *chosen) || model.version >= 2 ? 1 : 0;
      } catch (const Error& e) {
        if (chosen && *chosen) error = e.what();  // a file the user named must work
      }
    }
    if (figures[0] != 0) {
      figures[1] = model.alpha, figures[2] = model.beta, figures[3] = model.gamma, figures[4] = model.delta;
      figures[5] = model.eager_limit, figures[6] = model.alpha_large, figures[7] = model.beta_large;
      figures[8] = model.version, figures[9] = model.beta_copy;
    }
    if (!error.empty()) figures[0] = -1;
  }
  ISO_MPI_CHECK(MPI_Bcast(figures, 10, MPI_DOUBLE, 0, comm));
  if (figures[0] < 0 || !error.empty())
    detail::agree_on_errors(comm, "iso::CostModel", "ISO_COST_MODEL=" + path + " cannot be used: " + error);
  if (figures[0] > 0) {
    cached = std::make_unique<CostModel>();
    cached->alpha = figures[1], cached->beta = figures[2], cached->gamma = figures[3], cached->delta = figures[4];
    cached->eager_limit = figures[5], cached->alpha_large = figures[6], cached->beta_large = figures[7];
    cached->version = static_cast<int>(figures[8]);
    cached->beta_copy = figures[9];
    cached->source = path;
  } else if (size_of(comm) == 1) {
    // One rank can only time messages to itself: nothing worth caching for
    // later multi-rank runs. Its choice hardly matters; use the defaults.
    cached = std::make_unique<CostModel>();
  } else {
    cached = std::make_unique<CostModel>(CostModel::calibrate(comm));
    if (rank == 0) {
      try {
        cached->save(path);
      } catch (const Error&) {
        // An unwritable cache only costs a calibration next time.
      }
    }
  }
  return *cached;
}

}  // namespace iso
