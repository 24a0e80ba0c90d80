// A pattern keeps the block types of its single-field exchanges: the next
// exchange of the same predefined element makes no datatype, its ghosts are
// right, and the types go with the pattern (PMPI handle tracker).
#include "isostencil_test.hpp"
#include "mpi_handle_tracker.hpp"

#include "iso/cost_model.hpp"
#include "iso/halo_exchange.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using iso_hygiene::counts;
using iso_hygiene::datatype;
using iso_test::all_ranks;

long datatypes_created() { return counts().created[datatype]; }

TEST(SharedBlockTypes, ASecondExchangeOfOnePatternMakesNoDatatype) {
  std::vector<int> dims(3, 0);
  iso::CartComm cart(MPI_COMM_WORLD, dims, std::vector<bool>(3, true));
  (void)iso::CostModel::for_comm(cart.get());
  const long live = counts().live[datatype];
  {
    iso::HaloOptions options;
    options.algorithm = iso::Algorithm::torus;
    auto pattern = std::make_shared<const iso::HaloPattern>(cart.get(), std::vector<int>{4, 5, 3},
                                                            iso::stencil_geometry(iso::OffsetList::moore(3, 1)),
                                                            std::vector<long>{}, options);
    long cells = 1;
    for (int e : pattern->layout(MPI_DOUBLE).extent()) cells *= e;
    std::vector<double> a(static_cast<std::size_t>(cells)), b(a);
    std::vector<int> n(static_cast<std::size_t>(cells));
    long before = datatypes_created();
    { iso::HaloExchange first(pattern, MPI_DOUBLE, {a.data()}); }
    const long made_first = datatypes_created() - before;
    before = datatypes_created();
    iso::HaloExchange second(pattern, MPI_DOUBLE, {b.data()});
    const long made_second = datatypes_created() - before;
    // The first made a subarray per block (52) and committed each.
    EXPECT_GE(made_first, 2 * pattern->directions().size()) << "the first exchange";
    EXPECT_EQ(made_second, 0) << "the second exchange of the same element";
    EXPECT_TRUE(all_ranks(second.validate().ok)) << "the second exchange's ghosts against the naive exchange";
    // Another element makes its own types, and is right.
    before = datatypes_created();
    iso::HaloExchange ints(pattern, MPI_INT, {n.data()});
    EXPECT_GE(datatypes_created() - before, 2 * pattern->directions().size()) << "ints";
    EXPECT_TRUE(all_ranks(ints.validate().ok)) << "the ints' ghosts";
    // Two fields: types of their own (structs at the fields' addresses).
    iso::HaloExchange both(pattern, MPI_DOUBLE, {a.data(), b.data()});
    EXPECT_TRUE(all_ranks(both.validate().ok)) << "two fields";
  }
  // Pattern and exchanges gone: so are their types (the communicator the
  // neighborhoods share stays with the Cartesian one).
  EXPECT_EQ(counts().live[datatype], live) << "datatypes left";
}

}  // namespace
