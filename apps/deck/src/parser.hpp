// The deck parser (internal): TOML to typed values (parse.cpp), values to a
// resolved Deck (resolve.cpp), and the checks of the resolved deck
// (validate.cpp). Errors collect and are thrown in batches, one line each,
// so one run of `check` reports as much as it safely can.
#pragma once

#include "isostencil/deck/deck.hpp"
#include "isostencil/deck/kernel.hpp"

#include <toml++/toml.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace isostencil::deck::detail {

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

class DeckParser {
public:
  DeckParser(const std::string& text, const std::string& source,
             const std::vector<std::string>& overrides, const std::string& base_dir);
  Deck parse();

private:
  // parse.cpp: errors, tables, overrides, typed values.
  void error_at(const std::string& dotted, const std::string& message);
  void error_at_node(const toml::source_region& region, const std::string& message);
  void flush();
  void read_tables(const toml::table& root);
  void apply_overrides(toml::table& root);
  void add_kernel_defaults(toml::table& root);
  void read_values(const toml::table& root);

  // resolve.cpp: values with their defaults, "auto" resolved.
  bool given(const std::string& dotted) const { return values_.count(dotted) != 0; }
  const RawValue* raw(const std::string& dotted) const;
  template <class T>
  std::vector<T> per_dimension(const std::string& dotted, const std::vector<T>& given_values,
                               bool scalar, T fallback);
  std::string dims_origin() const;
  std::string string_or(const std::string& dotted, const std::string& fallback) const;
  double float_or(const std::string& dotted, double fallback) const;
  long int_or(const std::string& dotted, long fallback) const;
  void check_choice(const std::string& dotted, const std::string& value,
                    const std::vector<std::string>& allowed);
  void check_range(const std::string& dotted, double value, double low, double high,
                   const std::string& allowed_text);
  void check_at_least(const std::string& dotted, long value, long low);
  void resolve();
  void resolve_parameters();
  std::string default_name() const;
  /// The view of the deck a kernel's hooks get.
  DeckCheck kernel_check();

  // validate.cpp: the resolved deck's combinations.
  std::string resolved(const std::string& dotted) const;
  void check_applicability();
  void check_combinations();

  Deck deck_;
  std::vector<std::string> errors_;
  std::map<std::string, RawValue> values_;
  std::string dims_from_;
  bool shape_was_auto_ = false;
};

}  // namespace isostencil::deck::detail
