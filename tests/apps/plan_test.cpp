// The plan library: the Moore table of docs/design/schedules.md#figures row by row, mesh figures
// against an independent brute-force count, and the text/JSON reports.
#include "isostencil/plan.hpp"
#include "isostencil/spec.hpp"

#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

using iso::Algorithm;
using iso::Collective;
using isostencil::compute_plan;
using isostencil::Plan;

iso::CartGeometry torus(int dims, int size = 3) {
  return iso::CartGeometry{std::vector<int>(static_cast<std::size_t>(dims), size),
                           std::vector<bool>(static_cast<std::size_t>(dims), true)};
}

long ipow(long base, int exponent) {
  long result = 1;
  for (int k = 0; k < exponent; ++k)
    result *= base;
  return result;
}

// docs/design/schedules.md#figures, the Moore table (self excluded).
struct TableRow {
  int d, r;
  long s, rounds, volume_hop, volume_direct, volume_allgather;
};
const TableRow reference_table[] = {
    {2, 1, 8, 4, 12, 12, 8},         {2, 3, 48, 12, 168, 84, 48},
    {3, 1, 26, 6, 54, 54, 26},       {3, 2, 124, 12, 450, 300, 124},
    {3, 3, 342, 18, 1764, 882, 342}, {4, 1, 80, 8, 216, 216, 80},
    {5, 1, 242, 10, 810, 810, 242},  {5, 3, 16806, 30, 144060, 72030, 16806},
};

class ReferenceTable : public ::testing::TestWithParam<TableRow> {};

TEST_P(ReferenceTable, PlanReproducesRow) {
  const TableRow row = GetParam();
  const iso::OffsetList offsets = iso::OffsetList::moore(row.d, row.r);
  const iso::CartGeometry grid = torus(row.d);  // `isostencil plan`'s default grid
  const Plan plan = compute_plan("Moore", offsets, grid);
  ASSERT_EQ(offsets.size(), row.s);
  ASSERT_EQ(plan.algorithms.size(), 4u);  // linear, torus, direct, basis

  // The table's general formulas agree with the table itself.
  EXPECT_EQ(row.volume_hop, row.d * row.r * (row.r + 1) * ipow(2 * row.r + 1, row.d - 1));
  EXPECT_EQ(row.volume_direct, 2L * row.r * row.d * ipow(2 * row.r + 1, row.d - 1));
  EXPECT_EQ(row.rounds, 2L * row.r * row.d);

  const auto& hop = plan.at(Algorithm::torus);
  const auto& direct = plan.at(Algorithm::direct);
  const auto& linear = plan.at(Algorithm::linear);
  for (const auto* algorithm : {&hop, &direct}) {
    SCOPED_TRACE(iso::to_string(algorithm->algorithm));
    for (Collective collective : {Collective::alltoall, Collective::allgather}) {
      SCOPED_TRACE(iso::to_string(collective));
      const auto& f = algorithm->figures(collective);
      EXPECT_EQ(f.rounds, row.rounds);
      EXPECT_EQ(f.messages, row.rounds);  // messages = rounds on a torus
      EXPECT_EQ(f.messages_total, row.rounds * grid.num_procs());
      EXPECT_EQ(f.volume_total, f.volume * grid.num_procs());
      EXPECT_EQ(f.local_copies, 0);
    }
    // Every trie node of a Moore neighborhood is owned: s blocks, no temporaries.
    EXPECT_EQ(algorithm->allgather.volume, row.volume_allgather);
    EXPECT_EQ(algorithm->allgather.temp_blocks, 0);
  }
  EXPECT_EQ(hop.alltoall.volume, row.volume_hop);
  EXPECT_EQ(direct.alltoall.volume, row.volume_direct);
  for (Collective collective : {Collective::alltoall, Collective::allgather}) {
    const auto& f = linear.figures(collective);
    EXPECT_EQ(f.rounds, row.s);
    EXPECT_EQ(f.messages, row.s);
    EXPECT_EQ(f.volume, row.s);
    EXPECT_EQ(f.temp_blocks, 0);
  }

  const auto json = isostencil::plan_to_json(plan);
  EXPECT_EQ(json["neighbors"], row.s);
  EXPECT_EQ(json["algorithms"]["torus"]["alltoall"]["rounds"], row.rounds);
  EXPECT_EQ(json["algorithms"]["torus"]["alltoall"]["volume"], row.volume_hop);
  EXPECT_EQ(json["algorithms"]["direct"]["alltoall"]["volume"], row.volume_direct);
  EXPECT_EQ(json["algorithms"]["torus"]["allgather"]["volume"], row.volume_allgather);
  EXPECT_EQ(json["algorithms"]["direct"]["allgather"]["messages"], row.rounds);
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsMd32, ReferenceTable, ::testing::ValuesIn(reference_table),
                         [](const ::testing::TestParamInfo<TableRow>& row_info) {
                           return "d" + std::to_string(row_info.param.d) + "r" +
                                  std::to_string(row_info.param.r);
                         });

// The figures are grid-independent on a torus, including grids smaller than
// the offsets (3:3 on 2x2x2: several rounds go to one partner, or to self).
TEST(Plan, TorusFiguresDoNotDependOnGridSize) {
  const auto offsets = iso::OffsetList::moore(3, 2);
  const Plan reference = compute_plan("Moore", offsets, torus(3, 5));
  for (int size : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE(size);
    const Plan plan = compute_plan("Moore", offsets, torus(3, size));
    for (Algorithm algorithm : isostencil::plan_algorithms())
      for (Collective collective : isostencil::plan_collectives()) {
        const auto& a = plan.at(algorithm).figures(collective);
        const auto& b = reference.at(algorithm).figures(collective);
        EXPECT_EQ(a.rounds, b.rounds);
        EXPECT_EQ(a.messages, b.messages);
        EXPECT_EQ(a.volume, b.volume);
      }
  }
}

// --- An independent count of the alltoall figures (docs/design/schedules.md#round-lists,
// docs/design/mesh.md#filtering-a-schedule): walk every block of every origin along its path; an entry exists iff
// the origin and the final target exist.
struct Move {
  int round;
  std::vector<int> step;
};

std::vector<Move> block_path(const int* v, int dims, Algorithm algorithm, int block,
                             const iso::OffsetList& offsets, const std::vector<bool>& periodic) {
  std::vector<Move> path;
  if (algorithm == Algorithm::basis) {
    // Along the terms, one round per basis vector.
    const iso::AdditiveBasis basis = iso::additive_basis(offsets, periodic);
    for (int b : basis.terms[static_cast<std::size_t>(block)]) path.push_back({b, basis.vectors[static_cast<std::size_t>(b)]});
    return path;
  }
  if (algorithm == Algorithm::linear) {
    bool zero = std::all_of(v, v + dims, [](int c) { return c == 0; });
    if (!zero) path.push_back({block, std::vector<int>(v, v + dims)});
    return path;
  }
  // Global round numbering per dimension, in the documented order.
  int round_base = 0;
  for (int j = 0; j < dims; ++j) {
    if (algorithm == Algorithm::torus) {
      int plus = 0, minus = 0;
      for (int i = 0; i < offsets.size(); ++i) {
        plus = std::max(plus, offsets[i][j]);
        minus = std::max(minus, -offsets[i][j]);
      }
      std::vector<int> step(static_cast<std::size_t>(dims), 0);
      for (int k = 1; k <= v[j]; ++k) {
        step[static_cast<std::size_t>(j)] = 1;
        path.push_back({round_base + k - 1, step});
      }
      for (int k = 1; k <= -v[j]; ++k) {
        step[static_cast<std::size_t>(j)] = -1;
        path.push_back({round_base + plus + k - 1, step});
      }
      round_base += plus + minus;
    } else {
      std::set<int> values;
      for (int i = 0; i < offsets.size(); ++i)
        if (offsets[i][j] != 0) values.insert(offsets[i][j]);
      if (v[j] != 0) {
        std::vector<int> step(static_cast<std::size_t>(dims), 0);
        step[static_cast<std::size_t>(j)] = v[j];
        const int position = static_cast<int>(std::distance(values.begin(), values.find(v[j])));
        path.push_back({round_base + position, step});
      }
      round_base += static_cast<int>(values.size());
    }
  }
  return path;
}

iso::ScheduleFigures brute_force_alltoall(const iso::OffsetList& offsets,
                                          const iso::CartGeometry& grid, Algorithm algorithm) {
  const int dims = grid.dims();
  std::map<int, std::set<int>> rounds_of_sender;
  std::map<int, long> volume_of_sender;
  std::vector<int> origin(static_cast<std::size_t>(dims)), target(origin), position(origin),
      next(origin);
  for (int rank = 0; rank < grid.num_procs(); ++rank) {
    grid.coords_of(rank, origin.data());
    for (int i = 0; i < offsets.size(); ++i) {
      if (!grid.shift(origin.data(), offsets[i], 1, target.data())) continue;
      position = origin;
      for (const Move& move : block_path(offsets[i], dims, algorithm, i, offsets, grid.periodic)) {
        const int sender = grid.rank_of(position.data());
        rounds_of_sender[sender].insert(move.round);
        ++volume_of_sender[sender];
        EXPECT_TRUE(grid.shift(position.data(), move.step.data(), 1, next.data()))
            << "an intermediate position left the mesh";
        position = next;
      }
      EXPECT_EQ(position, target);
    }
  }
  iso::ScheduleFigures f;
  for (const auto& [sender, rounds] : rounds_of_sender) {
    f.messages = std::max(f.messages, static_cast<long>(rounds.size()));
    f.messages_total += static_cast<long>(rounds.size());
  }
  for (const auto& [sender, volume] : volume_of_sender) {
    f.volume = std::max(f.volume, volume);
    f.volume_total += volume;
  }
  return f;
}

TEST(Plan, MeshFiguresOfMoore2dMatchHandCount) {
  // 3x3 mesh, 8 neighbors: a corner process has 3 of them, the center all 8.
  const iso::OffsetList offsets = iso::OffsetList::moore(2, 1);
  const iso::CartGeometry mesh{{3, 3}, {false, false}};
  const Plan plan = compute_plan("Moore", offsets, mesh);
  const auto& linear = plan.at(Algorithm::linear).alltoall;
  EXPECT_EQ(linear.messages, 8);
  EXPECT_EQ(linear.messages_total, 40);  // (2+3+2)^2 - 9 existing (origin, target) pairs
  EXPECT_EQ(linear.volume_total, 40);
  const auto& hop = plan.at(Algorithm::torus).alltoall;
  EXPECT_EQ(hop.rounds, 4);
  EXPECT_EQ(hop.volume_total, 4 * 6 * 1 + 4 * 4 * 2);  // faces: 6 pairs x 1 hop, corners: 4 x 2
  EXPECT_EQ(plan.at(Algorithm::direct).alltoall.volume_total, 56);
}

TEST(Plan, AlltoallFiguresMatchBruteForceOnRandomGrids) {
  std::mt19937 random(20240611);
  int cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int dims = 1 + static_cast<int>(random() % 3);
    iso::CartGeometry grid;
    for (int j = 0; j < dims; ++j) {
      grid.sizes.push_back(1 + static_cast<int>(random() % 4));
      grid.periodic.push_back(random() % 2 == 0);
    }
    const int count = 1 + static_cast<int>(random() % 6);
    std::vector<int> coords;
    for (int k = 0; k < count * dims; ++k)
      coords.push_back(static_cast<int>(random() % 7) - 3);
    const iso::OffsetList offsets(dims, coords);
    SCOPED_TRACE(offsets.to_string() + " on " + isostencil::format_sizes(grid.sizes) +
                 " periodic " + isostencil::format_flags(grid.periodic));
    const Plan plan = compute_plan("random", offsets, grid);
    for (Algorithm algorithm : isostencil::plan_algorithms()) {
      SCOPED_TRACE(iso::to_string(algorithm));
      const auto expected = brute_force_alltoall(offsets, grid, algorithm);
      const auto& got = plan.at(algorithm).alltoall;
      EXPECT_EQ(got.messages, expected.messages);
      EXPECT_EQ(got.volume, expected.volume);
      EXPECT_EQ(got.messages_total, expected.messages_total);
      EXPECT_EQ(got.volume_total, expected.volume_total);
      // allgather never moves more blocks than alltoall (shared prefixes).
      EXPECT_LE(plan.at(algorithm).allgather.volume_total, got.volume_total);
    }
    ++cases;
  }
  EXPECT_EQ(cases, 400);
}

TEST(PlanText, TorusTableHasOneRowPerAlgorithmAndCollective) {
  const Plan plan =
      compute_plan("Moore d=3 r=1, self excluded", iso::OffsetList::moore(3, 1), torus(3));
  const std::string text = isostencil::format_plan_text(plan);
  EXPECT_NE(text.find("Moore d=3 r=1"), std::string::npos);
  EXPECT_NE(text.find("3 x 3 x 3 = 27 processes"), std::string::npos);
  EXPECT_NE(text.find("yes yes yes (torus)"), std::string::npos);
  for (const char* algorithm : {"linear", "torus", "direct"})
    for (const char* collective : {"alltoall", "allgather"})
      EXPECT_TRUE(std::regex_search(
          text, std::regex(std::string("\\n  ") + algorithm + " +" + collective + " +[0-9]+ ")))
          << algorithm << " " << collective << "\n"
          << text;
  EXPECT_EQ(text.find("total"), std::string::npos) << "a torus needs no totals column";
}

TEST(PlanText, MeshTableHasTotals) {
  const iso::CartGeometry mesh{{3, 3}, {true, false}};
  const std::string text = isostencil::format_plan_text(
      compute_plan("explicit offsets", iso::OffsetList::parse("1,0;0,1"), mesh));
  EXPECT_NE(text.find("messages total"), std::string::npos);
  EXPECT_NE(text.find("yes no"), std::string::npos);
  EXPECT_NE(text.find("(1,0) (0,1)"), std::string::npos);
}

TEST(PlanJson, HoldsTheNeighborhoodAndEveryFigure) {
  const iso::CartGeometry grid{{4, 2}, {true, false}};
  const auto json = isostencil::plan_to_json(compute_plan("x", iso::OffsetList::moore(2, 1), grid));
  EXPECT_EQ(json["dims"], 2);
  EXPECT_EQ(json["neighbors"], 8);
  EXPECT_EQ(json["procs"], nlohmann::ordered_json::array({4, 2}));
  EXPECT_EQ(json["periodic"], nlohmann::ordered_json::array({true, false}));
  for (const char* algorithm : {"linear", "torus", "direct"})
    for (const char* collective : {"alltoall", "allgather"})
      for (const char* key : {"rounds", "messages", "volume", "messages_total", "volume_total",
                              "local_copies", "temp_blocks"})
        EXPECT_TRUE(json["algorithms"][algorithm][collective][key].is_number_integer())
            << algorithm << "." << collective << "." << key;
  // Keys stay in report order: linear, torus, direct, basis.
  std::vector<std::string> order;
  for (const auto& item : json["algorithms"].items())
    order.push_back(item.key());
  EXPECT_EQ(order, (std::vector<std::string>{"linear", "torus", "direct", "basis"}));
}

TEST(PlanSchedule, TextListsEveryRoundOfProcessZero) {
  const iso::OffsetList offsets = iso::OffsetList::moore(2, 1);
  const iso::CartGeometry grid = torus(2);
  const int origin[2] = {0, 0};
  const auto schedule =
      iso::build_schedule(offsets, grid, origin, Algorithm::torus, Collective::alltoall);
  const std::string text = isostencil::format_schedule_text(schedule, grid, 0);
  long rounds = 0;
  for (std::size_t at = text.find("  round "); at != std::string::npos;
       at = text.find("  round ", at + 1))
    ++rounds;
  EXPECT_EQ(rounds, 4);
  EXPECT_NE(text.find("shift (1,0)"), std::string::npos) << text;
  EXPECT_NE(text.find("S["), std::string::npos);
  const auto json = isostencil::schedule_to_json(schedule);
  EXPECT_EQ(json["rounds"].size(), 4u);
  EXPECT_EQ(json["volume"], 12);
}

TEST(PlanSchedule, BlockNamesFollowAlgorithmsMd) {
  EXPECT_EQ(isostencil::format_block({iso::Buffer::send, 3}), "S[3]");
  EXPECT_EQ(isostencil::format_block({iso::Buffer::recv, 0}), "R[0]");
  EXPECT_EQ(isostencil::format_block({iso::Buffer::temp, 12}), "T[12]");
  EXPECT_EQ(isostencil::format_block({iso::Buffer::temp2, 5}), "T2[5]");
}

}  // namespace
