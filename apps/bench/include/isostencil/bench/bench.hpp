// The interface of iso-bench's subcommands (the timing method they share is
// in timing.hpp).
#pragma once

#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"
#include "isostencil/bench/timing.hpp"

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace isobench {

class Subcommand {
public:
  virtual ~Subcommand() = default;
  virtual CLI::App* app() const = 0;
  /// Runs on every rank after parsing; returns the exit code.
  virtual int run(MPI_Comm world) = 0;
};

std::unique_ptr<Subcommand> make_collectives_command(CLI::App& parent);
std::unique_ptr<Subcommand> make_setup_command(CLI::App& parent);
std::unique_ptr<Subcommand> make_halo_command(CLI::App& parent);

/// An option's comma list of integers ("2,3,4", "1-3"), each in [low, high];
/// throws isostencil::UsageError naming the option. (setup_command.cpp)
std::vector<int> parse_int_list(const std::string& text, const char* option, int low, int high);

}  // namespace isobench
