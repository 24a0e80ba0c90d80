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
