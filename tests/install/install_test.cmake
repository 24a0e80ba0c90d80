# cmake -P script (tests/install/CMakeLists.txt passes the variables).
# Every step names itself; the first failure stops the test with its output.
cmake_minimum_required(VERSION 3.20)

set(prefix ${WORK_DIR}/prefix)
# -DKEEP=ON reuses the last run's example builds (by hand, while editing).
if(NOT KEEP)
  file(REMOVE_RECURSE ${WORK_DIR})
endif()
file(MAKE_DIRECTORY ${WORK_DIR})

set(install_test_name "install test")
include(${CMAKE_CURRENT_LIST_DIR}/install_steps.cmake)

# 1. Install.
step("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file IN ITEMS bin/isostencil include/iso/iso.h include/iso/collectives.hpp
                      include/isostencil/core/grid.hpp include/isostencil/kernels/user_kernel.hpp
                      include/isostencil/driver/driver.hpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install test: ${prefix}/${file} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/isostencilConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "install test: no isostencilConfig.cmake under ${prefix}")
endif()
step("installed isostencil --version" OUT out COMMAND ${prefix}/bin/isostencil --version)
expect("isostencil --version" "${out}" "^${VERSION}")

# 2. Configure and build the examples against the prefix only (no package
# registry, so the build tree cannot stand in for the install), as
# docs/packaging.md says: no build type given, so the examples' own default (Release) applies.
set(common_args -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_C_COMPILER=${C_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
set(configure_args ${common_args} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
foreach(example IN ITEMS collectives heat)
  step("configure ${example}" OUT out COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/apps/examples/${example}
       -B ${WORK_DIR}/${example} ${common_args})
  file(STRINGS ${WORK_DIR}/${example}/CMakeCache.txt found REGEX "^isostencil_DIR:")
  expect("${example} finds the installed package" "${found}" "=${prefix}/")
  file(STRINGS ${WORK_DIR}/${example}/CMakeCache.txt found REGEX "^CMAKE_BUILD_TYPE:")
  expect("${example} builds optimised by default" "${found}" "=Release$")
  if(out MATCHES "CMAKE_BUILD_TYPE is empty")
    message(FATAL_ERROR "install test: ${example} warned about an empty build type:\n${out}")
  endif()
  step("build ${example}" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/${example} -j2)
endforeach()

# A consumer that leaves the build type empty is warned at configure time
# (once); one that sets it is not.
file(WRITE ${WORK_DIR}/build_type_probe/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.20)\nproject(probe LANGUAGES C CXX)\n"
     "find_package(isostencil 0.1 REQUIRED COMPONENTS halo)\n"
     "find_package(isostencil 0.1 REQUIRED COMPONENTS halo)\n")
step("empty build type" OUT out COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/build_type_probe
     -B ${WORK_DIR}/build_type_probe/empty ${common_args} -DCMAKE_BUILD_TYPE=)
# CMake wraps a warning's lines: match on the text with its line breaks gone.
string(REGEX REPLACE "[ \n]+" " " out "${out}")
expect("an empty build type is warned about" "${out}" "CMake Warning.*CMAKE_BUILD_TYPE is empty.*without optimisation")
string(REGEX MATCHALL "CMAKE_BUILD_TYPE is empty" warnings "${out}")
list(LENGTH warnings warnings)
if(NOT warnings EQUAL 1)
  message(FATAL_ERROR "install test: the empty build type was warned about ${warnings} times, not once\n${out}")
endif()
step("Release build type" OUT out COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/build_type_probe
     -B ${WORK_DIR}/build_type_probe/release ${common_args} -DCMAKE_BUILD_TYPE=Release)
if(out MATCHES "CMAKE_BUILD_TYPE is empty")
  message(FATAL_ERROR "install test: a Release consumer was warned about an empty build type\n${out}")
endif()
message(STATUS "ok: no warning with a build type")

# pkg-config: the C example built with what iso.pc says (run below).
build_c_example_with_pkg_config(${prefix} pkg_config_program)

# The config checks the version: 0.1 is ours, 9.0 is not.
file(WRITE ${WORK_DIR}/version_probe/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.20)\nproject(probe LANGUAGES C CXX)\n"
     "find_package(isostencil 9.0 REQUIRED COMPONENTS halo)\n")
step("find_package(isostencil 9.0) is refused" EXPECT_RC 1 OUT out
     COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/version_probe -B ${WORK_DIR}/version_probe/build ${configure_args})
expect("version refusal names the version" "${out}" "${VERSION}")

# The package finds the Kokkos it was built with, not the first one on the
# search path (Debian's, for a build against a hand-built Kokkos), and refuses
# another version that the consumer names (it would not link).
file(WRITE ${WORK_DIR}/kokkos_probe/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.20)\nproject(probe LANGUAGES C CXX)\n"
     "find_package(isostencil 0.1 REQUIRED)\n"
     "message(STATUS \"probe: Kokkos \${Kokkos_VERSION} from \${Kokkos_CONFIG}\")\n")
step("find_package(isostencil) finds Kokkos" OUT out
     COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/kokkos_probe -B ${WORK_DIR}/kokkos_probe/build ${configure_args})
string(REGEX MATCH "probe: Kokkos ([^ ]*) from ([^\n]*)/KokkosConfig.cmake" line "${out}")
get_filename_component(found "${CMAKE_MATCH_2}" REALPATH)
get_filename_component(built "${KOKKOS_DIR}" REALPATH)
if(NOT CMAKE_MATCH_1 STREQUAL KOKKOS_VERSION OR NOT found STREQUAL built)
  message(FATAL_ERROR "install test: the package found Kokkos ${CMAKE_MATCH_1} in ${found}; "
                      "it was built with Kokkos ${KOKKOS_VERSION} in ${built}\n${out}")
endif()
message(STATUS "ok: the package finds Kokkos ${KOKKOS_VERSION} in ${built}")
file(WRITE ${WORK_DIR}/other_kokkos/KokkosConfig.cmake "set(Kokkos_FOUND TRUE)\n")
file(WRITE ${WORK_DIR}/other_kokkos/KokkosConfigVersion.cmake
     "set(PACKAGE_VERSION 0.0.1)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
     "if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n  set(PACKAGE_VERSION_EXACT TRUE)\nendif()\n")
file(REMOVE_RECURSE ${WORK_DIR}/kokkos_probe/build)
# A consumer's Kokkos_DIR naming another version is never used: CMake passes
# over a config whose version does not match (and goes on searching), so the
# configure step either finds a Kokkos of the recorded version or fails.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/kokkos_probe -B ${WORK_DIR}/kokkos_probe/build
                        ${configure_args} -DKokkos_DIR=${WORK_DIR}/other_kokkos
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(out MATCHES "probe: Kokkos 0\\.0\\.1" OR (rc EQUAL 0 AND NOT out MATCHES "probe: Kokkos ${KOKKOS_VERSION} "))
  message(FATAL_ERROR "install test: with -DKokkos_DIR naming Kokkos 0.0.1 the package "
                      "did not keep to Kokkos ${KOKKOS_VERSION} (exit code ${rc})\n${out}\n${err}")
endif()
message(STATUS "ok: another Kokkos version is passed over (exit code ${rc})")

# 3. Run them at 1 and 2 ranks.
set(mpi ${MPIEXEC} ${PREFLAGS})
set(heat ${WORK_DIR}/heat/heat)
set(deck ${SOURCE_DIR}/apps/examples/heat/heat.toml)
step("heat --version" OUT out COMMAND ${heat} --version)
expect("heat --version" "${out}" "1.0 \\(isostencil ${VERSION}\\)")
foreach(np IN ITEMS 1 2)
  step("c_collectives at ${np} ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} ${np} ${WORK_DIR}/collectives/c_collectives)
  expect("c_collectives at ${np} ranks verifies" "${out}" "${np} ranks .*alltoall and allgather verified")
  step("cpp_collectives at ${np} ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} ${np} ${WORK_DIR}/collectives/cpp_collectives)
  expect("cpp_collectives at ${np} ranks verifies" "${out}" "${np} ranks .*alltoall verified")
  if(pkg_config_program)
    step("c_collectives (pkg-config) at ${np} ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} ${np} ${pkg_config_program})
    expect("c_collectives (pkg-config) at ${np} ranks verifies" "${out}" "${np} ranks .*alltoall and allgather verified")
  endif()

  step("heat run at ${np} ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} ${np} ${heat} run ${deck}
       --set output.dir=${WORK_DIR}/out${np})
  expect("heat run at ${np} ranks validates" "${out}"
         "kernel +heat: u_t = alpha lap u.*Solution validates: finite ok.*; heat balance ok.*; maximum principle ok.*; halo ok")
  foreach(file IN ITEMS heat.h5 heat.xmf heat.checkpoint.h5 heat.summary.json)
    if(NOT EXISTS ${WORK_DIR}/out${np}/${file})
      message(FATAL_ERROR "install test: heat at ${np} ranks wrote no ${WORK_DIR}/out${np}/${file}")
    endif()
  endforeach()
  file(READ ${WORK_DIR}/out${np}/heat.summary.json summary)
  string(JSON validates GET "${summary}" validates)
  string(JSON last GET "${summary}" steps last)
  string(JSON validations GET "${summary}" halo validations)
  if(NOT validates OR NOT last EQUAL 200 OR NOT validations EQUAL 4)
    message(FATAL_ERROR "install test: heat summary at ${np} ranks: validates ${validates}, "
                        "last step ${last}, validations ${validations}")
  endif()
endforeach()
# The same field at 1 and 2 ranks: every cell is computed alike whatever the
# decomposition, so the extremes agree exactly (sums may differ in the last
# digits: another summation order).
file(READ ${WORK_DIR}/out1/heat.summary.json one)
file(READ ${WORK_DIR}/out2/heat.summary.json two)
foreach(figure IN ITEMS min max)
  string(JSON a GET "${one}" final ${figure})
  string(JSON b GET "${two}" final ${figure})
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "install test: heat final ${figure} differs: ${a} at 1 rank, ${b} at 2 ranks")
  endif()
  message(STATUS "ok: heat final ${figure} ${a} at 1 and 2 ranks")
endforeach()

# Restart the 1-rank checkpoint (step 200) on 2 ranks and continue to 260.
step("heat restart at 2 ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${heat} run
     --restart ${WORK_DIR}/out1/heat.checkpoint.h5 --set run.steps=260 --set output.dir=${WORK_DIR}/restart)
expect("heat restart validates" "${out}" "restart from .*step 200.*summary: 60 steps \\(200 -> 260\\).*Solution validates")

# Bounded sides (zero beyond them) at 2 ranks: the maximum principle still holds.
step("heat bounded at 2 ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${heat} run ${deck}
     --set grid.periodic=false --set output.format=none --set output.checkpoint_every=0
     --set output.dir=${WORK_DIR}/bounded)
expect("heat bounded validates" "${out}" "Solution validates: finite ok[^;]*; maximum principle ok[^;]*; halo ok")

# Bad input: an unstable time step is a deck error on every rank, exit code 2.
step("heat with an unstable dt" EXPECT_RC 2 OUT out COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${heat} run ${deck}
     --set kernel.dt=5 --set output.dir=${WORK_DIR}/bad)
expect("unstable dt is named" "${out}" "--set kernel.dt: error: kernel.dt = 5.* is unstable")
step("heat with a parameter of another kernel" EXPECT_RC 2 OUT out COMMAND ${heat} check ${deck}
     --set kernel.courant=0.5)
expect("foreign parameter is named" "${out}" "kernel.courant applies only with kernel.name = \"advection\"")
step("heat check --keys" OUT out COMMAND ${heat} check --keys)
expect("heat's keys are listed" "${out}" "`heat_source` \\| float \\| 0.0")
message(STATUS "install test: all steps passed")
