# cmake -P script: the project built with -DBUILD_SHARED_LIBS=ON (no tests,
# no benchmarks), installed, and used from the install: the installed driver
# runs a deck with no LD_LIBRARY_PATH, from a prefix moved elsewhere too
# ($ORIGIN RPATH), and the C example links against the shared library
# through pkg-config. Prints the installed driver's size next to the static
# build's (STATIC_DRIVER). Registered with -DISOSTENCIL_TEST_SHARED_INSTALL=ON
# (a second build of the project: several minutes; not in CI).
cmake_minimum_required(VERSION 3.20)

set(build ${WORK_DIR}/build)
set(prefix ${WORK_DIR}/prefix)
set(moved ${WORK_DIR}/moved)
file(REMOVE_RECURSE ${prefix} ${moved} ${WORK_DIR}/out)
file(MAKE_DIRECTORY ${WORK_DIR})

set(install_test_name "shared install test")
include(${CMAKE_CURRENT_LIST_DIR}/install_steps.cmake)

set(launcher_args "")
if(LAUNCHER)
  set(launcher_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER})
endif()
step("configure shared" COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} -G "${GENERATOR}"
     -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_C_COMPILER=${C_COMPILER}
     -DKokkos_DIR=${KOKKOS_DIR} -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF
     -DISOSTENCIL_BUILD_BENCHMARKS=OFF ${launcher_args})
step("build shared" COMMAND ${CMAKE_COMMAND} --build ${build} -j2)
step("install shared" COMMAND ${CMAKE_COMMAND} --install ${build} --prefix ${prefix})

foreach(lib IN ITEMS halo core plan driver)
  file(GLOB found ${prefix}/lib*/libisostencil_${lib}.so)
  if(NOT found)
    message(FATAL_ERROR "shared install test: no libisostencil_${lib}.so under ${prefix}")
  endif()
endforeach()
message(STATUS "ok: shared libraries installed")
find_program(READELF readelf)
if(READELF)
  step("readelf -d bin/isostencil" OUT out COMMAND ${READELF} -d ${prefix}/bin/isostencil)
  expect("the driver's RUNPATH is relative to it" "${out}" "R(UN)?PATH[^\n]*\\$ORIGIN/\\.\\./lib")
  expect("the driver links the shared driver library" "${out}" "NEEDED[^\n]*libisostencil_driver\\.so")
endif()

unset(ENV{LD_LIBRARY_PATH})
set(mpi ${MPIEXEC} ${PREFLAGS})
set(deck ${SOURCE_DIR}/inputs/jacobi_2d_5pt.toml)
set(small --set grid.extent=[32,24] --set run.steps=40 --set run.tolerance=0 --set output.every=20
          --set output.checkpoint_every=0 --set halo.validate_every=20)
step("installed driver --version" OUT out COMMAND ${prefix}/bin/isostencil --version)
expect("installed driver --version" "${out}" "^${VERSION}")
step("installed driver run at 2 ranks" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${prefix}/bin/isostencil run
     ${deck} ${small} --set output.dir=${WORK_DIR}/out/installed)
expect("installed driver validates" "${out}" "Solution validates")

# A moved prefix still runs: the RPATH is relative to the program.
file(RENAME ${prefix} ${moved})
step("moved driver run" OUT out COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${moved}/bin/isostencil run
     ${deck} ${small} --set output.dir=${WORK_DIR}/out/moved)
expect("moved driver validates" "${out}" "Solution validates")
file(RENAME ${moved} ${prefix})

build_c_example_with_pkg_config(${prefix} pkg_config_program)
if(pkg_config_program)
  step("c_collectives (shared, pkg-config) at 2 ranks" OUT out
       COMMAND ${mpi} ${NUMPROC_FLAG} 2 ${pkg_config_program})
  expect("c_collectives (shared) verifies" "${out}" "2 ranks .*alltoall and allgather verified")
endif()

file(SIZE ${prefix}/bin/isostencil shared_size)
set(sizes "installed bin/isostencil: ${shared_size} B shared")
if(STATIC_DRIVER AND EXISTS ${STATIC_DRIVER})
  file(SIZE ${STATIC_DRIVER} static_size)
  string(APPEND sizes ", ${static_size} B static (${STATIC_DRIVER})")
endif()
file(GLOB libs ${prefix}/lib*/libisostencil_*.so)
foreach(lib IN LISTS libs)
  file(SIZE ${lib} size)
  get_filename_component(name ${lib} NAME)
  string(APPEND sizes "; ${name} ${size} B")
endforeach()
message(STATUS "${sizes}")
message(STATUS "shared install test: all steps passed")
