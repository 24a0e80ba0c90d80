// OperationOptions::verify_signatures: a block size that does not pair up
// between sender and receiver (or breaks the rule of docs/design/irregular.md#the-signature-rule) is the
// same iso::Error on every rank, for every algorithm, and never a hang; the
// neighborhood stays usable afterwards.
#include "irregular_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace iso_irregular_test {
namespace {

class VerifyEnvironment : public ::testing::Environment {
public:
  void SetUp() override { setenv("ISO_COST_MODEL", "defaults", 0); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new VerifyEnvironment);

struct Outcome {
  bool threw = false;
  std::string message;
};

// Checks that `outcome` is an error on every rank with the same message that
// contains `needle`; returns a description of what went wrong ("" when fine).
std::string same_error_everywhere(const Outcome& outcome, const std::string& needle) {
  const bool all_threw = all_ranks(outcome.threw);
  const bool same = same_on_all_ranks(outcome.message);
  if (!all_threw) return "not every rank threw (this rank threw: " + std::string(outcome.threw ? "yes" : "no") + ")";
  if (!same) return "the message differs between ranks; here: " + outcome.message;
  if (outcome.message.find(needle) == std::string::npos)
    return "message does not mention \"" + needle + "\": " + outcome.message;
  return {};
}

// 3-D Moore r=1 alltoallw of 2 ints per block; `bad_rank` (if >= 0) changes
// one count.
struct MooreW {
  std::vector<int> send_counts, recv_counts;
  std::vector<MPI_Aint> displs;
  std::vector<MPI_Datatype> types;
  std::vector<int> send, recv;
  explicit MooreW(int s) : send_counts(static_cast<std::size_t>(s), 2), recv_counts(static_cast<std::size_t>(s), 2),
                           types(static_cast<std::size_t>(s), MPI_INT),
                           send(static_cast<std::size_t>(4 * s), 1), recv(static_cast<std::size_t>(4 * s), 0) {
    for (int i = 0; i < s; ++i) displs.push_back(static_cast<MPI_Aint>(i) * 4 * static_cast<MPI_Aint>(sizeof(int)));
  }
};

TEST(IrregularVerify, SizeMismatchIsTheSameErrorOnEveryRank) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, true});
  const iso::OffsetList offsets = iso::OffsetList::moore(3, 1);
  iso::Neighborhood nbh(cart.get(), offsets);
  const int s = nbh.size();
  const int rank = nbh.rank();
  std::vector<std::string> problems;
  for (iso::Algorithm algorithm : all_algorithms()) {
    for (int variant = 0; variant < 3; ++variant) {
      Watchdog guard("verify_signatures mismatch", 60);
      MooreW w(s);
      // 0: the last rank receives 3 ints in block 5; 1: rank 0 sends 1 int in
      // block 20; 2: alltoallv, the last rank receives 4 ints in block 0.
      if (variant == 0 && rank == p - 1) w.recv_counts[5] = 3;
      if (variant == 1 && rank == 0) w.send_counts[20] = 1;
      Outcome outcome;
      try {
        if (variant < 2) {
          iso::Operation op = iso::alltoallw_init(nbh, w.send.data(), w.send_counts.data(), w.displs.data(),
                                                  w.types.data(), w.recv.data(), w.recv_counts.data(), w.displs.data(),
                                                  w.types.data(), {algorithm, true});
          op.run();
        } else {
          std::vector<int> counts(static_cast<std::size_t>(s), 2), rcounts = counts, displs;
          for (int i = 0; i < s; ++i) displs.push_back(4 * i);
          if (rank == p - 1) rcounts[0] = 4;
          iso::Operation op = iso::alltoallv_init(nbh, w.send.data(), counts.data(), displs.data(), MPI_INT,
                                                  w.recv.data(), rcounts.data(), displs.data(), MPI_INT,
                                                  {algorithm, true});
          op.run();
        }
      } catch (const iso::Error& e) {
        outcome.threw = true;
        outcome.message = e.what();
      }
      const std::string needle = variant == 0 ? "block 5" : variant == 1 ? "block 20" : "block 0";
      const std::string problem = same_error_everywhere(outcome, needle);
      if (!problem.empty())
        problems.push_back(std::string(iso::to_string(algorithm)) + " variant " + std::to_string(variant) + ": " +
                           problem);
    }
  }
  // The neighborhood still works after the failed inits.
  MooreW w(s);
  for (int i = 0; i < 4 * s; ++i) w.send[static_cast<std::size_t>(i)] = 1000 * rank + i;
  iso::Operation op = iso::alltoallw_init(nbh, w.send.data(), w.send_counts.data(), w.displs.data(), w.types.data(),
                                          w.recv.data(), w.recv_counts.data(), w.displs.data(), w.types.data(),
                                          {iso::Algorithm::torus, true});
  op.run();
  bool data_ok = true;
  for (int i = 0; i < s; ++i)
    for (int k = 0; k < 2; ++k)
      data_ok = data_ok && w.recv[static_cast<std::size_t>(4 * i + k)] == 1000 * nbh.source_rank(i) + 4 * i + k;
  EXPECT_TRUE(all_ranks(data_ok)) << "exchange after the failed inits";
  EXPECT_TRUE(all_ranks(problems.empty())) << (problems.empty() ? std::string("(other rank)") : problems[0])
                                           << (problems.size() > 1 ? " (+" + std::to_string(problems.size() - 1) + " more)"
                                                                   : std::string());
}

// Sizes that pair up between sender and receiver but differ along the offset's
// own dimension break the rule (intermediate processes would describe the
// block differently); the verification reports that too.
TEST(IrregularVerify, RuleViolationWithMatchingEndpointsIsReported) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {p}, {true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1}));
  const int x = nbh.coords()[0];
  auto g = [p](int coord) { return 1 + ((coord % p) + p) % p; };
  std::vector<int> send_counts = {g(x + 1)}, recv_counts = {g(x)}, zero = {0};
  std::vector<int> send(16, 7), recv(16, 0);
  Outcome outcome;
  Watchdog guard("rule violation", 60);
  try {
    iso::Operation op = iso::alltoallv_init(nbh, send.data(), send_counts.data(), zero.data(), MPI_INT, recv.data(),
                                            recv_counts.data(), zero.data(), MPI_INT, {iso::Algorithm::torus, true});
    op.run();
  } catch (const iso::Error& e) {
    outcome.threw = true;
    outcome.message = e.what();
  }
  if (p == 1) {
    EXPECT_TRUE(all_ranks(!outcome.threw)) << outcome.message;
  } else {
    const std::string problem = same_error_everywhere(outcome, "block 0");
    EXPECT_TRUE(all_ranks(problem.empty())) << problem;
  }
}

// On a mesh, a block that no process ever sends or receives (its offset
// leaves the grid everywhere) may have any counts; the verification must not
// report it, nor the blocks without a source at the mesh edges.
TEST(IrregularVerify, MeshEdgesAreNotFalseAlarms) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {p, 1}, {false, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(2, {1, 0, -1, 0, 0, 5}));
  const int x = nbh.coords()[0];
  std::vector<int> send_counts = {2, 2, x % 3};
  std::vector<int> recv_counts = {2, 2, 11 + x};
  std::vector<int> displs = {0, 16, 32};
  std::vector<int> send(64, 3), recv(64, 0);
  Outcome outcome;
  Watchdog guard("mesh verify", 60);
  for (iso::Algorithm algorithm : all_algorithms()) {
    try {
      iso::Operation op = iso::alltoallv_init(nbh, send.data(), send_counts.data(), displs.data(), MPI_INT, recv.data(),
                                              recv_counts.data(), displs.data(), MPI_INT, {algorithm, true});
      op.run();
    } catch (const iso::Error& e) {
      outcome.threw = true;
      outcome.message = std::string(iso::to_string(algorithm)) + ": " + e.what();
    }
  }
  EXPECT_TRUE(all_ranks(!outcome.threw)) << outcome.message;
}

}  // namespace
}  // namespace iso_irregular_test
