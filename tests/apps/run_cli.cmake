# Runs one driver command and checks its exit code, output and JSON.
#   cmake -DEXE=path -DARGS="a|b|c" [-DEXPECT_RC=0] [-DSTDOUT_REGEX=re]
#         [-DSTDERR_REGEX=re] [-DSTDOUT_EMPTY=ON] [-DJSON_CHECKS="a.b.c=6|d=true"]
#         [-DJSON_FILE=path] [-DREMOVE=path] -P run_cli.cmake
# JSON_CHECKS read stdout, or the file JSON_FILE once the command has run
# (REMOVE, a file or folder, is deleted first, so an old file cannot pass).
# ARGS and JSON_CHECKS separate items with '|'; a literal ';' inside an item is
# written '\;'. Plain ctest cannot parse JSON; CMake's string(JSON) can, so the
# check needs nothing beyond CMake itself.
if(NOT EXE)
  message(FATAL_ERROR "run_cli.cmake: EXE is required")
endif()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
# ctest hands a ';' inside an item over unescaped; keep it inside its item.
string(REPLACE ";" "\\;" arguments "${ARGS}")
string(REPLACE "|" ";" arguments "${arguments}")

if(REMOVE)
  file(REMOVE_RECURSE "${REMOVE}")
endif()
execute_process(COMMAND "${EXE}" ${arguments}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("command: ${EXE} ${ARGS}\nexit code: ${rc}\n--- stdout\n${out}--- stderr\n${err}---")

set(failures "")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  list(APPEND failures "exit code ${rc}, expected ${EXPECT_RC}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  list(APPEND failures "stdout does not match '${STDOUT_REGEX}'")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  list(APPEND failures "stderr does not match '${STDERR_REGEX}'")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  list(APPEND failures "stdout is not empty")
endif()

if(JSON_CHECKS)
  set(json "${out}")
  if(JSON_FILE)
    if(EXISTS "${JSON_FILE}")
      file(READ "${JSON_FILE}" json)
    else()
      list(APPEND failures "no ${JSON_FILE}")
    endif()
  endif()
  string(REPLACE "|" ";" checks "${JSON_CHECKS}")
  foreach(check IN LISTS checks)
    if(NOT check MATCHES "^([^=]+)=(.*)$")
      message(FATAL_ERROR "run_cli.cmake: bad JSON check '${check}' (want path.to.key=value)")
    endif()
    set(path "${CMAKE_MATCH_1}")
    set(want "${CMAKE_MATCH_2}")
    string(REPLACE "." ";" keys "${path}")
    string(JSON got ERROR_VARIABLE json_error GET "${json}" ${keys})
    if(json_error)
      list(APPEND failures "JSON ${path}: ${json_error}")
    elseif(NOT "${got}" STREQUAL "${want}")
      list(APPEND failures "JSON ${path} = ${got}, expected ${want}")
    endif()
  endforeach()
endif()

if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
