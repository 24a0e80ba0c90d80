// Fuzz target: the deck parser and validator (pure: no MPI, no files;
// check_decomposition is left out, it calls MPI_Dims_create).
//
// The input is a deck's text; after a NUL byte, each line is a --set override
// ("key=value"). parse_deck must either throw a DeckError with a message, or
// return a deck that satisfies every rule of the schema (deck_schema(), the
// table of docs/deck-keys.md) and whose effective deck parses back to the same deck: a
// checkpoint stores the effective deck and a restart reads it back.
#include "isostencil/deck/deck.hpp"
#include "isostencil/driver/driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using isostencil::deck::Deck;

[[noreturn]] void fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_deck: INVARIANT VIOLATED: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

bool one_of(const std::string& value, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return value == a; });
}

bool all_finite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

/// The schema's rules for a resolved deck; returns the first broken one.
std::string broken_rule(const Deck& d) {
  const auto n = static_cast<std::size_t>(d.grid.dims);
  if (d.grid.dims < 1 || d.grid.dims > 4) return "grid.dims outside 1..4";
  if (d.grid.extent.size() != n || d.grid.periodic.size() != n || d.grid.procs.size() != n)
    return "grid lists do not have one entry per dimension";
  for (std::size_t j = 0; j < n; ++j) {
    if (d.grid.extent[j] < 1) return "grid.extent < 1";
    if (d.grid.procs[j] < 0) return "grid.procs < 0";
    if (d.grid.procs[j] > 0 && d.grid.extent[j] < d.grid.procs[j]) return "grid.extent < grid.procs";
  }
  const auto& st = d.stencil;
  if (!one_of(st.shape, {"star", "box", "upwind", "offsets"})) return "stencil.shape unresolved";
  if (st.shape != "offsets" && (st.radius < 1 || st.radius > 8)) return "stencil.radius outside 1..8";
  if (st.shape == "upwind") {
    if (st.signs.size() != n) return "stencil.signs not one per dimension";
    for (int s : st.signs)
      if (s < -1 || s > 1) return "stencil.signs outside -1..1";
  }
  if (st.shape == "offsets") {
    if (st.offsets.empty()) return "stencil.offsets empty";
    for (const auto& offset : st.offsets) {
      if (offset.size() != n) return "a stencil offset without one coordinate per dimension";
      for (int c : offset)
        if (c < -8 || c > 8) return "a stencil offset coordinate outside -8..8";
    }
  }
  if (!all_finite(st.weights)) return "a stencil weight is not finite";
  if (!one_of(d.kernel.name, {"jacobi", "life", "advection"})) return "kernel.name";
  if (d.kernel.name == "life" && st.radius != 1 && st.shape != "offsets") return "life with radius != 1";
  if (d.kernel.name == "jacobi" &&
      (!std::isfinite(d.kernel.floating("source")) || !std::isfinite(d.kernel.floating("boundary"))))
    return "kernel source/boundary";
  if (d.kernel.name == "advection") {
    const std::vector<double>& velocity = d.kernel.floats("velocity");
    if (velocity.size() != n || !all_finite(velocity)) return "kernel.velocity";
    if (std::all_of(velocity.begin(), velocity.end(), [](double v) { return v == 0; }))
      return "kernel.velocity all zero";
    const double courant = d.kernel.floating("courant");
    if (!(courant > 0 && courant <= 1)) return "kernel.courant outside (0, 1]";
  }
  const auto& in = d.init;
  if (!one_of(in.type, {"constant", "random", "pattern", "gaussian"})) return "init.type unresolved";
  if (in.type == "pattern" && (d.kernel.name != "life" || in.pattern.empty())) return "init.pattern";
  if (in.type == "random" && !(in.density >= 0 && in.density <= 1)) return "init.density outside 0..1";
  if (in.type == "random" && !(in.low <= in.high)) return "init.low > init.high";
  if (in.type == "gaussian") {
    if (in.center.size() != n || !all_finite(in.center)) return "init.center";
    if (!(in.width > 0) || !std::isfinite(in.width) || !std::isfinite(in.amplitude)) return "init.width/amplitude";
  }
  if (in.type == "pattern" && !in.offset.empty() && in.offset.size() != n) return "init.offset";
  if (d.run.steps < 0) return "run.steps < 0";
  if (!(d.run.tolerance >= 0)) return "run.tolerance < 0";
  if (d.run.residual_every < 1) return "run.residual_every < 1";
  if (!one_of(d.halo.algorithm, {"auto", "linear", "torus", "direct", "basis", "mpi"})) return "halo.algorithm";
  if (d.halo.validate_every < 0) return "halo.validate_every < 0";
  if (d.output.name.empty() || d.output.name.find('/') != std::string::npos) return "output.name";
  if (!one_of(d.output.format, {"hdf5", "none"})) return "output.format";
  if (d.output.every < 0 || d.output.checkpoint_every < 0) return "output.every/checkpoint_every < 0";
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  isostencil::driver::register_builtin_kernels();  // the kernels decks name (idempotent)
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string text = input.substr(0, split);
  std::vector<std::string> overrides;
  if (split != std::string::npos) {
    std::size_t begin = split + 1;
    while (begin <= input.size()) {
      std::size_t end = input.find('\n', begin);
      if (end == std::string::npos) end = input.size();
      if (end > begin) overrides.push_back(input.substr(begin, end - begin));
      begin = end + 1;
    }
  }

  Deck deck;
  try {
    deck = isostencil::deck::parse_deck(text, "fuzz.toml", overrides, ".");
  } catch (const isostencil::deck::DeckError& error) {
    if (std::string(error.what()).empty()) fail("a DeckError without a message", text);
    return 0;
  }
  const std::string rule = broken_rule(deck);
  if (!rule.empty()) fail("an accepted deck breaks a schema rule: " + rule, text);

  // What a run does next with an accepted deck must not fail unexpectedly.
  try {
    (void)deck.make_stencil();
    (void)deck.algorithm();
  } catch (const iso::Error& error) {
    fail(std::string("an accepted deck's stencil or algorithm throws: ") + error.what(), text);
  }
  // The effective deck (stored in checkpoints) parses back to itself.
  const std::string effective = deck.effective_toml();
  Deck again;
  try {
    again = isostencil::deck::parse_deck(effective, "fuzz.toml", {}, ".");
  } catch (const isostencil::deck::DeckError& error) {
    fail(std::string("the effective deck does not parse: ") + error.what(), effective);
  }
  if (again.effective_toml() != effective)
    fail("the effective deck does not round-trip", effective + "\n--- became ---\n" + again.effective_toml());
  return 0;
}
