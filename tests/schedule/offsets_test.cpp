// The library's neighborhood syntax (iso/offsets.hpp): Moore D:R, offset
// files and the named shapes, with errors that name the text.
#include "iso/error.hpp"
#include "iso/offsets.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const iso::Error& error) {
    return error.what();
  }
  return "no iso::Error";
}

TEST(Offsets, MooreShapeAndMessagesNamingTheText) {
  const iso::MooreShape shape = iso::parse_moore("3:2");
  EXPECT_EQ(shape.dims, 3);
  EXPECT_EQ(shape.radius, 2);
  EXPECT_EQ(iso::moore_size(shape, false), 124);
  EXPECT_EQ(error_of([] { iso::parse_moore("3", 1000, "--moore"); }),
            "--moore: expected D:R (dimension and radius, e.g. 3:1), got \"3\"");
  EXPECT_EQ(error_of([] { iso::parse_moore("0:1", 1000, "--moore"); }), "--moore 0:1: dimension D must be >= 1");
  EXPECT_NE(error_of([] { iso::parse_moore("3:5", 1000); }).find("would have 1331 offsets; at most 1000"),
            std::string::npos);
}

TEST(Offsets, NamedShapes) {
  EXPECT_EQ(iso::expand_named_offsets("moore").size(), 12u);
  const auto one = iso::expand_named_offsets("moore:3:1");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "moore-d3-r1");
  EXPECT_EQ(one[0].description, "Moore d=3 r=1");
  EXPECT_EQ(one[0].offsets, iso::OffsetList::moore(3, 1));
  EXPECT_EQ(iso::expand_named_offsets("octant:3:1")[0].offsets.size(), 7);
  const auto shales = iso::expand_named_offsets("shales");
  EXPECT_EQ(shales[0].name, "shales-d3-3-7");
  EXPECT_EQ(shales[0].offsets.size(), 52);
  EXPECT_EQ(iso::shells_offsets(2, {1}).size(), 8);
  EXPECT_EQ(iso::expand_named_offsets("offsets:1,0;0,1")[0].name, "offsets-d2-s2");
  EXPECT_EQ(error_of([] { iso::expand_named_offsets("moore:3:x"); }),
            "neighborhood \"moore:3:x\": radius \"x\" is not an integer in [1, 1000]");
  EXPECT_NE(error_of([] { iso::expand_named_offsets("cube"); }).find("unknown neighborhood \"cube\""),
            std::string::npos);
  EXPECT_EQ(error_of([] { iso::expand_named_offsets("file:/nonexistent/offsets.txt"); }),
            "offsets file /nonexistent/offsets.txt: cannot open the file");
}

}  // namespace

namespace {

// The hash is kept with the list: it must follow push_back and equal the
// hash of the same offsets built any other way (copies carry it along).
TEST(Offsets, KeptHashFollowsTheOffsets) {
  iso::OffsetList grown(2, {1, 0});
  const std::uint64_t one = grown.hash();
  grown.push_back({0, -1});
  const iso::OffsetList built(2, {1, 0, 0, -1});
  EXPECT_NE(grown.hash(), one);
  EXPECT_EQ(grown.hash(), built.hash());
  const iso::OffsetList copy = grown;
  EXPECT_EQ(copy.hash(), built.hash());
  iso::OffsetList other(2, {1, 0});
  other.push_back({0, 1});
  EXPECT_NE(other.hash(), built.hash());
  EXPECT_EQ(iso::OffsetList::moore(2, 1).hash(), iso::OffsetList::parse("-1,-1;-1,0;-1,1;0,-1;0,1;1,-1;1,0;1,1").hash());
  iso::OffsetList empty;
  EXPECT_EQ(empty.hash(), iso::OffsetList().hash());
}

}  // namespace
