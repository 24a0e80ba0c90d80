// PMPI wrappers that track live MPI handles by value (a handle freed by MPI
// or by the caller is erased, whichever call frees it), so the hygiene test
// can compare counts before and after any piece of library work. Only the main
// thread calls MPI in the test, so plain globals suffice. Signatures follow
// the MPI-3.1 C bindings, which Open MPI 4.1 and MPICH 4.0 share.
#include "mpi_handle_tracker.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace iso_hygiene {
namespace {

struct Tracker {
  // Handle value -> references: MPI may hand out one object twice (the types
  // from MPI_Type_get_contents, MPI_Comm_get_errhandler), each to be freed.
  std::array<std::unordered_map<std::uintptr_t, long>, num_kinds> live;
  std::array<long, num_kinds> live_total{};
  std::unordered_set<std::uintptr_t> persistent;
  std::array<long, num_kinds> created{};
  std::array<long, num_kinds> stray_frees{};
  long calls = 0;
  long fail_at = 0;  // countdown to the injected failure (0: off)
  long local_creations = 0;
  bool injected = false;
};

Tracker& tracker() {
  static Tracker* instance = new Tracker;  // never destroyed: MPI may run during exit
  return *instance;
}

// Handles are pointers in Open MPI and integers in MPICH.
template <class Handle>
std::uintptr_t key(Handle handle) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<std::uintptr_t>(handle);
  else
    return static_cast<std::uintptr_t>(handle);
}

template <class Handle>
void add(int kind, Handle handle) {
  Tracker& t = tracker();
  ++t.live[kind][key(handle)];
  ++t.live_total[kind];
  ++t.created[kind];
}

template <class Handle>
void remove(int kind, Handle handle) {
  Tracker& t = tracker();
  const auto found = t.live[kind].find(key(handle));
  if (found == t.live[kind].end()) {
    ++t.stray_frees[kind];
    return;
  }
  --t.live_total[kind];
  if (--found->second == 0) {
    t.live[kind].erase(found);
    if (kind == request) t.persistent.erase(key(handle));
  }
}

// Result of a creating call: the new handle (if any) is live.
template <class Handle>
int created(int kind, int rc, const Handle* handle, Handle null) {
  ++tracker().calls;
  if (rc == MPI_SUCCESS && *handle != null) add(kind, *handle);
  return rc;
}

int persistent_request(int rc, const MPI_Request* handle) {
  created(request, rc, handle, MPI_REQUEST_NULL);
  if (rc == MPI_SUCCESS && *handle != MPI_REQUEST_NULL) tracker().persistent.insert(key(*handle));
  return rc;
}

// Runs a freeing call; the handle it was given is gone if it succeeded.
template <class Handle, class Call>
int freeing(int kind, Handle* handle, Handle null, Call&& call) {
  ++tracker().calls;
  const Handle before = *handle;
  const int rc = call();
  if (rc == MPI_SUCCESS && before != null) remove(kind, before);
  static const bool trace = std::getenv("ISO_HYGIENE_TRACE") != nullptr;
  if (trace && (tracker().fail_at > 0 || tracker().injected))
    std::fprintf(stderr, "[hygiene trace] free %s%s\n", kind_name(kind), rc == MPI_SUCCESS ? "" : " failed");
  return rc;
}

// True when the armed failure fires on this local creating call.
// ISO_HYGIENE_TRACE=1 prints each such call (to find the one that leaks).
bool inject(const char* call) {
  Tracker& t = tracker();
  ++t.local_creations;
  static const bool trace = std::getenv("ISO_HYGIENE_TRACE") != nullptr;
  const bool fire = t.fail_at > 0 && --t.fail_at == 0;
  if (trace && (t.fail_at > 0 || fire))
    std::fprintf(stderr, "[hygiene trace] local call %ld: %s%s\n", t.local_creations, call, fire ? " FAILS" : "");
  if (fire) t.injected = true;
  return fire;
}

// Completion calls: a request whose handle became MPI_REQUEST_NULL was freed
// by MPI (a nonblocking request completed); persistent ones stay.
std::vector<MPI_Request>& before_copy(int count, const MPI_Request* requests) {
  static std::vector<MPI_Request>* copy = new std::vector<MPI_Request>;
  copy->assign(requests, requests + (count > 0 ? count : 0));
  return *copy;
}
void completed(const std::vector<MPI_Request>& before, const MPI_Request* after) {
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i] != MPI_REQUEST_NULL && after[i] == MPI_REQUEST_NULL) remove(request, before[i]);
}

}  // namespace

const char* kind_name(int kind) {
  static const char* const names[num_kinds] = {"request", "datatype", "communicator", "group",
                                               "info",    "op",       "errhandler",   "keyval"};
  return kind >= 0 && kind < num_kinds ? names[kind] : "?";
}

Counts counts() {
  const Tracker& t = tracker();
  Counts c;
  c.live = t.live_total;
  c.created = t.created;
  c.stray_frees = t.stray_frees;
  c.persistent_requests = static_cast<long>(t.persistent.size());
  c.calls = t.calls;
  return c;
}

std::string difference(const Counts& now, const Counts& before) {
  std::string text;
  for (int k = 0; k < num_kinds; ++k) {
    const long delta = now.live[k] - before.live[k];
    if (delta != 0)
      text += (text.empty() ? "" : ", ") + std::string(kind_name(k)) + (delta > 0 ? " +" : " ") +
              std::to_string(delta);
    const long strays = now.stray_frees[k] - before.stray_frees[k];
    if (strays != 0)
      text += (text.empty() ? "" : ", ") + std::to_string(strays) + " " + kind_name(k) +
              " handle(s) freed that were never created";
  }
  return text;
}

void fail_local_creation(long n) {
  Tracker& t = tracker();
  t.fail_at = n > 0 ? n : 0;
  t.local_creations = 0;
  t.injected = false;
}
long local_creations() { return tracker().local_creations; }
bool failure_injected() { return tracker().injected; }

}  // namespace iso_hygiene

using namespace iso_hygiene;

// A local creating call: may be failed on purpose, else forwarded and counted.
#define ISO_LOCAL_CREATE(kind, handle, null, call) \
  do {                                             \
    if (inject(#call)) return MPI_ERR_OTHER;       \
    return created(kind, call, handle, null);      \
  } while (0)

extern "C" {

// --- datatypes ------------------------------------------------------------------
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_contiguous(count, old, type));
}
int MPI_Type_vector(int count, int length, int stride, MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_vector(count, length, stride, old, type));
}
int MPI_Type_create_hvector(int count, int length, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_create_hvector(count, length, stride, old, type));
}
int MPI_Type_indexed(int count, const int lengths[], const int displs[], MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_indexed(count, lengths, displs, old, type));
}
int MPI_Type_create_hindexed(int count, const int lengths[], const MPI_Aint displs[], MPI_Datatype old,
                             MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_create_hindexed(count, lengths, displs, old, type));
}
int MPI_Type_create_indexed_block(int count, int length, const int displs[], MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL,
                   PMPI_Type_create_indexed_block(count, length, displs, old, type));
}
int MPI_Type_create_hindexed_block(int count, int length, const MPI_Aint displs[], MPI_Datatype old,
                                   MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL,
                   PMPI_Type_create_hindexed_block(count, length, displs, old, type));
}
int MPI_Type_create_struct(int count, const int lengths[], const MPI_Aint displs[], const MPI_Datatype types[],
                           MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_create_struct(count, lengths, displs, types, type));
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_create_resized(old, lb, extent, type));
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL,
                   PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, type));
}
int MPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                           const int psizes[], int order, MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL,
                   PMPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, type));
}
int MPI_Type_dup(MPI_Datatype old, MPI_Datatype* type) {
  ISO_LOCAL_CREATE(datatype, type, MPI_DATATYPE_NULL, PMPI_Type_dup(old, type));
}
int MPI_Type_commit(MPI_Datatype* type) {
  if (inject("MPI_Type_commit")) return MPI_ERR_OTHER;
  ++tracker().calls;
  return PMPI_Type_commit(type);
}
// The derived datatypes it returns are new handles the caller must free.
int MPI_Type_get_contents(MPI_Datatype type, int max_integers, int max_addresses, int max_datatypes, int integers[],
                          MPI_Aint addresses[], MPI_Datatype datatypes[]) {
  ++tracker().calls;
  const int rc =
      PMPI_Type_get_contents(type, max_integers, max_addresses, max_datatypes, integers, addresses, datatypes);
  if (rc != MPI_SUCCESS) return rc;
  for (int i = 0; i < max_datatypes; ++i) {
    int n = 0, a = 0, t = 0, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(datatypes[i], &n, &a, &t, &combiner);
    if (combiner != MPI_COMBINER_NAMED) add(datatype, datatypes[i]);
  }
  return rc;
}
int MPI_Type_free(MPI_Datatype* type) {
  return freeing(datatype, type, MPI_DATATYPE_NULL, [&] { return PMPI_Type_free(type); });
}

// --- communicators ----------------------------------------------------------------
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_dup(comm, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_split(comm, color, key, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_create(comm, group, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* newcomm) {
  return created(communicator, PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm,
                 MPI_COMM_NULL);
}
int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm* newcomm) {
  return created(communicator, PMPI_Cart_sub(comm, remain, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* newcomm) {
  return created(communicator, PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), newcomm,
                 MPI_COMM_NULL);
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  return created(communicator,
                 PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm),
                 newcomm, MPI_COMM_NULL);
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  return created(communicator,
                 PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                                 destweights, info, reorder, newcomm),
                 newcomm, MPI_COMM_NULL);
}
int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag,
                         MPI_Comm* newcomm) {
  return created(communicator, PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm),
                 newcomm, MPI_COMM_NULL);
}
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newcomm) {
  return created(communicator, PMPI_Intercomm_merge(intercomm, high, newcomm), newcomm, MPI_COMM_NULL);
}
int MPI_Comm_free(MPI_Comm* comm) {
  return freeing(communicator, comm, MPI_COMM_NULL, [&] { return PMPI_Comm_free(comm); });
}
int MPI_Comm_disconnect(MPI_Comm* comm) {
  return freeing(communicator, comm, MPI_COMM_NULL, [&] { return PMPI_Comm_disconnect(comm); });
}

// --- groups, infos, ops, error handlers, attribute keys ------------------------------
int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return created(iso_hygiene::group, PMPI_Comm_group(comm, group), group, MPI_GROUP_NULL);
}
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  return created(iso_hygiene::group, PMPI_Comm_remote_group(comm, group), group, MPI_GROUP_NULL);
}
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_incl(group, n, ranks, newgroup));
}
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_excl(group, n, ranks, newgroup));
}
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_range_incl(group, n, ranges, newgroup));
}
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_range_excl(group, n, ranges, newgroup));
}
int MPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_union(a, b, newgroup));
}
int MPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_intersection(a, b, newgroup));
}
int MPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  ISO_LOCAL_CREATE(iso_hygiene::group, newgroup, MPI_GROUP_NULL, PMPI_Group_difference(a, b, newgroup));
}
int MPI_Group_free(MPI_Group* group) {
  return freeing(iso_hygiene::group, group, MPI_GROUP_NULL, [&] { return PMPI_Group_free(group); });
}
int MPI_Info_create(MPI_Info* handle) {
  ISO_LOCAL_CREATE(info, handle, MPI_INFO_NULL, PMPI_Info_create(handle));
}
int MPI_Info_dup(MPI_Info old, MPI_Info* handle) {
  ISO_LOCAL_CREATE(info, handle, MPI_INFO_NULL, PMPI_Info_dup(old, handle));
}
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* handle) {
  return created(info, PMPI_Comm_get_info(comm, handle), handle, MPI_INFO_NULL);
}
int MPI_Info_free(MPI_Info* handle) {
  return freeing(info, handle, MPI_INFO_NULL, [&] { return PMPI_Info_free(handle); });
}
int MPI_Op_create(MPI_User_function* function, int commute, MPI_Op* handle) {
  ISO_LOCAL_CREATE(op, handle, MPI_OP_NULL, PMPI_Op_create(function, commute, handle));
}
int MPI_Op_free(MPI_Op* handle) {
  return freeing(op, handle, MPI_OP_NULL, [&] { return PMPI_Op_free(handle); });
}
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* handle) {
  return created(errhandler, PMPI_Comm_create_errhandler(function, handle), handle, MPI_ERRHANDLER_NULL);
}
// Returns a reference the caller must free, predefined handlers included.
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* handle) {
  return created(errhandler, PMPI_Comm_get_errhandler(comm, handle), handle, MPI_ERRHANDLER_NULL);
}
int MPI_Errhandler_free(MPI_Errhandler* handle) {
  return freeing(errhandler, handle, MPI_ERRHANDLER_NULL, [&] { return PMPI_Errhandler_free(handle); });
}
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* destroy, int* handle,
                           void* extra) {
  return created(keyval, PMPI_Comm_create_keyval(copy, destroy, handle, extra), handle, MPI_KEYVAL_INVALID);
}
int MPI_Comm_free_keyval(int* handle) {
  return freeing(keyval, handle, MPI_KEYVAL_INVALID, [&] { return PMPI_Comm_free_keyval(handle); });
}

// --- requests: nonblocking calls ------------------------------------------------------
#define ISO_NONBLOCKING(call) return created(request, call, req, MPI_REQUEST_NULL)

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Isend(buf, count, type, dest, tag, comm, req));
}
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Issend(buf, count, type, dest, tag, comm, req));
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Irsend(buf, count, type, dest, tag, comm, req));
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ibsend(buf, count, type, dest, tag, comm, req));
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Irecv(buf, count, type, source, tag, comm, req));
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) { ISO_NONBLOCKING(PMPI_Ibarrier(comm, req)); }
int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ibcast(buf, count, type, root, comm, req));
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op oper, MPI_Comm comm,
                   MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Iallreduce(sendbuf, recvbuf, count, type, oper, comm, req));
}
int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req));
}
int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req));
}
int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                           recvtype, comm, req));
}
int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* req) {
  ISO_NONBLOCKING(PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                           recvtypes, comm, req));
}

// --- requests: persistent ---------------------------------------------------------------
#define ISO_PERSISTENT_LOCAL(call)        \
  do {                                    \
    if (inject(#call)) return MPI_ERR_OTHER; \
    return persistent_request(call, req); \
  } while (0)

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* req) {
  ISO_PERSISTENT_LOCAL(PMPI_Send_init(buf, count, type, dest, tag, comm, req));
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* req) {
  ISO_PERSISTENT_LOCAL(PMPI_Ssend_init(buf, count, type, dest, tag, comm, req));
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* req) {
  ISO_PERSISTENT_LOCAL(PMPI_Rsend_init(buf, count, type, dest, tag, comm, req));
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* req) {
  ISO_PERSISTENT_LOCAL(PMPI_Bsend_init(buf, count, type, dest, tag, comm, req));
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  ISO_PERSISTENT_LOCAL(PMPI_Recv_init(buf, count, type, source, tag, comm, req));
}
#if MPI_VERSION >= 4
// MPI-4 persistent collectives: collective calls, never failed on purpose.
int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request* req) {
  return persistent_request(
      PMPI_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, req), req);
}
int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request* req) {
  return persistent_request(
      PMPI_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, req),
      req);
}
int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return persistent_request(PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                         recvcounts, rdispls, recvtype, comm, info, req),
                            req);
}
int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Info info, MPI_Request* req) {
  return persistent_request(PMPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                         recvcounts, rdispls, recvtypes, comm, info, req),
                            req);
}
#endif

// --- requests: completion and free -------------------------------------------------------
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  ++tracker().calls;
  const auto& before = before_copy(1, req);
  const int rc = PMPI_Wait(req, status);
  completed(before, req);
  return rc;
}
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  ++tracker().calls;
  const auto& before = before_copy(1, req);
  const int rc = PMPI_Test(req, flag, status);
  completed(before, req);
  return rc;
}
int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Waitall(count, reqs, statuses);
  completed(before, reqs);
  return rc;
}
int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Testall(count, reqs, flag, statuses);
  completed(before, reqs);
  return rc;
}
int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Waitany(count, reqs, index, status);
  completed(before, reqs);
  return rc;
}
int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Testany(count, reqs, index, flag, status);
  completed(before, reqs);
  return rc;
}
int MPI_Waitsome(int count, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Waitsome(count, reqs, outcount, indices, statuses);
  completed(before, reqs);
  return rc;
}
int MPI_Testsome(int count, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  ++tracker().calls;
  const auto& before = before_copy(count, reqs);
  const int rc = PMPI_Testsome(count, reqs, outcount, indices, statuses);
  completed(before, reqs);
  return rc;
}
int MPI_Request_free(MPI_Request* req) {
  return freeing(request, req, MPI_REQUEST_NULL, [&] { return PMPI_Request_free(req); });
}

}  // extern "C"
