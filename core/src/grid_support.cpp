// The parts of Grid<D> that do not depend on D or the element type.
#include "isostencil/core/grid.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <sstream>

namespace isostencil::core::detail {

Decomposition::AlsoAgreed grid_agreement(int decomposition_dims, const Stencil& kernel_stencil,
                                         const Stencil& stencil, int depth, int dims) {
  Decomposition::AlsoAgreed agreed;
  if (depth < 1)
    agreed.error = "halo depth must be >= 1, got " + std::to_string(depth);
  else if (decomposition_dims != dims)
    agreed.error = "the decomposition has " + std::to_string(decomposition_dims) + " dimensions, the grid " +
                   std::to_string(dims);
  else if (stencil.dims() != dims)
    agreed.error = "the stencil " + stencil.name() + " has " + std::to_string(stencil.dims()) +
                   " dimensions, the grid " + std::to_string(dims);
  // A stencil that differs between ranks would pair mismatched blocks; the
  // kernel's own stencil counts too, since the repeated one keeps offsets only.
  agreed.must_match = {iso::mix_fingerprint(iso::mix_fingerprint(kernel_stencil.hash(), stencil.hash()),
                                            static_cast<std::uint64_t>(depth)),
                       "the stencils (offsets or weights) or the halo depths"};
  return agreed;
}

iso::HaloGeometry grid_geometry(const char* where, const Decomposition& decomposition,
                                const Stencil& kernel_stencil, const Stencil& stencil, int depth, int dims,
                                bool agreed) {
  if (!agreed) {
    const Decomposition::AlsoAgreed checks =
        grid_agreement(decomposition.dims(), kernel_stencil, stencil, depth, dims);
    (void)iso::agree_on_errors_and_all(decomposition.comm(), where, checks.error, {checks.must_match}, true);
  }

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

namespace {

bool same_options(const HaloOptions& a, const HaloOptions& b) {
  return a.algorithm == b.algorithm && a.verify == b.verify && a.ports == b.ports;
}

bool same_offsets(const iso::OffsetList& a, const iso::OffsetList& b) {
  return a.dims() == b.dims() && a.flat() == b.flat();
}

// The patterns grids made, while they live, by everything a pattern is made
// from: the communicator (by its owner, shared by the grids that reuse one
// Cartesian communicator), the subdomain, the geometry and the options.
struct MadePattern {
  std::weak_ptr<const void> cart;
  std::vector<int> interior;
  iso::HaloGeometry geometry;
  std::vector<long> global_offset;
  HaloOptions options;
  std::weak_ptr<const HaloPattern> pattern;

  bool matches(const std::shared_ptr<const void>& owner, const std::vector<int>& other_interior,
               const iso::HaloGeometry& other_geometry, const std::vector<long>& other_offset,
               const HaloOptions& other_options) const {
    return !cart.owner_before(owner) && !owner.owner_before(cart) && interior == other_interior &&
           global_offset == other_offset && same_options(options, other_options) &&
           geometry.widths.lo == other_geometry.widths.lo && geometry.widths.hi == other_geometry.widths.hi &&
           same_offsets(geometry.directions, other_geometry.directions) &&
           same_offsets(geometry.neighborhood, other_geometry.neighborhood);
  }
};
std::mutex made_patterns_mutex;
std::vector<MadePattern> made_patterns;

}  // namespace

std::shared_ptr<const HaloPattern> HaloPatterns::find(const Decomposition& decomposition,
                                                      const std::vector<int>& interior,
                                                      const iso::HaloGeometry& geometry,
                                                      const std::vector<long>& global_offset,
                                                      const HaloOptions& options) const {
  for (const auto& [made_with, pattern] : made_)
    if (same_options(made_with, options)) return pattern;
  const std::shared_ptr<const void> owner = decomposition.cart().owner();
  const std::lock_guard<std::mutex> lock(made_patterns_mutex);
  for (const MadePattern& made : made_patterns)
    if (made.matches(owner, interior, geometry, global_offset, options))
      if (std::shared_ptr<const HaloPattern> live = made.pattern.lock()) return live;
  return nullptr;
}

std::shared_ptr<const HaloPattern> HaloPatterns::get(const Decomposition& decomposition,
                                                     const std::vector<int>& interior,
                                                     const iso::HaloGeometry& geometry,
                                                     const std::vector<long>& global_offset,
                                                     const HaloOptions& options,
                                                     std::shared_ptr<const HaloPattern> found_everywhere) {
  for (const auto& [made_with, pattern] : made_)
    if (same_options(made_with, options)) return pattern;
  if (found_everywhere) {
    made_.emplace_back(options, found_everywhere);
    return found_everywhere;
  }
  auto pattern = std::make_shared<const HaloPattern>(decomposition.comm(), interior, geometry,
                                                     global_offset, options);
  made_.emplace_back(options, pattern);
  const std::lock_guard<std::mutex> lock(made_patterns_mutex);
  made_patterns.erase(std::remove_if(made_patterns.begin(), made_patterns.end(),
                                     [](const MadePattern& made) { return made.pattern.expired(); }),
                      made_patterns.end());
  made_patterns.push_back(
        MadePattern{decomposition.cart().owner(), interior, geometry, global_offset, options, pattern});
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
