// Parts of the cost model that are not API (not installed).
#pragma once

#include "iso/cost_model.hpp"

#include <cstdint>
#include <string>

namespace iso::detail {

/// Predicted seconds of one schedule at this process, rounds one after
/// another: the model's terms without the steps of several rounds that
/// predict_execution_seconds (what auto uses) adds. Only the hand-worked
/// checks of those terms in tests/cost_model call it.
double predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes);

/// FNV-1a of a text, and its 16 hex digits: the cache files' names and keys.
std::uint64_t text_digest(const std::string& text);
std::string hex16(std::uint64_t value);

}  // namespace iso::detail
