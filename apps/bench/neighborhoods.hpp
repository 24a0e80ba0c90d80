// The benchmark's neighborhoods, named by short specifications:
//   moore            Moore neighborhoods d = 2..5, r = 1..3 (the paper's Fig. 2, Table II)
//   moore:D          Moore d = D, r = 1..3
//   moore:D:R        one Moore neighborhood (Chebyshev ball, self excluded)
//   octant[:D:R]     positive-octant asymmetric Moore: coordinates in [0,R], zero
//                    excluded (default 3:3, the paper's Fig. 2(f) and 5(b))
//   shales[:D[:R1,R2..]]  the paper's "shales" (Fig. 4(b)): {-r,0,r}^D without 0
//                    for each r (default 3:3,7: 52 neighbors; torus 42 rounds,
//                    direct 12, as the paper states)
//   shells:D:R1,R2.. every offset at Chebyshev distance exactly R1, R2, ...
//                    (full shells; 3:3,7 has 1396 neighbors and 42 direct rounds)
//   file:PATH        one offset per line (as `isostencil plan --offsets-file`)
//   offsets:LIST     "1,0,0;0,1,1"
#pragma once

#include "iso/geometry.hpp"

#include <string>
#include <vector>

namespace isobench {

struct NamedNeighborhood {
  std::string name;         ///< short name for CSV and file names, e.g. "moore-d3-r1"
  std::string description;  ///< human-readable
  iso::OffsetList offsets;
};

/// Expands one specification (see above). Throws isostencil::UsageError with
/// the specification in the message when it is malformed or too large.
std::vector<NamedNeighborhood> expand_neighborhood(const std::string& spec);

/// Builders, exposed for tests.
iso::OffsetList octant_offsets(int dims, int radius);
iso::OffsetList shales_offsets(int dims, const std::vector<int>& radii);
iso::OffsetList shells_offsets(int dims, const std::vector<int>& radii);

/// Number of nonzero coordinates of offset i (the paper's ||C^i|| in Fig. 3).
int nonzero_coordinates(const iso::OffsetList& offsets, int i);

}  // namespace isobench
