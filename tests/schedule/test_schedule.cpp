// Independent tests of the pure schedule computation (docs/design/schedules.md and docs/design/mesh.md),
// written from the spec. No MPI is used here. The checks they share: schedule_checks.cpp;
// bad input and the mutation check: schedule_mutation_test.cpp.
#include "schedule_checks.hpp"


#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace schedtest;


// ===========================================================================
// 1. Counts of docs/design/schedules.md#figures

struct TableRow {
  int d, r;
  long s, rounds, hop, direct, gather;
};
const TableRow kTable[] = {
    {2, 1, 8, 4, 12, 12, 8},       {2, 3, 48, 12, 168, 84, 48},        {3, 1, 26, 6, 54, 54, 26},
    {3, 2, 124, 12, 450, 300, 124}, {3, 3, 342, 18, 1764, 882, 342},  {4, 1, 80, 8, 216, 216, 80},
    {5, 1, 242, 10, 810, 810, 242}, {5, 3, 16806, 30, 144060, 72030, 16806},
};

TEST(ScheduleCounts, TableRowsMatchClosedFormulas) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const long r = row.r, d = row.d;
    EXPECT_EQ(row.s, ipow(2 * r + 1, row.d) - 1);
    EXPECT_EQ(row.rounds, 2 * r * d);
    EXPECT_EQ(row.hop, d * r * (r + 1) * ipow(2 * r + 1, row.d - 1));
    EXPECT_EQ(row.direct, 2 * r * d * ipow(2 * r + 1, row.d - 1));
    EXPECT_EQ(row.gather, row.s);
  }
}

// One process's schedule for every row of the table, every algorithm.
TEST(ScheduleCounts, TableBuildSchedule) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("Moore d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const OffsetList v = OffsetList::moore(row.d, row.r);
    ASSERT_EQ(v.size(), row.s);
    const CartGeometry grid = make_torus(std::vector<int>(row.d, 3));
    const std::vector<int> coords(row.d, 1);
    struct Want {
      Algorithm a;
      Collective c;
      long rounds, volume;
    };
    const Want wants[] = {
        {Algorithm::torus, Collective::alltoall, row.rounds, row.hop},
        {Algorithm::direct, Collective::alltoall, row.rounds, row.direct},
        {Algorithm::torus, Collective::allgather, row.rounds, row.gather},
        {Algorithm::direct, Collective::allgather, row.rounds, row.gather},
        {Algorithm::linear, Collective::alltoall, row.s, row.s},
        {Algorithm::linear, Collective::allgather, row.s, row.s},
    };
    for (const Want& w : wants) {
      SCOPED_TRACE(std::string(iso::to_string(w.a)) + "/" + iso::to_string(w.c));
      const Schedule sc = iso::build_schedule(v, grid, coords.data(), w.a, w.c);
      EXPECT_EQ(sc.num_global_rounds, w.rounds);
      EXPECT_EQ(static_cast<long>(sc.rounds.size()), w.rounds);
      EXPECT_EQ(sc.messages_sent(), w.rounds);
      EXPECT_EQ(sc.blocks_sent(), w.volume);
      EXPECT_EQ(schedtest::count_messages_sent(sc), w.rounds);
      EXPECT_EQ(schedtest::count_blocks_sent(sc), w.volume);
      EXPECT_EQ(sc.num_blocks, row.s);
      EXPECT_EQ(static_cast<long>(iso::build_round_list(v, w.a).shifts.size()), w.rounds);
      if (w.c == Collective::allgather && w.a != Algorithm::linear) {
        // docs/design/schedules.md#allgather: for Moore neighborhoods every trie node is owned: no temporary buffer.
        EXPECT_EQ(schedtest::count_temp_slots(sc), 0);
        EXPECT_TRUE(sc.copies.empty());
      }
      if (w.a != Algorithm::linear) {
        EXPECT_EQ(iso::build_round_list(v, w.a).shifts, schedtest::ref::round_list(v, w.a));
      }
    }
  }
}

// schedule_figures on periodic grids for every row (all processes have the same figures).
TEST(ScheduleCounts, TableScheduleFigures) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("Moore d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const OffsetList v = OffsetList::moore(row.d, row.r);
    // Small periodic grids; the 16806-offset row on a 2^5 torus keeps run time low.
    const CartGeometry grid = make_torus(std::vector<int>(row.d, row.s > 1000 ? 2 : 3));
    const long P = grid.num_procs();
    for (Algorithm a : kAlgorithms) {
      for (Collective c : kCollectives) {
        SCOPED_TRACE(std::string(iso::to_string(a)) + "/" + iso::to_string(c));
        if (row.s > 1000 && a == Algorithm::linear) continue;  // s rounds, nothing to learn at this size
        // Processor time: wall time would also count whatever else runs on a loaded machine.
        const std::clock_t t0 = std::clock();
        const iso::ScheduleFigures f = iso::schedule_figures(v, grid, a, c);
        const double seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
        EXPECT_LT(seconds, 10.0) << "schedule_figures is slow";
        const long rounds = a == Algorithm::linear ? row.s : row.rounds;
        const long volume = a == Algorithm::linear          ? row.s
                            : c == Collective::allgather    ? row.gather
                            : a == Algorithm::torus         ? row.hop
                                                            : row.direct;
        EXPECT_EQ(f.rounds, rounds);
        EXPECT_EQ(f.messages, rounds);
        EXPECT_EQ(f.volume, volume);
        EXPECT_EQ(f.messages_total, rounds * P);
        EXPECT_EQ(f.volume_total, volume * P);
        EXPECT_EQ(f.local_copies, 0);
        if (c == Collective::allgather && a != Algorithm::linear) {
          EXPECT_EQ(f.temp_blocks, 0);
        }
      }
    }
  }
}

// The closed formulas beyond the table's rows (d = 1..4, r = 1..3).
TEST(ScheduleCounts, ClosedFormulasForMooreNeighborhoods) {
  for (int d = 1; d <= 4; ++d) {
    for (int r = 1; r <= 3; ++r) {
      SCOPED_TRACE("Moore d=" + std::to_string(d) + " r=" + std::to_string(r));
      const OffsetList v = OffsetList::moore(d, r);
      const CartGeometry grid = make_torus(std::vector<int>(d, 2));
      const long s = ipow(2 * r + 1, d) - 1;
      const long rounds = 2L * r * d;
      EXPECT_EQ(v.size(), s);
      auto f = iso::schedule_figures(v, grid, Algorithm::torus, Collective::alltoall);
      EXPECT_EQ(f.rounds, rounds);
      EXPECT_EQ(f.messages, rounds);
      EXPECT_EQ(f.volume, 1L * d * r * (r + 1) * ipow(2 * r + 1, d - 1));
      f = iso::schedule_figures(v, grid, Algorithm::direct, Collective::alltoall);
      EXPECT_EQ(f.rounds, rounds);
      EXPECT_EQ(f.messages, rounds);
      EXPECT_EQ(f.volume, 2L * r * d * ipow(2 * r + 1, d - 1));
      for (Algorithm a : {Algorithm::torus, Algorithm::direct}) {
        f = iso::schedule_figures(v, grid, a, Collective::allgather);
        EXPECT_EQ(f.rounds, rounds);
        EXPECT_EQ(f.volume, s);
        EXPECT_EQ(f.temp_blocks, 0);
      }
      for (Collective c : kCollectives) {
        f = iso::schedule_figures(v, grid, Algorithm::linear, c);
        EXPECT_EQ(f.rounds, s);
        EXPECT_EQ(f.messages, s);
        EXPECT_EQ(f.volume, s);
      }
    }
  }
}

TEST(ScheduleCounts, LinearIsOneRoundPerNonzeroOffset) {
  // Repeats count, zero vectors are local copies.
  const OffsetList v(2, {1, 0, 0, 0, 1, 0, -2, 3, 0, 0, 5, -5});
  const CartGeometry grid = make_torus({3, 4});
  const std::vector<int> coords{2, 1};
  for (Collective c : kCollectives) {
    SCOPED_TRACE(iso::to_string(c));
    const Schedule sc = iso::build_schedule(v, grid, coords.data(), Algorithm::linear, c);
    EXPECT_EQ(sc.num_global_rounds, 4);
    EXPECT_EQ(sc.messages_sent(), 4);
    EXPECT_EQ(sc.blocks_sent(), 4);
    EXPECT_EQ(sc.copies.size(), 2u);
    const iso::RoundList list = iso::build_round_list(v, Algorithm::linear);
    EXPECT_EQ(list.shifts, (std::vector<std::vector<int>>{{1, 0}, {1, 0}, {-2, 3}, {5, -5}}));
  }
}

TEST(ScheduleCounts, EmptyNeighborhood) {
  const OffsetList v(2, {});
  const CartGeometry grid = make_torus({2, 2});
  const std::vector<int> coords{0, 0};
  for (Algorithm a : kScheduled)
    for (Collective c : kCollectives) {
      SCOPED_TRACE(describe(v, grid, a, c));
      Schedule sc;
      ASSERT_NO_THROW(sc = iso::build_schedule(v, grid, coords.data(), a, c));
      EXPECT_EQ(sc.num_global_rounds, 0);
      EXPECT_TRUE(sc.rounds.empty());
      EXPECT_TRUE(sc.copies.empty());
    }
}

TEST(ScheduleCounts, AlgorithmNamesRoundTrip) {
  EXPECT_EQ(iso::parse_algorithm("linear"), Algorithm::linear);
  EXPECT_EQ(iso::parse_algorithm("straightforward"), Algorithm::linear);
  EXPECT_EQ(iso::parse_algorithm("torus"), Algorithm::torus);
  EXPECT_EQ(iso::parse_algorithm("hop"), Algorithm::torus);
  EXPECT_EQ(iso::parse_algorithm("direct"), Algorithm::direct);
  EXPECT_EQ(iso::parse_algorithm("torus-direct"), Algorithm::direct);
  EXPECT_EQ(iso::parse_algorithm("mpi"), Algorithm::mpi);
  EXPECT_EQ(iso::parse_algorithm("native"), Algorithm::mpi);
  EXPECT_EQ(iso::parse_algorithm("auto"), Algorithm::automatic);
  EXPECT_EQ(iso::parse_algorithm("basis"), Algorithm::basis);
  EXPECT_EQ(iso::parse_algorithm("additive"), Algorithm::basis);
  EXPECT_EQ(iso::parse_algorithm("tune"), Algorithm::tune);
  EXPECT_EQ(iso::parse_algorithm("autotune"), Algorithm::tune);
  for (Algorithm a : {Algorithm::linear, Algorithm::torus, Algorithm::direct, Algorithm::basis, Algorithm::mpi,
                      Algorithm::automatic, Algorithm::tune})
    EXPECT_EQ(iso::parse_algorithm(iso::to_string(a)), a) << iso::to_string(a);
  EXPECT_STREQ(iso::to_string(Collective::alltoall), "alltoall");
  EXPECT_STREQ(iso::to_string(Collective::allgather), "allgather");
}

// The lists help texts and errors print, from the one table.
TEST(ScheduleCounts, AlgorithmNamesFollowTheTable) {
  EXPECT_EQ(iso::algorithm_names(), "linear, torus, direct, basis, mpi, auto, tune");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::auto_first), "auto, linear, torus, direct, basis, mpi, tune");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::scheduled, ", ", " and "), "linear, torus, direct and basis");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::fixed, ", ", " or "), "linear, torus, direct, basis or mpi");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::scheduled, "|"), "linear|torus|direct|basis");
}

// ===========================================================================
// 1b. The basis algorithm (docs/design/schedules.md#basis)

namespace {
OffsetList shales(int d, std::vector<int> radii) {
  OffsetList out(d, {});
  const OffsetList unit = OffsetList::moore(d, 1);
  for (int r : radii)
    for (int i = 0; i < unit.size(); ++i) {
      std::vector<int> x(unit[i], unit[i] + d);
      for (int& c : x) c *= r;
      out.push_back(x);
    }
  return out;
}
}  // namespace

TEST(ScheduleBasis, KnownCases) {
  // 1-D {1..7}: {1,2,4}, 3 rounds against direct's 7.
  const OffsetList seven = OffsetList::parse("1;2;3;4;5;6;7");
  iso::AdditiveBasis basis = iso::additive_basis(seven);
  EXPECT_EQ(basis.vectors, (std::vector<std::vector<int>>{{1}, {2}, {4}}));
  EXPECT_TRUE(basis.minimal);
  EXPECT_EQ(iso::build_round_list(seven, Algorithm::basis).shifts.size(), 3u);
  EXPECT_EQ(iso::build_round_list(seven, Algorithm::direct).shifts.size(), 7u);
  EXPECT_EQ(basis.terms[6], (std::vector<int>{0, 1, 2}));  // 7 = 1 + 2 + 4
  // {1..8}: 4 rounds (the counting bound: 8 offsets need 2^k - 1 >= 8).
  basis = iso::additive_basis(OffsetList::parse("1;2;3;4;5;6;7;8"));
  EXPECT_EQ(basis.vectors.size(), 4u);
  EXPECT_TRUE(basis.minimal);
  // {1,2,3}: {1,2}.
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("1;2;3")).vectors, (std::vector<std::vector<int>>{{1}, {2}}));
  // Shales 3:3,7 and Moore 3:3 take fewer rounds than direct on a torus.
  for (const OffsetList& v : {shales(3, {3, 7}), OffsetList::moore(3, 3), OffsetList::moore(3, 2)}) {
    const auto b = iso::build_round_list(v, Algorithm::basis).shifts.size();
    const auto direct = iso::build_round_list(v, Algorithm::direct).shifts.size();
    EXPECT_LT(b, direct) << v.to_string();
  }
  EXPECT_EQ(iso::build_round_list(OffsetList::moore(3, 3), Algorithm::basis).shifts.size(), 9u);
  EXPECT_TRUE(iso::additive_basis(OffsetList::moore(3, 3)).minimal);  // 2^9 - 1 >= 342
  // A single far offset is its own basis vector; a pair along a diagonal merges.
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("5,-3")).vectors, (std::vector<std::vector<int>>{{5, -3}}));
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("1,1;2,2")).vectors.size(), 2u);
}

TEST(ScheduleBasis, NeverMoreRoundsThanDirectOrLinear) {
  // Moore neighborhoods d = 1..4, r = 1..3, torus and mesh; the contract on each.
  for (int d = 1; d <= 4; ++d)
    for (int r = 1; r <= 3; ++r)
      for (bool periodic : {true, false}) {
        const OffsetList v = OffsetList::moore(d, r);
        SCOPED_TRACE("Moore d=" + std::to_string(d) + " r=" + std::to_string(r) + (periodic ? " torus" : " mesh"));
        const std::vector<bool> flags(d, periodic);
        EXPECT_EQ(basis_violation(v, flags), "");
        const auto basis = iso::additive_basis(v, flags);
        EXPECT_LE(static_cast<long>(basis.vectors.size()), direct_rounds(v));
        // Radius 1: +-1 in every dimension cannot do with fewer than direct's 2d here.
        if (r == 1) {
          EXPECT_EQ(static_cast<long>(basis.vectors.size()), 2L * d);
        }
        // A torus allows signed terms: 3 vectors cover -3..3 in one dimension.
        if (periodic && r >= 2) {
          EXPECT_EQ(static_cast<long>(basis.vectors.size()), 3L * d);
        }
      }
}

TEST(ScheduleBasis, MeshPathsStayInside) {
  // docs/design/mesh.md#the-basis-on-a-mesh: on a mesh every term of an offset
  // has its coordinates' signs, so the torus basis {-3, 1, 2} is not used.
  const OffsetList v = OffsetList::moore(1, 3);
  const auto torus = iso::additive_basis(v, {true});
  const auto mesh = iso::additive_basis(v, {false});
  EXPECT_EQ(torus.vectors.size(), 3u);
  EXPECT_EQ(mesh.vectors.size(), 4u);
  EXPECT_EQ(basis_violation(v, {false}), "");
  for (const CartGeometry& grid : {make_mesh({4}), make_mesh({7}), make_mesh({2})})
    for (Collective k : kCollectives) {
      const auto sim = simulate_impl(v, grid, Algorithm::basis, k);
      EXPECT_TRUE(sim.ok()) << describe(v, grid, Algorithm::basis, k) << "\n" << sim.summary();
    }
  // The torus basis would leave a mesh: in {-3, 1, 2}, -1 = -3 + 2 passes through -3.
  bool leaves = false;
  for (int i = 0; i < v.size(); ++i) {
    int partial = 0;
    for (int b : torus.terms[i]) {
      partial += torus.vectors[b][0];
      leaves |= partial < std::min(0, v[i][0]) || partial > std::max(0, v[i][0]);
    }
  }
  EXPECT_TRUE(leaves) << "the torus basis was expected to need the wrap-around";
}

TEST(ScheduleBasis, FiguresOfTheTable) {
  // Allgather shares prefixes: never more volume than alltoall, at most one
  // trie node per path prefix.
  for (int d = 1; d <= 3; ++d)
    for (int r = 1; r <= 3; ++r) {
      const OffsetList v = OffsetList::moore(d, r);
      const CartGeometry grid = make_torus(std::vector<int>(d, 3));
      const auto a2a = iso::schedule_figures(v, grid, Algorithm::basis, Collective::alltoall);
      const auto a2g = iso::schedule_figures(v, grid, Algorithm::basis, Collective::allgather);
      const auto basis = iso::additive_basis(v, grid.periodic);
      EXPECT_EQ(a2a.rounds, static_cast<int>(basis.vectors.size()));
      EXPECT_EQ(a2a.volume, term_volume(basis));
      EXPECT_EQ(a2g.volume, schedtest::ref::trie_nodes(v, Algorithm::basis));
      EXPECT_LE(a2g.volume, a2a.volume);
      EXPECT_GE(a2g.volume, v.size());
    }
}

// ===========================================================================
// 2. The simulator on specific cases

TEST(ScheduleSimulator, ReferenceSchedulesPass) {
  // Sanity of the test machinery itself: the spec's own schedules pass.
  std::mt19937_64 rng(base_seed() + 7);
  for (int n = 0; n < 300; ++n) {
    const Case c = random_case(rng, 100);
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto all = schedtest::ref::build_all(c.offsets, c.grid, a, k);
        const auto sim = schedtest::simulate(c.offsets, c.grid, k, all);
        ASSERT_TRUE(sim.ok()) << "reference case " << n << " " << describe(c.offsets, c.grid, a, k) << "\n"
                              << sim.summary();
        ASSERT_TRUE(sim.notes.empty()) << sim.notes.front();
      }
  }
}

TEST(ScheduleSimulator, SharedPrefixAllgatherCase) {
  // docs/design/schedules.md#allgather: the published code loses data for this neighborhood.
  const OffsetList v(4, {1, -1, 0, 0, 1, 0, 0, 1});
  const std::vector<CartGeometry> grids = {
      make_torus({2, 2, 2, 2}), make_torus({3, 3, 3, 3}), make_mesh({2, 2, 2, 2}), make_mesh({3, 2, 2, 3}),
      make_grid({2, 3, 1, 2}, {true, false, true, false}), make_torus({1, 1, 1, 1}), make_torus({4, 1, 2, 5})};
  for (const CartGeometry& grid : grids)
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto sim = simulate_impl(v, grid, a, k);
        EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
      }
  // Volume on the torus: the trie has nodes (1,0,0,0), (1,-1,0,0), (1,0,0,1).
  for (Algorithm a : {Algorithm::torus, Algorithm::direct}) {
    const auto f = iso::schedule_figures(v, make_torus({2, 2, 2, 2}), a, Collective::allgather);
    EXPECT_EQ(f.volume, 3) << iso::to_string(a);
    EXPECT_EQ(f.rounds, 3) << iso::to_string(a);
  }
}

TEST(ScheduleSimulator, MooreNeighborhoodsOnMeshesAndTori) {
  struct Item {
    int d, r;
    CartGeometry grid;
  };
  const std::vector<Item> items = {
      {1, 1, make_mesh({5})},
      {1, 3, make_mesh({4})},
      {2, 1, make_mesh({3, 3})},
      {2, 1, make_mesh({4, 5})},
      {2, 2, make_mesh({2, 3})},
      {2, 2, make_grid({3, 4}, {true, false})},
      {2, 1, make_torus({1, 2})},
      {2, 3, make_torus({2, 3})},
      {3, 1, make_mesh({3, 3, 3})},
      {3, 1, make_mesh({2, 2, 2})},
      {3, 1, make_grid({3, 2, 4}, {false, true, false})},
      {3, 2, make_mesh({4, 4, 3})},
      {3, 1, make_torus({2, 2, 2})},
      {3, 1, make_torus({3, 3, 3})},
      {4, 1, make_mesh({2, 3, 2, 2})},
      {4, 1, make_torus({2, 2, 2, 2})},
  };
  for (const Item& item : items)
    for (bool self : {false, true}) {
      const OffsetList v = OffsetList::moore(item.d, item.r, self);
      for (Algorithm a : kScheduled)
        for (Collective k : kCollectives) {
          const auto sim = simulate_impl(v, item.grid, a, k);
          EXPECT_TRUE(sim.ok()) << describe(v, item.grid, a, k) << "\n" << sim.summary();
        }
    }
}

TEST(ScheduleSimulator, TinyToriWithSelfMessagesAndRepeats) {
  // Offsets larger than the grid, repeats and zeros, several rounds with one partner.
  const std::vector<OffsetList> lists = {
      OffsetList(1, {1, 2, 3, -1, -2, 0, 2, 2}),
      OffsetList(2, {2, 0, 0, 2, 2, 2, -2, -2, 0, 0, 4, 1, 1, 4}),
      OffsetList(2, {1, 1, 1, 1, 0, 0, 0, 0, -1, 1}),
      OffsetList(3, {1, -1, 0, 0, -1, 1, 1, 0, 1, 2, 2, 2}),
  };
  for (const OffsetList& v : lists) {
    const int d = v.dims();
    const std::vector<CartGeometry> grids = {make_torus(std::vector<int>(d, 1)), make_torus(std::vector<int>(d, 2)),
                                             make_mesh(std::vector<int>(d, 1)), make_mesh(std::vector<int>(d, 2))};
    for (const CartGeometry& grid : grids)
      for (Algorithm a : kScheduled)
        for (Collective k : kCollectives) {
          const auto sim = simulate_impl(v, grid, a, k);
          EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
        }
  }
}

// Every pair (and some triples) of 2-D offsets in [-2,2]^2 for allgather, on a
// few grids: shared prefixes in every configuration.
TEST(ScheduleSimulator, ExhaustivePairsIn2D) {
  const std::vector<CartGeometry> grids = {make_torus({3, 3}), make_mesh({3, 4}), make_grid({2, 3}, {false, true})};
  std::vector<std::vector<int>> points;
  for (int a = -2; a <= 2; ++a)
    for (int b = -2; b <= 2; ++b) points.push_back({a, b});
  Findings findings;
  for (const CartGeometry& grid : grids)
    for (std::size_t p = 0; p < points.size(); ++p)
      for (std::size_t q = 0; q < points.size(); ++q) {
        const OffsetList v(2, {points[p][0], points[p][1], points[q][0], points[q][1]});
        for (Algorithm a : kScheduled)
          for (Collective k : kCollectives) {
            const auto sim = simulate_impl(v, grid, a, k);
            if (!sim.ok()) findings.add("simulator", describe(v, grid, a, k) + "\n" + sim.summary(4));
          }
      }
  findings.report();
}

TEST(ScheduleSimulator, HigherDimensions) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList::moore(5, 1), make_mesh({2, 2, 2, 2, 2})},
      {OffsetList::moore(5, 1), make_grid({2, 1, 3, 2, 1}, {true, false, true, false, true})},
      {OffsetList(5, {1, -1, 0, 0, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, -1, 0, 0, 2}),
       make_grid({2, 2, 2, 2, 3}, {false, true, false, true, false})},
      {OffsetList(6, {1, 0, -1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, -1}), make_mesh({2, 2, 2, 2, 2, 2})},
  };
  for (const auto& [v, grid] : items)
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto sim = simulate_impl(v, grid, a, k);
        EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
      }
}

// ===========================================================================
// 3. Random property test

TEST(ScheduleSimulator, RandomNeighborhoods) {
  const std::uint64_t seed = base_seed();
  const int cases = std::getenv("ISO_SCHEDULE_TEST_CASES") ? std::atoi(std::getenv("ISO_SCHEDULE_TEST_CASES")) : 2500;
  Findings findings;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < cases; ++n) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(n));
    const Case c = random_case(rng, 128);
    const std::string tag = "[seed " + std::to_string(seed) + " case " + std::to_string(n) + "]";
    check_all_algorithms(c, tag, findings, n % 5 == 0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("RandomNeighborhoods: %d cases, seed %llu, %.2f s\n", cases, static_cast<unsigned long long>(seed),
              seconds);
  findings.report();
}

// ===========================================================================
// 4. Figures on meshes

TEST(ScheduleFigures, MeshTotalsAreSumsOverProcesses) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList::moore(2, 1), make_mesh({3, 3})},
      {OffsetList::moore(2, 2), make_mesh({4, 5})},
      {OffsetList::moore(3, 1), make_mesh({3, 3, 3})},
      {OffsetList::moore(3, 1), make_grid({3, 4, 2}, {true, false, false})},
      {OffsetList(4, {1, -1, 0, 0, 1, 0, 0, 1}), make_mesh({2, 2, 2, 2})},
      {OffsetList(2, {0, 0, 3, 1, 3, 1, -1, 2, 1, 0}), make_mesh({4, 3})},
  };
  Findings findings;
  for (const auto& [v, grid] : items) check_all_algorithms(Case{v, grid}, "[mesh]", findings, true);
  findings.report();
}

TEST(ScheduleFigures, CornersSendLessThanInterior) {
  for (int d : {2, 3}) {
    const OffsetList v = OffsetList::moore(d, 1);
    const CartGeometry grid = make_mesh(std::vector<int>(d, 3));
    const std::vector<int> corner(d, 0), center(d, 1);
    for (Algorithm a : kScheduled)
      for (Collective c : kCollectives) {
        SCOPED_TRACE(describe(v, grid, a, c));
        const Schedule sc_corner = iso::build_schedule(v, grid, corner.data(), a, c);
        const Schedule sc_center = iso::build_schedule(v, grid, center.data(), a, c);
        EXPECT_LT(sc_corner.messages_sent(), sc_center.messages_sent());
        EXPECT_LT(sc_corner.blocks_sent(), sc_center.blocks_sent());
        const iso::ScheduleFigures f = iso::schedule_figures(v, grid, a, c);
        const iso::ScheduleFigures ft = iso::schedule_figures(v, make_torus(std::vector<int>(d, 3)), a, c);
        EXPECT_EQ(f.messages, sc_center.messages_sent());
        EXPECT_EQ(f.volume, sc_center.blocks_sent());
        EXPECT_EQ(f.rounds, ft.rounds);
        EXPECT_LT(f.messages_total, ft.messages_total);
        EXPECT_LT(f.volume_total, ft.volume_total);
        // Linear on a mesh: one message per existing neighbor.
        if (a == Algorithm::linear) {
          EXPECT_EQ(sc_corner.messages_sent(), ipow(2, d) - 1);
          EXPECT_EQ(sc_center.messages_sent(), ipow(3, d) - 1);
        }
      }
  }
}

// ===========================================================================
// 5. Bad input
