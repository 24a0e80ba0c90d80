// The kernels decks may name. The deck library knows none of its own: every
// kernel, the driver's included, registers a DeckKernel — its name, its
// [kernel] keys, the defaults "auto" stands for, the generic keys it takes,
// and the checks only it makes — before any deck is read. The first kernel
// registered is the default of kernel.name.
#pragma once

#include "isostencil/deck/deck.hpp"
#include "isostencil/deck/schema.hpp"

#include <functional>
#include <utility>
#include <string>
#include <vector>

namespace isostencil::deck {

/// One parameter of a registered kernel: the key `kernel.<key>` of its decks.
/// Kinds: integer, floating, boolean, string, and the per-dimension lists
/// integers, floats, booleans (one value means "the same in every dimension").
struct DeckKernelParameter {
  std::string key;
  DeckValueKind kind = DeckValueKind::floating;
  std::string default_value;  ///< TOML text of the value taken when the deck omits it ("0.25")
  std::string allowed;        ///< for the key table ("> 0")
  std::string meaning;
  /// The default as the key table shows it ("1.0 in every dimension"); empty: default_value.
  std::string default_text = {};
  /// Judges a given value of the key while the deck is parsed: returns the
  /// problem ("kernel.x = 2.0 is out of range; ...", without a location) or
  /// "". Empty: any value of the kind (finite, one per dimension) is taken.
  std::function<std::string(const DeckValue&)> check = {};
};

/// What a kernel's hooks see while a deck is parsed: the deck resolved so
/// far, which keys the file or --set gave, and where problems go (they are
/// reported together with the parser's own, one line each).
class DeckCheck {
public:
  DeckCheck(Deck& deck, std::vector<std::string>& errors, std::function<bool(const std::string&)> given)
      : deck_(deck), errors_(errors), given_(std::move(given)) {}
  const Deck& deck() const { return deck_; }
  Deck& deck() { return deck_; }
  /// True when the file or an override sets the key ("stencil.signs").
  bool given(const std::string& dotted) const { return given_(dotted); }
  /// No problem reported yet.
  bool clean() const { return errors_.empty(); }
  /// Reports "<where the key was set>: error: <message>".
  void error(const std::string& dotted, const std::string& message);

private:
  Deck& deck_;
  std::vector<std::string>& errors_;
  std::function<bool(const std::string&)> given_;
};

/// A kernel a program adds to the decks it reads (isostencil::driver
/// registers its own and those of programs built on it): its name becomes a
/// value of kernel.name, its parameters keys of [kernel] that apply only with
/// that name.
struct DeckKernel {
  std::string name;                   ///< kernel.name; letters, digits, '_' and '-'
  std::string meaning;                ///< one line for the key table
  std::string default_shape = "star"; ///< stencil.shape "auto" stands for this
  std::string default_init = "constant";  ///< init.type "auto": constant, random or gaussian
  bool weights = false;               ///< stencil.weights applies (the kernel reads them)
  std::vector<DeckKernelParameter> parameters;
  /// The generic keys that apply only to the kernels that take them:
  /// init.low and init.high (a floating-point field started at random),
  /// init.density (cells 0 or 1 started at random), run.tolerance (a
  /// residual to stop at); stencil.weights is `weights`.
  std::vector<std::string> takes = {"init.low", "init.high"};
  /// Decks naming this kernel, once every key has its value: derives what
  /// the kernel's defaults leave open (stencil.signs from a velocity, when
  /// the deck gives none); may report problems.
  std::function<void(DeckCheck&)> resolve = {};
  /// Every deck, after the keys' own checks: the combinations this kernel
  /// rules out (a stencil it cannot read; for other kernels' decks, a value
  /// of a generic key only this kernel takes, such as an init type).
  std::function<void(DeckCheck&)> validate = {};
};

/// Adds a kernel to the schema (not collective; call it on every rank before
/// reading a deck). Throws iso::Error for a name already taken, a parameter
/// key that [kernel] already has with another kind, a generic key that is not
/// taken per kernel, or a default that is not of its kind.
void register_deck_kernel(const DeckKernel& kernel);
/// The registered kernel of that name, or nullptr.
const DeckKernel* find_deck_kernel(const std::string& name);
/// Every registered kernel, in the order of registration.
const std::vector<DeckKernel>& deck_kernels();

}  // namespace isostencil::deck
