# Included by tests/apps/CMakeLists.txt where h5diff was found (uses
# ISOSTENCIL_H5DIFF, deck_preflags, deck_scratch from there).
# Deep halos: halo.depth = K gives the fields, checkpoints and summary
# figures of depth 1 bit for bit (deck_depth_test.cmake), with outputs and
# checkpoints at steps inside blocks of K (blocks cut short there), halo
# validation and residuals; even and uneven, periodic and bounded, 2-D to
# 4-D; depth auto too. Spec: deck|field|depth|ranks (27 ranks: labelled scale and run serially, as the deck_ranks tests).
foreach(spec "jacobi_2d_5pt|u|3|1 2 3 4 8" "jacobi_3d_7pt|u|4|2 4" "jacobi_3d_27pt|u|2|3 8 27"
             "jacobi_4d|u|2|2 4" "life_2d_soup|cells|5|2 3" "life_3d|cells|3|4"
             "advection_2d|u|6|2" "jacobi_3d_27pt|u|auto|2 3" "life_2d_soup|cells|auto|2")
  string(REPLACE "|" ";" spec "${spec}")
  list(GET spec 0 deck)
  list(GET spec 1 field)
  list(GET spec 2 depth)
  list(GET spec 3 rank_counts)
  separate_arguments(rank_counts)
  foreach(ranks IN LISTS rank_counts)
    set(test apps.deck_depth.${deck}.depth${depth}.np${ranks})
    add_test(NAME ${test}
             COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${ranks} "-DPREFLAGS=${deck_preflags}"
                     -DEXE=$<TARGET_FILE:isostencil> -DDECK=${PROJECT_SOURCE_DIR}/inputs/${deck}.toml
                     -DH5DIFF=${ISOSTENCIL_H5DIFF} -DWORK=${deck_scratch}/deck_depth/${deck}.np${ranks}
                     -DFIELD=${field} -DSTEPS=17 -DEVERY=5 -DCHECKPOINT=7 -DDEPTH=${depth}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/deck_depth_test.cmake)
    set(labels "np${ranks};mpi;apps;deck;depth")
    if(ranks EQUAL 27)
      set(labels "${labels};scale")
      set_tests_properties(${test} PROPERTIES RUN_SERIAL ON)
    endif()
    set_tests_properties(${test} PROPERTIES
      PROCESSORS ${ranks} LABELS "${labels}" TIMEOUT 240
      ENVIRONMENT "${ISOSTENCIL_TEST_ENVIRONMENT}")
  endforeach()
endforeach()
