// The world's process grid as the differential tests' hand-picked cases build
// it (dims_create: 3x3x3 at 27 ranks, 4x4x4 and 8x8 at 64), with the Moore
// neighborhood of radius 1 on a torus: the library's partners equal
// MPI_Cart_shift's arithmetic (independent_partners), and where every
// dimension has 3 or more processes the 3^d - 1 partners are distinct ranks
// other than this one, none repeated. Every algorithm and both collectives
// then deliver the expected blocks, as the MPI library's neighborhood
// collective does. tests/collectives/CMakeLists.txt runs this at 27 and 64
// ranks, so CI exercises a rank with 26 distinct partners.
#include "collectives_support.hpp"

#include <isostencil_test.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace iso_collectives_test {
namespace {

using iso_test::dims_text;
using iso_test::exact_root;

void check_world_torus(int d) {
  const int world = world_size();
  Case c;
  c.dims = dims_create(d);
  c.periodic.assign(static_cast<std::size_t>(d), true);
  const iso::OffsetList moore = iso::OffsetList::moore(d, 1, false);
  for (int i = 0; i < moore.size(); ++i)
    c.offsets.emplace_back(moore[i], moore[i] + d);
  c.layout_kind = 0;
  c.elements = 5;

  const int root = exact_root(world, d);
  if (root > 0) {
    EXPECT_EQ(c.dims, std::vector<int>(static_cast<std::size_t>(d), root))
        << world << " ranks, " << d << "-D";
  }
  const bool all_three =
      std::all_of(c.dims.begin(), c.dims.end(), [](int n) { return n >= 3; });

  iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
  iso::Neighborhood nbh(cart.get(), c.offset_list());
  const Partners partners = independent_partners(cart.get(), c);
  std::string failures;
  std::set<int> distinct;
  for (int i = 0; i < nbh.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (nbh.target_rank(i) != partners.targets[u] || nbh.source_rank(i) != partners.sources[u])
      failures += "\n  block " + std::to_string(i) + ": target/source " +
                  std::to_string(nbh.target_rank(i)) + "/" + std::to_string(nbh.source_rank(i)) +
                  ", MPI_Cart_rank says " + std::to_string(partners.targets[u]) + "/" +
                  std::to_string(partners.sources[u]);
    if (partners.targets[u] != world_rank()) distinct.insert(partners.targets[u]);
  }
  if (all_three && (static_cast<int>(distinct.size()) != nbh.size() || nbh.has_repeated_partner()))
    failures += "\n  " + std::to_string(distinct.size()) + " distinct partners of " +
                std::to_string(nbh.size()) + " on a " + dims_text(c.dims) + " torus";

  // Every algorithm and both collectives, against the expected blocks and the
  // MPI library's MPI_Neighbor_* on the same partners.
  constexpr std::array<iso::Algorithm, 6> algorithms = {
      iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
      iso::Algorithm::basis,  iso::Algorithm::mpi,   iso::Algorithm::automatic};
  ScopedLayouts layouts(make_layout_pair(c.layout_kind, c.elements));
  int generation = 1;
  // The reference only where no partner repeats (tiny tori: the MPI library
  // may pair a repeated partner's blocks in another order, as the
  // differential tests note); agreed over ranks, the call is collective.
  const bool reference_trusted =
      all_ranks(!nbh.has_repeated_partner()) || iso::mpi_pairs_repeated_edges_in_order();
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
    const Buffer expected =
        expected_result(layouts.get().recv, partners.sources, collective, generation);
    if (reference_trusted) {
      const Buffer reference =
          mpi_reference(cart.get(), partners, layouts.get(), collective, generation);
      const std::string reference_diff =
          first_difference(reference, expected, layouts.get().recv, nbh.size());
      if (!reference_diff.empty())
        failures += std::string("\n  MPI_Neighbor_") + iso::to_string(collective) + ": " +
                    reference_diff;
    }
    for (iso::Algorithm algorithm : algorithms) {
      const std::string label =
          std::string(iso::to_string(collective)) + "/" + iso::to_string(algorithm);
      const RunResult result = run_library(nbh, layouts.get(), algorithm, collective, generation);
      if (!result.error.empty()) {
        failures += "\n  " + label + " threw: " + result.error;
        continue;
      }
      const std::string diff = first_difference(result.recv, expected, layouts.get().recv, nbh.size());
      if (!diff.empty()) failures += "\n  " + label + ": " + diff;
      if (!result.send_unchanged) failures += "\n  " + label + ": send buffer modified";
    }
    ++generation;
  }

  EXPECT_TRUE(all_ranks(failures.empty())) << "rank " << world_rank() << ", " << d << "-D "
                                           << dims_text(c.dims) << ":" << failures;
  int counts[2] = {static_cast<int>(distinct.size()), -static_cast<int>(distinct.size())};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::printf("[ collectives scale ] %d ranks, %d-D torus %s, Moore r=1: %d to %d distinct "
                "partner ranks per rank (of %d blocks); %zu algorithms x 2 collectives checked\n",
                world, d, dims_text(c.dims).c_str(), counts[0], -counts[1], nbh.size(),
                algorithms.size());
}

TEST(CollectivesScale, TwoDimensionalWorldTorus) {
  check_world_torus(2);
}
TEST(CollectivesScale, ThreeDimensionalWorldTorus) {
  check_world_torus(3);
}

}  // namespace
}  // namespace iso_collectives_test
