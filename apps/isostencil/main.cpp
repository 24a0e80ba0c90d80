// isostencil: the project's driver. `plan` prints a neighborhood's schedules,
// `demo` runs and verifies the isomorphic collectives on MPI_COMM_WORLD.
#include "command.hpp"
#include "deck_commands.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef ISOSTENCIL_VERSION
#define ISOSTENCIL_VERSION "unknown"
#endif

namespace {

constexpr int usage_exit_code = 2;

int run_driver(int argc, char** argv, const isostencil::cli::MpiContext& mpi) {
  using namespace isostencil::cli;
  CLI::App app{
      "isostencil: stencil computations on isomorphic sparse collectives.\n"
      "Runs under mpirun; `plan` also runs without it.",
      "isostencil"};
  app.set_version_flag("--version", ISOSTENCIL_VERSION);
  app.set_help_all_flag("--help-all", "print the help of every subcommand");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  isostencil plan --moore 3:1\n"
      "  isostencil plan --moore 2:3 --procs 4,4 --mesh --json\n"
      "  isostencil plan --offsets \"1,0,0;0,1,1\" --rounds\n"
      "  mpirun -np 2 isostencil demo --iterations 100");

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
        std::cerr << "isostencil: error: unknown subcommand \"" << argv[1]
                  << "\"; choose one of: " << names
                  << "\nRun isostencil --help for more information.\n";
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
        std::cerr << "isostencil " << command->app()->get_name() << ": error: " << error.what()
                  << "\n"
                  << "Run isostencil " << command->app()->get_name()
                  << " --help for more information.\n";
      return usage_exit_code;
    } catch (const std::exception& error) {
      std::cerr << "isostencil " << command->app()->get_name() << ": error";
      if (mpi.size > 1) std::cerr << " on rank " << mpi.rank;
      std::cerr << ": " << error.what() << "\n";
      // Other ranks may be waiting in a collective this rank will never join.
      if (mpi.size > 1 && !command->rank0_only()) MPI_Abort(MPI_COMM_WORLD, usage_exit_code);
      return usage_exit_code;
    }
  }
  return usage_exit_code;  // unreachable: require_subcommand(1)
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::cerr << "isostencil: MPI_Init failed\n";
    return usage_exit_code;
  }
  // Let ISO_MPI_CHECK turn MPI failures into exceptions with a message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  isostencil::cli::MpiContext mpi;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi.size);
  const int code = run_driver(argc, argv, mpi);
  MPI_Finalize();
  return code;
}
