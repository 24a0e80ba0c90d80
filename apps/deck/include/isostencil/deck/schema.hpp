// The deck schema: every key of every table, typed, documented and defaulted
// in one table (`isostencil check --keys` prints it as Markdown; docs/deck-keys.md
// is that output). Kernels add their [kernel] keys by
// registering (kernel.hpp); a program may describe the generic keys in terms
// of the kernels it registers (describe_deck_key).
#pragma once

#include "iso/error.hpp"

#include <string>
#include <utility>
#include <vector>

namespace isostencil::deck {

/// Every problem with a deck: the message has one line per problem, each
/// "<file>:<line>:<column>: error: <key> ...", or "--set <key>: error: ..."
/// for an override.
class DeckError : public iso::Error {
public:
  explicit DeckError(const std::string& message) : iso::Error(message) {}
};

/// The type of a deck key's value.
enum class DeckValueKind {
  integer,
  floating,  ///< an integer is accepted too
  boolean,
  string,
  integer_or_auto,  ///< an integer, or the string "auto"
  integers,  ///< an array of integers, or one integer meaning "the same in every dimension"
  floats,    ///< an array of numbers, or one number for every dimension
  booleans,  ///< an array of booleans, or one boolean for every dimension
  offsets,   ///< an array of integer arrays (stencil offsets)
};
const char* to_string(DeckValueKind kind);

/// One documented key of the schema.
struct DeckKey {
  std::string table;
  std::string key;
  DeckValueKind kind;
  std::string default_value;  ///< as docs/deck-keys.md shows it
  std::string allowed;        ///< allowed values or range ("star, box", ">= 1")
  std::string meaning;
  /// Conditions under which the key may be given, all of them must hold:
  /// {"kernel.name", {"heat"}} means "only with kernel.name = heat". Empty:
  /// always. A key given where it does not apply is an error.
  std::vector<std::pair<std::string, std::vector<std::string>>> applies;
  std::string dotted() const { return table + "." + key; }
  /// "kernel.name = heat" / "init.type = random, pattern" joined by "; " ("" = always).
  std::string applies_text() const;
};
/// Every key of every table, in the order of docs/deck-keys.md.
const std::vector<DeckKey>& deck_schema();
/// The schema as a Markdown table (`isostencil check --keys`), for docs/deck-keys.md.
std::string deck_schema_markdown();

/// Replaces the key table's texts of a key (not collective; at start-up,
/// like register_deck_kernel): a program describes generic keys in terms of
/// the kernels it registers ("\"auto\" (heat: star, ...)"). An empty text
/// keeps the one there. Throws iso::Error for a key the schema lacks.
void describe_deck_key(const std::string& dotted, const std::string& default_text,
                       const std::string& allowed, const std::string& meaning);

/// The shortest text that reads back as the same double, as the effective
/// deck writes floats ("0.5", "1e-05", "inf"); for messages about values.
std::string deck_float(double value);

}  // namespace isostencil::deck
