// Persistent iso::alltoallw_init and iso::alltoallv_init with every algorithm
// (linear, torus, direct, mpi, automatic): subarray halo exchanges (faces,
// edges, corners of a 3-D array with ghost layers), vector and other derived
// datatypes with different send and receive types of equal signature, the
// paper's Figure 3 block sizes m^(d - ||v||), uneven per-process block sizes
// obeying the rule of docs/design/irregular.md#the-signature-rule, zero-size blocks, random
// neighborhoods on random grids. Every result is compared bitwise with the
// data expected from the source ranks (blocks without a source must stay
// untouched), with the linear algorithm and with MPI_Neighbor_alltoallw.
//
// Knobs (environment): ISO_IRREGULAR_CASES (random cases per API, default 150),
// ISO_IRREGULAR_SEED.
#include "irregular_support.hpp"
#include "layouts.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace iso_irregular_test {
namespace {

class IrregularEnvironment : public ::testing::Environment {
public:
  // Algorithm::automatic must not calibrate or write into $HOME in tests
  // (ctest sets this too; this covers runs by hand).
  void SetUp() override { setenv("ISO_COST_MODEL", "defaults", 0); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new IrregularEnvironment);

std::vector<bool> all_periodic(int d, bool value) { return std::vector<bool>(static_cast<std::size_t>(d), value); }

// Runs a case with both APIs where the layout allows; returns whether all ranks passed.
bool check_w(const Case& c, int generations = 2) {
  Watchdog guard("alltoallw case " + c.name, 120);
  return report(c, run_case(c, Api::alltoallw, all_algorithms(), generations), "alltoallw");
}

bool check_v(const Case& c, int generations = 2) {
  Watchdog guard("alltoallv case " + c.name, 120);
  return report(c, run_case(c, Api::alltoallv, all_algorithms(), generations), "alltoallv");
}

Case make_case(std::string name, std::vector<int> dims, std::vector<bool> periodic,
               std::vector<std::vector<int>> offsets) {
  Case c;
  c.name = std::move(name);
  c.dims = std::move(dims);
  c.periodic = std::move(periodic);
  c.offsets = std::move(offsets);
  return c;
}

// ---------------------------------------------------------------------------
// Halo exchange with subarray datatypes

// Local interior sizes of the process at `coords`: uneven (depends on the
// coordinate of the same dimension only, as in a block decomposition).
std::vector<int> interior(const std::vector<int>& coords, int base) {
  std::vector<int> n;
  for (std::size_t j = 0; j < coords.size(); ++j) n.push_back(base + (coords[j] % 2) + static_cast<int>(j % 2));
  return n;
}

// Block i of a Moore r=1 halo exchange on a d-D array with one ghost layer:
// send the interior layer adjacent to direction v_i, receive into the ghost
// layer on the opposite side (the data comes from x - v_i).
ProcessLayout halo_layout(const std::vector<std::vector<int>>& offsets, const std::vector<int>& coords, int base) {
  const int d = static_cast<int>(coords.size());
  const std::vector<int> n = interior(coords, base);
  std::vector<int> sizes(static_cast<std::size_t>(d));
  long bytes = 4;
  for (int j = 0; j < d; ++j) {
    sizes[static_cast<std::size_t>(j)] = n[static_cast<std::size_t>(j)] + 2;
    bytes *= sizes[static_cast<std::size_t>(j)];
  }
  ProcessLayout layout;
  for (const auto& v : offsets) {
    std::vector<int> sub(static_cast<std::size_t>(d)), send_start(static_cast<std::size_t>(d)),
        recv_start(static_cast<std::size_t>(d));
    for (int j = 0; j < d; ++j) {
      const std::size_t u = static_cast<std::size_t>(j);
      sub[u] = v[u] == 0 ? n[u] : 1;
      send_start[u] = v[u] > 0 ? n[u] : 1;
      recv_start[u] = v[u] > 0 ? 0 : (v[u] < 0 ? n[u] + 1 : 1);
    }
    BlockSpec send, recv;
    send.type = TypeSpec::make_subarray(d, sizes.data(), sub.data(), send_start.data());
    send.count = 1;
    recv.type = TypeSpec::make_subarray(d, sizes.data(), sub.data(), recv_start.data());
    recv.count = 1;
    layout.send.blocks.push_back(send);
    layout.recv.blocks.push_back(recv);
  }
  layout.send.bytes = layout.recv.bytes = bytes;
  return layout;
}

TEST(IrregularAlltoallw, HaloExchangeSubarrays3D) {
  const int p = world_size();
  const auto offsets = moore(3, 1);
  int passed = 0, total = 0;
  for (const auto& periodic : {all_periodic(3, true), all_periodic(3, false), std::vector<bool>{true, false, true}}) {
    Case c = make_case("halo3d-moore-r1", dims_create(p, 3), periodic, offsets);
    c.layout = [offsets](const std::vector<int>& coords, int) { return halo_layout(offsets, coords, 2); };
    ++total;
    passed += check_w(c) ? 1 : 0;
  }
  EXPECT_EQ(passed, total);
}

// The usual halo exchange: one array is both the send and the receive buffer
// (interior read, ghost layers written; disjoint regions).
TEST(IrregularAlltoallw, HaloExchangeInOneArray) {
  const int p = world_size();
  const auto offsets = moore(3, 1);
  int failures = 0;
  for (const auto& periodic : {all_periodic(3, true), std::vector<bool>{false, true, false}}) {
    Watchdog guard("halo exchange in one array", 120);
    Case c = make_case("halo3d-one-array", dims_create(p, 3), periodic, offsets);
    c.layout = [offsets](const std::vector<int>& coords, int) { return halo_layout(offsets, coords, 3); };
    iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
    iso::Neighborhood nbh(cart.get(), c.offset_list());
    const int rank = nbh.rank();
    const ProcessLayout mine = c.layout(nbh.coords(), rank);
    TypePool pool;
    const CallArgs args = call_args(mine, pool);
    const std::vector<int> sources = independent_sources(cart.get(), offsets);
    std::vector<std::string> errors;
    for (iso::Algorithm algorithm : all_algorithms()) {
      Buffer array(mine.send.bytes);
      array.fill_values(1, rank);
      iso::Operation op = iso::alltoallw_init(nbh, array.origin(), args.send_counts.data(), args.send_displs_w.data(),
                                              args.send_types.data(), array.origin(), args.recv_counts.data(),
                                              args.recv_displs_w.data(), args.recv_types.data(), {algorithm, false});
      for (int g = 1; g <= 2; ++g) {
        array.fill_values(g, rank);
        Buffer expected = array;  // interior and uncovered ghosts keep their values
        for (std::size_t i = 0; i < sources.size(); ++i) {
          if (sources[i] < 0) continue;
          std::vector<int> coords(3);
          MPI_Cart_coords(cart.get(), sources[i], 3, coords.data());
          const std::vector<long> from = c.layout(coords, sources[i]).send.blocks[i].offsets();
          const std::vector<long> to = mine.recv.blocks[i].offsets();
          for (std::size_t k = 0; k < to.size() && k < from.size(); ++k)
            expected.set(to[k], value_of(g, sources[i], from[k]));
        }
        op.run();
        const std::string diff = array.first_difference(expected);
        if (!diff.empty())
          errors.push_back(std::string(iso::to_string(algorithm)) + " generation " + std::to_string(g) + ": " + diff);
      }
    }
    if (!report(c, CaseResult{errors}, "alltoallw (one array)")) ++failures;
  }
  EXPECT_EQ(failures, 0);
}

// ---------------------------------------------------------------------------
// Datatype shapes, Figure 3 sizes, uneven and zero sizes

TEST(IrregularAlltoallw, VectorAndMixedTypesSameSignature) {
  const int p = world_size();
  int failures = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto offsets = moore(2, 1, seed == 2);
    Case c = make_case("moore2d-types-seed" + std::to_string(seed), dims_create(p, 2),
                       {seed != 3, seed == 1}, offsets);
    c.layout = w_layout(static_cast<int>(offsets.size()), uneven(offsets, 3, 0), seed, /*vary_by_rank=*/seed != 1);
    if (!check_w(c)) ++failures;
  }
  EXPECT_EQ(failures, 0);
}

TEST(IrregularAlltoallw, Figure3BlockSizes) {
  const int p = world_size();
  int failures = 0;
  struct Shape { int d; int m; bool self; };
  // m = 40 makes face blocks 6.4 KB, so torus rounds go beyond the eager limit.
  for (const Shape shape : {Shape{3, 4, false}, Shape{3, 3, true}, Shape{4, 3, false}, Shape{3, 40, false}}) {
    const auto offsets = moore(shape.d, 1, shape.self);
    for (bool periodic : {true, false}) {
      Case c = make_case("figure3-d" + std::to_string(shape.d) + "-m" + std::to_string(shape.m) +
                             (shape.self ? "-self" : ""),
                         dims_create(p, shape.d), all_periodic(shape.d, periodic), offsets);
      c.layout = w_layout(static_cast<int>(offsets.size()), figure3(offsets, shape.m), 40u + static_cast<unsigned>(shape.d));
      if (!check_w(c, periodic ? 2 : 1)) ++failures;
    }
  }
  EXPECT_EQ(failures, 0);
}

// Both sides of the small-message path's limits (halo/src/operation_build.cpp):
// messages of runs flattened from the datatypes travel through a contiguous
// image up to 4000 bytes and with their datatype above; local moves are
// memcpy's of runs up to 16384 runs and MPI_Pack/MPI_Unpack beyond. Uniform
// block sizes put the message-combining rounds (about 9 blocks in 3-D, 3 in
// 2-D) and single blocks just below and just above the limits, with every
// block shape (holes, negative lower bounds, resized, subarrays), on tori and
// meshes.
TEST(IrregularAlltoallw, SizesAroundTheSmallMessageLimits) {
  const int p = world_size();
  int failures = 0;
  struct Shape { int d; long ints; };
  // 3-D rounds: 9 x 105 x 4 B = 3780 B and 9 x 115 x 4 B = 4140 B; 2-D
  // rounds: 3 x 330 and 3 x 340 ints; single blocks of exactly 4000 and of
  // 4004 bytes; 17000 ints (17000 runs where the shape has holes).
  for (const Shape shape : {Shape{3, 105}, Shape{3, 115}, Shape{2, 330}, Shape{2, 340}, Shape{2, 1000},
                            Shape{2, 1001}, Shape{2, 17000}}) {
    const auto offsets = moore(shape.d, 1);
    for (bool periodic : {true, false}) {
      Case c = make_case("limits-d" + std::to_string(shape.d) + "-n" + std::to_string(shape.ints),
                         dims_create(p, shape.d), all_periodic(shape.d, periodic), offsets);
      const long n = shape.ints;
      c.layout = w_layout(static_cast<int>(offsets.size()), [n](int, const std::vector<int>&) { return n; },
                          60u + static_cast<unsigned>(n) + (periodic ? 1u : 0u));
      if (!check_w(c, periodic ? 2 : 1)) ++failures;
    }
    Case v = make_case("v-limits-d" + std::to_string(shape.d) + "-n" + std::to_string(shape.ints),
                       dims_create(p, shape.d), all_periodic(shape.d, true), offsets);
    const long n = shape.ints;
    v.layout = v_layout(static_cast<int>(offsets.size()), [n](int, const std::vector<int>&) { return n; },
                        static_cast<int>((n / 10) % 2), 90u + static_cast<unsigned>(n));
    if (!check_v(v, 1)) ++failures;
  }
  EXPECT_EQ(failures, 0);
}

TEST(IrregularAlltoallw, UnevenPerProcessSizes) {
  const int p = world_size();
  int failures = 0;
  for (int d : {2, 3}) {
    const auto offsets = moore(d, 1, true);
    std::vector<bool> periodic = all_periodic(d, true);
    periodic[0] = false;
    // Grid with a long first dimension so the coordinates vary a lot.
    std::vector<int> dims(static_cast<std::size_t>(d), 1);
    dims[0] = p;
    Case c = make_case("uneven-" + std::to_string(d) + "d-line", dims, periodic, offsets);
    c.layout = w_layout(static_cast<int>(offsets.size()), uneven(offsets, 1, 1), 7);
    if (!check_w(c)) ++failures;
    Case balanced = make_case("uneven-" + std::to_string(d) + "d", dims_create(p, d), periodic, offsets);
    balanced.layout = w_layout(static_cast<int>(offsets.size()), uneven(offsets, 1, 2), 8);
    if (!check_w(balanced)) ++failures;
  }
  // Non-box neighborhood with far offsets (|v_j| beyond the grid).
  const std::vector<std::vector<int>> far = {{2, 0}, {0, -3}, {1, 1}, {0, 0}, {-2, 1}, {2, 0}, {0, 5}};
  Case c = make_case("uneven-far", dims_create(p, 2), {true, false}, far);
  c.layout = w_layout(static_cast<int>(far.size()), uneven(far, 2, 3), 9);
  if (!check_w(c)) ++failures;
  EXPECT_EQ(failures, 0);
}

TEST(IrregularAlltoallw, ZeroSizeBlocks) {
  const int p = world_size();
  int failures = 0;
  const auto offsets = moore(3, 1, true);
  const int s = static_cast<int>(offsets.size());
  // Every third block empty (as count 0, as count 1 of an empty type, ...).
  Case some = make_case("zero-every-third", dims_create(p, 3), {true, false, true}, offsets);
  some.layout = w_layout(s, [](int i, const std::vector<int>&) { return i % 3 == 0 ? 0L : 2L; }, 11);
  if (!check_w(some)) ++failures;
  // Empty on some processes only: sum of the coordinates where v_ij == 0.
  Case uneven_zero = make_case("zero-at-low-coords", dims_create(p, 3), {false, true, false}, offsets);
  uneven_zero.layout = w_layout(s, uneven(offsets, 0, 1), 12);
  if (!check_w(uneven_zero)) ++failures;
  // Every block empty: no data moves at all.
  Case none = make_case("all-empty", dims_create(p, 3), {true, true, true}, offsets);
  none.layout = w_layout(s, [](int, const std::vector<int>&) { return 0L; }, 13);
  if (!check_w(none)) ++failures;
  // Only the faces carry data (edges and corners empty): whole torus rounds
  // then carry nothing for some processes.
  Case faces = make_case("faces-only", dims_create(p, 3), {true, true, false}, offsets);
  faces.layout = w_layout(
      s, [offsets](int i, const std::vector<int>&) { return nonzeros(offsets[static_cast<std::size_t>(i)]) == 1 ? 3L : 0L; },
      14);
  if (!check_w(faces)) ++failures;
  EXPECT_EQ(failures, 0);
}

// A neighborhood without offsets: null arrays are fine, every algorithm
// completes at once, with and without verification.
TEST(IrregularAlltoallw, EmptyNeighborhood) {
  Watchdog guard("empty neighborhood", 60);
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(world_size(), 2), {true, false});
  iso::Neighborhood empty(cart.get(), iso::OffsetList(2, {}));
  std::string error;
  for (iso::Algorithm algorithm : all_algorithms())
    for (bool verify : {false, true}) {
      try {
        iso::Operation w = iso::alltoallw_init(empty, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, {algorithm, verify});
        iso::Operation v = iso::alltoallv_init(empty, nullptr, nullptr, nullptr, MPI_INT, nullptr, nullptr, nullptr,
                                               MPI_INT, {algorithm, verify});
        w.run();
        v.start();
        while (!v.test()) {
        }
      } catch (const iso::Error& e) {
        error = std::string(iso::to_string(algorithm)) + ": " + e.what();
      }
    }
  EXPECT_TRUE(all_ranks(error.empty())) << error;
}

// ---------------------------------------------------------------------------
// Random neighborhoods and grids

// d = 1..4, a random factorization of nprocs (sizes 1 and 2 appear), mixed
// periodic flags, 1..10 offsets with coordinates in [-3, 3] (beyond the grid),
// repeats and zero vectors.
Case random_case(std::mt19937_64& rng, int nprocs, int index) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int d = pick(1, 4);
  std::vector<int> dims(static_cast<std::size_t>(d), 1);
  int rest = nprocs;
  for (int f = 2; rest > 1;) {
    if (rest % f == 0) {
      dims[static_cast<std::size_t>(pick(0, d - 1))] *= f;
      rest /= f;
    } else {
      ++f;
    }
  }
  std::vector<bool> periodic;
  for (int j = 0; j < d; ++j) periodic.push_back(pick(0, 2) != 0);
  std::vector<std::vector<int>> offsets;
  const int s = pick(1, 10);
  for (int i = 0; i < s; ++i) {
    if (!offsets.empty() && pick(0, 7) == 0) {
      offsets.push_back(offsets[static_cast<std::size_t>(pick(0, static_cast<int>(offsets.size()) - 1))]);
      continue;
    }
    std::vector<int> v(static_cast<std::size_t>(d), 0);
    if (pick(0, 9) != 0)
      for (int& x : v) x = pick(0, 2) == 0 ? 0 : pick(-3, 3);
    offsets.push_back(v);
  }
  Case c = make_case("random#" + std::to_string(index), dims, periodic, offsets);
  return c;
}

SizeFn random_sizes(std::mt19937_64& rng, const std::vector<std::vector<int>>& offsets) {
  std::vector<long> base;
  std::vector<std::vector<long>> weight;
  for (const auto& v : offsets) {
    base.push_back(std::uniform_int_distribution<int>(-1, 3)(rng));  // -1: zero-size
    std::vector<long> w;
    for (std::size_t j = 0; j < v.size(); ++j) w.push_back(v[j] == 0 ? std::uniform_int_distribution<int>(0, 2)(rng) : 0);
    weight.push_back(w);
  }
  return [base, weight](int i, const std::vector<int>& coords) {
    const std::size_t u = static_cast<std::size_t>(i);
    long n = std::max(0L, base[u]);
    for (std::size_t j = 0; j < coords.size(); ++j) n += weight[u][j] * coords[j];
    return n;
  };
}

std::uint64_t random_seed() {
  return static_cast<std::uint64_t>(env_int("ISO_IRREGULAR_SEED", 31337)) * 1000003u +
         static_cast<std::uint64_t>(world_size());
}

TEST(IrregularAlltoallw, RandomNeighborhoods) {
  const std::uint64_t seed = random_seed();
  std::mt19937_64 rng(seed);  // same seed, same draws on every rank
  const int count = env_int("ISO_IRREGULAR_CASES", 150);
  int failures = 0;
  for (int n = 0; n < count; ++n) {
    Case c = random_case(rng, world_size(), n);
    c.name += " (seed " + std::to_string(seed) + ")";
    c.layout = w_layout(static_cast<int>(c.offsets.size()), random_sizes(rng, c.offsets), rng());
    if (!check_w(c) && ++failures >= 4) break;
  }
  EXPECT_EQ(failures, 0);
}

TEST(IrregularAlltoallv, RandomNeighborhoods) {
  const std::uint64_t seed = random_seed() + 17;
  std::mt19937_64 rng(seed);
  const int count = env_int("ISO_IRREGULAR_CASES", 150);
  int failures = 0;
  for (int n = 0; n < count; ++n) {
    Case c = random_case(rng, world_size(), n);
    c.name += " (seed " + std::to_string(seed) + ")";
    c.layout = v_layout(static_cast<int>(c.offsets.size()), random_sizes(rng, c.offsets), static_cast<int>(rng() % 2), rng());
    if (!check_v(c) && ++failures >= 4) break;
  }
  EXPECT_EQ(failures, 0);
}

TEST(IrregularAlltoallv, Figure3AndUnevenSizes) {
  const int p = world_size();
  int failures = 0;
  for (int d : {3, 4}) {
    const auto offsets = moore(d, 1);
    for (int family : {0, 1}) {
      Case c = make_case("v-figure3-d" + std::to_string(d) + "-family" + std::to_string(family), dims_create(p, d),
                         all_periodic(d, family == 0), offsets);
      c.layout = v_layout(static_cast<int>(offsets.size()), figure3(offsets, 3), family, 5u + static_cast<unsigned>(d));
      if (!check_v(c, 1)) ++failures;
    }
  }
  const auto offsets = moore(3, 1, true);
  Case c = make_case("v-uneven-3d", dims_create(p, 3), {true, false, true}, offsets);
  c.layout = v_layout(static_cast<int>(offsets.size()), uneven(offsets, 1, 1), 1, 77);
  if (!check_v(c)) ++failures;
  Case zero = make_case("v-uneven-zero-3d", dims_create(p, 3), {false, false, true}, offsets);
  zero.layout = v_layout(static_cast<int>(offsets.size()), uneven(offsets, 0, 1), 0, 78);
  if (!check_v(zero)) ++failures;
  EXPECT_EQ(failures, 0);
}

// Blocks of {int, double} records: padded structs (extent 16) on the send
// side, packed records (int at 0, double at 4, extent 12) on the receive side.
// Same signature, different layouts, staged through T slots by the
// message-combining algorithms.
TEST(IrregularAlltoallw, MixedBasicTypesPaddedVersusPacked) {
  Watchdog guard("mixed basic types", 60);
  const int p = world_size();
  const auto offsets = moore(3, 1);
  const int s = static_cast<int>(offsets.size());
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(p, 3), {true, false, true});
  std::vector<int> flat;
  for (const auto& v : offsets) flat.insert(flat.end(), v.begin(), v.end());
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(3, flat));
  const int rank = nbh.rank();
  MPI_Datatype padded = MPI_DATATYPE_NULL, packed = MPI_DATATYPE_NULL, tmp = MPI_DATATYPE_NULL;
  {
    int lengths[2] = {1, 1};
    MPI_Aint padded_at[2] = {0, 8}, packed_at[2] = {0, 4};
    MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, lengths, padded_at, members, &tmp);
    MPI_Type_create_resized(tmp, 0, 16, &padded);
    MPI_Type_free(&tmp);
    MPI_Type_create_struct(2, lengths, packed_at, members, &tmp);
    MPI_Type_create_resized(tmp, 0, 12, &packed);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&padded);
    MPI_Type_commit(&packed);
  }
  // Block i holds 1 + nonzeros(v_i) records.
  std::vector<int> counts;
  std::vector<MPI_Aint> sdispls, rdispls;
  MPI_Aint sbytes = 0, rbytes = 0;
  for (const auto& v : offsets) {
    const int n = 1 + nonzeros(v);
    counts.push_back(n);
    sdispls.push_back(sbytes);
    rdispls.push_back(rbytes);
    sbytes += 16 * n + 16;
    rbytes += 12 * n + 4;
  }
  std::vector<MPI_Datatype> stypes(static_cast<std::size_t>(s), padded), rtypes(static_cast<std::size_t>(s), packed);
  auto record_int = [](int gen, int r, int i, int k) { return gen * 1000000 + r * 10000 + i * 100 + k; };
  auto record_double = [](int gen, int r, int i, int k) { return gen + 0.25 * r + i / 64.0 + k / 4096.0; };
  std::vector<std::string> errors;
  for (iso::Algorithm algorithm : all_algorithms()) {
    std::vector<unsigned char> send(static_cast<std::size_t>(sbytes), 0), recv(static_cast<std::size_t>(rbytes), 0xAB);
    iso::Operation op = iso::alltoallw_init(nbh, send.data(), counts.data(), sdispls.data(), stypes.data(),
                                            recv.data(), counts.data(), rdispls.data(), rtypes.data(),
                                            {algorithm, true});
    for (int gen = 1; gen <= 2; ++gen) {
      for (int i = 0; i < s; ++i)
        for (int k = 0; k < counts[static_cast<std::size_t>(i)]; ++k) {
          const int iv = record_int(gen, rank, i, k);
          const double dv = record_double(gen, rank, i, k);
          std::memcpy(&send[static_cast<std::size_t>(sdispls[static_cast<std::size_t>(i)] + 16 * k)], &iv, 4);
          std::memcpy(&send[static_cast<std::size_t>(sdispls[static_cast<std::size_t>(i)] + 16 * k + 8)], &dv, 8);
        }
      std::fill(recv.begin(), recv.end(), 0xAB);
      op.run();
      std::vector<unsigned char> expected(static_cast<std::size_t>(rbytes), 0xAB);
      for (int i = 0; i < s; ++i) {
        const int source = nbh.source_rank(i);
        if (source < 0) continue;
        for (int k = 0; k < counts[static_cast<std::size_t>(i)]; ++k) {
          const int iv = record_int(gen, source, i, k);
          const double dv = record_double(gen, source, i, k);
          std::memcpy(&expected[static_cast<std::size_t>(rdispls[static_cast<std::size_t>(i)] + 12 * k)], &iv, 4);
          std::memcpy(&expected[static_cast<std::size_t>(rdispls[static_cast<std::size_t>(i)] + 12 * k + 4)], &dv, 8);
        }
      }
      if (recv != expected && errors.size() < 3)
        errors.push_back(std::string(iso::to_string(algorithm)) + " generation " + std::to_string(gen) +
                         ": receive buffer differs");
    }
  }
  MPI_Type_free(&padded);
  MPI_Type_free(&packed);
  EXPECT_TRUE(all_ranks(errors.empty())) << (errors.empty() ? "(other rank)" : errors[0]);
}

// Two operations on one neighborhood active at once, started and completed in
// different orders on different ranks: each has its own communicator.
TEST(IrregularAlltoallw, TwoActiveOperationsInDifferentOrders) {
  Watchdog guard("two active operations", 60);
  const int p = world_size();
  const auto offsets = moore(2, 2, true);  // 8 torus rounds
  Case c = make_case("two-ops", dims_create(p, 2), {true, false}, offsets);
  c.layout = w_layout(static_cast<int>(offsets.size()), uneven(offsets, 2, 1), 5);
  iso::CartComm cart(MPI_COMM_WORLD, c.dims, c.periodic);
  iso::Neighborhood nbh(cart.get(), c.offset_list());
  const int rank = nbh.rank();
  const ProcessLayout mine = c.layout(nbh.coords(), rank);
  TypePool pool;
  const CallArgs args = call_args(mine, pool);
  const std::vector<int> sources = independent_sources(cart.get(), offsets);
  std::string failure;
  for (iso::Algorithm a : all_algorithms())
    for (iso::Algorithm b : {iso::Algorithm::torus, iso::Algorithm::mpi}) {
      Buffer send_a(mine.send.bytes), recv_a(mine.recv.bytes), send_b(mine.send.bytes), recv_b(mine.recv.bytes);
      iso::Operation op_a = init_operation(Api::alltoallw, nbh, args, send_a, recv_a, {a, false});
      iso::Operation op_b = init_operation(Api::alltoallw, nbh, args, send_b, recv_b, {b, false});
      bool consistent = true;
      for (int round = 0; round < 3; ++round) {
        send_a.fill_values(10 + round, rank);
        send_b.fill_values(20 + round, rank);
        recv_a.fill_sentinel();
        recv_b.fill_sentinel();
        const bool a_first = (rank + round) % 2 == 0;
        (a_first ? op_a : op_b).start();
        (a_first ? op_b : op_a).start();
        if (round == 2) {
          // wait() in opposite orders on neighbouring ranks: each wait must
          // also progress the other active operation.
          (rank % 2 == 0 ? op_b : op_a).wait();
          (rank % 2 == 0 ? op_a : op_b).wait();
        } else {
          bool done_a = false, done_b = false;
          while (!done_a || !done_b) {
            if (rank % 2 == 0) {
              done_b = done_b || op_b.test();
              done_a = done_a || op_a.test();
            } else {
              done_a = done_a || op_a.test();
              done_b = done_b || op_b.test();
            }
          }
        }
        const Buffer want_a = expected_receive(cart.get(), c, mine, sources, 10 + round, consistent);
        const Buffer want_b = expected_receive(cart.get(), c, mine, sources, 20 + round, consistent);
        const std::string diff_a = recv_a.first_difference(want_a), diff_b = recv_b.first_difference(want_b);
        if (failure.empty() && !(diff_a.empty() && diff_b.empty()))
          failure = std::string(iso::to_string(a)) + " with " + iso::to_string(b) + ": " + diff_a + " / " + diff_b;
      }
    }
  EXPECT_TRUE(all_ranks(failure.empty())) << failure;
}

// MPI_Neighbor_alltoallw takes MPI_BOTTOM with absolute addresses as
// displacements; "as MPI_Neighbor_alltoallw" (collectives.hpp) suggests the
// same works here.
TEST(IrregularAlltoallw, MpiBottomWithAbsoluteAddresses) {
  Watchdog guard("MPI_BOTTOM alltoallw", 60);
  const int p = world_size();
  iso::CartComm cart(MPI_COMM_WORLD, {p}, {true});
  const std::vector<std::vector<int>> offsets = {{1}, {-1}, {0}};
  iso::Neighborhood nbh(cart.get(), iso::OffsetList(1, {1, -1, 0}));
  const int rank = nbh.rank();
  std::vector<int> send(3), recv(3, -1);
  for (int i = 0; i < 3; ++i) send[static_cast<std::size_t>(i)] = 100 * rank + i;
  std::vector<int> counts(3, 1);
  std::vector<MPI_Aint> sdispls(3), rdispls(3);
  for (int i = 0; i < 3; ++i) {
    MPI_Get_address(&send[static_cast<std::size_t>(i)], &sdispls[static_cast<std::size_t>(i)]);
    MPI_Get_address(&recv[static_cast<std::size_t>(i)], &rdispls[static_cast<std::size_t>(i)]);
  }
  std::vector<MPI_Datatype> types(3, MPI_INT);
  std::string error;
  bool ok = true;
  for (iso::Algorithm algorithm : all_algorithms()) {
    std::fill(recv.begin(), recv.end(), -1);
    try {
      iso::Operation op = iso::alltoallw_init(nbh, MPI_BOTTOM, counts.data(), sdispls.data(), types.data(), MPI_BOTTOM,
                                              counts.data(), rdispls.data(), types.data(), {algorithm, false});
      op.run();
      for (int i = 0; i < 3; ++i)
        ok = ok && recv[static_cast<std::size_t>(i)] == 100 * nbh.source_rank(i) + i;
    } catch (const iso::Error& e) {
      ok = false;
      if (error.empty()) error = std::string(iso::to_string(algorithm)) + ": " + e.what();
    }
  }
  EXPECT_TRUE(all_ranks(ok)) << "alltoallw with MPI_BOTTOM and absolute addresses: "
                             << (error.empty() ? "wrong data" : error);
}

}  // namespace
}  // namespace iso_irregular_test
