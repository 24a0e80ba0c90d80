// Deck parsing, first half: the TOML text (toml++), unknown tables and keys,
// --set overrides, registered kernels' defaults, and every given value
// converted to its schema kind. The phases and their order are parse().
#include "parser.hpp"

#include "isostencil/deck/kernel.hpp"

#include "text.hpp"

#include <algorithm>
#include <cmath>

namespace isostencil::deck::detail {

namespace {
constexpr std::size_t max_reported_errors = 12;
using Kind = DeckValueKind;

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

}  // namespace

DeckParser::DeckParser(const std::string& text, const std::string& source,
                       const std::vector<std::string>& overrides, const std::string& base_dir) {
  deck_.source = source;
  deck_.text = text;
  deck_.overrides = overrides;
  deck_.base_dir = base_dir.empty() ? "." : base_dir;
}

Deck DeckParser::parse() {
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

void DeckParser::error_at(const std::string& dotted, const std::string& message) {
  const auto found = deck_.locations.find(dotted);
  const DeckLocation location =
      found != deck_.locations.end() ? found->second : DeckLocation{"", 0, 0, "default"};
  errors_.push_back(location.describe(dotted) + ": error: " + message);
}
void DeckParser::error_at_node(const toml::source_region& region, const std::string& message) {
  errors_.push_back(deck_.source + ":" + std::to_string(region.begin.line) + ":" +
                    std::to_string(region.begin.column) + ": error: " + message);
}
void DeckParser::flush() {
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
void DeckParser::read_tables(const toml::table& root) {
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
void DeckParser::apply_overrides(toml::table& root) {
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
void DeckParser::add_kernel_defaults(toml::table& root) {
  const toml::node* name = root.at_path("kernel.name").node();
  if (name && !name->is_string()) return;
  // Without kernel.name the deck is of the default kernel, the first registered.
  const DeckKernel* kernel = name ? find_deck_kernel(name->as_string()->get())
                             : deck_kernels().empty() ? nullptr
                                                      : &deck_kernels().front();
  if (!kernel) return;
  if (!root.contains("kernel")) root.insert_or_assign("kernel", toml::table{});
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
void DeckParser::read_values(const toml::table& root) {
  for (const DeckKey& entry : deck_schema()) {
    const toml::node* node = root.at_path(entry.table + "." + entry.key).node();
    if (!node) continue;
    const std::string dotted = entry.dotted();
    const auto wrong = [&](const std::string& what) {
      error_at(dotted, dotted + " must be " + what + ", not " + node_type_name(*node));
    };
    // TOML has nan and inf; no deck number may be one (a run would carry it
    // into every field it touches).
    const auto not_finite = [&] {
      error_at(dotted, dotted + " must be a finite number, not nan or inf");
    };
    RawValue value;
    switch (entry.kind) {
      case Kind::integer:
        if (node->is_integer())
          value.integer = static_cast<long>(node->as_integer()->get());
        else
          wrong("an integer");
        break;
      case Kind::integer_or_auto:
        if (node->is_integer())
          value.integer = static_cast<long>(node->as_integer()->get());
        else if (node->is_string())
          value.string = node->as_string()->get();
        else
          wrong("an integer or \"auto\"");
        break;
      case Kind::floating:
        if (node->is_number())
          value.floating = node->value<double>().value();
        else
          wrong("a number");
        if (value.floating && !std::isfinite(*value.floating)) not_finite();
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
          // Name the first element that is wrong: [96.5, 96] is not "an array".
          std::size_t index = 0;
          for (const toml::node& item : *array) {
            if (!accept(item)) break;
            ++index;
          }
          if (array->empty())
            wrong(std::string("a non-empty array of ") + element + "s (or one " + element + ")");
          else if (index < array->size())
            error_at(dotted, dotted + "[" + std::to_string(index) + "] must be " +
                                 (entry.kind == Kind::integers ? "an integer" : entry.kind == Kind::floats ? "a number" : "true or false") +
                                 ", not " + node_type_name(*array->get(index)) + " (" + dotted + " is an array of " +
                                 element + "s)");
        } else if (accept(*node)) {
          value.scalar_list = true;
        } else {
          wrong(std::string("an array of ") + element + "s or one " + element);
        }
        if (std::any_of(value.floats.begin(), value.floats.end(),
                        [](double item) { return !std::isfinite(item); }))
          not_finite();
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


}  // namespace isostencil::deck::detail
