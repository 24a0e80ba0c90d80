// halo.depth = "auto" (depth_choice.hpp).
#include "isostencil/driver/depth_choice.hpp"

#include "isostencil/plan.hpp"

#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/halo_exchange.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace isostencil::driver {

namespace {

/// Seconds per cell of one update of `stencil`'s offsets (a weighted sum)
/// over an interior of `extent` cells with ghosts of the stencil's widths:
/// the best of a few timed passes after a warm-up one.
double measure_cell_seconds(const std::vector<int>& extent, const iso::HaloWidths& widths,
                            const core::Stencil& stencil) {
  const std::size_t d = extent.size();
  std::vector<long> field(d), stride(d);
  long cells = 1, interior = 1;
  for (std::size_t j = d; j-- > 0;) {
    field[j] = extent[j] + widths.lo[j] + widths.hi[j];
    stride[j] = cells;
    cells *= field[j];
    interior *= extent[j];
  }
  if (interior == 0) return 0;
  std::vector<long> shift;
  for (int i = 0; i < stencil.size(); ++i) {
    long at = 0;
    for (std::size_t j = 0; j < d; ++j) at += stencil.offsets()[i][static_cast<int>(j)] * stride[j];
    shift.push_back(at);
  }
  std::vector<double> in(static_cast<std::size_t>(cells), 1.0), out(static_cast<std::size_t>(cells), 0.0);
  const double weight = 1.0 / static_cast<double>(std::max(1, stencil.size()));
  const long rows = interior / extent[d - 1];
  const auto pass = [&] {
    for (long row = 0; row < rows; ++row) {
      long rest = row, first = 0;
      for (std::size_t j = d - 1; j-- > 0;) {
        first += (rest % extent[j] + widths.lo[j]) * stride[j];
        rest /= extent[j];
      }
      first += widths.lo[d - 1];
      for (long x = first; x < first + extent[d - 1]; ++x) {
        double sum = 0;
        for (const long s : shift) sum += in[static_cast<std::size_t>(x + s)];
        out[static_cast<std::size_t>(x)] = weight * sum;
      }
    }
    in.swap(out);
  };
  pass();
  double best = std::numeric_limits<double>::max();
  const double start = MPI_Wtime();
  for (int rep = 0; rep < 20 && (rep < 3 || MPI_Wtime() - start < 0.002); ++rep) {
    const double t0 = MPI_Wtime();
    pass();
    best = std::min(best, MPI_Wtime() - t0);
  }
  return best / static_cast<double>(interior);
}

/// Cells of the substep box of growth g on this rank (substeps.hpp's rule).
long box_cells(const core::Decomposition& decomposition, const iso::HaloWidths& reach, int growth) {
  long cells = 1;
  for (int j = 0; j < decomposition.dims(); ++j) {
    const auto u = static_cast<std::size_t>(j);
    long lo = decomposition.global_offset()[u] - static_cast<long>(growth) * reach.lo[u];
    long hi = decomposition.global_offset()[u] + decomposition.local_extent()[u] +
              static_cast<long>(growth) * reach.hi[u];
    if (!decomposition.periodic()[u]) {
      lo = std::max(lo, 0L);
      hi = std::min(hi, decomposition.global_extent()[u]);
    }
    cells *= std::max(0L, hi - lo);
  }
  return cells;
}

/// The mean bytes of the ghost blocks of `geometry` on this rank's subdomain.
long mean_block_bytes(const core::Decomposition& decomposition, const iso::HaloGeometry& geometry,
                      int element_bytes) {
  const iso::OffsetList& directions = geometry.directions;
  if (directions.size() == 0) return element_bytes;
  long total = 0;
  for (int i = 0; i < directions.size(); ++i) {
    long cells = 1;
    for (int j = 0; j < directions.dims(); ++j) {
      const auto u = static_cast<std::size_t>(j);
      const int e = directions[i][j];
      cells *= e == 0 ? decomposition.local_extent()[u] : e < 0 ? geometry.widths.lo[u] : geometry.widths.hi[u];
    }
    total += cells;
  }
  return std::max(1L, total / directions.size()) * element_bytes;
}

}  // namespace

std::string DepthChoice::text() const {
  std::string table;
  for (std::size_t k = 0; k < per_step.size(); ++k)
    table += fmt::format("{}k={} {:.1f}", k ? ", " : "", k + 1, per_step[k] * 1e6);
  return fmt::format("k = {}: lowest predicted time per step, in us: {} (exchange priced by the "
                     "cost model, {}; cells at {:.2f} ns each, measured)",
                     depth, table, model_note, cell_seconds * 1e9);
}

DepthChoice choose_depth(const core::Decomposition& decomposition, const core::Stencil& stencil,
                         int element_bytes, int max_depth, int ports) {
  MPI_Comm comm = decomposition.comm();
  DepthChoice choice;
  const iso::CostModel& model = iso::CostModel::for_comm(comm);
  choice.model_note = model.source;
  const iso::HaloWidths reach = stencil.geometry().widths;
  const int dims = decomposition.dims();
  std::vector<long> smallest(static_cast<std::size_t>(dims));
  for (int j = 0; j < dims; ++j) smallest[static_cast<std::size_t>(j)] = decomposition.smallest_local_extent(j);
  iso::CartGeometry cart;
  cart.sizes = decomposition.process_dims();
  cart.periodic = decomposition.periodic();

  double cell_seconds = measure_cell_seconds(decomposition.local_extent(), reach, stencil);
  MPI_Allreduce(MPI_IN_PLACE, &cell_seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
  choice.cell_seconds = cell_seconds;

  long block_cells = 0;  // cells of the k boxes of a block so far
  for (int k = 1; k <= max_depth; ++k) {
    const core::Stencil deep = stencil.repeated(k);
    const iso::HaloGeometry geometry = deep.geometry();
    // Every rank sees the same figures here (process grid, smallest extents).
    if (iso::halo_misfit_dimension(geometry.widths, cart.sizes, cart.periodic, smallest) >= 0) break;
    block_cells += box_cells(decomposition, reach, k - 1);
    double figures[2] = {0, static_cast<double>(block_cells)};
    long bytes = mean_block_bytes(decomposition, geometry, element_bytes);
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_LONG, MPI_MAX, comm);
    const Predictions predictions = predict(geometry.neighborhood, cart, model, {bytes}, ports);
    const SizePrediction& size = predictions.sizes.front();
    figures[0] = size.at(size.chosen(iso::Collective::alltoall), iso::Collective::alltoall).seconds;
    MPI_Allreduce(MPI_IN_PLACE, figures, 2, MPI_DOUBLE, MPI_MAX, comm);
    choice.exchange.push_back(figures[0]);
    choice.per_step.push_back((figures[0] + cell_seconds * figures[1]) / k);
  }
  if (choice.per_step.empty()) throw iso::Error("isostencil: halo.depth = \"auto\": not even depth 1 fits");
  choice.depth = 1 + static_cast<int>(std::min_element(choice.per_step.begin(), choice.per_step.end()) -
                                      choice.per_step.begin());
  return choice;
}

}  // namespace isostencil::driver
