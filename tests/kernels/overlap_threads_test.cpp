// Thread safety of the overlapped update: the halo exchange is driven from
// the host thread only, while the kernel runs on the execution space's
// threads (2 in the OpenMP build, OMP_NUM_THREADS=2 from CMake) on the inner
// box between start() and wait(). The fields and the fused reductions such
// an update gives must equal, bit for bit, those of the non-overlapped path,
// of Kokkos::Serial (one thread) and, where Kokkos 3 can make one, of a
// 1-thread OpenMP partition of the same process; for a user-style kernel and
// for the Jacobi solver, at every rank count ctest runs.
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil/kernels/update.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace isostencil;

constexpr int steps = 6;
const std::array<long, 3> extent{44, 38, 36};
const std::array<bool, 3> periodic{true, false, true};

double rough(const std::array<long, 3>& g) {
  unsigned long hash = 1469598103934665603UL;
  for (int j = 0; j < 3; ++j)
    hash = (hash ^ static_cast<unsigned long>(g[j] + 11)) * 1099511628211UL;
  const double v = static_cast<double>(hash % 100003) / 100003.0 - 0.5;
  // Magnitudes far apart, so a reduction grouped otherwise rounds otherwise.
  return hash % 3 == 0 ? v * 1e12 : v;
}

/// A 27-point update with uneven weights that also reduces its new values.
struct BoxUpdate {
  core::Field<const double, 3> in;
  core::Field<double, 3> out;
  KOKKOS_INLINE_FUNCTION double value(const kernels::Index<3>& x) const {
    double sum = 0;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c)
          sum += (0.03 + 0.001 * (9 * a + 3 * b + c + 13)) * in(x[0] + a, x[1] + b, x[2] + c);
    return sum;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const kernels::Index<3>& x) const {
    out(x[0], x[1], x[2]) = value(x);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const kernels::Index<3>& x, double& total) const {
    const double v = value(x);
    out(x[0], x[1], x[2]) = v;
    total += v;
  }
};

struct SumField {
  core::Field<const double, 3> field;
  KOKKOS_INLINE_FUNCTION void operator()(const kernels::Index<3>& x, double& total) const {
    total += field(x[0], x[1], x[2]);
  }
};

/// What a run leaves: the gathered interior (rank 0) and the reductions.
struct Outcome {
  std::vector<double> field;
  std::vector<double> sums;
};

enum class Path { fused, separate };

/// `steps` updates of the box kernel on `space`; with Path::fused the sum of
/// the new values comes from apply_reduce_with_halo, else from reduce_cells
/// after apply_with_halo.
template <class Space>
Outcome box_run(const Space& space, bool overlap, Path path) {
  core::Grid<3> grid(MPI_COMM_WORLD, extent, periodic, core::Stencil::box(3, 1));
  core::Field<double, 3> fields[2] = {grid.make_field<double>("a"), grid.make_field<double>("b")};
  iso_test::fill_cells<3>(grid, fields[0], rough);
  iso_test::fill_cells<3>(grid, fields[1], rough);
  std::vector<core::HaloExchange> halos;
  halos.push_back(grid.halo_exchange(fields[0]));
  halos.push_back(grid.halo_exchange(fields[1]));
  // Overlap whatever the local size.
  const kernels::UpdatePlan<3> plan = kernels::plan_update(grid, "overlap threads", 0);
  Outcome outcome;
  int current = 0;
  for (int s = 0; s < steps; ++s) {
    const BoxUpdate update{fields[current], fields[1 - current]};
    double sum = 0;
    if (path == Path::fused) {
      kernels::apply_reduce_with_halo<3>(space, plan, halos[current], overlap, update, sum);
    } else {
      kernels::apply_with_halo<3>(space, plan, halos[current], overlap, update);
      kernels::reduce_cells<3>(space, "sum", plan.split.interior, SumField{fields[1 - current]},
                               sum);
    }
    outcome.sums.push_back(sum);
    current = 1 - current;
  }
  outcome.field = iso_test::gather_interior<3>(grid, fields[current]);
  return outcome;
}

/// Jacobi sweeps (residual fused into every second sweep) on `space`.
Outcome jacobi_run(const Kokkos::DefaultExecutionSpace& space, bool overlap) {
  core::Grid<3> grid(MPI_COMM_WORLD, extent, periodic, kernels::star_laplacian(3, 0.1));
  auto u = grid.make_field<double>("u");
  iso_test::fill_cells<3>(grid, u, rough);
  kernels::JacobiOptions options;
  options.overlap = overlap;
  options.residual_every = 2;
  kernels::Jacobi<3> jacobi(grid, u, core::Field<double, 3>(), options);
  jacobi.set_space(space);
  const kernels::JacobiSummary summary = jacobi.run(steps);
  Outcome outcome;
  for (const kernels::Residual& r : summary.history) {
    outcome.sums.push_back(r.l2);
    outcome.sums.push_back(r.max);
  }
  outcome.field = iso_test::gather_interior<3>(grid, jacobi.solution());
  return outcome;
}

/// Runs `run` on a 1-thread OpenMP partition of this process where Kokkos 3
/// can make one (nested OpenMP); false when it cannot.
bool on_one_openmp_thread(const std::function<void()>& run, int& threads) {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  if (Kokkos::OpenMP::concurrency() < 2) return false;
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(2);
  // The partition's master is this (the MPI) thread.
  Kokkos::OpenMP::partition_master(
      [&](int, int) {
        threads = Kokkos::OpenMP::impl_thread_pool_size();  // the partition's threads
        run();
      },
      1, 1);
  omp_set_max_active_levels(levels);
  return true;
#else
  (void)run;
  threads = 0;
  return false;
#endif
}

/// Rank 0's first differing cell or sum of `got` against `want` ("" when
/// equal), the same on every rank.
std::string difference(const Outcome& want, const Outcome& got) {
  std::string text;
  if (iso_test::world_rank() == 0) {
    const long cell = iso_test::first_bitwise_difference(want.field, got.field);
    const long sum = iso_test::first_bitwise_difference(want.sums, got.sums);
    if (cell >= 0) text += "field differs first at global cell " + std::to_string(cell) + "; ";
    if (sum >= 0) text += "reduction " + std::to_string(sum) + " differs";
  }
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

/// In the OpenMP build CMake runs this test with OMP_NUM_THREADS=2 and says
/// so (ISOSTENCIL_TEST_THREADS): the overlap must then really run threaded.
void expect_threads() {
  const char* expected = std::getenv("ISOSTENCIL_TEST_THREADS");
  if (expected == nullptr) return;
  EXPECT_EQ(Kokkos::DefaultExecutionSpace().concurrency(), std::atoi(expected))
      << Kokkos::DefaultExecutionSpace::name();
}

TEST(OverlapThreads, BoxKernelMatchesEveryPath) {
  expect_threads();
  const Kokkos::DefaultExecutionSpace space;
  // The fused reduction adds the fixed boxes of the overlap cut, the separate
  // one the whole interior at once: two references, the same fields.
  const Outcome reference = box_run(space, false, Path::fused);
  const Outcome separate = box_run(space, false, Path::separate);
  EXPECT_EQ(difference(reference, Outcome{separate.field, reference.sums}), "");
  std::vector<std::pair<std::string, Outcome>> runs;
  runs.emplace_back("overlap, fused reduction", box_run(space, true, Path::fused));
  const Outcome overlapped_separate = box_run(space, true, Path::separate);
  EXPECT_EQ(difference(separate, overlapped_separate), "")
      << "overlap vs no overlap, separate reduction";
#if defined(KOKKOS_ENABLE_SERIAL)
  // Serial runs on the fields where it can read them (not device memory).
  if constexpr (Kokkos::SpaceAccessibility<
                    Kokkos::Serial, Kokkos::DefaultExecutionSpace::memory_space>::accessible) {
    runs.emplace_back("Serial, overlap", box_run(Kokkos::Serial(), true, Path::fused));
    runs.emplace_back("Serial, no overlap", box_run(Kokkos::Serial(), false, Path::fused));
  }
#endif
  int threads = 0;
  Outcome one;
  if (on_one_openmp_thread([&] { one = box_run(Kokkos::DefaultExecutionSpace(), true, Path::fused); },
                           threads))
    runs.emplace_back("OpenMP partition of " + std::to_string(threads) + " thread, overlap", one);
  ASSERT_TRUE(iso_test::world_rank() != 0 || !reference.field.empty());
  ASSERT_EQ(reference.sums.size(), static_cast<std::size_t>(steps));
  for (const auto& [name, outcome] : runs)
    EXPECT_EQ(difference(reference, outcome), "")
        << name << " vs " << space.name() << " (" << space.concurrency()
        << " threads) without overlap, " << iso_test::world_size() << " ranks";
}

TEST(OverlapThreads, JacobiMatchesEveryPath) {
  expect_threads();
  const Kokkos::DefaultExecutionSpace space;
  const Outcome reference = jacobi_run(space, false);
  std::vector<std::pair<std::string, Outcome>> runs;
  runs.emplace_back("overlap", jacobi_run(space, true));
  int threads = 0;
  Outcome one;
  if (on_one_openmp_thread([&] { one = jacobi_run(Kokkos::DefaultExecutionSpace(), true); },
                           threads))
    runs.emplace_back("OpenMP partition of " + std::to_string(threads) + " thread, overlap", one);
  ASSERT_EQ(reference.sums.size(), 2U * (steps / 2 + 1));
  for (const auto& [name, outcome] : runs)
    EXPECT_EQ(difference(reference, outcome), "")
        << name << " vs " << space.name() << " (" << space.concurrency()
        << " threads) without overlap, " << iso_test::world_size() << " ranks";
}

}  // namespace
