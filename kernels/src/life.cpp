// Life-like automata: rule parsing and printing, RLE patterns, and the
// gather/reduce helpers of Life<D> that need no template.
#include "isostencil/kernels/life.hpp"

#include "iso/error.hpp"

#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>
#include <tuple>

namespace isostencil::kernels {

namespace {

constexpr const char* kRuleForm =
    "rules read B<births>/S<survivals>; a list is digits (\"23\") or comma-separated counts "
    "and ranges (\"4-7,12\")";

std::string count_limit(int dims) {
  const int max = moore_box_size(dims) - 1;
  return "counts run from 0 to " + std::to_string(max) + " in " + std::to_string(dims) + "-D (3^" +
         std::to_string(dims) + " - 1 neighbors)";
}

[[noreturn]] void rule_error(std::string_view text, std::size_t position, const std::string& what) {
  std::ostringstream message;
  message << "isostencil::kernels::LifeRule: rule \"" << text << "\", ";
  if (position < text.size())
    message << "character " << position + 1 << " ('" << text[position] << "')";
  else
    message << "at its end";
  message << ": " << what;
  throw iso::Error(message.str());
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

void set_bit(LifeRule::Mask& mask, int count) {
  mask[count / 64] |= std::uint64_t{1} << (count % 64);
}

// Reads the number at text[position...] (position must hold a digit); large
// numbers saturate rather than overflow, so the range check reports them.
int read_number(std::string_view text, std::size_t& position, std::size_t end) {
  long value = 0;
  while (position < end && is_digit(text[position])) {
    value = std::min(value * 10 + (text[position] - '0'), long{INT_MAX});
    ++position;
  }
  return static_cast<int>(value);
}

void check_count(std::string_view text, std::size_t position, int count, int dims) {
  const int max = moore_box_size(dims) - 1;
  if (count > max)
    rule_error(text, position,
               "count " + (count == INT_MAX ? std::string("too large") : std::to_string(count)) +
                   " is more than " + std::to_string(max) + ", the most neighbors a cell has in " +
                   std::to_string(dims) + "-D; " + count_limit(dims));
}

// Parses the count list text[begin, end) into `mask`.
void parse_counts(std::string_view text, std::size_t begin, std::size_t end, int dims,
                  LifeRule::Mask& mask) {
  bool separated = false;
  for (std::size_t p = begin; p < end; ++p)
    separated = separated || text[p] == ',' || text[p] == '-';
  if (!separated) {
    // Digits only: one count per digit.
    for (std::size_t p = begin; p < end; ++p) {
      if (!is_digit(text[p]))
        rule_error(
            text, p,
            std::string(is_space(text[p]) ? "whitespace inside a rule" : "unexpected character") +
                "; expected a digit, ',' or '-' (" + kRuleForm + ")");
      const int count = text[p] - '0';
      check_count(text, p, count, dims);
      set_bit(mask, count);
    }
    return;
  }
  std::size_t p = begin;
  while (true) {
    if (p >= end || !is_digit(text[p]))
      rule_error(text, p,
                 p < end && text[p] == ','   ? "empty item; expected a count between the commas"
                 : p < end && text[p] == '-' ? "a range without its first count; expected a count"
                                             : std::string("expected a count (") + kRuleForm + ")");
    const std::size_t first_position = p;
    const int first = read_number(text, p, end);
    check_count(text, first_position, first, dims);
    int last = first;
    if (p < end && text[p] == '-') {
      ++p;
      if (p >= end || !is_digit(text[p]))
        rule_error(text, p,
                   "expected the last count of the range " + std::to_string(first) + "-...");
      const std::size_t last_position = p;
      last = read_number(text, p, end);
      check_count(text, last_position, last, dims);
      if (last < first)
        rule_error(text, first_position,
                   "the range " + std::to_string(first) + "-" + std::to_string(last) +
                       " runs downward; write it " + std::to_string(last) + "-" +
                       std::to_string(first));
    }
    for (int count = first; count <= last; ++count)
      set_bit(mask, count);
    if (p >= end) return;
    if (text[p] != ',')
      rule_error(
          text, p,
          std::string(is_space(text[p]) ? "whitespace inside a rule" : "unexpected character") +
              "; expected ',' or the end of the list after a count or range");
    ++p;
    if (p >= end) rule_error(text, p, "expected a count after ','");
  }
}

// "23", or "4-7,12" (a lone count from 10 up as "12-12", which the digits
// form would read as {1, 2}).
std::string format_counts(const std::vector<int>& counts) {
  if (counts.empty()) return {};
  if (counts.back() < 10) {
    std::string digits;
    for (int c : counts)
      digits += static_cast<char>('0' + c);
    return digits;
  }
  if (counts.size() == 1) return std::to_string(counts[0]) + "-" + std::to_string(counts[0]);
  std::string text;
  for (std::size_t i = 0; i < counts.size();) {
    std::size_t j = i;
    while (j + 1 < counts.size() && counts[j + 1] == counts[j] + 1)
      ++j;
    if (!text.empty()) text += ',';
    if (j - i >= 2) {
      text += std::to_string(counts[i]) + "-" + std::to_string(counts[j]);
    } else {
      text += std::to_string(counts[i]);
      if (j > i) text += "," + std::to_string(counts[j]);
    }
    i = j + 1;
  }
  return text;
}

void check_dims(const char* where, int dims) {
  if (dims < 1 || dims > LifeRule::max_dims)
    throw iso::Error(std::string(where) + ": dims = " + std::to_string(dims) +
                     "; Life-like rules are for 1 to " + std::to_string(LifeRule::max_dims) +
                     " dimensions");
}

}  // namespace

LifeRule::LifeRule(std::string_view text, int dims) : dims_(dims) {
  check_dims("isostencil::kernels::LifeRule", dims);
  std::size_t first = 0, last = text.size();
  while (first < last && is_space(text[first]))
    ++first;
  while (last > first && is_space(text[last - 1]))
    --last;
  if (first == last)
    throw iso::Error(std::string("isostencil::kernels::LifeRule: empty rule; ") + kRuleForm +
                     ", e.g. B3/S23");
  std::size_t slash = text.size();
  for (std::size_t p = first; p < last; ++p) {
    if (text[p] != '/') continue;
    if (slash != text.size()) rule_error(text, p, std::string("a second '/'; ") + kRuleForm);
    slash = p;
  }
  if (slash == text.size())
    rule_error(
        text, last,
        std::string("no '/' between the birth and survival lists; ") + kRuleForm + ", e.g. B3/S23");
  bool seen_birth = false, seen_survival = false;
  for (auto [begin, end] : {std::pair{first, slash}, std::pair{slash + 1, last}}) {
    const char letter =
        begin < end ? static_cast<char>(std::toupper(static_cast<unsigned char>(text[begin]))) : 0;
    if (letter != 'B' && letter != 'S')
      rule_error(text, begin,
                 std::string("expected 'B' (birth counts) or 'S' (survival counts) to start a "
                             "list; ") +
                     kRuleForm);
    bool& seen = letter == 'B' ? seen_birth : seen_survival;
    if (seen)
      rule_error(text, begin,
                 std::string("a second ") + (letter == 'B' ? "birth" : "survival") +
                     " list; a rule has one B list and one S list");
    seen = true;
    parse_counts(text, begin + 1, end, dims, letter == 'B' ? birth_ : survival_);
  }
}

LifeRule LifeRule::from_counts(const std::vector<int>& births, const std::vector<int>& survivals,
                               int dims) {
  const char* where = "isostencil::kernels::LifeRule::from_counts";
  check_dims(where, dims);
  const int max = moore_box_size(dims) - 1;
  Mask birth{}, survival{};
  for (auto [counts, mask, what] :
       {std::tuple{&births, &birth, "birth"}, std::tuple{&survivals, &survival, "survival"}}) {
    for (int count : *counts) {
      if (count < 0 || count > max)
        throw iso::Error(std::string(where) + ": " + what + " count " + std::to_string(count) +
                         " is outside 0.." + std::to_string(max) + "; " + count_limit(dims));
      set_bit(*mask, count);
    }
  }
  return LifeRule(dims, birth, survival);
}

LifeRule LifeRule::conway() {
  return from_counts({3}, {2, 3}, 2);
}

std::vector<int> LifeRule::counts(const Mask& mask) {
  std::vector<int> result;
  for (int count = 0; count <= max_count; ++count)
    if (test(mask, count)) result.push_back(count);
  return result;
}

std::string LifeRule::to_string() const {
  return "B" + format_counts(birth_counts()) + "/S" + format_counts(survival_counts());
}

bool operator==(const LifeRule& a, const LifeRule& b) {
  if (a.dims_ != b.dims_) return false;
  for (int w = 0; w < LifeRule::mask_words; ++w)
    if (a.birth_[w] != b.birth_[w] || a.survival_[w] != b.survival_[w]) return false;
  return true;
}

std::ostream& operator<<(std::ostream& out, const LifeRule& rule) {
  return out << rule.to_string() << " (" << rule.dims() << "-D)";
}

// ---------------------------------------------------------------------------
// Patterns

LifePattern LifePattern::from_picture(const std::vector<std::string>& rows, std::string name) {
  LifePattern pattern;
  pattern.name = std::move(name);
  long width = 0;
  for (const std::string& row : rows)
    width = std::max(width, static_cast<long>(row.size()));
  pattern.extent = {static_cast<long>(rows.size()), width};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      const char cell = rows[r][c];
      if (cell == 'O' || cell == 'o' || cell == '*' || cell == '#') {
        pattern.cells.push_back({static_cast<long>(r), static_cast<long>(c)});
      } else if (cell != '.' && cell != 'b' && cell != ' ') {
        throw iso::Error("isostencil::kernels::LifePattern::from_picture: row " +
                         std::to_string(r) + ", column " + std::to_string(c) + ": '" +
                         std::string(1, cell) +
                         "'; alive is 'O', 'o', '*' or '#', dead is '.', 'b' or ' '");
      }
    }
  }
  return pattern;
}

LifePattern LifePattern::flipped(int dim) const {
  if (dim < 0 || dim >= dims())
    throw iso::Error("isostencil::kernels::LifePattern::flipped: dimension " + std::to_string(dim) +
                     " of a " + std::to_string(dims()) + "-D pattern");
  LifePattern result = *this;
  for (std::vector<long>& cell : result.cells)
    cell[static_cast<std::size_t>(dim)] =
        extent[static_cast<std::size_t>(dim)] - 1 - cell[static_cast<std::size_t>(dim)];
  return result;
}

namespace {

[[noreturn]] void rle_error(const std::string& source, long line, long column,
                            const std::string& what) {
  std::string where = source;
  if (line > 0) where += ":" + std::to_string(line);
  if (column > 0) where += ":" + std::to_string(column);
  throw iso::Error("isostencil::kernels::parse_rle: " + where + ": " + what);
}

std::string trim(const std::string& text) {
  std::size_t first = 0, last = text.size();
  while (first < last && is_space(text[first]))
    ++first;
  while (last > first && is_space(text[last - 1]))
    --last;
  return text.substr(first, last - first);
}

struct RleHeader {
  long width = -1, height = -1;
  std::string rule;
};

// "x = 3, y = 3, rule = B3/S23": the rule comes last and runs to the end of
// the line (rule strings may hold commas).
RleHeader parse_header(const std::string& source, long line_number, const std::string& line) {
  RleHeader header;
  std::size_t p = 0;
  const auto skip_space = [&] {
    while (p < line.size() && is_space(line[p]))
      ++p;
  };
  const auto column = [&] { return static_cast<long>(p) + 1; };
  while (true) {
    skip_space();
    const std::size_t key_start = p;
    while (p < line.size() && std::isalpha(static_cast<unsigned char>(line[p])) != 0)
      ++p;
    const std::string key = line.substr(key_start, p - key_start);
    if (key != "x" && key != "y" && key != "rule")
      rle_error(source, line_number, static_cast<long>(key_start) + 1,
                (key.empty() ? std::string("expected a header key")
                             : "unknown header key '" + key + "'") +
                    "; the header reads \"x = <columns>, y = <rows>[, rule = <rule>]\"");
    skip_space();
    if (p >= line.size() || line[p] != '=')
      rle_error(source, line_number, column(), "expected '=' after '" + key + "'");
    ++p;
    skip_space();
    if (key == "rule") {
      header.rule = trim(line.substr(p));
      if (header.rule.empty()) rle_error(source, line_number, column(), "empty rule");
      break;
    }
    const std::size_t value_start = p;
    long value = 0;
    while (p < line.size() && is_digit(line[p])) {
      value = std::min(value * 10 + (line[p] - '0'), long{1} << 40);
      ++p;
    }
    if (p == value_start)
      rle_error(source, line_number, column(),
                "expected a whole number of " + std::string(key == "x" ? "columns" : "rows") +
                    " after '" + key + " ='");
    (key == "x" ? header.width : header.height) = value;
    skip_space();
    if (p >= line.size()) break;
    if (line[p] != ',')
      rle_error(source, line_number, column(), "expected ',' between header entries");
    ++p;
  }
  if (header.width < 0 || header.height < 0)
    rle_error(source, line_number, 1,
              std::string("the header lacks '") + (header.width < 0 ? "x" : "y") +
                  " = ...'; it reads \"x = <columns>, y = <rows>[, rule = <rule>]\"");
  return header;
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

LifePattern parse_rle(std::istream& in, const std::string& source) {
  LifePattern pattern;
  pattern.name = file_name(source);
  bool have_header = false, done = false;
  RleHeader header;
  long row = 0, column = 0;
  long run = 0;
  bool run_pending = false;
  long line_number = 0;
  long last_length = 0;  // of the last line read (getline clears `line` at the end)
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    last_length = static_cast<long>(line.size());
    if (done) continue;
    if (!line.empty() && line[0] == '#') {
      if (!have_header && line.size() >= 2 && line[1] == 'N') pattern.name = trim(line.substr(2));
      continue;
    }
    if (!have_header) {
      const std::string text = trim(line);
      if (text.empty()) continue;
      if (text[0] != 'x')
        rle_error(source, line_number, static_cast<long>(line.find(text[0])) + 1,
                  "expected the header \"x = <columns>, y = <rows>[, rule = <rule>]\" before the "
                  "pattern (lines before it may only be '#' comments)");
      header = parse_header(source, line_number, line);
      pattern.rule = header.rule;
      pattern.extent = {header.height, header.width};
      have_header = true;
      continue;
    }
    for (std::size_t c = 0; c < line.size() && !done; ++c) {
      const char ch = line[c];
      const long col = static_cast<long>(c) + 1;
      if (is_digit(ch)) {
        if (!run_pending) run = 0;
        run_pending = true;
        run = run * 10 + (ch - '0');
        if (run > (long{1} << 40)) rle_error(source, line_number, col, "run count too large");
        continue;
      }
      if (is_space(ch)) continue;
      const long count = run_pending ? run : 1;
      if (run_pending && count == 0 && ch != '!')
        rle_error(source, line_number, col, "run count 0 before '" + std::string(1, ch) + "'");
      if (ch == 'b') {
        column += count;
      } else if (ch == 'o') {
        if (row >= header.height || column + count > header.width)
          rle_error(source, line_number, col,
                    "live cells at row " + std::to_string(row) + ", columns " +
                        std::to_string(column) + ".." + std::to_string(column + count - 1) +
                        " (from 0) lie outside the header's x = " + std::to_string(header.width) +
                        ", y = " + std::to_string(header.height));
        for (long k = 0; k < count; ++k)
          pattern.cells.push_back({row, column + k});
        column += count;
      } else if (ch == '$') {
        row += count;
        column = 0;
      } else if (ch == '!') {
        if (run_pending) rle_error(source, line_number, col, "a run count before '!'");
        done = true;
      } else {
        rle_error(source, line_number, col,
                  "unexpected character '" + std::string(1, ch) +
                      "'; expected a run count, 'b' (dead), 'o' (alive), '$' (end of row) or "
                      "'!' (end of pattern); only two-state patterns are read");
      }
      run_pending = false;
    }
  }
  if (!have_header)
    rle_error(source, 0, 0,
              "no header \"x = <columns>, y = <rows>[, rule = <rule>]\" (empty or only comments)");
  if (!done) rle_error(source, line_number, last_length + 1, "the pattern ends without '!'");
  return pattern;
}

LifePattern parse_rle_string(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  return parse_rle(in, source);
}

LifePattern read_rle(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw iso::Error("isostencil::kernels::read_rle: cannot open \"" + path +
                     "\": " + std::strerror(errno));
  return parse_rle(in, path);
}

// ---------------------------------------------------------------------------
// Life<D> helpers

namespace detail {

std::vector<std::uint8_t> gather_global(const core::Decomposition& decomposition,
                                        const std::vector<std::uint8_t>& local, int root) {
  const char* where = "isostencil::kernels::Life::gather";
  const int size = decomposition.num_procs();
  if (root < 0 || root >= size)
    throw iso::Error(std::string(where) + ": root " + std::to_string(root) + " is not a rank of " +
                     std::to_string(size));
  if (local.size() > static_cast<std::size_t>(INT_MAX))
    throw iso::Error(std::string(where) + ": " + std::to_string(local.size()) +
                     " local cells exceed MPI's int count; gather a smaller grid");
  MPI_Comm comm = decomposition.comm();
  const bool is_root = decomposition.rank() == root;
  const int count = static_cast<int>(local.size());
  std::vector<int> counts(is_root ? static_cast<std::size_t>(size) : 0U);
  ISO_MPI_CHECK(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm));
  std::vector<int> displacements(counts.size());
  long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > INT_MAX)
    throw iso::Error(std::string(where) + ": the global field exceeds MPI's int count");
  std::vector<std::uint8_t> all(static_cast<std::size_t>(total));
  ISO_MPI_CHECK(MPI_Gatherv(local.data(), count, MPI_UINT8_T, all.data(), counts.data(),
                            displacements.data(), MPI_UINT8_T, root, comm));
  if (!is_root) return {};

  const int dims = decomposition.dims();
  const std::vector<long>& extent = decomposition.global_extent();
  std::vector<long> global_stride(static_cast<std::size_t>(dims), 1);
  for (int j = dims - 2; j >= 0; --j)
    global_stride[static_cast<std::size_t>(j)] =
        global_stride[static_cast<std::size_t>(j + 1)] * extent[static_cast<std::size_t>(j + 1)];
  std::vector<std::uint8_t> global(static_cast<std::size_t>(global_stride[0] * extent[0]));
  std::vector<int> coords(static_cast<std::size_t>(dims));
  std::vector<int> block(static_cast<std::size_t>(dims));
  std::vector<long> offset(static_cast<std::size_t>(dims));
  std::vector<int> index(static_cast<std::size_t>(dims));
  for (int r = 0; r < size; ++r) {
    ISO_MPI_CHECK(MPI_Cart_coords(comm, r, dims, coords.data()));
    bool empty = false;
    for (std::size_t j = 0; j < coords.size(); ++j) {
      block[j] = decomposition.local_extent_of(static_cast<int>(j), coords[j]);
      offset[j] = decomposition.global_offset_of(static_cast<int>(j), coords[j]);
      empty = empty || block[j] == 0;
      index[j] = 0;
    }
    if (empty) continue;
    // The rank's cells arrive row-major over its block.
    std::size_t source = static_cast<std::size_t>(displacements[static_cast<std::size_t>(r)]);
    while (true) {
      long target = 0;
      for (std::size_t j = 0; j < index.size(); ++j)
        target += (offset[j] + index[j]) * global_stride[j];
      global[static_cast<std::size_t>(target)] = all[source++];
      int j = dims - 1;
      for (; j >= 0; --j) {
        if (++index[static_cast<std::size_t>(j)] < block[static_cast<std::size_t>(j)]) break;
        index[static_cast<std::size_t>(j)] = 0;
      }
      if (j < 0) break;
    }
  }
  return global;
}

long sum_over_ranks(MPI_Comm comm, long value) {
  long sum = 0;
  ISO_MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, comm));
  return sum;
}

void throw_life_error(const char* function, const std::string& message) {
  throw iso::Error(std::string("isostencil::kernels::Life::") + function + ": " + message);
}

std::string format_index(const long* index, int dims) {
  std::string text = "(";
  for (int j = 0; j < dims; ++j)
    text += (j > 0 ? ", " : "") + std::to_string(index[j]);
  return text + ")";
}

}  // namespace detail

}  // namespace isostencil::kernels
