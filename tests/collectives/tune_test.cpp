// Algorithm::tune: the operation it returns is the candidate of least
// measured time, the same on every rank, and exchanges correctly; the port
// limit given is kept; other algorithms report no trials. The tune cache:
// a second init reads the first one's choice, keys separate what they must,
// a damaged, stale or unwritable cache costs a tuning and nothing else.
// Auto follows the tune cache's entry of its operation where it is usable.
#include "collectives_support.hpp"

#include "iso/tune_cache.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace iso_collectives_test {
namespace {

std::string describe(const std::vector<iso::TuneTrial>& trials) {
  std::string text;
  for (const iso::TuneTrial& t : trials)
    text += std::string(iso::to_string(t.algorithm)) + ":p" + std::to_string(t.ports) + "x" +
            std::to_string(t.calls) + "=" + std::to_string(t.seconds) + " ";
  return text;
}

// "" when the trials are well formed and `op` is their first least time.
std::string check_choice(const iso::Operation& op, int ports_given) {
  const std::vector<iso::TuneTrial>& trials = op.tune_trials();
  if (trials.empty()) return "no trials";
  std::size_t best = 0;
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const iso::TuneTrial& t = trials[k];
    if (t.algorithm == iso::Algorithm::tune || t.algorithm == iso::Algorithm::automatic)
      return "a trial of " + std::string(iso::to_string(t.algorithm));
    if (t.calls < 1 || t.calls > 9) return "a trial of " + std::to_string(t.calls) + " calls";
    if (!(t.seconds > 0)) return "a trial of " + std::to_string(t.seconds) + " s";
    if (ports_given > 0 && t.algorithm != iso::Algorithm::mpi && t.ports != ports_given)
      return "a trial at " + std::to_string(t.ports) + " ports, not the " + std::to_string(ports_given) + " given";
    if (t.seconds < trials[best].seconds) best = k;
  }
  if (op.algorithm() != trials[best].algorithm || op.ports() != trials[best].ports)
    return std::string("runs ") + iso::to_string(op.algorithm()) + ":p" + std::to_string(op.ports()) +
           " but the least time is " + iso::to_string(trials[best].algorithm) + ":p" +
           std::to_string(trials[best].ports);
  return {};
}

TEST(CollectivesTune, ChoosesItsFastestTrialOnEveryRankAndExchangesCorrectly) {
  iso::CartComm cart2(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::CartComm cart3(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  // Repeats, a zero vector, an offset beyond small grids; and Moore 3:1.
  iso::Neighborhood irregular(cart2.get(), iso::OffsetList(2, {1, 0, 0, -2, 1, 1, 0, 0, 1, 0, -3, 1, 2, -1}));
  iso::Neighborhood moore(cart3.get(), iso::OffsetList::moore(3, 1));
  for (const iso::Neighborhood* nbh : {&irregular, &moore})
    for (int kind : {0, 6}) {
      ScopedLayouts layouts(make_layout_pair(kind, 5));
      for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
        Exchange ex(*nbh, layouts.get(), collective, iso::Algorithm::tune);
        std::string failure = check_choice(ex.op(), 0);
        // Every rank measured the same maxima and made the same choice.
        if (!same_on_all_ranks(describe(ex.op().tune_trials()) + iso::to_string(ex.op().algorithm()) +
                               std::to_string(ex.op().ports())) &&
            failure.empty())
          failure = "the trials or the choice differ between ranks: " + describe(ex.op().tune_trials());
        for (int generation = 1; generation <= 3 && failure.empty(); ++generation) {
          ex.prepare(generation);
          ex.op().run();
          failure = ex.check(generation);
        }
        const bool ok = all_ranks(failure.empty());
        if (!failure.empty()) ADD_FAILURE() << ex.name() << " rank " << world_rank() << ": " << failure;
        EXPECT_TRUE(ok) << ex.name();
      }
    }
}

TEST(CollectivesTune, KeepsTheGivenPortLimitAndOthersHaveNoTrials) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  const int s = nbh.size();
  std::vector<int> send(static_cast<std::size_t>(s) * 2, world_rank()), recv(send.size(), -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::tune;
  options.ports = 2;
  iso::Operation tuned = iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options);
  std::string failure = check_choice(tuned, 2);
  tuned.run();
  for (int i = 0; i < s && failure.empty(); ++i)
    if (recv[2 * static_cast<std::size_t>(i)] != nbh.source_rank(i))
      failure = "block " + std::to_string(i) + " holds " + std::to_string(recv[2 * static_cast<std::size_t>(i)]) +
                ", not source rank " + std::to_string(nbh.source_rank(i));
  options.algorithm = iso::Algorithm::direct;
  options.ports = 3;
  iso::Operation plain = iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options);
  if (failure.empty() && !plain.tune_trials().empty()) failure = "direct reports tune trials";
  if (failure.empty() && plain.ports() != 3) failure = "direct runs at " + std::to_string(plain.ports()) + " ports";
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  EXPECT_TRUE(ok);
}

// ISO_TUNE_CACHE set to a file of this test's own (rank 0's name on every
// rank) for the scope; removed after.
class ScopedTuneCache {
public:
  explicit ScopedTuneCache(const std::string& tag) {
    long id = static_cast<long>(getpid());
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    path_ = "/tmp/isostencil-tune-test-" + std::to_string(id) + "-" + tag + ".txt";
    if (world_rank() == 0) std::remove(path_.c_str());
    if (const char* old = std::getenv("ISO_TUNE_CACHE")) old_ = old, had_ = true;
    setenv("ISO_TUNE_CACHE", path_.c_str(), 1);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~ScopedTuneCache() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::remove(path_.c_str());
      std::remove((path_ + ".lock").c_str());  // the stores' lock (iso::update_cache_file)
    }
    if (had_) setenv("ISO_TUNE_CACHE", old_.c_str(), 1);
    else unsetenv("ISO_TUNE_CACHE");
  }
  const std::string& path() const { return path_; }
  // Entry lines (not comments) of the file, as rank 0 reads it, on every rank.
  std::vector<std::string> entries() const {
    std::string text;
    if (world_rank() == 0) {
      std::ifstream in(path_);
      std::string line;
      while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') text += line + "\n";
    }
    int size = static_cast<int>(text.size());
    MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
    text.resize(static_cast<std::size_t>(size));
    MPI_Bcast(text.data(), size, MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  void write(const std::string& text) const {
    if (world_rank() == 0) std::ofstream(path_) << text;
    MPI_Barrier(MPI_COMM_WORLD);
  }

private:
  std::string path_, old_;
  bool had_ = false;
};

iso::Operation tuned_alltoall(const iso::Neighborhood& nbh, std::vector<int>& send, std::vector<int>& recv,
                              int count) {
  send.assign(static_cast<std::size_t>(nbh.size()) * count, world_rank());
  recv.assign(send.size(), -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::tune;
  return iso::alltoall_init(nbh, send.data(), count, MPI_INT, recv.data(), count, MPI_INT, options);
}

std::string check_exchange(const iso::Neighborhood& nbh, iso::Operation& op, const std::vector<int>& recv,
                           int count) {
  op.run();
  for (int i = 0; i < nbh.size(); ++i)
    if (recv[static_cast<std::size_t>(i) * count] != nbh.source_rank(i))
      return "block " + std::to_string(i) + " holds " + std::to_string(recv[static_cast<std::size_t>(i) * count]) +
             ", not source rank " + std::to_string(nbh.source_rank(i));
  return {};
}

TEST(CollectivesTuneCache, ASecondInitReadsTheFirstOnesChoice) {
  ScopedTuneCache cache("second");
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  std::vector<int> send, recv;
  iso::Operation first = tuned_alltoall(nbh, send, recv, 2);
  std::string failure = first.tune_cached() ? "the first init read a cache that was empty" : "";
  if (failure.empty() && cache.entries().size() != 1)
    failure = "the cache has " + std::to_string(cache.entries().size()) + " entries after one tuning";
  iso::Operation second = tuned_alltoall(nbh, send, recv, 2);
  if (failure.empty() && !second.tune_cached()) failure = "the second init tuned again";
  if (failure.empty() && (second.algorithm() != first.algorithm() || second.ports() != first.ports()))
    failure = std::string("cached choice ") + iso::to_string(second.algorithm()) + ":p" +
              std::to_string(second.ports()) + " differs from the tuned " + iso::to_string(first.algorithm()) + ":p" +
              std::to_string(first.ports());
  if (failure.empty() && second.tune_trials().size() != first.tune_trials().size())
    failure = "the cached trials differ in number";
  for (std::size_t k = 0; failure.empty() && k < first.tune_trials().size(); ++k) {
    const iso::TuneTrial &a = first.tune_trials()[k], &b = second.tune_trials()[k];
    if (a.algorithm != b.algorithm || a.ports != b.ports || a.calls != b.calls ||
        std::abs(a.seconds - b.seconds) > 1e-8 * a.seconds)
      failure = "trial " + std::to_string(k) + " differs: " + describe({a}) + "vs " + describe({b});
  }
  if (failure.empty()) failure = check_choice(second, 0);
  if (failure.empty()) failure = check_exchange(nbh, second, recv, 2);
  if (failure.empty() && iso::describe_choice(second).find("tune cache") == std::string::npos)
    failure = "describe_choice does not say the cache: " + iso::describe_choice(second);
  // Other block sizes and another collective are other keys.
  iso::Operation bigger = tuned_alltoall(nbh, send, recv, 3);
  if (failure.empty() && bigger.tune_cached()) failure = "blocks of 3 ints read the entry of blocks of 2";
  std::vector<int> one(2, world_rank()), all(static_cast<std::size_t>(nbh.size()) * 2, -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::tune;
  iso::Operation gather = iso::allgather_init(nbh, one.data(), 2, MPI_INT, all.data(), 2, MPI_INT, options);
  if (failure.empty() && gather.tune_cached()) failure = "allgather read alltoall's entry";
  options.ports = 1;
  iso::Operation limited = iso::alltoall_init(nbh, send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, options);
  if (failure.empty() && limited.tune_cached()) failure = "ports 1 read the entry of ports 0";
  if (failure.empty() && cache.entries().size() != 4)
    failure = "the cache has " + std::to_string(cache.entries().size()) + " entries, not 4";
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  EXPECT_TRUE(ok);
}

iso::Operation auto_alltoall(const iso::Neighborhood& nbh, std::vector<int>& send, std::vector<int>& recv, int count) {
  send.assign(static_cast<std::size_t>(nbh.size()) * count, world_rank());
  recv.assign(send.size(), -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::automatic;
  return iso::alltoall_init(nbh, send.data(), count, MPI_INT, recv.data(), count, MPI_INT, options);
}

// An entry of `key` that picks `pick` at 10 us per call and timed the
// model's choice at `model_us`.
std::string entry(const std::string& key, iso::Algorithm pick, int pick_ports, const std::string& model,
                  double model_us) {
  std::ostringstream line;
  line << key << " " << iso::to_string(pick) << " " << pick_ports << " 2 " << iso::to_string(pick) << ":"
       << pick_ports << ":9:1e-05 " << model << ":9:" << model_us * 1e-6 << "\n";
  return line.str();
}

std::string colon(iso::Algorithm algorithm, int ports) {
  return std::string(iso::to_string(algorithm)) + ":" + std::to_string(ports);
}

TEST(CollectivesTuneCache, AutoFollowsAnEntryThatContradictsTheModel) {
  ScopedTuneCache cache("auto");
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  std::vector<int> send, recv;
  std::string failure;
  // No cache file yet: the model's choice, no trials.
  iso::Algorithm model_algorithm = iso::Algorithm::automatic;
  int model_ports = -1;
  {
    iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
    iso::Operation op = auto_alltoall(nbh, send, recv, 2);
    model_algorithm = op.algorithm();
    model_ports = op.ports();
    if (op.tune_cached() || !op.tune_trials().empty()) failure = "auto reported tune trials without a cache";
  }
  // Tune stores an entry under the operation's key; the test then writes its
  // own entries under that key, picking a choice the model did not make.
  {
    iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
    tuned_alltoall(nbh, send, recv, 2);
  }
  const std::vector<std::string> entries = cache.entries();
  if (failure.empty() && entries.size() != 1) failure = "tune stored " + std::to_string(entries.size()) + " entries";
  const std::string key = entries.empty() ? std::string() : entries[0].substr(0, 16);
  const iso::Algorithm other = model_algorithm == iso::Algorithm::torus ? iso::Algorithm::direct : iso::Algorithm::torus;
  const int other_ports = model_ports == 1 ? 2 : 1;
  const std::string model = colon(model_algorithm, model_ports);
  // The model's choice timed 2x the pick's: followed, at the first init and
  // by the kept choice.
  if (failure.empty()) cache.write(entry(key, other, other_ports, model, 20));
  if (failure.empty()) {
    iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
    for (int init = 0; init < 2 && failure.empty(); ++init) {
      const std::string which = init == 0 ? "the first auto init" : "the kept choice";
      iso::Operation op = auto_alltoall(nbh, send, recv, 2);
      if (op.algorithm() != other || op.ports() != other_ports)
        failure = which + " runs " + iso::describe_choice(op) + ", not the cache's " +
                  iso::algorithm_label(other, other_ports);
      else if (!op.tune_cached() || op.tune_trials().size() != 2)
        failure = which + " does not report the cache's trials";
      else if (iso::describe_choice(op).find("tune cache") == std::string::npos)
        failure = "describe_choice does not say the cache: " + iso::describe_choice(op);
      else
        failure = check_exchange(nbh, op, recv, 2);
    }
    // Other block sizes have no entry: the model decides.
    iso::Operation bigger = auto_alltoall(nbh, send, recv, 3);
    if (failure.empty() && bigger.tune_cached()) failure = "blocks of 3 ints followed the entry of blocks of 2";
  }
  // Not followed: the model's choice timed within the margin of the pick; a
  // port limit auto does not consider; any entry with the cache off.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"an entry timing the model's choice 1.05x the pick", entry(key, other, other_ports, model, 10.5)},
      {"an entry at a port limit of 5", entry(key, other, 5, model, 20)},
      {"ISO_TUNE_CACHE=off", entry(key, other, other_ports, model, 20)}};
  for (const auto& [what, text] : cases) {
    if (!failure.empty()) break;
    cache.write(text);
    const bool off = what == "ISO_TUNE_CACHE=off";
    if (off) setenv("ISO_TUNE_CACHE", "off", 1);
    iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
    iso::Operation op = auto_alltoall(nbh, send, recv, 2);
    if (op.algorithm() != model_algorithm || op.ports() != model_ports || op.tune_cached())
      failure = "with " + what + ", auto runs " + iso::describe_choice(op) + ", not the model's " +
                iso::algorithm_label(model_algorithm, model_ports);
    if (off) setenv("ISO_TUNE_CACHE", cache.path().c_str(), 1);
  }
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  EXPECT_TRUE(ok);
}

TEST(CollectivesTuneCache, DamagedStaleOrUnwritableCachesCostATuningOnly) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  std::vector<int> send, recv;
  std::string failure;
  {
    ScopedTuneCache cache("damaged");
    iso::Operation first = tuned_alltoall(nbh, send, recv, 1);
    const std::vector<std::string> good = cache.entries();
    if (good.size() != 1) failure = "no entry after tuning";
    const std::string key = good.empty() ? std::string(16, '0') : good[0].substr(0, 16);
    // The right key with damage each time: a truncated trial list, an
    // algorithm this version does not know, a port count the operation does
    // not consider, a negative time; then garbage around a line of another key.
    for (const std::string& damaged :
         {key + " torus 0 3 linear:0:5:1e-6", key + " warp 0 1 warp:0:5:1e-6", key + " torus 7 1 torus:7:5:1e-6",
          key + " torus 0 1 torus:0:5:-1e-6", "garbage\n" + key.substr(0, 15) + " torus 0 1 torus:0:1:1e-6\n\x01"}) {
      if (!failure.empty()) break;
      cache.write(damaged + "\n");
      iso::Operation again = tuned_alltoall(nbh, send, recv, 1);
      if (again.tune_cached()) failure = "read a damaged entry: " + damaged;
      else if (cache.entries().size() != 1) failure = "the rewritten cache keeps damaged lines after: " + damaged;
      if (failure.empty()) failure = check_exchange(nbh, again, recv, 1);
    }
    // A good entry survives writes of other keys and is found among them.
    iso::Operation other = tuned_alltoall(nbh, send, recv, 2);
    iso::Operation cached = tuned_alltoall(nbh, send, recv, 1);
    if (failure.empty() && !cached.tune_cached()) failure = "the entry was lost when another key was written";
  }
  {
    // A cache that cannot be written: tuned, correct, nothing cached.
    const char* old = std::getenv("ISO_TUNE_CACHE");
    const std::string kept = old ? old : "";
    setenv("ISO_TUNE_CACHE", "/proc/isostencil-no-such-dir/tune.txt", 1);
    iso::Operation a = tuned_alltoall(nbh, send, recv, 1);
    iso::Operation b = tuned_alltoall(nbh, send, recv, 1);
    if (failure.empty() && (a.tune_cached() || b.tune_cached())) failure = "an unwritable cache was read";
    if (failure.empty()) failure = check_exchange(nbh, b, recv, 1);
    setenv("ISO_TUNE_CACHE", "off", 1);
    if (failure.empty() && !iso::tune_cache_path().empty()) failure = "ISO_TUNE_CACHE=off names a file";
    if (old) setenv("ISO_TUNE_CACHE", kept.c_str(), 1);
    else unsetenv("ISO_TUNE_CACHE");
  }
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  EXPECT_TRUE(ok);
}

TEST(CollectivesTuneCache, KeysSeparateWhatTheMeasurementDependsOn) {
  const iso::OffsetList moore = iso::OffsetList::moore(3, 1);
  iso::CartGeometry grid;
  grid.sizes = {2, 1, 1};
  grid.periodic = {true, true, true};
  const std::string base = iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, grid, 0, 7);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(base, iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, grid, 0, 7));
  iso::CartGeometry mesh = grid;
  mesh.periodic[0] = false;
  iso::CartGeometry other = grid;
  other.sizes = {1, 2, 1};
  for (const std::string& key :
       {iso::tune_cache_key("Open MPI v4.1.4; hosts 1; OMPI_MCA_btl=tcp,self", iso::Collective::alltoall, moore, grid,
                            0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 2", iso::Collective::alltoall, moore, grid, 0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::allgather, moore, grid, 0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, iso::OffsetList::moore(3, 2), grid,
                            0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, mesh, 0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, other, 0, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, grid, 2, 7),
        iso::tune_cache_key("Open MPI v4.1.4; hosts 1", iso::Collective::alltoall, moore, grid, 0, 8)})
    EXPECT_NE(key, base);
  // Block digests: equal sizes, equal digests; any change, another.
  iso::BlockBytes a{{8, 8}, {8, 8}}, b{{8, 8}, {8, 16}}, c{{8}, {8, 8}};
  EXPECT_EQ(iso::block_bytes_digest(a), iso::block_bytes_digest(iso::BlockBytes{{8, 8}, {8, 8}}));
  EXPECT_NE(iso::block_bytes_digest(a), iso::block_bytes_digest(b));
  EXPECT_NE(iso::block_bytes_digest(a), iso::block_bytes_digest(c));
  // The machine signature is the same on every rank and names the library.
  const std::string machine = iso::machine_signature(MPI_COMM_WORLD);
  EXPECT_TRUE(same_on_all_ranks(machine)) << machine;
  EXPECT_NE(machine.find("hosts 1"), std::string::npos) << machine;
}

}  // namespace
}  // namespace iso_collectives_test
