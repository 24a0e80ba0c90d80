// Named phases for Kokkos Tools (space-time-stack, Caliper, ...): a scoped
// Kokkos::Profiling region. Without a tool loaded a region costs a branch.
// The names the project uses (docs/kernels.md, "Profiling with Kokkos Tools"):
//   isostencil::kernel             one stencil update (exchange + cells)
//   isostencil::halo::start/wait   a halo exchange's two halves
//   isostencil::halo::naive        the reference exchange
//   isostencil::validate::halo     the halo validation (exchange vs reference)
//   isostencil::io::output         output steps (begin, field writes, end)
//   isostencil::io::checkpoint     checkpoint writes
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

namespace isostencil::core {

class ProfilingRegion {
public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

}  // namespace isostencil::core
