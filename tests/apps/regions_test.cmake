# Kokkos Tools regions: a run with a small tool library loaded
# (region_tool.c) names its phases, nested as documented in docs/kernels.md,
# and pushes and pops them in balance, at 1 and 2 ranks.
#   cmake -DMPIEXEC=... -DPREFLAGS=a|b -DEXE=... -DDECK=... -DTOOL=lib.so -DWORK=dir -P regions_test.cmake
string(REPLACE "|" ";" preflags "${PREFLAGS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Kokkos 4 reads KOKKOS_TOOLS_LIBS, Kokkos 3 KOKKOS_PROFILE_LIBRARY (a Kokkos
# that knows both takes the first; they name the same library).
set(ENV{KOKKOS_TOOLS_LIBS} "${TOOL}")
set(ENV{KOKKOS_PROFILE_LIBRARY} "${TOOL}")
set(failures "")
foreach(ranks 1 2)
  execute_process(COMMAND "${MPIEXEC}" -n ${ranks} ${preflags} "${EXE}" run "${DECK}" --quiet
                          --set grid.extent=[24,20] --set run.steps=20 --set run.tolerance=0
                          --set output.every=10 --set output.checkpoint_every=10
                          --set halo.validate_every=10 --set output.dir=out${ranks}
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  message("--- ${ranks} ranks: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    list(APPEND failures "${ranks} ranks: the run exited with ${rc}")
    continue()
  endif()
  foreach(expected IN ITEMS
          "region - > isostencil::kernel x"
          "region isostencil::kernel > isostencil::halo::start x"
          "region isostencil::kernel > isostencil::halo::wait x"
          "region - > isostencil::io::output x"
          "region - > isostencil::io::checkpoint x"
          "region - > isostencil::validate::halo x")
    if(NOT out MATCHES "${expected}")
      list(APPEND failures "${ranks} ranks: no \"${expected}N\" line")
    endif()
  endforeach()
  string(REGEX MATCHALL "regions balanced" balanced "${out}")
  list(LENGTH balanced balanced)
  if(NOT balanced EQUAL ranks)
    list(APPEND failures "${ranks} ranks: regions balanced on ${balanced} ranks")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
