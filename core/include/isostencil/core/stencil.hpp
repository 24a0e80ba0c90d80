// A stencil shape: the offsets a kernel reads around each cell (optionally
// weighted). Offsets and weights only: the halo it needs (ghost widths,
// directions, neighborhood) is iso::stencil_geometry of the offsets, which
// the grid computes once and hands to its halo pattern.
#pragma once

#include "iso/geometry.hpp"
#include "iso/halo_exchange.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace isostencil::core {

class Stencil {
public:
  Stencil() = default;
  /// `weights` is empty or has one entry per offset; throws iso::Error otherwise.
  explicit Stencil(iso::OffsetList offsets, std::vector<double> weights = {},
                   std::string name = "custom");

  /// The 2d+1 point star (von Neumann arms) of radius r, centre included:
  /// offsets k*e_j for 1 <= |k| <= r. Reads the 2d faces only.
  static Stencil star(int dims, int radius);
  /// The (2r+1)^d box (Moore neighborhood, Chebyshev ball), centre included.
  /// Reads all 3^d - 1 directions.
  static Stencil box(int dims, int radius);
  /// Upwind box: the offsets of box(dims, radius) whose component j has the
  /// sign signs[j] or is zero; signs[j] == 0 leaves dimension j central
  /// (both sides). E.g. upwind(2, 1, {-1, -1}) reads (-1,0), (0,-1), (-1,-1).
  static Stencil upwind(int dims, int radius, const std::vector<int>& signs);
  /// One-sided star: the arms of star(dims, radius) on side signs[j] of each
  /// dimension (both arms where signs[j] == 0), centre included; reads no
  /// edge or corner. E.g. one_sided_star(2, 1, {-1, -1}) reads (-1,0), (0,-1).
  static Stencil one_sided_star(int dims, int radius, const std::vector<int>& signs);

  int dims() const { return offsets_.dims(); }
  int size() const { return offsets_.size(); }
  const iso::OffsetList& offsets() const { return offsets_; }
  const std::vector<double>& weights() const { return weights_; }
  bool has_weights() const { return !weights_.empty(); }
  const std::string& name() const { return name_; }
  /// The same offsets with weights (one per offset).
  Stencil with_weights(std::vector<double> weights) const;
  /// The k-fold Minkowski sum c1 + ... + ck of the offsets (each distinct
  /// sum once, in lexicographic order; no weights; named "<name> xk"): what k updates in a row
  /// read around a cell, hence the ghost region of a grid of depth k
  /// (docs/design/halo-exchange.md#deep-halos). Its widths are k times this
  /// stencil's; a star's reads edges and corners from k = 2 on. k = 1 gives
  /// this stencil itself. Throws iso::Error for k < 1.
  Stencil repeated(int k) const;

  /// The halo the offsets need: ghost widths per dimension and side, ghost
  /// directions read and the neighborhood (iso::stencil_geometry, computed on
  /// each call; a grid keeps its own, Grid::geometry()).
  iso::HaloGeometry geometry() const { return iso::stencil_geometry(offsets_); }
  /// Largest halo width over dimensions and sides.
  int radius() const;

  /// "star(d=3, r=1): 7 offsets, halo lo (1,1,1) hi (1,1,1), 6 directions".
  std::string describe() const;
  /// Stable hash of dims, offsets and weights (used to check ranks agree).
  std::uint64_t hash() const;

private:
  iso::OffsetList offsets_;
  std::vector<double> weights_;
  std::string name_ = "empty";
};

std::ostream& operator<<(std::ostream& out, const Stencil& stencil);

}  // namespace isostencil::core
