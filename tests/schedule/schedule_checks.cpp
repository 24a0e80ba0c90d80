// The checks behind the schedule tests: closed formulas of the spec, the
// implementation run for every process and simulated, random cases and
// their shrinking, and the per-case checks (steps, figures, basis).
#include "schedule_checks.hpp"


#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>


namespace schedtest {


// The algorithms of the spec's closed formulas, and every scheduled one.
const Algorithm kAlgorithms[] = {Algorithm::linear, Algorithm::torus, Algorithm::direct};
const Algorithm kScheduled[] = {Algorithm::linear, Algorithm::torus, Algorithm::direct, Algorithm::basis};
const Collective kCollectives[] = {Collective::alltoall, Collective::allgather};

long ipow(long base, int exp) {
  long out = 1;
  for (int k = 0; k < exp; ++k) out *= base;
  return out;
}

bool is_zero(const OffsetList& v, int i) {
  for (int j = 0; j < v.dims(); ++j)
    if (v[i][j] != 0) return false;
  return true;
}

long count_nonzero_offsets(const OffsetList& v) {
  long n = 0;
  for (int i = 0; i < v.size(); ++i) n += is_zero(v, i) ? 0 : 1;
  return n;
}

long l1_volume(const OffsetList& v) {
  long n = 0;
  for (int i = 0; i < v.size(); ++i)
    for (int j = 0; j < v.dims(); ++j) n += std::abs(v[i][j]);
  return n;
}

long nz_volume(const OffsetList& v) {
  long n = 0;
  for (int i = 0; i < v.size(); ++i)
    for (int j = 0; j < v.dims(); ++j) n += v[i][j] != 0 ? 1 : 0;
  return n;
}

// Rounds of the spec for Moore-like and general neighborhoods.
long torus_rounds(const OffsetList& v) {
  long n = 0;
  for (int j = 0; j < v.dims(); ++j) {
    int P = 0, M = 0;
    for (int i = 0; i < v.size(); ++i) {
      P = std::max(P, v[i][j]);
      M = std::max(M, -v[i][j]);
    }
    n += P + M;
  }
  return n;
}
long direct_rounds(const OffsetList& v) {
  long n = 0;
  for (int j = 0; j < v.dims(); ++j) {
    std::set<int> values;
    for (int i = 0; i < v.size(); ++i)
      if (v[i][j] != 0) values.insert(v[i][j]);
    n += static_cast<long>(values.size());
  }
  return n;
}

bool all_periodic(const CartGeometry& grid) {
  return std::all_of(grid.periodic.begin(), grid.periodic.end(), [](bool b) { return b; });
}

/// Runs the implementation for every process and the simulator on the result.
/// Exceptions from the implementation become errors.
schedtest::SimResult simulate_impl(const OffsetList& v, const CartGeometry& grid, Algorithm algorithm,
                                   Collective collective) {
  try {
    const iso::RoundList list = iso::build_round_list(v, algorithm, grid.periodic);
    const std::vector<Schedule> all = schedtest::build_all(v, grid, algorithm, collective);
    return schedtest::simulate(v, grid, collective, all, &list);
  } catch (const std::exception& e) {
    schedtest::SimResult result;
    result.errors.push_back(std::string("exception: ") + e.what());
    return result;
  }
}

long term_volume(const iso::AdditiveBasis& basis) {
  long n = 0;
  for (const auto& terms : basis.terms) n += static_cast<long>(terms.size());
  return n;
}

std::string vector_string(const std::vector<int>& v) {
  std::string out = "(";
  for (std::size_t j = 0; j < v.size(); ++j) out += (j ? "," : "") + std::to_string(v[j]);
  return out + ")";
}

/// The contract of docs/design/schedules.md#basis, checked from the outside:
/// what is wrong with additive_basis(v, periodic), empty when nothing.
std::string basis_violation(const OffsetList& v, const std::vector<bool>& periodic) {
  const iso::AdditiveBasis basis = iso::additive_basis(v, periodic);
  const int d = v.dims();
  if (static_cast<int>(basis.terms.size()) != v.size()) return "one term list per offset expected";
  std::set<std::vector<int>> distinct;
  for (int i = 0; i < v.size(); ++i) {
    const std::vector<int> offset(v[i], v[i] + d);
    const std::vector<int>& terms = basis.terms[i];
    if (is_zero(v, i)) {
      if (!terms.empty()) return "the zero offset has terms";
      continue;
    }
    distinct.insert(offset);
    std::vector<int> sum(d, 0);
    for (std::size_t k = 0; k < terms.size(); ++k) {
      if (terms[k] < 0 || terms[k] >= static_cast<int>(basis.vectors.size())) return "a term outside the basis";
      if (k > 0 && terms[k] <= terms[k - 1]) return "terms not strictly ascending (distinct, round order)";
      const std::vector<int>& b = basis.vectors[terms[k]];
      for (int j = 0; j < d; ++j) {
        sum[j] += b[j];
        // A non-periodic dimension: every partial sum between 0 and v_j.
        const bool mesh = j < static_cast<int>(periodic.size()) && !periodic[j];
        if (mesh && (sum[j] < std::min(0, offset[j]) || sum[j] > std::max(0, offset[j])))
          return "offset " + vector_string(offset) + ": a path leaves the box in dimension " + std::to_string(j);
        // The signature rule of alltoallv/w: a path stays where the offset is 0.
        if (offset[j] == 0 && sum[j] != 0)
          return "offset " + vector_string(offset) + ": a path moves in dimension " + std::to_string(j) +
                 ", where the offset is 0";
      }
    }
    if (sum != offset) return "the terms of " + vector_string(offset) + " sum to " + vector_string(sum);
  }
  const long k = static_cast<long>(basis.vectors.size());
  if (k > static_cast<long>(distinct.size())) return "more vectors than distinct nonzero offsets";
  if (k > direct_rounds(v)) return "more vectors than direct has rounds";
  long lower = 0;
  while ((1L << lower) < static_cast<long>(distinct.size()) + 1) ++lower;
  if (basis.lower_bound != lower) return "lower_bound " + std::to_string(basis.lower_bound) + ", expected " + std::to_string(lower);
  if (k < lower) return "fewer vectors than the counting bound allows";
  if (k == lower && !basis.minimal) return "meets the lower bound but is not marked minimal";
  for (const auto& b : basis.vectors)
    if (std::all_of(b.begin(), b.end(), [](int c) { return c == 0; })) return "a zero vector in the basis";
  // A pure function: a copy of the offsets gives the same basis.
  const iso::AdditiveBasis again = iso::additive_basis(OffsetList(d, v.flat()), periodic);
  if (again.vectors != basis.vectors || again.terms != basis.terms) return "not deterministic";
  return {};
}

// ---------------------------------------------------------------------------
// Random cases


std::string describe_case(const Case& c) {
  return "offsets={" + c.offsets.to_string() + "} grid=" + schedtest::describe_grid(c.grid);
}

Case random_case(std::mt19937_64& rng, int max_procs) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int d = uniform(1, 4);
  Case c;
  do {
    c.grid.sizes.assign(d, 1);
    for (int& p : c.grid.sizes) p = uniform(1, 5);
  } while (c.grid.num_procs() > max_procs);
  const int mode = uniform(0, 2);  // all periodic, all mesh, mixed
  c.grid.periodic.assign(d, false);
  for (int j = 0; j < d; ++j) c.grid.periodic[j] = mode == 0 || (mode == 2 && uniform(0, 1) == 1);
  const int s = uniform(1, 10);
  const int style = uniform(0, 4);
  const int range = style == 0 ? 1 : style == 1 ? 2 : style == 4 ? 7 : 4;
  std::vector<std::vector<int>> list;
  for (int i = 0; i < s; ++i) {
    const int kind = uniform(0, 99);
    if (kind < 10) {
      list.emplace_back(d, 0);
    } else if (kind < 25 && !list.empty()) {
      list.push_back(list[uniform(0, static_cast<int>(list.size()) - 1)]);
    } else {
      std::vector<int> v(d);
      for (int& x : v) x = (style == 3 && uniform(0, 9) < 6) ? 0 : uniform(-range, range);
      list.push_back(v);
    }
  }
  std::vector<int> flat;
  for (const auto& v : list) flat.insert(flat.end(), v.begin(), v.end());
  c.offsets = OffsetList(d, flat);
  return c;
}

/// Greedy shrinking of a failing case: drop offsets, shrink grid sizes, move
/// coordinates towards 0 while `fails` stays true.
Case shrink(Case c, const std::function<bool(const Case&)>& fails) {
  bool progress = true;
  int budget = 400;
  while (progress && budget-- > 0) {
    progress = false;
    const int d = c.offsets.dims();
    for (int i = 0; i < c.offsets.size() && !progress; ++i) {
      std::vector<int> flat;
      for (int k = 0; k < c.offsets.size(); ++k)
        if (k != i) flat.insert(flat.end(), c.offsets[k], c.offsets[k] + d);
      if (flat.empty()) continue;
      Case t{OffsetList(d, flat), c.grid};
      if (fails(t)) {
        c = t;
        progress = true;
      }
    }
    for (int j = 0; j < d && !progress; ++j) {
      if (c.grid.sizes[j] <= 1) continue;
      Case t = c;
      --t.grid.sizes[j];
      if (fails(t)) {
        c = t;
        progress = true;
      }
    }
    for (int k = 0; k < static_cast<int>(c.offsets.flat().size()) && !progress; ++k) {
      const int value = c.offsets.flat()[k];
      if (value == 0) continue;
      std::vector<int> flat = c.offsets.flat();
      flat[k] = value > 0 ? value - 1 : value + 1;
      Case t{OffsetList(d, flat), c.grid};
      if (fails(t)) {
        c = t;
        progress = true;
      }
    }
  }
  return c;
}

std::uint64_t base_seed() {
  if (const char* env = std::getenv("ISO_SCHEDULE_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return 20240611ull;
}


/// Steps with `ports` (iso::execution_steps, what an operation posts
/// together): they cover the rounds in order, contiguously (deadlock-free
/// whatever each process groups); within a step no slot is both read and
/// written or written twice, so running a step at once gives what running
/// its rounds one after another gives -- which the simulation above checked
/// (nothing sent before it arrived); at most `ports` messages each way.
std::string steps_violation(const Schedule& schedule, int rank, int ports) {
  const std::vector<iso::ExecutionStep> steps = iso::execution_steps(schedule, ports, rank);
  const int rounds = static_cast<int>(schedule.rounds.size());
  int next = 0;
  for (const iso::ExecutionStep& step : steps) {
    if (step.first != next || step.last < step.first) return "steps do not cover the rounds in order";
    next = step.last;
    std::set<std::pair<int, int>> read, written;
    int sends = 0, receives = 0;
    for (int r = step.first; r < step.last; ++r) {
      const iso::Round& round = schedule.rounds[static_cast<std::size_t>(r)];
      const bool local = iso::is_local_round(round, rank);
      if (round.send_rank >= 0) {
        if (!local && !round.send.empty()) ++sends;
        for (const iso::BlockRef& ref : round.send) read.insert({static_cast<int>(ref.buffer), ref.block});
      }
      if (round.recv_rank >= 0) {
        if (!local && !round.recv.empty()) ++receives;
        for (const iso::BlockRef& ref : round.recv)
          if (!written.insert({static_cast<int>(ref.buffer), ref.block}).second)
            return "step of rounds [" + std::to_string(step.first) + ", " + std::to_string(step.last) +
                   ") writes a slot twice";
      }
    }
    for (const auto& slot : read)
      if (written.count(slot))
        return "step of rounds [" + std::to_string(step.first) + ", " + std::to_string(step.last) +
               ") reads and writes one slot";
    if (ports > 0 && (sends > ports || receives > ports))
      return "step of rounds [" + std::to_string(step.first) + ", " + std::to_string(step.last) + ") posts " +
             std::to_string(sends) + " sends and " + std::to_string(receives) + " receives with ports = " +
             std::to_string(ports);
  }
  if (next != rounds && !(steps.empty() && rounds == 0)) return "steps end before the last round";
  return {};
}

/// The messages the steps post (iso::step_messages) pair up across the
/// grid: each send of x to p, tagged with its first round, meets a receive
/// at p from x with that tag, made of the same rounds (so of entries that
/// pair one to one), and no two messages of a step in one direction share a
/// partner where the schedule merges partners. Empty when all hold.
std::string step_messages_violation(const std::vector<Schedule>& all, int ports) {
  // (rank, peer, tag, sending) -> the global indices of the message's rounds
  std::map<std::tuple<int, int, int, bool>, std::vector<int>> posted;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    const Schedule& schedule = all[rank];
    iso::StepMessages step_posts;
    for (const iso::ExecutionStep& step : iso::execution_steps(schedule, ports, static_cast<int>(rank))) {
      std::set<std::pair<int, bool>> partners;
      iso::step_messages(schedule, step, static_cast<int>(rank), step_posts);
      for (const iso::StepMessage& message : step_posts.messages) {
        std::vector<int> indices;
        for (int k = message.first; k < message.last; ++k)
          indices.push_back(schedule.rounds[static_cast<std::size_t>(step_posts.rounds[static_cast<std::size_t>(k)])].index);
        if (indices.empty() || indices.front() != message.round_index)
          return "rank " + std::to_string(rank) + ": a message not tagged with its first round";
        if (!partners.insert({message.peer, message.sending}).second && schedule.merges_partners)
          return "rank " + std::to_string(rank) + ": two messages of one step to one partner";
        const auto key = std::make_tuple(static_cast<int>(rank), message.peer, message.round_index, message.sending);
        if (!posted.emplace(key, indices).second)
          return "rank " + std::to_string(rank) + ": two messages with one tag to one partner";
      }
    }
  }
  for (const auto& [key, indices] : posted) {
    const auto [rank, peer, tag, sending] = key;
    const auto match = posted.find(std::make_tuple(peer, rank, tag, !sending));
    if (match == posted.end())
      return "rank " + std::to_string(rank) + (sending ? " sends to " : " receives from ") + std::to_string(peer) +
             " with tag " + std::to_string(tag) + ", which posts no matching message";
    if (match->second != indices)
      return "ranks " + std::to_string(rank) + " and " + std::to_string(peer) + " merge different rounds under tag " +
             std::to_string(tag);
  }
  return {};
}

void check_steps(const Case& c, Algorithm algorithm, Collective collective, const std::string& tag,
                 const std::vector<Schedule>& all, Findings& findings) {
  for (const int ports : {1, 2, 0}) {
    const std::string broken = step_messages_violation(all, ports);
    if (!broken.empty()) {
      findings.add("step messages do not pair up", tag + " " + describe(c.offsets, c.grid, algorithm, collective) +
                                                       " ports " + std::to_string(ports) + ": " + broken);
      return;
    }
  }
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    std::size_t previous = 0;
    for (const int ports : {1, 2, 4, 0}) {
      const std::string broken = steps_violation(all[rank], static_cast<int>(rank), ports);
      if (!broken.empty()) {
        findings.add("execution steps break their contract", tag + " " + describe(c.offsets, c.grid, algorithm, collective) +
                                                                 " rank " + std::to_string(rank) + " ports " +
                                                                 std::to_string(ports) + ": " + broken);
        return;
      }
      // More ports never need more steps.
      const std::size_t count = iso::execution_steps(all[rank], ports, static_cast<int>(rank)).size();
      if (previous != 0 && count > previous) {
        findings.add("execution steps break their contract",
                     tag + " " + describe(c.offsets, c.grid, algorithm, collective) + ": ports " +
                         std::to_string(ports) + " takes more steps than fewer ports");
        return;
      }
      previous = count;
    }
  }
}

/// Every check of one (case, algorithm, collective) against the spec.
/// Returns the categories that failed with details.
void check_case(const Case& c, Algorithm algorithm, Collective collective, const std::string& tag,
                Findings& findings, bool with_figures) {
  const OffsetList& v = c.offsets;
  const CartGeometry& grid = c.grid;
  const std::string what = tag + " " + describe(v, grid, algorithm, collective);
  std::vector<Schedule> all;
  iso::RoundList list;
  try {
    list = iso::build_round_list(v, algorithm, grid.periodic);
    all = schedtest::build_all(v, grid, algorithm, collective);
  } catch (const std::exception& e) {
    findings.add("exception", what + "\n    " + e.what());
    return;
  }
  // 1. Round list exactly as the spec defines it (basis: the properties of
  // docs/design/schedules.md#basis).
  if (list.shifts != schedtest::ref::round_list(v, algorithm, grid.periodic))
    findings.add("round list differs from docs/design/schedules.md", what);
  if (algorithm == Algorithm::basis) {
    const std::string broken = basis_violation(v, grid.periodic);
    if (!broken.empty()) findings.add("additive basis breaks its contract", what + ": " + broken);
  }

  // 2. The simulator.
  const schedtest::SimResult sim = schedtest::simulate(v, grid, collective, all, &list);
  if (!sim.ok()) {
    auto fails = [&](const Case& t) { return !simulate_impl(t.offsets, t.grid, algorithm, collective).ok(); };
    const Case small = shrink(c, fails);
    const schedtest::SimResult small_sim = simulate_impl(small.offsets, small.grid, algorithm, collective);
    findings.add("simulator", what + "\n" + sim.summary(6) + "    shrunk to: " + describe_case(small) + "\n" +
                                  small_sim.summary(6));
  }
  for (const std::string& n : sim.notes) {
    findings.add("temp flag set but slot unused (minor)", what + ": " + n);
    break;
  }

  // 3. Per-process counts equal the spec's filter (docs/design/mesh.md#filtering-a-schedule).
  std::vector<int> coords(grid.dims());
  for (int rank = 0; rank < grid.num_procs(); ++rank) {
    const Schedule& sc = all[rank];
    if (sc.blocks_sent() != schedtest::count_blocks_sent(sc) ||
        sc.messages_sent() != schedtest::count_messages_sent(sc)) {
      findings.add("Schedule::blocks_sent/messages_sent disagree with the rounds",
                   what + " rank " + std::to_string(rank));
      break;
    }
    grid.coords_of(rank, coords.data());
    const Schedule want = schedtest::ref::build_schedule(v, grid, coords.data(), algorithm, collective);
    const long got_blocks = schedtest::count_blocks_sent(sc), want_blocks = schedtest::count_blocks_sent(want);
    const long got_msgs = schedtest::count_messages_sent(sc), want_msgs = schedtest::count_messages_sent(want);
    const long got_recv = [&] {
      long n = 0;
      for (const auto& r : sc.rounds) n += static_cast<long>(r.recv.size());
      return n;
    }();
    const long want_recv = [&] {
      long n = 0;
      for (const auto& r : want.rounds) n += static_cast<long>(r.recv.size());
      return n;
    }();
    if (sc.algorithm != algorithm) {
      findings.add("Schedule::algorithm differs from the requested one", what);
      break;
    }
    if (schedtest::count_temp_slots(sc) != schedtest::count_temp_slots(want)) {
      findings.add("T/T2 slot count differs from the spec's buffer scheme (3.3-3.5)",
                   what + " rank " + std::to_string(rank) + ": " + std::to_string(schedtest::count_temp_slots(sc)) +
                       " slots (spec " + std::to_string(schedtest::count_temp_slots(want)) + ")");
      break;
    }
    if (got_blocks != want_blocks || got_msgs != want_msgs || got_recv != want_recv ||
        sc.copies.size() != want.copies.size()) {
      findings.add("per-process counts differ from the spec (3.5 filter)",
                   what + " rank " + std::to_string(rank) + ": blocks sent " + std::to_string(got_blocks) +
                       " (spec " + std::to_string(want_blocks) + "), messages " + std::to_string(got_msgs) +
                       " (spec " + std::to_string(want_msgs) + "), blocks received " + std::to_string(got_recv) +
                       " (spec " + std::to_string(want_recv) + "), copies " + std::to_string(sc.copies.size()) +
                       " (spec " + std::to_string(want.copies.size()) + ")");
      break;
    }
  }

  // 4. Torus volume formulas.
  if (all_periodic(grid) && !all.empty()) {
    long want_volume = 0;
    const iso::AdditiveBasis basis = iso::additive_basis(v, grid.periodic);
    if (algorithm == Algorithm::linear)
      want_volume = count_nonzero_offsets(v);
    else if (collective == Collective::allgather)
      want_volume = schedtest::ref::trie_nodes(v, algorithm);
    else if (algorithm == Algorithm::basis)
      want_volume = term_volume(basis);
    else
      want_volume = algorithm == Algorithm::torus ? l1_volume(v) : nz_volume(v);
    const long want_rounds = algorithm == Algorithm::linear  ? count_nonzero_offsets(v)
                             : algorithm == Algorithm::torus ? torus_rounds(v)
                             : algorithm == Algorithm::basis ? static_cast<long>(basis.vectors.size())
                                                             : direct_rounds(v);
    for (const Schedule& sc : all) {
      if (schedtest::count_blocks_sent(sc) != want_volume || sc.num_global_rounds != want_rounds) {
        findings.add("torus volume/rounds differ from the formulas",
                     what + ": volume " + std::to_string(schedtest::count_blocks_sent(sc)) + " (spec " +
                         std::to_string(want_volume) + "), rounds " + std::to_string(sc.num_global_rounds) +
                         " (spec " + std::to_string(want_rounds) + ")");
        break;
      }
    }
  }

  // 5. Execution steps (what an operation posts together) at several port counts.
  check_steps(c, algorithm, collective, tag, all, findings);

  // 6. schedule_figures agree with the per-process schedules.
  if (with_figures) {
    iso::ScheduleFigures f;
    try {
      f = iso::schedule_figures(v, grid, algorithm, collective);
    } catch (const std::exception& e) {
      findings.add("exception", what + " (schedule_figures)\n    " + e.what());
      return;
    }
    long msgs_max = 0, vol_max = 0, msgs_total = 0, vol_total = 0, copies_max = 0, temp_max = 0;
    for (const Schedule& sc : all) {
      msgs_max = std::max(msgs_max, schedtest::count_messages_sent(sc));
      vol_max = std::max(vol_max, schedtest::count_blocks_sent(sc));
      msgs_total += schedtest::count_messages_sent(sc);
      vol_total += schedtest::count_blocks_sent(sc);
      copies_max = std::max(copies_max, static_cast<long>(sc.copies.size()));
      temp_max = std::max(temp_max, schedtest::count_temp_slots(sc));
    }
    if (f.rounds != static_cast<int>(list.shifts.size()) || f.messages != msgs_max || f.volume != vol_max ||
        f.messages_total != msgs_total || f.volume_total != vol_total || f.local_copies != copies_max ||
        f.temp_blocks != temp_max)
      findings.add("schedule_figures disagree with the schedules",
                   what + ": figures rounds/messages/volume/messages_total/volume_total/local_copies/temp_blocks = " +
                       std::to_string(f.rounds) + "/" + std::to_string(f.messages) + "/" + std::to_string(f.volume) +
                       "/" + std::to_string(f.messages_total) + "/" + std::to_string(f.volume_total) + "/" +
                       std::to_string(f.local_copies) + "/" + std::to_string(f.temp_blocks) +
                       ", schedules give " + std::to_string(list.shifts.size()) + "/" + std::to_string(msgs_max) +
                       "/" + std::to_string(vol_max) + "/" + std::to_string(msgs_total) + "/" +
                       std::to_string(vol_total) + "/" + std::to_string(copies_max) + "/" +
                       std::to_string(temp_max));
  }
}

void check_all_algorithms(const Case& c, const std::string& tag, Findings& findings, bool with_figures) {
  for (Algorithm a : kScheduled)
    for (Collective k : kCollectives) check_case(c, a, k, tag, findings, with_figures);
}

}  // namespace schedtest
