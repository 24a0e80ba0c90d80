// The parts of Grid<D> that do not depend on D or the element type.
#include "isostencil/core/grid.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace isostencil::core::detail {

iso::HaloGeometry grid_geometry(const char* where, const Decomposition& decomposition,
                                const Stencil& kernel_stencil, const Stencil& stencil, int depth, int dims) {
  std::string error;
  if (decomposition.dims() != dims)
    error = "the decomposition has " + std::to_string(decomposition.dims()) +
            " dimensions, the grid " + std::to_string(dims);
  else if (stencil.dims() != dims)
    error = "the stencil " + stencil.name() + " has " + std::to_string(stencil.dims()) +
            " dimensions, the grid " + std::to_string(dims);
  // A stencil that differs between ranks would pair mismatched blocks; the
  // kernel's own stencil counts too, since the repeated one keeps offsets only.
  iso::agree_on_errors(decomposition.comm(), where, error,
                       iso::mix_fingerprint(iso::mix_fingerprint(kernel_stencil.hash(), stencil.hash()),
                                            static_cast<std::uint64_t>(depth)),
                       "the stencils (offsets or weights) or the halo depths");

  // The width rule, as iso::HaloPattern applies it, made here from agreed
  // figures (the same error on every rank, no communication) and naming the
  // stencil, so a deck that cannot work fails when the grid is made.
  std::vector<long> smallest_extent(static_cast<std::size_t>(dims));
  for (int j = 0; j < dims; ++j) smallest_extent[static_cast<std::size_t>(j)] = decomposition.smallest_local_extent(j);
  const iso::HaloWidths widths = iso::stencil_geometry(stencil.offsets()).widths;
  if (const int j = iso::halo_misfit_dimension(widths, decomposition.process_dims(), decomposition.periodic(),
                                               smallest_extent);
      j >= 0) {
    const int width = std::max(widths.lo[j], widths.hi[j]);
    const long smallest = smallest_extent[static_cast<std::size_t>(j)];
    throw iso::Error(
          std::string(where) + ": dimension " + std::to_string(j) + ": halo width " +
          std::to_string(width) + " of stencil " + stencil.name() + " reaches " +
          std::to_string(iso::halo_reach(width, smallest)) + " processes away over the smallest local extent " +
          std::to_string(smallest) + " (global extent " +
          std::to_string(decomposition.global_extent()[j]) + " over " +
          std::to_string(decomposition.process_dims()[j]) + " processes" +
          (decomposition.process_dims()[j] == 1 ? ", periodic" : "") + "; at most " +
          std::to_string(iso::max_halo_reach) +
          "); use fewer processes in this dimension, a larger grid or a narrower stencil");
  }
  return iso::stencil_geometry(
      stencil.offsets(),
      iso::exchanged_extents(decomposition.process_dims(), decomposition.periodic(), smallest_extent));
}

std::shared_ptr<const HaloPattern> HaloPatterns::get(const Decomposition& decomposition,
                                                     const std::vector<int>& interior,
                                                     const iso::HaloGeometry& geometry,
                                                     const std::vector<long>& global_offset,
                                                     const HaloOptions& options) {
  for (const auto& [made_with, pattern] : made_)
    if (made_with.algorithm == options.algorithm && made_with.verify == options.verify)
      return pattern;
  auto pattern = std::make_shared<const HaloPattern>(decomposition.comm(), interior, geometry,
                                                     global_offset, options);
  made_.emplace_back(options, pattern);
  return pattern;
}

iso::HaloValidation compare_cells(const Decomposition& decomposition, const char* where,
                                  const iso::ArrayLayout& layout, const void* first,
                                  const void* second, bool interior_too) {
  iso::HaloValidation result;
  const std::string mismatch =
      iso::compare_cells(layout, first, second, interior_too, result.cells_compared);
  try {
    iso::agree_on_errors(decomposition.comm(), where, mismatch);
  } catch (const iso::Error& e) {
    result.ok = false;
    result.message = e.what();
  }
  return result;
}

}  // namespace isostencil::core::detail
