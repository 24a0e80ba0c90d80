// Kokkos' command-line flags that take a value, which may also come as the
// next argument (`--kokkos-num-threads 2`): the one list for KokkosArgs
// (kokkos_args.hpp) and for the benchmarks' prologue (benchmarks/common),
// which keeps Kokkos' flags in argv itself. No Kokkos include.
#pragma once

#include <string>

namespace isostencil::driver {

inline bool kokkos_flag_takes_value(const std::string& name) {
  for (const char* flag : {"--kokkos-num-threads", "--kokkos-threads", "--kokkos-device-id",
                           "--kokkos-device", "--kokkos-num-devices", "--kokkos-ndevices",
                           "--kokkos-numa", "--kokkos-map-device-id-by", "--kokkos-tools-library",
                           "--kokkos-tools-libs", "--kokkos-tools-args"})
    if (name == flag) return true;
  return false;
}

}  // namespace isostencil::driver
