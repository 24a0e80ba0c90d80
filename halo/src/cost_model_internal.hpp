// Parts of the cost model that are not API (not installed).
#pragma once

#include "iso/cost_model.hpp"

#include <string>

namespace iso::detail {

/// Predicted seconds of one schedule at this process, rounds one after
/// another: the model's terms without the steps of several rounds that
/// predict_execution_seconds (what auto uses) adds. Only the hand-worked
/// checks of those terms in tests/cost_model call it.
double predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes);

/// Creates every directory above the file `path` (errors show when the file
/// is written).
void make_directories(const std::string& path);

}  // namespace iso::detail
