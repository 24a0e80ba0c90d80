// `iso-bench collectives`, the contenders: which ones there are, and each
// made ready for one point: the isomorphic collectives, MPI's neighborhood
// collectives on distributed graphs (plain and persistent) and the bounds.
#include "collectives.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace isobench::collectives {

using isostencil::UsageError;

const char* op_name(Op op) {
  switch (op) {
    case Op::alltoall: return "alltoall";
    case Op::allgather: return "allgather";
    case Op::alltoallw: return "alltoallw";
  }
  return "?";
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

std::vector<Contender> known_contenders() {
  std::vector<Contender> out = {
      {"linear", Kind::iso, iso::Algorithm::linear, true},
      {"torus", Kind::iso, iso::Algorithm::torus, true},
      {"direct", Kind::iso, iso::Algorithm::direct, true},
      {"basis", Kind::iso, iso::Algorithm::basis, false},
      {"auto", Kind::iso, iso::Algorithm::automatic, true},
      // Not by default: its init times up to 13 candidates (about 0.15 s at
      // worst), paid again in every launch of every point.
      {"tune", Kind::iso, iso::Algorithm::tune, false},
#if !defined(SMPI_H)  // SimGrid SMPI has no MPI_Dist_graph_* nor MPI_Neighbor_* (docs/simulating.md)
      {"iso-mpi", Kind::iso, iso::Algorithm::mpi, false},
      {"mpi-create", Kind::mpi_create, iso::Algorithm::mpi, true},
      {"mpi-adjacent", Kind::mpi_adjacent, iso::Algorithm::mpi, true},
#endif
  };
  if (have_persistent_neighbor) out.push_back({"mpi-persistent", Kind::mpi_persistent, iso::Algorithm::mpi, true});
  out.push_back({"bound-torus", Kind::bound, iso::Algorithm::torus, true});
  out.push_back({"bound-direct", Kind::bound, iso::Algorithm::direct, true});
  return out;
}

std::vector<Contender> select_contenders(const std::string& list) {
  std::vector<Contender> contenders;
  const std::vector<Contender> known = known_contenders();
  if (list.empty()) {
    for (const Contender& c : known)
      if (c.by_default) contenders.push_back(c);
  } else {
    for (const std::string& name : split_list(list)) {
      // "torus@fresh", "torus@persistent": an isomorphic contender whose
      // messages are posted that way (OperationOptions::posting).
      const std::size_t at = name.find('@');
      iso::Posting posting = iso::Posting::automatic;
      if (at != std::string::npos) {
        const std::string how = name.substr(at + 1);
        if (how == "fresh")
          posting = iso::Posting::fresh;
        else if (how == "persistent")
          posting = iso::Posting::persistent;
        else
          throw UsageError("--contenders: \"" + name + "\": after @ give fresh or persistent");
      }
      // "torus:p2": an isomorphic contender with at most 2 messages in flight each way.
      const std::string unposted = name.substr(0, at);
      const std::size_t colon = unposted.find(":p");
      int ports = 0;
      std::string base = unposted;
      if (colon != std::string::npos) {
        base = unposted.substr(0, colon);
        const std::string count = unposted.substr(colon + 2);
        if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(count) < 1)
          throw UsageError("--contenders: \"" + name + "\": the port count after :p must be 1 to 999999");
        ports = std::stoi(count);
      }
      auto found = std::find_if(known.begin(), known.end(), [&](const Contender& c) { return c.name == base; });
      if (found != known.end() && (ports > 0 || at != std::string::npos)) {
        if (found->kind != Kind::iso || found->algorithm == iso::Algorithm::mpi)
          throw UsageError("--contenders: \"" + name +
                           "\": only linear, torus, direct, basis, auto and tune take :pK or @posting");
        Contender limited = *found;
        limited.name = name;
        limited.ports = ports;
        limited.posting = posting;
        limited.by_default = false;
        if (std::none_of(contenders.begin(), contenders.end(), [&](const Contender& c) { return c.name == name; }))
          contenders.push_back(limited);
        continue;
      }
      if (found == known.end()) {
        std::string names;
        for (const Contender& c : known) names += (names.empty() ? "" : ", ") + c.name;
#if defined(SMPI_H)
        if (name == "iso-mpi" || name == "mpi-create" || name == "mpi-adjacent" || name == "mpi-persistent")
          throw UsageError("--contenders: " + name + " is not available under SMPI (no MPI_Neighbor_* there)");
#endif
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
  return contenders;
}

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

namespace {

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) iso::detail::throw_mpi_error(rc, call, __FILE__, __LINE__);
}

std::string algorithm_with_ports(iso::Algorithm algorithm, int ports) {
  return fmt::format("{}:p{}", iso::to_string(algorithm), ports);
}

}  // namespace

std::string chosen_label(const iso::Operation& op) {
  // tune always names its port count (p0: no limit), as it chooses one; the
  // others only when they run with a limit, so auto's plain names stay.
  if (!op.tune_trials().empty() || op.ports() > 0) return algorithm_with_ports(op.algorithm(), op.ports());
  return iso::to_string(op.algorithm());
}

std::string trials_text(const std::vector<iso::TuneTrial>& trials) {
  std::string out;
  for (const iso::TuneTrial& t : trials)
    out += fmt::format("{}{} {:.2f}", out.empty() ? "" : ", ", algorithm_with_ports(t.algorithm, t.ports),
                       t.seconds * 1e6);
  return out;
}

std::unique_ptr<Prepared> prepare_iso(const Point& p, iso::Algorithm algorithm, int ports, iso::Posting posting) {
  auto prepared = std::make_unique<Prepared>();
  iso::OperationOptions options;
  options.algorithm = algorithm;
  options.ports = ports;
  options.posting = posting;
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
  prepared->chosen = chosen_label(*op);
  if (algorithm == iso::Algorithm::tune) prepared->trials = trials_text(op->tune_trials());
  prepared->call = [op] { op->run(); };
  prepared->check_run = prepared->call;
  return prepared;
}

namespace {

// MPI_Neighbor_alltoallw (or its _init) on the graph.
void set_up_mpi_alltoallw(Prepared* self, const Point& p, const Graph& graph, bool persistent) {
  const MPI_Comm comm = graph.comm.get();
  const std::size_t outdegree = graph.send_order.size(), indegree = graph.recv_order.size();
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
}

// MPI_Neighbor_alltoall / MPI_Neighbor_allgather (or their _init) on the graph.
void set_up_mpi_blocks(Prepared* self, const Point& p, const Graph& graph, bool persistent) {
  const MPI_Comm comm = graph.comm.get();
  const int m = static_cast<int>(p.m);
  const std::size_t mb = static_cast<std::size_t>(p.m);
  const std::size_t outdegree = graph.send_order.size(), indegree = graph.recv_order.size();
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

}  // namespace

std::unique_ptr<Prepared> prepare_mpi(const Point& p, const Graph& graph, bool persistent) {
  auto prepared = std::make_unique<Prepared>();
  Prepared* self = prepared.get();
  if (p.op == Op::alltoallw)
    set_up_mpi_alltoallw(self, p, graph, persistent);
  else
    set_up_mpi_blocks(self, p, graph, persistent);
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

std::unique_ptr<Prepared> prepare(const Contender& c, const Point& p, const Graphs& graphs, MPI_Comm comm) {
  switch (c.kind) {
    case Kind::iso: return prepare_iso(p, c.algorithm, c.ports, c.posting);
    case Kind::mpi_create: return prepare_mpi(p, *graphs.create, false);
    case Kind::mpi_adjacent: return prepare_mpi(p, *graphs.adjacent, false);
    case Kind::mpi_persistent: return prepare_mpi(p, *graphs.adjacent, true);
    case Kind::bound: return prepare_bound(p, c.algorithm, comm);
  }
  return nullptr;
}

}  // namespace isobench::collectives
