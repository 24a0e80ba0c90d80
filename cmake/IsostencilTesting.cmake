# Test registration helpers: one function registers an MPI test at several rank
# counts (Cabana, heFFTe), one registers a singleton run, one builds a gtest
# executable on the shared MPI main (tests/support/mpi_main.cpp).
include_guard(DIRECTORY)

if(NOT MPIEXEC_EXECUTABLE)
  find_package(MPI REQUIRED COMPONENTS C CXX)
endif()

# Which MPI launches the tests: Open MPI's mpiexec needs --oversubscribe to
# start more ranks than cores (the CI machine has 2); MPICH's rejects the flag.
if(NOT DEFINED ISOSTENCIL_MPI_IS_OPENMPI)
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
                  OUTPUT_VARIABLE _iso_mpiexec_version ERROR_VARIABLE _iso_mpiexec_version
                  RESULT_VARIABLE _iso_mpiexec_rc TIMEOUT 30)
  if(_iso_mpiexec_version MATCHES "Open MPI|OpenRTE"
     OR MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
    set(_iso_is_ompi ON)
  else()
    set(_iso_is_ompi OFF)
  endif()
  set(ISOSTENCIL_MPI_IS_OPENMPI ${_iso_is_ompi} CACHE INTERNAL "mpiexec is Open MPI's")
endif()

option(ISOSTENCIL_MPI_OVERSUBSCRIBE
       "Add --oversubscribe to MPIEXEC_PREFLAGS (Open MPI only) when it is not set" ON)
if(ISOSTENCIL_MPI_IS_OPENMPI AND ISOSTENCIL_MPI_OVERSUBSCRIBE
   AND NOT MPIEXEC_PREFLAGS MATCHES "oversubscribe")
  if("${MPIEXEC_PREFLAGS}" STREQUAL "")
    set(MPIEXEC_PREFLAGS "--oversubscribe" CACHE STRING
        "These flags will be directly before the executable that is being run by mpiexec." FORCE)
  else()
    # The user chose their own flags; the environment below still allows
    # oversubscription (rmaps_base_oversubscribe).
    message(STATUS "MPIEXEC_PREFLAGS set by the user (${MPIEXEC_PREFLAGS}); not adding --oversubscribe")
  endif()
endif()

# Environment of every test. Open MPI refuses to run as root without the first
# two (CI and every session run as root); the next two make oversubscribed runs
# on a 2-core machine reliable: allow more ranks than slots (also without
# --oversubscribe in MPIEXEC_PREFLAGS) and yield instead of busy-polling while
# idle. mpiexec gives ranks a pseudo-terminal, so gtest would colour ctest's
# logs. Where a container forbids process_vm_readv (CMA), add
# OMPI_MCA_btl_vader_single_copy_mechanism=none to ISOSTENCIL_TEST_EXTRA_ENVIRONMENT;
# on the project's Debian 12 machines CMA works and the tests use it.
set(ISOSTENCIL_TEST_ENVIRONMENT
    "OMPI_ALLOW_RUN_AS_ROOT=1"
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    "OMPI_MCA_rmaps_base_oversubscribe=1"
    "OMPI_MCA_mpi_yield_when_idle=1"
    "GTEST_COLOR=no"
    # Algorithm::automatic (halo.algorithm = "auto" in every sample deck)
    # otherwise calibrates on the loaded test machine and shares the result
    # through ~/.cache/isostencil with tests running in parallel (and with a
    # run killed mid-write by the fault tests): what auto picks would change
    # from run to run. Tests of calibration and of the cache set or unset it.
    "ISO_COST_MODEL=defaults"
    # Algorithm::tune likewise: each test times its candidates afresh instead
    # of reading another test's (or an earlier run's) choice. The cache's own
    # tests name a file of their own.
    "ISO_TUNE_CACHE=off"
    # Open MPI's shared-memory shared file pointers leave a named semaphore
    # (/dev/shm/sem.OMPIO_<file>) behind when a rank is killed while opening a
    # file (the fault tests do that on purpose), and every later run that
    # opens a file of that name then hangs. The project never uses shared file
    # pointers, so that component is kept out.
    "OMPI_MCA_sharedfp=^sm")
# Sanitized builds: the sanitizers' options travel with the tests, so a plain
# `ctest --test-dir build-asan` runs them as scripts/sanitize.sh does. Leaks
# are reported except Open MPI's (tests/sanitize/lsan.supp). Every process
# preloads a dlclose that keeps modules mapped (tests/sanitize/keep_modules.c):
# Open MPI unloads its plugins at MPI_Finalize, and leaks of an unloaded module
# cannot be matched by a suppression. With modules kept, the fast unwinder
# suffices (the full one made tests 20-40x slower); the preload comes before
# the ASan runtime, hence verify_asan_link_order=0. use_tls=0: GCC 12's
# LeakSanitizer intermittently crashes reading a bogus dynamic-TLS range of a
# program started without mpiexec ("Tracer caught signal 11: addr=0xc28");
# without thread-local roots a block referenced only from a thread-local
# would be reported, never hidden.
if(ISOSTENCIL_SANITIZE MATCHES "address")
  list(APPEND ISOSTENCIL_TEST_ENVIRONMENT
       "LD_PRELOAD=$<TARGET_FILE:isostencil_keep_modules>"
       "ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1:check_initialization_order=1"
       "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitize/lsan.supp:print_suppressions=0:use_tls=0")
endif()
if(ISOSTENCIL_SANITIZE MATCHES "undefined")
  list(APPEND ISOSTENCIL_TEST_ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
endif()
set(ISOSTENCIL_TEST_EXTRA_ENVIRONMENT "" CACHE STRING
    "Extra NAME=value;... environment for every test (e.g. OMPI_MCA_btl=self,tcp)")
list(APPEND ISOSTENCIL_TEST_ENVIRONMENT ${ISOSTENCIL_TEST_EXTRA_ENVIRONMENT})

set(ISOSTENCIL_TEST_RANKS 1 2 3 4 8 CACHE STRING "Default rank counts of MPI tests")
set(ISOSTENCIL_TEST_TIMEOUT 300 CACHE STRING "Default timeout (s) of each test")

# Sanitized builds (cmake/IsostencilSanitizers.cmake) run slower: at the end of
# every directory that registers tests through the functions below, each of
# its tests (also those added there with a plain add_test) gets its TIMEOUT
# multiplied by ISOSTENCIL_TEST_TIME_SCALE and the factor in its environment.
# With the factor 1 (every normal build) nothing changes.
if(NOT DEFINED ISOSTENCIL_TEST_TIME_SCALE)
  set(ISOSTENCIL_TEST_TIME_SCALE 1)
endif()
function(_isostencil_scale_directory_test_times)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} TIMEOUT timeout)
    if(timeout MATCHES "^[0-9]+$")
      math(EXPR timeout "${timeout} * ${ISOSTENCIL_TEST_TIME_SCALE}")
      set_tests_properties(${test} PROPERTIES TIMEOUT ${timeout})
    endif()
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
                 "ISOSTENCIL_TEST_TIME_SCALE=${ISOSTENCIL_TEST_TIME_SCALE}")
  endforeach()
endfunction()
function(_isostencil_scale_test_times_at_directory_end)
  if(ISOSTENCIL_TEST_TIME_SCALE EQUAL 1)
    return()
  endif()
  get_property(deferred DIRECTORY PROPERTY _ISOSTENCIL_TIME_SCALE_DEFERRED)
  if(NOT deferred)
    set_property(DIRECTORY PROPERTY _ISOSTENCIL_TIME_SCALE_DEFERRED ON)
    cmake_language(DEFER CALL _isostencil_scale_directory_test_times)
  endif()
endfunction()

# isostencil_add_mpi_test(NAME <name> TARGET <exe> [RANKS n...] [TIMEOUT s]
#                         [LABELS l...] [ARGS a...])
# Registers <name>.np<n> for each rank count n, run through mpiexec, labelled
# np<n> and mpi (plus LABELS), with PROCESSORS n so ctest -j doesn't overload.
# The arguments both functions below share, checked once: NAME and TARGET
# required, nothing unknown; TIMEOUT defaulted; labels_suffix ";LABELS" or "".
# A macro, so that it parses and sets in the caller's scope.
macro(_isostencil_test_arguments function extra_multi)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;TARGET;TIMEOUT" "ARGS;LABELS;${extra_multi}")
  if(NOT arg_NAME OR NOT arg_TARGET)
    message(FATAL_ERROR "${function}: NAME and TARGET are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${function}(${arg_NAME}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${ISOSTENCIL_TEST_TIMEOUT})
  endif()
  set(labels_suffix "")
  if(arg_LABELS)
    set(labels_suffix ";${arg_LABELS}")
  endif()
  _isostencil_scale_test_times_at_directory_end()
endmacro()

function(isostencil_add_mpi_test)
  _isostencil_test_arguments(isostencil_add_mpi_test RANKS)
  if(NOT arg_RANKS)
    set(arg_RANKS ${ISOSTENCIL_TEST_RANKS})
  endif()
  foreach(ranks IN LISTS arg_RANKS)
    set(test_name ${arg_NAME}.np${ranks})
    add_test(NAME ${test_name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${arg_TARGET}> ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
    set_tests_properties(${test_name} PROPERTIES
      PROCESSORS ${ranks}
      LABELS "np${ranks};mpi${labels_suffix}"
      TIMEOUT ${arg_TIMEOUT}
      ENVIRONMENT "${ISOSTENCIL_TEST_ENVIRONMENT}")
  endforeach()
endfunction()

# isostencil_add_serial_test(NAME <name> TARGET <exe> [TIMEOUT s] [LABELS l...]
#                            [ARGS a...])
# Runs the executable directly (MPI singleton init), labelled serial.
function(isostencil_add_serial_test)
  _isostencil_test_arguments(isostencil_add_serial_test "")
  add_test(NAME ${arg_NAME} COMMAND $<TARGET_FILE:${arg_TARGET}> ${arg_ARGS})
  set_tests_properties(${arg_NAME} PROPERTIES
    LABELS "serial${labels_suffix}"
    TIMEOUT ${arg_TIMEOUT}
    ENVIRONMENT "${ISOSTENCIL_TEST_ENVIRONMENT}")
endfunction()

# isostencil_add_gtest_executable(<target> SOURCES s... [LIBRARIES l...])
# A gtest executable on the shared MPI main (MPI -> Kokkos -> gtest, exit code
# agreed over ranks), linked with isostencil::halo; warnings as errors.
function(isostencil_add_gtest_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "isostencil_add_gtest_executable(${target}): SOURCES is required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "isostencil_add_gtest_executable(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE isostencil::test_main GTest::gtest isostencil::halo
                                          ${arg_LIBRARIES})
  isostencil_warnings(${target})
endfunction()
