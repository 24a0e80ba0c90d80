// Test-only tools for the pure schedule computation (no MPI):
//
//  * a symbolic simulator that executes one Schedule per process of a virtual
//    process grid and checks every rule of docs/design/schedules.md#buffer-scheme and docs/design/mesh.md (slot
//    discipline, send/receive pairing, final placement, untouched blocks);
//  * a small, deliberately naive reference of the spec (docs/design/schedules.md and docs/design/mesh.md),
//    written from the text and not from halo/src/schedule.cpp. It serves as an
//    oracle for per-process figures and as a known-good input for checking that
//    the simulator itself accepts correct schedules and rejects broken ones.
#pragma once

#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace schedtest {

using iso::Algorithm;
using iso::BlockRef;
using iso::Buffer;
using iso::CartGeometry;
using iso::Collective;
using iso::OffsetList;
using iso::Round;
using iso::Schedule;

/// Result of one simulation: `errors` are violations of the contract;
/// `notes` are weaker findings (a temp flag set for a slot that is never used).
struct SimResult {
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  bool ok() const { return errors.empty(); }
  /// The first `max_lines` errors, one a line, plus a count of the rest.
  std::string summary(std::size_t max_lines = 12) const;
};

/// Executes `schedules` (indexed by rank of `grid`) on symbolic data and
/// checks them. `expected_rounds` (may be null) is the global round list every
/// round's index/shift must agree with.
SimResult simulate(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                   iso::Collective collective, const std::vector<iso::Schedule>& schedules,
                   const iso::RoundList* expected_rounds = nullptr);

/// build_schedule (the implementation under test) for every rank of `grid`.
std::vector<iso::Schedule> build_all(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                                     iso::Algorithm algorithm, iso::Collective collective);

/// Blocks sent / messages sent, counted directly from the rounds (independent
/// of Schedule::blocks_sent / messages_sent).
long count_blocks_sent(const iso::Schedule& schedule);
long count_messages_sent(const iso::Schedule& schedule);
long count_temp_slots(const iso::Schedule& schedule);

/// "offsets=(1,0) (0,1) grid=3x2 periodic=TF algorithm=torus collective=allgather"
std::string describe(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                     iso::Algorithm algorithm, iso::Collective collective);
std::string describe_grid(const iso::CartGeometry& grid);

iso::CartGeometry make_grid(std::vector<int> sizes, std::vector<bool> periodic);
iso::CartGeometry make_torus(std::vector<int> sizes);
iso::CartGeometry make_mesh(std::vector<int> sizes);

namespace ref {

/// The global round list of the spec: linear = one round per nonzero offset in
/// order; torus = (j,+,1..P_j),(j,-,1..M_j) per dimension; direct = (j,c) per
/// dimension and distinct nonzero value c ascending; basis = the vectors of
/// iso::additive_basis (whose properties test_schedule.cpp checks on their own),
/// each block along its terms.
std::vector<std::vector<int>> round_list(const iso::OffsetList& offsets, iso::Algorithm algorithm,
                                         const std::vector<bool>& periodic = {});

/// The spec's schedule of the process at `coords` (double buffering and allgather
/// trie of docs/design/schedules.md, mesh filter with T2 redirection of docs/design/mesh.md). Only what the spec fixes is
/// meant to be compared with the implementation: counts, round indices, and the
/// outcome in the simulator.
iso::Schedule build_schedule(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                             const int* coords, iso::Algorithm algorithm,
                             iso::Collective collective);

std::vector<iso::Schedule> build_all(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                                     iso::Algorithm algorithm, iso::Collective collective);

/// Number of trie nodes (the allgather volume on a torus) for torus, direct
/// and basis; a node is a path prefix.
long trie_nodes(const iso::OffsetList& offsets, iso::Algorithm algorithm);

}  // namespace ref

}  // namespace schedtest
