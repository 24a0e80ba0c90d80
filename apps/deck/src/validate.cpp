// The checks of a resolved deck: keys given where they do not apply, the
// combinations the registered kernels rule out, the stencil against its
// weights and the grid, and (check_decomposition) the deck against the rank
// count of a run.
#include "parser.hpp"

#include "isostencil/deck/checks.hpp"
#include "isostencil/deck/kernel.hpp"

#include "isostencil/core/decomposition.hpp"

#include "iso/halo_exchange.hpp"

#include "text.hpp"

#include <algorithm>
#include <cmath>

namespace isostencil::deck {

namespace detail {

/// The resolved value of a key that conditions others.
std::string DeckParser::resolved(const std::string& dotted) const {
  if (dotted == "kernel.name") return deck_.kernel.name;
  if (dotted == "stencil.shape") return deck_.stencil.shape;
  if (dotted == "init.type") return deck_.init.type;
  if (dotted == "output.format") return deck_.output.format;
  return {};
}

void DeckParser::check_applicability() {
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

/// Combinations no kernel can run: the registered kernels' own checks
/// first, then the generic ones.
void DeckParser::check_combinations() {
  for (const DeckKernel& kernel : deck_kernels())
    if (kernel.validate) {
      DeckCheck check = kernel_check();
      kernel.validate(check);
    }
  Deck& d = deck_;
  const int dims = d.grid.dims;
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
  // The stencil and its weights.
  if (!errors_.empty()) return;
  try {
    const core::Stencil stencil = d.make_stencil();
    if (!d.stencil.weights.empty() && static_cast<int>(d.stencil.weights.size()) != stencil.size())
      error_at("stencil.weights",
               "stencil.weights has " + std::to_string(d.stencil.weights.size()) + " entries but the " +
                   d.stencil.shape + " stencil has " + std::to_string(stencil.size()) + " offsets (" +
                   stencil.describe() + ")");
    for (const double w : d.stencil.weights)
      if (!std::isfinite(w)) error_at("stencil.weights", "stencil.weights must be finite");
    if (stencil.geometry().directions.size() == 0)
      error_at(shape_was_auto_ ? "kernel.name" : "stencil.shape",
               "the stencil reads no neighbor (only the centre): nothing to exchange");
    for (int j = 0; j < dims; ++j) {
      const long n = d.grid.extent[static_cast<std::size_t>(j)];
      const iso::HaloWidths widths = stencil.geometry().widths;
      const int width =
          std::max(widths.lo[static_cast<std::size_t>(j)], widths.hi[static_cast<std::size_t>(j)]);
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

}  // namespace detail

void check_decomposition(const Deck& deck, int num_procs) {
  const int dims = deck.grid.dims;
  std::vector<int> process_dims;
  try {
    process_dims = core::Decomposition::choose_process_dims(num_procs, deck.grid.procs);
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
                    std::to_string(j) + ", which is " + std::to_string(iso::halo_reach(width, smallest)) +
                    " processes away where the smallest subdomain has " + std::to_string(smallest) +
                    " cells (grid.extent[" + std::to_string(j) + "] = " + std::to_string(n) + " over " +
                    std::to_string(p) + " processes); a halo may reach at most " +
                    std::to_string(iso::max_halo_reach) +
                    " processes away: use fewer ranks, a larger extent or a smaller radius");
  }
  // Deep halos: the ghost region of depth k is k times as wide.
  if (deck.halo.depth_auto || deck.halo.depth == 1) return;
  const auto misfit = [&](long depth) {
    for (int j = 0; j < dims; ++j) {
      const auto u = static_cast<std::size_t>(j);
      const int width = static_cast<int>(depth) * std::max(widths.lo[u], widths.hi[u]);
      const int p = process_dims[u];
      if (iso::halo_misfit_dimension(iso::HaloWidths{{width}, {width}}, {p}, {deck.grid.periodic[u]},
                                     {deck.grid.extent[u] / p}) == 0)
        return j;
    }
    return -1;
  };
  if (const int j = misfit(deck.halo.depth); j >= 0) {
    long allowed = deck.halo.depth - 1;
    while (allowed > 1 && misfit(allowed) >= 0) --allowed;
    const auto u = static_cast<std::size_t>(j);
    const int p = process_dims[u];
    deck.fail("halo.depth",
              "halo.depth = " + std::to_string(deck.halo.depth) + " makes the ghost region " +
                  std::to_string(deck.halo.depth * std::max(widths.lo[u], widths.hi[u])) +
                  " cells wide in dimension " + std::to_string(j) + ", which reaches " +
                  std::to_string(iso::halo_reach(
                      static_cast<int>(deck.halo.depth) * std::max(widths.lo[u], widths.hi[u]),
                      deck.grid.extent[u] / p)) +
                  " processes away, more than the " + std::to_string(iso::max_halo_reach) +
                  " the width rule allows (smallest subdomain " +
                  std::to_string(deck.grid.extent[u] / p) + " cells: grid.extent[" +
                  std::to_string(j) + "] = " + std::to_string(deck.grid.extent[u]) + " over " +
                  std::to_string(p) + (p == 1 ? " process" : " processes") + "); allowed with " + std::to_string(num_procs) +
                  " rank" + (num_procs == 1 ? "" : "s") + ": 1 to " + std::to_string(allowed) +
                  ", or \"auto\"");
  }
}

}  // namespace isostencil::deck
