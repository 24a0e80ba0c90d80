// The neighborhood comes from the stencil: directions a stencil does not read
// are never sent (blocks counted through the schedule); a halo wider than a
// neighbor's subdomain is an iso::Error on every rank naming the dimension;
// several fields in one exchange; start / interior work / wait; and the
// figures for the issue note (halo widths, neighborhood size, rounds per
// algorithm).
#include "grid_test_support.hpp"

#include "iso/cost_model.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace grid_test {
namespace {

int nonzero_components(const int* v, int dims) {
  int count = 0;
  for (int j = 0; j < dims; ++j)
    count += v[j] != 0;
  return count;
}

struct BlockCount {
  long blocks = 0;       // block transfers sent by this process
  long messages = 0;     // messages sent
  int widest_block = 0;  // most nonzero components of a block's offset sent
  int bad_blocks = 0;    // send entries naming no neighborhood block
};

BlockCount count_blocks(const iso::Schedule& schedule, const iso::OffsetList& offsets) {
  BlockCount count;
  count.blocks = schedule.blocks_sent();
  count.messages = schedule.messages_sent();
  for (const iso::Round& round : schedule.rounds)
    for (const iso::BlockRef& ref : round.send) {
      if (ref.block < 0 || ref.block >= offsets.size()) {
        ++count.bad_blocks;
        continue;
      }
      count.widest_block =
          std::max(count.widest_block, nonzero_components(offsets[ref.block], offsets.dims()));
    }
  return count;
}

/// Expected blocks sent on a torus where every block has a target: linear
/// sends each block once; torus and direct move a block with |v_j| <= 1 one
/// hop per nonzero component.
long expected_blocks(const iso::OffsetList& offsets, iso::Algorithm algorithm) {
  long blocks = 0;
  for (int i = 0; i < offsets.size(); ++i)
    blocks +=
        algorithm == iso::Algorithm::linear ? 1 : nonzero_components(offsets[i], offsets.dims());
  return blocks;
}

template <int D>
std::string check_directions_sent(const Grid<D>& grid, int expected_neighbors, int widest,
                                  const char* label) {
  auto u = grid.template make_field<double>("u");
  std::string failures;
  for (iso::Algorithm algorithm :
       {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct}) {
    iso::HaloOptions options;
    options.algorithm = algorithm;
    auto halo = grid.halo_exchange(u, options);
    const iso::OffsetList& offsets = halo.neighborhood().offsets();
    const BlockCount count = count_blocks(halo.operation().schedule(), offsets);
    const long expected = expected_blocks(offsets, algorithm);
    std::string problem;
    if (offsets.size() != expected_neighbors)
      problem += " neighborhood has " + std::to_string(offsets.size()) + " offsets, expected " +
                 std::to_string(expected_neighbors) + ";";
    if (count.widest_block > widest)
      problem += " a block with " + std::to_string(count.widest_block) +
                 " nonzero components was sent (stencil reads at most " + std::to_string(widest) +
                 ");";
    if (count.bad_blocks) problem += " send entries name unknown blocks;";
    if (count.blocks != expected)
      problem += " " + std::to_string(count.blocks) + " blocks sent, expected " +
                 std::to_string(expected) + ";";
    for (int i = 0; i < offsets.size(); ++i)
      for (int j = 0; j < D; ++j)
        if (offsets[i][j] != -grid.directions()[i][j]) problem += " offset != -direction;";
    if (!problem.empty())
      failures += std::string("\n  ") + label + ", " + iso::to_string(algorithm) + ":" + problem;
    halo.run();
  }
  return failures;
}

// Periodic grids, so every block has a target and the counts are exact.
TEST(GridNeighborhood, DirectionsTheStencilDoesNotReadAreNeverSent) {
  const int world = iso_test::world_size();
  // Process grids from MPI_Dims_create, 3 cells per process and dimension.
  const std::vector<int> p3 = Decomposition::choose_process_dims(world, {0, 0, 0});
  const std::vector<int> p2 = Decomposition::choose_process_dims(world, {0, 0});
  const std::array<long, 3> extent3{3L * p3[0], 3L * p3[1], 3L * p3[2]};
  const std::array<long, 2> extent2{3L * p2[0], 3L * p2[1]};
  std::string failures;
  {
    // 3-D 7-point star: the 6 faces, no edge or corner block.
    Grid<3> grid(MPI_COMM_WORLD, extent3, {true, true, true}, Stencil::star(3, 1));
    failures += check_directions_sent(grid, 6, 1, "3-D star r=1");
    Grid<3> wide(MPI_COMM_WORLD, extent3, {true, true, true}, Stencil::star(3, 3));
    failures += check_directions_sent(wide, 6, 1, "3-D star r=3");
    // The 27-point box for contrast: 26 blocks, corners included.
    Grid<3> box(MPI_COMM_WORLD, extent3, {true, true, true}, Stencil::box(3, 1));
    failures += check_directions_sent(box, 26, 3, "3-D box r=1");
  }
  {
    // One-sided 2-D star reading (-1,0) and (0,-1): 2 blocks, no corner.
    Grid<2> grid(MPI_COMM_WORLD, extent2, {true, true}, Stencil::one_sided_star(2, 1, {-1, -1}));
    EXPECT_EQ(grid.directions(), iso::OffsetList::parse("-1,0;0,-1"));
    failures += check_directions_sent(grid, 2, 1, "2-D one-sided star");
    // Upwind box (-1,0), (0,-1), (-1,-1): the corner (-1,-1) as well.
    Grid<2> upwind(MPI_COMM_WORLD, extent2, {true, true}, Stencil::upwind(2, 1, {-1, -1}));
    EXPECT_EQ(upwind.directions(), iso::OffsetList::parse("-1,-1;-1,0;0,-1"));
    failures += check_directions_sent(upwind, 3, 2, "2-D upwind box");
    // Ghost layers only where read: nothing above.
    EXPECT_EQ(upwind.ghost_hi(), (std::array<int, 2>{0, 0}));
  }
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// The MPI library's collective gets one message per existing neighbor: the
// neighborhood (6 for the star) is all it sees.
TEST(GridNeighborhood, MpiAlgorithmSeesOnlyTheStencilNeighborhood) {
  const int world = iso_test::world_size();
  Grid<3> grid(MPI_COMM_WORLD, {3L * world, 4, 4}, {false, false, false}, Stencil::star(3, 1));
  auto u = grid.make_field<double>("u");
  iso::HaloOptions options;
  options.algorithm = iso::Algorithm::mpi;
  auto halo = grid.halo_exchange(u, options);
  EXPECT_EQ(halo.algorithm(), iso::Algorithm::mpi);
  EXPECT_EQ(halo.neighborhood().size(), 6);
  fill_by_global_index(grid, u, 3);
  halo.run();
  const std::string error = check_after_exchange(grid, u, 3);
  EXPECT_TRUE(iso_test::all_ranks(error.empty())) << error;
}

// What the width rule refused before wide halos (docs/design/halo-exchange.md#wide-halos)
// now exchanges; the rule's remaining limit is tested in wide_halo_test.cpp.
TEST(GridNeighborhood, HaloWiderThanASubdomainExchanges) {
  const int world = iso_test::world_size();
  // Dimension 0: 2 cells per process (periodic: even one process wraps onto
  // itself); dimension 1: 2 cells, non-periodic, one process: never exchanged.
  Grid<2> grid(MPI_COMM_WORLD, {2L * world, 2}, {true, false}, Stencil::star(2, 3), {world, 1});
  auto u = grid.make_field<std::int64_t>("u");
  auto halo = grid.halo_exchange(u);
  fill_by_global_index(grid, u, 9);
  halo.run();
  std::string error = check_after_exchange(grid, u, 9);
  EXPECT_TRUE(iso_test::all_ranks(error.empty())) << error;
  EXPECT_EQ(halo.pattern().reach(), (std::vector<int>{2, 1}));

  // Uneven, a one-sided stencil: its wide side.
  if (world > 1) {
    Grid<2> uneven(MPI_COMM_WORLD, {5, 2L * world + 1}, {false, false}, Stencil::one_sided_star(2, 3, {0, 1}),
                   {1, world});
    auto w = uneven.make_field<std::int64_t>("w");
    auto wide = uneven.halo_exchange(w);
    fill_by_global_index(uneven, w, 4);
    wide.run();
    error = check_after_exchange(uneven, w, 4);
    EXPECT_TRUE(iso_test::all_ranks(error.empty())) << error;
  }
}

TEST(GridNeighborhood, SeveralFieldsInOneExchange) {
  const int world = iso_test::world_size();
  std::string failures;
  for (iso::Algorithm algorithm : {iso::Algorithm::linear, iso::Algorithm::torus,
                                   iso::Algorithm::direct, iso::Algorithm::automatic}) {
    Grid<3> grid(MPI_COMM_WORLD, {4L * world + 1, 5, 4}, {true, false, true}, Stencil::box(3, 1));
    auto a = grid.make_field<std::int64_t>("a");
    auto b = grid.make_field<std::int64_t>("b");
    auto c = grid.make_field<std::int64_t>("c");
    iso::HaloOptions options;
    options.algorithm = algorithm;
    auto group = grid.halo_exchange({a, b, c}, options);
    auto single = grid.halo_exchange(a, options);
    if (group.num_fields() != 3) failures += "\n  num_fields != 3";
    // One message per neighbor and round carries all three fields.
    if (group.operation().schedule().messages_sent() !=
        single.operation().schedule().messages_sent())
      failures += std::string("\n  ") + iso::to_string(algorithm) +
                  ": the group sends more messages than one field";
    fill_by_global_index(grid, a, 1);
    fill_by_global_index(grid, b, 2);
    fill_by_global_index(grid, c, 3);
    group.run();
    for (const auto& [field, salt] : {std::pair{a, 1}, std::pair{b, 2}, std::pair{c, 3}}) {
      const std::string error = check_after_exchange(grid, field, static_cast<std::uint64_t>(salt));
      if (!error.empty())
        failures += std::string("\n  ") + iso::to_string(algorithm) + ", field " + field.label() +
                    ": " + error;
    }
    const iso::HaloValidation validation = group.validate();
    if (!validation.ok) failures += "\n  validate(): " + validation.message;
  }
  {
    // Two double fields in 2-D, one-sided stencil, through a std::vector.
    Grid<2> grid(MPI_COMM_WORLD, {3L * world, 7}, {false, true}, Stencil::upwind(2, 2, {1, -1}));
    std::vector<isostencil::core::Field<double, 2>> fields = {grid.make_field<double>("p"),
                                                              grid.make_field<double>("q")};
    auto group = grid.halo_exchange(fields);
    fill_by_global_index(grid, fields[0], 11);
    fill_by_global_index(grid, fields[1], 12);
    group.run();
    failures += check_after_exchange(grid, fields[0], 11);
    failures += check_after_exchange(grid, fields[1], 12);
  }
  EXPECT_TRUE(iso_test::all_ranks(failures.empty())) << failures;
}

// Kernels live outside TEST bodies: CUDA's extended lambdas cannot sit in
// gtest's private TestBody().
void interior_work(const Grid<2>& grid, const isostencil::core::Field<double, 2>& u,
                   const isostencil::core::Field<double, 2>& v) {
  Kokkos::parallel_for(
      "grid_test::interior_work", grid.interior_policy(),
      KOKKOS_LAMBDA(int i, int j) { v(i, j) = 2 * u(i, j); });
}

void fill_with_local_index(const Grid<1>& line, const isostencil::core::Field<int, 1>& w) {
  Kokkos::parallel_for(
      "grid_test::fill_with_local_index", line.interior_policy(),
      KOKKOS_LAMBDA(int i) { w(i) = i; });
}

// start(), interior work in a Kokkos kernel while messages fly, test(), wait().
TEST(GridNeighborhood, StartInteriorWorkWait) {
  const int world = iso_test::world_size();
  Grid<2> grid(MPI_COMM_WORLD, {6L * world, 6}, {true, true}, Stencil::star(2, 1));
  auto u = grid.make_field<double>("u");
  auto v = grid.make_field<double>("v");
  auto halo = grid.halo_exchange(u);
  fill_by_global_index(grid, u, 21);
  halo.start();
  interior_work(grid, u, v);  // reads no ghost cell of u
  while (!halo.test()) {
  }
  halo.wait();  // already complete: returns at once
  std::string error = check_after_exchange(grid, u, 21);
  auto host_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  auto host_v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (int i = grid.interior_range(0).first; i < grid.interior_range(0).second; ++i)
    for (int j = grid.interior_range(1).first; j < grid.interior_range(1).second; ++j)
      if (host_v(i, j) != 2 * host_u(i, j)) error = "interior work wrong";
  EXPECT_TRUE(iso_test::all_ranks(error.empty())) << error;

  // 1-D: interior_policy is a RangePolicy.
  Grid<1> line(MPI_COMM_WORLD, {5L * world}, {true}, Stencil::star(1, 2));
  auto w = line.make_field<int>("w");
  fill_with_local_index(line, w);
  auto line_halo = line.halo_exchange(w);
  line_halo.run();
  EXPECT_TRUE(line_halo.validate().ok);
}

// A stencil reading only the centre has no neighborhood: the exchange is empty.
TEST(GridNeighborhood, CentreOnlyStencilExchangesNothing) {
  const int world = iso_test::world_size();
  Grid<2> grid(MPI_COMM_WORLD, {2L * world, 3}, {true, true}, Stencil::star(2, 0));
  EXPECT_EQ(grid.directions().size(), 0);
  EXPECT_EQ(grid.field_extent(), grid.interior_extent());  // no ghost layers
  auto u = grid.make_field<double>("u");
  auto halo = grid.halo_exchange(u);
  halo.run();
  EXPECT_EQ(halo.neighborhood().size(), 0);
  EXPECT_TRUE(halo.validate().ok);
}

// The figures of the issue note, on this run's process grid and on a 4^d
// periodic process grid (the schedule is independent of the field sizes).
TEST(GridNeighborhood, FiguresForTheNote) {
  const int world = iso_test::world_size();
  struct Entry {
    const char* name;
    Stencil stencil;
  };
  const std::vector<Entry> entries = {
      {"2-D 9-point", Stencil::box(2, 1)},
      {"3-D 7-point", Stencil::star(3, 1)},
      {"3-D 27-point", Stencil::box(3, 1)},
      {"2-D one-sided star", Stencil::one_sided_star(2, 1, {-1, -1})},
      {"2-D upwind box", Stencil::upwind(2, 1, {-1, -1})},
      {"2-D star r=2", Stencil::star(2, 2)},
  };
  std::string text;
  char line[512];
  for (const Entry& entry : entries) {
    const int d = entry.stencil.dims();
    const iso::HaloWidths widths = entry.stencil.geometry().widths;
    const iso::OffsetList directions = entry.stencil.geometry().directions;
    std::vector<int> flat;
    for (int i = 0; i < directions.size(); ++i)
      for (int j = 0; j < d; ++j)
        flat.push_back(-directions[i][j]);
    const iso::OffsetList neighborhood(d, flat);
    auto widths_text = [](const std::vector<int>& w) {
      std::string out = "(";
      for (std::size_t j = 0; j < w.size(); ++j)
        out += (j ? "," : "") + std::to_string(w[j]);
      return out + ")";
    };
    std::snprintf(line, sizeof line, "%-22s %2d offsets  halo lo %s hi %s  neighborhood %2d\n",
                  entry.name, entry.stencil.size(), widths_text(widths.lo).c_str(),
                  widths_text(widths.hi).c_str(), neighborhood.size());
    text += line;
    const iso::CartGeometry torus{std::vector<int>(d, 4), std::vector<bool>(d, true)};
    // This run's grid: all periodic, MPI_Dims_create.
    const std::vector<int> procs =
        Decomposition::choose_process_dims(world, std::vector<int>(d, 0));
    const iso::CartGeometry here{procs, std::vector<bool>(d, true)};
    for (iso::Algorithm algorithm :
         {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct}) {
      const iso::ScheduleFigures f4 =
          iso::schedule_figures(neighborhood, torus, algorithm, iso::Collective::alltoall);
      const iso::ScheduleFigures fh =
          iso::schedule_figures(neighborhood, here, algorithm, iso::Collective::alltoall);
      std::snprintf(line, sizeof line,
                    "    %-7s 4^%d torus: %2d rounds, %2ld messages, %2ld blocks sent | %d ranks: "
                    "%2d rounds, %2ld messages, %2ld blocks\n",
                    iso::to_string(algorithm), d, f4.rounds, f4.messages, f4.volume, world,
                    fh.rounds, fh.messages, fh.volume);
      text += line;
    }
    std::snprintf(line, sizeof line, "    %-7s one neighborhood collective, %d messages\n", "mpi",
                  neighborhood.size());
    text += line;
  }
  // What automatic picks here under the default cost model (one real grid).
  Grid<3> grid(MPI_COMM_WORLD, {4L * world, 4, 4}, {true, true, true}, Stencil::box(3, 1));
  auto u = grid.make_field<double>("u");
  iso::HaloOptions options;
  options.algorithm = iso::Algorithm::automatic;
  auto halo = grid.halo_exchange(u, options);
  std::snprintf(line, sizeof line, "automatic on %d ranks, 3-D 27-point, %s: picks %s\n", world,
                iso::CostModel::for_comm(grid.comm()).source.c_str(),
                iso::to_string(halo.algorithm()));
  text += line;
  if (iso_test::world_rank() == 0) std::printf("%s", text.c_str());
  EXPECT_EQ(iso::schedule_figures(iso::OffsetList::parse("1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1"),
                                  iso::CartGeometry{{4, 4, 4}, {true, true, true}},
                                  iso::Algorithm::linear, iso::Collective::alltoall)
                .rounds,
            6);
}

}  // namespace
}  // namespace grid_test
