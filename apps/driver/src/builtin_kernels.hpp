// The driver's own kernels, each registered as any program registers its
// kernels (driver.hpp): its deck description, its runner and its checks,
// defined next to the runner (run_jacobi.cpp, run_life.cpp, run_advection.cpp).
#pragma once

#include "isostencil/driver/driver.hpp"

#include <string>

namespace isostencil::driver {

KernelEntry jacobi_kernel();
KernelEntry life_kernel();
KernelEntry advection_kernel();

/// "\"text\"": a value in a deck message (kernel names and shapes need no escapes).
inline std::string deck_quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace isostencil::driver
