// The overlapped update: the inner/shell split covers the interior exactly
// once, and an update with overlap equals one without, at every rank count.
#include "isostencil/kernels/update.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace isostencil;

template <int D>
void check_split(const core::Grid<D>& grid) {
  const auto split = kernels::split_interior(grid);
  std::vector<kernels::Box<D>> boxes = split.shell;
  boxes.push_back(split.inner);
  // Every interior cell is covered exactly once: mark, then count marks.
  core::Field<int, D> marks = grid.template make_field<int>("marks");
  for (const auto& box : boxes)
    kernels::for_each_cell<D>(
        "mark", box, KOKKOS_LAMBDA(const kernels::Index<D>& x) {
          int* cell = &marks.access(x[0], D > 1 ? x[1] : 0, D > 2 ? x[2] : 0, D > 3 ? x[3] : 0);
          Kokkos::atomic_add(cell, 1);
        });
  long wrong = 0;
  kernels::reduce_cells<D>(
      "check", split.interior,
      KOKKOS_LAMBDA(const kernels::Index<D>& x, long& bad) {
        bad += marks.access(x[0], D > 1 ? x[1] : 0, D > 2 ? x[2] : 0, D > 3 ? x[3] : 0) != 1;
      },
      wrong);
  long covered = split.inner.cells();
  for (const auto& box : split.shell)
    covered += box.cells();
  EXPECT_TRUE(iso_test::all_ranks(wrong == 0 && covered == split.interior.cells()));
  // The inner box reads no ghost cell.
  bool inner_ok = true;
  if (!split.inner.empty())
    for (int j = 0; j < D; ++j)
      inner_ok = inner_ok &&
                 split.inner.begin[j] - grid.ghost_lo()[j] >= grid.interior_range(j).first &&
                 split.inner.end[j] - 1 + grid.ghost_hi()[j] < grid.interior_range(j).second;
  EXPECT_TRUE(iso_test::all_ranks(inner_ok));
}

TEST(Update, SplitCoversInteriorOnce) {
  check_split(core::Grid<2>(MPI_COMM_WORLD, {13, 9}, {true, false}, core::Stencil::box(2, 1)));
  check_split(
      core::Grid<3>(MPI_COMM_WORLD, {12, 10, 9}, {true, true, true}, core::Stencil::star(3, 2)));
  check_split(core::Grid<1>(MPI_COMM_WORLD, {40}, {false}, core::Stencil::star(1, 3)));
  check_split(core::Grid<4>(MPI_COMM_WORLD, {6, 6, 5, 4}, {true, true, true, true},
                            core::Stencil::box(4, 1)));
}

// The checks live in free functions, their TESTs call them: CUDA allows no
// device lambda in gtest's private TestBody().
void overlap_equals_no_overlap() {
  core::Grid<3> grid(MPI_COMM_WORLD, {11, 10, 9}, {true, false, true}, core::Stencil::box(3, 1));
  auto u = grid.make_field<double>("u");
  auto with = grid.make_field<double>("with");
  auto without = grid.make_field<double>("without");
  const auto interior = kernels::split_interior(grid).interior;
  // Kokkos::Array, not std::array: indexable in device code on every backend.
  Kokkos::Array<long, 3> offset;
  for (int j = 0; j < 3; ++j)
    offset[j] = grid.global_offset()[j];
  kernels::for_each_cell<3>(
      "fill", interior, KOKKOS_LAMBDA(const kernels::Index<3>& x) {
        const long g =
            (offset[0] + x[0]) * 1000003 + (offset[1] + x[1]) * 1009 + (offset[2] + x[2]);
        u(x[0], x[1], x[2]) = static_cast<double>(g % 977);
      });
  auto halo = grid.halo_exchange(u);
  for (bool overlap : {true, false}) {
    auto out = overlap ? with : without;
    // min_overlap_cells 0: the overlapped path whatever the local size.
    kernels::apply_with_halo<3>(
        kernels::plan_update(grid, "box sum", 0), halo, overlap,
        KOKKOS_LAMBDA(const kernels::Index<3>& x) {
          double sum = 0;
          for (int a = -1; a <= 1; ++a)
            for (int b = -1; b <= 1; ++b)
              for (int c = -1; c <= 1; ++c)
                sum += u(x[0] + a, x[1] + b, x[2] + c);
          out(x[0], x[1], x[2]) = sum;
        });
  }
  EXPECT_TRUE(grid.compare(with, without, true).ok);
}
TEST(Update, OverlapEqualsNoOverlap) { overlap_equals_no_overlap(); }

// Every interior cell is updated exactly once, ghosts never, with overlap on
// and off: the overlapped update runs the inner box in slabs, tests the
// exchange between them and runs the planes left whole once it completes.
// Counted with atomics against a field of zeros (an independent check: a
// cell run twice or skipped shows).
template <int D>
void check_each_cell_once(const core::Grid<D>& grid) {
  core::Field<int, D> marks = grid.template make_field<int>("marks");
  auto exchanged = grid.template make_field<double>("exchanged");
  auto halo = grid.halo_exchange(exchanged);
  for (bool overlap : {false, true}) {
    Kokkos::deep_copy(marks, 0);
    kernels::apply_with_halo<D>(
        kernels::plan_update(grid, "count", 0), halo, overlap,
        KOKKOS_LAMBDA(const kernels::Index<D>& x) {
          int* cell = &marks.access(x[0], D > 1 ? x[1] : 0, D > 2 ? x[2] : 0, D > 3 ? x[3] : 0);
          Kokkos::atomic_add(cell, 1);
        });
    Kokkos::fence();
    // The exchange fills another field's ghosts: a ghost of `marks` run by
    // the update shows as nonzero.
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), marks);
    const auto interior = kernels::split_interior(grid).interior;
    long wrong = 0, counted = 0;
    const auto extent = grid.field_extent();
    for (std::size_t linear = 0; linear < host.span(); ++linear) {
      std::size_t rest = linear;
      bool inside = true;
      for (int j = D - 1; j >= 0; --j) {
        const int at = static_cast<int>(rest % static_cast<std::size_t>(extent[j]));
        rest /= static_cast<std::size_t>(extent[j]);
        inside = inside && at >= interior.begin[j] && at < interior.end[j];
      }
      const int mark = host.data()[linear];
      wrong += mark != (inside ? 1 : 0);
      counted += mark;
    }
    EXPECT_TRUE(iso_test::all_ranks(wrong == 0 && counted == interior.cells()))
        << "overlap " << overlap << ": " << wrong << " cells wrong";
  }
}

// A reduction over the interior comes out bit-identical with overlap on and
// off and however early or late the exchange completes: its cells are summed
// in one fixed cut of the interior. The values span 28 orders of magnitude,
// so any other grouping of the sum rounds differently.
template <int D>
void check_reduction_repeats(const core::Grid<D>& grid) {
  auto u = grid.template make_field<double>("u");
  const auto interior = kernels::split_interior(grid).interior;
  Kokkos::Array<long, 4> offset{};
  for (int j = 0; j < D; ++j)
    offset[j] = grid.global_offset()[j];
  kernels::for_each_cell<D>(
      "fill", interior, KOKKOS_LAMBDA(const kernels::Index<D>& x) {
        long g = 0;
        for (int j = 0; j < D; ++j)
          g = g * 1009 + offset[j] + x[j];
        double& cell = u.access(x[0], D > 1 ? x[1] : 0, D > 2 ? x[2] : 0, D > 3 ? x[3] : 0);
        cell = (g % 7 == 0   ? 1e14
                : g % 7 == 1 ? -1e14
                             : 1.0) *
               (1 + 1e-14 * static_cast<double>(g % 977));
      });
  auto halo = grid.halo_exchange(u);
  const auto plan = kernels::plan_update(grid, "sum", 0);
  std::vector<double> sums;
  for (int repeat = 0; repeat < 20; ++repeat)
    for (bool overlap : {false, true}) {
      double sum = 0;
      kernels::apply_reduce_with_halo<D>(
          plan, halo, overlap,
          KOKKOS_LAMBDA(const kernels::Index<D>& x, double& s) {
            s += u.access(x[0], D > 1 ? x[1] : 0, D > 2 ? x[2] : 0, D > 3 ? x[3] : 0);
          },
          sum);
      sums.push_back(sum);
    }
  long differ = 0;
  for (double sum : sums)
    differ += sum != sums.front();
  EXPECT_TRUE(iso_test::all_ranks(differ == 0))
      << differ << " of " << sums.size() << " sums differ";
}

// Below overlap_min_cells (per rank) a plan refuses overlap; a caller may
// lower the limit.
TEST(Update, SmallInteriorsDoNotOverlap) {
  const long size = iso_test::world_size();
  core::Grid<3> small(MPI_COMM_WORLD, {6 * size, 6, 6}, {true, true, true},
                      core::Stencil::star(3, 1));
  EXPECT_LT(kernels::split_interior(small).interior.cells(), kernels::overlap_min_cells);
  EXPECT_FALSE(kernels::plan_update(small, "small").overlap_pays);
  EXPECT_TRUE(kernels::plan_update(small, "small", 0).overlap_pays);
  core::Grid<3> big(MPI_COMM_WORLD, {16 * size, 16, 16}, {true, true, true},
                    core::Stencil::star(3, 1));
  EXPECT_GE(kernels::split_interior(big).interior.cells(), kernels::overlap_min_cells);
  EXPECT_TRUE(kernels::plan_update(big, "big").overlap_pays);
}

TEST(Update, ReductionRepeatsBitForBit) {
  check_reduction_repeats(
      core::Grid<3>(MPI_COMM_WORLD, {80, 10, 9}, {true, false, true}, core::Stencil::star(3, 2)));
  check_reduction_repeats(
      core::Grid<2>(MPI_COMM_WORLD, {90, 40}, {false, true}, core::Stencil::box(2, 1)));
  check_reduction_repeats(core::Grid<4>(MPI_COMM_WORLD, {40, 6, 5, 4}, {true, true, true, true},
                                        core::Stencil::box(4, 1)));
}

TEST(Update, EveryCellOnceWithAndWithoutOverlap) {
  // Deep enough in dimension 0 that the inner box runs in several slabs.
  check_each_cell_once(
      core::Grid<3>(MPI_COMM_WORLD, {80, 10, 9}, {true, false, true}, core::Stencil::star(3, 2)));
  check_each_cell_once(
      core::Grid<3>(MPI_COMM_WORLD, {70, 12, 11}, {true, true, true}, core::Stencil::box(3, 1)));
  check_each_cell_once(
      core::Grid<2>(MPI_COMM_WORLD, {90, 7}, {false, true}, core::Stencil::box(2, 1)));
  check_each_cell_once(core::Grid<1>(MPI_COMM_WORLD, {200}, {true}, core::Stencil::star(1, 2)));
  check_each_cell_once(core::Grid<4>(MPI_COMM_WORLD, {40, 6, 5, 4}, {true, true, true, true},
                                     core::Stencil::box(4, 1)));
  // Thin: no inner box at all on several ranks.
  check_each_cell_once(
      core::Grid<2>(MPI_COMM_WORLD, {9, 9}, {true, true}, core::Stencil::box(2, 2)));
}

}  // namespace
