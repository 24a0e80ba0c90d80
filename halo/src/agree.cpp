// Error agreement: every rank of a collective call throws the same error, so
// no rank is left waiting in a later collective.
#include "iso/error.hpp"

#include <cstdint>
#include <string>

namespace iso {

namespace {

// The error (if any) of the lowest rank that has one, broadcast from it.
[[noreturn]] void throw_agreed(MPI_Comm comm, int rank, int first, const std::string& where,
                               const std::string& local_error) {
  int length = rank == first ? static_cast<int>(local_error.size()) : 0;
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  std::string message = rank == first ? local_error : std::string(static_cast<std::size_t>(length), ' ');
  ISO_MPI_CHECK(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm));
  throw Error(where + ": rank " + std::to_string(first) + ": " + message);
}

}  // namespace

void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error) {
  (void)agree_on_errors_and_all(comm, where, local_error, true);
}

bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error, bool mine) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // MIN over: the rank of an erring rank, size without an error and `mine`
  // false, size + 1 with `mine` true; so one allreduce answers both.
  int first = !local_error.empty() ? rank : mine ? size + 1 : size;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first < size) throw_agreed(comm, rank, first, where, local_error);
  return first == size + 1;
}

void agree_on_errors(MPI_Comm comm, const std::string& where, const std::string& local_error,
                     std::uint64_t fingerprint, const std::string& what_must_match) {
  (void)agree_on_errors_and_all(comm, where, local_error, fingerprint, what_must_match, true);
}

bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             std::uint64_t fingerprint, const std::string& what_must_match, bool mine) {
  return agree_on_errors_and_all(comm, where, local_error, {MustMatch{fingerprint, what_must_match}}, mine);
}

bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             const std::vector<MustMatch>& must_match, bool mine) {
  return agree_on_errors_and_all(comm, where, local_error, must_match, mine, 0);
}

bool agree_on_errors_and_all(MPI_Comm comm, const std::string& where, const std::string& local_error,
                             const std::vector<MustMatch>& must_match, bool mine, std::uint64_t mine_fingerprint) {
  return agree_on_errors_and_each(comm, where, local_error, must_match, {Found{mine, mine_fingerprint}}).front();
}

std::vector<bool> agree_on_errors_and_each(MPI_Comm comm, const std::string& where, const std::string& local_error,
                                           const std::vector<MustMatch>& must_match,
                                           const std::vector<Found>& found) {
  int rank = 0, size = 1;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  // One allreduce (MAX) for every question, since set-up pays each
  // collective's latency (docs/results/petsc-small): size - rank of a rank
  // with an error (0 without) gives the lowest such rank; per question, 1
  // where `mine` fails tells whether it holds everywhere, and its
  // fingerprint with its complement give their maximum and minimum; so for
  // each fingerprint that must match.
  std::vector<std::int64_t> values{local_error.empty() ? 0 : static_cast<std::int64_t>(size - rank)};
  auto push_print = [&values](std::uint64_t print) {
    const auto signed_print = static_cast<std::int64_t>(print);
    values.push_back(signed_print);
    values.push_back(~signed_print);
  };
  for (const Found& f : found) {
    values.push_back(f.mine ? 0 : 1);
    push_print(f.fingerprint);
  }
  for (const MustMatch& m : must_match) push_print(m.fingerprint);
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_MAX,
                              comm));
  if (values[0] != 0) throw_agreed(comm, rank, size - static_cast<int>(values[0]), where, local_error);
  const std::size_t first_match = 1 + 3 * found.size();
  for (std::size_t i = 0; i < must_match.size(); ++i) {
    const std::int64_t highest = values[first_match + 2 * i], lowest = ~values[first_match + 2 * i + 1];
    if (highest != lowest)
      throw Error(where + ": " + must_match[i].what + " differ between ranks; every rank must pass the same values");
  }
  std::vector<bool> answers;
  for (std::size_t k = 0; k < found.size(); ++k)
    answers.push_back(values[1 + 3 * k] == 0 && values[2 + 3 * k] == ~values[3 + 3 * k]);
  return answers;
}

}  // namespace iso
