// Checkpoints: the state of a run in one parallel HDF5 file, written
// atomically and read back on any decomposition.
//
//   <dir>/<name>.checkpoint.h5   /state/<field>  (global interior, row-major)
//                                attributes: format, step, time, kernel, deck (effective TOML),
//                                global_extent, process_dims of the writer
//
// Writing goes to "<path>.tmp"; once every rank's data is in and the file is
// closed, rank 0 syncs it and renames it over <path> (atomic on POSIX), so a
// crash mid-write leaves the previous checkpoint intact. Reading selects
// each rank's block by global hyperslab, so a run may restart on another
// number of ranks: the fields come back bit for bit.
#pragma once

#include "isostencil/core/output.hpp"

#include <mpi.h>

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
  /// Creates "<path>.tmp" and writes the attributes.
  CheckpointWriter(const Decomposition& decomposition, std::string path, const CheckpointInfo& info);
  template <int D, class View>
  void write(const std::string& field_name, const Grid<D>& grid, const View& field) {
    write_field(file_, "/state/" + field_name, grid, field);
  }
  /// Closes the temporary file and renames it over the checkpoint (collective).
  /// Test hook: with ISOSTENCIL_TEST_ABORT_CHECKPOINT=<step> in the environment,
  /// the run aborts (MPI_Abort) after writing that step's temporary file and
  /// before the rename, as a crash mid-write would.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_; }

private:
  std::string path_, temporary_;
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
  template <int D, class View>
  void read(const std::string& field_name, const Grid<D>& grid, const View& field) const {
    read_field(file_, "/state/" + field_name, grid, field);
  }
  void close() { file_.close(); }

private:
  CheckpointInfo info_;
  H5File file_;
};

/// The format tag checkpoints carry in their "format" attribute.
inline constexpr const char* checkpoint_format = "isostencil-checkpoint-1";

}  // namespace isostencil::core
