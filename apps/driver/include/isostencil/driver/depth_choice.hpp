// halo.depth = "auto": the depth k with the lowest predicted time per step
// (docs/design/cost-model.md#deep-halos); the run then times the candidates
// the prediction leaves on its own kernel (models.hpp's measure_depths).
// One step of a block of k costs
//     exchange(k) / k  +  seconds_per_cell * cells(k) / k
// where exchange(k) is the cost model's price of the exchange of the ghost
// region k times as deep (the neighborhood of Stencil::repeated(k), blocks of
// that region's mean size, the algorithm `auto` would pick: plan --predict's
// pricing), cells(k) the cells a block's k substep boxes hold on the busiest
// rank, and seconds_per_cell a measured update of the stencil's offsets over
// this rank's interior. Depths the width rule refuses are not considered.
#pragma once

#include "isostencil/core/decomposition.hpp"
#include "isostencil/core/stencil.hpp"

#include "iso/cost_model.hpp"

#include <string>
#include <vector>

namespace isostencil::driver {

struct DepthChoice {
  int depth = 1;
  /// Predicted seconds per step for k = 1, 2, ... (maxima over ranks; the
  /// depths the width rule allows, up to the deck's maximum).
  std::vector<double> per_step;
  std::vector<double> exchange;  ///< predicted seconds of one exchange at depth k
  double cell_seconds = 0;       ///< measured seconds per cell update (maximum over ranks)
  bool kernel_rate = false;      ///< cell_seconds measured on the kernel itself (else a stand-in loop)
  std::string model_note;        ///< where the cost model came from
  /// Measured seconds per step of k = 1, 2, ... on probes of the run's model
  /// (measured_depths in models.hpp); 0 where k was not a candidate. Empty
  /// when nothing was measured (check, plan, or a single candidate).
  std::vector<double> measured;
  /// "k = 3: predicted 41.2 us/step (k=1 88.0, k=2 52.3, ...); exchange priced by ..."
  std::string text() const;
};

/// A block decomposition as the prediction needs it (every rank's subdomain
/// follows from it: core::Decomposition's rule).
struct DepthLayout {
  std::vector<long> extent;
  std::vector<bool> periodic;
  std::vector<int> procs;
};

/// Seconds per cell of a weighted sum over `stencil`'s offsets on an
/// interior of `extent` cells (the best of a few passes). Local.
double measure_cell_seconds(const std::vector<int>& extent, const core::Stencil& stencil);

/// The prediction for every depth 1..max_depth the width rule allows, over
/// every rank of `layout` (maxima), and the best. Local; the same on every
/// process given the same arguments. `element_bytes`: bytes per cell of the
/// exchanged fields; `ports` as the halo's.
DepthChoice predict_depths(const DepthLayout& layout, const core::Stencil& stencil,
                           int element_bytes, int max_depth, int ports, const iso::CostModel& model,
                           double cell_seconds);

/// The depths worth timing: every k predicted within `factor` of the best
/// prediction, and k = 1 (the depth auto must never be slower than).
std::vector<int> depth_candidates(const DepthChoice& choice, double factor = 1.5);

/// Collective over the decomposition's communicator: the model `auto` uses
/// there and predict_depths with `cell_seconds` (the kernel's own rate,
/// models.hpp's kernel_cell_seconds; <= 0: measure_cell_seconds on every
/// rank, the slowest counts); rank 0's choice on every rank.
DepthChoice choose_depth(const core::Decomposition& decomposition, const core::Stencil& stencil,
                         int element_bytes, int max_depth, int ports, double cell_seconds = 0);

}  // namespace isostencil::driver
