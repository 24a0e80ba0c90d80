/* The paper's MPI-flavoured C API of the isomorphic collectives.
 *
 * Every function returns MPI_SUCCESS or an MPI error class (MPI_ERR_ARG for
 * bad arguments, MPI_ERR_OTHER otherwise); Iso_Error_message() gives the text
 * of the calling thread's last error. Usable from C and C++. */
#ifndef ISO_ISO_H
#define ISO_ISO_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A persistent isomorphic collective; ISO_REQUEST_NULL when freed. */
typedef struct Iso_Request_s* Iso_Request;
#define ISO_REQUEST_NULL ((Iso_Request)0)

/** Creates an isomorphic neighborhood of s offsets (flattened, s*d ints, d =
 * dimension of cartcomm) and returns it attached to a new communicator
 * isocomm (a duplicate of cartcomm, keeping its topology). Collective; every
 * process must pass the same offsets in the same order (verified). */
int Iso_neighborhood_create(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                            MPI_Comm* isocomm);

/** As Iso_neighborhood_create, with info keys:
 *   "iso_algorithm": linear | torus | direct | basis | mpi | auto | tune  (default torus)
 *                    for the inits on it (auto and tune also pick a port
 *                    limit where iso_ports is 0; tune keeps its choice in
 *                    the tune cache, see ISO_TUNE_CACHE);
 *   "iso_verify":    true | false  (default true) checks the offsets agree over
 *                    all ranks;
 *   "iso_ports":     N (default 0: no limit) messages in flight each way at
 *                    once for the inits on it.
 * Every rank must pass the same values. A bad or differing value, or any
 * other bad argument, on any one rank, is an error on every rank (no rank is
 * left waiting); the same holds for the *_init calls below. */
int Iso_neighborhood_create_info(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                                 MPI_Info info, MPI_Comm* isocomm);

/** Frees the neighborhood and the communicator (MPI_Comm_free also works). */
int Iso_neighborhood_free(MPI_Comm* isocomm);

int Iso_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm isocomm, Iso_Request* request);
int Iso_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm isocomm, Iso_Request* request);
int Iso_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int senddispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                const int recvdispls[], MPI_Datatype recvtype, MPI_Comm isocomm,
                                Iso_Request* request);
int Iso_neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                const MPI_Aint senddispls[], const MPI_Datatype sendtypes[],
                                void* recvbuf, const int recvcounts[], const MPI_Aint recvdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm isocomm,
                                Iso_Request* request);

/** Starts the operation and returns at once (non-blocking start). */
int Iso_Start(Iso_Request* request);
/** Advances the rounds as far as arrived messages allow; *flag = 1 when done. */
int Iso_Test(Iso_Request* request, int* flag);
/** Completes the operation. */
int Iso_Wait(Iso_Request* request);
/** Frees an inactive operation and sets *request = ISO_REQUEST_NULL. */
int Iso_Request_free(Iso_Request* request);

/** The calling thread's last error message ("" if none). */
const char* Iso_Error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* ISO_ISO_H */
