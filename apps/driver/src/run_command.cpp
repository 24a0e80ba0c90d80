// `isostencil run [DECK] [--set table.key=value ...] [--restart FILE] [--quiet]`:
// runs a sample solver (Jacobi, Life, upwind advection) from an input deck
// (TOML; without DECK the built-in default deck, inputs/default.toml).
//
// Errors. Every rank reads the same deck text (rank 0 reads the file and
// broadcasts it) and parses it alike, so a bad deck is the same DeckError on
// every rank: rank 0 prints it (one "file:line:column: error: ..." line per
// problem) and every rank exits with code 2, before anything is computed or
// written. The same holds for --restart problems and an unwritable
// output.dir. Other failures (a kernel error on one rank only) abort the job
// through main.cpp (MPI_Abort), so no rank is left waiting.
//
// Signals (signals.hpp): while `run` runs, SIGTERM, SIGINT, SIGUSR1, SIGUSR2
// and SIGXCPU stop the run at a step every rank agrees on, with a checkpoint
// there and exit code 3 (driver::stopped_exit_code).
#include "command.hpp"
#include "isostencil/driver/driver.hpp"
#include "isostencil/driver/run.hpp"
#include "isostencil/driver/signals.hpp"

#include "isostencil/core/checkpoint.hpp"
#include "isostencil/deck/checks.hpp"
#include "isostencil/deck/deck.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace isostencil::cli {

namespace {

class RunCommand final : public Command {
public:
  explicit RunCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "run",
        "Run a sample solver (jacobi, life, advection) from an input deck under mpirun;\n"
        "progress on stdout from rank 0, a summary at the end (also as JSON beside the output).");
    app_->add_option("deck", deck_path_,
                     "input deck (TOML); default: the built-in default deck (inputs/default.toml), "
                     "or the deck stored in the --restart checkpoint");
    app_->add_option("--set", overrides_,
                     "override a deck key, typed by the deck schema: table.key=value "
                     "(repeatable; e.g. --set run.steps=10 --set grid.extent=64,64)")
        ->allow_extra_args(false)
        ->type_name("TABLE.KEY=VALUE");
    app_->add_option("--restart", restart_path_,
                     "continue from a checkpoint (<output.dir>/<name>.checkpoint.h5) up to run.steps; "
                     "any rank count; without DECK the checkpoint's own deck is used")
        ->type_name("FILE");
    app_->add_flag("--quiet,-q", quiet_, "no header and no progress lines; only the verdict");
    app_->footer(
        "Examples:\n"
        "  mpirun -np 2 isostencil run                                  # the default deck\n"
        "  mpirun -np 2 isostencil run inputs/life_2d_gun.toml --set run.steps=300\n"
        "  mpirun -np 3 isostencil run --restart output/jacobi_2d_5pt.checkpoint.h5\n"
        "Deck keys and defaults: docs/deck-keys.md and docs/decks.md, or isostencil check --keys.\n"
        "Exit codes: 0 the solution validates, 1 it does not, 2 bad input (nothing ran),\n"
        "3 stopped by SIGTERM, SIGINT, SIGUSR1, SIGUSR2 or SIGXCPU: every rank stops at the\n"
        "same step, writes a checkpoint there and the summary (\"stopped\" in its JSON); a\n"
        "second signal 3 s later ends the run at once. docs/signals.md.");
  }

  int run(const MpiContext& mpi) override {
    std::optional<driver::KokkosScope> kokkos;
    start_kokkos(kokkos);
    // Signals stop the time loop at a step all ranks agree on (signals.hpp).
    const driver::StopSignals stop_signals;
    try {
      return run_deck(mpi);
    } catch (const deck::DeckError& error) {
      // Every rank has the same error (see the file comment): rank 0 speaks.
      if (mpi.rank == 0) std::cerr << error.what() << "\nisostencil run: nothing was run\n";
      return 2;
    } catch (const core::CheckpointError& error) {
      // A damaged --restart checkpoint, found alike on every rank while the
      // models read their state: before anything is computed or written.
      if (mpi.rank == 0)
        std::cerr << "--restart " << restart_path_ << ": error: " << error.what()
                  << "\nisostencil run: nothing was run\n";
      return 2;
    }
  }

private:
  int run_deck(const MpiContext& mpi) {
    std::optional<core::CheckpointReader> restart;
    deck::Deck deck;
    if (!restart_path_.empty()) {
      try {
        restart.emplace(MPI_COMM_WORLD, restart_path_);
      } catch (const iso::Error& error) {
        throw deck::DeckError("--restart " + restart_path_ + ": error: " + error.what());
      }
      const core::CheckpointInfo& info = restart->info();
      if (deck_path_.empty()) {
        deck = deck::deck_from_text(info.deck, restart_path_ + " (stored deck)", overrides_, ".");
      } else {
        deck = deck::read_deck(MPI_COMM_WORLD, deck_path_, overrides_);
        if (deck.kernel.name != info.kernel || deck.grid.extent != info.global_extent)
          throw deck::DeckError("--restart " + restart_path_ + ": error: the checkpoint holds a " +
                                info.kernel + " run on " + fmt::format("{}", fmt::join(info.global_extent, "x")) +
                                " cells; the deck " + deck.source + " describes " + deck.kernel.name +
                                " on " + fmt::format("{}", fmt::join(deck.grid.extent, "x")) +
                                " (leave DECK out to use the checkpoint's own deck)");
      }
      if (info.step > deck.run.steps)
        deck.fail("run.steps", "run.steps = " + std::to_string(deck.run.steps) +
                                   " lies before the checkpoint's step " + std::to_string(info.step) +
                                   " (" + restart_path_ + "); run.steps is the last step, e.g. --set run.steps=" +
                                   std::to_string(info.step + deck.run.steps));
    } else {
      deck = deck::read_deck(MPI_COMM_WORLD, deck_path_, overrides_);
    }
    deck::check_decomposition(deck, mpi.size);
    run::check_kernel_inputs(deck);
    deck::check_output_writable(MPI_COMM_WORLD, deck);

    run::Setup setup;
    setup.deck = &deck;
    setup.mpi = mpi;
    setup.quiet = quiet_;
    setup.restart = restart ? &*restart : nullptr;
    setup.restart_path = restart_path_;
    setup.start_step = restart ? restart->info().step : 0;
    // Every kernel is registered, the driver's own too (the deck parser knows no other names).
    const run::KernelEntry* entry = run::find_kernel(deck.kernel.name);
    if (!entry) deck.fail("kernel.name", "kernel.name = \"" + deck.kernel.name + "\" has no runner");
    return entry->run(setup);
  }

  std::string deck_path_;
  std::vector<std::string> overrides_;
  std::string restart_path_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_run_command(CLI::App& parent) {
  return std::make_unique<RunCommand>(parent);
}

}  // namespace isostencil::cli
