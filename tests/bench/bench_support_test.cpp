// Unit tests of iso-bench's pure parts: the statistics of the paper's method
// (quantiles, Tukey's rule with 3 x IQR, median of launch medians), the
// neighborhood specifications and the CSV form.
#include "isostencil/bench/neighborhoods.hpp"
#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"

#include "isostencil/spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace isobench;

TEST(BenchStats, QuantilesInterpolateLikeNumpy) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile_sorted({7}, 0.3), 7.0);
  EXPECT_DOUBLE_EQ(quantile_sorted({}, 0.5), 0.0);
}

TEST(BenchStats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(BenchStats, TukeyRemovesAHighOutlier) {
  // 1..9 and 100: Q1 = 3.25, Q3 = 7.75, IQR = 4.5, fences [-10.25, 21.25].
  std::vector<double> v = {100, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const TukeySummary s = tukey_median(v, 3.0);
  EXPECT_DOUBLE_EQ(s.q1, 3.25);
  EXPECT_DOUBLE_EQ(s.q3, 7.75);
  EXPECT_DOUBLE_EQ(s.lower, -10.25);
  EXPECT_DOUBLE_EQ(s.upper, 21.25);
  EXPECT_EQ(s.kept, 9u);
  EXPECT_EQ(s.removed, 1u);
  EXPECT_DOUBLE_EQ(s.median, 5.0);
}

TEST(BenchStats, TukeyKeepsValuesOnTheFence) {
  // Q1 = 3.25, Q3 = 7.75: 21.25 is exactly on the upper fence and stays.
  const TukeySummary s = tukey_median({1, 2, 3, 4, 5, 6, 7, 8, 9, 21.25}, 3.0);
  EXPECT_EQ(s.removed, 0u);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
}

TEST(BenchStats, TukeyRemovesLowOutliersAndUsesK) {
  // All equal but one: IQR 0, so anything else is an outlier.
  const TukeySummary s = tukey_median({10, 10, 0.1, 10, 10}, 3.0);
  EXPECT_EQ(s.kept, 4u);
  EXPECT_EQ(s.removed, 1u);
  EXPECT_DOUBLE_EQ(s.median, 10.0);
  // k = 1.5 (Tukey's usual inner fence) removes more than k = 3.
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16};  // fences 1.5: [-3.5, 14.5]
  EXPECT_EQ(tukey_median(v, 3.0).removed, 0u);
  EXPECT_EQ(tukey_median(v, 1.5).removed, 1u);
  EXPECT_DOUBLE_EQ(tukey_median(v, 1.5).median, 5.0);
}

TEST(BenchStats, TukeyOfNothing) {
  const TukeySummary s = tukey_median({}, 3.0);
  EXPECT_EQ(s.kept, 0u);
  EXPECT_EQ(s.removed, 0u);
  EXPECT_DOUBLE_EQ(s.median, 0.0);
}

TEST(BenchStats, MedianOfLaunchMedians) {
  const LaunchSummary s = summarize_launches({3.0, 1.0, 2.0, 10.0});
  EXPECT_EQ(s.launches, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_EQ(summarize_launches({}).launches, 0u);
}

int count_rounds_direct(const iso::OffsetList& offsets) {
  int rounds = 0;
  for (int j = 0; j < offsets.dims(); ++j) {
    std::set<int> values;
    for (int i = 0; i < offsets.size(); ++i)
      if (offsets[i][j] != 0) values.insert(offsets[i][j]);
    rounds += static_cast<int>(values.size());
  }
  return rounds;
}

TEST(BenchNeighborhoods, MooreExpandsToThePapersTwelve) {
  const auto all = expand_neighborhood("moore");
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all.front().name, "moore-d2-r1");
  EXPECT_EQ(all.back().name, "moore-d5-r3");
  EXPECT_EQ(all.back().offsets.size(), 16806);
  EXPECT_EQ(expand_neighborhood("moore:4").size(), 3u);
  const auto one = expand_neighborhood("moore:3:1");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].offsets.size(), 26);
}

TEST(BenchNeighborhoods, PositiveOctant) {
  const auto n = expand_neighborhood("octant");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].name, "octant-d3-r3");
  EXPECT_EQ(n[0].offsets.size(), 63);  // 4^3 - 1
  for (int i = 0; i < n[0].offsets.size(); ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_GE(n[0].offsets[i][j], 0);
      EXPECT_LE(n[0].offsets[i][j], 3);
    }
  EXPECT_EQ(expand_neighborhood("octant:3:1")[0].offsets.size(), 7);  // the paper's Section II example
}

TEST(BenchNeighborhoods, ShalesHaveThePapersRoundCounts) {
  // Fig. 4(b): torus about 2*r2*d = 42 rounds, direct (2+2)d = 12.
  const auto n = expand_neighborhood("shales");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].name, "shales-d3-3-7");
  EXPECT_EQ(n[0].offsets.size(), 52);
  EXPECT_EQ(count_rounds_direct(n[0].offsets), 12);
  EXPECT_EQ(isostencil::torus_rounds(n[0].offsets), 42);
  EXPECT_EQ(expand_neighborhood("shales:2")[0].offsets.size(), 16);
}

TEST(BenchNeighborhoods, FullChebyshevShells) {
  const auto n = expand_neighborhood("shells:3:3,7");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].offsets.size(), (343 - 125) + (3375 - 2197));
  EXPECT_EQ(count_rounds_direct(n[0].offsets), 42);
  EXPECT_EQ(shells_offsets(2, {1}).size(), 8);
}

TEST(BenchNeighborhoods, OffsetsAndBadSpecifications) {
  const auto n = expand_neighborhood("offsets:1,0;0,1;1,1");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].offsets.size(), 3);
  EXPECT_EQ(nonzero_coordinates(n[0].offsets, 2), 2);
  EXPECT_EQ(nonzero_coordinates(n[0].offsets, 0), 1);
  for (const char* bad : {"bogus", "moore:0:1", "moore:3:x", "moore:3:1:2", "octant:3", "shells:3",
                          "shales:3:3,3", "file:", "file:/nonexistent/offsets.txt", "offsets:", "offsets:1,x",
                          "moore:9:3"})
    EXPECT_THROW(expand_neighborhood(bad), isostencil::UsageError) << bad;
}

TEST(BenchReport, CsvQuotingAndColumns) {
  ResultRow row;
  row.operation = "alltoall";
  row.neighborhood = "moore-d3-r1";
  row.dims = 3;
  row.neighbors = 26;
  row.size_bytes = 8;
  row.send_bytes = 208;
  row.contender = "torus";
  row.status = "ok";
  row.note = "a, \"quoted\" note";
  row.launch_medians = {2e-6, 1e-6, 3e-6};
  row.reps = 10;
  row.reps_kept = 29;
  row.outliers = 1;
  row.proc_dims = "2x1x1";
  row.periodic = "1,1,1";
  Environment env;
  env.mpi_library = "Open MPI v4.1.4";
  env.mpi_version = "3.1";
  env.np = 2;
  env.hostname = "host";
  env.date = "2024-01-01T00:00:00Z";
  const std::string line = csv_line(row, env);
  EXPECT_EQ(line,
            "alltoall,moore-d3-r1,3,26,8,208,torus,,ok,\"a, \"\"quoted\"\" note\",2.0000,1.0000,3.0000,3,10,29,1,"
            "2.0000;1.0000;3.0000,Open MPI v4.1.4,3.1,2,2x1x1,\"1,1,1\",host,2024-01-01T00:00:00Z,");
  // Interleaved timing: each turn's median, last.
  row.turn_medians = {1.5e-6, 2.25e-6};
  EXPECT_EQ(csv_line(row, env).substr(line.size()), "1.5000;2.2500");
  row.turn_medians.clear();
  // Unmeasured rows leave the statistics empty.
  row.status = "skipped";
  row.launch_medians.clear();
  EXPECT_NE(csv_line(row, env).find(",skipped,"), std::string::npos);
  EXPECT_NE(csv_line(row, env).find(",,,,0,10,"), std::string::npos);
  // Header and line have the same number of columns (no quoted commas in the header).
  const std::string header = csv_header();
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), 25);
}

TEST(BenchReport, ParseAndFormatBytes) {
  EXPECT_EQ(parse_bytes("4096"), 4096);
  EXPECT_EQ(parse_bytes("64K"), 65536);
  EXPECT_EQ(parse_bytes("64KiB"), 65536);
  EXPECT_EQ(parse_bytes("1G"), 1LL << 30);
  EXPECT_EQ(parse_bytes("1.5M"), 1536LL * 1024);
  EXPECT_EQ(parse_bytes("x"), -1);
  EXPECT_EQ(parse_bytes("12Q"), -1);
  EXPECT_EQ(parse_bytes(""), -1);
  EXPECT_EQ(format_bytes(1), "1 B");
  EXPECT_EQ(format_bytes(65536), "64 KiB");
  EXPECT_EQ(format_bytes(1536 * 1024), "1.5 MiB");
}

}  // namespace
