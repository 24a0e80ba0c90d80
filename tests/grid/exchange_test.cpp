// After a halo exchange every ghost cell in a direction the stencil reads
// holds the value of its (periodically wrapped) global index, boundary ghosts
// of non-periodic dimensions and ghosts in directions the stencil does not
// read keep their sentinel, and the interior is unchanged: star, box,
// upwind and one-sided star stencils of radius 1-3 in 1-5 dimensions (6 as a
// compile and run check), periodic, non-periodic and mixed, even and uneven
// extents, process grids from MPI_Dims_create, {world,1,..}, {1,..,world}
// and {2,0,..}, every algorithm (mpi too where a rank has a partner in
// several directions: tiny tori, docs/design/irregular.md#repeated-partners-on-tiny-tori).
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace grid_test {
namespace {

struct Case {
  Shape shape;
  int radius;
  Periodicity periodicity;
  ProcessGrid procs;
  bool uneven;
  int variant;

  std::string describe(int dims) const {
    return std::string(to_string(shape)) + " r=" + std::to_string(radius) +
           " d=" + std::to_string(dims) + ", " + to_string(periodicity) + ", procs " +
           to_string(procs) + (uneven ? ", uneven" : ", even");
  }
};

struct Tally {
  int exchanges = 0;
};

// Interior cells per process: small in high dimensions (8 ranks on 2 cores).
int local_cells(int dims, int radius) {
  const int extra = dims <= 2 ? 3 : dims == 3 ? 1 : 0;
  return std::max(radius, 1) + extra;
}

template <int D, class T>
std::string run_case(const Case& c, int case_index, Tally& tally) {
  const int world = iso_test::world_size();
  const std::vector<int> requested = process_dims(D, c.procs, world);
  const std::vector<int> procs = Decomposition::choose_process_dims(world, requested);
  const std::vector<long> extent = global_extent(procs, local_cells(D, c.radius), c.uneven);
  std::string failures;
  try {
    auto decomposition = std::make_shared<const Decomposition>(
        MPI_COMM_WORLD, extent, periodic_flags(D, c.periodicity), requested);
    Grid<D> grid(decomposition, make_stencil(c.shape, D, c.radius, c.variant));
    auto field = grid.template make_field<T>("u");
    for (iso::Algorithm algorithm : all_algorithms) {
      iso::HaloOptions options;
      options.algorithm = algorithm;
      auto halo = grid.halo_exchange(field, options);
      // Twice through the same persistent exchange, with different contents.
      for (int repeat = 0; repeat < 2; ++repeat) {
        const std::uint64_t salt = splitmix64((static_cast<std::uint64_t>(case_index) << 16) ^
                                              (static_cast<std::uint64_t>(algorithm) << 4) ^
                                              static_cast<std::uint64_t>(repeat));
        fill_by_global_index(grid, field, salt);
        halo.run();
        ++tally.exchanges;
        const std::string error = check_after_exchange(grid, field, salt);
        if (!error.empty() && failures.empty())
          failures += "\n  " + c.describe(D) + ", " + iso::to_string(algorithm) + " (ran " +
                      iso::to_string(halo.algorithm()) + "), repeat " + std::to_string(repeat) +
                      ": " + error + "\n    " + grid.describe();
      }
    }
  } catch (const iso::Error& e) {
    failures += "\n  " + c.describe(D) + ": threw " + e.what();
  }
  return failures;
}

template <int D>
std::vector<Case> cases_for() {
  std::vector<Case> cases;
  struct ShapeRadius {
    Shape shape;
    int radius;
  };
  std::vector<ShapeRadius> shapes = {
      {Shape::star, 1}, {Shape::box, 1}, {Shape::upwind, 1}, {Shape::one_sided_star, 2}};
  shapes.push_back({Shape::star, D <= 3 ? 3 : 2});
  shapes.push_back({Shape::box, D <= 2 ? 3 : 2});
  shapes.push_back({Shape::upwind, D <= 3 ? 3 : 2});
  if (D <= 3) shapes.push_back({Shape::one_sided_star, 3});
  const std::vector<Periodicity> periodicities =
      D == 1 ? std::vector<Periodicity>{Periodicity::all, Periodicity::none}
             : std::vector<Periodicity>{Periodicity::all, Periodicity::none, Periodicity::mixed};
  const ProcessGrid grids[] = {ProcessGrid::automatic, ProcessGrid::first, ProcessGrid::last,
                               ProcessGrid::two_first};
  int index = 0;
  for (const ShapeRadius& s : shapes)
    for (Periodicity p : periodicities) {
      cases.push_back({s.shape, s.radius, p, grids[index % 4], (index / 2) % 2 == 1, index});
      ++index;
    }
  return cases;
}

template <int D>
void run_all_cases() {
  Tally tally;
  std::string failures;
  const std::vector<Case> cases = cases_for<D>();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    // Alternate element types: int64 and double (both compared exactly).
    failures += i % 2 == 0 ? run_case<D, std::int64_t>(cases[i], static_cast<int>(i), tally)
                           : run_case<D, double>(cases[i], static_cast<int>(i), tally);
  }
  const bool ok = iso_test::all_ranks(failures.empty());
  EXPECT_TRUE(ok) << "failures on rank " << iso_test::world_rank() << ":" << failures;
  if (iso_test::world_rank() == 0)
    std::printf(
        "[ grid ] %d-D: %zu cases, %d exchanges checked\n", D, cases.size(), tally.exchanges);
}

TEST(GridExchange, OneDimension) {
  run_all_cases<1>();
}
TEST(GridExchange, TwoDimensions) {
  run_all_cases<2>();
}
TEST(GridExchange, ThreeDimensions) {
  run_all_cases<3>();
}
TEST(GridExchange, FourDimensions) {
  run_all_cases<4>();
}
TEST(GridExchange, FiveDimensions) {
  run_all_cases<5>();
}

// Six dimensions: a compile and run check (MDRangePolicy's largest rank).
TEST(GridExchange, SixDimensionsCompilesAndRuns) {
  Tally tally;
  const Case star{Shape::star, 1, Periodicity::mixed, ProcessGrid::automatic, true, 0};
  const Case box{Shape::box, 1, Periodicity::all, ProcessGrid::first, false, 1};
  std::string failures = run_case<6, std::int64_t>(star, 0, tally);
  failures += run_case<6, double>(box, 1, tally);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

}  // namespace
}  // namespace grid_test
