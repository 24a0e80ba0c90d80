// PMPI wrappers counting live MPI requests, datatypes and communicators, so the
// hygiene test can tell whether operations leak handles or leave requests
// pending. Only the main thread calls MPI (MPI_THREAD_FUNNELED), so plain
// globals suffice.
#include "mpi_handle_counters.hpp"

#include "allocation_counter.hpp"

#include <mpi.h>

#include <unordered_set>
#include <vector>

namespace iso_collectives_test {
namespace {

struct Registry {
  std::unordered_set<MPI_Request> live;        // created, not freed
  std::unordered_set<MPI_Request> persistent;  // created by *_init
  std::unordered_set<MPI_Request> active;      // posted, not completed
  long datatypes = 0;
  long communicators = 0;
  long calls = 0;
  long starts = 0;
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: MPI may be called during exit
  return *instance;
}

int created_nonblocking(int rc, MPI_Request* request) {
  UncountedAllocations uncounted;
  Registry& r = registry();
  ++r.calls;
  if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL) {
    r.live.insert(*request);
    r.active.insert(*request);
    ++r.starts;
  }
  return rc;
}

int created_persistent(int rc, MPI_Request* request) {
  UncountedAllocations uncounted;
  Registry& r = registry();
  ++r.calls;
  if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL) {
    r.live.insert(*request);
    r.persistent.insert(*request);
  }
  return rc;
}

// A request handed to a completion call: completed (if `completed`) and, if
// its handle became MPI_REQUEST_NULL, freed.
void completed(MPI_Request before, MPI_Request after) {
  UncountedAllocations uncounted;
  Registry& r = registry();
  if (before == MPI_REQUEST_NULL) return;
  r.active.erase(before);
  if (after == MPI_REQUEST_NULL) {
    r.live.erase(before);
    r.persistent.erase(before);
  }
}

// Copy of the request array handed to a completion call (reused, grows only).
MPI_Request* scratch(int count) {
  UncountedAllocations uncounted;
  static std::vector<MPI_Request>* copy = new std::vector<MPI_Request>;
  if (copy->size() < static_cast<std::size_t>(count > 0 ? count : 1))
    copy->resize(static_cast<std::size_t>(count > 0 ? count : 1));
  return copy->data();
}

int created_type(int rc) {
  ++registry().calls;
  if (rc == MPI_SUCCESS) ++registry().datatypes;
  return rc;
}

int created_comm(int rc, const MPI_Comm* comm) {
  ++registry().calls;
  if (rc == MPI_SUCCESS && *comm != MPI_COMM_NULL) ++registry().communicators;
  return rc;
}

}  // namespace

HandleCounts handle_counts() {
  const Registry& r = registry();
  HandleCounts counts;
  counts.requests = static_cast<long>(r.live.size());
  counts.active_requests = static_cast<long>(r.active.size());
  counts.datatypes = r.datatypes;
  counts.communicators = r.communicators;
  counts.calls = r.calls;
  counts.starts = r.starts;
  return counts;
}

}  // namespace iso_collectives_test

using iso_collectives_test::completed;
using iso_collectives_test::created_comm;
using iso_collectives_test::created_nonblocking;
using iso_collectives_test::created_persistent;
using iso_collectives_test::created_type;
using iso_collectives_test::registry;
using iso_collectives_test::scratch;
using iso_collectives_test::UncountedAllocations;

extern "C" {

// --- requests: creation -----------------------------------------------------
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return created_nonblocking(PMPI_Isend(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return created_nonblocking(PMPI_Issend(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return created_nonblocking(PMPI_Irsend(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return created_nonblocking(PMPI_Ibsend(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return created_nonblocking(PMPI_Irecv(buf, count, type, source, tag, comm, request), request);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return created_nonblocking(PMPI_Ibarrier(comm, request), request);
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return created_nonblocking(PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request),
                             request);
}
int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return created_persistent(PMPI_Send_init(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return created_persistent(PMPI_Ssend_init(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return created_persistent(PMPI_Rsend_init(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return created_persistent(PMPI_Bsend_init(buf, count, type, dest, tag, comm, request), request);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return created_persistent(PMPI_Recv_init(buf, count, type, source, tag, comm, request), request);
}

// --- requests: start, completion, free --------------------------------------
int MPI_Start(MPI_Request* request) {
  UncountedAllocations uncounted;
  ++registry().calls;
  const int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) {
    registry().active.insert(*request);
    ++registry().starts;
  }
  return rc;
}
int MPI_Startall(int count, MPI_Request requests[]) {
  UncountedAllocations uncounted;
  ++registry().calls;
  const int rc = PMPI_Startall(count, requests);
  if (rc == MPI_SUCCESS)
    for (int i = 0; i < count; ++i) {
      registry().active.insert(requests[i]);
      ++registry().starts;
    }
  return rc;
}
int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  ++registry().calls;
  const MPI_Request before = *request;
  const int rc = PMPI_Wait(request, status);
  completed(before, *request);
  return rc;
}
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  ++registry().calls;
  const MPI_Request before = *request;
  const int rc = PMPI_Test(request, flag, status);
  if (*flag) completed(before, *request);
  return rc;
}
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  ++registry().calls;
  MPI_Request* before = scratch(count);
  for (int i = 0; i < count; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Waitall(count, requests, statuses);
  for (int i = 0; i < count; ++i)
    completed(before[i], requests[i]);
  return rc;
}
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  ++registry().calls;
  MPI_Request* before = scratch(count);
  for (int i = 0; i < count; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  if (*flag)
    for (int i = 0; i < count; ++i)
      completed(before[i], requests[i]);
  return rc;
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  ++registry().calls;
  MPI_Request* before = scratch(count);
  for (int i = 0; i < count; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Waitany(count, requests, index, status);
  if (*index != MPI_UNDEFINED) completed(before[*index], requests[*index]);
  return rc;
}
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  ++registry().calls;
  MPI_Request* before = scratch(count);
  for (int i = 0; i < count; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  if (*flag && *index != MPI_UNDEFINED) completed(before[*index], requests[*index]);
  return rc;
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  ++registry().calls;
  MPI_Request* before = scratch(incount);
  for (int i = 0; i < incount; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  if (*outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      completed(before[indices[k]], requests[indices[k]]);
  return rc;
}
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  ++registry().calls;
  MPI_Request* before = scratch(incount);
  for (int i = 0; i < incount; ++i)
    before[i] = requests[i];
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  if (*outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      completed(before[indices[k]], requests[indices[k]]);
  return rc;
}
int MPI_Request_free(MPI_Request* request) {
  UncountedAllocations uncounted;
  ++registry().calls;
  const MPI_Request before = *request;
  const int rc = PMPI_Request_free(request);
  if (rc == MPI_SUCCESS && before != MPI_REQUEST_NULL) {
    registry().live.erase(before);
    registry().persistent.erase(before);
    registry().active.erase(before);  // freeing an active request lets it complete on its own
  }
  return rc;
}

// --- datatypes ----------------------------------------------------------------
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_contiguous(count, old, type));
}
int MPI_Type_vector(int count, int length, int stride, MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_vector(count, length, stride, old, type));
}
int MPI_Type_create_hvector(int count, int length, MPI_Aint stride, MPI_Datatype old,
                            MPI_Datatype* type) {
  return created_type(PMPI_Type_create_hvector(count, length, stride, old, type));
}
int MPI_Type_indexed(int count, const int lengths[], const int displacements[], MPI_Datatype old,
                     MPI_Datatype* type) {
  return created_type(PMPI_Type_indexed(count, lengths, displacements, old, type));
}
int MPI_Type_create_hindexed(int count, const int lengths[], const MPI_Aint displacements[],
                             MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_create_hindexed(count, lengths, displacements, old, type));
}
int MPI_Type_create_indexed_block(int count, int length, const int displacements[],
                                  MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_create_indexed_block(count, length, displacements, old, type));
}
int MPI_Type_create_hindexed_block(int count, int length, const MPI_Aint displacements[],
                                   MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_create_hindexed_block(count, length, displacements, old, type));
}
int MPI_Type_create_struct(int count, const int lengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype* type) {
  return created_type(PMPI_Type_create_struct(count, lengths, displacements, types, type));
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* type) {
  return created_type(PMPI_Type_create_resized(old, lb, extent, type));
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                             int order, MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, type));
}
int MPI_Type_dup(MPI_Datatype old, MPI_Datatype* type) {
  return created_type(PMPI_Type_dup(old, type));
}
int MPI_Type_free(MPI_Datatype* type) {
  ++registry().calls;
  const int rc = PMPI_Type_free(type);
  if (rc == MPI_SUCCESS) --registry().datatypes;
  return rc;
}

// --- communicators --------------------------------------------------------------
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return created_comm(PMPI_Comm_dup(comm, newcomm), newcomm);
}
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return created_comm(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return created_comm(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return created_comm(PMPI_Comm_create(comm, group, newcomm), newcomm);
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* newcomm) {
  return created_comm(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), newcomm);
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  return created_comm(
      PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                      destinations, destweights, info, reorder, newcomm),
      newcomm);
}
int MPI_Comm_free(MPI_Comm* comm) {
  ++registry().calls;
  const int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS) --registry().communicators;
  return rc;
}

}  // extern "C"
