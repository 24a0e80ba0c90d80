#include "simulator.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace schedtest {

// ---------------------------------------------------------------------------
// Small helpers

CartGeometry make_grid(std::vector<int> sizes, std::vector<bool> periodic) {
  CartGeometry grid;
  grid.sizes = std::move(sizes);
  grid.periodic = std::move(periodic);
  return grid;
}
CartGeometry make_torus(std::vector<int> sizes) {
  std::vector<bool> periodic(sizes.size(), true);
  return make_grid(std::move(sizes), std::move(periodic));
}
CartGeometry make_mesh(std::vector<int> sizes) {
  std::vector<bool> periodic(sizes.size(), false);
  return make_grid(std::move(sizes), std::move(periodic));
}

std::string describe_grid(const CartGeometry& grid) {
  std::string out;
  for (int j = 0; j < grid.dims(); ++j) out += (j ? "x" : "") + std::to_string(grid.sizes[j]);
  out += " periodic=";
  for (int j = 0; j < grid.dims(); ++j) out += grid.periodic[j] ? "T" : "F";
  return out;
}

std::string describe(const OffsetList& offsets, const CartGeometry& grid, Algorithm algorithm,
                     Collective collective) {
  return "offsets={" + offsets.to_string() + "} d=" + std::to_string(offsets.dims()) +
         " grid=" + describe_grid(grid) + " algorithm=" + iso::to_string(algorithm) +
         " collective=" + iso::to_string(collective);
}

std::string SimResult::summary(std::size_t max_lines) const {
  std::string out;
  for (std::size_t k = 0; k < errors.size() && k < max_lines; ++k) out += "  " + errors[k] + "\n";
  if (errors.size() > max_lines)
    out += "  ... and " + std::to_string(errors.size() - max_lines) + " more errors\n";
  return out;
}

long count_blocks_sent(const Schedule& schedule) {
  long n = 0;
  for (const Round& round : schedule.rounds) n += static_cast<long>(round.send.size());
  return n;
}
long count_messages_sent(const Schedule& schedule) {
  long n = 0;
  for (const Round& round : schedule.rounds) n += round.send.empty() ? 0 : 1;
  return n;
}
long count_temp_slots(const Schedule& schedule) {
  long n = 0;
  for (char c : schedule.uses_temp) n += c ? 1 : 0;
  for (char c : schedule.uses_temp2) n += c ? 1 : 0;
  return n;
}

std::vector<Schedule> build_all(const OffsetList& offsets, const CartGeometry& grid,
                                Algorithm algorithm, Collective collective) {
  std::vector<Schedule> all;
  std::vector<int> coords(grid.dims());
  all.reserve(grid.num_procs());
  for (int rank = 0; rank < grid.num_procs(); ++rank) {
    grid.coords_of(rank, coords.data());
    all.push_back(iso::build_schedule(offsets, grid, coords.data(), algorithm, collective));
  }
  return all;
}

namespace {

std::string coords_string(const CartGeometry& grid, int rank) {
  std::vector<int> c(grid.dims());
  grid.coords_of(rank, c.data());
  std::string out = "rank " + std::to_string(rank) + " (";
  for (int j = 0; j < grid.dims(); ++j) out += (j ? "," : "") + std::to_string(c[j]);
  return out + ")";
}

std::string ref_string(BlockRef ref) {
  return std::string(ref.buffer == Buffer::send    ? "S"
                     : ref.buffer == Buffer::recv  ? "R"
                     : ref.buffer == Buffer::temp  ? "T"
                     : ref.buffer == Buffer::temp2 ? "T2"
                                                   : "?") +
         "[" + std::to_string(ref.block) + "]";
}

std::string shift_string(const std::vector<int>& v) {
  std::string out = "(";
  for (std::size_t j = 0; j < v.size(); ++j) out += (j ? "," : "") + std::to_string(v[j]);
  return out + ")";
}

// A symbolic block value.
enum class Kind : std::uint8_t { data, untouched, garbage, invalid };
struct Token {
  Kind kind = Kind::invalid;
  int a = -1;  // data: origin rank; untouched/garbage: owning rank
  int b = -1;  // data: block id; untouched/garbage: slot
  Buffer buffer = Buffer::recv;  // untouched/garbage: which buffer the marker was born in
  friend bool operator==(const Token& x, const Token& y) {
    return x.kind == y.kind && x.a == y.a && x.b == y.b &&
           (x.kind == Kind::data || x.buffer == y.buffer);
  }
};

std::string token_string(const Token& t) {
  switch (t.kind) {
    case Kind::data: return "(origin " + std::to_string(t.a) + ", block " + std::to_string(t.b) + ")";
    case Kind::untouched: return "untouched R[" + std::to_string(t.b) + "]@" + std::to_string(t.a);
    case Kind::garbage:
      return "garbage " + ref_string(BlockRef{t.buffer, t.b}) + "@" + std::to_string(t.a);
    case Kind::invalid: break;
  }
  return "invalid";
}

int buffer_index(Buffer b) { return static_cast<int>(b); }

struct Slots {
  std::vector<Token> buf[4];
};

class Simulator {
public:
  Simulator(const OffsetList& offsets, const CartGeometry& grid, Collective collective,
            const std::vector<Schedule>& schedules, const iso::RoundList* expected)
      : v_(offsets), grid_(grid), coll_(collective), sched_(schedules), expected_(expected),
        s_(offsets.size()), d_(grid.dims()), P_(grid.num_procs()) {}

  SimResult run() {
    if (static_cast<int>(sched_.size()) != P_) {
      error("expected " + std::to_string(P_) + " schedules, got " + std::to_string(sched_.size()));
      return std::move(result_);
    }
    all_periodic_ = std::all_of(grid_.periodic.begin(), grid_.periodic.end(), [](bool b) { return b; });
    validate();
    execute();
    check_final();
    if (suppressed_ > 0) result_.errors.push_back("(" + std::to_string(suppressed_) + " further errors suppressed)");
    return std::move(result_);
  }

private:
  void error(const std::string& message) {
    if (result_.errors.size() < 60)
      result_.errors.push_back(message);
    else
      ++suppressed_;
  }
  void note(const std::string& message) {
    if (result_.notes.size() < 60) result_.notes.push_back(message);
  }

  int buffer_size(Buffer b) const {
    if (b == Buffer::send) return coll_ == Collective::allgather ? 1 : s_;
    return s_;
  }
  bool valid(BlockRef ref) const {
    int b = buffer_index(ref.buffer);
    if (b < 0 || b > 3) return false;
    return ref.block >= 0 && ref.block < buffer_size(ref.buffer);
  }

  // --- structural checks of every process's schedule --------------------------
  void validate() {
    global_rounds_ = sched_.empty() ? 0 : sched_[0].num_global_rounds;
    if (expected_ && static_cast<int>(expected_->shifts.size()) != global_rounds_)
      error("num_global_rounds " + std::to_string(global_rounds_) + " != build_round_list size " +
            std::to_string(expected_->shifts.size()));
    by_index_.assign(P_, std::vector<const Round*>(std::max(global_rounds_, 0), nullptr));
    std::vector<std::vector<int>> seen_shift(std::max(global_rounds_, 0));
    for (int p = 0; p < P_; ++p) {
      const Schedule& sc = sched_[p];
      const std::string who = coords_string(grid_, p);
      std::vector<int> x(d_);
      grid_.coords_of(p, x.data());
      if (sc.num_global_rounds != global_rounds_)
        error(who + ": num_global_rounds " + std::to_string(sc.num_global_rounds) + " differs from rank 0's " +
              std::to_string(global_rounds_));
      if (sc.collective != coll_) error(who + ": schedule.collective is wrong");
      if (sc.num_blocks != s_)
        error(who + ": num_blocks " + std::to_string(sc.num_blocks) + " != s = " + std::to_string(s_));
      if (static_cast<int>(sc.uses_temp.size()) != s_ || static_cast<int>(sc.uses_temp2.size()) != s_)
        error(who + ": uses_temp/uses_temp2 sizes " + std::to_string(sc.uses_temp.size()) + "/" +
              std::to_string(sc.uses_temp2.size()) + " != s = " + std::to_string(s_));
      std::vector<char> used_t(s_, 0), used_t2(s_, 0);
      auto mark_used = [&](BlockRef ref) {
        if (!valid(ref)) return;
        if (ref.buffer == Buffer::temp) used_t[ref.block] = 1;
        if (ref.buffer == Buffer::temp2) used_t2[ref.block] = 1;
      };
      int previous = -1;
      for (const Round& round : sc.rounds) {
        const std::string where = who + " round " + std::to_string(round.index);
        if (round.index <= previous)
          error(where + ": round indices not strictly ascending (previous " + std::to_string(previous) + ")");
        previous = std::max(previous, round.index);
        if (round.index < 0 || round.index >= global_rounds_) {
          error(where + ": index outside [0, " + std::to_string(global_rounds_) + ")");
          continue;
        }
        by_index_[p][round.index] = &round;
        if (static_cast<int>(round.shift.size()) != d_) {
          error(where + ": shift has " + std::to_string(round.shift.size()) + " coordinates");
          continue;
        }
        if (expected_ && round.shift != expected_->shifts[round.index])
          error(where + ": shift " + shift_string(round.shift) + " != round list's " +
                shift_string(expected_->shifts[round.index]));
        if (seen_shift[round.index].empty())
          seen_shift[round.index] = round.shift;
        else if (seen_shift[round.index] != round.shift)
          error(where + ": shift " + shift_string(round.shift) + " differs from another process's " +
                shift_string(seen_shift[round.index]));
        if (round.send.empty() && round.recv.empty()) error(where + ": round with no entries is listed");
        const int to = grid_.shifted_rank(x.data(), round.shift.data(), +1);
        const int from = grid_.shifted_rank(x.data(), round.shift.data(), -1);
        if (round.send.empty() != (round.send_rank == -1))
          error(where + ": send has " + std::to_string(round.send.size()) + " entries but send_rank = " +
                std::to_string(round.send_rank));
        if (!round.send.empty() && round.send_rank != to)
          error(where + ": send_rank " + std::to_string(round.send_rank) + " != rank of x(+)shift = " +
                std::to_string(to));
        if (round.recv.empty() != (round.recv_rank == -1))
          error(where + ": recv has " + std::to_string(round.recv.size()) + " entries but recv_rank = " +
                std::to_string(round.recv_rank));
        if (!round.recv.empty() && round.recv_rank != from)
          error(where + ": recv_rank " + std::to_string(round.recv_rank) + " != rank of x(-)shift = " +
                std::to_string(from));
        std::set<std::pair<int, int>> written;
        for (BlockRef ref : round.recv) {
          if (!valid(ref)) {
            error(where + ": invalid receive slot " + ref_string(ref));
            continue;
          }
          mark_used(ref);
          if (ref.buffer == Buffer::send) error(where + ": receives into the send buffer " + ref_string(ref));
          if (!written.insert({buffer_index(ref.buffer), ref.block}).second)
            error(where + ": slot " + ref_string(ref) + " written twice in one round");
        }
        for (BlockRef ref : round.send) {
          if (!valid(ref)) {
            error(where + ": invalid send slot " + ref_string(ref));
            continue;
          }
          mark_used(ref);
          if (written.count({buffer_index(ref.buffer), ref.block}))
            error(where + ": slot " + ref_string(ref) + " is both sent from and received into");
        }
      }
      for (const iso::LocalCopy& copy : sc.copies) {
        const std::string where = who + " copy " + ref_string(copy.from) + "->" + ref_string(copy.to);
        if (!valid(copy.from) || !valid(copy.to)) {
          error(where + ": invalid slot");
          continue;
        }
        mark_used(copy.from);
        mark_used(copy.to);
        if (copy.to.buffer == Buffer::send) error(where + ": copies into the send buffer");
        if (copy.from == copy.to) error(where + ": copies a slot onto itself");
      }
      for (int i = 0; i < s_; ++i) {
        bool flag_t = i < static_cast<int>(sc.uses_temp.size()) && sc.uses_temp[i];
        bool flag_t2 = i < static_cast<int>(sc.uses_temp2.size()) && sc.uses_temp2[i];
        if (used_t[i] && !flag_t) error(who + ": T[" + std::to_string(i) + "] used but uses_temp[i] not set");
        if (used_t2[i] && !flag_t2) error(who + ": T2[" + std::to_string(i) + "] used but uses_temp2[i] not set");
        if (!used_t[i] && flag_t) note(who + ": uses_temp[" + std::to_string(i) + "] set but T[i] unused");
        if (!used_t2[i] && flag_t2) note(who + ": uses_temp2[" + std::to_string(i) + "] set but T2[i] unused");
        if (all_periodic_ && (used_t2[i] || flag_t2))
          error(who + ": T2[" + std::to_string(i) + "] used/flagged on a fully periodic grid");
      }
    }
  }

  // --- symbolic execution -----------------------------------------------------
  Token read(int p, BlockRef ref) const {
    if (!valid(ref)) return Token{};
    return state_[p].buf[buffer_index(ref.buffer)][ref.block];
  }
  void write(int p, BlockRef ref, const Token& t) {
    if (!valid(ref)) return;
    state_[p].buf[buffer_index(ref.buffer)][ref.block] = t;
  }

  void execute() {
    state_.assign(P_, Slots{});
    for (int p = 0; p < P_; ++p) {
      Slots& st = state_[p];
      for (int i = 0; i < buffer_size(Buffer::send); ++i) st.buf[0].push_back(Token{Kind::data, p, i, Buffer::send});
      for (int i = 0; i < s_; ++i) {
        st.buf[1].push_back(Token{Kind::untouched, p, i, Buffer::recv});
        st.buf[2].push_back(Token{Kind::garbage, p, i, Buffer::temp});
        st.buf[3].push_back(Token{Kind::garbage, p, i, Buffer::temp2});
      }
    }
    struct Delivery {
      int to;
      const Round* round;
      std::vector<Token> tokens;
    };
    for (int g = 0; g < global_rounds_; ++g) {
      std::vector<Delivery> deliveries;
      for (int p = 0; p < P_; ++p) {
        const Round* round = by_index_[p][g];
        if (!round || round->send.empty()) continue;
        const std::string where = coords_string(grid_, p) + " round " + std::to_string(g);
        const int q = round->send_rank;
        if (q < 0 || q >= P_) {
          error(where + ": sends " + std::to_string(round->send.size()) + " blocks to invalid rank " +
                std::to_string(q));
          continue;
        }
        const Round* peer = by_index_[q][g];
        if (!peer || peer->recv.empty() || peer->recv_rank != p) {
          error(where + ": sends " + std::to_string(round->send.size()) + " blocks to " +
                coords_string(grid_, q) + " which does not receive from it in this round" +
                (peer && !peer->recv.empty() ? " (it receives from rank " + std::to_string(peer->recv_rank) + ")"
                                             : ""));
          continue;
        }
        if (peer->recv.size() != round->send.size()) {
          error(where + ": message of " + std::to_string(round->send.size()) + " blocks to " +
                coords_string(grid_, q) + " which expects " + std::to_string(peer->recv.size()));
          continue;
        }
        Delivery delivery{q, peer, {}};
        for (BlockRef ref : round->send) delivery.tokens.push_back(read(p, ref));
        deliveries.push_back(std::move(delivery));
      }
      for (int q = 0; q < P_; ++q) {
        const Round* round = by_index_[q][g];
        if (!round || round->recv.empty()) continue;
        const int p = round->recv_rank;
        const std::string where = coords_string(grid_, q) + " round " + std::to_string(g);
        if (p < 0 || p >= P_) {
          error(where + ": receives from invalid rank " + std::to_string(p));
          continue;
        }
        const Round* peer = by_index_[p][g];
        if (!peer || peer->send.empty() || peer->send_rank != q)
          error(where + ": expects " + std::to_string(round->recv.size()) + " blocks from " +
                coords_string(grid_, p) + " which sends it nothing in this round");
      }
      for (const Delivery& delivery : deliveries)
        for (std::size_t k = 0; k < delivery.tokens.size(); ++k)
          write(delivery.to, delivery.round->recv[k], delivery.tokens[k]);
    }
    for (int p = 0; p < P_; ++p)
      for (const iso::LocalCopy& copy : sched_[p].copies) write(p, copy.to, read(p, copy.from));
  }

  void check_final() {
    std::vector<int> y(d_), o(d_);
    for (int q = 0; q < P_; ++q) {
      grid_.coords_of(q, y.data());
      for (int i = 0; i < s_; ++i) {
        Token want;
        if (grid_.shift(y.data(), v_[i], -1, o.data()))
          want = Token{Kind::data, grid_.rank_of(o.data()), coll_ == Collective::allgather ? 0 : i, Buffer::send};
        else
          want = Token{Kind::untouched, q, i, Buffer::recv};
        const Token& got = state_[q].buf[1][i];
        if (!(got == want))
          error(coords_string(grid_, q) + ": R[" + std::to_string(i) + "] (offset " + shift_string(std::vector<int>(v_[i], v_[i] + d_)) +
                ") holds " + token_string(got) + ", expected " + token_string(want));
      }
    }
  }

  const OffsetList& v_;
  const CartGeometry& grid_;
  Collective coll_;
  const std::vector<Schedule>& sched_;
  const iso::RoundList* expected_;
  int s_, d_, P_;
  bool all_periodic_ = true;
  int global_rounds_ = 0;
  std::vector<std::vector<const Round*>> by_index_;
  std::vector<Slots> state_;
  SimResult result_;
  long suppressed_ = 0;
};

}  // namespace

SimResult simulate(const OffsetList& offsets, const CartGeometry& grid, Collective collective,
                   const std::vector<Schedule>& schedules, const iso::RoundList* expected_rounds) {
  if (offsets.dims() != grid.dims() && offsets.size() > 0) {
    SimResult result;
    result.errors.push_back("simulate: offsets and grid differ in dimension");
    return result;
  }
  return Simulator(offsets, grid, collective, schedules, expected_rounds).run();
}

// ---------------------------------------------------------------------------
// Reference of the spec

namespace ref {

namespace {

struct Rounds {
  std::vector<std::vector<int>> shifts;
  std::vector<std::vector<int>> path;  // per block: the rounds it moves in, ascending
};

Rounds compute_rounds(const OffsetList& v, Algorithm algorithm, const std::vector<bool>& periodic = {}) {
  const int d = v.dims(), s = v.size();
  Rounds out;
  out.path.resize(s);
  if (algorithm == Algorithm::basis) {
    // The basis itself is the implementation's (tests check its properties
    // separately); everything built on it here follows the spec.
    const iso::AdditiveBasis basis = iso::additive_basis(v, periodic);
    out.shifts = basis.vectors;
    for (int i = 0; i < s; ++i) out.path[i] = basis.terms[i];
    return out;
  }
  auto nonzero = [&](int i) {
    for (int j = 0; j < d; ++j)
      if (v[i][j] != 0) return true;
    return false;
  };
  if (algorithm == Algorithm::linear) {
    for (int i = 0; i < s; ++i) {
      if (!nonzero(i)) continue;
      out.path[i].push_back(static_cast<int>(out.shifts.size()));
      out.shifts.emplace_back(v[i], v[i] + d);
    }
    return out;
  }
  for (int j = 0; j < d; ++j) {
    if (algorithm == Algorithm::torus) {
      int P = 0, M = 0;
      for (int i = 0; i < s; ++i) {
        P = std::max(P, v[i][j]);
        M = std::max(M, -v[i][j]);
      }
      for (int sign : {+1, -1}) {
        const int count = sign > 0 ? P : M;
        for (int k = 1; k <= count; ++k) {
          const int r = static_cast<int>(out.shifts.size());
          std::vector<int> shift(d, 0);
          shift[j] = sign;
          out.shifts.push_back(shift);
          for (int i = 0; i < s; ++i)
            if (sign * v[i][j] >= k) out.path[i].push_back(r);
        }
      }
    } else {
      std::set<int> values;
      for (int i = 0; i < s; ++i)
        if (v[i][j] != 0) values.insert(v[i][j]);
      for (int c : values) {
        const int r = static_cast<int>(out.shifts.size());
        std::vector<int> shift(d, 0);
        shift[j] = c;
        out.shifts.push_back(shift);
        for (int i = 0; i < s; ++i)
          if (v[i][j] == c) out.path[i].push_back(r);
      }
    }
  }
  return out;
}

struct Geo {
  const CartGeometry& grid;
  int d;
  mutable std::vector<int> tmp, tmp2;
  explicit Geo(const CartGeometry& g) : grid(g), d(g.dims()), tmp(g.dims()), tmp2(g.dims()) {}
  // Does base (-) a exist, and if so does it (+) b exist?
  bool origin_and_target(const int* base, const int* a, const int* b) const {
    if (!grid.shift(base, a, -1, tmp.data())) return false;
    return grid.shift(tmp.data(), b, +1, tmp2.data());
  }
  bool exists_minus(const int* base, const int* a) const { return grid.shift(base, a, -1, tmp.data()); }
  bool exists_plus(const int* base, const int* a) const { return grid.shift(base, a, +1, tmp.data()); }
};

bool is_zero(const OffsetList& v, int i) {
  for (int j = 0; j < v.dims(); ++j)
    if (v[i][j] != 0) return false;
  return true;
}

void finish(Schedule& sc, std::vector<Round>& rounds, const CartGeometry& grid, const int* coords) {
  for (Round& round : rounds) {
    if (round.send.empty() && round.recv.empty()) continue;
    round.send_rank = round.send.empty() ? -1 : grid.shifted_rank(coords, round.shift.data(), +1);
    round.recv_rank = round.recv.empty() ? -1 : grid.shifted_rank(coords, round.shift.data(), -1);
    sc.rounds.push_back(std::move(round));
  }
  auto mark = [&](BlockRef ref) {
    if (ref.buffer == Buffer::temp) sc.uses_temp[ref.block] = 1;
    if (ref.buffer == Buffer::temp2) sc.uses_temp2[ref.block] = 1;
  };
  for (const Round& round : sc.rounds) {
    for (BlockRef ref : round.send) mark(ref);
    for (BlockRef ref : round.recv) mark(ref);
  }
  for (const iso::LocalCopy& copy : sc.copies) {
    mark(copy.from);
    mark(copy.to);
  }
}

struct Node {
  std::vector<int> disp;
  int parent = -1;  // -1: the root
  int round = -1;
  int owner = -1;
  std::vector<int> children;
  int slot = -1;
  int b = -1;
  std::vector<int> owned_targets;  // owner indices of owned nodes in the subtree (incl. itself)
};

struct Trie {
  std::vector<Node> nodes;
  // A node is a path prefix; keyed by its displacement first, so that the
  // map's order is the lexicographic order of displacements.
  std::map<std::pair<std::vector<int>, std::vector<int>>, int> id;
  std::vector<int> node_of;  // per offset: its node, -1 for the zero vector
};

Trie build_trie(const OffsetList& v, const Rounds& rounds) {
  const int d = v.dims(), s = v.size();
  Trie trie;
  trie.node_of.assign(s, -1);
  for (int i = 0; i < s; ++i) {
    std::vector<int> disp(d, 0), prefix;
    int cur = -1;
    for (int r : rounds.path[i]) {
      for (int j = 0; j < d; ++j) disp[j] += rounds.shifts[r][j];
      prefix.push_back(r);
      auto it = trie.id.find({disp, prefix});
      if (it == trie.id.end()) {
        Node node;
        node.disp = disp;
        node.parent = cur;
        node.round = r;
        trie.nodes.push_back(node);
        it = trie.id.emplace(std::make_pair(disp, prefix), static_cast<int>(trie.nodes.size()) - 1).first;
        if (cur >= 0) trie.nodes[cur].children.push_back(it->second);
      }
      cur = it->second;
    }
    trie.node_of[i] = cur;
    if (cur >= 0 && trie.nodes[cur].owner < 0) trie.nodes[cur].owner = i;
  }
  // slot and b bottom-up: children are created after their parent, so a reverse
  // sweep sees every child first.
  for (int u = static_cast<int>(trie.nodes.size()) - 1; u >= 0; --u) {
    Node& node = trie.nodes[u];
    if (node.owner >= 0) {
      node.slot = node.owner;
      node.b = 0;
      node.owned_targets.push_back(node.owner);
    } else {
      int last = -1;
      for (int c : node.children)
        if (last < 0 || trie.nodes[c].round > trie.nodes[last].round) last = c;
      node.slot = trie.nodes[last].slot;
      node.b = 1 + trie.nodes[last].b;
    }
    for (int c : node.children)
      node.owned_targets.insert(node.owned_targets.end(), trie.nodes[c].owned_targets.begin(),
                                trie.nodes[c].owned_targets.end());
  }
  return trie;
}

}  // namespace

std::vector<std::vector<int>> round_list(const OffsetList& offsets, Algorithm algorithm,
                                         const std::vector<bool>& periodic) {
  return compute_rounds(offsets, algorithm, periodic).shifts;
}

long trie_nodes(const OffsetList& offsets, Algorithm algorithm) {
  return static_cast<long>(build_trie(offsets, compute_rounds(offsets, algorithm)).nodes.size());
}

Schedule build_schedule(const OffsetList& v, const CartGeometry& grid, const int* x, Algorithm algorithm,
                        Collective collective) {
  const int s = v.size();
  const Rounds rl = compute_rounds(v, algorithm, grid.periodic);
  const Geo geo(grid);
  Schedule sc;
  sc.algorithm = algorithm;
  sc.collective = collective;
  sc.num_blocks = s;
  sc.num_global_rounds = static_cast<int>(rl.shifts.size());
  sc.uses_temp.assign(s, 0);
  sc.uses_temp2.assign(s, 0);
  std::vector<Round> rounds(rl.shifts.size());
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    rounds[r].index = static_cast<int>(r);
    rounds[r].shift = rl.shifts[r];
  }
  // R[k] may serve as staging only where the block's own origin x (-) v_k exists.
  auto redirect = [&](BlockRef ref) {
    if (ref.buffer == Buffer::recv && !geo.exists_minus(x, v[ref.block])) ref.buffer = Buffer::temp2;
    return ref;
  };

  if (collective == Collective::alltoall || algorithm == Algorithm::linear) {
    const bool gather = collective == Collective::allgather;
    for (int i = 0; i < s; ++i) {
      const BlockRef source{Buffer::send, gather ? 0 : i};
      const int hops = static_cast<int>(rl.path[i].size());
      if (hops == 0) {
        sc.copies.push_back({source, BlockRef{Buffer::recv, i}});
        continue;
      }
      auto slot = [&](int h) {
        if (h == 0) return source;
        const int remaining = hops - h + 1;
        return redirect(BlockRef{remaining % 2 == 1 ? Buffer::recv : Buffer::temp, i});
      };
      std::vector<int> before(v.dims(), 0), after(v.dims(), 0);
      for (int h = 1; h <= hops; ++h) {
        const int r = rl.path[i][h - 1];
        before = after;
        for (int j = 0; j < v.dims(); ++j) after[j] += rl.shifts[r][j];
        if (geo.origin_and_target(x, before.data(), v[i])) rounds[r].send.push_back(slot(h - 1));
        if (geo.origin_and_target(x, after.data(), v[i])) rounds[r].recv.push_back(slot(h));
      }
    }
    finish(sc, rounds, grid, x);
    return sc;
  }

  const Trie trie = build_trie(v, rl);
  auto store = [&](int u) {
    if (u < 0) return BlockRef{Buffer::send, 0};
    const Node& node = trie.nodes[u];
    return redirect(BlockRef{node.b % 2 == 0 ? Buffer::recv : Buffer::temp, node.slot});
  };
  auto keep = [&](const std::vector<int>& disp, const Node& node) {
    for (int l : node.owned_targets)
      if (geo.origin_and_target(x, disp.data(), v[l])) return true;
    return false;
  };
  const std::vector<int> zero(v.dims(), 0);
  for (const auto& [key, u] : trie.id) {  // lexicographic by displacement
    const std::vector<int>& disp = key.first;
    const Node& node = trie.nodes[u];
    const std::vector<int>& parent_disp = node.parent < 0 ? zero : trie.nodes[node.parent].disp;
    if (keep(parent_disp, node)) rounds[node.round].send.push_back(store(node.parent));
    if (keep(disp, node)) rounds[node.round].recv.push_back(store(u));
  }
  for (int i = 0; i < s; ++i) {
    if (is_zero(v, i)) {
      sc.copies.push_back({BlockRef{Buffer::send, 0}, BlockRef{Buffer::recv, i}});
    } else {
      const int owner = trie.nodes[trie.node_of[i]].owner;
      if (owner != i && geo.exists_minus(x, v[i]))
        sc.copies.push_back({BlockRef{Buffer::recv, owner}, BlockRef{Buffer::recv, i}});
    }
  }
  finish(sc, rounds, grid, x);
  return sc;
}

std::vector<Schedule> build_all(const OffsetList& offsets, const CartGeometry& grid, Algorithm algorithm,
                                Collective collective) {
  std::vector<Schedule> all;
  std::vector<int> coords(grid.dims());
  for (int rank = 0; rank < grid.num_procs(); ++rank) {
    grid.coords_of(rank, coords.data());
    all.push_back(ref::build_schedule(offsets, grid, coords.data(), algorithm, collective));
  }
  return all;
}

}  // namespace ref

}  // namespace schedtest
