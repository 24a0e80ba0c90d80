// Parallel HDF5 files: the MPI-IO driver, collective hyperslab transfers,
// attributes, and HDF5 errors turned into iso::Error in the user's terms:
// "out/run.h5: cannot write dataset /step_000010/u: file write
// failed (...): is the disk full, or a file size limit (ulimit -f) set?".
// Each public member names what it is doing (an Operation), and the
// message keeps the innermost reasons of HDF5's error stack (the MPI-IO or
// system error), not the C calls.
#include "isostencil/core/output.hpp"

#include "iso/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <utility>
#include <vector>

namespace isostencil::core {

namespace {

/// HDF5 prints its error stack to stderr by default; the messages go into
/// our exceptions instead.
void silence_hdf5() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

herr_t collect_error(unsigned, const H5E_error2_t* error, void* data) {
  auto* entries = static_cast<std::vector<std::string>*>(data);
  entries->push_back(error->desc ? error->desc : "");
  return 0;
}

/// What the H5File member on this thread is doing ("write dataset /u"), and
/// the advice for when it fails.
struct OperationText {
  std::string what, advice;
};
thread_local OperationText current_operation;

/// Names the operation of a scope (restores the enclosing one on exit).
class Operation {
public:
  Operation(std::string what, std::string advice = "")
      : saved_(std::exchange(current_operation, OperationText{std::move(what), std::move(advice)})) {}
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  ~Operation() { current_operation = std::move(saved_); }

private:
  OperationText saved_;
};

/// Advice for reasons that say enough by themselves.
std::string advice_for(const std::string& reason) {
  if (reason.find("file signature not found") != std::string::npos)
    return "it is not an HDF5 file (or it was cut short)";
  if (reason.find("MPI_ERR_NO_SUCH_FILE") != std::string::npos ||
      reason.find("No such file") != std::string::npos)
    return "the file or its directory does not exist";
  if (reason.find("MPI_ERR_ACCESS") != std::string::npos ||
      reason.find("ermission denied") != std::string::npos ||
      reason.find("not permitted") != std::string::npos)
    return "permission denied: check that the directory is writable (or the file readable)";
  if (reason.find("MPI_ERR_NO_SPACE") != std::string::npos ||
      reason.find("No space") != std::string::npos ||
      reason.find("too large") != std::string::npos ||
      reason.find("write failed") != std::string::npos)
    return "is the disk full, or a file size limit (ulimit -f) or quota reached?";
  return "";
}

[[noreturn]] void throw_hdf5_error(const char* call, const std::string& path, const char*, int) {
  std::vector<std::string> entries;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &entries);
  H5Eclear2(H5E_DEFAULT);
  // The outermost entries say what failed, the innermost why (the MPI-IO or
  // system error of a full disk, say): the last two reasons, without repeats.
  std::vector<std::string> reasons;
  for (auto entry = entries.rbegin(); entry != entries.rend() && reasons.size() < 2; ++entry)
    if (!entry->empty() && std::find(reasons.begin(), reasons.end(), *entry) == reasons.end())
      reasons.insert(reasons.begin(), *entry);
  std::string reason;
  for (const std::string& text : reasons) reason += (reason.empty() ? "" : ": ") + text;
  if (reason.empty()) reason = "HDF5 gave no reason";
  // The HDF5 function, for a bug report: "H5Dwrite", not the whole call.
  std::string function(call);
  function = function.substr(0, function.find('('));
  std::string advice = advice_for(reason);
  if (advice.empty()) advice = current_operation.advice;
  // No rank here: the driver's "error on rank R" and agree_on_errors say it.
  throw iso::Error(path + ": cannot " +
                       (current_operation.what.empty() ? std::string("access the file")
                                                       : current_operation.what) +
                       ": " + reason + (advice.empty() ? "" : "; " + advice) + " (HDF5 " +
                       function + ")",
                   MPI_ERR_IO);
}

}  // namespace

/// Checks an HDF5 return value (negative: failure) and yields it.
#define ISO_H5_CHECK(call)                                                         \
  ([&]() {                                                                         \
    const auto iso_h5_result_ = (call);                                            \
    if (iso_h5_result_ < 0) throw_hdf5_error(#call, path_, __FILE__, __LINE__); \
    return iso_h5_result_;                                                         \
  }())

namespace {

/// Owns one HDF5 identifier.
class Handle {
public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  operator hid_t() const { return id_; }  // NOLINT: used as the id it owns

private:
  hid_t id_;
  Closer closer_;
};

hid_t memory_type(ElementType type) {
  return type == ElementType::float64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT8;
}
hid_t file_type(ElementType type) {
  return type == ElementType::float64 ? H5T_IEEE_F64LE : H5T_STD_U8LE;
}

std::vector<hsize_t> to_hsize(const std::vector<long>& values) {
  return std::vector<hsize_t>(values.begin(), values.end());
}

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

const char* to_string(ElementType type) {
  return type == ElementType::float64 ? "float64" : "uint8";
}

// --- H5File -------------------------------------------------------------------

H5File::H5File(MPI_Comm comm, const std::string& path, Mode mode) : path_(path) {
  silence_hdf5();
  // A plain communicator (split, not dup: a dup keeps a Cartesian topology).
  // Open MPI 4.1's ompio groups aggregators by the Cartesian topology and
  // then loses data of collective writes now and then (open-mpi/ompi#12718:
  // 3 ranks, Cartesian communicator; seen here in tests/apps io_readback).
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_split(comm, 0, rank, &comm_));
  const Operation operation(
      mode == Mode::create ? "create the file" : mode == Mode::read ? "open the file" : "reopen the file",
      mode == Mode::create ? "check that its directory exists and is writable"
                           : "check the path (an HDF5 file isostencil wrote)");
  try {
    Handle access(ISO_H5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
    ISO_H5_CHECK(H5Pset_fapl_mpio(access, comm_, MPI_INFO_NULL));
    // 1.8+ format: large attributes (long decks) go to dense storage.
    ISO_H5_CHECK(H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_LATEST));
    if (mode == Mode::create)
      file_ = ISO_H5_CHECK(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
    else
      file_ = ISO_H5_CHECK(H5Fopen(path.c_str(), mode == Mode::read ? H5F_ACC_RDONLY : H5F_ACC_RDWR,
                                   access));
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}

H5File::H5File(H5File&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      path_(std::move(other.path_)),
      file_(std::exchange(other.file_, -1)) {}

H5File& H5File::operator=(H5File&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (...) {
    }
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    path_ = std::move(other.path_);
    file_ = std::exchange(other.file_, -1);
  }
  return *this;
}

H5File::~H5File() {
  // Closing is collective. While an exception unwinds this rank alone, the
  // other ranks are elsewhere (a halo exchange, the next collective write):
  // a collective close would hang the job before the driver can abort it.
  // The file is left open instead; the job ends in MPI_Abort, or, when every
  // rank threw alike, HDF5 closes it at MPI_Finalize.
  if (std::uncaught_exceptions() > 0) return;
  try {
    close();
  } catch (...) {
    // A destructor must not throw; close() explicitly to see the error.
  }
}

void H5File::close() {
  const Operation operation("close the file (the last writes reach the disk here)",
                            "is the disk full, or a quota reached?");
  if (file_ >= 0) {
    const hid_t file = file_;
    file_ = -1;
    ISO_H5_CHECK(H5Fclose(file));
    // MPI-IO makes data visible to other openers only after sync + barrier
    // (MPI 4.0, 14.6.1): once close() returns anywhere, every rank's data is
    // in the file, so rank 0 may read, sync or rename it.
    ISO_MPI_CHECK(MPI_Barrier(comm_));
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void H5File::flush() {
  const Operation operation("flush the file", "is the disk full, or a quota reached?");
  ISO_H5_CHECK(H5Fflush(file_, H5F_SCOPE_GLOBAL));
}

namespace {
/// Copies the block [start, start + count) of a row-major array of extent
/// `memory` (elements of `size` bytes) to or from a contiguous buffer.
void copy_block(const std::vector<long>& memory, const std::vector<long>& start,
                const std::vector<long>& count, std::size_t size, const char* from, char* to,
                bool pack) {
  const int dims = static_cast<int>(memory.size());
  long cells = 1;
  for (const long n : count) cells *= n;
  if (cells == 0) return;
  std::vector<long> index(static_cast<std::size_t>(dims), 0);
  const std::size_t row = static_cast<std::size_t>(count[static_cast<std::size_t>(dims - 1)]) * size;
  for (long packed = 0; packed < cells; packed += count[static_cast<std::size_t>(dims - 1)]) {
    long offset = 0;
    for (int j = 0; j < dims; ++j) offset = offset * memory[static_cast<std::size_t>(j)] + start[static_cast<std::size_t>(j)] + index[static_cast<std::size_t>(j)];
    if (pack)
      std::memcpy(to + static_cast<std::size_t>(packed) * size, from + static_cast<std::size_t>(offset) * size, row);
    else
      std::memcpy(to + static_cast<std::size_t>(offset) * size, from + static_cast<std::size_t>(packed) * size, row);
    for (int j = dims - 2; j >= 0; --j) {
      if (++index[static_cast<std::size_t>(j)] < count[static_cast<std::size_t>(j)]) break;
      index[static_cast<std::size_t>(j)] = 0;
    }
  }
}
std::size_t element_size(ElementType type) { return type == ElementType::float64 ? 8 : 1; }
}  // namespace

void H5File::write(const std::string& name, ElementType type, const Hyperslab& slab,
                   const void* data) {
  const Operation operation("write dataset " + name, "is the disk full, or a quota reached?");
  const int dims = static_cast<int>(slab.global_extent.size());
  // The block goes to HDF5 contiguous (packed here, ghosts left out), so
  // MPI-IO sees a contiguous memory side.
  long cells = 1;
  for (const long n : slab.count) cells *= n;
  std::vector<char> packed(static_cast<std::size_t>(cells) * element_size(type));
  copy_block(slab.memory_extent, slab.memory_start, slab.count, element_size(type),
             static_cast<const char*>(data), packed.data(), true);
  const std::vector<hsize_t> global = to_hsize(slab.global_extent),
                             offset = to_hsize(slab.global_offset), count = to_hsize(slab.count),
                             memory = to_hsize(slab.count);
  const std::vector<hsize_t> start(static_cast<std::size_t>(dims), 0);
  data = packed.data();
  Handle file_space(ISO_H5_CHECK(H5Screate_simple(dims, global.data(), nullptr)), H5Sclose);
  Handle link_create(ISO_H5_CHECK(H5Pcreate(H5P_LINK_CREATE)), H5Pclose);
  ISO_H5_CHECK(H5Pset_create_intermediate_group(link_create, 1));
  if (exists(name)) ISO_H5_CHECK(H5Ldelete(file_, name.c_str(), H5P_DEFAULT));
  // Every cell is written right away: no fill values (parallel HDF5 would
  // write them at creation, a second write of the same bytes racing the data).
  Handle dataset_create(ISO_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  ISO_H5_CHECK(H5Pset_fill_time(dataset_create, H5D_FILL_TIME_NEVER));
  Handle dataset(ISO_H5_CHECK(H5Dcreate2(file_, name.c_str(), file_type(type), file_space,
                                         link_create, dataset_create, H5P_DEFAULT)),
                 H5Dclose);
  Handle memory_space(ISO_H5_CHECK(H5Screate_simple(dims, memory.data(), nullptr)), H5Sclose);
  ISO_H5_CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, offset.data(), nullptr,
                                   count.data(), nullptr));
  ISO_H5_CHECK(H5Sselect_hyperslab(memory_space, H5S_SELECT_SET, start.data(), nullptr,
                                   count.data(), nullptr));
  Handle transfer(ISO_H5_CHECK(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  ISO_H5_CHECK(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE));
  ISO_H5_CHECK(H5Dwrite(dataset, memory_type(type), memory_space, file_space, transfer, data));
}

void H5File::read(const std::string& name, ElementType type, const Hyperslab& slab,
                  void* data) const {
  const int dims = static_cast<int>(slab.global_extent.size());
  std::string error;
  if (!exists(name)) {
    error = "dataset " + name + " is missing";
  } else {
    const std::vector<long> have = extent(name);
    if (have != slab.global_extent)
      error = "dataset " + name + " has extent (" + fmt::format("{}", fmt::join(have, ", ")) + "), expected (" +
              fmt::format("{}", fmt::join(slab.global_extent, ", ")) + "): it was written for another grid";
    else if (element_type(name) != type)
      error = std::string("dataset ") + name + " holds " + to_string(element_type(name)) +
              " values, expected " + to_string(type);
  }
  // Every rank sees the same file, so every rank reaches the same verdict.
  if (!error.empty()) throw iso::Error(path_ + ": " + error);
  const Operation operation("read dataset " + name, "the file may be damaged");
  const std::vector<hsize_t> offset = to_hsize(slab.global_offset), count = to_hsize(slab.count),
                             memory = to_hsize(slab.memory_extent),
                             start = to_hsize(slab.memory_start);
  Handle dataset(ISO_H5_CHECK(H5Dopen2(file_, name.c_str(), H5P_DEFAULT)), H5Dclose);
  Handle file_space(ISO_H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  Handle memory_space(ISO_H5_CHECK(H5Screate_simple(dims, memory.data(), nullptr)), H5Sclose);
  ISO_H5_CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, offset.data(), nullptr,
                                   count.data(), nullptr));
  ISO_H5_CHECK(H5Sselect_hyperslab(memory_space, H5S_SELECT_SET, start.data(), nullptr,
                                   count.data(), nullptr));
  Handle transfer(ISO_H5_CHECK(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  ISO_H5_CHECK(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE));
  ISO_H5_CHECK(H5Dread(dataset, memory_type(type), memory_space, file_space, transfer, data));
}

bool H5File::exists(const std::string& name) const {
  if (name == "/" || name.empty()) return true;
  const Operation operation("look up " + name, "the file may be damaged");
  // Check each prefix: H5Lexists fails when an intermediate group is missing.
  std::size_t position = 0;
  while (position != std::string::npos) {
    position = name.find('/', position + 1);
    const std::string prefix = name.substr(0, position);
    if (prefix.empty() || prefix == "/") continue;
    if (ISO_H5_CHECK(H5Lexists(file_, prefix.c_str(), H5P_DEFAULT)) <= 0) return false;
  }
  return true;
}

std::vector<long> H5File::extent(const std::string& name) const {
  const Operation operation("read the extent of dataset " + name, "the file may be damaged");
  Handle dataset(ISO_H5_CHECK(H5Dopen2(file_, name.c_str(), H5P_DEFAULT)), H5Dclose);
  Handle space(ISO_H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  const int dims = ISO_H5_CHECK(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> sizes(static_cast<std::size_t>(dims));
  ISO_H5_CHECK(H5Sget_simple_extent_dims(space, sizes.data(), nullptr));
  return std::vector<long>(sizes.begin(), sizes.end());
}

ElementType H5File::element_type(const std::string& name) const {
  const Operation operation("read the type of dataset " + name, "the file may be damaged");
  Handle dataset(ISO_H5_CHECK(H5Dopen2(file_, name.c_str(), H5P_DEFAULT)), H5Dclose);
  Handle type(ISO_H5_CHECK(H5Dget_type(dataset)), H5Tclose);
  const H5T_class_t type_class = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (type_class == H5T_FLOAT && size == 8) return ElementType::float64;
  if (type_class == H5T_INTEGER && size == 1) return ElementType::uint8;
  throw iso::Error(path_ + ": dataset " + name +
                   " holds neither float64 nor uint8 values: not a file isostencil wrote");
}

std::vector<std::string> H5File::list(const std::string& group) const {
  const Operation operation("list group " + group, "the file may be damaged");
  std::vector<std::string> names;
  Handle handle(ISO_H5_CHECK(H5Gopen2(file_, group.c_str(), H5P_DEFAULT)), H5Gclose);
  ISO_H5_CHECK(H5Literate(handle, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &names));
  return names;
}

void H5File::create_group(const std::string& name) {
  if (exists(name)) return;
  const Operation operation("create group " + name);
  Handle link_create(ISO_H5_CHECK(H5Pcreate(H5P_LINK_CREATE)), H5Pclose);
  ISO_H5_CHECK(H5Pset_create_intermediate_group(link_create, 1));
  Handle group(ISO_H5_CHECK(H5Gcreate2(file_, name.c_str(), link_create, H5P_DEFAULT, H5P_DEFAULT)),
               H5Gclose);
}

void H5File::remove(const std::string& name) {
  const Operation operation("delete " + name);
  if (exists(name)) ISO_H5_CHECK(H5Ldelete(file_, name.c_str(), H5P_DEFAULT));
}

namespace {
void write_attribute(hid_t file, const std::string& path, const std::string& object,
                     const std::string& name, hid_t file_type_id, hid_t memory_type_id,
                     hid_t space, const void* data) {
  const auto check = [&](auto result, const char* call) {
    if (result < 0) throw_hdf5_error(call, path, __FILE__, __LINE__);
    return result;
  };
  Handle target(check(H5Oopen(file, object.c_str(), H5P_DEFAULT), "H5Oopen"), H5Oclose);
  if (check(H5Aexists(target, name.c_str()), "H5Aexists") > 0)
    check(H5Adelete(target, name.c_str()), "H5Adelete");
  Handle attribute(check(H5Acreate2(target, name.c_str(), file_type_id, space, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         "H5Acreate2"),
                   H5Aclose);
  check(H5Awrite(attribute, memory_type_id, data), "H5Awrite");
}
}  // namespace

void H5File::set_attribute(const std::string& object, const std::string& name,
                           const std::string& value) {
  const Operation operation("write attribute " + object + "@" + name);
  Handle type(ISO_H5_CHECK(H5Tcopy(H5T_C_S1)), H5Tclose);
  ISO_H5_CHECK(H5Tset_size(type, std::max<std::size_t>(1, value.size())));
  ISO_H5_CHECK(H5Tset_strpad(type, H5T_STR_NULLPAD));
  Handle space(ISO_H5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose);
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  write_attribute(file_, path_, object, name, type, type, space, padded.data());
}

void H5File::set_attribute(const std::string& object, const std::string& name, long value) {
  const Operation operation("write attribute " + object + "@" + name);
  Handle space(ISO_H5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose);
  const std::int64_t converted = value;
  write_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space, &converted);
}

void H5File::set_attribute(const std::string& object, const std::string& name, double value) {
  const Operation operation("write attribute " + object + "@" + name);
  Handle space(ISO_H5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose);
  write_attribute(file_, path_, object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space, &value);
}

void H5File::set_attribute(const std::string& object, const std::string& name,
                           const std::vector<long>& value) {
  const Operation operation("write attribute " + object + "@" + name);
  const hsize_t size = value.size();
  Handle space(ISO_H5_CHECK(H5Screate_simple(1, &size, nullptr)), H5Sclose);
  const std::vector<std::int64_t> converted(value.begin(), value.end());
  write_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space,
                  converted.data());
}

bool H5File::has_attribute(const std::string& object, const std::string& name) const {
  if (!exists(object)) return false;
  const Operation operation("look up attribute " + object + "@" + name, "the file may be damaged");
  return ISO_H5_CHECK(H5Aexists_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT)) > 0;
}

std::string H5File::string_attribute(const std::string& object, const std::string& name) const {
  const Operation operation("read attribute " + object + "@" + name,
                            "missing or of another type: not a file this isostencil wrote?");
  Handle attribute(ISO_H5_CHECK(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT,
                                                H5P_DEFAULT)),
                   H5Aclose);
  Handle type(ISO_H5_CHECK(H5Aget_type(attribute)), H5Tclose);
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0)
    throw iso::Error(path_ + ": attribute " + object + "@" + name +
                     " is not a fixed-length string: not a file isostencil wrote");
  std::string value(H5Tget_size(type), '\0');
  ISO_H5_CHECK(H5Aread(attribute, type, value.data()));
  value.erase(std::find(value.begin(), value.end(), '\0'), value.end());
  return value;
}

long H5File::long_attribute(const std::string& object, const std::string& name) const {
  const Operation operation("read attribute " + object + "@" + name,
                            "missing or of another type: not a file this isostencil wrote?");
  Handle attribute(ISO_H5_CHECK(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT,
                                                H5P_DEFAULT)),
                   H5Aclose);
  std::int64_t value = 0;
  ISO_H5_CHECK(H5Aread(attribute, H5T_NATIVE_INT64, &value));
  return static_cast<long>(value);
}

double H5File::double_attribute(const std::string& object, const std::string& name) const {
  const Operation operation("read attribute " + object + "@" + name,
                            "missing or of another type: not a file this isostencil wrote?");
  Handle attribute(ISO_H5_CHECK(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT,
                                                H5P_DEFAULT)),
                   H5Aclose);
  double value = 0;
  ISO_H5_CHECK(H5Aread(attribute, H5T_NATIVE_DOUBLE, &value));
  return value;
}

std::vector<long> H5File::longs_attribute(const std::string& object,
                                          const std::string& name) const {
  const Operation operation("read attribute " + object + "@" + name,
                            "missing or of another type: not a file this isostencil wrote?");
  Handle attribute(ISO_H5_CHECK(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT,
                                                H5P_DEFAULT)),
                   H5Aclose);
  Handle space(ISO_H5_CHECK(H5Aget_space(attribute)), H5Sclose);
  const hssize_t count = ISO_H5_CHECK(H5Sget_simple_extent_npoints(space));
  std::vector<std::int64_t> values(static_cast<std::size_t>(count));
  if (count > 0) ISO_H5_CHECK(H5Aread(attribute, H5T_NATIVE_INT64, values.data()));
  return std::vector<long>(values.begin(), values.end());
}

}  // namespace isostencil::core
