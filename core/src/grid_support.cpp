// The parts of Grid<D> that do not depend on D or the element type.
#include "isostencil/core/grid.hpp"

#include "agree.hpp"
#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace isostencil::core::detail {

namespace {

std::string list(const std::vector<int>& values) {
  std::string out = "(";
  for (std::size_t j = 0; j < values.size(); ++j)
    out += (j ? "," : "") + std::to_string(values[j]);
  return out + ")";
}

}  // namespace

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
  int element_size = 0;
  ISO_MPI_CHECK(MPI_Type_size(layout.element, &element_size));
  const int d = layout.dims();
  const std::vector<int> extent = layout.extent();
  long cells = 1;
  for (int e : extent)
    cells *= e;
  const auto* a = static_cast<const char*>(first);
  const auto* b = static_cast<const char*>(second);
  iso::HaloValidation result;
  std::string mismatch;
  std::vector<int> index(d);
  for (long cell = 0; cell < cells && mismatch.empty(); ++cell) {
    long rest = cell;
    bool ghost = false;
    for (int j = d - 1; j >= 0; --j) {
      index[j] = static_cast<int>(rest % extent[j]);
      rest /= extent[j];
      ghost = ghost || index[j] < layout.ghost_lo[j] ||
              index[j] >= layout.ghost_lo[j] + layout.interior[j];
    }
    if (!ghost && !interior_too) continue;
    ++result.cells_compared;
    const std::size_t at = static_cast<std::size_t>(cell) * element_size;
    if (std::memcmp(a + at, b + at, static_cast<std::size_t>(element_size)) == 0) continue;
    std::vector<int> direction(d), global(d);
    for (int j = 0; j < d; ++j) {
      direction[j] = index[j] < layout.ghost_lo[j]                         ? -1
                     : index[j] >= layout.ghost_lo[j] + layout.interior[j] ? 1
                                                                           : 0;
      global[j] = static_cast<int>(layout.global_offset[j] + index[j] - layout.ghost_lo[j]);
    }
    std::ostringstream text;
    text << (ghost ? "ghost cell" : "interior cell") << " in direction " << list(direction)
         << ", global index " << list(global) << " (local " << list(index)
         << "): first field has bytes" << std::hex;
    for (int byte = 0; byte < element_size; ++byte)
      text << ' ' << (static_cast<unsigned>(a[at + byte]) & 0xffu);
    text << ", second has";
    for (int byte = 0; byte < element_size; ++byte)
      text << ' ' << (static_cast<unsigned>(b[at + byte]) & 0xffu);
    mismatch = text.str();
  }
  try {
    agree(decomposition.comm(), where, mismatch);
  } catch (const iso::Error& e) {
    result.ok = false;
    result.message = e.what();
  }
  return result;
}

}  // namespace isostencil::core::detail
