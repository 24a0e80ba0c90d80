// User kernels on the grid: declare the stencil shape, write the update of one
// cell as a functor or lambda that reads neighbours by relative offset, and
// let the grid run it with the halo exchange (overlapped or not).
//
//   // 1. The shape: the offsets the kernel reads. The grid derives its ghost
//   //    widths and halo neighbourhood from it (here: ghosts only below, and
//   //    only the directions (-1,0) and (0,-1) are exchanged).
//   const auto shape = core::Stencil::one_sided_star(2, 1, {-1, -1});
//   core::Grid<2> grid(MPI_COMM_WORLD, {nx, ny}, {true, true}, shape);
//   auto in = grid.make_field<double>("c"), out = grid.make_field<double>("c next");
//
//   // 2. The kernel: u(dx, dy) is the input at the cell + (dx, dy); it returns
//   //    the output value of the cell. Everything is captured by value.
//   auto step = kernels::make_stencil_update(grid, in, out,
//       [=] KOKKOS_FUNCTION (const kernels::Neighbors<double, 2>& u) {
//         return u(0, 0) - cx * (u(0, 0) - u(-1, 0)) - cy * (u(0, 0) - u(0, -1));
//       });
//
//   // 3. Run: apply() exchanges the input's halo and writes the output's
//   //    interior; advance() is apply() then swap() (input <-> output).
//   for (int n = 0; n < steps; ++n) step.advance();
//   auto result = step.input();
//
// Reads stay inside the declared shape:
// - u.point(k) reads the k-th declared offset (u.offset(k, j) is its
//   component j, u.size() their number): in shape by construction, no check.
// - u(dx, dy, ...) (or u(Index<D>)) reads any offset. In checked builds each
//   such read is looked up in the declared offsets and an offset outside them
//   stops the program with Kokkos::abort("... offset (dx,dy) is outside the
//   declared stencil shape ..."). Checked builds: ISOSTENCIL_CHECK_STENCIL_READS
//   defined nonzero (CMake: -DISOSTENCIL_CHECKED_READS=ON, in this project or
//   in one that finds the installed package), or left undefined with
//   KOKKOS_ENABLE_DEBUG_BOUNDS_CHECK defined. Otherwise, whatever the build
//   type, the check is compiled out (a read is one load). The setting is part
//   of the Neighbors type (Neighbors<T, D, Checked>), so checked and unchecked
//   translation units can be linked together.
// - The shape must fit the grid: its ghost widths and the directions it reads
//   must be ones the grid exchanges (make_stencil_update throws iso::Error
//   otherwise), so a read of a declared offset never leaves the field.
//
// The kernel is called once per interior cell with the input's ghost cells
// exchanged; it must not write anything (it returns the value). Boundary
// ghosts of non-periodic dimensions are not exchanged: they hold whatever the
// caller put there, and the output starts as a copy of the input so that both
// fields carry them. u.index() gives the cell's local index (grid.to_global
// converts it) for position-dependent kernels.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/sweep.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/error.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef ISOSTENCIL_CHECK_STENCIL_READS
#if defined(KOKKOS_ENABLE_DEBUG_BOUNDS_CHECK)
#define ISOSTENCIL_CHECK_STENCIL_READS 1
#else
#define ISOSTENCIL_CHECK_STENCIL_READS 0
#endif
#endif

namespace isostencil::kernels {

namespace detail {

/// Appends `value` in decimal to `text` at `length` (device-safe, no printf).
KOKKOS_INLINE_FUNCTION void append_int(char* text, int& length, int capacity, int value) {
  char digits[12];
  int count = 0;
  long magnitude = value < 0 ? -static_cast<long>(value) : value;
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude > 0 && count < 11);
  if (value < 0 && length < capacity - 1) text[length++] = '-';
  while (count > 0 && length < capacity - 1)
    text[length++] = digits[--count];
  text[length] = '\0';
}
KOKKOS_INLINE_FUNCTION void append_text(char* text, int& length, int capacity, const char* more) {
  while (*more != '\0' && length < capacity - 1)
    text[length++] = *more++;
  text[length] = '\0';
}

/// Stops the program: a kernel read an offset outside its declared shape.
template <int D>
KOKKOS_INLINE_FUNCTION void abort_read_outside_shape(const int* offset, const Index<D>& cell) {
  constexpr int capacity = 256;
  char message[capacity];
  int length = 0;
  message[0] = '\0';
  append_text(message, length, capacity, "isostencil::kernels::Neighbors: read at offset (");
  for (int j = 0; j < D; ++j) {
    if (j > 0) append_text(message, length, capacity, ",");
    append_int(message, length, capacity, offset[j]);
  }
  append_text(message, length, capacity,
              ") is outside the declared stencil shape (cell at local index (");
  for (int j = 0; j < D; ++j) {
    if (j > 0) append_text(message, length, capacity, ",");
    append_int(message, length, capacity, cell[j]);
  }
  append_text(message, length, capacity,
              ")); declare the offset in the stencil the grid and make_stencil_update get");
  Kokkos::abort(message);
}

/// Empty when `shape` fits the grid (dimensions, ghost widths, exchanged
/// directions), else the error message starting with `where`.
std::string check_shape_fits(const char* where, const core::Stencil& shape, int dims,
                             const std::vector<int>& ghost_lo, const std::vector<int>& ghost_hi,
                             const iso::OffsetList& grid_directions);
/// "(-1,0) (0,-1)".
std::string offsets_text(const iso::OffsetList& offsets);

}  // namespace detail

/// The neighbourhood of one cell as a user kernel sees it: reads of the input
/// field at offsets relative to the cell. See the header comment for the
/// checked/unchecked behaviour of operator().
template <class T, int D, bool Checked = (ISOSTENCIL_CHECK_STENCIL_READS != 0)>
class Neighbors {
public:
  using value_type = T;
  static constexpr int dims = D;
  /// Whether operator() checks offsets against the declared shape.
  static constexpr bool checked = Checked;

  /// Made by the update for each cell: `center` points at the cell in the
  /// input; the cell's index is `row_start` + `along_row` in the last
  /// dimension. `stride` (D entries) and `row_start` must outlive the object.
  KOKKOS_FORCEINLINE_FUNCTION Neighbors(const T* center, const std::ptrdiff_t* stride,
                                        const int* shape, const std::ptrdiff_t* shape_linear,
                                        int shape_size, const Index<D>& row_start,
                                        int along_row = 0)
      : center_(center),
        stride_(stride),
        shape_(shape),
        shape_linear_(shape_linear),
        shape_size_(shape_size),
        row_start_(&row_start),
        along_row_(along_row) {}

  /// The input at the cell + (offset_0, ..., offset_{D-1}).
  template <class... Offsets>
  KOKKOS_FORCEINLINE_FUNCTION const T& operator()(const Offsets... offset) const {
    static_assert(sizeof...(Offsets) == D, "Neighbors<T, D>: give one offset per dimension");
    static_assert((std::is_integral_v<Offsets> && ...), "Neighbors<T, D>: offsets are integers");
    const int c[D] = {static_cast<int>(offset)...};
    return read(c);
  }
  /// The input at the cell + offset.
  KOKKOS_FORCEINLINE_FUNCTION const T& operator()(const Index<D>& offset) const {
    int c[D];
    for (int j = 0; j < D; ++j)
      c[j] = offset[j];
    return read(c);
  }
  /// The input at the k-th declared offset (0 <= k < size()).
  KOKKOS_FORCEINLINE_FUNCTION const T& point(int k) const {
    if constexpr (Checked) {
      if (k < 0 || k >= shape_size_)
        Kokkos::abort("isostencil::kernels::Neighbors::point: index out of range");
    }
    return center_[shape_linear_[k]];
  }
  /// Number of declared offsets.
  KOKKOS_FORCEINLINE_FUNCTION int size() const { return shape_size_; }
  /// Component `dim` of the k-th declared offset.
  KOKKOS_FORCEINLINE_FUNCTION int offset(int k, int dim) const { return shape_[k * D + dim]; }
  /// The cell's local index (ghost layers included; Grid::to_global converts).
  KOKKOS_FORCEINLINE_FUNCTION Index<D> index() const {
    Index<D> x = *row_start_;
    x[D - 1] += along_row_;
    return x;
  }

private:
  template <std::size_t... J>
  KOKKOS_FORCEINLINE_FUNCTION std::ptrdiff_t linear(const int (&c)[D],
                                                    std::index_sequence<J...>) const {
    // A fold, not a loop: with constant offsets it folds to one constant
    // per read, which keeps row loops vectorizable.
    return ((static_cast<std::ptrdiff_t>(c[J]) * stride_[J]) + ...);
  }
  KOKKOS_FORCEINLINE_FUNCTION const T& read(const int (&c)[D]) const {
    const std::ptrdiff_t at = linear(c, std::make_index_sequence<D>{});
    if constexpr (Checked) {
      bool found = false;
      for (int k = 0; k < shape_size_ && !found; ++k) {
        bool same = true;
        for (int j = 0; j < D; ++j)
          same = same && shape_[k * D + j] == c[j];
        found = same;
      }
      if (!found) detail::abort_read_outside_shape<D>(c, index());
    }
    return center_[at];
  }

  // Pointers only: a Neighbors object is made per cell and must fold away.
  const T* center_;
  const std::ptrdiff_t* stride_;
  const int* shape_;
  const std::ptrdiff_t* shape_linear_;
  int shape_size_;
  const Index<D>* row_start_;
  int along_row_;
};

struct StencilUpdateOptions {
  /// Update the inner cells while the halo exchange is in flight.
  bool overlap = true;
  core::HaloOptions halo{};
  /// Kokkos label of the update kernels.
  std::string label = "isostencil::user_kernel";
};

namespace detail {

template <class T, int D, bool Checked, class Kernel>
struct UserCell {
  Kernel kernel;
  const T* in;
  T* out;
  Strides<D> stride;
  const int* shape;
  const std::ptrdiff_t* shape_linear;
  int shape_size;

  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index<D>& x) const {
    const std::ptrdiff_t at = linear_index<D>(x, stride);
    const Neighbors<T, D, Checked> neighbors(in + at, stride.data(), shape, shape_linear,
                                             shape_size, x);
    out[at] = kernel(neighbors);
  }
  // A row through restrict parameters (see sweep.hpp and jacobi.hpp): the
  // same kernel calls, in a loop the compiler may vectorize when the kernel
  // inlines.
  static KOKKOS_FUNCTION ISOSTENCIL_ROW_NOINLINE void update_row(const UserCell& self,
                                                                 const T* KOKKOS_RESTRICT p,
                                                                 T* KOKKOS_RESTRICT q,
                                                                 const Index<D> first,
                                                                 const int length) {
    // Local copies (the kernel's captures, the strides): the compiler then
    // knows that the output stores change none of them.
    const Kernel kernel = self.kernel;
    std::ptrdiff_t s[D];
    for (int j = 0; j < D; ++j)
      s[j] = self.stride[j];
    const int* shape = self.shape;
    const std::ptrdiff_t* shape_linear = self.shape_linear;
    const int shape_size = self.shape_size;
    // Prefetch the farthest declared offset's stream and the output ahead
    // (see row_prefetch_distance), for large fields.
    std::ptrdiff_t farthest = 0;
    for (int i = 0; i < shape_size; ++i)
      farthest = shape_linear[i] > farthest ? shape_linear[i] : farthest;
    chunked_row(p, q, farthest + row_prefetch_distance,
                D > 1 && s[0] >= 2 * row_prefetch_distance, length, [&](const int k) ISOSTENCIL_INLINE_LAMBDA {
                  const Neighbors<T, D, Checked> neighbors(p + k, s, shape, shape_linear,
                                                           shape_size, first, k);
                  q[k] = kernel(neighbors);
                });
  }
  KOKKOS_FORCEINLINE_FUNCTION void row(const Index<D>& first, int length) const {
    const std::ptrdiff_t at = linear_index<D>(first, stride);
    update_row(*this, in + at, out + at, first, length);
  }
};

}  // namespace detail

/// A user kernel bound to a grid, a shape and two fields (input, output),
/// with one persistent halo exchange per field. Made by make_stencil_update.
template <int D, class View, class Kernel>
class StencilUpdate {
public:
  using value_type = typename View::non_const_value_type;
  using neighbors_type = Neighbors<value_type, D>;
  /// The space the updates run on (that of the fields and exchanges).
  using execution_space = Kokkos::DefaultExecutionSpace;
  static constexpr bool checks_reads = neighbors_type::checked;

  /// Collective over the grid's communicator. Throws iso::Error (the same on
  /// every rank) when the shape does not fit the grid or the fields are not
  /// the grid's, or input and output are the same field. `output` starts as
  /// a copy of `input` (boundary ghosts included).
  StencilUpdate(const core::Grid<D>& grid, core::Stencil shape, View input, View output,
                Kernel kernel, StencilUpdateOptions options = {})
      : grid_(grid),
        shape_(std::move(shape)),
        kernel_(std::move(kernel)),
        options_(std::move(options)) {
    static_assert(static_cast<int>(View::rank) == D, "the fields' rank differs from the grid's");
    static_assert(!std::is_const_v<typename View::value_type>,
                  "the output is written: non-const Views");
    const char* where = "isostencil::kernels::make_stencil_update";
    // The shape must fit what one update of the grid's stencil reads (its
    // reach): the substep boxes of a deep grid grow by that reach.
    const std::vector<int>& lo = grid_.reach().lo;
    const std::vector<int>& hi = grid_.reach().hi;
    std::string error = detail::check_shape_fits(
        where, shape_, D, lo, hi,
        grid_.depth() == 1 ? grid_.directions() : grid_.stencil().geometry().directions);
    if (error.empty()) error = detail::check_grid_field(grid_, where, "input", input);
    if (error.empty()) error = detail::check_grid_field(grid_, where, "output", output);
    if (error.empty() && input.data() == output.data())
      error = std::string(where) + ": input and output are the same field";
    iso::agree_on_errors(grid_.decomposition().comm(), where, error);

    fields_[0] = std::move(input);
    fields_[1] = std::move(output);
    Kokkos::deep_copy(fields_[1], fields_[0]);
    stride_ = detail::layout_right_strides<D>(fields_[0]);

    const int size = shape_.size();
    shape_offsets_ =
        Kokkos::View<int*>("isostencil::user_kernel::shape", static_cast<std::size_t>(size) * D);
    shape_linear_ = Kokkos::View<std::ptrdiff_t*>("isostencil::user_kernel::shape_linear",
                                                  static_cast<std::size_t>(size));
    auto offsets_host = Kokkos::create_mirror_view(shape_offsets_);
    auto linear_host = Kokkos::create_mirror_view(shape_linear_);
    for (int k = 0; k < size; ++k) {
      std::ptrdiff_t at = 0;
      for (int j = 0; j < D; ++j) {
        offsets_host(static_cast<std::size_t>(k) * D + j) = shape_.offsets()[k][j];
        at += static_cast<std::ptrdiff_t>(shape_.offsets()[k][j]) * stride_[j];
      }
      linear_host(static_cast<std::size_t>(k)) = at;
    }
    Kokkos::deep_copy(shape_offsets_, offsets_host);
    Kokkos::deep_copy(shape_linear_, linear_host);
    plan_ = plan_update(grid_, options_.label);

    halos_.reserve(2);
    halos_.push_back(grid_.halo_exchange(fields_[0], options_.halo));
    halos_.push_back(grid_.halo_exchange(fields_[1], options_.halo));
  }

  /// Exchanges the input's halo and writes the kernel's value into every
  /// interior cell of the output (overlap as in the options). Collective.
  UpdateTimes apply() { return apply(options_.overlap); }
  UpdateTimes apply(bool overlap) {
    return apply_with_halo<D>(space_, plan_, halos_[current_], overlap, cell_functor());
  }
  /// Swaps the roles of input and output.
  void swap() { current_ = 1 - current_; }
  /// apply() then swap(): input() holds the new state.
  UpdateTimes advance() {
    const UpdateTimes times = apply();
    swap();
    return times;
  }
  /// `steps` updates, each followed by swap(): on a grid of depth k, one
  /// exchange per block of up to k updates over the shrinking substep boxes
  /// (substeps.hpp), the last block shorter; the same input() as `steps`
  /// calls of advance(). Whatever else the kernel reads (coefficients,
  /// sources in its captures) must be valid in the ghost region then.
  UpdateTimes advance(long steps) {
    UpdateTimes total;
    int left = 0;  // updates of the block after this one
    for (long s = 0; s < steps; ++s) {
      const bool exchange = left == 0;
      if (exchange) left = static_cast<int>(std::min<long>(grid_.depth(), steps - s));
      --left;
      total += apply_substep<D>(space_, plan_, exchange ? &halos_[current_] : nullptr,
                                options_.overlap, left, cell_functor());
      swap();
    }
    return total;
  }
  /// Runs the kernel on the cells of `box` (local indices) without any
  /// exchange: the input's ghost cells must already be current. Local.
  void compute(const Box<D>& box) {
    for_each_cell<D>(space_, options_.label, box, cell_functor());
    space_.fence();
  }
  void compute_interior() { compute(plan_.split.interior); }

  const View& input() const { return fields_[current_]; }
  const View& output() const { return fields_[1 - current_]; }
  /// The exchange of the input (the next apply() runs it); each field has
  /// its own, both bound to the grid's halo pattern.
  core::HaloExchange& input_halo() { return halos_[current_]; }
  const core::HaloExchange& halo() const { return halos_[current_]; }
  /// The algorithm the exchanges run (automatic resolved).
  iso::Algorithm algorithm() const { return halo().algorithm(); }
  const core::Stencil& shape() const { return shape_; }
  const core::Grid<D>& grid() const { return grid_; }
  /// Ghost directions exchanged (the grid's, derived from its stencil).
  const iso::OffsetList& directions() const { return grid_.directions(); }
  const StencilUpdateOptions& options() const { return options_; }
  /// The execution space instance apply() and compute() launch on and fence
  /// (default: a default-made instance); not collective.
  const execution_space& space() const { return space_; }
  void set_space(const execution_space& space) { space_ = space; }

private:
  detail::UserCell<value_type, D, checks_reads, Kernel> cell_functor() const {
    return {kernel_,      fields_[current_].data(), fields_[1 - current_].data(),
            stride_,      shape_offsets_.data(),    shape_linear_.data(),
            shape_.size()};
  }

  core::Grid<D> grid_;
  core::Stencil shape_;
  Kernel kernel_;
  StencilUpdateOptions options_;
  execution_space space_{};
  View fields_[2];
  detail::Strides<D> stride_{};
  Kokkos::View<int*> shape_offsets_;
  Kokkos::View<std::ptrdiff_t*> shape_linear_;
  UpdatePlan<D> plan_;  // interior split and labels, made once
  std::vector<core::HaloExchange> halos_;  // halos_[i] exchanges fields_[i]
  int current_ = 0;
};

/// A user kernel whose shape is the grid's stencil.
template <int D, class View, class Kernel>
StencilUpdate<D, View, Kernel> make_stencil_update(const core::Grid<D>& grid, View input,
                                                   View output, Kernel kernel,
                                                   StencilUpdateOptions options = {}) {
  return StencilUpdate<D, View, Kernel>(grid, grid.stencil(), std::move(input), std::move(output),
                                        std::move(kernel), std::move(options));
}

/// A user kernel with its own shape, which must fit the grid's halo (e.g. a
/// grid built for the union of several kernels' shapes).
template <int D, class View, class Kernel>
StencilUpdate<D, View, Kernel> make_stencil_update(const core::Grid<D>& grid,
                                                   const core::Stencil& shape, View input,
                                                   View output, Kernel kernel,
                                                   StencilUpdateOptions options = {}) {
  return StencilUpdate<D, View, Kernel>(grid, shape, std::move(input), std::move(output),
                                        std::move(kernel), std::move(options));
}

}  // namespace isostencil::kernels
