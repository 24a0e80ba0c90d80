# Warnings as errors for the project's own code only (PRIVATE, never INTERFACE).
# Off by default (a newer compiler's new warning must not break a user's build);
# the project's CI and scripts/setup.sh turn it on.
option(ISOSTENCIL_WERROR "Treat warnings in the project's own code as errors" OFF)
function(isostencil_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>
    $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Wpedantic>
    $<$<AND:$<BOOL:${ISOSTENCIL_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>>:-Werror>
    $<$<AND:$<BOOL:${ISOSTENCIL_WERROR}>,$<COMPILE_LANG_AND_ID:C,GNU,Clang>>:-Werror>)
endfunction()
