// Atomic checkpoints over parallel HDF5 (see checkpoint.hpp).
#include "isostencil/core/checkpoint.hpp"
#include "isostencil/core/profiling.hpp"

#include "iso/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace isostencil::core {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

/// fsync a file or directory; returns the error text ("" when fine).
std::string sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  std::string error;
  if (::fsync(fd) != 0 && errno != EINVAL) error = "fsync " + path + ": " + std::strerror(errno);
  ::close(fd);
  return error;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

CheckpointWriter::CheckpointWriter(const Decomposition& decomposition, std::string path,
                                   const CheckpointInfo& info)
    : path_(std::move(path)),
      temporary_(path_ + ".tmp"),
      step_(info.step),
      file_(decomposition.comm(), temporary_, H5File::Mode::create) {
  file_.set_attribute("/", "format", std::string(checkpoint_format));
  file_.set_attribute("/", "step", info.step);
  file_.set_attribute("/", "time", info.time);
  file_.set_attribute("/", "kernel", info.kernel);
  file_.set_attribute("/", "deck", info.deck);
  file_.set_attribute("/", "global_extent", decomposition.global_extent());
  file_.set_attribute("/", "process_dims",
                      std::vector<long>(decomposition.process_dims().begin(),
                                        decomposition.process_dims().end()));
  file_.set_attribute("/", "fields", join(info.fields));
  file_.create_group("/state");
}

void CheckpointWriter::commit() {
  const ProfilingRegion region("isostencil::io::checkpoint");
  MPI_Comm comm = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Comm_dup(file_.comm(), &comm));
  file_.close();  // collective: every rank's data is in the file after it
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (const char* abort_step = std::getenv("ISOSTENCIL_TEST_ABORT_CHECKPOINT")) {
    if (std::atol(abort_step) == step_) {
      MPI_Barrier(comm);
      if (rank == 0)
        std::fprintf(stderr, "isostencil: ISOSTENCIL_TEST_ABORT_CHECKPOINT=%ld: aborting after "
                             "writing %s, before the rename\n", step_, temporary_.c_str());
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  std::string error;
  if (rank == 0) {
    error = sync_path(temporary_, false);
    if (error.empty() && std::rename(temporary_.c_str(), path_.c_str()) != 0)
      error = "cannot rename " + temporary_ + " to " + path_ + ": " + std::strerror(errno);
    if (error.empty()) error = sync_path(directory_of(path_), true);
  }
  try {
    iso::agree_on_errors(comm, "isostencil::core::CheckpointWriter::commit", error);
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
  MPI_Comm_free(&comm);
}

namespace {
H5File open_checkpoint(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string error;
  if (rank == 0 && ::access(path.c_str(), R_OK) != 0)
    error = "cannot read " + path + ": " + std::strerror(errno);
  iso::agree_on_errors(comm, "isostencil::core::CheckpointReader", error);
  return H5File(comm, path, H5File::Mode::read);
}
}  // namespace

CheckpointReader::CheckpointReader(MPI_Comm comm, const std::string& path)
    : file_(open_checkpoint(comm, path)) {
  if (!file_.has_attribute("/", "format") ||
      file_.string_attribute("/", "format") != checkpoint_format)
    throw iso::Error("isostencil::core::CheckpointReader: " + path +
                     " is not an isostencil checkpoint (no format attribute \"" +
                     checkpoint_format + "\")");
  info_.step = file_.long_attribute("/", "step");
  info_.time = file_.double_attribute("/", "time");
  info_.kernel = file_.string_attribute("/", "kernel");
  info_.deck = file_.string_attribute("/", "deck");
  info_.global_extent = file_.longs_attribute("/", "global_extent");
  info_.process_dims = file_.longs_attribute("/", "process_dims");
  info_.fields = split(file_.string_attribute("/", "fields"));
}

}  // namespace isostencil::core
