# What `run` says about a restarted segment and about its time left:
#   1. a run to step 30 with a checkpoint there (validated at step 0);
#   2. a restart 30 -> 40: no step of it is a multiple of halo.validate_every,
#      which the summary must say as such (not "halo.validate_every = 0");
#   3. a restart 30 -> 30: no step to run, a warning;
#   4. progress lines with a tolerance give the ETA as an upper bound
#      ("ETA <= ..."), without one as a plain figure.
#   cmake -DEXE=... -DDECK=jacobi_2d_5pt.toml -DWORK=dir -P run_notes_test.cmake
foreach(var EXE DECK WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_notes_test.cmake: ${var} is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
get_filename_component(name "${DECK}" NAME_WE)
set(failures "")

function(run label)
  execute_process(COMMAND "${EXE}" run ${ARGN} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  message("--- ${label}: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED: ${label} exited with ${rc}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()

run("1: steps 0 -> 30, checkpoint" "${DECK}" --set run.steps=30 --set run.residual_every=10
    --set halo.validate_every=5000 --set output.checkpoint_every=30 --set output.format=none
    --set output.dir=out)
run("2: restart 30 -> 40" --restart out/${name}.checkpoint.h5 --set run.steps=40)
if(NOT out MATCHES "no validation in this segment \\(no step in 30 -> 40 is a multiple of halo.validate_every = 5000\\)")
  list(APPEND failures "2: the summary does not say the segment 30 -> 40 had no validation step")
endif()
if(out MATCHES "validate_every = 0")
  list(APPEND failures "2: the summary says halo.validate_every = 0, while the deck has 5000")
endif()
if(out MATCHES "warning")
  list(APPEND failures "2: a warning for a restart that ran steps")
endif()
run("3: restart 30 -> 30" --restart out/${name}.checkpoint.h5 --set run.steps=30)
if(NOT out MATCHES "warning: the restart ran no steps: the checkpoint is at step 30 = run.steps")
  list(APPEND failures "3: no warning for a restart that ran no steps")
endif()
run("4a: tolerance" "${DECK}" --set run.steps=30 --set run.residual_every=10 --set run.tolerance=1e-30
    --set output.format=none --set output.dir=eta)
if(NOT out MATCHES "step +10/30 .* ETA <= ")
  list(APPEND failures "4a: with a tolerance the ETA is not marked as an upper bound (ETA <= ...)")
endif()
run("4b: no tolerance" "${DECK}" --set run.steps=30 --set run.residual_every=10 --set run.tolerance=0
    --set output.format=none --set output.dir=eta)
if(NOT out MATCHES "step +10/30 .* ETA [0-9]")
  list(APPEND failures "4b: without a tolerance the ETA is not a plain figure")
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
