# The output as a user opens it: `isostencil run` writes HDF5 + XDMF, then
# scripts/plot_field.py reads the XDMF file (following its references into
# the HDF5 file with h5py) and draws PNG frames.
#   cmake -DMPIEXEC=... -DPREFLAGS=a|b -DEXE=... -DDECK=... -DPYTHON=... -DPLOT=... -DWORK=dir
#         -P io_plot_test.cmake
string(REPLACE "|" ";" preflags "${PREFLAGS}")
get_filename_component(name "${DECK}" NAME_WE)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${MPIEXEC}" -n 2 ${preflags} "${EXE}" run "${DECK}" --quiet
                        --set run.steps=40 --set output.every=20 --set output.dir=out
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
message("--- run: exit ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "FAILED: the run exited with ${rc}")
endif()
execute_process(COMMAND "${PYTHON}" "${PLOT}" "out/${name}.xmf" --out frames
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
message("--- plot_field.py out/${name}.xmf: exit ${rc}\n${out}${err}")
set(failures "")
if(NOT rc EQUAL 0)
  list(APPEND failures "plot_field.py exited with ${rc}")
endif()
foreach(step 000000 000020 000040)
  if(NOT EXISTS "${WORK}/frames/${name}_cells_${step}.png")
    list(APPEND failures "no frame frames/${name}_cells_${step}.png")
  endif()
endforeach()
if(NOT out MATCHES "cells step 40, 80x120, range \\[0, 1\\]")
  list(APPEND failures "the last frame is not the 80x120 cell field")
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
