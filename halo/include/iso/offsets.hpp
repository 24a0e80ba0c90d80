// The neighborhood syntax of the project, parsed in one place. The driver,
// `isostencil plan` and the benchmark are thin users of these functions:
//   "1,0,0;0,1,1"       an offset list: offsets separated by ';', coordinates
//                       by ',' (OffsetList::parse)
//   "D:R"               a Moore neighborhood of dimension D, radius R (parse_moore)
//   a file              one offset per line, "1,0,0" or "1 0 0", '#' comments
//                       (read_offsets_file)
//   a named shape       expand_named_offsets:
//     moore             Moore neighborhoods d = 2..5, r = 1..3
//     moore:D           Moore d = D, r = 1..3
//     moore:D:R         one Moore neighborhood (Chebyshev ball, self excluded)
//     octant[:D:R]      positive-octant asymmetric Moore: coordinates in [0,R],
//                       zero excluded (default 3:3)
//     shales[:D[:R1,R2..]]  {-r,0,r}^D without 0 for each r (default 3:3,7:
//                       52 neighbors; torus 42 rounds, direct 12)
//     shells:D:R1,R2..  every offset at Chebyshev distance exactly R1, R2, ...
//     file:PATH         read_offsets_file
//     offsets:LIST      an offset list
// Every mistake is an iso::Error that names the text.
#pragma once

#include "iso/geometry.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace iso {

struct MooreShape {
  int dims = 0;
  int radius = 0;
};

/// `text` without leading and trailing blanks (space, tab, CR, LF).
std::string trim_blanks(const std::string& text);
/// Strict integer: an optional sign and digits, blanks around; nothing else
/// (no "1e3", "0x10", "3.0"). False when it is not one or is out of range.
bool parse_strict_integer(const std::string& text, long long& value);

/// Parses "D:R" (1 <= D <= 64, R >= 0, at most `max_offsets` offsets counting
/// the centre). Messages start with `name` ("--moore: expected D:R ...",
/// "--moore 0:1: dimension D must be >= 1").
MooreShape parse_moore(const std::string& text, std::int64_t max_offsets = 1'000'000,
                       const std::string& name = "Moore D:R");
/// (2r+1)^d, or one less without the centre; saturates at INT64_MAX.
std::int64_t moore_size(const MooreShape& shape, bool include_self);

/// Reads one offset per line ("1,0,0" or "1 0 0"); blank lines and everything
/// after '#' are ignored. Errors name FILE:LINE; those about the whole file
/// start with `name` and the path.
OffsetList read_offsets_file(const std::string& path, const std::string& name = "offsets file");

/// The named shapes' offsets, in lexicographic order within each radius.
OffsetList octant_offsets(int dims, int radius);
OffsetList shales_offsets(int dims, const std::vector<int>& radii);
OffsetList shells_offsets(int dims, const std::vector<int>& radii);

struct NamedOffsets {
  std::string name;         ///< short name for CSV and file names, e.g. "moore-d3-r1"
  std::string description;  ///< human-readable, e.g. "Moore d=3 r=1"
  OffsetList offsets;
};
/// Expands one named shape (see above; "moore" and "moore:D" are families).
/// Errors say `neighborhood "SPEC": ...`; at most 10^6 offsets per
/// neighborhood. `file_name` is read_offsets_file's `name` for file:PATH.
std::vector<NamedOffsets> expand_named_offsets(const std::string& spec,
                                               const std::string& file_name = "offsets file");

}  // namespace iso
