// Life rules in B/S notation (valid and malformed strings, counts beyond
// 3^d - 1, canonical printing) and RLE patterns (the shipped files and
// malformed input). No collectives: every rank runs the same checks.
#include "isostencil/kernels/life.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#ifndef ISOSTENCIL_PATTERN_DIR
#error "ISOSTENCIL_PATTERN_DIR must name inputs/patterns"
#endif

namespace {

using isostencil::kernels::LifePattern;
using isostencil::kernels::LifeRule;

/// The iso::Error message `action` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const iso::Error& error) {
    return error.what();
  }
  return {};
}

std::string rule_error(const std::string& text, int dims) {
  return error_of([&] { LifeRule rule(text, dims); });
}

std::string pattern_dir() {
  return ISOSTENCIL_PATTERN_DIR;
}

TEST(LifeRule, Conway) {
  const LifeRule rule("B3/S23", 2);
  EXPECT_EQ(rule.dims(), 2);
  EXPECT_EQ(rule.max_neighbors(), 8);
  EXPECT_EQ(rule.birth_counts(), std::vector<int>({3}));
  EXPECT_EQ(rule.survival_counts(), std::vector<int>({2, 3}));
  EXPECT_TRUE(rule.births(3));
  EXPECT_FALSE(rule.births(2));
  EXPECT_TRUE(rule.survives(2));
  EXPECT_FALSE(rule.survives(4));
  EXPECT_EQ(rule.to_string(), "B3/S23");
  EXPECT_EQ(rule, LifeRule::conway());
  EXPECT_EQ(rule, LifeRule());
}

TEST(LifeRule, SpellingsOfOneRule) {
  const LifeRule conway = LifeRule::conway();
  for (const char* text :
       {"b3/s23", "  B3/S23\t", "S23/B3", "s32/b3", "B3/S2,3", "B3/S2-3", "B3-3/S23", "B3/S233"})
    EXPECT_EQ(LifeRule(text, 2), conway) << text;
  EXPECT_NE(LifeRule("B36/S23", 2), conway);
  EXPECT_NE(LifeRule("B3/S23", 3), LifeRule("B3/S23", 2));  // dims are part of the rule
}

TEST(LifeRule, EmptyLists) {
  const LifeRule seeds("B2/S", 2);
  EXPECT_EQ(seeds.birth_counts(), std::vector<int>({2}));
  EXPECT_TRUE(seeds.survival_counts().empty());
  EXPECT_EQ(seeds.to_string(), "B2/S");
  EXPECT_EQ(LifeRule("B/S", 1).to_string(), "B/S");
  EXPECT_EQ(LifeRule("B0/S8", 2).to_string(), "B0/S8");  // 0 and 3^2 - 1 are both counts
}

TEST(LifeRule, ThreeDimensionalRules) {
  EXPECT_EQ(LifeRule("B5/S45", 3).to_string(), "B5/S45");
  EXPECT_EQ(LifeRule("B6/S567", 3).survival_counts(), std::vector<int>({5, 6, 7}));
  const LifeRule listed("B5,6/S4-7,12", 3);
  EXPECT_EQ(listed.birth_counts(), std::vector<int>({5, 6}));
  EXPECT_EQ(listed.survival_counts(), std::vector<int>({4, 5, 6, 7, 12}));
  EXPECT_EQ(listed.to_string(), "B56/S4-7,12");
  EXPECT_EQ(LifeRule(listed.to_string(), 3), listed);
  EXPECT_EQ(LifeRule("B26-26/S0-26", 3).birth_counts(), std::vector<int>({26}));
}

TEST(LifeRule, DigitsVersusLists) {
  // Digits only: one count per digit; a lone two-digit count is a range.
  EXPECT_EQ(LifeRule("B12/S", 3).birth_counts(), std::vector<int>({1, 2}));
  EXPECT_EQ(LifeRule("B12-12/S", 3).birth_counts(), std::vector<int>({12}));
  EXPECT_EQ(LifeRule("B12-12/S", 3).to_string(), "B12-12/S");
  EXPECT_EQ(LifeRule("B10,11/S", 3).to_string(), "B10,11/S");
  EXPECT_EQ(LifeRule("B10,11,12,20/S1,2,3,9", 3).to_string(), "B10-12,20/S1239");
  EXPECT_EQ(LifeRule("B80/S", 4).birth_counts(), std::vector<int>({0, 8}));
  EXPECT_EQ(LifeRule("B80-80/S", 4).birth_counts(), std::vector<int>({80}));
}

TEST(LifeRule, CountsBeyondTheNeighborhoodAreRejected) {
  // 3^d - 1 neighbors: 2, 8, 26, 80, 242, 728.
  const int max[] = {0, 2, 8, 26, 80, 242, 728};
  for (int dims = 1; dims <= 6; ++dims) {
    const std::string top = std::to_string(max[dims]);
    const std::string over = std::to_string(max[dims] + 1);
    EXPECT_EQ(LifeRule("B" + top + "-" + top + "/S", dims).birth_counts(),
              std::vector<int>({max[dims]}));
    const std::string message = rule_error("B0-" + over + "/S", dims);
    EXPECT_NE(message.find("count " + over + " is more than " + top), std::string::npos) << message;
    EXPECT_NE(message.find("character 4"), std::string::npos) << message;
    EXPECT_NE(message.find("in " + std::to_string(dims) + "-D"), std::string::npos) << message;
  }
  EXPECT_NE(rule_error("B3/S239", 2).find("character 7 ('9'): count 9 is more than 8"),
            std::string::npos);
  EXPECT_NE(rule_error("B3/S3", 1).find("count 3 is more than 2"), std::string::npos);
  EXPECT_NE(rule_error("B1,99999999999999/S", 6).find("count too large"), std::string::npos);
  EXPECT_EQ(LifeRule("B9/S", 3).birth_counts(), std::vector<int>({9}));
}

TEST(LifeRule, MalformedRulesNamePositionAndForm) {
  struct Case {
    const char* text;
    int dims;
    const char* expected;  // a substring of the message
  };
  const Case cases[] = {
      {"", 2, "empty rule"},
      {"   ", 2, "empty rule"},
      {"B3S23", 2, "at its end: no '/' between the birth and survival lists"},
      {"B3/S23/S4", 2, "character 7 ('/'): a second '/'"},
      {"X3/S23", 2, "character 1 ('X'): expected 'B' (birth counts) or 'S'"},
      {"3/S23", 2, "character 1 ('3'): expected 'B'"},
      {"B3/B23", 2, "character 4 ('B'): a second birth list"},
      {"S3/S23", 2, "character 4 ('S'): a second survival list"},
      {"B3/", 2, "at its end: expected 'B'"},
      {"B3/S2x3", 2, "character 6 ('x'): unexpected character; expected a digit, ',' or '-'"},
      {"B3/S2 3", 2, "character 6 (' '): whitespace inside a rule"},
      {"B3/S4-", 3, "at its end: expected the last count of the range 4-..."},
      {"B3/S-4", 3, "character 5 ('-'): a range without its first count"},
      {"B3/S4,,5", 3, "character 7 (','): empty item"},
      {"B3/S,4", 3, "character 5 (','): empty item"},
      {"B3/S4,", 3, "at its end: expected a count after ','"},
      {"B3/S7-4", 3, "character 5 ('7'): the range 7-4 runs downward; write it 4-7"},
      {"B3/S4-5-6", 3, "character 8 ('-'): unexpected character; expected ','"},
      {"B3/S4-5 ,6", 3, "character 8 (' '): whitespace inside a rule"},
      {"B3/S4-x", 3, "character 7 ('x'): expected the last count"},
  };
  for (const Case& c : cases) {
    const std::string message = rule_error(c.text, c.dims);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "rule \"" << c.text << "\": " << (message.empty() ? "no error" : message);
    EXPECT_EQ(message.rfind("isostencil::kernels::LifeRule", 0), 0U) << message;
  }
  // The message shows the form rules take.
  EXPECT_NE(rule_error("B3/S2x3", 2).find("B<births>/S<survivals>"), std::string::npos);
  EXPECT_NE(rule_error("B3/S23", 0).find("1 to 6 dimensions"), std::string::npos);
  EXPECT_NE(rule_error("B3/S23", 7).find("1 to 6 dimensions"), std::string::npos);
}

TEST(LifeRule, FromCounts) {
  EXPECT_EQ(LifeRule::from_counts({6}, {7, 5, 6, 5}, 3), LifeRule("B6/S567", 3));
  EXPECT_NE(
      error_of([] { LifeRule::from_counts({27}, {}, 3); }).find("birth count 27 is outside 0..26"),
      std::string::npos);
  EXPECT_NE(error_of([] { LifeRule::from_counts({}, {-1}, 2); }).find("survival count -1"),
            std::string::npos);
}

TEST(LifeRule, HighDimensionalMasksSpanWords) {
  const LifeRule rule("B63-65,127,128,700-728/S0,64,191-193", 6);
  EXPECT_EQ(rule.to_string(), "B63-65,127,128,700-728/S0,64,191-193");
  EXPECT_EQ(LifeRule(rule.to_string(), 6), rule);
  for (int c : {63, 64, 65, 127, 128, 700, 728})
    EXPECT_TRUE(rule.births(c)) << c;
  for (int c : {62, 66, 126, 129, 699})
    EXPECT_FALSE(rule.births(c)) << c;
  EXPECT_TRUE(rule.survives(64));
  EXPECT_FALSE(rule.survives(63));
  EXPECT_FALSE(rule.survives(729));
}

// ---------------------------------------------------------------------------
// RLE patterns

std::vector<std::vector<long>> sorted(std::vector<std::vector<long>> cells) {
  std::sort(cells.begin(), cells.end());
  return cells;
}

LifePattern glider_picture() {
  return LifePattern::from_picture({".O.", "..O", "OOO"}, "Glider");
}

TEST(LifePattern, ShippedGlider) {
  const LifePattern glider = isostencil::kernels::read_rle(pattern_dir() + "/glider.rle");
  EXPECT_EQ(glider.name, "Glider");
  EXPECT_EQ(glider.rule, "B3/S23");
  EXPECT_EQ(glider.extent, std::vector<long>({3, 3}));
  EXPECT_EQ(glider.cells, glider_picture().cells);
  EXPECT_EQ(LifeRule(glider.rule, 2), LifeRule::conway());
}

TEST(LifePattern, ShippedOthers) {
  const LifePattern blinker = isostencil::kernels::read_rle(pattern_dir() + "/blinker.rle");
  EXPECT_EQ(blinker.extent, std::vector<long>({1, 3}));
  EXPECT_EQ(blinker.cells, LifePattern::from_picture({"OOO"}).cells);
  const LifePattern block = isostencil::kernels::read_rle(pattern_dir() + "/block.rle");
  EXPECT_EQ(block.cells, LifePattern::from_picture({"OO", "OO"}).cells);
  const LifePattern gun = isostencil::kernels::read_rle(pattern_dir() + "/gosper_glider_gun.rle");
  EXPECT_EQ(gun.name, "Gosper glider gun");
  EXPECT_EQ(gun.extent, std::vector<long>({9, 36}));
  EXPECT_EQ(gun.cells.size(), 36U);
  const LifePattern gun_picture = LifePattern::from_picture({
      "........................O...........",
      "......................O.O...........",
      "............OO......OO............OO",
      "...........O...O....OO............OO",
      "OO........O.....O...OO..............",
      "OO........O...O.OO....O.O...........",
      "..........O.....O.......O...........",
      "...........O...O....................",
      "............OO......................",
  });
  EXPECT_EQ(gun.cells, gun_picture.cells);
}

TEST(LifePattern, RleSyntax) {
  // Comments anywhere before '!', CRLF, runs split over lines, text after '!'.
  const LifePattern glider = isostencil::kernels::parse_rle_string(
      "#C a comment\r\n\r\n#N My glider\r\nx=3,y=3\r\nbo$2b\r\n#C inside\r\no$\r\n3o! trailing "
      "text\r\nmore\r\n");
  EXPECT_EQ(glider.name, "My glider");
  EXPECT_EQ(glider.rule, "");
  EXPECT_EQ(glider.cells, glider_picture().cells);
  // A rule with commas runs to the end of the header line.
  EXPECT_EQ(isostencil::kernels::parse_rle_string("x = 1, y = 1, rule = B5,6/S4-7,12\no!").rule,
            "B5,6/S4-7,12");
  // Multi-row skips and trailing dead cells.
  const LifePattern skip = isostencil::kernels::parse_rle_string("x = 4, y = 4\no3b2$3bo!");
  EXPECT_EQ(skip.cells, LifePattern::from_picture({"O...", "....", "...O", "...."}).cells);
  EXPECT_EQ(isostencil::kernels::parse_rle_string("x = 0, y = 0\n!").cells.size(), 0U);
}

TEST(LifePattern, RleErrorsNameFileLineAndColumn) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"bo$2bo$3o!\n", "p.rle:1:1: expected the header"},
      {"#N x\n  x = 3, z = 4\nbo!", "p.rle:2:10: unknown header key 'z'"},
      {"x = 3\nbo!", "p.rle:1:1: the header lacks 'y = ...'"},
      {"x = 3, y\nbo!", "p.rle:1:9: expected '=' after 'y'"},
      {"x = 3, y = three\nbo!", "p.rle:1:12: expected a whole number of rows"},
      {"x = 3, y = 3 4\nbo!", "p.rle:1:14: expected ',' between header entries"},
      {"x = 3, y = 3\nbo$2bq$3o!", "p.rle:2:6: unexpected character 'q'"},
      {"x = 3, y = 3\nbo$2bo$3o\n", "p.rle:2:10: the pattern ends without '!'"},
      {"x = 2, y = 2\n3o!", "p.rle:2:2: live cells at row 0, columns 0..2 (from 0) lie outside"},
      {"x = 2, y = 2\no$o$o!", "p.rle:2:5: live cells at row 2"},
      {"x = 2, y = 2\n0o!", "p.rle:2:2: run count 0 before 'o'"},
      {"x = 2, y = 2\no2!", "p.rle:2:3: a run count before '!'"},
      {"x = 2, y = 2\noA!", "only two-state patterns"},
      {"#C only comments\n", "p.rle: no header"},
  };
  for (const Case& c : cases) {
    const std::string message =
        error_of([&] { isostencil::kernels::parse_rle_string(c.text, "p.rle"); });
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "input \"" << c.text << "\": " << (message.empty() ? "no error" : message);
  }
  const std::string missing =
      error_of([] { isostencil::kernels::read_rle("/nonexistent/dir/none.rle"); });
  EXPECT_NE(missing.find("cannot open \"/nonexistent/dir/none.rle\""), std::string::npos)
      << missing;
}

TEST(LifePattern, PictureAndFlip) {
  const LifePattern glider = glider_picture();
  EXPECT_EQ(glider.extent, std::vector<long>({3, 3}));
  EXPECT_EQ(sorted(glider.flipped(0).cells),
            LifePattern::from_picture({"OOO", "..O", ".O."}).cells);
  EXPECT_EQ(sorted(glider.flipped(1).cells),
            LifePattern::from_picture({".O.", "O..", "OOO"}).cells);
  EXPECT_NE(error_of([&] { glider.flipped(2); }).find("dimension 2 of a 2-D pattern"),
            std::string::npos);
  EXPECT_NE(error_of([] { LifePattern::from_picture({".x"}); }).find("row 0, column 1: 'x'"),
            std::string::npos);
}

}  // namespace
