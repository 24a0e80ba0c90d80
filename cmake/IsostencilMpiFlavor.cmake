# Selects the MPI library at configure time: -DISOSTENCIL_MPI=mpich (or
# openmpi) points CMake's MPI and parallel-HDF5 searches at that library's own
# wrappers and launcher, whatever Debian's alternatives (mpicc, mpirun, h5pcc)
# currently name. Empty (the default) leaves the searches alone: the system's
# default MPI, which on the project's machines is Open MPI. Values the user
# passes explicitly (-DMPI_C_COMPILER=..., -DMPIEXEC_EXECUTABLE=...) win.
include_guard(GLOBAL)

set(ISOSTENCIL_MPI "" CACHE STRING "MPI library to build with: openmpi, mpich, or empty for the system default")
set_property(CACHE ISOSTENCIL_MPI PROPERTY STRINGS "" openmpi mpich)

if(ISOSTENCIL_MPI STREQUAL "")
  return()
elseif(ISOSTENCIL_MPI STREQUAL "mpich")
  set(_iso_cc mpicc.mpich)
  set(_iso_cxx mpicxx.mpich)
  set(_iso_exec mpiexec.mpich)
  set(_iso_h5pcc h5pcc.mpich)
  set(_iso_packages "libmpich-dev mpich libhdf5-mpich-dev")
elseif(ISOSTENCIL_MPI STREQUAL "openmpi")
  set(_iso_cc mpicc.openmpi)
  set(_iso_cxx mpicxx.openmpi)
  set(_iso_exec mpiexec.openmpi)
  set(_iso_h5pcc h5pcc.openmpi)
  set(_iso_packages "libopenmpi-dev openmpi-bin libhdf5-openmpi-dev")
else()
  message(FATAL_ERROR "ISOSTENCIL_MPI='${ISOSTENCIL_MPI}': expected openmpi, mpich or empty")
endif()

# Each found program goes into the cache variable the corresponding find module
# reads; find_program leaves an already-set variable alone.
find_program(MPI_C_COMPILER NAMES ${_iso_cc})
find_program(MPI_CXX_COMPILER NAMES ${_iso_cxx})
find_program(MPIEXEC_EXECUTABLE NAMES ${_iso_exec})
find_program(HDF5_C_COMPILER_EXECUTABLE NAMES ${_iso_h5pcc})
foreach(_iso_var MPI_C_COMPILER MPI_CXX_COMPILER MPIEXEC_EXECUTABLE HDF5_C_COMPILER_EXECUTABLE)
  if(NOT ${_iso_var})
    message(FATAL_ERROR "ISOSTENCIL_MPI=${ISOSTENCIL_MPI}: ${_iso_var} not found "
                        "(on Debian: apt-get install ${_iso_packages})")
  endif()
endforeach()
message(STATUS "MPI library: ${ISOSTENCIL_MPI} (${MPI_CXX_COMPILER}, ${MPIEXEC_EXECUTABLE}, ${HDF5_C_COMPILER_EXECUTABLE})")
