#include "iso/collectives.hpp"

#include "iso/cost_model.hpp"
#include "iso/error.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace iso {

namespace {

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

TypeInfo type_info(MPI_Datatype type) {
  TypeInfo info;
  MPI_Aint lb = 0;
  ISO_MPI_CHECK(MPI_Type_get_extent(type, &lb, &info.extent));
  ISO_MPI_CHECK(MPI_Type_get_true_extent(type, &info.true_lb, &info.true_extent));
  ISO_MPI_CHECK(MPI_Type_size(type, &info.size));
  return info;
}

// Lowest byte offset and byte span that `count` elements of a type touch.
std::pair<MPI_Aint, MPI_Aint> true_span(const TypeInfo& info, int count) {
  if (count == 0 || info.size == 0) return {0, 0};
  const MPI_Aint stride = static_cast<MPI_Aint>(count - 1) * info.extent;
  const MPI_Aint lowest = info.true_lb + std::min<MPI_Aint>(0, stride);
  const MPI_Aint span = info.true_extent + (stride < 0 ? -stride : stride);
  return {lowest, span};
}


MPI_Aint address_of(const void* pointer) {
  MPI_Aint address = 0;
  ISO_MPI_CHECK(MPI_Get_address(pointer, &address));
  return address;
}

// The one predefined type a datatype is built from, or MPI_DATATYPE_NULL when
// it mixes several (or uses a constructor we do not look into).
MPI_Datatype single_leaf_type(MPI_Datatype type, int depth = 0) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner));
  if (combiner == MPI_COMBINER_NAMED) return type;
  if (depth > 16) return MPI_DATATYPE_NULL;
  switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK: case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_SUBARRAY: case MPI_COMBINER_DARRAY: case MPI_COMBINER_RESIZED: break;
    default: return MPI_DATATYPE_NULL;
  }
  std::vector<int> ints(static_cast<std::size_t>(integers));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(addresses));
  std::vector<MPI_Datatype> parts(static_cast<std::size_t>(types));
  ISO_MPI_CHECK(MPI_Type_get_contents(type, integers, addresses, types, ints.data(), addrs.data(), parts.data()));
  MPI_Datatype leaf = MPI_DATATYPE_NULL;
  bool single = true;
  for (MPI_Datatype part : parts) {
    // A struct entry of zero blocks contributes nothing to the signature.
    const MPI_Datatype found = single_leaf_type(part, depth + 1);
    if (found == MPI_DATATYPE_NULL || (leaf != MPI_DATATYPE_NULL && found != leaf)) single = false;
    else leaf = found;
    int inner = 0, a = 0, t = 0, kind = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(part, &inner, &a, &t, &kind));
    if (kind != MPI_COMBINER_NAMED) ISO_MPI_CHECK(MPI_Type_free(&part));
  }
  return single ? leaf : MPI_DATATYPE_NULL;
}

// How a block in transit is stored: compact where the signature allows.
BlockDesc staging_shape(const BlockDesc& block) {
  const MPI_Datatype leaf = single_leaf_type(block.type);
  if (leaf != MPI_DATATYPE_NULL) {
    const TypeInfo whole = type_info(block.type), element = type_info(leaf);
    const long bytes = static_cast<long>(block.count) * whole.size;
    if (element.size > 0 && element.extent == element.size && bytes % element.size == 0 &&
        bytes / element.size <= 2147483647L)
      return {0, static_cast<int>(bytes / element.size), leaf};
  }
  return {0, block.count, block.type};
}
}  // namespace

// memcpy for the few bytes of a small collective's blocks without a library
// call (at 1-8 B blocks a 3-D Moore torus alltoall makes ~50 of them per
// start); src and dst never overlap.
static inline void copy_bytes(char* to, const char* from, std::size_t bytes) {
  if (bytes > 16) {
    std::memcpy(to, from, bytes);
  } else if (bytes >= 8) {
    std::uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + bytes - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + bytes - 8, &tail, 8);
  } else if (bytes >= 4) {
    std::uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + bytes - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + bytes - 4, &tail, 4);
  } else if (bytes > 0) {
    to[0] = from[0];
    to[bytes / 2] = from[bytes / 2];
    to[bytes - 1] = from[bytes - 1];
  }
}

// A block copied inside the process instead of sent to itself: raw bytes when
// both sides are contiguous, else packed from one layout and unpacked into
// the other through the bounce buffer.
struct LocalMove {
  MPI_Aint from = 0, to = 0;
  int from_count = 0, to_count = 0;
  MPI_Datatype from_type = MPI_DATATYPE_NULL, to_type = MPI_DATATYPE_NULL;
  std::size_t bytes = 0;
  bool raw = false;
};

struct Operation::Impl {
  // The neighborhood's communicator, shared by its operations with a tag
  // range each (`own` holds a private duplicate once tags run out).
  MPI_Comm comm = MPI_COMM_NULL;
  Comm own;
  Schedule schedule;
  // T and T2 slots; max_align_t elements keep every slot suitably aligned.
  std::vector<std::max_align_t> scratch;
  std::vector<MPI_Datatype> types;
  std::vector<MPI_Request> requests;
  std::vector<int> step_begin;  // step k uses requests [step_begin[k], step_begin[k+1])
  std::vector<LocalMove> moves;
  std::vector<int> move_begin;  // step k makes moves [move_begin[k], move_begin[k+1]) first
  std::vector<LocalMove> unpacks;
  std::vector<int> unpack_begin;  // ... and unpacks [unpack_begin[k], unpack_begin[k+1]) once done
  std::vector<char> bounce;
  std::deque<std::vector<char>> packed;  // contiguous images of small multi-block messages
  int current = -1;             // active step, -1 when inactive

  // The MPI library's own collective (Algorithm::mpi) on an adjacent graph of
  // the existing neighbors, block descriptions in MPI_BOTTOM-relative form.
  bool native = false;
  bool native_persistent = false;
  Comm graph;
  std::vector<int> send_counts, recv_counts;
  std::vector<MPI_Aint> send_displs, recv_displs;
  std::vector<MPI_Datatype> send_types, recv_types;

  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    // Destroyed while active: finish every remaining round, since partners
    // wait for our later messages; errors cannot be reported from here.
    if (current >= 0) {
      try {
        complete();
      } catch (const Error&) {
        unlink();
        current = -1;
      }
    }
    for (MPI_Request& request : requests)
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    for (MPI_Datatype& type : types)
      if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }

  int steps() const { return static_cast<int>(step_begin.size()) - 1; }

  void post(int step) {
    if (native && !native_persistent) {
      ISO_MPI_CHECK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, send_counts.data(), send_displs.data(),
                                            send_types.data(), MPI_BOTTOM, recv_counts.data(),
                                            recv_displs.data(), recv_types.data(), graph.get(), &requests[0]));
      return;
    }
    // A step's local moves touch no slot its messages touch (execution_steps).
    for (int m = move_begin[step]; m < move_begin[step + 1]; ++m) move(moves[static_cast<std::size_t>(m)]);
    const int count = step_begin[step + 1] - step_begin[step];
    if (count > 0) ISO_MPI_CHECK(MPI_Startall(count, requests.data() + step_begin[step]));
  }

  void move(const LocalMove& m) {
    if (m.raw) {
      copy_bytes(reinterpret_cast<char*>(m.to), reinterpret_cast<const char*>(m.from), m.bytes);
      return;
    }
    // A contiguous side (no type) is read or written in place: one MPI call,
    // and none on contiguous bytes, where MPICH 4.0.2's MPI_Pack was seen to
    // move fewer bytes than the type holds (docs/mpich.md). Every call must
    // move all `bytes`: a short copy is an error, never silently wrong ghosts.
    const int bytes = static_cast<int>(m.bytes);
    int position = 0;
    if (m.from_type == MPI_DATATYPE_NULL) {
      ISO_MPI_CHECK(MPI_Unpack(reinterpret_cast<const void*>(m.from), bytes, &position,
                               reinterpret_cast<void*>(m.to), m.to_count, m.to_type, comm));
    } else if (m.to_type == MPI_DATATYPE_NULL) {
      ISO_MPI_CHECK(MPI_Pack(reinterpret_cast<const void*>(m.from), m.from_count, m.from_type,
                             reinterpret_cast<void*>(m.to), bytes, &position, comm));
    } else {
      ISO_MPI_CHECK(MPI_Pack(reinterpret_cast<const void*>(m.from), m.from_count, m.from_type, bounce.data(),
                             static_cast<int>(bounce.size()), &position, comm));
      if (position == bytes) {
        position = 0;
        ISO_MPI_CHECK(MPI_Unpack(bounce.data(), static_cast<int>(bounce.size()), &position,
                                 reinterpret_cast<void*>(m.to), m.to_count, m.to_type, comm));
      }
    }
    if (position != bytes)
      throw Error("iso: a local copy moved " + std::to_string(position) + " of " + std::to_string(bytes) +
                  " bytes (the MPI library's MPI_Pack/MPI_Unpack)");
  }

  // Progress engine. Rounds advance only when the process calls into the
  // library, and a round of one operation may wait for a partner that is
  // itself waiting on another operation (start A, B; wait B, A on one rank
  // and wait A, B on another). So every wait or test advances all active
  // operations of the process. They form an intrusive list: no allocation.
  static Impl*& active_head() {
    static Impl* head = nullptr;
    return head;
  }
  Impl* previous = nullptr;
  Impl* next = nullptr;

  void link() {
    Impl*& head = active_head();
    previous = nullptr;
    next = head;
    if (head) head->previous = this;
    head = this;
  }
  void unlink() {
    if (previous) previous->next = next;
    else if (active_head() == this) active_head() = next;
    if (next) next->previous = previous;
    previous = next = nullptr;
  }

  void begin() {
    if (steps() == 0) return;
    current = 0;
    link();
    post(0);
  }

  // Moves past the current step once its requests are done (blocking or not);
  // returns true when the operation has completed.
  bool advance(bool block) {
    while (current >= 0) {
      const int first = step_begin[current];
      const int count = step_begin[current + 1] - first;
      if (count == 0) {
        // local moves only: done when posted
      } else if (block) {
        ISO_MPI_CHECK(MPI_Waitall(count, requests.data() + first, MPI_STATUSES_IGNORE));
      } else {
        int done = 0;
        // MPICH 4.0's MPI_Testall fails (MPI_ERR_IN_STATUS, no error in the
        // status) on a persistent collective request; MPI_Test does not.
        if (count == 1)
          ISO_MPI_CHECK(MPI_Test(requests.data() + first, &done, MPI_STATUS_IGNORE));
        else
          ISO_MPI_CHECK(MPI_Testall(count, requests.data() + first, &done, MPI_STATUSES_IGNORE));
        if (!done) return false;
      }
      for (int m = unpack_begin[current]; m < unpack_begin[current + 1]; ++m) move(unpacks[static_cast<std::size_t>(m)]);
      if (++current == steps()) {
        current = -1;
        unlink();
      } else {
        post(current);
      }
    }
    return true;
  }

  static void advance_others(const Impl* self) {
    for (Impl* op = active_head(); op;) {
      Impl* following = op->next;  // advance() may unlink op
      if (op != self) op->advance(false);
      op = following;
    }
  }

  void complete() {
    while (current >= 0) {
      // Alone, block in MPI; with company, poll everyone.
      const bool alone = active_head() == this && next == nullptr;
      if (advance(alone)) return;
      advance_others(this);
    }
  }
};

namespace {

struct Buffers {
  std::vector<BlockDesc> send;  // indexed by the send block index
  std::vector<BlockDesc> recv;  // R[i]
  std::vector<BlockDesc> temp;  // T[i]
  std::vector<BlockDesc> temp2; // T2[i]

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

// One committed datatype holding every nonempty entry of a message, at
// absolute addresses (used with MPI_BOTTOM). MPI_DATATYPE_NULL: nothing to move.
MPI_Datatype message_type(const Buffers& buffers, const std::vector<BlockRef>& entries) {
  std::vector<int> counts;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  counts.reserve(entries.size());
  addresses.reserve(entries.size());
  types.reserve(entries.size());
  for (BlockRef ref : entries) {
    const BlockDesc& block = buffers.at(ref);
    int size = 0;
    ISO_MPI_CHECK(MPI_Type_size(block.type, &size));
    if (block.count == 0 || size == 0) continue;
    counts.push_back(block.count);
    addresses.push_back(block.address);
    types.push_back(block.type);
  }
  if (counts.empty()) return MPI_DATATYPE_NULL;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const bool uniform = std::all_of(types.begin(), types.end(), [&](MPI_Datatype t) { return t == types[0]; });
  const int n = static_cast<int>(counts.size());
  const bool same_counts =
      std::all_of(counts.begin(), counts.end(), [&](int c) { return c == counts[0]; });
  // The cheapest constructor that says it: regular blocks (alltoall,
  // allgather) are one count at many addresses.
  if (uniform && same_counts)
    ISO_MPI_CHECK(MPI_Type_create_hindexed_block(n, counts[0], addresses.data(), types[0], &type));
  else if (uniform)
    ISO_MPI_CHECK(MPI_Type_create_hindexed(n, counts.data(), addresses.data(), types[0], &type));
  else
    ISO_MPI_CHECK(MPI_Type_create_struct(n, counts.data(), addresses.data(), types.data(), &type));
  const int committed = MPI_Type_commit(&type);
  if (committed != MPI_SUCCESS) MPI_Type_free(&type);  // not yet owned by the operation
  ISO_MPI_CHECK(committed);
  return type;
}

long block_bytes(const BlockDesc& block) {
  int size = 0;
  ISO_MPI_CHECK(MPI_Type_size(block.type, &size));
  return static_cast<long>(block.count) * size;
}

// Bytes that lie back to back from the block's address: a predefined type, or
// a contiguous run of one (the shapes of regular blocks and staging slots).
// Returns that predefined type, MPI_DATATYPE_NULL for any other layout.
MPI_Datatype contiguous_element(const BlockDesc& block) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(block.type, &integers, &addresses, &types, &combiner));
  MPI_Datatype element = block.type;
  if (combiner == MPI_COMBINER_CONTIGUOUS || combiner == MPI_COMBINER_DUP) {
    int count[1] = {0};
    MPI_Aint none[1];
    MPI_Datatype inner[1];
    if (integers > 1 || types != 1) return MPI_DATATYPE_NULL;
    ISO_MPI_CHECK(MPI_Type_get_contents(block.type, integers, 0, 1, count, none, inner));
    int inner_integers = 0, inner_addresses = 0, inner_types = 0, inner_combiner = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(inner[0], &inner_integers, &inner_addresses, &inner_types, &inner_combiner));
    if (inner_combiner != MPI_COMBINER_NAMED) {
      ISO_MPI_CHECK(MPI_Type_free(&inner[0]));
      return MPI_DATATYPE_NULL;
    }
    element = inner[0];
  } else if (combiner != MPI_COMBINER_NAMED) {
    return MPI_DATATYPE_NULL;
  }
  const TypeInfo whole = type_info(block.type), unit = type_info(element);
  const bool dense = unit.size > 0 && unit.extent == unit.size && unit.true_lb == 0 && whole.extent == whole.size &&
                     whole.true_lb == 0;
  return dense ? element : MPI_DATATYPE_NULL;
}

// A run of bytes: where it starts (absolute, or relative to an element's
// address) and how long it is.
struct Run {
  MPI_Aint address;
  MPI_Aint bytes;
};

// Appends a run, merged with the previous one where they touch.
void append_run(std::vector<Run>& runs, MPI_Aint address, MPI_Aint bytes) {
  if (bytes <= 0) return;
  if (!runs.empty() && runs.back().address + runs.back().bytes == address) runs.back().bytes += bytes;
  else runs.push_back({address, bytes});
}

// A datatype's constructor arguments; frees the derived types MPI hands out.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  explicit Contents(MPI_Datatype type) {
    int integers = 0, addresses = 0, count = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(type, &integers, &addresses, &count, &combiner));
    if (combiner == MPI_COMBINER_NAMED) return;
    ints.resize(static_cast<std::size_t>(integers));
    addrs.resize(static_cast<std::size_t>(addresses));
    types.resize(static_cast<std::size_t>(count));
    ISO_MPI_CHECK(MPI_Type_get_contents(type, integers, addresses, count, ints.data(), addrs.data(), types.data()));
  }
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
  ~Contents() {
    for (MPI_Datatype& type : types) {
      int integers = 0, addresses = 0, count = 0, kind = MPI_COMBINER_NAMED;
      MPI_Type_get_envelope(type, &integers, &addresses, &count, &kind);
      if (kind != MPI_COMBINER_NAMED) MPI_Type_free(&type);
    }
  }
};

// The byte runs one element of a datatype covers, relative to its address,
// in type-map order (the order MPI packs them), touching runs merged. Lets
// small messages and local moves be plain memcpy's of runs computed once at
// init instead of a walk of MPI's datatype engine at every start. False for
// layouts not looked into (darray, Fortran types, named types with holes) or
// more than `budget` runs: callers keep the datatype path.
class Flattener {
public:
  explicit Flattener(std::size_t budget) : budget_(budget) {}

  bool runs_of(MPI_Datatype type, std::vector<Run>& out, int depth = 0) {
    if (depth > 32) return false;
    const Contents c(type);
    // `copies` consecutive elements of `old` at each displacement.
    auto place = [&](MPI_Datatype old, const std::vector<std::pair<MPI_Aint, long>>& blocks) {
      std::vector<Run> pattern;
      if (!runs_of(old, pattern, depth + 1)) return false;
      const MPI_Aint extent = type_info(old).extent;
      const bool dense = pattern.size() == 1 && pattern[0].address == 0 && pattern[0].bytes == extent;
      for (const auto& [displacement, copies] : blocks) {
        if (dense) {
          append_run(out, displacement, extent * copies);
        } else {
          for (long k = 0; k < copies; ++k)
            for (const Run& run : pattern) append_run(out, displacement + k * extent + run.address, run.bytes);
        }
        if (out.size() > budget_) return false;
      }
      return true;
    };
    std::vector<std::pair<MPI_Aint, long>> where;
    const int n = c.ints.empty() ? 0 : c.ints[0];
    switch (c.combiner) {
      case MPI_COMBINER_NAMED: {
        const TypeInfo info = type_info(type);
        if (info.size != info.extent || info.true_lb != 0) return false;
        append_run(out, 0, info.size);
        return out.size() <= budget_;
      }
      case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED:
        return place(c.types[0], {{0, 1}});
      case MPI_COMBINER_CONTIGUOUS:
        return place(c.types[0], {{0, n}});
      case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR: {
        const MPI_Aint stride = c.combiner == MPI_COMBINER_VECTOR
                                    ? static_cast<MPI_Aint>(c.ints[2]) * type_info(c.types[0]).extent
                                    : c.addrs[0];
        for (int i = 0; i < n; ++i) where.emplace_back(i * stride, c.ints[1]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED: {
        const MPI_Aint extent = type_info(c.types[0]).extent;
        for (int i = 0; i < n; ++i)
          where.emplace_back(c.combiner == MPI_COMBINER_INDEXED ? c.ints[1 + n + i] * extent : c.addrs[i],
                             c.ints[1 + i]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK: {
        const MPI_Aint extent = type_info(c.types[0]).extent;
        for (int i = 0; i < n; ++i)
          where.emplace_back(c.combiner == MPI_COMBINER_INDEXED_BLOCK ? c.ints[2 + i] * extent : c.addrs[i],
                             c.ints[1]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_STRUCT:
        for (int i = 0; i < n; ++i)
          if (!place(c.types[i], {{c.addrs[i], c.ints[1 + i]}})) return false;
        return true;
      case MPI_COMBINER_SUBARRAY: {
        const int* sizes = &c.ints[1];
        const int* subsizes = &c.ints[1 + n];
        const int* starts = &c.ints[1 + 2 * n];
        const bool c_order = c.ints[1 + 3 * n] == MPI_ORDER_C;
        if (n == 0) return true;
        // Dimensions from slowest to fastest varying; rows along the fastest.
        std::vector<int> dim(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k) dim[static_cast<std::size_t>(k)] = c_order ? k : n - 1 - k;
        std::vector<MPI_Aint> stride(static_cast<std::size_t>(n));
        MPI_Aint step = type_info(c.types[0]).extent;
        for (int k = n - 1; k >= 0; --k) {
          stride[static_cast<std::size_t>(k)] = step;
          step *= sizes[dim[static_cast<std::size_t>(k)]];
        }
        for (int k = 0; k < n; ++k)
          if (subsizes[k] == 0) return true;
        std::vector<int> index(static_cast<std::size_t>(n), 0);
        const int fast = dim[static_cast<std::size_t>(n - 1)];
        while (true) {
          MPI_Aint at = 0;
          for (int k = 0; k < n; ++k)
            at += static_cast<MPI_Aint>(starts[dim[static_cast<std::size_t>(k)]] + index[static_cast<std::size_t>(k)]) *
                  stride[static_cast<std::size_t>(k)];
          where.emplace_back(at, subsizes[fast]);
          if (where.size() > budget_) return false;
          int k = n - 2;
          while (k >= 0 && ++index[static_cast<std::size_t>(k)] == subsizes[dim[static_cast<std::size_t>(k)]])
            index[static_cast<std::size_t>(k--)] = 0;
          if (k < 0) break;
        }
        return place(c.types[0], where);
      }
      default:
        return false;
    }
  }

private:
  std::size_t budget_;
};

// What build() asks of a block's datatype, looked up once per datatype (a
// schedule has thousands of entries but few distinct types).
class TypeFacts {
public:
  MPI_Datatype element(const BlockDesc& block) { return of(block).element; }
  long bytes(const BlockDesc& block) { return static_cast<long>(block.count) * of(block).size; }
  /// The one predefined type the block is made of (MPI_DATATYPE_NULL: several).
  MPI_Datatype leaf(const BlockDesc& block) {
    Facts& facts = of(block);
    if (!facts.leaf_known) facts.leaf = single_leaf_type(block.type), facts.leaf_known = true;
    return facts.leaf;
  }
  /// Appends the block's byte runs at their absolute addresses; false when
  /// its layout is not flattened (or has more than run_budget runs).
  bool append_runs(const BlockDesc& block, std::vector<Run>& out) {
    Facts& facts = of(block);
    if (!facts.runs_known) {
      Flattener flattener(run_budget);
      facts.runs_ok = flattener.runs_of(block.type, facts.runs);
      facts.extent = type_info(block.type).extent;
      facts.runs_known = true;
    }
    if (!facts.runs_ok) return false;
    for (long k = 0; k < block.count; ++k) {
      for (const Run& run : facts.runs) append_run(out, block.address + k * facts.extent + run.address, run.bytes);
      if (out.size() > run_budget) return false;
    }
    return true;
  }
  static constexpr std::size_t run_budget = 16384;

private:
  struct Facts {
    MPI_Datatype type = MPI_DATATYPE_NULL, element = MPI_DATATYPE_NULL;
    int size = 0;
    bool leaf_known = false, runs_known = false, runs_ok = false;
    MPI_Datatype leaf = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0;
    std::vector<Run> runs;
  };
  Facts& of(const BlockDesc& block) {
    for (Facts& known : known_)
      if (known.type == block.type) return known;
    int size = 0;
    ISO_MPI_CHECK(MPI_Type_size(block.type, &size));
    Facts facts;
    facts.type = block.type, facts.element = contiguous_element(block), facts.size = size;
    known_.push_back(std::move(facts));
    return known_.back();
  }
  std::deque<Facts> known_;  // stable references
};

}  // namespace

bool mpi_pairs_repeated_edges_in_order() {
  static const bool in_order = [] {
    const int self[2] = {0, 0};
    MPI_Comm graph = MPI_COMM_NULL;
    ISO_MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 2, self, MPI_UNWEIGHTED, 2, self, MPI_UNWEIGHTED,
                                                 MPI_INFO_NULL, 0, &graph));
    const int send[2] = {1, 2};
    int recv[2] = {0, 0};
    const int rc = MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, graph);
    MPI_Comm_free(&graph);
    ISO_MPI_CHECK(rc);
    return recv[0] == 1 && recv[1] == 2;
  }();
  return in_order;
}

namespace {

// Algorithm::mpi: the library's neighborhood collective over an adjacent
// distributed graph with one edge per distinct existing neighbor. A neighbor
// in several directions (tiny tori) gets one message carrying its blocks in
// block order, which sender and receiver list alike (x sends block i to
// x + v_i, which receives block i from x). Repeated edges would leave the
// pairing of those messages to the MPI library, and libraries differ: MPICH
// 4.0.2 pairs them in reverse (docs/mpich.md).
std::unique_ptr<Operation::Impl> build_native(const Neighborhood& neighborhood, Collective collective,
                                              const Buffers& buffers) {
  auto impl = std::make_unique<Operation::Impl>();
  impl->native = true;
  impl->schedule.algorithm = Algorithm::mpi;
  impl->schedule.collective = collective;
  impl->schedule.num_blocks = neighborhood.size();
  struct Edge {
    int rank;
    std::vector<const BlockDesc*> blocks;
  };
  std::vector<Edge> out, in;
  auto add = [](std::vector<Edge>& edges, int rank, const BlockDesc* block) {
    if (rank < 0) return;
    for (Edge& edge : edges)
      if (edge.rank == rank) return edge.blocks.push_back(block);
    edges.push_back(Edge{rank, {block}});
  };
  for (int i = 0; i < neighborhood.size(); ++i) {
    add(out, neighborhood.target_rank(i), &buffers.send[collective == Collective::alltoall ? i : 0]);
    add(in, neighborhood.source_rank(i), &buffers.recv[i]);
  }
  // The caller may free its datatypes after init (as for any persistent MPI
  // operation), but the library's collective reads them at every start: keep
  // types of our own (a duplicate, or a struct of a partner's blocks).
  Operation::Impl& op = *impl;
  auto describe = [&op](const Edge& edge, std::vector<int>& counts, std::vector<MPI_Aint>& displs,
                        std::vector<MPI_Datatype>& types) {
    MPI_Datatype own = MPI_DATATYPE_NULL;
    if (edge.blocks.size() == 1) {
      ISO_MPI_CHECK(MPI_Type_dup(edge.blocks[0]->type, &own));
      op.types.push_back(own);
      counts.push_back(edge.blocks[0]->count);
      displs.push_back(edge.blocks[0]->address);
    } else {
      std::vector<int> lengths;
      std::vector<MPI_Aint> addresses;
      std::vector<MPI_Datatype> parts;
      for (const BlockDesc* block : edge.blocks) {
        lengths.push_back(block->count);
        addresses.push_back(block->address);
        parts.push_back(block->type);
      }
      ISO_MPI_CHECK(MPI_Type_create_struct(static_cast<int>(parts.size()), lengths.data(), addresses.data(),
                                           parts.data(), &own));
      op.types.push_back(own);  // freed with the operation, committed or not
      ISO_MPI_CHECK(MPI_Type_commit(&own));
      counts.push_back(1);
      displs.push_back(0);
    }
    types.push_back(own);
  };
  std::vector<int> sources, destinations;
  for (const Edge& edge : out) {
    destinations.push_back(edge.rank);
    describe(edge, impl->send_counts, impl->send_displs, impl->send_types);
  }
  for (const Edge& edge : in) {
    sources.push_back(edge.rank);
    describe(edge, impl->recv_counts, impl->recv_displs, impl->recv_types);
  }
  // MPICH before 4.1 copies the send arrays of a neighborhood alltoallw by
  // the indegree and the receive arrays by the outdegree: wrong counts and
  // heap corruption where the two differ (meshes). There the shorter side is
  // padded with empty MPI_PROC_NULL edges, which MPI skips.
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
  while (destinations.size() < sources.size()) {
    destinations.push_back(MPI_PROC_NULL);
    impl->send_counts.push_back(0), impl->send_displs.push_back(0), impl->send_types.push_back(MPI_BYTE);
  }
  while (sources.size() < destinations.size()) {
    sources.push_back(MPI_PROC_NULL);
    impl->recv_counts.push_back(0), impl->recv_displs.push_back(0), impl->recv_types.push_back(MPI_BYTE);
  }
#endif
  MPI_Comm graph = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Dist_graph_create_adjacent(neighborhood.comm(), static_cast<int>(sources.size()),
                                               sources.data(), MPI_UNWEIGHTED,
                                               static_cast<int>(destinations.size()), destinations.data(),
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
  impl->graph = Comm(graph);
  impl->requests.assign(1, MPI_REQUEST_NULL);
  impl->step_begin = {0, 1};
  impl->move_begin = {0, 0};
  impl->unpack_begin = {0, 0};
#if MPI_VERSION >= 4
  ISO_MPI_CHECK(MPI_Neighbor_alltoallw_init(MPI_BOTTOM, impl->send_counts.data(), impl->send_displs.data(),
                                            impl->send_types.data(), MPI_BOTTOM, impl->recv_counts.data(),
                                            impl->recv_displs.data(), impl->recv_types.data(), impl->graph.get(),
                                            MPI_INFO_NULL, &impl->requests[0]));
  impl->native_persistent = true;
#endif
  return impl;
}

// Algorithm::automatic: the cheapest algorithm under the cost model, the same
// on every rank (predictions are maxed over ranks; mesh schedules differ).
Algorithm choose_algorithm(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers) {
  const CostModel& model = CostModel::for_comm(neighborhood.comm());
  BlockBytes bytes;
  for (const BlockDesc& block : buffers.send) bytes.send.push_back(block_bytes(block));
  for (const BlockDesc& block : buffers.recv) bytes.recv.push_back(block_bytes(block));
  const Algorithm candidates[] = {Algorithm::linear, Algorithm::torus, Algorithm::direct, Algorithm::mpi};
  double predicted[4];
  for (int a = 0; a < 3; ++a)
    predicted[a] = predict_execution_seconds(model, neighborhood.schedule(candidates[a], collective), bytes,
                                             neighborhood.rank());
  // Neighbors that coincide (tiny tori): mpi merges their blocks into one
  // message per partner, which the model (a message per block) does not
  // price, so it is left out there.
  std::vector<int> targets;
  for (int i = 0; i < neighborhood.size(); ++i)
    if (neighborhood.target_rank(i) >= 0) targets.push_back(neighborhood.target_rank(i));
  std::sort(targets.begin(), targets.end());
  const bool distinct = std::adjacent_find(targets.begin(), targets.end()) == targets.end();
  predicted[3] = distinct ? predict_native_seconds(model, neighborhood.size(), bytes) : 1e300;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, predicted, 4, MPI_DOUBLE, MPI_MAX, neighborhood.comm()));
  int best = 0;
  for (int a = 1; a < 4; ++a)
    if (predicted[a] < predicted[best]) best = a;
  return candidates[best];
}

// Builds the persistent requests of every round plus the final local copies.
std::unique_ptr<Operation::Impl> build(const Neighborhood& neighborhood, Schedule schedule, Buffers buffers) {
  auto impl = std::make_unique<Operation::Impl>();
  impl->schedule = std::move(schedule);
  const Schedule& plan = impl->schedule;
  // Tags base + round index (base + global rounds: the local copies) keep
  // this operation's messages apart from every other's on the shared
  // communicator; a duplicate only when the tag space is spent.
  int tag_base = neighborhood.reserve_tags(plan.num_global_rounds + 1);
  impl->comm = neighborhood.comm();
  if (tag_base < 0) {
    MPI_Comm dup = MPI_COMM_NULL;
    ISO_MPI_CHECK(MPI_Comm_dup(neighborhood.comm(), &dup));
    impl->own = Comm(dup);
    impl->comm = dup;
    ISO_MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    tag_base = 0;
  }

  // Temporary slots hold block i in transit. Where its signature is n copies
  // of one predefined type (every halo block, however scattered), the slot is
  // n contiguous elements: compact, and independent of where the user's
  // arrays lie. Otherwise it takes the receive block's layout, sized by its
  // true extent and offset by its true lower bound.
  const std::size_t unit = sizeof(std::max_align_t);
  std::vector<BlockDesc> shapes(plan.num_blocks);
  std::vector<std::size_t> slot_units(plan.num_blocks, 0);
  std::vector<MPI_Aint> slot_lowest(plan.num_blocks, 0);
  std::size_t total_units = 0;
  for (int i = 0; i < plan.num_blocks; ++i) {
    if (!plan.uses_temp[i] && !plan.uses_temp2[i]) continue;
    shapes[i] = staging_shape(buffers.recv[i]);
    const auto [lowest, span] = true_span(type_info(shapes[i].type), shapes[i].count);
    slot_units[i] = (static_cast<std::size_t>(span) + unit - 1) / unit;
    slot_lowest[i] = lowest;
    total_units += slot_units[i] * static_cast<std::size_t>(plan.uses_temp[i] + plan.uses_temp2[i]);
  }
  impl->scratch.resize(std::max<std::size_t>(1, total_units));
  MPI_Aint next = address_of(impl->scratch.data());
  for (int i = 0; i < plan.num_blocks; ++i) {
    if (plan.uses_temp[i]) {
      buffers.temp[i] = {next - slot_lowest[i], shapes[i].count, shapes[i].type};
      next += static_cast<MPI_Aint>(slot_units[i] * unit);
    }
    if (plan.uses_temp2[i]) {
      buffers.temp2[i] = {next - slot_lowest[i], shapes[i].count, shapes[i].type};
      next += static_cast<MPI_Aint>(slot_units[i] * unit);
    }
  }

  int tag_ub_flag = 0;
  int* tag_ub = nullptr;
  ISO_MPI_CHECK(MPI_Comm_get_attr(impl->comm, MPI_TAG_UB, &tag_ub, &tag_ub_flag));
  const long tag_limit = (tag_ub_flag && tag_ub) ? *tag_ub : 32767;

  // Below the shared-memory eager limit (Open MPI's vader: 4 KiB with its
  // header) a packed image beat the datatype by 1.1-2x in
  // isostencil-bench-pack; from 4 KiB up, where both go rendezvous, the
  // datatype was 1.3-2x faster (docs/benchmarks.md, "Small messages").
  const long pack_limit = 4000;
  TypeFacts facts;
  auto add_messages = [&](const std::vector<BlockRef>& send, int send_rank, const std::vector<BlockRef>& recv,
                          int recv_rank, int round_index) {
    // Wraps only on a private duplicate with more rounds than tags; messages
    // of one pair are then matched in posting order, the same on both sides.
    const int tag = static_cast<int>((tag_base + static_cast<long>(round_index)) % (tag_limit + 1));
    // Messages made of one predefined type travel as plain elements: a
    // single run of bytes from its place, several runs (up to pack_limit
    // bytes; runs flattened from the block datatypes at init) through a
    // contiguous image that the step fills before it starts (sends) or
    // empties once done (receives): for small messages MPI's datatype
    // engine costs more per run than these memcpy's. The message keeps its
    // type signature, n elements of the blocks' one predefined type, as the
    // datatype it replaces, so either side may take either path.
    auto plain = [&](const std::vector<BlockRef>& entries, bool sending) -> bool {
      long total = 0;
      int pieces = 0;
      bool contiguous = true;
      MPI_Datatype element = MPI_DATATYPE_NULL;
      for (BlockRef ref : entries) {
        const BlockDesc& block = buffers.at(ref);
        const long bytes = facts.bytes(block);
        if (bytes == 0) continue;
        MPI_Datatype leaf = facts.element(block);
        if (leaf == MPI_DATATYPE_NULL) {
          contiguous = false;
          leaf = facts.leaf(block);
        }
        if (leaf == MPI_DATATYPE_NULL || (element != MPI_DATATYPE_NULL && leaf != element)) return false;
        element = leaf;
        total += bytes;
        ++pieces;
      }
      if (pieces == 0 || ((pieces > 1 || !contiguous) && total > pack_limit)) return false;
      int element_size = 1;
      ISO_MPI_CHECK(MPI_Type_size(element, &element_size));
      if (element_size <= 0 || total % element_size != 0) return false;
      std::vector<Run> runs;
      for (BlockRef ref : entries) {
        const BlockDesc& block = buffers.at(ref);
        if (facts.bytes(block) == 0) continue;
        if (facts.element(block) != MPI_DATATYPE_NULL) append_run(runs, block.address, facts.bytes(block));
        else if (!facts.append_runs(block, runs)) return false;
      }
      const int elements = static_cast<int>(total / element_size);
      const int peer = sending ? send_rank : recv_rank;
      void* where = nullptr;
      if (runs.size() == 1) {
        where = reinterpret_cast<void*>(runs[0].address);
      } else {
        impl->packed.emplace_back(static_cast<std::size_t>(total));
        char* image = impl->packed.back().data();
        where = image;
        MPI_Aint at = address_of(image);
        for (const Run& run : runs) {
          LocalMove m;
          m.raw = true, m.bytes = static_cast<std::size_t>(run.bytes);
          m.from = sending ? run.address : at;
          m.to = sending ? at : run.address;
          (sending ? impl->moves : impl->unpacks).push_back(m);
          at += run.bytes;
        }
      }
      impl->requests.push_back(MPI_REQUEST_NULL);
      if (sending)
        ISO_MPI_CHECK(MPI_Send_init(where, elements, element, peer, tag, impl->comm, &impl->requests.back()));
      else
        ISO_MPI_CHECK(MPI_Recv_init(where, elements, element, peer, tag, impl->comm, &impl->requests.back()));
      return true;
    };
    if (recv_rank >= 0 && plain(recv, false)) recv_rank = -1;
    if (send_rank >= 0 && plain(send, true)) send_rank = -1;
    // Receive first so that the matching send finds it posted.
    MPI_Datatype recv_type = recv_rank >= 0 ? message_type(buffers, recv) : MPI_DATATYPE_NULL;
    if (recv_type != MPI_DATATYPE_NULL) {
      impl->types.push_back(recv_type);
      impl->requests.push_back(MPI_REQUEST_NULL);
      ISO_MPI_CHECK(MPI_Recv_init(MPI_BOTTOM, 1, recv_type, recv_rank, tag, impl->comm, &impl->requests.back()));
    }
    MPI_Datatype send_type = send_rank >= 0 ? message_type(buffers, send) : MPI_DATATYPE_NULL;
    if (send_type != MPI_DATATYPE_NULL) {
      impl->types.push_back(send_type);
      impl->requests.push_back(MPI_REQUEST_NULL);
      ISO_MPI_CHECK(MPI_Send_init(MPI_BOTTOM, 1, send_type, send_rank, tag, impl->comm, &impl->requests.back()));
    }
  };
  // Entry i of `from` lands in entry i of `to`, both in this process, as
  // copies; false (nothing added) where a pair's sizes differ, so that MPI
  // reports the mismatch as for any message.
  std::size_t bounce_bytes = 0;
  std::size_t merge_floor = 0;  // moves before this index stay as they are
  // A move between layouts that flatten: one memcpy per pair of runs, in
  // type-map order on both sides (what MPI_Pack then MPI_Unpack would do,
  // in one pass and without the datatype engine).
  auto flat_move = [&](const BlockDesc& source, const BlockDesc& target, std::size_t bytes) {
    std::vector<Run> from, to;
    if (!facts.append_runs(source, from) || !facts.append_runs(target, to)) return false;
    std::size_t total_from = 0, total_to = 0;
    for (const Run& run : from) total_from += static_cast<std::size_t>(run.bytes);
    for (const Run& run : to) total_to += static_cast<std::size_t>(run.bytes);
    if (total_from != bytes || total_to != bytes) return false;
    std::size_t a = 0, b = 0;
    MPI_Aint done_a = 0, done_b = 0;  // bytes of from[a] / to[b] already paired
    while (a < from.size() && b < to.size()) {
      const MPI_Aint length = std::min(from[a].bytes - done_a, to[b].bytes - done_b);
      const MPI_Aint source_at = from[a].address + done_a, target_at = to[b].address + done_b;
      // Merge with the step's previous copy where both sides continue it.
      const bool merge = impl->moves.size() > std::max(merge_floor, static_cast<std::size_t>(impl->move_begin.back())) &&
                         impl->moves.back().raw &&
                         impl->moves.back().from + static_cast<MPI_Aint>(impl->moves.back().bytes) == source_at &&
                         impl->moves.back().to + static_cast<MPI_Aint>(impl->moves.back().bytes) == target_at;
      if (merge) {
        impl->moves.back().bytes += static_cast<std::size_t>(length);
      } else {
        LocalMove m;
        m.raw = true, m.from = source_at, m.to = target_at, m.bytes = static_cast<std::size_t>(length);
        impl->moves.push_back(m);
      }
      if ((done_a += length) == from[a].bytes) ++a, done_a = 0;
      if ((done_b += length) == to[b].bytes) ++b, done_b = 0;
    }
    return true;
  };
  auto add_moves = [&](const std::vector<BlockRef>& from, const std::vector<BlockRef>& to) {
    const std::size_t before = impl->moves.size();
    merge_floor = before;
    for (std::size_t k = 0; k < from.size() && k < to.size(); ++k) {
      const BlockDesc& source = buffers.at(from[k]);
      const BlockDesc& target = buffers.at(to[k]);
      const long bytes = facts.bytes(source);
      if (bytes != facts.bytes(target) || from.size() != to.size()) {
        impl->moves.resize(before);
        return false;
      }
      if (bytes == 0) continue;
      LocalMove m;
      m.from = source.address, m.to = target.address;
      m.bytes = static_cast<std::size_t>(bytes);
      m.raw = facts.element(source) != MPI_DATATYPE_NULL && facts.element(target) != MPI_DATATYPE_NULL;
      if (!m.raw && flat_move(source, target, static_cast<std::size_t>(bytes))) continue;
      if (!m.raw) {
        // Our own types (the caller may free theirs after init), each side one
        // block placed relative to a non-null anchor, the operation itself:
        // blocks described from MPI_BOTTOM have address 0, and MPICH's
        // MPI_Pack/MPI_Unpack reject a null buffer.
        const MPI_Aint anchor = address_of(impl.get());
        auto anchored = [&](const BlockDesc& block, MPI_Datatype& type) {
          const MPI_Aint displacement = block.address - anchor;
          ISO_MPI_CHECK(MPI_Type_create_hindexed(1, &block.count, &displacement, block.type, &type));
          impl->types.push_back(type);
          ISO_MPI_CHECK(MPI_Type_commit(&type));
        };
        // A contiguous side keeps its address and no type (see move()).
        const bool source_flat = facts.element(source) != MPI_DATATYPE_NULL;
        const bool target_flat = facts.element(target) != MPI_DATATYPE_NULL;
        if (!source_flat) anchored(source, m.from_type), m.from = anchor, m.from_count = 1;
        if (!target_flat) anchored(target, m.to_type), m.to = anchor, m.to_count = 1;
        if (!source_flat && !target_flat) {
          int packed = 0;
          ISO_MPI_CHECK(MPI_Pack_size(source.count, source.type, impl->comm, &packed));
          bounce_bytes = std::max(bounce_bytes, static_cast<std::size_t>(packed));
        }
      }
      impl->moves.push_back(m);
    }
    return true;
  };
  const int self = neighborhood.rank();
  for (const ExecutionStep& step : execution_steps(plan)) {
    impl->step_begin.push_back(static_cast<int>(impl->requests.size()));
    impl->move_begin.push_back(static_cast<int>(impl->moves.size()));
    impl->unpack_begin.push_back(static_cast<int>(impl->unpacks.size()));
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = plan.rounds[static_cast<std::size_t>(r)];
      if (is_local_round(round, self) && add_moves(round.send, round.recv)) continue;
      add_messages(round.send, round.send_rank, round.recv, round.recv_rank, round.index);
    }
    if (step.copies) {
      std::vector<BlockRef> from, to;
      for (const LocalCopy& copy : plan.copies) from.push_back(copy.from), to.push_back(copy.to);
      if (!add_moves(from, to)) add_messages(from, self, to, self, plan.num_global_rounds);
    }
    // A step with nothing to do is left out.
    if (impl->step_begin.back() == static_cast<int>(impl->requests.size()) &&
        impl->move_begin.back() == static_cast<int>(impl->moves.size())) {
      impl->step_begin.pop_back();
      impl->move_begin.pop_back();
      impl->unpack_begin.pop_back();
    }
  }
  impl->bounce.resize(bounce_bytes);
  impl->move_begin.push_back(static_cast<int>(impl->moves.size()));
  impl->unpack_begin.push_back(static_cast<int>(impl->unpacks.size()));
  impl->step_begin.push_back(static_cast<int>(impl->requests.size()));
  return impl;
}


// Local argument checks common to every collective; empty when fine.
std::string check_blocks(const std::vector<BlockDesc>& blocks, const char* side) {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockDesc& block = blocks[i];
    auto name = [&] { return std::string(side) + " block " + std::to_string(i); };
    if (block.count < 0) return name() + ": count is negative (" + std::to_string(block.count) + ")";
    if (block.type == MPI_DATATYPE_NULL) return name() + ": datatype is MPI_DATATYPE_NULL";
  }
  return {};
}

std::string check_buffer(const void* buffer, const std::vector<BlockDesc>& blocks, const char* name) {
  if (buffer == MPI_IN_PLACE) return std::string(name) + " is MPI_IN_PLACE, which is not supported";
  if (buffer != nullptr) return {};
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (block_bytes(blocks[i]) > 0)
      return std::string(name) + " is null but block " + std::to_string(i) + " has " +
             std::to_string(block_bytes(blocks[i])) + " bytes";
  return {};
}

// Reports, on every rank, a send block whose size differs from the receive
// block it pairs with at the target (straightforward exchange of the sizes).
void verify_block_sizes(const Neighborhood& neighborhood, const Buffers& buffers, const char* where) {
  const int s = neighborhood.size();
  std::vector<long> mine(2 * static_cast<std::size_t>(s)), theirs(2 * static_cast<std::size_t>(s), -1);
  for (int i = 0; i < s; ++i) {
    mine[2 * i] = block_bytes(buffers.send[i]);
    mine[2 * i + 1] = block_bytes(buffers.recv[i]);
  }
  Operation exchange = alltoall_init(neighborhood, mine.data(), 2, MPI_LONG, theirs.data(), 2, MPI_LONG,
                                     OperationOptions{Algorithm::linear, false});
  exchange.run();
  std::string error;
  for (int i = 0; i < s && error.empty(); ++i) {
    if (neighborhood.source_rank(i) < 0) continue;
    if (theirs[2 * i] != mine[2 * i + 1])
      error = "block " + std::to_string(i) + ": rank " +
              std::to_string(neighborhood.source_rank(i)) + " sends " + std::to_string(theirs[2 * i]) +
              " bytes but this rank receives " + std::to_string(mine[2 * i + 1]);
    else if (theirs[2 * i + 1] != mine[2 * i + 1])
      error = "block " + std::to_string(i) + ": receive size " + std::to_string(mine[2 * i + 1]) +
              " differs from " + std::to_string(theirs[2 * i + 1]) + " at rank " +
              std::to_string(neighborhood.source_rank(i)) +
              " (block sizes may differ only along dimensions where the offset is zero)";
  }
  agree_on_errors(neighborhood.comm(), where, error);
}

Operation init(const char* where, Collective collective, const Neighborhood& neighborhood, const void* sendbuf,
               void* recvbuf, Buffers buffers, std::string error, const OperationOptions& options,
               bool irregular, bool absolute_addresses = false) {
  if (error.empty()) error = check_blocks(buffers.send, "send");
  if (error.empty()) error = check_blocks(buffers.recv, "receive");
  // alltoallw may address blocks absolutely from MPI_BOTTOM (a null pointer).
  if (error.empty() && !absolute_addresses) error = check_buffer(sendbuf, buffers.send, "sendbuf");
  if (error.empty() && !absolute_addresses) error = check_buffer(recvbuf, buffers.recv, "recvbuf");
  if (error.empty() && !irregular && !buffers.send.empty() && !buffers.recv.empty() &&
      block_bytes(buffers.send[0]) != block_bytes(buffers.recv[0]))
    error = "a send block has " + std::to_string(block_bytes(buffers.send[0])) + " bytes but a receive block has " +
            std::to_string(block_bytes(buffers.recv[0])) + " (type signatures must match)";
  agree_on_errors(neighborhood.comm(), where, error);
  if (irregular && options.verify_signatures) verify_block_sizes(neighborhood, buffers, where);
  buffers.temp.resize(neighborhood.size());
  buffers.temp2.resize(neighborhood.size());
  const Algorithm algorithm = options.algorithm == Algorithm::automatic
                                  ? choose_algorithm(neighborhood, collective, buffers)
                                  : options.algorithm;
  if (algorithm == Algorithm::mpi) return make_operation(build_native(neighborhood, collective, buffers));
  return make_operation(build(neighborhood, neighborhood.schedule(algorithm, collective), std::move(buffers)));
}

Operation regular_init(const char* where, Collective collective, const Neighborhood& neighborhood,
                       const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, const OperationOptions& options) {
  const int s = neighborhood.size();
  std::string error;
  if (sendcount < 0) error = "sendcount is negative (" + std::to_string(sendcount) + ")";
  else if (recvcount < 0) error = "recvcount is negative (" + std::to_string(recvcount) + ")";
  else if (sendtype == MPI_DATATYPE_NULL) error = "sendtype is MPI_DATATYPE_NULL";
  else if (recvtype == MPI_DATATYPE_NULL) error = "recvtype is MPI_DATATYPE_NULL";
  Buffers buffers;
  if (error.empty()) {
    const TypeInfo send_info = type_info(sendtype);
    const TypeInfo recv_info = type_info(recvtype);
    const int send_blocks = collective == Collective::alltoall ? s : 1;
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    for (int i = 0; i < send_blocks; ++i)
      buffers.send.push_back({MPI_Aint_add(send_base, static_cast<MPI_Aint>(i) * sendcount * send_info.extent),
                              sendcount, sendtype});
    for (int i = 0; i < s; ++i)
      buffers.recv.push_back({MPI_Aint_add(recv_base, static_cast<MPI_Aint>(i) * recvcount * recv_info.extent),
                              recvcount, recvtype});
  }
  return init(where, collective, neighborhood, sendbuf, recvbuf, std::move(buffers), error, options, false);
}

}  // namespace

Operation make_operation(std::unique_ptr<Operation::Impl> impl) { return Operation(std::move(impl)); }

Operation::Operation() = default;
Operation::Operation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Operation::Operation(Operation&&) noexcept = default;
Operation& Operation::operator=(Operation&&) noexcept = default;
Operation::~Operation() = default;

void Operation::start() {
  if (!impl_) throw Error("iso::Operation::start: the operation is empty (moved from or default-constructed)");
  if (impl_->current >= 0) throw Error("iso::Operation::start: the operation is already active; wait() first");
  impl_->begin();
}

bool Operation::test() {
  if (!impl_) throw Error("iso::Operation::test: the operation is empty");
  const bool done = impl_->advance(false);
  Impl::advance_others(impl_.get());
  return done;
}

void Operation::wait() {
  if (!impl_) throw Error("iso::Operation::wait: the operation is empty");
  impl_->complete();
}

bool Operation::active() const { return impl_ && impl_->current >= 0; }

const Schedule& Operation::schedule() const {
  if (!impl_) throw Error("iso::Operation::schedule: the operation is empty");
  return impl_->schedule;
}

Algorithm Operation::algorithm() const { return schedule().algorithm; }

Operation alltoall_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, const OperationOptions& options) {
  return regular_init("iso::alltoall_init", Collective::alltoall, neighborhood, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, options);
}

Operation allgather_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, const OperationOptions& options) {
  return regular_init("iso::allgather_init", Collective::allgather, neighborhood, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, options);
}

Operation alltoallv_init(const Neighborhood& neighborhood, const void* sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, const OperationOptions& options) {
  const int s = neighborhood.size();
  std::string error;
  if (s > 0 && (!sendcounts || !sdispls || !recvcounts || !rdispls))
    error = "counts and displacement arrays must not be null";
  else if (sendtype == MPI_DATATYPE_NULL) error = "sendtype is MPI_DATATYPE_NULL";
  else if (recvtype == MPI_DATATYPE_NULL) error = "recvtype is MPI_DATATYPE_NULL";
  Buffers buffers;
  if (error.empty()) {
    const MPI_Aint send_extent = type_info(sendtype).extent;
    const MPI_Aint recv_extent = type_info(recvtype).extent;
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    for (int i = 0; i < s; ++i) {
      buffers.send.push_back({MPI_Aint_add(send_base, static_cast<MPI_Aint>(sdispls[i]) * send_extent), sendcounts[i],
                              sendtype});
      buffers.recv.push_back({MPI_Aint_add(recv_base, static_cast<MPI_Aint>(rdispls[i]) * recv_extent), recvcounts[i],
                              recvtype});
    }
  }
  return init("iso::alltoallv_init", Collective::alltoall, neighborhood, sendbuf, recvbuf, std::move(buffers), error,
              options, true);
}

Operation alltoallw_init(const Neighborhood& neighborhood, const void* sendbuf, const int sendcounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                         const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                         const OperationOptions& options) {
  const int s = neighborhood.size();
  std::string error;
  if (s > 0 && (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes))
    error = "counts, displacement and datatype arrays must not be null";
  Buffers buffers;
  if (error.empty()) {
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    for (int i = 0; i < s; ++i) {
      buffers.send.push_back({MPI_Aint_add(send_base, sdispls[i]), sendcounts[i], sendtypes[i]});
      buffers.recv.push_back({MPI_Aint_add(recv_base, rdispls[i]), recvcounts[i], recvtypes[i]});
    }
  }
  return init("iso::alltoallw_init", Collective::alltoall, neighborhood, sendbuf, recvbuf, std::move(buffers), error,
              options, true, true);
}

}  // namespace iso
