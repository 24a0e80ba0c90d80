// Decomposition independence: the same Jacobi run (and a user kernel run) on
// any number of ranks gives a field bitwise identical to a serial reference
// computed on rank 0 over the whole global grid (an MPI_COMM_SELF grid), with
// overlap on and off. 2-D and 3-D, star and box, Dirichlet and periodic
// dimensions, with and without a source; one 4-D case.
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil/kernels/user_kernel.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace isostencil;

constexpr long sweeps = 7;

/// A deterministic rough value of a global index (initial guess, boundary values).
template <int D>
double rough(const std::array<long, D>& g, long salt) {
  unsigned long hash = 1469598103934665603UL ^ static_cast<unsigned long>(salt);
  for (int j = 0; j < D; ++j)
    hash = (hash ^ static_cast<unsigned long>(g[j] + 7)) * 1099511628211UL;
  return static_cast<double>(hash % 100003) / 100003.0 - 0.5;
}

/// K Jacobi sweeps on `comm`; the gathered global interior on rank 0 of comm.
template <int D>
std::vector<double> jacobi_run(MPI_Comm comm, const core::Stencil& stencil,
                               const std::array<long, D>& extent,
                               const std::array<bool, D>& periodic, bool with_source,
                               bool overlap) {
  core::Grid<D> grid(comm, extent, periodic, stencil);
  auto u = grid.template make_field<double>("u");
  iso_test::fill_cells<D>(grid, u, [](const std::array<long, D>& g) { return rough<D>(g, 1); });
  core::Field<double, D> f;
  if (with_source) {
    f = grid.template make_field<double>("f");
    iso_test::fill_cells<D>(grid, f, [](const std::array<long, D>& g) { return rough<D>(g, 2); });
  }
  kernels::JacobiOptions options;
  options.overlap = overlap;
  options.residual_every = 3;  // the fused residual path runs too
  kernels::Jacobi<D> jacobi(grid, u, f, options);
  jacobi.run(sweeps);
  return iso_test::gather_interior<D>(grid, jacobi.solution());
}

template <int D>
void check_jacobi(const core::Stencil& stencil, const std::array<long, D>& extent,
                  const std::array<bool, D>& periodic, bool with_source) {
  std::vector<double> reference;
  if (iso_test::world_rank() == 0)
    reference = jacobi_run<D>(MPI_COMM_SELF, stencil, extent, periodic, with_source, false);
  for (bool overlap : {false, true}) {
    SCOPED_TRACE(stencil.name() + (overlap ? ", overlap" : ", no overlap") +
                 (with_source ? ", source" : ", Laplace"));
    const std::vector<double> distributed =
        jacobi_run<D>(MPI_COMM_WORLD, stencil, extent, periodic, with_source, overlap);
    long mismatch = -1;
    if (iso_test::world_rank() == 0) {
      mismatch = iso_test::first_bitwise_difference(reference, distributed);
      EXPECT_FALSE(reference.empty());
    }
    MPI_Bcast(&mismatch, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    EXPECT_EQ(mismatch, -1) << "first differing global cell (row-major) " << mismatch << " on "
                            << iso_test::world_size() << " ranks";
  }
}

TEST(DecompositionIndependence, Jacobi2D) {
  check_jacobi<2>(kernels::star_laplacian(2, 0.1), {17, 13}, {true, false}, true);
  check_jacobi<2>(kernels::box_laplacian(2, 0.1), {17, 13}, {true, false}, true);
  check_jacobi<2>(kernels::star_laplacian(2, 0.1), {16, 11}, {false, false}, false);
  check_jacobi<2>(kernels::box_laplacian(2, 0.1), {16, 11}, {true, true}, false);
}

TEST(DecompositionIndependence, JacobiGeneralWeights) {
  // Anisotropic spacing: the general weighted-term kernel, not the star one.
  const core::Stencil anisotropic =
      kernels::star_laplacian(2, 1.0).with_weights({-2 - 2 * 4.0, 1, 1, 4, 4});
  check_jacobi<2>(anisotropic, {15, 12}, {false, true}, true);
  const core::Stencil radius2 = core::Stencil::star(3, 2).with_weights(
      {-7.5, -1.0 / 12, 4.0 / 3, 4.0 / 3, -1.0 / 12, -1.0 / 12, 4.0 / 3, 4.0 / 3, -1.0 / 12,
       -1.0 / 12, 4.0 / 3, 4.0 / 3, -1.0 / 12});
  check_jacobi<3>(radius2, {12, 10, 9}, {true, false, true}, false);
}

TEST(DecompositionIndependence, Jacobi3D) {
  check_jacobi<3>(kernels::star_laplacian(3, 0.1), {11, 9, 8}, {false, true, true}, true);
  check_jacobi<3>(kernels::box_laplacian(3, 0.1), {11, 9, 8}, {false, true, true}, true);
  check_jacobi<3>(kernels::box_laplacian(3, 0.1), {9, 8, 10}, {false, false, false}, false);
}

TEST(DecompositionIndependence, Jacobi4D) {
  check_jacobi<4>(kernels::box_laplacian(4, 0.2), {6, 5, 5, 4}, {true, false, true, false}, true);
  check_jacobi<4>(kernels::star_laplacian(4, 0.2), {6, 5, 5, 4}, {false, true, false, true}, false);
}

// A user kernel (2-D corner-transport upwind advection, asymmetric halo).
std::vector<double> advection_run(MPI_Comm comm, bool overlap) {
  const std::array<long, 2> extent{19, 14};
  core::Grid<2> grid(comm, extent, {true, true}, core::Stencil::upwind(2, 1, {-1, -1}));
  auto in = grid.make_field<double>("c");
  auto out = grid.make_field<double>("c next");
  iso_test::fill_cells<2>(grid, in, [](const std::array<long, 2>& g) { return rough<2>(g, 3); });
  const double cx = 0.45, cy = 0.3;
  kernels::StencilUpdateOptions options;
  options.overlap = overlap;
  auto step = kernels::make_stencil_update(
      grid, in, out,
      KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
        return (1 - cx) * (1 - cy) * u(0, 0) + cx * (1 - cy) * u(-1, 0) + (1 - cx) * cy * u(0, -1) +
               cx * cy * u(-1, -1);
      },
      options);
  for (long n = 0; n < sweeps; ++n)
    step.advance();
  return iso_test::gather_interior<2>(grid, step.input());
}

TEST(DecompositionIndependence, UserKernel) {
  std::vector<double> reference;
  if (iso_test::world_rank() == 0) reference = advection_run(MPI_COMM_SELF, false);
  for (bool overlap : {false, true}) {
    const std::vector<double> distributed = advection_run(MPI_COMM_WORLD, overlap);
    long mismatch = -1;
    if (iso_test::world_rank() == 0)
      mismatch = iso_test::first_bitwise_difference(reference, distributed);
    MPI_Bcast(&mismatch, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    EXPECT_EQ(mismatch, -1) << (overlap ? "overlap" : "no overlap");
  }
}

}  // namespace
