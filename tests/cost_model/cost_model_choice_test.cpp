// What Algorithm::automatic picks under a given model, and where the model
// comes from (CostModel::for_comm). for_comm caches the model per process on
// first use, so every test here needs a fresh process: ctest runs each one on
// its own (--gtest_filter); run by hand, a test after the first skips itself.
//
// Each test writes its model file on rank 0 (for_comm reads it there and
// broadcasts) into a temporary directory and points ISO_COST_MODEL (or
// XDG_CACHE_HOME, for the calibration cache) at it, so nothing is written
// into $HOME.
#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"

#include <isostencil_test.hpp>
#include <time_scale.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

bool model_used = false;

// Skips (on every rank alike) when an earlier test of this process already
// fixed for_comm's model.
#define ISO_REQUIRE_FRESH_PROCESS()                                                            \
  do {                                                                                         \
    if (model_used) GTEST_SKIP() << "needs a fresh process (run with --gtest_filter=<this test>)"; \
    model_used = true;                                                                         \
  } while (0)

// A temporary directory made by rank 0, its path known to every rank.
class SharedTempDir {
public:
  SharedTempDir() {
    char pattern[] = "/tmp/iso_cost_choice_XXXXXX";
    char path[64] = {};
    if (iso_test::world_rank() == 0) {
      const char* made = mkdtemp(pattern);
      std::snprintf(path, sizeof path, "%s", made ? made : "/tmp");
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~SharedTempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (iso_test::world_rank() == 0) {
      for (const std::string& file : files_) std::remove(file.c_str());
      rmdir((path_ + "/isostencil").c_str());
      rmdir(path_.c_str());
    }
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }
  /// Rank 0 writes; every rank returns the path.
  std::string write(const std::string& name, const std::string& text) {
    const std::string at = file(name);
    if (iso_test::world_rank() == 0) std::ofstream(at) << text;
    MPI_Barrier(MPI_COMM_WORLD);
    return at;
  }

private:
  std::string path_;
  std::vector<std::string> files_;
};

// The calibration cache's name for this job's machine signature, relative
// to XDG_CACHE_HOME (collective).
std::string cache_name() {
  const std::string path = iso::CostModel::cache_path(iso::machine_signature(MPI_COMM_WORLD));
  return "isostencil/" + path.substr(path.rfind('/') + 1);
}

std::string model_text(double alpha, double beta, double gamma, double delta) {
  char text[256];
  std::snprintf(text, sizeof text, "alpha = %.17g\nbeta = %.17g\ngamma = %.17g\ndelta = %.17g\n", alpha, beta, gamma,
                delta);
  return text;
}

// The algorithm automatic picks for a 3-D Moore r=1 alltoall of 8-byte blocks
// on a periodic grid of all ranks (same on every rank: checked).
iso::Algorithm choice_for_3d_moore(std::string& problem) {
  const int p = iso_test::world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  const int s = nbh.size();
  std::vector<double> send(static_cast<std::size_t>(s), 1.0), recv(static_cast<std::size_t>(s), 0.0);
  iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                         {iso::Algorithm::automatic});
  op.run();
  int mine = static_cast<int>(op.algorithm()), lo = mine, hi = mine;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) problem = "ranks chose different algorithms";
  bool data_ok = true;
  for (int i = 0; i < s; ++i) data_ok = data_ok && recv[static_cast<std::size_t>(i)] == 1.0;
  if (!data_ok) problem += " wrong data";
  (void)p;
  return op.algorithm();
}

// Latency-bound model: a message costs 1 ms, bytes and entries nothing, and so
// does every extra message of a step (delta = alpha: neither MPI's
// neighborhood collective nor linear's one step of 26 messages overlaps them
// for free). A step sends one message per distinct partner (the rounds to
// one process merged: docs/design/schedules.md#one-message-per-partner), so
// linear posts one per distinct remote process, in one step, and torus and
// direct at most 2 per dimension that leaves the process, a step each.
// Native: 1 + 25 delta = 26 ms (where it is a candidate at all: on grids of
// <= 8 ranks neighbours coincide and automatic never picks mpi). From 4 ranks
// (2x2x1: linear 3 partners, 3 ms; torus 1 + 1 ms) message combining wins.
// On 2 and 3 ranks (2x1x1, 3x1x1) linear and torus post as many messages
// (1 and 2 each way), and linear moves and copies fewer blocks: linear.
// Alone, every neighbour is the process itself: no messages, only copies,
// and linear copies the fewest blocks.
TEST(CostModelChoice, LatencyBoundPicksMessageCombining) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  const std::string path = dir.write("latency.txt", model_text(1e-3, 1e-15, 1e-15, 1e-3));
  setenv("ISO_COST_MODEL", path.c_str(), 1);
  std::string problem;
  const iso::Algorithm chosen = choice_for_3d_moore(problem);
  EXPECT_EQ(iso::CostModel::for_comm(MPI_COMM_WORLD).source, path);
  if (iso_test::world_size() <= 3)
    EXPECT_EQ(chosen, iso::Algorithm::linear) << iso::to_string(chosen);
  else
    EXPECT_TRUE(chosen == iso::Algorithm::torus || chosen == iso::Algorithm::direct) << iso::to_string(chosen);
  EXPECT_TRUE(iso_test::all_ranks(problem.empty())) << problem;
}

// Volume-bound model: rounds free (alpha ~ 0, delta 0), bytes and datatype
// entries expensive. Linear moves each of the 26 blocks once (volume 26,
// 52 entries); torus and direct forward edge and corner blocks through
// intermediate processes (volume 54 for 3-D Moore r=1, 108 entries), so they
// cost about twice as much. The native collective moves the same 26 blocks
// as linear: linear or mpi.
TEST(CostModelChoice, VolumeBoundPicksLinearOrMpi) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  const std::string path = dir.write("volume.txt", model_text(1e-15, 1e-6, 1e-4, 0));
  setenv("ISO_COST_MODEL", path.c_str(), 1);
  std::string problem;
  const iso::Algorithm chosen = choice_for_3d_moore(problem);
  EXPECT_TRUE(chosen == iso::Algorithm::linear || chosen == iso::Algorithm::mpi) << iso::to_string(chosen);
  EXPECT_TRUE(iso_test::all_ranks(problem.empty())) << problem;
}

// Message-count-bound model with free extra messages (delta ~ 0): whatever
// posts every message in one step costs one alpha. That is the MPI library's
// collective, and also linear and direct for offsets {+1, +2, -1} (their
// rounds are independent, so execution_steps makes them one step); torus
// needs 2 steps (+2 travels two hops). Linear, direct and native tie and
// ties go to the first candidate; torus must lose. On a ring and on a 1-D
// mesh of p >= 4 processes the existing neighbours of every process are
// distinct (no tiny-torus coincidence). A missing neighbour on the mesh is
// not a coinciding one.
TEST(CostModelChoice, OneStepWinsWhenExtraMessagesAreFreeAlsoOnAMesh) {
  ISO_REQUIRE_FRESH_PROCESS();
  const int p = iso_test::world_size();
  if (p < 4) GTEST_SKIP() << "needs 4 ranks (on fewer, +2 and -1 reach the same neighbour)";
  SharedTempDir dir;
  const std::string path = dir.write("native.txt", model_text(1e-3, 1e-15, 1e-15, 1e-12));
  setenv("ISO_COST_MODEL", path.c_str(), 1);
  std::string problems;
  for (bool periodic : {true, false}) {
    iso::CartComm cart(MPI_COMM_WORLD, {p}, {periodic});
    iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1, 2, -1}));
    std::vector<double> send(3, 1.0), recv(3, 0.0);
    iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                           {iso::Algorithm::automatic});
    op.run();
    bool data_ok = true;
    for (int i = 0; i < 3; ++i)
      data_ok = data_ok && recv[static_cast<std::size_t>(i)] == (nbh.source_rank(i) >= 0 ? 1.0 : 0.0);
    if (op.algorithm() == iso::Algorithm::torus || !data_ok)
      problems += std::string(periodic ? " ring" : " mesh") + ": chose " + iso::to_string(op.algorithm()) +
                  (data_ok ? "" : ", wrong data");
  }
  EXPECT_TRUE(iso_test::all_ranks(problems.empty())) << problems;
}

// for_comm with ISO_COST_MODEL naming a file: the file's figures, on every rank.
TEST(CostModelChoice, ForCommUsesTheNamedFile) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  // Format 2 with the node classes and the posting overlap: every figure
  // reaches every rank (rank 0 reads, broadcasts).
  const std::string path =
      dir.write("named.txt", "version = 2\nalpha = 1.5e-6\nbeta = 2.5e-10\ngamma = 3.5e-8\ndelta = 4.5e-7\n"
                             "eager_limit = 4096\nalpha_large = 5e-6\nbeta_large = 2e-10\nranks_per_node = 4\n"
                             "alpha_node = 6e-7\nbeta_node = 1e-10\ndelta_post = 2e-7\n");
  setenv("ISO_COST_MODEL", path.c_str(), 1);
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  const bool ok = model.alpha == 1.5e-6 && model.beta == 2.5e-10 && model.gamma == 3.5e-8 && model.delta == 4.5e-7 &&
                  model.eager_limit == 4096 && model.ranks_per_node == 4 && model.alpha_node == 6e-7 &&
                  model.beta_node == 1e-10 && model.delta_post == 2e-7 && model.source == path;
  EXPECT_TRUE(iso_test::all_ranks(ok)) << "got alpha " << model.alpha << " beta " << model.beta << " gamma "
                                       << model.gamma << " delta " << model.delta << " ranks_per_node "
                                       << model.ranks_per_node << " delta_post " << model.delta_post << " from "
                                       << model.source;
  // Cached: a second call returns the same object.
  EXPECT_EQ(&iso::CostModel::for_comm(MPI_COMM_WORLD), &model);
}

// ISO_COST_MODEL=defaults: the built-in figures.
TEST(CostModelChoice, ForCommDefaults) {
  ISO_REQUIRE_FRESH_PROCESS();
  setenv("ISO_COST_MODEL", "defaults", 1);
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  const iso::CostModel defaults = iso::CostModel::builtin();
  EXPECT_EQ(model.alpha, defaults.alpha);
  EXPECT_EQ(model.eager_limit, defaults.eager_limit);
  EXPECT_EQ(model.alpha_large, defaults.alpha_large);
  EXPECT_EQ(model.beta_large, defaults.beta_large);
  EXPECT_EQ(model.beta_copy, defaults.beta_copy);
  EXPECT_EQ(model.delta_large, defaults.delta_large);
  EXPECT_EQ(model.beta_scattered, defaults.beta_scattered);
  EXPECT_EQ(model.beta, defaults.beta);
  EXPECT_EQ(model.gamma, defaults.gamma);
  EXPECT_EQ(model.delta, defaults.delta);
  EXPECT_EQ(model.source, "defaults");
}

// A named file that cannot be used is an error, on every rank, with the same
// message (as every other error of the library), and no hang.
TEST(CostModelChoice, UnusableNamedFileIsTheSameErrorEverywhere) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  const std::string path = dir.write("broken.txt", "alpha = 1e-6\nbeta = quick\n");
  setenv("ISO_COST_MODEL", path.c_str(), 1);
  std::string message;
  try {
    std::string problem;
    choice_for_3d_moore(problem);
  } catch (const iso::Error& e) {
    message = e.what();
  }
  EXPECT_TRUE(iso_test::all_ranks(!message.empty())) << "automatic did not fail on every rank";
  EXPECT_NE(message.find(path), std::string::npos) << message;
  // Hash of the message, compared over ranks.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : message) h = (h ^ ch) * 1099511628211ull;
  std::uint64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi) << "rank " << iso_test::world_rank() << " got: " << message;
  // The line of the bad number is named too (as CostModel::load does).
  EXPECT_NE(message.find(path + ":2"), std::string::npos) << message;
}

// No ISO_COST_MODEL and no cache: for_comm calibrates (collective, seconds)
// and writes the cache under XDG_CACHE_HOME; the cache holds the model that
// was measured, so the next process loads the same figures.
TEST(CostModelChoice, CalibrationIsCachedFaithfully) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  unsetenv("ISO_COST_MODEL");
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  const std::string cache = iso::CostModel::cache_path(iso::machine_signature(MPI_COMM_WORLD));
  EXPECT_EQ(cache.rfind(dir.path() + "/isostencil/cost_model-", 0), 0u) << cache;
  dir.file(cache_name());
  // Processor time, not wall time: a loaded machine stretches the latter for
  // reasons outside this code (53 s at 2 ranks under a load of 30).
  const std::clock_t begin = std::clock();
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  const double seconds = static_cast<double>(std::clock() - begin) / CLOCKS_PER_SEC;
  if (iso_test::world_size() == 1) {
    // Alone there is nobody to measure against: defaults, and no cache file
    // that later multi-rank runs would read.
    struct stat info;
    EXPECT_EQ(model.source, "defaults");
    EXPECT_NE(stat(cache.c_str(), &info), 0) << "a one-rank run wrote " << cache;
    return;
  }
  EXPECT_EQ(model.source, "calibrated");
  EXPECT_GT(model.alpha, 0.0);
  EXPECT_LT(seconds, (iso_test::world_size() <= 2 ? 15.0 : 60.0) * iso_test::time_scale());
  MPI_Barrier(MPI_COMM_WORLD);
  bool ok = true;
  std::string detail;
  if (iso_test::world_rank() == 0) {
    struct stat info;
    ok = stat(cache.c_str(), &info) == 0;
    if (!ok) {
      detail = "no cache file at " + cache;
    } else {
      const iso::CostModel loaded = iso::CostModel::load(cache);
      ok = loaded.alpha == model.alpha && loaded.beta == model.beta && loaded.gamma == model.gamma &&
           loaded.delta == model.delta && loaded.eager_limit == model.eager_limit &&
           loaded.alpha_large == model.alpha_large && loaded.beta_large == model.beta_large && loaded.beta_copy == model.beta_copy &&
           loaded.delta_large == model.delta_large && model.delta_large > 0 && loaded.version == 2;
      char text[256];
      std::snprintf(text, sizeof text, "measured alpha %.17g beta %.17g, cached alpha %.17g beta %.17g", model.alpha,
                    model.beta, loaded.alpha, loaded.beta);
      detail = text;
    }
  }
  EXPECT_TRUE(ok) << detail;
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// A cache file of format 1 (one regime, written before the eager limit was
// measured) is measured again and rewritten in format 2; a file the user
// names with ISO_COST_MODEL is taken as it is (ForCommUsesTheNamedFile).
TEST(CostModelChoice, OneRegimeCacheIsMeasuredAgain) {
  ISO_REQUIRE_FRESH_PROCESS();
  if (iso_test::world_size() == 1) GTEST_SKIP() << "calibration needs 2 ranks";
  SharedTempDir dir;
  unsetenv("ISO_COST_MODEL");
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  if (iso_test::world_rank() == 0) mkdir((dir.path() + "/isostencil").c_str(), 0755);
  const std::string cache = dir.write(cache_name(), model_text(7e-6, 7e-10, 7e-8, 7e-7));
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  EXPECT_EQ(model.source, "calibrated");
  EXPECT_NE(model.alpha, 7e-6);
  EXPECT_GT(model.eager_limit, 0.0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (iso_test::world_rank() == 0) {
    const iso::CostModel rewritten = iso::CostModel::load(cache);
    EXPECT_EQ(rewritten.version, 2);
    EXPECT_EQ(rewritten.alpha, model.alpha);
    EXPECT_EQ(rewritten.eager_limit, model.eager_limit);
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// Writes our calibration cache of format 2 with the basic figures at 7e-x and
// `regime` (lacking a figure the calibration now measures), and returns the
// model for_comm gives after checking it was measured again (2 ranks).
const iso::CostModel& stale_cache_model(SharedTempDir& dir, const std::string& regime, std::string& cache) {
  unsetenv("ISO_COST_MODEL");
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  if (iso_test::world_rank() == 0) mkdir((dir.path() + "/isostencil").c_str(), 0755);
  cache = dir.write(cache_name(), model_text(7e-6, 7e-10, 7e-8, 7e-7) + "version = 2\n" + regime);
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  EXPECT_EQ(model.source, "calibrated");
  EXPECT_NE(model.alpha, 7e-6);
  MPI_Barrier(MPI_COMM_WORLD);
  return model;
}

// A cache of format 2 written before rendezvous bursts were measured (no
// delta_large) is measured again and rewritten with it.
TEST(CostModelChoice, CacheWithoutHandshakeFigureIsMeasuredAgain) {
  ISO_REQUIRE_FRESH_PROCESS();
  if (iso_test::world_size() == 1) GTEST_SKIP() << "calibration needs 2 ranks";
  SharedTempDir dir;
  std::string cache;
  const iso::CostModel& model = stale_cache_model(
      dir, "eager_limit = 4096\nalpha_large = 7e-6\nbeta_large = 7e-11\nbeta_copy = 7e-11\n", cache);
  EXPECT_GT(model.delta_large, 0.0);
  if (iso_test::world_rank() == 0) {
    const iso::CostModel rewritten = iso::CostModel::load(cache);
    EXPECT_EQ(rewritten.delta_large, model.delta_large);
    EXPECT_EQ(rewritten.alpha, model.alpha);
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// ... and so is one written before gathered messages had a line of their
// own (alpha_gathered): its figures priced a torus step of gathered messages
// as contiguous rendezvous ones, 2x too dear on Open MPI's shared memory.
TEST(CostModelChoice, CacheWithoutGatheredLineIsMeasuredAgain) {
  ISO_REQUIRE_FRESH_PROCESS();
  if (iso_test::world_size() == 1) GTEST_SKIP() << "calibration needs 2 ranks";
  SharedTempDir dir;
  std::string cache;
  const iso::CostModel& model =
      stale_cache_model(dir,
                        "eager_limit = 4096\nalpha_large = 7e-6\nbeta_large = 7e-11\nbeta_copy = 7e-11\n"
                        "delta_large = 7e-6\nbeta_scattered = 7e-10\n",
                        cache);
  EXPECT_GT(model.alpha_gathered, 0.0);
  EXPECT_GT(model.delta_gathered, 0.0);
  if (iso_test::world_rank() == 0) {
    const iso::CostModel rewritten = iso::CostModel::load(cache);
    EXPECT_EQ(rewritten.alpha_gathered, model.alpha_gathered);
    EXPECT_EQ(rewritten.delta_gathered, model.delta_gathered);
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// A tuning whose measurements contradict the cached calibration (the
// model's choice timed at more than 1.5 times the fastest candidate) removes
// that cache, so the next job calibrates again; a tuning that agrees keeps
// it. The cache here is a latency-free model (alpha = delta = 0, 1 ns a
// byte) that picks linear for 8-byte blocks; whether linear is 1.5 times
// the fastest is the measurement's to say (26 messages against 6: about 5x
// on this machine), and the test holds the removal to that verdict.
TEST(CostModelChoice, TuningContradictingTheCacheExpiresIt) {
  ISO_REQUIRE_FRESH_PROCESS();
  if (iso_test::world_size() == 1) GTEST_SKIP() << "a calibration cache needs 2 ranks";
  SharedTempDir dir;
  unsetenv("ISO_COST_MODEL");
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  setenv("ISO_TUNE_CACHE", "off", 1);
  if (iso_test::world_rank() == 0) mkdir((dir.path() + "/isostencil").c_str(), 0755);
  // Every figure a cache needs to be used as it is (not measured again).
  const std::string cache = dir.write(cache_name(), model_text(0, 1e-9, 0, 0) +
                                                        "version = 2\neager_limit = 1e9\nalpha_large = 0\n"
                                                        "beta_large = 1e-9\nbeta_copy = 1e-9\ndelta_large = 1e-12\n"
                                                        "beta_scattered = 1e-9\nalpha_gathered = 1e-12\n"
                                                        "delta_gathered = 1e-12\n");
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  std::vector<double> send(static_cast<std::size_t>(nbh.size()), 1.0), recv(send.size(), 0.0);
  iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                         {iso::Algorithm::tune});
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  EXPECT_EQ(model.source, cache) << "the tuning loaded the cache to weigh its choice";
  // The model's choice: linear (what automatic picks under it).
  iso::Operation automatic = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                                {iso::Algorithm::automatic});
  ASSERT_EQ(automatic.algorithm(), iso::Algorithm::linear);
  double fastest = -1, linear = -1;
  for (const iso::TuneTrial& trial : op.tune_trials()) {
    fastest = fastest < 0 ? trial.seconds : std::min(fastest, trial.seconds);
    if (trial.algorithm == iso::Algorithm::linear) linear = trial.seconds;
  }
  ASSERT_GT(linear, 0.0) << "linear was timed";
  MPI_Barrier(MPI_COMM_WORLD);
  if (iso_test::world_rank() == 0) {
    struct stat info{};
    const bool kept = stat(cache.c_str(), &info) == 0;
    EXPECT_EQ(kept, linear <= 1.5 * fastest)
        << "linear " << linear * 1e6 << " us, fastest " << fastest * 1e6 << " us; cache " << (kept ? "kept" : "removed");
    std::printf("linear %.2f us, fastest %.2f us: cache %s\n", linear * 1e6, fastest * 1e6, kept ? "kept" : "removed");
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// A model the user named is theirs: a tuning never removes it, whatever it
// measures; and without any cache a tuning calibrates nothing.
TEST(CostModelChoice, TuningKeepsANamedModelAndCalibratesNothing) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  setenv("ISO_TUNE_CACHE", "off", 1);
  const std::string named = dir.write("named.txt", model_text(0, 1e-9, 0, 0));
  setenv("ISO_COST_MODEL", named.c_str(), 1);
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  std::vector<double> send(static_cast<std::size_t>(nbh.size()), 1.0), recv(send.size(), 0.0);
  iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                         {iso::Algorithm::tune});
  unsetenv("ISO_COST_MODEL");
  iso::Operation again = iso::alltoall_init(nbh, send.data(), 1, MPI_DOUBLE, recv.data(), 1, MPI_DOUBLE,
                                            {iso::Algorithm::tune});
  MPI_Barrier(MPI_COMM_WORLD);
  if (iso_test::world_rank() == 0) {
    struct stat info{};
    EXPECT_EQ(stat(named.c_str(), &info), 0) << "the named model is gone";
    EXPECT_NE(stat((dir.path() + "/isostencil").c_str(), &info), 0) << "a tuning wrote a calibration cache";
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

// The calibration cache is keyed by the machine signature: another
// transport (Open MPI's btl as `mpirun --mca btl` sets it) or another MPI
// library names another file, the signature is the same on every rank, and
// a cache of another transport is never read: for_comm calibrates instead.
TEST(CostModelChoice, CacheOfAnotherTransportIsNotUsed) {
  ISO_REQUIRE_FRESH_PROCESS();
  SharedTempDir dir;
  unsetenv("ISO_COST_MODEL");
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  const char* btl = std::getenv("OMPI_MCA_btl");
  const std::string kept = btl ? btl : "";
  const std::string here = iso::machine_signature(MPI_COMM_WORLD);
  setenv("OMPI_MCA_btl", kept == "tcp,self" ? "vader,self" : "tcp,self", 1);
  const std::string other = iso::machine_signature(MPI_COMM_WORLD);
  if (btl) setenv("OMPI_MCA_btl", kept.c_str(), 1);
  else unsetenv("OMPI_MCA_btl");
  EXPECT_NE(here, other);
  EXPECT_NE(iso::CostModel::cache_path(here), iso::CostModel::cache_path(other));
  EXPECT_EQ(iso::CostModel::cache_path(here), iso::CostModel::cache_path(iso::machine_signature(MPI_COMM_WORLD)));
  EXPECT_NE(iso::CostModel::cache_path(here), iso::CostModel::cache_path("MPICH Version: 4.0.2; hosts 1"));
  std::uint64_t digest = 0;
  for (unsigned char c : here) digest = digest * 131 + c;
  std::uint64_t range[2] = {digest, ~digest};
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(range[0], ~range[1]) << "the machine signature differs between ranks: " << here;
  EXPECT_NE(here.find("hosts 1"), std::string::npos) << here;
  // The other transport's calibration, where this one's would be.
  if (iso_test::world_rank() == 0) mkdir((dir.path() + "/isostencil").c_str(), 0755);
  const std::string name = iso::CostModel::cache_path(other);
  dir.write("isostencil/" + name.substr(name.rfind('/') + 1),
            model_text(7e-6, 7e-10, 7e-8, 7e-7) +
                "version = 2\neager_limit = 4096\nalpha_large = 7e-6\nbeta_large = 7e-11\n"
                "beta_copy = 7e-11\ndelta_large = 7e-7\nbeta_scattered = 7e-11\n");
  dir.file(cache_name());
  const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
  if (iso_test::world_size() == 1) {
    EXPECT_EQ(model.source, "defaults");
  } else {
    EXPECT_EQ(model.source, "calibrated");
    EXPECT_NE(model.alpha, 7e-6);
  }
  EXPECT_TRUE(iso_test::all_ranks(true));
}

}  // namespace
