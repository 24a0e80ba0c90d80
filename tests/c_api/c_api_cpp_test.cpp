// The Iso_* C API called from C++: a 3-D halo exchange with subarray
// datatypes through Iso_neighbor_alltoallw_init on a mixed periodic/mesh
// grid, every algorithm selected by info key, compared with the C++ API's
// result; error classes and messages; the error message is per thread.
#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/iso.h"

#include <isostencil_test.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

class CApiEnvironment : public ::testing::Environment {
public:
  void SetUp() override { setenv("ISO_COST_MODEL", "defaults", 0); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new CApiEnvironment);

struct Halo {
  // Interior n x n x n, one ghost layer; block i of offset v: send the
  // interior layer next to direction v, receive the ghost layer opposite.
  static constexpr int n = 3, N = n + 2;
  std::vector<int> offsets;  // flattened
  std::vector<MPI_Datatype> send_types, recv_types;
  std::vector<int> counts;
  std::vector<MPI_Aint> displs;
  Halo() {
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c) {
          if (a == 0 && b == 0 && c == 0) continue;
          const int v[3] = {a, b, c};
          int sizes[3] = {N, N, N}, sub[3], send_start[3], recv_start[3];
          for (int j = 0; j < 3; ++j) {
            offsets.push_back(v[j]);
            sub[j] = v[j] == 0 ? n : 1;
            send_start[j] = v[j] > 0 ? n : 1;
            recv_start[j] = v[j] > 0 ? 0 : (v[j] < 0 ? n + 1 : 1);
          }
          MPI_Datatype s = MPI_DATATYPE_NULL, r = MPI_DATATYPE_NULL;
          MPI_Type_create_subarray(3, sizes, sub, send_start, MPI_ORDER_C, MPI_INT, &s);
          MPI_Type_create_subarray(3, sizes, sub, recv_start, MPI_ORDER_C, MPI_INT, &r);
          MPI_Type_commit(&s);
          MPI_Type_commit(&r);
          send_types.push_back(s);
          recv_types.push_back(r);
          counts.push_back(1);
          displs.push_back(0);
        }
  }
  ~Halo() {
    for (MPI_Datatype& t : send_types) MPI_Type_free(&t);
    for (MPI_Datatype& t : recv_types) MPI_Type_free(&t);
  }
  int size() const { return static_cast<int>(counts.size()); }
};

void fill(std::vector<int>& array, int rank) {
  for (std::size_t k = 0; k < array.size(); ++k) array[k] = rank * 100000 + static_cast<int>(k);
}

TEST(CApiFromCpp, HaloExchangeMatchesTheCppApi) {
  const int p = iso_test::world_size();
  int dims[3] = {0, 0, 0}, periods[3] = {1, 0, 1};
  MPI_Dims_create(p, 3, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  Halo halo;
  const std::size_t cells = static_cast<std::size_t>(Halo::N * Halo::N * Halo::N);

  // Reference: the C++ API, linear algorithm, separate arrays.
  iso::Neighborhood nbh(cart, iso::OffsetList(3, halo.offsets));
  std::vector<int> reference(cells);
  fill(reference, rank);
  {
    std::vector<int> send = reference;
    iso::Operation op = iso::alltoallw_init(nbh, send.data(), halo.counts.data(), halo.displs.data(),
                                            halo.send_types.data(), reference.data(), halo.counts.data(),
                                            halo.displs.data(), halo.recv_types.data(), {iso::Algorithm::linear});
    op.run();
  }

  for (const char* algorithm : {"linear", "torus", "direct", "basis", "mpi", "auto", "tune", "hop", "torus-direct", "additive", "autotune"}) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", algorithm);
    MPI_Comm isocomm = MPI_COMM_NULL;
    ASSERT_EQ(Iso_neighborhood_create_info(cart, halo.size(), halo.offsets.data(), info, &isocomm), MPI_SUCCESS)
        << Iso_Error_message();
    MPI_Info_free(&info);
    // One array for sending (interior) and receiving (ghosts), as a halo
    // exchange does it.
    std::vector<int> array(cells);
    Iso_Request request = ISO_REQUEST_NULL;
    ASSERT_EQ(Iso_neighbor_alltoallw_init(array.data(), halo.counts.data(), halo.displs.data(),
                                          halo.send_types.data(), array.data(), halo.counts.data(),
                                          halo.displs.data(), halo.recv_types.data(), isocomm, &request),
              MPI_SUCCESS)
        << algorithm << ": " << Iso_Error_message();
    bool same = true;
    for (int repeat = 0; repeat < 3; ++repeat) {
      fill(array, rank);
      ASSERT_EQ(Iso_Start(&request), MPI_SUCCESS);
      int flag = 0;
      while (!flag) ASSERT_EQ(Iso_Test(&request, &flag), MPI_SUCCESS) << Iso_Error_message();
      same = same && array == reference;
    }
    EXPECT_TRUE(iso_test::all_ranks(same)) << algorithm << ": differs from the C++ API's result";
    EXPECT_EQ(Iso_Request_free(&request), MPI_SUCCESS);
    EXPECT_EQ(request, ISO_REQUEST_NULL);
    EXPECT_EQ(Iso_neighborhood_free(&isocomm), MPI_SUCCESS);
    EXPECT_EQ(isocomm, MPI_COMM_NULL);
  }
  MPI_Comm_free(&cart);
}

TEST(CApiFromCpp, ErrorClassesAndMessages) {
  const int p = iso_test::world_size();
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[1] = {p}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  const int offsets[2] = {1, -1};
  MPI_Comm isocomm = MPI_COMM_NULL;
  ASSERT_EQ(Iso_neighborhood_create(cart, 2, offsets, &isocomm), MPI_SUCCESS);
  int send[2] = {1, 2}, recv[2] = {0, 0};
  Iso_Request request = ISO_REQUEST_NULL;

  EXPECT_EQ(Iso_neighbor_alltoall_init(send, 1, MPI_INT, recv, -5, MPI_INT, isocomm, &request), MPI_ERR_ARG);
  const std::string message = Iso_Error_message();
  EXPECT_NE(message.find("recvcount"), std::string::npos) << message;
  EXPECT_TRUE(iso_test::all_ranks(true));
  // The message is the calling thread's: another thread sees none.
  std::string other_thread = "unset";
  std::thread([&] { other_thread = Iso_Error_message(); }).join();
  EXPECT_EQ(other_thread, "");
  EXPECT_EQ(Iso_neighbor_allgather_init(send, 1, MPI_DATATYPE_NULL, recv, 1, MPI_INT, isocomm, &request), MPI_ERR_ARG);
  EXPECT_EQ(Iso_neighbor_alltoall_init(send, 1, MPI_INT, recv, 1, MPI_INT, cart, &request), MPI_ERR_COMM);
  EXPECT_EQ(request, ISO_REQUEST_NULL);
  EXPECT_EQ(Iso_Wait(&request), MPI_ERR_REQUEST);

  // A signature mismatch in the regular collective is an argument error.
  EXPECT_EQ(Iso_neighbor_alltoall_init(send, 2, MPI_INT, recv, 1, MPI_INT, isocomm, &request), MPI_ERR_ARG);
  EXPECT_EQ(Iso_neighborhood_free(&isocomm), MPI_SUCCESS);
  MPI_Comm_free(&cart);
}

// A bad argument on one rank only gives every rank the error: no rank is left
// waiting (a hang here ends in the test's timeout, a failure).
TEST(CApiFromCpp, BadArgumentOnOneRankOnly) {
  const int p = iso_test::world_size();
  const int rank = iso_test::world_rank();
  const bool odd_one = rank == p - 1;
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[1] = {p}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  const int offsets[2] = {1, -1};
  const auto fails_everywhere = [&](int code, const char* expected) {
    const std::string message = Iso_Error_message();
    EXPECT_NE(code, MPI_SUCCESS);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_TRUE(iso_test::all_ranks(code != MPI_SUCCESS));
  };

  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "iso_algorithm", odd_one ? "bogus" : "linear");
  MPI_Comm isocomm = MPI_COMM_NULL;
  fails_everywhere(Iso_neighborhood_create_info(cart, 2, offsets, info, &isocomm), "iso_algorithm");
  EXPECT_EQ(isocomm, MPI_COMM_NULL);
  if (p > 1) {
    // Valid everywhere, but not the same: the schedules would not match.
    MPI_Info_set(info, "iso_algorithm", odd_one ? "torus" : "linear");
    fails_everywhere(Iso_neighborhood_create_info(cart, 2, offsets, info, &isocomm), "differ between ranks");
  }
  MPI_Info_free(&info);
  fails_everywhere(Iso_neighborhood_create(cart, 2, offsets, odd_one ? nullptr : &isocomm), "isocomm is null");
  EXPECT_EQ(isocomm, MPI_COMM_NULL);

  ASSERT_EQ(Iso_neighborhood_create(cart, 2, offsets, &isocomm), MPI_SUCCESS);
  int send[2] = {1, 2}, recv[2] = {0, 0};
  Iso_Request request = ISO_REQUEST_NULL;
  fails_everywhere(Iso_neighbor_alltoall_init(send, 1, MPI_INT, recv, 1, MPI_INT, isocomm, odd_one ? nullptr : &request),
                   "request is null");
  EXPECT_EQ(request, ISO_REQUEST_NULL);
  fails_everywhere(Iso_neighbor_allgather_init(send, 1, MPI_INT, recv, odd_one ? -1 : 1, MPI_INT, isocomm, &request),
                   "recvcount");
  EXPECT_EQ(request, ISO_REQUEST_NULL);
  // Still usable afterwards.
  ASSERT_EQ(Iso_neighbor_alltoall_init(send, 1, MPI_INT, recv, 1, MPI_INT, isocomm, &request), MPI_SUCCESS);
  ASSERT_EQ(Iso_Start(&request), MPI_SUCCESS);
  ASSERT_EQ(Iso_Wait(&request), MPI_SUCCESS);
  EXPECT_EQ(Iso_Request_free(&request), MPI_SUCCESS);
  EXPECT_EQ(Iso_neighborhood_free(&isocomm), MPI_SUCCESS);

  // The C++ API: options that differ on one rank.
  if (p > 1) {
    const iso::Neighborhood nbh(cart, iso::OffsetList(1, {1, -1}));
    iso::OperationOptions options;
    options.algorithm = odd_one ? iso::Algorithm::direct : iso::Algorithm::torus;
    std::string what;
    try {
      iso::alltoall_init(nbh, send, 1, MPI_INT, recv, 1, MPI_INT, options);
    } catch (const iso::Error& error) {
      what = error.what();
    }
    EXPECT_NE(what.find("differ between ranks"), std::string::npos) << what;
    EXPECT_TRUE(iso_test::all_ranks(!what.empty()));
  }
  MPI_Comm_free(&cart);
}

}  // namespace
