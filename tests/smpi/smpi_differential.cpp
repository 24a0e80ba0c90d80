// Differential check of the isomorphic collectives under SimGrid SMPI
// (docs/simulating.md), stand-alone (no GoogleTest, whose runner and
// globals assume one process per rank): every scheduled algorithm and
// automatic, both collectives, on Moore, star and random neighborhoods of
// periodic and non-periodic grids, compared bytewise with
//   (a) the values computed from the source ranks, and
//   (b) a plain MPI_Isend/MPI_Irecv exchange (one message per block, tag =
//       block index), independent of the library's schedules.
// Algorithm::mpi must refuse with "not available under SMPI" on every rank.
//
//   smpi_differential [cases=12] [seed=1] [offsets]
// (offsets as "1,0;0,-1": every case on them, a torus, one int a block).
// Exit code 0 when every case agrees; the summary line on rank 0 names the
// rank count and the cases checked. Also builds with a real MPI.
#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/neighborhood.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr iso::Algorithm algorithms[] = {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
                                         iso::Algorithm::basis, iso::Algorithm::automatic};

struct Case {
  int dims = 2;
  std::vector<int> periodic;
  iso::OffsetList offsets;
  int block_ints = 1;
  std::string name;
};

// The same case on every rank: drawn from the same seed.
Case draw_case(std::mt19937& random, int size) {
  Case c;
  c.dims = 2 + static_cast<int>(random() % 2);
  // Radius 2 in 2-D only: 3-D Moore r=2 (124 blocks) costs minutes of
  // simulation at 64 ranks, each simulated rank building its own schedules.
  const int radius = 1 + static_cast<int>(random() % 2) * (c.dims == 2 ? 1 : 0);
  c.periodic.assign(c.dims, 1);
  if (random() % 3 == 0) c.periodic[random() % c.dims] = 0;  // a mesh dimension
  c.block_ints = 1 + static_cast<int>(random() % 5);
  const int kind = static_cast<int>(random() % 3);
  if (kind == 0) {
    c.offsets = iso::OffsetList::moore(c.dims, radius);
    c.name = "moore r=" + std::to_string(radius);
  } else {
    std::vector<int> flat;
    if (kind == 1) {  // star: +-k along each axis
      for (int dim = 0; dim < c.dims; ++dim)
        for (int k = 1; k <= radius; ++k)
          for (int sign : {1, -1}) {
            std::vector<int> v(c.dims, 0);
            v[dim] = sign * k;
            flat.insert(flat.end(), v.begin(), v.end());
          }
      c.name = "star r=" + std::to_string(radius);
    } else {  // random offsets, repeats and the zero vector allowed
      const int s = 1 + static_cast<int>(random() % 12);
      for (int i = 0; i < s * c.dims; ++i) flat.push_back(static_cast<int>(random() % (2 * radius + 1)) - radius);
      c.name = "random s=" + std::to_string(s) + " r=" + std::to_string(radius);
    }
    c.offsets = iso::OffsetList(c.dims, flat);
  }
  (void)size;
  for (int p : c.periodic) c.name += p ? " T" : " M";  // torus or mesh, per dimension
  return c;
}

int value_of(int rank, int block, int k) { return rank * 7919 + block * 131 + k + 1; }

// Rank of coords + sign * v on the grid, or MPI_PROC_NULL off a mesh edge.
int partner(MPI_Comm cart, const std::vector<int>& dims, const std::vector<int>& periodic,
            const std::vector<int>& coords, const int* v, int sign) {
  std::vector<int> at(coords.size());
  for (std::size_t j = 0; j < coords.size(); ++j) {
    int c = coords[j] + sign * v[j];
    if (periodic[j]) c = ((c % dims[j]) + dims[j]) % dims[j];
    else if (c < 0 || c >= dims[j]) return MPI_PROC_NULL;
    at[j] = c;
  }
  int rank = MPI_PROC_NULL;
  MPI_Cart_rank(cart, at.data(), &rank);
  return rank;
}

long sum_over(MPI_Comm comm, long value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG, MPI_SUM, comm);
  return value;
}

// One case: returns the number of failures on this rank (0 everywhere when right).
long check_case(const Case& c, int case_index, bool verbose) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> dims(c.dims, 0);
  MPI_Dims_create(size, c.dims, dims.data());
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, c.dims, dims.data(), c.periodic.data(), 0, &cart);
  MPI_Comm_rank(cart, &rank);
  std::vector<int> coords(c.dims);
  MPI_Cart_coords(cart, rank, c.dims, coords.data());
  const int s = c.offsets.size(), m = c.block_ints;
  std::vector<int> targets(s), sources(s);
  for (int i = 0; i < s; ++i) {
    targets[i] = partner(cart, dims, c.periodic, coords, c.offsets[i], 1);
    sources[i] = partner(cart, dims, c.periodic, coords, c.offsets[i], -1);
  }
  long failures = 0;
  auto fail = [&](const std::string& what) {
    if (failures++ == 0)
      std::fprintf(stderr, "case %d (%s, %d blocks of %d ints, offsets %s): rank %d: %s\n", case_index, c.name.c_str(), s, m,
                   c.offsets.to_string().c_str(), rank, what.c_str());
  };
  iso::Neighborhood neighborhood(cart, c.offsets);
  for (int i = 0; i < s; ++i)
    if (neighborhood.target_rank(i) != (targets[i] == MPI_PROC_NULL ? -1 : targets[i]) ||
        neighborhood.source_rank(i) != (sources[i] == MPI_PROC_NULL ? -1 : sources[i]))
      fail("neighborhood partners differ from MPI_Cart_rank at block " + std::to_string(i));

  const int sentinel = -1;
  for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
    const bool a2a = collective == iso::Collective::alltoall;
    std::vector<int> send(static_cast<std::size_t>(a2a ? s : 1) * m);
    for (int b = 0; b < (a2a ? s : 1); ++b)
      for (int k = 0; k < m; ++k) send[static_cast<std::size_t>(b) * m + k] = value_of(rank, b, k);
    const std::vector<int> send_copy = send;
    // (a) expected from the source ranks; untouched blocks keep the sentinel.
    std::vector<int> expected(static_cast<std::size_t>(s) * m, sentinel);
    for (int i = 0; i < s; ++i)
      if (sources[i] != MPI_PROC_NULL)
        for (int k = 0; k < m; ++k) expected[static_cast<std::size_t>(i) * m + k] = value_of(sources[i], a2a ? i : 0, k);
    // (b) the plain exchange.
    std::vector<int> plain(static_cast<std::size_t>(s) * m, sentinel);
    std::vector<MPI_Request> requests;
    for (int i = 0; i < s; ++i) {
      requests.emplace_back();
      MPI_Irecv(&plain[static_cast<std::size_t>(i) * m], m, MPI_INT, sources[i], i, cart, &requests.back());
    }
    for (int i = 0; i < s; ++i) {
      requests.emplace_back();
      MPI_Isend(&send[static_cast<std::size_t>(a2a ? i : 0) * m], m, MPI_INT, targets[i], i, cart,
                &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    if (plain != expected) fail("the plain MPI_Isend/MPI_Irecv exchange differs from the expected values");

    for (iso::Algorithm algorithm : algorithms) {
      const std::string label = std::string(iso::to_string(collective)) + " " + iso::to_string(algorithm);
      if (verbose && rank == 0) std::printf("  %s\n", label.c_str()), std::fflush(stdout);
      std::vector<int> recv(static_cast<std::size_t>(s) * m, sentinel);
      std::string error;
      try {
        iso::OperationOptions options;
        options.algorithm = algorithm;
        iso::Operation op = a2a ? iso::alltoall_init(neighborhood, send.data(), m, MPI_INT, recv.data(), m, MPI_INT,
                                                     options)
                                : iso::allgather_init(neighborhood, send.data(), m, MPI_INT, recv.data(), m, MPI_INT,
                                                      options);
        for (int repetition = 0; repetition < 2; ++repetition) {  // persistent: twice, the buffer wiped between
          std::fill(recv.begin(), recv.end(), sentinel);
          op.run();
          if (recv != plain) fail(label + " (run " + std::to_string(repetition + 1) + ") differs from the plain exchange");
          if (send != send_copy) fail(label + " modified the send buffer");
        }
      } catch (const iso::Error& e) {
        error = e.what();
      }
      // A schedule that the offsets do not allow (torus on some random
      // offsets) is refused alike on every rank: allowed, but it must be agreed.
      const long threw = sum_over(cart, error.empty() ? 0 : 1);
      if (threw != 0 && threw != size) fail(label + " threw on some ranks only: " + error);
      if (threw != 0 && (algorithm == iso::Algorithm::linear || algorithm == iso::Algorithm::automatic))
        fail(label + " threw: " + error);
      if (verbose && rank == 0 && threw == size) std::printf("  case %d %s refused: %s\n", case_index, label.c_str(), error.c_str());
    }
    // Algorithm::mpi: a clear error on every rank, never an abort.
    std::string error;
    try {
      std::vector<int> recv(static_cast<std::size_t>(s) * m, sentinel);
      iso::OperationOptions options;
      options.algorithm = iso::Algorithm::mpi;
      iso::Operation op = a2a ? iso::alltoall_init(neighborhood, send.data(), m, MPI_INT, recv.data(), m, MPI_INT, options)
                              : iso::allgather_init(neighborhood, send.data(), m, MPI_INT, recv.data(), m, MPI_INT, options);
      op.run();
      if (recv != plain) fail("mpi differs from the plain exchange");
    } catch (const iso::Error& e) {
      error = e.what();
    }
#if defined(SMPI_H)
    if (error.find("not available under SMPI") == std::string::npos)
      fail("algorithm mpi did not refuse with \"not available under SMPI\": " + error);
#else
    (void)error;  // a real MPI runs it (or refuses repeated partners where it reverses them)
#endif
  }
  MPI_Comm_free(&cart);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int cases = argc > 1 ? std::atoi(argv[1]) : 12;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1u;
  const bool verbose = std::getenv("ISO_SMPI_VERBOSE") != nullptr;
  std::mt19937 random(seed);
  long failures = 0, failed_cases = 0;
  const double start = MPI_Wtime();
  for (int i = 0; i < cases; ++i) {
    Case c = draw_case(random, size);
    if (argc > 3) {  // a reproducer: these offsets on a torus, one int a block
      c.offsets = iso::OffsetList::parse(argv[3]);
      c.dims = c.offsets.dims();
      c.periodic.assign(c.dims, 1);
      c.block_ints = 1;
      c.name = "given";
    }
    if (verbose && rank == 0) std::printf("case %d: %s, offsets %s\n", i, c.name.c_str(), c.offsets.to_string().c_str());
    long here = 0;
    try {
      here = check_case(c, i, verbose);
    } catch (const iso::Error& e) {
      std::fprintf(stderr, "case %d (%s): rank %d: %s\n", i, c.name.c_str(), rank, e.what());
      here = 1;
    }
    const long all = sum_over(MPI_COMM_WORLD, here);
    failures += all;
    failed_cases += all > 0 ? 1 : 0;
  }
  if (rank == 0)
    std::printf("smpi_differential: %d ranks, %d cases (seed %u), %d algorithms x 2 collectives against the plain "
                "exchange: %ld failing cases, %ld failures; simulated time %.6f s\n",
                size, cases, seed, static_cast<int>(sizeof algorithms / sizeof algorithms[0]), failed_cases, failures,
                MPI_Wtime() - start);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
