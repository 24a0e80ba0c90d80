/* Per-message costs of a real MPI between two ranks, by message size: the
 * figures scripts/smpi-calibrate.sh turns into SMPI's model (smpi/os, or,
 * ois, link latency and bandwidth; docs/simulating.md#calibration).
 *   mpirun -np 2 calibrate [max_bytes] [reps]
 * Rank 0 prints one line a size: bytes, then the medians over `reps` of
 *   pingpong  half a round trip (MPI_Send then MPI_Recv, the partner mirrors)
 *   send      one blocking MPI_Send of a burst whose receives are posted
 *   isend     one MPI_Isend call of such a burst (its posting, not its completion)
 *   recv      one MPI_Recv of a burst that has already arrived (matching and copy-out)
 *   test      one MPI_Test on a request not yet complete
 *   exchange  what each further message adds to an exchange: both ranks post
 *             16 MPI_Irecv and 16 MPI_Isend and wait for all, less the same
 *             with 1, / 15: one send and one receive of one rank's CPU, as
 *             in a halo exchange (the receive side of a transport that reads
 *             its messages during any MPI call, TCP's, shows only here)
 * all in microseconds. Sizes: 1, 8, then powers of two from 64 B to max_bytes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { burst = 16 };

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Busy-waits (MPI_Wtime is simulated time under SMPI, real time otherwise). */
static void spin(double seconds) {
  const double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long max_bytes = argc > 1 ? atol(argv[1]) : 1 << 20;
  const int reps = argc > 2 ? atoi(argv[2]) : 100;
  if (size != 2 || max_bytes < 1 || max_bytes > (1L << 26) || reps < 3) {
    if (rank == 0) fprintf(stderr, "calibrate: run with 2 ranks; max_bytes in 1..64M, reps >= 3\n");
    MPI_Finalize();
    return 2;
  }
  const int peer = 1 - rank;
  char* buffer = calloc((size_t)max_bytes * burst, 1);
  double* samples = malloc(sizeof(double) * (size_t)reps);
  double row[6];
  MPI_Request requests[burst];
  if (!buffer || !samples) {
    fprintf(stderr, "calibrate: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) printf("# bytes pingpong_us send_us isend_us recv_us test_us exchange_us\n");
  for (long bytes = 1; bytes <= max_bytes; bytes = bytes == 1 ? 8 : bytes == 8 ? 64 : bytes * 2) {
    const int n = (int)bytes;
    for (int r = 0; r < reps; ++r) { /* ping-pong, one warm-up round first */
      MPI_Barrier(MPI_COMM_WORLD);
      for (int k = 0; k < 2; ++k) {
        if (rank == 0) {
          MPI_Send(buffer, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(buffer, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buffer, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buffer, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
        if (k == 0) samples[r] = MPI_Wtime();
      }
      samples[r] = (MPI_Wtime() - samples[r]) / 2;
    }
    row[0] = median(samples, reps);
    for (int blocking = 1; blocking >= 0; --blocking) { /* send, then isend */
      for (int r = 0; r < reps; ++r) {
        if (rank == 1)
          for (int k = 0; k < burst; ++k)
            MPI_Irecv(buffer + (size_t)k * n, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
          const double t0 = MPI_Wtime();
          for (int k = 0; k < burst; ++k) {
            if (blocking)
              MPI_Send(buffer + (size_t)k * n, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            else
              MPI_Isend(buffer + (size_t)k * n, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[k]);
          }
          samples[r] = (MPI_Wtime() - t0) / burst;
          if (!blocking) MPI_Waitall(burst, requests, MPI_STATUSES_IGNORE);
        } else {
          MPI_Waitall(burst, requests, MPI_STATUSES_IGNORE);
        }
      }
      row[blocking ? 1 : 2] = median(samples, reps);
    }
    for (int r = 0; r < reps; ++r) { /* recv of arrived messages, timed on rank 1 */
      if (rank == 0) {
        for (int k = 0; k < burst; ++k)
          MPI_Isend(buffer + (size_t)k * n, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &requests[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(burst, requests, MPI_STATUSES_IGNORE);
        samples[r] = 0;
      } else {
        MPI_Barrier(MPI_COMM_WORLD);
        spin(2e-4 + 1e-9 * (double)n * burst); /* let the burst land */
        const double t0 = MPI_Wtime();
        for (int k = 0; k < burst; ++k)
          MPI_Recv(buffer + (size_t)k * n, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        samples[r] = (MPI_Wtime() - t0) / burst;
      }
    }
    row[3] = median(samples, reps);
    for (int r = 0; r < reps; ++r) { /* MPI_Test on a receive whose message is not sent yet */
      MPI_Request request = MPI_REQUEST_NULL;
      int done = 0;
      samples[r] = 0;
      if (rank == 1) {
        MPI_Irecv(buffer, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &request);
        const double t0 = MPI_Wtime();
        for (int k = 0; k < burst; ++k) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        samples[r] = (MPI_Wtime() - t0) / burst;
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) MPI_Send(buffer, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
      if (rank == 1 && !done) MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    row[4] = median(samples, reps);
    double burst_time[2];
    for (int many = 0; many < 2; ++many) { /* 1 message each way, then a burst */
      const int count = many ? burst : 1;
      MPI_Request both[2 * burst];
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int k = 0; k < count; ++k)
          MPI_Irecv(buffer + (size_t)k * n, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &both[k]);
        for (int k = 0; k < count; ++k)
          MPI_Isend(buffer + (size_t)(burst - 1 - k) * n, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &both[count + k]);
        MPI_Waitall(2 * count, both, MPI_STATUSES_IGNORE);
        samples[r] = MPI_Wtime() - t0;
      }
      burst_time[many] = median(samples, reps);
    }
    row[5] = (burst_time[1] - burst_time[0]) / (burst - 1);
    /* rank 1's recv and test times go to rank 0, which prints */
    if (rank == 1) MPI_Send(row + 3, 3, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(row + 3, 3, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("%ld %.4f %.4f %.4f %.4f %.4f %.4f\n", bytes, row[0] * 1e6, row[1] * 1e6, row[2] * 1e6,
             row[3] * 1e6, row[4] * 1e6, row[5] * 1e6);
      fflush(stdout);
    }
  }
  free(samples);
  free(buffer);
  MPI_Finalize();
  return 0;
}
