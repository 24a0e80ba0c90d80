// Persistent isomorphic collectives: init once, start/test/wait many times.
#pragma once

#include "iso/neighborhood.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace iso {

/// How an operation hands its messages to MPI on every start
/// (docs/design/irregular.md#posting).
enum class Posting {
  /// fresh where no message of the operation exceeds fresh_posting_limit
  /// bytes, persistent above.
  automatic,
  /// Requests made once at init (MPI_Send_init/MPI_Recv_init), started with
  /// MPI_Startall.
  persistent,
  /// MPI_Irecv/MPI_Isend posted anew on every start, from the same plan:
  /// small messages take the MPI library's short path (Open MPI sends them
  /// inline, with no request to complete), which a persistent start misses.
  fresh,
};
const char* to_string(Posting posting);

/// Posting::automatic posts afresh up to this many bytes per message: what
/// Open MPI 4.1's shared memory sends inline (btl_vader_max_inline_send).
/// Above it a fresh send takes a request of its own and measured 4-6 %
/// slower than a persistent one.
inline constexpr long fresh_posting_limit = 256;

struct OperationOptions {
  Algorithm algorithm = Algorithm::torus;
  /// Irregular collectives: check at init that block sizes pair up between
  /// sender and receiver (costs one small exchange).
  bool verify_signatures = false;
  /// Ports: at most this many messages in flight each way at once (0: no
  /// limit). Consecutive rounds that do not depend on each other run as one
  /// step (docs/design/schedules.md#steps-and-ports); ports caps the
  /// messages a step may post. Algorithm::mpi leaves it to the MPI library.
  int ports = 0;
  /// How messages are posted on every start (a process's own choice: either
  /// way its messages match its partners').
  Posting posting = Posting::automatic;
};

/// A persistent collective operation. Its buffers and datatypes are fixed at
/// init; start() posts the first round and returns, test() advances the rounds
/// as far as arrived messages allow, wait() completes. start/test/wait allocate
/// nothing. Move-only; frees its MPI objects on destruction (before
/// MPI_Finalize). The neighborhood must outlive the operation.
///
/// Progress: later rounds are posted only inside test() and wait() (of any
/// operation: each advances every active operation of the process). So a
/// rank must not block in its own MPI call (say MPI_Recv) on a message that a
/// partner sends only after its wait() returns, while this rank's operation is
/// still active: call wait() first, or poll test(). Several operations may be
/// active at once and completed in any order on any rank.
///
/// A default-constructed or moved-from operation is empty: active() is false,
/// start/test/wait throw. Destroying an active operation completes it first
/// (its partners wait for its messages).
class Operation {
public:
  Operation();
  Operation(Operation&&) noexcept;
  Operation& operator=(Operation&&) noexcept;
  ~Operation();

  void start();
  /// Advances; returns true once the operation has completed.
  bool test();
  void wait();
  void run() { start(); wait(); }
  bool active() const;

  const Schedule& schedule() const;
  /// The algorithm that runs (what automatic or tune chose).
  Algorithm algorithm() const;
  /// The port limit it runs with (0: no limit; what automatic or tune chose).
  int ports() const;
  /// How its messages are posted (what Posting::automatic chose; the MPI
  /// library's collective: persistent where it is an MPI-4 persistent one).
  Posting posting() const;
  /// Algorithm::tune: every candidate's measurement, in the order tried, the
  /// same on every process; Algorithm::automatic where it followed the tune
  /// cache (docs/design/cost-model.md#auto-follows-measurements): the trials
  /// found there; empty otherwise.
  const std::vector<TuneTrial>& tune_trials() const;
  /// Whether the choice and trials came from the tune cache (an earlier
  /// run's measurements; nothing was timed at this init).
  bool tune_cached() const;

  struct Impl;

private:
  explicit Operation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Operation make_operation(std::unique_ptr<Impl> impl);
};

/// "torus", or "torus:p2" where a port limit is given (ports > 0).
std::string algorithm_label(Algorithm algorithm, int ports);

/// What runs, for reports: "torus", "torus:p2" (a port limit), and for
/// Algorithm::tune why: "torus:p1 (tune: 12.3 us per call, the fastest of 13
/// candidates timed at init)" or "... (tune cache: ...)".
std::string describe_choice(const Operation& operation);

/// Set-up caches of the process. Neighborhoods with the same offsets, grid
/// and coordinates share their schedules, and operations with the same
/// schedule, rank, port limit and block layout relative to their buffers
/// share one execution plan, so a repeated set-up only makes its requests.
/// Derived datatypes count by their layout (size, extents, signature, byte
/// runs), never by handle. Plans with messages above the small-message limit
/// hold absolute addresses and are not kept. Each cache keeps its 32 most recently used
/// entries; operations keep the plans they run. `ISO_SETUP_CACHE=off` in the
/// environment turns both off (read once per process).
struct SetupCacheCounts {
  long schedule_hits = 0, schedule_misses = 0;
  long plan_hits = 0, plan_misses = 0;
  std::size_t schedules = 0, plans = 0;  ///< entries held now
};
SetupCacheCounts setup_cache_counts();
/// Drops every cached schedule and plan (counts stay). The next set-up is built from scratch.
void clear_setup_caches();

/// Whether the MPI library's neighborhood collectives pair repeated edges in
/// order: the k-th message to a neighbor listed several times lands in the
/// k-th block from it, as the isomorphic layout needs. Probed once per process
/// (two self-edges on MPI_COMM_SELF). Open MPI 4.1 does; MPICH 4.0.2 reverses
/// them, so there Algorithm::mpi refuses neighborhoods with repeated partners
/// (Neighborhood::has_repeated_partner on any rank) with an iso::Error.
bool mpi_pairs_repeated_edges_in_order();

/// Isomorphic all-to-all: block i of sendbuf (sendcount x sendtype, blocks
/// consecutive by extent) goes to target i; block i of recvbuf comes from
/// source i. Collective over the neighborhood; argument errors raise the same
/// iso::Error on every rank.
Operation alltoall_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, const OperationOptions& options = {});

/// Isomorphic allgather: the one block at sendbuf goes to every target; block
/// i of recvbuf comes from source i.
Operation allgather_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, const OperationOptions& options = {});

/// Irregular all-to-all: block i is sendcounts[i] elements of sendtype at
/// sendbuf + sdispls[i]*extent(sendtype); likewise for the receive side.
///
/// Signature rule (docs/design/irregular.md#the-signature-rule): the type signature of block i may differ
/// between processes only through the coordinates of dimensions where offset
/// v_i is zero, and send block i at x must match receive block i at x (+) v_i.
/// Blocks travel through intermediate processes described by *their* receive
/// description of block i, which is why the rule is needed. With
/// `options.verify_signatures` the byte sizes are checked at init (one extra
/// exchange) and a mismatch is an error on every rank. On a non-periodic mesh
/// a receive block with no source stays untouched, but its description still
/// shapes the staging slot of blocks passing through this process: give it
/// the size the rule implies, not zero.
Operation alltoallv_init(const Neighborhood& neighborhood, const void* sendbuf,
                         const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void* recvbuf, const int recvcounts[], const int rdispls[],
                         MPI_Datatype recvtype, const OperationOptions& options = {});

/// Irregular all-to-all with a datatype per block and byte displacements, as
/// MPI_Neighbor_alltoallw. Same signature rule as alltoallv_init. sendbuf and
/// recvbuf may be MPI_BOTTOM with absolute addresses as displacements.
Operation alltoallw_init(const Neighborhood& neighborhood, const void* sendbuf,
                         const int sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                         const OperationOptions& options = {});

}  // namespace iso
