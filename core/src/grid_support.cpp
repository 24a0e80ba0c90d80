// The parts of Grid<D> that do not depend on D or the element type.
#include "isostencil/core/grid.hpp"

#include "agree.hpp"
#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace isostencil::core::detail {

GridShape derive_grid_shape(const char* where, const Decomposition& decomposition,
                            const Stencil& stencil, int dims) {
  std::string error;
  if (decomposition.dims() != dims)
    error = "the decomposition has " + std::to_string(decomposition.dims()) +
            " dimensions, the grid " + std::to_string(dims);
  else if (stencil.dims() != dims)
    error = "the stencil " + stencil.name() + " has " + std::to_string(stencil.dims()) +
            " dimensions, the grid " + std::to_string(dims);
  // A stencil that differs between ranks would pair mismatched blocks.
  agree(decomposition.comm(), where, error, stencil.hash(), "the stencils (offsets or weights)");

  GridShape shape;
  const iso::HaloWidths widths = stencil.halo_widths();
  shape.ghost_lo = widths.lo;
  shape.ghost_hi = widths.hi;
  shape.directions = stencil.directions();
  // The same test as iso::HaloExchange makes, made here from agreed figures
  // (the same error on every rank, no communication) and naming the stencil,
  // so a deck that cannot work fails when the grid is made.
  for (int j = 0; j < dims; ++j) {
    const bool exchanged = decomposition.process_dims()[j] > 1 || decomposition.periodic()[j];
    const int width = std::max(shape.ghost_lo[j], shape.ghost_hi[j]);
    const int smallest = decomposition.smallest_local_extent(j);
    if (exchanged && width > smallest)
      throw iso::Error(
          std::string(where) + ": dimension " + std::to_string(j) + ": halo width " +
          std::to_string(width) + " of stencil " + stencil.name() +
          " is wider than the smallest local extent " + std::to_string(smallest) +
          " of a neighbor's subdomain (global extent " +
          std::to_string(decomposition.global_extent()[j]) + " over " +
          std::to_string(decomposition.process_dims()[j]) + " processes" +
          (decomposition.process_dims()[j] == 1 ? ", periodic" : "") +
          "); use fewer processes in this dimension, a larger grid or a narrower stencil");
  }
  return shape;
}

void agree_on_field_errors(const Decomposition& decomposition, const char* where,
                           const std::string& local_error) {
  agree(decomposition.comm(), where, local_error);
}

iso::HaloValidation compare_cells(const Decomposition& decomposition, const char* where,
                                  const iso::ArrayLayout& layout, const void* first,
                                  const void* second, bool interior_too) {
  iso::HaloValidation result;
  const std::string mismatch =
      iso::compare_cells(layout, first, second, interior_too, result.cells_compared);
  try {
    agree(decomposition.comm(), where, mismatch);
  } catch (const iso::Error& e) {
    result.ok = false;
    result.message = e.what();
  }
  return result;
}

}  // namespace isostencil::core::detail
