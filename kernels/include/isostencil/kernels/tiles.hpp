// Tiled substeps of deep halos (docs/design/halo-exchange.md#tiled-substeps).
//
// A block of j substeps run box by box (substeps.hpp) streams the fields
// through memory j times. Run tile by tile instead: the interior is cut into
// tiles; for one tile, substep s (1..j-1) computes its region of growth
// g = j - s, the tile grown by g times the reach and clipped to the substep
// box of growth g, into scratch of its own (two buffers, used in turn), and
// substep j writes the tile's own cells of the output field. A tile reads the
// input field in its first substep only and writes the output in its last,
// so each cell comes from memory about once per block (plus the overlap of
// neighbouring tiles, which the caches mostly catch) instead of j times.
//
// Why the regions suffice: a cell of region g reads, one reach away, cells of
// the tile grown by g + 1 that lie in box(g + 1) (region g + 1) or lie beyond
// the global domain in a bounded dimension (boundary cells, never updated).
// A tile whose input footprint (the tile grown by j reaches) holds boundary
// cells copies that footprint into both buffers first; elsewhere a buffer's
// cells outside the regions are never read. Every cell of every substep is
// computed by the sweep's own row kernel from the same neighbour values in the
// same order, so the output is bit-identical to the untiled block.
//
// Tiles are independent (each reads the input field and its own scratch and
// writes its own cells of the output, a different field from the input), so
// they run as the teams of a Kokkos::TeamPolicy, one thread per team, the
// buffers in team scratch (level 1). Host execution spaces only: on a device
// a team's rows would run serially; the callers keep the untiled path there.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/cells.hpp"
#include "isostencil/kernels/sweep.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace isostencil::kernels {

namespace detail {
/// Testing aid: cells added to (> 0) or taken from (< 0) each side of every
/// tile region of growth >= 1 (kept around the tile and within its
/// footprint). Results must then differ (tests/kernels/tiled_substeps_test.cpp);
/// 0 outside tests.
inline int tile_region_error = 0;
}  // namespace detail

/// Scratch a tile's two buffers may take together: a quarter of a 32 MB L3.
/// Large tiles recompute less of their neighbours' cells; measured at 256^3,
/// depth 4 (docs/results/depth/README.md#tiled-substeps), 32x32x256 tiles
/// (buffers in L3) beat 16x16x64 (buffers in L2) by 1.5-1.7x.
inline constexpr std::size_t tile_scratch_bytes = 8 * 1024 * 1024;

/// How a block of `substeps` updates runs tile by tile, made once per block
/// length (plan_tiles), so that a block allocates nothing.
template <int D>
struct TilePlan {
  int substeps = 0;
  Box<D> interior;
  Index<D> tile{};   ///< tile extents (the last tile of a dimension may be smaller)
  Index<D> count{};  ///< tiles per dimension
  std::int64_t tiles = 0;
  Box<D> field;   ///< every cell of the field
  Box<D> domain;  ///< cells inside the global domain in bounded dimensions
  Index<D> reach_lo{}, reach_hi{};
  /// boxes[g]: the substep box of growth g (0 <= g < substeps).
  std::vector<Box<D>> boxes;
  /// One buffer: the largest tile footprint, row-major.
  detail::Strides<D> scratch_stride{};
  std::size_t scratch_cells = 0;
  std::string label;
};

/// Tile extents for a block of `substeps` updates: whole rows (up to 512
/// cells) along the last (contiguous) dimension, the other dimensions grown
/// in turn, 8 cells at a time, while the two buffers fit tile_scratch_bytes.
template <int D>
Index<D> default_tile_extent(const Box<D>& interior, const iso::HaloWidths& reach, int substeps) {
  Index<D> tile{}, extent{}, grow{};
  for (int j = 0; j < D; ++j) {
    extent[j] = std::max(1, interior.end[j] - interior.begin[j]);
    grow[j] = substeps * (reach.lo[static_cast<std::size_t>(j)] + reach.hi[static_cast<std::size_t>(j)]);
    tile[j] = std::min(extent[j], j == D - 1 ? (D == 1 ? 4096 : 512) : 8);
  }
  const auto bytes = [&] {
    std::size_t cells = 2 * sizeof(double);
    for (int j = 0; j < D; ++j) cells *= static_cast<std::size_t>(tile[j] + grow[j]);
    return cells;
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (int j = 0; j + 1 < D; ++j) {
      if (tile[j] >= extent[j]) continue;
      const int before = tile[j];
      tile[j] = std::min(extent[j], tile[j] + 8);
      if (bytes() > tile_scratch_bytes) {
        tile[j] = before;
      } else {
        grew = true;
      }
    }
  }
  return tile;
}

/// The tiles of a block of `substeps` (2 <= substeps <= grid.depth()) updates
/// on `grid`; `boxes` are the substep boxes (UpdatePlan::boxes), `tile_extent`
/// the tile extents (empty: default_tile_extent; values above the interior's
/// extents are clipped).
template <int D>
TilePlan<D> plan_tiles(const core::Grid<D>& grid, const std::vector<Box<D>>& boxes, int substeps,
                       const std::vector<int>& tile_extent, const std::string& label) {
  if (substeps < 2 || substeps > static_cast<int>(boxes.size()))
    throw iso::Error("isostencil::kernels::plan_tiles: a block of " + std::to_string(substeps) +
                     " substeps on a grid of depth " + std::to_string(boxes.size()));
  if (!tile_extent.empty() && static_cast<int>(tile_extent.size()) != D)
    throw iso::Error("isostencil::kernels::plan_tiles: tile extents for " +
                     std::to_string(tile_extent.size()) + " dimensions, the grid has " +
                     std::to_string(D));
  TilePlan<D> plan;
  plan.substeps = substeps;
  plan.interior = boxes[0];
  plan.boxes.assign(boxes.begin(), boxes.begin() + substeps);
  plan.label = label;
  const iso::HaloWidths& reach = grid.reach();
  plan.tile = default_tile_extent<D>(plan.interior, reach, substeps);
  const auto& periodic = grid.decomposition().periodic();
  plan.tiles = 1;
  for (int j = 0; j < D; ++j) {
    const auto jj = static_cast<std::size_t>(j);
    const int extent = plan.interior.end[j] - plan.interior.begin[j];
    if (!tile_extent.empty()) {
      if (tile_extent[jj] < 1)
        throw iso::Error("isostencil::kernels::plan_tiles: tile extent " +
                         std::to_string(tile_extent[jj]) + " in dimension " + std::to_string(j));
      plan.tile[j] = tile_extent[jj];
    }
    plan.tile[j] = std::max(1, std::min(plan.tile[j], extent));
    plan.count[j] = extent > 0 ? (extent + plan.tile[j] - 1) / plan.tile[j] : 0;
    plan.tiles *= plan.count[j];
    plan.reach_lo[j] = reach.lo[jj];
    plan.reach_hi[j] = reach.hi[jj];
    plan.field.begin[j] = 0;
    plan.field.end[j] = grid.field_extent()[j];
    plan.domain.begin[j] = periodic[jj] ? 0 : grid.to_local(j, 0L);
    plan.domain.end[j] = periodic[jj] ? grid.field_extent()[j]
                                      : grid.to_local(j, grid.global_extent()[j]);
  }
  // A buffer holds the largest footprint: a tile grown by `substeps` reaches.
  plan.scratch_cells = 1;
  for (int j = D - 1; j >= 0; --j) {
    plan.scratch_stride[j] = static_cast<std::ptrdiff_t>(plan.scratch_cells);
    plan.scratch_cells *= static_cast<std::size_t>(
        plan.tile[j] + substeps * (plan.reach_lo[j] + plan.reach_hi[j]));
  }
  return plan;
}

namespace detail {

/// `box` grown by `times` reaches, clipped to `clip`.
template <int D>
Box<D> grown_within(const Box<D>& box, const TilePlan<D>& plan, int times, const Box<D>& clip) {
  Box<D> out;
  for (int j = 0; j < D; ++j) {
    out.begin[j] = std::max(box.begin[j] - times * plan.reach_lo[j], clip.begin[j]);
    out.end[j] = std::min(box.end[j] + times * plan.reach_hi[j], clip.end[j]);
  }
  return out;
}

/// Calls row(x, length) for the first cell x of every row (along the last
/// dimension) of a non-empty box, row-major.
template <int D, class Row>
void for_each_row(const Box<D>& box, const Row& row) {
  Index<D> x = box.begin;
  const int length = box.end[D - 1] - box.begin[D - 1];
  for (;;) {
    row(x, length);
    int j = D - 2;
    for (; j >= 0; --j) {
      if (++x[j] < box.end[j]) break;
      x[j] = box.begin[j];
    }
    if (j < 0) return;
  }
}

/// One tile's block of substeps; the sweep (a Jacobi row kernel) reads
/// sweep.in and writes sweep.out through row_between().
template <int D, class Sweep>
struct TileBlock {
  Sweep sweep;
  Strides<D> stride;  // the fields'
  const TilePlan<D>* plan;

  Box<D> tile_box(std::int64_t number) const {
    Box<D> tile;
    for (int j = D - 1; j >= 0; --j) {
      const int c = static_cast<int>(number % plan->count[j]);
      number /= plan->count[j];
      tile.begin[j] = plan->interior.begin[j] + c * plan->tile[j];
      tile.end[j] = std::min(tile.begin[j] + plan->tile[j], plan->interior.end[j]);
    }
    return tile;
  }

  void run(std::int64_t number, double* scratch) const {
    const TilePlan<D>& p = *plan;
    const Box<D> tile = tile_box(number);
    const Box<D> footprint = grown_within(tile, p, p.substeps, p.field);
    double* const buffer[2] = {scratch, scratch + p.scratch_cells};
    const auto in_buffer = [&](const Index<D>& x) {
      std::ptrdiff_t at = 0;
      for (int j = 0; j < D; ++j) at += (x[j] - footprint.begin[j]) * p.scratch_stride[j];
      return at;
    };
    bool boundary = false;
    for (int j = 0; j < D; ++j)
      boundary = boundary || footprint.begin[j] < p.domain.begin[j] ||
                 footprint.end[j] > p.domain.end[j];
    if (boundary) {
      // The boundary cells a region's reads may reach, in both buffers.
      for_each_row<D>(footprint, [&](const Index<D>& x, int length) {
        const double* from = sweep.in + linear_index<D>(x, stride);
        double* to0 = buffer[0] + in_buffer(x);
        double* to1 = buffer[1] + in_buffer(x);
        for (int k = 0; k < length; ++k) to0[k] = to1[k] = from[k];
      });
    }
    const int last = p.substeps;
    for (int s = 1; s <= last; ++s) {
      const int growth = last - s;
      Box<D> region = grown_within(tile, p, growth, p.boxes[static_cast<std::size_t>(growth)]);
      if (growth > 0 && tile_region_error != 0) {
        for (int j = 0; j < D; ++j) {
          region.begin[j] = std::min(tile.begin[j], std::max(footprint.begin[j] + p.reach_lo[j],
                                                             region.begin[j] - tile_region_error));
          region.end[j] = std::max(tile.end[j], std::min(footprint.end[j] - p.reach_hi[j],
                                                         region.end[j] + tile_region_error));
        }
      }
      if (region.empty()) continue;
      const double* from = s == 1 ? nullptr : buffer[(s - 2) % 2];
      double* to = s == last ? nullptr : buffer[(s - 1) % 2];
      for_each_row<D>(region, [&](const Index<D>& x, int length) {
        const std::ptrdiff_t at = linear_index<D>(x, stride);
        const std::ptrdiff_t local = from != nullptr || to != nullptr ? in_buffer(x) : 0;
        sweep.row_between(from != nullptr ? from + local : sweep.in + at,
                          to != nullptr ? to + local : sweep.out + at, at,
                          from != nullptr ? p.scratch_stride : stride, length);
      });
    }
  }
};

template <int D, class Sweep, class ExecutionSpace>
struct TileTeams {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using scratch_view = Kokkos::View<double*, typename ExecutionSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  TileBlock<D, Sweep> block;
  void operator()(const member_type& member) const {
    const scratch_view scratch(member.team_scratch(1), 2 * block.plan->scratch_cells);
    block.run(member.league_rank(), scratch.data());
  }
};

}  // namespace detail

/// Runs a block of plan.substeps updates tile by tile on `space` (a host
/// space): `sweep` is a row kernel reading sweep.in (exchanged to the grid's
/// depth) and writing sweep.out, a different field, whose interior then holds
/// the block's last substep. `stride`: the fields' strides. Fences `space`.
template <int D, class ExecutionSpace, class Sweep>
void run_tiles(const ExecutionSpace& space, const TilePlan<D>& plan, const Sweep& sweep,
               const detail::Strides<D>& stride) {
  static_assert(detail::runs_on_host<ExecutionSpace>,
                "tiled substeps run on host execution spaces only");
  if (plan.tiles == 0) return;
  using Teams = detail::TileTeams<D, Sweep, ExecutionSpace>;
  const std::size_t bytes = Teams::scratch_view::shmem_size(2 * plan.scratch_cells);
  const auto policy = Kokkos::TeamPolicy<ExecutionSpace>(space, static_cast<int>(plan.tiles), 1)
                          .set_scratch_size(1, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(plan.label, policy, Teams{detail::TileBlock<D, Sweep>{sweep, stride, &plan}});
  space.fence();
}

}  // namespace isostencil::kernels
