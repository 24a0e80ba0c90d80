// Files at paths that a user or an environment variable names (the tune
// cache, the cost model cache and --save-model, outputs, XDMF, summaries,
// checkpoints, benchmark CSVs): one rule for what such a path may be and how
// it is written (docs/reliability.md#files-at-paths-you-name).
//
// - A regular file (or a missing one) is replaced atomically: a temporary
//   file in the same directory, fsync, rename, fsync of the directory. The
//   new file keeps the old one's permission bits (a group's shared cache
//   stays writable by the group).
// - A symbolic link is followed, through any chain of links: the file it
//   finally names is replaced that way in its own directory, and every link
//   stays. A dangling link names a file to create, when that file's
//   directory exists.
// - A character device (a private /dev/null) means "keep nothing" for a
//   cache: nothing is read and nothing written. For an output it is an error.
// - Anything else (a directory, a FIFO, a socket, a block device, a link
//   loop, a dangling link into a missing directory) is an error naming the
//   path and what it is; nothing is replaced.
//
// Not collective, but agreed_target: MPI callers look on one rank and agree
// on the verdict (iso::agree_on_errors), before any work where they can.
#pragma once

#include <mpi.h>

#include <functional>
#include <optional>
#include <string>

namespace iso {

/// Whether a path holds a cache (a character device switches it off) or an
/// output (a character device is an error).
enum class PathUse { cache, output };

/// What a path names once its links are followed.
struct PathTarget {
  enum class Kind { missing, regular, char_device, directory, fifo, socket, block_device, other };
  Kind kind = Kind::missing;
  /// The file to replace: the end of the chain of links, else the path itself.
  std::string target;
  /// Empty when the path may be written for its use; else why not, naming
  /// the path, the links and what was found ("... is a directory").
  std::string error;
  /// A cache at a character device: read nothing, write nothing.
  bool keep_nothing = false;
};

/// Looks at `path` (follows links; creates nothing).
PathTarget inspect_path(const std::string& path, PathUse use);

/// "a directory", "a FIFO", ... (for messages).
const char* describe(PathTarget::Kind kind);

/// Writes `content` at `path` by the rule above, creating missing parent
/// directories of a plain path first (not those of a link's target).
/// Returns false when nothing was written (a cache at a character device).
/// Throws iso::Error naming the path when it may not or cannot be written;
/// the file there is then as it was.
bool write_file(const std::string& path, const std::string& content, PathUse use);

/// The content of the cache file at `path`: nullopt when there is none (a
/// missing file, a character device, an unreadable file). Throws iso::Error
/// when the path is of a kind the rule refuses (a directory, a FIFO, ...).
std::optional<std::string> read_cache_file(const std::string& path);

/// Read-modify-write of a cache shared by concurrent jobs: under an exclusive
/// lock (flock on "<target>.lock" beside the file the path finally names),
/// reads the file as it is now (empty when missing), passes it to `update`
/// and writes what that returns by write_file's rule. A writer that waits
/// for the lock re-reads the file the other one wrote, so neither loses an
/// entry. Returns false when nothing was done (a character device).
bool update_cache_file(const std::string& path, const std::function<std::string(const std::string&)>& update);

/// Collective over `comm`: rank 0 inspects `path` for `use` and every rank
/// throws the same iso::Error ("<where>: rank 0: <why>") when it may not be
/// written; else every rank gets the file to replace (the end of the path's
/// links; empty for a cache at a character device). For writers that do not
/// go through write_file (parallel HDF5).
std::string agreed_target(MPI_Comm comm, const std::string& path, PathUse use, const std::string& where);

}  // namespace iso
