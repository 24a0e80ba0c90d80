#include "iso/offsets.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>

namespace iso {

namespace {

constexpr std::int64_t max_named_offsets = 1'000'000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string::size_type begin = 0;
  while (true) {
    const auto end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return parts;
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// A named shape's integer argument in [low, high].
int parse_argument(const std::string& text, const std::string& spec, int low, int high, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high)
    throw Error("neighborhood " + quoted(spec) + ": " + what + " " + quoted(text) + " is not an integer in [" +
                std::to_string(low) + ", " + std::to_string(high) + "]");
  return static_cast<int>(value);
}

std::vector<int> parse_radii(const std::string& text, const std::string& spec) {
  std::vector<int> radii;
  for (const std::string& part : split(text, ','))
    radii.push_back(parse_argument(part, spec, 1, 1 << 20, "radius"));
  std::sort(radii.begin(), radii.end());
  if (std::adjacent_find(radii.begin(), radii.end()) != radii.end())
    throw Error("neighborhood " + quoted(spec) + ": a radius is repeated");
  return radii;
}

// base^exponent, saturating well above the offset limit.
std::int64_t power(std::int64_t base, int exponent) {
  std::int64_t out = 1;
  for (int k = 0; k < exponent; ++k) {
    if (out > max_named_offsets * 16 / std::max<std::int64_t>(base, 1)) return max_named_offsets * 16;
    out *= base;
  }
  return out;
}

void check_count(std::int64_t count, const std::string& spec) {
  if (count > max_named_offsets)
    throw Error("neighborhood " + quoted(spec) + " has more than " + std::to_string(max_named_offsets) +
                " offsets");
}

// Visits every vector of Z^dims with coordinates in [low, high], in
// lexicographic order (last coordinate fastest).
void for_each_box(int dims, int low, int high, const std::function<void(const std::vector<int>&)>& visit) {
  std::vector<int> x(static_cast<std::size_t>(dims), low);
  while (true) {
    visit(x);
    int j = dims - 1;
    while (j >= 0 && x[static_cast<std::size_t>(j)] == high) x[static_cast<std::size_t>(j--)] = low;
    if (j < 0) return;
    ++x[static_cast<std::size_t>(j)];
  }
}

std::string join(const std::vector<int>& values, const char* separator) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) out += (k ? separator : "") + std::to_string(values[k]);
  return out;
}

NamedOffsets moore_named(int d, int r) {
  return {"moore-d" + std::to_string(d) + "-r" + std::to_string(r),
          "Moore d=" + std::to_string(d) + " r=" + std::to_string(r), OffsetList::moore(d, r)};
}

}  // namespace

std::string trim_blanks(const std::string& text) {
  const char* space = " \t\r\n";
  auto first = text.find_first_not_of(space);
  if (first == std::string::npos) return "";
  auto last = text.find_last_not_of(space);
  return text.substr(first, last - first + 1);
}

bool parse_strict_integer(const std::string& text, long long& value) {
  std::string t = trim_blanks(text);
  if (t.empty()) return false;
  std::size_t start = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  if (start == t.size()) return false;
  for (std::size_t k = start; k < t.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(t[k]))) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(t.c_str(), &end, 10);
  return errno == 0 && end == t.c_str() + t.size();
}

MooreShape parse_moore(const std::string& text, std::int64_t max_offsets, const std::string& name) {
  auto colon = text.find(':');
  long long dims = 0;
  long long radius = 0;
  if (colon == std::string::npos || !parse_strict_integer(text.substr(0, colon), dims) ||
      !parse_strict_integer(text.substr(colon + 1), radius))
    throw Error(name + ": expected D:R (dimension and radius, e.g. 3:1), got " + quoted(text));
  const std::string where = name + " " + text + ": ";
  if (dims < 1) throw Error(where + "dimension D must be >= 1");
  if (radius < 0) throw Error(where + "radius R must be >= 0");
  if (dims > 64) throw Error(where + "at most 64 dimensions are supported");
  if (radius > INT_MAX / 2 - 1) throw Error(where + "radius is too large");
  MooreShape shape{static_cast<int>(dims), static_cast<int>(radius)};
  if (moore_size(shape, true) > max_offsets)
    throw Error(where + "the neighborhood would have " +
                (moore_size(shape, true) == std::numeric_limits<std::int64_t>::max()
                     ? std::string("more than 9e18")
                     : std::to_string(moore_size(shape, true))) +
                " offsets; at most " + std::to_string(max_offsets) + " are supported");
  return shape;
}

std::int64_t moore_size(const MooreShape& shape, bool include_self) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::int64_t width = 2 * static_cast<std::int64_t>(shape.radius) + 1;
  std::int64_t size = 1;
  for (int j = 0; j < shape.dims; ++j) {
    if (size > max / width) return max;
    size *= width;
  }
  return include_self ? size : size - 1;
}

OffsetList read_offsets_file(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) throw Error(name + " " + path + ": cannot open the file");
  OffsetList offsets;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    // Blanks separate coordinates too: "1 0 -1" reads like "1,0,-1".
    std::string text;
    bool pending_blank = false;
    for (char c : trim_blanks(line)) {
      if (c == ' ' || c == '\t' || c == '\r') {
        pending_blank = true;
        continue;
      }
      if (pending_blank && !text.empty() && text.back() != ',' && c != ',') text += ',';
      pending_blank = false;
      text += c;
    }
    if (text.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (text.find(';') != std::string::npos)
      throw Error(where + "one offset per line (no ';'), got " + quoted(trim_blanks(line)));
    OffsetList one;
    try {
      one = OffsetList::parse(text);
    } catch (const Error& error) {
      throw Error(where + error.what());
    }
    if (offsets.dims() != 0 && one.dims() != offsets.dims())
      throw Error(where + "offset " + quoted(trim_blanks(line)) + " has " + std::to_string(one.dims()) +
                  " coordinates, the first offset has " + std::to_string(offsets.dims()));
    try {
      offsets.push_back(std::vector<int>(one[0], one[0] + one.dims()));
    } catch (const Error& error) {
      throw Error(where + error.what());
    }
  }
  if (offsets.dims() == 0) throw Error(name + " " + path + ": no offsets in the file");
  return offsets;
}

OffsetList octant_offsets(int dims, int radius) {
  OffsetList out(dims, {});
  for_each_box(dims, 0, radius, [&](const std::vector<int>& x) {
    if (std::any_of(x.begin(), x.end(), [](int c) { return c != 0; })) out.push_back(x);
  });
  return out;
}

OffsetList shales_offsets(int dims, const std::vector<int>& radii) {
  OffsetList out(dims, {});
  for (int r : radii)
    for_each_box(dims, -1, 1, [&](const std::vector<int>& unit) {
      if (std::all_of(unit.begin(), unit.end(), [](int c) { return c == 0; })) return;
      std::vector<int> x(unit);
      for (int& c : x) c *= r;
      out.push_back(x);
    });
  return out;
}

OffsetList shells_offsets(int dims, const std::vector<int>& radii) {
  OffsetList out(dims, {});
  for (int r : radii)
    for_each_box(dims, -r, r, [&](const std::vector<int>& x) {
      int chebyshev = 0;
      for (int c : x) chebyshev = std::max(chebyshev, std::abs(c));
      if (chebyshev == r) out.push_back(x);
    });
  return out;
}

std::vector<NamedOffsets> expand_named_offsets(const std::string& spec, const std::string& file_name) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::vector<std::string> args = rest.empty() ? std::vector<std::string>{} : split(rest, ':');
  const std::string named = "neighborhood " + quoted(spec);

  if (kind == "file") {
    if (rest.empty()) throw Error("neighborhood \"file:PATH\" needs a path");
    OffsetList offsets = read_offsets_file(rest, file_name);
    std::string stem = rest.substr(rest.find_last_of('/') == std::string::npos ? 0 : rest.find_last_of('/') + 1);
    if (const auto dot = stem.find('.'); dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
    for (char& c : stem)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return {{"file-" + stem, "offsets from " + rest, std::move(offsets)}};
  }
  if (kind == "offsets") {
    if (rest.empty()) throw Error("neighborhood \"offsets:LIST\" needs offsets, e.g. offsets:1,0;0,1");
    OffsetList offsets;
    try {
      offsets = OffsetList::parse(rest);
    } catch (const std::exception& error) {
      throw Error(named + ": " + error.what());
    }
    if (offsets.size() == 0) throw Error(named + " has no offsets");
    return {{"offsets-d" + std::to_string(offsets.dims()) + "-s" + std::to_string(offsets.size()),
             "offsets " + rest, std::move(offsets)}};
  }
  if (kind == "moore") {
    if (args.size() > 2) throw Error(named + ": use moore, moore:D or moore:D:R");
    std::vector<int> dims = {2, 3, 4, 5};
    std::vector<int> radii = {1, 2, 3};
    if (!args.empty()) dims = {parse_argument(args[0], spec, 1, 16, "dimension")};
    if (args.size() == 2) radii = {parse_argument(args[1], spec, 1, 1000, "radius")};
    std::vector<NamedOffsets> out;
    for (int d : dims)
      for (int r : radii) {
        check_count(power(2 * r + 1, d), spec);
        out.push_back(moore_named(d, r));
      }
    return out;
  }
  if (kind == "octant") {
    if (args.size() != 0 && args.size() != 2) throw Error(named + ": use octant or octant:D:R");
    const int d = args.empty() ? 3 : parse_argument(args[0], spec, 1, 16, "dimension");
    const int r = args.empty() ? 3 : parse_argument(args[1], spec, 1, 1000, "radius");
    check_count(power(r + 1, d), spec);
    return {{"octant-d" + std::to_string(d) + "-r" + std::to_string(r),
             "positive octant d=" + std::to_string(d) + " r=" + std::to_string(r), octant_offsets(d, r)}};
  }
  if (kind == "shales" || kind == "shells") {
    const bool full = kind == "shells";
    if (args.size() > 2 || (full && args.size() != 2))
      throw Error(named + ": use " + (full ? "shells:D:R1,R2,..." : "shales, shales:D or shales:D:R1,R2,..."));
    const int d = args.empty() ? 3 : parse_argument(args[0], spec, 1, 16, "dimension");
    const std::vector<int> radii = args.size() == 2 ? parse_radii(args[1], spec) : std::vector<int>{3, 7};
    std::int64_t count = 0;
    for (int r : radii) count += full ? power(2 * r + 1, d) : power(3, d);
    check_count(count, spec);
    return {{kind + "-d" + std::to_string(d) + "-" + join(radii, "-"),
             std::string(full ? "full shells" : "shales") + " d=" + std::to_string(d) + " at Chebyshev distances " +
                 join(radii, ","),
             full ? shells_offsets(d, radii) : shales_offsets(d, radii)}};
  }
  throw Error("unknown neighborhood " + quoted(spec) +
              "; use moore[:D[:R]], octant[:D:R], shales[:D[:R1,R2]], shells:D:R1,R2, file:PATH or offsets:LIST");
}

}  // namespace iso
