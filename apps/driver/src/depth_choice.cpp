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

double measure_cell_seconds(const std::vector<int>& extent, const core::Stencil& stencil) {
  const iso::HaloWidths widths = stencil.geometry().widths;
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
  // Row by row, one vectorizable sweep of the row per offset: a loop over a
  // run-time offset list inside the cell loop runs 2-3 times slower than the
  // kernels' compiled stencils and would overprice the redundant cells.
  const long n = extent[d - 1];
  const auto pass = [&] {
    for (long row = 0; row < rows; ++row) {
      long rest = row, first = 0;
      for (std::size_t j = d - 1; j-- > 0;) {
        first += (rest % extent[j] + widths.lo[j]) * stride[j];
        rest /= extent[j];
      }
      first += widths.lo[d - 1];
      double* __restrict target = out.data() + first;
      const double* __restrict source = in.data() + first;
      for (std::size_t i = 0; i < shift.size(); ++i) {
        const double* __restrict from = source + shift[i];
        if (i == 0)
          for (long x = 0; x < n; ++x) target[x] = from[x];
        else
          for (long x = 0; x < n; ++x) target[x] += from[x];
      }
      for (long x = 0; x < n; ++x) target[x] *= weight;
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

namespace {

/// The subdomain of the process at `coords`: core::Decomposition's block
/// rule (the first n % p processes of a dimension get one cell more).
void subdomain(const DepthLayout& layout, const std::vector<int>& coords, std::vector<long>& offset,
               std::vector<long>& extent) {
  for (std::size_t j = 0; j < layout.extent.size(); ++j) {
    const long n = layout.extent[j];
    const long p = layout.procs[j];
    const long c = coords[j];
    extent[j] = n / p + (c < n % p ? 1 : 0);
    offset[j] = c * (n / p) + std::min(c, n % p);
  }
}

/// Cells of the substep box of growth g of that subdomain (substeps.hpp's rule).
long box_cells(const DepthLayout& layout, const std::vector<long>& offset,
               const std::vector<long>& extent, const iso::HaloWidths& reach, int growth) {
  long cells = 1;
  for (std::size_t j = 0; j < extent.size(); ++j) {
    long lo = offset[j] - static_cast<long>(growth) * reach.lo[j];
    long hi = offset[j] + extent[j] + static_cast<long>(growth) * reach.hi[j];
    if (!layout.periodic[j]) {
      lo = std::max(lo, 0L);
      hi = std::min(hi, layout.extent[j]);
    }
    cells *= std::max(0L, hi - lo);
  }
  return cells;
}

/// The mean bytes of the ghost blocks of `geometry` around that subdomain.
long mean_block_bytes(const std::vector<long>& extent, const iso::HaloGeometry& geometry,
                      int element_bytes) {
  const iso::OffsetList& directions = geometry.directions;
  if (directions.size() == 0) return element_bytes;
  long total = 0;
  for (int i = 0; i < directions.size(); ++i) {
    long cells = 1;
    for (int j = 0; j < directions.dims(); ++j) {
      const auto u = static_cast<std::size_t>(j);
      const int e = directions[i][j];
      cells *= e == 0 ? extent[u] : e < 0 ? geometry.widths.lo[u] : geometry.widths.hi[u];
    }
    total += cells;
  }
  return std::max(1L, total / directions.size()) * element_bytes;
}

}  // namespace

std::string DepthChoice::text() const {
  const auto table = [](const std::vector<double>& seconds) {
    std::string text;
    for (std::size_t k = 0; k < seconds.size(); ++k)
      if (seconds[k] > 0) text += fmt::format("{}k={} {:.1f}", text.empty() ? "" : ", ", k + 1, seconds[k] * 1e6);
    return text;
  };
  const std::string predicted = fmt::format(
      "{} (exchange priced by the cost model, {}; cells at {:.2f} ns each, measured{})",
      table(per_step), model_note, cell_seconds * 1e9,
      kernel_rate ? " by the kernel" : " by a stand-in loop over the stencil");
  if (measured.empty()) return fmt::format("k = {}: lowest predicted time per step, in us: {}", depth, predicted);
  return fmt::format("k = {}: fastest of the depths timed on the run's own kernel (us per step: {}); "
                     "predicted, in us: {}",
                     depth, table(measured), predicted);
}

std::vector<int> depth_candidates(const DepthChoice& choice, double factor) {
  std::vector<int> candidates;
  if (choice.per_step.empty()) return candidates;
  const double best = *std::min_element(choice.per_step.begin(), choice.per_step.end());
  for (std::size_t k = 0; k < choice.per_step.size(); ++k)
    if (k == 0 || choice.per_step[k] <= factor * best) candidates.push_back(static_cast<int>(k) + 1);
  return candidates;
}

DepthChoice predict_depths(const DepthLayout& layout, const core::Stencil& stencil,
                           int element_bytes, int max_depth, int ports, const iso::CostModel& model,
                           double cell_seconds) {
  DepthChoice choice;
  choice.model_note = model.source;
  choice.cell_seconds = cell_seconds;
  const iso::HaloWidths reach = stencil.geometry().widths;
  const std::size_t dims = layout.extent.size();
  std::vector<long> smallest(dims);
  for (std::size_t j = 0; j < dims; ++j) smallest[j] = layout.extent[j] / layout.procs[j];
  iso::CartGeometry cart;
  cart.sizes = layout.procs;
  cart.periodic = layout.periodic;
  const int ranks = cart.num_procs();
  std::vector<int> coords(dims);
  std::vector<long> offset(dims), extent(dims);
  std::vector<long> block_cells(static_cast<std::size_t>(ranks), 0);  // per rank, boxes so far
  for (int k = 1; k <= max_depth; ++k) {
    const iso::HaloGeometry geometry = stencil.repeated(k).geometry();
    if (iso::halo_misfit_dimension(geometry.widths, cart.sizes, cart.periodic, smallest) >= 0) break;
    long busiest = 0, bytes = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      cart.coords_of(rank, coords.data());
      subdomain(layout, coords, offset, extent);
      block_cells[static_cast<std::size_t>(rank)] += box_cells(layout, offset, extent, reach, k - 1);
      busiest = std::max(busiest, block_cells[static_cast<std::size_t>(rank)]);
      bytes = std::max(bytes, mean_block_bytes(extent, geometry, element_bytes));
    }
    const Predictions predictions = predict(geometry.neighborhood, cart, model, {bytes}, ports);
    const SizePrediction& size = predictions.sizes.front();
    const double exchange =
        size.at(size.chosen(iso::Collective::alltoall), iso::Collective::alltoall).seconds;
    choice.exchange.push_back(exchange);
    choice.per_step.push_back((exchange + cell_seconds * static_cast<double>(busiest)) / k);
  }
  if (choice.per_step.empty()) throw iso::Error("isostencil: halo.depth: not even depth 1 fits");
  choice.depth = 1 + static_cast<int>(std::min_element(choice.per_step.begin(), choice.per_step.end()) -
                                      choice.per_step.begin());
  return choice;
}

DepthChoice choose_depth(const core::Decomposition& decomposition, const core::Stencil& stencil,
                         int element_bytes, int max_depth, int ports, double cell_seconds) {
  MPI_Comm comm = decomposition.comm();
  const iso::CostModel& model = iso::CostModel::for_comm(comm);
  // The same on every rank: the argument is an agreed maximum or 0 everywhere.
  const bool kernel_rate = cell_seconds > 0;
  if (!kernel_rate) {
    cell_seconds = measure_cell_seconds(decomposition.local_extent(), stencil);
    MPI_Allreduce(MPI_IN_PLACE, &cell_seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
  }
  const DepthLayout layout{decomposition.global_extent(), decomposition.periodic(),
                           decomposition.process_dims()};
  DepthChoice choice = predict_depths(layout, stencil, element_bytes, max_depth, ports, model, cell_seconds);
  choice.kernel_rate = kernel_rate;
  // Rank 0's figures everywhere: one choice, whatever rounding differs.
  int count = static_cast<int>(choice.per_step.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, comm);
  choice.per_step.resize(static_cast<std::size_t>(count));
  choice.exchange.resize(static_cast<std::size_t>(count));
  MPI_Bcast(choice.per_step.data(), count, MPI_DOUBLE, 0, comm);
  MPI_Bcast(choice.exchange.data(), count, MPI_DOUBLE, 0, comm);
  MPI_Bcast(&choice.depth, 1, MPI_INT, 0, comm);
  return choice;
}

}  // namespace isostencil::driver
