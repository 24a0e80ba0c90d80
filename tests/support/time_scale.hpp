// Wall-clock limits that tests assert, scaled for instrumented builds.
#pragma once

#include <cstdlib>

namespace iso_test {

/// Factor for a wall-clock limit a test asserts: ISOSTENCIL_TEST_TIME_SCALE
/// from the test's environment, which sanitized builds set (cmake/
/// IsostencilSanitizers.cmake, 4 by default) because instrumented code runs
/// several times slower; 1 in every normal build, so its limits stay as tight.
inline double time_scale() {
  const char* text = std::getenv("ISOSTENCIL_TEST_TIME_SCALE");
  const double scale = text != nullptr ? std::atof(text) : 1.0;
  return scale >= 1.0 ? scale : 1.0;
}

}  // namespace iso_test
