// Persistent operations: repeated starts with changing data, several
// operations alive and in flight at once, completion by test() polling and in
// an order different from the starts, operations destroyed unstarted, moved.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>

namespace iso_collectives_test {
namespace {

constexpr std::array<iso::Algorithm, 4> algorithms = {iso::Algorithm::linear, iso::Algorithm::torus,
                                                      iso::Algorithm::direct, iso::Algorithm::basis};
constexpr std::array<iso::Collective, 2> collectives = {iso::Collective::alltoall,
                                                        iso::Collective::allgather};

iso::OffsetList offsets_2d() {
  // Repeats, a zero vector, an offset beyond small grids, mixed signs.
  return iso::OffsetList(2, {1, 0, 0, -2, 1, 1, 0, 0, 1, 0, -3, 1, 2, -1});
}

// Collective: every rank reaches the allreduce; failures are reported after it.
void expect_all_ranks(const std::string& local_failure, const std::string& what) {
  const bool ok = all_ranks(local_failure.empty());
  if (!local_failure.empty())
    ADD_FAILURE() << what << ", rank " << world_rank() << ": " << local_failure;
  if (!ok && world_rank() == 0) ADD_FAILURE() << what << " failed on some rank(s)";
}

TEST(CollectivesPersistence, FiftyStartsWithChangingData) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::Neighborhood nbh(cart.get(), offsets_2d());
  // Two layouts (strided vector, ints), each with persistent and with fresh requests.
  for (int variant = 0; variant < 4; ++variant) {
    const int kind = variant % 2 == 0 ? 6 : 0;
    const iso::Posting posting = variant < 2 ? iso::Posting::persistent : iso::Posting::fresh;
    ScopedLayouts layouts(make_layout_pair(kind, 7));
    for (iso::Collective collective : collectives)
      for (iso::Algorithm algorithm : algorithms) {
        std::string failure;
        Exchange ex(nbh, layouts.get(), collective, algorithm, posting);
        iso::Operation& op = ex.op();
        if (op.algorithm() != algorithm) failure = "algorithm() differs from the requested one";
        if (op.posting() != posting) failure = "posting() differs from the requested one";
        if (op.schedule().num_blocks != nbh.size() || op.schedule().collective != collective)
          failure = "schedule() does not describe this operation";
        if (op.active()) failure = "active() before the first start";
        Watchdog watchdog("50 starts of " + ex.name(), 60);
        for (int generation = 1; generation <= 50; ++generation) {
          ex.prepare(generation);
          switch (generation % 3) {
            case 0:
              op.start();
              op.wait();
              break;
            case 1: {
              op.start();
              long polls = 0;
              while (!op.test())
                ++polls;
              if (op.active() && failure.empty()) failure = "active() after test() returned true";
              break;
            }
            default:
              op.run();
              break;
          }
          if (op.active() && failure.empty()) failure = "active() after completion";
          const std::string diff = ex.check(generation);
          if (!diff.empty() && failure.empty()) failure = diff;
        }
        expect_all_ranks(failure, "50 starts of " + ex.name());
      }
  }
}

struct Fleet {
  // Two neighborhoods; several operations on each, also two with identical
  // schedules on one neighborhood (A and E), whose messages have the same
  // partners, sizes and round indices.
  iso::CartComm cart1{MPI_COMM_WORLD, dims_create(3), {true, false, true}};
  iso::CartComm cart2{MPI_COMM_WORLD, dims_create(2), {false, true}};
  iso::Neighborhood nbh1{cart1.get(), iso::OffsetList::moore(3, 1)};
  iso::Neighborhood nbh2{cart2.get(), iso::OffsetList(2, {2, 1, 0, -1, -1, 3, 0, 0, 2, 1})};
  ScopedLayouts ints5{make_layout_pair(0, 5)};
  ScopedLayouts vector6{make_layout_pair(5, 6)};
  ScopedLayouts doubles3{make_layout_pair(1, 3)};
  ScopedLayouts neglb4{make_layout_pair(7, 4)};
  std::vector<std::unique_ptr<Exchange>> ops;

  // Posting alternates between the operations and between neighbouring
  // ranks (a process's own choice); A and E, alike but for their tags, post
  // differently from each other.
  static iso::Posting posting(std::size_t op) {
    return (op + static_cast<std::size_t>(world_rank())) % 2 == 0 ? iso::Posting::fresh : iso::Posting::persistent;
  }

  Fleet() {
    ops.push_back(std::make_unique<Exchange>(nbh1, ints5.get(), iso::Collective::alltoall,
                                             iso::Algorithm::torus, posting(0)));
    ops.push_back(std::make_unique<Exchange>(nbh2, vector6.get(), iso::Collective::allgather,
                                             iso::Algorithm::direct, posting(1)));
    ops.push_back(std::make_unique<Exchange>(nbh1, doubles3.get(), iso::Collective::alltoall,
                                             iso::Algorithm::linear, posting(2)));
    ops.push_back(std::make_unique<Exchange>(nbh1, neglb4.get(), iso::Collective::allgather,
                                             iso::Algorithm::torus, posting(3)));
    ops.push_back(std::make_unique<Exchange>(nbh1, ints5.get(), iso::Collective::alltoall,
                                             iso::Algorithm::torus, posting(4 + 1)));
    ops.push_back(std::make_unique<Exchange>(nbh2, ints5.get(), iso::Collective::alltoall,
                                             iso::Algorithm::direct, posting(5)));
    ops.push_back(std::make_unique<Exchange>(nbh1, doubles3.get(), iso::Collective::allgather,
                                             iso::Algorithm::direct, posting(6)));
  }
  int generation(int iteration, std::size_t op) const {
    return 1 + iteration * 8 + static_cast<int>(op);
  }
  std::string check_all(int iteration) {
    std::string failure;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::string diff = ops[k]->check(generation(iteration, k));
      if (!diff.empty()) failure += "\n  op " + std::to_string(k) + ": " + diff;
    }
    return failure;
  }
};

TEST(CollectivesPersistence, SeveralAliveStartedInterleavedCompletedOutOfOrder) {
  Fleet fleet;
  const std::size_t n = fleet.ops.size();
  std::string failure;
  // The classic: start A, start B, wait B, wait A.
  {
    Watchdog watchdog("start A, start B, wait B, wait A", 60);
    fleet.ops[0]->prepare(fleet.generation(0, 0));
    fleet.ops[1]->prepare(fleet.generation(0, 1));
    fleet.ops[0]->op().start();
    fleet.ops[1]->op().start();
    fleet.ops[1]->op().wait();
    fleet.ops[0]->op().wait();
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string diff = fleet.ops[k]->check(fleet.generation(0, k));
      if (!diff.empty()) failure += "\n  start A, start B, wait B, wait A: " + diff;
    }
  }
  expect_all_ranks(failure, "start A, start B, wait B, wait A");

  // Random start orders and different completion orders (same on all ranks):
  // wait in some order, or poll test() round-robin until all are done.
  std::mt19937_64 rng(4711);
  for (int iteration = 1; iteration <= 8; ++iteration) {
    failure.clear();
    std::vector<std::size_t> start_order(n), finish_order(n);
    std::iota(start_order.begin(), start_order.end(), 0);
    std::iota(finish_order.begin(), finish_order.end(), 0);
    std::shuffle(start_order.begin(), start_order.end(), rng);
    std::shuffle(finish_order.begin(), finish_order.end(), rng);
    const bool poll = iteration % 2 == 0;
    {
      Watchdog watchdog("interleaved iteration " + std::to_string(iteration), 60);
      for (std::size_t k = 0; k < n; ++k)
        fleet.ops[k]->prepare(fleet.generation(iteration, k));
      for (std::size_t k : start_order)
        fleet.ops[k]->op().start();
      if (poll) {
        std::vector<char> done(n, 0);
        std::size_t remaining = n;
        while (remaining > 0)
          for (std::size_t k : finish_order)
            if (!done[k] && fleet.ops[k]->op().test()) {
              done[k] = 1;
              --remaining;
            }
      } else {
        for (std::size_t k : finish_order)
          fleet.ops[k]->op().wait();
      }
    }
    failure = fleet.check_all(iteration);
    expect_all_ranks(
        failure, "iteration " + std::to_string(iteration) + (poll ? " (test polling)" : " (wait)"));
  }
}

// Completion order differs between ranks, as nonblocking collectives allow
// (MPI: started in the same order everywhere, completed in any order): even
// ranks poll only one operation until it completes, then the next, in one
// order; odd ranks in another. A and E have identical schedules on one
// neighborhood, so only per-operation matching keeps their messages apart.
// That can only work if advancing one operation also advances the others
// (as MPI's progress engine does for its own nonblocking collectives). A rank
// that sees no completion for ISO_COLLECTIVES_PATIENCE seconds (default 10)
// records the failure and falls back to polling every operation, so the test
// fails instead of hanging.
TEST(CollectivesPersistence, CompletionOrderDiffersBetweenRanks) {
  Fleet fleet;
  const bool even = world_rank() % 2 == 0;
  const double patience = env_int("ISO_COLLECTIVES_PATIENCE", 10);
  const std::vector<std::vector<std::size_t>> orders = {
      {6, 5, 4, 3, 2, 1, 0},
      {0, 1, 2, 3, 4, 5, 6},  // iteration 0: even, odd
      {0, 4, 1, 2, 3, 5, 6},
      {4, 0, 6, 5, 3, 2, 1},  // iteration 1
  };
  for (int iteration = 0; iteration < 2; ++iteration) {
    std::string stuck;
    {
      Watchdog watchdog("rank-dependent completion order, iteration " + std::to_string(iteration),
                        120);
      for (std::size_t k = 0; k < fleet.ops.size(); ++k)
        fleet.ops[k]->prepare(fleet.generation(iteration, k));
      for (auto& ex : fleet.ops)
        ex->op().start();
      for (std::size_t k : orders[static_cast<std::size_t>(2 * iteration + (even ? 0 : 1))]) {
        const double deadline = MPI_Wtime() + patience;
        bool done = false;
        while (!(done = fleet.ops[k]->op().test()) && MPI_Wtime() < deadline) {
        }
        if (!done) {
          stuck = "op " + std::to_string(k) + " (" + fleet.ops[k]->name() +
                  ") made no progress in " + std::to_string(static_cast<int>(patience)) +
                  " s while this rank polled only it";
          break;
        }
      }
      if (!stuck.empty()) {
        std::vector<char> done(fleet.ops.size(), 0);
        std::size_t remaining = fleet.ops.size();
        while (remaining > 0)
          for (std::size_t k = 0; k < fleet.ops.size(); ++k)
            if (!done[k] && fleet.ops[k]->op().test()) {
              done[k] = 1;
              --remaining;
            }
      }
    }
    const std::string wrong = fleet.check_all(iteration);
    expect_all_ranks(stuck.empty() ? wrong : stuck + wrong,
                     "rank-dependent completion order, iteration " + std::to_string(iteration));
    if (!all_ranks(stuck.empty())) break;  // one stuck iteration says it all; don't wait again
  }
}

TEST(CollectivesPersistence, DestroyedWithoutStarting) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {false, true});
  iso::Neighborhood nbh(cart.get(), offsets_2d());
  ScopedLayouts layouts(make_layout_pair(0, 3));
  for (int round = 0; round < 3; ++round)
    for (iso::Collective collective : collectives)
      for (iso::Algorithm algorithm : algorithms) {
        Exchange unused(nbh, layouts.get(), collective, algorithm);
        EXPECT_FALSE(unused.op().active());
      }
  // The neighborhood's communicator is clean afterwards: a fresh operation works.
  std::string failure;
  {
    Watchdog watchdog("operation after unstarted ones", 60);
    Exchange ex(nbh, layouts.get(), iso::Collective::alltoall, iso::Algorithm::torus);
    ex.prepare(3);
    ex.op().run();
    failure = ex.check(3);
  }
  expect_all_ranks(failure, "operation after unstarted ones");
}

// Misuse is a local iso::Error (no communication involved): starting an
// active operation, using an empty one.
TEST(CollectivesPersistence, MisuseIsAnError) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  ScopedLayouts layouts(make_layout_pair(0, 2));
  std::string failure;
  {
    Watchdog watchdog("misuse", 60);
    Exchange ex(nbh, layouts.get(), iso::Collective::alltoall, iso::Algorithm::torus);
    ex.prepare(4);
    ex.op().start();
    bool threw = false;
    try {
      ex.op().start();
    } catch (const iso::Error&) {
      threw = true;
    }
    if (!threw) failure = "start() of an active operation did not throw iso::Error";
    ex.op().wait();
    if (failure.empty()) failure = ex.check(4);
  }
  expect_all_ranks(failure, "start() while active");
  iso::Operation empty;
  EXPECT_THROW(empty.start(), iso::Error);
  EXPECT_THROW(empty.test(), iso::Error);
  EXPECT_THROW(empty.wait(), iso::Error);
}

// Not promised by the header, but implemented (the destructor finishes the
// remaining rounds, since partners wait for them): an operation destroyed
// while active on every rank neither hangs nor disturbs later operations.
TEST(CollectivesPersistence, DestroyedWhileActive) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::Neighborhood nbh(cart.get(), offsets_2d());
  ScopedLayouts layouts(make_layout_pair(1, 3));
  std::string failure;
  {
    Watchdog watchdog("operation destroyed while active", 60);
    for (iso::Algorithm algorithm : algorithms) {
      auto doomed =
          std::make_unique<Exchange>(nbh, layouts.get(), iso::Collective::alltoall, algorithm);
      doomed->prepare(5);
      doomed->op().start();
      doomed->op().test();
      doomed.reset();
    }
    Exchange ex(nbh, layouts.get(), iso::Collective::allgather, iso::Algorithm::direct);
    ex.prepare(6);
    ex.op().run();
    failure = ex.check(6);
  }
  expect_all_ranks(failure, "operation after one destroyed while active");
}

TEST(CollectivesPersistence, MovedOperations) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  ScopedLayouts layouts(make_layout_pair(4, 6));
  std::string failure;
  auto note = [&failure](const std::string& diff) {
    if (!diff.empty() && failure.empty()) failure = diff;
  };
  {
    iso::Operation empty;
    EXPECT_FALSE(empty.active());
  }
  Watchdog watchdog("moved operations", 60);
  Exchange a(nbh, layouts.get(), iso::Collective::alltoall, iso::Algorithm::direct);
  Exchange b(nbh, layouts.get(), iso::Collective::allgather, iso::Algorithm::torus);

  // Move construction: the new owner runs on a's buffers.
  iso::Operation moved(std::move(a.op()));
  EXPECT_FALSE(a.op().active());  // moved-from: empty, not active
  a.prepare(5);
  moved.run();
  note(a.check(5));

  // Move assignment over a live operation frees the old one (b's) and takes a's.
  iso::Operation target = std::move(b.op());
  b.prepare(6);
  target.run();
  note(b.check(6));
  target = std::move(moved);
  a.prepare(7);
  target.run();
  note(a.check(7));

  // Moved while in flight: started, moved, waited through the new owner.
  a.prepare(8);
  target.start();
  iso::Operation in_flight(std::move(target));
  in_flight.wait();
  note(a.check(8));

  // Operations in a vector that reallocates while they are alive.
  std::vector<std::unique_ptr<Exchange>> exchanges;
  std::vector<iso::Operation> ops;
  for (iso::Collective collective : collectives)
    for (iso::Algorithm algorithm : algorithms) {
      exchanges.push_back(std::make_unique<Exchange>(nbh, layouts.get(), collective, algorithm));
      ops.push_back(std::move(exchanges.back()->op()));
    }
  for (std::size_t k = 0; k < exchanges.size(); ++k)
    exchanges[k]->prepare(10 + static_cast<int>(k));
  for (auto& op : ops)
    op.start();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it)
    it->wait();
  for (std::size_t k = 0; k < exchanges.size(); ++k)
    note(exchanges[k]->check(10 + static_cast<int>(k)));
  expect_all_ranks(failure, "moved operations");
}

}  // namespace
}  // namespace iso_collectives_test
