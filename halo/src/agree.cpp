// Error agreement: every rank of a collective call throws the same error, so
// no rank is left waiting in a later collective.
#include "iso/error.hpp"

#include <cstdint>
#include <string>

namespace iso {

void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  int first = local_error.empty() ? size : rank;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  int length = rank == first ? static_cast<int>(local_error.size()) : 0;
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  std::string message = rank == first ? local_error : std::string(static_cast<std::size_t>(length), ' ');
  ISO_MPI_CHECK(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm));
  throw Error(where + ": rank " + std::to_string(first) + ": " + message);
}

void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error,
                     std::uint64_t fingerprint, const std::string& what_must_match) {
  agree_on_errors(comm, where, local_error);
  // One allreduce (MAX) of the fingerprint and its complement gives its
  // maximum and minimum over ranks.
  const auto signed_print = static_cast<std::int64_t>(fingerprint);
  std::int64_t values[2] = {signed_print, ~signed_print};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_INT64_T, MPI_MAX, comm));
  const std::int64_t highest = values[0], lowest = ~values[1];
  if (highest != lowest)
    throw Error(where + ": " + what_must_match + " differ between ranks; every rank must pass the same values");
}

}  // namespace iso
