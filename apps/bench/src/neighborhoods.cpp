#include "isostencil/bench/neighborhoods.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"

namespace isobench {

int nonzero_coordinates(const iso::OffsetList& offsets, int i) {
  int count = 0;
  for (int j = 0; j < offsets.dims(); ++j) count += offsets[i][j] != 0;
  return count;
}

std::vector<NamedNeighborhood> expand_neighborhood(const std::string& spec) {
  try {
    // file:PATH reports its file as `isostencil plan --offsets-file` does.
    return iso::expand_named_offsets(spec, "--offsets-file");
  } catch (const iso::Error& error) {
    throw isostencil::UsageError(error.what());
  }
}

}  // namespace isobench
