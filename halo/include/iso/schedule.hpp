// Pure schedule computation (docs/design/schedules.md and docs/design/mesh.md): no MPI calls.
//
// Every process computes the same global round list from the offsets; a
// process's schedule is that list filtered for its coordinate (non-periodic
// meshes drop entries whose origin or final target does not exist) and turned
// into per-round send and receive entries naming local buffer slots.
#pragma once

#include "iso/geometry.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace iso {

enum class Algorithm {
  linear,  ///< straightforward: one round per nonzero offset (paper, Listing 4)
  torus,   ///< message combining over immediate torus links (docs/design/schedules.md#torus)
  direct,  ///< message combining with direct shifts along each dimension (docs/design/schedules.md#direct)
  mpi,     ///< the MPI library's own neighborhood collective (no schedule here)
  automatic,  ///< chosen per operation by the cost model (docs/design/cost-model.md#how-auto-chooses)
  // Last, so that the values above keep their numbers; lists follow algorithm_table().
  basis,   ///< one round per vector of an additive basis of the offsets (docs/design/schedules.md#basis)
  tune,    ///< chosen per operation by timing every candidate at init (docs/design/cost-model.md#tune)
};
enum class Collective { alltoall, allgather };

/// One candidate Algorithm::tune timed (iso::Operation::tune_trials): seconds
/// per call, the maximum over processes of each process's median over `calls`
/// calls.
struct TuneTrial {
  Algorithm algorithm;
  int ports;  ///< the port limit it ran with (0: no limit)
  int calls;
  double seconds;
};

const char* to_string(Algorithm algorithm);
const char* to_string(Collective collective);
/// Accepts "linear" (also "straightforward"), "torus" (also "hop"), "direct"
/// (also "torus-direct"), "basis" (also "additive"), "mpi" (also "native"),
/// "auto" and "tune" (also "autotune"); throws iso::Error naming the allowed values.
Algorithm parse_algorithm(const std::string& name);

/// The algorithm table: every algorithm once, in the order auto breaks ties
/// and every list shows them (linear, torus, direct, basis, mpi, then auto).
struct AlgorithmInfo {
  Algorithm algorithm;
  const char* name;     ///< as to_string()
  const char* alias;    ///< the other spelling parse_algorithm() accepts
  bool scheduled;       ///< has a schedule of its own (linear, torus, direct, basis)
  const char* meaning;  ///< one line for help texts
};
const std::vector<AlgorithmInfo>& algorithm_table();
/// Which names algorithm_names() lists.
enum class AlgorithmNames {
  all,           ///< linear, torus, direct, basis, mpi, auto, tune
  auto_first,    ///< auto, linear, torus, direct, basis, mpi, tune (deck keys: the default first)
  fixed,         ///< linear, torus, direct, basis, mpi
  scheduled,     ///< linear, torus, direct, basis
};
/// The names of the table joined by `separator`, the last two by
/// `last_separator` when given ("linear, torus, direct and basis").
std::string algorithm_names(AlgorithmNames which = AlgorithmNames::all, const std::string& separator = ", ",
                            const char* last_separator = nullptr);

/// The four buffers of docs/design/schedules.md#buffer-scheme: S, R, T and the mesh redirection T2.
enum class Buffer : std::uint8_t { send, recv, temp, temp2 };
const char* to_string(Buffer buffer);

/// One block slot of a local buffer. For the send buffer of allgather the
/// block index is always 0 (every neighbor gets the same block).
struct BlockRef {
  Buffer buffer;
  std::int32_t block;
  friend bool operator==(BlockRef a, BlockRef b) { return a.buffer == b.buffer && a.block == b.block; }
  friend bool operator!=(BlockRef a, BlockRef b) { return !(a == b); }
};

/// One communication round as seen by one process: a single message to
/// x (+) shift and a single message from x (-) shift. Entry i of `send` at the
/// sender corresponds to entry i of `recv` at the receiver.
struct Round {
  int index = 0;             ///< position in the global round list; also the message tag
  std::vector<int> shift;    ///< sigma
  int send_rank = -1;        ///< rank of x (+) sigma, -1 when no message is sent
  int recv_rank = -1;        ///< rank of x (-) sigma, -1 when no message is received
  std::vector<BlockRef> send;
  std::vector<BlockRef> recv;
};

/// A copy inside one process, done after all rounds: zero offsets (S -> R) and,
/// for allgather, repeated offsets (R[owner] -> R[i]).
struct LocalCopy {
  BlockRef from;
  BlockRef to;
};

struct Schedule {
  Algorithm algorithm = Algorithm::linear;
  Collective collective = Collective::alltoall;
  int num_blocks = 0;           ///< s
  int num_global_rounds = 0;    ///< length of the global round list (same on every process)
  std::vector<Round> rounds;    ///< this process's rounds with at least one entry, ascending index
  std::vector<LocalCopy> copies;
  std::vector<char> uses_temp;  ///< per block: T[i] is used
  std::vector<char> uses_temp2; ///< per block: T2[i] is used (mesh redirection)
  /// Every dimension periodic: every process's schedule is this one translated,
  /// so all group their rounds into the same steps, and the messages of one
  /// step to one partner may travel as one (iso::step_messages).
  bool merges_partners = false;

  long messages_sent() const;   ///< rounds with a nonempty send
  long blocks_sent() const;     ///< volume: block transfers sent by this process
};

/// The global round list and each block's path through it (for alltoall), or
/// each trie node's round (allgather). Identical on all processes.
struct RoundList {
  std::vector<std::vector<int>> shifts;  ///< sigma of each round
};
/// For basis the round list depends on which dimensions are periodic
/// (docs/design/mesh.md#the-basis-on-a-mesh): this form takes every dimension as
/// periodic, the other the grid's flags (`periodic`, one per dimension).
RoundList build_round_list(const OffsetList& offsets, Algorithm algorithm);
RoundList build_round_list(const OffsetList& offsets, Algorithm algorithm, const std::vector<bool>& periodic);

/// An additive basis of a neighborhood (docs/design/schedules.md#basis): every
/// nonzero offset is the sum of distinct basis vectors, its terms, taken in
/// round order. Every term is 0 where the offset is 0 (a block moves only
/// along its offset's dimensions: the signature rule of alltoallv/w), and in
/// a non-periodic dimension it has the sign of the offset's coordinate and no
/// more than its size, so that no path leaves the mesh.
/// A pure function of the offsets and the periodic flags (missing flags: periodic).
struct AdditiveBasis {
  std::vector<std::vector<int>> vectors;  ///< in round order
  std::vector<std::vector<int>> terms;    ///< per offset: ascending indices into vectors (empty for 0)
  int lower_bound = 0;                    ///< ceil(log2(distinct nonzero offsets + 1))
  bool minimal = false;                   ///< no smaller basis (lower bound met, or the exact search completed)
};
AdditiveBasis additive_basis(const OffsetList& offsets, const std::vector<bool>& periodic = {});

/// The schedule of the process at `coords`, for linear, torus, direct or basis. Throws
/// iso::Error when the offsets' dimension differs from the grid's (an empty
/// list fits any grid and gives an empty schedule), for an
/// algorithm without a schedule of its own (mpi, automatic), or for torus
/// offsets needing more than 10^6 rounds or 10^7 block hops (sum of |c|).
Schedule build_schedule(const OffsetList& offsets, const CartGeometry& grid, const int* coords,
                        Algorithm algorithm, Collective collective);

/// Figures of one algorithm/collective on a grid, for `isostencil plan` and the
/// cost model. On a periodic grid every process has the same figures; on a mesh
/// they differ, so max and total over all processes are given.
struct ScheduleFigures {
  int rounds = 0;              ///< global rounds
  long messages = 0;           ///< messages sent per process (max over processes)
  long volume = 0;             ///< block transfers sent per process (max)
  long messages_total = 0;     ///< sum over all processes
  long volume_total = 0;
  long local_copies = 0;       ///< max over processes
  long temp_blocks = 0;        ///< T and T2 slots used (max over processes)
  int steps = 0;               ///< steps an operation runs with `ports` (iso::execution_steps; max)
};
/// `ports`: OperationOptions::ports for `steps` (0: no limit).
ScheduleFigures schedule_figures(const OffsetList& offsets, const CartGeometry& grid,
                                 Algorithm algorithm, Collective collective, int ports = 0);

}  // namespace iso
