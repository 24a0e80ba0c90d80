#include "agree.hpp"

#include "iso/error.hpp"

#include <cstdint>

namespace isostencil::core::detail {

void agree(MPI_Comm comm, const std::string& where, const std::string& local_error,
           std::uint64_t fingerprint, const std::string& what_must_match) {
  iso::agree_on_errors(comm, where, local_error);
  // One allreduce (MAX) of the fingerprint and its complement gives its
  // maximum and minimum over ranks.
  const auto signed_print = static_cast<std::int64_t>(fingerprint);
  std::int64_t values[2] = {signed_print, ~signed_print};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_INT64_T, MPI_MAX, comm));
  const std::int64_t highest = values[0], lowest = ~values[1];
  if (highest != lowest)
    throw iso::Error(where + ": " + what_must_match +
                     " differ between ranks; every rank must pass the same values");
}

}  // namespace isostencil::core::detail
