#include "agree.hpp"

#include "iso/error.hpp"

#include <cstdint>

namespace isostencil::core::detail {

void agree(MPI_Comm comm, const std::string& where, const std::string& local_error,
           std::uint64_t fingerprint, const std::string& what_must_match) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // One allreduce (MAX) carries the lowest failing rank (as size - rank) and
  // the fingerprint's maximum and minimum (as the maximum of ~x = -x-1).
  const auto signed_print = static_cast<std::int64_t>(fingerprint);
  std::int64_t values[3] = {local_error.empty() ? 0 : size - rank, signed_print, ~signed_print};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_INT64_T, MPI_MAX, comm));
  if (values[0] != 0) {
    const int first = size - static_cast<int>(values[0]);
    int length = rank == first ? static_cast<int>(local_error.size()) : 0;
    ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm));
    std::string message =
        rank == first ? local_error : std::string(static_cast<std::size_t>(length), ' ');
    ISO_MPI_CHECK(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm));
    throw iso::Error(where + ": rank " + std::to_string(first) + ": " + message);
  }
  const std::int64_t highest = values[1], lowest = ~values[2];
  if (highest != lowest)
    throw iso::Error(where + ": " + what_must_match +
                     " differ between ranks; every rank must pass the same values");
}

}  // namespace isostencil::core::detail
