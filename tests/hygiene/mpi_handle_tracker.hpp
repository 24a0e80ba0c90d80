// Live MPI handles of this process, per kind, kept by PMPI wrappers
// (mpi_handle_tracker.cpp) linked into the test executable: every MPI call
// that creates or frees a request, datatype, communicator, group, info, op,
// error handler or attribute key goes through them, the library's calls
// included. Also injects failures into local creating calls, to drive the
// library's error paths.
#pragma once

#include <array>
#include <string>

namespace iso_hygiene {

enum Kind { request, datatype, communicator, group, info, op, errhandler, keyval, num_kinds };
const char* kind_name(int kind);

struct Counts {
  std::array<long, num_kinds> live{};     ///< created and not yet freed
  std::array<long, num_kinds> created{};  ///< creations so far
  std::array<long, num_kinds> stray_frees{};  ///< frees of handles never seen created
  long persistent_requests = 0;  ///< live requests made by *_init
  long calls = 0;                ///< wrapped calls so far (0: wrappers not in effect)
};
Counts counts();

/// "datatype +2, request -1" for each kind whose live count differs; "" when equal.
std::string difference(const Counts& now, const Counts& before);

/// Makes the n-th (1-based) local creating call from now on (derived datatype
/// constructors and commit, persistent point-to-point inits, info/op/group
/// creation) fail with MPI_ERR_OTHER instead of reaching MPI; 0 disables.
void fail_local_creation(long n);
/// Local creating calls seen since the last fail_local_creation().
long local_creations();
/// Whether the armed failure has fired.
bool failure_injected();

}  // namespace iso_hygiene
