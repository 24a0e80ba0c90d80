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
