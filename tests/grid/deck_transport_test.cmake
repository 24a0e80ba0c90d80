# One deck run three ways on NP ranks, with halo validation at every step,
# output every few steps and a checkpoint: transport "datatypes", transport
# "packed", and the automatic transport with device memory simulated
# (ISOSTENCIL_SIMULATE_DEVICE_MEMORY=1: packed, host-staged, every host access
# through a mirror). Each run must validate ("Solution validates ... halo
# ok") and write the same fields bit for bit (h5diff,
# exact) as the datatype run, in the output series and in the checkpoint.
#   cmake -DMPIEXEC=... -DNP=2 -DPREFLAGS=a|b -DEXE=... -DDECK=... -DH5DIFF=... -DWORK=dir
#         -DFIELD=u -DSTEPS=12 -P deck_transport_test.cmake
foreach(var MPIEXEC NP EXE DECK H5DIFF WORK FIELD STEPS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deck_transport_test.cmake: ${var} is required")
  endif()
endforeach()
string(REPLACE "|" ";" preflags "${PREFLAGS}")
get_filename_component(name "${DECK}" NAME_WE)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures "")
include("${CMAKE_CURRENT_LIST_DIR}/../support/deck_checks.cmake")

set(common --set run.steps=${STEPS} --set run.residual_every=4 --set halo.validate_every=1
           --set output.every=4 --set output.checkpoint_every=${STEPS})
foreach(variant datatypes packed simulated)
  set(environment "")
  set(transport ${variant})
  if(variant STREQUAL "simulated")
    set(environment "${CMAKE_COMMAND}" -E env ISOSTENCIL_SIMULATE_DEVICE_MEMORY=1)
    set(transport auto)
  endif()
  execute_process(
    COMMAND ${environment} "${MPIEXEC}" -n ${NP} ${preflags} "${EXE}" run "${DECK}" ${common}
            --set halo.transport=${transport} --set output.dir=${variant}
    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("--- ${variant} (halo.transport = ${transport}): exit ${rc}\n${out}${err}")
  deck_check_validated_run("${variant}" "${rc}" "${out}")
endforeach()

set(EVERY 4)  # output.every above
foreach(variant packed simulated)
  deck_compare_runs("datatypes" "${variant}" "${name}" "${variant} differs from the datatype run's" compared)
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("all three runs validate and wrote the same fields")
