# Sanitized builds of the whole project: -DISOSTENCIL_SANITIZE=address,undefined
# (any list -fsanitize= accepts) compiles and links every target with it.
# scripts/sanitize.sh configures build-asan this way and runs the test suite
# with the options and the Open MPI leak suppressions of tests/sanitize/.
include_guard(GLOBAL)

set(ISOSTENCIL_SANITIZE "" CACHE STRING
    "Sanitizers for every target, e.g. address,undefined (empty: none)")
if(ISOSTENCIL_SANITIZE)
  if(ISOSTENCIL_FUZZ)
    message(FATAL_ERROR "ISOSTENCIL_SANITIZE and ISOSTENCIL_FUZZ are separate builds; "
                        "the fuzz build already has AddressSanitizer and UBSan")
  endif()
  add_compile_options(-fsanitize=${ISOSTENCIL_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${ISOSTENCIL_SANITIZE})
endif()

# Instrumented tests run several times slower (ASan + UBSan: 2-5x, more for
# oversubscribed ranks). Rather than loosen the normal build's limits, a
# sanitized build multiplies every test's TIMEOUT by this factor and hands it
# to the tests as ISOSTENCIL_TEST_TIME_SCALE, which wall-clock assertions read
# through iso_test::time_scale() (cmake/IsostencilTesting.cmake,
# tests/support/time_scale.hpp).
if(ISOSTENCIL_SANITIZE)
  set(_iso_time_scale_default 4)
else()
  set(_iso_time_scale_default 1)
endif()
set(ISOSTENCIL_TEST_TIME_SCALE ${_iso_time_scale_default} CACHE STRING
    "Integer factor on every test's TIMEOUT and wall-clock limits (4 in sanitized builds)")
if(NOT ISOSTENCIL_TEST_TIME_SCALE MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "ISOSTENCIL_TEST_TIME_SCALE must be a positive integer, not '${ISOSTENCIL_TEST_TIME_SCALE}'")
endif()
