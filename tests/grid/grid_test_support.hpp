// Shared helpers of the grid tests: cell values as a function of the global
// index, Kokkos fill kernels, the expected ghost contents after an exchange,
// and the case parameters (process grids, periodicity, uneven extents).
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil_test.hpp"

#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace grid_test {

using isostencil::core::Decomposition;
using isostencil::core::Grid;
using isostencil::core::Stencil;

constexpr std::array<iso::Algorithm, 5> all_algorithms = {
    iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct, iso::Algorithm::mpi,
    iso::Algorithm::automatic};

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Values made from a hash; never equal to the sentinel.
template <class T>
struct Values;
template <>
struct Values<std::int64_t> {
  KOKKOS_INLINE_FUNCTION static std::int64_t from_hash(std::uint64_t h) {
    return static_cast<std::int64_t>(h >> 2);
  }
  KOKKOS_INLINE_FUNCTION static std::int64_t sentinel() { return -1; }
};
template <>
struct Values<double> {
  KOKKOS_INLINE_FUNCTION static double from_hash(std::uint64_t h) {
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
  }
  KOKKOS_INLINE_FUNCTION static double sentinel() { return -1.0; }
};
template <>
struct Values<int> {
  KOKKOS_INLINE_FUNCTION static int from_hash(std::uint64_t h) { return static_cast<int>(h >> 34); }
  KOKKOS_INLINE_FUNCTION static int sentinel() { return -1; }
};
template <>
struct Values<std::uint8_t> {
  KOKKOS_INLINE_FUNCTION static std::uint8_t from_hash(std::uint64_t h) {
    return static_cast<std::uint8_t>(h >> 57);  // [0, 128)
  }
  KOKKOS_INLINE_FUNCTION static std::uint8_t sentinel() { return 255; }
};
template <>
struct Values<float> {
  KOKKOS_INLINE_FUNCTION static float from_hash(std::uint64_t h) {
    return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  }
  KOKKOS_INLINE_FUNCTION static float sentinel() { return -1.0f; }
};

/// f(global index, salt): the value interior cell `global` holds.
template <class T, int D>
KOKKOS_INLINE_FUNCTION T cell_value(const Kokkos::Array<long, D>& global, std::uint64_t salt) {
  std::uint64_t h = splitmix64(salt);
  for (int j = 0; j < D; ++j)
    h = splitmix64(h ^ static_cast<std::uint64_t>(global[j]));
  return Values<T>::from_hash(h);
}

/// Kokkos kernel: interior cells get f(global index, salt), ghost cells the sentinel.
template <int D, class View>
void fill_by_global_index(const Grid<D>& grid, const View& field, std::uint64_t salt) {
  using T = typename View::non_const_value_type;
  Kokkos::Array<long, D> extent, lo, interior, offset;
  long cells = 1;
  for (int j = 0; j < D; ++j) {
    extent[j] = grid.field_extent()[j];
    lo[j] = grid.ghost_lo()[j];
    interior[j] = grid.interior_extent()[j];
    offset[j] = grid.global_offset()[j];
    cells *= extent[j];
  }
  T* data = field.data();
  Kokkos::parallel_for(
      "grid_test::fill_by_global_index",
      Kokkos::RangePolicy<typename View::execution_space>(0, cells), KOKKOS_LAMBDA(long cell) {
        Kokkos::Array<long, D> global;
        bool ghost = false;
        long rest = cell;
        for (int j = D - 1; j >= 0; --j) {
          const long local = rest % extent[j];
          rest /= extent[j];
          ghost = ghost || local < lo[j] || local >= lo[j] + interior[j];
          global[j] = offset[j] + local - lo[j];
        }
        data[cell] = ghost ? Values<T>::sentinel() : cell_value<T, D>(global, salt);
      });
}

/// Kokkos kernel: every cell (interior and ghost) random, different on each rank.
template <int D, class View>
void fill_random(const Grid<D>& grid, const View& field, std::uint64_t seed) {
  using T = typename View::non_const_value_type;
  long cells = 1;
  for (int j = 0; j < D; ++j)
    cells *= grid.field_extent()[j];
  const std::uint64_t rank_seed = splitmix64(seed ^ (0x1000u + grid.decomposition().rank()));
  T* data = field.data();
  Kokkos::parallel_for(
      "grid_test::fill_random", Kokkos::RangePolicy<typename View::execution_space>(0, cells),
      KOKKOS_LAMBDA(long cell) {
        data[cell] = Values<T>::from_hash(splitmix64(rank_seed ^ static_cast<std::uint64_t>(cell)));
      });
}

inline std::string list(const std::vector<long>& values) {
  std::string out = "(";
  for (std::size_t j = 0; j < values.size(); ++j)
    out += (j ? "," : "") + std::to_string(values[j]);
  return out + ")";
}

/// The ghost direction of global cell `global` seen from this process: per
/// dimension, how many processes away its owner is, periodic images counted
/// (a halo wider than a subdomain reaches several). Computed from the
/// decomposition's own figures, not from the halo pattern.
template <int D>
std::vector<int> owner_direction(const Grid<D>& grid, const typename Grid<D>::global_index& global) {
  const auto& decomposition = grid.decomposition();
  std::vector<int> direction(D);
  for (int j = 0; j < D; ++j) {
    const long n = grid.global_extent()[j];
    const long image = global[j] >= 0 ? global[j] / n : -((-global[j] + n - 1) / n);
    const long wrapped = global[j] - image * n;
    const long owner = decomposition.owner_coord(j, wrapped) + image * decomposition.process_dims()[j];
    direction[j] = static_cast<int>(owner - decomposition.coords()[j]);
  }
  return direction;
}

/// Checks a field after an exchange (on the host): interior cells unchanged;
/// a ghost cell in a direction the stencil reads holds f(wrapped global
/// index), or the sentinel where the index lies outside a non-periodic
/// dimension; a ghost cell in any other direction holds the sentinel.
/// Returns "" or the first mismatch (and the count).
template <int D, class View>
std::string check_after_exchange(const Grid<D>& grid, const View& field, std::uint64_t salt) {
  using T = typename View::non_const_value_type;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  std::set<std::vector<int>> read;
  const iso::OffsetList& directions = grid.directions();
  for (int i = 0; i < directions.size(); ++i)
    read.insert(std::vector<int>(directions[i], directions[i] + D));
  long cells = 1;
  for (int j = 0; j < D; ++j)
    cells *= grid.field_extent()[j];
  long mismatches = 0;
  std::string first;
  for (long cell = 0; cell < cells; ++cell) {
    typename Grid<D>::local_index local{};
    long rest = cell;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % grid.field_extent()[j]);
      rest /= grid.field_extent()[j];
    }
    const auto global = grid.to_global(local);
    const std::vector<int> direction = owner_direction(grid, global);
    const bool interior = grid.is_interior(local);
    T expected = Values<T>::sentinel();
    if (interior || read.count(direction)) {
      if (const auto wrapped = grid.wrap(global)) {
        Kokkos::Array<long, D> index;
        for (int j = 0; j < D; ++j)
          index[j] = (*wrapped)[j];
        expected = cell_value<T, D>(index, salt);
      }
    }
    const T actual = host.data()[cell];
    if (actual == expected) continue;
    if (mismatches++ == 0) {
      std::ostringstream text;
      text << (interior ? "interior" : "ghost") << " cell, direction "
           << list(std::vector<long>(direction.begin(), direction.end())) << ", global "
           << list(std::vector<long>(global.begin(), global.end())) << ": expected " << expected
           << (expected == Values<T>::sentinel() ? " (sentinel)" : "") << ", got " << actual;
      first = text.str();
    }
  }
  if (mismatches == 0) return {};
  return first + " (" + std::to_string(mismatches) + " cells wrong on rank " +
         std::to_string(grid.decomposition().rank()) + ")";
}

enum class Shape { star, box, upwind, one_sided_star };
inline const char* to_string(Shape shape) {
  switch (shape) {
    case Shape::star:
      return "star";
    case Shape::box:
      return "box";
    case Shape::upwind:
      return "upwind";
    case Shape::one_sided_star:
      return "one_sided_star";
  }
  return "?";
}

/// Alternating signs, so one-sided shapes lean differently per dimension.
inline std::vector<int> signs_for(int dims, int variant) {
  std::vector<int> signs(dims);
  for (int j = 0; j < dims; ++j)
    signs[j] = ((j + variant) % 3) - 1;  // -1, 0, +1, ...
  if (dims == 1) signs[0] = variant % 2 ? 1 : -1;
  return signs;
}

inline Stencil make_stencil(Shape shape, int dims, int radius, int variant = 0) {
  switch (shape) {
    case Shape::star:
      return Stencil::star(dims, radius);
    case Shape::box:
      return Stencil::box(dims, radius);
    case Shape::upwind:
      return Stencil::upwind(dims, radius, signs_for(dims, variant));
    case Shape::one_sided_star:
      return Stencil::one_sided_star(dims, radius, signs_for(dims, variant + 1));
  }
  return {};
}

enum class Periodicity { all, none, mixed };
inline const char* to_string(Periodicity p) {
  return p == Periodicity::all ? "periodic" : p == Periodicity::none ? "non-periodic" : "mixed";
}
inline std::vector<bool> periodic_flags(int dims, Periodicity p) {
  std::vector<bool> flags(dims);
  for (int j = 0; j < dims; ++j)
    flags[j] = p == Periodicity::all || (p == Periodicity::mixed && j % 2 == 0);
  return flags;
}

/// Process grids: chosen by MPI_Dims_create, all ranks in the first
/// dimension ({world,1,...}), all in the last ({1,...,world}), or 2 in the
/// first and the rest chosen ({2,0,...}, size-2 dimension; needs even world).
enum class ProcessGrid { automatic, first, last, two_first };
inline const char* to_string(ProcessGrid g) {
  switch (g) {
    case ProcessGrid::automatic:
      return "dims_create";
    case ProcessGrid::first:
      return "{world,1..}";
    case ProcessGrid::last:
      return "{1..,world}";
    case ProcessGrid::two_first:
      return "{2,0..}";
  }
  return "?";
}
inline std::vector<int> process_dims(int dims, ProcessGrid g, int world) {
  std::vector<int> p(dims, 0);
  if (g == ProcessGrid::first) {
    p.assign(dims, 1);
    p[0] = world;
  } else if (g == ProcessGrid::last) {
    p.assign(dims, 1);
    p[dims - 1] = world;
  } else if (g == ProcessGrid::two_first) {
    // In 1-D the only process grid is {world}.
    p[0] = dims == 1 ? world : world % 2 == 0 ? 2 : 1;
  }
  return p;
}

/// Global extents giving every process at least `local` cells; uneven adds
/// 1..p-1 extra cells where p > 1, so the first N % p processes own one more.
inline std::vector<long> global_extent(const std::vector<int>& procs, int local, bool uneven) {
  std::vector<long> extent(procs.size());
  for (std::size_t j = 0; j < procs.size(); ++j) {
    const int p = procs[j];
    extent[j] =
        static_cast<long>(p) * local + (uneven && p > 1 ? 1 + static_cast<long>(j) % (p - 1) : 0);
  }
  return extent;
}

}  // namespace grid_test
