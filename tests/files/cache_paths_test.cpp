// The two caches at paths of every kind, as jobs use them: Algorithm::tune
// with ISO_TUNE_CACHE naming a private character device, a link to a file, a
// link to a link, a dangling link, a directory or a FIFO; CostModel::save
// (--save-model) at those paths; and CostModel::for_comm's cache (one
// process per case, since for_comm keeps its model for the process: the
// CostModelCacheProcess tests run one at a time, see CMakeLists.txt).
// Rank 0 makes the paths in a directory every rank shares, every rank runs,
// rank 0 looks at what is left and every rank agrees on the verdict.
#include "file_kinds.hpp"

#include "isostencil_test.hpp"

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"
#include "iso/tune_cache.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace iso_files_test {
namespace {

using iso_test::all_ranks;
using iso_test::world_rank;

// An environment variable set for a scope, restored after.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ScopedEnv(const char* name, std::nullptr_t) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Rank 0's text on every rank.
std::string from_rank0(std::string text) {
  int size = static_cast<int>(text.size());
  MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(size));
  MPI_Bcast(text.data(), size, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

// Why no device can be made (rank 0 tries; the same answer everywhere).
std::string cannot_mknod_anywhere(const TempDir& dir) {
  return from_rank0(world_rank() == 0 ? cannot_mknod(dir) : std::string());
}

struct Tuned {
  bool cached = false;
  std::string error;  // what tune threw, "" when it ran and exchanged correctly
};

// A tuned alltoall of Moore 2:1 on a 2-D torus with ISO_TUNE_CACHE=`cache`.
Tuned tune_with_cache(const std::string& cache) {
  const ScopedEnv env("ISO_TUNE_CACHE", cache);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> dims(2, 0);
  MPI_Dims_create(size, 2, dims.data());
  iso::CartComm cart(MPI_COMM_WORLD, dims, {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  std::vector<int> send(static_cast<std::size_t>(nbh.size()), world_rank()), recv(send.size(), -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::tune;
  Tuned result;
  try {
    iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, options);
    op.run();
    for (int i = 0; i < nbh.size(); ++i)
      if (recv[static_cast<std::size_t>(i)] != nbh.source_rank(i))
        result.error = "block " + std::to_string(i) + " is wrong after the exchange";
    result.cached = op.tune_cached();
  } catch (const iso::Error& error) {
    result.error = error.what();
  }
  return result;
}

// Entry lines (not comments) of a tune cache file.
int entries_in(const std::string& path) {
  int count = 0;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') ++count;
  return count;
}

// Every rank: `failure` (rank 0's checks) is empty everywhere, and the error
// each rank saw is `expected` ("" or a text it must contain) on every rank.
void expect_agreed(const std::string& rank0_failure, const std::string& error, const std::string& expected) {
  const std::string failure = from_rank0(rank0_failure);
  EXPECT_TRUE(failure.empty()) << failure;
  const bool as_expected = expected.empty() ? error.empty() : error.find(expected) != std::string::npos;
  EXPECT_TRUE(all_ranks(as_expected)) << "rank " << world_rank() << " saw \"" << error << "\", expected \""
                                      << expected << "\"";
  // Word for word the same error on every rank.
  EXPECT_EQ(from_rank0(error), error);
}

TEST(TuneCachePath, ACharacterDeviceKeepsNothing) {
  TempDir dir(true);
  if (const std::string why = cannot_mknod_anywhere(dir); !why.empty()) GTEST_SKIP() << why;
  if (world_rank() == 0) make_char_device(dir / "null");
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned first = tune_with_cache(dir / "null");
  const Tuned second = tune_with_cache(dir / "null");
  std::string failure;
  if (world_rank() == 0) {
    if (kind(dir / "null") != "char device") failure = dir / "null is now a " + kind(dir / "null");
    else if (joined(names_in(dir.path())) != "null") failure = "left beside the device: " + joined(names_in(dir.path()));
  }
  expect_agreed(failure, first.error + second.error, "");
  EXPECT_FALSE(first.cached);
  EXPECT_FALSE(second.cached) << "a choice was kept at a character device";
}

TEST(TuneCachePath, ALinkToAFileIsWrittenThroughAndStays) {
  TempDir dir(true);
  if (world_rank() == 0) {
    EXPECT_EQ(::mkdir((dir / "group").c_str(), 0775), 0);
    make_file(dir / "group/tune.txt", "# the group's shared cache\n");
    make_link(dir / "group/tune.txt", dir / "mine.txt");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned first = tune_with_cache(dir / "mine.txt");
  const Tuned second = tune_with_cache(dir / "mine.txt");
  std::string failure;
  if (world_rank() == 0) {
    if (kind(dir / "mine.txt") != "link" || link_target(dir / "mine.txt") != dir / "group/tune.txt")
      failure = "the link became a " + kind(dir / "mine.txt");
    else if (entries_in(dir / "group/tune.txt") != 1)
      failure = "the shared file has " + std::to_string(entries_in(dir / "group/tune.txt")) + " entries, not 1";
    else if (joined(names_in(dir.path())) != "group mine.txt")
      failure = "left beside the link: " + joined(names_in(dir.path()));
  }
  expect_agreed(failure, first.error + second.error, "");
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(second.cached) << "the second init did not read the entry through the link";
}

TEST(TuneCachePath, ALinkToALinkToNothingYetCreatesTheFileAtTheEnd) {
  TempDir dir(true);
  if (world_rank() == 0) {
    EXPECT_EQ(::mkdir((dir / "one").c_str(), 0755), 0);
    EXPECT_EQ(::mkdir((dir / "two").c_str(), 0755), 0);
    make_link("../two/tune.txt", dir / "one/middle");  // dangling until the first write
    make_link("one/middle", dir / "first");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned first = tune_with_cache(dir / "first");
  const Tuned second = tune_with_cache(dir / "first");
  std::string failure;
  if (world_rank() == 0) {
    if (kind(dir / "first") != "link" || kind(dir / "one/middle") != "link")
      failure = "a link was replaced: first is a " + kind(dir / "first") + ", one/middle a " + kind(dir / "one/middle");
    else if (kind(dir / "two/tune.txt") != "file" || entries_in(dir / "two/tune.txt") != 1)
      failure = "two/tune.txt is a " + kind(dir / "two/tune.txt") + " with " +
                std::to_string(entries_in(dir / "two/tune.txt")) + " entries";
  }
  expect_agreed(failure, first.error + second.error, "");
  EXPECT_TRUE(second.cached);
}

TEST(TuneCachePath, ADanglingLinkIntoAMissingDirectoryIsAnErrorOnEveryRank) {
  TempDir dir(true);
  if (world_rank() == 0) make_link("gone/tune.txt", dir / "link");
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned tuned = tune_with_cache(dir / "link");
  std::string failure;
  if (world_rank() == 0 && (kind(dir / "link") != "link" || joined(names_in(dir.path())) != "link"))
    failure = "left: " + joined(names_in(dir.path()));
  expect_agreed(failure, tuned.error, "whose directory \"" + (dir / "gone") + "\" does not exist");
}

TEST(TuneCachePath, ADirectoryIsAnErrorOnEveryRankAndStaysEmpty) {
  TempDir dir(true);
  if (world_rank() == 0) {
    EXPECT_EQ(::mkdir((dir / "cache").c_str(), 0755), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned tuned = tune_with_cache(dir / "cache");
  std::string failure;
  if (world_rank() == 0 && (kind(dir / "cache") != "directory" || !names_in(dir / "cache").empty() ||
                            joined(names_in(dir.path())) != "cache"))
    failure = "changed: " + joined(names_in(dir.path())) + " / " + joined(names_in(dir / "cache"));
  expect_agreed(failure, tuned.error,
                "iso::Algorithm::tune: rank 0: the tune cache: \"" + (dir / "cache") + "\" is a directory");
}

TEST(TuneCachePath, AFifoIsAnErrorOnEveryRankAndStays) {
  TempDir dir(true);
  if (world_rank() == 0) make_fifo(dir / "fifo");
  MPI_Barrier(MPI_COMM_WORLD);
  const Tuned tuned = tune_with_cache(dir / "fifo");  // must not block opening it
  std::string failure;
  if (world_rank() == 0 && (kind(dir / "fifo") != "fifo" || joined(names_in(dir.path())) != "fifo"))
    failure = "changed: " + joined(names_in(dir.path()));
  expect_agreed(failure, tuned.error, "\"" + (dir / "fifo") + "\" is a FIFO");
}

TEST(TuneCachePath, JobsStoringAtOnceLoseNoEntry) {
  // Every rank is a job of its own storing entries into one shared cache
  // through a link, all at once; each store merges under the lock, so every
  // key any rank wrote is found at the end.
  TempDir dir(true);
  if (world_rank() == 0) make_link("shared.txt", dir / "link.txt");
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr int per_rank = 20;
  auto key_of = [](int rank, int k) {
    char key[17];
    std::snprintf(key, sizeof key, "%08x%08x", static_cast<unsigned>(rank), static_cast<unsigned>(k));
    return std::string(key);
  };
  iso::TuneChoice choice;
  choice.trials.push_back({iso::Algorithm::linear, 0, 1, 1e-6});
  std::string error;
  try {
    for (int k = 0; k < per_rank; ++k)
      iso::tune_cache_store(world_rank() % 2 ? dir / "link.txt" : dir / "shared.txt", key_of(world_rank(), k), choice,
                            "rank " + std::to_string(world_rank()));
  } catch (const iso::Error& e) {
    error = e.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::string failure;
  if (world_rank() == 0) {
    for (int r = 0; r < iso_test::world_size() && failure.empty(); ++r)
      for (int k = 0; k < per_rank && failure.empty(); ++k)
        if (!iso::tune_cache_find(dir / "link.txt", key_of(r, k)))
          failure = "lost: the entry of rank " + std::to_string(r) + " number " + std::to_string(k);
    if (failure.empty() && entries_in(dir / "shared.txt") != per_rank * iso_test::world_size())
      failure = std::to_string(entries_in(dir / "shared.txt")) + " entries";
    if (failure.empty() && kind(dir / "link.txt") != "link") failure = "the link became a " + kind(dir / "link.txt");
  }
  expect_agreed(failure, error, "");
}

// --save-model: an output. Not collective; each rank in a directory of its own.
TEST(CostModelSave, FollowsLinksAndRefusesWhatIsNoFile) {
  TempDir dir;
  const iso::CostModel model = iso::CostModel::builtin();
  ASSERT_EQ(::mkdir((dir / "kept").c_str(), 0755), 0);
  make_link("kept/model.txt", dir / "link.txt");  // dangling: created through the link
  model.save(dir / "link.txt");
  EXPECT_EQ(kind(dir / "link.txt"), "link");
  const iso::CostModel back = iso::CostModel::load(dir / "kept/model.txt");
  EXPECT_EQ(back.alpha, model.alpha);
  EXPECT_EQ(back.beta_scattered, model.beta_scattered);
  ASSERT_EQ(::mkdir((dir / "folder").c_str(), 0755), 0);
  make_fifo(dir / "fifo");
  for (const char* name : {"folder", "fifo"}) {
    std::string error;
    try {
      model.save(dir / name);
    } catch (const iso::Error& e) {
      error = e.what();
    }
    EXPECT_NE(error.find("iso::CostModel::save: \"" + (dir / name) + "\" is a"), std::string::npos) << error;
    std::string load_error;
    try {
      (void)iso::CostModel::load(dir / name);  // a FIFO would block a reader
    } catch (const iso::Error& e) {
      load_error = e.what();
    }
    EXPECT_NE(load_error.find("not a file of figures"), std::string::npos) << load_error;
  }
  EXPECT_EQ(kind(dir / "folder"), "directory");
  EXPECT_EQ(kind(dir / "fifo"), "fifo");
  if (const std::string why = cannot_mknod(dir); !why.empty()) GTEST_SKIP() << why;
  make_char_device(dir / "null");
  EXPECT_THROW(model.save(dir / "null"), iso::Error) << "--save-model is an output: a device is an error";
  EXPECT_EQ(kind(dir / "null"), "char device");
}

// CostModel::for_comm's cache, one case per process (see the file's head).
// XDG_CACHE_HOME points into the shared directory; ISO_COST_MODEL, which the
// test environment sets to "defaults", is unset.
struct CostModelCase {
  TempDir dir{true};
  std::string cache;  // the cache path for_comm uses
  ScopedEnv xdg{"XDG_CACHE_HOME", dir.path()};
  ScopedEnv named{"ISO_COST_MODEL", nullptr};
  CostModelCase() {
    cache = iso::CostModel::cache_path(iso::machine_signature(MPI_COMM_WORLD));
    if (world_rank() == 0) ::mkdir((dir / "isostencil").c_str(), 0755);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // for_comm's error, "" when it gave a model.
  std::string run(iso::CostModel* out = nullptr) {
    MPI_Barrier(MPI_COMM_WORLD);
    try {
      const iso::CostModel& model = iso::CostModel::for_comm(MPI_COMM_WORLD);
      if (out) *out = model;
    } catch (const iso::Error& error) {
      return error.what();
    }
    return {};
  }
};

TEST(CostModelCacheProcess, ACharacterDeviceKeepsNothing) {
  CostModelCase c;
  if (const std::string why = cannot_mknod_anywhere(c.dir); !why.empty()) GTEST_SKIP() << why;
  if (world_rank() == 0) make_char_device(c.cache);
  iso::CostModel model;
  const std::string error = c.run(&model);
  std::string failure;
  if (world_rank() == 0) {
    if (kind(c.cache) != "char device") failure = c.cache + " is now a " + kind(c.cache);
    else if (names_in(c.dir / "isostencil").size() != 1)
      failure = "left beside the device: " + joined(names_in(c.dir / "isostencil"));
  }
  expect_agreed(failure, error, "");
  // One rank: the defaults (nothing to measure); more: measured now.
  EXPECT_EQ(model.source, iso_test::world_size() == 1 ? "defaults" : "calibrated");
}

TEST(CostModelCacheProcess, ALinkIsFollowedAndStays) {
  CostModelCase c;
  if (world_rank() == 0) {
    // A group's file in the old one-regime format: measured again, and the
    // new figures go to the group's file through the link.
    make_file(c.dir / "group-model.txt", "alpha = 1e-6\nbeta = 1e-9\ngamma = 1e-9\ndelta = 1e-7\n");
    make_link(c.dir / "group-model.txt", c.cache);
  }
  iso::CostModel model;
  const std::string error = c.run(&model);
  std::string failure;
  if (world_rank() == 0) {
    const std::string text = read_text(c.dir / "group-model.txt");
    if (kind(c.cache) != "link") failure = "the link became a " + kind(c.cache);
    else if (iso_test::world_size() > 1 && text.find("version = 2") == std::string::npos)
      failure = "the linked file was not rewritten: " + text;
    else if (names_in(c.dir / "isostencil").size() != 1)
      failure = "left beside the link: " + joined(names_in(c.dir / "isostencil"));
  }
  expect_agreed(failure, error, "");
}

TEST(CostModelCacheProcess, ADirectoryIsAnErrorOnEveryRank) {
  CostModelCase c;
  if (world_rank() == 0) ::mkdir(c.cache.c_str(), 0755);
  const std::string error = c.run();
  std::string failure;
  if (world_rank() == 0 && (kind(c.cache) != "directory" || !names_in(c.cache).empty()))
    failure = c.cache + " changed";
  expect_agreed(failure, error, "the cost model cache " + c.cache + " cannot be used: \"" + c.cache + "\" is a directory");
}

TEST(CostModelCacheProcess, ANamedCharacterDeviceKeepsNothing) {
  CostModelCase c;
  if (const std::string why = cannot_mknod_anywhere(c.dir); !why.empty()) GTEST_SKIP() << why;
  if (world_rank() == 0) make_char_device(c.dir / "null");
  const ScopedEnv named("ISO_COST_MODEL", c.dir / "null");  // over the case's unset
  iso::CostModel model;
  const std::string error = c.run(&model);
  std::string failure;
  if (world_rank() == 0) {
    if (kind(c.dir / "null") != "char device") failure = "the device is now a " + kind(c.dir / "null");
    else if (!names_in(c.dir / "isostencil").empty())
      failure = "a cache was written: " + joined(names_in(c.dir / "isostencil"));
  }
  expect_agreed(failure, error, "");
  EXPECT_EQ(model.source, iso_test::world_size() == 1 ? "defaults" : "calibrated");
}

}  // namespace
}  // namespace iso_files_test
