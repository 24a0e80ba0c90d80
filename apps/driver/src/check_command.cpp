// `isostencil check DECK [--set ...] [--ranks N] [--procs P0,P1,...]
// [--effective] [--keys]`: validates a deck without running it: the schema
// (unknown keys, types, allowed values, impossible combinations), the
// kernel's own inputs (Life rule, RLE pattern), the decomposition on this
// run's rank count or on N ranks (a login node can check a deck for 4096),
// and whether output.dir could be written (nothing is left behind). Exit code 0 and a one-paragraph summary,
// or 2 and the errors (rank 0 prints them; every rank exits with 2, as in
// `run`).
#include "command.hpp"
#include "isostencil/driver/depth_choice.hpp"
#include "isostencil/driver/run.hpp"

#include "isostencil/deck/checks.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/core/decomposition.hpp"
#include "iso/halo_exchange.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace isostencil::cli {

namespace {

class CheckCommand final : public Command {
public:
  explicit CheckCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "check",
        "Validate an input deck without running it: exit code 0 and a summary, or 2 and\n"
        "one \"file:line:column: error: ...\" line per problem.");
    app_->add_option("deck", deck_path_, "input deck (TOML); default: the built-in default deck");
    app_->add_option("--set", overrides_, "override a deck key: table.key=value (repeatable)")
        ->allow_extra_args(false)
        ->type_name("TABLE.KEY=VALUE");
    app_->add_option("--ranks", ranks_,
                     "check the decomposition for N ranks instead of this run's (nothing runs on them)")
        ->check(CLI::PositiveNumber)
        ->type_name("N");
    app_->add_option("--procs", procs_,
                     "fix the process grid (grid.procs), e.g. --procs 16,16,16; 0 lets MPI_Dims_create "
                     "choose that dimension; without --ranks, N is their product")
        ->delimiter(',')
        ->type_name("P0,P1,...");
    app_->add_flag("--effective", effective_,
                   "also print the effective deck (every key resolved; what outputs and "
                   "checkpoints store)");
    app_->add_flag("--keys", keys_, "print every deck key with its type, default and allowed values "
                                    "(Markdown, as in docs/deck-keys.md) and exit");
  }

  int run(const MpiContext& mpi) override {
    if (keys_) {
      if (mpi.rank == 0) std::cout << deck::deck_schema_markdown();
      return 0;
    }
    std::vector<std::string> overrides = overrides_;
    int ranks = ranks_ > 0 ? ranks_ : mpi.size;
    if (!procs_.empty()) {
      overrides.push_back("grid.procs=[" + fmt::format("{}", fmt::join(procs_, ",")) + "]");
      if (ranks_ == 0) {
        long product = 1;
        for (const int p : procs_) {
          if (p <= 0) {
            if (mpi.rank == 0)
              std::cerr << "isostencil check: --procs " << fmt::format("{}", fmt::join(procs_, ",")) << " leaves "
                        << "a dimension to MPI_Dims_create (0 or less); give the rank count with --ranks N\n";
            return 2;
          }
          product *= p;
        }
        if (product > 1L << 30) {
          if (mpi.rank == 0) std::cerr << "isostencil check: --procs multiplies to " << product << " ranks, too many\n";
          return 2;
        }
        ranks = static_cast<int>(product);
      }
    }
    try {
      const deck::Deck deck = deck::read_deck(MPI_COMM_WORLD, deck_path_, overrides);
      run::check_kernel_inputs(deck);
      deck::check_decomposition(deck, ranks);
      deck::check_output_writable(MPI_COMM_WORLD, deck, false);
      if (mpi.rank == 0) {
        const std::vector<int> procs = core::Decomposition::choose_process_dims(ranks, deck.grid.procs);
        std::string periodic;
        for (const bool p : deck.grid.periodic) periodic += std::string(periodic.empty() ? "" : ", ") + (p ? "periodic" : "bounded");
        std::cout << fmt::format(
            "{}: OK\n  kernel {}, {}-D grid {} ({}), stencil {}\n  on {} rank{} as {}; {} steps, "
            "halo {}{}; output {}\n",
            deck.source, deck.kernel.name, deck.grid.dims, fmt::join(deck.grid.extent, "x"), periodic,
            deck.make_stencil().describe(), ranks, ranks == 1 ? "" : "s",
            fmt::join(procs, "x"), deck.run.steps,
            deck.halo.algorithm,
            deck.halo.validate_every > 0 ? ", validated every " + std::to_string(deck.halo.validate_every)
                                         : std::string(),
            deck.output.format == "hdf5" ? deck.output_path(".h5") : std::string("none"));
        std::cout << subdomain_summary(deck, procs);
        std::cout << halo_reach_summary(deck, procs);
        std::cout << depth_summary(deck, procs);
        if (effective_) std::cout << "\n" << deck.effective_toml();
      }
      return 0;
    } catch (const deck::DeckError& error) {
      if (mpi.rank == 0) std::cerr << error.what() << "\n";
      return 2;
    }
  }

private:
  // halo.depth and what each depth would cost per step (depth_choice.hpp),
  // priced by the model a one-process run would use, the cell rate measured
  // here on the largest subdomain. Skipped for meshes past 512 ranks (the
  // prediction evaluates every rank of a mesh, one of a torus).
  static std::string depth_summary(const deck::Deck& deck, const std::vector<int>& procs) {
    driver::DepthLayout layout{deck.grid.extent, deck.grid.periodic, procs};
    long ranks = 1;
    std::vector<int> largest;
    for (std::size_t j = 0; j < procs.size(); ++j) {
      ranks *= procs[j];
      const long n = deck.grid.extent[j];
      largest.push_back(static_cast<int>(n / procs[j] + (n % procs[j] > 0 ? 1 : 0)));
    }
    const std::string requested =
        deck.halo.depth_auto ? std::string("auto") : std::to_string(deck.halo.depth);
    bool torus = true;
    for (const bool p : deck.grid.periodic) torus = torus && p;
    if (!torus && ranks > 512) return "  depth    " + requested + "\n";
    try {
      const core::Stencil stencil = deck.make_stencil();
      const driver::DepthChoice choice = driver::predict_depths(
          layout, stencil, deck.kernel.name == "life" ? 1 : 8, static_cast<int>(deck::max_halo_depth),
          static_cast<int>(deck.halo.ports), iso::CostModel::for_comm(MPI_COMM_SELF),
          driver::measure_cell_seconds(largest, stencil));
      std::string table;
      for (std::size_t k = 0; k < choice.per_step.size(); ++k)
        table += fmt::format("{}k={} {:.1f}", k ? ", " : "", k + 1, choice.per_step[k] * 1e6);
      return fmt::format("  depth    {}; predicted us per step: {}; auto would pick k = {} (cost model {}, "
                         "cells at {:.2f} ns, measured here)\n",
                         requested, table, choice.depth, choice.model_note, choice.cell_seconds * 1e9);
    } catch (const iso::Error& error) {
      return "  depth    " + requested + " (no prediction: " + error.what() + ")\n";
    }
  }

  // The block decomposition's subdomains (the first n % p processes of a
  // dimension get one cell more) and the cells each rank holds.
  static std::string subdomain_summary(const deck::Deck& deck, const std::vector<int>& procs) {
    std::vector<long> smallest, largest;
    long cells_min = 1, cells_max = 1;
    bool even = true;
    for (std::size_t j = 0; j < procs.size(); ++j) {
      const long n = deck.grid.extent[j], p = procs[j];
      smallest.push_back(n / p);
      largest.push_back(n / p + (n % p != 0 ? 1 : 0));
      even = even && n % p == 0;
      cells_min *= smallest.back();
      cells_max *= largest.back();
    }
    if (even) return fmt::format("  subdomains {} ({} cells per rank)\n", fmt::join(smallest, "x"), cells_min);
    return fmt::format("  subdomains {} to {} ({} to {} cells per rank: the extent does not divide evenly)\n",
                       fmt::join(smallest, "x"), fmt::join(largest, "x"), cells_min, cells_max);
  }

  // Where the halo is wider than the smallest subdomain: how many processes
  // away its ghosts come from (iso::halo_reach, the width rule's measure).
  static std::string halo_reach_summary(const deck::Deck& deck, const std::vector<int>& procs) {
    const iso::HaloWidths widths = deck.make_stencil().geometry().widths;
    std::vector<int> reach;
    bool beyond = false;
    for (std::size_t j = 0; j < procs.size(); ++j) {
      const bool exchanged = procs[j] > 1 || deck.grid.periodic[j];
      const int width = std::max(widths.lo[j], widths.hi[j]);
      reach.push_back(exchanged ? iso::halo_reach(width, deck.grid.extent[j] / procs[j]) : 0);
      beyond = beyond || reach.back() > 1;
    }
    if (!beyond) return {};
    return fmt::format("  halo wider than a subdomain: ghosts come from up to {} processes away (per dimension)\n",
                       fmt::join(reach, "x"));
  }

  std::string deck_path_;
  std::vector<std::string> overrides_;
  int ranks_ = 0;
  std::vector<int> procs_;
  bool effective_ = false;
  bool keys_ = false;
};

}  // namespace

std::unique_ptr<Command> make_check_command(CLI::App& parent) {
  return std::make_unique<CheckCommand>(parent);
}

}  // namespace isostencil::cli
