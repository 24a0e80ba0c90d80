# One deck on NP ranks at halo.depth = 1 and at DEPTH (deep halos: one
# exchange per block of DEPTH steps), with halo validation, residuals and
# output every EVERY steps and checkpoints every CHECKPOINT steps (chosen
# inside blocks, so blocks are cut short there). Both runs must validate and
# write the same fields bit for bit (h5diff, exact) at every output step and
# in the checkpoint, and their summaries must report the same steps and the
# same metric figures (initial and final value, as written).
#   cmake -DMPIEXEC=... -DNP=2 -DPREFLAGS=a|b -DEXE=... -DDECK=... -DH5DIFF=... -DWORK=dir
#         -DFIELD=u -DSTEPS=17 -DEVERY=5 -DCHECKPOINT=7 -DDEPTH=3 [-DEXTRA=--set|k=v]
#         -P deck_depth_test.cmake
foreach(var MPIEXEC NP EXE DECK H5DIFF WORK FIELD STEPS EVERY CHECKPOINT DEPTH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deck_depth_test.cmake: ${var} is required")
  endif()
endforeach()
string(REPLACE "|" ";" preflags "${PREFLAGS}")
string(REPLACE "|" ";" extra "${EXTRA}")
get_filename_component(name "${DECK}" NAME_WE)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures "")
include("${CMAKE_CURRENT_LIST_DIR}/../support/deck_checks.cmake")

set(common --set run.steps=${STEPS} --set run.residual_every=${EVERY} --set halo.validate_every=${EVERY}
           --set output.every=${EVERY} --set output.checkpoint_every=${CHECKPOINT} ${extra})
foreach(depth 1 ${DEPTH})
  # DEPTH=auto: the depth the cost model picks, priced with the kernel's own rate.
  set(value ${depth})
  if(depth STREQUAL "auto")
    set(value "\"auto\"")
  endif()
  execute_process(
    COMMAND "${MPIEXEC}" -n ${NP} ${preflags} "${EXE}" run "${DECK}" ${common}
            --set halo.depth=${value} --set output.dir=depth${depth}
    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("--- depth ${depth}: exit ${rc}\n${out}${err}")
  deck_check_validated_run("depth ${depth}" "${rc}" "${out}")
  # The deep run must say it runs deep (else both runs could be depth 1).
  if(depth STREQUAL "auto")
    if(NOT out MATCHES "depth +auto: k = ([1-8]): (lowest predicted time per step|fastest of the depths timed)[^\n]*k=1 [0-9.]+[^\n]*measured by the kernel")
      list(APPEND failures "depth auto: the header does not give the choice and its reason")
    elseif(out MATCHES "depth +auto: k = ([1-8]): fastest of the depths timed on the run's own kernel \\(us per step: ([^)]*)\\)")
      # The timed depths must include k = 1, and the choice must be the fastest of them.
      set(picked ${CMAKE_MATCH_1})
      string(REPLACE ", " ";" timed "${CMAKE_MATCH_2}")
      set(fastest "")
      set(fastest_k "")
      foreach(entry ${timed})
        if(entry MATCHES "^k=([1-8]) ([0-9.]+)$")
          if(fastest STREQUAL "" OR CMAKE_MATCH_2 LESS fastest)
            set(fastest ${CMAKE_MATCH_2})
            set(fastest_k ${CMAKE_MATCH_1})
          endif()
        else()
          list(APPEND failures "depth auto: unreadable timing '${entry}'")
        endif()
      endforeach()
      if(NOT "${timed}" MATCHES "^k=1 ")
        list(APPEND failures "depth auto: k = 1 was not timed (${timed})")
      endif()
      # Ties at the printed precision may go either way (timed is a list: ';' between entries).
      if(NOT picked EQUAL fastest_k AND NOT "${timed}" MATCHES "(^|;)k=${picked} ${fastest}(;|$)")
        list(APPEND failures "depth auto: picked k = ${picked}, but k = ${fastest_k} timed fastest (${timed})")
      endif()
    endif()
  elseif(NOT depth EQUAL 1 AND NOT out MATCHES "; halo depth ${depth} \\(one exchange per ${depth} steps")
    list(APPEND failures "depth ${depth}: the header does not say \"halo depth ${depth}\"")
  endif()
  set(summary "${WORK}/depth${depth}/${name}.summary.json")
  if(EXISTS "${summary}")
    file(READ "${summary}" json)
    foreach(when initial final)
      if(json MATCHES "\"${when}\": {([^}]*)}")
        set(figures_${when}_${depth} "${CMAKE_MATCH_1}")
      else()
        list(APPEND failures "depth ${depth}: no ${when} figures in ${summary}")
      endif()
    endforeach()
    if(json MATCHES "\"steps\": {([^}]*)}")
      set(steps_${depth} "${CMAKE_MATCH_1}")
    endif()
  else()
    list(APPEND failures "depth ${depth}: no ${summary}")
  endif()
endforeach()

foreach(when initial final)
  if(NOT "${figures_${when}_1}" STREQUAL "${figures_${when}_${DEPTH}}")
    list(APPEND failures "summary ${when}: {${figures_${when}_1}} at depth 1, "
                         "{${figures_${when}_${DEPTH}}} at depth ${DEPTH}")
  endif()
endforeach()
if(NOT "${steps_1}" STREQUAL "${steps_${DEPTH}}")
  list(APPEND failures "summary steps: ${steps_1} at depth 1, ${steps_${DEPTH}} at depth ${DEPTH}")
endif()

deck_compare_runs("depth1" "depth${DEPTH}" "${name}" "depth ${DEPTH} differs from 1" compared)

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("depth ${DEPTH} equals depth 1 bit for bit on ${NP} ranks: ${compared} output steps of ${FIELD}, "
        "the checkpoint, the summary's figures")
