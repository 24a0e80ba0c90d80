// What the tests of iso/file_write.hpp's rule put at a path, and how they
// look at what is left: a private temporary directory, a character device
// made there with mknod (never the real /dev/null), FIFOs, sockets, links.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace iso_files_test {

/// A directory of this process's own under /tmp, removed with everything in it.
/// With `shared`, rank 0 makes it and every rank of MPI_COMM_WORLD gets its name.
class TempDir {
public:
  explicit TempDir(bool shared = false) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    owner_ = !shared || rank == 0;
    if (owner_) {
      char name[] = "/tmp/isostencil-files-XXXXXX";
      if (::mkdtemp(name)) path_ = name;
    }
    if (shared) {
      int size = static_cast<int>(path_.size());
      MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
      path_.resize(static_cast<std::size_t>(size));
      MPI_Bcast(path_.data(), size, MPI_CHAR, 0, MPI_COMM_WORLD);
      shared_ = true;
    }
  }
  ~TempDir() {
    if (shared_) MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ignored;
    if (owner_ && !path_.empty()) std::filesystem::remove_all(path_, ignored);  // links are not followed
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
  bool owner_ = true, shared_ = false;
};

/// Why a private character device cannot be made here ("" when it can):
/// mknod needs root (and CAP_MKNOD, which some containers drop).
inline std::string cannot_mknod(const TempDir& dir) {
  if (::geteuid() != 0) return "not root: mknod of a private character device needs root";
  const std::string probe = dir / ".mknod-probe";
  if (::mknod(probe.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    return std::string("mknod refused here (") + std::strerror(errno) + "): no CAP_MKNOD";
  ::unlink(probe.c_str());
  return {};
}

/// A character device like /dev/null (1, 3), at a path of the test's own.
inline void make_char_device(const std::string& path) {
  ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << path << ": " << std::strerror(errno);
}

inline void make_fifo(const std::string& path) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0666), 0) << path << ": " << std::strerror(errno);
}

/// A bound Unix socket left on disk (the descriptor is closed; the node stays).
inline void make_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path) << path;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::close(fd);
  ASSERT_EQ(bound, 0) << path << ": " << std::strerror(errno);
}

inline void make_link(const std::string& target, const std::string& path) {
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0) << path << ": " << std::strerror(errno);
}

inline void make_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

/// What is at `path` itself (links not followed): "missing", "file", "link",
/// "char device", "directory", "fifo", "socket", "other".
inline std::string kind(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "missing";
  if (S_ISREG(info.st_mode)) return "file";
  if (S_ISLNK(info.st_mode)) return "link";
  if (S_ISCHR(info.st_mode)) return "char device";
  if (S_ISDIR(info.st_mode)) return "directory";
  if (S_ISFIFO(info.st_mode)) return "fifo";
  if (S_ISSOCK(info.st_mode)) return "socket";
  return "other";
}

inline std::string link_target(const std::string& path) {
  char buffer[4096];
  const ssize_t length = ::readlink(path.c_str(), buffer, sizeof buffer);
  return length < 0 ? std::string() : std::string(buffer, static_cast<std::size_t>(length));
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The names in a directory, sorted (no "." or "..").
inline std::vector<std::string> names_in(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* folder = ::opendir(directory.c_str())) {
    while (const dirent* entry = ::readdir(folder)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(folder);
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " ") + name;
  return text;
}

}  // namespace iso_files_test
