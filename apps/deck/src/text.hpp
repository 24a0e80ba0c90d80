// Text helpers the deck files share (internal): joining, TOML quoting and
// floats, "did you mean" suggestions, and the schema lookups.
#pragma once

#include "isostencil/deck/schema.hpp"

#include <string>
#include <vector>

namespace isostencil::deck::detail {

std::string join(const std::vector<std::string>& items, const std::string& separator);
/// A TOML basic string: quotes, backslashes and control characters escaped.
std::string quoted(const std::string& text);
/// " (did you mean \"<closest>\"?)" or "" when no candidate is close.
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);
/// "." for a bare file name, "/" for a file in the root.
std::string directory_of(const std::string& path);

/// The schema, extended by registration (at start-up, before any deck is read).
std::vector<DeckKey>& schema_storage();
const DeckKey* find_key(const std::string& table, const std::string& key);
/// The tables, in schema order.
std::vector<std::string> table_names();
/// The keys of one table, in schema order.
std::vector<std::string> keys_of(const std::string& table);

}  // namespace isostencil::deck::detail
