// The cost model's file format (iso/cost_model.hpp, docs/design/cost-model.md):
// round trips that give back every figure exactly, comments and any order,
// the older formats, and errors naming the file and line.
#include "iso/cost_model.hpp"
#include "iso/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// A private temporary directory of this rank, removed with its files.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/iso_cost_model_test_XXXXXX";
    const char* made = mkdtemp(pattern);
    path_ = made ? made : "/tmp";
  }
  ~TempDir() {
    for (const std::string& file : files_) std::remove(file.c_str());
    rmdir(path_.c_str());
  }
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = file(name);
    std::ofstream(path) << text;
    return path;
  }

private:
  std::string path_;
  std::vector<std::string> files_;
};

std::string load_error(const std::string& path) {
  try {
    iso::CostModel::load(path);
  } catch (const iso::Error& e) {
    return e.what();
  }
  return "";
}


TEST(CostModelFile, SaveLoadRoundTripOfTheDefaults) {
  TempDir dir;
  const iso::CostModel defaults = iso::CostModel::builtin();
  const std::string path = dir.file("defaults.txt");
  defaults.save(path);
  const iso::CostModel loaded = iso::CostModel::load(path);
  EXPECT_EQ(loaded.alpha, defaults.alpha);
  EXPECT_EQ(loaded.beta, defaults.beta);
  EXPECT_EQ(loaded.gamma, defaults.gamma);
  EXPECT_EQ(loaded.delta, defaults.delta);
  EXPECT_EQ(loaded.eager_limit, defaults.eager_limit);
  EXPECT_EQ(loaded.delta_large, defaults.delta_large);
  EXPECT_EQ(loaded.beta_scattered, defaults.beta_scattered);
  EXPECT_EQ(loaded.source, path);
}

// A calibrated model has arbitrary figures; the cache file must give back the
// model that was measured, or a process that loads the cache may choose a
// different algorithm than the one that calibrated.
TEST(CostModelFile, SaveLoadRoundTripIsExact) {
  TempDir dir;
  iso::CostModel model;
  model.alpha = 1.2345678901234e-6;
  model.beta = 9.87654321e-11;
  model.gamma = 3.3333333333333e-8;
  model.delta = 7.0000001e-7;
  model.eager_limit = 4096;
  model.alpha_large = 6.1234567890123e-6;
  model.beta_large = 4.56789012345e-11;
  model.beta_copy = 1.1111111111111e-11;
  model.delta_large = 2.7182818284590e-6;
  const std::string path = dir.file("model.txt");
  model.save(path);
  const iso::CostModel loaded = iso::CostModel::load(path);
  EXPECT_EQ(loaded.version, 2);
  const double saved[9] = {model.alpha,       model.beta,       model.gamma,     model.delta,
                           model.eager_limit, model.alpha_large, model.beta_large, model.beta_copy,
                           model.delta_large};
  const double read[9] = {loaded.alpha,       loaded.beta,       loaded.gamma,     loaded.delta,
                          loaded.eager_limit, loaded.alpha_large, loaded.beta_large, loaded.beta_copy,
                          loaded.delta_large};
  const char* names[9] = {"alpha",       "beta",       "gamma",     "delta",      "eager_limit",
                          "alpha_large", "beta_large", "beta_copy", "delta_large"};
  for (int k = 0; k < 9; ++k) {
    char text[128];
    std::snprintf(text, sizeof text, "%s: saved %.17g, loaded %.17g", names[k], saved[k], read[k]);
    EXPECT_EQ(read[k], saved[k]) << text;
  }
}

// The line of gathered messages: written and read back exactly, both keys
// or neither, and not in the one-regime format.
TEST(CostModelFile, GatheredLineRoundTripsAndGoesTogether) {
  TempDir dir;
  iso::CostModel model = iso::CostModel::builtin();
  model.alpha_gathered = 1.2682666666647783e-06, model.delta_gathered = 9.8726666666696756e-07;
  const std::string path = dir.file("gathered.txt");
  model.save(path);
  const iso::CostModel loaded = iso::CostModel::load(path);
  EXPECT_EQ(loaded.alpha_gathered, model.alpha_gathered);
  EXPECT_EQ(loaded.delta_gathered, model.delta_gathered);
  const std::string two = "version = 2\nalpha = 1e-6\nbeta = 1e-9\ngamma = 0\ndelta = 0\neager_limit = 4096\n"
                          "alpha_large = 5e-6\nbeta_large = 2e-10\n";
  EXPECT_EQ(iso::CostModel::load(dir.write("without.txt", two)).alpha_gathered, 0.0);
  const std::string lonely = load_error(dir.write("lonely.txt", two + "alpha_gathered = 2e-6\n"));
  EXPECT_NE(lonely.find("alpha_gathered and delta_gathered go together"), std::string::npos) << lonely;
  const std::string old = load_error(dir.write("v1.txt", "version = 1\nalpha = 2e-6\nbeta = 1e-10\ngamma = 1e-8\n"
                                                         "delta = 5e-7\nalpha_gathered = 2e-6\ndelta_gathered = 1e-6\n"));
  EXPECT_NE(old.find("version 1 has no"), std::string::npos) << old;
}

// The two route classes and the posting overlap: written only where set (a
// model without them saves as before), read back exactly, the node keys all
// three or none, a whole ranks_per_node, none of them in format 1.
TEST(CostModelFile, NodeClassesAndPostingOverlapRoundTrip) {
  TempDir dir;
  const std::string plain = dir.file("plain.txt");
  iso::CostModel::builtin().save(plain);
  std::ifstream in(plain);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("ranks_per_node"), std::string::npos) << text;
  EXPECT_EQ(text.find("delta_post"), std::string::npos) << text;
  iso::CostModel model = iso::CostModel::builtin();
  model.ranks_per_node = 32, model.alpha_node = 5.4000000000000002e-07, model.beta_node = 1.1764705882352941e-10;
  model.delta_post = 1.0000000000000001e-07;
  const std::string path = dir.file("nodes.txt");
  model.save(path);
  const iso::CostModel loaded = iso::CostModel::load(path);
  EXPECT_EQ(loaded.ranks_per_node, 32.0);
  EXPECT_EQ(loaded.alpha_node, model.alpha_node);
  EXPECT_EQ(loaded.beta_node, model.beta_node);
  EXPECT_EQ(loaded.delta_post, model.delta_post);
  const std::string two = "version = 2\nalpha = 1e-6\nbeta = 1e-9\ngamma = 0\ndelta = 0\neager_limit = 4096\n"
                          "alpha_large = 5e-6\nbeta_large = 2e-10\n";
  const iso::CostModel without = iso::CostModel::load(dir.write("without.txt", two));
  EXPECT_EQ(without.ranks_per_node, 0.0);
  EXPECT_EQ(without.delta_post, 0.0);
  EXPECT_EQ(iso::CostModel::load(dir.write("post.txt", two + "delta_post = 1e-7\n")).delta_post, 1e-7);
  const std::string lonely = load_error(dir.write("lonely.txt", two + "ranks_per_node = 32\nalpha_node = 1e-7\n"));
  EXPECT_NE(lonely.find("ranks_per_node, alpha_node and beta_node go together"), std::string::npos) << lonely;
  const std::string half =
      load_error(dir.write("half.txt", two + "ranks_per_node = 2.5\nalpha_node = 1e-7\nbeta_node = 1e-10\n"));
  EXPECT_NE(half.find("ranks_per_node must be a whole number"), std::string::npos) << half;
  const std::string old = load_error(dir.write("v1.txt", "version = 1\nalpha = 2e-6\nbeta = 1e-10\ngamma = 1e-8\n"
                                                         "delta = 5e-7\ndelta_post = 1e-7\n"));
  EXPECT_NE(old.find("version 1 has no"), std::string::npos) << old;
}

TEST(CostModelFile, CommentsBlankLinesAndAnyOrder) {
  TempDir dir;
  const std::string path = dir.write("ok.txt",
                                     "# measured on the test machine\n"
                                     "\n"
                                     "delta = 4e-7   # per extra message\n"
                                     "  gamma = 1e-8\n"
                                     "beta = 3e-10\r\n"
                                     "alpha = 2.5e-6\n");
  const iso::CostModel model = iso::CostModel::load(path);
  EXPECT_EQ(model.alpha, 2.5e-6);
  EXPECT_EQ(model.beta, 3e-10);
  EXPECT_EQ(model.gamma, 1e-8);
  EXPECT_EQ(model.delta, 4e-7);
}

// Files written before the second regime existed (format 1: four keys, no
// version) still load, as one regime: every message size costs alpha + beta b.
TEST(CostModelFile, FormatOneLoadsAsOneRegime) {
  TempDir dir;
  const std::string path = dir.write("v1.txt", "alpha = 2e-6\nbeta = 1e-10\ngamma = 1e-8\ndelta = 5e-7\n");
  const iso::CostModel model = iso::CostModel::load(path);
  EXPECT_EQ(model.version, 1);
  EXPECT_EQ(model.eager_limit, 0.0);
  EXPECT_DOUBLE_EQ(model.message_seconds(1 << 20), 2e-6 + 1e-10 * (1 << 20));
  // "version = 1" said outright is the same.
  EXPECT_EQ(iso::CostModel::load(dir.write("v1b.txt", "version = 1\nalpha = 2e-6\nbeta = 1e-10\ngamma = 1e-8\n"
                                                      "delta = 5e-7\n")).version, 1);
  // ... and has no rendezvous handshake figure either.
  EXPECT_NE(load_error(dir.write("v1c.txt", "version = 1\nalpha = 2e-6\nbeta = 1e-10\ngamma = 1e-8\n"
                                            "delta = 5e-7\ndelta_large = 3e-6\n"))
                .find("delta_large"),
            std::string::npos);
}

// Two regimes: up to eager_limit bytes alpha + beta b, above it alpha_large +
// beta_large b (the limit itself is still eager).
TEST(CostModelFile, SecondRegimeAboveTheEagerLimit) {
  TempDir dir;
  const iso::CostModel model = iso::CostModel::load(
      dir.write("v2.txt", "version = 2\nalpha = 1e-6\nbeta = 1e-9\ngamma = 0\ndelta = 0\neager_limit = 4096\n"
                          "alpha_large = 5e-6\nbeta_large = 2e-10\n"));
  EXPECT_EQ(model.version, 2);
  EXPECT_DOUBLE_EQ(model.message_seconds(4096), 1e-6 + 4096e-9);
  EXPECT_DOUBLE_EQ(model.message_seconds(4097), 5e-6 + 4097 * 2e-10);
  EXPECT_DOUBLE_EQ(model.message_seconds(8), 1e-6 + 8e-9);
}

TEST(CostModelFile, RegimeKeysGoTogether) {
  TempDir dir;
  const char* base = "alpha = 1e-6\nbeta = 1e-9\ngamma = 0\ndelta = 0\n";
  const struct {
    const char* name;
    std::string extra;
    const char* says;
  } cases[] = {
      {"partial.txt", "eager_limit = 4096\nalpha_large = 5e-6\n", "go together"},
      {"v2_without.txt", "version = 2\n", "version 2 needs"},
      {"v1_with.txt", "version = 1\neager_limit = 4096\nalpha_large = 5e-6\nbeta_large = 2e-10\n", "version 1 has no"},
      {"v3.txt", "version = 3\n", "version must be 1 or 2"},
  };
  for (const auto& bad : cases) {
    const std::string path = dir.write(bad.name, std::string(base) + bad.extra);
    const std::string message = load_error(path);
    EXPECT_NE(message.find(path), std::string::npos) << bad.name << ": " << message;
    EXPECT_NE(message.find(bad.says), std::string::npos) << bad.name << ": " << message;
  }
}

TEST(CostModelFile, LoadErrorsNameFileAndLine) {
  TempDir dir;
  struct Bad {
    const char* name;
    const char* text;
    const char* where;  // expected "file:line" suffix ("" = the file only)
  };
  const Bad cases[] = {
      {"bad_number.txt", "alpha = 3e-6\nbeta = 2e-10\ngamma = fast\ndelta = 1e-6\n", ":3"},
      {"unknown_key.txt", "alpha = 3e-6\nepsilon = 1\nbeta = 2e-10\ngamma = 2e-8\ndelta = 1e-6\n", ":2"},
      {"negative.txt", "alpha = 3e-6\nbeta = -2e-10\ngamma = 2e-8\ndelta = 1e-6\n", ":2"},
      {"no_equals.txt", "alpha 3e-6\nbeta = 2e-10\ngamma = 2e-8\ndelta = 1e-6\n", ":1"},
      {"missing_value.txt", "alpha = 3e-6\nbeta =\ngamma = 2e-8\ndelta = 1e-6\n", ":2"},
      {"missing_key.txt", "alpha = 3e-6\nbeta = 2e-10\ndelta = 1e-6\n", ""},
  };
  for (const Bad& bad : cases) {
    const std::string path = dir.write(bad.name, bad.text);
    const std::string message = load_error(path);
    EXPECT_FALSE(message.empty()) << bad.name << " was accepted";
    EXPECT_NE(message.find(path + bad.where), std::string::npos) << bad.name << ": " << message;
  }
  // The missing key is named.
  const std::string missing = load_error(dir.file("missing_key.txt"));
  EXPECT_NE(missing.find("gamma"), std::string::npos) << missing;
  // A file that does not exist is named too.
  const std::string absent = load_error(dir.file("absent.txt"));
  EXPECT_NE(absent.find("absent.txt"), std::string::npos) << absent;
}

// A number followed by garbage is a bad number too, not a silently truncated
// value ("2e-10x" read as 2e-10, "1.5.3" as 1.5).
TEST(CostModelFile, TrailingGarbageIsABadNumber) {
  TempDir dir;
  for (const char* text : {"alpha = 3e-6\nbeta = 2e-10x\ngamma = 2e-8\ndelta = 1e-6\n",
                           "alpha = 3e-6\nbeta = 1.5.3\ngamma = 2e-8\ndelta = 1e-6\n",
                           "alpha = 3e-6\nbeta = 2e-10 5\ngamma = 2e-8\ndelta = 1e-6\n"}) {
    const std::string path = dir.write("garbage.txt", text);
    const std::string message = load_error(path);
    EXPECT_NE(message.find(path + ":2"), std::string::npos) << "accepted or wrong line: \"" << text << "\" -> "
                                                            << (message.empty() ? "no error" : message);
  }
}

TEST(CostModelFile, SaveToAnUnwritablePathThrows) {
  const iso::CostModel model;
  EXPECT_THROW(model.save("/proc/iso-cost-model-test/cost_model.txt"), iso::Error);
}

}  // namespace
