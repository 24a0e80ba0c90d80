# `cmake --install`: headers, libraries, the isostencil driver and a CMake
# package, so that another project's find_package(isostencil 0.1) gives
#   isostencil::halo     the collectives (C and C++ API), MPI only
#   isostencil::core     grid, fields, HDF5 output (Kokkos, HDF5)
#   isostencil::kernels  the Kokkos kernels (header-only front, static parts)
#   isostencil::deck     input decks: schema, parsing, the kernel registry (toml++)
#   isostencil::driver   the driver as a library: decks, run loop, user kernels
# Two export sets: halo alone (COMPONENTS halo finds MPI and nothing else)
# and the rest. The libraries are static unless BUILD_SHARED_LIBS (kernels'
# compiled parts and decks are static always), so their private dependencies
# (toml++, HDF5, fmt, CLI11, nlohmann_json) are link dependencies the config
# finds too. Also iso.pc for pkg-config (the collectives alone).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ISOSTENCIL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/isostencil
    CACHE STRING "Where the isostencil CMake package goes, relative to the prefix")

set_target_properties(isostencil_halo PROPERTIES EXPORT_NAME halo)
set_target_properties(isostencil_core PROPERTIES EXPORT_NAME core)
set_target_properties(isostencil_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(isostencil_driver PROPERTIES EXPORT_NAME driver)
set_target_properties(isostencil_deck PROPERTIES EXPORT_NAME deck)
set_target_properties(isostencil_plan PROPERTIES EXPORT_NAME plan)

install(TARGETS isostencil_halo EXPORT isostencilHaloTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/halo/include/iso DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_iso_framework_targets isostencil_core isostencil_kernels isostencil_deck isostencil_plan isostencil_driver)
foreach(part IN ITEMS jacobi life user)
  if(TARGET isostencil_kernels_${part})
    set_target_properties(isostencil_kernels_${part} PROPERTIES EXPORT_NAME kernels_${part})
    list(APPEND _iso_framework_targets isostencil_kernels_${part})
  endif()
endforeach()
install(TARGETS ${_iso_framework_targets} EXPORT isostencilTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir IN ITEMS core/include kernels/include apps/plan/include apps/deck/include apps/driver/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/isostencil DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

install(TARGETS isostencil RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/isostencil/inputs)

install(EXPORT isostencilHaloTargets NAMESPACE isostencil::
        DESTINATION ${ISOSTENCIL_INSTALL_CMAKEDIR})
install(EXPORT isostencilTargets NAMESPACE isostencil::
        DESTINATION ${ISOSTENCIL_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/isostencilConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/isostencilConfig.cmake
                              INSTALL_DESTINATION ${ISOSTENCIL_INSTALL_CMAKEDIR})
# 0.x: minor versions may break the API, so 0.1 accepts 0.1.z only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/isostencilConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/isostencilConfig.cmake
              ${PROJECT_BINARY_DIR}/isostencilConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/IsostencilKokkos.cmake
        DESTINATION ${ISOSTENCIL_INSTALL_CMAKEDIR})

# pkg-config for the collectives alone (C and C++ API), for builds without
# CMake: `pkg-config --cflags --libs iso`. MPI comes through the MPI
# library's own .pc file where pkg-config knows one of this flavour (Open MPI:
# ompi-c, MPICH: mpich), else as the flags CMake found. A static library
# brings the C++ runtime it needs (a C program links it too).
set(ISO_PC_REQUIRES "")
set(ISO_PC_MPI_CFLAGS "")
set(ISO_PC_LIBS "")
set(ISO_PC_LIBS_PRIVATE "")
# (The version string is only there on a first configure; the library path
# says it too.)
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI" OR MPI_C_LIBRARIES MATCHES "openmpi")
  set(_iso_mpi_pc ompi-c)
elseif(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH" OR MPI_C_LIBRARIES MATCHES "mpich")
  set(_iso_mpi_pc mpich)
else()
  set(_iso_mpi_pc "")
endif()
find_program(ISOSTENCIL_PKG_CONFIG pkg-config)
if(_iso_mpi_pc AND ISOSTENCIL_PKG_CONFIG)
  execute_process(COMMAND ${ISOSTENCIL_PKG_CONFIG} --exists ${_iso_mpi_pc} RESULT_VARIABLE _iso_mpi_pc_missing)
  if(_iso_mpi_pc_missing)
    set(_iso_mpi_pc "")
  endif()
endif()
if(_iso_mpi_pc)
  set(ISO_PC_REQUIRES ${_iso_mpi_pc})
else()
  foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND ISO_PC_MPI_CFLAGS " -I${dir}")
  endforeach()
  foreach(lib IN LISTS MPI_C_LIBRARIES)
    string(APPEND ISO_PC_LIBS " ${lib}")
  endforeach()
endif()
if(BUILD_SHARED_LIBS)
  # The library's directory as a run path too: a program linked with these
  # flags runs without LD_LIBRARY_PATH (prefixes are rarely system ones).
  string(APPEND ISO_PC_LIBS " -Wl,-rpath,\${libdir}")
  set(ISO_PC_LIBS_PRIVATE "-lstdc++ -lm")
else()
  string(APPEND ISO_PC_LIBS " -lstdc++ -lm")
endif()
set(ISOSTENCIL_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where iso.pc goes, relative to the prefix")
file(RELATIVE_PATH ISO_PC_PREFIX_FROM_PCDIR "${CMAKE_INSTALL_PREFIX}/${ISOSTENCIL_INSTALL_PKGCONFIGDIR}"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" ISO_PC_PREFIX_FROM_PCDIR "${ISO_PC_PREFIX_FROM_PCDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/iso.pc.in ${PROJECT_BINARY_DIR}/iso.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/iso.pc DESTINATION ${ISOSTENCIL_INSTALL_PKGCONFIGDIR})
