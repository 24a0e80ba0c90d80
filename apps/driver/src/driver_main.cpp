// The driver's command line (isostencil::driver::main): `plan` prints a
// neighborhood's schedules, `demo` runs and verifies the isomorphic
// collectives on MPI_COMM_WORLD, `run`/`check`/`halo-check` work on decks.
// The `isostencil` executable and programs with their own kernels
// (driver.hpp) share it.
#include "command.hpp"
#include "deck_commands.hpp"

#include "isostencil/driver/driver.hpp"
#include "isostencil/driver/kokkos_args.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef ISOSTENCIL_VERSION
#define ISOSTENCIL_VERSION "unknown"
#endif

namespace isostencil::driver {

namespace {

constexpr int usage_exit_code = 2;

std::vector<KernelEntry>& registry() {
  static std::vector<KernelEntry> entries;
  return entries;
}

KokkosArgs& kokkos_flags() {
  static KokkosArgs flags;
  return flags;
}

int run_driver(int argc, char** argv, const cli::MpiContext& mpi, const Program& program) {
  using namespace isostencil::cli;
  const std::string name = program.name.empty() ? std::string("isostencil") : program.name;
  CLI::App app{program.description.empty()
                   ? name + ": stencil computations on isomorphic sparse collectives.\n"
                            "Runs under mpirun; `plan` also runs without it."
                   : program.description,
               name};
  // The version, then the Kokkos it runs on (the default execution space is
  // where kernels run; the backends list what this Kokkos could run).
  app.set_version_flag("--version",
                       (program.version.empty()
                            ? std::string(ISOSTENCIL_VERSION)
                            : program.version + " (isostencil " + ISOSTENCIL_VERSION + ")") +
                           "\n" + kokkos_description() + ", default execution space " +
                           execution_space_name());
  app.set_help_all_flag("--help-all", "print the help of every subcommand");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  " + name + " plan --moore 3:1\n"
      "  " + name + " plan --moore 2:3 --procs 4,4 --mesh --json\n"
      "  " + name + " plan --offsets \"1,0,0;0,1,1\" --rounds\n"
      "  mpirun -np 2 " + name + " demo --iterations 100\n"
      "Kokkos' own flags (--kokkos-num-threads=N, --kokkos-device-id=N, ...; "
      "--kokkos-help lists them) and KOKKOS_* variables go to Kokkos, for any subcommand.\n"
      "Exit codes: 0 success, 1 a solution or check does not validate, 2 bad input, "
      "3 `run` stopped by a signal (checkpoint written; run --help).");

  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_plan_command(app));
  commands.push_back(make_demo_command(app));
  commands.push_back(make_run_command(app));
  commands.push_back(make_check_command(app));
  commands.push_back(make_halo_check_command(app));

  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const auto& command : commands) {
      known = known || command->app()->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + command->app()->get_name();
    }
    if (!known) {
      if (mpi.rank == 0)
        std::cerr << name << ": error: unknown subcommand \"" << argv[1]
                  << "\"; choose one of: " << names
                  << "\nRun " << name << " --help for more information.\n";
      return usage_exit_code;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Every rank parses the same arguments and reaches the same verdict;
    // rank 0 speaks for all of them.
    std::ostringstream sink;
    if (mpi.rank == 0)
      app.exit(error);
    else
      app.exit(error, sink, sink);
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return 0;
    return usage_exit_code;
  }

  for (auto& command : commands) {
    if (!command->app()->parsed()) continue;
    try {
      return command->run(mpi);
    } catch (const isostencil::UsageError& error) {
      if (mpi.rank == 0 || command->rank0_only())
        std::cerr << name << " " << command->app()->get_name() << ": error: " << error.what()
                  << "\n"
                  << "Run " << name << " " << command->app()->get_name()
                  << " --help for more information.\n";
      return usage_exit_code;
    } catch (const std::exception& error) {
      // One write of the whole line: MPI_Abort may end the job before a line
      // written in pieces reaches the launcher (MPICH's hydra cut it).
      std::string line = name + " " + command->app()->get_name() + ": error";
      if (mpi.size > 1) line += " on rank " + std::to_string(mpi.rank);
      line += std::string(": ") + error.what() + "\n";
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fflush(stderr);
      // Other ranks may be waiting in a collective this rank will never join.
      if (mpi.size > 1 && !command->rank0_only()) MPI_Abort(MPI_COMM_WORLD, usage_exit_code);
      return usage_exit_code;
    }
  }
  return usage_exit_code;  // unreachable: require_subcommand(1)
}

}  // namespace

const char* version() { return ISOSTENCIL_VERSION; }

const KokkosArgs& kokkos_args() { return kokkos_flags(); }

void register_kernel(KernelEntry entry) {
  register_builtin_kernels();  // first: the default kernel and the key table's order
  if (!entry.run)
    throw iso::Error("isostencil::driver::register_kernel(\"" + entry.deck.name + "\"): no runner");
  deck::register_deck_kernel(entry.deck);  // checks the name and the parameters
  registry().push_back(std::move(entry));
}

const KernelEntry* find_kernel(const std::string& name) {
  for (const KernelEntry& entry : registry())
    if (entry.deck.name == name) return &entry;
  return nullptr;
}

void check_kernel_inputs(const deck::Deck& deck) {
  if (const KernelEntry* entry = find_kernel(deck.kernel.name))
    if (entry->check) entry->check(deck);
}

int main(int argc, char** argv, const Program& program) {
  // A file size limit (ulimit -f) must fail the write (EFBIG, an error on
  // every rank) rather than kill one rank with SIGXFSZ and hang the others.
  std::signal(SIGXFSZ, SIG_IGN);
  register_builtin_kernels();
  const std::string name = program.name.empty() ? std::string("isostencil") : program.name;
  if (!init_mpi_funneled(argc, argv, name.c_str())) return usage_exit_code;
  // Let ISO_MPI_CHECK turn MPI failures into exceptions with a message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cli::MpiContext mpi;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi.size);
  // Kokkos' flags leave argv before CLI11 (which would reject them) parses it;
  // the commands that run kernels initialize Kokkos with them.
  kokkos_flags() = KokkosArgs(argc, argv);
  int code = 0;
  if (kokkos_flags().help()) {
    if (mpi.rank == 0) {
      try {
        kokkos_flags().print_help();
      } catch (const std::exception& error) {
        std::cerr << name << ": error: " << error.what() << "\n";
        code = usage_exit_code;
      }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    code = run_driver(argc, argv, mpi, program);
  }
  MPI_Finalize();
  return code;
}

}  // namespace isostencil::driver
