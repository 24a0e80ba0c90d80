// `isostencil run`: turning a deck into a decomposition and a grid, and the
// dispatch of a kernel's Model over the grid's dimension (1 to 4).
#pragma once

#include "isostencil/driver/depth_choice.hpp"
#include "isostencil/driver/run.hpp"

#include "isostencil/core/decomposition.hpp"
#include "isostencil/core/grid.hpp"
#include "isostencil/deck/deck.hpp"

#include "iso/error.hpp"

#include <mpi.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace isostencil::driver {

inline core::HaloOptions halo_options(const deck::Deck& deck) {
  core::HaloOptions options;
  options.algorithm = deck.algorithm();
  options.verify = true;
  options.transport = core::parse_halo_transport(deck.halo.transport);
  options.gpu_aware_mpi = deck.halo.gpu_aware_mpi;
  options.ports = static_cast<int>(deck.halo.ports);
  return options;
}

/// Collective. Decomposition errors (the same on every rank) become deck
/// errors naming grid.procs or grid.extent.
inline std::shared_ptr<const core::Decomposition> make_decomposition(const deck::Deck& deck) {
  try {
    return std::make_shared<const core::Decomposition>(MPI_COMM_WORLD, deck.grid.extent,
                                                       deck.grid.periodic, deck.grid.procs);
  } catch (const iso::Error& error) {
    fail_with(deck, deck.where("grid.procs").origin == "default" ? "grid.extent" : "grid.procs",
              error);
  }
}

/// The depth the run uses: the deck's halo.depth (1 where it is "auto").
inline int deck_depth(const deck::Deck& deck) {
  return deck.halo.depth_auto ? 1 : static_cast<int>(deck.halo.depth);
}

/// Collective. Grid errors (a halo wider than a subdomain: the same on every
/// rank) become deck errors naming the stencil, or halo.depth where only the
/// depth makes the halo too wide (with the depths this grid allows).
/// `depth` 0: the deck's halo.depth (1 where it is "auto").
template <int D>
core::Grid<D> make_grid(const deck::Deck& deck, std::shared_ptr<const core::Decomposition> decomposition,
                        core::Stencil stencil, int depth = 0) {
  if (depth == 0) depth = deck_depth(deck);
  std::optional<core::Grid<D>> shallow;
  try {
    shallow.emplace(decomposition, stencil, 1);
  } catch (const iso::Error& error) {
    fail_with(deck, deck.where("stencil.radius").origin == "default" ? "stencil.shape" : "stencil.radius",
              error);
  }
  if (depth == 1) return *shallow;
  try {
    return shallow->with_depth(depth);
  } catch (const iso::Error& error) {
    int allowed = depth - 1;  // the deepest halo the width rule accepts (1 does)
    for (; allowed > 1; --allowed) {
      try {
        (void)shallow->with_depth(allowed);
        break;
      } catch (const iso::Error&) {
      }
    }
    deck.fail("halo.depth", "halo.depth = " + std::to_string(depth) + " makes the ghost region too wide: " +
                                error.what() + "; allowed with this grid and process count: 1 to " +
                                std::to_string(allowed) + ", or \"auto\"");
  }
}

/// The stencil as the run header and summary show it, with the halo depth
/// where it is above 1: "star(d=3, r=1): 7 offsets, ...; halo depth 3 (one
/// exchange per 3 steps, ghosts 3 3 3 / 3 3 3)".
template <int D>
std::string stencil_and_depth(const core::Grid<D>& grid) {
  std::string text = grid.stencil().describe();
  if (grid.depth() == 1) return text;
  std::string lo, hi;
  for (int j = 0; j < D; ++j) {
    lo += (j ? " " : "") + std::to_string(grid.ghost_lo()[j]);
    hi += (j ? " " : "") + std::to_string(grid.ghost_hi()[j]);
  }
  return text + "; halo depth " + std::to_string(grid.depth()) + " (one exchange per " +
         std::to_string(grid.depth()) + " steps, ghosts " + lo + " / " + hi + ", " +
         std::to_string(grid.directions().size()) + " directions)";
}

/// For kernels that make their grid themselves: checks through make_grid
/// that the stencil and the deck's depth fit (deck errors otherwise) and
/// returns the decomposition. Collective.
template <int D>
std::shared_ptr<const core::Decomposition> checked_depth(
    const deck::Deck& deck, const std::shared_ptr<const core::Decomposition>& decomposition,
    const core::Stencil& stencil, int depth = 0) {
  (void)make_grid<D>(deck, decomposition, stencil, depth);
  return decomposition;
}

/// The kernel's own seconds per cell update, for depth = "auto"'s price of
/// the redundant cells: a probe of the model at depth 1 on the same
/// decomposition runs a few steps, and its kernel time (the exchange's left
/// out) over the cells updated counts; the slowest rank's. A stand-in loop
/// over the stencil's offsets ran 2-4 times slower than the compiled kernels
/// and kept auto from the depths that pay. Collective.
template <class Model>
double kernel_cell_seconds(const Setup& setup, const std::shared_ptr<const core::Decomposition>& decomposition) {
  Setup probe_setup = setup;
  probe_setup.depth = 1;
  Model probe(probe_setup, decomposition);
  long cells = 1;
  for (const long n : decomposition->local_extent()) cells *= n;
  // About 2 ms of updates at 1 ns a cell, 2 .. 200 steps: the same count on
  // every rank (each step exchanges), from the largest subdomain.
  long largest = cells;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_LONG, MPI_MAX, decomposition->comm());
  const long steps = std::clamp(2000000L / std::max(1L, largest), 2L, 200L);
  (void)probe.advance(1);  // first touch, set-up of the persistent exchange
  double best = std::numeric_limits<double>::max();
  for (int rep = 0; rep < 3; ++rep) best = std::min(best, probe.advance(steps).kernel / static_cast<double>(steps));
  double seconds = cells > 0 ? best / static_cast<double>(cells) : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, decomposition->comm());
  return seconds;
}

/// depth = "auto", second stage: the prediction narrows the depths to its
/// candidates (depth_candidates), and probes of the run's own model time a
/// whole step (updates and exchange) at each; the fastest wins. The model
/// alone was off by more than 10 % in a third of the measured cases (it
/// cannot see scheduling, cache effects or the real per-byte cost of a deep
/// block), timing costs a few milliseconds per depth. Rounds interleave the
/// depths so that a burst of load hits one run of each; the best of three
/// rounds counts, the slowest rank's time. Subdomains above 2^21 cells make
/// their probes one at a time (their fields would not all fit beside each
/// other). A depth whose grid fails to build is left out. Collective.
template <class Model>
void measure_depths(const Setup& setup, const std::shared_ptr<const core::Decomposition>& decomposition,
                    DepthChoice& choice) {
  const std::vector<int> candidates = depth_candidates(choice);
  if (candidates.size() < 2) return;
  MPI_Comm comm = decomposition->comm();
  long largest = 1;
  for (const long n : decomposition->local_extent()) largest *= n;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_LONG, MPI_MAX, comm);
  // About 4 ms of updates at 1 ns a cell, whole blocks of every candidate.
  const long base = std::clamp(4000000L / std::max(1L, largest), 8L, 400L);
  const bool together = largest <= (1L << 21);
  std::vector<std::unique_ptr<Model>> probes(candidates.size());
  const auto probe = [&](std::size_t i) -> Model* {
    if (!probes[i]) {
      Setup probe_setup = setup;
      probe_setup.depth = candidates[i];
      try {
        probes[i] = std::make_unique<Model>(probe_setup, decomposition);
      } catch (const iso::Error&) {
        return nullptr;  // the same on every rank: grid errors are agreed
      }
      (void)probes[i]->advance(candidates[i]);  // first touch, the persistent exchange's set-up
    }
    return probes[i].get();
  };
  std::vector<double> seconds(candidates.size(), std::numeric_limits<double>::max());
  const auto time = [&](std::size_t i, Model& model) {
    const long k = candidates[i];
    const long steps = (base + k - 1) / k * k;
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    (void)model.advance(steps);
    double t = (MPI_Wtime() - t0) / static_cast<double>(steps);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    seconds[i] = std::min(seconds[i], t);
  };
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!together && round > 0) break;
      Model* model = probe(i);
      if (model == nullptr) continue;
      for (int rep = 0; rep < (together ? 1 : 3); ++rep) time(i, *model);
      if (!together) probes[i].reset();
    }
  choice.measured.assign(choice.per_step.size(), 0.0);
  double best = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (seconds[i] == std::numeric_limits<double>::max()) continue;
    choice.measured[static_cast<std::size_t>(candidates[i] - 1)] = seconds[i];
    if (seconds[i] < best) best = seconds[i], choice.depth = candidates[i];
  }
  // Rank 0's choice everywhere (the maxima agree; this guards rounding).
  MPI_Bcast(&choice.depth, 1, MPI_INT, 0, comm);
}

template <class Model>
int run_model(const Setup& setup) {
  const double start = MPI_Wtime();
  auto decomposition = make_decomposition(*setup.deck);
  Setup chosen = setup;
  if (setup.deck->halo.depth_auto) {
    const deck::Deck& deck = *setup.deck;
    DepthChoice choice =
        choose_depth(*decomposition, deck.make_stencil(), deck.kernel.name == "life" ? 1 : 8,
                     static_cast<int>(deck::max_halo_depth), static_cast<int>(deck.halo.ports),
                     kernel_cell_seconds<Model>(setup, decomposition));
    measure_depths<Model>(setup, decomposition, choice);
    chosen.depth = choice.depth;
    chosen.depth_note = "auto: " + choice.text();
  }
  Model model(chosen, std::move(decomposition));
  // The state is in; the run may now write a checkpoint over this file.
  if (setup.restart) setup.restart->close();
  return drive(model, chosen, model.stencil_text(), MPI_Wtime() - start);
}

template <template <int> class Model>
int dispatch_dims(const Setup& setup) {
  switch (setup.deck->grid.dims) {
    case 1: return run_model<Model<1>>(setup);
    case 2: return run_model<Model<2>>(setup);
    case 3: return run_model<Model<3>>(setup);
    case 4: return run_model<Model<4>>(setup);
    default:
      setup.deck->fail("grid.dims", "grid.dims = " + std::to_string(setup.deck->grid.dims) +
                                        " is not supported; allowed: 1 to 4");
  }
}

}  // namespace isostencil::driver
