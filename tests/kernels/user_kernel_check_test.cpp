// Reads outside the declared shape are caught: this translation unit is
// compiled with ISOSTENCIL_CHECK_STENCIL_READS=1 (see CMakeLists.txt), as a
// debug build would be, and a kernel reading an undeclared offset must stop
// the program with a message naming the offset (gtest death tests: the
// kernel runs in a forked child; only local work runs there, no MPI).
#include "isostencil/kernels/user_kernel.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>

namespace {

using namespace isostencil;

static_assert(kernels::Neighbors<double, 2>::checked,
              "this test needs ISOSTENCIL_CHECK_STENCIL_READS=1");

class UserKernelCheck : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "fast"); }
};

// The checks live in free functions, their TESTs call them: CUDA allows no
// device lambda in gtest's private TestBody().
void read_outside_the_shape_aborts() {
  // Upwind shape {(0,0), (-1,0), (0,-1)}; the kernel also reads (1,0).
  core::Grid<2> grid(MPI_COMM_WORLD, {12, 10}, {true, true},
                     core::Stencil::one_sided_star(2, 1, {-1, -1}));
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
        return u(0, 0) + u(-1, 0) + u(1, 0);
      });
  static_assert(decltype(step)::checks_reads);
  step.input_halo().run();  // collective part in the parent; the child only computes
  EXPECT_DEATH(step.compute_interior(), "offset \\(1,0\\) is outside the declared stencil shape");
}
TEST_F(UserKernelCheck, ReadOutsideTheShapeAborts) { read_outside_the_shape_aborts(); }

void read_outside_the_shape_aborts_in3_d() {
  core::Grid<3> grid(MPI_COMM_WORLD, {8, 6, 6}, {true, true, true}, core::Stencil::star(3, 1));
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 3>& u) {
        return u(0, 0, -1) + u(1, 1, 0);  // (1,1,0) is an edge, not in the star
      });
  EXPECT_DEATH(step.compute_interior(), "offset \\(1,1,0\\) is outside");
}
TEST_F(UserKernelCheck, ReadOutsideTheShapeAbortsIn3D) { read_outside_the_shape_aborts_in3_d(); }

void declared_reads_pass_the_check() {
  core::Grid<2> grid(MPI_COMM_WORLD, {12, 10}, {true, true},
                     core::Stencil::one_sided_star(2, 1, {-1, -1}));
  auto in = grid.make_field<double>("in"), out = grid.make_field<double>("out");
  Kokkos::deep_copy(in, 1.0);
  auto step = kernels::make_stencil_update(
      grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, 2>& u) {
        double sum = 0;
        for (int k = 0; k < u.size(); ++k)
          sum += u.point(k);
        return sum + u(0, 0) + u(-1, 0) + u(0, -1);
      });
  step.apply();
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), step.output());
  bool all_six = true;
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j)
      all_six = all_six && host(i, j) == 6.0;
  EXPECT_TRUE(iso_test::all_ranks(all_six));
}
TEST_F(UserKernelCheck, DeclaredReadsPassTheCheck) { declared_reads_pass_the_check(); }

}  // namespace
