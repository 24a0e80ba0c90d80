// Internal spelling of iso::agree_on_errors (see iso/error.hpp).
#pragma once

#include "iso/error.hpp"

namespace iso::detail {
using iso::agree_on_errors;
}  // namespace iso::detail
