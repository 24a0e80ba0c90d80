// Plans with typed messages (several blocks in one message above the
// small-message limit: derived datatypes, not packed images) are kept by the
// set-up cache and reused on other buffers. A reused plan must give what a
// fresh build gives: the collective's definition, checked element by element
// against the sender's rank, block and generation. The first operation's
// buffers are checked too, so that a reused plan that still pointed at them
// (message datatypes not rebuilt for the new buffers) fails here.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace iso_collectives_test {
namespace {

constexpr int absent = -7;

int code(int generation, int rank, int block, int element) {
  return generation * 10'000'000 + rank * 100'000 + block * 100 + element % 100;
}

// Blocks of `count` elements of a type that covers `used` ints of every
// `span` (places `at`); span == 1: plain MPI_INT.
struct Layout {
  int count = 0;
  int span = 1;
  std::vector<int> at = {0};
};

// An alltoall or allgather of Layout blocks, its buffers placed `shift` ints
// into their vectors, on a datatype it makes (and frees) itself.
struct Exchange {
  const iso::Neighborhood& nbh;
  iso::Collective collective;
  Layout layout;
  int shift;
  MPI_Datatype type = MPI_INT;
  iso::OperationOptions options;
  std::vector<int> send, recv;
  iso::Operation op;

  Exchange(const iso::Neighborhood& n, iso::Collective c, Layout l, int shift_, iso::Algorithm algorithm)
      : nbh(n), collective(c), layout(std::move(l)), shift(shift_) {
    if (layout.span > 1) {
      MPI_Datatype picked = MPI_DATATYPE_NULL;
      MPI_Type_create_indexed_block(static_cast<int>(layout.at.size()), 1, layout.at.data(), MPI_INT, &picked);
      MPI_Type_create_resized(picked, 0, static_cast<MPI_Aint>(layout.span * sizeof(int)), &type);
      MPI_Type_commit(&type);
      MPI_Type_free(&picked);
    }
    const std::size_t block = static_cast<std::size_t>(layout.count * layout.span);
    send.assign(static_cast<std::size_t>(shift) + static_cast<std::size_t>(blocks()) * block + 3, 0);
    recv.assign(static_cast<std::size_t>(shift) + static_cast<std::size_t>(nbh.size()) * block + 3, absent);
    options.algorithm = algorithm;
    init();
  }
  void init() {
    int* s = send.data() + shift;
    int* r = recv.data() + shift;
    op = collective == iso::Collective::alltoall
             ? iso::alltoall_init(nbh, s, layout.count, type, r, layout.count, type, options)
             : iso::allgather_init(nbh, s, layout.count, type, r, layout.count, type, options);
  }
  // The operation made again on the same buffers, the old one gone first.
  void reinit() {
    op = iso::Operation();
    init();
  }
  ~Exchange() {
    if (type != MPI_INT) MPI_Type_free(&type);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  int blocks() const { return collective == iso::Collective::alltoall ? nbh.size() : 1; }
  // Element e (of count * at.size()) of block i sits at this int of the block.
  std::size_t place(int e) const {
    const int per = static_cast<int>(layout.at.size());
    return static_cast<std::size_t>((e / per) * layout.span + layout.at[static_cast<std::size_t>(e % per)]);
  }
  int elements() const { return layout.count * static_cast<int>(layout.at.size()); }
  std::size_t block_ints() const { return static_cast<std::size_t>(layout.count * layout.span); }

  void fill(int generation) {
    for (int i = 0; i < blocks(); ++i)
      for (int e = 0; e < elements(); ++e)
        send[static_cast<std::size_t>(shift) + static_cast<std::size_t>(i) * block_ints() + place(e)] =
            code(generation, nbh.rank(), i, e);
    std::fill(recv.begin(), recv.end(), absent);
  }

  // The first wrong int of the receive vector after generation g, or "".
  std::string check(int generation) const {
    std::vector<int> expected(recv.size(), absent);
    for (int i = 0; i < nbh.size(); ++i) {
      const int source = nbh.source_rank(i);
      if (source < 0) continue;
      const int block = collective == iso::Collective::alltoall ? i : 0;
      for (int e = 0; e < elements(); ++e)
        expected[static_cast<std::size_t>(shift) + static_cast<std::size_t>(i) * block_ints() + place(e)] =
            code(generation, source, block, e);
    }
    for (std::size_t k = 0; k < recv.size(); ++k)
      if (recv[k] != expected[k])
        return "int " + std::to_string(k) + " of the receive vector: got " + std::to_string(recv[k]) + ", expected " +
               std::to_string(expected[k]);
    return {};
  }
};

void expect_everywhere(const std::string& failure, const std::string& what) {
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << what << ", rank " << world_rank() << ": " << failure;
  if (!ok && world_rank() == 0) ADD_FAILURE() << what << " failed on some rank(s)";
}

// Runs `a` and `b` in alternating generations, each filled and checked
// alone and then both at once (b running while a's results stand): a plan
// that moved b's data through a's buffers shows in either check.
std::string alternate(Exchange& a, Exchange& b, int first_generation) {
  int generation = first_generation;
  for (int k = 0; k < 3; ++k) {
    a.fill(generation);
    a.op.run();
    std::string failure = a.check(generation);
    if (!failure.empty()) return "first operation: " + failure;
    b.fill(generation + 1);
    b.op.run();
    failure = b.check(generation + 1);
    if (failure.empty()) failure = a.check(generation);
    if (!failure.empty()) return "second operation (generation " + std::to_string(generation + 1) + "): " + failure;
    generation += 2;
  }
  return {};
}

// 600 ints (2400 B) per block: a message of two or more blocks is over the
// small-message limit and goes through datatypes. Moore r = 2 in 2-D with
// torus or basis combines up to five blocks per message, from the send
// buffer and the staging slots (messages over several regions) alike.
TEST(CollectivesRelocatedPlan, TypedMessagesOnOtherBuffersMatchAFreshBuild) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 2));
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather})
    for (iso::Algorithm algorithm : {iso::Algorithm::torus, iso::Algorithm::basis, iso::Algorithm::direct}) {
      const std::string what = std::string(iso::to_string(algorithm)) +
                               (collective == iso::Collective::alltoall ? " alltoall" : " allgather");
      iso::clear_setup_caches();
      const Layout plain{600, 1, {0}};
      auto first = std::make_unique<Exchange>(nbh, collective, plain, 0, algorithm);
      const iso::SetupCacheCounts middle = iso::setup_cache_counts();
      Exchange second(nbh, collective, plain, 13, algorithm);
      const iso::SetupCacheCounts after = iso::setup_cache_counts();
      std::string failure;
      if (after.plan_hits != middle.plan_hits + 1) failure = "the second operation did not reuse the plan";
      if (failure.empty()) failure = alternate(*first, second, 1);
      // Made again on the same buffers: it takes the scratch of the one before
      // and so finds the message structs made for those bases; then another
      // operation on other buffers needs its own.
      if (failure.empty()) {
        second.reinit();
        second.fill(30);
        second.op.run();
        failure = second.check(30);
      }
      if (failure.empty()) {
        Exchange fourth(nbh, collective, plain, 21, algorithm);
        failure = alternate(second, fourth, 32);
        if (failure.empty()) failure = alternate(*first, fourth, 36);
      }
      // The first operation and the cache gone: the plan lives on with the second.
      first.reset();
      iso::clear_setup_caches();
      if (failure.empty()) {
        second.fill(40);
        second.op.run();
        failure = second.check(40);
      }
      // Another block size is another plan, and right too.
      const long misses = iso::setup_cache_counts().plan_misses;
      Exchange third(nbh, collective, Layout{601, 1, {0}}, 3, algorithm);
      if (failure.empty() && iso::setup_cache_counts().plan_misses != misses + 1)
        failure = "601 ints per block reused the plan of 600";
      if (failure.empty()) failure = alternate(second, third, 50);
      expect_everywhere(failure, what);
    }
}

// Derived block types: the plan's message datatypes are built from the first
// operation's type; a second type of the same layout under another handle
// reuses the plan, and keeps working after both user types are freed.
// 300 elements of 3 ints in 6 (3600 B per block, 1800 byte runs).
TEST(CollectivesRelocatedPlan, SameLayoutUnderAnotherHandleAndFreedTypes) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 1));
  for (iso::Algorithm algorithm : {iso::Algorithm::torus, iso::Algorithm::basis}) {
    const std::string what = std::string(iso::to_string(algorithm)) + " with derived types";
    iso::clear_setup_caches();
    const Layout strided{300, 6, {0, 2, 5}};
    auto first = std::make_unique<Exchange>(nbh, iso::Collective::alltoall, strided, 1, algorithm);
    const iso::SetupCacheCounts middle = iso::setup_cache_counts();
    auto second = std::make_unique<Exchange>(nbh, iso::Collective::alltoall, strided, 8, algorithm);
    std::string failure;
    if (second->type == first->type) failure = "the test needs two handles";
    if (failure.empty() && iso::setup_cache_counts().plan_hits != middle.plan_hits + 1)
      failure = "the same layout under another handle did not reuse the plan";
    if (failure.empty()) failure = alternate(*first, *second, 1);
    // Another layout of the same size and extent is another plan.
    const long misses = iso::setup_cache_counts().plan_misses;
    Exchange other(nbh, iso::Collective::alltoall, Layout{300, 6, {0, 3, 5}}, 2, algorithm);
    if (failure.empty() && iso::setup_cache_counts().plan_misses != misses + 1)
      failure = "another layout reused the plan";
    if (failure.empty()) failure = alternate(*second, other, 20);
    // The user's types freed (the operations keep running): the plan's
    // message datatypes do not depend on them.
    MPI_Type_free(&first->type);
    MPI_Type_free(&second->type);
    first->type = second->type = MPI_INT;  // freed: ~Exchange leaves them
    if (failure.empty()) failure = alternate(*first, *second, 30);
    first.reset();
    iso::clear_setup_caches();
    if (failure.empty()) {
      second->fill(40);
      second->op.run();
      failure = second->check(40);
    }
    expect_everywhere(failure, what);
  }
}

}  // namespace
}  // namespace iso_collectives_test
