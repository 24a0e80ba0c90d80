// Errors raised by the isomorphic collectives.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace iso {

/// Every error of the library. `mpi_code()` is the MPI error class the C API
/// returns for it (MPI_ERR_ARG for bad arguments, MPI_ERR_OTHER otherwise).
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& what, int mpi_code = MPI_ERR_ARG)
      : std::runtime_error(what), mpi_code_(mpi_code) {}
  int mpi_code() const { return mpi_code_; }

private:
  int mpi_code_;
};

/// Collective over `comm`: when any rank passes a non-empty `local_error`,
/// every rank throws iso::Error("<where>: rank <r>: <message of the lowest
/// such rank r>"), so no rank is left waiting in a later collective.
void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error);

/// The same, and then: when `fingerprint` differs between ranks (arguments
/// that must be equal everywhere are not), every rank throws iso::Error
/// "<where>: <what_must_match> differ between ranks; ...". One helper for
/// every layer: the library, the grid, the kernels, decks and the driver.
void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error,
                     std::uint64_t fingerprint, const std::string& what_must_match);

/// agree_on_errors, and in the same collective call whether `mine` holds on
/// every rank (the return value): a layer asks whether every rank found
/// something in a local cache, so that all reuse it or all rebuild it
/// collectively, without a collective call of its own.
bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error, bool mine);
/// The same with a fingerprint (as the overload above).
bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             std::uint64_t fingerprint, const std::string& what_must_match, bool mine);

/// A fingerprint that must be the same on every rank, and what it stands for.
struct MustMatch {
  std::uint64_t fingerprint = 0;
  std::string what;
};
/// The same with several fingerprints, so that layers fold their agreements
/// into one collective call: the first that differs is the error.
bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             const std::vector<MustMatch>& must_match, bool mine);
/// The same, where `mine` holds everywhere only when `mine_fingerprint` (what
/// each rank found in its cache) is also equal on every rank: caches that
/// hold different entries on different ranks make every rank rebuild, never
/// a mix of ranks reusing and rebuilding. Still one collective call.
bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             const std::vector<MustMatch>& must_match, bool mine, std::uint64_t mine_fingerprint);

/// One question "did this rank find it, and which" (see below).
struct Found {
  bool mine = false;
  std::uint64_t fingerprint = 0;
};
/// The same for several such questions in the one collective call: answer
/// k is true where `found[k].mine` holds on every rank and
/// `found[k].fingerprint` is equal on every rank.
std::vector<bool> agree_on_errors_and_each(MPI_Comm comm, const std::string& where, const std::string& local_error,
                                           const std::vector<MustMatch>& must_match,
                                           const std::vector<Found>& found);

/// Mixes `value` into a fingerprint (for agree_on_errors).
inline std::uint64_t mix_fingerprint(std::uint64_t hash, std::uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash * 0x100000001b3ULL;
}

namespace detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}

}  // namespace iso

/// Checks an MPI return code; on failure throws iso::Error naming the rank,
/// the call, file:line and the MPI library's error string.
#define ISO_MPI_CHECK(call)                                                  \
  do {                                                                       \
    int iso_mpi_check_rc_ = (call);                                          \
    if (iso_mpi_check_rc_ != MPI_SUCCESS)                                    \
      ::iso::detail::throw_mpi_error(iso_mpi_check_rc_, #call, __FILE__, __LINE__); \
  } while (0)
