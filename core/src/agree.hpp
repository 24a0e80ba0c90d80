// Collective error agreement for core/: every rank throws the same iso::Error.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace isostencil::core::detail {

/// Collective over `comm`: when any rank has a non-empty `local_error`, every
/// rank throws iso::Error("<where>: rank <r>: <error of the lowest such rank r>").
/// When `fingerprint` differs between ranks (arguments that must be the same
/// everywhere are not), every rank throws naming `what_must_match`.
void agree(MPI_Comm comm, const std::string& where, const std::string& local_error,
           std::uint64_t fingerprint = 0, const std::string& what_must_match = {});

/// FNV-1a style mixing of integers into a fingerprint.
inline std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash * 0x100000001b3ULL;
}

}  // namespace isostencil::core::detail
