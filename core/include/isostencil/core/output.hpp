// Parallel HDF5 output: every rank writes the interior of its subdomain into
// one global dataset per field with a collective hyperslab write (MPI-IO), so
// a file does not depend on the decomposition that wrote it and can be read
// back on any other. FieldSeries adds the time series layout
//
//   <name>.h5   /step_000010/u   (attributes step, time; the file: deck, decomposition)
//   <name>.xmf  an XDMF 3 temporal collection of those datasets (2-D and 3-D grids)
//
// that ParaView and VisIt open, and scripts/plot_field.py turns into PNG frames.
//
//   core::FieldSeries series(grid.decomposition(), deck.output_path(".h5"),
//                            deck.output_path(".xmf"), {{"deck", deck.effective_toml()}});
//   series.begin_step(step, time);
//   series.write("u", grid, u);
//   series.end_step();
//
// HDF5 is a private dependency: no HDF5 type appears here.
#pragma once

#include "isostencil/core/decomposition.hpp"
#include "isostencil/core/field.hpp"
#include "isostencil/core/grid.hpp"
#include "isostencil/core/host_mirror.hpp"
#include "isostencil/core/profiling.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::core {

/// Element types the files hold.
enum class ElementType { float64, uint8 };
const char* to_string(ElementType type);

template <class T>
constexpr ElementType element_type_of() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, std::uint8_t>,
                "HDF5 output supports double and std::uint8_t fields");
  return std::is_same_v<T, double> ? ElementType::float64 : ElementType::uint8;
}

/// Which part of a global array this rank holds and where it sits in memory:
/// the local array has `memory_extent` (ghosts included, row-major) and its
/// interior block starts at `memory_start` with `count` cells per dimension;
/// that block is the global cells [global_offset, global_offset + count).
struct Hyperslab {
  std::vector<long> global_extent;
  std::vector<long> global_offset;
  std::vector<long> count;
  std::vector<long> memory_extent;
  std::vector<long> memory_start;
};

/// The hyperslab of a grid's field (interior only).
template <int D>
Hyperslab interior_hyperslab(const Grid<D>& grid) {
  Hyperslab slab;
  for (int j = 0; j < D; ++j) {
    slab.global_extent.push_back(grid.global_extent()[j]);
    slab.global_offset.push_back(grid.global_offset()[j]);
    slab.count.push_back(grid.interior_extent()[j]);
    slab.memory_extent.push_back(grid.field_extent()[j]);
    slab.memory_start.push_back(grid.ghost_lo()[j]);
  }
  return slab;
}

/// A parallel HDF5 file opened collectively over a communicator (MPI-IO
/// driver). Every member function is collective unless it says otherwise, and
/// every rank must pass the same arguments (attribute values included); the
/// data pointers of write()/read() are each rank's own. Failures throw
/// iso::Error naming the file, what failed (the dataset or attribute),
/// HDF5's innermost reasons and what to check.
class H5File {
public:
  enum class Mode {
    create,      ///< create or truncate, read-write
    read,        ///< existing file, read-only
    read_write,  ///< existing file
  };
  H5File(MPI_Comm comm, const std::string& path, Mode mode);
  H5File(H5File&&) noexcept;
  H5File& operator=(H5File&&) noexcept;
  ~H5File();
  /// Closes the file (collective); the destructor does it too.
  void close();
  void flush();

  const std::string& path() const { return path_; }
  MPI_Comm comm() const { return comm_; }

  /// Creates the dataset `name` (absolute path, parent groups created) of the
  /// slab's global extent and writes this rank's block collectively.
  void write(const std::string& name, ElementType type, const Hyperslab& slab, const void* data);
  /// Reads this rank's block of dataset `name` (collective). Throws when the
  /// dataset is missing, or its extent differs from slab.global_extent, or it
  /// does not hold `type`.
  void read(const std::string& name, ElementType type, const Hyperslab& slab, void* data) const;

  /// Not collective (metadata reads): does `name` (a group or dataset) exist?
  bool exists(const std::string& name) const;
  /// Not collective: the global extent of dataset `name`.
  std::vector<long> extent(const std::string& name) const;
  /// Not collective: the element type of dataset `name`.
  ElementType element_type(const std::string& name) const;
  /// Not collective: the names of the links in group `group` (sorted).
  std::vector<std::string> list(const std::string& group) const;
  void create_group(const std::string& name);
  /// Deletes the link `name` (collective).
  void remove(const std::string& name);

  /// Attributes on a group or dataset (`object`, "/" for the file).
  void set_attribute(const std::string& object, const std::string& name, const std::string& value);
  void set_attribute(const std::string& object, const std::string& name, long value);
  void set_attribute(const std::string& object, const std::string& name, double value);
  void set_attribute(const std::string& object, const std::string& name,
                     const std::vector<long>& value);
  /// Not collective. Throw when the attribute is missing or of another kind.
  std::string string_attribute(const std::string& object, const std::string& name) const;
  long long_attribute(const std::string& object, const std::string& name) const;
  double double_attribute(const std::string& object, const std::string& name) const;
  std::vector<long> longs_attribute(const std::string& object, const std::string& name) const;
  bool has_attribute(const std::string& object, const std::string& name) const;

private:
  MPI_Comm comm_ = MPI_COMM_NULL;  // duplicated, owned
  std::string path_;
  std::int64_t file_ = -1;          // hid_t
};

/// Writes a field's interior to dataset `name` of `file` (collective).
template <int D, class View>
void write_field(H5File& file, const std::string& name, const Grid<D>& grid, const View& field) {
  static_assert(Kokkos::is_view<View>::value && static_cast<int>(View::rank) == D,
                "write_field: a rank-D Kokkos::View of the grid");
  using value_type = typename View::non_const_value_type;
  Kokkos::fence();  // whatever instance wrote the field
  const auto host = host_copy(field);
  file.write(name, element_type_of<value_type>(), interior_hyperslab(grid), host.data());
}

/// Reads a field's interior from dataset `name` (collective; any
/// decomposition may have written it). Ghost cells are left as they are.
template <int D, class View>
void read_field(const H5File& file, const std::string& name, const Grid<D>& grid, const View& field) {
  static_assert(Kokkos::is_view<View>::value && static_cast<int>(View::rank) == D,
                "read_field: a rank-D Kokkos::View of the grid");
  static_assert(!std::is_const_v<typename View::value_type>, "read_field writes the field");
  Kokkos::fence();
  // The ghosts are not read from the file: the mirror starts as a copy.
  const auto host = host_copy(field);
  file.read(name, element_type_of<typename View::non_const_value_type>(), interior_hyperslab(grid),
            host.data());
  copy_back(field, host);
}

/// The output time series: one HDF5 file with a group per output step and an
/// XDMF file describing it (rewritten by rank 0 after every step, via a
/// temporary file and a rename, so it always describes complete steps).
class FieldSeries {
public:
  /// Collective. Creates (truncates) `h5_path`, or, with `resume_after` >= 0
  /// and an existing file, reopens it, deletes the steps after
  /// `resume_after` and keeps the earlier ones (a restart continues the
  /// series). `attributes` go on the file's root group (name, value).
  /// `xmf_path` empty: no XDMF file. XDMF describes grids of at most 3
  /// dimensions; for more, xdmf_note() says why none is written.
  FieldSeries(const Decomposition& decomposition, std::string h5_path, std::string xmf_path,
              const std::vector<std::pair<std::string, std::string>>& attributes,
              long resume_after = -1);
  FieldSeries(FieldSeries&&) noexcept;
  FieldSeries& operator=(FieldSeries&&) noexcept;
  ~FieldSeries();

  /// Collective: starts output step `step` (group /step_%06ld) at `time`.
  void begin_step(long step, double time);
  template <int D, class View>
  void write(const std::string& field_name, const Grid<D>& grid, const View& field) {
    const ProfilingRegion region("isostencil::io::output");
    const double start = MPI_Wtime();
    write_field(file(), group_ + "/" + field_name, grid, field);
    record(field_name, element_type_of<typename View::non_const_value_type>());
    seconds_ += MPI_Wtime() - start;
  }
  /// Collective: flushes the file and rewrites the XDMF description.
  void end_step();
  void close();

  const std::string& h5_path() const;
  const std::string& xmf_path() const;
  /// Empty when the XDMF file is written; else why not.
  std::string xdmf_note() const;
  /// Output steps in the file, in order.
  std::vector<long> steps() const;
  /// Seconds spent writing (this rank).
  double seconds() const { return seconds_; }

  /// The group name of a step: "/step_000010".
  static std::string group_name(long step);

private:
  H5File& file();
  void record(const std::string& field_name, ElementType type);

  struct State;
  std::unique_ptr<State> state_;
  std::string group_;
  double seconds_ = 0.0;
};

/// XDMF 3 text for a time series (exposed for tests): `h5_name` is the HDF5
/// file name as the XDMF file refers to it (relative to the XDMF file).
struct XdmfStep {
  long step = 0;
  double time = 0.0;
  std::vector<std::pair<std::string, ElementType>> fields;
};
std::string xdmf_text(const std::string& h5_name, const std::vector<long>& global_extent,
                      const std::vector<XdmfStep>& steps);

}  // namespace isostencil::core
