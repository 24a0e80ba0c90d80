#include "iso/cost_model.hpp"

#include "agree.hpp"
#include "iso/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
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
    seconds += model.alpha + model.beta * static_cast<double>(moved) +
               model.gamma * static_cast<double>(round.send.size() + round.recv.size());
  }
  for (const LocalCopy& copy : schedule.copies)
    seconds += model.beta * static_cast<double>(entry_bytes(copy.to, bytes)) + 2 * model.gamma;
  return seconds;
}

double predict_native_seconds(const CostModel& model, int neighbors, const BlockBytes& bytes) {
  long sent = 0, received = 0;
  for (long b : bytes.send) sent += b;
  if (bytes.send.size() == 1) sent *= neighbors;  // allgather: one block to every neighbor
  for (long b : bytes.recv) received += b;
  return model.alpha + model.delta * std::max(0, neighbors - 1) +
         model.beta * static_cast<double>(std::max(sent, received)) + model.gamma * 2.0 * neighbors;
}

CostModel CostModel::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("iso::CostModel::load: cannot read " + path);
  CostModel model;
  model.source = path;
  std::string line;
  int number = 0;
  bool seen[4] = {false, false, false, false};
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
    const char* keys[4] = {"alpha", "beta", "gamma", "delta"};
    double* slots[4] = {&model.alpha, &model.beta, &model.gamma, &model.delta};
    const auto* found = std::find(std::begin(keys), std::end(keys), key);
    if (found == std::end(keys))
      throw Error(path + ":" + std::to_string(number) + ": unknown key \"" + key +
                  "\" (allowed: alpha, beta, gamma, delta)");
    *slots[found - std::begin(keys)] = value;
    seen[found - std::begin(keys)] = true;
  }
  const char* names[4] = {"alpha", "beta", "gamma", "delta"};
  for (int k = 0; k < 4; ++k)
    if (!seen[k]) throw Error(path + ": missing key \"" + names[k] + "\" (a cost model needs alpha, beta, gamma and delta)");
  return model;
}

void CostModel::save(const std::string& path) const {
  make_directories(path);
  std::ofstream out(path);
  out << "# isostencil cost model (seconds): round = alpha + beta*bytes + gamma*entries;\n"
      << "# native neighborhood collective adds delta per extra message. Delete to recalibrate.\n";
  out.precision(17);  // loads back exactly: every rank and run sees the same model
  out << "alpha = " << alpha << "\nbeta = " << beta << "\ngamma = " << gamma << "\ndelta = " << delta << "\n";
  out.close();
  if (!out) throw Error("iso::CostModel::save: cannot write " + path);
}

CostModel CostModel::calibrate(MPI_Comm comm, double budget_seconds) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Pairs (0,1), (2,3), ...; a lone last rank talks to itself.
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  const int large = 1 << 20, entries = 512, burst = 16;
  std::vector<char> send(large), recv(large);
  const int repetitions = std::max(5, static_cast<int>(budget_seconds * 40));
  auto exchange = [&](int bytes) {
    ISO_MPI_CHECK(MPI_Sendrecv(send.data(), bytes, MPI_BYTE, partner, 0, recv.data(), bytes, MPI_BYTE, partner, 0,
                               comm, MPI_STATUS_IGNORE));
  };
  const double small = measure(comm, repetitions * 5, [&] { exchange(1); });
  const double big = measure(comm, repetitions, [&] { exchange(large); });
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
  model.alpha = std::max(small, 1e-9);
  model.beta = std::max((big - small) / large, 1e-13);
  model.gamma = std::max((strided - packed) / (2.0 * entries), 1e-11);
  model.delta = std::max((many - small) / (burst - 1), 1e-10);
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
  double figures[5] = {0, 0, 0, 0, 0};  // loaded?, alpha, beta, gamma, delta
  std::string error;
  if (rank == 0) {
    CostModel model;
    if (path == "defaults") {
      figures[0] = 1;
    } else {
      try {
        model = CostModel::load(path);
        figures[0] = 1;
      } catch (const Error& e) {
        if (chosen && *chosen) error = e.what();  // a file the user named must work
      }
    }
    if (figures[0] != 0) {
      figures[1] = model.alpha, figures[2] = model.beta, figures[3] = model.gamma, figures[4] = model.delta;
    }
    if (!error.empty()) figures[0] = -1;
  }
  ISO_MPI_CHECK(MPI_Bcast(figures, 5, MPI_DOUBLE, 0, comm));
  if (figures[0] < 0 || !error.empty())
    detail::agree_on_errors(comm, "iso::CostModel", "ISO_COST_MODEL=" + path + " cannot be used: " + error);
  if (figures[0] > 0) {
    cached = std::make_unique<CostModel>();
    cached->alpha = figures[1], cached->beta = figures[2], cached->gamma = figures[3], cached->delta = figures[4];
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
