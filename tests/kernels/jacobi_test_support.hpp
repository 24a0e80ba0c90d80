// Helpers shared by the Jacobi, user-kernel, advection and decomposition
// independence tests: filling fields from functions of the global index,
// gathering a distributed field bitwise, and polynomials with exact
// derivatives.
#pragma once

#include "isostencil/core/grid.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace iso_test {

/// Calls value(global) for every cell of the field, ghosts included, with
/// the global index wrapped in periodic dimensions (so a periodic ghost gets
/// the value of the cell it stands for; boundary ghosts of non-periodic
/// dimensions get -1 or N there), and stores the result.
template <int D, class View, class Value>
void fill_cells(const isostencil::core::Grid<D>& grid, const View& field, const Value& value) {
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), field);
  const auto extent = grid.field_extent();
  const auto& periodic = grid.decomposition().periodic();
  std::array<int, D> local{};
  for (std::size_t linear = 0; linear < host.span(); ++linear) {
    std::size_t rest = linear;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(extent[j]));
      rest /= static_cast<std::size_t>(extent[j]);
    }
    auto global = grid.to_global(local);
    for (int j = 0; j < D; ++j) {
      const long n = grid.global_extent()[j];
      if (periodic[j]) global[j] = ((global[j] % n) + n) % n;
    }
    host.data()[linear] = value(global);
  }
  Kokkos::deep_copy(field, host);
}

/// The interior of a distributed field as one global row-major array on
/// `root` (empty elsewhere), bit for bit: each rank contributes its cells'
/// bits, the others zeros, combined with MPI_BOR. Collective over the grid.
template <int D, class View>
std::vector<double> gather_interior(const isostencil::core::Grid<D>& grid, const View& field,
                                    int root = 0) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  std::size_t total = 1;
  for (int j = 0; j < D; ++j)
    total *= static_cast<std::size_t>(grid.global_extent()[j]);
  std::vector<std::uint64_t> bits(total, 0);
  const auto interior = grid.interior_extent();
  const auto extent = grid.field_extent();
  std::size_t cells = 1;
  for (int j = 0; j < D; ++j)
    cells *= static_cast<std::size_t>(interior[j]);
  for (std::size_t n = 0; n < cells; ++n) {
    std::size_t rest = n, local = 0, global = 0, local_stride = 1, global_stride = 1;
    for (int j = D - 1; j >= 0; --j) {
      const int i = static_cast<int>(rest % static_cast<std::size_t>(interior[j]));
      rest /= static_cast<std::size_t>(interior[j]);
      local += static_cast<std::size_t>(i + grid.ghost_lo()[j]) * local_stride;
      global += static_cast<std::size_t>(i + grid.global_offset()[j]) * global_stride;
      local_stride *= static_cast<std::size_t>(extent[j]);
      global_stride *= static_cast<std::size_t>(grid.global_extent()[j]);
    }
    std::memcpy(&bits[global], host.data() + local, sizeof(double));
  }
  int rank = 0;
  MPI_Comm_rank(grid.comm(), &rank);
  std::vector<std::uint64_t> combined(rank == root ? total : 0);
  MPI_Reduce(bits.data(), combined.data(), static_cast<int>(total), MPI_UINT64_T, MPI_BOR, root,
             grid.comm());
  std::vector<double> result(combined.size());
  if (!combined.empty())
    std::memcpy(result.data(), combined.data(), combined.size() * sizeof(double));
  return result;
}

/// Index of the first element where two arrays differ bitwise, or -1.
inline long first_bitwise_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return static_cast<long>(i);
  return -1;
}

/// A polynomial in D variables with exact partial derivatives.
template <int D>
struct Polynomial {
  struct Term {
    double coefficient;
    std::array<int, D> power;
  };
  std::vector<Term> terms;

  Polynomial& add(double coefficient, std::array<int, D> power) {
    terms.push_back({coefficient, power});
    return *this;
  }
  double operator()(const std::array<double, D>& x) const {
    double sum = 0;
    for (const Term& t : terms) {
      double value = t.coefficient;
      for (int j = 0; j < D; ++j)
        value *= std::pow(x[j], t.power[j]);
      sum += value;
    }
    return sum;
  }
  /// ∂^times / ∂x_dim^times.
  Polynomial derivative(int dim, int times = 1) const {
    Polynomial result;
    for (Term t : terms) {
      for (int k = 0; k < times && t.coefficient != 0; ++k) {
        t.coefficient *= t.power[dim];
        t.power[dim] = t.power[dim] > 0 ? t.power[dim] - 1 : 0;
      }
      if (t.coefficient != 0) result.terms.push_back(t);
    }
    return result;
  }
  Polynomial operator+(const Polynomial& other) const {
    Polynomial result = *this;
    result.terms.insert(result.terms.end(), other.terms.begin(), other.terms.end());
    return result;
  }
  Polynomial laplacian() const {
    Polynomial result;
    for (int j = 0; j < D; ++j)
      result = result + derivative(j, 2);
    return result;
  }
  /// Σ_j ∂⁴/∂x_j⁴.
  Polynomial fourth_derivatives() const {
    Polynomial result;
    for (int j = 0; j < D; ++j)
      result = result + derivative(j, 4);
    return result;
  }
};

}  // namespace iso_test
