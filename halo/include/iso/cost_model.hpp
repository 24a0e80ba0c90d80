// Cost model for choosing an algorithm (docs/design/cost-model.md).
//
// A round costs  alpha + beta * bytes + gamma * entries  (latency, inverse
// bandwidth, datatype cost per block entry); a schedule costs the sum of its
// rounds. The MPI library's own neighborhood collective posts all s messages
// at once: alpha + delta * (s - 1) + beta * bytes + gamma * s.
//
// Messages above the MPI library's eager limit switch to a rendezvous
// protocol with its own start-up and per-byte cost: a message of more than
// `eager_limit` bytes costs alpha_large + beta_large * bytes instead. Each
// further rendezvous message of a step adds delta_large (its handshake does
// not overlap with the others' as an eager message's start-up does).
#pragma once

#include "iso/schedule.hpp"

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace iso {

struct CostModel {
  double alpha = 3e-6;    ///< seconds per round (message start-up and completion)
  double beta = 2e-10;    ///< seconds per byte
  double gamma = 2e-8;    ///< seconds per datatype entry (block) sent or received
  double delta = 1e-6;    ///< seconds per extra message in flight (native collective)
  /// Second regime (format 2): messages of more than eager_limit bytes. 0: one
  /// regime, alpha and beta for every size (what a format-1 file gives).
  double eager_limit = 0;
  double alpha_large = 0;  ///< seconds per message above the eager limit
  double beta_large = 0;   ///< seconds per byte above the eager limit
  double beta_copy = 0;    ///< seconds per byte copied inside the process (0: beta)
  double delta_large = 0;  ///< seconds per further rendezvous message in flight (0: delta)
  /// Seconds per byte of a rendezvous message gathered from several blocks
  /// (a derived datatype: Open MPI's shared memory then copies through
  /// fragments instead of in one copy); it replaces beta_large for the whole
  /// message. 0: beta_large.
  double beta_scattered = 0;
  /// Start-up of a rendezvous-sized message gathered from several blocks,
  /// and what each further one adds to a step. Such a message need not take
  /// the contiguous one's protocol (Open MPI's shared memory pipelines it
  /// through fragments instead of one single-copy transfer: 2.7 against
  /// 5.8 us just above its 4 KiB limit), so it gets a line of its own,
  /// alpha_gathered + beta_scattered * bytes. 0: alpha_large, delta_large.
  double alpha_gathered = 0;
  double delta_gathered = 0;
  /// Two route classes (docs/design/cost-model.md#nodes): ranks numbered in
  /// order fill nodes of ranks_per_node, and a message to a rank of the same
  /// node starts in alpha_node (above the eager limit alpha_large - alpha +
  /// alpha_node: the protocol's extra start-up is the route's either way) and
  /// moves its bytes at beta_node, beside the messages that leave the node
  /// (a step's two classes of bytes flow at once: the larger counts). 0: one
  /// class, every message priced as leaving the node (what older files give).
  double ranks_per_node = 0;
  double alpha_node = 0;
  double beta_node = 0;
  /// Seconds of each further message's posting (part of delta): posting
  /// them runs while the first message travels (its latency: the start-up
  /// less what it would add as a further one) and while the bytes already
  /// posted flow, so a step costs start-up + further + max(bytes -
  /// (messages - 1) * delta_post, -latency); completing them does not
  /// overlap (messages that share a link arrive together). 0: start-up,
  /// further messages and bytes add (what older files give).
  double delta_post = 0;
  int version = 2;         ///< file format: 1 = alpha, beta, gamma, delta only
  std::string source = "defaults";  ///< "defaults", "calibrated" or the file it came from

  /// Start-up and transfer of one message of `bytes` bytes in the regime its
  /// size falls in.
  double message_seconds(double bytes) const {
    return eager_limit > 0 && bytes > eager_limit ? alpha_large + beta_large * bytes : alpha + beta * bytes;
  }

  double copy_seconds(double bytes) const { return (beta_copy > 0 ? beta_copy : beta) * bytes; }

  bool rendezvous(double bytes) const { return eager_limit > 0 && bytes > eager_limit; }
  /// message_seconds for a message of `blocks` blocks.
  double message_seconds(double bytes, long blocks) const {
    if (gathered(bytes, blocks)) return alpha_gathered + beta_scattered * bytes;
    const bool scattered = blocks > 1 && beta_scattered > beta_large && rendezvous(bytes);
    return message_seconds(bytes) + (scattered ? (beta_scattered - beta_large) * bytes : 0.0);
  }
  /// The start-up part of message_seconds(bytes, blocks).
  double startup_seconds(double bytes, long blocks = 1) const {
    if (gathered(bytes, blocks)) return alpha_gathered;
    return rendezvous(bytes) ? alpha_large : alpha;
  }
  /// What a message of `bytes` bytes (`blocks` blocks) adds to a step that
  /// already has one in flight: delta, delta_large above the eager limit,
  /// delta_gathered for a gathered one there.
  double further_message_seconds(double bytes, long blocks = 1) const {
    if (gathered(bytes, blocks) && delta_gathered > 0) return delta_gathered;
    return rendezvous(bytes) && delta_large > 0 ? delta_large : delta;
  }
  /// Whether ranks `a` and `b` share a node (two route classes only).
  bool same_node(int a, int b) const {
    const long n = static_cast<long>(ranks_per_node);
    return n > 1 && a >= 0 && b >= 0 && a / n == b / n;
  }
  /// Start-up and transfer of a message to a rank of the same node.
  double node_message_seconds(double bytes) const { return node_startup_seconds(bytes) + beta_node * bytes; }
  double node_startup_seconds(double bytes) const {
    return rendezvous(bytes) ? alpha_large - alpha + alpha_node : alpha_node;
  }
  /// A rendezvous-sized message of several blocks priced by its own line.
  bool gathered(double bytes, long blocks) const {
    return blocks > 1 && alpha_gathered > 0 && beta_scattered > 0 && rendezvous(bytes);
  }

  /// The built-in figures (ISO_COST_MODEL=defaults, `--model defaults`, and
  /// a one-rank job): a calibration of Open MPI 4.1's shared memory on the
  /// project's machine, rounded (docs/design/cost-model.md#parameters), so
  /// that a user who never calibrates gets the choices a calibration there
  /// gives. A default-constructed CostModel is not these: it is the
  /// one-regime form a model file's keys are read into.
  static CostModel builtin();

  /// Reads "key = value" lines (alpha, beta, gamma, delta; format 2 adds
  /// version = 2, eager_limit, alpha_large, beta_large, all three or none, and
  /// optionally beta_copy, delta_large, beta_scattered, alpha_gathered and
  /// delta_gathered (the last two together);
  /// '#' comments). Throws iso::Error naming the file and line on a malformed
  /// file, and naming what is there when `path` (or the end of its links) is
  /// no regular file (a FIFO is never opened).
  static CostModel load(const std::string& path);
  /// Writes the model (with `machine`, when given, as a comment saying what
  /// it was measured on) by iso/file_write.hpp's rule for outputs: replaced
  /// whole, a link followed and kept; throws iso::Error when the file cannot
  /// be written or `path` is a directory, a device, a FIFO, ...
  void save(const std::string& path, const std::string& machine = "") const;

  /// Measures alpha, beta, gamma and delta on `comm` in about `budget_seconds`
  /// (collective; every rank gets the same figures). Messages travel as the
  /// operations send them (persistent requests, started together): message
  /// times at sizes on both sides of the eager limit locate the switch (then
  /// refined by bisection) and fit both regimes; bursts of eager and of
  /// rendezvous messages give delta, beta and delta_large; one and two
  /// messages of scattered blocks, just above the eager limit and at 72 KiB,
  /// give alpha_gathered, delta_gathered and beta_scattered. Each figure is
  /// the least of three batches' medians: a batch that a busy moment of the
  /// machine inflates does not count.
  static CostModel calibrate(MPI_Comm comm, double budget_seconds = 2.0);

  /// The model `automatic` uses on `comm` (collective on first use): the file
  /// named by ISO_COST_MODEL if set ("defaults" selects the built-in figures),
  /// else the cached calibration of this machine and transport
  /// (cache_path(machine_signature(comm))), else a fresh calibration that is
  /// then written there (on a one-rank communicator the defaults, not cached:
  /// there is nobody to measure against). A cache file of format 1 (one
  /// regime), or of format 2 without delta_large, beta_scattered or
  /// alpha_gathered (written before those were measured), is measured again
  /// and rewritten. Cached per
  /// process. The cache path (and ISO_COST_MODEL's) follows iso/file_write.hpp's
  /// rule for caches: a character device (/dev/null) keeps nothing (measured
  /// now, written nowhere); a directory, FIFO, socket or block device is an
  /// iso::Error on every rank.
  static const CostModel& for_comm(MPI_Comm comm);
  /// The folder of the caches: $XDG_CACHE_HOME/isostencil/, else
  /// ~/.cache/isostencil/, else "" (the working directory).
  static std::string cache_directory();
  /// The calibration cache of one machine signature (machine_signature):
  /// cache_directory() + "cost_model-<16 hex digits>.txt", so a calibration
  /// over one transport (or across hosts) never serves another.
  static std::string cache_path(const std::string& machine);
  /// cache_path for this process alone (one host, this environment): what
  /// `plan` reads.
  static std::string default_cache_path();
};

/// What a measurement on `comm` depends on besides the operation, as text
/// (collective; rank 0's, the same on every rank): the MPI library's
/// version, the transport selection its environment makes (Open MPI's
/// OMPI_MCA_btl/pml/mtl, which `mpirun --mca` sets in every process, MPICH's
/// MPIR_CVAR_CH4_NETMOD, libfabric's FI_PROVIDER, UCX_TLS, Intel MPI's
/// I_MPI_FABRICS) and how many hosts (shared-memory domains) `comm` spans.
/// Keys the calibration cache and the tune cache.
std::string machine_signature(MPI_Comm comm);

/// Where automatic's model comes from, in the order for_comm looks (and
/// `isostencil plan`, which never calibrates): ISO_COST_MODEL when set
/// ("defaults" or a file, which must then be usable), else the cached
/// calibration file of `comm`'s machine signature (it may be missing or
/// stale). Collective over `comm`.
struct CostModelSource {
  std::string path;    ///< "defaults" or a file
  bool named = false;  ///< named by ISO_COST_MODEL: an error when unusable
  std::string machine;  ///< the machine signature of the cache (empty when named)
};
CostModelSource cost_model_source(MPI_Comm comm = MPI_COMM_SELF);

/// Byte size of each block of a collective as this process sees it, used to
/// weigh schedule entries: send[i] (one entry for allgather), recv[i].
struct BlockBytes {
  std::vector<long> send;
  std::vector<long> recv;
};

/// How an operation runs a schedule: rounds [first, last) of schedule.rounds
/// are started together and completed before the next step, and with
/// `copies` the schedule's final local copies run in this step as well.
struct ExecutionStep {
  int first = 0;
  int last = 0;
  bool copies = false;
};
/// A round whose partners are both the process itself: a local copy.
inline bool is_local_round(const Round& round, int self_rank) {
  return self_rank >= 0 && round.send_rank == self_rank && round.recv_rank == self_rank;
}
/// Groups consecutive rounds into steps: a round joins the current step when
/// it reads no slot that the step writes and writes no slot that the step
/// reads or writes (so the straightforward algorithm is one step, and torus
/// rounds of opposite directions share one), and, with `ports` > 0, when the
/// step then posts at most `ports` messages each way (local rounds are
/// copies and do not count). Steps are contiguous in round order on every
/// process, which keeps them deadlock-free even where processes group
/// differently (docs/design/schedules.md#steps-and-ports).
std::vector<ExecutionStep> execution_steps(const Schedule& schedule, int ports = 0, int self_rank = -1);
/// One message an execution step posts: the entries of its rounds
/// (StepMessages::rounds[first, last), positions in Schedule::rounds,
/// ascending), concatenated in that order, to or from `peer`, tagged with
/// the first round's index.
struct StepMessage {
  bool sending = false;
  int peer = -1;
  int round_index = 0;
  int first = 0, last = 0;
};
/// The messages of one step; the buffers are reused from call to call.
struct StepMessages {
  std::vector<StepMessage> messages;  ///< receives first
  std::vector<int> rounds;            ///< each message's rounds, message by message
  std::vector<std::pair<int, int>> scratch;
};
/// Fills `out` with the messages of one step at process `self_rank`,
/// receives first, local rounds left out. Where the schedule merges
/// partners (every dimension periodic), the rounds of the step that go to
/// one process share a message, and so do the rounds that come from one: 2
/// processes along a periodic dimension are the partner of both its
/// directions. Both sides find the same rounds, in the same order, since
/// every process groups the same steps
/// (docs/design/schedules.md#one-message-per-partner).
void step_messages(const Schedule& schedule, const ExecutionStep& step, int self_rank, StepMessages& out);
/// A step message's entries: its rounds' send (or receive) lists in round
/// order; `scratch` holds them where there are several rounds.
const std::vector<BlockRef>& step_message_entries(const Schedule& schedule, const StepMessages& step,
                                                  const StepMessage& message, std::vector<BlockRef>& scratch);
/// Predicted seconds of one schedule as an operation runs it (steps above):
/// a step costs the largest message start-up among its messages, delta per
/// further eager message and delta_large per further rendezvous message (the
/// larger sum of the two directions), each message's bytes in its regime
/// (beta_scattered for a rendezvous message of several blocks), gamma per
/// entry;
/// local rounds and copies cost beta_copy per byte and 2 gamma per block.
double predict_execution_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes,
                                 int self_rank, int ports = 0);
/// Predicted seconds of the MPI library's neighborhood collective at this
/// process (`neighbors` messages each way).
double predict_native_seconds(const CostModel& model, int neighbors, const BlockBytes& bytes);

/// The candidates of Algorithm::automatic in table order (algorithm_table()
/// without auto and tune): linear, torus, direct, basis, mpi. Algorithm::tune
/// times the same candidates.
const std::vector<Algorithm>& automatic_candidates();
/// The rule of Algorithm::automatic, for the collectives and for predictions
/// alike: `seconds[k]` is the predicted time of automatic_candidates()[k]
/// (the maximum over processes); the first candidate of least time wins
/// (strict '<'), mpi only where `mpi_candidate`. Throws iso::Error unless
/// `seconds` has one entry per candidate.
Algorithm cheapest_algorithm(const std::vector<double>& seconds, bool mpi_candidate);
/// The port limits automatic and tune consider for an operation asked to
/// run with `ports`: that one, or where it is 0 (no limit) 0, 1 and 2
/// (docs/design/cost-model.md#ports). Throws iso::Error on a negative count.
std::vector<int> candidate_port_counts(int ports);
/// automatic's choice of algorithm and port limit.
struct CheapestChoice {
  Algorithm algorithm;
  int ports;       ///< 0 for mpi (the MPI library posts every message at once)
  double seconds;  ///< its prediction
};
/// The rule of Algorithm::automatic over port counts: `seconds[k * n + p]`
/// is the prediction of automatic_candidates()[k] at port_counts[p] (n port
/// counts; mpi's the same at each). Each candidate is priced at its first
/// port count of least time; then cheapest_algorithm decides.
CheapestChoice cheapest_choice(const std::vector<double>& seconds, const std::vector<int>& port_counts,
                               bool mpi_candidate);
/// Whether mpi may be automatic's choice at a process whose blocks go to
/// `targets` (ranks; -1: no target): not where two coincide (tiny tori), since
/// mpi merges their blocks into one message, which the model does not price.
/// A candidate for an operation only where it is one at every process.
bool mpi_is_candidate(std::vector<int> targets);

}  // namespace iso
