// Parsing and validation of the driver's neighborhood and grid options.
#include "isostencil/spec.hpp"
#include "iso/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using isostencil::NeighborhoodArgs;
using isostencil::UsageError;

// Expects a UsageError whose message contains `fragment`.
template <typename Call>
void expect_usage_error(Call&& call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "no UsageError; expected one mentioning \"" << fragment << "\"";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(Spec, ParseMoore) {
  auto shape = isostencil::parse_moore("3:1");
  EXPECT_EQ(shape.dims, 3);
  EXPECT_EQ(shape.radius, 1);
  shape = isostencil::parse_moore(" 5 : 3 ");
  EXPECT_EQ(shape.dims, 5);
  EXPECT_EQ(shape.radius, 3);
  EXPECT_EQ(isostencil::parse_moore("2:0").radius, 0);
  expect_usage_error([] { isostencil::parse_moore("3"); }, "expected D:R");
  expect_usage_error([] { isostencil::parse_moore("3:"); }, "expected D:R");
  expect_usage_error([] { isostencil::parse_moore("a:1"); }, "expected D:R");
  expect_usage_error([] { isostencil::parse_moore("3:1:1"); }, "expected D:R");
  expect_usage_error([] { isostencil::parse_moore("3:1.5"); }, "expected D:R");
  expect_usage_error([] { isostencil::parse_moore("0:1"); }, "D must be >= 1");
  expect_usage_error([] { isostencil::parse_moore("-2:1"); }, "D must be >= 1");
  expect_usage_error([] { isostencil::parse_moore("3:-1"); }, "R must be >= 0");
  expect_usage_error([] { isostencil::parse_moore("40:40"); }, "offsets");
  expect_usage_error([] { isostencil::parse_moore("99999999999999999999:1"); }, "expected D:R");
}

TEST(Spec, MooreSize) {
  EXPECT_EQ(isostencil::moore_size({3, 1}, false), 26);
  EXPECT_EQ(isostencil::moore_size({3, 1}, true), 27);
  EXPECT_EQ(isostencil::moore_size({5, 3}, false), 16806);
  EXPECT_EQ(isostencil::moore_size({64, 1000}, true), INT64_MAX);  // saturates
}

TEST(Spec, ParseProcs) {
  EXPECT_EQ(isostencil::parse_procs("4,2,1", 3), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(isostencil::parse_procs(" 7 ", 1), (std::vector<int>{7}));
  expect_usage_error([] { isostencil::parse_procs("2,2", 3); }, "3-dimensional");
  expect_usage_error([] { isostencil::parse_procs("2,2,2,2", 3); }, "give one per dimension");
  expect_usage_error([] { isostencil::parse_procs("2,0,2", 3); }, ">= 1");
  expect_usage_error([] { isostencil::parse_procs("2,-1,2", 3); }, ">= 1");
  expect_usage_error([] { isostencil::parse_procs("2,x,2", 3); }, "not an integer");
  expect_usage_error([] { isostencil::parse_procs("2,,2", 3); }, "not an integer");
  expect_usage_error([] { isostencil::parse_procs("2,2,", 2); }, "trailing");
  expect_usage_error([] { isostencil::parse_procs("100000,100000,100000", 3); }, "supported");
}

TEST(Spec, ParsePeriodic) {
  EXPECT_EQ(isostencil::parse_periodic("1,0,1", 3), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(isostencil::parse_periodic("true,no", 2), (std::vector<bool>{true, false}));
  expect_usage_error([] { isostencil::parse_periodic("1,0", 3); }, "give one per dimension");
  expect_usage_error([] { isostencil::parse_periodic("1,2,0", 3); }, "not a flag");
}

TEST(Spec, ResolveOffsets) {
  NeighborhoodArgs args;
  expect_usage_error([&] { isostencil::resolve_offsets(args); }, "give the neighborhood");
  auto resolved = isostencil::resolve_offsets(args, "3:1");  // demo's default
  EXPECT_EQ(resolved.offsets.size(), 26);
  EXPECT_EQ(resolved.description, "Moore d=3 r=1, self excluded");

  args.moore = "2:1";
  args.self = true;
  resolved = isostencil::resolve_offsets(args);
  EXPECT_EQ(resolved.offsets.size(), 9);

  args = {};
  args.offsets = "1,0,0;0,1,1";
  resolved = isostencil::resolve_offsets(args);
  EXPECT_EQ(resolved.offsets.dims(), 3);
  EXPECT_EQ(resolved.offsets.size(), 2);
  EXPECT_EQ(resolved.offsets.flat(), (std::vector<int>{1, 0, 0, 0, 1, 1}));

  args.offsets = "1,0,x";
  expect_usage_error([&] { isostencil::resolve_offsets(args); }, "--offsets");
  args.offsets = "1,0,0;0,1";
  expect_usage_error([&] { isostencil::resolve_offsets(args); }, "coordinates");
  args.offsets = "1,0";
  args.moore = "2:1";
  expect_usage_error([&] { isostencil::resolve_offsets(args); }, "only one of");
  args.moore.clear();
  args.self = true;
  expect_usage_error([&] { isostencil::resolve_offsets(args); }, "--self");
}

TEST(Spec, ResolvePeriodic) {
  NeighborhoodArgs args;
  EXPECT_EQ(isostencil::resolve_periodic(args, 2), (std::vector<bool>{true, true}));
  args.mesh = true;
  EXPECT_EQ(isostencil::resolve_periodic(args, 2), (std::vector<bool>{false, false}));
  args.periodic = "1,0";
  expect_usage_error([&] { isostencil::resolve_periodic(args, 2); }, "only one of");
  args.mesh = false;
  EXPECT_EQ(isostencil::resolve_periodic(args, 2), (std::vector<bool>{true, false}));
}

TEST(Spec, OffsetsFile) {
  const auto offsets = isostencil::read_offsets_file(ISOSTENCIL_TEST_DATA_DIR "/offsets_3d.txt");
  EXPECT_EQ(offsets.dims(), 3);
  EXPECT_EQ(offsets.flat(), (std::vector<int>{1, 0, 0, 0, 1, 1, -1, 0, 2, 0, 0, 0}));
  expect_usage_error(
      [] { isostencil::read_offsets_file(ISOSTENCIL_TEST_DATA_DIR "/offsets_bad.txt"); },
      "offsets_bad.txt:3:");
  expect_usage_error([] { isostencil::read_offsets_file("/nonexistent/offsets.txt"); },
                     "cannot open");
}

TEST(Spec, LimitsRefuseHugeMeshes) {
  const auto offsets = iso::OffsetList::moore(3, 1);
  const iso::CartGeometry big_mesh{{1000, 1000, 1000}, {false, false, false}};
  expect_usage_error([&] { isostencil::check_limits(offsets, big_mesh); },
                     "one schedule per process");
  // The same grid as a torus needs one schedule only.
  const iso::CartGeometry big_torus{{1000, 1000, 1000}, {true, true, true}};
  EXPECT_NO_THROW(isostencil::check_limits(offsets, big_torus));
  const iso::CartGeometry small_mesh{{10, 10, 10}, {false, true, false}};
  EXPECT_NO_THROW(isostencil::check_limits(offsets, small_mesh));
}

TEST(Spec, LimitsRefuseOffsetsFarBeyondTheGrid) {
  EXPECT_EQ(isostencil::torus_rounds(iso::OffsetList::moore(3, 2)), 12);
  EXPECT_EQ(isostencil::torus_rounds(iso::OffsetList::parse("5,-7;1,0")), 12);
  // No overflow at the ends of the accepted coordinate range; beyond it the
  // library refuses the offsets itself.
  EXPECT_EQ(isostencil::torus_rounds(iso::OffsetList::parse("16777216;-16777216")), 33554432LL);
  EXPECT_THROW(iso::OffsetList::parse("2147483647"), iso::Error);
  const iso::CartGeometry line{{3}, {true}};
  expect_usage_error([&] { isostencil::check_limits(iso::OffsetList::parse("10000000"), line); },
                     "unit hops");
  EXPECT_NO_THROW(isostencil::check_limits(iso::OffsetList::parse("1000;-1000"), line));
}

}  // namespace
