// Parts of the cost model that are not API (not installed).
#pragma once

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace iso::detail {

/// Predicted seconds of one schedule at this process, rounds one after
/// another: the model's terms without the steps of several rounds that
/// predict_execution_seconds (what auto uses) adds. Only the hand-worked
/// checks of those terms in tests/cost_model call it.
double predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes);

/// Whether tuning's measurements contradict a model that chose `algorithm`
/// at `ports`: that candidate was timed, and at more than 1.5 times the
/// fastest trial (noise under load stays well below; a misjudged model's
/// choice, 2x and more, does not). False when it was not timed.
bool model_contradicted(const std::vector<TuneTrial>& trials, Algorithm algorithm, int ports);

/// FNV-1a of a text, and its 16 hex digits: the cache files' names and keys.
std::uint64_t text_digest(const std::string& text);
std::string hex16(std::uint64_t value);

}  // namespace iso::detail
