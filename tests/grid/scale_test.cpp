// The process grid at the rank count the test runs on, as the halo exchange
// sees it: a 2-D and a 3-D periodic grid of MPI_Dims_create's dimensions
// (3x3x3 at 27 ranks, 4x4x4 and 8x8 at 64), box stencil of radius 1. The
// exchange's neighborhood names, block by block, the rank MPI_Cart_rank gives
// for the direction; where every dimension has 3 or more processes the 3^d - 1
// neighbors are distinct ranks other than this one (at 8 ranks, 2x2x2, they
// are not: partners repeat); the ghosts of every algorithm hold the
// neighbors' cells. The rank counts 27 and 64 run this (tests/grid/CMakeLists.txt),
// so CI exercises a rank with 26 distinct partners.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace grid_test {
namespace {

using iso_test::dims_text;
using iso_test::exact_root;

template <int D>
void check_world_grid() {
  const int world = iso_test::world_size();
  const std::vector<int> requested(D, 0);
  const std::vector<int> procs = Decomposition::choose_process_dims(world, requested);
  auto decomposition = std::make_shared<const Decomposition>(
      MPI_COMM_WORLD, global_extent(procs, 4, false), periodic_flags(D, Periodicity::all),
      requested);
  const std::vector<int>& dims = decomposition->process_dims();
  // MPI_Dims_create makes a perfect power a cube (square): the grids CI is
  // meant to reach at 27 and 64 ranks.
  const int root = exact_root(world, D);
  if (root > 0) {
    EXPECT_EQ(dims, std::vector<int>(D, root)) << world << " ranks, " << D << "-D";
  }
  bool all_three = true;
  for (int j = 0; j < D; ++j)
    all_three = all_three && dims[j] >= 3;

  int directions = 1;
  for (int j = 0; j < D; ++j)
    directions *= 3;
  directions -= 1;

  Grid<D> grid(decomposition, make_stencil(Shape::box, D, 1));
  auto field = grid.template make_field<std::int64_t>("u");
  std::string failures;
  int distinct_min = 1 << 30;
  for (iso::Algorithm algorithm : all_algorithms) {
    iso::HaloOptions options;
    options.algorithm = algorithm;
    auto halo = grid.halo_exchange(field, options);
    const iso::Neighborhood& nbh = halo.neighborhood();
    const iso::OffsetList& offsets = nbh.offsets();
    // Each block's partner against MPI_Cart_rank of the shifted coordinates
    // (periodic: MPI wraps them).
    std::set<int> distinct;
    for (int i = 0; i < nbh.size(); ++i) {
      std::vector<int> coords = decomposition->coords();
      for (int j = 0; j < D; ++j)
        coords[j] += offsets[i][j];
      int expected = -1;
      MPI_Cart_rank(decomposition->comm(), coords.data(), &expected);
      if (nbh.target_rank(i) != expected && failures.size() < 2000)
        failures += "\n  " + std::string(iso::to_string(algorithm)) + ": block " +
                    std::to_string(i) + " goes to rank " + std::to_string(nbh.target_rank(i)) +
                    ", MPI_Cart_rank says " + std::to_string(expected);
      if (expected != decomposition->rank()) distinct.insert(expected);
    }
    if (all_three && nbh.has_repeated_partner())
      failures += "\n  " + std::string(iso::to_string(algorithm)) + ": a repeated partner on a " +
                  dims_text(dims) + " torus";
    if (nbh.size() != directions)
      failures += "\n  " + std::string(iso::to_string(algorithm)) + ": " +
                  std::to_string(nbh.size()) + " blocks, not 3^d - 1";
    if (all_three && static_cast<int>(distinct.size()) != nbh.size())
      failures += "\n  " + std::string(iso::to_string(algorithm)) + ": only " +
                  std::to_string(distinct.size()) + " distinct partners on a " + dims_text(dims) +
                  " torus";
    distinct_min = std::min(distinct_min, static_cast<int>(distinct.size()));
    for (int repeat = 0; repeat < 2; ++repeat) {
      const std::uint64_t salt =
          splitmix64((static_cast<std::uint64_t>(algorithm) << 8) ^ static_cast<std::uint64_t>(repeat));
      fill_by_global_index(grid, field, salt);
      halo.run();
      const std::string error = check_after_exchange(grid, field, salt);
      if (!error.empty() && failures.size() < 2000)
        failures += "\n  " + std::string(iso::to_string(algorithm)) + " (ran " +
                    iso::to_string(halo.algorithm()) + "), repeat " + std::to_string(repeat) +
                    ": " + error;
    }
  }
  const bool ok = iso_test::all_ranks(failures.empty());
  EXPECT_TRUE(ok) << "rank " << iso_test::world_rank() << ", " << grid.describe() << ":" << failures;
  MPI_Allreduce(MPI_IN_PLACE, &distinct_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (iso_test::world_rank() == 0)
    std::printf("[ grid scale ] %d ranks, %d-D periodic grid %s, box r=1: every rank has %d "
                "distinct neighbor ranks (of %d directions) and its ghosts hold their cells, "
                "%zu algorithms\n",
                world, D, dims_text(dims).c_str(), distinct_min, directions,
                all_algorithms.size());
}

TEST(GridScale, TwoDimensionalWorldGrid) {
  check_world_grid<2>();
}
TEST(GridScale, ThreeDimensionalWorldGrid) {
  check_world_grid<3>();
}

}  // namespace
}  // namespace grid_test
