// Machinery of the irregular (alltoallv / alltoallw) tests: block layouts
// described by small value types (TypeSpec) that can be evaluated for any
// process, so that a rank can compute, without communication, exactly which
// bytes its source sends for every block; buffers filled with values that name
// the sending rank and the byte they came from; the expected receive buffer;
// the MPI library's MPI_Neighbor_alltoallw as a reference.
//
// Every function that takes a communicator is collective over it and is called
// by every rank in the same order; nothing returns early on one rank only.
#pragma once

#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace iso_irregular_test {

int world_rank();
int world_size();
bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD);
std::uint64_t hash_string(const std::string& text);
/// True on every rank iff every rank of `comm` passed the same string.
bool same_on_all_ranks(const std::string& text, MPI_Comm comm = MPI_COMM_WORLD);
int env_int(const char* name, int fallback);

// ---------------------------------------------------------------------------
// Datatypes as values

/// How one MPI datatype made of MPI_INT elements is built. Every kind knows the
/// byte offsets of its ints in type-signature order (relative to the pointer
/// handed to MPI) and its extent, so the layout of any process can be
/// evaluated locally.
struct TypeSpec {
  enum Kind : int {
    int_,        ///< MPI_INT itself
    contiguous,  ///< MPI_Type_contiguous(a, MPI_INT)
    vector,      ///< MPI_Type_vector(a blocks, b ints each, stride c ints)
    reversed,    ///< hindexed: a ints at byte displacements 0, -8, -16, ... (negative true lb)
    resized,     ///< MPI_INT resized to lb 0, extent 4*a bytes (a >= 1)
    subarray,    ///< MPI_Type_create_subarray(nd, sizes, subsizes, starts, C order, MPI_INT)
    shifted,     ///< struct {int at byte 4*a} resized to lb 0, extent 4*(a+b) (a >= 0, b >= 1)
  };
  Kind kind = int_;
  int a = 1, b = 1, c = 1;
  int nd = 0;
  std::array<int, 4> sizes{}, subsizes{}, starts{};

  static TypeSpec make_int() { return {}; }
  static TypeSpec make_contiguous(int n) { TypeSpec t; t.kind = contiguous; t.a = n; return t; }
  static TypeSpec make_vector(int blocks, int blocklen, int stride) {
    TypeSpec t; t.kind = vector; t.a = blocks; t.b = blocklen; t.c = stride; return t;
  }
  static TypeSpec make_reversed(int n) { TypeSpec t; t.kind = reversed; t.a = n; return t; }
  static TypeSpec make_resized(int stride_ints) { TypeSpec t; t.kind = resized; t.a = stride_ints; return t; }
  static TypeSpec make_shifted(int before, int after) {
    TypeSpec t; t.kind = shifted; t.a = before; t.b = after; return t;
  }
  static TypeSpec make_subarray(int nd, const int* sizes, const int* subsizes, const int* starts);

  /// Number of ints in one instance (the signature length).
  int ints() const;
  /// Byte offsets of the ints of one instance, in signature order.
  std::vector<long> offsets() const;
  /// MPI extent in bytes (ub - lb); every kind here has lb <= 0.
  long extent() const;
  std::string key() const;
  std::string describe() const;
};

/// Builds and frees the MPI datatypes of a test; one committed type per key.
class TypePool {
public:
  TypePool() = default;
  TypePool(const TypePool&) = delete;
  TypePool& operator=(const TypePool&) = delete;
  ~TypePool();
  MPI_Datatype get(const TypeSpec& spec);

private:
  std::map<std::string, MPI_Datatype> types_;
};

/// One block of one side: `count` instances of `type`, instances one extent
/// apart, starting `displ` bytes after the buffer's origin.
struct BlockSpec {
  TypeSpec type;
  int count = 0;
  long displ = 0;
  long ints() const { return static_cast<long>(count) * type.ints(); }
  /// Byte offsets (from the buffer origin) of the block's ints, in signature order.
  std::vector<long> offsets() const;
};

/// All blocks of one side plus the buffer size (bytes) they need.
struct SideSpec {
  std::vector<BlockSpec> blocks;
  long bytes = 0;  ///< buffer size; every offset lies in [0, bytes)
};

/// Places the blocks one after another (gap `gap_bytes` between them, room for
/// negative offsets below each block) and sets displ and bytes. With
/// `aligned_to` > 0 every displ is a multiple of it (alltoallv: the extent).
void place_blocks(SideSpec& side, long gap_bytes, long aligned_to = 0);

/// A process's layout: its send and receive blocks.
struct ProcessLayout {
  SideSpec send;
  SideSpec recv;
};
/// The layout of the process at `coords` (rank `rank`). Must be a function of
/// its arguments only, so every process can evaluate any other's layout.
using LayoutFn = std::function<ProcessLayout(const std::vector<int>& coords, int rank)>;

// ---------------------------------------------------------------------------
// Buffers and values

constexpr std::int32_t sentinel = -1;
/// The int at byte `offset` of `rank`'s send buffer in generation `generation`
/// (positive, so never the sentinel).
std::int32_t value_of(int generation, int rank, long offset);

/// A byte buffer of ints with margins on both sides, `origin()` is what MPI gets.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(long bytes, long margin = 64);
  char* origin() { return reinterpret_cast<char*>(ints_.data()) + margin_; }
  const char* origin() const { return reinterpret_cast<const char*>(ints_.data()) + margin_; }
  void fill_sentinel();
  void fill_values(int generation, int rank);
  void set(long offset, std::int32_t value);
  std::int32_t get(long offset) const;
  bool operator==(const Buffer& other) const { return ints_ == other.ints_; }
  bool operator!=(const Buffer& other) const { return !(*this == other); }
  long bytes() const { return bytes_; }
  /// First differing int, described ("" when bitwise equal).
  std::string first_difference(const Buffer& expected) const;

private:
  long bytes_ = 0;
  long margin_ = 0;
  std::vector<std::int32_t> ints_;
};

// ---------------------------------------------------------------------------
// A case: grid, offsets and layout function

struct Case {
  std::string name;
  std::vector<int> dims;
  std::vector<bool> periodic;
  std::vector<std::vector<int>> offsets;
  LayoutFn layout;
  std::string describe() const;
  iso::OffsetList offset_list() const;
};

/// Sources of the blocks computed without the library (MPI_Cart_coords and
/// MPI_Cart_rank only): -1 where the source leaves a non-periodic dimension.
std::vector<int> independent_sources(MPI_Comm cart, const std::vector<std::vector<int>>& offsets);
std::vector<int> independent_targets(MPI_Comm cart, const std::vector<std::vector<int>>& offsets);

/// Expected receive buffer of this process for generation `generation`: the
/// sentinel everywhere but in the ints of blocks whose source exists.
/// `consistent` is cleared when a send block's size at the source differs
/// from the receive block's here (a bug in the test's layout function).
Buffer expected_receive(MPI_Comm cart, const Case& c, const ProcessLayout& mine,
                        const std::vector<int>& sources, int generation, bool& consistent);

/// The MPI library's MPI_Neighbor_alltoallw on an adjacent distributed graph
/// of the existing partners in block order (Open MPI 4.1.4 crashes on
/// MPI_PROC_NULL neighbors). Collective over `cart`.
Buffer mpi_reference(MPI_Comm cart, const std::vector<int>& sources, const std::vector<int>& targets,
                     const ProcessLayout& mine, TypePool& pool, int generation);

enum class Api { alltoallw, alltoallv };
/// alltoallv needs one send type and one receive type for all blocks, and
/// displacements that are multiples of the extents (see place_blocks).
bool usable_for_alltoallv(const ProcessLayout& layout);

/// Arrays for alltoallw_init / alltoallv_init from a layout.
struct CallArgs {
  std::vector<int> send_counts, recv_counts;
  std::vector<MPI_Aint> send_displs_w, recv_displs_w;
  std::vector<int> send_displs_v, recv_displs_v;
  std::vector<MPI_Datatype> send_types, recv_types;
  MPI_Datatype send_type_v = MPI_DATATYPE_NULL, recv_type_v = MPI_DATATYPE_NULL;
};
CallArgs call_args(const ProcessLayout& layout, TypePool& pool);

iso::Operation init_operation(Api api, const iso::Neighborhood& nbh, const CallArgs& args, const Buffer& send,
                              Buffer& recv, const iso::OperationOptions& options);

/// The outcome of running a case with every algorithm on this rank.
struct CaseResult {
  std::vector<std::string> failures;  ///< this rank's failure descriptions
};

/// Runs the case with `api` for every algorithm in `algorithms` (each: init,
/// then `generations` start/wait runs with fresh send data in place), comparing
/// bitwise with the expected buffer, with the linear algorithm's result and with
/// the MPI reference; checks the send buffer stays untouched. Collective over
/// MPI_COMM_WORLD.
CaseResult run_case(const Case& c, Api api, const std::vector<iso::Algorithm>& algorithms, int generations = 2,
                    bool with_reference = true);

/// Every algorithm the tests run: linear, torus, direct, mpi, automatic.
const std::vector<iso::Algorithm>& all_algorithms();

/// Whether MPI_Neighbor_alltoallw on `nbh`'s partners cannot serve as a
/// reference: some rank has a partner in several directions and the MPI
/// library pairs repeated edges out of order (MPICH 4.0.2). Collective over
/// nbh.comm().
bool neighbor_reference_untrusted(const iso::Neighborhood& nbh);

/// Reports the failures of one case (any rank) as gtest failures; returns true
/// on every rank iff no rank failed.
bool report(const Case& c, const CaseResult& result, const char* api_name);

// ---------------------------------------------------------------------------
// Layout helpers

/// Number of nonzero coordinates of v.
int nonzeros(const std::vector<int>& v);
/// m^(d - nonzeros(v)) (the paper's Figure 3 block sizes).
long figure3_size(const std::vector<int>& v, int m);

std::vector<int> dims_create(int nprocs, int d);
std::vector<std::vector<int>> moore(int d, int radius, bool include_self = false);

/// A hang guard: ends the process with a message when not destroyed within
/// `seconds` (the thread never calls MPI).
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

}  // namespace iso_irregular_test
