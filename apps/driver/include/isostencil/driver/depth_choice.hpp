// halo.depth = "auto": the depth k with the lowest predicted time per step
// (docs/design/cost-model.md#deep-halos). One step of a block of k costs
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
  std::string model_note;        ///< where the cost model came from
  /// "k = 3: predicted 41.2 us/step (k=1 88.0, k=2 52.3, ...); exchange priced by ..."
  std::string text() const;
};

/// Collective over the decomposition's communicator; the same choice on
/// every rank. `element_bytes`: bytes per cell of the exchanged fields;
/// `max_depth`: the largest k considered; `ports` as the halo's.
DepthChoice choose_depth(const core::Decomposition& decomposition, const core::Stencil& stencil,
                         int element_bytes, int max_depth, int ports);

}  // namespace isostencil::driver
