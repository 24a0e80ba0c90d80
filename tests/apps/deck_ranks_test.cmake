# One deck run on 1 rank and on NP ranks (oversubscribed), with halo
# validation at every step, output every few steps and a checkpoint at the
# end. Both runs must validate ("Solution validates ... halo ok"), the NP run
# must use the process grid PROCS ("on NP ranks as PROCS", e.g. 3x3x3), and
# they must write the same fields bit for bit (h5diff, exact): every output
# step and the checkpoint's state. The summaries' metric (max-norm residual,
# live cells) must agree as written (shortest round-trip text); the l2 norms
# are sums whose grouping follows the decomposition, so they are not compared.
#   cmake -DMPIEXEC=... -DNP=27 -DPREFLAGS=a|b -DEXE=... -DDECK=... -DH5DIFF=... -DWORK=dir
#         -DFIELD=u -DSTEPS=12 -DEVERY=4 [-DPROCS=3x3x3] -P deck_ranks_test.cmake
foreach(var MPIEXEC NP EXE DECK H5DIFF WORK FIELD STEPS EVERY)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deck_ranks_test.cmake: ${var} is required")
  endif()
endforeach()
string(REPLACE "|" ";" preflags "${PREFLAGS}")
get_filename_component(name "${DECK}" NAME_WE)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures "")
include("${CMAKE_CURRENT_LIST_DIR}/../support/deck_checks.cmake")

set(common --set run.steps=${STEPS} --set run.residual_every=${EVERY} --set halo.validate_every=1
           --set output.every=${EVERY} --set output.checkpoint_every=${STEPS})
foreach(ranks 1 ${NP})
  execute_process(
    COMMAND "${MPIEXEC}" -n ${ranks} ${preflags} "${EXE}" run "${DECK}" ${common}
            --set output.dir=np${ranks}
    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("--- ${ranks} rank(s): exit ${rc}\n${out}${err}")
  deck_check_validated_run("${ranks} rank(s)" "${rc}" "${out}")
  if(ranks EQUAL NP AND DEFINED PROCS AND NOT out MATCHES " on ${NP} ranks as ${PROCS}\n")
    list(APPEND failures "${ranks} ranks: the grid is not decomposed as ${PROCS}")
  endif()
  # The metric's value where it was first and last measured, as written.
  set(summary "${WORK}/np${ranks}/${name}.summary.json")
  if(EXISTS "${summary}")
    file(READ "${summary}" json)
    foreach(when initial final)
      if(json MATCHES "\"${when}\": {[^}]*\"value\": ([^,\n}]*)")
        set(value_${when}_${ranks} "${CMAKE_MATCH_1}")
      else()
        list(APPEND failures "${ranks} rank(s): no ${when} value in ${summary}")
      endif()
    endforeach()
  else()
    list(APPEND failures "${ranks} rank(s): no ${summary}")
  endif()
endforeach()

foreach(when initial final)
  if(NOT "${value_${when}_1}" STREQUAL "${value_${when}_${NP}}")
    list(APPEND failures
         "summary ${when} value: ${value_${when}_1} on 1 rank, ${value_${when}_${NP}} on ${NP}")
  endif()
endforeach()

deck_compare_runs("np1" "np${NP}" "${name}" "${NP} ranks differ from 1" compared)

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("${NP} ranks (${PROCS}) equal 1 rank bit for bit: ${compared} output steps of ${FIELD}, "
        "the checkpoint, the summary's metric (initial ${value_initial_1}, final ${value_final_1})")
