// Field storage: a rank-D Kokkos::View in LayoutRight (row-major, the layout
// iso::ArrayLayout describes) holding the interior and its ghost layers, and
// the MPI datatype of each supported element type.
#pragma once

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace isostencil::core {

namespace detail {
template <class T, int D>
struct add_pointers {
  using type = typename add_pointers<T, D - 1>::type*;
};
template <class T>
struct add_pointers<T, 0> {
  using type = T;
};
}  // namespace detail

/// Field<double, 3> is Kokkos::View<double***, Kokkos::LayoutRight>: extent j
/// is ghost_lo[j] + interior[j] + ghost_hi[j]; local index ghost_lo[j] is the
/// first interior cell.
template <class T, int D, class... Properties>
using Field =
    Kokkos::View<typename detail::add_pointers<T, D>::type, Kokkos::LayoutRight, Properties...>;

/// The MPI datatype of an element type. Specialize it for further types; the
/// type must be contiguous (lower bound 0, extent == size).
template <class T>
struct mpi_datatype;  // no definition: an unsupported element type fails to compile here

template <>
struct mpi_datatype<double> {
  static MPI_Datatype get() { return MPI_DOUBLE; }
};
template <>
struct mpi_datatype<float> {
  static MPI_Datatype get() { return MPI_FLOAT; }
};
template <>
struct mpi_datatype<int> {
  static MPI_Datatype get() { return MPI_INT; }
};
template <>
struct mpi_datatype<std::int64_t> {
  static MPI_Datatype get() { return MPI_INT64_T; }
};
template <>
struct mpi_datatype<std::uint8_t> {
  static MPI_Datatype get() { return MPI_UINT8_T; }
};
template <>
struct mpi_datatype<char> {
  static MPI_Datatype get() { return MPI_CHAR; }
};

/// True when mpi_datatype<T> is specialized.
template <class T, class = void>
struct has_mpi_datatype : std::false_type {};
template <class T>
struct has_mpi_datatype<T, std::void_t<decltype(mpi_datatype<T>::get())>> : std::true_type {};

}  // namespace isostencil::core
