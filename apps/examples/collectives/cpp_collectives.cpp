// cpp_collectives: the isomorphic collectives from C++ (namespace iso).
//
// A 3-D process grid, periodic in x and y, bounded in z; every process names
// the 26 offsets of the Moore neighbourhood. A persistent alltoall with the
// torus message-combining schedule sends block i (m doubles) to the process
// at offset v_i; it runs several times with new data and every received
// block is checked against the rank MPI_Cart_rank gives for coords - v_i
// (beyond the bounded sides nothing arrives and the block keeps its value).
#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

double payload(int round, int rank, int block, int k) { return round * 1e6 + rank * 1e3 + block + k * 1e-3; }

int run() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int m = 4;  // doubles per block

  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, false});  // 0: MPI_Dims_create
  iso::Neighborhood neighborhood(cart.get(), iso::OffsetList::moore(3, 1));
  const int s = neighborhood.size();

  // The reference sources, from MPI alone.
  int coords[3];
  MPI_Cart_coords(cart.get(), rank, 3, coords);
  int dims[3], periods[3], unused[3];
  MPI_Cart_get(cart.get(), 3, dims, periods, unused);
  std::vector<int> sources(s);
  for (int i = 0; i < s; ++i) {
    int at[3];
    bool exists = true;
    for (int j = 0; j < 3; ++j) {
      at[j] = coords[j] - neighborhood.offsets()[i][j];
      if (!periods[j] && (at[j] < 0 || at[j] >= dims[j])) exists = false;
    }
    sources[i] = -1;
    if (exists) MPI_Cart_rank(cart.get(), at, &sources[i]);
  }

  std::vector<double> send(static_cast<std::size_t>(s) * m), recv(send.size());
  iso::Operation op = iso::alltoall_init(neighborhood, send.data(), m, MPI_DOUBLE, recv.data(), m,
                                         MPI_DOUBLE, {iso::Algorithm::torus});
  int wrong = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < s; ++i)
      for (int k = 0; k < m; ++k) {
        send[static_cast<std::size_t>(i * m + k)] = payload(round, rank, i, k);
        recv[static_cast<std::size_t>(i * m + k)] = -1.0;
      }
    op.start();  // returns at once; op.test() would advance the rounds
    op.wait();
    for (int i = 0; i < s; ++i)
      for (int k = 0; k < m; ++k) {
        const double expected = sources[i] < 0 ? -1.0 : payload(round, sources[i], i, k);
        if (recv[static_cast<std::size_t>(i * m + k)] != expected) ++wrong;
      }
  }
  int total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("cpp_collectives: %d ranks (%d x %d x %d, bounded in z), %d neighbours: %s\n", size,
                dims[0], dims[1], dims[2], s, total == 0 ? "alltoall verified over 3 rounds" : "WRONG blocks");
  return total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // FUNNELED: what a threaded program needs (the collectives are called from
  // the main thread only); this one has no threads but asks as such a one would.
  // SimGrid SMPI (smpi.h) offers SINGLE only, and each simulated rank is one thread.
#if defined(SMPI_H)
  const int required = MPI_THREAD_SINGLE;
#else
  const int required = MPI_THREAD_FUNNELED;
#endif
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < required) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr, "cpp_collectives: error: MPI provides thread level %d, below MPI_THREAD_FUNNELED\n",
                   provided);
    MPI_Finalize();
    return 2;
  }
  int code = 1;
  try {
    code = run();  // the library's objects are gone before MPI_Finalize
  } catch (const iso::Error& error) {
    std::fprintf(stderr, "cpp_collectives: %s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return code;
}
