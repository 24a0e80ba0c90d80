// Input decks: schema, TOML parsing with toml++, overrides, checks, the
// effective deck, and the collective reading/checking helpers.
#include "isostencil/core/deck.hpp"

#include "isostencil/core/decomposition.hpp"

#include "iso/error.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace isostencil::core {

namespace {

constexpr int max_dims = 4;     // the driver instantiates kernels for 1 to 4 dimensions
constexpr int max_radius = 8;   // farther reaches make halos wider than useful subdomains
constexpr long max_offset = 8;  // per component of an explicit offset
constexpr std::size_t max_reported_errors = 12;

using Kind = DeckValueKind;

std::vector<DeckKey> make_schema() {
  const std::string all_dims = " (one per dimension, or one value for all)";
  std::vector<DeckKey> keys = {
      // [grid]
      {"grid", "dims", Kind::integer, "2, or the length of `extent`", "1 to 4",
       "number of dimensions", {}},
      {"grid", "extent", Kind::integers, "64 in every dimension", "each >= 1 and >= procs",
       "global cells per dimension" + all_dims, {}},
      {"grid", "periodic", Kind::booleans, "true", "true, false",
       "periodic (torus) or bounded dimension" + all_dims, {}},
      {"grid", "procs", Kind::integers, "0 (chosen by MPI_Dims_create)", "each >= 0",
       "processes per dimension; 0 entries are chosen, the others must divide the rank count" +
           all_dims,
       {}},
      // [stencil]
      {"stencil", "shape", Kind::string, "\"auto\" (jacobi: star, life: box, advection: upwind)",
       "auto, star, box, upwind, offsets",
       "the offsets each cell reads: star = 2d·r+1 points (faces only), box = (2r+1)^d "
       "points (Moore), upwind = the box's offsets on one side per dimension, offsets = "
       "the list in `offsets`",
       {}},
      {"stencil", "radius", Kind::integer, "1", "1 to 8 (life: 1)", "reach of star, box and upwind",
       {{"stencil.shape", {"star", "box", "upwind"}}}},
      {"stencil", "signs", Kind::integers,
       "advection: the side velocity comes from (-sign(velocity)); otherwise -1", "-1, 0, 1",
       "upwind: the sign of the offsets read per dimension, 0 = both sides" + all_dims,
       {{"stencil.shape", {"upwind"}}}},
      {"stencil", "offsets", Kind::offsets, "none (required with shape = \"offsets\")",
       "d integers each, |c| <= 8", "explicit offsets, e.g. [[0,0],[-1,0],[0,-1]]",
       {{"stencil.shape", {"offsets"}}}},
      {"stencil", "weights", Kind::floats,
       "star: the Laplacian (centre -2d, neighbours 1); box: the compact (Mehrstellen) "
       "Laplacian; required for upwind and offsets and for radius > 1",
       "one per offset in stencil order (star: centre, then -r..r per dimension; box: "
       "row-major), the centre's < 0",
       "jacobi: the operator L u(x) = sum_c w_c u(x + c) of -L u = f; a sweep sets "
       "u(x) = (f + sum_{c != 0} w_c u(x + c)) / (-w_0)",
       {{"kernel.name", {"jacobi"}}}},
      // [kernel]
      {"kernel", "name", Kind::string, "\"jacobi\"", "jacobi, life, advection",
       "the kernel: Jacobi iteration, Life-like automaton, upwind advection", {}},
      {"kernel", "source", Kind::floating, "0.0", "finite",
       "jacobi: the right-hand side f of -L u = f (the same in every cell)",
       {{"kernel.name", {"jacobi"}}}},
      {"kernel", "boundary", Kind::floating, "0.0", "finite",
       "jacobi: Dirichlet value of the cells beyond non-periodic sides",
       {{"kernel.name", {"jacobi"}}}},
      {"kernel", "rule", Kind::string, "\"B3/S23\" (Conway)", "B{births}/S{survivals}",
       "life: birth and survival counts (\"B36/S23\", \"B5,6/S4-7\"); counts up to 3^d - 1",
       {{"kernel.name", {"life"}}}},
      {"kernel", "velocity", Kind::floats, "1.0 in every dimension", "finite, not all 0",
       "advection: velocity in cells per unit time" + all_dims, {{"kernel.name", {"advection"}}}},
      {"kernel", "courant", Kind::floating, "0.5", "0 < courant <= 1",
       "advection: time step as sum_j |v_j| dt (the stable range of the upwind scheme)",
       {{"kernel.name", {"advection"}}}},
      // [init]
      {"init", "type", Kind::string,
       "\"auto\" (jacobi: constant, life: random, advection: gaussian)",
       "auto, constant, random, pattern, gaussian",
       "initial condition; every one is a function of the global index, so it does not "
       "depend on the decomposition (pattern: life only; gaussian: jacobi, advection)",
       {}},
      {"init", "value", Kind::floating, "0.0", "life: 0 or 1", "constant: the value of every cell",
       {{"init.type", {"constant"}}}},
      {"init", "density", Kind::floating, "0.5", "0 to 1",
       "random (life): probability that a cell is alive",
       {{"init.type", {"random"}}, {"kernel.name", {"life"}}}},
      {"init", "low", Kind::floating, "0.0", "<= high",
       "random (jacobi, advection): values uniform in [low, high)",
       {{"init.type", {"random"}}, {"kernel.name", {"jacobi", "advection"}}}},
      {"init", "high", Kind::floating, "1.0", ">= low", "random (jacobi, advection): see low",
       {{"init.type", {"random"}}, {"kernel.name", {"jacobi", "advection"}}}},
      {"init", "seed", Kind::integer, "1", ">= 0",
       "random: seed; cell values are a hash of seed and global index",
       {{"init.type", {"random"}}}},
      {"init", "pattern", Kind::string, "none (required with type = \"pattern\")",
       "an RLE file", "pattern: Life pattern file, relative to the deck's directory",
       {{"init.type", {"pattern"}}}},
      {"init", "offset", Kind::integers, "the pattern centred in the grid", "inside the grid",
       "pattern: global index of the pattern's first cell (RLE: row, column)" + all_dims,
       {{"init.type", {"pattern"}}}},
      {"init", "center", Kind::floats, "the middle of the grid", "finite",
       "gaussian: centre in cells (cell i has coordinate i)" + all_dims,
       {{"init.type", {"gaussian"}}}},
      {"init", "width", Kind::floating, "the smallest extent / 8", "> 0",
       "gaussian: standard deviation in cells", {{"init.type", {"gaussian"}}}},
      {"init", "amplitude", Kind::floating, "1.0", "finite", "gaussian: peak value",
       {{"init.type", {"gaussian"}}}},
      // [run]
      {"run", "steps", Kind::integer, "100", ">= 0",
       "last step (a restart continues up to it)", {}},
      {"run", "tolerance", Kind::floating, "0.0 (run all steps)", ">= 0",
       "jacobi: stop once the residual max|f + L u| is at most this (checked every "
       "residual_every steps)",
       {{"kernel.name", {"jacobi"}}}},
      {"run", "residual_every", Kind::integer, "10", ">= 1",
       "compute the residual (jacobi), live cells (life) or mass (advection) and print a "
       "progress line every N steps",
       {}},
      {"run", "overlap", Kind::boolean, "true", "true, false",
       "update the cells that read no ghost while the halo exchange is in flight", {}},
      // [halo]
      {"halo", "algorithm", Kind::string, "\"auto\"", iso::algorithm_names(iso::AlgorithmNames::auto_first),
       "halo exchange schedule; auto lets the cost model choose (the summary says what it chose)",
       {}},
      {"halo", "validate_every", Kind::integer, "0 (never)", ">= 0",
       "the exchanges of steps 0, N, 2N, ... also run the naive reference exchange and "
       "compare every ghost cell; a mismatch stops the run with the report (exit code 1)",
       {}},
      // [output]
      {"output", "dir", Kind::string, "\"output\"", "a writable directory (created)",
       "where fields, checkpoints and the summary go (relative to the working directory)", {}},
      {"output", "name", Kind::string, "the deck file's name without .toml (\"default\")",
       "no '/'", "file name stem: dir/name.h5, .xmf, .checkpoint.h5, .summary.json", {}},
      {"output", "format", Kind::string, "\"hdf5\"", "hdf5, none",
       "field output: parallel HDF5 plus an XDMF time series (2-D and 3-D), or none", {}},
      {"output", "every", Kind::integer, "0 (the final state only)", ">= 0",
       "write the fields at step 0, every N steps and at the end (ignored with format = \"none\")",
       {}},
      {"output", "checkpoint_every", Kind::integer, "0 (never)", ">= 0",
       "write a checkpoint every N steps (atomically: temporary file, then rename)", {}},
  };
  return keys;
}

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

/// Shortest text that reads back as the same double, in TOML syntax.
std::string format_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  // TOML wants a digit before the exponent's fraction ("1e-05" is fine, "1.e5" is not).
  return text;
}

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

/// The schema, extended by register_deck_kernel (registration happens at
/// start-up, before any deck is read).
std::vector<DeckKey>& schema_storage() {
  static std::vector<DeckKey> schema = make_schema();
  return schema;
}

std::vector<DeckKernel>& registered_kernels() {
  static std::vector<DeckKernel> kernels;
  return kernels;
}

const std::vector<std::string>& builtin_kernels() {
  static const std::vector<std::string> names = {"jacobi", "life", "advection"};
  return names;
}

const DeckKey* find_key(const std::string& table, const std::string& key) {
  for (const DeckKey& entry : deck_schema())
    if (entry.table == table && entry.key == key) return &entry;
  return nullptr;
}

std::vector<std::string> table_names() {
  std::vector<std::string> names;
  for (const DeckKey& entry : deck_schema())
    if (std::find(names.begin(), names.end(), entry.table) == names.end())
      names.push_back(entry.table);
  return names;
}

std::vector<std::string> keys_of(const std::string& table) {
  std::vector<std::string> names;
  for (const DeckKey& entry : deck_schema())
    if (entry.table == table) names.push_back(entry.key);
  return names;
}

const char* node_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

/// The raw value of one key, converted to its schema kind.
struct RawValue {
  std::optional<long> integer;
  std::optional<double> floating;
  std::optional<bool> boolean;
  std::optional<std::string> string;
  std::vector<long> integers;
  std::vector<double> floats;
  std::vector<bool> booleans;
  bool scalar_list = false;  // a list key given as one value: broadcast to every dimension
  std::vector<std::vector<long>> offsets;
};

/// Parses and checks a deck; errors collect in `errors_` and are thrown in
/// batches so one run of `check` reports as much as it safely can.
class DeckParser {
public:
  DeckParser(const std::string& text, const std::string& source,
             const std::vector<std::string>& overrides, const std::string& base_dir) {
    deck_.source = source;
    deck_.text = text;
    deck_.overrides = overrides;
    deck_.base_dir = base_dir.empty() ? "." : base_dir;
  }

  Deck parse() {
    toml::table root;
    try {
      root = toml::parse(std::string_view(deck_.text), std::string_view(deck_.source));
    } catch (const toml::parse_error& error) {
      const auto& begin = error.source().begin;
      throw DeckError(deck_.source + ":" + std::to_string(begin.line) + ":" +
                      std::to_string(begin.column) + ": error: TOML syntax: " +
                      std::string(error.description()));
    }
    read_tables(root);
    apply_overrides(root);
    flush();
    add_kernel_defaults(root);
    read_values(root);
    flush();
    resolve();
    flush();
    check_applicability();
    check_combinations();
    flush();
    return std::move(deck_);
  }

private:
  void error_at(const std::string& dotted, const std::string& message) {
    const auto found = deck_.locations.find(dotted);
    const DeckLocation location =
        found != deck_.locations.end() ? found->second : DeckLocation{"", 0, 0, "default"};
    errors_.push_back(location.describe(dotted) + ": error: " + message);
  }
  void error_at_node(const toml::source_region& region, const std::string& message) {
    errors_.push_back(deck_.source + ":" + std::to_string(region.begin.line) + ":" +
                      std::to_string(region.begin.column) + ": error: " + message);
  }
  void flush() {
    if (errors_.empty()) return;
    std::vector<std::string> shown(errors_.begin(),
                                   errors_.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                         errors_.size(), max_reported_errors)));
    if (errors_.size() > max_reported_errors)
      shown.push_back("(" + std::to_string(errors_.size() - max_reported_errors) +
                      " more errors not shown)");
    throw DeckError(join(shown, "\n"));
  }

  /// Unknown tables and keys, and where each known key sits in the file.
  void read_tables(const toml::table& root) {
    const std::vector<std::string> tables = table_names();
    for (auto&& [table_key, table_node] : root) {
      const std::string table_name(table_key.str());
      if (std::find(tables.begin(), tables.end(), table_name) == tables.end()) {
        error_at_node(table_key.source(),
                      (table_node.is_table() ? "unknown table [" + table_name + "]"
                                             : "key \"" + table_name +
                                                   "\" outside a table; keys belong in a table") +
                          suggestion(table_name, tables) + "; allowed tables: [" +
                          join(tables, "], [") + "]");
        continue;
      }
      const toml::table* table = table_node.as_table();
      if (!table) {
        error_at_node(table_node.source(), "\"" + table_name + "\" must be a table ([" + table_name +
                                               "]), not " + node_type_name(table_node));
        continue;
      }
      for (auto&& [key, node] : *table) {
        const std::string key_name(key.str());
        if (!find_key(table_name, key_name)) {
          const std::vector<std::string> known = keys_of(table_name);
          error_at_node(key.source(), "unknown key " + table_name + "." + key_name +
                                          suggestion(key_name, known) + "; allowed keys in [" +
                                          table_name + "]: " + join(known, ", "));
          continue;
        }
        const auto& begin = key.source().begin;
        deck_.locations[table_name + "." + key_name] =
            DeckLocation{deck_.source, static_cast<int>(begin.line), static_cast<int>(begin.column),
                         "file"};
      }
    }
  }

  /// --set table.key=value: the value is read as TOML, typed by the schema
  /// (a string key also takes bare text; a list key also takes "1,2,3").
  void apply_overrides(toml::table& root) {
    for (const std::string& item : deck_.overrides) {
      const std::size_t equals = item.find('=');
      const std::string dotted = item.substr(0, equals);
      const std::size_t dot = dotted.find('.');
      const auto fail = [&](const std::string& message) {
        errors_.push_back("--set " + item + ": error: " + message);
      };
      if (equals == std::string::npos || dot == std::string::npos) {
        fail("expected table.key=value, e.g. --set run.steps=10");
        continue;
      }
      const std::string table_name = dotted.substr(0, dot), key_name = dotted.substr(dot + 1);
      const DeckKey* entry = find_key(table_name, key_name);
      if (!entry) {
        const std::vector<std::string> tables = table_names();
        if (std::find(tables.begin(), tables.end(), table_name) == tables.end())
          fail("unknown table [" + table_name + "]" + suggestion(table_name, tables) +
               "; allowed tables: [" + join(tables, "], [") + "]");
        else
          fail("unknown key " + dotted + suggestion(key_name, keys_of(table_name)) +
               "; allowed keys in [" + table_name + "]: " + join(keys_of(table_name), ", "));
        continue;
      }
      const std::string value = item.substr(equals + 1);
      std::optional<toml::table> parsed;
      const auto try_parse = [&](const std::string& candidate) {
        try {
          const std::string document = "v = " + candidate;
          parsed = toml::parse(std::string_view(document), std::string_view("--set"));
          return true;
        } catch (const toml::parse_error&) {
          return false;
        }
      };
      const bool is_list = entry->kind == Kind::integers || entry->kind == Kind::floats ||
                           entry->kind == Kind::booleans || entry->kind == Kind::offsets;
      bool ok = try_parse(value);
      if (!ok && is_list && value.find('[') == std::string::npos) ok = try_parse("[" + value + "]");
      if (!ok && entry->kind == Kind::string) {
        parsed = toml::table{};
        parsed->insert_or_assign("v", value);
        ok = true;
      }
      if (!ok) {
        fail("cannot read \"" + value + "\" as " + to_string(entry->kind));
        continue;
      }
      toml::table* table = root[table_name].as_table();
      if (!table) {
        root.insert_or_assign(table_name, toml::table{});
        table = root[table_name].as_table();
      }
      toml::node* node = parsed->get("v");
      node->visit([&](auto&& concrete) { table->insert_or_assign(key_name, std::move(concrete)); });
      deck_.locations[dotted] = DeckLocation{"", 0, 0, "--set"};
    }
  }

  /// A registered kernel's parameters the deck leaves out take their default
  /// (parsed like a given value, so the kind checks and lists work alike).
  void add_kernel_defaults(toml::table& root) {
    const toml::node* name = root.at_path("kernel.name").node();
    if (!name || !name->is_string()) return;
    const DeckKernel* kernel = find_deck_kernel(name->as_string()->get());
    if (!kernel) return;
    toml::table* table = root["kernel"].as_table();
    if (!table) return;
    for (const DeckKernelParameter& parameter : kernel->parameters) {
      if (table->contains(parameter.key)) continue;
      const std::string document = "v = " + parameter.default_value;
      toml::table parsed = toml::parse(std::string_view(document), std::string_view("default"));
      parsed.get("v")->visit(
          [&](auto&& concrete) { table->insert_or_assign(parameter.key, std::move(concrete)); });
      deck_.locations["kernel." + parameter.key] = DeckLocation{"", 0, 0, "default"};
    }
  }

  /// Converts every given key to its kind; wrong types are errors.
  void read_values(const toml::table& root) {
    for (const DeckKey& entry : deck_schema()) {
      const toml::node* node = root.at_path(entry.table + "." + entry.key).node();
      if (!node) continue;
      const std::string dotted = entry.dotted();
      const auto wrong = [&](const std::string& what) {
        error_at(dotted, dotted + " must be " + what + ", not " + node_type_name(*node));
      };
      RawValue value;
      switch (entry.kind) {
        case Kind::integer:
          if (node->is_integer())
            value.integer = static_cast<long>(node->as_integer()->get());
          else
            wrong("an integer");
          break;
        case Kind::floating:
          if (node->is_number())
            value.floating = node->value<double>().value();
          else
            wrong("a number");
          break;
        case Kind::boolean:
          if (node->is_boolean())
            value.boolean = node->as_boolean()->get();
          else
            wrong("true or false");
          break;
        case Kind::string:
          if (node->is_string())
            value.string = node->as_string()->get();
          else
            wrong("a string");
          break;
        case Kind::integers:
        case Kind::floats:
        case Kind::booleans: {
          const char* element = entry.kind == Kind::integers ? "integer"
                                : entry.kind == Kind::floats ? "number"
                                                             : "boolean";
          const auto accept = [&](const toml::node& item) {
            if (entry.kind == Kind::integers && item.is_integer()) {
              value.integers.push_back(static_cast<long>(item.as_integer()->get()));
              return true;
            }
            if (entry.kind == Kind::floats && item.is_number()) {
              value.floats.push_back(item.value<double>().value());
              return true;
            }
            if (entry.kind == Kind::booleans && item.is_boolean()) {
              value.booleans.push_back(item.as_boolean()->get());
              return true;
            }
            return false;
          };
          if (const toml::array* array = node->as_array()) {
            bool ok = !array->empty();
            for (const toml::node& item : *array) ok = ok && accept(item);
            if (!ok)
              wrong(std::string("a non-empty array of ") + element + "s (or one " + element + ")");
          } else if (accept(*node)) {
            value.scalar_list = true;
          } else {
            wrong(std::string("an array of ") + element + "s or one " + element);
          }
          break;
        }
        case Kind::offsets: {
          const toml::array* array = node->as_array();
          bool ok = array && !array->empty();
          if (array)
            for (const toml::node& item : *array) {
              const toml::array* offset = item.as_array();
              ok = ok && offset && !offset->empty();
              std::vector<long> components;
              if (offset)
                for (const toml::node& component : *offset) {
                  ok = ok && component.is_integer();
                  if (component.is_integer())
                    components.push_back(static_cast<long>(component.as_integer()->get()));
                }
              value.offsets.push_back(components);
            }
          if (!ok) wrong("a non-empty array of integer arrays, e.g. [[1,0],[0,-1]]");
          break;
        }
      }
      values_[dotted] = value;
    }
  }

  bool given(const std::string& dotted) const { return values_.count(dotted) != 0; }
  const RawValue* raw(const std::string& dotted) const {
    const auto found = values_.find(dotted);
    return found == values_.end() ? nullptr : &found->second;
  }

  template <class T>
  std::vector<T> per_dimension(const std::string& dotted, const std::vector<T>& given_values,
                               bool scalar, T fallback, const char* /*element*/) {
    const int dims = deck_.grid.dims;
    if (!raw(dotted)) return std::vector<T>(static_cast<std::size_t>(dims), fallback);
    if (scalar) return std::vector<T>(static_cast<std::size_t>(dims), given_values.front());
    if (static_cast<int>(given_values.size()) != dims) {
      error_at(dotted, dotted + " has " + std::to_string(given_values.size()) + " " +
                           (given_values.size() == 1 ? "entry" : "entries") + " but the grid has " +
                           std::to_string(dims) + " dimension" + (dims == 1 ? "" : "s") +
                           dims_origin() + "; give one per dimension or a single value");
      return std::vector<T>(static_cast<std::size_t>(dims), given_values.front());
    }
    return given_values;
  }

  std::string dims_origin() const {
    if (given("grid.dims")) return " (grid.dims = " + std::to_string(deck_.grid.dims) + ")";
    if (dims_from_.empty()) return " (the default grid.dims)";
    return " (from " + dims_from_ + ")";
  }

  std::string string_or(const std::string& dotted, const std::string& fallback) const {
    const RawValue* value = raw(dotted);
    return value && value->string ? *value->string : fallback;
  }
  double float_or(const std::string& dotted, double fallback) const {
    const RawValue* value = raw(dotted);
    return value && value->floating ? *value->floating : fallback;
  }
  long int_or(const std::string& dotted, long fallback) const {
    const RawValue* value = raw(dotted);
    return value && value->integer ? *value->integer : fallback;
  }

  void check_choice(const std::string& dotted, const std::string& value,
                    const std::vector<std::string>& allowed) {
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
      error_at(dotted, dotted + " = " + quoted(value) + " is not allowed" +
                           suggestion(value, allowed) + "; allowed: " + join(allowed, ", "));
  }
  void check_range(const std::string& dotted, double value, double low, double high,
                   const std::string& allowed_text) {
    if (!(value >= low && value <= high))
      error_at(dotted, dotted + " = " + format_double(value) + " is out of range; allowed: " +
                           allowed_text);
  }
  void check_at_least(const std::string& dotted, long value, long low) {
    if (value < low)
      error_at(dotted, dotted + " = " + std::to_string(value) + " is out of range; allowed: >= " +
                           std::to_string(low));
  }

  /// Values with their defaults; "auto" and kernel-dependent defaults resolved.
  void resolve() {
    Deck& d = deck_;
    // [kernel] first: defaults elsewhere depend on it.
    d.kernel.name = string_or("kernel.name", "jacobi");
    std::vector<std::string> kernel_names = builtin_kernels();
    for (const DeckKernel& registered : registered_kernels()) kernel_names.push_back(registered.name);
    check_choice("kernel.name", d.kernel.name, kernel_names);
    const DeckKernel* user_kernel = find_deck_kernel(d.kernel.name);

    // [grid]
    const RawValue* extent = raw("grid.extent");
    const RawValue* periodic = raw("grid.periodic");
    const RawValue* procs = raw("grid.procs");
    if (given("grid.dims")) {
      d.grid.dims = static_cast<int>(int_or("grid.dims", 2));
      if (int_or("grid.dims", 2) < 1 || int_or("grid.dims", 2) > max_dims) {
        error_at("grid.dims", "grid.dims = " + std::to_string(int_or("grid.dims", 2)) +
                                  " is out of range; allowed: 1 to " + std::to_string(max_dims));
        d.grid.dims = 2;
      }
    } else if (extent && !extent->scalar_list) {
      d.grid.dims = static_cast<int>(extent->integers.size());
      dims_from_ = "grid.extent";
    } else if (periodic && !periodic->scalar_list) {
      d.grid.dims = static_cast<int>(periodic->booleans.size());
      dims_from_ = "grid.periodic";
    } else if (procs && !procs->scalar_list) {
      d.grid.dims = static_cast<int>(procs->integers.size());
      dims_from_ = "grid.procs";
    }
    if (!given("grid.dims") && (d.grid.dims < 1 || d.grid.dims > max_dims)) {
      error_at(dims_from_, dims_from_ + " has " + std::to_string(d.grid.dims) +
                               " entries: grids have 1 to " + std::to_string(max_dims) +
                               " dimensions");
      d.grid.dims = 2;
    }
    const int dims = d.grid.dims;
    d.grid.extent = per_dimension<long>("grid.extent", extent ? extent->integers : std::vector<long>{},
                                        extent && extent->scalar_list, 64L, "entry");
    d.grid.periodic =
        per_dimension<bool>("grid.periodic", periodic ? periodic->booleans : std::vector<bool>{},
                            periodic && periodic->scalar_list, true, "entry");
    const std::vector<long> procs_long =
        per_dimension<long>("grid.procs", procs ? procs->integers : std::vector<long>{},
                            procs && procs->scalar_list, 0L, "entry");
    d.grid.procs.clear();
    for (int j = 0; j < dims; ++j) {
      const long n = d.grid.extent[static_cast<std::size_t>(j)];
      if (n < 1 || n > (1L << 40))
        error_at("grid.extent", "grid.extent[" + std::to_string(j) + "] = " + std::to_string(n) +
                                    " is out of range; allowed: 1 to 2^40");
      const long p = procs_long[static_cast<std::size_t>(j)];
      if (p < 0 || p > (1L << 24))
        error_at("grid.procs", "grid.procs[" + std::to_string(j) + "] = " + std::to_string(p) +
                                   " is out of range; allowed: 0 (chosen) or a process count");
      d.grid.procs.push_back(static_cast<int>(std::clamp(p, 0L, 1L << 24)));
      if (p > 0 && n >= 1 && p > n)
        error_at("grid.procs", "grid.procs[" + std::to_string(j) + "] = " + std::to_string(p) +
                                   " exceeds grid.extent[" + std::to_string(j) + "] = " +
                                   std::to_string(n) + ": every process needs at least one cell");
    }

    // [stencil]
    const std::string default_shape = user_kernel                    ? user_kernel->default_shape
                                      : d.kernel.name == "life"      ? "box"
                                      : d.kernel.name == "advection" ? "upwind"
                                                                     : "star";
    d.stencil.shape = string_or("stencil.shape", "auto");
    check_choice("stencil.shape", d.stencil.shape, {"auto", "star", "box", "upwind", "offsets"});
    shape_was_auto_ = d.stencil.shape == "auto";
    if (shape_was_auto_) d.stencil.shape = default_shape;
    d.stencil.radius = static_cast<int>(std::clamp(int_or("stencil.radius", 1), -1L, 1000L));
    if (d.stencil.radius < 1 || d.stencil.radius > max_radius)
      error_at("stencil.radius", "stencil.radius = " + std::to_string(int_or("stencil.radius", 1)) +
                                     " is out of range; allowed: 1 to " + std::to_string(max_radius));

    // [kernel] parameters
    d.kernel.source = float_or("kernel.source", 0.0);
    d.kernel.boundary = float_or("kernel.boundary", 0.0);
    for (const char* key : {"kernel.source", "kernel.boundary"})
      if (!std::isfinite(float_or(key, 0.0))) error_at(key, std::string(key) + " must be finite");
    d.kernel.rule = string_or("kernel.rule", "B3/S23");
    const RawValue* velocity = raw("kernel.velocity");
    d.kernel.velocity =
        per_dimension<double>("kernel.velocity", velocity ? velocity->floats : std::vector<double>{},
                              velocity && velocity->scalar_list, 1.0, "entry");
    bool any_velocity = false;
    for (const double v : d.kernel.velocity) {
      if (!std::isfinite(v)) error_at("kernel.velocity", "kernel.velocity entries must be finite");
      any_velocity = any_velocity || v != 0.0;
    }
    if (!any_velocity && d.kernel.name == "advection")
      error_at("kernel.velocity", "kernel.velocity is 0 in every dimension: nothing moves");
    d.kernel.courant = float_or("kernel.courant", 0.5);
    if (!(d.kernel.courant > 0.0 && d.kernel.courant <= 1.0))
      error_at("kernel.courant", "kernel.courant = " + format_double(d.kernel.courant) +
                                     " is out of range; allowed: 0 < courant <= 1 (the upwind "
                                     "scheme is unstable above 1)");

    if (user_kernel)
      for (const DeckKernelParameter& parameter : user_kernel->parameters) {
        const std::string dotted = "kernel." + parameter.key;
        const RawValue* value = raw(dotted);
        if (!value) continue;  // a wrong type, reported already
        DeckValue resolved_value;
        resolved_value.kind = parameter.kind;
        resolved_value.integer = value->integer.value_or(0);
        resolved_value.floating = value->floating.value_or(0.0);
        resolved_value.boolean = value->boolean.value_or(false);
        resolved_value.string = value->string.value_or(std::string());
        if (parameter.kind == Kind::integers)
          resolved_value.integers = per_dimension<long>(dotted, value->integers, value->scalar_list, 0L, "entry");
        if (parameter.kind == Kind::floats)
          resolved_value.floats = per_dimension<double>(dotted, value->floats, value->scalar_list, 0.0, "entry");
        if (parameter.kind == Kind::booleans)
          resolved_value.booleans = per_dimension<bool>(dotted, value->booleans, value->scalar_list, false, "entry");
        if (parameter.kind == Kind::floating && !std::isfinite(resolved_value.floating))
          error_at(dotted, dotted + " must be finite");
        for (const double v : resolved_value.floats)
          if (!std::isfinite(v)) error_at(dotted, dotted + " entries must be finite");
        d.kernel.parameters[parameter.key] = resolved_value;
      }

    const RawValue* signs = raw("stencil.signs");
    std::vector<long> default_signs(static_cast<std::size_t>(dims), -1L);
    if (d.kernel.name == "advection")
      for (int j = 0; j < dims; ++j) {
        const double v = d.kernel.velocity[static_cast<std::size_t>(j)];
        default_signs[static_cast<std::size_t>(j)] = v > 0 ? -1 : v < 0 ? 1 : 0;
      }
    std::vector<long> signs_long;
    if (signs)
      signs_long = per_dimension<long>("stencil.signs", signs->integers, signs->scalar_list, -1L,
                                       "entry");
    else
      signs_long = default_signs;
    d.stencil.signs.clear();
    for (const long s : signs_long) {
      if (s < -1 || s > 1)
        error_at("stencil.signs", "stencil.signs entries must be -1, 0 or 1, not " + std::to_string(s));
      d.stencil.signs.push_back(static_cast<int>(std::clamp(s, -1L, 1L)));
    }
    if (const RawValue* offsets = raw("stencil.offsets")) {
      for (const std::vector<long>& offset : offsets->offsets) {
        if (static_cast<int>(offset.size()) != dims) {
          error_at("stencil.offsets", "stencil.offsets has an offset with " +
                                          std::to_string(offset.size()) + " components but the grid has " +
                                          std::to_string(dims) + " dimensions" + dims_origin());
          break;
        }
        std::vector<int> converted;
        for (const long c : offset) {
          if (c < -max_offset || c > max_offset) {
            error_at("stencil.offsets", "stencil.offsets component " + std::to_string(c) +
                                            " is out of range; allowed: -8 to 8");
            break;
          }
          converted.push_back(static_cast<int>(c));
        }
        d.stencil.offsets.push_back(converted);
      }
    } else if (d.stencil.shape == "offsets") {
      error_at("stencil.shape", "stencil.shape = \"offsets\" needs stencil.offsets, e.g. "
                                "offsets = [[0,0],[-1,0],[0,-1]]");
    }
    if (const RawValue* weights = raw("stencil.weights")) d.stencil.weights = weights->floats;

    // [init]
    const std::string default_init = user_kernel                    ? user_kernel->default_init
                                     : d.kernel.name == "life"      ? "random"
                                     : d.kernel.name == "advection" ? "gaussian"
                                                                    : "constant";
    d.init.type = string_or("init.type", "auto");
    check_choice("init.type", d.init.type, {"auto", "constant", "random", "pattern", "gaussian"});
    if (d.init.type == "auto") d.init.type = default_init;
    d.init.value = float_or("init.value", 0.0);
    d.init.density = float_or("init.density", 0.5);
    check_range("init.density", d.init.density, 0.0, 1.0, "0 to 1");
    d.init.low = float_or("init.low", 0.0);
    d.init.high = float_or("init.high", 1.0);
    if (!std::isfinite(d.init.low) || !std::isfinite(d.init.high) || d.init.low > d.init.high)
      error_at(given("init.low") ? "init.low" : "init.high",
               "init.low = " + format_double(d.init.low) + " and init.high = " +
                   format_double(d.init.high) + ": need finite low <= high");
    const long seed = int_or("init.seed", 1);
    check_at_least("init.seed", seed, 0);
    d.init.seed = static_cast<std::uint64_t>(std::max(seed, 0L));
    d.init.pattern = string_or("init.pattern", "");
    if (d.init.type == "pattern" && d.init.pattern.empty())
      error_at(given("init.type") ? "init.type" : "kernel.name",
               "init.type = \"pattern\" needs init.pattern (an RLE file)");
    if (const RawValue* offset = raw("init.offset"))
      d.init.offset = per_dimension<long>("init.offset", offset->integers, offset->scalar_list, 0L,
                                          "entry");
    std::vector<double> middle;
    long smallest = std::numeric_limits<long>::max();
    for (const long n : d.grid.extent) {
      middle.push_back(static_cast<double>(n - 1) / 2.0);
      smallest = std::min(smallest, n);
    }
    const RawValue* center = raw("init.center");
    d.init.center = center ? per_dimension<double>("init.center", center->floats,
                                                   center->scalar_list, 0.0, "entry")
                           : middle;
    d.init.width = float_or("init.width", std::max(1.0, static_cast<double>(smallest) / 8.0));
    if (!(d.init.width > 0.0) || !std::isfinite(d.init.width))
      error_at("init.width", "init.width = " + format_double(d.init.width) +
                                 " is out of range; allowed: > 0");
    d.init.amplitude = float_or("init.amplitude", 1.0);
    if (!std::isfinite(d.init.amplitude) || !std::isfinite(d.init.value))
      error_at(given("init.value") ? "init.value" : "init.amplitude", "values must be finite");

    // [run]
    d.run.steps = int_or("run.steps", 100);
    check_at_least("run.steps", d.run.steps, 0);
    d.run.tolerance = float_or("run.tolerance", 0.0);
    if (!(d.run.tolerance >= 0.0) || !std::isfinite(d.run.tolerance))
      error_at("run.tolerance", "run.tolerance = " + format_double(d.run.tolerance) +
                                    " is out of range; allowed: >= 0");
    d.run.residual_every = int_or("run.residual_every", 10);
    check_at_least("run.residual_every", d.run.residual_every, 1);
    const RawValue* overlap = raw("run.overlap");
    d.run.overlap = overlap && overlap->boolean ? *overlap->boolean : true;

    // [halo]
    d.halo.algorithm = string_or("halo.algorithm", "auto");
    std::vector<std::string> algorithms{"auto"};  // the default first, as the key table shows
    for (const iso::AlgorithmInfo& info : iso::algorithm_table())
      if (info.algorithm != iso::Algorithm::automatic) algorithms.emplace_back(info.name);
    check_choice("halo.algorithm", d.halo.algorithm, algorithms);
    d.halo.validate_every = int_or("halo.validate_every", 0);
    check_at_least("halo.validate_every", d.halo.validate_every, 0);

    // [output]
    d.output.dir = string_or("output.dir", "output");
    if (d.output.dir.empty()) error_at("output.dir", "output.dir must not be empty");
    d.output.name = string_or("output.name", default_name());
    if (d.output.name.empty() || d.output.name.find('/') != std::string::npos ||
        d.output.name == "." || d.output.name == "..")
      error_at("output.name", "output.name = " + quoted(d.output.name) +
                                  " is not a file name stem (non-empty, no '/')");
    d.output.format = string_or("output.format", "hdf5");
    check_choice("output.format", d.output.format, {"hdf5", "none"});
    d.output.every = int_or("output.every", 0);
    check_at_least("output.every", d.output.every, 0);
    d.output.checkpoint_every = int_or("output.checkpoint_every", 0);
    check_at_least("output.checkpoint_every", d.output.checkpoint_every, 0);
  }

  std::string default_name() const {
    std::string name = deck_.source;
    const std::size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0)
      name.resize(name.size() - 5);
    if (name.empty() || name.front() == '<') return "default";
    return name;
  }

  /// The resolved value of a key that conditions others.
  std::string resolved(const std::string& dotted) const {
    if (dotted == "kernel.name") return deck_.kernel.name;
    if (dotted == "stencil.shape") return deck_.stencil.shape;
    if (dotted == "init.type") return deck_.init.type;
    if (dotted == "output.format") return deck_.output.format;
    return {};
  }

  void check_applicability() {
    for (const DeckKey& entry : deck_schema()) {
      const std::string dotted = entry.dotted();
      if (!given(dotted)) continue;
      for (const auto& [condition, values] : entry.applies) {
        const std::string actual = resolved(condition);
        if (std::find(values.begin(), values.end(), actual) != values.end()) continue;
        std::vector<std::string> quoted_values;
        for (const std::string& value : values) quoted_values.push_back(quoted(value));
        error_at(dotted, dotted + " applies only with " + condition + " = " +
                             join(quoted_values, " or ") + "; this deck has " + condition + " = " +
                             quoted(actual) + "; remove the key or change " + condition);
        break;
      }
    }
  }

  /// Combinations no kernel can run.
  void check_combinations() {
    Deck& d = deck_;
    const int dims = d.grid.dims;
    if (d.kernel.name == "life" && (d.stencil.shape != "box" || d.stencil.radius != 1)) {
      const std::string key = d.stencil.shape != "box" ? "stencil.shape" : "stencil.radius";
      error_at(key, "kernel.name = \"life\" counts the Moore neighborhood: it needs "
                    "stencil.shape = \"box\" (or \"auto\") with radius 1; this deck has shape = " +
                        quoted(d.stencil.shape) + ", radius = " + std::to_string(d.stencil.radius));
    }
    if (d.kernel.name == "advection") {
      if (d.stencil.shape != "upwind") {
        error_at("stencil.shape", "kernel.name = \"advection\" is the first-order upwind scheme: "
                                  "it needs stencil.shape = \"upwind\" (or \"auto\"); this deck has " +
                                      quoted(d.stencil.shape));
      } else {
        if (d.stencil.radius != 1)
          error_at("stencil.radius", "kernel.name = \"advection\" reads one cell upwind: it needs "
                                     "stencil.radius = 1; this deck has " +
                                         std::to_string(d.stencil.radius));
        for (int j = 0; j < dims; ++j) {
          const double v = d.kernel.velocity[static_cast<std::size_t>(j)];
          const int want = v > 0 ? -1 : v < 0 ? 1 : 0;
          const int have = d.stencil.signs[static_cast<std::size_t>(j)];
          if (have != want && !(v == 0.0)) {
            error_at("stencil.signs",
                     "stencil.signs[" + std::to_string(j) + "] = " + std::to_string(have) +
                         " reads downwind: kernel.velocity[" + std::to_string(j) + "] = " +
                         format_double(v) + " needs sign " + std::to_string(want) +
                         " (leave stencil.signs out to derive it)");
            break;
          }
        }
      }
    }
    if (d.init.type == "pattern" && d.kernel.name != "life")
      error_at("init.type", "init.type = \"pattern\" places a Life pattern: it needs "
                            "kernel.name = \"life\"; this deck has " + quoted(d.kernel.name));
    if (d.init.type == "gaussian" && d.kernel.name == "life")
      error_at("init.type", "init.type = \"gaussian\" makes a smooth field: Life cells are 0 or 1; "
                            "use \"random\", \"pattern\" or \"constant\"");
    if (d.kernel.name == "life" && d.init.type == "constant" && d.init.value != 0.0 &&
        d.init.value != 1.0)
      error_at("init.value", "init.value = " + format_double(d.init.value) +
                                 ": Life cells are 0 (dead) or 1 (alive)");
    if (!d.init.offset.empty())
      for (int j = 0; j < dims; ++j) {
        const long o = d.init.offset[static_cast<std::size_t>(j)];
        if (o < 0 || o >= d.grid.extent[static_cast<std::size_t>(j)]) {
          error_at("init.offset", "init.offset[" + std::to_string(j) + "] = " + std::to_string(o) +
                                      " lies outside the grid (0 to " +
                                      std::to_string(d.grid.extent[static_cast<std::size_t>(j)] - 1) +
                                      ")");
          break;
        }
      }
    if (d.kernel.name == "jacobi" && d.stencil.weights.empty()) {
      if (d.stencil.shape == "upwind" || d.stencil.shape == "offsets")
        error_at("stencil.shape", "kernel.name = \"jacobi\" with stencil.shape = " +
                                      quoted(d.stencil.shape) +
                                      " needs stencil.weights (the operator; the centre's weight < 0)");
      else if (d.stencil.radius != 1)
        error_at("stencil.radius", "kernel.name = \"jacobi\" has default weights (the Laplacian) "
                                   "for radius 1 only; give stencil.weights for radius " +
                                       std::to_string(d.stencil.radius));
    }
    double weight_sum = 0.0, weight_scale = 0.0;
    for (const double w : d.stencil.weights) {
      weight_sum += w;
      weight_scale += std::fabs(w);
    }
    const bool singular =
        d.stencil.weights.empty() || std::fabs(weight_sum) <= 1e-12 * weight_scale;
    if (d.kernel.name == "jacobi" && d.kernel.source != 0.0 && singular) {
      bool all_periodic = true;
      for (const bool p : d.grid.periodic) all_periodic = all_periodic && p;
      if (all_periodic)
        error_at("kernel.source", "kernel.source = " + format_double(d.kernel.source) +
                                      " on a grid periodic in every dimension has no steady state "
                                      "(the constant mode grows each sweep); make a dimension "
                                      "non-periodic (grid.periodic) or set source = 0");
    }
    // The stencil and its weights.
    if (errors_.empty()) {
      try {
        const Stencil stencil = d.make_stencil();
        if (!d.stencil.weights.empty() &&
            static_cast<int>(d.stencil.weights.size()) != stencil.size())
          error_at("stencil.weights",
                   "stencil.weights has " + std::to_string(d.stencil.weights.size()) +
                       " entries but the " + d.stencil.shape + " stencil has " +
                       std::to_string(stencil.size()) + " offsets (" + stencil.describe() + ")");
        for (const double w : d.stencil.weights)
          if (!std::isfinite(w)) error_at("stencil.weights", "stencil.weights must be finite");
        if (d.kernel.name == "jacobi" && static_cast<int>(d.stencil.weights.size()) == stencil.size()) {
          int centres = 0;
          double centre_weight = 0.0;
          for (int i = 0; i < stencil.size(); ++i) {
            bool zero = true;
            for (int j = 0; j < dims; ++j) zero = zero && stencil.offsets()[i][j] == 0;
            if (zero) {
              ++centres;
              centre_weight = d.stencil.weights[static_cast<std::size_t>(i)];
            }
          }
          if (centres != 1 || !(centre_weight < 0.0))
            error_at("stencil.weights",
                     "kernel.name = \"jacobi\" needs the centre offset exactly once with a "
                     "negative weight (the diagonal of -L); " +
                         (centres == 0 ? std::string("the stencil has no centre offset")
                          : centres > 1 ? std::string("the centre appears ") + std::to_string(centres) + " times"
                                        : "its weight is " + format_double(centre_weight)));
        }
        if (stencil.geometry().directions.size() == 0 && d.kernel.name != "life")
          error_at(shape_was_auto_ ? "kernel.name" : "stencil.shape",
                   "the stencil reads no neighbor (only the centre): nothing to exchange");
        for (int j = 0; j < dims; ++j) {
          const long n = d.grid.extent[static_cast<std::size_t>(j)];
          const iso::HaloWidths widths = stencil.geometry().widths;
          const int width = std::max(widths.lo[static_cast<std::size_t>(j)],
                                     widths.hi[static_cast<std::size_t>(j)]);
          if (width > n) {
            error_at(given("stencil.radius") ? "stencil.radius" : "grid.extent",
                     "the stencil reaches " + std::to_string(width) + " cells in dimension " +
                         std::to_string(j) + " but grid.extent[" + std::to_string(j) + "] = " +
                         std::to_string(n));
            break;
          }
        }
      } catch (const iso::Error& error) {
        error_at("stencil.shape", std::string("invalid stencil: ") + error.what());
      }
    }
  }

  Deck deck_;
  std::vector<std::string> errors_;
  std::map<std::string, RawValue> values_;
  std::string dims_from_;
  bool shape_was_auto_ = false;
};

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

const char* to_string(DeckValueKind kind) {
  switch (kind) {
    case Kind::integer: return "integer";
    case Kind::floating: return "float";
    case Kind::boolean: return "boolean";
    case Kind::string: return "string";
    case Kind::integers: return "integer list";
    case Kind::floats: return "float list";
    case Kind::booleans: return "boolean list";
    case Kind::offsets: return "offset list";
  }
  return "value";
}

std::string DeckKey::applies_text() const {
  std::vector<std::string> parts;
  for (const auto& [condition, values] : applies) {
    std::vector<std::string> quoted_values;
    for (const std::string& value : values) quoted_values.push_back(value);
    parts.push_back(condition + " = " + join(quoted_values, ", "));
  }
  return join(parts, "; ");
}

const std::vector<DeckKey>& deck_schema() { return schema_storage(); }

std::string deck_schema_markdown() {
  std::ostringstream out;
  std::string table;
  for (const DeckKey& entry : deck_schema()) {
    if (entry.table != table) {
      table = entry.table;
      out << (out.tellp() > 0 ? "\n" : "") << "`[" << table << "]`\n\n"
          << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    }
    std::string meaning = entry.meaning;
    if (!entry.applies.empty()) meaning += " (only with " + entry.applies_text() + ")";
    // A '|' inside a cell would end it.
    const auto cell = [](std::string text) {
      for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
        text.replace(at, 1, "\\|");
      return text;
    };
    out << "| `" << entry.key << "` | " << to_string(entry.kind) << " | " << cell(entry.default_value)
        << " | " << cell(entry.allowed) << " | " << cell(meaning) << " |\n";
  }
  return out.str();
}

void register_deck_kernel(const DeckKernel& kernel) {
  const std::string where = "isostencil::core::register_deck_kernel(\"" + kernel.name + "\")";
  bool name_ok = !kernel.name.empty();
  for (const char c : kernel.name)
    name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (!name_ok)
    throw iso::Error(where + ": a kernel name is letters, digits, '_' and '-' (and not empty)");
  if (std::find(builtin_kernels().begin(), builtin_kernels().end(), kernel.name) !=
          builtin_kernels().end() ||
      find_deck_kernel(kernel.name))
    throw iso::Error(where + ": kernel.name \"" + kernel.name + "\" is taken already");
  const std::vector<std::string> shapes = {"star", "box", "upwind", "offsets"};
  if (std::find(shapes.begin(), shapes.end(), kernel.default_shape) == shapes.end())
    throw iso::Error(where + ": default_shape \"" + kernel.default_shape +
                     "\" is not one of star, box, upwind, offsets");
  const std::vector<std::string> inits = {"constant", "random", "gaussian"};
  if (std::find(inits.begin(), inits.end(), kernel.default_init) == inits.end())
    throw iso::Error(where + ": default_init \"" + kernel.default_init +
                     "\" is not one of constant, random, gaussian");
  std::vector<DeckKey> keys;
  for (const DeckKernelParameter& parameter : kernel.parameters) {
    const std::string dotted = "kernel." + parameter.key;
    bool key_ok = !parameter.key.empty();
    for (const char c : parameter.key)
      key_ok = key_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!key_ok) throw iso::Error(where + ": parameter key \"" + parameter.key + "\" is not a bare key");
    if (find_key("kernel", parameter.key) && parameter.key != "name") {
      // Another kernel's parameter of the same name and kind: share the key.
      DeckKey* shared = nullptr;
      for (DeckKey& entry : schema_storage())
        if (entry.table == "kernel" && entry.key == parameter.key) shared = &entry;
      const bool builtin_owner =
          std::find(builtin_kernels().begin(), builtin_kernels().end(),
                    shared->applies.empty() ? std::string() : shared->applies.front().second.front()) !=
          builtin_kernels().end();
      if (builtin_owner || shared->kind != parameter.kind)
        throw iso::Error(where + ": " + dotted + " is a key of another kernel already (" +
                         shared->applies_text() + "); choose another name");
    }
    if (parameter.key == "name") throw iso::Error(where + ": kernel.name is not a parameter");
    if (parameter.kind == Kind::offsets)
      throw iso::Error(where + ": " + dotted + ": offset lists are not a parameter kind");
    // The default must read back as the parameter's kind.
    try {
      const std::string document = "v = " + parameter.default_value;
      const toml::table parsed = toml::parse(std::string_view(document), std::string_view("default"));
      const toml::node& node = *parsed.get("v");
      const auto all = [&](auto test) {
        if (const toml::array* array = node.as_array()) {
          if (array->empty()) return false;
          for (const toml::node& item : *array)
            if (!test(item)) return false;
          return true;
        }
        return test(node);
      };
      bool ok = false;
      switch (parameter.kind) {
        case Kind::integer: ok = node.is_integer(); break;
        case Kind::floating: ok = node.is_number(); break;
        case Kind::boolean: ok = node.is_boolean(); break;
        case Kind::string: ok = node.is_string(); break;
        case Kind::integers: ok = all([](const toml::node& n) { return n.is_integer(); }); break;
        case Kind::floats: ok = all([](const toml::node& n) { return n.is_number(); }); break;
        case Kind::booleans: ok = all([](const toml::node& n) { return n.is_boolean(); }); break;
        case Kind::offsets: break;
      }
      if (!ok) throw iso::Error("not " + std::string(to_string(parameter.kind)));
    } catch (const std::exception& error) {
      throw iso::Error(where + ": " + dotted + ": default_value \"" + parameter.default_value +
                       "\" is not a TOML " + to_string(parameter.kind) + " (" + error.what() + ")");
    }
    keys.push_back({"kernel", parameter.key, parameter.kind, parameter.default_value,
                    parameter.allowed, kernel.name + ": " + parameter.meaning,
                    {{"kernel.name", {kernel.name}}}});
  }
  registered_kernels().push_back(kernel);
  std::vector<DeckKey>& schema = schema_storage();
  for (DeckKey& entry : schema) {
    if (entry.dotted() == "kernel.name") {
      entry.allowed += ", " + kernel.name;
      entry.meaning += ", " + kernel.name + " (" + kernel.meaning + ")";
    }
    // Keys every floating-point kernel shares.
    const bool shared = entry.dotted() == "init.low" || entry.dotted() == "init.high" ||
                        (kernel.weights && entry.dotted() == "stencil.weights");
    for (auto& [condition, values] : entry.applies)
      if (shared && condition == "kernel.name") values.push_back(kernel.name);
  }
  // The parameters go after the last [kernel] key, so the key table stays in one piece.
  auto position = schema.begin();
  for (auto it = schema.begin(); it != schema.end(); ++it)
    if (it->table == "kernel") position = it + 1;
  for (const DeckKey& key : keys) {
    bool exists = false;
    for (DeckKey& entry : schema)
      if (entry.table == "kernel" && entry.key == key.key) {
        entry.applies.front().second.push_back(kernel.name);
        exists = true;
      }
    if (!exists) position = schema.insert(position, key) + 1;
  }
}

const DeckKernel* find_deck_kernel(const std::string& name) {
  for (const DeckKernel& kernel : registered_kernels())
    if (kernel.name == name) return &kernel;
  return nullptr;
}

const DeckValue& Deck::Kernel::parameter(const std::string& key) const {
  const auto found = parameters.find(key);
  if (found == parameters.end())
    throw iso::Error("kernel \"" + name + "\" has no parameter kernel." + key);
  return found->second;
}

std::string DeckLocation::describe(const std::string& dotted_key) const {
  if (origin == "--set") return "--set " + dotted_key;
  if (origin == "default" || file.empty()) return "default " + dotted_key;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Stencil Deck::make_stencil() const {
  const int dims = grid.dims;
  Stencil result;
  if (this->stencil.shape == "star")
    result = Stencil::star(dims, this->stencil.radius);
  else if (this->stencil.shape == "box")
    result = Stencil::box(dims, this->stencil.radius);
  else if (this->stencil.shape == "upwind")
    result = Stencil::upwind(dims, this->stencil.radius, this->stencil.signs);
  else {
    std::vector<int> flat;
    for (const std::vector<int>& offset : this->stencil.offsets)
      flat.insert(flat.end(), offset.begin(), offset.end());
    result = Stencil(iso::OffsetList(dims, flat), {}, "offsets");
  }
  if (!this->stencil.weights.empty() &&
      static_cast<int>(this->stencil.weights.size()) == result.size())
    result = result.with_weights(this->stencil.weights);
  return result;
}

iso::Algorithm Deck::algorithm() const { return iso::parse_algorithm(halo.algorithm); }

DeckLocation Deck::where(const std::string& dotted_key) const {
  const auto found = locations.find(dotted_key);
  return found != locations.end() ? found->second : DeckLocation{"", 0, 0, "default"};
}

void Deck::fail(const std::string& dotted_key, const std::string& message) const {
  throw DeckError(where(dotted_key).describe(dotted_key) + ": error: " + message);
}

std::string Deck::effective_toml() const {
  std::ostringstream out;
  const auto list = [](const auto& values, auto format) {
    std::string body = "[";
    for (std::size_t i = 0; i < values.size(); ++i) body += (i ? ", " : "") + format(values[i]);
    return body + "]";
  };
  const auto integer = [](long v) { return std::to_string(v); };
  const auto real = [](double v) { return format_double(v); };
  const auto boolean = [](bool v) { return std::string(v ? "true" : "false"); };
  out << "# effective deck (every key resolved) of " << source << "\n";
  out << "[grid]\ndims = " << grid.dims << "\nextent = " << list(grid.extent, integer)
      << "\nperiodic = " << list(grid.periodic, boolean) << "\nprocs = "
      << list(std::vector<long>(grid.procs.begin(), grid.procs.end()), integer) << "\n";
  out << "\n[stencil]\nshape = " << quoted(stencil.shape) << "\n";
  if (stencil.shape != "offsets") out << "radius = " << stencil.radius << "\n";
  if (stencil.shape == "upwind")
    out << "signs = " << list(std::vector<long>(stencil.signs.begin(), stencil.signs.end()), integer)
        << "\n";
  if (stencil.shape == "offsets") {
    out << "offsets = [";
    for (std::size_t i = 0; i < stencil.offsets.size(); ++i)
      out << (i ? ", " : "")
          << list(std::vector<long>(stencil.offsets[i].begin(), stencil.offsets[i].end()), integer);
    out << "]\n";
  }
  const DeckKernel* user_kernel = find_deck_kernel(kernel.name);
  if ((kernel.name == "jacobi" || (user_kernel && user_kernel->weights)) && !stencil.weights.empty())
    out << "weights = " << list(stencil.weights, real) << "\n";
  out << "\n[kernel]\nname = " << quoted(kernel.name) << "\n";
  if (kernel.name == "jacobi")
    out << "source = " << real(kernel.source) << "\nboundary = " << real(kernel.boundary) << "\n";
  if (kernel.name == "life") out << "rule = " << quoted(kernel.rule) << "\n";
  if (kernel.name == "advection")
    out << "velocity = " << list(kernel.velocity, real) << "\ncourant = " << real(kernel.courant)
        << "\n";
  if (user_kernel)
    for (const DeckKernelParameter& parameter : user_kernel->parameters) {
      const auto found = kernel.parameters.find(parameter.key);
      if (found == kernel.parameters.end()) continue;
      const DeckValue& v = found->second;
      out << parameter.key << " = ";
      switch (parameter.kind) {
        case Kind::integer: out << v.integer; break;
        case Kind::floating: out << real(v.floating); break;
        case Kind::boolean: out << boolean(v.boolean); break;
        case Kind::string: out << quoted(v.string); break;
        case Kind::integers: out << list(v.integers, integer); break;
        case Kind::floats: out << list(v.floats, real); break;
        case Kind::booleans: out << list(v.booleans, boolean); break;
        case Kind::offsets: break;  // refused at registration
      }
      out << "\n";
    }
  out << "\n[init]\ntype = " << quoted(init.type) << "\n";
  if (init.type == "constant") out << "value = " << real(init.value) << "\n";
  if (init.type == "random") {
    if (kernel.name == "life")
      out << "density = " << real(init.density) << "\n";
    else
      out << "low = " << real(init.low) << "\nhigh = " << real(init.high) << "\n";
    out << "seed = " << init.seed << "\n";
  }
  if (init.type == "pattern") {
    out << "pattern = " << quoted(resolve(init.pattern)) << "\n";
    if (!init.offset.empty()) out << "offset = " << list(init.offset, integer) << "\n";
  }
  if (init.type == "gaussian")
    out << "center = " << list(init.center, real) << "\nwidth = " << real(init.width)
        << "\namplitude = " << real(init.amplitude) << "\n";
  out << "\n[run]\nsteps = " << run.steps << "\n";
  if (kernel.name == "jacobi") out << "tolerance = " << real(run.tolerance) << "\n";
  out << "residual_every = " << run.residual_every << "\noverlap = " << boolean(run.overlap)
      << "\n";
  out << "\n[halo]\nalgorithm = " << quoted(halo.algorithm)
      << "\nvalidate_every = " << halo.validate_every << "\n";
  out << "\n[output]\ndir = " << quoted(output.dir) << "\nname = " << quoted(output.name)
      << "\nformat = " << quoted(output.format) << "\n";
  out << "every = " << output.every << "\n";
  out << "checkpoint_every = " << output.checkpoint_every << "\n";
  return out.str();
}

std::string Deck::resolve(const std::string& path) const {
  if (path.empty() || path.front() == '/' || base_dir.empty() || base_dir == ".") return path;
  return base_dir + "/" + path;
}

std::string Deck::output_path(const std::string& suffix) const {
  return output.dir + "/" + output.name + suffix;
}

Deck parse_deck(const std::string& text, const std::string& source,
                const std::vector<std::string>& overrides, const std::string& base_dir) {
  return DeckParser(text, source, overrides, base_dir).parse();
}

Deck deck_from_text(const std::string& text, const std::string& source,
                    const std::vector<std::string>& overrides, const std::string& base_dir) {
  return parse_deck(text, source, overrides, base_dir);
}

Deck read_deck(MPI_Comm comm, const std::string& path, const std::vector<std::string>& overrides) {
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Rank 0 reads; the text (or the error) travels as one string with a flag.
  std::string payload;
  int ok = 1;
  if (rank == 0) {
    if (path.empty()) {
      payload = builtin_default_deck();
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        ok = 0;
        payload = path + ": error: cannot read the deck: " + std::strerror(errno);
      } else {
        payload.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        if (in.bad()) {
          ok = 0;
          payload = path + ": error: reading the deck failed";
        }
      }
    }
  }
  long header[2] = {ok, static_cast<long>(payload.size())};
  ISO_MPI_CHECK(MPI_Bcast(header, 2, MPI_LONG, 0, comm));
  payload.resize(static_cast<std::size_t>(header[1]));
  if (header[1] > 0)
    ISO_MPI_CHECK(MPI_Bcast(payload.data(), static_cast<int>(header[1]), MPI_CHAR, 0, comm));
  if (header[0] == 0) throw DeckError(payload);
  if (path.empty()) return parse_deck(payload, "<built-in default>", overrides, ".");
  return parse_deck(payload, path, overrides, directory_of(path));
}

void check_decomposition(const Deck& deck, int num_procs) {
  const int dims = deck.grid.dims;
  std::vector<int> process_dims;
  try {
    process_dims = Decomposition::choose_process_dims(num_procs, deck.grid.procs);
  } catch (const iso::Error&) {
    long product = 1;
    for (const int p : deck.grid.procs) product *= p > 0 ? p : 1;
    deck.fail("grid.procs", "grid.procs fixes " + std::to_string(product) +
                                " processes, which does not divide the " + std::to_string(num_procs) +
                                " ranks of this run; use 0 entries to let MPI_Dims_create choose");
  }
  const iso::HaloWidths widths = deck.make_stencil().geometry().widths;
  for (int j = 0; j < dims; ++j) {
    const long n = deck.grid.extent[static_cast<std::size_t>(j)];
    const int p = process_dims[static_cast<std::size_t>(j)];
    if (n < p)
      deck.fail(deck.where("grid.procs").origin == "default" ? "grid.extent" : "grid.procs",
                "grid.extent[" + std::to_string(j) + "] = " + std::to_string(n) + " cells cannot go to " +
                    std::to_string(p) + " processes in that dimension (" + std::to_string(num_procs) +
                    " ranks); every process needs at least one cell");
    const long smallest = n / p;
    const int width = std::max(widths.lo[static_cast<std::size_t>(j)], widths.hi[static_cast<std::size_t>(j)]);
    if (iso::halo_misfit_dimension(iso::HaloWidths{{width}, {width}}, {p}, {deck.grid.periodic[static_cast<std::size_t>(j)]},
                                   {smallest}) == 0)
      deck.fail(deck.where("stencil.radius").origin == "default" ? "grid.extent" : "stencil.radius",
                "the stencil reaches " + std::to_string(width) + " cells in dimension " +
                    std::to_string(j) + " but the smallest subdomain there has " +
                    std::to_string(smallest) + " (grid.extent[" + std::to_string(j) + "] = " +
                    std::to_string(n) + " over " + std::to_string(p) +
                    " processes); use fewer ranks, a larger extent or a smaller radius");
  }
}

namespace {
/// Collective: the error of the lowest rank that has one ("" when none) and that rank.
std::pair<std::string, int> agree_error(MPI_Comm comm, int rank, const std::string& local) {
  int first_failing = local.empty() ? std::numeric_limits<int>::max() : rank;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT, MPI_MIN, comm));
  if (first_failing == std::numeric_limits<int>::max()) return {std::string(), -1};
  std::string error = rank == first_failing ? local : std::string();
  int length = static_cast<int>(error.size());
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first_failing, comm));
  error.resize(static_cast<std::size_t>(length));
  if (length > 0) ISO_MPI_CHECK(MPI_Bcast(error.data(), length, MPI_CHAR, first_failing, comm));
  return {error, first_failing};
}
}  // namespace

void check_output_writable(MPI_Comm comm, const Deck& deck, bool create) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::string& dir = deck.output.dir;
  // Rank 0 looks at the directory and creates it; every rank then probes it.
  std::string error;
  int state[2] = {0, 0};  // exists, ready to probe
  if (rank == 0) {
    struct stat info {};
    const bool exists = ::stat(dir.c_str(), &info) == 0;
    state[0] = exists ? 1 : 0;
    if (exists && !S_ISDIR(info.st_mode)) {
      error = "\"" + dir + "\" exists and is not a directory";
    } else if (exists) {
      state[1] = 1;
    } else if (!create) {
      // Nothing is created: the nearest existing ancestor must take a new entry.
      std::string ancestor = dir;
      while (true) {
        const std::size_t slash = ancestor.find_last_of('/');
        ancestor = slash == std::string::npos ? "." : slash == 0 ? "/" : ancestor.substr(0, slash);
        if (::stat(ancestor.c_str(), &info) == 0 || ancestor == "." || ancestor == "/") break;
      }
      if (!S_ISDIR(info.st_mode))
        error = "\"" + ancestor + "\" is not a directory";
      else if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
        error = "cannot create it in \"" + ancestor + "\": " + std::strerror(errno);
    } else {
      // mkdir -p
      std::size_t position = 0;
      while (error.empty() && position != std::string::npos) {
        position = dir.find('/', position + 1);
        const std::string partial = dir.substr(0, position);
        if (partial.empty()) continue;
        if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
          error = "cannot create directory \"" + partial + "\": " + std::strerror(errno);
      }
      state[1] = error.empty() ? 1 : 0;
    }
  }
  ISO_MPI_CHECK(MPI_Bcast(state, 2, MPI_INT, 0, comm));
  if (state[1]) {
    const std::string probe = dir + "/.isostencil-write-test." + std::to_string(rank) + "." +
                              std::to_string(static_cast<long>(::getpid()));
    std::FILE* file = std::fopen(probe.c_str(), "w");
    if (!file || std::fputs("probe\n", file) < 0)
      error = "cannot write in \"" + dir + "\": " + std::strerror(errno);
    if (file && std::fclose(file) != 0 && error.empty())
      error = "cannot write in \"" + dir + "\": " + std::strerror(errno);
    std::remove(probe.c_str());
  }
  const auto [agreed, first_failing] = agree_error(comm, rank, error);
  if (agreed.empty()) return;
  deck.fail("output.dir", "output.dir = " + quoted(dir) + ": " + agreed +
                              (size > 1 && first_failing > 0 ? " (rank " + std::to_string(first_failing) + ")" : "") +
                              (create ? "; nothing was computed" : ""));
}

}  // namespace isostencil::core
