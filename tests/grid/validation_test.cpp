// The isomorphic exchange equals the naive per-direction exchange bitwise on
// random fields (random interior and random ghosts) for every algorithm:
// through validate() and through run() on one copy, run_naive() on another
// and a bitwise comparison. The comparisons can fail: a star exchange against
// a box reference differs in the corners, reported by rank, direction and
// global index, and the ghost check of exchange_test catches a missing
// exchange.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace grid_test {
namespace {

constexpr std::uint64_t seed = 20240611;  // the same on every rank

struct RandomCase {
  Shape shape;
  int radius;
  Periodicity periodicity;
  ProcessGrid procs;
  bool uneven;
};

template <int D, class T>
std::string iso_equals_naive(const RandomCase& c, int case_index, int& comparisons) {
  const int world = iso_test::world_size();
  const std::vector<int> requested = process_dims(D, c.procs, world);
  const std::vector<int> procs = Decomposition::choose_process_dims(world, requested);
  const int local = std::max(c.radius, 1) + (D <= 3 ? 2 : 0);
  std::string failures;
  try {
    Grid<D> grid(
        std::make_shared<const Decomposition>(MPI_COMM_WORLD, global_extent(procs, local, c.uneven),
                                              periodic_flags(D, c.periodicity), requested),
        make_stencil(c.shape, D, c.radius, case_index));
    const std::string label = std::string(to_string(c.shape)) + " r=" + std::to_string(c.radius) +
                              " d=" + std::to_string(D) + " " + to_string(c.periodicity) + " " +
                              to_string(c.procs) + (c.uneven ? " uneven" : " even");
    auto original = grid.template make_field<T>("original");
    auto iso_result = grid.template make_field<T>("iso");
    auto naive_result = grid.template make_field<T>("naive");
    // The reference exchange of naive_result (run_naive only).
    auto naive = grid.halo_exchange(naive_result);
    for (iso::Algorithm algorithm : all_algorithms) {
      fill_random(grid, original,
                  seed + static_cast<std::uint64_t>(case_index) * 7 +
                      static_cast<std::uint64_t>(algorithm));
      Kokkos::deep_copy(iso_result, original);
      iso::HaloOptions options;
      options.algorithm = algorithm;
      auto halo = grid.halo_exchange(iso_result, options);
      const iso::HaloValidation validation = halo.validate();
      if (!validation.ok)
        failures += "\n  " + label + ", " + iso::to_string(algorithm) +
                    ": validate(): " + validation.message;
      // validate() leaves the isomorphic result: the same as a plain run().
      auto validated = grid.template make_field<T>("validated");
      Kokkos::deep_copy(validated, iso_result);

      Kokkos::deep_copy(iso_result, original);
      Kokkos::deep_copy(naive_result, original);
      halo.run();
      naive.run_naive();
      const iso::HaloValidation same = grid.compare(iso_result, naive_result, true);
      if (!same.ok)
        failures += "\n  " + label + ", " + iso::to_string(algorithm) +
                    ": run() vs run_naive(): " + same.message;
      const iso::HaloValidation same_as_validated = grid.compare(iso_result, validated, true);
      if (!same_as_validated.ok)
        failures += "\n  " + label + ", " + iso::to_string(algorithm) +
                    ": run() vs the fields validate() left: " + same_as_validated.message;
      ++comparisons;
    }
  } catch (const iso::Error& e) {
    failures += std::string("\n  threw: ") + e.what();
  }
  return failures;
}

template <int D>
std::string random_cases(int& comparisons) {
  const std::vector<RandomCase> cases = {
      {Shape::box, 1, Periodicity::all, ProcessGrid::automatic, false},
      {Shape::star, 2, Periodicity::none, ProcessGrid::first, true},
      {Shape::upwind, D <= 3 ? 2 : 1, Periodicity::mixed, ProcessGrid::last, true},
      {Shape::one_sided_star, 3, Periodicity::all, ProcessGrid::two_first, true},
      {Shape::box, 2, Periodicity::mixed, ProcessGrid::two_first, false},
  };
  std::string failures;
  for (std::size_t i = 0; i < cases.size(); ++i)
    failures += i % 2 == 0
                    ? iso_equals_naive<D, double>(cases[i], static_cast<int>(i), comparisons)
                    : iso_equals_naive<D, std::int64_t>(cases[i], static_cast<int>(i), comparisons);
  return failures;
}

TEST(GridValidation, IsoEqualsNaiveOnRandomFields) {
  int comparisons = 0;
  std::string failures = random_cases<1>(comparisons);
  failures += random_cases<2>(comparisons);
  failures += random_cases<3>(comparisons);
  failures += random_cases<4>(comparisons);
  failures += random_cases<5>(comparisons);
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
  if (iso_test::world_rank() == 0)
    std::printf("[ grid ] %d (case, algorithm) pairs: validate() ok and run() == run_naive()\n",
                comparisons);
}

TEST(GridValidation, FloatAndIntFieldsValidate) {
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {3L * world, 5, 4}, {true, false, true}, Stencil::box(3, 1));
  auto f = grid.make_field<float>("f");
  auto i = grid.make_field<int>("i");
  fill_random(grid, f, seed);
  fill_random(grid, i, seed + 1);
  auto halo_f = grid.halo_exchange(f);
  auto halo_i = grid.halo_exchange(i);
  const iso::HaloValidation vf = halo_f.validate();
  const iso::HaloValidation vi = halo_i.validate();
  EXPECT_TRUE(vf.ok) << vf.message;
  EXPECT_TRUE(vi.ok) << vi.message;
  EXPECT_GT(vf.cells_compared, 0);

  // Byte-sized elements: the global index's low bits, so the ghosts can be
  // checked against their source too.
  auto bytes = grid.make_field<std::uint8_t>("bytes");
  auto chars = grid.make_field<char>("chars");
  auto host_bytes = Kokkos::create_mirror_view(bytes);
  auto host_chars = Kokkos::create_mirror_view(chars);
  for (int x = 0; x < grid.field_extent()[0]; ++x)
    for (int y = 0; y < grid.field_extent()[1]; ++y)
      for (int z = 0; z < grid.field_extent()[2]; ++z) {
        const auto g = grid.to_global({x, y, z});
        const bool interior = grid.is_interior({x, y, z});
        host_bytes(x, y, z) =
            interior ? static_cast<std::uint8_t>(g[0] * 31 + g[1] * 7 + g[2]) : 255;
        host_chars(x, y, z) = interior ? static_cast<char>('a' + (g[0] + g[1] + g[2]) % 26) : '#';
      }
  Kokkos::deep_copy(bytes, host_bytes);
  Kokkos::deep_copy(chars, host_chars);
  auto halo_bytes = grid.halo_exchange(bytes);
  auto halo_chars = grid.halo_exchange(chars);
  const iso::HaloValidation vb = halo_bytes.validate();
  const iso::HaloValidation vc = halo_chars.validate();
  EXPECT_TRUE(vb.ok) << vb.message;
  EXPECT_TRUE(vc.ok) << vc.message;
  Kokkos::deep_copy(host_bytes, bytes);
  long wrong = 0;
  for (int x = 0; x < grid.field_extent()[0]; ++x)
    for (int y = 0; y < grid.field_extent()[1]; ++y)
      for (int z = 0; z < grid.field_extent()[2]; ++z)
        if (const auto g = grid.wrap(grid.to_global({x, y, z})))
          wrong += host_bytes(x, y, z) !=
                   static_cast<std::uint8_t>((*g)[0] * 31 + (*g)[1] * 7 + (*g)[2]);
  EXPECT_TRUE(iso_test::all_ranks(wrong == 0)) << wrong << " byte cells wrong";
}

// The comparison can fail, and its report names rank, direction and global
// index: a star exchange leaves the corner ghosts that a box reference fills.
TEST(GridValidation, StarAgainstBoxReferenceDiffersInTheCorners) {
  const int world = iso_test::world_size();
  auto decomposition = std::make_shared<const Decomposition>(
      MPI_COMM_WORLD, std::vector<long>{4L * world, 5}, std::vector<bool>{true, true});
  Grid<2> star_grid(decomposition, Stencil::star(2, 1));
  Grid<2> box_grid(decomposition, Stencil::box(2, 1));  // same ghost widths, 8 directions
  auto star_field = star_grid.make_field<double>("star");
  auto box_field = box_grid.make_field<double>("box");
  fill_random(star_grid, star_field, seed);
  Kokkos::deep_copy(box_field, star_field);
  auto star_halo = star_grid.halo_exchange(star_field);
  auto box_halo = box_grid.halo_exchange(box_field);
  star_halo.run();
  box_halo.run_naive();
  const iso::HaloValidation result = star_grid.compare(star_field, box_field);
  EXPECT_FALSE(result.ok);
  // Local (0,0) is rank 0's first ghost cell: the (-1,-1) corner, global (-1,-1).
  EXPECT_NE(result.message.find("isostencil::core::Grid::compare: rank 0: ghost cell in direction "
                                "(-1,-1), global index (-1,-1) (local (0,0))"),
            std::string::npos)
      << result.message;
  EXPECT_GT(result.cells_compared, 0);

  // Both exchanges validate on their own, and the faces agree: only corners differ.
  EXPECT_TRUE(star_halo.validate().ok);
  EXPECT_TRUE(box_halo.validate().ok);
  auto host_star = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), star_field);
  auto host_box = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), box_field);
  long corner_differences = 0, other_differences = 0;
  for (int x = 0; x < star_grid.field_extent()[0]; ++x)
    for (int y = 0; y < star_grid.field_extent()[1]; ++y) {
      const bool corner = !star_grid.is_interior({x, 1}) && !star_grid.is_interior({1, y});
      if (host_star(x, y) != host_box(x, y)) ++(corner ? corner_differences : other_differences);
    }
  EXPECT_EQ(corner_differences, 4);  // random ghosts vs received corners, at every rank
  EXPECT_EQ(other_differences, 0);
}

// The ghost check of exchange_test fails when no exchange ran.
TEST(GridValidation, GhostCheckCatchesAMissingExchange) {
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {2L * world, 3, 3}, {true, true, true}, Stencil::star(3, 1));
  auto u = grid.make_field<std::int64_t>("u");
  fill_by_global_index(grid, u, 5);
  const std::string without = check_after_exchange(grid, u, 5);
  EXPECT_NE(without.find("ghost cell"), std::string::npos) << without;
  auto halo = grid.halo_exchange(u);
  halo.run();
  const std::string with = check_after_exchange(grid, u, 5);
  EXPECT_EQ(with, "");
  // A corner written by someone is caught too (star: corners keep the sentinel).
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  host(0, 0, 0) = 42;
  Kokkos::deep_copy(u, host);
  EXPECT_NE(check_after_exchange(grid, u, 5).find("direction (-1,-1,-1)"), std::string::npos);
}

}  // namespace
}  // namespace grid_test
