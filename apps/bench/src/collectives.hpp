// The pieces of `iso-bench collectives`, one concern a file:
//   collectives_contenders.cpp  the contenders table and each contender made
//                               ready for one point (iso, MPI graphs, bounds)
//   collectives_checks.cpp      test data, buffer layouts and the check of
//                               each contender against linear
//   collectives_report.cpp      the result rows and the summary tables
//   collectives_command.cpp     the command line and the measurement loop
// A point is one (operation, neighborhood, block size).
#pragma once

#include "isostencil/bench/neighborhoods.hpp"
#include "isostencil/bench/report.hpp"

#include "iso/collectives.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace isobench::collectives {

enum class Op { alltoall, allgather, alltoallw };

const char* op_name(Op op);

/// "a,b c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// --- Contenders (collectives_contenders.cpp).

enum class Kind { iso, mpi_create, mpi_adjacent, mpi_persistent, bound };

struct Contender {
  std::string name;
  Kind kind;
  iso::Algorithm algorithm;  // iso: the algorithm; bound: the schedule it follows
  bool by_default;
  int ports = 0;  // iso: OperationOptions::ports ("torus:p2"); 0: no limit
  // iso: OperationOptions::posting ("torus@persistent", "torus@fresh")
  iso::Posting posting = iso::Posting::automatic;
};

#if MPI_VERSION >= 4 && !defined(SMPI_H)  // SimGrid SMPI: no MPI_Neighbor_* at all
constexpr bool have_persistent_neighbor = true;
#else
constexpr bool have_persistent_neighbor = false;
#endif

std::vector<Contender> known_contenders();

/// The contenders a --contenders list names (empty: the default ones), each
/// once, in the order given; throws isostencil::UsageError for unknown names.
std::vector<Contender> select_contenders(const std::string& list);

// --- Buffer layout of one point (collectives_checks.cpp).

struct Layout {
  std::vector<int> send_counts, recv_counts;  // bytes per block
  std::vector<MPI_Aint> send_displs, recv_displs;
  long long send_total = 0, recv_total = 0;
  bool fits_int = true;  // every block below INT_MAX bytes
};

Layout make_layout(Op op, const iso::OffsetList& offsets, long long m);

/// The bytes of the blocks of one rank (the block-size model), without
/// allocating: for the memory limit and the notes.
long double layout_bytes_estimate(Op op, const iso::OffsetList& offsets, long long m);

// --- MPI distributed graphs (collectives_contenders.cpp): the
// neighborhood's existing neighbors in block order, and where each in/out
// edge's block lies in the isomorphic layout.

struct Graph {
  iso::Comm comm;
  std::vector<int> send_order;  // block of each out-edge
  std::vector<int> recv_order;  // block of each in-edge
  bool send_identity = false;
  bool recv_identity = false;
  std::string error;
};

std::unique_ptr<Graph> make_graph(MPI_Comm cart, const iso::Neighborhood& nbh, bool adjacent);

// --- One contender made ready for one point: the timed call and, except for
// the bounds, a check run that leaves its result in the isomorphic layout.

struct Prepared {
  std::function<void()> call;
  std::function<void()> check_run;
  std::string chosen;  // iso: chosen_label of the operation; bound: the schedule
  std::string trials;  // tune: trials_text of its measurements
  std::optional<iso::Operation> operation;
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<unsigned char> compact_send, compact_recv;
  std::vector<int> send_counts, recv_counts;
  std::vector<MPI_Aint> send_displs, recv_displs;
  std::vector<MPI_Datatype> send_types, recv_types;
  std::vector<unsigned char> scratch_send, scratch_recv;

  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared() {
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  }
};

struct Point {
  Op op;
  const iso::Neighborhood* nbh;
  const Layout* layout;
  unsigned char* send;
  unsigned char* recv;
  long long m;
};

/// What an isomorphic operation runs: "torus", or "torus:p2" where it runs
/// with a port limit; tune's always with its port count ("direct:p0").
std::string chosen_label(const iso::Operation& op);
/// tune's measurements: "linear:p0 12.30, torus:p0 4.10, ..." (us per call).
std::string trials_text(const std::vector<iso::TuneTrial>& trials);

std::unique_ptr<Prepared> prepare_iso(const Point& p, iso::Algorithm algorithm, int ports = 0,
                                      iso::Posting posting = iso::Posting::automatic);
std::unique_ptr<Prepared> prepare_mpi(const Point& p, const Graph& graph, bool persistent);
std::unique_ptr<Prepared> prepare_bound(const Point& p, iso::Algorithm algorithm, MPI_Comm comm);

/// The graphs of one neighborhood (null where no contender needs one).
struct Graphs {
  std::unique_ptr<Graph> create, adjacent;
};

/// Contender `c` made ready for `p`; `comm` carries the bounds' messages.
std::unique_ptr<Prepared> prepare(const Contender& c, const Point& p, const Graphs& graphs, MPI_Comm comm);

// --- Test data of one point and the checks (collectives_checks.cpp).

/// The send and receive buffers of one point, filled with data that names
/// each block's origin, and what a correct result looks like.
class PointData {
public:
  PointData(Op op, const iso::Neighborhood& nbh, const Layout& layout, long long m);
  Point point();
  void fill_send();
  void clear_recv();
  /// One hash per received block.
  std::vector<std::uint64_t> block_hashes() const;
  /// Blocks that differ from what their source rank sent (the sentinel where
  /// there is no source).
  long count_wrong_blocks() const;

private:
  Op op_;
  const iso::Neighborhood& nbh_;
  const Layout& layout_;
  long long m_;
  std::uint32_t seed_;
  std::vector<unsigned char> send_, recv_;
};

/// The straightforward algorithm's result on `data`: its wrong blocks over
/// all ranks, and its block hashes.
struct Reference {
  long bad = 0;
  std::vector<std::uint64_t> hashes;
};
Reference run_reference(PointData& data, MPI_Comm comm);

/// Runs `prepared`'s check once on fresh data and counts the wrong blocks
/// over all ranks (against the reference's hashes when linear was right, else
/// against the sent data). Empty when there are none, else the row's note.
std::string check_contender(Prepared& prepared, PointData& data, const Reference& reference, MPI_Comm comm);

// --- Rows (collectives_report.cpp).

/// The result rows in output order, created in the first launch.
class RowTable {
public:
  explicit RowTable(int reps) : reps_(reps) {}
  /// The row of (op, n, m, c), made with these values the first time.
  ResultRow& row_for(Op op, const NamedNeighborhood& n, long long m, long long send_bytes, const Contender& c,
                     const std::string& proc_dims, const std::string& periodic);
  /// An existing row; nullptr when there is none.
  const ResultRow* find(const std::string& operation, const std::string& neighborhood, long long m,
                        const std::string& contender) const;
  ResultRow& at(Op op, const std::string& neighborhood, long long m, const std::string& contender);
  const std::vector<ResultRow>& rows() const { return rows_; }

private:
  int reps_;
  std::vector<ResultRow> rows_;
  std::map<std::string, std::size_t> row_of_;
};

/// Rank 0's closing output: per table (operation, neighborhood) the median of
/// the launch medians per contender (columns) and size (rows), then the
/// counts and every error.
void print_summary(const RowTable& table, const std::vector<Contender>& contenders,
                   const std::vector<long long>& sizes, int world_size, int launches, const std::string& csv);

}  // namespace isobench::collectives
