// Algorithm::tune's cache (docs/design/cost-model.md#the-tune-cache): the
// choice and measurements of one tuning, kept beside the cost model and
// keyed by everything the measurement depends on, so a later run with the
// same operation on the same machine pays nothing for tuning, and auto runs
// its pick where it contradicts the model (tune_entry_contradicts).
#pragma once

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/geometry.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iso {

/// The cache file: ISO_TUNE_CACHE when set ("off": none, an empty string
/// returned), else tune_cache.txt in CostModel::cache_directory(). Its keys
/// hold the machine signature (machine_signature in iso/cost_model.hpp).
/// The path is read and written by iso/file_write.hpp's rule for caches: a
/// link is followed, a character device such as /dev/null keeps nothing, a
/// directory, FIFO, socket or block device is an error.
std::string tune_cache_path();

/// Digest of one process's block sizes (BlockBytes: send then receive).
std::uint64_t block_bytes_digest(const BlockBytes& bytes);

/// The cache key of one operation: 16 hex digits over the machine
/// signature, isostencil's version, the collective, the offsets, the process
/// grid (sizes and periods), the port limit asked for and the block sizes
/// (a process's block_bytes_digest where every process has the same sizes,
/// else a combination over ranks that the caller supplies).
std::string tune_cache_key(const std::string& machine, Collective collective, const OffsetList& offsets,
                           const CartGeometry& grid, int ports, std::uint64_t bytes_digest);

/// One cached tuning: what won and every trial behind it.
struct TuneChoice {
  Algorithm algorithm = Algorithm::linear;
  int ports = 0;
  std::vector<TuneTrial> trials;
};

/// The entry of `key` in the file at `path`, if any (not collective; a
/// missing or unreadable file, a character device, or a malformed line, is no
/// entry). Throws iso::Error when the path is of a kind a cache may not be
/// (iso::read_cache_file).
std::optional<TuneChoice> tune_cache_find(const std::string& path, const std::string& key);

/// Adds or replaces the entry of `key` (the file keeps the newest
/// tune_cache_capacity entries); `note` is a readable description written
/// beside it. Merged under a lock into the file as it is then and written
/// whole beside it, renamed over it (iso::update_cache_file): a concurrent
/// reader sees the old file or the new one, and a concurrent writer's entries
/// stay. Nothing is written at a character device. Throws iso::Error when
/// the file cannot be written.
void tune_cache_store(const std::string& path, const std::string& key, const TuneChoice& choice,
                      const std::string& note);
inline constexpr int tune_cache_capacity = 4096;

/// Whether auto runs `entry`'s pick instead of the model's choice
/// (`model_algorithm` at `model_ports`): where the entry timed the model's
/// choice at more than tune_follow_margin times its pick, or did not time
/// one of them (docs/design/cost-model.md#auto-follows-measurements). Within
/// the margin the difference is the noise of tune's few calls.
bool tune_entry_contradicts(const TuneChoice& entry, Algorithm model_algorithm, int model_ports);
inline constexpr double tune_follow_margin = 1.1;

}  // namespace iso
