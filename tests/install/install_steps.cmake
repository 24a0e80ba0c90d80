# Shared by the install tests (cmake -P scripts): set install_test_name and
# WORK_DIR, then include this file.

# step(NAME [EXPECT_RC rc] [OUT var] COMMAND ...): runs in WORK_DIR, checks the exit code.
function(step name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPECT_RC;OUT" "COMMAND")
  if(NOT DEFINED arg_EXPECT_RC)
    set(arg_EXPECT_RC 0)
  endif()
  execute_process(COMMAND ${arg_COMMAND} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${rc}" STREQUAL "${arg_EXPECT_RC}")
    list(JOIN arg_COMMAND " " text)
    message(FATAL_ERROR "${install_test_name}: ${name}: exit code ${rc}, expected ${arg_EXPECT_RC}\n"
                        "command: ${text}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  message(STATUS "ok: ${name}")
  if(arg_OUT)
    set(${arg_OUT} "${out}\n${err}" PARENT_SCOPE)
  endif()
endfunction()

function(expect name text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${install_test_name}: ${name}: output does not match \"${regex}\":\n${text}")
  endif()
  message(STATUS "ok: ${name}")
endfunction()

# The C example compiled and linked by the C compiler alone (not an MPI
# wrapper) with what PREFIX's iso.pc says, MPI included. Sets OUT to the
# program, or to "" (with a note) where pkg-config is missing.
function(build_c_example_with_pkg_config prefix out)
  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(STATUS "skipped: pkg-config not found (apt-get install pkgconf): iso.pc not checked")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
  step("pkg-config iso" OUT pc_flags COMMAND ${PKG_CONFIG} --cflags --libs iso)
  string(STRIP "${pc_flags}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  step("cc c_collectives.c $(pkg-config --cflags --libs iso)" COMMAND ${C_COMPILER} -std=c11
       ${SOURCE_DIR}/apps/examples/collectives/c_collectives.c ${pc_flags} -o ${WORK_DIR}/c_collectives_pc)
  set(${out} ${WORK_DIR}/c_collectives_pc PARENT_SCOPE)
endfunction()
