// The deck-driven subcommands: `run`, `check` and `halo-check`
// (run_command.cpp, check_command.cpp, halo_check_command.cpp).
#pragma once

#include "command.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace isostencil::cli {

std::unique_ptr<Command> make_run_command(CLI::App& parent);
std::unique_ptr<Command> make_check_command(CLI::App& parent);
std::unique_ptr<Command> make_halo_check_command(CLI::App& parent);

}  // namespace isostencil::cli
