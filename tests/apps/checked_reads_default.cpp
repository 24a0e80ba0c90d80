// Stencil reads are checked only when asked (ISOSTENCIL_CHECK_STENCIL_READS,
// CMake's ISOSTENCIL_CHECKED_READS), not because NDEBUG is unset: this
// translation unit is compiled as a debug build would be (-UNDEBUG) and
// prints the setting user_kernel.hpp chose.
#include "isostencil/kernels/user_kernel.hpp"

#include <cstdio>

int main() {
  std::printf("NDEBUG %s; checked stencil reads: %d\n",
#ifdef NDEBUG
              "defined",
#else
              "undefined",
#endif
              ISOSTENCIL_CHECK_STENCIL_READS);
  return 0;
}
