// PMPI wrappers that count blocking collective calls (see
// collective_counter.hpp). One thread calls MPI in the tests.
#include "collective_counter.hpp"

#include <mpi.h>

namespace iso_collectives {
namespace {
Calls& counted() {
  static Calls c;
  return c;
}
}  // namespace

Calls calls() { return counted(); }

std::string since(const Calls& before) {
  const Calls now = calls();
  return "allreduce " + std::to_string(now.allreduce - before.allreduce) + ", other " +
         std::to_string(now.other - before.other);
}

}  // namespace iso_collectives

using iso_collectives::counted;

extern "C" {
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++counted().allreduce;
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}
int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Bcast(buffer, count, type, root, comm);
}
int MPI_Barrier(MPI_Comm comm) {
  ++counted().other;
  return PMPI_Barrier(comm);
}
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  ++counted().other;
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}
int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
}
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++counted().other;
  return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
}
}
