// The Jacobi sweep kernels: one update of every interior cell, optionally
// with the residual of the iterate it reads, from an operator split by
// analyze_operator (jacobi_operator.hpp). With diag = -w_0:
//     u_new(x) = (f(x) + Σ_{c≠0} w_c u(x+c)) / diag
// One of three kernels runs, chosen from the weights:
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
// host backends the star and box kernels run row by row (update.hpp) in
// vector loops (the star's written in vector types, sweep.hpp, the box's
// vectorized by the compiler at -O2); device backends run them cell by cell.
//
// Every kernel is a functor with operator()(Index<D>) (the update) and
// operator()(Index<D>, ResidualSums&) (the update plus the residual r = f + L u
// of the iterate read); both are written once (update_cell_at,
// update_with_residual_at) over three members of the functor: neighbor_sum(p),
// the sum its update and residual share; new_value(sum, f, k), the update from
// that sum; residual_of(p, sum), L u at the cell.
#pragma once

#include "isostencil/kernels/jacobi_operator.hpp"
#include "isostencil/kernels/jacobi_residual.hpp"
#include "isostencil/kernels/sweep.hpp"
#include "isostencil/kernels/update.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>

namespace isostencil::kernels::detail {

/// The update of one cell: out(x) = sweep.new_value(sweep.neighbor_sum(in + x)).
template <int D, class Sweep>
KOKKOS_FORCEINLINE_FUNCTION void update_cell_at(const Sweep& sweep, const Index<D>& x) {
  const std::ptrdiff_t at = linear_index<D>(x, sweep.stride);
  const double sum = sweep.neighbor_sum(sweep.in + at);
  sweep.out[at] = sweep.new_value(sum, sweep.source, at);
}

/// The update of one cell and, when `WithResidual`, the residual f + L u of
/// the iterate it reads added to `norms`.
template <int D, bool HasSource, bool WithResidual, class Sweep>
KOKKOS_FORCEINLINE_FUNCTION void update_with_residual_at(const Sweep& sweep, const Index<D>& x,
                                                         ResidualSums& norms) {
  const std::ptrdiff_t at = linear_index<D>(x, sweep.stride);
  const double* p = sweep.in + at;
  const double sum = sweep.neighbor_sum(p);
  double r = sweep.residual_of(p, sum);
  if constexpr (HasSource) r += sweep.source[at];
  sweep.out[at] = sweep.new_value(sum, sweep.source, at);
  if constexpr (WithResidual) norms.add(r);
}

/// (sum [+ f[k]]) / diag: the update of the box and general kernels.
template <bool HasSource>
KOKKOS_FORCEINLINE_FUNCTION double divided_by_diag(const double sum, const double* f,
                                                   const std::ptrdiff_t k,
                                                   const double inverse_diag) {
  if constexpr (HasSource)
    return (sum + f[k]) * inverse_diag;
  else
    return sum * inverse_diag;
}

/// initial + Σ_t w_t p[offset_t], terms in order.
KOKKOS_FORCEINLINE_FUNCTION double sum_of_terms(const Term* terms, const int num_terms,
                                                const double* p, double initial) {
  for (int t = 0; t < num_terms; ++t)
    initial += terms[t].weight * p[terms[t].offset];
  return initial;
}

/// Whether a row loop prefetches (see row_prefetch_distance): for fields
/// whose planes are large enough to need it.
template <int D>
KOKKOS_FORCEINLINE_FUNCTION bool rows_prefetch(const std::ptrdiff_t (&s)[D]) {
  return D > 1 && s[0] >= 2 * row_prefetch_distance;
}

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
  static KOKKOS_FORCEINLINE_FUNCTION double value(const double sum, const double* f,
                                                  const std::ptrdiff_t k, const double scale,
                                                  const double inverse_diag) {
    if constexpr (HasSource)
      return sum * scale + f[k] * inverse_diag;
    else
      return sum * scale;
  }
  KOKKOS_FORCEINLINE_FUNCTION double neighbor_sum(const double* p) const {
    return sum_of_neighbors(p, stride);
  }
  KOKKOS_FORCEINLINE_FUNCTION double new_value(double sum, const double* f,
                                               std::ptrdiff_t k) const {
    return value(sum, f, k, scale, inverse_diag);
  }
  KOKKOS_FORCEINLINE_FUNCTION double residual_of(const double* p, double sum) const {
    return center_weight * p[0] + neighbor_weight * sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    update_cell_at<D>(*this, x);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    update_with_residual_at<D, HasSource, WithResidual>(*this, x, norms);
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
    q[k] = value(sum_of_neighbors(p + k, s), f, k, scale, inverse_diag);
  }
#if ISOSTENCIL_VECTOR_ROWS
  /// update_cell for the cells k .. k + lanes - 1 in one vector V: per lane
  /// the same sum, in the same order, and the same value.
  template <class V>
  static KOKKOS_FORCEINLINE_FUNCTION void update_lanes(const double* p, double* q, const double* f,
                                                       const std::ptrdiff_t (&s)[D], const V& scale,
                                                       const V& inverse_diag, const int k) {
    V sum, next;
    load_lanes(sum, p + k - s[0]);
    load_lanes(next, p + k + s[0]);
    sum += next;
    for (int j = 1; j < D; ++j) {
      load_lanes(next, p + k - s[j]);
      sum += next;
      load_lanes(next, p + k + s[j]);
      sum += next;
    }
    if constexpr (HasSource) {
      load_lanes(next, f + k);
      store_lanes(q + k, V(sum * scale + next * inverse_diag));
    } else {
      store_lanes(q + k, V(sum * scale));
    }
  }
  /// A row in vectors of V: whole chunks as update_lanes, the rest as
  /// update_cell; prefetch as chunked_row.
  template <class V>
  static KOKKOS_FORCEINLINE_FUNCTION void vector_row(const double* p, double* q, const double* f,
                                                     const std::ptrdiff_t (&s)[D],
                                                     const double scale, const double inverse_diag,
                                                     const int length, const bool prefetch) {
    constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(double));
    V scales, inverse_diags;
    for (int l = 0; l < lanes; ++l) {
      scales[l] = scale;
      inverse_diags[l] = inverse_diag;
    }
    int k = 0;
    for (; k + row_chunk <= length; k += row_chunk) {
      if (prefetch) {
        ISOSTENCIL_PREFETCH_READ(p, k + s[0] + row_prefetch_distance);
        ISOSTENCIL_PREFETCH_WRITE(q, k + row_prefetch_distance);
      }
#pragma GCC unroll 8
      for (int l = 0; l < row_chunk; l += lanes)
        update_lanes<V>(p, q, f, s, scales, inverse_diags, k + l);
    }
    for (; k < length; ++k)
      update_cell(p, q, f, s, scale, inverse_diag, k);
  }
#endif
  // Rows through update_row, `run.rows` of them per call (RowRun): one call
  // per plane of a wavefront rather than one per row.
  static KOKKOS_FUNCTION ISOSTENCIL_ROW_NOINLINE void update_row(const double* KOKKOS_RESTRICT p,
                                                     double* KOKKOS_RESTRICT q,
                                                     const double* KOKKOS_RESTRICT f,
                                                     const Strides<D> stride, const double scale,
                                                     const double inverse_diag, const int length,
                                                     const bool prefetch, const RowRun run) {
    std::ptrdiff_t s[D];
    for (int j = 0; j < D; ++j)
      s[j] = stride[j];
    // The leading stream is the plane ahead (+e_0); small fields stay in cache.
    const bool ahead = prefetch && rows_prefetch<D>(s);
    for (int r = 0; r < run.rows; ++r) {
      const double* const from = p + r * run_step<D>(s);
      double* const to = q + r * run.out_step;
      const double* const source = HasSource ? f + r * run.source_step : nullptr;
#if ISOSTENCIL_VECTOR_ROWS
      vector_row<RowVector>(from, to, source, s, scale, inverse_diag, length, ahead);
#else
      chunked_row(from, to, s[0] + row_prefetch_distance, ahead, length,
                  [&](const int k) ISOSTENCIL_INLINE_LAMBDA {
                    update_cell(from, to, source, s, scale, inverse_diag, k);
                  });
#endif
    }
  }
#if ISOSTENCIL_WIDE_ROWS
  /// update_row built for AVX2 (sweep.hpp's wide rows): the same body.
  static ISOSTENCIL_TARGET_AVX2 ISOSTENCIL_ROW_NOINLINE void update_row_wide(
      const double* KOKKOS_RESTRICT p, double* KOKKOS_RESTRICT q, const double* KOKKOS_RESTRICT f,
      const Strides<D> stride, const double scale, const double inverse_diag, const int length,
      const bool prefetch, const RowRun run) {
    std::ptrdiff_t s[D];
    for (int j = 0; j < D; ++j)
      s[j] = stride[j];
    const bool ahead = prefetch && rows_prefetch<D>(s);
    for (int r = 0; r < run.rows; ++r)
      vector_row<Double4>(p + r * run_step<D>(s), q + r * run.out_step,
                          HasSource ? f + r * run.source_step : nullptr, s, scale, inverse_diag,
                          length, ahead);
  }
#endif
  static KOKKOS_FORCEINLINE_FUNCTION void any_row(const double* p, double* q, const double* f,
                                                  const Strides<D>& stride, const double scale,
                                                  const double inverse_diag, const int length,
                                                  const bool prefetch, const RowRun run = {}) {
#if ISOSTENCIL_WIDE_ROWS
    if (wide_rows) {
      update_row_wide(p, q, f, stride, scale, inverse_diag, length, prefetch, run);
      return;
    }
#endif
    update_row(p, q, f, stride, scale, inverse_diag, length, prefetch, run);
  }
  /// The cells first, first + e_{D-1}, ... (length of them), as operator().
  KOKKOS_FORCEINLINE_FUNCTION void row(const Index<D>& first, int length) const {
    const std::ptrdiff_t at = linear_index<D>(first, stride);
    any_row(in + at, out + at, HasSource ? source + at : nullptr, stride, scale, inverse_diag,
            length, true);
  }
  /// A row read from `from` (strides `s`) and written to `to`, the source at
  /// the field's offset `at`: the tiled substeps' scratch (tiles.hpp), whose
  /// rows are short and in cache (no prefetch).
  /// `prefetch`: rows streamed from a field (a wavefront's first substep).
  KOKKOS_FORCEINLINE_FUNCTION void row_between(const double* from, double* to, std::ptrdiff_t at,
                                               const Strides<D>& s, int length,
                                               bool prefetch = false) const {
    any_row(from, to, HasSource ? source + at : nullptr, s, scale, inverse_diag, length, prefetch);
  }
  /// `rows` rows as row_between, one after the other along dimension D - 2:
  /// row r reads from + r s[D-2] and writes to + r to_step.
  KOKKOS_FORCEINLINE_FUNCTION void rows_between(const double* from, double* to, std::ptrdiff_t at,
                                                const Strides<D>& s, std::ptrdiff_t to_step,
                                                int length, int rows, bool prefetch = false) const {
    any_row(from, to, HasSource ? source + at : nullptr, s, scale, inverse_diag, length, prefetch,
            RowRun{rows, to_step, run_step<D>(stride)});
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
  KOKKOS_FORCEINLINE_FUNCTION double neighbor_sum(const double* p) const {
    return sum_by_class(p, stride, weight);
  }
  KOKKOS_FORCEINLINE_FUNCTION double new_value(double sum, const double* f,
                                               std::ptrdiff_t k) const {
    return divided_by_diag<HasSource>(sum, f, k, inverse_diag);
  }
  KOKKOS_FORCEINLINE_FUNCTION double residual_of(const double* p, double sum) const {
    return weight[0] * p[0] + sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    update_cell_at<D>(*this, x);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    update_with_residual_at<D, HasSource, WithResidual>(*this, x, norms);
  }
  static KOKKOS_FORCEINLINE_FUNCTION void update_cell(const double* p, double* q, const double* f,
                                                      const std::ptrdiff_t (&s)[D],
                                                      const double (&w)[D + 1],
                                                      const double inverse_diag, const int k) {
    q[k] = divided_by_diag<HasSource>(sum_by_class(p + k, s, w), f, k, inverse_diag);
  }
  static KOKKOS_FORCEINLINE_FUNCTION void update_row(const double* KOKKOS_RESTRICT p,
                                                     double* KOKKOS_RESTRICT q,
                                                     const double* KOKKOS_RESTRICT f,
                                                     const Strides<D> stride,
                                                     const Kokkos::Array<double, D + 1> weight,
                                                     const double inverse_diag, const int length,
                                                     const bool prefetch = true) {
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
    chunked_row(p, q, lead, prefetch && rows_prefetch<D>(s), length,
                [&](const int k) ISOSTENCIL_INLINE_LAMBDA {
                  update_cell(p, q, f, s, w, inverse_diag, k);
                });
  }
  KOKKOS_FORCEINLINE_FUNCTION void row(const Index<D>& first, int length) const {
    const std::ptrdiff_t at = linear_index<D>(first, stride);
    update_row(in + at, out + at, HasSource ? source + at : nullptr, stride, weight, inverse_diag,
               length);
  }
  /// As StarSweep::row_between.
  KOKKOS_FORCEINLINE_FUNCTION void row_between(const double* from, double* to, std::ptrdiff_t at,
                                               const Strides<D>& s, int length,
                                               bool prefetch = false) const {
    update_row(from, to, HasSource ? source + at : nullptr, s, weight, inverse_diag, length, prefetch);
  }
  /// As StarSweep::rows_between (a row_between per row).
  KOKKOS_FORCEINLINE_FUNCTION void rows_between(const double* from, double* to, std::ptrdiff_t at,
                                                const Strides<D>& s, std::ptrdiff_t to_step,
                                                int length, int rows, bool prefetch = false) const {
    for (int r = 0; r < rows; ++r)
      row_between(from + r * run_step<D>(s), to + r * to_step, at + r * run_step<D>(stride), s,
                  length, prefetch);
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

  KOKKOS_FORCEINLINE_FUNCTION double neighbor_sum(const double* p) const {
    return sum_of_terms(terms, num_terms, p, 0.0);
  }
  KOKKOS_FORCEINLINE_FUNCTION double new_value(double sum, const double* f,
                                               std::ptrdiff_t k) const {
    return divided_by_diag<HasSource>(sum, f, k, inverse_diag);
  }
  KOKKOS_FORCEINLINE_FUNCTION double residual_of(const double* p, double sum) const {
    return center_weight * p[0] + sum;
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    update_cell_at<D>(*this, x);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x, ResidualSums& norms) const {
    update_with_residual_at<D, HasSource, WithResidual>(*this, x, norms);
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
    double r = center_weight * p[0] + sum_of_terms(terms, num_terms, p, 0.0);
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
    out[at] = sum_of_terms(terms, num_terms, p, center_weight * p[0]);
  }
};

}  // namespace isostencil::kernels::detail
