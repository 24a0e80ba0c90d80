// The harness works: MPI and Kokkos are up under the shared main, collectives
// reach every rank, and a rank-count requirement skips on all ranks alike.
#include "isostencil_test.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <vector>

namespace {

TEST(Harness, MpiIsInitialized) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  EXPECT_TRUE(initialized);
  EXPECT_FALSE(finalized);
  EXPECT_GE(iso_test::world_size(), 1);
  EXPECT_LT(iso_test::world_rank(), iso_test::world_size());
}

// The checks live in free functions, their TESTs call them: CUDA allows no
// device lambda in gtest's private TestBody().
void kokkos_is_initialized() {
  EXPECT_TRUE(Kokkos::is_initialized());
  long sum = 0;
  Kokkos::parallel_reduce(
      "harness_sum", Kokkos::RangePolicy<>(0, 1000),
      KOKKOS_LAMBDA(int i, long& partial) { partial += i; }, sum);
  EXPECT_EQ(sum, 999L * 1000L / 2);
}
TEST(Harness, KokkosIsInitialized) { kokkos_is_initialized(); }

TEST(Harness, AllreduceReachesEveryRank) {
  const int size = iso_test::world_size();
  const int rank = iso_test::world_rank();
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, size * (size - 1) / 2);
  EXPECT_TRUE(iso_test::all_ranks(true));
  EXPECT_FALSE(iso_test::all_ranks(rank != size - 1));
}

TEST(Harness, RingExchange) {
  const int size = iso_test::world_size();
  const int rank = iso_test::world_rank();
  // Large enough to take the rendezvous path of shared-memory transports.
  std::vector<double> out(1 << 18, rank);
  std::vector<double> in(out.size(), -1.0);
  MPI_Sendrecv(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, (rank + 1) % size, 0,
               in.data(), static_cast<int>(in.size()), MPI_DOUBLE, (rank + size - 1) % size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_EQ(in.front(), (rank + size - 1) % size);
  EXPECT_EQ(in.back(), (rank + size - 1) % size);
}

TEST(Harness, SkipsBelowRequiredRanks) {
  ISO_TEST_REQUIRE_RANKS(2);
  EXPECT_GE(iso_test::world_size(), 2);
}

// Run only by the harness.remote_failure tests, which expect it to fail.
TEST(Harness, DISABLED_FailsOnLastRank) {
  EXPECT_NE(iso_test::world_rank(), iso_test::world_size() - 1) << "deliberate failure";
}

}  // namespace
