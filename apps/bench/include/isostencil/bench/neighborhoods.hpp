// The benchmark's neighborhoods, named by short specifications (the halo
// library's named shapes, iso/offsets.hpp):
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
#include "iso/offsets.hpp"

#include <string>
#include <vector>

namespace isobench {

/// name (for CSV and file names, e.g. "moore-d3-r1"), description, offsets.
using NamedNeighborhood = iso::NamedOffsets;

/// Expands one specification (see above): iso::expand_named_offsets, its
/// errors (naming the specification) as isostencil::UsageError.
std::vector<NamedNeighborhood> expand_neighborhood(const std::string& spec);

/// The library's builders, under the names the benchmark's tests use.
using iso::octant_offsets;
using iso::shales_offsets;
using iso::shells_offsets;

/// Number of nonzero coordinates of offset i (the paper's ||C^i|| in Fig. 3).
int nonzero_coordinates(const iso::OffsetList& offsets, int i);

}  // namespace isobench
