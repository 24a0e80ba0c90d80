# Restart equals an uninterrupted run, bit for bit:
#   A: NP_FIRST ranks, STEPS steps in one go;
#   B: NP_FIRST ranks up to a checkpoint at CHECKPOINT (with CRASH_AT: the run
#      goes on and is killed while writing the checkpoint of step CRASH_AT,
#      after its temporary file and before the rename, so the checkpoint of
#      step CHECKPOINT must survive), then NP_SECOND ranks from the checkpoint
#      to STEPS;
#   h5diff (exact comparison) of the final field of A and B.
# With SIGNAL (TERM, USR1, ...): B runs first, without an end in sight, and is
# stopped by that signal (signal_stop.py, run by PYTHON, checks the stop:
# exit code SIGNAL_RC, message, summary, checkpoint); CHECKPOINT is the step
# it stopped at and A and the restart run to CHECKPOINT + STEPS.
#   cmake -DMPIEXEC=... -DPREFLAGS=a|b -DEXE=... -DDECK=... -DH5DIFF=... -DWORK=dir
#         -DFIELD=u -DSTEPS=60 -DCHECKPOINT=30 -DNP_FIRST=2 -DNP_SECOND=3 [-DCRASH_AT=40]
#         [-DSIGNAL=USR1 -DSIGNAL_RC=3 -DPYTHON=python3 -DSIGNAL_STOP=signal_stop.py]
#         [-DSETS=--set|run.tolerance=0]  (every run)
#         [-DB_SETS=--set|halo.depth=3]  (run B only: its first part and, through
#         the checkpoint's deck, the restart)
#         -P restart_test.cmake
set(required MPIEXEC EXE DECK H5DIFF WORK FIELD STEPS NP_FIRST NP_SECOND)
if(DEFINED SIGNAL)
  list(APPEND required SIGNAL_RC PYTHON SIGNAL_STOP)
else()
  list(APPEND required CHECKPOINT)
endif()
foreach(var IN LISTS required)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "restart_test.cmake: ${var} is required")
  endif()
endforeach()
string(REPLACE "|" ";" preflags "${PREFLAGS}")
get_filename_component(name "${DECK}" NAME_WE)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures "")
include("${CMAKE_CURRENT_LIST_DIR}/../support/deck_checks.cmake")

function(run_driver label expect_ok)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("--- ${label}: exit ${rc}\n${out}${err}")
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED: ${label} exited with ${rc}")
  endif()
  if(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "FAILED: ${label} should have been killed")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(common --set output.every=0 --set halo.validate_every=0)
if(DEFINED SETS)  # every run, A and B
  string(REPLACE "|" ";" sets "${SETS}")
  list(APPEND common ${sets})
endif()
string(REPLACE "|" ";" b_sets "${B_SETS}")
macro(run_uninterrupted)
  run_driver("A: ${NP_FIRST} ranks, steps 0 -> ${STEPS}" ON
    "${MPIEXEC}" -n ${NP_FIRST} ${preflags} "${EXE}" run "${DECK}" --quiet ${common} ${extra}
    --set run.steps=${STEPS} --set output.dir=a)
endmacro()
set(extra "")
if(DEFINED SIGNAL)
  # No checkpoint, output or progress step to stop at: only the agreement
  # on signals bounds the chunks of steps (and no tolerance ends the run).
  set(extra --set run.tolerance=0 --set output.checkpoint_every=0)
  execute_process(
    COMMAND "${PYTHON}" "${SIGNAL_STOP}" --signal ${SIGNAL} --expect-rc ${SIGNAL_RC}
            --summary "b/${name}.summary.json" --step-file stopped_step --
            "${MPIEXEC}" -n ${NP_FIRST} ${preflags} "${EXE}" run "${DECK}" ${common} ${extra} ${b_sets}
            --set run.steps=1000000000 --set run.residual_every=1000000000 --set output.dir=b
    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 180)
  message("--- B: ${NP_FIRST} ranks, stopped by SIG${SIGNAL}: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED: the stop by SIG${SIGNAL}")
  endif()
  file(READ "${WORK}/stopped_step" CHECKPOINT)
  math(EXPR STEPS "${CHECKPOINT} + ${STEPS}")
  run_uninterrupted()
else()
  run_uninterrupted()
endif()
if(DEFINED SIGNAL)
elseif(DEFINED CRASH_AT)
  run_driver("B: ${NP_FIRST} ranks, killed while writing the checkpoint of step ${CRASH_AT}" OFF
    "${CMAKE_COMMAND}" -E env ISOSTENCIL_TEST_ABORT_CHECKPOINT=${CRASH_AT}
    "${MPIEXEC}" -n ${NP_FIRST} ${preflags} "${EXE}" run "${DECK}" --quiet ${common} ${b_sets}
    --set run.steps=${STEPS} --set output.checkpoint_every=${CHECKPOINT} --set output.dir=b)
  if(NOT EXISTS "${WORK}/b/${name}.checkpoint.h5.tmp")
    list(APPEND failures "the killed run left no temporary checkpoint (b/${name}.checkpoint.h5.tmp)")
  endif()
else()
  run_driver("B: ${NP_FIRST} ranks, steps 0 -> ${CHECKPOINT}, checkpoint" ON
    "${MPIEXEC}" -n ${NP_FIRST} ${preflags} "${EXE}" run "${DECK}" --quiet ${common} ${b_sets}
    --set run.steps=${CHECKPOINT} --set output.checkpoint_every=${CHECKPOINT} --set output.dir=b)
endif()
run_driver("B: ${NP_SECOND} ranks, restart -> ${STEPS}" ON
  "${MPIEXEC}" -n ${NP_SECOND} ${preflags} "${EXE}" run --restart "b/${name}.checkpoint.h5"
  --set run.steps=${STEPS})
if(NOT last_output MATCHES "restart from b/${name}.checkpoint.h5 at step ${CHECKPOINT}\\)")
  list(APPEND failures "the restart did not start at step ${CHECKPOINT}")
endif()
if(NOT last_output MATCHES "on ${NP_SECOND} rank")
  list(APPEND failures "the restart did not run on ${NP_SECOND} ranks")
endif()

# The signal tests size STEPS by the machine's speed: past 999999 the group
# name has more than 6 digits.
deck_step_group(${STEPS} group)
set(dataset "/${group}/${FIELD}")
execute_process(COMMAND "${H5DIFF}" "a/${name}.h5" "b/${name}.h5" "${dataset}" "${dataset}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("--- h5diff a/${name}.h5 b/${name}.h5 ${dataset}: exit ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  list(APPEND failures "the restarted field ${dataset} differs from the uninterrupted run's")
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED: ${dataset} identical after a restart from ${NP_FIRST} to ${NP_SECOND} ranks")
