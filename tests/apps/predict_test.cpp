// `plan --predict` and the demo's predicted column: the plan library's
// predictions under the cost model, checked by hand for a small case, the
// flip of automatic's choice with the block size, the evaluation of a
// million-process torus, meshes against a brute-force maximum, and where the
// model comes from without --model.
#include "isostencil/plan.hpp"
#include "isostencil/spec.hpp"

#include "iso/cost_model.hpp"
#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

namespace {

using iso::Algorithm;
using iso::Collective;
using isostencil::predict;
using isostencil::Predictions;

iso::CartGeometry grid_of(std::vector<int> sizes, bool periodic) {
  const std::size_t dims = sizes.size();
  return iso::CartGeometry{std::move(sizes), std::vector<bool>(dims, periodic)};
}

// A temporary directory, removed with the files written through it.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/iso_predict_test_XXXXXX";
    const char* made = mkdtemp(pattern);
    path_ = made ? made : "/tmp";
  }
  ~TempDir() {
    for (const auto& file : files_)
      std::remove(file.c_str());
    rmdir((path_ + "/isostencil").c_str());
    rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    files_.push_back(path_ + "/" + name);
    std::ofstream(files_.back()) << text;
    return files_.back();
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
  std::vector<std::string> files_;
};

// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

// 2-D Moore r=1 (s = 8) on a 3 x 3 torus, blocks of 100 bytes, under
//   alpha = 1 us per step, beta = 1 ns per byte, gamma = 0.1 us per entry,
//   delta = 0.8 us per further message of a step.
// By hand, as operations run schedules (rounds that do not depend on each
// other form one step; a step costs alpha + delta per further message + beta
// * max(bytes sent, received) + gamma * (entries sent + received)):
//   linear, both collectives: one step of 8 messages of 1 block each way
//     1 + 7 * 0.8 + 0.8 + 16 * 0.1          =  9.0 us
//   torus and direct alltoall: 4 rounds of 3 blocks, opposite directions
//   paired: 2 steps of 2 messages, 3 blocks each
//     2 * (1 + 0.8 + 0.6 + 12 * 0.1)        =  7.2 us
//   torus allgather: a step of 2 messages of 1 block, then one of 3 blocks
//     (1 + 0.8 + 0.2 + 0.4) + 3.6           =  6.0 us
//   mpi, both: alpha + 7 delta + beta * 800 + gamma * 16
//     1 + 5.6 + 0.8 + 1.6                   =  9.0 us
// The 8 targets of a 3 x 3 torus are distinct: mpi is a candidate, and auto
// picks torus (7.2 and 6.0 us; direct ties and comes later).
TEST(Predict, MatchesHandComputationWithAModelFile) {
  TempDir dir;
  const std::string file = dir.write("hand.txt",
                                     "# hand-computation model\n"
                                     "alpha = 1e-6\nbeta = 1e-9\ngamma = 1e-7\ndelta = 8e-7\n");
  const iso::CostModel model = isostencil::load_model(file);
  EXPECT_EQ(model.source, file);
  const Predictions p = predict(iso::OffsetList::moore(2, 1), grid_of({3, 3}, true), model, {100});
  ASSERT_EQ(p.sizes.size(), 1u);
  const auto& size = p.sizes[0];
  EXPECT_EQ(size.block_bytes, 100);
  EXPECT_TRUE(p.torus);
  EXPECT_EQ(p.processes, 9);
  EXPECT_EQ(p.processes_evaluated, 1);
  EXPECT_TRUE(p.mpi_candidate);

  const double us = 1e-6;
  const double tolerance = 1e-12;
  EXPECT_NEAR(size.at(Algorithm::linear, Collective::alltoall).seconds, 9.0 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::linear, Collective::allgather).seconds, 9.0 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::torus, Collective::alltoall).seconds, 7.2 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::direct, Collective::alltoall).seconds, 7.2 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::torus, Collective::allgather).seconds, 6.0 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::direct, Collective::allgather).seconds, 6.0 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::mpi, Collective::alltoall).seconds, 9.0 * us, tolerance);
  EXPECT_NEAR(size.at(Algorithm::mpi, Collective::allgather).seconds, 9.0 * us, tolerance);

  const auto& linear = size.at(Algorithm::linear, Collective::alltoall);
  EXPECT_EQ(linear.rounds, 8);
  EXPECT_EQ(linear.volume_blocks, 8);
  EXPECT_EQ(linear.volume_bytes, 800);
  const auto& torus = size.at(Algorithm::torus, Collective::alltoall);
  EXPECT_EQ(torus.rounds, 4);
  EXPECT_EQ(torus.volume_blocks, 12);
  EXPECT_EQ(torus.volume_bytes, 1200);
  EXPECT_EQ(size.at(Algorithm::torus, Collective::allgather).volume_blocks, 8);
  const auto& native = size.at(Algorithm::mpi, Collective::alltoall);
  EXPECT_EQ(native.rounds, 1);
  EXPECT_EQ(native.volume_blocks, 8);
  EXPECT_EQ(native.volume_bytes, 800);

  EXPECT_EQ(size.chosen(Collective::alltoall), Algorithm::torus);
  EXPECT_EQ(size.chosen(Collective::allgather), Algorithm::torus);

  // The JSON report carries the same numbers.
  const auto json = isostencil::predictions_to_json(p);
  EXPECT_EQ(json["100"]["torus"]["alltoall"]["rounds"], 4);
  EXPECT_EQ(json["100"]["torus"]["alltoall"]["volume_blocks"], 12);
  EXPECT_EQ(json["100"]["torus"]["alltoall"]["volume_bytes"], 1200);
  EXPECT_NEAR(json["100"]["mpi"]["allgather"]["predicted_seconds"].get<double>(), 9.0 * us,
              tolerance);
  EXPECT_EQ(json["100"]["auto"]["alltoall"], "torus");
  EXPECT_EQ(json["100"]["auto"]["allgather"], "torus");
  const auto model_json = isostencil::model_to_json(p.model, "note");
  EXPECT_EQ(model_json["alpha"].get<double>(), 1e-6);
  EXPECT_EQ(model_json["source"], file);
}

// The library's own formulas agree with the hand computation above (the
// predictions call them; this pins the formulas themselves).
TEST(Predict, LibraryFormulasAgreeWithTheHandComputation) {
  iso::CostModel model;
  model.alpha = 1e-6, model.beta = 1e-9, model.gamma = 1e-7, model.delta = 8e-7;
  const auto weights = isostencil::regular_block_bytes(8, Collective::alltoall, 100);
  EXPECT_EQ(weights.send.size(), 8u);
  EXPECT_EQ(weights.recv.size(), 8u);
  EXPECT_EQ(isostencil::regular_block_bytes(8, Collective::allgather, 100).send.size(), 1u);
  EXPECT_NEAR(iso::predict_native_seconds(model, 8, weights), 9.0e-6, 1e-12);
  const int origin[2] = {0, 0};
  const iso::Schedule torus =
      iso::build_schedule(iso::OffsetList::moore(2, 1), grid_of({3, 3}, true), origin,
                          Algorithm::torus, Collective::alltoall);
  EXPECT_NEAR(iso::predict_execution_seconds(model, torus, weights, /*self_rank=*/0), 7.2e-6, 1e-12);
}

// A latency-heavy model whose further messages of a step cost half a start-up
// (alpha = 10 us, delta = alpha / 2, beta = 1 ns/B, gamma = 0), 3-D Moore r=1
// (26 neighbors) on a 16^3 torus. Per call:
//   torus/direct alltoall  3 steps of 2 messages: 3 (alpha + delta) + 54 B beta
//                          = 4.5 alpha + 54 B beta
//   linear alltoall        one step of 26 messages: alpha + 25 delta + 26 B beta
//                          = 13.5 alpha + 26 B beta, the same as mpi's
// torus wins while 9 alpha > 28 B beta, i.e. below B = 3214 bytes; linear
// above (it ties with mpi and comes first). allgather moves 26 blocks in every
// algorithm, so torus (3 steps) wins at every size.
TEST(Predict, ChoiceFlipsFromTorusToLinearWithTheBlockSize) {
  iso::CostModel model;
  model.alpha = 1e-5, model.beta = 1e-9, model.gamma = 0, model.delta = 5e-6;
  const std::vector<long> sizes{8, 512, 2048, 4096, 8192, 1 << 20};
  const Predictions p =
      predict(iso::OffsetList::moore(3, 1), grid_of({16, 16, 16}, true), model, sizes);
  ASSERT_TRUE(p.mpi_candidate);
  const Algorithm alltoall[] = {Algorithm::torus,  Algorithm::torus,  Algorithm::torus,
                                Algorithm::linear, Algorithm::linear, Algorithm::linear};
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    SCOPED_TRACE(sizes[k]);
    const auto& size = p.sizes[k];
    EXPECT_EQ(size.chosen(Collective::alltoall), alltoall[k]);
    EXPECT_EQ(size.chosen(Collective::allgather), Algorithm::torus);
    const double b = static_cast<double>(sizes[k]);
    EXPECT_NEAR(size.at(Algorithm::torus, Collective::alltoall).seconds, 4.5e-5 + 54 * b * 1e-9,
                1e-12);
    EXPECT_NEAR(size.at(Algorithm::linear, Collective::alltoall).seconds, 13.5e-5 + 26 * b * 1e-9,
                1e-12);
    EXPECT_NEAR(size.at(Algorithm::mpi, Collective::alltoall).seconds, 13.5e-5 + 26 * b * 1e-9,
                1e-12);
  }
}

// The same model on a 2 x 2 x 2 torus: every process sends several blocks to
// each of its 7 partners, so mpi is no candidate (docs/design/irregular.md#repeated-partners-on-tiny-tori).
// A step sends one message to each partner (docs/design/schedules.md#one-message-per-partner):
// torus one a dimension, its two rounds to the same process merged (3 steps
// of 18 blocks: 3e-5 + 54 b ns), linear one to each partner in one step
// (1e-5 + 6 x 5e-6 + 26 b ns), so linear wins from about 357-byte blocks on,
// and torus at 8 bytes.
TEST(Predict, ChoiceFlipsFromTorusToLinearWhereMpiIsExcluded) {
  iso::CostModel model;
  model.alpha = 1e-5, model.beta = 1e-9, model.gamma = 0, model.delta = 5e-6;
  const Predictions p =
      predict(iso::OffsetList::moore(3, 1), grid_of({2, 2, 2}, true), model, {8, 512, 8192});
  EXPECT_FALSE(p.mpi_candidate);
  EXPECT_EQ(p.sizes[0].chosen(Collective::alltoall), Algorithm::torus);
  EXPECT_EQ(p.sizes[1].chosen(Collective::alltoall), Algorithm::linear);
  EXPECT_EQ(p.sizes[2].chosen(Collective::alltoall), Algorithm::linear);
  for (std::size_t k = 0; k < 3; ++k) {
    const double b = static_cast<double>(std::vector<long>{8, 512, 8192}[k]);
    EXPECT_NEAR(p.sizes[k].at(Algorithm::torus, Collective::alltoall).seconds, 3e-5 + 54 * b * 1e-9, 1e-12);
    EXPECT_NEAR(p.sizes[k].at(Algorithm::linear, Collective::alltoall).seconds, 4e-5 + 26 * b * 1e-9, 1e-12);
  }
  const std::string text = isostencil::format_predictions_text(p);
  EXPECT_NE(text.find("not a candidate of auto"), std::string::npos) << text;
  EXPECT_NE(text.find("excluded"), std::string::npos) << text;
}

// 100 x 100 x 100 = 10^6 processes: a torus needs one process's schedules.
// Timed in processor time: wall time would count the tests and builds running
// beside this one on a loaded machine, not this computation.
TEST(Predict, MillionProcessTorusIsQuick) {
  const std::clock_t begin = std::clock();
  const Predictions p = predict(iso::OffsetList::moore(3, 1), grid_of({100, 100, 100}, true),
                                iso::CostModel{}, {8, 512, 8192});
  const double seconds = static_cast<double>(std::clock() - begin) / CLOCKS_PER_SEC;
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(p.processes, 1000000);
  EXPECT_EQ(p.processes_evaluated, 1);
  EXPECT_TRUE(p.mpi_candidate);
  EXPECT_EQ(p.sizes[2].at(Algorithm::torus, Collective::alltoall).rounds, 6);
  EXPECT_EQ(p.sizes[2].at(Algorithm::torus, Collective::alltoall).volume_blocks, 54);
  EXPECT_EQ(p.sizes[2].at(Algorithm::torus, Collective::alltoall).volume_bytes, 54 * 8192);
}

// On a mesh every process is evaluated and the figures are maxima, as the
// library's maximum over ranks: compared with a brute force over processes.
TEST(Predict, MeshTakesTheMaximumOverEveryProcess) {
  iso::CostModel model;
  model.alpha = 2e-6, model.beta = 3e-10, model.gamma = 5e-8, model.delta = 1e-6;
  const iso::OffsetList offsets = iso::OffsetList::moore(2, 2);
  const iso::CartGeometry grid{{5, 3}, {false, true}};
  const Predictions p = predict(offsets, grid, model, {64});
  EXPECT_FALSE(p.torus);
  EXPECT_EQ(p.processes_evaluated, 15);
  const auto& collectives = isostencil::plan_collectives();
  for (std::size_t a = 0; a < 3; ++a)
    for (Collective collective : collectives) {
      const Algorithm algorithm = iso::automatic_candidates()[a];
      double worst = 0;
      long rounds = 0;
      for (int rank = 0; rank < 15; ++rank) {
        int coords[2];
        grid.coords_of(rank, coords);
        const iso::Schedule schedule =
            iso::build_schedule(offsets, grid, coords, algorithm, collective);
        worst = std::max(worst, iso::predict_execution_seconds(
                                    model, schedule,
                                    isostencil::regular_block_bytes(offsets.size(), collective, 64),
                                    rank));
        rounds = std::max(rounds, static_cast<long>(schedule.rounds.size()));
      }
      SCOPED_TRACE(std::string(iso::to_string(algorithm)) + " " + iso::to_string(collective));
      EXPECT_EQ(p.sizes[0].at(algorithm, collective).seconds, worst);
      EXPECT_EQ(p.sizes[0].at(algorithm, collective).rounds, rounds);
    }
  // Dimension 1 has 3 processes and offsets up to +-2: +2 and -1 reach the
  // same neighbor, so mpi is excluded.
  EXPECT_FALSE(p.mpi_candidate);
  const std::string text = isostencil::format_predictions_text(p);
  EXPECT_NE(text.find("all 15 processes"), std::string::npos) << text;
}

TEST(Predict, CoincidingTargetsOnALargeGridAreDetected) {
  // 1-D offsets +1 and -2 on a ring of 3: the same target.
  const Predictions ring3 =
      predict(iso::OffsetList(1, {1, -2}), grid_of({3}, true), iso::CostModel{}, {8});
  EXPECT_FALSE(ring3.mpi_candidate);
  const Predictions ring4 =
      predict(iso::OffsetList(1, {1, -2}), grid_of({4}, true), iso::CostModel{}, {8});
  EXPECT_TRUE(ring4.mpi_candidate);
}

TEST(PredictText, MarksAutosChoiceAndNamesTheModel) {
  iso::CostModel model;
  model.alpha = 1e-5, model.beta = 1e-9, model.gamma = 0, model.delta = 5e-6;
  model.source = "test";
  Predictions p =
      predict(iso::OffsetList::moore(3, 1), grid_of({16, 16, 16}, true), model, {8, 8192});
  p.model_note = "a model for this test";
  const std::string text = isostencil::format_predictions_text(p);
  EXPECT_NE(text.find("a model for this test"), std::string::npos) << text;
  EXPECT_NE(text.find("blocks of 8 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("blocks of 8192 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("one process: on a torus"), std::string::npos) << text;
  // One "<- auto" per block size and collective.
  std::size_t marks = 0;
  for (std::size_t at = text.find("<- auto"); at != std::string::npos;
       at = text.find("<- auto", at + 1))
    ++marks;
  EXPECT_EQ(marks, 4u) << text;
  EXPECT_NE(text.find("8192 B  linear    torus"), std::string::npos) << text;
}

TEST(PredictModel, LoadModelReportsBadFiles) {
  EXPECT_EQ(isostencil::load_model("defaults").alpha, iso::CostModel::builtin().alpha);
  EXPECT_THROW(isostencil::load_model("/nonexistent/model.txt"), isostencil::UsageError);
  TempDir dir;
  const std::string bad = dir.write("bad.txt", "alpha = 1\nbeta = x\n");
  try {
    isostencil::load_model(bad, "--model");
    FAIL() << "no error";
  } catch (const isostencil::UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--model " + bad), std::string::npos) << error.what();
  }
}

// Without --model, plan follows CostModel::for_comm's sources but never calibrates.
TEST(PredictModel, WithoutModelOptionFollowsForCommButNeverCalibrates) {
  TempDir dir;
  const std::string named = dir.write("named.txt", "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n");
  std::string note;
  {
    ScopedEnv model("ISO_COST_MODEL", named.c_str());
    EXPECT_EQ(isostencil::model_without_calibration(note).delta, 4);
    EXPECT_EQ(note, "ISO_COST_MODEL=" + named);
  }
  {
    ScopedEnv model("ISO_COST_MODEL", "defaults");
    EXPECT_EQ(isostencil::model_without_calibration(note).alpha, iso::CostModel::builtin().alpha);
  }
  {
    ScopedEnv model("ISO_COST_MODEL", "/nonexistent/model.txt");
    EXPECT_THROW(isostencil::model_without_calibration(note), isostencil::UsageError);
  }
  ScopedEnv unset("ISO_COST_MODEL", nullptr);
  ScopedEnv cache("XDG_CACHE_HOME", dir.path().c_str());
  // This process's own calibration cache (one host, this environment).
  const std::string cached = iso::CostModel::default_cache_path();
  ASSERT_EQ(cached, iso::CostModel::cache_path(iso::machine_signature(MPI_COMM_SELF)));
  ASSERT_EQ(cached.rfind(dir.path() + "/isostencil/cost_model-", 0), 0u) << cached;
  // No cache file: the defaults, and no calibration.
  EXPECT_EQ(isostencil::model_without_calibration(note).alpha, iso::CostModel::builtin().alpha);
  EXPECT_NE(note.find("built-in defaults"), std::string::npos) << note;
  // A cache file: its figures.
  iso::CostModel saved;
  saved.alpha = 1.25e-7;
  saved.save(cached);
  EXPECT_EQ(isostencil::model_without_calibration(note).alpha, 1.25e-7);
  EXPECT_NE(note.find(cached), std::string::npos) << note;
  std::remove(cached.c_str());
}

TEST(Spec, BytesListParsing) {
  EXPECT_EQ(isostencil::parse_bytes_list("8,512,8192"), (std::vector<long>{8, 512, 8192}));
  EXPECT_EQ(isostencil::parse_bytes_list("8"), (std::vector<long>{8}));
  EXPECT_EQ(isostencil::parse_bytes_list("8,8,16"), (std::vector<long>{8, 16}));
  EXPECT_EQ(isostencil::parse_bytes_list("1073741824"), (std::vector<long>{1L << 30}));
  for (const char* bad : {"0", "8,0", "-8", "x", "8,", "1073741825", ""})
    EXPECT_THROW(isostencil::parse_bytes_list(bad), isostencil::UsageError) << bad;
}

}  // namespace
