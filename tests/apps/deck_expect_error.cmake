# A bad deck through the driver: runs `isostencil check` and `isostencil run`
# on NP ranks, each rank's exit code reported by a shell wrapper, and checks
# that (1) every rank exits with code 2, (2) stderr matches the expected
# error, printed once (rank 0 speaks for all ranks), (3) nothing ran: no
# progress or summary on stdout and no output directory.
#   cmake [-DMPIEXEC=...] -DNP=2 -DPREFLAGS=... -DEXE=... -DDECK=file.toml -DWORK=dir
#         [-DEXTRA="--set|a=b"] [-DSUBCOMMANDS="check|run"] -DEXPECT=regex -P deck_expect_error.cmake
foreach(var NP EXE DECK WORK EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deck_expect_error.cmake: ${var} is required")
  endif()
endforeach()
string(REPLACE "|" ";" extra "${EXTRA}")
string(REPLACE "|" ";" preflags "${PREFLAGS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Each rank prints its exit code after the driver returns, and the wrapper
# itself exits with 0: mpiexec kills the other ranks as soon as one process
# exits non-zero, which would cut off their reports.
set(wrapper [=[
"$0" "$@"
code=$?
echo "[rank-exit ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} code $code]"
exit 0
]=])
set(failures "")
if(NOT DEFINED SUBCOMMANDS)
  set(SUBCOMMANDS "check|run")
endif()
string(REPLACE "|" ";" subcommands "${SUBCOMMANDS}")
foreach(subcommand IN LISTS subcommands)
  if(MPIEXEC)
    set(launch "${MPIEXEC}" -n ${NP} ${preflags})
  else()
    set(launch "")  # a singleton: one rank without mpiexec
  endif()
  execute_process(
    COMMAND ${launch} sh -c "${wrapper}" "${EXE}" ${subcommand} "${DECK}" ${extra}
    WORKING_DIRECTORY "${WORK}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  message("--- isostencil ${subcommand} ${DECK} ${extra} on ${NP} ranks: exit ${rc}\n--- stdout\n${out}--- stderr\n${err}")
  string(REGEX MATCHALL "\\[rank-exit [0-9]+ code 2\\]" exits "${out}")
  list(LENGTH exits exit_count)
  if(NOT exit_count EQUAL NP)
    list(APPEND failures "${subcommand}: ${exit_count} of ${NP} ranks exited with code 2")
  endif()
  if(NOT err MATCHES "${EXPECT}")
    list(APPEND failures "${subcommand}: stderr does not match '${EXPECT}'")
  endif()
  # Printed once (by rank 0), not once per rank.
  string(REGEX MATCHALL "isostencil (run|check): nothing was run|[^\n]*: error: [^\n]*" messages "${err}")
  list(LENGTH messages message_count)
  list(REMOVE_DUPLICATES messages)
  list(LENGTH messages distinct_count)
  if(NOT message_count EQUAL distinct_count)
    list(APPEND failures "${subcommand}: the error is printed more than once (by several ranks)")
  endif()
  if(out MATCHES "Solution|summary:|step +[0-9]")
    list(APPEND failures "${subcommand}: something ran")
  endif()
endforeach()
if(EXISTS "${WORK}/output")
  list(APPEND failures "an output directory was created")
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
