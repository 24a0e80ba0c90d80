// Counts of live MPI handles in this process, kept by PMPI wrappers
// (mpi_handle_counters.cpp) linked into the test executable. Every MPI call the
// library makes to create or release a request, datatype or communicator goes
// through them.
#pragma once

namespace iso_collectives_test {

struct HandleCounts {
  long requests = 0;         ///< created and not yet freed (persistent or not)
  long active_requests = 0;  ///< started/posted and not yet completed
  long datatypes = 0;        ///< derived datatypes created and not freed
  long communicators = 0;    ///< communicators created and not freed
  long calls = 0;            ///< wrapped calls so far (0: wrappers not in effect)
  long starts = 0;           ///< requests posted (MPI_Start* or nonblocking calls)
};

HandleCounts handle_counts();

}  // namespace iso_collectives_test
