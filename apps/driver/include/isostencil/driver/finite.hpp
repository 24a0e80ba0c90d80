// Non-finite values (NaN, +-infinity) never pass unnoticed: a model's
// first_non_finite() finds the first one of its fields, in global row-major
// order, with a device reduction over each rank's interior and one
// MPI_Allreduce, so every rank count reports the same cell. drive() calls
// check_finite() every run.check_finite_every steps (docs/reliability.md).
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/kernels/update.hpp"

#include "iso/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::driver {

namespace detail {

/// The smallest global index seen, plus one (0: none yet, the identity of +=).
struct FirstIndex {
  std::uint64_t plus_one = 0;
  KOKKOS_INLINE_FUNCTION void take(std::uint64_t candidate) {
    if (candidate != 0 && (plus_one == 0 || candidate < plus_one)) plus_one = candidate;
  }
  KOKKOS_INLINE_FUNCTION FirstIndex& operator+=(const FirstIndex& other) {
    take(other.plus_one);
    return *this;
  }
  // Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile FirstIndex& other) volatile {
    const std::uint64_t candidate = other.plus_one;
    if (candidate != 0 && (plus_one == 0 || candidate < plus_one)) plus_one = candidate;
  }
};

template <int D, class T>
struct FindNonFinite {
  const T* data;
  Kokkos::Array<std::uint64_t, D> field_extent, global_extent;
  Kokkos::Array<std::int64_t, D> to_global;  ///< global index = local index + to_global

  KOKKOS_INLINE_FUNCTION void operator()(const kernels::Index<D>& x, FirstIndex& first) const {
    std::uint64_t offset = 0, global = 0;
    for (int j = 0; j < D; ++j) {
      offset = offset * field_extent[j] + static_cast<std::uint64_t>(x[j]);
      global = global * global_extent[j] + static_cast<std::uint64_t>(x[j] + to_global[j]);
    }
    const double v = static_cast<double>(data[offset]);
    // v - v is 0 for every finite v, NaN for NaN and infinities.
    if (!(v - v == 0.0)) first.take(global + 1);
  }
};

}  // namespace detail

/// Collective: "" when every interior value of `field` is finite, else
/// "field u: nan at global index (3, 7)" for the first non-finite value in
/// global row-major order (the same text on every rank, for any
/// decomposition). The field is a LayoutRight View of the grid's field
/// extent in the default execution space's memory.
template <int D, class View>
std::string first_non_finite(const std::string& name, const core::Grid<D>& grid, const View& field) {
  using T = typename View::non_const_value_type;
  if constexpr (!std::is_floating_point_v<T>) {
    return "";  // integer cells are always finite
  } else {
    kernels::Box<D> interior;
    detail::FindNonFinite<D, T> find{field.data(), {}, {}, {}};
    for (int j = 0; j < D; ++j) {
      interior.begin[j] = grid.ghost_lo()[j];
      interior.end[j] = grid.ghost_lo()[j] + grid.interior_extent()[j];
      find.field_extent[j] = static_cast<std::uint64_t>(grid.field_extent()[j]);
      find.global_extent[j] = static_cast<std::uint64_t>(grid.global_extent()[j]);
      find.to_global[j] = static_cast<std::int64_t>(grid.global_offset()[j]) - grid.ghost_lo()[j];
    }
    Kokkos::fence();  // whatever instance wrote the field
    detail::FirstIndex first;
    kernels::reduce_cells<D>("isostencil:first_non_finite", interior, find, first);
    constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t mine = first.plus_one == 0 ? none : first.plus_one - 1;
    std::uint64_t index = mine;
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &index, 1, MPI_UINT64_T, MPI_MIN, grid.comm()));
    if (index == none) return "";
    std::vector<long> global(static_cast<std::size_t>(D));
    std::uint64_t rest = index;
    for (int j = D - 1; j >= 0; --j) {
      global[static_cast<std::size_t>(j)] =
          static_cast<long>(rest % static_cast<std::uint64_t>(grid.global_extent()[j]));
      rest /= static_cast<std::uint64_t>(grid.global_extent()[j]);
    }
    // The one rank that holds the cell adds its value to the others' zeros
    // (NaN and infinities survive the sum).
    double value = 0.0;
    if (mine == index) {
      std::size_t offset = 0;
      for (int j = 0; j < D; ++j)
        offset = offset * static_cast<std::size_t>(grid.field_extent()[j]) +
                 static_cast<std::size_t>(global[static_cast<std::size_t>(j)] -
                                          grid.global_offset()[j] + grid.ghost_lo()[j]);
      T cell{};
      Kokkos::deep_copy(cell, Kokkos::View<const T, typename View::memory_space,
                                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(field.data() + offset));
      value = static_cast<double>(cell);
    }
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, grid.comm()));
    const std::string text = value != value ? "nan" : value > 0 ? "inf" : "-inf";
    return "field " + name + ": " + text + " at global index (" +
           fmt::format("{}", fmt::join(global, ", ")) + ")";
  }
}

namespace detail {
template <class Model, class = void>
struct has_first_non_finite : std::false_type {};
template <class Model>
struct has_first_non_finite<Model, std::void_t<decltype(std::declval<Model&>().first_non_finite())>>
    : std::true_type {};
}  // namespace detail

/// Collective: at a step where the finite check is due (every
/// run.check_finite_every steps, and at `always` steps: the first and the
/// last), "" when every value of the model's fields is finite, else
/// "step 40: field u: nan at global index (3, 7)". Models without
/// first_non_finite() (integer fields) always pass.
template <class Model>
std::string check_finite(Model& model, const deck::Deck& deck, long step, bool always) {
  if constexpr (detail::has_first_non_finite<Model>::value) {
    const long every = deck.run.check_finite_every;
    if (every <= 0 || (!always && step % every != 0)) return "";
    const std::string found = model.first_non_finite();
    return found.empty() ? found : "step " + std::to_string(step) + ": " + found;
  } else {
    (void)model, (void)deck, (void)step, (void)always;
    return "";
  }
}

}  // namespace isostencil::driver
