// SimGrid SMPI (thousands of simulated ranks in one process, docs/simulating.md):
// the calls its MPI lacks and the library's stand-ins. Everywhere else the
// standard call runs unchanged.
#pragma once

#include "iso/error.hpp"

#include <mpi.h>

// SMPI's mpi.h includes smpi/smpi.h, which defines SMPI_H; no other MPI does.
#if defined(SMPI_H)
#define ISO_SMPI 1
#else
#define ISO_SMPI 0
#endif

namespace iso::detail {

/// MPI_Topo_test's answer. SMPI 3.32 aborts in MPI_Topo_test ("Not yet
/// implemented"); there MPI_Cartdim_get answers instead (MPI_CART where it
/// succeeds, MPI_UNDEFINED where it fails), with the communicator's error
/// handler set to return for that one call. SMPI carries a Cartesian
/// topology over to communicators split from one, which then count as
/// Cartesian too.
inline int topology_of(MPI_Comm comm) {
  int topology = MPI_UNDEFINED;
#if ISO_SMPI
  MPI_Errhandler previous = MPI_ERRHANDLER_NULL;
  ISO_MPI_CHECK(MPI_Comm_get_errhandler(comm, &previous));
  ISO_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int dims = 0;
  if (MPI_Cartdim_get(comm, &dims) == MPI_SUCCESS) topology = MPI_CART;
  // SMPI reports its default handler as null.
  ISO_MPI_CHECK(MPI_Comm_set_errhandler(comm, previous != MPI_ERRHANDLER_NULL ? previous : MPI_ERRORS_ARE_FATAL));
#else
  ISO_MPI_CHECK(MPI_Topo_test(comm, &topology));
#endif
  return topology;
}

}  // namespace iso::detail
