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

foreach(variant packed simulated)
  foreach(file "${name}.h5" "${name}.checkpoint.h5")
    set(dataset "")
    if(file MATCHES "checkpoint")
      set(dataset "/state/${FIELD}")
    endif()
    set(objects "")
    if(dataset)
      set(objects "${dataset}" "${dataset}")
    else()
      # Every output step's field (the groups' attributes hold the deck, which differs).
      foreach(step RANGE 0 ${STEPS} 4)
        deck_step_group(${step} group)
        execute_process(COMMAND "${H5DIFF}" "datatypes/${file}" "${variant}/${file}"
                                "/${group}/${FIELD}" "/${group}/${FIELD}"
                        WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE hout ERROR_VARIABLE herr)
        if(NOT rc EQUAL 0)
          list(APPEND failures "${variant}: ${file} /${group}/${FIELD} differs from the datatype run's:\n${hout}${herr}")
        endif()
      endforeach()
      continue()
    endif()
    execute_process(COMMAND "${H5DIFF}" "datatypes/${file}" "${variant}/${file}" ${objects}
                    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE hout ERROR_VARIABLE herr)
    if(NOT rc EQUAL 0)
      list(APPEND failures "${variant}: ${file} ${dataset} differs from the datatype run's:\n${hout}${herr}")
    endif()
  endforeach()
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("all three runs validate and wrote the same fields")
