// Helpers for kernels that update a whole row at a time (row(Index<D> first,
// int length), see update.hpp's cell loops): field strides and linear
// indices, the chunk and prefetch settings of vectorized row loops, and the
// field checks the kernels share.
//
// A row() is written as one loop over restrict pointers in fixed-length
// chunks: GCC's -O2 cost model vectorizes only loops that need no alias
// checks and no scalar epilogue; no -O3 or -march flag is needed.
#pragma once

#include "isostencil/kernels/update.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace isostencil::kernels {

namespace detail {

/// For row() helpers whose restrict parameters must keep their meaning: GCC
/// (12) drops it for pointers that pass through a struct (e.g. a Neighbors
/// object) once the function is inlined into its caller, and then cannot
/// vectorize the row. One call per row costs nothing measurable.
#if defined(__GNUC__) || defined(__clang__)
#define ISOSTENCIL_ROW_NOINLINE __attribute__((noinline))
#else
#define ISOSTENCIL_ROW_NOINLINE
#endif

/// Wide rows. Without -march the host build targets SSE2: 2 doubles per
/// instruction. On x86-64 hosts whose CPU has AVX2, row kernels that have a
/// copy built for it (ISOSTENCIL_TARGET_AVX2, chosen at run time by
/// `wide_rows`) do 4: the same additions and multiplications per cell in the
/// same order ("avx2" alone enables no FMA contraction), so the same bits.
/// Off in device compilers' builds (CUDA, HIP, SYCL).
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(__AVX2__) && \
    !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#define ISOSTENCIL_WIDE_ROWS 1
#define ISOSTENCIL_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define ISOSTENCIL_WIDE_ROWS 0
#endif

inline bool cpu_has_avx2() {
#if ISOSTENCIL_WIDE_ROWS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}
/// Whether row kernels run their AVX2 copy (default: where the CPU has it);
/// benchmarks switch it off to compare.
inline bool wide_rows = cpu_has_avx2();

/// Cells per chunk of a row's inner loop in row() implementations: a fixed
/// trip count that GCC's -O2 ("very cheap") vectorization model accepts, and
/// one 64-byte cache line of doubles (one prefetch per line and stream).
inline constexpr int row_chunk = 8;

/// Software prefetch in row() loops, host compilers only (a no-op in device
/// passes and elsewhere). A sweep over a large field reads its leading
/// stream (the plane ahead) and writes its output from memory; with the
/// hardware prefetchers alone the vectorized 7-point sweep stayed at ~45% of
/// the copy bandwidth on the project's machines, prefetching those two
/// streams this far ahead raised it to ~65% (one rank, 256^3; blocking the
/// planes, non-temporal stores and prefetching the other streams were
/// slower). Only used for fields large enough to need it. A prefetch never faults; near the end of
/// the field it may name an address past it, so the address is formed as an
/// integer (ISOSTENCIL_PREFETCH_*(pointer, elements ahead)).
inline constexpr int row_prefetch_distance = 384;  // elements (3 KB of doubles)
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define ISOSTENCIL_PREFETCH_AT(pointer, ahead)                              \
  reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(pointer) + \
                                sizeof(*(pointer)) * (ahead))
#define ISOSTENCIL_PREFETCH_READ(pointer, ahead) \
  __builtin_prefetch(ISOSTENCIL_PREFETCH_AT(pointer, ahead), 0, 3)
#define ISOSTENCIL_PREFETCH_WRITE(pointer, ahead) \
  __builtin_prefetch(ISOSTENCIL_PREFETCH_AT(pointer, ahead), 1, 3)
#else
#define ISOSTENCIL_PREFETCH_READ(pointer, ahead) ((void)0)
#define ISOSTENCIL_PREFETCH_WRITE(pointer, ahead) ((void)0)
#endif

/// Rows written in GCC/Clang vector types (Double2, Double4: 2 or 4 doubles,
/// unaligned) instead of left to the vectorizer: GCC 12's chunk loop
/// recomputes every stream's address per chunk, spills them and does not
/// unroll its two AVX2 iterations (the 7-point row in L1: 1.6 cycles per
/// cell, 1.4 written out; docs/results/depth). The arithmetic is per lane,
/// in the scalar order, so the bits are the same. Host compilers only.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define ISOSTENCIL_VECTOR_ROWS 1
typedef double Double2 __attribute__((vector_size(16), aligned(8)));
typedef double Double4 __attribute__((vector_size(32), aligned(8)));
/// The rows' vector in builds for the target's own ISA: 4 lanes where it
/// has AVX (a -march build, which has no wide copy), else 2 (SSE2).
#if defined(__AVX__)
typedef Double4 RowVector;
#else
typedef Double2 RowVector;
#endif
/// v = p[0 .. lanes-1] and p[0 .. lanes-1] = v, at any alignment (passed by
/// reference: by value, a 32-byte vector's ABI depends on AVX).
template <class V>
KOKKOS_FORCEINLINE_FUNCTION void load_lanes(V& v, const double* p) {
  __builtin_memcpy(&v, p, sizeof(V));
}
template <class V>
KOKKOS_FORCEINLINE_FUNCTION void store_lanes(double* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof(V));
}
#else
#define ISOSTENCIL_VECTOR_ROWS 0
#endif

/// For the lambdas given to chunked_row: a large cell body (the 27-point
/// box) is otherwise left as a call, and the row no longer vectorizes.
#if defined(__GNUC__) || defined(__clang__)
#define ISOSTENCIL_INLINE_LAMBDA __attribute__((always_inline))
#else
#define ISOSTENCIL_INLINE_LAMBDA
#endif

/// The loop of a row() implementation: cell(k) for k = 0 .. length-1 in
/// chunks of row_chunk cells, with one prefetch per chunk and stream when
/// `prefetch`: the leading read stream `lead` elements ahead of `read`, the
/// output row_prefetch_distance ahead of `write`. `cell` is a lambda over
/// the row function's own restrict parameters, captured by reference.
template <class In, class Out, class Cell>
KOKKOS_FORCEINLINE_FUNCTION void chunked_row(const In* read, const Out* write,
                                             const std::ptrdiff_t lead, const bool prefetch,
                                             const int length, const Cell& cell) {
  int k = 0;
  for (; k + row_chunk <= length; k += row_chunk) {
    if (prefetch) {
      ISOSTENCIL_PREFETCH_READ(read, k + lead);
      ISOSTENCIL_PREFETCH_WRITE(write, k + row_prefetch_distance);
    }
    for (int l = 0; l < row_chunk; ++l)
      cell(k + l);
  }
  for (; k < length; ++k)
    cell(k);
}

/// Rows a row kernel runs in one call, one after the other along dimension
/// D - 2 (run_step: the input's stride there): the output and the source
/// advance by their own steps.
struct RowRun {
  int rows = 1;
  std::ptrdiff_t out_step = 0;
  std::ptrdiff_t source_step = 0;
};
template <int D, class S>
KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t run_step(const S& s) {
  return s[D >= 2 ? D - 2 : 0];
}

/// Element strides of a field (LayoutRight: the last index is contiguous).
template <int D>
using Strides = Kokkos::Array<std::ptrdiff_t, D>;

template <int D>
KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t linear_index(const Index<D>& x,
                                                        const Strides<D>& stride) {
  std::ptrdiff_t at = x[D - 1];
  for (int j = 0; j + 1 < D; ++j)
    at += static_cast<std::ptrdiff_t>(x[j]) * stride[j];
  return at;
}

/// Strides of a contiguous LayoutRight rank-D view.
template <int D, class View>
Strides<D> layout_right_strides(const View& view) {
  Strides<D> stride;
  stride[D - 1] = 1;
  for (int j = D - 2; j >= 0; --j)
    stride[j] = stride[j + 1] * static_cast<std::ptrdiff_t>(view.extent(j + 1));
  return stride;
}

/// Empty when `field` has the grid's field extents and is contiguous, else
/// the error message (starting with `where`).
template <int D, class View>
std::string check_grid_field(const core::Grid<D>& grid, const char* where, const char* what,
                             const View& field) {
  static_assert(static_cast<int>(View::rank) == D, "the field's rank differs from the grid's");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "fields must be LayoutRight, as Grid::make_field gives them");
  const std::string which = std::string(where) + ": field " + what + " (\"" + field.label() + "\")";
  if (field.data() == nullptr || !field.span_is_contiguous())
    return which + " is not allocated or not contiguous";
  for (int j = 0; j < D; ++j)
    if (field.extent(j) != static_cast<std::size_t>(grid.field_extent()[j]))
      return which + " has extent " + std::to_string(field.extent(j)) + " in dimension " +
             std::to_string(j) + ", the grid's fields have " +
             std::to_string(grid.field_extent()[j]) + "; make it with Grid::make_field";
  return {};
}

}  // namespace detail

/// Same as for_each_cell (update.hpp), under its earlier name.
template <int D, class Functor, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
void sweep_cells(const std::string& label, const Box<D>& box, const Functor& functor) {
  for_each_cell<D, Functor, ExecutionSpace>(label, box, functor);
}

}  // namespace isostencil::kernels
