// The driver's subcommands. Each lives in its own file, registers itself on
// the top-level CLI11 app and runs after MPI_Init; main.cpp only dispatches.
// Adding one (`run DECK`, `check DECK`) = one make_*_command and one line in
// main.cpp's list.
#pragma once

#include "isostencil/driver/context.hpp"
#include "isostencil/driver/kokkos_args.hpp"
#include "isostencil/spec.hpp"

#include "iso/cost_model.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace isostencil::driver {
/// Kokkos' flags of the command line driver::main runs (driver_main.cpp);
/// a command that runs kernels holds a KokkosScope on them.
const KokkosArgs& kokkos_args();
}  // namespace isostencil::driver

namespace isostencil::cli {

using MpiContext = driver::MpiContext;
/// The run loop and kernel models (include/isostencil/driver/run.hpp).
namespace run = ::isostencil::driver;

class Command {
public:
  virtual ~Command() = default;
  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  /// The subcommand's CLI11 app (parsed() tells whether it was chosen).
  CLI::App* app() const { return app_; }
  /// Runs the subcommand; returns the process exit code. Throws UsageError for
  /// bad input (exit code 2). A command whose work is collective must throw
  /// UsageError on every rank alike, before it communicates.
  virtual int run(const MpiContext& mpi) = 0;
  /// True when only rank 0 works and the other ranks return at once; then an
  /// error on rank 0 need not abort the others.
  virtual bool rank0_only() const { return false; }

protected:
  CLI::App* app_ = nullptr;
};

std::unique_ptr<Command> make_plan_command(CLI::App& parent);
std::unique_ptr<Command> make_demo_command(CLI::App& parent);

/// Starts Kokkos with the command line's Kokkos flags (kokkos_args()) in
/// `scope`; flags Kokkos refuses are a UsageError (the same on every rank).
inline void start_kokkos(std::optional<driver::KokkosScope>& scope) {
  try {
    scope.emplace(driver::kokkos_args());
  } catch (const std::exception& error) {
    // Kokkos 3.4 reports a malformed number as std::stoi's invalid_argument.
    std::string flags;
    for (const std::string& flag : driver::kokkos_args().flags()) flags += (flags.empty() ? "" : " ") + flag;
    throw UsageError("Kokkos refused its flags (" + flags + "): " + error.what());
  }
}

/// --moore/--offsets/--offsets-file/--self/--procs/--mesh/--periodic.
void add_neighborhood_options(CLI::App& app, NeighborhoodArgs& args, const std::string& moore_help,
                              const std::string& procs_help);

/// The cost model options of `plan --predict` and `demo`.
struct ModelArgs {
  std::string model;  ///< FILE, "defaults", "calibrate"; empty: the command's default
  std::string save;   ///< --save-model FILE
  bool calibrate() const { return model == "calibrate"; }
};
/// --model and --save-model (group "Cost model"); returns the --model option.
CLI::Option* add_model_options(CLI::App& app, ModelArgs& args, const std::string& default_help);
/// Writes `model` to `path` (--save-model); returns the error message, empty
/// when it worked or `path` is empty.
std::string save_model(const iso::CostModel& model, const std::string& path);

}  // namespace isostencil::cli
