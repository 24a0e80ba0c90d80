// Checks of a parsed deck against the run it describes: the rank count
// (check_decomposition) and the output directory (check_output_writable).
#pragma once

#include "isostencil/deck/deck.hpp"

#include <mpi.h>

namespace isostencil::deck {

/// Checks the deck against a run on `num_procs` processes (not collective):
/// the process grid MPI_Dims_create gives (grid.procs kept), at least one
/// cell per process, no halo reaching past the width rule (iso::max_halo_reach processes). Throws
/// DeckError naming grid.procs, grid.extent or stencil.radius.
void check_decomposition(const Deck& deck, int num_procs);

/// Collective: creates output.dir (rank 0) and writes and removes a temporary
/// file there on every rank; throws the same DeckError on every rank (naming
/// output.dir's location) when any rank cannot. With `create` false nothing
/// is created: an existing output.dir is probed, a missing one must have a
/// writable nearest existing ancestor (`isostencil check`). The run's files
/// there (name.summary.json, .h5, .xmf, .checkpoint.h5 as the deck writes
/// them) must each be a regular file, a link to one, or missing: a
/// directory, a device, a FIFO or a socket is the same DeckError, naming the
/// file and what it is (iso/file_write.hpp).
void check_output_writable(MPI_Comm comm, const Deck& deck, bool create = true);

}  // namespace isostencil::deck
