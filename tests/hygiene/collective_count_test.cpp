// Set-up's collective calls, pinned by count (collective_counter.hpp): a
// halo exchange on a pattern agrees on its arguments in one allreduce; auto
// predicts in one more the first time per block sizes, then agrees on the
// choice kept on the pattern's neighborhood inside that one allreduce
// (docs/design/cost-model.md#kept-choices).
#include "collective_counter.hpp"
#include "isostencil_test.hpp"

#include "iso/cost_model.hpp"
#include "iso/halo_exchange.hpp"
#include "iso/neighborhood.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using iso_collectives::calls;
using iso_collectives::since;

TEST(CollectiveCount, AHaloExchangeOnAPatternAgreesInOneAllreduce) {
  for (int d : {2, 3}) {
    std::vector<int> dims(static_cast<std::size_t>(d), 0);
    iso::CartComm cart(MPI_COMM_WORLD, dims, std::vector<bool>(static_cast<std::size_t>(d), true));
    (void)iso::CostModel::for_comm(cart.get());  // read once per process, collectively
    const iso::HaloGeometry geometry = iso::stencil_geometry(iso::OffsetList::moore(d, 1));
    for (iso::Algorithm algorithm : {iso::Algorithm::automatic, iso::Algorithm::torus, iso::Algorithm::linear}) {
      iso::HaloOptions options;
      options.algorithm = algorithm;
      const auto pattern = std::make_shared<const iso::HaloPattern>(
          cart.get(), std::vector<int>(static_cast<std::size_t>(d), 4), geometry, std::vector<long>{}, options);
      long cells = 1;
      for (int e : pattern->layout(MPI_DOUBLE).extent()) cells *= e;
      std::vector<double> a(static_cast<std::size_t>(cells)), b(static_cast<std::size_t>(cells));
      std::vector<int> n(static_cast<std::size_t>(cells));
      const std::string what = std::to_string(d) + "-D, " + iso::to_string(algorithm);
      const bool automatic = algorithm == iso::Algorithm::automatic;
      const std::string first = automatic ? "allreduce 2, other 0" : "allreduce 1, other 0";
      const std::string warm = "allreduce 1, other 0";
      iso_collectives::Calls before = calls();
      { iso::HaloExchange halo(pattern, MPI_DOUBLE, {a.data()}); }
      EXPECT_EQ(since(before), first) << what << ": the first exchange";
      before = calls();
      { iso::HaloExchange halo(pattern, MPI_DOUBLE, {b.data()}); }
      EXPECT_EQ(since(before), warm) << what << ": the same blocks again";
      // Other block sizes: auto predicts again, once.
      before = calls();
      { iso::HaloExchange halo(pattern, MPI_DOUBLE, {a.data(), b.data()}); }
      EXPECT_EQ(since(before), first) << what << ": two fields";
      before = calls();
      { iso::HaloExchange halo(pattern, MPI_INT, {n.data()}); }
      EXPECT_EQ(since(before), first) << what << ": ints";
      before = calls();
      {
        iso::HaloExchange halo(pattern, MPI_DOUBLE, {a.data(), b.data()});
        halo.run();
      }
      EXPECT_EQ(since(before), warm) << what << ": two fields again (and a run, which agrees on nothing)";
    }
  }
}

}  // namespace
