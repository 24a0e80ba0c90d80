// Parallel HDF5 output and checkpoints (core/output, core/checkpoint), read
// back with the plain (serial) HDF5 C API on rank 0: dataset shapes, every
// value, the attributes, the XDMF description; checkpoints read back on
// another decomposition, atomic replacement, resumed series.
#include "isostencil_test.hpp"

#include "isostencil/core/checkpoint.hpp"
#include "isostencil/core/grid.hpp"
#include "isostencil/core/output.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

namespace core = isostencil::core;

/// A scratch directory shared by all ranks (made by rank 0), removed by the
/// test fixture's caller at the end of the run (left for inspection on failure).
std::string scratch(const std::string& name) {
  std::string dir = std::string(ISOSTENCIL_TEST_SCRATCH) + "/io_readback";
  if (iso_test::world_rank() == 0) {
    std::string command = "mkdir -p " + dir;
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return dir + "/" + name + ".np" + std::to_string(iso_test::world_size());
}

double value_at(long i, long j, long k = 0) { return 1000.0 * static_cast<double>(i) + 10.0 * j + 0.5 * k; }

/// Fills the interior of a 2-D or 3-D double field with value_at(global) and
/// its ghosts with -1.
template <int D>
core::Field<double, D> filled_field(const core::Grid<D>& grid) {
  auto field = grid.template make_field<double>("u");
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), field);
  std::array<int, D> local{};
  for (std::size_t at = 0; at < host.span(); ++at) {
    std::size_t rest = at;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(grid.field_extent()[j]));
      rest /= static_cast<std::size_t>(grid.field_extent()[j]);
    }
    const auto global = grid.to_global(local);
    if (!grid.is_interior(local))
      host.data()[at] = -1.0;
    else if constexpr (D == 2)
      host.data()[at] = value_at(global[0], global[1]);
    else
      host.data()[at] = value_at(global[0], global[1], global[2]);
  }
  Kokkos::deep_copy(field, host);
  return field;
}

/// Rank 0: opens `path` with the serial driver.
struct SerialFile {
  explicit SerialFile(const std::string& path) : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~SerialFile() {
    if (id >= 0) H5Fclose(id);
  }
  hid_t id;
};

std::vector<hsize_t> shape_of(hid_t file, const std::string& name) {
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) return {};
  const hid_t space = H5Dget_space(dataset);
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  H5Dclose(dataset);
  return dims;
}

template <class T>
std::vector<T> read_all(hid_t file, const std::string& name, hid_t type) {
  std::vector<hsize_t> dims = shape_of(file, name);
  std::size_t count = 1;
  for (const hsize_t n : dims) count *= n;
  std::vector<T> values(count);
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(dataset);
  return values;
}

std::string string_attribute(hid_t file, const std::string& object, const std::string& name) {
  const hid_t attribute = H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (attribute < 0) return "<missing>";
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  H5Aread(attribute, type, value.data());
  H5Tclose(type);
  H5Aclose(attribute);
  return value.substr(0, value.find('\0'));
}

double double_attribute(hid_t file, const std::string& object, const std::string& name) {
  const hid_t attribute = H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  double value = -1;
  if (attribute >= 0) {
    H5Aread(attribute, H5T_NATIVE_DOUBLE, &value);
    H5Aclose(attribute);
  }
  return value;
}

TEST(IoReadback, FieldSeriesWritesGlobalDatasetsAttributesAndXdmf) {
  const std::string base = scratch("series");
  // Uneven, two split dimensions where the rank count allows.
  core::Grid<2> grid(MPI_COMM_WORLD, {13, 7}, {true, false}, core::Stencil::box(2, 1));
  const auto u = filled_field<2>(grid);
  auto cells = grid.make_field<std::uint8_t>("cells");
  Kokkos::deep_copy(cells, std::uint8_t{1});
  {
    core::FieldSeries series(grid.decomposition(), base + ".h5", base + ".xmf",
                             {{"deck", "[grid]\nextent = [13, 7]\n"}});
    for (const long step : {0L, 10L}) {
      series.begin_step(step, 0.5 * static_cast<double>(step));
      series.write("u", grid, u);
      series.write("cells", grid, cells);
      series.end_step();
    }
    EXPECT_EQ(series.steps(), (std::vector<long>{0, 10}));
    EXPECT_EQ(series.xdmf_note(), "");
    series.close();
  }
  bool ok = true;
  if (iso_test::world_rank() == 0) {
    SerialFile file(base + ".h5");
    ASSERT_GE(file.id, 0);
    EXPECT_EQ(shape_of(file.id, "/step_000010/u"), (std::vector<hsize_t>{13, 7}));
    EXPECT_EQ(shape_of(file.id, "/step_000000/cells"), (std::vector<hsize_t>{13, 7}));
    const std::vector<double> values = read_all<double>(file.id, "/step_000010/u", H5T_NATIVE_DOUBLE);
    for (long i = 0; i < 13; ++i)
      for (long j = 0; j < 7; ++j) {
        const double got = values[static_cast<std::size_t>(i * 7 + j)];
        if (got != value_at(i, j)) {
          ADD_FAILURE() << "u(" << i << "," << j << ") = " << got << ", expected " << value_at(i, j);
          ok = false;
        }
      }
    const std::vector<std::uint8_t> alive = read_all<std::uint8_t>(file.id, "/step_000000/cells", H5T_NATIVE_UINT8);
    EXPECT_EQ(std::count(alive.begin(), alive.end(), 1), 91);
    EXPECT_EQ(string_attribute(file.id, "/", "deck"), "[grid]\nextent = [13, 7]\n");
    EXPECT_NE(string_attribute(file.id, "/", "decomposition").find("13x7 cells on"), std::string::npos);
    EXPECT_EQ(double_attribute(file.id, "/step_000010", "time"), 5.0);
    std::ifstream xmf(base + ".xmf");
    std::stringstream text;
    text << xmf.rdbuf();
    const std::string xdmf = text.str();
    const std::string h5_name = base.substr(base.find_last_of('/') + 1) + ".h5";
    EXPECT_NE(xdmf.find("CollectionType=\"Temporal\""), std::string::npos);
    EXPECT_NE(xdmf.find("<Time Value=\"5\"/>"), std::string::npos);
    EXPECT_NE(xdmf.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"2 14 8\""), std::string::npos);
    EXPECT_NE(xdmf.find("Dimensions=\"1 13 7\">" + h5_name + ":/step_000010/u</DataItem>"), std::string::npos)
        << xdmf;
    EXPECT_NE(xdmf.find("NumberType=\"UChar\" Precision=\"1\""), std::string::npos);
  }
  EXPECT_TRUE(iso_test::all_ranks(ok));
}

TEST(IoReadback, ResumedSeriesKeepsEarlierStepsAndDropsLaterOnes) {
  const std::string base = scratch("resume");
  core::Grid<2> grid(MPI_COMM_WORLD, {9, 9}, {true, true}, core::Stencil::star(2, 1));
  const auto u = filled_field<2>(grid);
  {
    core::FieldSeries series(grid.decomposition(), base + ".h5", base + ".xmf", {});
    for (const long step : {0L, 5L, 10L}) {
      series.begin_step(step, static_cast<double>(step));
      series.write("u", grid, u);
      series.end_step();
    }
  }
  core::FieldSeries resumed(grid.decomposition(), base + ".h5", base + ".xmf", {}, 5);
  EXPECT_EQ(resumed.steps(), (std::vector<long>{0, 5}));
  resumed.begin_step(7, 7.0);
  resumed.write("u", grid, u);
  resumed.end_step();
  EXPECT_EQ(resumed.steps(), (std::vector<long>{0, 5, 7}));
}

TEST(IoReadback, ThreeDimensionalHyperslabsOnAnyDecomposition) {
  const std::string base = scratch("cube");
  core::Grid<3> grid(MPI_COMM_WORLD, {7, 6, 5}, {false, true, false}, core::Stencil::star(3, 2));
  const auto u = filled_field<3>(grid);
  {
    core::H5File file(MPI_COMM_WORLD, base + ".h5", core::H5File::Mode::create);
    core::write_field(file, "/a/b/u", grid, u);
    file.set_attribute("/a", "extent", std::vector<long>{7, 6, 5});
    file.set_attribute("/a/b/u", "step", 42L);
    EXPECT_EQ(file.extent("/a/b/u"), (std::vector<long>{7, 6, 5}));
    EXPECT_EQ(file.long_attribute("/a/b/u", "step"), 42);
    EXPECT_EQ(file.longs_attribute("/a", "extent"), (std::vector<long>{7, 6, 5}));
  }
  bool ok = true;
  if (iso_test::world_rank() == 0) {
    SerialFile file(base + ".h5");
    EXPECT_EQ(shape_of(file.id, "/a/b/u"), (std::vector<hsize_t>{7, 6, 5}));
    const std::vector<double> values = read_all<double>(file.id, "/a/b/u", H5T_NATIVE_DOUBLE);
    for (long i = 0; i < 7 && ok; ++i)
      for (long j = 0; j < 6 && ok; ++j)
        for (long k = 0; k < 5 && ok; ++k)
          if (values[static_cast<std::size_t>((i * 6 + j) * 5 + k)] != value_at(i, j, k)) {
            ADD_FAILURE() << "u(" << i << "," << j << "," << k << ") wrong";
            ok = false;
          }
  }
  EXPECT_TRUE(iso_test::all_ranks(ok));
}

TEST(IoReadback, CheckpointReadsBackOnAnotherDecompositionAndReplacesAtomically) {
  const std::string path = scratch("state") + ".checkpoint.h5";
  const int size = iso_test::world_size();
  // Written split along dimension 0, read back split along dimension 1.
  core::Grid<2> writer_grid(MPI_COMM_WORLD, {11, 10}, {true, true}, core::Stencil::box(2, 1), {size, 1});
  core::Grid<2> reader_grid(MPI_COMM_WORLD, {11, 10}, {true, true}, core::Stencil::star(2, 2), {1, size});
  const auto u = filled_field<2>(writer_grid);
  for (const long step : {3L, 6L}) {
    core::CheckpointInfo info;
    info.step = step;
    info.time = 0.25 * static_cast<double>(step);
    info.kernel = "jacobi";
    info.deck = "[run]\nsteps = 6\n";
    info.fields = {"u"};
    core::CheckpointWriter writer(writer_grid.decomposition(), path, info);
    writer.write("u", writer_grid, u);
    writer.commit();
    EXPECT_TRUE(iso_test::all_ranks(::access(writer.temporary_path().c_str(), F_OK) != 0));
  }
  core::CheckpointReader reader(MPI_COMM_WORLD, path);
  EXPECT_EQ(reader.info().step, 6);
  EXPECT_EQ(reader.info().time, 1.5);
  EXPECT_EQ(reader.info().kernel, "jacobi");
  EXPECT_EQ(reader.info().deck, "[run]\nsteps = 6\n");
  EXPECT_EQ(reader.info().fields, (std::vector<std::string>{"u"}));
  EXPECT_EQ(reader.info().global_extent, (std::vector<long>{11, 10}));
  auto back = reader_grid.make_field<double>("back");
  reader.read("u", reader_grid, back);
  const auto expected = filled_field<2>(reader_grid);
  // The interior only: reads leave the ghosts alone.
  auto host_back = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  auto host_expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), expected);
  bool ok = true;
  for (int i = reader_grid.ghost_lo()[0]; i < reader_grid.ghost_lo()[0] + reader_grid.interior_extent()[0]; ++i)
    for (int j = reader_grid.ghost_lo()[1]; j < reader_grid.ghost_lo()[1] + reader_grid.interior_extent()[1]; ++j)
      ok = ok && host_back(i, j) == host_expected(i, j);
  EXPECT_TRUE(iso_test::all_ranks(ok));

  // A read of a mismatching grid is an error on every rank.
  core::Grid<2> other(MPI_COMM_WORLD, {12, 10}, {true, true}, core::Stencil::star(2, 1));
  auto wrong = other.make_field<double>("wrong");
  bool threw = false;
  try {
    reader.read("u", other, wrong);
  } catch (const core::CheckpointError& error) {
    threw = std::string(error.what()).find("dataset /state/u has 11x10 cells, the run needs 12x10") !=
            std::string::npos;
  }
  EXPECT_TRUE(iso_test::all_ranks(threw));
}

TEST(IoReadback, CheckpointChecksumDoesNotDependOnTheTiling) {
  // A 5x7 array hashed whole, and as the sum of its row-major tiles of any
  // shape: the same value; one changed bit changes it.
  std::vector<double> values(35);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * static_cast<double>(i * i) - 3.0;
  const auto slab = [](long r0, long c0, long rows, long cols) {
    return core::Hyperslab{{5, 7}, {r0, c0}, {rows, cols}, {5, 7}, {r0, c0}};
  };
  const std::uint64_t whole = core::checkpoint_checksum(core::ElementType::float64, slab(0, 0, 5, 7),
                                                        values.data());
  std::uint64_t tiled = 0;
  for (const auto& [r0, rows] : {std::pair{0L, 2L}, std::pair{2L, 3L}})
    for (const auto& [c0, cols] : {std::pair{0L, 4L}, std::pair{4L, 3L}})
      tiled += core::checkpoint_checksum(core::ElementType::float64, slab(r0, c0, rows, cols),
                                         values.data());
  EXPECT_EQ(whole, tiled);
  // The values swapped between two cells: the index is part of the hash.
  std::swap(values[3], values[17]);
  EXPECT_NE(whole, core::checkpoint_checksum(core::ElementType::float64, slab(0, 0, 5, 7), values.data()));
  std::swap(values[3], values[17]);
  values[20] = std::nextafter(values[20], 1e9);
  EXPECT_NE(whole, core::checkpoint_checksum(core::ElementType::float64, slab(0, 0, 5, 7), values.data()));
}

TEST(IoReadback, MissingCheckpointIsAnErrorOnEveryRank) {
  bool threw = false;
  try {
    core::CheckpointReader reader(MPI_COMM_WORLD, "/nonexistent/x.checkpoint.h5");
  } catch (const iso::Error& error) {
    threw = std::string(error.what()).find("checkpoint /nonexistent/x.checkpoint.h5: cannot read it: "
                                           "No such file or directory") != std::string::npos;
  }
  EXPECT_TRUE(iso_test::all_ranks(threw));
}

}  // namespace
