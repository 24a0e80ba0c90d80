// Algorithm::mpi: the MPI library's own neighborhood collective, and the
// probe of how that library pairs repeated edges.
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include <memory>
#include <vector>

namespace iso {

bool mpi_pairs_repeated_edges_in_order() {
#if ISO_SMPI
  return false;  // nothing to probe: SMPI has no neighborhood collectives
#else
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
#endif
}

namespace detail {

// Algorithm::mpi: the library's neighborhood collective over an adjacent
// distributed graph with one edge per distinct existing neighbor. A neighbor
// in several directions (tiny tori) gets one message carrying its blocks in
// block order, which sender and receiver list alike (x sends block i to
// x + v_i, which receives block i from x). Repeated edges would leave the
// pairing of those messages to the MPI library, and libraries differ: MPICH
// 4.0.2 pairs them in reverse (docs/mpich.md).
std::unique_ptr<Operation::Impl> build_native(const Neighborhood& neighborhood, Collective collective,
                                              const Buffers& buffers) {
#if ISO_SMPI
  // Every rank reaches this with the same algorithm, so every rank throws.
  (void)neighborhood, (void)collective, (void)buffers;
  throw Error("iso: algorithm mpi is not available under SMPI (SimGrid's MPI has no MPI_Dist_graph_create_adjacent "
              "and no MPI_Neighbor_* collectives); choose torus, direct, basis, linear or automatic");
#endif
  auto impl = std::make_unique<Operation::Impl>();
  impl->native = true;
  auto plan = std::make_shared<ExecutionPlan>();
  auto schedule = std::make_shared<Schedule>();
  schedule->algorithm = Algorithm::mpi;
  schedule->collective = collective;
  schedule->num_blocks = neighborhood.size();
  plan->schedule = std::move(schedule);
  plan->relocatable = false;
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
        // Empty blocks are left out: they add nothing, and MPICH counts an
        // empty part's lower bound 0 into the struct's true lower bound, then
        // takes MPI_BOTTOM with that type for a null buffer and refuses it.
        int bytes = 0;
        ISO_MPI_CHECK(MPI_Type_size(block->type, &bytes));
        if (block->count == 0 || bytes == 0) continue;
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
  plan->step_begin = {0, 1};
  plan->move_begin = {0, 0, 0};
  plan->unpack_begin = {0, 0};
  impl->plan = std::move(plan);
  impl->bases.assign(region_image, 0);
#if MPI_VERSION >= 4
  ISO_MPI_CHECK(MPI_Neighbor_alltoallw_init(MPI_BOTTOM, impl->send_counts.data(), impl->send_displs.data(),
                                            impl->send_types.data(), MPI_BOTTOM, impl->recv_counts.data(),
                                            impl->recv_displs.data(), impl->recv_types.data(), impl->graph.get(),
                                            MPI_INFO_NULL, &impl->requests[0]));
  impl->native_persistent = true;
#endif
  return impl;
}

}  // namespace detail

}  // namespace iso
