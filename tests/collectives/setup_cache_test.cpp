// The set-up caches: a second operation with the same schedule and block
// layout reuses the first one's execution plan on its own buffers, and gives
// the same result as the straightforward definition of the collective;
// anything that changes the layout is another plan; derived datatypes are
// keyed by their layout, not their handle; neighborhoods with the same
// offsets share their schedules.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace iso_collectives_test {
namespace {

constexpr int absent = -7;  // receive slots a process without a partner leaves alone

// Element e of block i sent by `rank` in generation g.
int code(int generation, int rank, int block, int element) {
  return generation * 10'000'000 + rank * 100'000 + block * 100 + element;
}

iso::OffsetList offsets_3d() {
  // Faces, an edge, a corner, a repeat, a long offset: several rounds per dimension.
  return iso::OffsetList(3, {1, 0, 0, -1, 0, 0, 0, 1, 1, 1, -1, 1, 0, 0, -2, 1, 0, 0, 2, 1, 0});
}

// One alltoall or allgather on int buffers placed at `shift` ints into their vectors.
struct IntExchange {
  const iso::Neighborhood& nbh;
  iso::Collective collective;
  int count;
  int shift;
  std::vector<int> send, recv;
  iso::Operation op;

  IntExchange(const iso::Neighborhood& n, iso::Collective c, int count_, int shift_, const iso::OperationOptions& o)
      : nbh(n), collective(c), count(count_), shift(shift_) {
    const int blocks = collective == iso::Collective::alltoall ? nbh.size() : 1;
    send.assign(static_cast<std::size_t>(shift + blocks * count + 3), 0);
    recv.assign(static_cast<std::size_t>(shift + nbh.size() * count + 3), absent);
    int* s = send.data() + shift;
    int* r = recv.data() + shift;
    op = collective == iso::Collective::alltoall
             ? iso::alltoall_init(nbh, s, count, MPI_INT, r, count, MPI_INT, o)
             : iso::allgather_init(nbh, s, count, MPI_INT, r, count, MPI_INT, o);
  }

  // Runs generation g; returns the first wrong element, or "".
  std::string run(int generation) {
    const int rank = nbh.rank();
    const int blocks = collective == iso::Collective::alltoall ? nbh.size() : 1;
    for (int i = 0; i < blocks; ++i)
      for (int e = 0; e < count; ++e) send[static_cast<std::size_t>(shift + i * count + e)] = code(generation, rank, i, e);
    std::fill(recv.begin(), recv.end(), absent);
    op.run();
    for (int i = 0; i < nbh.size(); ++i) {
      const int source = nbh.source_rank(i);
      for (int e = 0; e < count; ++e) {
        const int block = collective == iso::Collective::alltoall ? i : 0;
        const int expected = source < 0 ? absent : code(generation, source, block, e);
        const int got = recv[static_cast<std::size_t>(shift + i * count + e)];
        if (got != expected)
          return "block " + std::to_string(i) + " element " + std::to_string(e) + ": got " + std::to_string(got) +
                 ", expected " + std::to_string(expected);
      }
    }
    for (int k = 0; k < shift; ++k)
      if (recv[static_cast<std::size_t>(k)] != absent) return "wrote before the receive buffer";
    for (std::size_t k = static_cast<std::size_t>(shift + nbh.size() * count); k < recv.size(); ++k)
      if (recv[k] != absent) return "wrote past the receive buffer";
    return {};
  }
};

void expect_everywhere(const std::string& failure, const std::string& what) {
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << what << ", rank " << world_rank() << ": " << failure;
  if (!ok && world_rank() == 0) ADD_FAILURE() << what << " failed on some rank(s)";
}

iso::OperationOptions with(iso::Algorithm algorithm, int ports = 0, iso::Posting posting = iso::Posting::automatic) {
  iso::OperationOptions options;
  options.algorithm = algorithm;
  options.ports = ports;
  options.posting = posting;
  return options;
}

TEST(CollectivesSetupCache, SecondInitOnOtherBuffersReusesThePlan) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, false, true});
  iso::Neighborhood nbh(cart.get(), offsets_3d());
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather})
    for (iso::Algorithm algorithm :
         {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct, iso::Algorithm::basis}) {
      const std::string what = std::string(iso::to_string(algorithm)) +
                               (collective == iso::Collective::alltoall ? " alltoall" : " allgather");
      // The plan is the same however its requests are posted: a persistent
      // operation's plan serves a fresh one and the other way round.
      for (const bool fresh_first : {false, true}) {
        const iso::Posting first_posting = fresh_first ? iso::Posting::fresh : iso::Posting::persistent;
        const iso::Posting second_posting = fresh_first ? iso::Posting::persistent : iso::Posting::fresh;
        iso::clear_setup_caches();
        const iso::SetupCacheCounts before = iso::setup_cache_counts();
        std::string failure;
        // 3 ints per block: small messages, through packed images where blocks are scattered.
        auto first = std::make_unique<IntExchange>(nbh, collective, 3, 0, with(algorithm, 0, first_posting));
        const iso::SetupCacheCounts middle = iso::setup_cache_counts();
        IntExchange second(nbh, collective, 3, 5, with(algorithm, 0, second_posting));
        const iso::SetupCacheCounts after = iso::setup_cache_counts();
        if (middle.plan_misses != before.plan_misses + 1 || middle.plan_hits != before.plan_hits)
          failure = "the first operation did not build a plan";
        else if (after.plan_hits != middle.plan_hits + 1)
          failure = "the second operation did not reuse the first one's plan";
        else if (first->op.posting() != first_posting || second.op.posting() != second_posting)
          failure = "posting() differs from the requested one";
        // Alternating generations: each runs on its own buffers.
        for (int generation = 1; generation <= 4 && failure.empty(); ++generation) {
          failure = first->run(2 * generation);
          if (failure.empty()) failure = second.run(2 * generation + 1);
        }
        // The cache dropped and the first operation gone: the second keeps its plan.
        iso::clear_setup_caches();
        first.reset();
        if (failure.empty()) failure = second.run(11);
        if (failure.empty() && iso::setup_cache_counts().plans != 0) failure = "clear_setup_caches left plans";
        expect_everywhere(failure, what + (fresh_first ? ", fresh then persistent" : ", persistent then fresh"));
      }
    }
}

// Posting::automatic posts afresh while no message exceeds
// iso::fresh_posting_limit bytes, and persistent requests above; either way
// the result is the collective's. Torus on a 1-D ring with offsets +1 and
// -1: each round carries one block, so a block of the limit is the largest
// message. On one process every round is a local copy: nothing to post, and
// the (empty) fresh path is taken.
TEST(CollectivesSetupCache, AutomaticPostingFollowsTheLargestMessage) {
  iso::CartComm cart(MPI_COMM_WORLD, {world_size()}, {true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1, -1}));
  const int at_limit = static_cast<int>(iso::fresh_posting_limit / static_cast<long>(sizeof(int)));
  std::string failure;
  int generation = 0;
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather})
    for (const int count : {1, at_limit / 2, at_limit / 2 + 1, at_limit, at_limit + 1}) {
      IntExchange ex(nbh, collective, count, 1, with(iso::Algorithm::torus));
      // On 2 processes both rounds go to the other one, as one message of
      // both blocks (docs/design/schedules.md#one-message-per-partner).
      const int largest = world_size() == 2 ? 2 * count : count;
      const iso::Posting expected =
          largest <= at_limit || world_size() == 1 ? iso::Posting::fresh : iso::Posting::persistent;
      if (failure.empty() && ex.op.posting() != expected)
        failure = std::to_string(count) + " ints per block: posted " + iso::to_string(ex.op.posting()) + ", expected " +
                  iso::to_string(expected);
      if (failure.empty()) failure = ex.run(++generation);
    }
  expect_everywhere(failure, "automatic posting");
}

TEST(CollectivesSetupCache, AnotherLayoutPortLimitOrCollectiveIsAnotherPlan) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  iso::clear_setup_caches();
  std::string failure;
  IntExchange base(nbh, iso::Collective::alltoall, 2, 0, with(iso::Algorithm::torus));
  const long misses = iso::setup_cache_counts().plan_misses;
  IntExchange counted(nbh, iso::Collective::alltoall, 3, 0, with(iso::Algorithm::torus));
  IntExchange ported(nbh, iso::Collective::alltoall, 2, 0, with(iso::Algorithm::torus, 1));
  IntExchange gathered(nbh, iso::Collective::allgather, 2, 0, with(iso::Algorithm::torus));
  IntExchange direct(nbh, iso::Collective::alltoall, 2, 0, with(iso::Algorithm::direct));
  const iso::SetupCacheCounts now = iso::setup_cache_counts();
  if (now.plan_misses != misses + 4) failure = std::to_string(now.plan_misses - misses) + " new plans for 4 other keys";
  if (now.plans != 5 && failure.empty()) failure = std::to_string(now.plans) + " plans held, expected 5";
  int generation = 0;
  for (IntExchange* ex : {&base, &counted, &ported, &gathered, &direct})
    if (failure.empty()) failure = ex->run(++generation);
  expect_everywhere(failure, "five keys");
}

TEST(CollectivesSetupCache, AlltoallwWithinOneArrayReusesThePlan) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(2, {1, 0, -1, 0, 0, 1, 1, 1, -1, -1, 0, -1}));
  const int s = nbh.size();
  // Send block i: i + 1 doubles; receive blocks after the send blocks, in
  // reverse order; one array holds both, as a field's halo exchange does.
  iso::clear_setup_caches();
  std::string failure;
  auto exchange = [&](std::vector<double>& field, int generation) -> std::string {
    std::vector<int> counts(static_cast<std::size_t>(s));
    std::vector<MPI_Aint> sdispls(static_cast<std::size_t>(s)), rdispls(static_cast<std::size_t>(s));
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(s), MPI_DOUBLE);
    long at = 0;
    for (int i = 0; i < s; ++i) counts[i] = 2, sdispls[i] = static_cast<MPI_Aint>(at * sizeof(double)), at += 2;
    for (int i = s - 1; i >= 0; --i) rdispls[i] = static_cast<MPI_Aint>(at * sizeof(double)), at += 2;
    field.assign(static_cast<std::size_t>(at), -1.0);
    for (int i = 0; i < s; ++i)
      for (int e = 0; e < 2; ++e)
        field[static_cast<std::size_t>(sdispls[i] / 8 + e)] = code(generation, nbh.rank(), i, e);
    iso::Operation op = iso::alltoallw_init(nbh, field.data(), counts.data(), sdispls.data(), types.data(),
                                            field.data(), counts.data(), rdispls.data(), types.data(),
                                            with(iso::Algorithm::torus));
    op.run();
    for (int i = 0; i < s; ++i)
      for (int e = 0; e < 2; ++e) {
        const int source = nbh.source_rank(i);
        const double expected = source < 0 ? -1.0 : code(generation, source, i, e);
        if (field[static_cast<std::size_t>(rdispls[i] / 8 + e)] != expected)
          return "block " + std::to_string(i) + " element " + std::to_string(e) + " wrong";
      }
    return {};
  };
  std::vector<double> one, two;
  failure = exchange(one, 1);
  const iso::SetupCacheCounts middle = iso::setup_cache_counts();
  if (failure.empty()) failure = exchange(two, 2);
  if (failure.empty() && iso::setup_cache_counts().plan_hits != middle.plan_hits + 1)
    failure = "the second alltoallw did not reuse the plan";
  expect_everywhere(failure, "alltoallw in one array");
}

TEST(CollectivesSetupCache, DerivedDatatypesAreKeyedByLayoutNotHandle) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  const int s = nbh.size();
  constexpr int span = 6;  // ints per block (the types' extent)
  iso::clear_setup_caches();
  std::string failure;
  // Three ints of six at {0,2,5}, then at {0,3,5} (the same size, extents,
  // run count and signature, other places), then {0,2,5} again. Each type is
  // freed before the next is made, so MPI may hand out the same handle for
  // another layout.
  const std::vector<std::vector<int>> places = {{0, 2, 5}, {0, 3, 5}, {0, 2, 5}};
  const bool reused[] = {false, false, true};
  for (std::size_t round = 0; round < places.size() && failure.empty(); ++round) {
    const std::vector<int>& at = places[round];
    MPI_Datatype picked = MPI_DATATYPE_NULL, sized = MPI_DATATYPE_NULL;
    MPI_Type_create_indexed_block(3, 1, at.data(), MPI_INT, &picked);
    MPI_Type_create_resized(picked, 0, static_cast<MPI_Aint>(span * sizeof(int)), &sized);
    MPI_Type_commit(&sized);
    MPI_Type_free(&picked);
    std::vector<int> send(static_cast<std::size_t>(s * span), 0), recv(send.size(), absent);
    for (int i = 0; i < s; ++i)
      for (int e = 0; e < 3; ++e)
        send[static_cast<std::size_t>(i * span + at[e])] = code(static_cast<int>(round), nbh.rank(), i, e);
    const iso::SetupCacheCounts before = iso::setup_cache_counts();
    {
      iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, sized, recv.data(), 1, sized,
                                             with(iso::Algorithm::torus));
      op.run();
    }
    const iso::SetupCacheCounts after = iso::setup_cache_counts();
    MPI_Type_free(&sized);
    if ((after.plan_hits == before.plan_hits + 1) != reused[round])
      failure = "layout " + std::to_string(round) +
                (reused[round] ? ": the same layout under a new handle was not reused" : ": another layout reused a plan");
    for (int i = 0; i < s && failure.empty(); ++i)
      for (int k = 0; k < span; ++k) {
        const auto e = std::find(at.begin(), at.end(), k) - at.begin();
        const int expected = e < 3 ? code(static_cast<int>(round), nbh.source_rank(i), i, static_cast<int>(e)) : absent;
        if (recv[static_cast<std::size_t>(i * span + k)] != expected)
          failure = "layout " + std::to_string(round) + ", block " + std::to_string(i) + ", int " +
                    std::to_string(k) + ": got " + std::to_string(recv[static_cast<std::size_t>(i * span + k)]) +
                    ", expected " + std::to_string(expected);
      }
  }
  expect_everywhere(failure, "derived datatypes");
}

// Subarrays of a predefined type are keyed by their constructor's arguments
// (as a grid's halo exchange makes them): the same arguments under a new
// handle reuse the plan, other starts or sizes (C or Fortran order) do not,
// and every round delivers what the straightforward definition says.
TEST(CollectivesSetupCache, SubarraysAreKeyedByTheirArguments) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  const int s = nbh.size();
  const int sizes[2] = {4, 6};
  constexpr int span = 24;  // ints per block: the whole 4 x 6 array
  struct Box {
    int subsizes[2], starts[2], order;
  };
  const std::vector<Box> boxes = {{{2, 3}, {1, 2}, MPI_ORDER_C},       {{2, 3}, {1, 1}, MPI_ORDER_C},
                                  {{3, 2}, {1, 2}, MPI_ORDER_C},       {{2, 3}, {1, 2}, MPI_ORDER_FORTRAN},
                                  {{2, 3}, {1, 2}, MPI_ORDER_C}};
  const bool reused[] = {false, false, false, false, true};
  iso::clear_setup_caches();
  std::string failure;
  for (std::size_t round = 0; round < boxes.size() && failure.empty(); ++round) {
    const Box& box = boxes[round];
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Type_create_subarray(2, sizes, box.subsizes, box.starts, box.order, MPI_INT, &type);
    MPI_Type_commit(&type);
    // The ints the box covers, in type-map order, worked out here.
    std::vector<int> covered;
    for (int a = 0; a < box.subsizes[0]; ++a)
      for (int b = 0; b < box.subsizes[1]; ++b)
        covered.push_back(box.order == MPI_ORDER_C ? (box.starts[0] + a) * sizes[1] + box.starts[1] + b
                                                   : (box.starts[0] + a) + (box.starts[1] + b) * sizes[0]);
    if (box.order != MPI_ORDER_C) std::sort(covered.begin(), covered.end());
    std::vector<int> send(static_cast<std::size_t>(s * span), 0), recv(send.size(), absent);
    for (int i = 0; i < s; ++i)
      for (std::size_t e = 0; e < covered.size(); ++e)
        send[static_cast<std::size_t>(i * span + covered[e])] = code(static_cast<int>(round), nbh.rank(), i, static_cast<int>(e));
    const iso::SetupCacheCounts before = iso::setup_cache_counts();
    {
      iso::Operation op = iso::alltoall_init(nbh, send.data(), 1, type, recv.data(), 1, type,
                                             with(iso::Algorithm::torus));
      op.run();
    }
    const iso::SetupCacheCounts after = iso::setup_cache_counts();
    MPI_Type_free(&type);
    if ((after.plan_hits == before.plan_hits + 1) != reused[round])
      failure = "box " + std::to_string(round) +
                (reused[round] ? ": the same arguments under a new handle were not reused" : ": other arguments reused a plan");
    for (int i = 0; i < s && failure.empty(); ++i)
      for (int k = 0; k < span; ++k) {
        const auto e = std::find(covered.begin(), covered.end(), k) - covered.begin();
        const int expected = e < static_cast<long>(covered.size())
                                 ? code(static_cast<int>(round), nbh.source_rank(i), i, static_cast<int>(e))
                                 : absent;
        if (recv[static_cast<std::size_t>(i * span + k)] != expected)
          failure = "box " + std::to_string(round) + ", block " + std::to_string(i) + ", int " + std::to_string(k) +
                    ": got " + std::to_string(recv[static_cast<std::size_t>(i * span + k)]) + ", expected " +
                    std::to_string(expected);
      }
  }
  expect_everywhere(failure, "subarrays");
}

TEST(CollectivesSetupCache, NeighborhoodsWithTheSameOffsetsShareSchedules) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, false});
  iso::clear_setup_caches();
  std::string failure;
  iso::Neighborhood a(cart.get(), offsets_3d());
  const iso::SetupCacheCounts before = iso::setup_cache_counts();
  const iso::Schedule& first = a.schedule(iso::Algorithm::torus, iso::Collective::alltoall);
  iso::Neighborhood b(cart.get(), offsets_3d());
  const iso::Schedule& second = b.schedule(iso::Algorithm::torus, iso::Collective::alltoall);
  const iso::SetupCacheCounts after = iso::setup_cache_counts();
  if (&first != &second) failure = "two neighborhoods with the same offsets built two schedules";
  if (after.schedule_misses != before.schedule_misses + 1 || after.schedule_hits != before.schedule_hits + 1)
    failure = "expected one schedule built and one reused";
  // Other offsets, another grid: other schedules, and the right ones.
  iso::CartComm other(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  iso::Neighborhood c(other.get(), offsets_3d());
  iso::Neighborhood d(cart.get(), iso::OffsetList::moore(3, 1));
  if (&c.schedule(iso::Algorithm::torus, iso::Collective::alltoall) == &first ||
      &d.schedule(iso::Algorithm::torus, iso::Collective::alltoall) == &first)
    failure = "a schedule was shared across grids or offsets";
  IntExchange on_c(c, iso::Collective::alltoall, 1, 0, with(iso::Algorithm::torus));
  if (failure.empty()) failure = on_c.run(3);
  expect_everywhere(failure, "shared schedules");
}

}  // namespace
}  // namespace iso_collectives_test
