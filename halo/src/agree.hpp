// Collective error agreement: a locally detected error becomes the same
// iso::Error on every rank, instead of one rank throwing while the others wait.
#pragma once

#include "iso/error.hpp"

#include <mpi.h>

#include <string>

namespace iso::detail {

/// Collective over `comm`. `local_error` is empty where this rank found no
/// problem. Throws on every rank, with the message of the lowest failing rank,
/// when any rank reported one.
void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error);

}  // namespace iso::detail
