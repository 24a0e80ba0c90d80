// The halo pattern apart from the exchange: the grid computes its stencil's
// geometry once and hands it to its pattern unchanged; the pattern is made
// once per options and shared by every exchange of the grid and its copies;
// exchanges bound to one pattern (several fields, several element types)
// give the same ghosts as one-off exchanges and validate against the naive
// reference.
#include "grid_test_support.hpp"

#include "iso/halo_exchange.hpp"
#include "iso/neighborhood.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace grid_test {
namespace {

TEST(HaloPattern, GridGeometryGoesToThePatternUnchanged) {
  const Stencil upwind = Stencil::upwind(2, 1, {-1, 0});
  Grid<2> grid(MPI_COMM_WORLD, {12, 10}, {true, false}, upwind);
  const iso::HaloGeometry expected = iso::stencil_geometry(upwind.offsets());
  EXPECT_EQ(grid.geometry().directions, expected.directions);
  EXPECT_EQ(grid.geometry().neighborhood, expected.neighborhood);
  EXPECT_EQ(grid.geometry().widths.lo, expected.widths.lo);
  EXPECT_EQ(grid.geometry().widths.hi, expected.widths.hi);
  EXPECT_EQ(grid.ghost_lo(), (std::array<int, 2>{1, 1}));
  EXPECT_EQ(grid.ghost_hi(), (std::array<int, 2>{0, 1}));
  // The neighborhood is v = -e, block by block.
  const iso::OffsetList& e = grid.directions();
  const iso::OffsetList& v = grid.geometry().neighborhood;
  ASSERT_EQ(v.size(), e.size());
  for (int i = 0; i < e.size(); ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(v[i][j], -e[i][j]);

  const std::shared_ptr<const iso::HaloPattern> pattern = grid.halo_pattern();
  EXPECT_EQ(pattern->directions(), grid.directions());
  EXPECT_EQ(pattern->neighborhood().offsets(), v);
  const iso::ArrayLayout layout = pattern->layout(MPI_DOUBLE);
  EXPECT_EQ(layout.ghost_lo, expected.widths.lo);
  EXPECT_EQ(layout.ghost_hi, expected.widths.hi);
  EXPECT_EQ(layout.interior, grid.decomposition().local_extent());
  EXPECT_EQ(layout.global_offset, grid.decomposition().global_offset());
}

TEST(HaloPattern, OnePatternPerOptionsSharedByEveryExchange) {
  Grid<3> grid(MPI_COMM_WORLD, {8, 7, 6}, {true, true, false}, Stencil::box(3, 1));
  const auto pattern = grid.halo_pattern();
  EXPECT_EQ(grid.halo_pattern().get(), pattern.get());
  const Grid<3> copy = grid;
  EXPECT_EQ(copy.halo_pattern().get(), pattern.get());

  auto u = grid.make_field<double>("u");
  auto v = grid.make_field<double>("v");
  auto cells = grid.make_field<int>("cells");
  auto hu = grid.halo_exchange(u);
  auto hv = copy.halo_exchange(v);
  auto hc = grid.halo_exchange(cells);
  EXPECT_EQ(&hu.pattern(), pattern.get());
  EXPECT_EQ(&hv.pattern(), pattern.get());
  EXPECT_EQ(&hc.pattern(), pattern.get());
  EXPECT_EQ(&hu.neighborhood(), &hv.neighborhood());

  isostencil::core::HaloOptions linear;
  linear.algorithm = iso::Algorithm::linear;
  const auto other = grid.halo_pattern(linear);
  EXPECT_NE(other.get(), pattern.get());
  auto hl = grid.halo_exchange(u, linear);
  EXPECT_EQ(&hl.pattern(), other.get());
  EXPECT_EQ(hl.algorithm(), iso::Algorithm::linear);
  EXPECT_EQ(hu.algorithm(), iso::Algorithm::torus);

  fill_random(grid, u, 11);
  fill_random(grid, v, 12);
  for (auto* halo : {&hu, &hv, &hl}) {
    const iso::HaloValidation validation = halo->validate();
    EXPECT_TRUE(validation.ok) << validation.message;
    EXPECT_GT(validation.cells_compared, 0);
  }
  const iso::HaloValidation validation = hc.validate();
  EXPECT_TRUE(validation.ok) << validation.message;
}

TEST(HaloPattern, ExchangesOfOnePatternMatchOneOffExchanges) {
  const int rank = iso_test::world_rank();
  iso::CartComm cart(MPI_COMM_WORLD, {0, 0}, {true, false});
  const std::vector<int> interior = {4, 3};
  const iso::HaloGeometry geometry = iso::stencil_geometry(iso::OffsetList::moore(2, 1));
  const auto pattern = std::make_shared<const iso::HaloPattern>(cart.get(), interior, geometry);
  const iso::ArrayLayout layout = pattern->layout(MPI_DOUBLE);
  const std::vector<int> extent = layout.extent();
  const std::size_t cells = static_cast<std::size_t>(extent[0] * extent[1]);
  std::vector<double> a(cells), b(cells), a_alone(cells), b_alone(cells);
  std::vector<int> n(cells), n_alone(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    a[i] = a_alone[i] = rank * 1000.0 + static_cast<double>(i);
    b[i] = b_alone[i] = -a[i];
    n[i] = n_alone[i] = rank * 100 + static_cast<int>(i);
  }
  // Two exchanges of doubles (one of them two fields) and one of ints, one pattern.
  iso::HaloExchange both(pattern, MPI_DOUBLE, {a.data(), b.data()});
  iso::HaloExchange ints(pattern, MPI_INT, {n.data()});
  EXPECT_EQ(&both.pattern(), &ints.pattern());
  both.start();
  ints.start();
  ints.wait();
  both.wait();
  iso::HaloExchange alone(cart.get(), layout, geometry.directions, {a_alone.data(), b_alone.data()});
  iso::ArrayLayout int_layout = layout;
  int_layout.element = MPI_INT;
  iso::HaloExchange int_alone(cart.get(), int_layout, geometry.directions, {n_alone.data()});
  alone.run();
  int_alone.run();
  EXPECT_EQ(a, a_alone);
  EXPECT_EQ(b, b_alone);
  EXPECT_EQ(n, n_alone);
  for (iso::HaloExchange* halo : {&both, &ints}) {
    const iso::HaloValidation validation = halo->validate();
    EXPECT_TRUE(validation.ok) << validation.message;
  }
}

TEST(HaloPattern, BindingErrorsAreTheSameOnEveryRank) {
  iso::CartComm cart(MPI_COMM_WORLD, {0}, {true});
  const auto pattern = std::make_shared<const iso::HaloPattern>(
      cart.get(), std::vector<int>{3}, iso::stencil_geometry(iso::OffsetList::moore(1, 1)));
  std::vector<double> field(5);
  try {
    iso::HaloExchange halo(pattern, MPI_DOUBLE, {});
    ADD_FAILURE() << "no fields accepted";
  } catch (const iso::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no fields to exchange"), std::string::npos) << e.what();
  }
  try {
    iso::HaloExchange halo(pattern, MPI_DOUBLE, {field.data(), nullptr});
    ADD_FAILURE() << "null field accepted";
  } catch (const iso::Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 1 is a null pointer"), std::string::npos) << e.what();
  }
}

// The binding's check rides in the operation's agreement: an error on one
// rank only is still the same error on every rank.
TEST(HaloPattern, ABindingErrorOnOneRankIsAnErrorOnEveryRank) {
  iso::CartComm cart(MPI_COMM_WORLD, {0}, {true});
  const auto pattern = std::make_shared<const iso::HaloPattern>(
      cart.get(), std::vector<int>{3}, iso::stencil_geometry(iso::OffsetList::moore(1, 1)));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> a(5), b(5);
  const int erring = size - 1;
  try {
    iso::HaloExchange halo(pattern, MPI_DOUBLE, {a.data(), rank == erring ? nullptr : b.data()});
    ADD_FAILURE() << "a null field on rank " << erring << " accepted";
  } catch (const iso::Error& e) {
    const std::string expected = "rank " + std::to_string(erring) + ": field 1 is a null pointer";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
  // And the exchange still works afterwards on every rank.
  iso::HaloExchange halo(pattern, MPI_DOUBLE, {a.data(), b.data()});
  halo.run();
}

}  // namespace
}  // namespace grid_test
