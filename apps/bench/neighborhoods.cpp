#include "neighborhoods.hpp"

#include "isostencil/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>

namespace isobench {

namespace {

using isostencil::UsageError;

constexpr std::int64_t max_offsets = 1'000'000;

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

int parse_int(const std::string& text, const std::string& spec, int low, int high, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high)
    throw UsageError(fmt::format("neighborhood \"{}\": {} \"{}\" is not an integer in [{}, {}]", spec,
                                 what, text, low, high));
  return static_cast<int>(value);
}

std::vector<int> parse_radii(const std::string& text, const std::string& spec) {
  std::vector<int> radii;
  for (const std::string& part : split(text, ','))
    radii.push_back(parse_int(part, spec, 1, 1 << 20, "radius"));
  std::sort(radii.begin(), radii.end());
  if (std::adjacent_find(radii.begin(), radii.end()) != radii.end())
    throw UsageError(fmt::format("neighborhood \"{}\": a radius is repeated", spec));
  return radii;
}

std::int64_t power(std::int64_t base, int exponent) {
  std::int64_t out = 1;
  for (int k = 0; k < exponent; ++k) {
    if (out > max_offsets * 16 / std::max<std::int64_t>(base, 1)) return max_offsets * 16;
    out *= base;
  }
  return out;
}

void check_count(std::int64_t count, const std::string& spec) {
  if (count > max_offsets)
    throw UsageError(fmt::format("neighborhood \"{}\" has more than {} offsets", spec, max_offsets));
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

NamedNeighborhood moore(int d, int r) {
  return {fmt::format("moore-d{}-r{}", d, r), fmt::format("Moore d={} r={}", d, r),
          iso::OffsetList::moore(d, r)};
}

}  // namespace

int nonzero_coordinates(const iso::OffsetList& offsets, int i) {
  int count = 0;
  for (int j = 0; j < offsets.dims(); ++j) count += offsets[i][j] != 0;
  return count;
}

iso::OffsetList octant_offsets(int dims, int radius) {
  iso::OffsetList out(dims, {});
  for_each_box(dims, 0, radius, [&](const std::vector<int>& x) {
    if (std::any_of(x.begin(), x.end(), [](int c) { return c != 0; })) out.push_back(x);
  });
  return out;
}

iso::OffsetList shales_offsets(int dims, const std::vector<int>& radii) {
  iso::OffsetList out(dims, {});
  for (int r : radii)
    for_each_box(dims, -1, 1, [&](const std::vector<int>& unit) {
      if (std::all_of(unit.begin(), unit.end(), [](int c) { return c == 0; })) return;
      std::vector<int> x(unit);
      for (int& c : x) c *= r;
      out.push_back(x);
    });
  return out;
}

iso::OffsetList shells_offsets(int dims, const std::vector<int>& radii) {
  iso::OffsetList out(dims, {});
  for (int r : radii)
    for_each_box(dims, -r, r, [&](const std::vector<int>& x) {
      int chebyshev = 0;
      for (int c : x) chebyshev = std::max(chebyshev, std::abs(c));
      if (chebyshev == r) out.push_back(x);
    });
  return out;
}

std::vector<NamedNeighborhood> expand_neighborhood(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::vector<std::string> args = rest.empty() ? std::vector<std::string>{} : split(rest, ':');

  if (kind == "file") {
    if (rest.empty()) throw UsageError("neighborhood \"file:PATH\" needs a path");
    iso::OffsetList offsets = isostencil::read_offsets_file(rest);
    std::string stem = rest.substr(rest.find_last_of('/') == std::string::npos ? 0 : rest.find_last_of('/') + 1);
    if (const auto dot = stem.find('.'); dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
    for (char& c : stem)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return {{"file-" + stem, "offsets from " + rest, std::move(offsets)}};
  }
  if (kind == "offsets") {
    if (rest.empty()) throw UsageError("neighborhood \"offsets:LIST\" needs offsets, e.g. offsets:1,0;0,1");
    iso::OffsetList offsets;
    try {
      offsets = iso::OffsetList::parse(rest);
    } catch (const std::exception& error) {
      throw UsageError(fmt::format("neighborhood \"{}\": {}", spec, error.what()));
    }
    if (offsets.size() == 0) throw UsageError(fmt::format("neighborhood \"{}\" has no offsets", spec));
    return {{fmt::format("offsets-d{}-s{}", offsets.dims(), offsets.size()), "offsets " + rest,
             std::move(offsets)}};
  }
  if (kind == "moore") {
    if (args.size() > 2) throw UsageError(fmt::format("neighborhood \"{}\": use moore, moore:D or moore:D:R", spec));
    std::vector<int> dims = {2, 3, 4, 5};
    std::vector<int> radii = {1, 2, 3};
    if (!args.empty()) dims = {parse_int(args[0], spec, 1, 16, "dimension")};
    if (args.size() == 2) radii = {parse_int(args[1], spec, 1, 1000, "radius")};
    std::vector<NamedNeighborhood> out;
    for (int d : dims)
      for (int r : radii) {
        check_count(power(2 * r + 1, d), spec);
        out.push_back(moore(d, r));
      }
    return out;
  }
  if (kind == "octant") {
    if (args.size() != 0 && args.size() != 2)
      throw UsageError(fmt::format("neighborhood \"{}\": use octant or octant:D:R", spec));
    const int d = args.empty() ? 3 : parse_int(args[0], spec, 1, 16, "dimension");
    const int r = args.empty() ? 3 : parse_int(args[1], spec, 1, 1000, "radius");
    check_count(power(r + 1, d), spec);
    return {{fmt::format("octant-d{}-r{}", d, r), fmt::format("positive octant d={} r={}", d, r),
             octant_offsets(d, r)}};
  }
  if (kind == "shales" || kind == "shells") {
    const bool full = kind == "shells";
    if (args.size() > 2 || (full && args.size() != 2))
      throw UsageError(fmt::format("neighborhood \"{}\": use {}", spec,
                                   full ? "shells:D:R1,R2,..." : "shales, shales:D or shales:D:R1,R2,..."));
    const int d = args.empty() ? 3 : parse_int(args[0], spec, 1, 16, "dimension");
    const std::vector<int> radii = args.size() == 2 ? parse_radii(args[1], spec) : std::vector<int>{3, 7};
    std::int64_t count = 0;
    for (int r : radii) count += full ? power(2 * r + 1, d) : power(3, d);
    check_count(count, spec);
    return {{fmt::format("{}-d{}-{}", kind, d, join(radii, "-")),
             fmt::format("{} d={} at Chebyshev distances {}", full ? "full shells" : "shales", d, join(radii, ",")),
             full ? shells_offsets(d, radii) : shales_offsets(d, radii)}};
  }
  throw UsageError(fmt::format(
      "unknown neighborhood \"{}\"; use moore[:D[:R]], octant[:D:R], shales[:D[:R1,R2]], "
      "shells:D:R1,R2, file:PATH or offsets:LIST",
      spec));
}

}  // namespace isobench
