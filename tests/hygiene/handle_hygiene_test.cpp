// No leaked MPI handles: after neighborhoods, every collective under every
// algorithm, halo exchanges, the C API and failed inits are gone, the live
// counts of every handle kind the PMPI tracker sees are back where they
// started. The tracker's own sanity is checked first (it must see a handle
// left alive on purpose), and injected failures of local MPI calls drive the
// library's error paths one call at a time.
#include "isostencil_test.hpp"
#include "mpi_handle_tracker.hpp"

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/halo_exchange.hpp"
#include "iso/iso.h"
#include "iso/neighborhood.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace iso_hygiene {
namespace {

using iso_test::all_ranks;
using iso_test::world_rank;
using iso_test::world_size;

// Collects this rank's first failures; asserted after agreeing over ranks so
// no rank leaves a test while others wait in a collective.
class Findings {
public:
  void add(const std::string& text) {
    if (list_.size() < 12) list_.push_back(text);
    ++count_;
  }
  // Live counts must equal `before` (keyvals excepted where allowed).
  void expect_back(const Counts& before, const std::string& what) {
    const std::string diff = difference(counts(), before);
    if (!diff.empty()) add(what + ": " + diff);
  }
  void assert_all_ranks() {
    const bool ok = all_ranks(count_ == 0);
    std::string text;
    for (const std::string& line : list_) text += "\n  " + line;
    if (count_ > 0) ADD_FAILURE() << "rank " << world_rank() << ": " << count_ << " finding(s):" << text;
    if (!ok && count_ == 0) ADD_FAILURE() << "another rank found handle leaks";
  }

private:
  std::vector<std::string> list_;
  long count_ = 0;
};

std::vector<int> dims_for(int d) {
  std::vector<int> dims(static_cast<std::size_t>(d), 0);
  MPI_Dims_create(world_size(), d, dims.data());
  return dims;
}

const iso::Algorithm all_algorithms[] = {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
                                         iso::Algorithm::mpi, iso::Algorithm::automatic};
enum class Op { alltoall, allgather, alltoallv, alltoallw };
const Op all_ops[] = {Op::alltoall, Op::allgather, Op::alltoallv, Op::alltoallw};
const char* op_name(Op op) {
  switch (op) {
    case Op::alltoall: return "alltoall";
    case Op::allgather: return "allgather";
    case Op::alltoallv: return "alltoallv";
    case Op::alltoallw: return "alltoallw";
  }
  return "?";
}

// Buffers of one operation on a neighborhood: block i holds n(i) ints, values
// naming (sender, block, element, generation); -1 marks untouched cells.
struct Case {
  const iso::Neighborhood& nbh;
  Op op;
  int s;
  std::vector<int> counts, displs;  // ints per block and their offsets (receive side; alltoall* send too)
  std::vector<int> send, recv;

  Case(const iso::Neighborhood& neighborhood, Op which) : nbh(neighborhood), op(which), s(neighborhood.size()) {
    int total = 0;
    for (int i = 0; i < s; ++i) {
      const int n = (op == Op::alltoallv || op == Op::alltoallw) ? 1 + i % 3 : 3;
      counts.push_back(n);
      displs.push_back(total);
      total += n;
    }
    send.assign(static_cast<std::size_t>(op == Op::allgather ? 3 : total), 0);
    recv.assign(static_cast<std::size_t>(total), -1);
  }
  static int value(int rank, int block, int element, int generation) {
    return ((rank * 64 + block) * 8 + element) * 16 + generation;
  }
  void fill(int generation) {
    const int rank = nbh.rank();
    if (op == Op::allgather) {
      for (int e = 0; e < 3; ++e) send[static_cast<std::size_t>(e)] = value(rank, 0, e, generation);
    } else {
      for (int i = 0; i < s; ++i)
        for (int e = 0; e < counts[i]; ++e) send[static_cast<std::size_t>(displs[i] + e)] = value(rank, i, e, generation);
    }
    std::fill(recv.begin(), recv.end(), -1);
  }
  // Empty when every received block holds what its source sent.
  std::string check(int generation) const {
    for (int i = 0; i < s; ++i) {
      const int source = nbh.source_rank(i);
      for (int e = 0; e < counts[i]; ++e) {
        const int expected = source < 0 ? -1 : value(source, op == Op::allgather ? 0 : i, e, generation);
        const int got = recv[static_cast<std::size_t>(displs[i] + e)];
        if (got != expected)
          return std::string(op_name(op)) + ": block " + std::to_string(i) + " element " + std::to_string(e) +
                 " is " + std::to_string(got) + ", expected " + std::to_string(expected);
      }
    }
    return {};
  }

  // Creates the operation; the alltoallw block datatypes are the caller's and
  // are freed right after init, as MPI allows for persistent operations.
  iso::Operation init(iso::Algorithm algorithm) {
    const iso::OperationOptions options{algorithm, op == Op::alltoallv || op == Op::alltoallw};
    switch (op) {
      case Op::alltoall:
        return iso::alltoall_init(nbh, send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, options);
      case Op::allgather:
        return iso::allgather_init(nbh, send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, options);
      case Op::alltoallv:
        return iso::alltoallv_init(nbh, send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                                   counts.data(), displs.data(), MPI_INT, options);
      case Op::alltoallw: {
        std::vector<MPI_Datatype> send_types(static_cast<std::size_t>(s), MPI_DATATYPE_NULL);
        std::vector<MPI_Datatype> recv_types(static_cast<std::size_t>(s), MPI_DATATYPE_NULL);
        std::vector<MPI_Aint> bytes(static_cast<std::size_t>(s));
        std::vector<int> ones(static_cast<std::size_t>(s), 1);
        struct Free {
          std::vector<MPI_Datatype>& a;
          std::vector<MPI_Datatype>& b;
          ~Free() {
            for (MPI_Datatype& t : a)
              if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
            for (MPI_Datatype& t : b)
              if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
          }
        } free_types{send_types, recv_types};
        for (int i = 0; i < s; ++i) {
          // These are the test's own calls; injected failures may hit them too.
          if (MPI_Type_contiguous(counts[i], MPI_INT, &send_types[i]) != MPI_SUCCESS ||
              MPI_Type_commit(&send_types[i]) != MPI_SUCCESS ||
              MPI_Type_vector(counts[i], 1, 1, MPI_INT, &recv_types[i]) != MPI_SUCCESS ||
              MPI_Type_commit(&recv_types[i]) != MPI_SUCCESS)
            throw iso::Error("test datatype creation failed");
          bytes[i] = static_cast<MPI_Aint>(displs[i]) * static_cast<MPI_Aint>(sizeof(int));
        }
        return iso::alltoallw_init(nbh, send.data(), ones.data(), bytes.data(), send_types.data(), recv.data(),
                                   ones.data(), bytes.data(), recv_types.data(), options);
      }
    }
    throw iso::Error("unknown operation");
  }
};

// Whether some rank of the neighborhood meets one partner twice: where MPI
// libraries' own neighborhood collectives are not to be trusted (docs/design/irregular.md#repeated-partners-on-tiny-tori).
bool repeated_partners(const iso::Neighborhood& nbh) {
  std::vector<int> targets;
  for (int i = 0; i < nbh.size(); ++i)
    if (nbh.target_rank(i) >= 0) targets.push_back(nbh.target_rank(i));
  std::sort(targets.begin(), targets.end());
  const bool repeated = std::adjacent_find(targets.begin(), targets.end()) != targets.end();
  return !all_ranks(!repeated);
}

struct Geometry {
  std::string name;
  int d;
  std::vector<bool> periodic;
  iso::OffsetList offsets;
};

std::vector<Geometry> geometries() {
  return {
      {"3-D torus, Moore radius 1", 3, {true, true, true}, iso::OffsetList::moore(3, 1)},
      {"2-D mesh/torus, irregular with zero and repeat", 2, {false, true},
       iso::OffsetList(2, {1, 0, 0, 2, -1, -1, 0, 0, 1, 0, 2, -1})},
      {"1-D mesh, radius 2 with self", 1, {false}, iso::OffsetList::moore(1, 2, true)},
  };
}

class HandleHygiene : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // The automatic choice reads a cost model; the built-in figures keep it
    // from calibrating (which is timing, not hygiene).
    setenv("ISO_COST_MODEL", "defaults", 0);
  }
};

TEST_F(HandleHygiene, TrackerSeesHandlesLeftAlive) {
  ASSERT_GT(counts().calls, -1);
  Findings findings;
  const Counts start = counts();
  // A wrapped call must register: otherwise the tracker is not in effect.
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &type);
  MPI_Type_commit(&type);
  if (counts().calls == start.calls) findings.add("the PMPI wrappers are not in effect");
  if (difference(counts(), start) != "datatype +1")
    findings.add("a datatype left alive shows as '" + difference(counts(), start) + "'");
  MPI_Datatype alias = MPI_DATATYPE_NULL;  // get_contents hands out references
  MPI_Type_dup(type, &alias);
  MPI_Type_free(&type);
  if (difference(counts(), start) != "datatype +1")
    findings.add("after dup + free: '" + difference(counts(), start) + "'");
  MPI_Type_free(&alias);
  findings.expect_back(start, "datatypes freed");

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(comm, &handler);
  int value = world_rank(), got = -1;
  MPI_Request requests[2];
  MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &requests[0]);
  MPI_Request persistent = MPI_REQUEST_NULL;
  MPI_Send_init(&value, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &persistent);
  const std::string alive = difference(counts(), start);
  if (alive != "request +2, communicator +1, group +1, info +1, errhandler +1")
    findings.add("handles left alive show as '" + alive + "'");
  if (counts().persistent_requests - start.persistent_requests != 1) findings.add("the persistent request is not seen");
  MPI_Start(&persistent);
  requests[1] = persistent;
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  if (got != value) findings.add("self message lost");
  if (difference(counts(), start) != "request +1, communicator +1, group +1, info +1, errhandler +1")
    findings.add("after completion: '" + difference(counts(), start) + "' (the persistent request stays)");
  MPI_Request_free(&persistent);
  MPI_Errhandler_free(&handler);
  MPI_Info_free(&info);
  MPI_Group_free(&group);
  MPI_Comm_free(&comm);
  findings.expect_back(start, "everything freed");

  // Injected failure: the call fails, creates nothing, and the next succeeds.
  fail_local_creation(1);
  const int rc = MPI_Type_contiguous(1, MPI_INT, &type);
  if (rc == MPI_SUCCESS || !failure_injected()) findings.add("the injected failure did not fire");
  fail_local_creation(0);
  findings.expect_back(start, "after an injected failure");
  findings.assert_all_ranks();
}

TEST_F(HandleHygiene, EveryCollectiveAndAlgorithmFreesItsHandles) {
  Findings findings;
  const Counts start = counts();
  long operations = 0;
  for (const Geometry& g : geometries()) {
    {
      iso::CartComm cart(MPI_COMM_WORLD, dims_for(g.d), g.periodic);
      iso::Neighborhood nbh(cart.get(), g.offsets);
      const bool trust_mpi = !repeated_partners(nbh);
      const Counts with_neighborhood = counts();
      for (Op op : all_ops) {
        for (iso::Algorithm algorithm : all_algorithms) {
          const std::string what = g.name + ", " + op_name(op) + ", " + iso::to_string(algorithm);
          Case c(nbh, op);
          {
            iso::Operation operation = c.init(algorithm);
            ++operations;
            const Counts ready = counts();
            for (int generation = 1; generation <= 4; ++generation) {
              c.fill(generation);
              if (generation % 2) {
                operation.run();
              } else {
                operation.start();
                while (!operation.test()) {
                }
              }
              const std::string wrong = c.check(generation);
              if (!wrong.empty() && (algorithm != iso::Algorithm::mpi || trust_mpi)) findings.add(what + ": " + wrong);
              const std::string grew = difference(counts(), ready);
              if (!grew.empty()) findings.add(what + ": run " + std::to_string(generation) + " changed " + grew);
            }
            // Destroyed while active: the destructor completes the rounds.
            operation.start();
          }
          findings.expect_back(with_neighborhood, what + ": after destroying the operation");
        }
      }
      // A moved-to operation frees what it held before.
      Case c(nbh, Op::alltoall);
      iso::Operation first = c.init(iso::Algorithm::torus);
      first = c.init(iso::Algorithm::mpi);
      first = iso::Operation();
      findings.expect_back(with_neighborhood, g.name + ": operations replaced by move assignment");
    }
    findings.expect_back(start, g.name + ": after destroying the neighborhood and communicator");
  }
  if (world_rank() == 0) std::printf("[hygiene] %ld operations created, run and freed\n", operations);
  findings.assert_all_ranks();
}

TEST_F(HandleHygiene, HaloExchangesFreeTheirHandles) {
  Findings findings;
  const Counts start = counts();
  for (int d : {2, 3}) {
    iso::CartComm cart(MPI_COMM_WORLD, dims_for(d), std::vector<bool>(static_cast<std::size_t>(d), true));
    iso::ArrayLayout layout;
    layout.interior.assign(static_cast<std::size_t>(d), 4);
    layout.ghost_lo.assign(static_cast<std::size_t>(d), 1);
    layout.ghost_hi.assign(static_cast<std::size_t>(d), 1);
    long cells = 1;
    for (int e : layout.extent()) cells *= e;
    std::vector<double> a(static_cast<std::size_t>(cells)), b(static_cast<std::size_t>(cells));
    for (long i = 0; i < cells; ++i) {
      a[static_cast<std::size_t>(i)] = world_rank() * 1000.0 + static_cast<double>(i);
      b[static_cast<std::size_t>(i)] = -a[static_cast<std::size_t>(i)];
    }
    const iso::OffsetList directions = iso::stencil_geometry(iso::OffsetList::moore(d, 1)).directions;
    // Neighborhoods on a communicator share one duplicate of it, cached on it
    // and freed with it (one communicator and one attribute key, checked
    // against `start` below): made here, so that every exchange must give
    // back exactly what it made.
    const Counts bare_cart = counts();
    { iso::Neighborhood first(cart.get(), directions); }
    const Counts with_cart = counts();
    if (difference(with_cart, bare_cart) != "communicator +1, keyval +1")
      findings.add(std::to_string(d) + "-D: the cached duplicate shows as '" + difference(with_cart, bare_cart) + "'");
    // The process's cost model, read once (its machine signature splits a
    // communicator), so that the count below sees the exchange's own.
    (void)iso::CostModel::for_comm(cart.get());
    for (iso::Algorithm algorithm : all_algorithms) {
      const std::string what = std::to_string(d) + "-D halo exchange, " + iso::to_string(algorithm);
      {
        iso::HaloOptions options;
        options.algorithm = algorithm;
        const Counts before_halo = counts();
        iso::HaloExchange halo(cart.get(), layout, directions, {a.data(), b.data()}, options);
        // Set-up creates no communicator once the shared duplicate exists
        // (the reference exchange runs on it too), but for the MPI
        // library's graph communicator.
        const long made = counts().created[iso_hygiene::communicator] - before_halo.created[iso_hygiene::communicator];
        if (made != (algorithm == iso::Algorithm::mpi ? 1 : 0))
          findings.add(what + ": set-up created " + std::to_string(made) + " communicator(s)");
        const iso::HaloValidation validation = halo.validate();
        if (!validation.ok && algorithm != iso::Algorithm::mpi) findings.add(what + ": " + validation.message);
        halo.start();
        halo.wait();
        // Move construction and assignment: the replaced exchange's handles go.
        iso::HaloExchange moved(std::move(halo));
        moved = iso::HaloExchange(cart.get(), layout, directions, {a.data(), b.data()}, options);
        moved.run();
      }
      findings.expect_back(with_cart, what + ": after destroying the exchanges");
    }
  }
  findings.expect_back(start, "halo exchanges: after destroying the communicators");
  findings.assert_all_ranks();
}

TEST_F(HandleHygiene, CApiHandlesAreFreed) {
  Findings findings;
  // The C API keeps one attribute key for the whole run: created at most once.
  const Counts start = counts();
  long keyvals_after_first_round = -1;
  for (int round = 0; round < 2; ++round) {
    const Counts before = counts();
    for (const char* algorithm : {"linear", "torus", "direct", "mpi"}) {
      iso::CartComm cart(MPI_COMM_WORLD, dims_for(2), {true, true});
      const iso::OffsetList offsets = iso::OffsetList::moore(2, 1);
      MPI_Info info = MPI_INFO_NULL;
      MPI_Info_create(&info);
      MPI_Info_set(info, "iso_algorithm", algorithm);
      MPI_Comm isocomm = MPI_COMM_NULL;
      int rc = Iso_neighborhood_create_info(cart.get(), offsets.size(), offsets.flat().data(), info, &isocomm);
      MPI_Info_free(&info);
      if (rc != MPI_SUCCESS) {
        findings.add(std::string("Iso_neighborhood_create_info failed: ") + Iso_Error_message());
        continue;
      }
      const int s = offsets.size();
      std::vector<int> send(static_cast<std::size_t>(2 * s), world_rank()), recv(static_cast<std::size_t>(2 * s));
      std::vector<int> ones(static_cast<std::size_t>(s), 2), displs(static_cast<std::size_t>(s));
      std::vector<MPI_Aint> bytes(static_cast<std::size_t>(s));
      std::vector<MPI_Datatype> types(static_cast<std::size_t>(s), MPI_INT);
      for (int i = 0; i < s; ++i) {
        displs[i] = 2 * i;
        bytes[i] = static_cast<MPI_Aint>(2 * i * sizeof(int));
      }
      Iso_Request requests[4] = {ISO_REQUEST_NULL, ISO_REQUEST_NULL, ISO_REQUEST_NULL, ISO_REQUEST_NULL};
      rc = Iso_neighbor_alltoall_init(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, isocomm, &requests[0]);
      rc |= Iso_neighbor_allgather_init(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, isocomm, &requests[1]);
      rc |= Iso_neighbor_alltoallv_init(send.data(), ones.data(), displs.data(), MPI_INT, recv.data(), ones.data(),
                                        displs.data(), MPI_INT, isocomm, &requests[2]);
      rc |= Iso_neighbor_alltoallw_init(send.data(), ones.data(), bytes.data(), types.data(), recv.data(),
                                        ones.data(), bytes.data(), types.data(), isocomm, &requests[3]);
      if (rc != MPI_SUCCESS) findings.add(std::string("C API init failed: ") + Iso_Error_message());
      for (Iso_Request& request : requests) {
        if (request == ISO_REQUEST_NULL) continue;
        int flag = 0;
        rc = Iso_Start(&request);
        while (rc == MPI_SUCCESS && !flag) rc = Iso_Test(&request, &flag);
        if (rc == MPI_SUCCESS) rc = Iso_Start(&request);
        if (rc == MPI_SUCCESS) rc = Iso_Wait(&request);
        if (rc != MPI_SUCCESS) findings.add(std::string("C API start/test/wait failed: ") + Iso_Error_message());
      }
      // A failing init on the neighborhood (negative count) creates nothing.
      Iso_Request bad = ISO_REQUEST_NULL;
      if (Iso_neighbor_alltoall_init(send.data(), -1, MPI_INT, recv.data(), 2, MPI_INT, isocomm, &bad) ==
          MPI_SUCCESS)
        findings.add("Iso_neighbor_alltoall_init accepted a negative count");
      for (Iso_Request& request : requests) Iso_Request_free(&request);
      // Both ways to free the neighborhood release it.
      if (round == 0) Iso_neighborhood_free(&isocomm);
      else MPI_Comm_free(&isocomm);
    }
    // A neighborhood whose creation fails (unknown algorithm) leaves nothing.
    {
      iso::CartComm cart(MPI_COMM_WORLD, dims_for(1), {true});
      const int offsets[] = {1, -1};
      MPI_Info info = MPI_INFO_NULL;
      MPI_Info_create(&info);
      MPI_Info_set(info, "iso_algorithm", "no-such-algorithm");
      MPI_Comm isocomm = MPI_COMM_NULL;
      if (Iso_neighborhood_create_info(cart.get(), 2, offsets, info, &isocomm) == MPI_SUCCESS) {
        findings.add("an unknown iso_algorithm was accepted");
        Iso_neighborhood_free(&isocomm);
      }
      MPI_Info_free(&info);
    }
    Counts allowed = before;  // the key is checked below
    allowed.live[keyval] = counts().live[keyval];
    findings.expect_back(allowed, "C API round " + std::to_string(round));
    if (round == 0) keyvals_after_first_round = counts().live[keyval];
    else if (counts().live[keyval] != keyvals_after_first_round)
      findings.add("the C API created another attribute key in its second round");
  }
  if (keyvals_after_first_round - start.live[keyval] > 1)
    findings.add("the C API created " + std::to_string(keyvals_after_first_round - start.live[keyval]) +
                 " attribute keys (one suffices)");
  findings.assert_all_ranks();
}

// Inits that fail on bad arguments (collectively, on every rank).
TEST_F(HandleHygiene, FailedInitsLeaveNothing) {
  Findings findings;
  const Counts start = counts();
  {
    iso::CartComm cart(MPI_COMM_WORLD, dims_for(2), {true, false});
    iso::Neighborhood nbh(cart.get(), iso::OffsetList(2, {1, 0, 0, 1, -1, 1}));
    const Counts with_neighborhood = counts();
    std::vector<int> send(64, 1), recv(64, 0);
    auto expect_error = [&](const std::string& what, const std::function<void()>& body) {
      bool threw = false;
      try {
        body();
      } catch (const iso::Error&) {
        threw = true;
      }
      if (!threw) findings.add(what + ": no error");
      findings.expect_back(with_neighborhood, what);
    };
    for (iso::Algorithm algorithm : all_algorithms) {
      const std::string name = iso::to_string(algorithm);
      expect_error(name + ": block sizes differ", [&] {
        iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 3, MPI_INT, {algorithm});
      });
      expect_error(name + ": null receive buffer", [&] {
        iso::allgather_init(nbh, send.data(), 2, MPI_INT, nullptr, 2, MPI_INT, {algorithm});
      });
      // Sizes that break the signature rule are found by the verification
      // exchange, after it created (and must have freed) an operation of its own.
      expect_error(name + ": signature mismatch found by verification", [&] {
        std::vector<int> sendcounts(3, 1), recvcounts(3, 1), displs = {0, 4, 8};
        sendcounts[0] = 2;  // block 0 (offset (1,0)) sent with 2 ints, received as 1
        iso::alltoallv_init(nbh, send.data(), sendcounts.data(), displs.data(), MPI_INT, recv.data(),
                            recvcounts.data(), displs.data(), MPI_INT, {algorithm, true});
      });
    }
    expect_error("halo reaching past the width rule", [&] {
      iso::ArrayLayout layout;
      layout.interior = {1, 1};
      layout.ghost_lo = {9, 9};
      layout.ghost_hi = {9, 9};
      std::vector<double> field(19 * 19);
      iso::HaloExchange halo(cart.get(), layout, iso::stencil_geometry(iso::OffsetList::moore(2, 3)).directions,
                             {field.data()});
    });
  }
  if (world_size() > 1) {
    // Ranks passing different neighborhoods: an error on every rank.
    iso::CartComm cart(MPI_COMM_WORLD, dims_for(1), {true});
    const Counts with_cart = counts();
    bool threw = false;
    try {
      iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {world_rank() == 0 ? 1 : -1}));
    } catch (const iso::Error&) {
      threw = true;
    }
    if (!threw) findings.add("differing neighborhoods were accepted");
    findings.expect_back(with_cart, "differing neighborhoods");
  }
  findings.expect_back(start, "failed inits: after destroying the communicators");
  findings.assert_all_ranks();
}

// Every local MPI call that creates something during an init is made to fail
// in turn; whatever the init had made by then must be freed. Runs on a
// one-process torus of each rank's own (MPI_COMM_SELF), so a failure on one
// rank leaves no partner waiting.
TEST_F(HandleHygiene, InjectedFailuresInInitFreeWhatWasMade) {
  Findings findings;
  const Counts start = counts();
  long failures = 0;
  // Fails the n-th local creation for n = 1, 2, ... until `body` gets through.
  auto each_failure = [&](const std::string& what, const std::function<void()>& body) {
    const Counts before = counts();
    for (long n = 1; n <= 2000; ++n) {
      fail_local_creation(n);
      bool threw = false;
      try {
        body();
      } catch (const iso::Error&) {
        threw = true;
      } catch (const std::exception& e) {
        findings.add(what + ": failing local call " + std::to_string(n) + " raised a non-iso error: " + e.what());
        threw = true;
      }
      const bool injected = failure_injected();
      fail_local_creation(0);
      findings.expect_back(before, what + ": failing local call " + std::to_string(n));
      if (injected && !threw) findings.add(what + ": failing local call " + std::to_string(n) + " went unnoticed");
      if (!injected) return;
      ++failures;
    }
    findings.add(what + ": more than 2000 local calls");
  };
  {
    iso::CartComm cart(MPI_COMM_SELF, {1, 1}, {true, true});
    iso::Neighborhood nbh(cart.get(), iso::OffsetList(2, {1, 0, 0, 1, -1, -1, 0, 0, 1, 1}));
    for (Op op : all_ops)
      for (iso::Algorithm algorithm : all_algorithms) {
        Case c(nbh, op);
        each_failure(std::string(op_name(op)) + ", " + iso::to_string(algorithm), [&] {
          iso::Operation operation = c.init(algorithm);
          c.fill(1);
          operation.run();
        });
      }
    iso::ArrayLayout layout;
    layout.interior = {3, 3};
    layout.ghost_lo = {1, 1};
    layout.ghost_hi = {1, 1};
    std::vector<double> field(25), other(25);
    for (iso::Algorithm algorithm : all_algorithms)
      each_failure(std::string("halo exchange, ") + iso::to_string(algorithm), [&] {
        iso::HaloOptions options;
        options.algorithm = algorithm;
        iso::HaloExchange halo(cart.get(), layout, iso::stencil_geometry(iso::OffsetList::moore(2, 1)).directions,
                               {field.data(), other.data()}, options);
        halo.run();
      });
  }
  // With partners on other ranks the schedules send real messages (on one
  // process they are local copies). Init only: a rank whose init failed must
  // not leave partners waiting in a run, and the loop ends when no rank's
  // failure fired. The mpi algorithm and halo exchanges make collective calls
  // after local ones, so they stay on the one-process torus above.
  if (world_size() > 1) {
    iso::CartComm cart(MPI_COMM_WORLD, dims_for(2), {true, false});
    iso::Neighborhood nbh(cart.get(), iso::OffsetList(2, {1, 0, 0, 1, -1, -1, 0, 0, 2, 1}));
    for (Op op : all_ops)
      for (iso::Algorithm algorithm : {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct}) {
        const std::string what = std::string("on all ranks: ") + op_name(op) + ", " + iso::to_string(algorithm);
        Case c(nbh, op);
        const Counts before = counts();
        bool any = true;
        for (long n = 1; any && n <= 2000; ++n) {
          fail_local_creation(n);
          try {
            iso::Operation operation = c.init(algorithm);
          } catch (const iso::Error&) {
          }
          const bool injected = failure_injected();
          fail_local_creation(0);
          findings.expect_back(before, what + ": failing local call " + std::to_string(n));
          if (injected) ++failures;
          any = !all_ranks(!injected);
        }
      }
  }
  findings.expect_back(start, "injected failures: after destroying the neighborhood");
  if (world_rank() == 0) std::printf("[hygiene] %ld injected failures of local MPI calls\n", failures);
  findings.assert_all_ranks();
}

}  // namespace
}  // namespace iso_hygiene
