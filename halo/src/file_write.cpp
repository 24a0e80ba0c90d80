// The one rule for files at paths that users name (iso/file_write.hpp).
#include "iso/file_write.hpp"

#include "iso/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace iso {

namespace {

using Kind = PathTarget::Kind;

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

Kind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return Kind::regular;
  if (S_ISCHR(mode)) return Kind::char_device;
  if (S_ISDIR(mode)) return Kind::directory;
  if (S_ISFIFO(mode)) return Kind::fifo;
  if (S_ISSOCK(mode)) return Kind::socket;
  if (S_ISBLK(mode)) return Kind::block_device;
  return Kind::other;
}

// mkdir -p of the directories above `path` (missing caches get their folder).
void make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
    ::mkdir(path.substr(0, slash).c_str(), 0777);
}

// Closes a descriptor on every way out.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

// Writes `content` to a new file beside `target` and renames it over
// `target` (which is a regular file or missing). Throws naming `path`.
void replace_file(const std::string& path, const std::string& target, const std::string& content) {
  static std::atomic<unsigned> counter{0};
  const std::string directory = directory_of(target);
  const std::string base = target.substr(target.find_last_of('/') + 1);
  struct stat old {};
  const bool existed = ::stat(target.c_str(), &old) == 0;
  std::string temporary;
  Descriptor file;
  for (int attempt = 0; attempt < 100 && file.fd < 0; ++attempt) {
    temporary = directory + "/." + base + ".tmp." + std::to_string(static_cast<long>(::getpid())) + "." +
                std::to_string(counter++);
    file.fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (file.fd < 0 && errno != EEXIST) break;
  }
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    if (file.fd >= 0) ::unlink(temporary.c_str());
    throw Error("cannot write " + quoted(path) + (target != path ? " (the file it links to, " + quoted(target) + ")" : "") +
                ": " + what + ": " + reason + "; the file there is unchanged");
  };
  if (file.fd < 0) fail("cannot create a temporary file in " + quoted(directory));
  // The new file takes the old one's place with its permissions (and owner
  // where allowed): a group's shared cache stays the group's.
  if (existed) {
    [[maybe_unused]] const int owner = ::fchown(file.fd, old.st_uid, old.st_gid);  // fails unless allowed
    [[maybe_unused]] const int mode = ::fchmod(file.fd, old.st_mode & 07777);
  }
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t wrote = ::write(file.fd, content.data() + done, content.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) fail("writing " + quoted(temporary));
    done += static_cast<std::size_t>(wrote);
  }
  if (::fsync(file.fd) != 0) fail("fsync of " + quoted(temporary));
  if (::close(file.fd) != 0) {
    file.fd = -1;
    ::unlink(temporary.c_str());
    throw Error("cannot write " + quoted(path) + ": closing " + quoted(temporary) + ": " + std::strerror(errno));
  }
  file.fd = -1;
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw Error("cannot write " + quoted(path) + ": renaming " + quoted(temporary) + " to " + quoted(target) +
                ": " + reason + "; the file there is unchanged");
  }
  // The rename itself reaches the disk with the directory.
  Descriptor folder{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (folder.fd >= 0) ::fsync(folder.fd);
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const char* describe(Kind kind) {
  switch (kind) {
    case Kind::missing: return "missing";
    case Kind::regular: return "a regular file";
    case Kind::char_device: return "a character device";
    case Kind::directory: return "a directory";
    case Kind::fifo: return "a FIFO (named pipe)";
    case Kind::socket: return "a socket";
    case Kind::block_device: return "a block device";
    case Kind::other: break;
  }
  return "not a regular file";
}

PathTarget inspect_path(const std::string& path, PathUse use) {
  PathTarget result;
  if (path.empty()) {
    result.error = "an empty path names no file";
    return result;
  }
  // Follow the chain of links by hand: each relative target is relative to
  // its link's directory, and the end of the chain is what gets replaced.
  std::string current = path;
  struct stat info {};
  int hops = 0;
  for (;; ++hops) {
    if (hops > 40) {
      result.error = quoted(path) + " is a loop of symbolic links; nothing was written";
      return result;
    }
    if (::lstat(current.c_str(), &info) != 0) {
      // ENOTDIR: a file where a directory should be above it. Nothing is
      // there; creating it fails later, as for any unwritable place.
      if (errno != ENOENT && errno != ENOTDIR) {
        result.error = "cannot look at " + quoted(current) + (current != path ? " (linked from " + quoted(path) + ")" : "") +
                       ": " + std::strerror(errno);
        return result;
      }
      result.kind = Kind::missing;
      break;
    }
    if (!S_ISLNK(info.st_mode)) {
      result.kind = kind_of(info.st_mode);
      break;
    }
    std::string next(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 4096) + 1, '\0');
    const ssize_t length = ::readlink(current.c_str(), next.data(), next.size());
    if (length < 0) {
      result.error = "cannot read the symbolic link " + quoted(current) + ": " + std::strerror(errno);
      return result;
    }
    next.resize(static_cast<std::size_t>(length));
    current = next.front() == '/' ? next : directory_of(current) + "/" + next;
  }
  result.target = current;
  const std::string what = hops == 0 ? quoted(path) + " is "
                                     : quoted(path) + " is a symbolic link to " + quoted(current) + ", which is ";
  switch (result.kind) {
    case Kind::regular:
      break;
    case Kind::missing:
      if (hops > 0) {
        // A dangling link names the file to create, in a directory that exists.
        struct stat folder {};
        const std::string directory = directory_of(current);
        if (::stat(directory.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode))
          result.error = quoted(path) + " is a symbolic link to " + quoted(current) + ", whose directory " +
                         quoted(directory) + " does not exist; nothing was written";
      }
      break;
    case Kind::char_device:
      if (use == PathUse::cache)
        result.keep_nothing = true;
      else
        result.error = what + "a character device; an output needs a regular file (or a link to one), "
                              "nothing was written";
      break;
    default:
      result.error = what + describe(result.kind) + "; " +
                     (use == PathUse::cache ? "a cache needs a regular file, a link to one, or a character device "
                                              "such as /dev/null to keep nothing"
                                            : "an output needs a regular file (or a link to one)") +
                     ", nothing was written";
  }
  return result;
}

bool write_file(const std::string& path, const std::string& content, PathUse use) {
  const PathTarget target = inspect_path(path, use);
  if (!target.error.empty()) throw Error(target.error);
  if (target.keep_nothing) return false;
  if (target.kind == Kind::missing && target.target == path) make_directories(path);
  replace_file(path, target.target, content);
  return true;
}

std::optional<std::string> read_cache_file(const std::string& path) {
  const PathTarget target = inspect_path(path, PathUse::cache);
  if (!target.error.empty()) throw Error(target.error);
  if (target.keep_nothing || target.kind != Kind::regular) return std::nullopt;
  std::ifstream in(target.target, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool update_cache_file(const std::string& path, const std::function<std::string(const std::string&)>& update) {
  const PathTarget target = inspect_path(path, PathUse::cache);
  if (!target.error.empty()) throw Error(target.error);
  if (target.keep_nothing) return false;
  if (target.kind == Kind::missing && target.target == path) make_directories(path);
  // The lock lives beside the file the path ends at: every job reaches the
  // same one, whichever link it came through. The file itself cannot carry
  // the lock, since each write replaces it.
  const std::string lock_path = target.target + ".lock";
  Descriptor lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666)};
  if (lock.fd < 0)
    throw Error("cannot write " + quoted(path) + ": cannot create the lock file " + quoted(lock_path) + ": " +
                std::strerror(errno));
  while (::flock(lock.fd, LOCK_EX) != 0)
    if (errno != EINTR)
      throw Error("cannot write " + quoted(path) + ": cannot lock " + quoted(lock_path) + ": " + std::strerror(errno));
  // Read under the lock: what a writer before us renamed into place.
  struct stat info {};
  const bool present = ::stat(target.target.c_str(), &info) == 0;
  if (present && !S_ISREG(info.st_mode))
    throw Error(quoted(path) + " became " + describe(kind_of(info.st_mode)) + " while it was being written; nothing was written");
  replace_file(path, target.target, update(present ? read_whole(target.target) : std::string()));
  return true;
}

std::string agreed_target(MPI_Comm comm, const std::string& path, PathUse use, const std::string& where) {
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string target, error;
  if (rank == 0) {
    const PathTarget found = inspect_path(path, use);
    error = found.error;
    if (!found.keep_nothing) target = found.target;
  }
  agree_on_errors(comm, where, error);
  int length = static_cast<int>(target.size());
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  target.resize(static_cast<std::size_t>(length));
  ISO_MPI_CHECK(MPI_Bcast(target.data(), length, MPI_CHAR, 0, comm));
  return target;
}

}  // namespace iso
