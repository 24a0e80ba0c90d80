# isostencil_add_library(<name> [INCLUDE dir] SOURCES s...)
# One of the project's compiled libraries: target isostencil_<name> (also its
# file name) with the alias isostencil::<name>, public headers in INCLUDE
# (default: include/ beside the calling CMakeLists.txt; include/ once
# installed), C++17 for it and its users, the project's warnings. Links,
# definitions and other properties stay with the caller.
function(isostencil_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "INCLUDE" "SOURCES")
  if(NOT arg_SOURCES OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "isostencil_add_library(${name}): SOURCES required, nothing else unnamed "
                        "(${arg_UNPARSED_ARGUMENTS})")
  endif()
  if(NOT arg_INCLUDE)
    set(arg_INCLUDE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  add_library(isostencil_${name} ${arg_SOURCES})
  add_library(isostencil::${name} ALIAS isostencil_${name})
  target_include_directories(isostencil_${name} PUBLIC
    $<BUILD_INTERFACE:${arg_INCLUDE}>
    $<INSTALL_INTERFACE:include>)
  target_compile_features(isostencil_${name} PUBLIC cxx_std_17)
  set_target_properties(isostencil_${name} PROPERTIES OUTPUT_NAME isostencil_${name})
  isostencil_warnings(isostencil_${name})
endfunction()
