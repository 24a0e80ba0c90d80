// Differential tests of the isomorphic collectives: every algorithm and both
// collectives, on random and hand-picked neighborhoods and process grids,
// compared bitwise with (a) the result computed from the source ranks,
// (b) the straightforward algorithm, (c) the MPI library's own
// MPI_Neighbor_alltoall / MPI_Neighbor_allgather.
//
// Every case runs with one way of posting messages (automatic, persistent,
// fresh: run_library picks it from the generation), so both request paths
// meet the references at every rank count.
//
// Knobs (environment): ISO_COLLECTIVES_CASES (random cases, default 300),
// ISO_COLLECTIVES_SEED, ISO_COLLECTIVES_MINIMIZE (failing cases shrunk to a
// minimal reproducer, default 3).
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>
#include <sstream>

namespace iso_collectives_test {
namespace {

// linear first: the others are compared with its result. tune runs (and
// times) every candidate of auto at init, on the case's buffers.
constexpr std::array<iso::Algorithm, 7> algorithms = {
    iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
    iso::Algorithm::basis,  iso::Algorithm::mpi,   iso::Algorithm::automatic,
    iso::Algorithm::tune};
constexpr int num_algorithms = static_cast<int>(algorithms.size());
constexpr std::array<iso::Collective, 2> collectives = {iso::Collective::alltoall,
                                                        iso::Collective::allgather};

// Failure kinds, one flag per (kind, collective, algorithm).
enum Kind : int {
  threw = 0,            // init or run threw
  wrong_result = 1,     // differs from the result computed from the source ranks
  differs_linear = 2,   // differs from the straightforward algorithm
  send_modified = 3,    // the send buffer changed
  mpi_differs = 4,      // the MPI library's neighborhood collective differs (algorithm slot 0)
  partners_differ = 5,  // Neighborhood::source_rank/target_rank/coords wrong (collective 0, slot 0)
  setup_threw = 6,      // CartComm/Neighborhood creation threw (collective 0, slot 0)
  num_kinds = 7,
};
const char* kind_name(int kind) {
  switch (kind) {
    case threw:
      return "threw";
    case wrong_result:
      return "wrong result (vs expected from source ranks)";
    case differs_linear:
      return "differs from the linear algorithm";
    case send_modified:
      return "send buffer modified";
    case mpi_differs:
      return "MPI_Neighbor_* reference differs from expected";
    case partners_differ:
      return "Neighborhood source/target ranks or coords differ from MPI_Cart_*";
    case setup_threw:
      return "CartComm/Neighborhood creation threw";
    default:
      return "?";
  }
}

// The failure flags of one case: a byte each (98 bytes), so that algorithms
// can be added without running out of bits; agreed over ranks by MPI_BOR.
class Failures {
public:
  void set(int kind, int collective = 0, int algorithm = 0) {
    flags_[index(kind, collective, algorithm)] = 1;
  }
  bool has(int kind, int collective = 0, int algorithm = 0) const {
    return flags_[index(kind, collective, algorithm)] != 0;
  }
  bool any() const {
    return std::any_of(flags_.begin(), flags_.end(), [](std::uint8_t f) { return f != 0; });
  }
  // Collective over MPI_COMM_WORLD: the failures of any rank.
  Failures any_rank() const {
    Failures global;
    MPI_Allreduce(flags_.data(), global.flags_.data(), static_cast<int>(flags_.size()), MPI_UINT8_T,
                  MPI_BOR, MPI_COMM_WORLD);
    return global;
  }

private:
  static std::size_t index(int kind, int collective, int algorithm) {
    return static_cast<std::size_t>((kind * 2 + collective) * num_algorithms + algorithm);
  }
  std::array<std::uint8_t, num_kinds * 2 * num_algorithms> flags_{};
};

std::string describe_failures(const Failures& failures) {
  std::string out;
  for (int kind = 0; kind < num_kinds; ++kind)
    for (int c = 0; c < 2; ++c)
      for (int a = 0; a < num_algorithms; ++a)
        if ((kind < partners_differ || (c == 0 && a == 0)) && failures.has(kind, c, a)) {
          out += "\n    ";
          out += kind_name(kind);
          if (kind != partners_differ && kind != setup_threw) {
            out += std::string(": ") + iso::to_string(collectives[static_cast<std::size_t>(c)]);
            if (kind != mpi_differs)
              out += std::string("/") + iso::to_string(algorithms[static_cast<std::size_t>(a)]);
          }
        }
  return out;
}

struct CaseReport {
  Failures failures;       // this rank's
  std::string details;     // this rank's first-difference descriptions
  long operations = 0;     // library operations run and compared
  long elements = 0;       // received elements compared (blocks from existing sources)
  long reference_skipped = 0;  // cases without the MPI_Neighbor_* reference (repeated partners)
};

bool has_repeated_partner(const Partners& partners) {
  for (const auto* list : {&partners.sources, &partners.targets}) {
    std::set<int> seen;
    for (int r : *list)
      if (r >= 0 && !seen.insert(r).second) return true;
  }
  return false;
}

// Runs one case completely: collective over MPI_COMM_WORLD, never returns early
// on one rank only. `only` restricts to one (collective, algorithm) and skips
// the MPI reference (used by the minimizer).
CaseReport run_case(const Case& c, int generation, int only_collective = -1,
                    int only_algorithm = -1) {
  CaseReport report;
  std::unique_ptr<iso::CartComm> cart;
  std::unique_ptr<iso::Neighborhood> nbh;
  try {
    cart = std::make_unique<iso::CartComm>(MPI_COMM_WORLD, c.dims, c.periodic);
    nbh = std::make_unique<iso::Neighborhood>(cart->get(), c.offset_list());
  } catch (const std::exception& e) {
    report.failures.set(setup_threw);
    report.details += std::string("\n    setup threw: ") + e.what();
    return report;  // every rank throws alike: the library agrees on errors
  }
  const Partners partners = independent_partners(cart->get(), c);
  const int s = static_cast<int>(c.offsets.size());
  {
    bool same = nbh->size() == s;
    std::vector<int> coords(c.dims.size());
    MPI_Cart_coords(cart->get(), nbh->rank(), static_cast<int>(c.dims.size()), coords.data());
    same = same && nbh->coords() == coords;
    for (int i = 0; same && i < s; ++i)
      same = nbh->source_rank(i) == partners.sources[static_cast<std::size_t>(i)] &&
             nbh->target_rank(i) == partners.targets[static_cast<std::size_t>(i)];
    if (!same) {
      report.failures.set(partners_differ);
      report.details += "\n    Neighborhood partners differ from MPI_Cart_rank's";
    }
  }
  ScopedLayouts layouts(make_layout_pair(c.kind_for_rank(world_rank()), c.elements));
  // MPI_Neighbor_* is a reference where partners are distinct, or where the
  // MPI library pairs repeated edges in order (Open MPI 4.1; MPICH 4.0.2
  // reverses them, docs/design/irregular.md#repeated-partners-on-tiny-tori, docs/mpich.md). Agreed over ranks, as the
  // call is collective. Algorithm::mpi runs everywhere: it merges a repeated
  // partner's blocks into one edge.
  const bool reference_trusted =
      all_ranks(!has_repeated_partner(partners)) || iso::mpi_pairs_repeated_edges_in_order();
  if (!reference_trusted) report.reference_skipped = 1;
  for (int ci = 0; ci < 2; ++ci) {
    if (only_collective >= 0 && ci != only_collective) continue;
    const iso::Collective collective = collectives[static_cast<std::size_t>(ci)];
    const Buffer expected =
        expected_result(layouts.get().recv, partners.sources, collective, generation);
    Buffer linear_result;
    bool have_linear = false;
    for (int ai = 0; ai < num_algorithms; ++ai) {
      if (only_algorithm >= 0 && ai != only_algorithm) continue;
      const iso::Algorithm algorithm = algorithms[static_cast<std::size_t>(ai)];
      const std::string label =
          std::string(iso::to_string(collective)) + "/" + iso::to_string(algorithm);
      RunResult result = run_library(*nbh, layouts.get(), algorithm, collective, generation);
      ++report.operations;
      for (int i = 0; i < s; ++i)
        if (partners.sources[static_cast<std::size_t>(i)] >= 0)
          report.elements += layouts.get().recv.elements_per_block();
      if (!result.error.empty()) {
        report.failures.set(threw, ci, ai);
        report.details += "\n    " + label + " threw: " + result.error;
        continue;
      }
      if (!result.send_unchanged) {
        report.failures.set(send_modified, ci, ai);
        report.details += "\n    " + label + ": send buffer modified";
      }
      const std::string diff = first_difference(result.recv, expected, layouts.get().recv, s);
      if (!diff.empty()) {
        report.failures.set(wrong_result, ci, ai);
        report.details += "\n    " + label + ": " + diff;
      }
      if (ai == 0) {
        linear_result = result.recv;
        have_linear = true;
      } else if (have_linear && result.recv.bytes() != linear_result.bytes()) {
        report.failures.set(differs_linear, ci, ai);
        report.details += "\n    " + label + " vs linear: " +
                          first_difference(result.recv, linear_result, layouts.get().recv, s);
      }
    }
    if (only_collective < 0 && reference_trusted) {
      // The MPI library's own neighborhood collective on the same partners.
      const Buffer reference =
          mpi_reference(cart->get(), partners, layouts.get(), collective, generation);
      const std::string diff = first_difference(reference, expected, layouts.get().recv, s);
      if (!diff.empty()) {
        report.failures.set(mpi_differs, ci, 0);
        report.details += std::string("\n    MPI_Neighbor_") + iso::to_string(collective) +
                          " reference: " + diff +
                          (has_repeated_partner(partners) ? " [repeated partners]" : "");
      }
    }
  }
  return report;
}

bool case_fails(const Case& c, int collective, int algorithm, int generation) {
  const CaseReport report = run_case(c, generation, collective, algorithm);
  return report.failures.any_rank().any();
}

// Greedy shrinking of a failing case, identical on every rank (each step's
// verdict is agreed over all ranks).
Case minimize(Case c, int collective, int algorithm, int generation) {
  int budget = 150;
  bool progress = true;
  auto try_case = [&](const Case& candidate) {
    if (budget-- <= 0) return false;
    if (!case_fails(candidate, collective, algorithm, generation)) return false;
    c = candidate;
    progress = true;
    return true;
  };
  while (progress && budget > 0) {
    progress = false;
    for (std::size_t i = 0; i < c.offsets.size() && c.offsets.size() > 1;) {
      Case candidate = c;
      candidate.offsets.erase(candidate.offsets.begin() + static_cast<long>(i));
      if (!try_case(candidate)) ++i;
    }
    for (std::size_t j = 0; j < c.dims.size() && c.dims.size() > 1;) {
      if (c.dims[j] != 1) {
        ++j;
        continue;
      }
      Case candidate = c;
      candidate.dims.erase(candidate.dims.begin() + static_cast<long>(j));
      candidate.periodic.erase(candidate.periodic.begin() + static_cast<long>(j));
      for (auto& v : candidate.offsets)
        v.erase(v.begin() + static_cast<long>(j));
      if (!try_case(candidate)) ++j;
    }
    for (std::size_t i = 0; i < c.offsets.size(); ++i)
      for (std::size_t j = 0; j < c.dims.size(); ++j) {
        while (c.offsets[i][j] != 0) {
          Case candidate = c;
          int& x = candidate.offsets[i][j];
          x += x > 0 ? -1 : 1;
          if (!try_case(candidate)) break;
        }
      }
    for (std::size_t j = 0; j < c.dims.size(); ++j)
      if (!c.periodic[j]) {
        Case candidate = c;
        candidate.periodic[j] = true;
        try_case(candidate);
      }
    if (c.layout_kind != 0 || c.elements > 1 || c.rank_dependent_layout) {
      Case candidate = c;
      candidate.layout_kind = 0;
      candidate.elements = 1;
      candidate.rank_dependent_layout = false;
      try_case(candidate);
    }
  }
  return c;
}

class Differential {
public:
  // Runs `c`, reports failures with the case's description; returns whether all ranks passed.
  bool check(const Case& c, const std::string& name, int generation = 1) {
    const CaseReport report = run_case(c, generation);
    const Failures failures = report.failures.any_rank();
    ++cases_;
    operations_ += report.operations;
    elements_ += report.elements;
    reference_skipped_ += report.reference_skipped;
    if (!failures.any()) return true;
    ++failed_;
    const bool verbose = failed_ <= 6;
    if (world_rank() == 0 && verbose)
      ADD_FAILURE() << "case " << name << " on " << world_size() << " ranks: " << c.describe()
                    << "\n  failing checks (any rank):" << describe_failures(failures);
    if (report.failures.any() && verbose)
      ADD_FAILURE() << "case " << name << ", rank " << world_rank()
                    << " details:" << report.details;
    // Shrink the first failures of library checks to a minimal reproducer.
    for (int ci = 0; ci < 2; ++ci)
      for (int ai = 0; ai < num_algorithms; ++ai) {
        const bool mine = failures.has(threw, ci, ai) || failures.has(wrong_result, ci, ai) ||
                          failures.has(differs_linear, ci, ai);
        if (!mine || minimized_ >= env_int("ISO_COLLECTIVES_MINIMIZE", 3)) continue;
        ++minimized_;
        const Case small = minimize(c, ci, ai, generation);
        const CaseReport again = run_case(small, generation, ci, ai);
        if (world_rank() == 0)
          ADD_FAILURE() << "minimal reproducer for "
                        << iso::to_string(collectives[static_cast<std::size_t>(ci)]) << "/"
                        << iso::to_string(algorithms[static_cast<std::size_t>(ai)]) << " on "
                        << world_size() << " ranks, generation " << generation << ": " << small.describe();
        if (again.failures.any())
          ADD_FAILURE() << "minimal reproducer, rank " << world_rank() << ":" << again.details;
      }
    return false;
  }
  int cases() const { return cases_; }
  int failed() const { return failed_; }
  // Collective: prints how much was compared (summed over ranks) on rank 0.
  void print_summary(const char* what) const {
    long local[2] = {operations_, elements_};
    long total[2] = {0, 0};
    MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank() == 0)
      std::printf(
          "[%s] %d cases on %d ranks, %d failed; %ld operations run and compared (all ranks), %ld "
          "received "
          "elements compared; MPI_Neighbor_* reference left out in %ld cases with repeated partners\n",
          what, cases_, world_size(), failed_, total[0], total[1], reference_skipped_);
  }

private:
  long operations_ = 0;
  long elements_ = 0;
  long reference_skipped_ = 0;
  int cases_ = 0;
  int failed_ = 0;
  int minimized_ = 0;
};

std::vector<std::vector<int>> moore(int d, int radius, bool include_self) {
  const iso::OffsetList list = iso::OffsetList::moore(d, radius, include_self);
  std::vector<std::vector<int>> offsets;
  for (int i = 0; i < list.size(); ++i)
    offsets.emplace_back(list[i], list[i] + d);
  return offsets;
}

Case make_case(std::vector<int> dims, std::vector<bool> periodic,
               std::vector<std::vector<int>> offsets, int layout_kind = 0, int elements = 3) {
  Case c;
  c.dims = std::move(dims);
  c.periodic = std::move(periodic);
  c.offsets = std::move(offsets);
  c.layout_kind = layout_kind;
  c.elements = elements;
  return c;
}

Case rank_dependent(Case c) {
  c.rank_dependent_layout = true;
  return c;
}

TEST(CollectivesDifferential, HandPickedNeighborhoods) {
  Differential differential;
  const int p = world_size();
  std::vector<std::pair<std::string, Case>> cases = {
      {"moore2d-r1-torus", make_case(dims_create(2), {true, true}, moore(2, 1, false))},
      {"moore2d-r1-mesh", make_case(dims_create(2), {false, false}, moore(2, 1, false), 7, 6)},
      {"moore2d-r1-mixed", make_case(dims_create(2), {true, false}, moore(2, 1, false), 4, 9)},
      {"moore3d-r1-self-mixed",
       make_case(dims_create(3), {true, false, true}, moore(3, 1, true), 1, 2)},
      {"moore2d-r3-torus", make_case(dims_create(2), {true, true}, moore(2, 3, false), 0, 1)},
      {"moore2d-r2-mesh", make_case(dims_create(2), {false, false}, moore(2, 2, false), 8, 4)},
      {"paper-allgather-4d-torus",
       make_case(dims_create(4), {true, true, true, true}, {{1, -1, 0, 0}, {1, 0, 0, 1}}, 0, 5)},
      {"paper-allgather-4d-mesh", make_case(dims_create(4), {false, false, false, false},
                                            {{1, -1, 0, 0}, {1, 0, 0, 1}}, 6, 6)},
      {"paper-allgather-4d-repeats",
       make_case(dims_create(4), {true, false, true, true},
                 {{1, -1, 0, 0}, {1, 0, 0, 1}, {1, -1, 0, 0}, {0, 0, 0, 0}, {2, -1, 0, 1}}, 7, 4)},
      {"1d-far-torus", make_case({p}, {true}, {{5}, {-5}, {2}, {0}, {2}, {-1}, {7}}, 2, 8)},
      {"1d-far-mesh", make_case({p}, {false}, {{5}, {-5}, {2}, {0}, {2}, {-1}, {7}}, 3, 8)},
      {"zeros-only", make_case(dims_create(2), {true, false}, {{0, 0}, {0, 0}})},
      {"repeats", make_case(dims_create(2), {false, true},
                            {{1, 0}, {1, 0}, {0, 1}, {1, 0}, {-1, -1}, {0, 1}})},
      {"star3d-r2", make_case(dims_create(3), {true, true, false},
                              {{1, 0, 0},
                               {-1, 0, 0},
                               {0, 1, 0},
                               {0, -1, 0},
                               {0, 0, 1},
                               {0, 0, -1},
                               {2, 0, 0},
                               {-2, 0, 0},
                               {0, 2, 0},
                               {0, -2, 0},
                               {0, 0, 2},
                               {0, 0, -2}},
                              5, 4)},
      {"upwind-2d",
       make_case(dims_create(2), {false, false}, {{-1, 0}, {0, -1}, {-1, -1}, {-2, 0}, {-2, -1}})},
      {"zero-elements", make_case(dims_create(3), {true, false, true}, moore(3, 1, false), 4, 0)},
      {"d1-size-p-single", make_case({p}, {false}, {{1}})},
      {"empty-neighborhood", make_case(dims_create(3), {true, false, true}, {})},
      {"rank-dependent-int-layouts",
       rank_dependent(make_case(dims_create(2), {true, false}, moore(2, 2, false), 0, 12))},
      {"rank-dependent-double-layouts",
       rank_dependent(make_case(dims_create(3), {true, true, true}, moore(3, 1, true), 1, 24))},
      // Around the small-message path's 4000-byte image limit
      // (operation_build.cpp): torus rounds of 9 blocks of 110 and 112 ints
      // (3960 / 4032 B), strided, lower-bound-shifted and mixed types (rank
      // dependent: 108 elements, a multiple of every layout's unit).
      {"moore3d-pack-limit-below", make_case(dims_create(3), {true, true, true}, moore(3, 1, false), 0, 110)},
      {"moore3d-pack-limit-above", make_case(dims_create(3), {true, false, true}, moore(3, 1, false), 0, 112)},
      {"moore3d-pack-limit-vector-below",
       make_case(dims_create(3), {true, true, false}, moore(3, 1, false), 4, 111)},
      {"moore3d-pack-limit-vector-above", make_case(dims_create(3), {true, true, true}, moore(3, 1, false), 4, 114)},
      {"moore3d-pack-limit-lb-below", make_case(dims_create(3), {true, true, true}, moore(3, 1, true), 6, 110)},
      {"moore3d-pack-limit-lb-above", make_case(dims_create(3), {false, true, true}, moore(3, 1, true), 7, 112)},
      {"moore3d-pack-limit-mixed", rank_dependent(make_case(dims_create(3), {true, true, true},
                                                            moore(3, 1, false), 0, 108))},
  };
  // Generations 1, 9 and 17: no port limit, and posting automatic,
  // persistent and fresh in turn (run_library).
  int index = 0;
  for (const auto& [name, c] : cases)
    differential.check(c, name, 1 + 8 * (index++ % 3));
  differential.print_summary("hand-picked");
  EXPECT_EQ(differential.failed(), 0) << "of " << differential.cases() << " hand-picked cases";
}

TEST(CollectivesDifferential, RandomNeighborhoods) {
  Differential differential;
  const int count = env_int("ISO_COLLECTIVES_CASES", 300);
  const auto seed =
      static_cast<std::uint64_t>(env_int("ISO_COLLECTIVES_SEED", 20240601)) * 1000003u +
      static_cast<std::uint64_t>(world_size());
  std::mt19937_64 rng(seed);  // same seed, same draws on every rank
  for (int n = 0; n < count; ++n) {
    const Case c = random_case(rng, world_size());
    differential.check(c, "random#" + std::to_string(n) + " (seed " + std::to_string(seed) + ")",
                       1 + n % 50);
  }
  differential.print_summary("random");
  EXPECT_EQ(differential.failed(), 0) << "of " << differential.cases() << " random cases";
}

}  // namespace
}  // namespace iso_collectives_test
