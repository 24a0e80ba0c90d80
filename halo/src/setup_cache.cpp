// The process's set-up caches: schedules per (offsets, grid, coordinates,
// algorithm, collective), and execution plans per (schedule, rank, port
// limit, block layout). A grid's exchanges of several fields, a restart or a
// repeated set-up then builds only its requests. Both keep the most recently
// used entries. The library is called from the host thread only: no lock.
#include "operation_internal.hpp"

#include "iso/error.hpp"

#include <cstdlib>
#include <cstring>
#include <list>
#include <string>

namespace iso {

namespace detail {

namespace {

constexpr std::size_t capacity = 32;

SetupCacheCounts& counts() {
  static SetupCacheCounts figures;
  return figures;
}

bool enabled() {
  static const bool on = [] {
    const char* value = std::getenv("ISO_SETUP_CACHE");
    return !(value && (std::string(value) == "off" || std::string(value) == "0"));
  }();
  return on;
}

struct ScheduleEntry {
  std::uint64_t hash = 0;
  OffsetList offsets;
  CartGeometry grid;
  std::vector<int> coords;
  Algorithm algorithm = Algorithm::linear;
  Collective collective = Collective::alltoall;
  std::shared_ptr<const Schedule> schedule;
};

struct PlanEntry {
  PlanKey key;
  std::shared_ptr<const ExecutionPlan> plan;
};

// Most recently used first.
std::list<ScheduleEntry>& schedule_entries() {
  static std::list<ScheduleEntry> entries;
  return entries;
}
std::list<PlanEntry>& plan_entries() {
  static std::list<PlanEntry> entries;
  return entries;
}

}  // namespace

std::int64_t handle_word(MPI_Datatype type) {
  std::int64_t word = 0;
  static_assert(sizeof(MPI_Datatype) <= sizeof(word), "a datatype handle fits in 64 bits");
  std::memcpy(&word, &type, sizeof(MPI_Datatype));
  return word;
}

std::shared_ptr<const Schedule> cached_schedule(const OffsetList& offsets, std::uint64_t offsets_hash,
                                                const CartGeometry& grid, const std::vector<int>& coords,
                                                Algorithm algorithm, Collective collective) {
  std::list<ScheduleEntry>& entries = schedule_entries();
  if (enabled())
    for (auto entry = entries.begin(); entry != entries.end(); ++entry)
      if (entry->hash == offsets_hash && entry->algorithm == algorithm && entry->collective == collective &&
          entry->coords == coords && entry->grid.sizes == grid.sizes && entry->grid.periodic == grid.periodic &&
          entry->offsets == offsets) {
        entries.splice(entries.begin(), entries, entry);
        ++counts().schedule_hits;
        return entries.front().schedule;
      }
  // Built before anything is cached: a schedule the offsets do not allow throws.
  auto schedule = std::make_shared<const Schedule>(build_schedule(offsets, grid, coords.data(), algorithm, collective));
  ++counts().schedule_misses;
  if (!enabled()) return schedule;
  entries.push_front({offsets_hash, offsets, grid, coords, algorithm, collective, schedule});
  if (entries.size() > capacity) entries.pop_back();
  return schedule;
}

PlanKey plan_key(const std::shared_ptr<const Schedule>& schedule, int rank, int ports, const Buffers& buffers,
                 TypeFacts& facts) {
  PlanKey key;
  if (!enabled()) return key;
  key.schedule = schedule, key.rank = rank, key.ports = ports;
  // Types by what a plan reads from them (TypeFacts::describe), numbered in
  // order of first use; a handle alone could have been freed and reused.
  std::vector<MPI_Datatype> seen;
  std::vector<std::int64_t> descriptions;
  auto type_id = [&](const BlockDesc& block) -> std::int64_t {
    for (std::size_t k = seen.size(); k-- > 0;)
      if (seen[k] == block.type) return static_cast<std::int64_t>(k);
    if (!facts.describe(block, descriptions)) return -1;
    seen.push_back(block.type);
    return static_cast<std::int64_t>(seen.size() - 1);
  };
  if (!buffers.regular_layout.empty()) {
    if (buffers.send.empty() || buffers.recv.empty()) return key;
    key.layout = buffers.regular_layout;
    key.layout[1] = type_id(buffers.send[0]);
    key.layout[4] = type_id(buffers.recv[0]);
    if (key.layout[1] < 0 || key.layout[4] < 0) return key;
  } else {
    // Each block's place in its buffer, count and type.
    key.layout.reserve(3 * (buffers.send.size() + buffers.recv.size()) + 2);
    for (const auto* side : {&buffers.send, &buffers.recv}) {
      const MPI_Aint base = side == &buffers.send ? buffers.send_base : buffers.recv_base;
      key.layout.push_back(static_cast<std::int64_t>(side->size()));
      for (const BlockDesc& block : *side) {
        const std::int64_t id = type_id(block);
        if (id < 0) return key;
        key.layout.insert(key.layout.end(), {block.address - base, block.count, id});
      }
    }
  }
  key.layout.insert(key.layout.end(), descriptions.begin(), descriptions.end());
  std::uint64_t digest = mix_fingerprint(mix_fingerprint(static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(ports)),
                             reinterpret_cast<std::uintptr_t>(schedule.get()));
  for (std::int64_t word : key.layout) digest = mix_fingerprint(digest, static_cast<std::uint64_t>(word));
  key.digest = digest;
  key.usable = true;
  return key;
}

std::shared_ptr<const ExecutionPlan> find_plan(const PlanKey& key) {
  std::list<PlanEntry>& entries = plan_entries();
  for (auto entry = entries.begin(); entry != entries.end(); ++entry)
    if (entry->key.digest == key.digest && entry->key.schedule == key.schedule && entry->key.rank == key.rank &&
        entry->key.ports == key.ports && entry->key.layout == key.layout) {
      entries.splice(entries.begin(), entries, entry);
      ++counts().plan_hits;
      return entries.front().plan;
    }
  ++counts().plan_misses;
  return nullptr;
}

void store_plan(const PlanKey& key, std::shared_ptr<const ExecutionPlan> plan) {
  std::list<PlanEntry>& entries = plan_entries();
  entries.push_front({key, std::move(plan)});
  if (entries.size() > capacity) entries.pop_back();
}

}  // namespace detail

SetupCacheCounts setup_cache_counts() {
  SetupCacheCounts figures = detail::counts();
  figures.schedules = detail::schedule_entries().size();
  figures.plans = detail::plan_entries().size();
  return figures;
}

void clear_setup_caches() {
  detail::schedule_entries().clear();
  detail::plan_entries().clear();
}

}  // namespace iso
