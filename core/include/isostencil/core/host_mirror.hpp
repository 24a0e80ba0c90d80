// Host access to field data. Every host loop over a field (initial
// conditions, validation, statistics, output, checkpoints) reads and writes
// a host mirror of it, never the View's memory directly, so it stays right
// when the View lives on a device:
//
//   auto host = core::host_copy(u);          // mirror holding u's contents
//   for (...) host(i, j) = ...;              // host loop
//   core::copy_back(u, host);                // no-op where host aliases u
//
// Test hook: with device memory simulated (simulate_device_memory(true), or
// ISOSTENCIL_SIMULATE_DEVICE_MEMORY=1 in the environment), host-accessible
// Views are treated as if the host could not touch them: mirrors are
// separate allocations filled by deep_copy, and Grid::halo_exchange picks
// the packed transport with host-staged buffers and refuses the datatype
// transport, as it does for device memory. Results must not change, bit for
// bit: that shows no host access bypasses a mirror (tests/grid).
#pragma once

#include <Kokkos_Core.hpp>

namespace isostencil::core {

/// Turns the simulation on or off for this process (host thread only; not
/// while exchanges are alive: each reads it once, when it is made).
void simulate_device_memory(bool on);
/// Whether the simulation is on (initially: ISOSTENCIL_SIMULATE_DEVICE_MEMORY
/// set to anything but "" or "0").
bool device_memory_simulated();

/// True when the host may read and write the memory of `View` (false for
/// device memory spaces, and for every space while the simulation is on).
template <class View>
bool host_may_access() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible &&
         !device_memory_simulated();
}

/// A host mirror of `view`, contents not copied: `view` itself where the host
/// may access it, else a new host allocation.
template <class View>
auto host_mirror(const View& view) -> decltype(Kokkos::create_mirror_view(view)) {
  if (host_may_access<View>()) return Kokkos::create_mirror_view(view);
  return Kokkos::create_mirror(view);
}

/// A host mirror holding `view`'s contents (fences the copy).
template <class View>
auto host_copy(const View& view) -> decltype(Kokkos::create_mirror_view(view)) {
  auto host = host_mirror(view);
  Kokkos::deep_copy(host, view);
  return host;
}

/// Writes a host mirror back into `view` (nothing to do where it aliases it).
template <class View, class Mirror>
void copy_back(const View& view, const Mirror& host) {
  if (host.data() != view.data()) Kokkos::deep_copy(view, host);
}

}  // namespace isostencil::core
