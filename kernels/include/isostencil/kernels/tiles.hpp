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
// A tile that spans the whole interior along dimension 0 (the default for
// D >= 2) runs as a wavefront instead, with no cell computed twice: planes
// (cells of one dimension-0 index) go through the substeps one behind the
// other, substep s at plane z while substep s - 1 is `reach_hi` planes ahead,
// so the planes substep s reads are the ones its predecessor just wrote.
// Substep s < j writes into a ring of its own in scratch: M planes, plus
// reach_lo copies of the last ones before them and reach_hi copies of the
// first ones after them, so that a plane's neighbours lie at one fixed
// stride and the sweep's own row kernel reads them. The rings stay in cache;
// a block reads the input field once and writes the output once.
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
/// Testing aid: planes of every wavefront ring (> 0; at least reach_lo +
/// reach_hi + 1), so that small grids wrap their rings often; 0 outside tests.
inline int wavefront_ring_override = 0;
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
  /// One buffer: the largest tile footprint, row-major. A wavefront's:
  /// the strides of a ring's plane, [0] the cells of one plane.
  detail::Strides<D> scratch_stride{};
  std::size_t scratch_cells = 0;
  /// Tiles span dimension 0 and run as wavefronts (D >= 2).
  bool wavefront = false;
  /// Planes of a wavefront's ring (M, at least reach_lo + reach_hi + 1).
  int ring_planes = 0;
  /// Scratch cells a tile takes in all (two buffers, or the rings).
  std::size_t team_cells = 0;
  std::string label;
};

/// Planes of a wavefront ring: more make fewer mirror copies (reach_lo +
/// reach_hi planes of every ring_planes), fewer fit larger tiles in cache.
inline constexpr int wavefront_ring_planes = 16;

/// Tile extents of a wavefront: dimension 0 whole; whole rows; the
/// dimensions in between halved while the rings (substeps - 1 of them,
/// wavefront_ring_planes / 2 planes each at least) exceed tile_scratch_bytes,
/// then cut until there are `min_tiles` tiles (the threads of the space).
template <int D>
Index<D> default_wavefront_extent(const Box<D>& interior, const iso::HaloWidths& reach,
                                  int substeps, int min_tiles) {
  Index<D> tile{}, extent{};
  for (int j = 0; j < D; ++j)
    tile[j] = extent[j] = std::max(1, interior.end[j] - interior.begin[j]);
  const auto ring_bytes = [&] {
    std::size_t plane = sizeof(double);
    for (int j = 1; j < D; ++j)
      plane *=
          static_cast<std::size_t>(tile[j] + substeps * (reach.lo[static_cast<std::size_t>(j)] +
                                                         reach.hi[static_cast<std::size_t>(j)]));
    return plane * static_cast<std::size_t>(substeps - 1) *
           static_cast<std::size_t>(wavefront_ring_planes / 2 + reach.lo[0] + reach.hi[0]);
  };
  const auto tiles = [&] {
    long n = 1;
    for (int j = 1; j < D; ++j)
      n *= (extent[j] + tile[j] - 1) / tile[j];
    return n;
  };
  const auto fits = [&] { return ring_bytes() <= tile_scratch_bytes && tiles() >= min_tiles; };
  // The dimensions between the first and the rows first, then the rows.
  for (int j = 1; j < D; ++j)
    while (!fits() && tile[j] > 8)
      tile[j] = std::max(8, (tile[j] + 1) / 2);
  return tile;
}

/// Tile extents for a block of `substeps` updates: whole rows (up to 512
/// cells) along the last (contiguous) dimension, the other dimensions grown
/// in turn, 8 cells at a time, while the two buffers fit tile_scratch_bytes.
template <int D>
Index<D> default_tile_extent(const Box<D>& interior, const iso::HaloWidths& reach, int substeps) {
  Index<D> tile{}, extent{}, grow{};
  for (int j = 0; j < D; ++j) {
    extent[j] = std::max(1, interior.end[j] - interior.begin[j]);
    grow[j] =
        substeps * (reach.lo[static_cast<std::size_t>(j)] + reach.hi[static_cast<std::size_t>(j)]);
    tile[j] = std::min(extent[j], j == D - 1 ? (D == 1 ? 4096 : 512) : 8);
  }
  const auto bytes = [&] {
    std::size_t cells = 2 * sizeof(double);
    for (int j = 0; j < D; ++j)
      cells *= static_cast<std::size_t>(tile[j] + grow[j]);
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
                       const std::vector<int>& tile_extent, const std::string& label,
                       int min_tiles = 1) {
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
  plan.tile = D >= 2 ? default_wavefront_extent<D>(plan.interior, reach, substeps, min_tiles)
                     : default_tile_extent<D>(plan.interior, reach, substeps);
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
    plan.domain.end[j] =
        periodic[jj] ? grid.field_extent()[j] : grid.to_local(j, grid.global_extent()[j]);
  }
  // A buffer holds the largest footprint: a tile grown by `substeps` reaches
  // (a wavefront's ring plane: its cross-section).
  plan.wavefront = D >= 2 && plan.tile[0] >= plan.interior.end[0] - plan.interior.begin[0];
  plan.scratch_cells = 1;
  for (int j = D - 1; j >= (plan.wavefront ? 1 : 0); --j) {
    plan.scratch_stride[j] = static_cast<std::ptrdiff_t>(plan.scratch_cells);
    plan.scratch_cells *=
        static_cast<std::size_t>(plan.tile[j] + substeps * (plan.reach_lo[j] + plan.reach_hi[j]));
  }
  if (!plan.wavefront) {
    plan.team_cells = 2 * plan.scratch_cells;
    return plan;
  }
  plan.scratch_stride[0] = static_cast<std::ptrdiff_t>(plan.scratch_cells);
  const std::size_t mirrors = static_cast<std::size_t>(plan.reach_lo[0] + plan.reach_hi[0]);
  const std::size_t fit = tile_scratch_bytes / (sizeof(double) * plan.scratch_cells *
                                                static_cast<std::size_t>(substeps - 1));
  plan.ring_planes = static_cast<int>(std::clamp<std::size_t>(fit > mirrors ? fit - mirrors : 0,
                                                              mirrors + 1, wavefront_ring_planes));
  if (detail::wavefront_ring_override > 0)
    plan.ring_planes = std::max(detail::wavefront_ring_override, static_cast<int>(mirrors) + 1);
  plan.team_cells = plan.scratch_cells * static_cast<std::size_t>(substeps - 1) *
                    (static_cast<std::size_t>(plan.ring_planes) + mirrors);
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

/// Calls rows(x, length, count) for the first cell x of every run of `count`
/// rows of a non-empty box one after the other along dimension D - 2 (the
/// whole extent there; single rows for D < 3), row-major.
template <int D, class Rows>
void for_each_row_run(const Box<D>& box, const Rows& rows) {
  if constexpr (D >= 3) {
    Box<D> firsts = box;
    firsts.end[D - 2] = box.begin[D - 2] + 1;
    const int count = box.end[D - 2] - box.begin[D - 2];
    for_each_row<D>(firsts, [&](const Index<D>& x, int length) { rows(x, length, count); });
  } else {
    for_each_row<D>(box, [&](const Index<D>& x, int length) { rows(x, length, 1); });
  }
}

/// One tile's block of substeps; the sweep (a Jacobi row kernel) reads
/// sweep.in and writes sweep.out through row_between() (rows_between() in
/// wavefronts).
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

  /// Region of substep s (1..substeps) of `tile`: the tile grown by
  /// substeps - s reaches within the substep box (the testing aid aside).
  Box<D> region_of(const Box<D>& tile, const Box<D>& footprint, int s) const {
    const TilePlan<D>& p = *plan;
    const int growth = p.substeps - s;
    Box<D> region = grown_within(tile, p, growth, p.boxes[static_cast<std::size_t>(growth)]);
    if (growth > 0 && tile_region_error != 0) {
      for (int j = 0; j < D; ++j) {
        region.begin[j] = std::min(tile.begin[j], std::max(footprint.begin[j] + p.reach_lo[j],
                                                           region.begin[j] - tile_region_error));
        region.end[j] = std::max(tile.end[j], std::min(footprint.end[j] - p.reach_hi[j],
                                                       region.end[j] + tile_region_error));
      }
    }
    return region;
  }

  /// Whether a box reaches beyond the global domain in a bounded dimension.
  bool touches_boundary(const Box<D>& box) const {
    bool boundary = false;
    for (int j = 0; j < D; ++j)
      boundary =
          boundary || box.begin[j] < plan->domain.begin[j] || box.end[j] > plan->domain.end[j];
    return boundary;
  }

  void run(std::int64_t number, double* scratch) const {
    if (plan->wavefront) {
      run_wavefront(number, scratch);
      return;
    }
    const TilePlan<D>& p = *plan;
    const Box<D> tile = tile_box(number);
    const Box<D> footprint = grown_within(tile, p, p.substeps, p.field);
    double* const buffer[2] = {scratch, scratch + p.scratch_cells};
    const auto in_buffer = [&](const Index<D>& x) {
      std::ptrdiff_t at = 0;
      for (int j = 0; j < D; ++j)
        at += (x[j] - footprint.begin[j]) * p.scratch_stride[j];
      return at;
    };
    if (touches_boundary(footprint)) {
      // The boundary cells a region's reads may reach, in both buffers.
      for_each_row<D>(footprint, [&](const Index<D>& x, int length) {
        const double* from = sweep.in + linear_index<D>(x, stride);
        double* to0 = buffer[0] + in_buffer(x);
        double* to1 = buffer[1] + in_buffer(x);
        for (int k = 0; k < length; ++k)
          to0[k] = to1[k] = from[k];
      });
    }
    const int last = p.substeps;
    for (int s = 1; s <= last; ++s) {
      const Box<D> region = region_of(tile, footprint, s);
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

  /// One tile as a wavefront along dimension 0 (the tile spans it): at
  /// time t substep s computes plane t - (s - 1) * reach_hi, into its ring
  /// (s < substeps) or the output field; substep 1 reads the input field.
  void run_wavefront(std::int64_t number, double* scratch) const {
    const TilePlan<D>& p = *plan;
    const Box<D> tile = tile_box(number);
    const Box<D> footprint = grown_within(tile, p, p.substeps, p.field);
    const int last = p.substeps, lo = p.reach_lo[0], hi = p.reach_hi[0], ring = p.ring_planes;
    const std::ptrdiff_t plane = p.scratch_stride[0];
    const std::ptrdiff_t ring_cells = plane * (ring + lo + hi);
    const bool boundary = touches_boundary(footprint);
    const auto in_plane = [&](const Index<D>& x) {
      std::ptrdiff_t at = 0;
      for (int j = 1; j < D; ++j)
        at += (x[j] - footprint.begin[j]) * p.scratch_stride[j];
      return at;
    };
    // Substep s's ring, and the ring index of plane z: plane z sits in slot
    // lo + index; its neighbours sit one plane stride away.
    const auto ring_of = [&](int s) { return scratch + (s - 1) * ring_cells; };
    const auto index_of = [&](int z) { return (z - footprint.begin[0]) % ring; };
    const auto slot = [&](int s, int z) { return ring_of(s) + (lo + index_of(z)) * plane; };
    // The planes each substep writes: its region's, and on a tile at the
    // global boundary the planes beyond it its successor reads (copied).
    const auto planes = [&](int s, const Box<D>& region) {
      Box<D> range = region;
      if (boundary && s < last) {
        range.begin[0] = std::max(footprint.begin[0], region.begin[0] - lo);
        range.end[0] = std::min(footprint.end[0], region.end[0] + hi);
      }
      return range;
    };
    const int lag = hi;
    int first = 0, end = 0;
    bool any = false;
    for (int s = 1; s <= last; ++s) {
      const Box<D> range = planes(s, region_of(tile, footprint, s));
      if (range.empty()) continue;
      const int a = range.begin[0] + (s - 1) * lag, b = range.end[0] + (s - 1) * lag;
      first = any ? std::min(first, a) : a;
      end = any ? std::max(end, b) : b;
      any = true;
    }
    for (int t = first; t < end; ++t)
      for (int s = 1; s <= last; ++s) {
        const int z = t - (s - 1) * lag;
        Box<D> region = region_of(tile, footprint, s);
        const Box<D> range = planes(s, region);
        if (range.empty() || z < range.begin[0] || z >= range.end[0]) continue;
        double* to = s < last ? slot(s, z) : nullptr;
        if (to != nullptr && boundary) {
          // Boundary cells its successor may read: the plane from the input.
          Box<D> cut = footprint;
          cut.begin[0] = z;
          cut.end[0] = z + 1;
          for_each_row<D>(cut, [&](const Index<D>& x, int length) {
            const double* from = sweep.in + linear_index<D>(x, stride);
            double* into = to + in_plane(x);
            for (int k = 0; k < length; ++k)
              into[k] = from[k];
          });
        }
        region.begin[0] = std::max(region.begin[0], z);
        region.end[0] = std::min(region.end[0], z + 1);
        if (!region.empty()) {
          // The plane's rows in runs along dimension D - 2: one row-kernel
          // call per run, not per row.
          const std::ptrdiff_t to_step = run_step<D>(to != nullptr ? p.scratch_stride : stride);
          for_each_row_run<D>(region, [&](const Index<D>& x, int length, int count) {
            const std::ptrdiff_t at = linear_index<D>(x, stride);
            const std::ptrdiff_t local = in_plane(x);
            double* const into = to != nullptr ? to + local : sweep.out + at;
            if (s == 1)
              sweep.rows_between(sweep.in + at, into, at, stride, to_step, length, count, true);
            else
              sweep.rows_between(slot(s - 1, z) + local, into, at, p.scratch_stride, to_step,
                                 length, count);
          });
        }
        if (to == nullptr) continue;
        // The mirrors: the ring's last `lo` planes before its first, its
        // first `hi` planes after its last.
        const int i = index_of(z);
        double* const base = ring_of(s);
        if (i >= ring - lo) std::copy(to, to + plane, base + (i - ring + lo) * plane);
        if (i < hi) std::copy(to, to + plane, base + (lo + ring + i) * plane);
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
    const scratch_view scratch(member.team_scratch(1), block.plan->team_cells);
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
  const std::size_t bytes = Teams::scratch_view::shmem_size(plan.team_cells);
  const auto policy = Kokkos::TeamPolicy<ExecutionSpace>(space, static_cast<int>(plan.tiles), 1)
                          .set_scratch_size(1, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(plan.label, policy,
                       Teams{detail::TileBlock<D, Sweep>{sweep, stride, &plan}});
  space.fence();
}

}  // namespace isostencil::kernels
