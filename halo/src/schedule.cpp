#include "iso/schedule.hpp"
#include "iso/cost_model.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace iso {

const char* to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::linear: return "linear";
    case Algorithm::torus: return "torus";
    case Algorithm::direct: return "direct";
    case Algorithm::basis: return "basis";
    case Algorithm::mpi: return "mpi";
    case Algorithm::automatic: return "auto";
    case Algorithm::tune: return "tune";
  }
  return "?";
}

const char* to_string(Collective collective) {
  return collective == Collective::alltoall ? "alltoall" : "allgather";
}

const char* to_string(Buffer buffer) {
  switch (buffer) {
    case Buffer::send: return "S";
    case Buffer::recv: return "R";
    case Buffer::temp: return "T";
    case Buffer::temp2: return "T2";
  }
  return "?";
}

const std::vector<AlgorithmInfo>& algorithm_table() {
  static const std::vector<AlgorithmInfo> table{
      {Algorithm::linear, "linear", "straightforward", true, "one round per nonzero offset, no combining"},
      {Algorithm::torus, "torus", "hop", true, "message combining over immediate torus links"},
      {Algorithm::direct, "direct", "torus-direct", true, "message combining with direct shifts along each dimension"},
      {Algorithm::basis, "basis", "additive", true, "one round per vector of a small additive basis of the offsets"},
      {Algorithm::mpi, "mpi", "native", false, "the MPI library's own neighborhood collective"},
      {Algorithm::automatic, "auto", "automatic", false, "the least predicted time of the others (cost model)"},
      {Algorithm::tune, "tune", "autotune", false, "the least measured time of the others (timed at init)"},
  };
  return table;
}

std::string algorithm_names(AlgorithmNames which, const std::string& separator, const char* last_separator) {
  std::vector<const char*> names;
  if (which == AlgorithmNames::auto_first) names.push_back("auto");
  for (const AlgorithmInfo& info : algorithm_table()) {
    const bool automatic = info.algorithm == Algorithm::automatic || info.algorithm == Algorithm::tune;
    if (info.algorithm == Algorithm::automatic && which != AlgorithmNames::all) continue;
    if (automatic && which != AlgorithmNames::all && which != AlgorithmNames::auto_first) continue;
    if (which == AlgorithmNames::scheduled && !info.scheduled) continue;
    names.push_back(info.name);
  }
  std::string text;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0) text += last_separator && k + 1 == names.size() ? std::string(last_separator) : separator;
    text += names[k];
  }
  return text;
}

Algorithm parse_algorithm(const std::string& name) {
  std::string allowed;
  for (const AlgorithmInfo& info : algorithm_table()) {
    if (name == info.name || name == info.alias) return info.algorithm;
    allowed += (allowed.empty() ? "" : ", ") + std::string(info.name) +
               (info.algorithm == Algorithm::automatic ? "" : std::string(" (") + info.alias + ")");
  }
  throw Error("iso::parse_algorithm: unknown algorithm \"" + name + "\"; allowed: " + allowed);
}

long Schedule::messages_sent() const {
  long n = 0;
  for (const Round& round : rounds) n += round.send.empty() ? 0 : 1;
  return n;
}

long Schedule::blocks_sent() const {
  long n = 0;
  for (const Round& round : rounds) n += static_cast<long>(round.send.size());
  return n;
}

void step_messages(const Schedule& schedule, const ExecutionStep& step, int self_rank, StepMessages& out) {
  out.messages.clear();
  out.rounds.clear();
  for (const bool sending : {false, true}) {
    // (partner, round) of every message of this direction; grouped by
    // partner where the schedule merges them (a sort: a step of linear has
    // up to s rounds; no allocation once the buffers have grown).
    std::vector<std::pair<int, int>>& pairs = out.scratch;
    pairs.clear();
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
      if (is_local_round(round, self_rank)) continue;
      const int peer = sending ? round.send_rank : round.recv_rank;
      if (peer >= 0 && !(sending ? round.send : round.recv).empty()) pairs.emplace_back(peer, r);
    }
    if (schedule.merges_partners) std::sort(pairs.begin(), pairs.end());
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const int at = static_cast<int>(out.rounds.size());
      if (!schedule.merges_partners || k == 0 || pairs[k].first != pairs[k - 1].first)
        out.messages.push_back(
            {sending, pairs[k].first, schedule.rounds[static_cast<std::size_t>(pairs[k].second)].index, at, at});
      out.rounds.push_back(pairs[k].second);
      out.messages.back().last = at + 1;
    }
  }
}

const std::vector<BlockRef>& step_message_entries(const Schedule& schedule, const StepMessages& step,
                                                  const StepMessage& message, std::vector<BlockRef>& scratch) {
  auto entries_of = [&](int k) -> const std::vector<BlockRef>& {
    const Round& round = schedule.rounds[static_cast<std::size_t>(step.rounds[static_cast<std::size_t>(k)])];
    return message.sending ? round.send : round.recv;
  };
  if (message.last - message.first == 1) return entries_of(message.first);
  scratch.clear();
  for (int k = message.first; k < message.last; ++k) scratch.insert(scratch.end(), entries_of(k).begin(), entries_of(k).end());
  return scratch;
}

namespace {

constexpr long max_torus_rounds = 1000000;
// Sum over blocks of their unit hops: the torus routes' size and the work of
// building its schedules (paths, trie), so it is bounded as well.
constexpr long max_torus_block_hops = 10000000;

bool is_zero(const int* v, int dims) {
  return std::all_of(v, v + dims, [](int c) { return c == 0; });
}

// The global round list and, per block, the rounds it moves in (ascending).
// Identical on every process: it depends on the offsets alone.
struct Routes {
  int dims = 0;
  std::vector<std::vector<int>> shifts;
  std::vector<std::vector<int>> paths;
};

// No rounds yet, one empty path per block.
Routes empty_routes(const OffsetList& offsets) {
  Routes routes;
  routes.dims = offsets.dims();
  routes.paths.resize(offsets.size());
  return routes;
}

// Appends the round whose shift is value * e_j; returns its index.
int add_axis_round(Routes& routes, int j, int value) {
  std::vector<int> sigma(routes.dims, 0);
  sigma[j] = value;
  routes.shifts.push_back(std::move(sigma));
  return static_cast<int>(routes.shifts.size()) - 1;
}

Routes route_linear(const OffsetList& offsets) {
  Routes routes = empty_routes(offsets);
  for (int i = 0; i < offsets.size(); ++i) {
    if (is_zero(offsets[i], offsets.dims())) continue;
    routes.paths[i].push_back(static_cast<int>(routes.shifts.size()));
    routes.shifts.emplace_back(offsets[i], offsets[i] + offsets.dims());
  }
  return routes;
}

// P_j and M_j of docs/design/schedules.md#torus: the farthest reach forward and backward in dimension j.
std::pair<int, int> unit_hops(const OffsetList& offsets, int j) {
  int forward = 0, backward = 0;
  for (int i = 0; i < offsets.size(); ++i) {
    forward = std::max(forward, offsets[i][j]);
    backward = std::max(backward, -offsets[i][j]);
  }
  return {forward, backward};
}

// docs/design/schedules.md#torus: per dimension, P_j unit hops forward, then M_j unit hops backward.
Routes route_torus(const OffsetList& offsets) {
  const int d = offsets.dims();
  const int s = offsets.size();
  Routes routes = empty_routes(offsets);
  // A block's path has one round per unit hop: sized once, not grown hop by
  // hop (the growth was most of this function's time).
  for (int i = 0; i < s; ++i) {
    std::size_t hops = 0;
    for (int j = 0; j < d; ++j) hops += static_cast<std::size_t>(std::abs(offsets[i][j]));
    routes.paths[i].reserve(hops);
  }
  for (int j = 0; j < d; ++j) {
    const auto [forward, backward] = unit_hops(offsets, j);
    const int first_forward = static_cast<int>(routes.shifts.size());
    const int first_backward = first_forward + forward;
    for (int k = 0; k < forward + backward; ++k) add_axis_round(routes, j, k < forward ? 1 : -1);
    for (int i = 0; i < s; ++i) {
      const int c = offsets[i][j];
      const int base = c > 0 ? first_forward : first_backward;
      for (int k = 0; k < std::abs(c); ++k) routes.paths[i].push_back(base + k);
    }
  }
  return routes;
}

// docs/design/schedules.md#direct: per dimension, one direct shift per distinct nonzero coordinate value.
Routes route_direct(const OffsetList& offsets) {
  const int d = offsets.dims();
  const int s = offsets.size();
  Routes routes = empty_routes(offsets);
  for (int j = 0; j < d; ++j) {
    std::set<int> values;
    for (int i = 0; i < s; ++i)
      if (offsets[i][j] != 0) values.insert(offsets[i][j]);
    std::map<int, int> round_of;
    for (int c : values) round_of[c] = add_axis_round(routes, j, c);
    for (int i = 0; i < s; ++i)
      if (offsets[i][j] != 0) routes.paths[i].push_back(round_of[offsets[i][j]]);
  }
  return routes;
}

// docs/design/schedules.md#basis: one round per basis vector, each block along its terms.
Routes route_basis(const OffsetList& offsets, const std::vector<bool>& periodic) {
  AdditiveBasis basis = additive_basis(offsets, periodic);
  Routes routes;
  routes.dims = offsets.dims();
  routes.shifts = std::move(basis.vectors);
  routes.paths = std::move(basis.terms);
  routes.paths.resize(offsets.size());
  return routes;
}

Routes make_routes(const OffsetList& offsets, Algorithm algorithm, const std::vector<bool>& periodic) {
  if (algorithm == Algorithm::torus) {
    // One round per unit hop: refuse lists that would need absurdly many.
    long rounds = 0;
    for (int j = 0; j < offsets.dims(); ++j) {
      const auto [forward, backward] = unit_hops(offsets, j);
      rounds += forward + backward;
    }
    if (rounds > max_torus_rounds)
      throw Error("iso::build_schedule: the torus schedule of these offsets needs " + std::to_string(rounds) +
                  " rounds (one per unit hop; limit " + std::to_string(max_torus_rounds) +
                  "); use the direct algorithm");
    long block_hops = 0;
    for (int i = 0; i < offsets.size(); ++i)
      for (int j = 0; j < offsets.dims(); ++j) block_hops += std::abs(static_cast<long>(offsets[i][j]));
    if (block_hops > max_torus_block_hops)
      throw Error("iso::build_schedule: the torus schedule of these offsets needs " + std::to_string(block_hops) +
                  " block hops (sum of |coordinates|; limit " + std::to_string(max_torus_block_hops) +
                  "); use the direct algorithm");
  }
  switch (algorithm) {
    case Algorithm::linear: return route_linear(offsets);
    case Algorithm::torus: return route_torus(offsets);
    case Algorithm::direct: return route_direct(offsets);
    case Algorithm::basis: return route_basis(offsets, periodic);
    case Algorithm::mpi:
    case Algorithm::automatic:
    case Algorithm::tune: break;
  }
  throw Error(std::string("iso::build_schedule: algorithm \"") + to_string(algorithm) +
              "\" has no schedule of its own (use " + algorithm_names(AlgorithmNames::scheduled, ", ", " or ") + ")");
}

// Per-process view of the grid: existence tests of docs/design/mesh.md#filtering-a-schedule.
class Locator {
public:
  Locator(const CartGeometry& grid, const int* coords)
      : grid_(grid), me_(coords, coords + grid.dims()), tmp_(grid.dims()), tmp2_(grid.dims()) {
    all_periodic_ = std::all_of(grid.periodic.begin(), grid.periodic.end(), [](bool p) { return p; });
  }
  bool all_periodic() const { return all_periodic_; }
  /// The origin o = x (-) delta exists and o (+) target exists.
  bool keeps(const int* delta, const int* target) {
    if (all_periodic_) return true;
    if (!grid_.shift(me_.data(), delta, -1, tmp_.data())) return false;
    return grid_.shift(tmp_.data(), target, +1, tmp2_.data());
  }
  /// The origin x (-) delta exists; leaves it in origin().
  bool origin(const int* delta) { return all_periodic_ || grid_.shift(me_.data(), delta, -1, tmp_.data()); }
  /// origin() (+) target exists.
  bool reaches(const int* target) { return all_periodic_ || grid_.shift(tmp_.data(), target, +1, tmp2_.data()); }
  int rank_shifted(const std::vector<int>& v, int sign) const {
    return grid_.shifted_rank(me_.data(), v.data(), sign);
  }

private:
  const CartGeometry& grid_;
  std::vector<int> me_, tmp_, tmp2_;
  bool all_periodic_ = true;
};

// Local slot naming with the mesh redirection R[i] -> T2[i] at this process
// when no block ever arrives in R[i] (x (-) v_i does not exist).
struct SlotMap {
  std::vector<char> redirect;
  BlockRef recv_or_temp2(int block) const {
    return {redirect[block] ? Buffer::temp2 : Buffer::recv, block};
  }
};

SlotMap make_slot_map(const OffsetList& offsets, Locator& here) {
  SlotMap map;
  map.redirect.assign(offsets.size(), 0);
  if (here.all_periodic()) return map;
  for (int i = 0; i < offsets.size(); ++i) map.redirect[i] = here.origin(offsets[i]) ? 0 : 1;
  return map;
}

Schedule start_schedule(const OffsetList& offsets, const Routes& routes, Algorithm algorithm,
                        Collective collective, Locator& here) {
  Schedule schedule;
  schedule.algorithm = algorithm;
  schedule.collective = collective;
  schedule.num_blocks = offsets.size();
  schedule.num_global_rounds = static_cast<int>(routes.shifts.size());
  schedule.uses_temp.assign(offsets.size(), 0);
  schedule.uses_temp2.assign(offsets.size(), 0);
  schedule.rounds.resize(routes.shifts.size());
  for (std::size_t r = 0; r < routes.shifts.size(); ++r) {
    schedule.rounds[r].index = static_cast<int>(r);
    schedule.rounds[r].shift = routes.shifts[r];
  }
  schedule.merges_partners = here.all_periodic();
  return schedule;
}

// Drops rounds without entries, sets partners and the temp-slot flags.
void finish_schedule(Schedule& schedule, Locator& here) {
  std::vector<Round> kept;
  for (Round& round : schedule.rounds) {
    if (round.send.empty() && round.recv.empty()) continue;
    if (!round.send.empty()) {
      round.send_rank = here.rank_shifted(round.shift, +1);
      if (round.send_rank < 0) throw Error("iso::build_schedule: internal error: send partner missing");
    }
    if (!round.recv.empty()) {
      round.recv_rank = here.rank_shifted(round.shift, -1);
      if (round.recv_rank < 0) throw Error("iso::build_schedule: internal error: receive partner missing");
    }
    kept.push_back(std::move(round));
  }
  schedule.rounds = std::move(kept);
  auto mark = [&](BlockRef ref) {
    if (ref.buffer == Buffer::temp) schedule.uses_temp[ref.block] = 1;
    if (ref.buffer == Buffer::temp2) schedule.uses_temp2[ref.block] = 1;
  };
  for (const Round& round : schedule.rounds) {
    for (BlockRef ref : round.send) mark(ref);
    for (BlockRef ref : round.recv) mark(ref);
  }
}

// docs/design/schedules.md#zero-copy-double-buffering: each block walks its own path; double buffering between R[i] and T[i]
// so that the last hop lands in R[i]. Also serves linear allgather, whose
// single hop per block always sends the one send block.
Schedule blockwise_schedule(const OffsetList& offsets, const Routes& routes, Algorithm algorithm,
                            Collective collective, Locator& here) {
  const int d = offsets.dims();
  Schedule schedule = start_schedule(offsets, routes, algorithm, collective, here);
  const SlotMap slots = make_slot_map(offsets, here);
  // Each round's entries sized once from the paths: grown entry by entry,
  // the lists of a torus round at d4 r3 (up to 1029 blocks) were copied and
  // their fresh pages touched several times over.
  std::vector<std::size_t> entries(schedule.rounds.size(), 0);
  for (const std::vector<int>& path : routes.paths)
    for (int r : path) ++entries[static_cast<std::size_t>(r)];
  for (std::size_t r = 0; r < entries.size(); ++r) {
    schedule.rounds[r].send.reserve(entries[r]);
    schedule.rounds[r].recv.reserve(entries[r]);
  }
  std::vector<int> before(d), after(d);
  for (int i = 0; i < offsets.size(); ++i) {
    const std::vector<int>& path = routes.paths[i];
    if (path.empty()) {
      // Zero offset: the block stays here (it exists: origin is x itself).
      schedule.copies.push_back(
          {{Buffer::send, collective == Collective::alltoall ? i : 0}, {Buffer::recv, i}});
      continue;
    }
    std::fill(before.begin(), before.end(), 0);
    BlockRef location{Buffer::send, collective == Collective::alltoall ? i : 0};
    int remaining = static_cast<int>(path.size());
    for (int r : path) {
      const std::vector<int>& sigma = routes.shifts[r];
      for (int j = 0; j < d; ++j) after[j] = before[j] + sigma[j];
      const BlockRef destination = (remaining % 2 == 1) ? slots.recv_or_temp2(i) : BlockRef{Buffer::temp, i};
      Round& round = schedule.rounds[r];
      if (here.keeps(before.data(), offsets[i])) round.send.push_back(location);
      if (here.keeps(after.data(), offsets[i])) round.recv.push_back(destination);
      location = destination;
      --remaining;
      before.swap(after);
    }
  }
  finish_schedule(schedule, here);
  return schedule;
}

// docs/design/schedules.md#allgather: the trie of all path prefixes; one entry per trie node.
struct Trie {
  struct Node {
    std::vector<int> displacement;
    int parent = -1;  // -1: the root (displacement 0, stored in S)
    int round = -1;
    int owner = -1;   // smallest block index with this offset, -1 if none
    int last_child = -1;
    int slot = -1;
    int parity = 0;   // b(u): even -> R[slot], odd -> T[slot]
    std::vector<int> owned_below;  // owned nodes in this subtree (for mesh filtering)
  };
  std::vector<Node> nodes;        // in order of creation
  std::vector<int> owner_of_block;  // node index of v_i's owner, -1 for zero offsets
};

// Nodes are path prefixes: (parent, round) -> child. Torus and direct reach a
// displacement along one path only (checked); basis may reach one along
// several, which are then distinct nodes.
Trie build_trie(const OffsetList& offsets, const Routes& routes, bool unique_displacements) {
  const int d = offsets.dims();
  Trie trie;
  std::map<std::pair<int, int>, int> children;
  std::map<std::vector<int>, int> index;
  trie.owner_of_block.assign(offsets.size(), -1);
  std::vector<int> displacement(d);
  for (int i = 0; i < offsets.size(); ++i) {
    std::fill(displacement.begin(), displacement.end(), 0);
    int parent = -1;
    for (int r : routes.paths[i]) {
      for (int j = 0; j < d; ++j) displacement[j] += routes.shifts[r][j];
      auto found = children.find({parent, r});
      int node;
      if (found == children.end()) {
        node = static_cast<int>(trie.nodes.size());
        children.emplace(std::make_pair(parent, r), node);
        if (unique_displacements && !index.emplace(displacement, node).second)
          throw Error("iso::build_schedule: internal error: trie node reached along two paths");
        Trie::Node created;
        created.displacement = displacement;
        created.parent = parent;
        created.round = r;
        trie.nodes.push_back(std::move(created));
      } else {
        node = found->second;
      }
      parent = node;
    }
    if (parent >= 0) {
      if (trie.nodes[parent].owner < 0) trie.nodes[parent].owner = i;
      trie.owner_of_block[i] = parent;
    }
  }
  for (int u = 0; u < static_cast<int>(trie.nodes.size()); ++u) {
    const int p = trie.nodes[u].parent;
    if (p >= 0 && (trie.nodes[p].last_child < 0 || trie.nodes[trie.nodes[p].last_child].round < trie.nodes[u].round))
      trie.nodes[p].last_child = u;
  }
  // Children have later rounds than their parents: resolve slots bottom-up.
  std::vector<int> order(trie.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return trie.nodes[a].round > trie.nodes[b].round; });
  for (int u : order) {
    Trie::Node& node = trie.nodes[u];
    if (node.owner >= 0) {
      node.slot = node.owner;
      node.parity = 0;
      node.owned_below.push_back(u);
    } else {
      const Trie::Node& child = trie.nodes[node.last_child];
      node.slot = child.slot;
      node.parity = child.parity + 1;
    }
    if (node.parent >= 0) {
      auto& up = trie.nodes[node.parent].owned_below;
      up.insert(up.end(), node.owned_below.begin(), node.owned_below.end());
    }
  }
  return trie;
}

Schedule trie_schedule(const OffsetList& offsets, const Routes& routes, Algorithm algorithm, Locator& here) {
  Schedule schedule = start_schedule(offsets, routes, algorithm, Collective::allgather, here);
  const SlotMap slots = make_slot_map(offsets, here);
  const Trie trie = build_trie(offsets, routes, algorithm != Algorithm::basis);
  auto store = [&](int u) -> BlockRef {
    if (u < 0) return {Buffer::send, 0};
    const Trie::Node& node = trie.nodes[u];
    return node.parity % 2 == 0 ? slots.recv_or_temp2(node.slot) : BlockRef{Buffer::temp, node.slot};
  };
  // Does a block from the origin x (-) delta still have somewhere to go below u?
  auto needed = [&](int u, const std::vector<int>& delta) {
    if (here.all_periodic()) return true;
    if (!here.origin(delta.data())) return false;
    for (int l : trie.nodes[u].owned_below)
      if (here.reaches(trie.nodes[l].displacement.data())) return true;
    return false;
  };
  // Canonical entry order within a round: lexicographic by displacement,
  // then by creation (basis nodes of one displacement).
  std::vector<int> order(trie.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return trie.nodes[a].displacement < trie.nodes[b].displacement; });
  const std::vector<int> zero(offsets.dims(), 0);
  for (int u : order) {
    const Trie::Node& node = trie.nodes[u];
    Round& round = schedule.rounds[node.round];
    const std::vector<int>& parent_disp = node.parent < 0 ? zero : trie.nodes[node.parent].displacement;
    if (needed(u, parent_disp)) round.send.push_back(store(node.parent));
    if (needed(u, node.displacement)) round.recv.push_back(store(u));
  }
  for (int i = 0; i < offsets.size(); ++i) {
    const int owner_node = trie.owner_of_block[i];
    if (owner_node < 0) {
      schedule.copies.push_back({{Buffer::send, 0}, {Buffer::recv, i}});
    } else if (trie.nodes[owner_node].owner != i && !slots.redirect[i]) {
      schedule.copies.push_back({{Buffer::recv, trie.nodes[owner_node].owner}, {Buffer::recv, i}});
    }
  }
  finish_schedule(schedule, here);
  return schedule;
}

void check_dims(const OffsetList& offsets, const CartGeometry& grid) {
  if (grid.dims() < 1) throw Error("iso::build_schedule: the process grid has no dimensions");
  if (static_cast<int>(grid.periodic.size()) != grid.dims())
    throw Error("iso::build_schedule: " + std::to_string(grid.periodic.size()) + " periodic flags for " +
                std::to_string(grid.dims()) + " dimensions");
  for (int j = 0; j < grid.dims(); ++j)
    if (grid.sizes[j] < 1)
      throw Error("iso::build_schedule: process grid size " + std::to_string(grid.sizes[j]) +
                  " in dimension " + std::to_string(j) + " (must be >= 1)");
  long procs = 1;
  for (int p : grid.sizes) {
    procs *= p;
    if (procs > 2147483647L)
      throw Error("iso::build_schedule: the process grid has more than 2^31-1 processes");
  }
  if (offsets.size() > 0 && offsets.dims() != grid.dims())
    throw Error("iso::build_schedule: offsets have " + std::to_string(offsets.dims()) +
                " coordinates but the process grid has " + std::to_string(grid.dims()) + " dimensions");
}

}  // namespace

RoundList build_round_list(const OffsetList& offsets, Algorithm algorithm) {
  return RoundList{make_routes(offsets, algorithm, {}).shifts};
}

RoundList build_round_list(const OffsetList& offsets, Algorithm algorithm, const std::vector<bool>& periodic) {
  return RoundList{make_routes(offsets, algorithm, periodic).shifts};
}

Schedule build_schedule(const OffsetList& offsets, const CartGeometry& grid, const int* coords,
                        Algorithm algorithm, Collective collective) {
  check_dims(offsets, grid);
  if (!coords) throw Error("iso::build_schedule: coords is null");
  for (int j = 0; j < grid.dims(); ++j)
    if (coords[j] < 0 || coords[j] >= grid.sizes[j])
      throw Error("iso::build_schedule: coordinate " + std::to_string(coords[j]) + " outside [0," +
                  std::to_string(grid.sizes[j]) + ") in dimension " + std::to_string(j));
  const Routes routes = make_routes(offsets, algorithm, grid.periodic);
  Locator here(grid, coords);
  if (collective == Collective::alltoall || algorithm == Algorithm::linear)
    return blockwise_schedule(offsets, routes, algorithm, collective, here);
  return trie_schedule(offsets, routes, algorithm, here);
}

ScheduleFigures schedule_figures(const OffsetList& offsets, const CartGeometry& grid,
                                 Algorithm algorithm, Collective collective, int ports) {
  check_dims(offsets, grid);
  ScheduleFigures figures;
  const bool all_periodic =
      std::all_of(grid.periodic.begin(), grid.periodic.end(), [](bool p) { return p; });
  // On a torus every process has the same schedule: one suffices.
  const int evaluated = all_periodic ? 1 : grid.num_procs();
  std::vector<int> coords(grid.dims());
  for (int rank = 0; rank < evaluated; ++rank) {
    grid.coords_of(rank, coords.data());
    const Schedule schedule = build_schedule(offsets, grid, coords.data(), algorithm, collective);
    figures.rounds = schedule.num_global_rounds;
    const long messages = schedule.messages_sent();
    const long volume = schedule.blocks_sent();
    long temps = 0;
    for (int i = 0; i < schedule.num_blocks; ++i) temps += schedule.uses_temp[i] + schedule.uses_temp2[i];
    figures.messages = std::max(figures.messages, messages);
    figures.volume = std::max(figures.volume, volume);
    figures.local_copies = std::max(figures.local_copies, static_cast<long>(schedule.copies.size()));
    figures.temp_blocks = std::max(figures.temp_blocks, temps);
    figures.steps = std::max(figures.steps, static_cast<int>(execution_steps(schedule, ports, rank).size()));
    figures.messages_total += messages;
    figures.volume_total += volume;
  }
  if (all_periodic) {
    figures.messages_total *= grid.num_procs();
    figures.volume_total *= grid.num_procs();
  }
  if (evaluated == 0) figures.rounds = static_cast<int>(make_routes(offsets, algorithm, grid.periodic).shifts.size());
  return figures;
}

}  // namespace iso
