// Jacobi iteration for the Laplace/Poisson problem -Δu = f on a distributed
// grid, with the grid's weighted stencil as the discrete Laplacian L.
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
// Iteration. With A = -L and diag = -w_0 (the "classic" Jacobi form):
//     u_new(x) = (f(x) + Σ_{c≠0} w_c u(x+c)) / diag
// One of three kernels runs, chosen from the weights (kernel_name()):
//   "star"    offsets {0, ±e_j}, one neighbour weight w: s * (w/diag)
//             [+ f * (1/diag)], s = the plain sum of the 2d neighbours in the
//             order -e_0, +e_0, -e_1, ...
//   "box"     offsets {-1,0,1}^d, weights by number of nonzero components:
//             (Σ_{k>=1} w_k s_k [+ f]) * (1/diag), s_k = the sum of the
//             neighbours with k nonzero components (lexicographic order)
//   "general" anything else: (Σ_{c≠0} w_c u(x+c) [+ f]) * (1/diag), terms in
//             stencil order, offsets and weights read from a small table.
// The arithmetic per cell depends only on the cell's neighbours, so the result
// is bitwise the same on any number of ranks, with or without overlap. On
// host backends the star and box kernels run row by row (update.hpp) in loops
// the compiler vectorizes at -O2; device backends run them cell by cell.
// The residual is r = f + L u (= f - A u); its norms over all ranks are
//   l2 = sqrt(Σ r²)  (plain ℓ2 over the global interior, no h scaling)
//   max = max |r|.
//
// Boundaries. Periodic dimensions are filled by the halo exchange. In
// non-periodic dimensions the ghost cells beyond the global boundary hold the
// Dirichlet values: the caller writes them into `u` (with the initial guess)
// and the exchange never touches them; the solver's second field starts as a
// copy of `u`, so both fields carry them (see set_ghosts()).
//
// Each of the two fields has its own persistent halo exchange, made once; a
// sweep reads one and writes the other, then they swap. Overlap (default on):
// cells whose stencil reads no ghost cell are updated while the exchange is in
// flight, the boundary shell after wait().
//
//   core::Grid<3> grid(MPI_COMM_WORLD, {n, n, n}, {false, false, false},
//                      kernels::star_laplacian(3, h));
//   auto u = grid.make_field<double>("u");   // initial guess + Dirichlet ghosts
//   auto f = grid.make_field<double>("f");   // source (optional)
//   kernels::JacobiOptions options;
//   options.max_sweeps = 5000;
//   options.tolerance = 1e-8;
//   kernels::Jacobi<3> jacobi(grid, u, f, options);
//   kernels::JacobiSummary summary = jacobi.solve();
//   auto solution = jacobi.solution();
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/sweep.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace isostencil::kernels {

// ---------------------------------------------------------------------------
// Laplacian stencils

/// h²-scaled weights w_k of box_laplacian(dims, h) for offsets with k nonzero
/// components, k = 0..dims (formula in the header comment). Throws iso::Error
/// unless 1 <= dims <= 6.
std::vector<double> box_laplacian_class_weights(int dims);
/// Star Laplacian (2d+1 points, radius 1): centre -2d/h², neighbours 1/h².
core::Stencil star_laplacian(int dims, double h = 1.0);
/// Box Laplacian (3^d points, radius 1): box_laplacian_class_weights / h².
core::Stencil box_laplacian(int dims, double h = 1.0);

// ---------------------------------------------------------------------------
// Options and results

struct JacobiOptions {
  /// solve(): stop after this many sweeps at the latest.
  long max_sweeps = 1000;
  /// solve(): stop once a measured residual has l2 <= tolerance (0: never).
  double tolerance = 0;
  /// solve(): stop once l2 <= relative_tolerance * (first measured l2) (0: never).
  double relative_tolerance = 0;
  /// Measure the residual of the iterate every this many sweeps (0: never;
  /// solve() then runs max_sweeps). It is fused into the sweep: no extra
  /// exchange, one reduction and two MPI_Allreduce.
  int residual_every = 10;
  /// Measure the residual of the final iterate too (one extra exchange).
  bool final_residual = true;
  /// Update the interior while the halo exchange is in flight.
  bool overlap = true;
  core::HaloOptions halo{};
  /// Prefix of the Kokkos kernel labels.
  std::string label = "isostencil::Jacobi";
};

/// Residual norms of the iterate after `sweep` sweeps (global over all ranks).
struct Residual {
  long sweep = 0;
  double l2 = 0;
  double max = 0;
};

struct JacobiSummary {
  long sweeps = 0;         ///< sweeps run by this call
  bool converged = false;  ///< a tolerance was met
  /// Residuals measured during this call, in order. When solve() stops at a
  /// tolerance, the residual that met it is of the iterate before the last
  /// sweep (it is computed within that sweep); with final_residual the last
  /// entry is the returned iterate's.
  std::vector<Residual> history;
  double kernel_seconds = 0;  ///< this rank: sweeps and residual reductions
  double halo_seconds = 0;    ///< this rank: exposed start/wait time
  double reduce_seconds = 0;  ///< this rank: MPI_Allreduce of the norms
  double total_seconds = 0;   ///< this rank: wall time of the call

  /// One line: sweeps, convergence, last residual, time split.
  std::string describe() const;
};

/// Partial residual norms: `+=` combines two of them (sums add, maxima take
/// the larger), as Kokkos' default reduction join expects.
struct ResidualSums {
  double sum_of_squares = 0;
  double max_abs = 0;

  KOKKOS_INLINE_FUNCTION ResidualSums& operator+=(const ResidualSums& other) {
    sum_of_squares += other.sum_of_squares;
    if (!(other.max_abs <= max_abs)) max_abs = other.max_abs;  // NaN sticks
    return *this;
  }
  // Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile ResidualSums& other) volatile {
    sum_of_squares += other.sum_of_squares;
    if (!(other.max_abs <= max_abs)) max_abs = other.max_abs;
  }
  KOKKOS_INLINE_FUNCTION void add(double r) {
    sum_of_squares += r * r;
    const double magnitude = r < 0 ? -r : r;
    if (!(magnitude <= max_abs)) max_abs = magnitude;
  }
};

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
/// Sum and max over `comm` (two MPI_Allreduce).
Residual reduce_residual(MPI_Comm comm, const ResidualSums& local, long sweep);
/// One non-centre term: linear offset (elements) and weight.
struct Term {
  std::ptrdiff_t offset = 0;
  double weight = 0;
};

/// One Jacobi update of cell x: the uniform star.
template <int D, bool HasSource, bool WithResidual>
struct StarSweep {
  const double* in;
  double* out;
  const double* source;
  Strides<D> stride;
  double scale;            // w / diag
  double inverse_diag;     // 1 / diag
  double center_weight;    // w_0 (residual)
  double neighbor_weight;  // w (residual)

  /// Σ of the 2D neighbours in the order -e_0, +e_0, -e_1, ...; `S` is
  /// Strides<D> or a plain array (which compilers keep in registers).
  template <class S>
  static KOKKOS_FORCEINLINE_FUNCTION double sum_of_neighbors(const double* p, const S& s) {
    double sum = p[-s[0]];
    sum += p[s[0]];
    for (int j = 1; j < D; ++j) {
      sum += p[-s[j]];
      sum += p[s[j]];
    }
    return sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION double neighbor_sum(const double* p) const {
    return sum_of_neighbors(p, stride);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double sum = neighbor_sum(in + at);
    if constexpr (HasSource)
      out[at] = sum * scale + source[at] * inverse_diag;
    else
      out[at] = sum * scale;
  }
  // A row as one loop over restrict parameters with the strides in a local
  // array: the compiler can tell that the output aliases nothing it reads.
  // (update_cell's own parameters must not be restrict: GCC 12 then gives
  // up on the loop's data references.) Not inlined into row(): with the
  // chunked_row lambda, GCC 12 vectorizes it only as a function of its own.
  static KOKKOS_FORCEINLINE_FUNCTION void update_cell(const double* p, double* q, const double* f,
                                                      const std::ptrdiff_t (&s)[D],
                                                      const double scale, const double inverse_diag,
                                                      const int k) {
    const double sum = sum_of_neighbors(p + k, s);
    if constexpr (HasSource)
      q[k] = sum * scale + f[k] * inverse_diag;
    else
      q[k] = sum * scale;
  }
  static KOKKOS_FUNCTION ISOSTENCIL_ROW_NOINLINE void update_row(const double* KOKKOS_RESTRICT p,
                                                     double* KOKKOS_RESTRICT q,
                                                     const double* KOKKOS_RESTRICT f,
                                                     const Strides<D> stride, const double scale,
                                                     const double inverse_diag, const int length) {
    std::ptrdiff_t s[D];
    for (int j = 0; j < D; ++j)
      s[j] = stride[j];
    // The leading stream is the plane ahead (+e_0); small fields stay in cache.
    chunked_row(p, q, s[0] + row_prefetch_distance, D > 1 && s[0] >= 2 * row_prefetch_distance,
                length, [&](const int k) ISOSTENCIL_INLINE_LAMBDA {
                  update_cell(p, q, f, s, scale, inverse_diag, k);
                });
  }
  /// The cells first, first + e_{D-1}, ... (length of them), as operator().
  KOKKOS_FORCEINLINE_FUNCTION void row(const Index<D>& first, int length) const {
    const std::ptrdiff_t at = linear_index<D>(first, stride);
    update_row(in + at, out + at, HasSource ? source + at : nullptr, stride, scale, inverse_diag,
               length);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double* p = in + at;
    const double sum = neighbor_sum(p);
    double r = center_weight * p[0] + neighbor_weight * sum;
    if constexpr (HasSource) {
      r += source[at];
      out[at] = sum * scale + source[at] * inverse_diag;
    } else {
      out[at] = sum * scale;
    }
    if constexpr (WithResidual) norms.add(r);
  }
};

/// Offset number `o` (0 <= o < 3^D) of the radius-1 box in lexicographic
/// order: its components (-1, 0, 1) and number of nonzero components.
template <int D>
struct BoxOffset {
  int digit[D];
  int nonzero;
};
template <int D>
KOKKOS_INLINE_FUNCTION constexpr BoxOffset<D> box_offset(int o) {
  BoxOffset<D> offset{};
  offset.nonzero = 0;
  for (int j = D - 1; j >= 0; --j) {
    offset.digit[j] = o % 3 - 1;
    offset.nonzero += offset.digit[j] != 0;
    o /= 3;
  }
  return offset;
}
/// 3^d.
KOKKOS_INLINE_FUNCTION constexpr int box_points(int dims) {
  int points = 1;
  for (int j = 0; j < dims; ++j)
    points *= 3;
  return points;
}

/// One Jacobi update of cell x: the radius-1 box with weights by class.
/// Neighbours are summed per class (offsets in lexicographic order), then
/// s = Σ_{k>=1} w_k sum_k (k ascending).
template <int D, bool HasSource, bool WithResidual>
struct BoxSweep {
  const double* in;
  double* out;
  const double* source;
  Strides<D> stride;
  Kokkos::Array<double, D + 1> weight;  // weight[k] for k nonzero components
  double inverse_diag;

  template <int O, class S, std::size_t... J>
  static KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t box_linear(const S& s,
                                                               std::index_sequence<J...>) {
    constexpr BoxOffset<D> offset = box_offset<D>(O);
    return ((offset.digit[J] * s[J]) + ...);
  }
  template <int O, class S>
  static KOKKOS_FORCEINLINE_FUNCTION void add_offset(const double* p, const S& s, double* sums) {
    constexpr BoxOffset<D> offset = box_offset<D>(O);
    if constexpr (offset.nonzero > 0)
      sums[offset.nonzero] += p[box_linear<O>(s, std::make_index_sequence<D>{})];
  }
  template <class S, std::size_t... O>
  static KOKKOS_FORCEINLINE_FUNCTION void add_unrolled(const double* p, const S& s, double* sums,
                                                       std::index_sequence<O...>) {
    (add_offset<static_cast<int>(O)>(p, s, sums), ...);
  }
  /// Σ_{k>=1} w_k (Σ of the neighbours with k nonzero components); `S` and
  /// `W` are Kokkos::Arrays or plain arrays.
  template <class S, class W>
  static KOKKOS_FORCEINLINE_FUNCTION double sum_by_class(const double* p, const S& s, const W& w) {
    double sums[D + 1] = {};
    if constexpr (D <= 4) {
      // Unrolled: every offset's components are compile-time constants.
      add_unrolled(p, s, sums, std::make_index_sequence<box_points(D)>{});
    } else {
      for (int o = 0; o < box_points(D); ++o) {
        const BoxOffset<D> offset = box_offset<D>(o);
        if (offset.nonzero == 0) continue;
        std::ptrdiff_t at = 0;
        for (int j = 0; j < D; ++j)
          at += offset.digit[j] * s[j];
        sums[offset.nonzero] += p[at];
      }
    }
    double sum = w[1] * sums[1];
    for (int k = 2; k <= D; ++k)
      sum += w[k] * sums[k];
    return sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION double weighted_sum(const double* p) const {
    return sum_by_class(p, stride, weight);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double sum = weighted_sum(in + at);
    if constexpr (HasSource)
      out[at] = (sum + source[at]) * inverse_diag;
    else
      out[at] = sum * inverse_diag;
  }
  static KOKKOS_FORCEINLINE_FUNCTION void update_cell(const double* p, double* q, const double* f,
                                                      const std::ptrdiff_t (&s)[D],
                                                      const double (&w)[D + 1],
                                                      const double inverse_diag, const int k) {
    const double sum = sum_by_class(p + k, s, w);
    if constexpr (HasSource)
      q[k] = (sum + f[k]) * inverse_diag;
    else
      q[k] = sum * inverse_diag;
  }
  static KOKKOS_FORCEINLINE_FUNCTION void update_row(const double* KOKKOS_RESTRICT p,
                                                     double* KOKKOS_RESTRICT q,
                                                     const double* KOKKOS_RESTRICT f,
                                                     const Strides<D> stride,
                                                     const Kokkos::Array<double, D + 1> weight,
                                                     const double inverse_diag, const int length) {
    std::ptrdiff_t s[D];
    for (int j = 0; j < D; ++j)
      s[j] = stride[j];
    double w[D + 1];
    for (int k = 0; k <= D; ++k)
      w[k] = weight[k];
    // The leading stream: the corner (+1, ..., +1) (see StarSweep).
    std::ptrdiff_t lead = row_prefetch_distance;
    for (int j = 0; j < D; ++j)
      lead += s[j];
    chunked_row(p, q, lead, D > 1 && s[0] >= 2 * row_prefetch_distance, length,
                [&](const int k) ISOSTENCIL_INLINE_LAMBDA {
                  update_cell(p, q, f, s, w, inverse_diag, k);
                });
  }
  KOKKOS_FORCEINLINE_FUNCTION void row(const Index<D>& first, int length) const {
    const std::ptrdiff_t at = linear_index<D>(first, stride);
    update_row(in + at, out + at, HasSource ? source + at : nullptr, stride, weight, inverse_diag,
               length);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double* p = in + at;
    const double sum = weighted_sum(p);
    double r = weight[0] * p[0] + sum;
    if constexpr (HasSource) {
      r += source[at];
      out[at] = (sum + source[at]) * inverse_diag;
    } else {
      out[at] = sum * inverse_diag;
    }
    if constexpr (WithResidual) norms.add(r);
  }
};

/// One Jacobi update of cell x: any weighted stencil.
template <int D, bool HasSource, bool WithResidual>
struct TermSweep {
  const double* in;
  double* out;
  const double* source;
  const Term* terms;
  int num_terms;
  Strides<D> stride;
  double inverse_diag;
  double center_weight;

  KOKKOS_FORCEINLINE_FUNCTION double weighted_sum(const double* p) const {
    double sum = 0;
    for (int t = 0; t < num_terms; ++t)
      sum += terms[t].weight * p[terms[t].offset];
    return sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double sum = weighted_sum(in + at);
    if constexpr (HasSource)
      out[at] = (sum + source[at]) * inverse_diag;
    else
      out[at] = sum * inverse_diag;
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double* p = in + at;
    const double sum = weighted_sum(p);
    double r = center_weight * p[0] + sum;
    if constexpr (HasSource) {
      r += source[at];
      out[at] = (sum + source[at]) * inverse_diag;
    } else {
      out[at] = sum * inverse_diag;
    }
    if constexpr (WithResidual) norms.add(r);
  }
};

/// r = f + L u at cell x, reduced into norms (no update).
template <int D, bool HasSource>
struct ResidualOnly {
  const double* in;
  const double* source;
  const Term* terms;
  int num_terms;
  Strides<D> stride;
  double center_weight;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double* p = in + at;
    double sum = 0;
    for (int t = 0; t < num_terms; ++t)
      sum += terms[t].weight * p[terms[t].offset];
    double r = center_weight * p[0] + sum;
    if constexpr (HasSource) r += source[at];
    norms.add(r);
  }
};

/// out(x) = Σ_c w_c in(x + c), centre first, then the other terms in order.
template <int D>
struct ApplyStencil {
  const double* in;
  double* out;
  const Term* terms;
  int num_terms;
  Strides<D> stride;
  double center_weight;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const double* p = in + at;
    double sum = center_weight * p[0];
    for (int t = 0; t < num_terms; ++t)
      sum += terms[t].weight * p[terms[t].offset];
    out[at] = sum;
  }
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

// ---------------------------------------------------------------------------
// Applying the operator once

/// out(x) = Σ_c w_c in(x + c) (the grid's weighted stencil) on every interior
/// cell, after exchanging `in`'s halo through `halo` (made by
/// grid.halo_exchange(in)); with `overlap`, the inner cells run during the
/// exchange. Collective over the grid's communicator.
template <int D>
UpdateTimes apply_stencil(const core::Grid<D>& grid, core::HaloExchange& halo,
                          const core::Field<double, D>& in, const core::Field<double, D>& out,
                          bool overlap = true) {
  const char* where = "isostencil::kernels::apply_stencil";
  const detail::JacobiOperator op = detail::analyze_operator(grid.stencil(), D, where);
  std::string error = detail::check_grid_field(grid, where, "in", in);
  if (error.empty()) error = detail::check_grid_field(grid, where, "out", out);
  if (error.empty() && in.data() == out.data())
    error = std::string(where) + ": in and out are the same field";
  iso::agree_on_errors(grid.decomposition().comm(), where, error);
  const auto stride = detail::layout_right_strides<D>(in);
  const Kokkos::View<detail::Term*> terms = detail::make_terms<D>(op, stride);
  const detail::ApplyStencil<D> functor{in.data(),    out.data(),
                                        terms.data(), static_cast<int>(terms.extent(0)),
                                        stride,       op.center_weight};
  return apply_with_halo<D>(grid, halo, "isostencil::apply_stencil", overlap, functor);
}

/// Writes value(global index) into every ghost cell of `field` that lies
/// beyond the global boundary in some non-periodic dimension (the Dirichlet
/// cells; corners included), on the host. `value` is called with a
/// std::array<long, D> of global indices (-1 .. N in the boundary dimensions).
template <int D, class View, class Value>
void set_dirichlet_ghosts(const core::Grid<D>& grid, const View& field, const Value& value) {
  const char* where = "isostencil::kernels::set_dirichlet_ghosts";
  const std::string error = detail::check_grid_field(grid, where, "field", field);
  if (!error.empty()) throw iso::Error(error);  // local: no collective here
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  const auto extent = grid.field_extent();
  const auto& periodic = grid.decomposition().periodic();
  std::array<int, D> local{};
  const std::size_t cells = host.span();
  for (std::size_t linear = 0; linear < cells; ++linear) {
    std::size_t rest = linear;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(extent[j]));
      rest /= static_cast<std::size_t>(extent[j]);
    }
    const auto global = grid.to_global(local);
    bool boundary = false;
    for (int j = 0; j < D; ++j)
      boundary =
          boundary || (!periodic[j] && (global[j] < 0 || global[j] >= grid.global_extent()[j]));
    if (boundary) host.data()[linear] = value(global);
  }
  Kokkos::deep_copy(field, host);
}

// ---------------------------------------------------------------------------
// The solver

template <int D>
class Jacobi {
public:
  using field_type = core::Field<double, D>;

  /// The grid's stencil is the operator (weighted, centre weight < 0). `u`
  /// holds the initial guess in the interior and the Dirichlet values in the
  /// boundary ghosts; it becomes one of the two iterates (the solver keeps a
  /// reference). `source` (f in -Δu = f) may be an empty View. Collective:
  /// builds the two persistent halo exchanges. Throws iso::Error for a
  /// stencil without weights or centre, or fields of the wrong shape.
  Jacobi(const core::Grid<D>& grid, field_type u, field_type source = field_type(),
         JacobiOptions options = {})
      : grid_(grid),
        options_(std::move(options)),
        op_(detail::analyze_operator(grid.stencil(), D, "isostencil::kernels::Jacobi")),
        source_(std::move(source)) {
    const char* where = "isostencil::kernels::Jacobi";
    std::string error = detail::check_grid_field(grid_, where, "u", u);
    if (error.empty() && source_.data() != nullptr)
      error = detail::check_grid_field(grid_, where, "source", source_);
    if (error.empty() && source_.data() == u.data())
      error = std::string(where) + ": the source is the field u itself";
    if (error.empty() && (options_.residual_every < 0 || options_.max_sweeps < 0))
      error = std::string(where) + ": residual_every and max_sweeps must be >= 0";
    iso::agree_on_errors(grid_.decomposition().comm(), where, error);
    fields_[0] = std::move(u);
    fields_[1] =
        field_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, fields_[0].label() + ":next"),
                   fields_[0].layout());
    // Both fields carry the Dirichlet ghosts (the exchange never writes them).
    Kokkos::deep_copy(fields_[1], fields_[0]);
    stride_ = detail::layout_right_strides<D>(fields_[0]);
    terms_ = detail::make_terms<D>(op_, stride_);
    sweep_plan_ = plan_update(grid_, options_.label + ":sweep");
    sweep_residual_plan_ = plan_update(grid_, options_.label + ":sweep+residual");
    residual_plan_ = plan_update(grid_, options_.label + ":residual");
    halos_.reserve(2);
    halos_.push_back(grid_.halo_exchange(fields_[0], options_.halo));
    halos_.push_back(grid_.halo_exchange(fields_[1], options_.halo));
  }

  /// Sweeps until a tolerance is met or max_sweeps; see JacobiOptions.
  JacobiSummary solve() { return iterate(options_.max_sweeps, true); }
  /// Exactly `sweeps` sweeps (residuals every residual_every, no early stop).
  JacobiSummary run(long sweeps) { return iterate(sweeps, false); }

  /// Residual norms of the current iterate (collective: one exchange).
  Residual residual() {
    ResidualSums local;
    residual_sweep(local);
    return detail::reduce_residual(grid_.comm(), local, sweeps_done_);
  }

  /// The current iterate (the latest sweep's output). Its interior and
  /// boundary ghosts are valid; other ghosts hold the last exchange.
  const field_type& solution() const { return fields_[current_]; }
  long sweeps_done() const { return sweeps_done_; }
  const core::Grid<D>& grid() const { return grid_; }
  const JacobiOptions& options() const { return options_; }
  /// Which kernel runs: "star" (uniform star), "box" (box by class) or
  /// "general" (any weighted stencil, weights looked up per term).
  std::string kernel_name() const {
    return op_.uniform_star ? "star" : op_.box_by_class ? "box" : "general";
  }
  bool uses_star_kernel() const { return op_.uniform_star; }

private:
  JacobiSummary iterate(long sweeps, bool stop_at_tolerance) {
    JacobiSummary summary;
    const double start = MPI_Wtime();
    double first_l2 = -1;
    for (long s = 0; s < sweeps; ++s) {
      const bool measure =
          options_.residual_every > 0 && sweeps_done_ % options_.residual_every == 0;
      ResidualSums local;
      const UpdateTimes times = sweep(measure, local);
      summary.kernel_seconds += times.kernel;
      summary.halo_seconds += times.halo;
      ++summary.sweeps;
      if (!measure) continue;
      const double t0 = MPI_Wtime();
      const Residual norms = detail::reduce_residual(grid_.comm(), local, sweeps_done_ - 1);
      summary.reduce_seconds += MPI_Wtime() - t0;
      summary.history.push_back(norms);
      if (first_l2 < 0) first_l2 = norms.l2;
      // Every rank sees the same reduced norms, so all stop together.
      if (stop_at_tolerance && ((options_.tolerance > 0 && norms.l2 <= options_.tolerance) ||
                                (options_.relative_tolerance > 0 &&
                                 norms.l2 <= options_.relative_tolerance * first_l2))) {
        summary.converged = true;
        break;
      }
    }
    if (options_.final_residual) {
      ResidualSums local;
      const UpdateTimes times = residual_sweep(local);
      summary.kernel_seconds += times.kernel;
      summary.halo_seconds += times.halo;
      const double t0 = MPI_Wtime();
      summary.history.push_back(detail::reduce_residual(grid_.comm(), local, sweeps_done_));
      summary.reduce_seconds += MPI_Wtime() - t0;
    }
    summary.total_seconds = MPI_Wtime() - start;
    return summary;
  }

  UpdateTimes sweep(bool with_residual, ResidualSums& norms) {
    const bool has_source = source_.data() != nullptr;
    if (op_.uniform_star) {
      if (has_source)
        return with_residual ? star_sweep<true, true>(norms) : star_sweep<true, false>(norms);
      return with_residual ? star_sweep<false, true>(norms) : star_sweep<false, false>(norms);
    }
    if (op_.box_by_class) {
      if (has_source)
        return with_residual ? box_sweep<true, true>(norms) : box_sweep<true, false>(norms);
      return with_residual ? box_sweep<false, true>(norms) : box_sweep<false, false>(norms);
    }
    if (has_source)
      return with_residual ? term_sweep<true, true>(norms) : term_sweep<true, false>(norms);
    return with_residual ? term_sweep<false, true>(norms) : term_sweep<false, false>(norms);
  }

  template <class Functor, bool WithResidual>
  UpdateTimes run_sweep(const Functor& functor, ResidualSums& norms) {
    UpdateTimes times;
    if constexpr (WithResidual)
      times = apply_reduce_with_halo<D>(sweep_residual_plan_, halos_[current_], options_.overlap,
                                        functor, norms);
    else
      times = apply_with_halo<D>(sweep_plan_, halos_[current_], options_.overlap, functor);
    current_ = 1 - current_;
    ++sweeps_done_;
    return times;
  }

  template <bool HasSource, bool WithResidual>
  UpdateTimes star_sweep(ResidualSums& norms) {
    const double diag = -op_.center_weight;
    const detail::StarSweep<D, HasSource, WithResidual> functor{fields_[current_].data(),
                                                                fields_[1 - current_].data(),
                                                                source_.data(),
                                                                stride_,
                                                                op_.neighbor_weight / diag,
                                                                1.0 / diag,
                                                                op_.center_weight,
                                                                op_.neighbor_weight};
    return run_sweep<decltype(functor), WithResidual>(functor, norms);
  }

  template <bool HasSource, bool WithResidual>
  UpdateTimes box_sweep(ResidualSums& norms) {
    Kokkos::Array<double, D + 1> weight;
    for (int k = 0; k <= D; ++k)
      weight[k] = op_.class_weights[static_cast<std::size_t>(k)];
    const detail::BoxSweep<D, HasSource, WithResidual> functor{
        fields_[current_].data(), fields_[1 - current_].data(), source_.data(), stride_, weight,
        1.0 / -op_.center_weight};
    return run_sweep<decltype(functor), WithResidual>(functor, norms);
  }

  template <bool HasSource, bool WithResidual>
  UpdateTimes term_sweep(ResidualSums& norms) {
    const double diag = -op_.center_weight;
    const detail::TermSweep<D, HasSource, WithResidual> functor{fields_[current_].data(),
                                                                fields_[1 - current_].data(),
                                                                source_.data(),
                                                                terms_.data(),
                                                                static_cast<int>(terms_.extent(0)),
                                                                stride_,
                                                                1.0 / diag,
                                                                op_.center_weight};
    return run_sweep<decltype(functor), WithResidual>(functor, norms);
  }

  UpdateTimes residual_sweep(ResidualSums& norms) {
    if (source_.data() != nullptr) {
      const detail::ResidualOnly<D, true> functor{
          fields_[current_].data(),           source_.data(), terms_.data(),
          static_cast<int>(terms_.extent(0)), stride_,        op_.center_weight};
      return apply_reduce_with_halo<D>(residual_plan_, halos_[current_], options_.overlap,
                                       functor, norms);
    }
    const detail::ResidualOnly<D, false> functor{
        fields_[current_].data(),           nullptr, terms_.data(),
        static_cast<int>(terms_.extent(0)), stride_, op_.center_weight};
    return apply_reduce_with_halo<D>(residual_plan_, halos_[current_], options_.overlap, functor,
                                     norms);
  }

  core::Grid<D> grid_;
  JacobiOptions options_;
  detail::JacobiOperator op_;
  field_type source_;
  field_type fields_[2];
  detail::Strides<D> stride_{};
  Kokkos::View<detail::Term*> terms_;
  // Interior split and kernel labels, made once (a sweep allocates nothing).
  UpdatePlan<D> sweep_plan_, sweep_residual_plan_, residual_plan_;
  std::vector<core::HaloExchange> halos_;  // halos_[i] exchanges fields_[i]
  int current_ = 0;
  long sweeps_done_ = 0;
};

}  // namespace isostencil::kernels
