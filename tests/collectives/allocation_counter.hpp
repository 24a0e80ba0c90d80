// Counts calls of the global operator new in this process (replaced in
// allocation_counter.cpp), to check that start/test/wait allocate nothing.
#pragma once

namespace iso_collectives_test {

long allocations();

/// While one is alive, allocations are not counted (used by the PMPI wrappers'
/// own bookkeeping, which is not the library's).
class UncountedAllocations {
public:
  UncountedAllocations();
  ~UncountedAllocations();
  UncountedAllocations(const UncountedAllocations&) = delete;
  UncountedAllocations& operator=(const UncountedAllocations&) = delete;
};

}  // namespace iso_collectives_test
