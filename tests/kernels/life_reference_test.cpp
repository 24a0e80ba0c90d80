// Life-like automata in 1 to 6 dimensions against the serial reference
// (life_reference.hpp: plain loops over a global vector), from a seeded
// random fill by global index. Each case runs on the automatic process grid
// and on slabs in the first and last dimension, with overlap on and off, on
// periodic, dead and mixed boundaries; every run must match the reference
// bit for bit, so every decomposition and every rank count (ctest runs this
// at 1, 2, 3, 4 and 8 ranks) gives the same field.
#include "life_reference.hpp"
#include "isostencil/kernels/life.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using isostencil::kernels::Life;
using isostencil::kernels::LifeOptions;
using isostencil::kernels::LifeRule;

template <int D>
std::string describe(const std::array<long, D>& extent, const std::array<bool, D>& periodic,
                     const std::array<int, D>& process_dims, bool overlap) {
  std::string text = std::to_string(D) + "-D extent";
  for (int j = 0; j < D; ++j)
    text += (j > 0 ? "x" : " ") + std::to_string(extent[j]);
  text += ", periodic";
  for (int j = 0; j < D; ++j)
    text += periodic[j] ? " T" : " F";
  text += ", process dims";
  for (int j = 0; j < D; ++j)
    text += " " + std::to_string(process_dims[j]);
  return text + (overlap ? ", overlap" : ", no overlap");
}

/// The automatic process grid, plus slabs along the first and the last
/// dimension where they fit (every subdomain needs a cell per dimension).
template <int D>
std::vector<std::array<int, D>> process_grids(const std::array<long, D>& extent) {
  const int ranks = iso_test::world_size();
  std::vector<std::array<int, D>> grids{std::array<int, D>{}};
  if (ranks == 1) return grids;
  for (int dim : {0, D - 1}) {
    if (extent[dim] < ranks) continue;
    std::array<int, D> slab;
    slab.fill(1);
    slab[dim] = ranks;
    bool repeated = false;
    for (const auto& grid : grids)
      repeated = repeated || grid == slab;
    if (!repeated) grids.push_back(slab);
  }
  return grids;
}

/// Collective: gathers the field and compares it with the reference on rank
/// 0; true on every rank iff equal.
template <int D>
bool matches(const Life<D>& life, const life_reference::World& world, std::string* difference) {
  const std::vector<std::uint8_t> got = life.gather(0);
  if (iso_test::world_rank() == 0) *difference = life_reference::first_difference(world, got);
  return iso_test::all_ranks(difference->empty());
}

template <int D>
void check_against_reference(const std::array<long, D>& extent, const std::array<bool, D>& periodic,
                             const std::string& rule_text, const life_reference::Rule& reference,
                             double density, int generations, std::uint64_t seed) {
  for (const std::array<int, D>& process_dims : process_grids<D>(extent)) {
    for (const bool overlap : {true, false}) {
      Life<D> life(MPI_COMM_WORLD, extent, periodic, LifeRule(rule_text, D),
                   LifeOptions{overlap, {}}, process_dims);
      std::array<int, D> actual_dims{};
      for (int j = 0; j < D; ++j)
        actual_dims[j] = life.grid().decomposition().process_dims()[j];
      SCOPED_TRACE(rule_text + " on " + describe<D>(extent, periodic, actual_dims, overlap));
      life.fill_random(seed, density);
      life_reference::World world =
          life_reference::make_world(std::vector<long>(extent.begin(), extent.end()),
                                     std::vector<bool>(periodic.begin(), periodic.end()));
      // The fill is a function of the global index alone.
      for (std::size_t g = 0; g < world.cells.size(); ++g)
        world.cells[g] = isostencil::kernels::life_random_cell(seed, g, density);
      std::string difference;
      ASSERT_TRUE(matches<D>(life, world, &difference)) << "initial fill: " << difference;
      const long initial_population = life_reference::population(world.cells);
      bool changed = false;
      for (int generation = 1; generation <= generations; ++generation) {
        const std::vector<std::uint8_t> before = world.cells;
        life.step();
        life_reference::step(world, reference);
        changed = changed || world.cells != before;
        ASSERT_TRUE(matches<D>(life, world, &difference))
            << "generation " << generation << ": " << difference;
      }
      EXPECT_EQ(life.live_cells(), life_reference::population(world.cells));
      // The case exercises the rule: cells were alive and the field moved.
      EXPECT_GT(initial_population, 0);
      EXPECT_TRUE(changed);
    }
  }
}

TEST(LifeReference, Conway2D) {
  const auto conway = life_reference::make_rule(2, {3}, {2, 3});
  for (const std::array<bool, 2> periodic :
       {std::array<bool, 2>{true, true}, {false, false}, {true, false}})
    check_against_reference<2>({23, 19}, periodic, "B3/S23", conway, 0.35, 12, 11);
  // HighLife, births at 6 too.
  check_against_reference<2>({16, 21}, {false, true}, "B36/S23",
                             life_reference::make_rule(2, {3, 6}, {2, 3}), 0.4, 8, 12);
}

TEST(LifeReference, ThreeD_B5S45) {
  const auto rule = life_reference::make_rule(3, {5}, {4, 5});
  for (const std::array<bool, 3> periodic :
       {std::array<bool, 3>{true, true, true}, {false, false, false}})
    check_against_reference<3>({10, 9, 11}, periodic, "B5/S45", rule, 0.3, 8, 21);
}

TEST(LifeReference, ThreeD_B6S567) {
  const auto rule = life_reference::make_rule(3, {6}, {5, 6, 7});
  for (const std::array<bool, 3> periodic :
       {std::array<bool, 3>{true, false, true}, {false, true, false}})
    check_against_reference<3>({9, 10, 8}, periodic, "B6/S567", rule, 0.3, 8, 22);
}

TEST(LifeReference, FourD) {
  // Counts 60..72 sit on both sides of the mask's 64-bit word boundary.
  auto rule = life_reference::make_range_rule(4, 12, 20, 10, 30);
  for (int c = 60; c <= 70; ++c)
    rule.birth[static_cast<std::size_t>(c)] = true;
  for (int c = 64; c <= 72; ++c)
    rule.survival[static_cast<std::size_t>(c)] = true;
  for (const std::array<bool, 4> periodic :
       {std::array<bool, 4>{true, true, true, true}, {false, false, false, false}})
    check_against_reference<4>({8, 6, 5, 7}, periodic, "B12-20,60-70/S10-30,64-72", rule, 0.2, 6,
                               31);
}

TEST(LifeReference, OneD) {
  // 1-D Moore: two neighbors.
  for (const std::array<bool, 1> periodic : {std::array<bool, 1>{true}, {false}})
    check_against_reference<1>({41}, periodic, "B1/S1", life_reference::make_rule(1, {1}, {1}), 0.4,
                               10, 41);
}

TEST(LifeReference, FiveD) {
  auto rule = life_reference::make_range_rule(5, 50, 75, 60, 65);
  for (int c = 120; c <= 200; ++c)
    rule.survival[static_cast<std::size_t>(c)] = true;
  for (const std::array<bool, 5> periodic :
       {std::array<bool, 5>{true, true, true, true, true}, {false, true, false, true, false}})
    check_against_reference<5>({6, 5, 4, 4, 4}, periodic, "B50-75/S60-65,120-200", rule, 0.3, 4,
                               51);
}

TEST(LifeReference, SixD) {
  auto rule = life_reference::make_range_rule(6, 60, 70, 60, 80);
  for (int c = 200; c <= 215; ++c)
    rule.birth[static_cast<std::size_t>(c)] = true;
  for (int c = 180; c <= 240; ++c)
    rule.survival[static_cast<std::size_t>(c)] = true;
  check_against_reference<6>({4, 4, 3, 3, 3, 3}, {true, true, true, true, true, true},
                             "B60-70,200-215/S60-80,180-240", rule, 0.28, 3, 61);
}

/// One run of Conway-like B3/S23 in D dimensions on a fixed process grid
/// against the reference (for the cases below that need a particular grid).
template <int D>
void check_one(const std::array<long, D>& extent, const std::array<bool, D>& periodic,
               const std::array<int, D>& process_dims, const LifeOptions& options) {
  Life<D> life(MPI_COMM_WORLD, extent, periodic, LifeRule("B3/S23", D), options, process_dims);
  std::array<int, D> actual_dims{};
  for (int j = 0; j < D; ++j)
    actual_dims[j] = life.grid().decomposition().process_dims()[j];
  SCOPED_TRACE(describe<D>(extent, periodic, actual_dims, options.overlap) + ", halo " +
               iso::to_string(options.halo.algorithm));
  const std::uint64_t seed = 3;
  life.fill_random(seed, 0.5);
  life_reference::World world =
      life_reference::make_world(std::vector<long>(extent.begin(), extent.end()),
                                 std::vector<bool>(periodic.begin(), periodic.end()));
  for (std::size_t g = 0; g < world.cells.size(); ++g)
    world.cells[g] = isostencil::kernels::life_random_cell(seed, g, 0.5);
  const auto rule = life_reference::make_rule(D, {3}, {2, 3});
  std::string difference;
  for (int generation = 1; generation <= 5; ++generation) {
    life.step();
    life_reference::step(world, rule);
    ASSERT_TRUE(matches<D>(life, world, &difference))
        << "generation " << generation << ": " << difference;
  }
}

TEST(LifeReference, TinyPeriodicExtents) {
  // Extents of 1 and 2 on a torus: a cell is its own neighbor, or a rank
  // both neighbors in a dimension; the ghosts must still be right.
  const int ranks = iso_test::world_size();
  const LifeOptions options{true, {}};
  check_one<2>({1, 16}, {true, true}, {1, 0}, options);
  check_one<2>({2, 16}, {true, true}, {1, 0}, options);
  check_one<2>({16, 3}, {true, true}, {0, 1}, options);
  check_one<3>({3, 2, 9}, {true, true, true}, {1, 1, 0}, options);
  if (ranks % 2 == 0) {
    check_one<2>({2, 16}, {true, true}, {2, 0}, options);
    check_one<2>({2, 16}, {false, true}, {2, 0}, options);
    check_one<3>({2, 2, 9}, {true, true, true}, {2, 1, 0}, options);
  }
  if (ranks % 4 == 0) check_one<3>({2, 2, 9}, {true, true, true}, {2, 2, 0}, options);
}

TEST(LifeReference, EveryHaloAlgorithm) {
  for (const iso::Algorithm algorithm :
       {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct, iso::Algorithm::mpi,
        iso::Algorithm::automatic}) {
    for (const bool overlap : {true, false}) {
      LifeOptions options;
      options.overlap = overlap;
      options.halo.algorithm = algorithm;
      check_one<2>({13, 11}, {true, false}, {}, options);
      check_one<3>({7, 6, 8}, {true, true, false}, {}, options);
    }
  }
}

TEST(LifeReference, SetGlobalLoadsAnyField) {
  // An arbitrary global field (std::mt19937_64), scattered by set_global.
  constexpr long rows = 17, columns = 21;
  const std::vector<std::uint8_t> cells = life_reference::random_cells(rows * columns, 5, 0.4);
  const auto conway = life_reference::make_rule(2, {3}, {2, 3});
  for (const bool overlap : {true, false}) {
    Life<2> life(MPI_COMM_WORLD, {rows, columns}, {true, false}, LifeRule::conway(),
                 LifeOptions{overlap, {}});
    life.set_global(cells);
    auto world = life_reference::make_world({rows, columns}, {true, false});
    world.cells = cells;
    std::string difference;
    ASSERT_TRUE(matches<2>(life, world, &difference)) << difference;
    life.step(10);
    life_reference::run(world, conway, 10);
    EXPECT_TRUE(matches<2>(life, world, &difference)) << difference;
  }
}

}  // namespace
