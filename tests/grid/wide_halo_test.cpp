// Halos wider than a subdomain: ghosts that come from several processes per
// dimension. Each case fills the interiors with a function of the global
// index, exchanges, and checks every ghost cell against the global cell it
// stands for (owner found from the decomposition, periodic images counted:
// grid_test_support.hpp), for every algorithm and both transports; and
// validates against the naive exchange, which finds owners on its own.
#include "grid_test_support.hpp"

#include "iso/halo_exchange.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace grid_test {
namespace {

using isostencil::core::HaloOptions;
using isostencil::core::HaloTransport;

const std::vector<iso::Algorithm> kAlgorithms = {iso::Algorithm::linear, iso::Algorithm::torus,
                                                 iso::Algorithm::direct, iso::Algorithm::basis,
                                                 iso::Algorithm::mpi,    iso::Algorithm::automatic};

// Exchanges a field of `grid` with every algorithm and transport; returns
// the failures (empty when every ghost holds its global cell and validation
// against the naive exchange passes).
template <int D>
std::string exchange_everywhere(const Grid<D>& grid, const std::string& label) {
  std::string failures;
  for (const iso::Algorithm algorithm : kAlgorithms)
    for (const HaloTransport transport : {HaloTransport::datatypes, HaloTransport::packed}) {
      HaloOptions options;
      options.algorithm = algorithm;
      options.transport = transport;
      auto u = grid.template make_field<std::int64_t>("u");
      auto halo = grid.halo_exchange(u, options);
      const std::string name = label + ", " + iso::to_string(algorithm) +
                               (transport == HaloTransport::packed ? ", packed" : ", datatypes");
      fill_by_global_index(grid, u, 17);
      halo.run();
      const std::string error = check_after_exchange(grid, u, 17);
      if (!error.empty()) failures += "\n  " + name + ": " + error;
      fill_random(grid, u, 5);
      const iso::HaloValidation validation = halo.validate();
      if (!validation.ok) failures += "\n  " + name + ": validate(): " + validation.message;
    }
  return failures;
}

int reach_of(const iso::HaloGeometry& geometry, int dim) {
  int reach = 0;
  for (int i = 0; i < geometry.directions.size(); ++i)
    reach = std::max(reach, std::abs(geometry.directions[i][dim]));
  return reach;
}

TEST(WideHalo, DirectionsReachAsFarAsTheWidthNeeds) {
  // 1-D radius 5 over subdomains of 2 cells: 3 processes each way.
  const iso::HaloGeometry line = iso::stencil_geometry(Stencil::star(1, 5).offsets(), {2});
  EXPECT_EQ(line.directions.size(), 6);
  EXPECT_EQ(reach_of(line, 0), 3);
  // A box reads every direction of the range, a star only the axes.
  const iso::HaloGeometry box = iso::stencil_geometry(Stencil::box(2, 3).offsets(), {2, 3});
  EXPECT_EQ(box.directions.size(), 5 * 3 - 1);
  const iso::HaloGeometry star = iso::stencil_geometry(Stencil::star(2, 3).offsets(), {2, 3});
  EXPECT_EQ(star.directions.size(), 4 + 2);
  // A one-sided stencil reaches one side only.
  const iso::HaloGeometry upwind = iso::stencil_geometry(Stencil::upwind(2, 3, {-1, 0}).offsets(), {1, 0});
  for (int i = 0; i < upwind.directions.size(); ++i) EXPECT_LE(upwind.directions[i][0], 0);
  EXPECT_EQ(reach_of(upwind, 0), 3);
  EXPECT_EQ(reach_of(upwind, 1), 1);  // not exchanged: unit directions, as before
  // Unknown or wide enough extents: the unit directions of stencil_geometry(offsets).
  EXPECT_EQ(iso::stencil_geometry(Stencil::box(3, 2).offsets(), {2, 2, 2}).directions,
            iso::stencil_geometry(Stencil::box(3, 2).offsets()).directions);
  // The width rule's limit.
  EXPECT_EQ(iso::halo_reach(9, 1), 9);
  EXPECT_EQ(iso::halo_misfit_dimension({{1, 9}, {1, 9}}, {2, 2}, {false, false}, {4, 1}), 1);
  EXPECT_EQ(iso::halo_misfit_dimension({{1, 9}, {1, 9}}, {2, 1}, {false, false}, {4, 1}), -1);
  EXPECT_EQ(iso::halo_misfit_dimension({{8}, {8}}, {3}, {true}, {1}), -1);
  EXPECT_THROW(iso::stencil_geometry(Stencil::star(1, 9).offsets(), {1}), iso::Error);
}

TEST(WideHalo, OneDimensionSeveralProcessesAway) {
  const int world = iso_test::world_size();
  // Even: 2 cells per process, radius 5 (reach 3); periodic and bounded.
  for (const bool periodic : {true, false}) {
    Grid<1> grid(MPI_COMM_WORLD, {2L * world}, {periodic}, Stencil::star(1, 5));
    const std::string failures =
        exchange_everywhere(grid, std::string("1-D n=2 r=5 ") + (periodic ? "periodic" : "bounded"));
    EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  }
  // Uneven: 2 or 3 cells, radius 4.
  Grid<1> uneven(MPI_COMM_WORLD, {2L * world + (world > 1 ? 1 : 0)}, {true}, Stencil::star(1, 4));
  const std::string failures = exchange_everywhere(uneven, "1-D uneven r=4 periodic");
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

TEST(WideHalo, BoxAndStarInTwoAndThreeDimensions) {
  const int world = iso_test::world_size();
  {
    // Width 6 on 4-cell subdomains: two processes away (the case).
    Grid<2> grid(MPI_COMM_WORLD, {4L * world, 4}, {true, false}, Stencil::box(2, 6), {world, 1});
    const std::string failures = exchange_everywhere(grid, "2-D box r=6 on 4x4");
    EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  }
  {
    // One periodic process in dimension 1 with 2 cells and radius 5: the
    // ghosts wrap round it three times.
    Grid<2> grid(MPI_COMM_WORLD, {3L * world, 2}, {false, true}, Stencil::star(2, 5), {world, 1});
    const std::string failures = exchange_everywhere(grid, "2-D star r=5, periodic wrap x3");
    EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  }
  {
    // 3-D, dims_create's grid, uneven where the extent does not divide.
    Grid<3> grid(MPI_COMM_WORLD, {5, 4, 3}, {true, false, true}, Stencil::box(3, 2));
    const std::string failures = exchange_everywhere(grid, "3-D box r=2 on 5x4x3");
    EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  }
}

TEST(WideHalo, FourToSixDimensions) {
  const int world = iso_test::world_size();
  Grid<4> grid(MPI_COMM_WORLD, {2L * world, 2, 3, 2}, {true, true, false, true}, Stencil::star(4, 3),
               {world, 1, 1, 1});
  std::string failures = exchange_everywhere(grid, "4-D star r=3");
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  // 6-D, one cell per process in the first dimension: radius 2 reaches 2 away.
  Grid<6> six(MPI_COMM_WORLD, {1L * world, 2, 1, 2, 1, 2}, {true, false, true, true, false, true},
              Stencil::star(6, 2), {world, 1, 1, 1, 1, 1});
  failures = exchange_everywhere(six, "6-D star r=2");
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

TEST(WideHalo, UnevenBlocksRunLinearAndSayWhy) {
  const int world = iso_test::world_size();
  if (world < 2) GTEST_SKIP() << "an uneven decomposition needs 2 or more processes";
  // 2 or 3 cells per process, radius 4: the block from two processes away
  // has 1 or 2 cells depending on the one in between.
  Grid<1> grid(MPI_COMM_WORLD, {2L * world + 1}, {true}, Stencil::star(1, 4));
  HaloOptions options;
  options.algorithm = iso::Algorithm::torus;
  const auto pattern = grid.halo_pattern(options);
  EXPECT_EQ(pattern->options().algorithm, iso::Algorithm::linear);
  EXPECT_NE(pattern->algorithm_note().find("torus replaced by linear"), std::string::npos)
      << pattern->algorithm_note();
  EXPECT_EQ(pattern->reach(), std::vector<int>{2});
  // Even: the asked algorithm stays.
  Grid<1> even(MPI_COMM_WORLD, {2L * world}, {true}, Stencil::star(1, 4));
  EXPECT_EQ(even.halo_pattern(options)->options().algorithm, iso::Algorithm::torus);
  EXPECT_TRUE(even.halo_pattern(options)->algorithm_note().empty());
}

TEST(WideHalo, ReachBeyondTheLimitIsAClearErrorOnEveryRank) {
  const int world = iso_test::world_size();
  std::string message;
  try {
    Grid<1> grid(MPI_COMM_WORLD, {1L * world}, {true}, Stencil::star(1, 9));
  } catch (const iso::Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("dimension 0: halo width 9 of stencil star(d=1, r=9) reaches 9 processes away"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("at most 8"), std::string::npos) << message;
  const std::uint64_t hash = std::hash<std::string>{}(message);
  std::uint64_t low = hash, high = hash;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high) << "the error differs between ranks";
}

}  // namespace
}  // namespace grid_test
