// Blocking collective calls of this process, counted by PMPI wrappers
// (collective_counter.cpp) linked into the test executable, the library's
// calls included: set-up's agreements are pinned by count, since each costs
// a synchronisation of every rank (docs/results/petsc-small).
#pragma once

#include <string>

namespace iso_collectives {

struct Calls {
  long allreduce = 0;
  long other = 0;  ///< every other blocking collective (broadcast, barrier, gathers, ...)
};
Calls calls();
/// "allreduce 1, other 0" of the calls since `before`.
std::string since(const Calls& before);

}  // namespace iso_collectives
