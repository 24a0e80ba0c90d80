// Neighborhood and process-grid specifications as the driver's users write
// them ("--moore 3:1", "--offsets 1,0,0;0,1,1", "--procs 4,2,2",
// "--periodic 1,0,1"), turned into the halo library's types with every
// mistake reported as a UsageError that names the option and the bad value.
#pragma once

#include "iso/geometry.hpp"
#include "iso/offsets.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace isostencil {

/// A mistake in the user's input: the driver prints it and exits with code 2.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The raw neighborhood options shared by the subcommands (empty = not given).
struct NeighborhoodArgs {
  std::string moore;         ///< "D:R"
  std::string offsets;       ///< "1,0,0;0,1,1"
  std::string offsets_file;  ///< one offset per line, '#' starts a comment
  bool self = false;         ///< Moore neighborhood includes the zero vector
  std::string procs;         ///< "P0,P1,..."
  std::string periodic;      ///< "1,0,1"
  bool mesh = false;         ///< no periodic dimension
};

using iso::MooreShape;

/// Size limits that keep a typo from running the machine out of memory/time.
struct Limits {
  /// Offsets in one neighborhood (a Moore neighborhood has (2r+1)^d - 1).
  std::int64_t max_offsets = 1'000'000;
  /// Rounds of the torus (hop) algorithm, sum over dimensions of the largest
  /// forward and backward coordinate: offsets far beyond the grid make one
  /// round per unit hop (10^5 rounds: about 1 s and 80 MB).
  std::int64_t max_torus_rounds = 100'000;
  /// Processes in one process grid.
  std::int64_t max_procs = 1'000'000'000;
  /// processes x (offsets + torus rounds) for grids with a non-periodic
  /// dimension, where every process's schedule differs and must be computed
  /// separately (about 5 s at the default on one core).
  std::int64_t max_mesh_work = 1'000'000;
};

/// Parses "D:R" (D >= 1, R >= 0): iso::parse_moore, its errors as UsageError.
MooreShape parse_moore(const std::string& text, const Limits& limits = {});
/// (2r+1)^d, saturating at INT64_MAX.
using iso::moore_size;

/// Parses "a,b,c" into integers; `option` names the option in messages.
std::vector<long long> parse_integer_list(const std::string& text, const std::string& option);
/// Parses "--procs P0,P1,...": exactly `dims` entries, each >= `min_size`.
std::vector<int> parse_procs(const std::string& text, int dims, int min_size = 1,
                             const Limits& limits = {});
/// Parses a list of block sizes in bytes ("8,512,8192"): each 1 .. 2^30, at
/// most 64 sizes, in the order given (repeats dropped). `option` names the
/// option in messages.
std::vector<long> parse_bytes_list(const std::string& text, const std::string& option = "--bytes");
/// Parses "--periodic 1,0,1" (also true/false, yes/no): exactly `dims` flags.
std::vector<bool> parse_periodic(const std::string& text, int dims);

/// Reads one offset per line ("1,0,0" or "1 0 0"); blank lines and everything
/// after '#' are ignored: iso::read_offsets_file, its errors (naming FILE:LINE)
/// as UsageError.
iso::OffsetList read_offsets_file(const std::string& path);

/// The offsets chosen by exactly one of moore/offsets/offsets_file, with a
/// human-readable description ("Moore d=3 r=1", "offsets from FILE", ...).
/// `default_moore` is used when none is given; empty means "one is required".
struct ResolvedOffsets {
  iso::OffsetList offsets;
  std::string description;
};
ResolvedOffsets resolve_offsets(const NeighborhoodArgs& args, const std::string& default_moore = "",
                                const Limits& limits = {});

/// Periodic flags for `dims` dimensions: all true by default, all false with
/// --mesh, or the explicit --periodic list.
std::vector<bool> resolve_periodic(const NeighborhoodArgs& args, int dims);

/// Rounds of the torus (hop) algorithm, in 64 bits: sum over dimensions of
/// max(0, max_i v_ij) + max(0, max_i -v_ij).
std::int64_t torus_rounds(const iso::OffsetList& offsets);

/// Refuses grids and neighborhoods over the limits (UsageError).
void check_limits(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                  const Limits& limits = {});

/// "3 x 3 x 3"
std::string format_sizes(const std::vector<int>& sizes);
/// "yes no yes"
std::string format_flags(const std::vector<bool>& flags);

}  // namespace isostencil
