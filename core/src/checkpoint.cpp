// Atomic checkpoints over parallel HDF5 (see checkpoint.hpp).
#include "isostencil/core/checkpoint.hpp"
#include "isostencil/core/profiling.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
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

/// A 64-bit finalizer (every input bit affects every output bit).
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string checksum_text(std::uint64_t sum) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016" PRIx64, sum);
  return std::string(checkpoint_checksum_tag) + digits;
}

/// The checksum of a dataset over all ranks (collective; each holds a block).
std::uint64_t global_checksum(MPI_Comm comm, ElementType type, const Hyperslab& slab,
                              const void* data) {
  std::uint64_t sum = checkpoint_checksum(type, slab, data);
  // Unsigned addition wraps: the sum modulo 2^64, in any order.
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm));
  return sum;
}

}  // namespace

std::uint64_t checkpoint_checksum(ElementType type, const Hyperslab& slab, const void* data) {
  const std::size_t dims = slab.count.size();
  long cells = 1;
  for (const long n : slab.count) cells *= n;
  if (cells <= 0 || dims == 0) return 0;
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::vector<long> index(dims, 0);
  std::uint64_t sum = 0;
  for (long cell = 0; cell < cells; ++cell) {
    std::uint64_t global = 0;
    std::size_t offset = 0;
    for (std::size_t j = 0; j < dims; ++j) {
      global = global * static_cast<std::uint64_t>(slab.global_extent[j]) +
               static_cast<std::uint64_t>(slab.global_offset[j] + index[j]);
      offset = offset * static_cast<std::size_t>(slab.memory_extent[j]) +
               static_cast<std::size_t>(slab.memory_start[j] + index[j]);
    }
    std::uint64_t bits = 0;
    if (type == ElementType::float64)
      std::memcpy(&bits, bytes + offset * sizeof(double), sizeof(double));
    else
      bits = bytes[offset];
    sum += mix(mix(global + 0x9E3779B97F4A7C15ULL) ^ bits);
    for (std::size_t j = dims; j-- > 0;) {
      if (++index[j] < slab.count[j]) break;
      index[j] = 0;
    }
  }
  return sum;
}

CheckpointWriter::CheckpointWriter(const Decomposition& decomposition, std::string path,
                                   const CheckpointInfo& info)
    : path_(std::move(path)),
      target_(iso::agreed_target(decomposition.comm(), path_, iso::PathUse::output,
                                 "isostencil::core::CheckpointWriter: the checkpoint")),
      temporary_(target_ + ".tmp"),
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

void CheckpointWriter::write_block(const std::string& name, ElementType type,
                                   const Hyperslab& slab, const void* data) {
  file_.write(name, type, slab, data);
  file_.set_attribute(name, "checksum", checksum_text(global_checksum(file_.comm(), type, slab, data)));
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
    if (error.empty() && std::rename(temporary_.c_str(), target_.c_str()) != 0)
      error = "cannot rename " + temporary_ + " to " + target_ + ": " + std::strerror(errno);
    if (error.empty()) error = sync_path(directory_of(target_), true);
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
  // Rank 0 looks; every rank throws its verdict, word for word.
  std::string error;
  if (rank == 0) {
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0 || ::access(path.c_str(), R_OK) != 0)
      error = "checkpoint " + path + ": cannot read it: " + std::strerror(errno) +
              " (a checkpoint is <output.dir>/<output.name>.checkpoint.h5)";
    else if (S_ISDIR(status.st_mode))
      error = "checkpoint " + path + " is a directory; give the checkpoint file in it "
              "(<output.name>.checkpoint.h5)";
  }
  int length = static_cast<int>(error.size());
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  error.resize(static_cast<std::size_t>(length));
  ISO_MPI_CHECK(MPI_Bcast(error.data(), length, MPI_CHAR, 0, comm));
  if (!error.empty()) throw CheckpointError(error);
  return H5File(comm, path, H5File::Mode::read);
}
}  // namespace

CheckpointReader::CheckpointReader(MPI_Comm comm, const std::string& path)
    : file_(open_checkpoint(comm, path)) {
  if (!file_.has_attribute("/", "format") ||
      file_.string_attribute("/", "format") != checkpoint_format)
    throw CheckpointError("checkpoint " + path +
                          ": an HDF5 file, but not an isostencil checkpoint (no format attribute \"" +
                          checkpoint_format + "\"); give the <output.name>.checkpoint.h5 a run wrote");
  info_.step = file_.long_attribute("/", "step");
  info_.time = file_.double_attribute("/", "time");
  info_.kernel = file_.string_attribute("/", "kernel");
  info_.deck = file_.string_attribute("/", "deck");
  info_.global_extent = file_.longs_attribute("/", "global_extent");
  info_.process_dims = file_.longs_attribute("/", "process_dims");
  info_.fields = split(file_.string_attribute("/", "fields"));
}

void CheckpointReader::read_block(const std::string& name, ElementType type,
                                  const Hyperslab& slab, void* data) const {
  const std::string& path = file_.path();
  // Every rank sees the same file: the verdicts below agree without messages.
  if (!file_.exists(name))
    throw CheckpointError("checkpoint " + path + ": dataset " + name +
                          " is missing (the checkpoint lists fields " +
                          fmt::format("{}", fmt::join(info_.fields, ", ")) + " of a " + info_.kernel +
                          " run): the file is damaged, or another kernel wrote it; restart from "
                          "a checkpoint of this kernel");
  const std::vector<long> extent = file_.extent(name);
  if (extent != slab.global_extent)
    throw CheckpointError("checkpoint " + path + ": dataset " + name + " has " +
                          fmt::format("{}", fmt::join(extent, "x")) + " cells, the run needs " +
                          fmt::format("{}", fmt::join(slab.global_extent, "x")) +
                          ": it was written for another grid (or is damaged)");
  if (file_.element_type(name) != type)
    throw CheckpointError("checkpoint " + path + ": dataset " + name + " holds " +
                          to_string(file_.element_type(name)) + " values, the kernel's field is " +
                          to_string(type) + ": restart from a checkpoint this kernel wrote");
  file_.read(name, type, slab, data);
  const std::uint64_t computed = global_checksum(file_.comm(), type, slab, data);
  if (!file_.has_attribute(name, "checksum")) {
    int rank = 0;
    MPI_Comm_rank(file_.comm(), &rank);
    if (rank == 0)
      std::fprintf(stderr,
                   "isostencil: warning: checkpoint %s: dataset %s has no checksum (written "
                   "before checkpoints carried one): its values are not verified\n",
                   path.c_str(), name.c_str());
    return;
  }
  std::string stored;
  try {
    stored = file_.string_attribute(name, "checksum");
  } catch (const iso::Error&) {
    stored = "(not a string)";
  }
  if (stored != checksum_text(computed))
    throw CheckpointError("checkpoint " + path + ": dataset " + name + ": checksum mismatch (stored " +
                          stored + ", computed " + checksum_text(computed) +
                          "): the file is corrupted (or was altered after it was written); "
                          "restart from an intact checkpoint");
}

}  // namespace isostencil::core
