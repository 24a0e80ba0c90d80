#include "isostencil/kernels/user_kernel.hpp"

#include <algorithm>

namespace isostencil::kernels::detail {

std::string offsets_text(const iso::OffsetList& offsets) {
  std::string text;
  for (int i = 0; i < offsets.size(); ++i) {
    text += i ? " (" : "(";
    for (int j = 0; j < offsets.dims(); ++j)
      text += (j ? "," : "") + std::to_string(offsets[i][j]);
    text += ")";
  }
  return text.empty() ? "(none)" : text;
}

std::string check_shape_fits(const char* where, const core::Stencil& shape, int dims,
                             const std::vector<int>& ghost_lo, const std::vector<int>& ghost_hi,
                             const iso::OffsetList& grid_directions) {
  const std::string prefix = std::string(where) + ": shape " + shape.name() + ": ";
  if (shape.dims() != dims)
    return prefix + "has " + std::to_string(shape.dims()) + " dimensions, the grid " +
           std::to_string(dims);
  if (shape.size() == 0) return prefix + "declares no offsets";
  const iso::HaloGeometry geometry = shape.geometry();
  const iso::HaloWidths& widths = geometry.widths;
  for (int j = 0; j < dims; ++j) {
    const auto jj = static_cast<std::size_t>(j);
    if (widths.lo[jj] > ghost_lo[jj] || widths.hi[jj] > ghost_hi[jj])
      return prefix + "reaches " + std::to_string(widths.lo[jj]) + " below and " +
             std::to_string(widths.hi[jj]) + " above in dimension " + std::to_string(j) +
             ", the grid's ghost layers are " + std::to_string(ghost_lo[jj]) + " and " +
             std::to_string(ghost_hi[jj]) + "; build the grid with a stencil covering the shape";
  }
  // A read of ghost cells in a direction the grid does not exchange would see
  // stale values: every direction the shape reads must be exchanged.
  const iso::OffsetList& needed = geometry.directions;
  for (int i = 0; i < needed.size(); ++i) {
    bool exchanged = false;
    for (int g = 0; g < grid_directions.size() && !exchanged; ++g)
      exchanged = std::equal(needed[i], needed[i] + dims, grid_directions[g]);
    if (!exchanged) {
      std::vector<int> direction(needed[i], needed[i] + dims);
      return prefix + "reads ghost direction " + offsets_text(iso::OffsetList(dims, direction)) +
             ", which the grid does not exchange (it exchanges " + offsets_text(grid_directions) +
             "); build the grid with a stencil covering the shape";
    }
  }
  return {};
}

}  // namespace isostencil::kernels::detail
