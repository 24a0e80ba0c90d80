// Shared machinery of the MPI tests of the isomorphic collectives: block
// layouts described by (derived) datatypes, buffers filled with values that
// name their origin, the expected result computed independently of the
// library, and the MPI library's own neighborhood collectives as a reference.
//
// Every function here that takes a communicator is collective over it and is
// called by every rank in the same order; no function returns early on one
// rank only.
#pragma once

#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/neighborhood.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace iso_collectives_test {

int world_rank();
int world_size();
/// Logical AND of `ok` over MPI_COMM_WORLD.
bool all_ranks(bool ok);
/// MPI_Dims_create of the world size over `d` dimensions.
std::vector<int> dims_create(int d);
/// Bitwise OR of `bits` over MPI_COMM_WORLD.
std::uint64_t any_rank_bits(std::uint64_t bits);
/// Environment variable as an integer, or `fallback`.
int env_int(const char* name, int fallback);

// ---------------------------------------------------------------------------
// Block layouts

/// How one side (send or receive) describes a block: `count` instances of
/// `type`, each instance holding `disps.size()` base elements (int or double)
/// at element displacements `disps` from the instance's start, instances
/// `extent` elements apart (MPI's extent; lb and holes included). Block b
/// starts at b * count * extent.
struct Layout {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool owns_type = false;
  bool is_double = false;
  std::vector<long> disps;
  long extent = 1;
  int count = 0;

  long elements_per_block() const { return count * static_cast<long>(disps.size()); }
  /// Element index (relative to the user's buffer pointer) of element e of block b.
  long position(long block, long element) const;
  /// Lowest and one past the highest element index touched by `blocks` blocks.
  long min_position(int blocks) const;
  long end_position(int blocks) const;
};

/// A matching pair of layouts: same type signature per block, possibly
/// different types (contiguous vs vector vs lb-shifted ...).
struct LayoutPair {
  Layout send;
  Layout recv;
  std::string describe() const;
};

/// Number of available pair kinds, and the pair of `kind` with about
/// `elements` base elements per block (0..40).
int num_layout_kinds();
LayoutPair make_layout_pair(int kind, int elements);
void free_layout_pair(LayoutPair& pair);

/// Owner of a LayoutPair's derived datatypes.
class ScopedLayouts {
public:
  explicit ScopedLayouts(LayoutPair pair) : pair_(std::move(pair)) {}
  ScopedLayouts(const ScopedLayouts&) = delete;
  ScopedLayouts& operator=(const ScopedLayouts&) = delete;
  ~ScopedLayouts() { free_layout_pair(pair_); }
  const LayoutPair& get() const { return pair_; }

private:
  LayoutPair pair_;
};

// ---------------------------------------------------------------------------
// Buffers

/// Raw storage for `blocks` blocks of a layout, with a margin on both sides;
/// `data()` is the pointer handed to MPI (element 0 of the layout).
class Buffer {
public:
  Buffer() = default;
  Buffer(const Layout& layout, int blocks);
  void* data() { return bytes_.data() + origin_; }
  const void* data() const { return bytes_.data() + origin_; }
  bool is_double() const { return is_double_; }
  long element_size() const { return is_double_ ? 8 : 4; }
  /// Element index (relative to data()) range covered by the storage.
  long first() const { return -static_cast<long>(origin_) / element_size(); }
  long last() const { return static_cast<long>(bytes_.size() - origin_) / element_size(); }
  void set(long position, std::int64_t value);
  std::int64_t get(long position) const;
  void fill_sentinel();
  const std::vector<unsigned char>& bytes() const { return bytes_; }
  std::vector<unsigned char>& bytes() { return bytes_; }

private:
  bool is_double_ = false;
  std::size_t origin_ = 0;
  std::vector<unsigned char> bytes_;
};

/// The value block `block`, element `element` of `rank`'s send buffer holds in
/// generation `generation`. Distinct from the sentinel and from hole filler.
std::int64_t value_of(int generation, int rank, int block, long element);
constexpr std::int64_t sentinel_value = -123456789;
constexpr std::int64_t hole_value = -987;

/// Writes generation `generation` of this rank's send data (holes get
/// hole_value).
void fill_send(Buffer& buffer, const Layout& layout, int blocks, int generation, int rank);

/// First difference of two buffers of the same layout, described for a
/// failure message ("" when bitwise equal).
std::string first_difference(const Buffer& got, const Buffer& expected, const Layout& layout,
                             int blocks);

// ---------------------------------------------------------------------------
// Neighborhood cases

struct Case {
  std::vector<int> dims;
  std::vector<bool> periodic;
  std::vector<std::vector<int>> offsets;
  int layout_kind = 0;
  int elements = 1;
  /// Each rank describes its blocks with a different layout of the same type
  /// signature (legal in MPI: only signatures must match); `elements` is then a
  /// multiple of 12 so every layout of the element type fits it.
  bool rank_dependent_layout = false;
  int kind_for_rank(int rank) const;
  std::string describe() const;
  iso::OffsetList offset_list() const;
};

/// A random case for `nprocs` processes: d = 1..4, a random factorization of
/// nprocs (sizes 1 and 2 appear), mixed periodic flags, 1..10 offsets with
/// repeats, zero vectors and offsets beyond the grid.
Case random_case(std::mt19937_64& rng, int nprocs);

/// Neighbors computed without the library: rank (in `cart`) that block i goes
/// to / comes from, -1 when the shifted coordinate leaves a non-periodic
/// dimension. Uses MPI_Cart_coords / MPI_Cart_rank only.
struct Partners {
  std::vector<int> targets;
  std::vector<int> sources;
};
Partners independent_partners(MPI_Comm cart, const Case& c);

/// Expected receive buffer: sentinel everywhere except received elements.
Buffer expected_result(const Layout& recv, const std::vector<int>& sources,
                       iso::Collective collective, int generation);

/// Runs the MPI library's MPI_Neighbor_alltoall / MPI_Neighbor_allgather on an
/// adjacent distributed graph built from the partners (collective over
/// `cart`). Open MPI 4.1.4 accepts MPI_PROC_NULL in
/// MPI_Dist_graph_create_adjacent but then crashes in MPI_Neighbor_alltoall
/// (segfault in mca_pml_ob1_recv_req_start), so the graph holds only existing
/// partners and blocks are mapped in and out of compacted buffers.
Buffer mpi_reference(MPI_Comm cart, const Partners& partners, const LayoutPair& layouts,
                     iso::Collective collective, int generation);

/// The library's result for one algorithm and collective, with send buffer
/// generation `generation`. Collective over the neighborhood. Sets `error` to
/// the exception text where init/run threw (then the result is meaningless).
/// The generation also picks the options: ports (generation / 2) % 4 and
/// posting (generation / 8) % 3 (automatic, persistent, fresh).
struct RunResult {
  Buffer recv;
  bool send_unchanged = true;
  std::string error;
};
RunResult run_library(const iso::Neighborhood& nbh, const LayoutPair& layouts,
                      iso::Algorithm algorithm, iso::Collective collective, int generation);

/// Block count of the send side (s for alltoall, 1 for allgather).
inline int send_blocks(int s, iso::Collective collective) {
  return collective == iso::Collective::alltoall ? s : 1;
}

/// A hang guard: if not disarmed (destroyed) within `seconds`, prints what was
/// being waited for and ends the process, so mpiexec ends the job with a
/// message instead of the test sitting until ctest's timeout. The thread never
/// calls MPI (the main requests MPI_THREAD_FUNNELED).
class Watchdog {
public:
  Watchdog(std::string what, int seconds);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool disarmed_ = false;
  std::thread thread_;
};

/// One persistent operation with its own buffers, for the tests that keep
/// several alive. Buffers stay where they are after init (never copied).
class Exchange {
public:
  Exchange(const iso::Neighborhood& nbh, const LayoutPair& layouts, iso::Collective collective,
           iso::Algorithm algorithm, iso::Posting posting = iso::Posting::automatic);
  /// Writes generation `generation` into the send buffer and the sentinel into
  /// the receive buffer, in place.
  void prepare(int generation);
  /// "" when the receive buffer holds generation `generation`'s result.
  std::string check(int generation) const;
  std::string name() const;
  iso::Operation& op() { return op_; }
  void* send_data() { return send_.data(); }
  void* recv_data() { return recv_.data(); }

private:
  const iso::Neighborhood* nbh_;
  const LayoutPair* layouts_;
  iso::Collective collective_;
  iso::Algorithm algorithm_;
  iso::Posting posting_;
  Buffer send_;
  Buffer recv_;
  iso::Operation op_;
};

/// FNV-1a of a string, for comparing messages over ranks.
std::uint64_t hash_string(const std::string& text);
/// True on every rank iff every rank passed the same string.
bool same_on_all_ranks(const std::string& text);

}  // namespace iso_collectives_test
