// The Jacobi operator: the grid's weighted stencil as the discrete Laplacian
// L, the standard ones, and the split of a weighted stencil into what the
// sweeps read (jacobi_sweeps.hpp).
//
// Operator. The grid's stencil carries one weight per offset: L u(x) =
// Σ_c w_c u(x + c). star_laplacian() and box_laplacian() build the standard
// ones for d = 1..6 (any other weighted stencil works too, as long as it has
// the centre offset with a negative weight):
//
//   star (2d+1 points):  w_0 = -2d/h², w_{±e_j} = 1/h².
//   box (3^d points):    the compact "Mehrstellen" Laplacian
//                          L = Σ_j δ_j² Π_{i≠j} (1 + δ_i²/12)  (δ_j² = [1,-2,1]/h² in dim j)
//                        whose weight depends only on the number k of nonzero
//                        components of the offset (box_laplacian_class_weights):
//                          h² w_k = k a^{k-1} b^{d-k} - 2 (d-k) a^k b^{d-k-1},
//                          a = 1/12, b = 5/6.
//                        d = 1: (-2, 1); d = 2: (-20, 4, 1)/6 (the 9-point
//                        stencil); d = 3: (-200, 20, 6, 1)/48 (27 points).
//   Both are consistent (Σ w = 0, Σ w c_j² = 2/h²) and second order. The box
//   one is also isotropic to fourth order (Σ w c_i² c_j² = 2/(3h²), i ≠ j):
//   L u = Δu + (h²/12) Δ²u + O(h⁴) in every d, so it is exact on cubics and
//   on quartics up to that known term. The star has L u = Δu + (h²/12) Σ_j ∂_j⁴u
//   + O(h⁴). Any weights meeting the same moment conditions are as good, e.g.
//   the classic 3-D 27-point (-128, 14, 3, 1)/30h²: pass
//   core::Stencil::box(3, 1).with_weights(...) as the grid's stencil.
//   Jacobi converges with both (for the box, ρ(I - D⁻¹A) < 1 because the
//   factors 1 + δ²/12 stay in [2/3, 1]), and the residual's ℓ2 norm falls
//   monotonically (A symmetric, constant diagonal).
//
// analyze_operator() splits any weighted stencil with a centre offset of
// negative weight: the centre weight (-diag), the other terms, and whether
// it is the uniform star or the box by class, which have kernels of their own.
#pragma once

#include "isostencil/core/stencil.hpp"
#include "isostencil/kernels/sweep.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

namespace isostencil::kernels {

/// h²-scaled weights w_k of box_laplacian(dims, h) for offsets with k nonzero
/// components, k = 0..dims (formula in the header comment). Throws iso::Error
/// unless 1 <= dims <= 6.
std::vector<double> box_laplacian_class_weights(int dims);
/// Star Laplacian (2d+1 points, radius 1): centre -2d/h², neighbours 1/h².
core::Stencil star_laplacian(int dims, double h = 1.0);
/// Box Laplacian (3^d points, radius 1): box_laplacian_class_weights / h².
core::Stencil box_laplacian(int dims, double h = 1.0);

namespace detail {

/// A weighted stencil split for Jacobi: the centre weight and the other
/// terms; `uniform_star` when the offsets are exactly {0, ±e_j} with one
/// common neighbour weight; `box_by_class` when they are exactly {-1,0,1}^d
/// with a weight that depends only on the number of nonzero components
/// (class_weights[k], k = 0..d).
struct JacobiOperator {
  double center_weight = 0;
  bool uniform_star = false;
  double neighbor_weight = 0;
  bool box_by_class = false;
  std::vector<double> class_weights;
  std::vector<std::vector<int>> offsets;  ///< non-centre offsets, stencil order
  std::vector<double> weights;            ///< their weights
};
/// Throws iso::Error (message starts with `where`) when the stencil has no
/// weights, no centre offset, the centre twice, or a centre weight >= 0.
JacobiOperator analyze_operator(const core::Stencil& stencil, int dims, const char* where);
/// One non-centre term: linear offset (elements) and weight.
struct Term {
  std::ptrdiff_t offset = 0;
  double weight = 0;
};

/// The terms as a View in the default memory space.
template <int D>
Kokkos::View<Term*> make_terms(const JacobiOperator& op, const Strides<D>& stride) {
  Kokkos::View<Term*> terms("isostencil::Jacobi::terms", op.weights.size());
  auto host = Kokkos::create_mirror_view(terms);
  for (std::size_t t = 0; t < op.weights.size(); ++t) {
    std::ptrdiff_t at = 0;
    for (int j = 0; j < D; ++j)
      at += static_cast<std::ptrdiff_t>(op.offsets[t][j]) * stride[j];
    host(t) = Term{at, op.weights[t]};
  }
  Kokkos::deep_copy(terms, host);
  return terms;
}

}  // namespace detail

}  // namespace isostencil::kernels
