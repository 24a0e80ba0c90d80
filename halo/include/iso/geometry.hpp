// Offsets and process-grid geometry shared by the schedule and MPI layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iso {

/// An ordered list of s relative offsets in Z^d, stored flat (offset i occupies
/// coordinates [i*d, (i+1)*d)). Repeats and the zero vector are allowed.
class OffsetList {
public:
  /// Largest coordinate magnitude accepted; keeps all index arithmetic in range.
  static constexpr int max_coordinate = 1 << 24;

  OffsetList() = default;
  /// `coords.size()` must be a multiple of `dims`; throws iso::Error otherwise.
  OffsetList(int dims, std::vector<int> coords);

  /// Full Moore neighborhood of radius r in d dimensions (Chebyshev ball), in
  /// lexicographic order; the zero vector only when `include_self`.
  static OffsetList moore(int dims, int radius, bool include_self = false);
  /// Parses "1,0,0;0,1,1;..." (offsets separated by ';', coordinates by ',').
  static OffsetList parse(const std::string& text);

  int dims() const { return dims_; }
  int size() const { return dims_ == 0 ? 0 : static_cast<int>(coords_.size()) / dims_; }
  const int* operator[](int i) const { return coords_.data() + static_cast<std::size_t>(i) * dims_; }
  const std::vector<int>& flat() const { return coords_; }
  void push_back(const std::vector<int>& offset);

  /// Stable 64-bit hash of (d, s, offsets) used for the isomorphism check;
  /// computed with the list and carried by its copies (every neighborhood
  /// hashes its offsets: 6 us at d = 4, r = 3, most of its creation).
  std::uint64_t hash() const;
  std::string to_string() const;

  friend bool operator==(const OffsetList& a, const OffsetList& b) {
    return a.dims_ == b.dims_ && a.coords_ == b.coords_;
  }

private:
  std::uint64_t compute_hash() const;
  int dims_ = 0;
  std::vector<int> coords_;
  mutable std::uint64_t hash_ = 0;
  mutable bool hashed_ = false;  // false after push_back: hash() computes it again
};

/// A d-dimensional Cartesian process grid: sizes and periodic flags. Ranks are
/// row-major (the last dimension varies fastest), as in MPI Cartesian topologies.
struct CartGeometry {
  std::vector<int> sizes;
  std::vector<bool> periodic;

  int dims() const { return static_cast<int>(sizes.size()); }
  int num_procs() const;
  int rank_of(const int* coords) const;
  void coords_of(int rank, int* coords) const;
  /// out = base + sign*v (torus arithmetic in periodic dimensions). Returns
  /// false when the result leaves the grid in a non-periodic dimension.
  bool shift(const int* base, const int* v, int sign, int* out) const;
  /// Rank of base + sign*v, or -1 when it does not exist.
  int shifted_rank(const int* base, const int* v, int sign) const;
  std::uint64_t hash() const;
};

}  // namespace iso
