# Checks shared by the `cmake -P` scripts that run decks through the driver
# (tests/apps/deck_ranks_test.cmake, restart_test.cmake,
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
