// Text helpers of the deck library: joining, TOML quoting, floats that read
// back exactly, and the "did you mean" suggestions of unknown names.
#include "text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace isostencil::deck {

namespace detail {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? separator : "") + items[i];
  return text;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    // TOML forbids raw control characters in strings; the effective deck must parse back.
    const auto code = static_cast<unsigned char>(c);
    if ((code < 0x20 && c != '\t') || code == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(code));
      out += escape;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

namespace {

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and transpositions of neighbours ("grdi" -> "grid") cost 1 each.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  // Suggest only close matches: one edit in short words, two in longer ones.
  std::size_t best_distance = word.size() <= 4 ? 2 : 3;
  for (const std::string& candidate : candidates) {
    // A prefix of a longer key ("validate" for "validate_every") is close too.
    const bool prefix = word.size() >= 4 && candidate.compare(0, word.size(), word) == 0;
    const std::size_t distance = prefix ? 1 : edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best.empty() ? "" : " (did you mean \"" + best + "\"?)";
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace detail

std::string deck_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  // TOML wants a digit before the exponent's fraction ("1e-05" is fine, "1.e5" is not).
  return text;
}

}  // namespace isostencil::deck
