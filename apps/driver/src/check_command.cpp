// `isostencil check DECK [--set ...] [--effective] [--keys]`: validates a deck
// without running it: the schema (unknown keys, types, allowed values,
// impossible combinations), the kernel's own inputs (Life rule, RLE pattern),
// the decomposition on this run's rank count, and whether output.dir could
// be written (nothing is created). Exit code 0 and a one-paragraph summary,
// or 2 and the errors (rank 0 prints them; every rank exits with 2, as in
// `run`).
#include "command.hpp"
#include "isostencil/driver/run.hpp"

#include "isostencil/deck/checks.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/core/decomposition.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

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
    app_->add_flag("--effective", effective_,
                   "also print the effective deck (every key resolved; what outputs and "
                   "checkpoints store)");
    app_->add_flag("--keys", keys_, "print every deck key with its type, default and allowed values "
                                    "(Markdown, as in the README) and exit");
  }

  int run(const MpiContext& mpi) override {
    if (keys_) {
      if (mpi.rank == 0) std::cout << deck::deck_schema_markdown();
      return 0;
    }
    try {
      const deck::Deck deck = deck::read_deck(MPI_COMM_WORLD, deck_path_, overrides_);
      run::check_kernel_inputs(deck);
      deck::check_decomposition(deck, mpi.size);
      deck::check_output_writable(MPI_COMM_WORLD, deck, false);
      if (mpi.rank == 0) {
        const std::vector<int> procs = core::Decomposition::choose_process_dims(mpi.size, deck.grid.procs);
        std::string periodic;
        for (const bool p : deck.grid.periodic) periodic += std::string(periodic.empty() ? "" : ", ") + (p ? "periodic" : "bounded");
        std::cout << fmt::format(
            "{}: OK\n  kernel {}, {}-D grid {} ({}), stencil {}\n  on {} rank{} as {}; {} steps, "
            "halo {}{}; output {}\n",
            deck.source, deck.kernel.name, deck.grid.dims, fmt::join(deck.grid.extent, "x"), periodic,
            deck.make_stencil().describe(), mpi.size, mpi.size == 1 ? "" : "s",
            fmt::join(procs, "x"), deck.run.steps,
            deck.halo.algorithm,
            deck.halo.validate_every > 0 ? ", validated every " + std::to_string(deck.halo.validate_every)
                                         : std::string(),
            deck.output.format == "hdf5" ? deck.output_path(".h5") : std::string("none"));
        if (effective_) std::cout << "\n" << deck.effective_toml();
      }
      return 0;
    } catch (const deck::DeckError& error) {
      if (mpi.rank == 0) std::cerr << error.what() << "\n";
      return 2;
    }
  }

private:
  std::string deck_path_;
  std::vector<std::string> overrides_;
  bool effective_ = false;
  bool keys_ = false;
};

}  // namespace

std::unique_ptr<Command> make_check_command(CLI::App& parent) {
  return std::make_unique<CheckCommand>(parent);
}

}  // namespace isostencil::cli
