// What the files of the persistent collectives share (not installed):
//   block_types.cpp       block descriptions, datatype facts, flattening to byte runs
//   native_collective.cpp Algorithm::mpi, the MPI library's neighborhood collective
//   operation_build.cpp   an operation's requests and local moves from a schedule
//   setup_cache.cpp       the process's schedules and execution plans, kept for reuse
//   progress.cpp          the progress engine (Operation::Impl) and Operation itself
//   collectives.cpp       the *_init entry points: argument checks, the choice of auto
//   tune.cpp              Algorithm::tune, and auto's reading of the tune cache
#pragma once

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace iso {

namespace detail {

// Where a block of one of the four buffers lives: address of its first
// element, and the count and datatype that describe it.
struct BlockDesc {
  MPI_Aint address = 0;  // absolute (MPI_Get_address), used with MPI_BOTTOM
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

struct TypeInfo {
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  int size = 0;
};

TypeInfo type_info(MPI_Datatype type);
// Lowest byte offset and byte span that `count` elements of a type touch.
std::pair<MPI_Aint, MPI_Aint> true_span(const TypeInfo& info, int count);
MPI_Aint address_of(const void* pointer);
// The one predefined type a datatype is built from, or MPI_DATATYPE_NULL when
// it mixes several (or uses a constructor we do not look into).
MPI_Datatype single_leaf_type(MPI_Datatype type, int depth = 0);
// How a block in transit is stored: compact where the signature allows.
BlockDesc staging_shape(const BlockDesc& block);
long block_bytes(const BlockDesc& block);
// Bytes that lie back to back from the block's address: a predefined type, or
// a contiguous run of one (the shapes of regular blocks and staging slots).
// Returns that predefined type, MPI_DATATYPE_NULL for any other layout.
MPI_Datatype contiguous_element(const BlockDesc& block);

// Where an address of a local move or plain message lies: absolute, or at
// an offset in one of the operation's regions. Addresses relative to the
// region they came from make an execution plan independent of where the
// buffers are, so that one plan serves every operation with the same layout.
enum Region : std::uint16_t {
  region_absolute = 0,
  region_send = 1,     // offsets from Buffers::send_base
  region_recv = 2,     // ... from Buffers::recv_base
  region_scratch = 3,  // the T and T2 slots
  region_image = 4,    // region_image + k: the k-th packed image
};

// The four buffers of one operation, block by block.
struct Buffers {
  std::vector<BlockDesc> send;  // indexed by the send block index
  std::vector<BlockDesc> recv;  // R[i]
  std::vector<BlockDesc> temp;  // T[i]
  std::vector<BlockDesc> temp2; // T2[i]
  // The addresses send and receive offsets count from (the user's sendbuf
  // and recvbuf; 0 where blocks are absolute).
  MPI_Aint send_base = 0, recv_base = 0;
  // Regular collectives: the few figures that place every block (counts,
  // types, extents); empty for v and w, whose blocks are keyed one by one.
  std::vector<std::int64_t> regular_layout;
  // Regular collectives list their first send and receive blocks only, until
  // materialize(): a set-up that finds its plan needs no more (its key is
  // regular_layout), and s blocks cost more than the rest of it at s = 2400.
  // The blocks lie `stride` bytes apart; counts of 0: every block listed.
  int send_blocks = 0, recv_blocks = 0;
  MPI_Aint send_stride = 0, recv_stride = 0;
  // Lists every block, and sizes temp and temp2 for the neighborhood's s blocks.
  void materialize(int neighbors);

  static std::uint16_t region_of(Buffer buffer) {
    return buffer == Buffer::send ? region_send : buffer == Buffer::recv ? region_recv : region_scratch;
  }

  const BlockDesc& at(BlockRef ref) const {
    switch (ref.buffer) {
      case Buffer::send: return send[ref.block];
      case Buffer::recv: return recv[ref.block];
      case Buffer::temp: return temp[ref.block];
      case Buffer::temp2: return temp2[ref.block];
    }
    throw Error("iso: invalid buffer");
  }
};

// Messages through derived datatypes, independent of where the buffers lie.
// A message whose entries all lie in one region is one committed type with
// displacements from that region's base, owned by the plan (MessagePart) and
// posted at the region's base. A message over several regions (a torus
// round sends blocks of the send buffer and of the staging slots, in the
// schedule's order) keeps its entries as offsets in their regions
// (SpanningEntry); each operation makes its type at its own bases
// (AssembledTypes).
struct MessagePart {
  std::uint16_t region = region_absolute;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};
struct SpanningEntry {
  std::uint16_t region = region_absolute;
  int count = 0;
  MPI_Aint offset = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // predefined, or the plan's duplicate
};
// Creates into `type` the cheapest constructor of these blocks (one count and
// type: hindexed_block; one type: hindexed; else struct), then commits it;
// `type` is set before the commit, so that its owner frees it on any error.
void commit_indexed(const std::vector<int>& counts, const std::vector<MPI_Aint>& displacements,
                    const std::vector<MPI_Datatype>& types, MPI_Datatype& type);

// A run of bytes: where it starts (absolute, or relative to an element's
// address), how long it is, and the region its address came from.
struct Run {
  MPI_Aint address;
  MPI_Aint bytes;
  std::uint16_t region = region_absolute;
};

// Appends a run, merged with the previous one where they touch and come from
// the same region (runs of different buffers touch only by accident of
// placement, which a reused plan must not depend on).
void append_run(std::vector<Run>& runs, MPI_Aint address, MPI_Aint bytes, std::uint16_t region = region_absolute);

// What build_scheduled() asks of a block's datatype, looked up once per
// datatype (a schedule has thousands of entries but few distinct types).
class TypeFacts {
public:
  MPI_Datatype element(const BlockDesc& block) { return of(block).element; }
  long bytes(const BlockDesc& block) { return static_cast<long>(block.count) * of(block).size; }
  /// The one predefined type the block is made of (MPI_DATATYPE_NULL: several).
  MPI_Datatype leaf(const BlockDesc& block);
  /// Appends the block's byte runs at their absolute addresses; false when
  /// its layout is not flattened (or has more than run_budget runs).
  bool append_runs(const BlockDesc& block, std::vector<Run>& out, std::uint16_t region = region_absolute);
  /// A predefined type (its handle is stable; a derived one's may be freed).
  bool named(const BlockDesc& block) { return of(block).named; }
  /// Appends words that determine everything an execution plan reads from
  /// the block's type: the handle of a predefined type; else its size,
  /// extents, element and leaf types and byte runs, so that equal layouts
  /// under different handles match. False when the type does not flatten.
  bool describe(const BlockDesc& block, std::vector<std::int64_t>& out);
  static constexpr std::size_t run_budget = 16384;

private:
  struct Facts {
    MPI_Datatype type = MPI_DATATYPE_NULL, element = MPI_DATATYPE_NULL;
    int size = 0;
    bool leaf_known = false, runs_known = false, runs_ok = false, named = false;
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
    std::vector<Run> runs;
  };
  Facts& of(const BlockDesc& block);
  // describe() of a subarray of a predefined type, by its arguments; false
  // for any other type.
  bool describe_subarray(Facts& facts, const TypeInfo& info, std::vector<std::int64_t>& out);
  // The type's byte runs, flattened on first use; false when it does not flatten.
  bool flatten(Facts& facts);
  std::deque<Facts> known_;  // stable references
  Facts* last_ = nullptr;    // blocks come in runs of one type
};

// A block copied inside the process instead of sent to itself: raw bytes when
// both sides are contiguous, else packed from one layout and unpacked into
// the other through the bounce buffer. `from` and `to` are offsets in their
// regions (Impl::bases); typed sides are absolute.
struct LocalMove {
  MPI_Aint from = 0, to = 0;
  int from_count = 0, to_count = 0;
  MPI_Datatype from_type = MPI_DATATYPE_NULL, to_type = MPI_DATATYPE_NULL;
  std::size_t bytes = 0;
  bool raw = false;
  std::uint16_t from_region = region_absolute, to_region = region_absolute;
  // Raw moves: `repeat` copies of `bytes`, each the strides further on both
  // sides (a face across the fastest dimension is one element per row).
  int repeat = 1;
  MPI_Aint from_stride = 0, to_stride = 0;
};

// A message of `elements` elements of type `element` at one place of a
// region: predefined elements, or one region-relative message type the plan
// owns (MessagePart). A message over several regions has no element here:
// entries [entry_begin, entry_end) of the plan's `spanning`, assembled for
// the operation's bases (AssembledTypes).
struct PlainMessage {
  bool sending = false;
  int peer = 0;
  int round_index = 0;  // the tag is the operation's tag base plus this
  std::uint16_t region = region_absolute;
  MPI_Aint offset = 0;
  int elements = 0;
  MPI_Datatype element = MPI_DATATYPE_NULL;
  int entry_begin = 0, entry_end = 0;
};

// The types of a plan's messages over several regions, made for one set
// of region bases (send, receive, scratch): per message, its type or
// MPI_DATATYPE_NULL. Freed with the last operation or plan holding them.
struct AssembledTypes {
  MPI_Aint bases[region_image] = {};
  std::vector<MPI_Datatype> types;
  AssembledTypes() = default;
  AssembledTypes(const AssembledTypes&) = delete;
  AssembledTypes& operator=(const AssembledTypes&) = delete;
  ~AssembledTypes();  // operation_build.cpp
};

// What an operation executes, derived from a schedule and its buffers'
// layout: the steps, their local moves and unpacks, and (for plans made of
// plain messages only) the messages. Immutable once built, and shared by
// every operation with the same schedule, rank, port limit and layout
// relative to its buffers (setup_cache.cpp).
struct ExecutionPlan {
  std::shared_ptr<const Schedule> schedule;
  int ports = 0;
  std::vector<LocalMove> moves;
  // Step k makes moves [move_begin[2k], move_begin[2k+1]) before its
  // messages start (packs into send images) and [move_begin[2k+1],
  // move_begin[2k+2]) after (copies no message of the step touches).
  std::vector<int> move_begin;
  std::vector<LocalMove> unpacks;
  std::vector<int> unpack_begin;  // ... and unpacks [unpack_begin[k], unpack_begin[k+1]) once done
  std::vector<int> step_begin;  // step k uses requests [step_begin[k], step_begin[k+1])
  // Plans whose every address is region-relative can be instantiated on
  // other buffers: these say how. Local moves through the caller's datatypes
  // at absolute addresses (layouts that do not flatten) make a plan this
  // operation's alone.
  bool relocatable = true;
  std::vector<PlainMessage> messages;  // one per request, in request order
  std::vector<MessagePart> parts;      // the typed messages' datatypes, owned by the plan
  std::vector<SpanningEntry> spanning;  // the entries of messages over several regions
  std::vector<MPI_Datatype> kept_types;  // duplicates of the caller's types that `spanning` names
  // Messages over several regions need a type per operation (12 us each
  // at d = 4, r = 3). The plan keeps the last ones made and the scratch of
  // its last operation, so that a set-up repeated on the same buffers
  // (restarts, the same exchange made again) makes none: it gets the same
  // scratch back, so the same bases. Mutable: the plan is otherwise
  // immutable, and the library is called from the host thread only.
  bool reuses_scratch = false;  // true where a message spans regions
  mutable std::shared_ptr<const AssembledTypes> last_assembled;
  mutable std::vector<std::max_align_t> spare_scratch;
  long largest_message = 0;            // bytes of its largest message (Posting::automatic)
  std::size_t scratch_units = 0;       // max_align_t elements of the T/T2 slots
  std::vector<std::size_t> image_bytes;

  int steps() const { return static_cast<int>(step_begin.size()) - 1; }

  ExecutionPlan() = default;
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;
  ~ExecutionPlan();  // frees `parts` and `kept_types` (operation_build.cpp)
};

}  // namespace detail

struct Operation::Impl {
  // The neighborhood's communicator, shared by its operations with a tag
  // range each (`own` holds a private duplicate once tags run out).
  MPI_Comm comm = MPI_COMM_NULL;
  Comm own;
  std::shared_ptr<const detail::ExecutionPlan> plan;
  // Where each region of the plan lies for this operation (Region).
  std::vector<MPI_Aint> bases;
  // T and T2 slots; max_align_t elements keep every slot suitably aligned.
  std::vector<std::max_align_t> scratch;
  std::vector<MPI_Datatype> types;
  // The types of the messages that span regions, at this operation's
  // bases (null when no message does).
  std::shared_ptr<const detail::AssembledTypes> assembled;
  std::vector<MPI_Request> requests;
  // Posting::fresh: post() makes each step's requests anew (MPI_Irecv,
  // MPI_Isend), each message with its tag here; else they are persistent.
  bool fresh = false;
  std::vector<int> tags;
  std::vector<char> bounce;
  std::vector<char> images;  // contiguous images of small multi-block messages, back to back
  int current = -1;             // active step, -1 when inactive
  std::vector<TuneTrial> trials;  // Algorithm::tune's measurements
  bool tune_cached = false;       // ... read from the tune cache, not timed now

  // The MPI library's own collective (Algorithm::mpi) on an adjacent graph of
  // the existing neighbors, block descriptions in MPI_BOTTOM-relative form.
  bool native = false;
  bool native_persistent = false;
  Comm graph;
  std::vector<int> send_counts, recv_counts;
  std::vector<MPI_Aint> send_displs, recv_displs;
  std::vector<MPI_Datatype> send_types, recv_types;

  // Destroyed while active: completes first (progress.cpp).
  ~Impl();

  int steps() const { return plan->steps(); }

  // The progress engine (progress.cpp): every wait or test advances all
  // active operations of the process, kept in an intrusive list.
  void post(int step);
  void post_fresh(int first, int last);  // requests [first, last) made anew (Posting::fresh)
  void move(const detail::LocalMove& m);
  void make_moves(const std::vector<detail::LocalMove>& list, int begin, int end);
  static Impl*& active_head();
  Impl* previous = nullptr;
  Impl* next = nullptr;
  void link();
  void unlink();
  void begin();
  // Moves past the current step once its requests are done (blocking or not);
  // returns true when the operation has completed.
  bool advance(bool block);
  static void advance_others(const Impl* self);
  void complete();
};

Operation make_operation(std::unique_ptr<Operation::Impl> impl);

namespace detail {

// An init up to its agreement, all local (collectives.cpp): the argument
// error, the options' fingerprint, auto's kept choice. finish_init agrees
// and builds; a layer that makes one agreement for several (a grid's
// exchange on a pattern it found, iso::HaloExchange::Deferred) agrees on
// ready() and ready_fingerprint() itself and passes agreed = true, where
// finish_init makes no collective call.
struct PreparedInit {
  const char* where = "";
  Collective collective = Collective::alltoall;
  const Neighborhood* neighborhood = nullptr;
  Buffers buffers;
  OperationOptions options;
  bool irregular = false;
  std::string error;
  std::uint64_t options_fingerprint = 0;
  std::optional<Neighborhood::KeptChoice> kept;
  std::uint64_t kept_print = 0;
  // auto's block sizes and choice key, found once (set where no error and
  // the algorithm is automatic).
  BlockBytes choice_bytes;
  std::uint64_t choice_key = 0;
  // No error, and finishing needs no collective call: a scheduled algorithm
  // named, or auto's choice kept (not mpi, tune or a verification exchange).
  bool ready() const;
  std::uint64_t ready_fingerprint() const;
};
PreparedInit prepare_init(const char* where, Collective collective, const Neighborhood& neighborhood,
                          const void* sendbuf, void* recvbuf, Buffers buffers, std::string error,
                          const OperationOptions& options, bool irregular, bool absolute_addresses);
Operation finish_init(PreparedInit prepared, bool agreed);

// alltoallw_init with the caller's name and its own argument error, which
// rides in the operation's agreement (collectives.cpp; a halo exchange's
// binding check, halo_exchange.cpp); and its first half.
PreparedInit prepare_alltoallw(const char* where, std::string error, const Neighborhood& neighborhood,
                               const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               const OperationOptions& options);
Operation alltoallw_init(const char* where, std::string error, const Neighborhood& neighborhood,
                         const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], const OperationOptions& options);

// Algorithm::mpi (native_collective.cpp).
std::unique_ptr<Operation::Impl> build_native(const Neighborhood& neighborhood, Collective collective,
                                              const Buffers& buffers);
// Builds the persistent requests of every round plus the final local copies
// (operation_build.cpp), from the process's cached plan where one fits.
// `posting` decides only how the requests are made, never the plan.
std::unique_ptr<Operation::Impl> build_scheduled(const Neighborhood& neighborhood, Algorithm algorithm,
                                                 Collective collective, Buffers buffers, int ports = 0,
                                                 Posting posting = Posting::automatic);

// The process's caches (setup_cache.cpp). Both are bounded; operations keep
// the plans they run.
//   The schedule of (offsets, grid, coordinates, algorithm, collective).
std::shared_ptr<const Schedule> cached_schedule(const OffsetList& offsets, std::uint64_t offsets_hash,
                                                const CartGeometry& grid, const std::vector<int>& coords,
                                                Algorithm algorithm, Collective collective);
//   An execution plan for a schedule, rank, port limit and buffer layout;
//   not `usable` where the layout cannot be keyed (derived datatypes, whose
//   handles may be freed and reused for another layout).
struct PlanKey {
  std::shared_ptr<const Schedule> schedule;
  int rank = 0, ports = 0;
  std::vector<std::int64_t> layout;
  std::uint64_t digest = 0;
  bool usable = false;
};
// A datatype handle as a key word (a pointer in Open MPI, an int in MPICH).
std::int64_t handle_word(MPI_Datatype type);
PlanKey plan_key(const std::shared_ptr<const Schedule>& schedule, int rank, int ports, const Buffers& buffers,
                 TypeFacts& facts);
std::shared_ptr<const ExecutionPlan> find_plan(const PlanKey& key);
void store_plan(const PlanKey& key, std::shared_ptr<const ExecutionPlan> plan);

// Auto's choice and tune (collectives.cpp, tune.cpp).
struct Choice {
  Algorithm algorithm;
  int ports;
  std::vector<TuneTrial> measured;  // the tune cache's trials where auto followed it
};
BlockBytes bytes_of(const Buffers& buffers);
/// The cost model's own choice, neither the tune cache's nor kept (tune's
/// check of the model). Collective.
Choice model_choice(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers, int ports);
/// Rank 0's tune cache file where one exists, else empty (auto reads nothing).
std::string existing_tune_cache();
/// The tune cache's entry for an auto init at `path` (rank 0's), where it is
/// usable and contradicts the `model`'s choice (iso::tune_entry_contradicts);
/// broadcast to every rank (docs/design/cost-model.md#auto-follows-measurements).
std::optional<Choice> measured_choice(const Neighborhood& neighborhood, Collective collective,
                                      const BlockBytes& bytes, int ports, const std::vector<int>& port_counts,
                                      bool mpi_everywhere, const Choice& model, const std::string& path);
/// Algorithm::tune's init (docs/design/cost-model.md#tune).
Operation tune(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers,
               const OperationOptions& options);

}  // namespace detail

}  // namespace iso
