// Decomposition (uneven extents, owners, errors the same on every rank),
// Stencil shapes (offsets, halo widths, directions, descriptions) and the
// Grid's index helpers.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace grid_test {
namespace {

// `automatic` reads the cost model named by ISO_COST_MODEL; ctest sets it to
// the built-in figures. A bare mpirun gets the same default here, so no run
// of this executable calibrates or writes a cache file.
const bool cost_model_default = [] { return setenv("ISO_COST_MODEL", "defaults", 0) == 0; }();

/// Runs `make` expecting an iso::Error; returns its message ("" when none).
template <class Make>
std::string error_of(Make&& make) {
  try {
    make();
  } catch (const iso::Error& e) {
    return e.what();
  }
  return {};
}

/// True on every rank iff every rank got the same text.
bool same_on_all_ranks(const std::string& text) {
  const std::uint64_t hash = std::hash<std::string>{}(text);
  std::uint64_t low = hash, high = hash;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

TEST(Decomposition, UnevenExtentsDifferByAtMostOne) {
  ASSERT_TRUE(cost_model_default);
  const int world = iso_test::world_size();
  // 2 more cells than a multiple of the process count in dimension 0.
  const long n0 = 3L * world + (world > 2 ? 2 : 0), n1 = 5;
  Decomposition decomposition(MPI_COMM_WORLD, {n0, n1}, {true, false}, {world, 1});
  EXPECT_EQ(decomposition.dims(), 2);
  EXPECT_EQ(decomposition.process_dims(), (std::vector<int>{world, 1}));
  EXPECT_EQ(decomposition.periodic(), (std::vector<bool>{true, false}));
  long sum = 0;
  for (int c = 0; c < world; ++c) {
    const int n = decomposition.local_extent_of(0, c);
    EXPECT_EQ(n, n0 / world + (c < n0 % world ? 1 : 0)) << "coordinate " << c;
    EXPECT_EQ(decomposition.global_offset_of(0, c), sum);
    for (long g = sum; g < sum + n; ++g)
      EXPECT_EQ(decomposition.owner_coord(0, g), c);
    sum += n;
  }
  EXPECT_EQ(sum, n0);
  EXPECT_EQ(decomposition.global_offset_of(0, world), n0);
  EXPECT_EQ(decomposition.smallest_local_extent(0), static_cast<int>(n0 / world));
  const int me = decomposition.coords()[0];
  EXPECT_EQ(decomposition.coords()[0], decomposition.rank());  // row-major, {world,1}
  EXPECT_EQ(decomposition.local_extent()[0], decomposition.local_extent_of(0, me));
  EXPECT_EQ(decomposition.local_extent()[1], 5);
  EXPECT_EQ(decomposition.global_offset()[1], 0);

  // The local extents tile the global grid: their sum over ranks is N.
  long cells = decomposition.local_extent()[0] * decomposition.local_extent()[1];
  MPI_Allreduce(MPI_IN_PLACE, &cells, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(cells, n0 * n1);
  EXPECT_NE(decomposition.describe().find("non-periodic"), std::string::npos)
      << decomposition.describe();
}

TEST(Decomposition, DimsCreateChoosesZeroEntries) {
  const int world = iso_test::world_size();
  Decomposition decomposition(MPI_COMM_WORLD, {40, 40, 40}, {}, {0, 0, 0});
  const std::vector<int>& p = decomposition.process_dims();
  EXPECT_EQ(std::accumulate(p.begin(), p.end(), 1, std::multiplies<int>()), world);
  EXPECT_EQ(p, Decomposition::choose_process_dims(world, {0, 0, 0}));
  EXPECT_EQ(decomposition.periodic(), (std::vector<bool>{true, true, true}));  // default
  // Fixed entries are kept.
  Decomposition fixed(MPI_COMM_WORLD, {40, 40}, {false, false}, {1, 0});
  EXPECT_EQ(fixed.process_dims(), (std::vector<int>{1, world}));
}

TEST(Decomposition, ErrorsAreTheSameOnEveryRank) {
  const int world = iso_test::world_size();
  struct Bad {
    const char* what;
    std::vector<long> extent;
    std::vector<bool> periodic;
    std::vector<int> procs;
    const char* expected;  // part of the message
  };
  std::vector<Bad> bad = {
      {"periodic flags", {8, 8}, {true}, {}, "1 periodic flags for a 2-dimensional"},
      {"process dims", {8, 8}, {true, true}, {0, 0, 0}, "3 process grid sizes for a 2-dimensional"},
      {"no dimensions", {}, {}, {}, "at least one dimension"},
      {"empty extent", {8, 0}, {true, true}, {}, "global extent 0 in dimension 1"},
      {"sizes that do not fit", {8, 8}, {true, true}, {world + 1, 1}, "do not fit"},
      {"all given, product too small", {8, 8}, {true, true}, {1, 1}, "do not fit"},
  };
  if (world > 1)
    bad.push_back({"fewer cells than processes",
                   {world - 1L, 4},
                   {true, true},
                   {world, 1},
                   "dimension 0 has"});
  std::string failures;
  for (const Bad& b : bad) {
    // {1,1} fits a single rank.
    if (world == 1 && std::string(b.what) == "all given, product too small") continue;
    const std::string message =
        error_of([&] { Decomposition d(MPI_COMM_WORLD, b.extent, b.periodic, b.procs); });
    if (message.find(b.expected) == std::string::npos ||
        message.find("isostencil::core::Decomposition") == std::string::npos)
      failures += std::string("\n  ") + b.what + ": got \"" + message + "\"";
    if (!same_on_all_ranks(message))
      failures += std::string("\n  ") + b.what + ": differs between ranks";
  }
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

TEST(Decomposition, ArgumentsThatDifferBetweenRanksAreAnError) {
  ISO_TEST_REQUIRE_RANKS(2);
  const int rank = iso_test::world_rank();
  const std::string message = error_of([&] {
    Decomposition d(MPI_COMM_WORLD, {16, rank == 1 ? 17L : 16L}, {true, true}, {});
  });
  EXPECT_NE(message.find("differ between ranks"), std::string::npos) << message;
  EXPECT_TRUE(same_on_all_ranks(message));
}

TEST(Stencil, NamedShapes) {
  const Stencil star = Stencil::star(3, 1);
  EXPECT_EQ(star.size(), 7);
  EXPECT_EQ(star.geometry().directions.size(), 6);
  EXPECT_EQ(star.geometry().widths.lo, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(star.describe(), "star(d=3, r=1): 7 offsets, halo lo (1,1,1) hi (1,1,1), 6 directions");

  const Stencil box2 = Stencil::box(2, 1);
  EXPECT_EQ(box2.size(), 9);
  EXPECT_EQ(box2.geometry().directions.size(), 8);
  const Stencil box3 = Stencil::box(3, 1);
  EXPECT_EQ(box3.size(), 27);
  EXPECT_EQ(box3.geometry().directions.size(), 26);
  EXPECT_EQ(Stencil::box(2, 3).size(), 49);
  EXPECT_EQ(Stencil::box(2, 3).geometry().directions.size(), 8);
  EXPECT_EQ(Stencil::star(2, 3).size(), 13);
  EXPECT_EQ(Stencil::star(2, 3).radius(), 3);

  // Upwind box on the low side: (0,0), (-1,0), (0,-1), (-1,-1); reads the corner.
  const Stencil upwind = Stencil::upwind(2, 1, {-1, -1});
  EXPECT_EQ(upwind.size(), 4);
  EXPECT_EQ(upwind.geometry().widths.lo, (std::vector<int>{1, 1}));
  EXPECT_EQ(upwind.geometry().widths.hi, (std::vector<int>{0, 0}));
  EXPECT_EQ(upwind.geometry().directions, iso::OffsetList::parse("-1,-1;-1,0;0,-1"));
  // One-sided star: no corner.
  const Stencil one_sided = Stencil::one_sided_star(2, 2, {-1, -1});
  EXPECT_EQ(one_sided.size(), 5);
  EXPECT_EQ(one_sided.geometry().widths.lo, (std::vector<int>{2, 2}));
  EXPECT_EQ(one_sided.geometry().widths.hi, (std::vector<int>{0, 0}));
  EXPECT_EQ(one_sided.geometry().directions, iso::OffsetList::parse("-1,0;0,-1"));
  // Sign 0 leaves a dimension central.
  const Stencil mixed = Stencil::upwind(2, 1, {1, 0});
  EXPECT_EQ(mixed.size(), 6);
  EXPECT_EQ(mixed.geometry().widths.lo, (std::vector<int>{0, 1}));
  EXPECT_EQ(mixed.geometry().widths.hi, (std::vector<int>{1, 1}));
  EXPECT_EQ(mixed.geometry().directions.size(), 5);  // (0,±1), (1,0), (1,±1)

  EXPECT_NE(Stencil::star(1, 0).describe().find("0 directions"), std::string::npos);
  EXPECT_THROW(Stencil::star(0, 1), iso::Error);
  EXPECT_THROW(Stencil::box(2, -1), iso::Error);
  EXPECT_THROW(Stencil::upwind(2, 1, {-1}), iso::Error);
  EXPECT_THROW(Stencil::one_sided_star(2, 1, {2, 0}), iso::Error);
}

TEST(Stencil, WeightsAndCustomOffsets) {
  const Stencil laplace = Stencil::star(2, 1).with_weights({-4, 1, 1, 1, 1});
  EXPECT_TRUE(laplace.has_weights());
  EXPECT_NE(laplace.describe().find("(weighted)"), std::string::npos);
  EXPECT_THROW(Stencil::star(2, 1).with_weights({1, 2}), iso::Error);
  const Stencil custom(iso::OffsetList::parse("0,0;2,0;0,-3"), {}, "sparse");
  EXPECT_EQ(custom.geometry().widths.lo, (std::vector<int>{0, 3}));
  EXPECT_EQ(custom.geometry().widths.hi, (std::vector<int>{2, 0}));
  EXPECT_EQ(custom.geometry().directions, iso::OffsetList::parse("0,-1;1,0"));
  EXPECT_NE(laplace.hash(), Stencil::star(2, 1).hash());
}

TEST(Grid, IndexHelpers) {
  const int world = iso_test::world_size();
  const long n0 = 4L * world + (world > 1 ? 1 : 0);
  Grid<2> grid(MPI_COMM_WORLD, {n0, 6}, {true, false}, Stencil::upwind(2, 2, {-1, 0}), {world, 1});
  EXPECT_EQ(grid.ghost_lo(), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(grid.ghost_hi(), (std::array<int, 2>{0, 2}));
  EXPECT_EQ(grid.interior_extent()[1], 6);
  EXPECT_EQ(grid.field_extent()[1], 10);
  EXPECT_EQ(grid.field_extent()[0], 2 + grid.interior_extent()[0]);
  auto u = grid.make_field<double>("u");
  EXPECT_EQ(u.extent(0), static_cast<std::size_t>(grid.field_extent()[0]));
  EXPECT_EQ(u.extent(1), 10u);
  EXPECT_EQ(u.label(), "u");
  const auto [first, last] = grid.interior_range(0);
  EXPECT_EQ(first, 2);
  EXPECT_EQ(last, 2 + grid.interior_extent()[0]);
  EXPECT_EQ(grid.to_global(0, first), grid.global_offset()[0]);
  EXPECT_EQ(grid.to_local(0, grid.global_offset()[0]), first);
  EXPECT_TRUE(grid.owns({grid.global_offset()[0], 0}));
  EXPECT_FALSE(grid.owns({grid.global_offset()[0] + grid.interior_extent()[0], 0}));
  EXPECT_FALSE(grid.owns({grid.global_offset()[0], 6}));
  EXPECT_TRUE(grid.is_interior({first, 2}));
  EXPECT_FALSE(grid.is_interior({first - 1, 2}));
  EXPECT_EQ(grid.wrap(0, -1), n0 - 1);  // periodic
  EXPECT_EQ(grid.wrap(0, n0 + 1), 1);
  EXPECT_FALSE(grid.wrap(1, -1).has_value());  // non-periodic
  EXPECT_FALSE(grid.wrap(std::array<long, 2>{0, 6}).has_value());
  const std::array<int, 2> local{first, 3};
  EXPECT_EQ(grid.to_local(grid.to_global(local)), local);

  // Exactly one rank owns each global cell.
  int owners = 0;
  for (long g = 0; g < n0; ++g)
    owners += grid.owns({g, 5}) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &owners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(owners, n0);
  EXPECT_NE(grid.describe().find("upwind(d=2, r=2, signs=(-1,0))"), std::string::npos)
      << grid.describe();
}

TEST(Grid, SharesOrTakesItsDecomposition) {
  const int world = iso_test::world_size();
  Grid<2> owner(Decomposition(MPI_COMM_WORLD, {3L * world, 4}, {false, true}, {world, 1}),
                Stencil::box(2, 1));
  EXPECT_EQ(owner.decomposition().process_dims(), (std::vector<int>{world, 1}));
  // Two stencils on one decomposition: the grids share it.
  Grid<2> other(owner.shared_decomposition(), Stencil::star(2, 2));
  EXPECT_EQ(&other.decomposition(), &owner.decomposition());
  EXPECT_EQ(other.ghost_lo(), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(owner.directions().size(), 8);
  EXPECT_EQ(other.directions().size(), 4);
}

// A grid made from a communicator agrees on its stencil, depth and
// decomposition in one collective call: what differs, or fails on one rank
// only, is still the same error on every rank, and a grid made afterwards
// works.
TEST(Grid, FromACommunicatorItsChecksAreAgreedOnEveryRank) {
  const int world = iso_test::world_size();
  const int last = world - 1;
  const bool erring = iso_test::world_rank() == last;
  const std::array<long, 2> extent{8L * world, 8};
  const std::string depth = error_of([&] {
    Grid<2> g(MPI_COMM_WORLD, extent, {true, true}, Stencil::star(2, 1), {}, erring ? 0 : 1);
  });
  EXPECT_NE(depth.find("rank " + std::to_string(last) + ": halo depth must be >= 1, got 0"), std::string::npos)
      << depth;
  EXPECT_TRUE(same_on_all_ranks(depth)) << depth;
  const std::string dims = error_of([&] {
    Grid<2> g(MPI_COMM_WORLD, extent, {true, true}, erring ? Stencil::star(3, 1) : Stencil::star(2, 1));
  });
  EXPECT_NE(dims.find("rank " + std::to_string(last) + ": the stencil"), std::string::npos) << dims;
  EXPECT_NE(dims.find("has 3 dimensions, the grid 2"), std::string::npos) << dims;
  EXPECT_TRUE(same_on_all_ranks(dims)) << dims;
  if (world > 1) {
    const std::string differs = error_of([&] {
      Grid<2> g(MPI_COMM_WORLD, extent, {true, true}, Stencil::star(2, 1), {}, erring ? 2 : 1);
    });
    EXPECT_NE(differs.find("the stencils (offsets or weights) or the halo depths differ"), std::string::npos)
        << differs;
    EXPECT_TRUE(same_on_all_ranks(differs)) << differs;
    // The decomposition's own mismatch is named first.
    const std::string both = error_of([&] {
      Grid<2> g(MPI_COMM_WORLD, {8L * world, erring ? 9L : 8L}, {true, true}, Stencil::star(2, 1), {},
                erring ? 2 : 1);
    });
    EXPECT_NE(both.find("the global extent, periodic flags or process grid sizes differ"), std::string::npos)
        << both;
    EXPECT_TRUE(same_on_all_ranks(both)) << both;
  }
  Grid<2> grid(MPI_COMM_WORLD, extent, {true, true}, Stencil::star(2, 1), {}, 2);
  EXPECT_EQ(grid.depth(), 2);
}

TEST(Grid, MismatchedDimensionsAndFields) {
  const int world = iso_test::world_size();
  auto decomposition = std::make_shared<const Decomposition>(
      MPI_COMM_WORLD, std::vector<long>{8L * world, 8}, std::vector<bool>{true, true});
  const std::string wrong_stencil =
      error_of([&] { Grid<2> g(decomposition, Stencil::star(3, 1)); });
  EXPECT_NE(wrong_stencil.find("has 3 dimensions, the grid 2"), std::string::npos) << wrong_stencil;
  const std::string wrong_grid = error_of([&] { Grid<3> g(decomposition, Stencil::star(3, 1)); });
  EXPECT_NE(wrong_grid.find("the decomposition has 2 dimensions, the grid 3"), std::string::npos)
      << wrong_grid;

  Grid<2> grid(decomposition, Stencil::star(2, 1));
  Grid<2> wide(decomposition, Stencil::star(2, 2));
  auto other = wide.make_field<double>("other");  // ghost width 2: wrong extents here
  const std::string wrong_field = error_of([&] { auto h = grid.halo_exchange(other); });
  EXPECT_NE(wrong_field.find("field 0 (\"other\") has extent"), std::string::npos) << wrong_field;
  auto u = grid.make_field<double>("u");
  const std::string twice = error_of([&] { auto h = grid.halo_exchange({u, u}); });
  EXPECT_NE(twice.find("appears twice"), std::string::npos) << twice;
  EXPECT_TRUE(same_on_all_ranks(wrong_field + twice));
}

// Every rank must pass the same stencil, weights included, and the same
// depth: at depth > 1 the ghost region follows the repeated stencil, which
// keeps offsets only, so the kernel's weights are agreed on their own.
TEST(Grid, StencilOrDepthThatDiffersBetweenRanksIsAnError) {
  ISO_TEST_REQUIRE_RANKS(2);
  const int world = iso_test::world_size();
  const bool first = iso_test::world_rank() == 0;
  auto decomposition = std::make_shared<const Decomposition>(
      MPI_COMM_WORLD, std::vector<long>{8L * world, 8}, std::vector<bool>{true, true});
  const Stencil star = Stencil::star(2, 1);
  const Stencil reweighted(star.offsets(), std::vector<double>(star.offsets().size(), first ? 0.5 : 0.25));
  for (int depth : {1, 2, 3}) {
    const std::string weights = error_of([&] { Grid<2> g(decomposition, reweighted, depth); });
    EXPECT_NE(weights.find("the stencils (offsets or weights) or the halo depths"), std::string::npos)
        << "depth " << depth << ": " << weights;
    EXPECT_TRUE(same_on_all_ranks(weights)) << weights;
  }
  const std::string depths = error_of([&] { Grid<2> g(decomposition, star, first ? 2 : 1); });
  EXPECT_NE(depths.find("the stencils (offsets or weights) or the halo depths"), std::string::npos) << depths;
  EXPECT_TRUE(same_on_all_ranks(depths)) << depths;
  // The same stencil and depth everywhere is accepted.
  EXPECT_EQ(error_of([&] { Grid<2> g(decomposition, star, 2); }), "");
}

}  // namespace
}  // namespace grid_test
