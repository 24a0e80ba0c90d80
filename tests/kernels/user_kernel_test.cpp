// User kernels: the halo derived from the declared shape, a user-written
// 5-point Jacobi bitwise equal to the built-in one, point(k) over the shape,
// overlap on == off, 1-D and 3-D kernels, and the errors for shapes that do
// not fit the grid.
#include "isostencil/kernels/user_kernel.hpp"
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>

namespace {

using namespace isostencil;

template <int D>
double rough(const std::array<long, D>& g) {
  unsigned long hash = 1469598103934665603UL;
  for (int j = 0; j < D; ++j)
    hash = (hash ^ static_cast<unsigned long>(g[j] + 11)) * 1099511628211UL;
  return static_cast<double>(hash % 65521) / 65521.0;
}

bool same_directions(const iso::OffsetList& list, const std::vector<std::vector<int>>& expected) {
  if (list.size() != static_cast<int>(expected.size())) return false;
  for (const auto& e : expected) {
    bool found = false;
    for (int i = 0; i < list.size() && !found; ++i)
      found = std::equal(e.begin(), e.end(), list[i]);
    if (!found) return false;
  }
  return true;
}

// The checks live in free functions, their TESTs call them: CUDA allows no
// device lambda in gtest's private TestBody().
void halo_follows_the_declared_shape() {
  core::Grid<2> donor(MPI_COMM_WORLD, {12, 10}, {true, true},
                      core::Stencil::one_sided_star(2, 1, {-1, -1}));
  EXPECT_EQ(donor.ghost_lo()[0], 1);
  EXPECT_EQ(donor.ghost_lo()[1], 1);
  EXPECT_EQ(donor.ghost_hi()[0], 0);
  EXPECT_EQ(donor.ghost_hi()[1], 0);
  EXPECT_TRUE(same_directions(donor.directions(), {{-1, 0}, {0, -1}}));
  core::Grid<2> corner(MPI_COMM_WORLD, {12, 10}, {true, true},
                       core::Stencil::upwind(2, 1, {-1, -1}));
  EXPECT_TRUE(same_directions(corner.directions(), {{-1, -1}, {-1, 0}, {0, -1}}));
  auto in = corner.make_field<double>("in"), out = corner.make_field<double>("out");
  auto step = kernels::make_stencil_update(
      corner, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) { return u(-1, -1); });
  EXPECT_TRUE(same_directions(step.directions(), {{-1, -1}, {-1, 0}, {0, -1}}));
}
TEST(UserKernel, HaloFollowsTheDeclaredShape) { halo_follows_the_declared_shape(); }

void five_point_jacobi_equals_the_built_in() {
  const double h = 0.1;
  core::Grid<2> grid(MPI_COMM_WORLD, {21, 17}, {true, false}, kernels::star_laplacian(2, h));
  auto u = grid.make_field<double>("u");
  iso_test::fill_cells<2>(grid, u, [](const std::array<long, 2>& g) { return rough<2>(g); });
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  Kokkos::deep_copy(in, u);

  kernels::JacobiOptions options;
  options.residual_every = 0;
  options.final_residual = false;
  kernels::Jacobi<2> jacobi(grid, u, {}, options);
  ASSERT_TRUE(jacobi.uses_star_kernel());
  jacobi.run(5);

  // The built-in star sums -e0, +e0, -e1, +e1 and scales by w/diag = 1/4.
  const double scale = 0.25;
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& c) {
        double sum = c(-1, 0);
        sum += c(1, 0);
        sum += c(0, -1);
        sum += c(0, 1);
        return sum * scale;
      });
  for (int n = 0; n < 5; ++n)
    step.advance();
  EXPECT_TRUE(grid.compare(jacobi.solution(), step.input(), true).ok);
}
TEST(UserKernel, FivePointJacobiEqualsTheBuiltIn) { five_point_jacobi_equals_the_built_in(); }

void point_reads_the_declared_offsets_in_order() {
  // A weighted sum over the declared shape through point(k): a generic-D way
  // to write a kernel, equal to the same sum written with explicit offsets.
  const core::Stencil shape = core::Stencil::box(3, 1);
  core::Grid<3> grid(MPI_COMM_WORLD, {9, 8, 7}, {true, true, false}, shape);
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  auto other_in = grid.make_field<double>("in 2"), other_out = grid.make_field<double>("out 2");
  iso_test::fill_cells<3>(grid, in, [](const std::array<long, 3>& g) { return rough<3>(g); });
  Kokkos::deep_copy(other_in, in);

  auto by_point = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 3>& u) {
        double sum = 0;
        for (int k = 0; k < u.size(); ++k)
          sum += (1 + u.offset(k, 0) + 2 * u.offset(k, 2)) * u.point(k);
        return sum;
      });
  auto by_offset = kernels::make_stencil_update(
      grid, other_in, other_out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 3>& u) {
        double sum = 0;
        for (int a = -1; a <= 1; ++a)  // box(3, 1) lists offsets in lexicographic order
          for (int b = -1; b <= 1; ++b)
            for (int c = -1; c <= 1; ++c)
              sum += (1 + a + 2 * c) * u(a, b, c);
        return sum;
      });
  EXPECT_EQ(by_point.shape().size(), 27);
  by_point.apply();
  by_offset.apply();
  EXPECT_TRUE(grid.compare(by_point.output(), by_offset.output(), true).ok);
}
TEST(UserKernel, PointReadsTheDeclaredOffsetsInOrder) { point_reads_the_declared_offsets_in_order(); }

void overlap_equals_no_overlap() {
  core::Grid<2> grid(MPI_COMM_WORLD, {15, 12}, {true, true}, core::Stencil::upwind(2, 1, {-1, -1}));
  auto a_in = grid.make_field<double>("a"), a_out = grid.make_field<double>("a'");
  auto b_in = grid.make_field<double>("b"), b_out = grid.make_field<double>("b'");
  iso_test::fill_cells<2>(grid, a_in, [](const std::array<long, 2>& g) { return rough<2>(g); });
  Kokkos::deep_copy(b_in, a_in);
  auto kernel = KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
    return 0.4 * u(0, 0) + 0.3 * u(-1, 0) + 0.2 * u(0, -1) + 0.1 * u(-1, -1);
  };
  kernels::StencilUpdateOptions with, without;
  with.overlap = true;
  without.overlap = false;
  auto overlapped = kernels::make_stencil_update(grid, a_in, a_out, kernel, with);
  auto plain = kernels::make_stencil_update(grid, b_in, b_out, kernel, without);
  for (int n = 0; n < 6; ++n) {
    overlapped.advance();
    plain.advance();
  }
  EXPECT_TRUE(grid.compare(overlapped.input(), plain.input(), true).ok);
}
TEST(UserKernel, OverlapEqualsNoOverlap) { overlap_equals_no_overlap(); }

void one_dimensional_kernel_shifts_a_periodic_signal() {
  // u_new(x) = u(x - 2): after n steps the signal is shifted by 2n cells.
  const long n = 30;
  const core::Stencil shape(iso::OffsetList(1, {-2}), {}, "shift by 2");
  core::Grid<1> grid(MPI_COMM_WORLD, {n}, {true}, shape);
  EXPECT_EQ(grid.ghost_lo()[0], 2);
  EXPECT_EQ(grid.ghost_hi()[0], 0);
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  iso_test::fill_cells<1>(grid, in,
                          [](const std::array<long, 1>& g) { return static_cast<double>(g[0]); });
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 1>& u) { return u(-2); });
  for (int s = 0; s < 4; ++s)
    step.advance();
  const std::vector<double> global = iso_test::gather_interior<1>(grid, step.input());
  bool shifted = true;
  for (long i = 0; i < static_cast<long>(global.size()); ++i)
    shifted = shifted &&
              global[static_cast<std::size_t>(i)] == static_cast<double>(((i - 8) % n + n) % n);
  EXPECT_TRUE(iso_test::all_ranks(shifted));
}
TEST(UserKernel, OneDimensionalKernelShiftsAPeriodicSignal) { one_dimensional_kernel_shifts_a_periodic_signal(); }

void kernel_may_see_its_position() {
  // out = global x index + 1000 * global y index, through u.index().
  core::Grid<2> grid(MPI_COMM_WORLD, {10, 9}, {false, false}, core::Stencil::star(2, 1));
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  const long x0 = grid.global_offset()[0] - grid.ghost_lo()[0];
  const long y0 = grid.global_offset()[1] - grid.ghost_lo()[1];
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
        return static_cast<double>(x0 + u.index()[0]) +
               1000.0 * static_cast<double>(y0 + u.index()[1]);
      });
  step.apply();
  const std::vector<double> global = iso_test::gather_interior<2>(grid, step.output());
  bool right = true;
  for (std::size_t i = 0; i < global.size(); ++i)
    right = right && global[i] == static_cast<double>(i / 9) + 1000.0 * static_cast<double>(i % 9);
  EXPECT_TRUE(iso_test::all_ranks(right));
}
TEST(UserKernel, KernelMaySeeItsPosition) { kernel_may_see_its_position(); }

void rejects_shapes_and_fields_that_do_not_fit() {
  core::Grid<2> donor(MPI_COMM_WORLD, {12, 10}, {true, true},
                      core::Stencil::one_sided_star(2, 1, {-1, -1}));
  auto in = donor.make_field<double>("in"), out = donor.make_field<double>("out");
  auto kernel = KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
    return u(0, 0);
  };
  // Wider than the ghost layers.
  EXPECT_THROW(kernels::make_stencil_update(donor, core::Stencil::star(2, 1), in, out, kernel),
               iso::Error);
  // Same widths, but reads the corner direction the grid does not exchange.
  try {
    kernels::make_stencil_update(donor, core::Stencil::upwind(2, 1, {-1, -1}), in, out, kernel);
    ADD_FAILURE() << "a corner read on a face-only grid was accepted";
  } catch (const iso::Error& error) {
    EXPECT_NE(std::string(error.what()).find("(-1,-1)"), std::string::npos) << error.what();
  }
  // Input == output.
  EXPECT_THROW(kernels::make_stencil_update(donor, in, in, kernel), iso::Error);
  // A field of another grid.
  core::Grid<2> other(MPI_COMM_WORLD, {12, 10}, {true, true}, core::Stencil::box(2, 1));
  auto wrong = other.make_field<double>("wrong");
  EXPECT_THROW(kernels::make_stencil_update(donor, wrong, out, kernel), iso::Error);
}
TEST(UserKernel, RejectsShapesAndFieldsThatDoNotFit) { rejects_shapes_and_fields_that_do_not_fit(); }

}  // namespace
