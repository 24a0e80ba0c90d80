// iso/file_write.hpp's rule, on each kind of thing a path can name: what
// write_file, read_cache_file and update_cache_file do there, what is left
// afterwards and what the error says. Every rank works in a directory of its
// own (the rule is not collective).
#include "file_kinds.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <thread>
#include <vector>

namespace iso_files_test {
namespace {

using iso::PathUse;

// The error write_file throws at `path`, or "" when it wrote.
std::string write_error(const std::string& path, const std::string& text, PathUse use) {
  try {
    iso::write_file(path, text, use);
  } catch (const iso::Error& error) {
    return error.what();
  }
  return {};
}

TEST(FileWrite, ARegularFileIsReplacedWholeAndKeepsItsPermissions) {
  TempDir dir;
  const std::string path = dir / "out.txt";
  make_file(path, "old contents, longer than the new ones\n");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  EXPECT_TRUE(iso::write_file(path, "new\n", PathUse::output));
  EXPECT_EQ(kind(path), "file");
  EXPECT_EQ(read_text(path), "new\n");
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "written in place, not replaced";
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_EQ(joined(names_in(dir.path())), "out.txt") << "a temporary file was left";
}

TEST(FileWrite, AMissingFileIsCreatedWithItsDirectories) {
  TempDir dir;
  const std::string path = dir / "a/b/out.txt";
  EXPECT_TRUE(iso::write_file(path, "x\n", PathUse::cache));
  EXPECT_EQ(read_text(path), "x\n");
  EXPECT_EQ(joined(names_in(dir / "a/b")), "out.txt");
}

TEST(FileWrite, ALinkIsFollowedAndStaysALink) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "shared").c_str(), 0755), 0);
  make_file(dir / "shared/cache.txt", "old\n");
  make_link("shared/cache.txt", dir / "mine.txt");  // relative: to the link's directory
  EXPECT_TRUE(iso::write_file(dir / "mine.txt", "new\n", PathUse::cache));
  EXPECT_EQ(kind(dir / "mine.txt"), "link");
  EXPECT_EQ(link_target(dir / "mine.txt"), "shared/cache.txt");
  EXPECT_EQ(kind(dir / "shared/cache.txt"), "file");
  EXPECT_EQ(read_text(dir / "shared/cache.txt"), "new\n");
  // The temporary file lived beside the target, and nothing was left.
  EXPECT_EQ(joined(names_in(dir.path())), "mine.txt shared");
  EXPECT_EQ(joined(names_in(dir / "shared")), "cache.txt");
}

TEST(FileWrite, ALinkToALinkIsFollowedToTheEnd) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "one").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir / "two").c_str(), 0755), 0);
  make_file(dir / "two/final.txt", "old\n");
  make_link(dir / "two/final.txt", dir / "one/middle.txt");  // absolute
  make_link("one/middle.txt", dir / "first.txt");            // relative
  EXPECT_TRUE(iso::write_file(dir / "first.txt", "new\n", PathUse::output));
  EXPECT_EQ(kind(dir / "first.txt"), "link");
  EXPECT_EQ(kind(dir / "one/middle.txt"), "link");
  EXPECT_EQ(link_target(dir / "one/middle.txt"), dir / "two/final.txt");
  EXPECT_EQ(read_text(dir / "two/final.txt"), "new\n");
  EXPECT_EQ(joined(names_in(dir / "one")), "middle.txt");
  EXPECT_EQ(joined(names_in(dir / "two")), "final.txt");
  const iso::PathTarget target = iso::inspect_path(dir / "first.txt", PathUse::output);
  EXPECT_EQ(target.target, dir / "two/final.txt");
  EXPECT_TRUE(target.error.empty()) << target.error;
}

TEST(FileWrite, ADanglingLinkCreatesItsTargetWhereTheDirectoryExists) {
  TempDir dir;
  make_link("target.txt", dir / "link.txt");
  EXPECT_TRUE(iso::write_file(dir / "link.txt", "made\n", PathUse::output));
  EXPECT_EQ(kind(dir / "link.txt"), "link");
  EXPECT_EQ(kind(dir / "target.txt"), "file");
  EXPECT_EQ(read_text(dir / "target.txt"), "made\n");
}

TEST(FileWrite, ADanglingLinkIntoAMissingDirectoryIsAnError) {
  TempDir dir;
  make_link("nowhere/target.txt", dir / "link.txt");
  const std::string error = write_error(dir / "link.txt", "x", PathUse::cache);
  EXPECT_NE(error.find("\"" + (dir / "link.txt") + "\" is a symbolic link to"), std::string::npos) << error;
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  EXPECT_EQ(kind(dir / "link.txt"), "link");
  EXPECT_EQ(kind(dir / "nowhere"), "missing") << "a link's target directory is not created";
}

TEST(FileWrite, ALoopOfLinksIsAnError) {
  TempDir dir;
  make_link("b", dir / "a");
  make_link("a", dir / "b");
  const std::string error = write_error(dir / "a", "x", PathUse::output);
  EXPECT_NE(error.find("loop of symbolic links"), std::string::npos) << error;
  EXPECT_EQ(kind(dir / "a"), "link");
  EXPECT_EQ(kind(dir / "b"), "link");
}

TEST(FileWrite, ADirectoryIsAnErrorNamingItAndStaysAsItWas) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "out.txt").c_str(), 0755), 0);
  make_file(dir / "out.txt/inside", "kept\n");
  for (const PathUse use : {PathUse::output, PathUse::cache}) {
    const std::string error = write_error(dir / "out.txt", "x", use);
    EXPECT_NE(error.find("\"" + (dir / "out.txt") + "\" is a directory"), std::string::npos) << error;
    EXPECT_NE(error.find("nothing was written"), std::string::npos) << error;
    EXPECT_THROW(iso::update_cache_file(dir / "out.txt", [](const std::string& s) { return s; }), iso::Error);
    EXPECT_THROW(iso::read_cache_file(dir / "out.txt"), iso::Error);
  }
  EXPECT_EQ(kind(dir / "out.txt"), "directory");
  EXPECT_EQ(joined(names_in(dir / "out.txt")), "inside");
  EXPECT_EQ(read_text(dir / "out.txt/inside"), "kept\n");
  EXPECT_EQ(joined(names_in(dir.path())), "out.txt") << "a temporary or lock file was left";
}

TEST(FileWrite, ALinkToADirectoryNamesBoth) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "folder").c_str(), 0755), 0);
  make_link("folder", dir / "link");
  const std::string error = write_error(dir / "link", "x", PathUse::cache);
  EXPECT_NE(error.find("\"" + (dir / "link") + "\" is a symbolic link to \"" + (dir / "folder") +
                       "\", which is a directory"),
            std::string::npos)
      << error;
  EXPECT_EQ(kind(dir / "link"), "link");
  EXPECT_EQ(kind(dir / "folder"), "directory");
}

TEST(FileWrite, AFifoAndASocketAreErrorsAndStay) {
  TempDir dir;
  make_fifo(dir / "fifo");
  make_socket(dir / "socket");
  // A FIFO must be refused without being opened: opening it would block.
  const std::string fifo = write_error(dir / "fifo", "x", PathUse::cache);
  EXPECT_NE(fifo.find("is a FIFO"), std::string::npos) << fifo;
  EXPECT_THROW(iso::read_cache_file(dir / "fifo"), iso::Error);
  const std::string socket = write_error(dir / "socket", "x", PathUse::output);
  EXPECT_NE(socket.find("is a socket"), std::string::npos) << socket;
  EXPECT_EQ(kind(dir / "fifo"), "fifo");
  EXPECT_EQ(kind(dir / "socket"), "socket");
  EXPECT_EQ(joined(names_in(dir.path())), "fifo socket");
}

TEST(FileWrite, ACharacterDeviceKeepsNothingForACacheAndIsAnErrorForAnOutput) {
  TempDir dir;
  if (const std::string why = cannot_mknod(dir); !why.empty()) GTEST_SKIP() << why;
  make_char_device(dir / "null");
  make_link("null", dir / "link-to-null");
  for (const char* name : {"null", "link-to-null"}) {
    const std::string path = dir / name;
    EXPECT_FALSE(iso::write_file(path, "x", PathUse::cache)) << path;
    EXPECT_FALSE(iso::read_cache_file(path).has_value()) << path;
    bool called = false;
    EXPECT_FALSE(iso::update_cache_file(path, [&](const std::string& s) {
      called = true;
      return s;
    }));
    EXPECT_FALSE(called) << "update_cache_file read " << path;
    const std::string error = write_error(path, "x", PathUse::output);
    EXPECT_NE(error.find("a character device; an output needs a regular file"), std::string::npos) << error;
  }
  EXPECT_EQ(kind(dir / "null"), "char device");
  EXPECT_EQ(kind(dir / "link-to-null"), "link");
  struct stat info {};
  ASSERT_EQ(::stat((dir / "null").c_str(), &info), 0);
  EXPECT_EQ(info.st_rdev, makedev(1, 3));
  EXPECT_EQ(joined(names_in(dir.path())), "link-to-null null") << "a temporary or lock file was left";
}

TEST(FileWrite, ConcurrentCacheUpdatesLoseNoEntry) {
  // Several writers (threads here: flock locks open files, not processes)
  // append to one cache through a link and directly; each re-reads under the
  // lock, so every line written is in the file at the end.
  TempDir dir;
  make_link("cache.txt", dir / "link.txt");
  constexpr int writers = 6, lines = 25;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      for (int k = 0; k < lines; ++k)
        iso::update_cache_file(dir / (w % 2 ? "link.txt" : "cache.txt"), [&](const std::string& current) {
          return current + "writer " + std::to_string(w) + " line " + std::to_string(k) + "\n";
        });
    });
  for (std::thread& thread : threads) thread.join();
  const std::string text = read_text(dir / "cache.txt");
  for (int w = 0; w < writers; ++w)
    for (int k = 0; k < lines; ++k)
      EXPECT_NE(text.find("writer " + std::to_string(w) + " line " + std::to_string(k) + "\n"), std::string::npos)
          << "lost: writer " << w << " line " << k;
  EXPECT_EQ(kind(dir / "link.txt"), "link");
  EXPECT_EQ(joined(names_in(dir.path())), "cache.txt cache.txt.lock link.txt");
}

}  // namespace
}  // namespace iso_files_test
