// The packed transport against the datatype transport and the naive
// exchange, bit for bit: every algorithm (automatic too), 1 to 4 dimensions,
// periodic, non-periodic and mixed, star, box, upwind and one-sided stencils,
// groups of 1 and 3 fields, five element types, halos wider than a subdomain
// (ghosts from several processes away, periodic wraps onto the process
// itself) and deep halos (depth > 1), random interiors and random ghosts
// (ghosts without a source must keep their random bytes). Blocks a process
// sends itself take the packed transport's direct copy: the testing aid
// core::detail::direct_copy_error shows that a wrong cell there fails. Also the
// expected ghost values after a packed exchange (an independent reference),
// start(space) with test() polling, and the simulation of device memory
// (core::simulate_device_memory): packed chosen and host-staged, datatypes
// refused, validate/run_naive/compare and HDF5 readback through host mirrors,
// all with the same bytes as the plain host path; and the packed transport's
// phase timing (HaloExchange::time_phases).
#include "grid_test_support.hpp"

#include "isostencil/core/host_mirror.hpp"
#include "isostencil/core/output.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace grid_test {
namespace {

using isostencil::core::Field;
using isostencil::core::HaloExchange;
using isostencil::core::HaloOptions;
using isostencil::core::HaloTransport;

constexpr std::uint64_t seed = 20261202;

struct TransportCase {
  Shape shape;
  int radius;
  Periodicity periodicity;
  ProcessGrid procs;
  bool uneven;
  int fields;
  int local = 0;  ///< cells per process and dimension (0: just enough for the radius)
  int depth = 1;  ///< the grid's halo depth
};

// Turns the simulation of device memory on for one scope.
struct SimulatedDevice {
  SimulatedDevice() { isostencil::core::simulate_device_memory(true); }
  ~SimulatedDevice() { isostencil::core::simulate_device_memory(false); }
};

template <int D, class T>
std::vector<Field<T, D>> make_fields(const Grid<D>& grid, const std::string& name, int count) {
  std::vector<Field<T, D>> fields;
  for (int f = 0; f < count; ++f) fields.push_back(grid.template make_field<T>(name + std::to_string(f)));
  return fields;
}

std::string describe(const TransportCase& c, int dims, const char* type) {
  return std::string(to_string(c.shape)) + " r=" + std::to_string(c.radius) + " d=" + std::to_string(dims) +
         " " + to_string(c.periodicity) + " " + to_string(c.procs) + (c.uneven ? " uneven" : " even") +
         (c.local > 0 ? " local=" + std::to_string(c.local) : "") +
         (c.depth > 1 ? " depth=" + std::to_string(c.depth) : "") + ", " + std::to_string(c.fields) +
         " field(s) of " + type;
}

// Random fields (interior and ghosts) exchanged three ways from the same
// contents: datatypes, packed, naive; all must agree on every cell.
template <int D, class T>
std::string packed_equals_datatypes_and_naive(const TransportCase& c, int case_index, const char* type,
                                              int& comparisons) {
  const int world = iso_test::world_size();
  const std::vector<int> requested = process_dims(D, c.procs, world);
  const std::vector<int> procs = Decomposition::choose_process_dims(world, requested);
  const int local = c.local > 0 ? c.local : std::max(c.radius, 1) + (D <= 2 ? 3 : D == 3 ? 1 : 0);
  std::string failures;
  const std::string label = describe(c, D, type);
  try {
    Grid<D> grid(std::make_shared<const Decomposition>(MPI_COMM_WORLD, global_extent(procs, local, c.uneven),
                                                       periodic_flags(D, c.periodicity), requested),
                 make_stencil(c.shape, D, c.radius, case_index), c.depth);
    auto original = make_fields<D, T>(grid, "original", c.fields);
    auto by_datatypes = make_fields<D, T>(grid, "datatypes", c.fields);
    auto by_packed = make_fields<D, T>(grid, "packed", c.fields);
    auto by_naive = make_fields<D, T>(grid, "naive", c.fields);
    for (iso::Algorithm algorithm : all_algorithms) {
      HaloOptions options;
      options.algorithm = algorithm;
      options.transport = HaloTransport::datatypes;
      auto datatypes = grid.halo_exchange(by_datatypes, options);
      options.transport = HaloTransport::packed;
      auto packed = grid.halo_exchange(by_packed, options);
      auto naive = grid.halo_exchange(by_naive, options);
      if (packed.transport() != HaloTransport::packed || datatypes.transport() != HaloTransport::datatypes ||
          packed.host_staged())
        failures += "\n  " + label + ": transports not as requested (" + packed.describe_transport() + ", " +
                    datatypes.describe_transport() + ")";
      if (packed.algorithm() != datatypes.algorithm())
        failures += "\n  " + label + ", " + iso::to_string(algorithm) + ": packed ran " +
                    iso::to_string(packed.algorithm()) + ", datatypes ran " + iso::to_string(datatypes.algorithm());
      // Twice through the same persistent exchanges, with new contents.
      for (int repeat = 0; repeat < 2; ++repeat) {
        for (int f = 0; f < c.fields; ++f) {
          fill_random(grid, original[f],
                      seed + static_cast<std::uint64_t>(case_index) * 131 + static_cast<std::uint64_t>(algorithm) * 7 +
                          static_cast<std::uint64_t>(f) * 3 + static_cast<std::uint64_t>(repeat));
          Kokkos::deep_copy(by_datatypes[f], original[f]);
          Kokkos::deep_copy(by_packed[f], original[f]);
          Kokkos::deep_copy(by_naive[f], original[f]);
        }
        datatypes.run();
        packed.run();
        naive.run_naive();
        for (int f = 0; f < c.fields; ++f) {
          const iso::HaloValidation vs_datatypes = grid.compare(by_packed[f], by_datatypes[f], true);
          const iso::HaloValidation vs_naive = grid.compare(by_packed[f], by_naive[f], true);
          const std::string where = "\n  " + label + ", " + iso::to_string(algorithm) + ", field " +
                                    std::to_string(f) + ", repeat " + std::to_string(repeat);
          if (!vs_datatypes.ok) failures += where + ": packed vs datatypes: " + vs_datatypes.message;
          if (!vs_naive.ok) failures += where + ": packed vs naive: " + vs_naive.message;
          ++comparisons;
        }
      }
      const iso::HaloValidation validation = packed.validate();
      if (!validation.ok) failures += "\n  " + label + ", " + iso::to_string(algorithm) + ": validate(): " +
                                      validation.message;
    }
  } catch (const iso::Error& e) {
    failures += "\n  " + label + ": threw " + e.what();
  }
  return failures;
}

template <int D>
std::string transport_cases(int& comparisons) {
  std::vector<TransportCase> cases = {
      {Shape::star, 1, Periodicity::all, ProcessGrid::automatic, false, 1},
      {Shape::box, 1, Periodicity::none, ProcessGrid::first, true, 3},
      {Shape::upwind, 2, Periodicity::mixed, ProcessGrid::last, true, 1},
      {Shape::one_sided_star, 2, Periodicity::all, ProcessGrid::two_first, false, 3},
      {Shape::box, 2, Periodicity::all, ProcessGrid::automatic, true, 1},
      // Wide: a radius over smaller subdomains, ghosts from up to two (and,
      // periodic, several wraps of one) processes away.
      {Shape::box, 2, Periodicity::all, ProcessGrid::automatic, true, 1, 1},
      {Shape::star, 3, Periodicity::mixed, ProcessGrid::last, false, 3, 2},
      {Shape::upwind, 3, Periodicity::none, ProcessGrid::first, true, 1, 2},
      // Deep: the k-fold stencil's halo, once within a subdomain, once wider.
      {Shape::star, 1, Periodicity::mixed, ProcessGrid::automatic, true, 1, 4, 2},
      {Shape::box, 1, Periodicity::all, ProcessGrid::two_first, false, 3, 2, 3},
  };
  if (D == 4) cases.resize(3);  // keeps the 4-D share of the run time modest
  std::string failures;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const int index = static_cast<int>(i);
    switch (i % 5) {
      case 0: failures += packed_equals_datatypes_and_naive<D, double>(cases[i], index, "double", comparisons); break;
      case 1: failures += packed_equals_datatypes_and_naive<D, std::int64_t>(cases[i], index, "int64", comparisons); break;
      case 2: failures += packed_equals_datatypes_and_naive<D, float>(cases[i], index, "float", comparisons); break;
      case 3: failures += packed_equals_datatypes_and_naive<D, int>(cases[i], index, "int", comparisons); break;
      default: failures += packed_equals_datatypes_and_naive<D, std::uint8_t>(cases[i], index, "uint8", comparisons); break;
    }
  }
  return failures;
}

TEST(GridTransport, PackedEqualsDatatypesAndNaive1D) {
  int comparisons = 0;
  const std::string failures = transport_cases<1>(comparisons);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  if (iso_test::world_rank() == 0) std::printf("[ transport ] 1-D: %d field comparisons\n", comparisons);
}
TEST(GridTransport, PackedEqualsDatatypesAndNaive2D) {
  int comparisons = 0;
  const std::string failures = transport_cases<2>(comparisons);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  if (iso_test::world_rank() == 0) std::printf("[ transport ] 2-D: %d field comparisons\n", comparisons);
}
TEST(GridTransport, PackedEqualsDatatypesAndNaive3D) {
  int comparisons = 0;
  const std::string failures = transport_cases<3>(comparisons);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  if (iso_test::world_rank() == 0) std::printf("[ transport ] 3-D: %d field comparisons\n", comparisons);
}
TEST(GridTransport, PackedEqualsDatatypesAndNaive4D) {
  int comparisons = 0;
  const std::string failures = transport_cases<4>(comparisons);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  if (iso_test::world_rank() == 0) std::printf("[ transport ] 4-D: %d field comparisons\n", comparisons);
}

// The host kernels split a block's slabs (a block of one slab: its rows)
// into units of at most core::detail::packed_host_unit_words words (8192:
// only blocks of large grids split). At 8 words the blocks of the small
// cases above split into groups of one slab (3 slabs of 3 rows of 2 words),
// of two with a shorter last group (3 slabs of 2 rows of 2 words), of rows
// (one slab of 3 rows of 3 words: two rows, then one), or not at all: the
// same exchanges must agree with the datatype transport and the naive one.
TEST(GridTransport, PackedEqualsDatatypesWithSlabsSplitIntoUnits) {
  int comparisons = 0;
  isostencil::core::detail::packed_host_unit_words = 8;
  const std::string failures = transport_cases<3>(comparisons) + transport_cases<4>(comparisons);
  isostencil::core::detail::packed_host_unit_words = 8192;
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// A stencil that reaches along the first two dimensions only leaves the
// last without ghosts: a block's rows then follow one another in the field,
// and the host kernels copy them as one run (a whole x-face as one memcpy).
// Packed must agree with datatypes, whole units and split ones, on a
// periodic and on a non-periodic grid.
TEST(GridTransport, PackedRowsThatFollowOneAnotherAsOneRun) {
  std::string failures;
  const int world = iso_test::world_size();
  iso::OffsetList planar(3, {});
  for (int a = -1; a <= 1; ++a)
    for (int b = -2; b <= 2; ++b) planar.push_back({a, b, 0});
  const Stencil stencil(planar);
  for (const bool periodic : {true, false})
    for (const long words : {8192L, 8L}) {
      isostencil::core::detail::packed_host_unit_words = words;
      Grid<3> grid(MPI_COMM_WORLD, {3L * world + 1, 5, 4}, {periodic, periodic, periodic}, stencil);
      auto by_datatypes = grid.make_field<double>("datatypes");
      auto by_packed = grid.make_field<double>("packed");
      HaloOptions options;
      options.algorithm = iso::Algorithm::torus;
      options.transport = HaloTransport::packed;
      auto packed = grid.halo_exchange(by_packed, options);
      options.transport = HaloTransport::datatypes;
      auto datatypes = grid.halo_exchange(by_datatypes, options);
      fill_random(grid, by_packed, seed + 13);
      Kokkos::deep_copy(by_datatypes, by_packed);
      packed.run();
      datatypes.run();
      const iso::HaloValidation same = grid.compare(by_packed, by_datatypes, true);
      if (!same.ok)
        failures += std::string("\n  ") + (periodic ? "periodic" : "non-periodic") + ", units of at most " +
                    std::to_string(words) + " words: " + same.message;
    }
  isostencil::core::detail::packed_host_unit_words = 8192;
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// Independent of the other transports: after a packed exchange every ghost
// cell read holds f(wrapped global index), the others their sentinel.
TEST(GridTransport, PackedGhostsHoldTheNeighborsValues) {
  std::string failures;
  const int world = iso_test::world_size();
  for (Periodicity periodicity : {Periodicity::all, Periodicity::none, Periodicity::mixed}) {
    for (Shape shape : {Shape::star, Shape::box, Shape::upwind}) {
      Grid<3> grid(std::make_shared<const Decomposition>(MPI_COMM_WORLD, std::vector<long>{3L * world + 1, 5, 4},
                                                         periodic_flags(3, periodicity), std::vector<int>{}),
                   make_stencil(shape, 3, 1, 1));
      auto field = grid.make_field<double>("u");
      for (iso::Algorithm algorithm : all_algorithms) {
        HaloOptions options;
        options.algorithm = algorithm;
        options.transport = HaloTransport::packed;
        auto halo = grid.halo_exchange(field, options);
        const std::uint64_t salt = splitmix64(static_cast<std::uint64_t>(algorithm) * 17 +
                                              static_cast<std::uint64_t>(shape) * 5 +
                                              static_cast<std::uint64_t>(periodicity));
        fill_by_global_index(grid, field, salt);
        halo.run();
        const std::string error = check_after_exchange(grid, field, salt);
        if (!error.empty())
          failures += std::string("\n  ") + to_string(shape) + " " + to_string(periodicity) + " " +
                      iso::to_string(algorithm) + ": " + error;
      }
    }
  }
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// start(space) keeps the instance; test() polling completes and unpacks.
TEST(GridTransport, StartOnAnInstanceAndPollTest) {
  const int world = iso_test::world_size();
  Grid<2> grid(MPI_COMM_WORLD, {4L * world, 6}, {true, true}, Stencil::box(2, 1));
  auto field = grid.make_field<double>("u");
  std::string failures;
  for (HaloTransport transport : {HaloTransport::datatypes, HaloTransport::packed}) {
    HaloOptions options;
    options.transport = transport;
    const HaloExchange::execution_space space;
    auto halo = grid.halo_exchange(field, options, space);
    for (int repeat = 0; repeat < 3; ++repeat) {
      fill_by_global_index(grid, field, seed + static_cast<std::uint64_t>(repeat));
      halo.start(HaloExchange::execution_space());
      long polls = 0;
      while (!halo.test()) ++polls;
      halo.wait();  // after test() said done: nothing left, nothing unpacked twice
      const std::string error = check_after_exchange(grid, field, seed + static_cast<std::uint64_t>(repeat));
      if (!error.empty())
        failures += std::string("\n  ") + to_string(transport) + " repeat " + std::to_string(repeat) + " (" +
                    std::to_string(polls) + " polls): " + error;
    }
  }
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// Phase timing (HaloExchange::time_phases): the ghosts are as without it; the
// phases are disjoint parts of each exchange (their sum at most the exchanges'
// wall time, measured around run() here), counted once per exchange; the
// staging copies are timed where the buffers are staged and a block leaves
// the rank (simulated device memory), and 0 where not (host memory, or every
// block to the rank itself); off again, nothing more is added. Refused for
// datatypes and while in flight.
TEST(GridTransport, PhaseTimingAddsUpAndLeavesTheGhostsAlone) {
  using Clock = std::chrono::steady_clock;
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {4L * world, 5, 4}, {true, true, true}, Stencil::box(3, 1));
  auto field = grid.make_field<double>("u");
  std::string failures;
  for (bool staged : {false, true}) {
    std::unique_ptr<SimulatedDevice> simulated;
    if (staged) simulated = std::make_unique<SimulatedDevice>();
    HaloOptions options;
    options.transport = HaloTransport::packed;
    auto halo = grid.halo_exchange(field, options);
    const bool travels = halo.direct_blocks() < halo.directions().size();
    const std::string label = std::string("\n  ") + (staged ? "staged" : "host memory") + ": ";
    if (halo.host_staged() != staged) failures += label + "host_staged() is " + std::to_string(halo.host_staged());
    isostencil::core::HaloPhaseTimes sink;
    halo.time_phases(&sink);
    double wall = 0;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const std::uint64_t salt = seed + 40 + static_cast<std::uint64_t>(repeat);
      fill_by_global_index(grid, field, salt);
      Kokkos::fence();
      const Clock::time_point start = Clock::now();
      halo.run();
      wall += std::chrono::duration<double>(Clock::now() - start).count();
      const std::string error = check_after_exchange(grid, field, salt);
      if (!error.empty()) failures += label + error;
    }
    if (sink.exchanges != 3) failures += label + std::to_string(sink.exchanges) + " exchanges counted, not 3";
    if (!(sink.pack > 0) || sink.to_host < 0 || sink.mpi < 0 || sink.to_device < 0 || sink.unpack < 0)
      failures += label + "a phase took no time or negative time";
    if (sink.sum() > wall)
      failures += label + "phases " + std::to_string(sink.sum()) + " s exceed the exchanges' " + std::to_string(wall);
    if (staged && travels && !(sink.to_host > 0 && sink.to_device > 0 && sink.mpi > 0))
      failures += label + "staged, yet copies of " + std::to_string(sink.to_host) + " and " +
                  std::to_string(sink.to_device) + " s, MPI " + std::to_string(sink.mpi) + " s";
    if ((!staged || !travels) && sink.staging() != 0)
      failures += label + "nothing staged, yet " + std::to_string(sink.staging()) + " s of copies";
    if (!travels && sink.mpi != 0) failures += label + "no block leaves the rank, yet MPI time";
    halo.time_phases(nullptr);
    const isostencil::core::HaloPhaseTimes before = sink;
    halo.run();
    if (sink.exchanges != before.exchanges || sink.sum() != before.sum())
      failures += label + "timing off, yet the sink changed";
    halo.start();
    EXPECT_THROW(halo.time_phases(&sink), iso::Error);
    halo.wait();
  }
  HaloOptions datatypes;
  datatypes.transport = HaloTransport::datatypes;
  auto plain = grid.halo_exchange(field, datatypes);
  isostencil::core::HaloPhaseTimes sink;
  EXPECT_THROW(plain.time_phases(&sink), iso::Error);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// The testing aid core::detail::direct_copy_error moves every direct copy
// (a block a process sends itself) one element off its ghosts: the packed
// result must then differ from the datatype transport's, periodic, mixed and
// wide, at every rank count (3-D with at most 4 ranks always leaves a
// dimension of one process, so every case has such blocks). Without the aid
// the same exchanges agree.
TEST(GridTransport, AWrongDirectCopyFails) {
  struct AidCase {
    Periodicity periodicity;
    int radius;
    int local;
  };
  std::string failures;
  const int world = iso_test::world_size();
  for (const AidCase& c : {AidCase{Periodicity::all, 1, 3}, AidCase{Periodicity::mixed, 1, 3},
                           AidCase{Periodicity::all, 2, 1}}) {
    const std::vector<int> procs = Decomposition::choose_process_dims(world, std::vector<int>(3, 0));
    Grid<3> grid(std::make_shared<const Decomposition>(MPI_COMM_WORLD, global_extent(procs, c.local, false),
                                                       periodic_flags(3, c.periodicity), std::vector<int>{}),
                 Stencil::box(3, c.radius));
    const std::string label = std::string("\n  ") + to_string(c.periodicity) + " r=" + std::to_string(c.radius) +
                              " local=" + std::to_string(c.local);
    if (c.periodicity == Periodicity::mixed && procs[2] > 1) continue;  // z is then no process's own neighbor
    auto by_datatypes = grid.make_field<double>("datatypes");
    auto by_packed = grid.make_field<double>("packed");
    for (int error : {1, 0}) {
      isostencil::core::detail::direct_copy_error = error;
      HaloOptions options;
      options.algorithm = iso::Algorithm::linear;
      options.transport = HaloTransport::packed;
      auto packed = grid.halo_exchange(by_packed, options);
      isostencil::core::detail::direct_copy_error = 0;
      options.transport = HaloTransport::datatypes;
      auto datatypes = grid.halo_exchange(by_datatypes, options);
      if (packed.direct_blocks() == 0) failures += label + ": no block goes to the process itself";
      fill_random(grid, by_packed, seed + 11);
      Kokkos::deep_copy(by_datatypes, by_packed);
      packed.run();
      datatypes.run();
      const iso::HaloValidation same = grid.compare(by_packed, by_datatypes, true);
      if (error != 0 && same.ok) failures += label + ": a direct copy one element off went unnoticed";
      if (error == 0 && !same.ok) failures += label + ": " + same.message;
    }
  }
  isostencil::core::detail::direct_copy_error = 0;
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// The test hook: the host may not touch the fields.
TEST(GridTransport, SimulatedDeviceMemoryChoosesPackedAndRefusesDatatypes) {
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {3L * world, 5, 4}, {true, false, true}, Stencil::box(3, 1));
  auto reference = grid.make_field<double>("reference");
  auto field = grid.make_field<double>("u");
  auto second = grid.make_field<double>("v");
  // The plain host path first (datatypes, no simulation).
  fill_random(grid, reference, seed);
  Kokkos::deep_copy(field, reference);
  Kokkos::deep_copy(second, reference);
  grid.halo_exchange(reference).run();

  SimulatedDevice simulated;
  ASSERT_TRUE(isostencil::core::device_memory_simulated());
  auto halo = grid.halo_exchange(field);
  EXPECT_EQ(halo.transport(), HaloTransport::packed);
  EXPECT_TRUE(halo.host_staged());
  EXPECT_EQ(halo.describe_transport(), "packed, host-staged");
  halo.run();
  const iso::HaloValidation same = grid.compare(field, reference, true);
  EXPECT_TRUE(same.ok) << same.message;
  // run_naive and validate through host copies.
  halo.run_naive();
  const iso::HaloValidation naive_same = grid.compare(field, reference, true);
  EXPECT_TRUE(naive_same.ok) << naive_same.message;
  const iso::HaloValidation validation = halo.validate();
  EXPECT_TRUE(validation.ok) << validation.message;
  EXPECT_GT(validation.cells_compared, 0);

  // Datatypes on memory the host may not touch: refused on every rank.
  HaloOptions datatypes;
  datatypes.transport = HaloTransport::datatypes;
  try {
    grid.halo_exchange(second, datatypes);
    ADD_FAILURE() << "the datatype transport was accepted on simulated device memory";
  } catch (const iso::Error& e) {
    EXPECT_NE(std::string(e.what()).find("packed"), std::string::npos) << e.what();
  }
  // gpu_aware_mpi: unstaged, and only with algorithm mpi.
  HaloOptions aware;
  aware.gpu_aware_mpi = true;
  EXPECT_THROW(grid.halo_exchange(second, aware), iso::Error);
  aware.algorithm = iso::Algorithm::mpi;
  auto unstaged = grid.halo_exchange(second, aware);
  EXPECT_FALSE(unstaged.host_staged());
  EXPECT_EQ(unstaged.describe_transport(), "packed, GPU-aware MPI");
  unstaged.run();
  const iso::HaloValidation unstaged_same = grid.compare(second, reference, true);
  EXPECT_TRUE(unstaged_same.ok) << unstaged_same.message;
  // datatypes with gpu_aware_mpi (and mpi) is allowed.
  datatypes.gpu_aware_mpi = true;
  datatypes.algorithm = iso::Algorithm::mpi;
  fill_random(grid, second, seed + 1);
  auto aware_datatypes = grid.halo_exchange(second, datatypes);
  EXPECT_EQ(aware_datatypes.transport(), HaloTransport::datatypes);
  const iso::HaloValidation aware_validation = aware_datatypes.validate();
  EXPECT_TRUE(aware_validation.ok) << aware_validation.message;
}

// Host mirrors are separate copies under the simulation: a loop that wrote
// through the mirror without copy_back would lose its writes.
TEST(GridTransport, HostMirrorsAreCopiesUnderTheSimulation) {
  Grid<2> grid(MPI_COMM_WORLD, {8, 8}, {true, true}, Stencil::star(2, 1));
  auto field = grid.make_field<int>("u");
  {
    SimulatedDevice simulated;
    auto host = isostencil::core::host_mirror(field);
    EXPECT_NE(host.data(), field.data());
    host(1, 1) = 7;
    auto fresh = isostencil::core::host_copy(field);
    EXPECT_EQ(fresh(1, 1), 0);
    isostencil::core::copy_back(field, host);
    EXPECT_EQ(isostencil::core::host_copy(field)(1, 1), 7);
  }
  auto host = isostencil::core::host_mirror(field);
  EXPECT_EQ(host.data(), field.data());
}

// HDF5 output and readback go through host mirrors: the same bytes back.
TEST(GridTransport, OutputReadbackUnderTheSimulation) {
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {2L * world + 1, 6, 5}, {false, true, true}, Stencil::star(3, 1));
  auto field = grid.make_field<double>("u");
  auto back = grid.make_field<double>("back");
  fill_random(grid, field, seed);
  fill_random(grid, back, seed + 5);
  auto ghosts_before = grid.make_field<double>("ghosts");
  Kokkos::deep_copy(ghosts_before, back);
  const std::string path = std::string(ISOSTENCIL_GRID_TEST_SCRATCH) + "/transport_readback_np" +
                           std::to_string(world) + ".h5";
  {
    SimulatedDevice simulated;
    {
      isostencil::core::H5File file(MPI_COMM_WORLD, path, isostencil::core::H5File::Mode::create);
      isostencil::core::write_field(file, "/u", grid, field);
    }
    isostencil::core::H5File file(MPI_COMM_WORLD, path, isostencil::core::H5File::Mode::read);
    isostencil::core::read_field(file, "/u", grid, back);
  }
  // Interior equal to the written field, ghosts left as they were.
  auto host_field = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  auto host_back = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  auto host_ghosts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ghosts_before);
  long wrong = 0;
  for (int i = 0; i < grid.field_extent()[0]; ++i)
    for (int j = 0; j < grid.field_extent()[1]; ++j)
      for (int k = 0; k < grid.field_extent()[2]; ++k) {
        const bool interior = grid.is_interior({i, j, k});
        const double expected = interior ? host_field(i, j, k) : host_ghosts(i, j, k);
        if (std::memcmp(&expected, &host_back(i, j, k), sizeof(double)) != 0) ++wrong;
      }
  EXPECT_TRUE(iso_test::all_ranks(wrong == 0)) << wrong << " cells differ on rank " << iso_test::world_rank();
}

}  // namespace
}  // namespace grid_test
