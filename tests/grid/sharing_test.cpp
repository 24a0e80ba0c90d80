// Grids of equal arguments share their Cartesian communicator and, with
// equal subdomain, geometry and options, their halo pattern (made once,
// found while one lives: docs/design/grid.md#shared-communicators-and-patterns);
// a grid or pattern alive on some ranks only is not reused, as every rank
// must reuse it or every rank make a new one, and the ghosts stay right.
#include "grid_test_support.hpp"

#include "iso/halo_exchange.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace grid_test {
namespace {

using iso_test::world_rank;
using iso_test::world_size;

Grid<3> box_grid(const std::array<bool, 3>& periodic = {true, true, true}, long n = 8) {
  return Grid<3>(MPI_COMM_WORLD, {n, 8, 8}, periodic, Stencil::box(3, 1));
}

// The ghosts of `grid`'s exchange against the values by global index.
std::string exchange_and_check(const Grid<3>& grid, std::uint64_t salt) {
  auto field = grid.make_field<double>("u");
  auto halo = grid.halo_exchange(field);
  fill_by_global_index(grid, field, salt);
  halo.run();
  return check_after_exchange(grid, field, salt);
}

TEST(GridSharing, EqualGridsShareTheCommunicatorAndThePattern) {
  Grid<3> first = box_grid();
  EXPECT_EQ(exchange_and_check(first, 1), "");
  Grid<3> second = box_grid();
  EXPECT_EQ(second.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(second, 2), "");
  EXPECT_EQ(second.halo_pattern().get(), first.halo_pattern().get());
  // Other options: another pattern on the same communicator.
  iso::HaloOptions linear;
  linear.algorithm = iso::Algorithm::linear;
  EXPECT_NE(second.halo_pattern(linear).get(), first.halo_pattern().get());
  // Other periods: another communicator; another extent: the communicator
  // (same process grid) but not the pattern (another subdomain).
  Grid<3> mesh = box_grid({true, true, false});
  EXPECT_NE(mesh.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(mesh, 3), "");
  Grid<3> longer = box_grid({true, true, true}, 12);
  EXPECT_EQ(longer.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(longer, 4), "");
  EXPECT_NE(longer.halo_pattern().get(), first.halo_pattern().get());
}

TEST(GridSharing, ACommunicatorAliveOnOneRankOnlyIsNotReused) {
  std::optional<Grid<3>> kept;
  MPI_Comm kept_comm = MPI_COMM_NULL;
  {
    Grid<3> grid = box_grid({false, true, true});
    if (world_rank() == 0) {
      kept.emplace(grid);
      kept_comm = grid.decomposition().comm();
    }
  }
  Grid<3> again = box_grid({false, true, true});
  // Rank 0 alone found one: every rank made a new one (on one rank, the
  // only rank found it and reuses it).
  if (world_rank() == 0) {
    if (world_size() == 1) EXPECT_EQ(again.decomposition().comm(), kept_comm);
    else EXPECT_NE(again.decomposition().comm(), kept_comm);
  }
  EXPECT_EQ(exchange_and_check(again, 5), "");
}

TEST(GridSharing, APatternAliveOnOneRankOnlyIsNotReused) {
  // A grid on every rank keeps the communicator; a pattern lives on rank 0.
  Grid<3> base = box_grid({true, false, true});
  std::optional<Grid<3>> kept;
  {
    Grid<3> grid = box_grid({true, false, true});
    EXPECT_EQ(exchange_and_check(grid, 6), "");
    if (world_rank() == 0) kept.emplace(grid);
  }
  Grid<3> again = box_grid({true, false, true});
  ASSERT_EQ(again.decomposition().comm(), base.decomposition().comm());
  EXPECT_EQ(exchange_and_check(again, 7), "");
  if (world_rank() == 0) {
    if (world_size() == 1) EXPECT_EQ(again.halo_pattern().get(), kept->halo_pattern().get());
    else EXPECT_NE(again.halo_pattern().get(), kept->halo_pattern().get());
  }
}

}  // namespace
}  // namespace grid_test
