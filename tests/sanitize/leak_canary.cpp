// A deliberate leak in project code, run under the sanitized test environment:
// the leak report must name this file, proving that the Open MPI suppressions
// (lsan.supp) hide only MPI's allocations.
#include <mpi.h>

#include <cstdio>

namespace {
int* leak_on_purpose() { return new int[10]; }
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int* lost = leak_on_purpose();
  lost[0] = 1;
  std::printf("leaked %d\n", lost[0]);
  lost = nullptr;
  MPI_Finalize();
  return 0;
}
