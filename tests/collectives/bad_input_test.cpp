// Bad input gives a clear iso::Error (the same on every rank where the API
// promises a collective report) and never a hang.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

namespace iso_collectives_test {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  return text;
}

bool mentions_any(const std::string& text, std::initializer_list<const char*> words) {
  const std::string low = lower(text);
  for (const char* word : words)
    if (low.find(word) != std::string::npos) return true;
  return false;
}

// Runs `action` on every rank, catching iso::Error. Returns the message ("" when
// nothing was thrown). Other exceptions are reported as failures.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const iso::Error& e) {
    return std::string(e.what()).empty() ? "(empty message)" : e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << world_rank() << ": threw a non-iso::Error exception: " << e.what();
    return std::string("non-iso exception: ") + e.what();
  }
  return "";
}

// Asserts (after agreeing over ranks) that every rank threw, with the same
// message, mentioning one of `words`.
void expect_same_error_everywhere(const std::string& message, const std::string& what,
                                  std::initializer_list<const char*> words) {
  const bool all_threw = all_ranks(!message.empty());
  const bool same = same_on_all_ranks(message);
  const bool clear = all_ranks(message.empty() || mentions_any(message, words));
  if (world_rank() == 0) {
    EXPECT_TRUE(all_threw) << what << ": not every rank threw iso::Error (rank 0: \"" << message
                           << "\")";
    EXPECT_TRUE(same) << what << ": the error message differs between ranks (rank 0: \"" << message
                      << "\")";
    EXPECT_TRUE(clear) << what << ": the message does not name the problem: \"" << message << "\"";
  } else if (message.empty()) {
    ADD_FAILURE() << what << ": rank " << world_rank() << " did not throw";
  }
}

TEST(CollectivesBadInput, MismatchedNeighborhoodIsTheSameErrorEverywhere) {
  if (world_size() < 2) GTEST_SKIP() << "a mismatch needs at least 2 ranks";
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, false});
  const int last = world_size() - 1;
  const iso::OffsetList good(2, {1, 0, 0, 1, -1, -1});
  struct Variant {
    const char* name;
    int odd_rank;
    iso::OffsetList odd;
  };
  const Variant variants[] = {
      {"last rank changes one offset", last, iso::OffsetList(2, {1, 0, 0, 2, -1, -1})},
      {"rank 0 has an extra offset", 0, iso::OffsetList(2, {1, 0, 0, 1, -1, -1, 0, 0})},
      {"last rank reorders offsets", last, iso::OffsetList(2, {0, 1, 1, 0, -1, -1})},
      {"rank 0 has one offset fewer", 0, iso::OffsetList(2, {1, 0, 0, 1})},
  };
  for (const Variant& v : variants) {
    std::string message;
    {
      Watchdog watchdog(std::string("mismatched neighborhood: ") + v.name, 60);
      message = error_of(
          [&] { iso::Neighborhood nbh(cart.get(), world_rank() == v.odd_rank ? v.odd : good); });
    }
    if (world_rank() == 0) std::printf("[mismatch: %s] %s\n", v.name, message.c_str());
    expect_same_error_everywhere(message, std::string("mismatched neighborhood (") + v.name + ")",
                                 {"differ", "mismatch", "same", "isomorphic"});
  }
  // Without verification nothing is exchanged: creation itself does not fail.
  // (Running an operation on it would be erroneous and is not attempted.)
  {
    iso::NeighborhoodOptions options;
    options.verify = false;
    const std::string message = error_of([&] {
      iso::Neighborhood nbh(cart.get(), world_rank() == last ? variants[0].odd : good, options);
    });
    EXPECT_TRUE(all_ranks(message.empty())) << "verify=false still failed: " << message;
  }
  // The communicator is usable afterwards.
  std::string failure;
  {
    Watchdog watchdog("operation after a mismatch", 60);
    iso::Neighborhood nbh(cart.get(), good);
    ScopedLayouts layouts(make_layout_pair(0, 2));
    Exchange ex(nbh, layouts.get(), iso::Collective::alltoall, iso::Algorithm::torus);
    ex.prepare(2);
    ex.op().run();
    failure = ex.check(2);
  }
  EXPECT_TRUE(all_ranks(failure.empty())) << failure;
}

TEST(CollectivesBadInput, WrongDimensionCount) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, false, true});
  for (const iso::OffsetList& offsets :
       {iso::OffsetList::moore(2, 1), iso::OffsetList::moore(4, 1)}) {
    for (bool verify : {true, false}) {
      iso::NeighborhoodOptions options;
      options.verify = verify;
      std::string message;
      {
        Watchdog watchdog("wrong dimension count", 60);
        message = error_of([&] { iso::Neighborhood nbh(cart.get(), offsets, options); });
      }
      if (world_rank() == 0)
        std::printf("[wrong dimension count, verify=%d] %s\n", verify ? 1 : 0, message.c_str());
      expect_same_error_everywhere(
          message,
          "offsets of dimension " + std::to_string(offsets.dims()) + " on a 3-D communicator",
          {"dimension", "coordinates"});
    }
  }
}

TEST(CollectivesBadInput, NotCartesian) {
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL}) {
    std::string message;
    {
      Watchdog watchdog("non-Cartesian communicator", 60);
      message = error_of([&] { iso::Neighborhood nbh(comm, iso::OffsetList::moore(1, 1)); });
    }
    if (world_rank() == 0) std::printf("[non-Cartesian] %s\n", message.c_str());
    expect_same_error_everywhere(message, "non-Cartesian communicator",
                                 {"cartesian", "comm_null", "topology"});
  }
  // A distributed-graph communicator is not Cartesian either.
  MPI_Comm graph = MPI_COMM_NULL;
  const int self = world_rank();
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &self, MPI_UNWEIGHTED, 1, &self, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph);
  const std::string message =
      error_of([&] { iso::Neighborhood nbh(graph, iso::OffsetList::moore(1, 1)); });
  expect_same_error_everywhere(message, "graph communicator", {"cartesian", "topology"});
  MPI_Comm_free(&graph);
}

// Bad arguments to alltoall_init/allgather_init. The API promises "the same
// iso::Error on every rank" for argument errors, so a bad argument on one rank
// only must still raise on every rank.
class BadArguments : public ::testing::Test {
protected:
  iso::CartComm cart{MPI_COMM_WORLD, dims_create(2), {true, false}};
  iso::Neighborhood nbh{cart.get(), iso::OffsetList(2, {1, 0, 0, -1, 1, 1, 0, 0})};
  std::vector<int> send = std::vector<int>(64, 1);
  std::vector<int> recv = std::vector<int>(64, 2);

  // `bad_rank` < 0: every rank passes the bad argument.
  std::string init(iso::Collective collective, iso::Algorithm algorithm, bool bad, int sendcount,
                   int recvcount, bool null_send, bool null_recv, MPI_Datatype sendtype = MPI_INT,
                   MPI_Datatype recvtype = MPI_INT) {
    iso::OperationOptions options;
    options.algorithm = algorithm;
    const void* sendbuf = bad && null_send ? nullptr : static_cast<const void*>(send.data());
    void* recvbuf = bad && null_recv ? nullptr : static_cast<void*>(recv.data());
    const int sc = bad ? sendcount : 2;
    const int rc = bad ? recvcount : 2;
    MPI_Datatype st = bad ? sendtype : MPI_INT;
    MPI_Datatype rt = bad ? recvtype : MPI_INT;
    std::string message;
    Watchdog watchdog("bad-argument init", 60);
    message = error_of([&] {
      iso::Operation op = collective == iso::Collective::alltoall
                              ? iso::alltoall_init(nbh, sendbuf, sc, st, recvbuf, rc, rt, options)
                              : iso::allgather_init(nbh, sendbuf, sc, st, recvbuf, rc, rt, options);
    });
    return message;
  }

  void check_everywhere(const std::string& what, std::initializer_list<const char*> words,
                        int sendcount, int recvcount, bool null_send, bool null_recv,
                        MPI_Datatype sendtype = MPI_INT, MPI_Datatype recvtype = MPI_INT) {
    for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather})
      for (iso::Algorithm algorithm :
           {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct}) {
        const std::string label =
            what + " (" + iso::to_string(collective) + "/" + iso::to_string(algorithm) + ")";
        const std::string message = init(collective, algorithm, true, sendcount, recvcount,
                                         null_send, null_recv, sendtype, recvtype);
        if (world_rank() == 0 && algorithm == iso::Algorithm::torus)
          std::printf("[%s] %s\n", label.c_str(), message.c_str());
        expect_same_error_everywhere(message, label + ", all ranks", words);
      }
  }

  void check_one_rank(const std::string& what, std::initializer_list<const char*> words,
                      int sendcount, int recvcount, bool null_send, bool null_recv) {
    const int bad_rank = world_size() - 1;
    for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
      const std::string label = what + " on rank " + std::to_string(bad_rank) + " only (" +
                                iso::to_string(collective) + ")";
      const std::string message = init(collective, iso::Algorithm::torus, world_rank() == bad_rank,
                                       sendcount, recvcount, null_send, null_recv);
      if (world_rank() == 0) std::printf("[%s] %s\n", label.c_str(), message.c_str());
      expect_same_error_everywhere(message, label, words);
    }
  }
};

TEST_F(BadArguments, NegativeCount) {
  check_everywhere("negative sendcount", {"negative", "count"}, -1, 2, false, false);
  check_everywhere("negative recvcount", {"negative", "count"}, 2, -3, false, false);
  check_one_rank("negative sendcount", {"negative", "count"}, -1, 2, false, false);
}

TEST_F(BadArguments, NullBuffer) {
  check_everywhere("null sendbuf", {"null"}, 2, 2, true, false);
  check_everywhere("null recvbuf", {"null"}, 2, 2, false, true);
  check_one_rank("null recvbuf", {"null"}, 2, 2, false, true);
}

TEST_F(BadArguments, NullBufferWithZeroCountIsFine) {
  // No data is needed: a null pointer with count 0 is legal, as in MPI.
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
    std::string message;
    {
      Watchdog watchdog("null buffers with count 0", 60);
      message = error_of([&] {
        iso::Operation op =
            collective == iso::Collective::alltoall
                ? iso::alltoall_init(nbh, nullptr, 0, MPI_INT, nullptr, 0, MPI_INT)
                : iso::allgather_init(nbh, nullptr, 0, MPI_INT, nullptr, 0, MPI_INT);
        op.run();
      });
    }
    EXPECT_TRUE(all_ranks(message.empty())) << iso::to_string(collective) << ": " << message;
  }
}

TEST_F(BadArguments, MismatchedBlockSizes) {
  // Send and receive blocks of different sizes can't be isomorphic.
  check_everywhere("send 2 ints, receive 3 ints", {"size", "signature", "match", "differ", "bytes"},
                   2, 3, false, false);
}

TEST_F(BadArguments, PostingOutOfRange) {
  // An enum value cast from a bad integer (a C caller, a corrupt deck) on one
  // rank only: the same error everywhere, never a silent default.
  const int bad_rank = world_size() - 1;
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
    iso::OperationOptions options;
    options.posting = world_rank() == bad_rank ? static_cast<iso::Posting>(7) : iso::Posting::fresh;
    std::string message;
    {
      Watchdog watchdog("posting out of range", 60);
      message = error_of([&] {
        iso::Operation op = collective == iso::Collective::alltoall
                                ? iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options)
                                : iso::allgather_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options);
      });
    }
    expect_same_error_everywhere(message, std::string("posting 7 on rank ") + std::to_string(bad_rank) + " (" +
                                              iso::to_string(collective) + ")",
                                 {"posting"});
  }
}

TEST_F(BadArguments, NullDatatype) {
  check_everywhere("MPI_DATATYPE_NULL", {"datatype", "type"}, 2, 2, false, false, MPI_DATATYPE_NULL,
                   MPI_INT);
}

// agree_on_errors with a fingerprint answers both questions in one
// allreduce: an argument error wins over a fingerprint mismatch, and the
// reported error is the lowest erring rank's, whichever ranks err.
TEST(CollectivesBadInput, FingerprintAgreementNamesTheLowestErringRank) {
  const int p = world_size(), rank = world_rank();
  auto agree = [&](const std::string& local, std::uint64_t print) {
    return error_of([&] { iso::agree_on_errors(MPI_COMM_WORLD, "agree", local, print, "the values"); });
  };
  EXPECT_TRUE(all_ranks(agree("", 42).empty()));
  if (p > 1) {
    const std::string message = agree("", rank == p - 1 ? 43 : 42);
    expect_same_error_everywhere(message, "fingerprint mismatch", {"differ between ranks"});
    EXPECT_NE(message.find("agree: the values differ between ranks"), std::string::npos) << message;
  }
  // Errors on every rank from 1 up (rank 0 alone at one process), with
  // differing fingerprints as well: the lowest erring rank's message.
  const int lowest = p > 1 ? 1 : 0;
  const std::string both =
      agree(rank >= lowest ? "bad " + std::to_string(rank) : std::string(), static_cast<std::uint64_t>(rank));
  const std::string want = "agree: rank " + std::to_string(lowest) + ": bad " + std::to_string(lowest);
  expect_same_error_everywhere(both, "errors on several ranks", {"bad"});
  EXPECT_EQ(both, want);
  // An error on the highest rank alone.
  const std::string last = agree(rank == p - 1 ? "last" : std::string(), 7);
  EXPECT_EQ(last, "agree: rank " + std::to_string(p - 1) + ": last");
}

// A cache hit is reused only where every rank found one and the entries'
// fingerprints are equal everywhere (kept choices, docs/design/cost-model.md):
// the same answer on every rank, and a must-match difference is still an error.
TEST(CollectivesBadInput, ACacheHitHoldsOnlyWhereEveryRankFoundTheSameEntry) {
  const int p = world_size(), rank = world_rank();
  auto all = [&](bool mine, std::uint64_t found) {
    return iso::agree_on_errors_and_all(MPI_COMM_WORLD, "agree", "", {iso::MustMatch{5, "the values"}}, mine, found);
  };
  EXPECT_TRUE(all_ranks(all(true, 9)));
  // Found everywhere, different entries on the last rank: no rank reuses.
  EXPECT_TRUE(all_ranks(!all(true, rank == p - 1 && p > 1 ? 10 : 9) || p == 1));
  // Found on rank 0 only (fingerprints of the others 0): no rank reuses.
  EXPECT_TRUE(all_ranks(!all(rank == 0, rank == 0 ? 9 : 0) || p == 1));
  // Found nowhere, equal fingerprints: nothing to reuse.
  EXPECT_TRUE(all_ranks(!all(false, 0)));
  if (p > 1) {
    const std::string message = error_of([&] {
      (void)iso::agree_on_errors_and_all(MPI_COMM_WORLD, "agree", "",
                                         {iso::MustMatch{rank == p - 1 ? 6u : 5u, "the values"}}, true, 9);
    });
    expect_same_error_everywhere(message, "must-match difference beside a cache hit", {"differ between ranks"});
  }
}

// A neighborhood where every rank is its own partner twice (offsets +-P on a
// periodic ring of P processes; at P <= 2 the +-1 partners coincide too):
// Algorithm::mpi delivers block i from source i whether or not the MPI
// library pairs repeated graph edges in order (Open MPI 4.1 does, MPICH 4.0.2
// reverses them), as it merges a partner's blocks into one message.
TEST(CollectivesRepeatedPartners, MpiAlgorithmDeliversInBlockOrder) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {p}, {true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1, -1, p, -p}));
  EXPECT_TRUE(nbh.has_repeated_partner());
  const int rank = nbh.rank();
  std::vector<int> send(4), recv(4, -1), expected(4);
  for (int k = 0; k < 4; ++k) {
    send[static_cast<std::size_t>(k)] = 100 * rank + k;
    expected[static_cast<std::size_t>(k)] = 100 * nbh.source_rank(k) + k;
  }
  if (rank == 0)
    std::printf("[ repeated ] this MPI library pairs repeated edges %s\n",
                iso::mpi_pairs_repeated_edges_in_order() ? "in order" : "out of order");
  for (iso::Algorithm algorithm : {iso::Algorithm::mpi, iso::Algorithm::automatic}) {
    std::fill(recv.begin(), recv.end(), -1);
    iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT,
                                           iso::OperationOptions{algorithm});
    for (int run = 0; run < 2; ++run) op.run();
    EXPECT_EQ(recv, expected) << iso::to_string(algorithm) << ", rank " << rank;
  }
  // allgather: the same block to every partner, so the merged message repeats it.
  std::vector<int> gathered(4, -1), expected_gathered(4);
  for (int k = 0; k < 4; ++k) expected_gathered[static_cast<std::size_t>(k)] = 100 * nbh.source_rank(k);
  iso::Operation gather = iso::allgather_init(nbh, send.data(), 1, MPI_INT, gathered.data(), 1, MPI_INT,
                                              iso::OperationOptions{iso::Algorithm::mpi});
  gather.run();
  EXPECT_EQ(gathered, expected_gathered) << "rank " << rank;
}

}  // namespace
}  // namespace iso_collectives_test
