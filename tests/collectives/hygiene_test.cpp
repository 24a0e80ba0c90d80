// MPI handle hygiene: operations run many times leave no request pending and
// create none per start; destroying neighborhoods and operations frees every
// request, datatype and communicator they made; start/test/wait allocate
// nothing (docs/design/layers.md#plan-once-run-many).
#include "allocation_counter.hpp"
#include "collectives_support.hpp"
#include "mpi_handle_counters.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>

namespace iso_collectives_test {
namespace {

std::string show(const HandleCounts& c) {
  std::ostringstream out;
  out << "requests " << c.requests << ", active requests " << c.active_requests << ", datatypes "
      << c.datatypes << ", communicators " << c.communicators;
  return out.str();
}

TEST(CollectivesHygiene, NoHandleLeaksNoPendingRequestsNoAllocationInStartWait) {
  const HandleCounts before = handle_counts();
  std::string failure;
  auto note = [&failure](const std::string& text) {
    if (failure.empty()) failure = text;
  };
  long library_calls = 0;
  {
    Watchdog watchdog("hygiene runs", 120);
    iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, false, true});
    iso::Neighborhood nbh(cart.get(),
                          iso::OffsetList(3, {1, 1, 0, -2, 0, 1, 0, 0, 0, 1, 1, 0, 0, -1, 3}));
    ScopedLayouts layouts(
        make_layout_pair(7, 6));  // negative lower bound: temporaries need true extents
    const HandleCounts after_setup = handle_counts();
    std::vector<std::unique_ptr<Exchange>> exchanges;
    for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather})
      for (iso::Algorithm algorithm :
           {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct})
        for (iso::Posting posting : {iso::Posting::persistent, iso::Posting::fresh})
          exchanges.push_back(std::make_unique<Exchange>(nbh, layouts.get(), collective, algorithm, posting));
    const HandleCounts after_init = handle_counts();
    library_calls = after_init.calls - after_setup.calls;
    if (world_rank() == 0)
      std::printf("[hygiene] rank 0 after creating 12 operations: %s (before: %s)\n",
                  show(after_init).c_str(), show(after_setup).c_str());
    for (auto& ex : exchanges) {
      // Warm up (first runs may set up MPI-internal state), then count.
      ex->prepare(1);
      ex->op().run();
      note(ex->check(1));
      const HandleCounts warm = handle_counts();
      long allocated = 0;
      for (int generation = 2; generation < 60; ++generation) {
        ex->prepare(generation);
        const long allocations_before = allocations();
        if (generation % 2 == 0) {
          ex->op().run();
        } else {
          ex->op().start();
          while (!ex->op().test()) {
          }
        }
        allocated += allocations() - allocations_before;
        if (generation % 20 == 0) note(ex->check(generation));
        const HandleCounts now = handle_counts();
        if (now.active_requests != warm.active_requests || now.requests != warm.requests)
          note(ex->name() + ": after run " + std::to_string(generation) + ": " + show(now) +
               " (after the first run: " + show(warm) + ")");
      }
      if (allocated != 0)
        note(ex->name() + ": start/test/wait allocated " + std::to_string(allocated) +
             " times in 58 runs");
      const HandleCounts after_runs = handle_counts();
      if (after_runs.datatypes != warm.datatypes || after_runs.communicators != warm.communicators)
        note(ex->name() + ": handles grew while running: " + show(after_runs) + " vs " +
             show(warm));
    }
    exchanges.clear();
    const HandleCounts after_ops = handle_counts();
    if (after_ops.requests != after_setup.requests ||
        after_ops.datatypes != after_setup.datatypes ||
        after_ops.communicators != after_setup.communicators ||
        after_ops.active_requests != after_setup.active_requests)
      note("destroying the operations left " + show(after_ops) +
           "; before init: " + show(after_setup));
  }
  const HandleCounts after = handle_counts();
  if (after.requests != before.requests || after.datatypes != before.datatypes ||
      after.communicators != before.communicators ||
      after.active_requests != before.active_requests)
    note("destroying the neighborhood and communicators left " + show(after) +
         "; before: " + show(before));
  // The wrappers only see what goes through the MPI_ symbols; if the library
  // made no wrapped call at all during init, the counts say nothing.
  const bool counted = all_ranks(library_calls > 0);
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  if (world_rank() == 0) {
    EXPECT_TRUE(ok) << "MPI handle hygiene failed on some rank(s)";
    if (!counted)
      std::printf("[hygiene] note: no wrapped MPI call seen during init on some rank\n");
  }
}

}  // namespace
}  // namespace iso_collectives_test
