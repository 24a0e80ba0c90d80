// Deep halos (kernels/include/isostencil/kernels/substeps.hpp): one exchange
// of a ghost region k times as deep, then k updates over shrinking boxes. The
// reference is an independent run at depth 1 (an exchange before every
// update) on the same decomposition: interiors and residual histories must be
// bit-identical at depths 1..8, for Jacobi (star, box and general kernels),
// Life and user kernels, periodic, bounded and mixed, 2-D to 4-D, even and
// uneven. A substep box one cell too small (or, at a bounded side, too large)
// must change the results: the testing aid detail::substep_box_error.
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil/kernels/life.hpp"
#include "isostencil/kernels/user_kernel.hpp"
#include "isostencil_test.hpp"
#include "jacobi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

// ---------------------------------------------------------------------------
// The k-fold sum of a stencil

std::set<std::vector<int>> brute_sum(const core::Stencil& stencil, int k) {
  std::set<std::vector<int>> sums{std::vector<int>(static_cast<std::size_t>(stencil.dims()), 0)};
  for (int step = 0; step < k; ++step) {
    std::set<std::vector<int>> next;
    for (const auto& s : sums)
      for (int i = 0; i < stencil.size(); ++i) {
        auto c = s;
        for (int j = 0; j < stencil.dims(); ++j) c[static_cast<std::size_t>(j)] += stencil.offsets()[i][j];
        next.insert(c);
      }
    sums = next;
  }
  return sums;
}

std::set<std::vector<int>> as_set(const core::Stencil& stencil) {
  std::set<std::vector<int>> out;
  for (int i = 0; i < stencil.size(); ++i)
    out.emplace(stencil.offsets()[i], stencil.offsets()[i] + stencil.dims());
  return out;
}

TEST(DeepHalo, RepeatedStencilIsTheMinkowskiSum) {
  const std::vector<core::Stencil> stencils{
      core::Stencil::star(2, 1), core::Stencil::box(3, 1), core::Stencil::star(3, 2),
      core::Stencil::upwind(2, 1, {-1, 0}), core::Stencil::one_sided_star(3, 1, {1, -1, 0})};
  for (const core::Stencil& stencil : stencils)
    for (int k = 1; k <= 4; ++k) {
      const core::Stencil sum = stencil.repeated(k);
      EXPECT_EQ(as_set(sum), brute_sum(stencil, k)) << stencil.name() << " k = " << k;
      EXPECT_EQ(sum.size(), static_cast<int>(brute_sum(stencil, k).size()));  // no duplicates
      const iso::HaloWidths one = stencil.geometry().widths, many = sum.geometry().widths;
      for (int j = 0; j < stencil.dims(); ++j) {
        EXPECT_EQ(many.lo[static_cast<std::size_t>(j)], k * one.lo[static_cast<std::size_t>(j)]);
        EXPECT_EQ(many.hi[static_cast<std::size_t>(j)], k * one.hi[static_cast<std::size_t>(j)]);
      }
    }
  // A star at depth 2 reads the edges (its ghost directions grow), not the
  // 3-D corners; at depth 3 it reads those too.
  EXPECT_EQ(core::Stencil::star(3, 1).geometry().directions.size(), 6);
  EXPECT_EQ(core::Stencil::star(3, 1).repeated(2).geometry().directions.size(), 18);
  EXPECT_EQ(core::Stencil::star(3, 1).repeated(3).geometry().directions.size(), 26);
  EXPECT_EQ(core::Stencil::box(3, 1).repeated(3).size(), 343);
  EXPECT_THROW((void)core::Stencil::star(2, 1).repeated(0), iso::Error);
}

TEST(DeepHalo, GridHasTheDepthsGhostWidths) {
  core::Grid<3> grid(MPI_COMM_WORLD, {24, 20, 18}, {true, false, true},
                     core::Stencil::upwind(3, 1, {-1, 0, 1}), {}, 3);
  EXPECT_EQ(grid.depth(), 3);
  const iso::HaloWidths reach = grid.stencil().geometry().widths;
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(grid.ghost_lo()[j], 3 * reach.lo[static_cast<std::size_t>(j)]);
    EXPECT_EQ(grid.ghost_hi()[j], 3 * reach.hi[static_cast<std::size_t>(j)]);
    EXPECT_EQ(grid.reach().lo[static_cast<std::size_t>(j)], reach.lo[static_cast<std::size_t>(j)]);
  }
  EXPECT_EQ(grid.halo_stencil().size(), grid.stencil().repeated(3).size());
  EXPECT_EQ(grid.with_depth(1).ghost_lo()[0], reach.lo[0]);
  EXPECT_THROW((void)grid.with_depth(0), iso::Error);
}

// ---------------------------------------------------------------------------
// Jacobi

/// A smooth field with some roughness, from the global index.
template <int D>
double rough(const std::array<long, D>& g) {
  double v = 0.25;
  for (int j = 0; j < D; ++j) v += 0.1 * static_cast<double>((g[j] * (j + 3)) % 7) + 0.01 * static_cast<double>(g[j]);
  return v;
}

/// General weights: a star with unequal arms (no uniform-star or box class).
template <int D>
core::Stencil general_operator() {
  const core::Stencil star = core::Stencil::star(D, 1);
  std::vector<double> weights;
  for (int i = 0; i < star.size(); ++i) {
    int sum = 0, nonzero = 0;
    for (int j = 0; j < D; ++j) {
      sum += star.offsets()[i][j] * (j + 1);
      nonzero += star.offsets()[i][j] != 0;
    }
    weights.push_back(nonzero == 0 ? -2.0 * D - 1.0 : 1.0 + 0.125 * sum);
  }
  return star.with_weights(weights);
}

struct JacobiRun {
  std::vector<double> field;  // the interior on rank 0
  std::vector<kernels::Residual> history;
};

/// `sweeps` is a list of run() calls (each cuts a block short at its end).
template <int D>
std::optional<JacobiRun> run_jacobi(const core::Grid<D>& shallow, int depth, bool overlap,
                                    const std::vector<long>& sweeps) {
  std::optional<core::Grid<D>> grid;
  try {
    grid.emplace(shallow.with_depth(depth));
  } catch (const iso::Error&) {
    return std::nullopt;  // the width rule refuses this depth here (the same on every rank)
  }
  auto u = grid->template make_field<double>("u");
  auto f = grid->template make_field<double>("f");
  iso_test::fill_cells<D>(*grid, u, [](const std::array<long, D>& g) { return rough<D>(g); });
  kernels::set_dirichlet_ghosts<D>(*grid, u, [](const std::array<long, D>& g) {
    double v = 0.5;
    for (int j = 0; j < D; ++j) v += 0.03 * static_cast<double>(g[j]);
    return v;
  });
  // The source in the interior only: a deep Jacobi must exchange it itself.
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), f);
  Kokkos::deep_copy(host, 0.0);
  const auto extent = grid->field_extent();
  for (std::size_t linear = 0; linear < host.span(); ++linear) {
    std::array<int, D> local{};
    std::size_t rest = linear;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(extent[j]));
      rest /= static_cast<std::size_t>(extent[j]);
    }
    if (grid->is_interior(local)) host.data()[linear] = 0.01 * rough<D>(grid->to_global(local));
  }
  Kokkos::deep_copy(f, host);
  kernels::JacobiOptions options;
  options.residual_every = 3;
  options.final_residual = true;
  options.overlap = overlap;
  kernels::Jacobi<D> jacobi(*grid, u, f, options);
  JacobiRun result;
  for (const long n : sweeps) {
    const kernels::JacobiSummary summary = jacobi.run(n);
    result.history.insert(result.history.end(), summary.history.begin(), summary.history.end());
  }
  result.field = iso_test::gather_interior<D>(*grid, jacobi.solution());
  return result;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Same interior and residual history, bit for bit (decided on rank 0, the
/// verdict broadcast so every rank asserts the same).
bool same_run(const JacobiRun& a, const JacobiRun& b, std::string& why) {
  int same = 1;
  if (iso_test::world_rank() == 0) {
    const long at = iso_test::first_bitwise_difference(a.field, b.field);
    if (at >= 0) {
      same = 0;
      why = "fields differ at global cell " + std::to_string(at);
    }
  }
  if (a.history.size() != b.history.size()) {
    same = 0;
    why = "histories have different lengths";
  } else {
    for (std::size_t i = 0; i < a.history.size(); ++i)
      if (!same_bits(a.history[i].l2, b.history[i].l2) ||
          !same_bits(a.history[i].max, b.history[i].max) || a.history[i].sweep != b.history[i].sweep) {
        same = 0;
        why = "residual " + std::to_string(i) + " differs";
        break;
      }
  }
  MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return same != 0;
}

template <int D>
void jacobi_matches_depth_one(const std::array<long, D>& extent, const std::array<bool, D>& periodic,
                              const core::Stencil& stencil, const char* what,
                              const std::vector<bool>& overlaps = {true}) {
  const core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, stencil);
  const std::vector<long> sweeps{5, 1, 7};
  for (const bool overlap : overlaps) {
    const std::optional<JacobiRun> reference = run_jacobi<D>(grid, 1, overlap, sweeps);
    ASSERT_TRUE(reference.has_value());
    int ran = 0;
    for (int depth = 2; depth <= 8; ++depth) {
      const std::optional<JacobiRun> deep = run_jacobi<D>(grid, depth, overlap, sweeps);
      if (!deep) continue;
      ++ran;
      std::string why;
      EXPECT_TRUE(same_run(*reference, *deep, why))
          << what << " D = " << D << " depth " << depth << " overlap " << overlap << ": " << why;
    }
    EXPECT_GE(ran, 1) << what << ": no depth above 1 fits this grid";
  }
}

template <int D>
void jacobi_all_kernels(const std::array<long, D>& extent) {
  std::array<bool, D> all_periodic{}, bounded{}, mixed{};
  for (int j = 0; j < D; ++j) {
    all_periodic[j] = true;
    bounded[j] = false;
    mixed[j] = j % 2 == 0;
  }
  for (const auto& periodic : {all_periodic, bounded, mixed}) {
    jacobi_matches_depth_one<D>(extent, periodic, kernels::star_laplacian(D, 0.5), "star");
    jacobi_matches_depth_one<D>(extent, periodic, kernels::box_laplacian(D, 0.5), "box");
    jacobi_matches_depth_one<D>(extent, periodic, general_operator<D>(), "general");
  }
}

TEST(DeepJacobi, BitIdenticalToDepthOne2D) { jacobi_all_kernels<2>({29, 23}); }
TEST(DeepJacobi, BitIdenticalToDepthOne3D) { jacobi_all_kernels<3>({17, 14, 19}); }
TEST(DeepJacobi, BitIdenticalToDepthOne4D) { jacobi_all_kernels<4>({9, 8, 10, 11}); }
// Large enough that the first substep overlaps the exchange (update.hpp's
// overlap_min_cells) at 1 and 2 ranks.
TEST(DeepJacobi, BitIdenticalWithOverlap3D) {
  jacobi_matches_depth_one<3>({26, 24, 22}, {true, false, true}, kernels::star_laplacian(3), "star",
                              {true, false});
}

/// The testing aid set for one scope.
struct BoxError {
  explicit BoxError(int cells) { kernels::detail::substep_box_error = cells; }
  ~BoxError() { kernels::detail::substep_box_error = 0; }
};

template <int D>
void off_by_one_changes_results(const std::array<bool, D>& periodic, int error) {
  std::array<long, D> extent{};
  for (int j = 0; j < D; ++j) extent[j] = 23 + 2 * j;
  const core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, kernels::star_laplacian(D));
  const std::vector<long> sweeps{9};
  const std::optional<JacobiRun> reference = run_jacobi<D>(grid, 1, false, sweeps);
  ASSERT_TRUE(reference.has_value());
  for (const int depth : {2, 3}) {
    std::optional<JacobiRun> wrong;
    {
      const BoxError aid(error);
      wrong = run_jacobi<D>(grid, depth, false, sweeps);
    }
    if (!wrong) continue;
    // Shrinking can only matter where a substep box reaches beyond the
    // interior on some rank (a single rank bounded on every side has no
    // ghost region to recompute).
    const core::Grid<D> deep = grid.with_depth(depth);
    const bool grows = kernels::substep_box(deep, 1).cells() >
                       kernels::substep_box(deep, 0).cells();
    const bool some_rank_grows = !iso_test::all_ranks(!grows);
    if (error < 0 && !some_rank_grows) continue;
    std::string why;
    EXPECT_FALSE(same_run(*reference, *wrong, why))
        << "depth " << depth << ": substep boxes " << error << " cell(s) off still match depth 1";
    // And without the aid the same run matches again.
    const std::optional<JacobiRun> right = run_jacobi<D>(grid, depth, false, sweeps);
    EXPECT_TRUE(same_run(*reference, *right, why)) << why;
  }
}

TEST(DeepJacobi, BoxOneCellTooSmallChangesResults) {
  off_by_one_changes_results<2>({true, true}, -1);
  off_by_one_changes_results<2>({false, false}, -1);
  off_by_one_changes_results<3>({true, false, true}, -1);
}
// Too large matters where the box crosses a bounded side: it overwrites the
// boundary values the next substep reads. (Too large inside a periodic
// domain computes cells nothing reads.)
TEST(DeepJacobi, BoxOneCellTooLargeChangesResults) {
  off_by_one_changes_results<2>({false, false}, 1);
  off_by_one_changes_results<3>({false, true, false}, 1);
}

// ---------------------------------------------------------------------------
// Life and user kernels

template <int D>
std::vector<std::uint8_t> run_life(const std::array<long, D>& extent, const std::array<bool, D>& periodic,
                                   int depth, bool& fits, long& alive) {
  fits = true;
  kernels::LifeOptions options;
  options.depth = depth;
  std::optional<kernels::Life<D>> life;
  try {
    life.emplace(MPI_COMM_WORLD, extent, periodic, kernels::LifeRule(D == 2 ? "B3/S23" : "B5-7/S5-8", D),
                 options);
  } catch (const iso::Error&) {
    fits = false;
    return {};
  }
  life->fill_random(17, 0.35);
  life->step(4);
  life->step(9);
  life->step(1);
  alive = life->live_cells();
  return life->gather(0);
}

template <int D>
void life_matches_depth_one(const std::array<long, D>& extent) {
  std::array<bool, D> periodic{}, bounded{};
  for (int j = 0; j < D; ++j) {
    periodic[j] = true;
    bounded[j] = false;
  }
  for (const auto& p : {periodic, bounded}) {
    bool fits = true;
    long alive_reference = 0;
    const auto reference = run_life<D>(extent, p, 1, fits, alive_reference);
    for (int depth = 2; depth <= 8; ++depth) {
      long alive = 0;
      const auto deep = run_life<D>(extent, p, depth, fits, alive);
      if (!fits) continue;
      EXPECT_EQ(alive, alive_reference) << "depth " << depth;
      EXPECT_TRUE(iso_test::all_ranks(deep == reference)) << "depth " << depth;
    }
  }
}

TEST(DeepLife, SameCellsAsDepthOne2D) { life_matches_depth_one<2>({37, 29}); }
TEST(DeepLife, SameCellsAsDepthOne3D) { life_matches_depth_one<3>({15, 13, 17}); }

template <int D>
std::optional<std::vector<double>> run_user(const core::Grid<D>& shallow, int depth) {
  std::optional<core::Grid<D>> grid;
  try {
    grid.emplace(shallow.with_depth(depth));
  } catch (const iso::Error&) {
    return std::nullopt;
  }
  auto in = grid->template make_field<double>("in"), out = grid->template make_field<double>("out");
  iso_test::fill_cells<D>(*grid, in, [](const std::array<long, D>& g) { return rough<D>(g); });
  // Upwind transport, (-1, ..) neighbours: an asymmetric reach.
  auto step = kernels::make_stencil_update(
      *grid, in, out, KOKKOS_LAMBDA(const kernels::Neighbors<double, D>& u) {
        kernels::Index<D> back{};
        back[0] = -1;
        kernels::Index<D> side{};
        side[D - 1] = -1;
        return 0.5 * u(kernels::Index<D>{}) + 0.3 * u(back) + 0.2 * u(side);
      });
  step.advance(6);
  step.advance(5);
  return iso_test::gather_interior<D>(*grid, step.input());
}

TEST(DeepUserKernel, SameFieldAsDepthOne) {
  const core::Grid<2> grid(MPI_COMM_WORLD, {31, 26}, {true, false},
                           core::Stencil::upwind(2, 1, {-1, -1}));
  const auto reference = run_user<2>(grid, 1);
  ASSERT_TRUE(reference.has_value());
  for (int depth = 2; depth <= 8; ++depth) {
    const auto deep = run_user<2>(grid, depth);
    if (!deep) continue;
    EXPECT_TRUE(iso_test::all_ranks(iso_test::first_bitwise_difference(*reference, *deep) < 0))
        << "depth " << depth;
  }
}

}  // namespace
