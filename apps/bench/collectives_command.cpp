// `iso-bench collectives`: the paper's Figures 2-5 on this machine. For each
// operation, neighborhood, block size and contender: a correctness check
// against the straightforward algorithm, then `reps` timed calls (barrier
// before each, maximum over ranks), Tukey's rule, median; `launches` times
// over, median of the medians with min and max. One CSV row per
// (operation, neighborhood, size, contender).
#include "bench.hpp"
#include "neighborhoods.hpp"

#include "isostencil/spec.hpp"

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

namespace isobench {

namespace {

using isostencil::UsageError;

enum class Op { alltoall, allgather, alltoallw };

const char* op_name(Op op) {
  switch (op) {
    case Op::alltoall: return "alltoall";
    case Op::allgather: return "allgather";
    case Op::alltoallw: return "alltoallw";
  }
  return "?";
}

enum class Kind { iso, mpi_create, mpi_adjacent, mpi_persistent, bound };

struct Contender {
  std::string name;
  Kind kind;
  iso::Algorithm algorithm;  // iso: the algorithm; bound: the schedule it follows
  bool by_default;
};

#if MPI_VERSION >= 4
constexpr bool have_persistent_neighbor = true;
#else
constexpr bool have_persistent_neighbor = false;
#endif

std::vector<Contender> known_contenders() {
  std::vector<Contender> out = {
      {"linear", Kind::iso, iso::Algorithm::linear, true},
      {"torus", Kind::iso, iso::Algorithm::torus, true},
      {"direct", Kind::iso, iso::Algorithm::direct, true},
      {"auto", Kind::iso, iso::Algorithm::automatic, true},
      {"iso-mpi", Kind::iso, iso::Algorithm::mpi, false},
      {"mpi-create", Kind::mpi_create, iso::Algorithm::mpi, true},
      {"mpi-adjacent", Kind::mpi_adjacent, iso::Algorithm::mpi, true},
  };
  if (have_persistent_neighbor) out.push_back({"mpi-persistent", Kind::mpi_persistent, iso::Algorithm::mpi, true});
  out.push_back({"bound-torus", Kind::bound, iso::Algorithm::torus, true});
  out.push_back({"bound-direct", Kind::bound, iso::Algorithm::direct, true});
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',' || c == ' ') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Test data: block `block` as sent by `origin`, 8 bytes at a time.

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t block_key(std::uint32_t seed, int origin, int block) {
  return splitmix((static_cast<std::uint64_t>(seed) << 48) ^ (static_cast<std::uint64_t>(origin) << 24) ^
                  static_cast<std::uint64_t>(block) * 0x9E3779B1ull);
}

void fill_block(unsigned char* out, std::size_t bytes, std::uint64_t key) {
  for (std::size_t at = 0; at < bytes; at += 8) {
    const std::uint64_t word = splitmix(key + at);
    std::memcpy(out + at, &word, std::min<std::size_t>(8, bytes - at));
  }
}

std::uint64_t hash_bytes(const unsigned char* data, std::size_t bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull ^ bytes;
  std::size_t at = 0;
  for (; at + 8 <= bytes; at += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + at, 8);
    h = (h ^ word) * 0x100000001B3ull;
    h ^= h >> 29;
  }
  for (; at < bytes; ++at) h = (h ^ data[at]) * 0x100000001B3ull;
  return h;
}

constexpr unsigned char sentinel = 0xA5;

// ---------------------------------------------------------------------------
// Buffer layout of one (operation, neighborhood, size) point.

struct Layout {
  std::vector<int> send_counts, recv_counts;  // bytes per block
  std::vector<MPI_Aint> send_displs, recv_displs;
  long long send_total = 0, recv_total = 0;
  bool fits_int = true;  // every block below INT_MAX bytes
};

Layout make_layout(Op op, const iso::OffsetList& offsets, long long m) {
  Layout layout;
  const int s = offsets.size();
  auto add = [&](std::vector<int>& counts, std::vector<MPI_Aint>& displs, long long& total, long double bytes) {
    if (bytes >= static_cast<long double>(INT_MAX)) {
      layout.fits_int = false;
      bytes = 0;
    }
    counts.push_back(static_cast<int>(bytes));
    displs.push_back(static_cast<MPI_Aint>(total));
    total += static_cast<long long>(bytes);
  };
  for (int i = 0; i < s; ++i) {
    long double bytes = static_cast<long double>(m);
    if (op == Op::alltoallw)
      bytes = std::pow(static_cast<long double>(m), offsets.dims() - nonzero_coordinates(offsets, i));
    add(layout.recv_counts, layout.recv_displs, layout.recv_total, bytes);
    if (op != Op::allgather) add(layout.send_counts, layout.send_displs, layout.send_total, bytes);
  }
  if (op == Op::allgather) add(layout.send_counts, layout.send_displs, layout.send_total, static_cast<long double>(m));
  return layout;
}

// The block-size model in words, for notes.
long double layout_bytes_estimate(Op op, const iso::OffsetList& offsets, long long m) {
  long double total = 0;
  for (int i = 0; i < offsets.size(); ++i)
    total += op == Op::alltoallw
                 ? std::pow(static_cast<long double>(m), offsets.dims() - nonzero_coordinates(offsets, i))
                 : static_cast<long double>(m);
  return total;
}

// ---------------------------------------------------------------------------
// MPI distributed graphs with the neighborhood's existing neighbors in block
// order, and where each in/out edge's block lies in the isomorphic layout.

struct Graph {
  iso::Comm comm;
  std::vector<int> send_order;  // block of each out-edge
  std::vector<int> recv_order;  // block of each in-edge
  bool send_identity = false;
  bool recv_identity = false;
  std::string error;
};

std::unique_ptr<Graph> make_graph(MPI_Comm cart, const iso::Neighborhood& nbh, bool adjacent) {
  auto graph = std::make_unique<Graph>();
  const int s = nbh.size();
  std::vector<int> targets, sources;
  for (int i = 0; i < s; ++i) {
    if (nbh.target_rank(i) >= 0) targets.push_back(nbh.target_rank(i));
    if (nbh.source_rank(i) >= 0) sources.push_back(nbh.source_rank(i));
  }
  int dummy = 0;
  MPI_Comm raw = MPI_COMM_NULL;
  if (adjacent) {
    ISO_MPI_CHECK(MPI_Dist_graph_create_adjacent(
        cart, static_cast<int>(sources.size()), sources.empty() ? &dummy : sources.data(), MPI_UNWEIGHTED,
        static_cast<int>(targets.size()), targets.empty() ? &dummy : targets.data(), MPI_UNWEIGHTED,
        MPI_INFO_NULL, 0, &raw));
  } else {
    // Each rank names its own out-edges, in block order.
    int self = nbh.rank();
    int degree = static_cast<int>(targets.size());
    ISO_MPI_CHECK(MPI_Dist_graph_create(cart, 1, &self, &degree, targets.empty() ? &dummy : targets.data(),
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &raw));
  }
  graph->comm = iso::Comm(raw);
  ISO_MPI_CHECK(MPI_Comm_set_errhandler(raw, MPI_ERRORS_RETURN));

  // Where MPI puts each edge: the k-th edge between two ranks in one
  // direction is the k-th block (ascending) between them (MPI-4 6.6 for
  // multiple edges).
  int indegree = 0, outdegree = 0, weighted = 0;
  ISO_MPI_CHECK(MPI_Dist_graph_neighbors_count(raw, &indegree, &outdegree, &weighted));
  std::vector<int> in(static_cast<std::size_t>(std::max(indegree, 1))), in_w(in.size());
  std::vector<int> out(static_cast<std::size_t>(std::max(outdegree, 1))), out_w(out.size());
  ISO_MPI_CHECK(MPI_Dist_graph_neighbors(raw, indegree, in.data(), in_w.data(), outdegree, out.data(), out_w.data()));
  std::map<int, std::vector<int>> to_rank, from_rank;
  for (int i = 0; i < s; ++i) {
    if (nbh.target_rank(i) >= 0) to_rank[nbh.target_rank(i)].push_back(i);
    if (nbh.source_rank(i) >= 0) from_rank[nbh.source_rank(i)].push_back(i);
  }
  auto map_edges = [&](int degree, const std::vector<int>& ranks, std::map<int, std::vector<int>>& blocks,
                       std::vector<int>& order, const char* what) {
    std::map<int, std::size_t> used;
    for (int k = 0; k < degree; ++k) {
      auto& list = blocks[ranks[static_cast<std::size_t>(k)]];
      std::size_t& next = used[ranks[static_cast<std::size_t>(k)]];
      if (next >= list.size()) {
        graph->error = fmt::format("the graph has an {} edge to rank {} that no block matches", what,
                                   ranks[static_cast<std::size_t>(k)]);
        return;
      }
      order.push_back(list[next++]);
    }
  };
  if (outdegree != static_cast<int>(targets.size()) || indegree != static_cast<int>(sources.size()))
    graph->error = fmt::format("MPI reports {} in / {} out edges for {} sources / {} targets", indegree, outdegree,
                               sources.size(), targets.size());
  if (graph->error.empty()) map_edges(outdegree, out, to_rank, graph->send_order, "out");
  if (graph->error.empty()) map_edges(indegree, in, from_rank, graph->recv_order, "in");
  auto is_identity = [s](const std::vector<int>& order) {
    if (static_cast<int>(order.size()) != s) return false;
    for (int k = 0; k < s; ++k)
      if (order[static_cast<std::size_t>(k)] != k) return false;
    return true;
  };
  graph->send_identity = is_identity(graph->send_order);
  graph->recv_identity = is_identity(graph->recv_order);
  return graph;
}

// ---------------------------------------------------------------------------
// One contender made ready for one point: the timed call and, except for the
// bounds, a check run that leaves its result in the isomorphic layout.

struct Prepared {
  std::function<void()> call;
  std::function<void()> check_run;
  std::string chosen;
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

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) iso::detail::throw_mpi_error(rc, call, __FILE__, __LINE__);
}

std::unique_ptr<Prepared> prepare_iso(const Point& p, iso::Algorithm algorithm) {
  auto prepared = std::make_unique<Prepared>();
  iso::OperationOptions options;
  options.algorithm = algorithm;
  const int m = static_cast<int>(p.m);
  switch (p.op) {
    case Op::alltoall:
      prepared->operation = iso::alltoall_init(*p.nbh, p.send, m, MPI_BYTE, p.recv, m, MPI_BYTE, options);
      break;
    case Op::allgather:
      prepared->operation = iso::allgather_init(*p.nbh, p.send, m, MPI_BYTE, p.recv, m, MPI_BYTE, options);
      break;
    case Op::alltoallw: {
      prepared->send_types.assign(p.layout->send_counts.size(), MPI_BYTE);
      prepared->recv_types.assign(p.layout->recv_counts.size(), MPI_BYTE);
      prepared->operation = iso::alltoallw_init(
          *p.nbh, p.send, p.layout->send_counts.data(), p.layout->send_displs.data(), prepared->send_types.data(),
          p.recv, p.layout->recv_counts.data(), p.layout->recv_displs.data(), prepared->recv_types.data(), options);
      break;
    }
  }
  iso::Operation* op = &*prepared->operation;
  prepared->chosen = iso::to_string(op->algorithm());
  prepared->call = [op] { op->run(); };
  prepared->check_run = prepared->call;
  return prepared;
}

std::unique_ptr<Prepared> prepare_mpi(const Point& p, const Graph& graph, bool persistent) {
  auto prepared = std::make_unique<Prepared>();
  Prepared* self = prepared.get();
  const MPI_Comm comm = graph.comm.get();
  const int m = static_cast<int>(p.m);
  const std::size_t mb = static_cast<std::size_t>(p.m);
  const std::size_t outdegree = graph.send_order.size(), indegree = graph.recv_order.size();
  if (p.op == Op::alltoallw) {
    // Permuted counts and displacements into the isomorphic buffers: no copies.
    for (int block : graph.send_order) {
      self->send_counts.push_back(p.layout->send_counts[static_cast<std::size_t>(block)]);
      self->send_displs.push_back(p.layout->send_displs[static_cast<std::size_t>(block)]);
    }
    for (int block : graph.recv_order) {
      self->recv_counts.push_back(p.layout->recv_counts[static_cast<std::size_t>(block)]);
      self->recv_displs.push_back(p.layout->recv_displs[static_cast<std::size_t>(block)]);
    }
    self->send_types.assign(std::max<std::size_t>(outdegree, 1), MPI_BYTE);
    self->recv_types.assign(std::max<std::size_t>(indegree, 1), MPI_BYTE);
    self->send_counts.resize(std::max<std::size_t>(outdegree, 1));
    self->send_displs.resize(std::max<std::size_t>(outdegree, 1));
    self->recv_counts.resize(std::max<std::size_t>(indegree, 1));
    self->recv_displs.resize(std::max<std::size_t>(indegree, 1));
    unsigned char* send = p.send;
    unsigned char* recv = p.recv;
    if (persistent) {
#if MPI_VERSION >= 4
      check_mpi(MPI_Neighbor_alltoallw_init(send, self->send_counts.data(), self->send_displs.data(),
                                            self->send_types.data(), recv, self->recv_counts.data(),
                                            self->recv_displs.data(), self->recv_types.data(), comm, MPI_INFO_NULL,
                                            &self->request),
                "MPI_Neighbor_alltoallw_init");
#endif
    } else {
      self->call = [self, send, recv, comm] {
        check_mpi(MPI_Neighbor_alltoallw(send, self->send_counts.data(), self->send_displs.data(),
                                         self->send_types.data(), recv, self->recv_counts.data(),
                                         self->recv_displs.data(), self->recv_types.data(), comm),
                  "MPI_Neighbor_alltoallw");
      };
    }
  } else {
    // Blocks in edge order: the isomorphic buffers themselves when the graph
    // keeps block order, else compact copies (made outside the timed call).
    const bool gather = p.op == Op::allgather;
    const bool send_direct = gather || graph.send_identity;
    const bool recv_direct = graph.recv_identity;
    if (!send_direct) self->compact_send.resize(std::max<std::size_t>(outdegree, 1) * mb);
    if (!recv_direct) self->compact_recv.resize(std::max<std::size_t>(indegree, 1) * mb);
    unsigned char* send = send_direct ? p.send : self->compact_send.data();
    unsigned char* recv = recv_direct ? p.recv : self->compact_recv.data();
    if (persistent) {
#if MPI_VERSION >= 4
      if (gather)
        check_mpi(MPI_Neighbor_allgather_init(send, m, MPI_BYTE, recv, m, MPI_BYTE, comm, MPI_INFO_NULL,
                                              &self->request),
                  "MPI_Neighbor_allgather_init");
      else
        check_mpi(MPI_Neighbor_alltoall_init(send, m, MPI_BYTE, recv, m, MPI_BYTE, comm, MPI_INFO_NULL,
                                             &self->request),
                  "MPI_Neighbor_alltoall_init");
#endif
    } else if (gather) {
      self->call = [send, recv, m, comm] {
        check_mpi(MPI_Neighbor_allgather(send, m, MPI_BYTE, recv, m, MPI_BYTE, comm), "MPI_Neighbor_allgather");
      };
    } else {
      self->call = [send, recv, m, comm] {
        check_mpi(MPI_Neighbor_alltoall(send, m, MPI_BYTE, recv, m, MPI_BYTE, comm), "MPI_Neighbor_alltoall");
      };
    }
    if (!send_direct || !recv_direct) {
      const Graph* g = &graph;
      unsigned char* iso_send = p.send;
      unsigned char* iso_recv = p.recv;
      self->check_run = [self, g, iso_send, iso_recv, mb, send_direct, recv_direct] {
        if (!send_direct)
          for (std::size_t k = 0; k < g->send_order.size(); ++k)
            std::memcpy(self->compact_send.data() + k * mb,
                        iso_send + static_cast<std::size_t>(g->send_order[k]) * mb, mb);
        self->call();
        if (!recv_direct)
          for (std::size_t k = 0; k < g->recv_order.size(); ++k)
            std::memcpy(iso_recv + static_cast<std::size_t>(g->recv_order[k]) * mb,
                        self->compact_recv.data() + k * mb, mb);
      };
    }
  }
  if (persistent) {
    self->call = [self] {
      check_mpi(MPI_Start(&self->request), "MPI_Start");
      check_mpi(MPI_Wait(&self->request, MPI_STATUS_IGNORE), "MPI_Wait");
    };
  }
  if (!self->check_run) self->check_run = [self] { self->call(); };
  return prepared;
}

// The schedule's rounds as plain contiguous MPI_Sendrecv of the same byte
// counts (no datatypes), rounds to the process itself and the local copies as
// memcpy: what zero-copy message combining costs at best. Moves no real data:
// no check.
std::unique_ptr<Prepared> prepare_bound(const Point& p, iso::Algorithm algorithm, MPI_Comm comm) {
  auto prepared = std::make_unique<Prepared>();
  Prepared* self = prepared.get();
  const iso::Schedule schedule = p.nbh->schedule(
      algorithm, p.op == Op::allgather ? iso::Collective::allgather : iso::Collective::alltoall);
  const Layout& layout = *p.layout;
  auto bytes_of = [&](iso::BlockRef ref) -> long long {
    if (ref.buffer == iso::Buffer::send)
      return layout.send_counts[p.op == Op::allgather ? 0 : static_cast<std::size_t>(ref.block)];
    return layout.recv_counts[static_cast<std::size_t>(ref.block)];
  };
  struct Step {
    int send_rank, recv_rank, tag;
    int send_bytes, recv_bytes;
  };
  auto steps = std::make_shared<std::vector<Step>>();
  long long max_send = 1, max_recv = 1, copy_bytes = 0;
  int me = 0;
  MPI_Comm_rank(comm, &me);
  for (const iso::Round& round : schedule.rounds) {
    long long sb = 0, rb = 0;
    for (const iso::BlockRef& ref : round.send) sb += bytes_of(ref);
    for (const iso::BlockRef& ref : round.recv) rb += bytes_of(ref);
    if (round.send_rank == me && round.recv_rank == me) {
      copy_bytes += rb;
      continue;
    }
    const int send_rank = round.send_rank >= 0 && !round.send.empty() ? round.send_rank : MPI_PROC_NULL;
    const int recv_rank = round.recv_rank >= 0 && !round.recv.empty() ? round.recv_rank : MPI_PROC_NULL;
    steps->push_back({send_rank, recv_rank, round.index % 32767, static_cast<int>(sb), static_cast<int>(rb)});
    max_send = std::max(max_send, sb);
    max_recv = std::max(max_recv, rb);
  }
  for (const iso::LocalCopy& copy : schedule.copies) copy_bytes += bytes_of(copy.to);
  self->scratch_send.assign(static_cast<std::size_t>(std::max(max_send, copy_bytes) + 1), 1);
  self->scratch_recv.assign(static_cast<std::size_t>(std::max(max_recv, copy_bytes) + 1), 0);
  const std::size_t copy_size = static_cast<std::size_t>(copy_bytes);
  self->call = [self, steps, comm, copy_size] {
    unsigned char* out = self->scratch_send.data();
    unsigned char* in = self->scratch_recv.data();
    for (const Step& step : *steps)
      check_mpi(MPI_Sendrecv(out, step.send_bytes, MPI_BYTE, step.send_rank, step.tag, in, step.recv_bytes,
                             MPI_BYTE, step.recv_rank, step.tag, comm, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
    if (copy_size) std::memcpy(in, out, copy_size);
  };
  self->chosen = iso::to_string(algorithm);
  return prepared;
}

// ---------------------------------------------------------------------------

struct Options {
  std::vector<std::string> ops;
  std::vector<std::string> neighborhoods;
  std::vector<std::string> offsets_files;
  std::string sizes;
  std::string contenders;
  int reps = 100;
  int warmup = 5;
  int launches = 3;
  std::string max_memory = "1G";
  double max_seconds = 60;
  double tukey = 3;
  std::string csv;
  std::string procs;
  bool mesh = false;
  bool no_reorder = false;
  bool quiet = false;
};

class CollectivesCommand final : public Subcommand {
public:
  explicit CollectivesCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "collectives",
        "Time the isomorphic collectives against MPI's neighborhood collectives (the paper's Fig. 2-5); "
        "the default subcommand");
    app_->footer(
        "Contenders: linear, torus, direct, auto (isomorphic alltoall/allgather/alltoallw with that\n"
        "algorithm), iso-mpi (the library's native wrapper; not by default), mpi-create and\n"
        "mpi-adjacent (MPI_Neighbor_* on MPI_Dist_graph_create / _adjacent), mpi-persistent\n"
        "(MPI_Neighbor_*_init, MPI-4 libraries only), bound-torus and bound-direct (the schedule's\n"
        "rounds as plain contiguous MPI_Sendrecv: the best zero-copy can do).\n\n"
        "Neighborhoods: moore (d=2..5, r=1..3), moore:D, moore:D:R, octant[:D:R] (default 3:3),\n"
        "shales[:D[:R1,R2]] (default 3:3,7; {-r,0,r}^D without 0, as the paper's Fig. 4(b)),\n"
        "shells:D:R1,R2 (every offset at Chebyshev distance R1 or R2), file:PATH, offsets:LIST.\n\n"
        "Examples:\n"
        "  mpirun -np 2 iso-bench collectives --op alltoall -n moore:3:1 --csv a2a.csv\n"
        "  mpirun -np 2 iso-bench --op alltoallw -n moore:3:1 moore:4:1 --sizes 2,8,32,128\n"
        "  mpirun -np 2 iso-bench -n shales --contenders linear,torus,direct --launches 10");
    app_->add_option("--op,-o", opt_.ops, "operations: alltoall allgather alltoallw (default all)")
        ->check(CLI::IsMember({"alltoall", "allgather", "alltoallw"}))
        ->delimiter(',');
    app_->add_option("--neighborhood,-n", opt_.neighborhoods,
                     "neighborhood specifications (default: moore:3:1 moore:4:1 octant shales)");
    app_->add_option("--offsets-file", opt_.offsets_files, "add the neighborhood in FILE (one offset per line)");
    app_->add_option("--sizes,-s", opt_.sizes,
                     "block sizes in bytes, e.g. 1,8,64 or 1K,64K (default powers of two 1 B..64 KiB); "
                     "for alltoallw the base m of blocks m^(d-nz(v))");
    app_->add_option("--contenders,-c", opt_.contenders, "comma-separated contenders (default all but iso-mpi)");
    app_->add_option("--reps,-r", opt_.reps, "timed repetitions per launch (default 100)")->check(CLI::Range(1, 10000000));
    app_->add_option("--warmup", opt_.warmup, "untimed calls before each measurement (default 5)")
        ->check(CLI::Range(0, 1000000));
    app_->add_option("--launches,-l", opt_.launches,
                     "repeat the whole measurement L times; rows give median, min and max of the "
                     "launches' medians (default 3)")
        ->check(CLI::Range(1, 100000));
    app_->add_option("--max-memory", opt_.max_memory,
                     "skip points whose 3 buffers (send, receive, temporary) exceed this per rank (default 1G)");
    app_->add_option("--max-seconds", opt_.max_seconds,
                     "skip points estimated (from the fastest of 3 probe calls per contender) to take longer; "
                     "0: no limit "
                     "(default 60)")
        ->check(CLI::Range(0.0, 1e9));
    app_->add_option("--tukey", opt_.tukey, "outlier fence factor k: keep [Q1-k*IQR, Q3+k*IQR] (default 3)")
        ->check(CLI::Range(0.0, 1e6));
    app_->add_option("--csv", opt_.csv, "write the rows to FILE (rewritten after each launch)");
    app_->add_option("--procs", opt_.procs, "process grid P0,P1,... (default MPI_Dims_create per neighborhood)");
    app_->add_flag("--mesh", opt_.mesh, "non-periodic process grid (default: torus)");
    app_->add_flag("--no-reorder", opt_.no_reorder, "MPI_Cart_create without reordering (default: reorder)");
    app_->add_flag("--quiet,-q", opt_.quiet, "print only the summary tables");
  }

  CLI::App* app() const override { return app_; }

  int run(MPI_Comm world) override;

private:
  CLI::App* app_ = nullptr;
  Options opt_;
};

std::vector<long long> parse_sizes(const std::string& text) {
  std::vector<long long> sizes;
  if (text.empty()) {
    for (long long m = 1; m <= 65536; m *= 2) sizes.push_back(m);
    return sizes;
  }
  for (const std::string& item : split_list(text)) {
    const long long bytes = parse_bytes(item);
    if (bytes < 1 || bytes > (1LL << 30)) throw UsageError("--sizes: \"" + item + "\" is not a size in 1 B..1 GiB");
    sizes.push_back(bytes);
  }
  if (sizes.empty()) throw UsageError("--sizes: no sizes given");
  return sizes;
}

int CollectivesCommand::run(MPI_Comm world) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(world, &world_rank);
  MPI_Comm_size(world, &world_size);
  const bool root = world_rank == 0;

  // --- Validate everything before communicating (same verdict everywhere).
  std::vector<Op> ops;
  if (opt_.ops.empty()) opt_.ops = {"alltoall", "allgather", "alltoallw"};
  for (const std::string& name : opt_.ops)
    ops.push_back(name == "alltoall" ? Op::alltoall : name == "allgather" ? Op::allgather : Op::alltoallw);
  if (opt_.neighborhoods.empty() && opt_.offsets_files.empty())
    opt_.neighborhoods = {"moore:3:1", "moore:4:1", "octant", "shales"};
  std::vector<NamedNeighborhood> neighborhoods;
  for (const std::string& spec : opt_.neighborhoods)
    for (NamedNeighborhood& n : expand_neighborhood(spec)) neighborhoods.push_back(std::move(n));
  for (const std::string& path : opt_.offsets_files)
    for (NamedNeighborhood& n : expand_neighborhood("file:" + path)) neighborhoods.push_back(std::move(n));
  const std::vector<long long> sizes = parse_sizes(opt_.sizes);
  const long long max_memory = parse_bytes(opt_.max_memory);
  if (max_memory <= 0) throw UsageError("--max-memory: \"" + opt_.max_memory + "\" is not a size like 1G or 512M");

  std::vector<Contender> contenders;
  const std::vector<Contender> known = known_contenders();
  if (opt_.contenders.empty()) {
    for (const Contender& c : known)
      if (c.by_default) contenders.push_back(c);
  } else {
    for (const std::string& name : split_list(opt_.contenders)) {
      auto found = std::find_if(known.begin(), known.end(), [&](const Contender& c) { return c.name == name; });
      if (found == known.end()) {
        std::string names;
        for (const Contender& c : known) names += (names.empty() ? "" : ", ") + c.name;
        if (name == "mpi-persistent")
          throw UsageError("--contenders: mpi-persistent needs an MPI-4 library (this one is MPI " +
                           std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) + ")");
        throw UsageError("--contenders: unknown contender \"" + name + "\"; choose from " + names);
      }
      if (std::none_of(contenders.begin(), contenders.end(), [&](const Contender& c) { return c.name == name; }))
        contenders.push_back(*found);
    }
  }
  if (contenders.empty()) throw UsageError("--contenders: none given");
  const bool need_create = std::any_of(contenders.begin(), contenders.end(),
                                       [](const Contender& c) { return c.kind == Kind::mpi_create; });
  const bool need_adjacent = std::any_of(contenders.begin(), contenders.end(), [](const Contender& c) {
    return c.kind == Kind::mpi_adjacent || c.kind == Kind::mpi_persistent;
  });

  std::vector<int> fixed_procs;
  for (const NamedNeighborhood& n : neighborhoods) {
    if (!opt_.procs.empty()) {
      fixed_procs = isostencil::parse_procs(opt_.procs, n.offsets.dims());
      long long product = 1;
      for (int p : fixed_procs) product *= p;
      if (product != world_size)
        throw UsageError(fmt::format("--procs {}: {} processes, but {} ranks run", opt_.procs, product, world_size));
    }
  }

  const Environment env = Environment::collect(world);
  if (root && !opt_.quiet) {
    std::cout << fmt::format("iso-bench collectives: {} ranks, {} ({})\n", world_size, env.mpi_library,
                             "MPI " + env.mpi_version);
    std::cout << fmt::format(
        "method: barrier before each call, maximum over ranks, {} reps ({} warm-up), Tukey k={}, median; "
        "{} launch(es): median of medians [min, max]\n",
        opt_.reps, opt_.warmup, opt_.tukey, opt_.launches);
    if (!have_persistent_neighbor)
      std::cout << fmt::format(
          "mpi-persistent: not measured, MPI {}.{} has no MPI_Neighbor_*_init (MPI-4)\n", MPI_VERSION,
          MPI_SUBVERSION);
    std::cout.flush();
  }

  // --- Rows, created in the first launch in output order.
  std::vector<ResultRow> rows;
  std::map<std::string, std::size_t> row_of;
  std::map<std::string, std::string> point_skipped;  // op|nbh|size -> reason
  auto key_of = [](Op op, const std::string& nbh, long long m, const std::string& contender) {
    return fmt::format("{}|{}|{}|{}", op_name(op), nbh, m, contender);
  };
  auto row_for = [&](Op op, const NamedNeighborhood& n, long long m, long long send_bytes, const Contender& c,
                     const std::string& proc_dims, const std::string& periodic) -> ResultRow& {
    const std::string key = key_of(op, n.name, m, c.name);
    auto found = row_of.find(key);
    if (found != row_of.end()) return rows[found->second];
    ResultRow row;
    row.operation = op_name(op);
    row.neighborhood = n.name;
    row.dims = n.offsets.dims();
    row.neighbors = n.offsets.size();
    row.size_bytes = m;
    row.send_bytes = send_bytes;
    row.contender = c.name;
    row.status = "ok";
    row.proc_dims = proc_dims;
    row.periodic = periodic;
    row.reps = opt_.reps;
    row_of[key] = rows.size();
    rows.push_back(row);
    return rows.back();
  };
  auto say = [&](const std::string& line) {
    if (root && !opt_.quiet) {
      std::cout << line << "\n";
      std::cout.flush();
    }
  };

  for (int launch = 0; launch < opt_.launches; ++launch) {
    const bool first = launch == 0;
    if (opt_.launches > 1) say(fmt::format("--- launch {}/{}", launch + 1, opt_.launches));
    for (const NamedNeighborhood& n : neighborhoods) {
      const int d = n.offsets.dims();
      const int s = n.offsets.size();
      std::vector<int> dims = opt_.procs.empty() ? std::vector<int>(static_cast<std::size_t>(d), 0) : fixed_procs;
      const std::vector<bool> periodic(static_cast<std::size_t>(d), !opt_.mesh);
      iso::CartComm cart(world, dims, periodic, !opt_.no_reorder);
      const std::string proc_dims = format_dims(cart.geometry().sizes);
      const std::string periodic_text = format_periodic(periodic);
      std::string nbh_skip;
      try {
        isostencil::check_limits(n.offsets, cart.geometry());
      } catch (const UsageError& error) {
        nbh_skip = std::string("beyond the schedule limits: ") + error.what();
      }
      if (!nbh_skip.empty()) {
        if (first) {
          say(fmt::format("{}: skipped ({})", n.name, nbh_skip));
          for (Op op : ops)
            for (long long m : sizes)
              for (const Contender& c : contenders) {
                ResultRow& row = row_for(op, n, m, 0, c, proc_dims, periodic_text);
                row.status = "skipped";
                row.note = nbh_skip;
              }
        }
        continue;
      }
      iso::Neighborhood nbh(cart.get(), n.offsets);
      MPI_Comm bench_raw = MPI_COMM_NULL;
      ISO_MPI_CHECK(MPI_Comm_dup(cart.get(), &bench_raw));
      iso::Comm bench(bench_raw);
      ISO_MPI_CHECK(MPI_Comm_set_errhandler(bench_raw, MPI_ERRORS_RETURN));
      std::unique_ptr<Graph> graph_create = need_create ? make_graph(cart.get(), nbh, false) : nullptr;
      std::unique_ptr<Graph> graph_adjacent = need_adjacent ? make_graph(cart.get(), nbh, true) : nullptr;
      // A graph whose edges do not match the neighborhood makes its rows errors.
      auto graph_error = [&](const Graph* graph) {
        int bad = graph && !graph->error.empty() ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, bench.get());
        return bad ? (graph && !graph->error.empty() ? graph->error : std::string("graph edges do not match on another rank"))
                   : std::string();
      };
      const std::string create_error = graph_error(graph_create.get());
      const std::string adjacent_error = graph_error(graph_adjacent.get());
      // The MPI library's own collectives on a neighborhood where some rank
      // has a neighbor in several directions: measured only if the library
      // pairs repeated edges in order; otherwise their rows are skipped.
      std::string repeated_skip;
      {
        int repeated = nbh.has_repeated_partner() ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT, MPI_MAX, bench.get());
        if (repeated && !iso::mpi_pairs_repeated_edges_in_order())
          repeated_skip = "unsupported: repeated partners, and this MPI library pairs repeated edges out of order";
      }
      if (first)
        say(fmt::format("{} ({}, s = {}) on {} processes{}", n.name, n.description, s, proc_dims,
                        opt_.mesh ? " (mesh)" : ""));

      for (Op op : ops) {
        for (long long m : sizes) {
          const std::string point_key = fmt::format("{}|{}|{}", op_name(op), n.name, m);
          if (!first && point_skipped.count(point_key)) continue;
          const long double estimate = layout_bytes_estimate(op, n.offsets, m);
          const long long send_estimate =
              op == Op::allgather ? m : static_cast<long long>(std::min<long double>(estimate, 9e18L));
          auto skip_point = [&](const std::string& reason) {
            point_skipped[point_key] = reason;
            for (const Contender& c : contenders) {
              ResultRow& row = row_for(op, n, m, send_estimate, c, proc_dims, periodic_text);
              row.status = "skipped";
              row.note = reason;
            }
            say(fmt::format("  {} {} {}: skipped: {}", op_name(op), n.name, format_bytes(m), reason));
          };
          // Memory: send, receive and temporary buffers of the largest size.
          const long double need = 3.0L * estimate;
          if (first && need > static_cast<long double>(max_memory)) {
            skip_point(fmt::format("needs about {} per rank (3 buffers of {}) > --max-memory {}",
                                   format_bytes(static_cast<long long>(std::min<long double>(need, 9e18L))),
                                   format_bytes(static_cast<long long>(std::min<long double>(estimate, 9e18L))),
                                   format_bytes(max_memory)));
            continue;
          }
          const Layout layout = make_layout(op, n.offsets, m);
          if (first && !layout.fits_int) {
            skip_point("a block exceeds INT_MAX bytes");
            continue;
          }
          std::vector<unsigned char> send(static_cast<std::size_t>(std::max(layout.send_total, 1LL)));
          std::vector<unsigned char> recv(static_cast<std::size_t>(std::max(layout.recv_total, 1LL)));
          const Point point{op, &nbh, &layout, send.data(), recv.data(), m};
          const int rank = nbh.rank();
          const std::uint32_t seed = static_cast<std::uint32_t>(m * 7 + static_cast<long long>(op) + 1);
          auto fill_send = [&] {
            for (std::size_t i = 0; i < layout.send_counts.size(); ++i)
              fill_block(send.data() + layout.send_displs[i], static_cast<std::size_t>(layout.send_counts[i]),
                         block_key(seed, rank, static_cast<int>(i)));
          };
          auto clear_recv = [&] { std::fill(recv.begin(), recv.end(), sentinel); };
          auto block_hashes = [&] {
            std::vector<std::uint64_t> h(static_cast<std::size_t>(s));
            for (int i = 0; i < s; ++i)
              h[static_cast<std::size_t>(i)] =
                  hash_bytes(recv.data() + layout.recv_displs[static_cast<std::size_t>(i)],
                             static_cast<std::size_t>(layout.recv_counts[static_cast<std::size_t>(i)]));
            return h;
          };
          // Blocks that differ from what their source rank sent (sentinel
          // where there is no source).
          auto count_wrong_blocks = [&] {
            std::vector<unsigned char> want;
            long bad = 0;
            for (int i = 0; i < s; ++i) {
              const std::size_t bytes = static_cast<std::size_t>(layout.recv_counts[static_cast<std::size_t>(i)]);
              want.assign(bytes, sentinel);
              const int source = nbh.source_rank(i);
              if (source >= 0) fill_block(want.data(), bytes, block_key(seed, source, op == Op::allgather ? 0 : i));
              bad += std::memcmp(want.data(), recv.data() + layout.recv_displs[static_cast<std::size_t>(i)], bytes) != 0;
            }
            return bad;
          };

          auto prepare = [&](const Contender& c) -> std::unique_ptr<Prepared> {
            switch (c.kind) {
              case Kind::iso: return prepare_iso(point, c.algorithm);
              case Kind::mpi_create: return prepare_mpi(point, *graph_create, false);
              case Kind::mpi_adjacent: return prepare_mpi(point, *graph_adjacent, false);
              case Kind::mpi_persistent: return prepare_mpi(point, *graph_adjacent, true);
              case Kind::bound: return prepare_bound(point, c.algorithm, bench.get());
            }
            return nullptr;
          };
          auto sum_over_ranks = [&](long value) {
            MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG, MPI_SUM, bench.get());
            return value;
          };

          if (first) {
            // The reference: the straightforward algorithm, checked against
            // the data its source ranks sent.
            std::unique_ptr<Prepared> reference = prepare_iso(point, iso::Algorithm::linear);
            fill_send();
            clear_recv();
            reference->check_run();
            const long reference_bad = sum_over_ranks(count_wrong_blocks());
            const std::vector<std::uint64_t> reference_hashes = block_hashes();
            reference.reset();
            // Check each contender once; probe calls estimate the time of the point.
            double probe_total = 0;
            for (const Contender& c : contenders) {
              ResultRow& row = row_for(op, n, m, layout.send_total, c, proc_dims, periodic_text);
              const std::string& graph_problem = c.kind == Kind::mpi_create ? create_error
                                                 : (c.kind == Kind::mpi_adjacent || c.kind == Kind::mpi_persistent)
                                                     ? adjacent_error
                                                     : std::string();
              if (!repeated_skip.empty() && c.algorithm == iso::Algorithm::mpi && c.kind != Kind::bound &&
                  c.kind != Kind::iso) {
                row.status = "skipped";
                row.note = repeated_skip;
                say(fmt::format("  {} {} {} {}: skipped: {}", op_name(op), n.name, format_bytes(m), c.name,
                                repeated_skip));
                continue;
              }
              if (!graph_problem.empty()) {
                row.status = "error";
                row.note = graph_problem;
                continue;
              }
              std::unique_ptr<Prepared> prepared;
              std::string failure;
              try {
                prepared = prepare(c);
              } catch (const std::exception& error) {
                failure = error.what();
              }
              int failed = failure.empty() ? 0 : 1;
              MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, bench.get());
              if (failed) {
                row.status = "error";
                row.note = failure.empty() ? "init failed on another rank" : "init failed: " + failure;
                say(fmt::format("  {} {} {} {}: ERROR {}", op_name(op), n.name, format_bytes(m), c.name, row.note));
                continue;
              }
              if (c.algorithm == iso::Algorithm::automatic && c.kind == Kind::iso) {
                row.chosen = prepared->chosen;
                const iso::CostModel& model = iso::CostModel::for_comm(nbh.comm());
                row.note = fmt::format("cost model {}: alpha={:.3g} beta={:.3g} gamma={:.3g} delta={:.3g}",
                                       model.source, model.alpha, model.beta, model.gamma, model.delta);
                if (model.eager_limit > 0)
                  row.note += fmt::format(" above {:g} B: alpha={:.3g} beta={:.3g}", model.eager_limit,
                                          model.alpha_large, model.beta_large);
              }
              if (c.kind != Kind::bound) {
                fill_send();
                clear_recv();
                prepared->check_run();
                long bad = 0;
                if (reference_bad == 0) {
                  const std::vector<std::uint64_t> hashes = block_hashes();
                  for (int i = 0; i < s; ++i) bad += hashes[static_cast<std::size_t>(i)] != reference_hashes[static_cast<std::size_t>(i)];
                } else {
                  bad = count_wrong_blocks();
                }
                bad = sum_over_ranks(bad);
                if (bad) {
                  row.status = "error";
                  row.note = reference_bad == 0
                                 ? fmt::format("wrong result: {} blocks (over all ranks) differ from linear's", bad)
                                 : fmt::format("wrong result: {} blocks (over all ranks) differ from the sent data "
                                               "(linear is wrong too)",
                                               bad);
                  say(fmt::format("  {} {} {} {}: ERROR {}", op_name(op), n.name, format_bytes(m), c.name, row.note));
                  continue;
                }
              } else {
                row.note = fmt::format("bound: {} schedule as contiguous MPI_Sendrecv, no data check", prepared->chosen);
              }
              // Probe: the fastest of 3 calls (the first calls pay for page
              // faults and connection set-up), each the maximum over ranks.
              const std::vector<double> probes = time_repetitions(bench.get(), 0, 3, [&] { prepared->call(); });
              probe_total += *std::min_element(probes.begin(), probes.end());
            }
            const double predicted = probe_total * (opt_.reps + opt_.warmup) * opt_.launches;
            if (opt_.max_seconds > 0 && predicted > opt_.max_seconds) {
              skip_point(fmt::format("estimated {:.0f} s ({} launches x {} calls of {} contenders, {:.3g} ms "
                                     "for one call of each contender) > --max-seconds {:g}",
                                     predicted, opt_.launches, opt_.reps + opt_.warmup, contenders.size(),
                                     probe_total * 1e3, opt_.max_seconds));
              continue;
            }
          }

          // --- Timing.
          for (const Contender& c : contenders) {
            ResultRow& row = rows[row_of.at(key_of(op, n.name, m, c.name))];
            if (row.status != "ok") continue;
            std::unique_ptr<Prepared> prepared = prepare(c);
            const std::vector<double> times =
                time_repetitions(bench.get(), opt_.warmup, opt_.reps, [&] { prepared->call(); });
            const TukeySummary summary = add_launch(row, times, opt_.tukey);
            say(fmt::format("  {:<9} {:<16} {:>9}  {:<14} {:>11.2f} us  ({}/{} kept){}", op_name(op), n.name,
                            format_bytes(m), c.name, summary.median * 1e6, summary.kept, times.size(),
                            row.chosen.empty() ? "" : " -> " + row.chosen));
          }
        }
      }
    }
    if (root && !opt_.csv.empty()) write_csv(opt_.csv, rows, env);
  }

  // --- Summary: median of medians per contender (columns) and size (rows).
  if (root) {
    std::string current;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const ResultRow& row = rows[k];
      const std::string table = row.operation + " " + row.neighborhood;
      if (table == current) continue;
      current = table;
      std::vector<std::string> names;
      for (const Contender& c : contenders) names.push_back(c.name);
      std::cout << fmt::format("\n{} {} (s = {}, {} ranks, {}): time per call [us], median of {} launch medians\n",
                               row.operation, row.neighborhood, row.neighbors, world_size, row.proc_dims,
                               opt_.launches);
      std::string header = fmt::format("{:>9}", "size");
      for (const std::string& name : names) header += fmt::format(" {:>12}", name);
      std::cout << header << "\n";
      for (long long m : sizes) {
        std::string line = fmt::format("{:>9}", format_bytes(m));
        for (const std::string& name : names) {
          auto found = row_of.find(key_of(row.operation == "alltoall"    ? Op::alltoall
                                          : row.operation == "allgather" ? Op::allgather
                                                                         : Op::alltoallw,
                                          row.neighborhood, m, name));
          if (found == row_of.end()) {
            line += fmt::format(" {:>12}", "-");
            continue;
          }
          const ResultRow& r = rows[found->second];
          if (r.status == "ok" && !r.launch_medians.empty())
            line += fmt::format(" {:>12.2f}", summarize_launches(r.launch_medians).median * 1e6);
          else
            line += fmt::format(" {:>12}", r.status);
        }
        std::cout << line << "\n";
      }
    }
    long errors = 0, skipped = 0;
    for (const ResultRow& row : rows) {
      errors += row.status == "error";
      skipped += row.status == "skipped";
    }
    std::cout << fmt::format("\n{} rows: {} measured, {} skipped, {} errors{}\n", rows.size(),
                             rows.size() - static_cast<std::size_t>(errors + skipped), skipped, errors,
                             opt_.csv.empty() ? "" : "; CSV: " + opt_.csv);
    if (errors) {
      for (const ResultRow& row : rows)
        if (row.status == "error")
          std::cout << fmt::format("error: {} {} {} {}: {}\n", row.operation, row.neighborhood,
                                   format_bytes(row.size_bytes), row.contender, row.note);
    }
    std::cout.flush();
  }
  long errors = 0;
  for (const ResultRow& row : rows) errors += row.status == "error";
  MPI_Bcast(&errors, 1, MPI_LONG, 0, world);
  return errors ? 1 : 0;
}

}  // namespace

std::unique_ptr<Subcommand> make_collectives_command(CLI::App& parent) {
  return std::make_unique<CollectivesCommand>(parent);
}

}  // namespace isobench
