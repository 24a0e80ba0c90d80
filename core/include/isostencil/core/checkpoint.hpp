// Checkpoints: the state of a run in one parallel HDF5 file, written
// atomically and read back on any decomposition.
//
//   <dir>/<name>.checkpoint.h5   /state/<field>  (global interior, row-major)
//                                attributes: format, step, time, kernel, deck (effective TOML),
//                                global_extent, process_dims of the writer
//                                /state/<field>@checksum  "isostencil-sum64:<16 hex digits>"
//
// Integrity: every dataset carries a checksum attribute that reading
// verifies. It is a hash of the values in global order, not of the bytes on
// disk: the sum, modulo 2^64, over the cells of mix(global row-major index,
// value bits) (checkpoint_checksum()). Each rank hashes its own block and one
// MPI_Allreduce adds the sums, so the value does not depend on the rank count
// or decomposition that wrote or reads the file. HDF5's Fletcher32 filter was
// not chosen: it needs chunked storage, checks only the chunks a rank reads
// (a mismatch surfaces as a read error on that rank alone), and any HDF5
// writer (h5py, h5repack) recomputes it, so an edited value passes unnoticed.
// A mismatch throws CheckpointError on every rank. A dataset without the
// attribute (a checkpoint written before checksums existed) is read with a
// warning on stderr (rank 0) that it was not verified.
//
// Writing goes to "<path>.tmp"; once every rank's data is in and the file is
// closed, rank 0 syncs it and renames it over <path> (atomic on POSIX), so a
// crash mid-write leaves the previous checkpoint intact. Reading selects
// each rank's block by global hyperslab, so a run may restart on another
// number of ranks: the fields come back bit for bit.
#pragma once

#include "isostencil/core/output.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace isostencil::core {

struct CheckpointInfo {
  long step = 0;
  double time = 0.0;
  std::string kernel;
  std::string deck;  ///< the effective deck (Deck::effective_toml)
  std::vector<long> global_extent;
  std::vector<long> process_dims;  ///< of the run that wrote it (information only)
  std::vector<std::string> fields;
};

/// Writes one checkpoint (collective over the decomposition's communicator).
class CheckpointWriter {
public:
  /// Creates "<target>.tmp" and writes the attributes, where the target is
  /// `path`, or the file a symbolic link there ends at (the link stays:
  /// iso/file_write.hpp's rule). Throws iso::Error on every rank, before
  /// anything is written, when `path` is not a regular file, a link to one
  /// or missing (a directory, a device, a FIFO, ...).
  CheckpointWriter(const Decomposition& decomposition, std::string path, const CheckpointInfo& info);
  /// Writes the field's interior to /state/<field_name> and its checksum.
  template <int D, class View>
  void write(const std::string& field_name, const Grid<D>& grid, const View& field) {
    static_assert(Kokkos::is_view<View>::value && static_cast<int>(View::rank) == D,
                  "CheckpointWriter::write: a rank-D Kokkos::View of the grid");
    Kokkos::fence();  // whatever instance wrote the field
    const auto host = host_copy(field);
    write_block("/state/" + field_name, element_type_of<typename View::non_const_value_type>(),
                interior_hyperslab(grid), host.data());
  }
  /// Closes the temporary file and renames it over the checkpoint (collective).
  /// Test hook: with ISOSTENCIL_TEST_ABORT_CHECKPOINT=<step> in the environment,
  /// the run aborts (MPI_Abort) after writing that step's temporary file and
  /// before the rename, as a crash mid-write would.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_; }

private:
  void write_block(const std::string& name, ElementType type, const Hyperslab& slab,
                   const void* data);

  std::string path_, target_, temporary_;
  long step_ = 0;
  H5File file_;
};

/// An open checkpoint (collective over `comm`): its attributes, and the
/// fields read by global hyperslab into any grid of the same global extent.
class CheckpointReader {
public:
  /// Throws iso::Error (the same on every rank) when the file is missing or
  /// not an isostencil checkpoint.
  CheckpointReader(MPI_Comm comm, const std::string& path);
  const CheckpointInfo& info() const { return info_; }
  /// Reads /state/<field_name> into the field's interior (ghosts left as
  /// they are) and verifies its checksum: CheckpointError, the same on every
  /// rank, when it does not match.
  template <int D, class View>
  void read(const std::string& field_name, const Grid<D>& grid, const View& field) const {
    static_assert(Kokkos::is_view<View>::value && static_cast<int>(View::rank) == D,
                  "CheckpointReader::read: a rank-D Kokkos::View of the grid");
    static_assert(!std::is_const_v<typename View::value_type>, "read writes the field");
    Kokkos::fence();
    const auto host = host_copy(field);  // the ghosts are not in the file
    read_block("/state/" + field_name, element_type_of<typename View::non_const_value_type>(),
               interior_hyperslab(grid), host.data());
    copy_back(field, host);
  }
  void close() { file_.close(); }

private:
  void read_block(const std::string& name, ElementType type, const Hyperslab& slab,
                  void* data) const;

  CheckpointInfo info_;
  H5File file_;
};

/// The format tag checkpoints carry in their "format" attribute.
inline constexpr const char* checkpoint_format = "isostencil-checkpoint-1";
/// The prefix of the checksum attribute's value (then 16 hex digits).
inline constexpr const char* checkpoint_checksum_tag = "isostencil-sum64:";

/// A checkpoint that cannot be used as it is (a checksum mismatch, a missing
/// dataset): thrown alike on every rank, so callers may end the run cleanly.
class CheckpointError : public iso::Error {
public:
  using iso::Error::Error;
};

/// This rank's share of a dataset's checksum (not collective): the sum,
/// modulo 2^64, over the slab's cells of a hash of (global row-major index,
/// value bits). Summing the shares of blocks that tile the global array gives
/// the same value for any tiling.
std::uint64_t checkpoint_checksum(ElementType type, const Hyperslab& slab, const void* data);

}  // namespace isostencil::core
