// Helpers for tests run on the shared MPI main (tests/support/mpi_main.cpp).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

namespace iso_test {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// True on every rank iff `ok` holds on every rank of `comm`. Assert on the
/// result after the collectives, so no rank leaves a test early while the
/// others wait for it in a collective.
inline bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD) {
  int local = ok ? 1 : 0;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LAND, comm);
  return global != 0;
}

/// k with k^d == n, or 0 (the side of a cubic process grid of n ranks).
inline int exact_root(int n, int d) {
  for (int k = 1;; ++k) {
    long power = 1;
    for (int j = 0; j < d; ++j) power *= k;
    if (power == n) return k;
    if (power > n) return 0;
  }
}

/// "3x3x3".
inline std::string dims_text(const std::vector<int>& dims) {
  std::string text;
  for (std::size_t j = 0; j < dims.size(); ++j) text += (j ? "x" : "") + std::to_string(dims[j]);
  return text;
}

}  // namespace iso_test

/// Skips the current test (on every rank alike) when MPI_COMM_WORLD is smaller
/// than `n` ranks.
#define ISO_TEST_REQUIRE_RANKS(n)                                                              \
  do {                                                                                         \
    if (::iso_test::world_size() < (n))                                                        \
      GTEST_SKIP() << "needs at least " << (n) << " ranks, have " << ::iso_test::world_size(); \
  } while (0)
