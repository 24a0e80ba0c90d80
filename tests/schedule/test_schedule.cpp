// Independent tests of the pure schedule computation (docs/design/schedules.md and docs/design/mesh.md),
// written from the spec. No MPI is used here.
#include "simulator.hpp"

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
#include <vector>

using iso::Algorithm;
using iso::BlockRef;
using iso::Buffer;
using iso::CartGeometry;
using iso::Collective;
using iso::OffsetList;
using iso::Schedule;
using schedtest::describe;
using schedtest::make_grid;
using schedtest::make_mesh;
using schedtest::make_torus;

namespace {

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

struct Case {
  OffsetList offsets;
  CartGeometry grid;
};

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

/// Collects failures per category and reports the first few of each.
struct Findings {
  std::map<std::string, std::vector<std::string>> items;
  std::map<std::string, long> counts;
  void add(const std::string& category, const std::string& text) {
    ++counts[category];
    if (items[category].size() < 4) items[category].push_back(text);
  }
  void report() const {
    for (const auto& [category, n] : counts) {
      std::string text = category + ": " + std::to_string(n) + " failing case(s); first ones:\n";
      for (const std::string& item : items.at(category)) text += item + "\n";
      ADD_FAILURE() << text;
    }
  }
};

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

void check_steps(const Case& c, Algorithm algorithm, Collective collective, const std::string& tag,
                 const std::vector<Schedule>& all, Findings& findings) {
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

}  // namespace

// ===========================================================================
// 1. Counts of docs/design/schedules.md#figures

struct TableRow {
  int d, r;
  long s, rounds, hop, direct, gather;
};
const TableRow kTable[] = {
    {2, 1, 8, 4, 12, 12, 8},       {2, 3, 48, 12, 168, 84, 48},        {3, 1, 26, 6, 54, 54, 26},
    {3, 2, 124, 12, 450, 300, 124}, {3, 3, 342, 18, 1764, 882, 342},  {4, 1, 80, 8, 216, 216, 80},
    {5, 1, 242, 10, 810, 810, 242}, {5, 3, 16806, 30, 144060, 72030, 16806},
};

TEST(ScheduleCounts, TableRowsMatchClosedFormulas) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const long r = row.r, d = row.d;
    EXPECT_EQ(row.s, ipow(2 * r + 1, row.d) - 1);
    EXPECT_EQ(row.rounds, 2 * r * d);
    EXPECT_EQ(row.hop, d * r * (r + 1) * ipow(2 * r + 1, row.d - 1));
    EXPECT_EQ(row.direct, 2 * r * d * ipow(2 * r + 1, row.d - 1));
    EXPECT_EQ(row.gather, row.s);
  }
}

// One process's schedule for every row of the table, every algorithm.
TEST(ScheduleCounts, TableBuildSchedule) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("Moore d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const OffsetList v = OffsetList::moore(row.d, row.r);
    ASSERT_EQ(v.size(), row.s);
    const CartGeometry grid = make_torus(std::vector<int>(row.d, 3));
    const std::vector<int> coords(row.d, 1);
    struct Want {
      Algorithm a;
      Collective c;
      long rounds, volume;
    };
    const Want wants[] = {
        {Algorithm::torus, Collective::alltoall, row.rounds, row.hop},
        {Algorithm::direct, Collective::alltoall, row.rounds, row.direct},
        {Algorithm::torus, Collective::allgather, row.rounds, row.gather},
        {Algorithm::direct, Collective::allgather, row.rounds, row.gather},
        {Algorithm::linear, Collective::alltoall, row.s, row.s},
        {Algorithm::linear, Collective::allgather, row.s, row.s},
    };
    for (const Want& w : wants) {
      SCOPED_TRACE(std::string(iso::to_string(w.a)) + "/" + iso::to_string(w.c));
      const Schedule sc = iso::build_schedule(v, grid, coords.data(), w.a, w.c);
      EXPECT_EQ(sc.num_global_rounds, w.rounds);
      EXPECT_EQ(static_cast<long>(sc.rounds.size()), w.rounds);
      EXPECT_EQ(sc.messages_sent(), w.rounds);
      EXPECT_EQ(sc.blocks_sent(), w.volume);
      EXPECT_EQ(schedtest::count_messages_sent(sc), w.rounds);
      EXPECT_EQ(schedtest::count_blocks_sent(sc), w.volume);
      EXPECT_EQ(sc.num_blocks, row.s);
      EXPECT_EQ(static_cast<long>(iso::build_round_list(v, w.a).shifts.size()), w.rounds);
      if (w.c == Collective::allgather && w.a != Algorithm::linear) {
        // docs/design/schedules.md#allgather: for Moore neighborhoods every trie node is owned: no temporary buffer.
        EXPECT_EQ(schedtest::count_temp_slots(sc), 0);
        EXPECT_TRUE(sc.copies.empty());
      }
      if (w.a != Algorithm::linear) {
        EXPECT_EQ(iso::build_round_list(v, w.a).shifts, schedtest::ref::round_list(v, w.a));
      }
    }
  }
}

// schedule_figures on periodic grids for every row (all processes have the same figures).
TEST(ScheduleCounts, TableScheduleFigures) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE("Moore d=" + std::to_string(row.d) + " r=" + std::to_string(row.r));
    const OffsetList v = OffsetList::moore(row.d, row.r);
    // Small periodic grids; the 16806-offset row on a 2^5 torus keeps run time low.
    const CartGeometry grid = make_torus(std::vector<int>(row.d, row.s > 1000 ? 2 : 3));
    const long P = grid.num_procs();
    for (Algorithm a : kAlgorithms) {
      for (Collective c : kCollectives) {
        SCOPED_TRACE(std::string(iso::to_string(a)) + "/" + iso::to_string(c));
        if (row.s > 1000 && a == Algorithm::linear) continue;  // s rounds, nothing to learn at this size
        // Processor time: wall time would also count whatever else runs on a loaded machine.
        const std::clock_t t0 = std::clock();
        const iso::ScheduleFigures f = iso::schedule_figures(v, grid, a, c);
        const double seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
        EXPECT_LT(seconds, 10.0) << "schedule_figures is slow";
        const long rounds = a == Algorithm::linear ? row.s : row.rounds;
        const long volume = a == Algorithm::linear          ? row.s
                            : c == Collective::allgather    ? row.gather
                            : a == Algorithm::torus         ? row.hop
                                                            : row.direct;
        EXPECT_EQ(f.rounds, rounds);
        EXPECT_EQ(f.messages, rounds);
        EXPECT_EQ(f.volume, volume);
        EXPECT_EQ(f.messages_total, rounds * P);
        EXPECT_EQ(f.volume_total, volume * P);
        EXPECT_EQ(f.local_copies, 0);
        if (c == Collective::allgather && a != Algorithm::linear) {
          EXPECT_EQ(f.temp_blocks, 0);
        }
      }
    }
  }
}

// The closed formulas beyond the table's rows (d = 1..4, r = 1..3).
TEST(ScheduleCounts, ClosedFormulasForMooreNeighborhoods) {
  for (int d = 1; d <= 4; ++d) {
    for (int r = 1; r <= 3; ++r) {
      SCOPED_TRACE("Moore d=" + std::to_string(d) + " r=" + std::to_string(r));
      const OffsetList v = OffsetList::moore(d, r);
      const CartGeometry grid = make_torus(std::vector<int>(d, 2));
      const long s = ipow(2 * r + 1, d) - 1;
      const long rounds = 2L * r * d;
      EXPECT_EQ(v.size(), s);
      auto f = iso::schedule_figures(v, grid, Algorithm::torus, Collective::alltoall);
      EXPECT_EQ(f.rounds, rounds);
      EXPECT_EQ(f.messages, rounds);
      EXPECT_EQ(f.volume, 1L * d * r * (r + 1) * ipow(2 * r + 1, d - 1));
      f = iso::schedule_figures(v, grid, Algorithm::direct, Collective::alltoall);
      EXPECT_EQ(f.rounds, rounds);
      EXPECT_EQ(f.messages, rounds);
      EXPECT_EQ(f.volume, 2L * r * d * ipow(2 * r + 1, d - 1));
      for (Algorithm a : {Algorithm::torus, Algorithm::direct}) {
        f = iso::schedule_figures(v, grid, a, Collective::allgather);
        EXPECT_EQ(f.rounds, rounds);
        EXPECT_EQ(f.volume, s);
        EXPECT_EQ(f.temp_blocks, 0);
      }
      for (Collective c : kCollectives) {
        f = iso::schedule_figures(v, grid, Algorithm::linear, c);
        EXPECT_EQ(f.rounds, s);
        EXPECT_EQ(f.messages, s);
        EXPECT_EQ(f.volume, s);
      }
    }
  }
}

TEST(ScheduleCounts, LinearIsOneRoundPerNonzeroOffset) {
  // Repeats count, zero vectors are local copies.
  const OffsetList v(2, {1, 0, 0, 0, 1, 0, -2, 3, 0, 0, 5, -5});
  const CartGeometry grid = make_torus({3, 4});
  const std::vector<int> coords{2, 1};
  for (Collective c : kCollectives) {
    SCOPED_TRACE(iso::to_string(c));
    const Schedule sc = iso::build_schedule(v, grid, coords.data(), Algorithm::linear, c);
    EXPECT_EQ(sc.num_global_rounds, 4);
    EXPECT_EQ(sc.messages_sent(), 4);
    EXPECT_EQ(sc.blocks_sent(), 4);
    EXPECT_EQ(sc.copies.size(), 2u);
    const iso::RoundList list = iso::build_round_list(v, Algorithm::linear);
    EXPECT_EQ(list.shifts, (std::vector<std::vector<int>>{{1, 0}, {1, 0}, {-2, 3}, {5, -5}}));
  }
}

TEST(ScheduleCounts, EmptyNeighborhood) {
  const OffsetList v(2, {});
  const CartGeometry grid = make_torus({2, 2});
  const std::vector<int> coords{0, 0};
  for (Algorithm a : kScheduled)
    for (Collective c : kCollectives) {
      SCOPED_TRACE(describe(v, grid, a, c));
      Schedule sc;
      ASSERT_NO_THROW(sc = iso::build_schedule(v, grid, coords.data(), a, c));
      EXPECT_EQ(sc.num_global_rounds, 0);
      EXPECT_TRUE(sc.rounds.empty());
      EXPECT_TRUE(sc.copies.empty());
    }
}

TEST(ScheduleCounts, AlgorithmNamesRoundTrip) {
  EXPECT_EQ(iso::parse_algorithm("linear"), Algorithm::linear);
  EXPECT_EQ(iso::parse_algorithm("straightforward"), Algorithm::linear);
  EXPECT_EQ(iso::parse_algorithm("torus"), Algorithm::torus);
  EXPECT_EQ(iso::parse_algorithm("hop"), Algorithm::torus);
  EXPECT_EQ(iso::parse_algorithm("direct"), Algorithm::direct);
  EXPECT_EQ(iso::parse_algorithm("torus-direct"), Algorithm::direct);
  EXPECT_EQ(iso::parse_algorithm("mpi"), Algorithm::mpi);
  EXPECT_EQ(iso::parse_algorithm("native"), Algorithm::mpi);
  EXPECT_EQ(iso::parse_algorithm("auto"), Algorithm::automatic);
  EXPECT_EQ(iso::parse_algorithm("basis"), Algorithm::basis);
  EXPECT_EQ(iso::parse_algorithm("additive"), Algorithm::basis);
  EXPECT_EQ(iso::parse_algorithm("tune"), Algorithm::tune);
  EXPECT_EQ(iso::parse_algorithm("autotune"), Algorithm::tune);
  for (Algorithm a : {Algorithm::linear, Algorithm::torus, Algorithm::direct, Algorithm::basis, Algorithm::mpi,
                      Algorithm::automatic, Algorithm::tune})
    EXPECT_EQ(iso::parse_algorithm(iso::to_string(a)), a) << iso::to_string(a);
  EXPECT_STREQ(iso::to_string(Collective::alltoall), "alltoall");
  EXPECT_STREQ(iso::to_string(Collective::allgather), "allgather");
}

// The lists help texts and errors print, from the one table.
TEST(ScheduleCounts, AlgorithmNamesFollowTheTable) {
  EXPECT_EQ(iso::algorithm_names(), "linear, torus, direct, basis, mpi, auto, tune");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::auto_first), "auto, linear, torus, direct, basis, mpi, tune");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::scheduled, ", ", " and "), "linear, torus, direct and basis");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::fixed, ", ", " or "), "linear, torus, direct, basis or mpi");
  EXPECT_EQ(iso::algorithm_names(iso::AlgorithmNames::scheduled, "|"), "linear|torus|direct|basis");
}

// ===========================================================================
// 1b. The basis algorithm (docs/design/schedules.md#basis)

namespace {
OffsetList shales(int d, std::vector<int> radii) {
  OffsetList out(d, {});
  const OffsetList unit = OffsetList::moore(d, 1);
  for (int r : radii)
    for (int i = 0; i < unit.size(); ++i) {
      std::vector<int> x(unit[i], unit[i] + d);
      for (int& c : x) c *= r;
      out.push_back(x);
    }
  return out;
}
}  // namespace

TEST(ScheduleBasis, KnownCases) {
  // 1-D {1..7}: {1,2,4}, 3 rounds against direct's 7.
  const OffsetList seven = OffsetList::parse("1;2;3;4;5;6;7");
  iso::AdditiveBasis basis = iso::additive_basis(seven);
  EXPECT_EQ(basis.vectors, (std::vector<std::vector<int>>{{1}, {2}, {4}}));
  EXPECT_TRUE(basis.minimal);
  EXPECT_EQ(iso::build_round_list(seven, Algorithm::basis).shifts.size(), 3u);
  EXPECT_EQ(iso::build_round_list(seven, Algorithm::direct).shifts.size(), 7u);
  EXPECT_EQ(basis.terms[6], (std::vector<int>{0, 1, 2}));  // 7 = 1 + 2 + 4
  // {1..8}: 4 rounds (the counting bound: 8 offsets need 2^k - 1 >= 8).
  basis = iso::additive_basis(OffsetList::parse("1;2;3;4;5;6;7;8"));
  EXPECT_EQ(basis.vectors.size(), 4u);
  EXPECT_TRUE(basis.minimal);
  // {1,2,3}: {1,2}.
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("1;2;3")).vectors, (std::vector<std::vector<int>>{{1}, {2}}));
  // Shales 3:3,7 and Moore 3:3 take fewer rounds than direct on a torus.
  for (const OffsetList& v : {shales(3, {3, 7}), OffsetList::moore(3, 3), OffsetList::moore(3, 2)}) {
    const auto b = iso::build_round_list(v, Algorithm::basis).shifts.size();
    const auto direct = iso::build_round_list(v, Algorithm::direct).shifts.size();
    EXPECT_LT(b, direct) << v.to_string();
  }
  EXPECT_EQ(iso::build_round_list(OffsetList::moore(3, 3), Algorithm::basis).shifts.size(), 9u);
  EXPECT_TRUE(iso::additive_basis(OffsetList::moore(3, 3)).minimal);  // 2^9 - 1 >= 342
  // A single far offset is its own basis vector; a pair along a diagonal merges.
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("5,-3")).vectors, (std::vector<std::vector<int>>{{5, -3}}));
  EXPECT_EQ(iso::additive_basis(OffsetList::parse("1,1;2,2")).vectors.size(), 2u);
}

TEST(ScheduleBasis, NeverMoreRoundsThanDirectOrLinear) {
  // Moore neighborhoods d = 1..4, r = 1..3, torus and mesh; the contract on each.
  for (int d = 1; d <= 4; ++d)
    for (int r = 1; r <= 3; ++r)
      for (bool periodic : {true, false}) {
        const OffsetList v = OffsetList::moore(d, r);
        SCOPED_TRACE("Moore d=" + std::to_string(d) + " r=" + std::to_string(r) + (periodic ? " torus" : " mesh"));
        const std::vector<bool> flags(d, periodic);
        EXPECT_EQ(basis_violation(v, flags), "");
        const auto basis = iso::additive_basis(v, flags);
        EXPECT_LE(static_cast<long>(basis.vectors.size()), direct_rounds(v));
        // Radius 1: +-1 in every dimension cannot do with fewer than direct's 2d here.
        if (r == 1) {
          EXPECT_EQ(static_cast<long>(basis.vectors.size()), 2L * d);
        }
        // A torus allows signed terms: 3 vectors cover -3..3 in one dimension.
        if (periodic && r >= 2) {
          EXPECT_EQ(static_cast<long>(basis.vectors.size()), 3L * d);
        }
      }
}

TEST(ScheduleBasis, MeshPathsStayInside) {
  // docs/design/mesh.md#the-basis-on-a-mesh: on a mesh every term of an offset
  // has its coordinates' signs, so the torus basis {-3, 1, 2} is not used.
  const OffsetList v = OffsetList::moore(1, 3);
  const auto torus = iso::additive_basis(v, {true});
  const auto mesh = iso::additive_basis(v, {false});
  EXPECT_EQ(torus.vectors.size(), 3u);
  EXPECT_EQ(mesh.vectors.size(), 4u);
  EXPECT_EQ(basis_violation(v, {false}), "");
  for (const CartGeometry& grid : {make_mesh({4}), make_mesh({7}), make_mesh({2})})
    for (Collective k : kCollectives) {
      const auto sim = simulate_impl(v, grid, Algorithm::basis, k);
      EXPECT_TRUE(sim.ok()) << describe(v, grid, Algorithm::basis, k) << "\n" << sim.summary();
    }
  // The torus basis would leave a mesh: in {-3, 1, 2}, -1 = -3 + 2 passes through -3.
  bool leaves = false;
  for (int i = 0; i < v.size(); ++i) {
    int partial = 0;
    for (int b : torus.terms[i]) {
      partial += torus.vectors[b][0];
      leaves |= partial < std::min(0, v[i][0]) || partial > std::max(0, v[i][0]);
    }
  }
  EXPECT_TRUE(leaves) << "the torus basis was expected to need the wrap-around";
}

TEST(ScheduleBasis, FiguresOfTheTable) {
  // Allgather shares prefixes: never more volume than alltoall, at most one
  // trie node per path prefix.
  for (int d = 1; d <= 3; ++d)
    for (int r = 1; r <= 3; ++r) {
      const OffsetList v = OffsetList::moore(d, r);
      const CartGeometry grid = make_torus(std::vector<int>(d, 3));
      const auto a2a = iso::schedule_figures(v, grid, Algorithm::basis, Collective::alltoall);
      const auto a2g = iso::schedule_figures(v, grid, Algorithm::basis, Collective::allgather);
      const auto basis = iso::additive_basis(v, grid.periodic);
      EXPECT_EQ(a2a.rounds, static_cast<int>(basis.vectors.size()));
      EXPECT_EQ(a2a.volume, term_volume(basis));
      EXPECT_EQ(a2g.volume, schedtest::ref::trie_nodes(v, Algorithm::basis));
      EXPECT_LE(a2g.volume, a2a.volume);
      EXPECT_GE(a2g.volume, v.size());
    }
}

// ===========================================================================
// 2. The simulator on specific cases

TEST(ScheduleSimulator, ReferenceSchedulesPass) {
  // Sanity of the test machinery itself: the spec's own schedules pass.
  std::mt19937_64 rng(base_seed() + 7);
  for (int n = 0; n < 300; ++n) {
    const Case c = random_case(rng, 100);
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto all = schedtest::ref::build_all(c.offsets, c.grid, a, k);
        const auto sim = schedtest::simulate(c.offsets, c.grid, k, all);
        ASSERT_TRUE(sim.ok()) << "reference case " << n << " " << describe(c.offsets, c.grid, a, k) << "\n"
                              << sim.summary();
        ASSERT_TRUE(sim.notes.empty()) << sim.notes.front();
      }
  }
}

TEST(ScheduleSimulator, SharedPrefixAllgatherCase) {
  // docs/design/schedules.md#allgather: the published code loses data for this neighborhood.
  const OffsetList v(4, {1, -1, 0, 0, 1, 0, 0, 1});
  const std::vector<CartGeometry> grids = {
      make_torus({2, 2, 2, 2}), make_torus({3, 3, 3, 3}), make_mesh({2, 2, 2, 2}), make_mesh({3, 2, 2, 3}),
      make_grid({2, 3, 1, 2}, {true, false, true, false}), make_torus({1, 1, 1, 1}), make_torus({4, 1, 2, 5})};
  for (const CartGeometry& grid : grids)
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto sim = simulate_impl(v, grid, a, k);
        EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
      }
  // Volume on the torus: the trie has nodes (1,0,0,0), (1,-1,0,0), (1,0,0,1).
  for (Algorithm a : {Algorithm::torus, Algorithm::direct}) {
    const auto f = iso::schedule_figures(v, make_torus({2, 2, 2, 2}), a, Collective::allgather);
    EXPECT_EQ(f.volume, 3) << iso::to_string(a);
    EXPECT_EQ(f.rounds, 3) << iso::to_string(a);
  }
}

TEST(ScheduleSimulator, MooreNeighborhoodsOnMeshesAndTori) {
  struct Item {
    int d, r;
    CartGeometry grid;
  };
  const std::vector<Item> items = {
      {1, 1, make_mesh({5})},
      {1, 3, make_mesh({4})},
      {2, 1, make_mesh({3, 3})},
      {2, 1, make_mesh({4, 5})},
      {2, 2, make_mesh({2, 3})},
      {2, 2, make_grid({3, 4}, {true, false})},
      {2, 1, make_torus({1, 2})},
      {2, 3, make_torus({2, 3})},
      {3, 1, make_mesh({3, 3, 3})},
      {3, 1, make_mesh({2, 2, 2})},
      {3, 1, make_grid({3, 2, 4}, {false, true, false})},
      {3, 2, make_mesh({4, 4, 3})},
      {3, 1, make_torus({2, 2, 2})},
      {3, 1, make_torus({3, 3, 3})},
      {4, 1, make_mesh({2, 3, 2, 2})},
      {4, 1, make_torus({2, 2, 2, 2})},
  };
  for (const Item& item : items)
    for (bool self : {false, true}) {
      const OffsetList v = OffsetList::moore(item.d, item.r, self);
      for (Algorithm a : kScheduled)
        for (Collective k : kCollectives) {
          const auto sim = simulate_impl(v, item.grid, a, k);
          EXPECT_TRUE(sim.ok()) << describe(v, item.grid, a, k) << "\n" << sim.summary();
        }
    }
}

TEST(ScheduleSimulator, TinyToriWithSelfMessagesAndRepeats) {
  // Offsets larger than the grid, repeats and zeros, several rounds with one partner.
  const std::vector<OffsetList> lists = {
      OffsetList(1, {1, 2, 3, -1, -2, 0, 2, 2}),
      OffsetList(2, {2, 0, 0, 2, 2, 2, -2, -2, 0, 0, 4, 1, 1, 4}),
      OffsetList(2, {1, 1, 1, 1, 0, 0, 0, 0, -1, 1}),
      OffsetList(3, {1, -1, 0, 0, -1, 1, 1, 0, 1, 2, 2, 2}),
  };
  for (const OffsetList& v : lists) {
    const int d = v.dims();
    const std::vector<CartGeometry> grids = {make_torus(std::vector<int>(d, 1)), make_torus(std::vector<int>(d, 2)),
                                             make_mesh(std::vector<int>(d, 1)), make_mesh(std::vector<int>(d, 2))};
    for (const CartGeometry& grid : grids)
      for (Algorithm a : kScheduled)
        for (Collective k : kCollectives) {
          const auto sim = simulate_impl(v, grid, a, k);
          EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
        }
  }
}

// Every pair (and some triples) of 2-D offsets in [-2,2]^2 for allgather, on a
// few grids: shared prefixes in every configuration.
TEST(ScheduleSimulator, ExhaustivePairsIn2D) {
  const std::vector<CartGeometry> grids = {make_torus({3, 3}), make_mesh({3, 4}), make_grid({2, 3}, {false, true})};
  std::vector<std::vector<int>> points;
  for (int a = -2; a <= 2; ++a)
    for (int b = -2; b <= 2; ++b) points.push_back({a, b});
  Findings findings;
  for (const CartGeometry& grid : grids)
    for (std::size_t p = 0; p < points.size(); ++p)
      for (std::size_t q = 0; q < points.size(); ++q) {
        const OffsetList v(2, {points[p][0], points[p][1], points[q][0], points[q][1]});
        for (Algorithm a : kScheduled)
          for (Collective k : kCollectives) {
            const auto sim = simulate_impl(v, grid, a, k);
            if (!sim.ok()) findings.add("simulator", describe(v, grid, a, k) + "\n" + sim.summary(4));
          }
      }
  findings.report();
}

TEST(ScheduleSimulator, HigherDimensions) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList::moore(5, 1), make_mesh({2, 2, 2, 2, 2})},
      {OffsetList::moore(5, 1), make_grid({2, 1, 3, 2, 1}, {true, false, true, false, true})},
      {OffsetList(5, {1, -1, 0, 0, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, -1, 0, 0, 2}),
       make_grid({2, 2, 2, 2, 3}, {false, true, false, true, false})},
      {OffsetList(6, {1, 0, -1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 2, 0, 0, 0, -1}), make_mesh({2, 2, 2, 2, 2, 2})},
  };
  for (const auto& [v, grid] : items)
    for (Algorithm a : kScheduled)
      for (Collective k : kCollectives) {
        const auto sim = simulate_impl(v, grid, a, k);
        EXPECT_TRUE(sim.ok()) << describe(v, grid, a, k) << "\n" << sim.summary();
      }
}

// ===========================================================================
// 3. Random property test

TEST(ScheduleSimulator, RandomNeighborhoods) {
  const std::uint64_t seed = base_seed();
  const int cases = std::getenv("ISO_SCHEDULE_TEST_CASES") ? std::atoi(std::getenv("ISO_SCHEDULE_TEST_CASES")) : 2500;
  Findings findings;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < cases; ++n) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(n));
    const Case c = random_case(rng, 128);
    const std::string tag = "[seed " + std::to_string(seed) + " case " + std::to_string(n) + "]";
    check_all_algorithms(c, tag, findings, n % 5 == 0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("RandomNeighborhoods: %d cases, seed %llu, %.2f s\n", cases, static_cast<unsigned long long>(seed),
              seconds);
  findings.report();
}

// ===========================================================================
// 4. Figures on meshes

TEST(ScheduleFigures, MeshTotalsAreSumsOverProcesses) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList::moore(2, 1), make_mesh({3, 3})},
      {OffsetList::moore(2, 2), make_mesh({4, 5})},
      {OffsetList::moore(3, 1), make_mesh({3, 3, 3})},
      {OffsetList::moore(3, 1), make_grid({3, 4, 2}, {true, false, false})},
      {OffsetList(4, {1, -1, 0, 0, 1, 0, 0, 1}), make_mesh({2, 2, 2, 2})},
      {OffsetList(2, {0, 0, 3, 1, 3, 1, -1, 2, 1, 0}), make_mesh({4, 3})},
  };
  Findings findings;
  for (const auto& [v, grid] : items) check_all_algorithms(Case{v, grid}, "[mesh]", findings, true);
  findings.report();
}

TEST(ScheduleFigures, CornersSendLessThanInterior) {
  for (int d : {2, 3}) {
    const OffsetList v = OffsetList::moore(d, 1);
    const CartGeometry grid = make_mesh(std::vector<int>(d, 3));
    const std::vector<int> corner(d, 0), center(d, 1);
    for (Algorithm a : kScheduled)
      for (Collective c : kCollectives) {
        SCOPED_TRACE(describe(v, grid, a, c));
        const Schedule sc_corner = iso::build_schedule(v, grid, corner.data(), a, c);
        const Schedule sc_center = iso::build_schedule(v, grid, center.data(), a, c);
        EXPECT_LT(sc_corner.messages_sent(), sc_center.messages_sent());
        EXPECT_LT(sc_corner.blocks_sent(), sc_center.blocks_sent());
        const iso::ScheduleFigures f = iso::schedule_figures(v, grid, a, c);
        const iso::ScheduleFigures ft = iso::schedule_figures(v, make_torus(std::vector<int>(d, 3)), a, c);
        EXPECT_EQ(f.messages, sc_center.messages_sent());
        EXPECT_EQ(f.volume, sc_center.blocks_sent());
        EXPECT_EQ(f.rounds, ft.rounds);
        EXPECT_LT(f.messages_total, ft.messages_total);
        EXPECT_LT(f.volume_total, ft.volume_total);
        // Linear on a mesh: one message per existing neighbor.
        if (a == Algorithm::linear) {
          EXPECT_EQ(sc_corner.messages_sent(), ipow(2, d) - 1);
          EXPECT_EQ(sc_center.messages_sent(), ipow(3, d) - 1);
        }
      }
  }
}

// ===========================================================================
// 5. Bad input

TEST(ScheduleBadInput, WrongDimension) {
  const OffsetList v(3, {1, 0, 0, 0, 1, 0});
  const CartGeometry grid = make_torus({2, 2});
  const std::vector<int> coords{0, 0, 0};
  for (Algorithm a : kScheduled)
    for (Collective c : kCollectives) {
      EXPECT_THROW(iso::build_schedule(v, grid, coords.data(), a, c), iso::Error) << describe(v, grid, a, c);
      EXPECT_THROW(iso::schedule_figures(v, grid, a, c), iso::Error) << describe(v, grid, a, c);
    }
  // Algorithms without a schedule of their own.
  const OffsetList ok(2, {1, 0, 0, 1});
  for (Algorithm a : {Algorithm::mpi, Algorithm::automatic, Algorithm::tune})
    for (Collective c : kCollectives)
      EXPECT_THROW(iso::build_schedule(ok, grid, coords.data(), a, c), iso::Error) << iso::to_string(a);
  const OffsetList w(1, {1, -1});
  const CartGeometry grid3 = make_mesh({2, 2, 2});
  EXPECT_THROW(iso::build_schedule(w, grid3, coords.data(), Algorithm::torus, Collective::alltoall), iso::Error);
}

TEST(ScheduleBadInput, ParseAlgorithm) {
  for (const char* bad : {"bogus", "", "Linear ", "torus direct", "hop "}) {
    try {
      iso::parse_algorithm(bad);
      ADD_FAILURE() << "parse_algorithm(\"" << bad << "\") did not throw";
    } catch (const iso::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("linear"), std::string::npos) << what;
      EXPECT_NE(what.find("torus"), std::string::npos) << what;
      EXPECT_NE(what.find("direct"), std::string::npos) << what;
      EXPECT_NE(what.find("basis"), std::string::npos) << what;
      EXPECT_NE(what.find("mpi"), std::string::npos) << what;
      EXPECT_NE(what.find("auto"), std::string::npos) << what;
    }
  }
}

TEST(ScheduleBadInput, OffsetListErrors) {
  EXPECT_THROW(OffsetList::parse("1,0;1"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1,a"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1,,2"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1.5,2"), iso::Error);
  EXPECT_THROW(OffsetList::parse(""), iso::Error);
  EXPECT_THROW(OffsetList::parse(";;"), iso::Error);
  EXPECT_THROW(OffsetList(2, {1, 2, 3}), iso::Error);
  EXPECT_THROW(OffsetList(0, {}), iso::Error);
  EXPECT_THROW(OffsetList::moore(0, 1), iso::Error);
  EXPECT_THROW(OffsetList::moore(2, -1), iso::Error);
  OffsetList v(2, {1, 0});
  EXPECT_THROW(v.push_back({1, 2, 3}), iso::Error);

  const OffsetList p = OffsetList::parse(" 1, 0,0 ;0,1 ,1;-2,3,4;");
  EXPECT_EQ(p.dims(), 3);
  EXPECT_EQ(p.size(), 3);
  EXPECT_EQ(p.flat(), (std::vector<int>{1, 0, 0, 0, 1, 1, -2, 3, 4}));
  EXPECT_EQ(OffsetList::moore(2, 1).size(), 8);
  EXPECT_EQ(OffsetList::moore(2, 1, true).size(), 9);
}

// ===========================================================================
// Mutation check: the simulator must reject broken schedules.

namespace {

struct Mutation {
  std::string name;
  std::vector<Schedule> schedules;
};

std::vector<Mutation> mutate(const std::vector<Schedule>& good, const CartGeometry& grid) {
  std::vector<Mutation> out;
  auto first = [&](const std::function<bool(std::vector<Schedule>&)>& apply, const std::string& name) {
    std::vector<Schedule> copy = good;
    if (apply(copy)) out.push_back({name, std::move(copy)});
  };
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (std::size_t k = 1; k < r.recv.size(); ++k)
          if (r.recv[k] != r.recv[0]) {
            std::swap(r.recv[0], r.recv[k]);
            return true;
          }
    return false;
  }, "swap two receive entries");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.recv)
          if (ref.buffer == Buffer::temp) {
            ref.buffer = Buffer::recv;
            return true;
          }
    return false;
  }, "receive into R instead of T");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.recv)
          if (ref.buffer == Buffer::temp2) {
            ref.buffer = Buffer::recv;
            return true;
          }
    return false;
  }, "receive into R instead of T2");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      if (!sc.copies.empty()) {
        sc.copies.pop_back();
        return true;
      }
    return false;
  }, "drop a local copy");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.send)
          if (ref.buffer != Buffer::send && sc.num_blocks > 1) {
            ref.block = (ref.block + 1) % sc.num_blocks;
            return true;
          }
    return false;
  }, "corrupt a send BlockRef");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.send.size() > 1) {
          r.send.pop_back();
          return true;
        }
    return false;
  }, "drop one send entry");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (!r.send.empty() && !r.recv.empty() && r.send[0].buffer != Buffer::send) {
          r.recv[0] = r.send[0];
          return true;
        }
    return false;
  }, "read and write one slot in a round");
  first([&grid](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.recv_rank >= 0 && grid.num_procs() > 1) {
          r.recv_rank = (r.recv_rank + 1) % grid.num_procs();
          return true;
        }
    return false;
  }, "wrong recv_rank");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      if (!sc.rounds.empty()) {
        sc.rounds.erase(sc.rounds.begin());
        return true;
      }
    return false;
  }, "drop a round");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (std::size_t i = 0; i < sc.uses_temp.size(); ++i)
        if (sc.uses_temp[i]) {
          sc.uses_temp[i] = 0;
          return true;
        }
    return false;
  }, "clear a uses_temp flag");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.send.size() > 1) {
          std::swap(r.send.front(), r.send.back());
          return r.send.front() != r.send.back();
        }
    return false;
  }, "swap two send entries");
  return out;
}

void expect_mutations_rejected(const std::vector<Schedule>& good, const OffsetList& v, const CartGeometry& grid,
                               Collective c, const std::string& what, std::set<std::string>& seen) {
  ASSERT_TRUE(schedtest::simulate(v, grid, c, good).ok()) << what << "\n"
                                                          << schedtest::simulate(v, grid, c, good).summary();
  for (const Mutation& m : mutate(good, grid)) {
    seen.insert(m.name);
    EXPECT_FALSE(schedtest::simulate(v, grid, c, m.schedules).ok()) << what << ": mutation not detected: " << m.name;
  }
}

}  // namespace

TEST(ScheduleSimulator, DetectsBrokenSchedules) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList(2, {0, 0, 1, 1, -1, 2, 2, 0, 1, 1, 2, -1}), make_torus({3, 4})},
      {OffsetList(2, {0, 0, 1, 1, -1, 2, 2, 0, 1, 1, 2, -1}), make_mesh({3, 4})},
      {OffsetList(2, {2, 2, 0, 0, 1, -2}), make_mesh({3, 3})},
      {OffsetList(4, {1, -1, 0, 0, 1, 0, 0, 1}), make_torus({2, 2, 2, 2})},
      {OffsetList::moore(2, 1, true), make_mesh({3, 3})},
  };
  std::set<std::string> seen_ref, seen_impl;
  for (const auto& [v, grid] : items)
    for (Algorithm a : kScheduled)
      for (Collective c : kCollectives) {
        const std::string what = describe(v, grid, a, c);
        expect_mutations_rejected(schedtest::ref::build_all(v, grid, a, c), v, grid, c, "reference " + what,
                                  seen_ref);
        const auto impl = schedtest::build_all(v, grid, a, c);
        if (schedtest::simulate(v, grid, c, impl).ok())
          expect_mutations_rejected(impl, v, grid, c, "implementation " + what, seen_impl);
      }
  // Every kind of mutation was exercised at least once on the reference.
  EXPECT_EQ(seen_ref.size(), 11u);
  for (const auto& name : seen_ref) std::printf("  mutation exercised: %s\n", name.c_str());
}
