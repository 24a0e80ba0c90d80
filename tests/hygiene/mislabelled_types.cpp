// A PMPI wrapper that labels every subarray datatype the way SimGrid SMPI
// 3.32 was seen to: MPI_COMBINER_INDEXED, while MPI_Type_get_contents still
// hands out the subarray's own arguments (3n + 2 integers, which do not fit
// INDEXED's 2n + 1). Linked into test_mislabelled_types only.
#include <mpi.h>

extern "C" int MPI_Type_get_envelope(MPI_Datatype type, int* integers, int* addresses, int* types,
                                     int* combiner) {
  const int rc = PMPI_Type_get_envelope(type, integers, addresses, types, combiner);
  if (rc == MPI_SUCCESS && *combiner == MPI_COMBINER_SUBARRAY) *combiner = MPI_COMBINER_INDEXED;
  return rc;
}
