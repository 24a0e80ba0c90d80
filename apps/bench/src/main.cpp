// iso-bench: benchmarks of the isomorphic sparse collectives measured the way
// the paper measured them (barrier, maximum over ranks, Tukey's rule, median
// of launch medians), with CSV output for scripts/plot_bench.py.
//   collectives (default)  alltoall / allgather / alltoallw vs MPI_Neighbor_*
//   setup                  Table II: neighborhood + init vs MPI_Dist_graph_create*
//   halo                   the halo exchange of a real grid (iso::HaloExchange) per algorithm
#include "isostencil/bench/bench.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>

#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int usage_exit_code = 2;

int run(int argc, char** argv, int rank, int size) {
  CLI::App app{"iso-bench: isomorphic sparse collectives vs MPI's neighborhood collectives, measured as in the "
               "paper (barrier, max over ranks, Tukey 3xIQR, median of launch medians). Runs under mpirun.",
               "iso-bench"};
  app.require_subcommand(1);
  app.footer(
      "Without a subcommand, `collectives` runs.\n"
      "Examples:\n"
      "  mpirun -np 2 iso-bench --op alltoall -n moore:3:1 --csv a2a.csv\n"
      "  mpirun -np 2 iso-bench setup --csv setup.csv\n"
      "  mpirun -np 8 iso-bench halo -n 8,16,32 -c linear,auto --csv halo.csv\n"
      "  python3 scripts/plot_bench.py a2a.csv setup.csv -o plots/");
  std::vector<std::unique_ptr<isobench::Subcommand>> commands;
  commands.push_back(isobench::make_collectives_command(app));
  commands.push_back(isobench::make_setup_command(app));
  commands.push_back(isobench::make_halo_command(app));

  // Default subcommand: insert "collectives" unless a subcommand (or the
  // top-level --help) comes first.
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool top_help = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  if (!top_help && (args.empty() || args[0].empty() || args[0][0] == '-')) args.insert(args.begin(), "collectives");
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector

  try {
    app.parse(args);
  } catch (const CLI::ParseError& error) {
    std::ostringstream sink;
    const int code = rank == 0 ? app.exit(error) : app.exit(error, sink, sink);
    return code == 0 ? 0 : usage_exit_code;
  }
  for (auto& command : commands) {
    if (!command->app()->parsed()) continue;
    try {
      return command->run(MPI_COMM_WORLD);
    } catch (const isostencil::UsageError& error) {
      if (rank == 0)
        std::cerr << "iso-bench " << command->app()->get_name() << ": error: " << error.what() << "\n";
      return usage_exit_code;
    } catch (const std::exception& error) {
      std::cerr << "iso-bench " << command->app()->get_name() << ": error on rank " << rank << ": " << error.what()
                << "\n";
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 3);
      return 3;
    }
  }
  return usage_exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // FUNNELED, as every isostencil program asks: only the main thread calls MPI.
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::cerr << "iso-bench: MPI_Init_thread failed\n";
    return usage_exit_code;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // SimGrid SMPI offers SINGLE only, and each simulated rank is one thread.
#if defined(SMPI_H)
  const int required = MPI_THREAD_SINGLE;
#else
  const int required = MPI_THREAD_FUNNELED;
#endif
  if (provided < required) {
    if (rank == 0)
      std::cerr << "iso-bench: error: MPI provides thread level " << provided
                << ", below MPI_THREAD_FUNNELED\n";
    MPI_Finalize();
    return usage_exit_code;
  }
  const int code = run(argc, argv, rank, size);
  MPI_Finalize();
  return code;
}
