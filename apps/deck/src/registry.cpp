// The kernel registry: every kernel a deck may name adds its [kernel] keys to
// the schema, joins the generic keys it takes, and brings its own checks.
#include "isostencil/deck/kernel.hpp"

#include "text.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>

namespace isostencil::deck {

namespace {

using Kind = DeckValueKind;

std::vector<DeckKernel>& registered_kernels() {
  static std::vector<DeckKernel> kernels;
  return kernels;
}

/// Throws unless the TOML text `value` reads as `kind` (one value or a list of them).
void check_default(const std::string& where, const std::string& dotted, const DeckKernelParameter& parameter) {
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
      case Kind::integer_or_auto: ok = node.is_integer() || node.is_string(); break;
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
}

}  // namespace

void DeckCheck::error(const std::string& dotted, const std::string& message) {
  errors_.push_back(deck_.where(dotted).describe(dotted) + ": error: " + message);
}

void register_deck_kernel(const DeckKernel& kernel) {
  const std::string where = "isostencil::deck::register_deck_kernel(\"" + kernel.name + "\")";
  bool name_ok = !kernel.name.empty();
  for (const char c : kernel.name)
    name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (!name_ok)
    throw iso::Error(where + ": a kernel name is letters, digits, '_' and '-' (and not empty)");
  if (find_deck_kernel(kernel.name))
    throw iso::Error(where + ": kernel.name \"" + kernel.name + "\" is taken already");
  const std::vector<std::string> shapes = {"star", "box", "upwind", "offsets"};
  if (std::find(shapes.begin(), shapes.end(), kernel.default_shape) == shapes.end())
    throw iso::Error(where + ": default_shape \"" + kernel.default_shape +
                     "\" is not one of star, box, upwind, offsets");
  const std::vector<std::string> inits = {"constant", "random", "gaussian"};
  if (std::find(inits.begin(), inits.end(), kernel.default_init) == inits.end())
    throw iso::Error(where + ": default_init \"" + kernel.default_init +
                     "\" is not one of constant, random, gaussian");
  std::vector<std::string> takes = kernel.takes;
  if (kernel.weights) takes.push_back("stencil.weights");
  for (const std::string& dotted : takes) {
    bool per_kernel = false;
    for (const DeckKey& entry : deck_schema())
      if (entry.dotted() == dotted)
        for (const auto& condition : entry.applies) per_kernel = per_kernel || condition.first == "kernel.name";
    if (!per_kernel || dotted.compare(0, 7, "kernel.") == 0)
      throw iso::Error(where + ": " + dotted + " is not a generic key taken per kernel");
  }
  std::vector<DeckKey> keys;
  for (const DeckKernelParameter& parameter : kernel.parameters) {
    const std::string dotted = "kernel." + parameter.key;
    bool key_ok = !parameter.key.empty();
    for (const char c : parameter.key)
      key_ok = key_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!key_ok) throw iso::Error(where + ": parameter key \"" + parameter.key + "\" is not a bare key");
    if (parameter.key == "name") throw iso::Error(where + ": kernel.name is not a parameter");
    // Another kernel's parameter of the same name and kind: the key is shared.
    if (const DeckKey* shared = detail::find_key("kernel", parameter.key))
      if (shared->kind != parameter.kind)
        throw iso::Error(where + ": " + dotted + " is a key of another kernel already (" +
                         shared->applies_text() + "); choose another name");
    if (parameter.kind == Kind::offsets || parameter.kind == Kind::integer_or_auto)
      throw iso::Error(where + ": " + dotted + ": " + to_string(parameter.kind) +
                       " is not a parameter kind");
    check_default(where, dotted, parameter);
    keys.push_back({"kernel", parameter.key, parameter.kind,
                    parameter.default_text.empty() ? parameter.default_value : parameter.default_text,
                    parameter.allowed, kernel.name + ": " + parameter.meaning,
                    {{"kernel.name", {kernel.name}}}});
  }
  const bool first = registered_kernels().empty();
  registered_kernels().push_back(kernel);
  std::vector<DeckKey>& schema = detail::schema_storage();
  for (DeckKey& entry : schema) {
    if (entry.dotted() == "kernel.name") {
      entry.allowed += (first ? "" : ", ") + kernel.name;
      entry.meaning += (first ? ": " : ", ") + kernel.name + " (" + kernel.meaning + ")";
      if (first) entry.default_value = detail::quoted(kernel.name);
    }
    if (std::find(takes.begin(), takes.end(), entry.dotted()) != takes.end())
      for (auto& [condition, values] : entry.applies)
        if (condition == "kernel.name") values.push_back(kernel.name);
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

const std::vector<DeckKernel>& deck_kernels() { return registered_kernels(); }

}  // namespace isostencil::deck
