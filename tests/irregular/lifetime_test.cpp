// What the caller may release after init, as with MPI's persistent requests
// (MPI_Send_init, MPI-4 MPI_Neighbor_alltoallw_init): the count, displacement
// and datatype arrays, and the derived datatypes themselves (MPI_Type_free
// marks a type for deallocation; communication set up with it is unaffected).
// Only the buffers must stay. A separate executable: a failure here may be a
// crash, which must not hide the other irregular tests.
#include "irregular_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace iso_irregular_test {
namespace {

class LifetimeEnvironment : public ::testing::Environment {
public:
  void SetUp() override { setenv("ISO_COST_MODEL", "defaults", 0); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new LifetimeEnvironment);

// Creates a few unrelated datatypes so that freed handles get reused.
void churn_types() {
  MPI_Datatype junk[6];
  for (int k = 0; k < 6; ++k) {
    MPI_Type_vector(3 + k, 2, 5, MPI_DOUBLE, &junk[k]);
    MPI_Type_commit(&junk[k]);
  }
  for (MPI_Datatype& t : junk) MPI_Type_free(&t);
}

struct Result {
  bool ok = true;
  std::string what;
};

// 2-D Moore r=1 (periodic x mesh): block i is 5 ints, described as
// vector(5,1,2) on the send side and contiguous(5) on the receive side, types
// created here and freed right after init.
Result run(iso::Algorithm algorithm, bool alltoallv) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(p, 2), {true, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  const int s = nbh.size();
  const int rank = nbh.rank();
  std::vector<int> send(static_cast<std::size_t>(s) * 10), recv(static_cast<std::size_t>(s) * 5);
  iso::Operation op;
  {
    MPI_Datatype vec = MPI_DATATYPE_NULL, contig = MPI_DATATYPE_NULL;
    MPI_Type_vector(5, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(5, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    auto counts = std::make_unique<std::vector<int>>(static_cast<std::size_t>(s), 1);
    if (alltoallv) {
      // vector(5,1,2) has extent 9 ints: resize to 10 so blocks are 1 extent apart.
      MPI_Datatype vec10 = MPI_DATATYPE_NULL;
      MPI_Type_create_resized(vec, 0, 40, &vec10);
      MPI_Type_commit(&vec10);
      auto displs = std::make_unique<std::vector<int>>();
      for (int i = 0; i < s; ++i) displs->push_back(i);
      op = iso::alltoallv_init(nbh, send.data(), counts->data(), displs->data(), vec10, recv.data(), counts->data(),
                               displs->data(), contig, {algorithm, false});
      MPI_Type_free(&vec10);
    } else {
      auto sdispls = std::make_unique<std::vector<MPI_Aint>>(), rdispls = std::make_unique<std::vector<MPI_Aint>>();
      for (int i = 0; i < s; ++i) {
        sdispls->push_back(40 * static_cast<MPI_Aint>(i));
        rdispls->push_back(20 * static_cast<MPI_Aint>(i));
      }
      auto stypes = std::make_unique<std::vector<MPI_Datatype>>(static_cast<std::size_t>(s), vec);
      auto rtypes = std::make_unique<std::vector<MPI_Datatype>>(static_cast<std::size_t>(s), contig);
      op = iso::alltoallw_init(nbh, send.data(), counts->data(), sdispls->data(), stypes->data(), recv.data(),
                               counts->data(), rdispls->data(), rtypes->data(), {algorithm, false});
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&contig);
  }  // arrays released here
  churn_types();
  Result result;
  for (int gen = 1; gen <= 2; ++gen) {
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = gen * 1000000 + rank * 1000 + static_cast<int>(k);
    std::fill(recv.begin(), recv.end(), -1);
    op.run();
    for (int i = 0; i < s; ++i) {
      const int source = nbh.source_rank(i);
      for (int k = 0; k < 5; ++k) {
        const int want = source < 0 ? -1 : gen * 1000000 + source * 1000 + 10 * i + 2 * k;
        if (recv[static_cast<std::size_t>(5 * i + k)] != want && result.ok) {
          result.ok = false;
          result.what = std::string(iso::to_string(algorithm)) + (alltoallv ? " alltoallv" : " alltoallw") +
                        ": block " + std::to_string(i) + " element " + std::to_string(k) + " is " +
                        std::to_string(recv[static_cast<std::size_t>(5 * i + k)]) + ", expected " + std::to_string(want);
        }
      }
    }
  }
  return result;
}

class TypesFreedAfterInit : public ::testing::TestWithParam<iso::Algorithm> {};

TEST_P(TypesFreedAfterInit, Alltoallw) {
  Watchdog guard("types freed after init (alltoallw)", 60);
  const Result r = run(GetParam(), false);
  EXPECT_TRUE(all_ranks(r.ok)) << r.what;
}

TEST_P(TypesFreedAfterInit, Alltoallv) {
  Watchdog guard("types freed after init (alltoallv)", 60);
  const Result r = run(GetParam(), true);
  EXPECT_TRUE(all_ranks(r.ok)) << r.what;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, TypesFreedAfterInit,
                         ::testing::Values(iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
                                           iso::Algorithm::automatic, iso::Algorithm::mpi),
                         [](const ::testing::TestParamInfo<iso::Algorithm>& param_info) {
                           return std::string(iso::to_string(param_info.param));
                         });

// An operation destroyed while active (on some ranks only) finishes its
// rounds, so the ranks that wait() get their data and nobody hangs.
TEST(IrregularLifetime, DestroyedWhileActiveOnSomeRanks) {
  Watchdog guard("destroyed while active", 60);
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(p, 2), {true, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 2));
  const int s = nbh.size();
  const int rank = nbh.rank();
  std::string failure;
  for (iso::Algorithm algorithm : {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
                                   iso::Algorithm::mpi}) {
    std::vector<int> send(static_cast<std::size_t>(3 * s), rank), recv(static_cast<std::size_t>(3 * s), -1);
    std::vector<int> counts(static_cast<std::size_t>(s), 3), displs;
    for (int i = 0; i < s; ++i) displs.push_back(3 * i);
    {
      iso::Operation op = iso::alltoallv_init(nbh, send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                                              counts.data(), displs.data(), MPI_INT, {algorithm, false});
      op.start();
      if (rank % 2 == 1) op.wait();
    }
    for (int i = 0; i < s; ++i) {
      const int source = nbh.source_rank(i);
      if (recv[static_cast<std::size_t>(3 * i)] != (source < 0 ? -1 : source) && failure.empty())
        failure = std::string(iso::to_string(algorithm)) + ": block " + std::to_string(i) + " wrong";
    }
  }
  EXPECT_TRUE(all_ranks(failure.empty())) << failure;
}

// Disabled because it hangs (20 s watchdog) with the current library.
// On a non-periodic grid a block whose source does not exist stays untouched,
// like an MPI_PROC_NULL neighbour, so a caller naturally passes receive count
// 0 for it. With the torus algorithm such a process is still an intermediate
// hop for that block, staged in T2 shaped by *its* receive description: the
// 0-count staging slot drops the block and the final receiver waits forever.
// linear, direct and mpi deliver the data; torus hangs without
// verify_signatures (with it: an error naming the rule). Run with
// --gtest_also_run_disabled_tests at >= 3 ranks to reproduce.
TEST(IrregularMesh, DISABLED_SourcelessBlocksWithZeroReceiveCount) {
  const int p = world_size();
  Watchdog guard("zero receive count for blocks without a source", 20);
  iso::CartComm cart(MPI_COMM_WORLD, {p}, {false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {2}));
  const int x = nbh.coords()[0];
  std::string failure;
  for (iso::Algorithm algorithm : {iso::Algorithm::linear, iso::Algorithm::direct, iso::Algorithm::mpi,
                                   iso::Algorithm::torus}) {
    std::vector<int> send(4, 100 + x), recv(4, -1);
    int scount = x + 2 < p ? 3 : 0;
    int rcount = x >= 2 ? 3 : 0;  // no source: nothing arrives, count 0
    int zero = 0;
    iso::Operation op = iso::alltoallv_init(nbh, send.data(), &scount, &zero, MPI_INT, recv.data(), &rcount, &zero,
                                            MPI_INT, {algorithm, false});
    op.run();
    for (int k = 0; k < 4; ++k) {
      const int want = (x >= 2 && k < 3) ? 100 + x - 2 : -1;
      if (recv[static_cast<std::size_t>(k)] != want && failure.empty())
        failure = std::string(iso::to_string(algorithm)) + ": element " + std::to_string(k) + " wrong";
    }
  }
  EXPECT_TRUE(all_ranks(failure.empty())) << failure;
}

}  // namespace
}  // namespace iso_irregular_test
