// Tiled substeps of deep halos (kernels/include/isostencil/kernels/tiles.hpp):
// a block of k Jacobi sweeps run tile by tile in scratch must leave the same
// field, bit for bit, as the same block run box by box (JacobiOptions::tiles
// off) and as depth 1 (an exchange before every sweep, the independent
// reference), at depths 2, 3, 4 and 8, periodic, bounded and mixed, uneven
// extents, tiles that do not divide the interior, star and box kernels, with
// and without a source. A tile region one cell short must change the result
// (the testing aid detail::tile_region_error). And the 7-point rows' AVX2
// copy must give the SSE2 copy's bits.
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

template <int D>
double rough(const std::array<long, D>& g) {
  double v = 0.25;
  for (int j = 0; j < D; ++j)
    v += 0.1 * static_cast<double>((g[j] * (j + 3)) % 7) + 0.01 * static_cast<double>(g[j]);
  return v;
}

struct Case {
  int depth = 1;
  bool tiles = true;
  std::vector<int> tile;
  bool source = true;
  int residual_every = 0;
};

struct Outcome {
  std::vector<double> field;  // the interior, on rank 0
  std::vector<kernels::Residual> history;
  bool tiled = false;
  long tiles = 0;  // tiles of a full block on this rank
};

/// Jacobi from a rough start with Dirichlet ghosts (and a source), run as
/// the calls run(5), run(1), run(7); nullopt where the width rule refuses
/// the depth (the same on every rank).
template <int D>
std::optional<Outcome> run_case(const core::Grid<D>& shallow, const Case& setup) {
  std::optional<core::Grid<D>> grid;
  try {
    grid.emplace(shallow.with_depth(setup.depth));
  } catch (const iso::Error&) {
    return std::nullopt;
  }
  auto u = grid->template make_field<double>("u");
  iso_test::fill_cells<D>(*grid, u, [](const std::array<long, D>& g) { return rough<D>(g); });
  kernels::set_dirichlet_ghosts<D>(*grid, u, [](const std::array<long, D>& g) {
    double v = 0.5;
    for (int j = 0; j < D; ++j)
      v += 0.03 * static_cast<double>(g[j]);
    return v;
  });
  core::Field<double, D> f;
  if (setup.source) {
    f = grid->template make_field<double>("f");
    iso_test::fill_cells<D>(*grid, f,
                            [](const std::array<long, D>& g) { return 0.01 * rough<D>(g); });
  }
  kernels::JacobiOptions options;
  options.residual_every = setup.residual_every;
  options.final_residual = true;
  options.tiles = setup.tiles;
  options.tile_extent = setup.tile;
  kernels::Jacobi<D> jacobi(*grid, u, f, options);
  Outcome outcome;
  outcome.tiled = jacobi.tiled();
  if (outcome.tiled) {
    const kernels::UpdatePlan<D> plan = kernels::plan_update(*grid, "count");
    outcome.tiles = kernels::plan_tiles(*grid, plan.boxes, setup.depth, setup.tile, "count").tiles;
  }
  for (const long n : {5L, 1L, 7L}) {
    const kernels::JacobiSummary summary = jacobi.run(n);
    outcome.history.insert(outcome.history.end(), summary.history.begin(), summary.history.end());
  }
  outcome.field = iso_test::gather_interior<D>(*grid, jacobi.solution());
  return outcome;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Same interior and residuals, bit for bit (fields compared on rank 0, the
/// verdict broadcast).
bool same(const Outcome& a, const Outcome& b, std::string& why) {
  int equal = 1;
  if (iso_test::world_rank() == 0) {
    const long at = iso_test::first_bitwise_difference(a.field, b.field);
    if (at >= 0) {
      equal = 0;
      why = "fields differ at global cell " + std::to_string(at);
    }
  }
  MPI_Bcast(&equal, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (a.history.size() != b.history.size()) {
    equal = 0;
    why = "residual histories differ in length";
  } else {
    for (std::size_t i = 0; i < a.history.size(); ++i)
      if (!same_bits(a.history[i].l2, b.history[i].l2) ||
          !same_bits(a.history[i].max, b.history[i].max)) {
        equal = 0;
        why = "residual " + std::to_string(i) + " differs";
      }
  }
  return equal != 0;
}

template <int D>
void tiled_matches(const std::array<long, D>& extent, const core::Stencil& stencil,
                   const std::vector<std::vector<int>>& tiles, const char* what) {
  std::array<bool, D> periodic{}, bounded{}, mixed{};
  for (int j = 0; j < D; ++j) {
    periodic[j] = true;
    bounded[j] = false;
    mixed[j] = j % 2 == 1;
  }
  for (const auto& sides : {periodic, bounded, mixed})
    for (const bool source : {true, false}) {
      const core::Grid<D> grid(MPI_COMM_WORLD, extent, sides, stencil);
      Case one;
      one.source = source;
      const std::optional<Outcome> reference = run_case<D>(grid, one);
      ASSERT_TRUE(reference.has_value());
      int ran = 0;
      for (const int depth : {2, 3, 4, 8}) {
        Case untiled = one;
        untiled.depth = depth;
        untiled.tiles = false;
        const std::optional<Outcome> boxwise = run_case<D>(grid, untiled);
        if (!boxwise) continue;
        ++ran;
        EXPECT_FALSE(boxwise->tiled);
        for (const auto& tile : tiles) {
          Case tiled = untiled;
          tiled.tiles = true;
          tiled.tile = tile;
          const std::optional<Outcome> outcome = run_case<D>(grid, tiled);
          ASSERT_TRUE(outcome.has_value());
          EXPECT_TRUE(outcome->tiled);
          const std::string where =
              std::string(what) + " depth " + std::to_string(depth) + " source " +
              std::to_string(source) + " tile " +
              (tile.empty() ? std::string("default") : std::to_string(tile[0]) + "x..") + ": ";
          std::string why;
          EXPECT_TRUE(same(*boxwise, *outcome, why)) << where << "tiled vs untiled: " << why;
          EXPECT_TRUE(same(*reference, *outcome, why)) << where << "tiled vs depth 1: " << why;
        }
      }
      EXPECT_GE(ran, 1) << what << ": no depth above 1 fits";
    }
}

TEST(TiledJacobi, BitIdenticalStar3D) {
  tiled_matches<3>({17, 14, 19}, kernels::star_laplacian(3, 0.5), {{}, {5, 3, 6}, {2, 7, 4}},
                   "star");
}
TEST(TiledJacobi, BitIdenticalBox3D) {
  tiled_matches<3>({15, 13, 18}, kernels::box_laplacian(3, 0.5), {{}, {4, 5, 7}}, "box");
}
TEST(TiledJacobi, BitIdenticalStar2D) {
  tiled_matches<2>({29, 23}, kernels::star_laplacian(2, 0.5), {{}, {6, 5}, {1, 9}}, "star 2-D");
}

// Blocks that measure a residual run box by box, the others tiled: mixed in
// one run, the residual history and field still those of depth 1.
TEST(TiledJacobi, MixedWithResidualBlocks) {
  const core::Grid<3> grid(MPI_COMM_WORLD, {16, 18, 14}, {true, false, true},
                           kernels::star_laplacian(3, 0.5));
  Case one;
  one.residual_every = 5;
  const std::optional<Outcome> reference = run_case<3>(grid, one);
  ASSERT_TRUE(reference.has_value());
  for (const int depth : {2, 3}) {
    Case tiled = one;
    tiled.depth = depth;
    tiled.tile = {4, 5, 6};
    const std::optional<Outcome> outcome = run_case<3>(grid, tiled);
    ASSERT_TRUE(outcome.has_value());
    ASSERT_TRUE(outcome->tiled);
    std::string why;
    EXPECT_TRUE(same(*reference, *outcome, why)) << "depth " << depth << ": " << why;
  }
}

/// The testing aid set for one scope.
struct RegionError {
  explicit RegionError(int cells) { kernels::detail::tile_region_error = cells; }
  ~RegionError() { kernels::detail::tile_region_error = 0; }
};

/// The wavefront rings' planes for one scope (0: the plan's own).
struct RingPlanes {
  explicit RingPlanes(int planes) { kernels::detail::wavefront_ring_override = planes; }
  ~RingPlanes() { kernels::detail::wavefront_ring_override = 0; }
};

// Wavefronts (tiles spanning dimension 0): rings of 3 planes (the least for
// reach 1, a mirror copy at every other plane), 4 and 7 wrap many times on
// these small grids; tiles cut along dimension 1 and along the rows; still
// the bits of box by box and of depth 1.
TEST(WavefrontJacobi, BitIdenticalWithSmallRings) {
  for (const int planes : {3, 4, 7}) {
    const RingPlanes rings(planes);
    tiled_matches<3>({17, 14, 19}, kernels::star_laplacian(3, 0.5), {{}, {99, 5, 99}, {40, 3, 6}},
                     "star wavefront");
    tiled_matches<3>({15, 13, 18}, kernels::box_laplacian(3, 0.5), {{99, 4, 99}}, "box wavefront");
    tiled_matches<2>({29, 23}, kernels::star_laplacian(2, 0.5), {{}, {99, 7}},
                     "star 2-D wavefront");
  }
}

TEST(WavefrontJacobi, ReportsItsRings) {
  const core::Grid<3> grid(MPI_COMM_WORLD, {16, 16, 16}, {true, true, true},
                           kernels::star_laplacian(3), {}, 3);
  auto u = grid.make_field<double>("u");
  kernels::JacobiOptions options;
  options.tiles = true;
  const kernels::Jacobi<3> jacobi(grid, u, {}, options);
  EXPECT_EQ(jacobi.tiling().rfind("wavefront ", 0), 0u) << jacobi.tiling();
  EXPECT_NE(jacobi.tiling().find("rings of 16 planes"), std::string::npos) << jacobi.tiling();
}

// A tile region one cell short reads scratch nothing wrote there: the result
// must change (so the bit-identity tests above could fail), and match again
// without the aid.
TEST(TiledJacobi, RegionOneCellShortChangesResults) {
  for (const bool periodic : {true, false})
    for (const std::vector<int>& tile : {std::vector<int>{5, 6, 7}, std::vector<int>{99, 6, 7}}) {
      const core::Grid<3> grid(MPI_COMM_WORLD, {20, 22, 24}, {periodic, periodic, periodic},
                               kernels::star_laplacian(3, 0.5));
      const std::optional<Outcome> reference = run_case<3>(grid, Case{});
      ASSERT_TRUE(reference.has_value());
      for (const int depth : {2, 3, 4}) {
        Case tiled;
        tiled.depth = depth;
        tiled.tile = tile;
        std::optional<Outcome> wrong;
        {
          const RegionError aid(-1);
          wrong = run_case<3>(grid, tiled);
        }
        if (!wrong) continue;
        ASSERT_TRUE(wrong->tiled);
        EXPECT_GT(wrong->tiles, 1);
        std::string why;
        EXPECT_FALSE(same(*reference, *wrong, why))
            << "periodic " << periodic << " depth " << depth << " tile " << tile[0]
            << ": tile regions one cell short still match depth 1";
        const std::optional<Outcome> right = run_case<3>(grid, tiled);
        EXPECT_TRUE(same(*reference, *right, why)) << why;
      }
    }
}

// The 7-point rows' AVX2 copy (sweep.hpp's wide rows) gives the SSE2 copy's
// bits, tiled and untiled, with and without a source.
TEST(WideRows, SameBitsAsNarrowRows) {
  if (!kernels::detail::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  const core::Grid<3> grid(MPI_COMM_WORLD, {21, 18, 37}, {true, false, true},
                           kernels::star_laplacian(3, 0.5));
  for (const bool source : {true, false})
    for (const int depth : {1, 3}) {
      Case setup;
      setup.depth = depth;
      setup.source = source;
      kernels::detail::wide_rows = false;
      const std::optional<Outcome> narrow = run_case<3>(grid, setup);
      kernels::detail::wide_rows = true;
      const std::optional<Outcome> wide = run_case<3>(grid, setup);
      kernels::detail::wide_rows = kernels::detail::cpu_has_avx2();
      ASSERT_TRUE(narrow.has_value() && wide.has_value());
      std::string why;
      EXPECT_TRUE(same(*narrow, *wide, why))
          << "depth " << depth << " source " << source << ": " << why;
    }
}

TEST(TiledJacobi, ReportsWhereItTiles) {
  const core::Grid<3> grid(MPI_COMM_WORLD, {16, 16, 16}, {true, true, true},
                           kernels::star_laplacian(3), {}, 2);
  auto u = grid.make_field<double>("u");
  kernels::JacobiOptions options;
  EXPECT_EQ(kernels::Jacobi<3>(grid, u, {}, options).tiling(),
            "untiled (tiles off)");  // the default
  options.tiles = true;
  options.tile_extent = {4, 8, 16};
  const kernels::Jacobi<3> jacobi(grid, u, {}, options);
  EXPECT_TRUE(jacobi.tiled());
  EXPECT_EQ(jacobi.tiling().rfind("tiled 4x8x", 0), 0u) << jacobi.tiling();
  options.tiles = false;
  const kernels::Jacobi<3> off(grid, u, {}, options);
  EXPECT_EQ(off.tiling(), "untiled (tiles off)");
  // Tile extents for the wrong number of dimensions: an error on every rank.
  options.tiles = true;
  options.tile_extent = {4, 4};
  EXPECT_THROW((void)kernels::Jacobi<3>(grid, u, {}, options), iso::Error);
}

}  // namespace
