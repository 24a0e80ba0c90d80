/* c_collectives: the isomorphic collectives from C, through iso/iso.h alone.
 *
 * On a 2-D periodic process grid every process names the same eight
 * neighbours (the Moore neighbourhood, radius 1). A persistent alltoall sends
 * block i to the process at offset v_i; a persistent allgather sends one value
 * to all eight. Each is started several times with new data and every
 * received block is checked against the rank MPI_Cart_rank gives for
 * coords - v_i. Exit status 0 when every rank's blocks are right. */
#include "iso/iso.h"

#include <mpi.h>
#include <stdio.h>

#define S 8 /* neighbours */

static int payload(int round, int rank, int block) { return round * 100000 + rank * 100 + block; }

int main(int argc, char** argv) {
  /* FUNNELED: what a threaded program needs (the collectives are called from
     the main thread only); this one has no threads but asks as such a one would. */
  /* SimGrid SMPI (smpi.h) offers SINGLE only, and each simulated rank is one thread. */
#if defined(SMPI_H)
  const int required = MPI_THREAD_SINGLE;
#else
  const int required = MPI_THREAD_FUNNELED;
#endif
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < required) {
    if (rank == 0)
      fprintf(stderr, "c_collectives: error: MPI provides thread level %d, below MPI_THREAD_FUNNELED\n",
              provided);
    MPI_Finalize();
    return 2;
  }

  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int coords[2];
  MPI_Cart_coords(cart, rank, 2, coords);

  /* The offsets, the same on every process and in the same order. */
  int offsets[2 * S], s = 0;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      if (dx != 0 || dy != 0) {
        offsets[2 * s] = dx;
        offsets[2 * s + 1] = dy;
        ++s;
      }
  /* The reference: block i comes from the process at coords - v_i. */
  int sources[S];
  for (int i = 0; i < S; ++i) {
    int at[2] = {coords[0] - offsets[2 * i], coords[1] - offsets[2 * i + 1]};
    MPI_Cart_rank(cart, at, &sources[i]);
  }

  MPI_Comm iso;
  int rc = Iso_neighborhood_create(cart, S, offsets, &iso);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: Iso_neighborhood_create: %s\n", rank, Iso_Error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int send[S], recv[S], mine = 0, gathered[S];
  Iso_Request alltoall, allgather;
  if (Iso_neighbor_alltoall_init(send, 1, MPI_INT, recv, 1, MPI_INT, iso, &alltoall) != MPI_SUCCESS ||
      Iso_neighbor_allgather_init(&mine, 1, MPI_INT, gathered, 1, MPI_INT, iso, &allgather) != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: init: %s\n", rank, Iso_Error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int wrong = 0;
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < S; ++i) {
      send[i] = payload(round, rank, i);
      recv[i] = gathered[i] = -1;
    }
    mine = payload(round, rank, S);
    Iso_Start(&alltoall);
    Iso_Start(&allgather); /* both in flight at once */
    Iso_Wait(&allgather);
    Iso_Wait(&alltoall);
    for (int i = 0; i < S; ++i) {
      if (recv[i] != payload(round, sources[i], i)) {
        fprintf(stderr, "rank %d: alltoall round %d block %d: got %d, expected %d\n", rank, round, i,
                recv[i], payload(round, sources[i], i));
        ++wrong;
      }
      if (gathered[i] != payload(round, sources[i], S)) {
        fprintf(stderr, "rank %d: allgather round %d block %d: got %d, expected %d\n", rank, round, i,
                gathered[i], payload(round, sources[i], S));
        ++wrong;
      }
    }
  }
  Iso_Request_free(&alltoall);
  Iso_Request_free(&allgather);
  Iso_neighborhood_free(&iso);
  MPI_Comm_free(&cart);

  int total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf("c_collectives: %d ranks (%d x %d torus), %d neighbours: alltoall and allgather verified "
             "over %d rounds\n", size, dims[0], dims[1], S, rounds);
    else
      printf("c_collectives: %d wrong blocks\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
