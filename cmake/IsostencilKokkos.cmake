# Finds Kokkos and repairs Debian's broken package config, whose Kokkos::kokkos
# target carries the non-existent include directory /usr/lib/include.
# Installed with the package: isostencilConfig.cmake includes it after its
# find_dependency(Kokkos), so the repair reaches projects that use isostencil.
if(NOT Kokkos_FOUND)
  find_package(Kokkos REQUIRED)
endif()
if(TARGET Kokkos::kokkos)
  get_target_property(_iso_kokkos_includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_iso_kokkos_broken OFF)
  foreach(_dir IN LISTS _iso_kokkos_includes)
    if(NOT _dir MATCHES "^\\$<" AND NOT EXISTS "${_dir}")
      set(_iso_kokkos_broken ON)
    endif()
  endforeach()
  if(_iso_kokkos_broken)
    if(NOT Kokkos_INCLUDE_DIRS)
      find_path(Kokkos_INCLUDE_DIRS Kokkos_Core.hpp PATH_SUFFIXES kokkos REQUIRED)
    endif()
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
    message(STATUS "Repaired Kokkos::kokkos include directories: ${Kokkos_INCLUDE_DIRS}")
  endif()
endif()

# A CUDA Kokkos: only the sources that use Kokkos go through nvcc_wrapper;
# halo/ (no Kokkos) and the decks' toml++, which nvcc's front end rejects, stay
# with the host compiler. Kokkos' config does the routing when the host
# compiler is CMAKE_CXX_COMPILER: kokkos_launch_compiler sends exactly the
# compile and link lines that carry Kokkos' KOKKOS_DEPENDENCE definition to
# nvcc_wrapper. Serial and OpenMP builds never enter this block.
if(Kokkos_ENABLE_CUDA)
  if(Kokkos_COMPILE_LANGUAGE STREQUAL "CUDA")
    message(FATAL_ERROR
      "isostencil: this Kokkos was built with Kokkos_ENABLE_COMPILE_AS_CMAKE_LANGUAGE, which "
      "isostencil does not support; build Kokkos without it (see docs/building-kokkos.md)")
  endif()
  kokkos_compiler_is_nvcc(_iso_cxx_is_nvcc ${CMAKE_CXX_COMPILER})
  if(_iso_cxx_is_nvcc)
    message(FATAL_ERROR
      "isostencil with a CUDA Kokkos: configure with the host compiler "
      "(-DCMAKE_CXX_COMPILER=g++), not nvcc_wrapper (${CMAKE_CXX_COMPILER}): Kokkos sends "
      "the sources that use it through nvcc_wrapper itself (see docs/building-kokkos.md)")
  endif()
  # The launcher recognizes the compile lines by their first word, the host
  # compiler; a compiler launcher in front of it (ccache) would hide them.
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    message(STATUS "CMAKE_CXX_COMPILER_LAUNCHER (${CMAKE_CXX_COMPILER_LAUNCHER}) is not used "
                   "with a CUDA Kokkos: it would hide the compile lines from kokkos_launch_compiler")
    set(CMAKE_CXX_COMPILER_LAUNCHER "")
  endif()
  get_property(_iso_kokkos_launcher GLOBAL PROPERTY RULE_LAUNCH_COMPILE)
  if(NOT _iso_kokkos_launcher MATCHES "kokkos_launch_compiler")
    kokkos_compilation(GLOBAL)
  endif()
  message(STATUS "Kokkos ${Kokkos_VERSION} with CUDA (${Kokkos_ARCH}): Kokkos sources "
                 "compile with nvcc_wrapper, the others with ${CMAKE_CXX_COMPILER}")
endif()
