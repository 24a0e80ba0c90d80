# libFuzzer targets (tests/fuzz/). With ISOSTENCIL_FUZZ=ON (clang only, e.g.
# CMAKE_CXX_COMPILER=clang++-14) every target of the project is compiled with
# coverage instrumentation, AddressSanitizer and UBSan, so the fuzzers see
# inside the libraries they call; build just the fuzz_* targets
# (scripts/fuzz.sh). Without it, the same targets are built as replay
# programs that run every saved input as an ordinary test.
include_guard(GLOBAL)

option(ISOSTENCIL_FUZZ "Build the libFuzzer targets (clang only; instruments the whole build)" OFF)
if(ISOSTENCIL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ISOSTENCIL_FUZZ=ON needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14 "
                        "-DCMAKE_C_COMPILER=clang-14); found ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# isostencil_add_fuzz_target(<name> SOURCES s... [LIBRARIES l...] [INCLUDES dirs...])
# The sources define LLVMFuzzerTestOneInput. Always: fuzz_<name>_replay and the
# serial test fuzz_replay.<name>, which replays tests/fuzz/corpus/<name>/ and
# tests/fuzz/regressions/<name>/. With ISOSTENCIL_FUZZ: the fuzzer fuzz_<name>.
function(isostencil_add_fuzz_target name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES;INCLUDES")
  set(replay_main ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
  set(inputs ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name}
             ${PROJECT_SOURCE_DIR}/tests/fuzz/regressions/${name})
  add_executable(fuzz_${name}_replay ${arg_SOURCES} ${replay_main})
  target_include_directories(fuzz_${name}_replay PRIVATE ${arg_INCLUDES})
  target_link_libraries(fuzz_${name}_replay PRIVATE ${arg_LIBRARIES})
  isostencil_warnings(fuzz_${name}_replay)
  isostencil_add_serial_test(NAME fuzz_replay.${name} TARGET fuzz_${name}_replay
                             LABELS fuzz TIMEOUT 120 ARGS ${inputs})
  if(ISOSTENCIL_FUZZ)
    add_executable(fuzz_${name} ${arg_SOURCES})
    target_include_directories(fuzz_${name} PRIVATE ${arg_INCLUDES})
    target_link_libraries(fuzz_${name} PRIVATE ${arg_LIBRARIES})
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    isostencil_warnings(fuzz_${name})
  endif()
endfunction()
