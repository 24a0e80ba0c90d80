// Grids of equal arguments share their Cartesian communicator and, with
// equal subdomain, geometry and options, their halo pattern (made once,
// found while one lives: docs/design/grid.md#shared-communicators-and-patterns);
// a grid or pattern alive on some ranks only is not reused, as every rank
// must reuse it or every rank make a new one, and the ghosts stay right.
// So for auto's choice kept on a neighborhood. A warm set-up's collective
// calls are pinned by count (collective_counter.hpp).
#include "grid_test_support.hpp"

#include "../hygiene/collective_counter.hpp"

#include "iso/halo_exchange.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace grid_test {
namespace {

using iso_test::world_rank;
using iso_test::world_size;

Grid<3> box_grid(const std::array<bool, 3>& periodic = {true, true, true}, long n = 8) {
  return Grid<3>(MPI_COMM_WORLD, {n, 8, 8}, periodic, Stencil::box(3, 1));
}

// The ghosts of `grid`'s exchange against the values by global index.
std::string exchange_and_check(const Grid<3>& grid, std::uint64_t salt) {
  auto field = grid.make_field<double>("u");
  auto halo = grid.halo_exchange(field);
  fill_by_global_index(grid, field, salt);
  halo.run();
  return check_after_exchange(grid, field, salt);
}

TEST(GridSharing, EqualGridsShareTheCommunicatorAndThePattern) {
  Grid<3> first = box_grid();
  EXPECT_EQ(exchange_and_check(first, 1), "");
  Grid<3> second = box_grid();
  EXPECT_EQ(second.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(second, 2), "");
  EXPECT_EQ(second.halo_pattern().get(), first.halo_pattern().get());
  // Other options: another pattern on the same communicator.
  iso::HaloOptions linear;
  linear.algorithm = iso::Algorithm::linear;
  EXPECT_NE(second.halo_pattern(linear).get(), first.halo_pattern().get());
  // Other periods: another communicator; another extent: the communicator
  // (same process grid) but not the pattern (another subdomain).
  Grid<3> mesh = box_grid({true, true, false});
  EXPECT_NE(mesh.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(mesh, 3), "");
  Grid<3> longer = box_grid({true, true, true}, 12);
  EXPECT_EQ(longer.decomposition().comm(), first.decomposition().comm());
  EXPECT_EQ(exchange_and_check(longer, 4), "");
  EXPECT_NE(longer.halo_pattern().get(), first.halo_pattern().get());
}

TEST(GridSharing, ACommunicatorAliveOnOneRankOnlyIsNotReused) {
  std::optional<Grid<3>> kept;
  MPI_Comm kept_comm = MPI_COMM_NULL;
  {
    Grid<3> grid = box_grid({false, true, true});
    if (world_rank() == 0) {
      kept.emplace(grid);
      kept_comm = grid.decomposition().comm();
    }
  }
  Grid<3> again = box_grid({false, true, true});
  // Rank 0 alone found one: every rank made a new one (on one rank, the
  // only rank found it and reuses it).
  if (world_rank() == 0) {
    if (world_size() == 1) EXPECT_EQ(again.decomposition().comm(), kept_comm);
    else EXPECT_NE(again.decomposition().comm(), kept_comm);
  }
  EXPECT_EQ(exchange_and_check(again, 5), "");
}

TEST(GridSharing, APatternAliveOnOneRankOnlyIsNotReused) {
  // A grid on every rank keeps the communicator; a pattern lives on rank 0.
  Grid<3> base = box_grid({true, false, true});
  std::optional<Grid<3>> kept;
  {
    Grid<3> grid = box_grid({true, false, true});
    EXPECT_EQ(exchange_and_check(grid, 6), "");
    if (world_rank() == 0) kept.emplace(grid);
  }
  Grid<3> again = box_grid({true, false, true});
  ASSERT_EQ(again.decomposition().comm(), base.decomposition().comm());
  // Rank 0 binds to its pattern locally before the agreement; then, as the
  // others found none, every rank binds to a new one: the same collective
  // calls on every rank (MPI may not notice a difference).
  const iso_collectives::Calls before = iso_collectives::calls();
  { auto halo = again.halo_exchange(again.make_field<double>("v")); }
  long made[2] = {iso_collectives::calls().allreduce - before.allreduce, 0};
  made[1] = -made[0];
  MPI_Allreduce(MPI_IN_PLACE, made, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(made[0], -made[1]) << "ranks made different numbers of allreduces";
  EXPECT_EQ(exchange_and_check(again, 7), "");
  if (world_rank() == 0) {
    if (world_size() == 1) EXPECT_EQ(again.halo_pattern().get(), kept->halo_pattern().get());
    else EXPECT_NE(again.halo_pattern().get(), kept->halo_pattern().get());
  }
}

// The benchmark's warm set-up (isostencil-bench-petsc, docs/results/petsc-small):
// a grid equal to a live one and its exchange of a field of that grid's
// shape. The decomposition's agreement and the exchange's, which also finds
// every rank ready to make the operation without one (the pattern's
// neighborhood keeps auto's choice): two allreduces, nothing else.
// Equal subdomains (4³ per rank): block sizes that differ by rank are
// predicted every time (docs/design/cost-model.md#kept-choices).
TEST(GridSharing, AWarmGridAndExchangeAgreeInTwoAllreduces) {
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(world_size(), 3, dims);
  auto even_grid = [&] {
    return Grid<3>(MPI_COMM_WORLD, {4L * dims[0], 4L * dims[1], 4L * dims[2]}, {true, true, true},
                   Stencil::box(3, 1));
  };
  Grid<3> shape = even_grid();
  auto field = shape.make_field<double>("u");
  iso::HaloOptions automatic;
  automatic.algorithm = iso::Algorithm::automatic;
  { auto warm = shape.halo_exchange(field, automatic); }
  const iso_collectives::Calls before = iso_collectives::calls();
  {
    Grid<3> grid = even_grid();
    auto halo = grid.halo_exchange(field, automatic);
    EXPECT_EQ(iso_collectives::since(before), "allreduce 2, other 0");
  }
  // A named algorithm: the same count (its own pattern, warmed first).
  iso::HaloOptions torus;
  torus.algorithm = iso::Algorithm::torus;
  { auto warm = shape.halo_exchange(field, torus); }
  const iso_collectives::Calls named = iso_collectives::calls();
  Grid<3> grid = even_grid();
  auto halo = grid.halo_exchange(field, torus);
  EXPECT_EQ(iso_collectives::since(named), "allreduce 2, other 0");
}

// Ghosts of a one-field exchange on `pattern` against a one-off exchange
// (its own pattern, nothing kept) of the same values; its algorithm; and
// the allreduces its set-up made on this rank (MPI may not notice ranks that
// make different collective calls: they would match the next ones).
struct Outcome {
  bool same_ghosts = false;
  iso::Algorithm algorithm = iso::Algorithm::automatic;
  int ports = -1;
  long allreduces = -1;
};
template <class T>
Outcome exchange_on(const std::shared_ptr<const iso::HaloPattern>& pattern, MPI_Datatype element, MPI_Comm cart) {
  const iso::ArrayLayout layout = pattern->layout(element);
  long cells = 1;
  for (int e : layout.extent()) cells *= e;
  std::vector<T> field(static_cast<std::size_t>(cells)), alone(static_cast<std::size_t>(cells));
  for (long i = 0; i < cells; ++i)
    field[static_cast<std::size_t>(i)] = alone[static_cast<std::size_t>(i)] = static_cast<T>(world_rank() * 1000 + i);
  const iso_collectives::Calls before = iso_collectives::calls();
  iso::HaloExchange halo(pattern, element, {field.data()});
  const long allreduces = iso_collectives::calls().allreduce - before.allreduce;
  halo.run();
  iso::HaloExchange reference(cart, layout, pattern->directions(), {alone.data()}, pattern->options());
  reference.run();
  return {field == alone, halo.algorithm(), halo.operation().ports(), allreduces};
}

// auto's choice is kept on the pattern's neighborhood and reused only where
// every rank holds it: rank 0 passes a pattern whose neighborhood holds one,
// the others an equal pattern made afresh (nothing kept). Every rank must
// choose again (a rank reusing while others predict would leave them
// waiting); the choice and the ghosts match a one-off exchange's.
TEST(GridSharing, AnAlgorithmChoiceKeptOnOneRankOnlyIsNotReused) {
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0, 0}, {true, true, false});
  const std::vector<int> interior = {8, 8, 8};
  const iso::HaloGeometry geometry = iso::stencil_geometry(iso::OffsetList::moore(3, 1));
  iso::HaloOptions automatic;
  automatic.algorithm = iso::Algorithm::automatic;
  const auto kept = std::make_shared<const iso::HaloPattern>(cart.get(), interior, geometry, std::vector<long>{},
                                                             automatic);
  const auto fresh = std::make_shared<const iso::HaloPattern>(cart.get(), interior, geometry, std::vector<long>{},
                                                              automatic);
  // The agreement, then the prediction (kept): 2 allreduces; reused: 1.
  const Outcome first = exchange_on<double>(kept, MPI_DOUBLE, cart.get());  // keeps auto's choice
  EXPECT_TRUE(first.same_ghosts);
  EXPECT_EQ(first.allreduces, 2);
  const Outcome mixed = exchange_on<double>(world_rank() == 0 ? kept : fresh, MPI_DOUBLE, cart.get());
  EXPECT_TRUE(mixed.same_ghosts);
  EXPECT_EQ(mixed.algorithm, first.algorithm);
  EXPECT_EQ(mixed.ports, first.ports);
  EXPECT_EQ(mixed.allreduces, world_size() == 1 ? 1 : 2) << "rank " << world_rank();
  // Kept everywhere: reused, the same choice and ghosts.
  const Outcome warm = exchange_on<double>(kept, MPI_DOUBLE, cart.get());
  EXPECT_TRUE(warm.same_ghosts);
  EXPECT_EQ(warm.algorithm, first.algorithm);
  EXPECT_EQ(warm.ports, first.ports);
  EXPECT_EQ(warm.allreduces, 1);
  // Other block sizes (bytes per cell) are another key: chosen again, as a
  // one-off exchange of the same element chooses.
  for (int pass = 0; pass < 2; ++pass) {
    const Outcome chars = exchange_on<char>(kept, MPI_CHAR, cart.get());
    const Outcome chars_alone = exchange_on<char>(fresh, MPI_CHAR, cart.get());
    EXPECT_TRUE(chars.same_ghosts);
    EXPECT_EQ(chars.algorithm, chars_alone.algorithm);
    EXPECT_EQ(chars.ports, chars_alone.ports);
    EXPECT_EQ(chars.allreduces, pass == 0 ? 2 : 1);
  }
}

}  // namespace
}  // namespace grid_test
