// The substep boxes of deep halos (docs/design/halo-exchange.md#deep-halos).
//
// A grid of depth k holds ghost layers k times as wide as one update reads
// (core::Grid::halo_stencil()). One exchange then serves a block of j <= k
// updates: substep s (1..j) updates the interior grown by (j - s) times the
// stencil's reach (Grid::reach(): its ghost widths below and above) in every
// dimension, clipped to the global domain in non-periodic dimensions (cells
// beyond it are boundary cells, which the kernels' boundary conditions own at
// every substep). Each substep reads only cells the previous one wrote (or
// the exchange filled), so the last one leaves the interior exactly as j
// updates with an exchange before each would. A block may end early (j < k):
// its boxes are those of j, so no cell is computed that nothing reads.
//
// Boxes are named by their growth g = j - s, the substeps left after them:
// growth 0 is the interior, growth k - 1 the largest.
#pragma once

#include "isostencil/core/grid.hpp"
#include "isostencil/kernels/cells.hpp"

#include <algorithm>
#include <vector>

namespace isostencil::kernels {

namespace detail {
/// Testing aid: cells added to (> 0) or taken from (< 0) each side of every
/// substep box of growth >= 1 when a plan is made (kept within the field's
/// readable cells and around the interior). Results must then differ from
/// depth 1 (tests/kernels/test_deep_halo.cpp); 0 outside tests.
inline int substep_box_error = 0;
}  // namespace detail

/// The box of the substep with `growth` substeps left after it in its block
/// (0 <= growth < grid.depth()).
template <int D>
Box<D> substep_box(const core::Grid<D>& grid, int growth) {
  const iso::HaloWidths& reach = grid.reach();
  const auto& periodic = grid.decomposition().periodic();
  Box<D> box;
  for (int j = 0; j < D; ++j) {
    const auto [first, last] = grid.interior_range(j);
    int lo = first - growth * reach.lo[static_cast<std::size_t>(j)];
    int hi = last + growth * reach.hi[static_cast<std::size_t>(j)];
    if (!periodic[static_cast<std::size_t>(j)]) {
      lo = std::max(lo, grid.to_local(j, 0L));
      hi = std::min(hi, grid.to_local(j, grid.global_extent()[j]));
    }
    if (growth > 0 && detail::substep_box_error != 0) {
      lo = std::min(first, std::max(reach.lo[static_cast<std::size_t>(j)],
                                    lo - detail::substep_box_error));
      hi = std::max(last, std::min(grid.field_extent()[j] - reach.hi[static_cast<std::size_t>(j)],
                                   hi + detail::substep_box_error));
    }
    box.begin[j] = lo;
    box.end[j] = hi;
  }
  return box;
}

/// Disjoint boxes covering `box` minus the interior `interior` (which lies
/// within it): what a substep updates besides the interior.
template <int D>
std::vector<Box<D>> substep_rim(const Box<D>& box, const Box<D>& interior) {
  std::vector<Box<D>> rim;
  detail::peel(box, interior, 0, [&](const Box<D>& part) { rim.push_back(part); });
  return rim;
}

/// Cells a block of `substeps` updates computes on this rank (interior
/// included): the work deep halos trade for exchanges.
template <int D>
long substep_cells(const core::Grid<D>& grid, int substeps) {
  long cells = 0;
  for (int growth = 0; growth < substeps; ++growth) cells += substep_box(grid, growth).cells();
  return cells;
}

}  // namespace isostencil::kernels
