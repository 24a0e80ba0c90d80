# ParaView's view of the output: a 2-D and a 3-D run write HDF5 + XDMF, then
# xdmf_view_test.py checks bounds (the last dimension along X, 2-D in the X-Y
# plane), arrays and time steps with pvpython where installed, else with h5py
# and the XML, and renders the last step of each to a PNG under WORK.
#   cmake -DMPIEXEC=... -DPREFLAGS=a|b -DEXE=... -DINPUTS=dir -DPYTHON=... -DCHECK=... -DWORK=dir
#         -P xdmf_view_test.cmake
string(REPLACE "|" ";" preflags "${PREFLAGS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures "")
# name deck extent(deck) extent(comma) field
foreach(case IN ITEMS "jacobi_2d_5pt|[24,16]|24,16|u" "jacobi_3d_7pt|[12,10,8]|12,10,8|u")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 deck)
  list(GET case 1 extent)
  list(GET case 2 axes)
  list(GET case 3 fields)
  execute_process(COMMAND "${MPIEXEC}" -n 2 ${preflags} "${EXE}" run "${INPUTS}/${deck}.toml" --quiet
                          --set grid.extent=${extent} --set run.steps=20 --set run.tolerance=0
                          --set output.every=10 --set output.checkpoint_every=0 --set output.dir=out
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  message("--- ${deck} run: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    list(APPEND failures "${deck}: the run exited with ${rc}")
    continue()
  endif()
  execute_process(COMMAND "${PYTHON}" "${CHECK}" "out/${deck}.xmf" --extent ${axes} --fields ${fields}
                          --steps 3 --png "${WORK}/${deck}.png"
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 180)
  message("--- xdmf_view_test.py out/${deck}.xmf: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "PASSED")
    list(APPEND failures "${deck}: the XDMF check failed")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
