// The output time series (one HDF5 group per step, collective writes) and
// its XDMF description for ParaView and VisIt.
#include "isostencil/core/output.hpp"
#include "isostencil/core/profiling.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <sstream>
#include <unistd.h>

namespace isostencil::core {

namespace {

std::string join_longs(const std::vector<long>& values, const char* separator) {
  return fmt::format("{}", fmt::join(values, separator));
}

/// Round-trip exact: XDMF readers take the step time as written.
std::string format_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

}  // namespace

// --- XDMF ---------------------------------------------------------------------

std::string xdmf_text(const std::string& h5_name, const std::vector<long>& global_extent,
                      const std::vector<XdmfStep>& steps) {
  // XDMF lists a mesh's dimensions slowest first (Z Y X) and readers make the
  // fastest one X. The datasets are row-major (the last dimension fastest),
  // so the last dimension is X, the one before Y and, in 3-D, dimension 0 Z.
  // A 2-D grid is written as a 3-D mesh one cell thick in Z, its arrays as
  // 1 x n0 x n1: ParaView's readers put a 2DCoRectMesh in the Y-Z plane
  // (X = 0), and drop cell arrays of a mesh with a single node in Z (the
  // legacy reader). Origin and spacing are in the same Z Y X order.
  std::vector<long> nodes, cells;
  for (std::size_t j = global_extent.size(); j < 3; ++j) {
    nodes.push_back(2);
    cells.push_back(1);
  }
  for (const long n : global_extent) {
    nodes.push_back(n + 1);
    cells.push_back(n);
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" ?>\n"
      << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      << "<!-- Written by isostencil: one cell-centred grid per output step; cell i of\n"
      << "     dimension j sits at [i, i+1). Mesh dimensions are listed as XDMF's Z Y X:\n"
      << "     the last (fastest) dimension of the HDF5 datasets is X, the one before Y,\n"
      << "     dimension 0 of a 3-D grid Z; a 2-D grid lies in the X-Y plane, one cell\n"
      << "     thick in Z (its datasets, n0 x n1, read as 1 x n0 x n1). -->\n"
      << "<Xdmf Version=\"3.0\">\n  <Domain>\n"
      << "    <Grid Name=\"isostencil\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& step : steps) {
    const std::string group = FieldSeries::group_name(step.step).substr(1);
    out << "      <Grid Name=\"" << group << "\" GridType=\"Uniform\">\n"
        << "        <Time Value=\"" << format_number(step.time) << "\"/>\n"
        << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << join_longs(nodes, " ")
        << "\"/>\n"
        << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
        << "          <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"3\">0 0 0</DataItem>\n"
        << "          <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"3\">1 1 1</DataItem>\n"
        << "        </Geometry>\n";
    for (const auto& [name, type] : step.fields)
      out << "        <Attribute Name=\"" << name << "\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
          << "          <DataItem Format=\"HDF\" NumberType=\""
          << (type == ElementType::float64 ? "Float\" Precision=\"8" : "UChar\" Precision=\"1")
          << "\" Dimensions=\"" << join_longs(cells, " ") << "\">" << h5_name << ":/"
          << group << "/" << name << "</DataItem>\n"
          << "        </Attribute>\n";
    out << "      </Grid>\n";
  }
  out << "    </Grid>\n  </Domain>\n</Xdmf>\n";
  return out.str();
}

// --- FieldSeries --------------------------------------------------------------

struct FieldSeries::State {
  H5File file;
  std::string h5_path, xmf_path, note;
  std::vector<long> global_extent;
  std::vector<XdmfStep> steps;
  int rank = 0;
};

std::string FieldSeries::group_name(long step) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "/step_%06ld", step);
  return buffer;
}

namespace {
H5File open_series(const Decomposition& decomposition, const std::string& path, const std::string& xmf_path,
                   long resume_after) {
  // Both files' paths are checked before either is touched: an output at a
  // directory or a device is an error on every rank, nothing written
  // (iso/file_write.hpp). HDF5 writes the file in place, through a link.
  iso::agreed_target(decomposition.comm(), path, iso::PathUse::output, "isostencil::core::FieldSeries: the output");
  if (!xmf_path.empty() && (decomposition.dims() == 2 || decomposition.dims() == 3))  // XDMF is 2-D, 3-D only
    iso::agreed_target(decomposition.comm(), xmf_path, iso::PathUse::output,
                       "isostencil::core::FieldSeries: the XDMF file");
  int exists = 0;
  if (resume_after >= 0 && decomposition.rank() == 0) exists = ::access(path.c_str(), F_OK) == 0;
  ISO_MPI_CHECK(MPI_Bcast(&exists, 1, MPI_INT, 0, decomposition.comm()));
  if (exists) {
    // A file the run that stopped left unreadable (killed mid-write) cannot
    // be resumed: start a new series. Every rank sees the same file.
    try {
      return H5File(decomposition.comm(), path, H5File::Mode::read_write);
    } catch (const iso::Error&) {
    }
  }
  return H5File(decomposition.comm(), path, H5File::Mode::create);
}

std::string describe_decomposition(const Decomposition& decomposition) {
  std::string text = join_longs(decomposition.global_extent(), "x") + " cells on ";
  std::vector<long> procs(decomposition.process_dims().begin(), decomposition.process_dims().end());
  text += join_longs(procs, "x") + " processes (";
  for (int j = 0; j < decomposition.dims(); ++j)
    text += std::string(j ? ", " : "") + (decomposition.periodic()[j] ? "periodic" : "non-periodic");
  return text + "); block decomposition, the first N % p processes of a dimension own one cell more";
}
}  // namespace

FieldSeries::FieldSeries(const Decomposition& decomposition, std::string h5_path,
                         std::string xmf_path,
                         const std::vector<std::pair<std::string, std::string>>& attributes,
                         long resume_after)
    : state_(std::make_unique<State>(State{open_series(decomposition, h5_path, xmf_path, resume_after),
                                           h5_path, std::move(xmf_path), {},
                                           decomposition.global_extent(), {}, decomposition.rank()})) {
  H5File& file = state_->file;
  // A resumed series keeps the steps up to the restart and drops later ones
  // (written after the checkpoint by the run that stopped).
  for (const std::string& name : file.list("/")) {
    long step = -1;
    if (std::sscanf(name.c_str(), "step_%ld", &step) != 1) continue;
    const std::string group = "/" + name;
    if (step > resume_after || resume_after < 0) {
      file.remove(group);
      continue;
    }
    XdmfStep entry;
    entry.step = step;
    entry.time = file.has_attribute(group, "time") ? file.double_attribute(group, "time") : 0.0;
    for (const std::string& field : file.list(group))
      entry.fields.emplace_back(field, file.element_type(group + "/" + field));
    state_->steps.push_back(entry);
  }
  std::sort(state_->steps.begin(), state_->steps.end(),
            [](const XdmfStep& a, const XdmfStep& b) { return a.step < b.step; });
  for (const auto& [name, value] : attributes) file.set_attribute("/", name, value);
  file.set_attribute("/", "dims", static_cast<long>(decomposition.dims()));
  file.set_attribute("/", "global_extent", decomposition.global_extent());
  file.set_attribute("/", "process_dims",
                     std::vector<long>(decomposition.process_dims().begin(),
                                       decomposition.process_dims().end()));
  std::vector<long> periodic;
  for (const bool p : decomposition.periodic()) periodic.push_back(p ? 1 : 0);
  file.set_attribute("/", "periodic", periodic);
  file.set_attribute("/", "decomposition", describe_decomposition(decomposition));
  file.set_attribute("/", "layout",
                     std::string("/step_NNNNNN/<field>: one dataset per field and output step, "
                                 "global row-major interior (no ghosts); attributes step, time"));
  if (decomposition.dims() < 2 || decomposition.dims() > 3)
    state_->note = "XDMF describes 2-D and 3-D grids here; this grid is " +
                   std::to_string(decomposition.dims()) + "-D (read the HDF5 file directly)";
  if (state_->xmf_path.empty() && state_->note.empty()) state_->note = "no XDMF file requested";
}

FieldSeries::FieldSeries(FieldSeries&&) noexcept = default;
FieldSeries& FieldSeries::operator=(FieldSeries&&) noexcept = default;
FieldSeries::~FieldSeries() = default;

H5File& FieldSeries::file() { return state_->file; }

void FieldSeries::begin_step(long step, double time) {
  const ProfilingRegion region("isostencil::io::output");
  const double start = MPI_Wtime();
  group_ = group_name(step);
  H5File& h5 = state_->file;
  h5.remove(group_);
  h5.create_group(group_);
  h5.set_attribute(group_, "step", step);
  h5.set_attribute(group_, "time", time);
  h5.set_attribute(group_, "process_dims", h5.longs_attribute("/", "process_dims"));
  auto& steps = state_->steps;
  steps.erase(std::remove_if(steps.begin(), steps.end(),
                             [&](const XdmfStep& entry) { return entry.step == step; }),
              steps.end());
  steps.push_back(XdmfStep{step, time, {}});
  seconds_ += MPI_Wtime() - start;
}

void FieldSeries::record(const std::string& field_name, ElementType type) {
  state_->steps.back().fields.emplace_back(field_name, type);
}

void FieldSeries::end_step() {
  const ProfilingRegion region("isostencil::io::output");
  const double start = MPI_Wtime();
  state_->file.flush();
  std::string error;
  if (state_->rank == 0 && state_->note.empty()) {
    std::string h5_name = state_->h5_path.substr(state_->h5_path.find_last_of('/') + 1);
    // Replaced whole (iso/file_write.hpp): a short file never replaces the
    // complete one (a full disk), and a link there stays a link.
    try {
      iso::write_file(state_->xmf_path, xdmf_text(h5_name, state_->global_extent, state_->steps),
                      iso::PathUse::output);
    } catch (const iso::Error& failure) {
      error = failure.what();
    }
  }
  iso::agree_on_errors(state_->file.comm(), "isostencil::core::FieldSeries::end_step", error);
  seconds_ += MPI_Wtime() - start;
}

void FieldSeries::close() {
  if (state_) state_->file.close();
}

const std::string& FieldSeries::h5_path() const { return state_->h5_path; }
const std::string& FieldSeries::xmf_path() const { return state_->xmf_path; }
std::string FieldSeries::xdmf_note() const { return state_->note; }
std::vector<long> FieldSeries::steps() const {
  std::vector<long> result;
  for (const XdmfStep& step : state_->steps) result.push_back(step.step);
  return result;
}

}  // namespace isostencil::core
