// What every benchmark's main shares: MPI from start to end, the command line
// parsed on every rank with rank 0 alone printing help and usage errors, an
// error on any rank reported as "<program>: rank <r>: <what>", and the
// process grid MPI_Dims_create gives. Each main keeps only its own settings,
// its own initialization (Kokkos, PETSc) and its own work:
//
//   int main(int argc, char** argv) {
//     isobench::BenchMain bench(argc, argv, "isostencil-bench-x");
//     CLI::App app{"..."};
//     ...options...
//     if (const auto code = bench.parse(app)) return *code;
//     Kokkos::ScopeGuard kokkos(argc, argv);
//     return bench.run([&] { ...; return 0; });
//   }
//
// Statistics, timing and CSV helpers come from iso-bench's support library
// (apps/bench: stats.hpp, timing.hpp, report.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace isobench {

/// MPI_Init_thread(MPI_THREAD_FUNNELED) on construction (a lower level ends
/// the program with an error), MPI_Finalize on destruction (declare it first
/// in main, so that everything else is gone before MPI is). Kokkos' flags
/// (--kokkos-*) stay in argc/argv for Kokkos::ScopeGuard(argc, argv) and are
/// hidden from parse().
class BenchMain {
public:
  BenchMain(int& argc, char**& argv, std::string program);
  ~BenchMain();
  BenchMain(const BenchMain&) = delete;
  BenchMain& operator=(const BenchMain&) = delete;

  int rank() const { return rank_; }  ///< in MPI_COMM_WORLD
  int size() const { return size_; }
  const std::string& program() const { return program_; }

  /// Parses the command line on every rank. Empty: go on. Otherwise the code
  /// main returns, the same on every rank (CLI11's: 0 after --help); rank 0
  /// alone has printed the help or the error.
  std::optional<int> parse(CLI::App& app) const;

  /// Runs `body` and returns its code; an exception is printed to stderr as
  /// "<program>: rank <r>: <what>" and gives 1.
  int run(const std::function<int()>& body) const;

private:
  int argc_;  ///< what parse() gives CLI11: the arguments without Kokkos' flags
  char** argv_;
  std::string program_;
  std::vector<std::string> storage_;  ///< the program's arguments, Kokkos' flags first
  std::vector<char*> all_;            ///< into storage_: argv after construction
  std::vector<char*> cli_;            ///< into storage_: argv_
  int rank_ = 0;
  int size_ = 1;
};

/// The process grid of `comm` that MPI_Dims_create chooses in D dimensions.
template <int D>
std::array<int, D> process_dims(MPI_Comm comm = MPI_COMM_WORLD) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::array<int, D> dims{};
  MPI_Dims_create(size, D, dims.data());
  return dims;
}

}  // namespace isobench
