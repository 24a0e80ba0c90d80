// Isomorphic collectives under stress: thousands of start/complete cycles of
// several persistent operations at once (alltoall, allgather, alltoallw; the
// linear, torus and direct algorithms; a torus and a mesh), completed in a
// different order on different ranks (wait in order, wait in reverse, poll
// test()), while the same parent communicator carries user point-to-point
// traffic received with MPI_ANY_SOURCE / MPI_ANY_TAG. Every received block is
// checked each cycle against a value computed here from Cartesian coordinates
// (not from the library), and every user message must arrive exactly once,
// intact.
//
// ISO_STRESS_CYCLES overrides the number of cycles (default 3000).
#include "isostencil_test.hpp"

#include "iso/collectives.hpp"
#include "iso/neighborhood.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr int sentinel = -7;

// The value of element k of the block a source sends for block `block` in
// `cycle` of operation `op`: distinct per (op, cycle, source, block, k).
int value(int op, int cycle, int source, int block, int k) {
  return ((op * 7919 + cycle) * 131 + source) * 64 + block * 4 + k + 1;
}

/// Independent source of block i: the process at coords - v_i, or -1 beyond
/// a non-periodic edge.
std::vector<int> sources(MPI_Comm cart, const iso::OffsetList& offsets) {
  int dims_count = 0, rank = 0;
  MPI_Cartdim_get(cart, &dims_count);
  MPI_Comm_rank(cart, &rank);
  std::vector<int> dims(static_cast<std::size_t>(dims_count)), periods(dims.size()),
      coords(dims.size());
  MPI_Cart_get(cart, dims_count, dims.data(), periods.data(), coords.data());
  std::vector<int> result;
  for (int i = 0; i < offsets.size(); ++i) {
    std::vector<int> at(coords);
    bool inside = true;
    for (int j = 0; j < dims_count; ++j) {
      int c = coords[static_cast<std::size_t>(j)] - offsets[i][j];
      const int n = dims[static_cast<std::size_t>(j)];
      if (periods[static_cast<std::size_t>(j)]) {
        c = ((c % n) + n) % n;
      } else if (c < 0 || c >= n) {
        inside = false;
      }
      at[static_cast<std::size_t>(j)] = c;
    }
    int source = -1;
    if (inside) MPI_Cart_rank(cart, at.data(), &source);
    result.push_back(source);
  }
  return result;
}

struct Block {
  int op;
  bool gather;  // allgather: one block for all targets, so no block index in the value
  int count;
  std::vector<int> send, recv;
  std::vector<int> from;  // source of each receive block
};

TEST(CollectivesStress, ManyCyclesWithUserTrafficOnTheParentCommunicator) {
  const int size = iso_test::world_size();
  int cycles = 3000;
  if (const char* text = std::getenv("ISO_STRESS_CYCLES")) cycles = std::atoi(text);
  std::vector<int> dims(2, 0);
  MPI_Dims_create(size, 2, dims.data());
  iso::CartComm torus(MPI_COMM_WORLD, dims, {true, true});
  iso::CartComm mesh(MPI_COMM_WORLD, dims, {true, false});
  const MPI_Comm parent = torus.get();
  int rank = 0;
  MPI_Comm_rank(parent, &rank);

  iso::Neighborhood moore(parent, iso::OffsetList::moore(2, 1));
  iso::Neighborhood star(mesh.get(), iso::OffsetList::parse("1,0;-1,0;0,1;0,-1;0,2;2,-1"));
  const int s1 = moore.size(), s2 = star.size();

  // Op 0: alltoall (torus), op 1: allgather (linear), op 2: alltoall (direct),
  // op 3: alltoallw on the mesh (direct), sending each block as a strided
  // vector and receiving it contiguous.
  std::vector<Block> blocks(4);
  const std::vector<int> torus_sources = sources(parent, moore.offsets());
  const std::vector<int> mesh_sources = sources(mesh.get(), star.offsets());
  blocks[0] = {0, false, 3, std::vector<int>(3 * s1), std::vector<int>(3 * s1), torus_sources};
  blocks[1] = {1, true, 2, std::vector<int>(2), std::vector<int>(2 * s1), torus_sources};
  blocks[2] = {2, false, 1, std::vector<int>(s1), std::vector<int>(s1), torus_sources};
  blocks[3] = {3, false, 2, std::vector<int>(4 * s2), std::vector<int>(2 * s2), mesh_sources};

  std::vector<iso::Operation> ops;
  ops.push_back(iso::alltoall_init(moore, blocks[0].send.data(), 3, MPI_INT, blocks[0].recv.data(),
                                   3, MPI_INT, {iso::Algorithm::torus}));
  ops.push_back(iso::allgather_init(moore, blocks[1].send.data(), 2, MPI_INT,
                                    blocks[1].recv.data(), 2, MPI_INT, {iso::Algorithm::linear}));
  ops.push_back(iso::alltoall_init(moore, blocks[2].send.data(), 1, MPI_INT, blocks[2].recv.data(),
                                   1, MPI_INT, {iso::Algorithm::direct}));
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  std::vector<int> ones(static_cast<std::size_t>(s2), 1), twos(static_cast<std::size_t>(s2), 2);
  std::vector<MPI_Aint> sdispls(static_cast<std::size_t>(s2)), rdispls(sdispls.size());
  std::vector<MPI_Datatype> stypes(sdispls.size(), strided), rtypes(sdispls.size(), MPI_INT);
  for (int i = 0; i < s2; ++i) {
    sdispls[static_cast<std::size_t>(i)] = static_cast<MPI_Aint>(4 * i * sizeof(int));
    rdispls[static_cast<std::size_t>(i)] = static_cast<MPI_Aint>(2 * i * sizeof(int));
  }
  ops.push_back(iso::alltoallw_init(star, blocks[3].send.data(), ones.data(), sdispls.data(),
                                    stypes.data(), blocks[3].recv.data(), twos.data(),
                                    rdispls.data(), rtypes.data(), {iso::Algorithm::direct}));

  // User traffic: `tags` messages to each ring neighbor per cycle, tags
  // 0.. (the tags the rounds of the operations use, were they on `parent`).
  constexpr int tags = 4, width = 4;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const int expected_per_cycle = 2 * tags;
  std::vector<int> outbox(static_cast<std::size_t>(expected_per_cycle * width));
  std::vector<int> inbox(outbox.size());
  std::vector<MPI_Request> user(static_cast<std::size_t>(2 * expected_per_cycle));
  std::vector<MPI_Status> statuses(user.size());
  std::set<std::tuple<int, int, int>> received;  // (source, cycle, tag/direction)
  long user_received = 0;

  std::string failure;
  const auto fail = [&](const std::string& text) {
    if (failure.empty()) failure = "rank " + std::to_string(rank) + ": " + text;
  };
  long polls = 0;

  for (int cycle = 0; cycle < cycles && failure.empty(); ++cycle) {
    for (Block& b : blocks) {
      for (std::size_t e = 0; e < b.send.size(); ++e) {
        const int per = b.op == 3 ? 4 : b.count;  // op 3: 2 ints at stride 2 per block
        const int block = b.gather ? 0 : static_cast<int>(e) / per;
        const int k = b.op == 3 ? static_cast<int>(e % 4) / 2 : static_cast<int>(e) % per;
        b.send[e] = (b.op == 3 && e % 2 == 1) ? -1 : value(b.op, cycle, rank, block, k);
      }
      std::fill(b.recv.begin(), b.recv.end(), sentinel);
    }
    // Wildcard receives first: they would catch the operations' messages if
    // those travelled on `parent` itself.
    for (int m = 0; m < expected_per_cycle; ++m)
      MPI_Irecv(inbox.data() + m * width, width, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, parent,
                &user[static_cast<std::size_t>(m)]);
    // Start in a rank-dependent order.
    for (int n = 0; n < 4; ++n) ops[static_cast<std::size_t>((n + rank + cycle) % 4)].start();
    for (int m = 0; m < expected_per_cycle; ++m) {
      const int to = m < tags ? right : left;
      const int tag = m % tags;
      for (int k = 0; k < width; ++k)
        outbox[static_cast<std::size_t>(m * width + k)] =
            k == 0 ? cycle : k == 1 ? rank : k == 2 ? (m < tags ? 0 : 1) : value(9, cycle, rank, tag, 0);
      MPI_Isend(outbox.data() + m * width, width, MPI_INT, to, tag, parent,
                &user[static_cast<std::size_t>(expected_per_cycle + m)]);
    }
    // Completion order differs between ranks and cycles: 0 waits in order,
    // 1 in reverse, 2 polls test() on all of them.
    const int order = (rank + cycle) % 3;
    if (order == 0) {
      for (iso::Operation& op : ops) op.wait();
    } else if (order == 1) {
      for (auto op = ops.rbegin(); op != ops.rend(); ++op) op->wait();
    } else {
      bool done = false;
      while (!done) {
        done = true;
        for (iso::Operation& op : ops) done = op.test() && done;
        ++polls;
      }
    }
    MPI_Waitall(static_cast<int>(user.size()), user.data(), statuses.data());

    for (const Block& b : blocks) {
      const int s = static_cast<int>(b.from.size());
      for (int i = 0; i < s && failure.empty(); ++i) {
        for (int k = 0; k < b.count; ++k) {
          const int source = b.from[static_cast<std::size_t>(i)];
          const int want = source < 0 ? sentinel : value(b.op, cycle, source, b.gather ? 0 : i, k);
          const int got = b.recv[static_cast<std::size_t>(i * b.count + k)];
          if (got != want)
            fail("cycle " + std::to_string(cycle) + ", operation " + std::to_string(b.op) +
                 ", block " + std::to_string(i) + ", element " + std::to_string(k) + ": got " +
                 std::to_string(got) + ", expected " + std::to_string(want));
        }
      }
    }
    // A faster neighbor's next-cycle message may match a wildcard receive of
    // this cycle: each message is checked for integrity here and counted
    // once; the totals are checked at the end.
    for (int m = 0; m < expected_per_cycle && failure.empty(); ++m) {
      const MPI_Status& status = statuses[static_cast<std::size_t>(m)];
      const int* msg = inbox.data() + m * width;
      const bool from_neighbor = status.MPI_SOURCE == left || status.MPI_SOURCE == right;
      if (!from_neighbor || msg[1] != status.MPI_SOURCE || status.MPI_TAG < 0 ||
          status.MPI_TAG >= tags || msg[0] < 0 || msg[0] >= cycles ||
          msg[3] != value(9, msg[0], msg[1], status.MPI_TAG, 0) ||
          !received.insert({msg[1] * 2 + msg[2], msg[0], status.MPI_TAG}).second)
        fail("cycle " + std::to_string(cycle) + ": user message from " +
             std::to_string(status.MPI_SOURCE) + " tag " + std::to_string(status.MPI_TAG) +
             " holds (" + std::to_string(msg[0]) + ", " + std::to_string(msg[1]) + ", " +
             std::to_string(msg[2]) + ", " + std::to_string(msg[3]) + "): foreign, corrupt or repeated");
      ++user_received;
    }
  }
  // Every message of every cycle from both ring neighbors arrived once.
  if (failure.empty()) {
    for (int cycle = 0; cycle < cycles && failure.empty(); ++cycle)
      for (int tag = 0; tag < tags; ++tag)
        for (const auto& [from, direction] : {std::pair<int, int>{left, 0}, {right, 1}})
          if (received.count({from * 2 + direction, cycle, tag}) != 1)
            fail("user message of cycle " + std::to_string(cycle) + " tag " + std::to_string(tag) +
                 " from rank " + std::to_string(from) + " missing");
  }
  ops.clear();
  MPI_Type_free(&strided);

  long totals[2] = {user_received, polls};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("stress: %d ranks, %d cycles x 4 operations, %ld user messages checked, "
                "%ld test() sweeps on the polling ranks\n",
                size, cycles, totals[0], totals[1]);
  EXPECT_TRUE(failure.empty()) << failure;
  ASSERT_TRUE(iso_test::all_ranks(failure.empty()));
}

}  // namespace
