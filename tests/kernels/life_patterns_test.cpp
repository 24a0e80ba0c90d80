// Known Life patterns on a distributed grid: a glider from the shipped RLE
// file travels one cell diagonally per 4 generations round a torus, across
// rank boundaries, in all four orientations; a blinker has period 2; a block
// is still; the Gosper gun fires a glider every 30 generations on a grid with
// dead boundaries; and Life's API errors are the same on every rank.
#include "isostencil/kernels/life.hpp"
#include "isostencil_test.hpp"
#include "life_reference.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#ifndef ISOSTENCIL_PATTERN_DIR
#error "ISOSTENCIL_PATTERN_DIR must name inputs/patterns"
#endif

namespace {

using isostencil::kernels::Life;
using isostencil::kernels::LifeOptions;
using isostencil::kernels::LifePattern;
using isostencil::kernels::LifeRule;

std::string pattern_file(const std::string& name) {
  return std::string(ISOSTENCIL_PATTERN_DIR) + "/" + name;
}

/// A global rows x columns field with the pattern's cells at `offset`,
/// wrapped round a torus.
std::vector<std::uint8_t> expected_field(long rows, long columns, const LifePattern& pattern,
                                         long row, long column) {
  std::vector<std::uint8_t> field(static_cast<std::size_t>(rows * columns), 0);
  for (const std::vector<long>& cell : pattern.cells) {
    const long r = ((row + cell[0]) % rows + rows) % rows;
    const long c = ((column + cell[1]) % columns + columns) % columns;
    field[static_cast<std::size_t>(r * columns + c)] = 1;
  }
  return field;
}

/// The field as rows of '.' and 'O' (for failure messages).
std::string picture(const std::vector<std::uint8_t>& field, long columns) {
  std::string text;
  for (std::size_t i = 0; i < field.size(); ++i) {
    text += field[i] != 0 ? 'O' : '.';
    if ((static_cast<long>(i) + 1) % columns == 0) text += '\n';
  }
  return text;
}

/// Gathers the field and compares it on rank 0 with `expected`; true on
/// every rank iff equal. Rank 0 adds both pictures to the failure.
bool field_is(const Life<2>& life, const std::vector<std::uint8_t>& expected,
              std::string* failure) {
  const std::vector<std::uint8_t> got = life.gather(0);
  const bool root = iso_test::world_rank() == 0;
  const bool ok = iso_test::all_ranks(!root || got == expected);
  if (!ok && root) {
    const long columns = life.grid().global_extent()[1];
    *failure = "generation " + std::to_string(life.generation()) + ", got\n" +
               picture(got, columns) + "expected\n" + picture(expected, columns);
  }
  return ok;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const iso::Error& error) {
    return error.what();
  }
  return {};
}

TEST(LifeGlider, TravelsRoundTheTorusAcrossRanks) {
  const LifePattern glider = isostencil::kernels::read_rle(pattern_file("glider.rle"));
  const LifeRule rule(glider.rule, 2);
  // 24 x 24 splits at row 12 (2 ranks), rows and columns 12 (4), rows 8 and
  // 16 (3), rows 6, 12, 18 and column 12 (8). Starting at (10, 10) the glider
  // straddles the splits at 12, and one lap (96 generations) crosses all.
  constexpr long n = 24, start = 10;
  for (const bool overlap : {true, false}) {
    for (const int flips : {0, 1, 2, 3}) {
      LifePattern oriented = glider;
      if ((flips & 1) != 0) oriented = oriented.flipped(0);
      if ((flips & 2) != 0) oriented = oriented.flipped(1);
      // The shipped glider heads for growing row and column; a flip turns that way back.
      const long row_step = (flips & 1) != 0 ? -1 : 1;
      const long column_step = (flips & 2) != 0 ? -1 : 1;
      SCOPED_TRACE("overlap " + std::to_string(overlap) + ", heading (" + std::to_string(row_step) +
                   ", " + std::to_string(column_step) + ")");
      Life<2> life(MPI_COMM_WORLD, {n, n}, {true, true}, rule, LifeOptions{overlap, {}});
      life.place(oriented, {start, start});
      std::set<int> owners;
      bool straddled = false;
      for (long lap = 0; lap <= n; ++lap) {
        if (lap > 0) life.step(4);
        const long row = start + lap * row_step, column = start + lap * column_step;
        std::string failure;
        ASSERT_TRUE(field_is(life, expected_field(n, n, oriented, row, column), &failure))
            << failure;
        ASSERT_EQ(life.live_cells(), 5);
        std::set<int> now;
        for (const std::vector<long>& cell : oriented.cells) {
          std::vector<int> coords(2);
          const long r = ((row + cell[0]) % n + n) % n, c = ((column + cell[1]) % n + n) % n;
          coords[0] = life.grid().decomposition().owner_coord(0, r);
          coords[1] = life.grid().decomposition().owner_coord(1, c);
          int owner = 0;
          MPI_Cart_rank(life.grid().comm(), coords.data(), &owner);
          now.insert(owner);
        }
        owners.insert(now.begin(), now.end());
        straddled = straddled || now.size() > 1;
      }
      // The route really crossed subdomain boundaries.
      if (iso_test::world_size() > 1) {
        EXPECT_TRUE(straddled);
        EXPECT_GE(owners.size(), 2U);
      }
      EXPECT_EQ(life.generation(), 4 * n);
    }
  }
}

TEST(LifeBlinker, HasPeriodTwo) {
  const LifePattern horizontal = isostencil::kernels::read_rle(pattern_file("blinker.rle"));
  const LifePattern vertical = LifePattern::from_picture({"O", "O", "O"});
  constexpr long n = 24;
  for (const bool periodic : {true, false}) {
    for (const bool overlap : {true, false}) {
      SCOPED_TRACE("periodic " + std::to_string(periodic) + ", overlap " + std::to_string(overlap));
      Life<2> life(MPI_COMM_WORLD, {n, n}, {periodic, periodic}, LifeRule::conway(),
                   LifeOptions{overlap, {}});
      // Centred on (12, 12): across the splits at 12 in both phases.
      life.place(horizontal, {12, 11});
      for (int generation = 1; generation <= 10; ++generation) {
        life.step();
        std::string failure;
        const bool odd = generation % 2 == 1;
        ASSERT_TRUE(field_is(
            life,
            odd ? expected_field(n, n, vertical, 11, 12) : expected_field(n, n, horizontal, 12, 11),
            &failure))
            << failure;
      }
    }
  }
}

TEST(LifeBlinker, WrapsOnTheTorusAndDiesAtADeadEdge) {
  const LifePattern horizontal = LifePattern::from_picture({"OOO"});
  const LifePattern vertical = LifePattern::from_picture({"O", "O", "O"});
  constexpr long n = 24;
  {
    // Row 0, columns 23, 0, 1 on a torus: a blinker through the wrap-around.
    Life<2> life(MPI_COMM_WORLD, {n, n}, {true, true}, LifeRule::conway());
    life.place(horizontal, {0, -1});
    std::string failure;
    life.step();
    EXPECT_TRUE(field_is(life, expected_field(n, n, vertical, -1, 0), &failure)) << failure;
    life.step();
    EXPECT_TRUE(field_is(life, expected_field(n, n, horizontal, 0, -1), &failure)) << failure;
  }
  {
    // Along the top edge of a dead boundary: the centre survives, the cell
    // below is born, the one above lies outside; then both die.
    Life<2> life(MPI_COMM_WORLD, {n, n}, {false, false}, LifeRule::conway());
    life.place(horizontal, {0, 11});
    std::string failure;
    life.step();
    EXPECT_TRUE(field_is(life, expected_field(n, n, LifePattern::from_picture({"O", "O"}), 0, 12),
                         &failure))
        << failure;
    life.step();
    EXPECT_TRUE(field_is(life, std::vector<std::uint8_t>(n * n, 0), &failure)) << failure;
    EXPECT_EQ(life.live_cells(), 0);
  }
}

TEST(LifeBlock, IsStill) {
  const LifePattern block = isostencil::kernels::read_rle(pattern_file("block.rle"));
  constexpr long n = 24;
  for (const bool overlap : {true, false}) {
    Life<2> life(MPI_COMM_WORLD, {n, n}, {true, true}, LifeRule::conway(),
                 LifeOptions{overlap, {}});
    // One block on the corner of four subdomains, one through the torus' corner.
    life.place(block, {11, 11});
    life.place(block, {23, 23});
    std::vector<std::uint8_t> expected = expected_field(n, n, block, 11, 11);
    const std::vector<std::uint8_t> corner = expected_field(n, n, block, 23, 23);
    for (std::size_t i = 0; i < expected.size(); ++i)
      expected[i] |= corner[i];
    for (int generation = 1; generation <= 6; ++generation) {
      life.step();
      std::string failure;
      ASSERT_TRUE(field_is(life, expected, &failure)) << failure;
    }
    EXPECT_EQ(life.live_cells(), 8);
  }
}

TEST(LifeGosperGun, FiresAGliderEveryThirtyGenerations) {
  const LifePattern gun = isostencil::kernels::read_rle(pattern_file("gosper_glider_gun.rle"));
  constexpr long rows = 40, columns = 48;
  Life<2> life(MPI_COMM_WORLD, {rows, columns}, {false, false}, LifeRule(gun.rule, 2));
  life.place(gun, {1, 1});
  auto world = life_reference::make_world({rows, columns}, {false, false});
  world.cells = expected_field(rows, columns, gun, 1, 1);
  const auto conway = life_reference::make_rule(2, {3}, {2, 3});
  for (int period = 1; period <= 4; ++period) {
    life.step(30);
    life_reference::run(world, conway, 30);
    const std::vector<std::uint8_t> got = life.gather(0);
    const bool root = iso_test::world_rank() == 0;
    const std::string difference = root ? life_reference::first_difference(world, got) : "";
    EXPECT_TRUE(iso_test::all_ranks(difference.empty()))
        << "generation " << life.generation() << ": " << difference;
    // Until the first glider reaches the bottom edge, each period adds one
    // glider (5 cells) to the gun's 36, and the gun itself is back in place.
    if (period <= 2) {
      EXPECT_EQ(life.live_cells(), 36 + 5 * period);
      // Rows 0..9 hold the gun (rows 1..9) and its dead border; the newest
      // glider starts on row 10.
      const std::vector<std::uint8_t> original = expected_field(rows, columns, gun, 1, 1);
      bool gun_in_place = true;
      if (root)
        for (std::size_t i = 0; i < static_cast<std::size_t>(10 * columns); ++i)
          gun_in_place = gun_in_place && got[i] == original[i];
      EXPECT_TRUE(iso_test::all_ranks(gun_in_place)) << "generation " << life.generation();
    }
  }
}

TEST(LifeApi, SetCellWrapsOnTheTorusAndStepsBack) {
  constexpr long n = 12;
  Life<2> life(MPI_COMM_WORLD, {n, n}, {true, true}, LifeRule::conway());
  life.set_cell({-1, n + 1});  // (11, 1)
  std::vector<std::uint8_t> expected(n * n, 0);
  expected[11 * n + 1] = 1;
  std::string failure;
  EXPECT_TRUE(field_is(life, expected, &failure)) << failure;
  life.set_cell({11, 1}, 0);
  EXPECT_EQ(life.live_cells(), 0);
  life.fill_random(7, 0.5);
  const long alive = life.live_cells();
  EXPECT_GT(alive, 0);
  life.clear();
  EXPECT_EQ(life.live_cells(), 0);
}

TEST(LifeApi, ErrorsAreTheSameOnEveryRank) {
  const auto on_every_rank = [](const std::string& message, const std::string& expected) {
    const bool found = message.find(expected) != std::string::npos;
    EXPECT_TRUE(iso_test::all_ranks(found)) << (message.empty() ? "no error" : message);
  };
  on_every_rank(error_of([] {
                  Life<3> life(MPI_COMM_WORLD, {8, 8, 8}, {true, true, true}, LifeRule::conway());
                }),
                "isostencil::kernels::Life::Life: rule B3/S23 is for 2-D grids, this grid is 3-D");
  Life<2> bounded(MPI_COMM_WORLD, {16, 12}, {false, true}, LifeRule::conway());
  on_every_rank(
      error_of([&] {
        bounded.set_cell({16, 3});
      }),
      "Life::set_cells: cell (16, 3) lies outside dimension 0 (non-periodic, cells 0..15)");
  on_every_rank(error_of([&] { bounded.set_cell({-1, 3}); }), "cell (-1, 3) lies outside");
  bounded.set_cell({3, -1});  // periodic dimension: wraps to column 11
  EXPECT_EQ(bounded.live_cells(), 1);
  on_every_rank(error_of([&] {
                  bounded.place(isostencil::kernels::read_rle(pattern_file("glider.rle")), {14, 0});
                }),
                "cell (16, 0) lies outside");
  LifePattern flat;
  flat.extent = {2, 2, 2};
  flat.cells = {{0, 0, 0}};
  flat.name = "cube";
  on_every_rank(error_of([&] {
                  bounded.place(flat, {0, 0});
                }),
                "pattern \"cube\" has 3 dimensions, the grid 2");
  on_every_rank(error_of([&] { bounded.set_global(std::vector<std::uint8_t>(10)); }),
                "Life::set_global: got 10 cells, the global grid has 192");
  on_every_rank(error_of([&] { bounded.gather(iso_test::world_size()); }),
                "Life::gather: root " + std::to_string(iso_test::world_size()) + " is not a rank");
  // Nothing above left a collective half-done: the grid still works.
  bounded.step(2);
  EXPECT_EQ(bounded.live_cells(), 0);
}

TEST(LifeHalo, ExposesTheExchangeThatRuns) {
  LifeOptions options;
  options.halo.algorithm = iso::Algorithm::linear;
  Life<2> life(MPI_COMM_WORLD, {16, 12}, {true, true}, LifeRule::conway(), options);
  EXPECT_EQ(&life.halo().pattern(), life.grid().halo_pattern(options.halo).get());
  EXPECT_EQ(life.algorithm(), iso::Algorithm::linear);
  const auto* first = &life.halo();
  life.fill_random(3, 0.4);
  life.step(1);
  EXPECT_NE(&life.halo(), first);
  EXPECT_EQ(&life.halo().pattern(), &first->pattern());
  const iso::HaloValidation validation = life.halo().validate();
  EXPECT_TRUE(validation.ok) << validation.message;
}

}  // namespace
