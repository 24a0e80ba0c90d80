// check_output_writable: whether every rank can write in output.dir, found
// out before anything is computed (rank 0 creates the directory, every rank
// writes and removes a probe file), and whether the run's files there may be
// written (iso/file_write.hpp: no directory, device or FIFO at their paths).
#include "isostencil/deck/checks.hpp"

#include "text.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace isostencil::deck {

void check_output_writable(MPI_Comm comm, const Deck& deck, bool create) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::string& dir = deck.output.dir;
  // Rank 0 looks at the directory and creates it; every rank then probes it.
  std::string error;
  int state[2] = {0, 0};  // exists, ready to probe
  if (rank == 0) {
    struct stat info {};
    const bool exists = ::stat(dir.c_str(), &info) == 0;
    state[0] = exists ? 1 : 0;
    if (exists && !S_ISDIR(info.st_mode)) {
      error = "\"" + dir + "\" exists and is not a directory";
    } else if (exists) {
      state[1] = 1;
    } else if (!create) {
      // Nothing is created: the nearest existing ancestor must take a new entry.
      std::string ancestor = dir;
      while (true) {
        const std::size_t slash = ancestor.find_last_of('/');
        ancestor = slash == std::string::npos ? "." : slash == 0 ? "/" : ancestor.substr(0, slash);
        if (::stat(ancestor.c_str(), &info) == 0 || ancestor == "." || ancestor == "/") break;
      }
      if (!S_ISDIR(info.st_mode))
        error = "\"" + ancestor + "\" is not a directory";
      else {
        // Permission bits do not tell (root passes access(); /sys and
        // read-only mounts refuse anyway): create a directory there and
        // remove it again, as `run` would create output.dir.
        const std::string probe = (ancestor == "/" ? std::string() : ancestor) + "/.isostencil-probe." +
                                  std::to_string(static_cast<long>(::getpid()));
        if (::mkdir(probe.c_str(), 0700) != 0)
          error = "cannot create it in \"" + ancestor + "\": " + std::strerror(errno);
        else
          ::rmdir(probe.c_str());
      }
    } else {
      // mkdir -p
      std::size_t position = 0;
      while (error.empty() && position != std::string::npos) {
        position = dir.find('/', position + 1);
        const std::string partial = dir.substr(0, position);
        if (partial.empty()) continue;
        if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
          error = "cannot create directory \"" + partial + "\": " + std::strerror(errno);
      }
      state[1] = error.empty() ? 1 : 0;
    }
  }
  ISO_MPI_CHECK(MPI_Bcast(state, 2, MPI_INT, 0, comm));
  if (state[1]) {
    const std::string probe = dir + "/.isostencil-write-test." + std::to_string(rank) + "." +
                              std::to_string(static_cast<long>(::getpid()));
    std::FILE* file = std::fopen(probe.c_str(), "w");
    if (!file || std::fputs("probe\n", file) < 0)
      error = "cannot write in \"" + dir + "\": " + std::strerror(errno);
    if (file && std::fclose(file) != 0 && error.empty())
      error = "cannot write in \"" + dir + "\": " + std::strerror(errno);
    std::remove(probe.c_str());
  }
  // The files a run writes there follow iso/file_write.hpp's rule for
  // outputs: a directory, a device, a FIFO or a socket at one of their paths
  // (or at the end of a link there) is refused now, on every rank, rather
  // than after the run (or never, for HDF5, which would write into it).
  if (rank == 0 && error.empty()) {
    std::vector<std::string> files{deck.output_path(".summary.json")};
    if (deck.output.format == "hdf5") {
      files.push_back(deck.output_path(".h5"));
      if (deck.grid.extent.size() == 2 || deck.grid.extent.size() == 3) files.push_back(deck.output_path(".xmf"));
    }
    if (deck.output.checkpoint_every > 0) files.push_back(deck.output_path(".checkpoint.h5"));
    for (const std::string& file : files) {
      const iso::PathTarget target = iso::inspect_path(file, iso::PathUse::output);
      if (!target.error.empty()) {
        error = target.error;
        break;
      }
    }
  }
  // Every rank throws the lowest failing rank's error: "output.dir: rank <r>: <error>".
  const std::string where = "output.dir";
  try {
    iso::agree_on_errors(comm, where, error);
  } catch (const iso::Error& agreed) {
    const std::string text = agreed.what();
    const std::size_t rank_at = where.size() + std::strlen(": rank ");
    const std::size_t colon = text.find(": ", rank_at);
    const int first_failing = std::stoi(text.substr(rank_at, colon - rank_at));
    deck.fail("output.dir", "output.dir = " + detail::quoted(dir) + ": " + text.substr(colon + 2) +
                                (size > 1 && first_failing > 0 ? " (rank " + std::to_string(first_failing) + ")" : "") +
                                (create ? "; nothing was computed" : ""));
  }
}


}  // namespace isostencil::deck
