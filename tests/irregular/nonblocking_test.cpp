// Non-blocking start: start() returns at once, test() advances the rounds as
// far as arrived messages allow, and repeated test() calls alone (no wait())
// complete the operation, with computation between the calls.
//
// The "late starter" test is deterministic, not timing-based: rank 0 starts
// only after every other rank has called start() and one test() (they tell it
// with a message on MPI_COMM_WORLD, which the library never uses), then sleeps
// 50 ms more. A rank that receives a block directly from rank 0 therefore
// cannot have completed at its first test(), whatever the scheduling.
#include "irregular_support.hpp"
#include "layouts.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

namespace iso_irregular_test {
namespace {

class NonBlockingEnvironment : public ::testing::Environment {
public:
  void SetUp() override { setenv("ISO_COST_MODEL", "defaults", 0); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new NonBlockingEnvironment);

volatile double sink = 0;
// A little "computation" between test() calls.
void compute(int amount) {
  double x = sink;
  for (int k = 0; k < amount; ++k) x = x * 0.999 + 1.0;
  sink = x;
}

struct Config {
  std::string name;
  std::vector<int> dims;
  std::vector<bool> periodic;
  iso::OffsetList offsets;
  iso::Algorithm algorithm;
};

std::vector<Config> configs() {
  const int p = world_size();
  return {
      {"3-D Moore r=1 torus", dims_create(p, 3), {true, true, true}, iso::OffsetList::moore(3, 1), iso::Algorithm::torus},
      {"3-D Moore r=1 direct", dims_create(p, 3), {true, false, true}, iso::OffsetList::moore(3, 1),
       iso::Algorithm::direct},
      {"2-D Moore r=2 torus (8 rounds)", dims_create(p, 2), {true, true}, iso::OffsetList::moore(2, 2),
       iso::Algorithm::torus},
      {"1-D ring +1,+2,+3 torus", {p}, {true}, iso::OffsetList(1, {1, 2, 3}), iso::Algorithm::torus},
      {"2-D Moore r=1 linear", dims_create(p, 2), {true, false}, iso::OffsetList::moore(2, 1), iso::Algorithm::linear},
      {"3-D Moore r=1 mpi", dims_create(p, 3), {true, true, true}, iso::OffsetList::moore(3, 1), iso::Algorithm::mpi},
      {"3-D Moore r=1 auto", dims_create(p, 3), {true, true, true}, iso::OffsetList::moore(3, 1),
       iso::Algorithm::automatic},
  };
}

// alltoallw of figure-3-sized blocks of mixed datatypes; returns the layout.
struct WExchange {
  ProcessLayout layout;
  TypePool pool;
  CallArgs args;
  Buffer send, recv;
  iso::Operation op;
  WExchange(const iso::Neighborhood& nbh, const Case& c, iso::Algorithm algorithm)
      : layout(c.layout(nbh.coords(), nbh.rank())),
        args(call_args(layout, pool)),
        send(layout.send.bytes),
        recv(layout.recv.bytes) {
    op = init_operation(Api::alltoallw, nbh, args, send, recv, {algorithm, false});
  }
};

Case case_of(const Config& setup) {
  Case c;
  c.name = setup.name;
  c.dims = setup.dims;
  c.periodic = setup.periodic;
  const int d = setup.offsets.dims();
  for (int i = 0; i < setup.offsets.size(); ++i) c.offsets.emplace_back(setup.offsets[i], setup.offsets[i] + d);
  c.layout = w_layout(setup.offsets.size(), figure3(c.offsets, 2), 99);
  return c;
}

TEST(NonBlockingStart, LateStarterOnlyTestCalls) {
  const int p = world_size();
  const int rank = world_rank();
  for (const Config& setup : configs()) {
    Watchdog guard("late starter: " + setup.name, 60);
    const Case c = case_of(setup);
    iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
    iso::Neighborhood nbh(cart.get(), c.offset_list());
    WExchange x(nbh, c, setup.algorithm);
    const std::vector<int> sources = independent_sources(cart.get(), c.offsets);
    bool consistent = true;
    const Buffer expected = expected_receive(cart.get(), c, x.layout, sources, 5, consistent);
    x.send.fill_values(5, rank);
    x.recv.fill_sentinel();
    bool depends_on_rank0 = false;
    for (int source : sources) depends_on_rank0 = depends_on_rank0 || (source == 0 && rank != 0);

    MPI_Barrier(MPI_COMM_WORLD);
    long calls = 0, false_calls = 0;
    bool first_false = false, second_start_threw = false, done = false;
    if (rank != 0) {
      const auto begin = std::chrono::steady_clock::now();
      x.op.start();
      const double start_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      EXPECT_LT(start_seconds, 5.0) << "start() should return at once";
      done = x.op.test();
      ++calls;
      first_false = !done;
      if (!done) {
        ++false_calls;
        try {
          x.op.start();  // active: must be refused, locally
        } catch (const iso::Error&) {
          second_start_threw = true;
        }
      }
      int token = 1;
      MPI_Send(&token, 1, MPI_INT, 0, 4242, MPI_COMM_WORLD);
    } else {
      for (int r = 1; r < p; ++r) {
        int token = 0;
        MPI_Recv(&token, 1, MPI_INT, r, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      x.op.start();
    }
    while (!done) {
      compute(2000 + 500 * rank);
      done = x.op.test();
      ++calls;
      if (!done) ++false_calls;
    }
    EXPECT_FALSE(x.op.active());
    EXPECT_TRUE(x.op.test()) << "test() after completion";
    if (env_int("ISO_IRREGULAR_VERBOSE", 0))
      std::printf("[rank %d] %s: %ld test() calls, %ld returned false; depends on rank 0: %d\n", rank,
                  setup.name.c_str(), calls, false_calls, depends_on_rank0 ? 1 : 0);
    const std::string diff = consistent ? x.recv.first_difference(expected) : "test bug: inconsistent layout";
    const bool ok = diff.empty() && (!depends_on_rank0 || (first_false && second_start_threw && calls > 1));
    if (!ok)
      ADD_FAILURE() << setup.name << ", rank " << rank << ": result " << (diff.empty() ? "ok" : diff)
                    << "; depends on rank 0: " << depends_on_rank0 << ", first test() false: " << first_false
                    << ", second start() refused: " << second_start_threw << ", test() calls: " << calls
                    << " (false: " << false_calls << ")";
    EXPECT_TRUE(all_ranks(ok)) << setup.name;
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// test() advances every round it can, not just the first: on a ring of p >= 8
// processes with offsets {+1, +2, +3} (torus: three rounds of +1 hops), rank 4
// neither talks to rank 0 nor depends on it, also when messages go by
// rendezvous (ranks p-1, p-2, p-3 can be stuck behind rank 0; ranks 4..p-4
// are not). Rank 0 starts only after rank 4 has completed through test()
// calls alone, so rank 4's three rounds provably progressed without wait()
// while a process of the neighborhood had not even started. (For p < 8 the
// test still checks the data.)
TEST(NonBlockingStart, RoundsProgressThroughTestWhileRankZeroIsIdle) {
  const int p = world_size();
  const int rank = world_rank();
  Watchdog guard("ring progress without rank 0", 60);
  Config setup{"1-D ring +1,+2,+3 torus", {p}, {true}, iso::OffsetList(1, {1, 2, 3}), iso::Algorithm::torus};
  const Case c = case_of(setup);
  iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
  iso::Neighborhood nbh(cart.get(), c.offset_list());
  WExchange x(nbh, c, setup.algorithm);
  const std::vector<int> sources = independent_sources(cart.get(), c.offsets);
  bool consistent = true;
  const Buffer expected = expected_receive(cart.get(), c, x.layout, sources, 3, consistent);
  x.send.fill_values(3, rank);
  x.recv.fill_sentinel();
  const bool reporter = p >= 8 && rank == 4;
  MPI_Barrier(MPI_COMM_WORLD);
  long calls = 0;
  if (rank == 0) {
    if (p >= 8) {
      int token = 0;
      MPI_Recv(&token, 1, MPI_INT, 4, 4343, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  x.op.start();
  while (!x.op.test()) {
    compute(3000);
    ++calls;
  }
  if (reporter) {
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, 0, 4343, MPI_COMM_WORLD);
  }
  const std::string diff = consistent ? x.recv.first_difference(expected) : "test bug: inconsistent layout";
  EXPECT_TRUE(all_ranks(diff.empty())) << "rank " << rank << ": " << diff;
}

// Several generations driven by test() only, ranks skewed by different amounts
// of computation and no barrier between generations.
TEST(NonBlockingStart, RepeatedGenerationsWithTestOnly) {
  const int rank = world_rank();
  for (const Config& setup : configs()) {
    Watchdog guard("generations: " + setup.name, 60);
    const Case c = case_of(setup);
    iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
    iso::Neighborhood nbh(cart.get(), c.offset_list());
    WExchange x(nbh, c, setup.algorithm);
    const std::vector<int> sources = independent_sources(cart.get(), c.offsets);
    std::string failure;
    long calls = 0;
    for (int g = 1; g <= 6; ++g) {
      bool consistent = true;
      const Buffer expected = expected_receive(cart.get(), c, x.layout, sources, g, consistent);
      x.send.fill_values(g, rank);
      x.recv.fill_sentinel();
      if ((g + rank) % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      x.op.start();
      while (!x.op.test()) {
        compute(1000 * (1 + (rank + g) % 4));
        ++calls;
      }
      const std::string diff = x.recv.first_difference(expected);
      if (failure.empty() && !diff.empty()) failure = "generation " + std::to_string(g) + ": " + diff;
    }
    EXPECT_TRUE(all_ranks(failure.empty())) << setup.name << ": " << failure;
  }
}

// test() on an operation never started is complete; wait() after test()
// returned true is a no-op; test() on an empty operation is an iso::Error.
TEST(NonBlockingStart, TestOnInactiveOperations) {
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {p}, {true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1, -1}));
  std::vector<int> send = {1, 2}, recv = {0, 0};
  iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, {});
  EXPECT_TRUE(op.test());
  op.start();
  while (!op.test()) {
  }
  op.wait();
  EXPECT_FALSE(op.active());
  iso::Operation empty;
  EXPECT_THROW(empty.test(), iso::Error);
  EXPECT_THROW(empty.start(), iso::Error);
}

}  // namespace
}  // namespace iso_irregular_test
