// An MPI whose datatype contents do not fit their combiner (the wrappers of
// mislabelled_types.cpp: subarrays reported as INDEXED, as SimGrid SMPI
// does) must not make the library read those contents by the wrong layout:
// the blocks go by the datatype path, and the ghosts stay right. Without the
// check (block_types.cpp, Contents::well_formed) the flattened runs of each
// block are wrong and the validation against the naive exchange fails.
#include "isostencil_test.hpp"

#include "iso/halo_exchange.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <vector>

namespace {

using iso_test::all_ranks;

class MislabelledTypes : public ::testing::TestWithParam<iso::Algorithm> {};

TEST_P(MislabelledTypes, GhostsStayRight) {
  int combiner = 0, integers = 0, addresses = 0, types = 0;
  MPI_Datatype sub = MPI_DATATYPE_NULL;
  const int sizes[2] = {4, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
  MPI_Type_get_envelope(sub, &integers, &addresses, &types, &combiner);
  MPI_Type_free(&sub);
  ASSERT_EQ(combiner, MPI_COMBINER_INDEXED) << "the wrappers are not linked in";

  std::vector<int> dims(3, 0);
  iso::CartComm cart(MPI_COMM_WORLD, dims, std::vector<bool>(3, true));
  iso::HaloOptions options;
  options.algorithm = GetParam();
  auto pattern = std::make_shared<const iso::HaloPattern>(cart.get(), std::vector<int>{5, 4, 3},
                                                          iso::stencil_geometry(iso::OffsetList::moore(3, 1)),
                                                          std::vector<long>{}, options);
  long cells = 1;
  for (int e : pattern->layout(MPI_DOUBLE).extent()) cells *= e;
  std::vector<double> field(static_cast<std::size_t>(cells));
  iso::HaloExchange exchange(pattern, MPI_DOUBLE, {field.data()});
  EXPECT_TRUE(all_ranks(exchange.validate().ok)) << "ghosts against the naive exchange";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, MislabelledTypes,
                         ::testing::Values(iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct));

}  // namespace
