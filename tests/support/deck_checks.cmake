# Checks shared by the `cmake -P` scripts that run decks through the driver
# (tests/apps/deck_ranks_test.cmake, deck_depth_test.cmake, restart_test.cmake,
# tests/grid/deck_transport_test.cmake). Include after `set(failures "")`.

# The output group of `step` as the driver names it: step_%06d (at least six
# digits, more past 999999).
function(deck_step_group step out_var)
  string(LENGTH "${step}" digits)
  if(digits LESS 6)
    string(LENGTH "000000${step}" length)
    math(EXPR start "${length} - 6")
    string(SUBSTRING "000000${step}" ${start} 6 padded)
  else()
    set(padded "${step}")
  endif()
  set(${out_var} "step_${padded}" PARENT_SCOPE)
endfunction()

# Appends to `failures` what is wrong with one run that must succeed and
# validate: a nonzero exit, no "Solution validates ... halo ok", or a failed
# validation in its output.
function(deck_check_validated_run label rc out)
  set(found "${failures}")
  if(NOT rc EQUAL 0)
    list(APPEND found "${label}: exit code ${rc}")
  endif()
  if(NOT out MATCHES "Solution validates: [^\n]*halo ok")
    list(APPEND found "${label}: no \"Solution validates ... halo ok\"")
  endif()
  if(out MATCHES "does not validate|MISMATCH")
    list(APPEND found "${label}: a validation failed")
  endif()
  set(failures "${found}" PARENT_SCOPE)
endfunction()

# Appends to `failures` every output step (0, EVERY, ... STEPS) of FIELD and
# the checkpoint's state where run folders `a` and `b` (under WORK, deck
# `name`) differ (h5diff: exact), each named with `what` ("depth 3 differs
# from 1"); sets `compared_var` to the number of output steps compared.
function(deck_compare_runs a b name what compared_var)
  set(found "${failures}")
  set(compared 0)
  foreach(step RANGE 0 ${STEPS} ${EVERY})
    deck_step_group(${step} group)
    execute_process(COMMAND "${H5DIFF}" "${a}/${name}.h5" "${b}/${name}.h5" "/${group}/${FIELD}" "/${group}/${FIELD}"
                    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE hout ERROR_VARIABLE herr)
    if(NOT rc EQUAL 0)
      list(APPEND found "${name}.h5 /${group}/${FIELD}: ${what}:\n${hout}${herr}")
    endif()
    math(EXPR compared "${compared} + 1")
  endforeach()
  execute_process(COMMAND "${H5DIFF}" "${a}/${name}.checkpoint.h5" "${b}/${name}.checkpoint.h5"
                          "/state/${FIELD}" "/state/${FIELD}"
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE hout ERROR_VARIABLE herr)
  if(NOT rc EQUAL 0)
    list(APPEND found "${name}.checkpoint.h5 /state/${FIELD}: ${what}:\n${hout}${herr}")
  endif()
  set(failures "${found}" PARENT_SCOPE)
  set(${compared_var} ${compared} PARENT_SCOPE)
endfunction()
