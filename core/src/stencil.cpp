#include "isostencil/core/stencil.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <ostream>
#include <sstream>

namespace isostencil::core {

namespace {

void check_shape(const char* where, int dims, int radius) {
  if (dims < 1)
    throw iso::Error(std::string(where) + ": dimension must be >= 1, got " + std::to_string(dims));
  if (radius < 0)
    throw iso::Error(std::string(where) + ": radius must be >= 0, got " + std::to_string(radius));
}

void check_signs(const char* where, int dims, const std::vector<int>& signs) {
  if (static_cast<int>(signs.size()) != dims)
    throw iso::Error(std::string(where) + ": " + std::to_string(signs.size()) + " signs for " +
                     std::to_string(dims) + " dimensions");
  for (std::size_t j = 0; j < signs.size(); ++j)
    if (signs[j] < -1 || signs[j] > 1)
      throw iso::Error(std::string(where) + ": sign " + std::to_string(signs[j]) +
                       " in dimension " + std::to_string(j) + " (allowed: -1, 0, +1)");
}

std::string list(const std::vector<int>& values) {
  std::string out = "(";
  for (std::size_t j = 0; j < values.size(); ++j)
    out += (j ? "," : "") + std::to_string(values[j]);
  return out + ")";
}

std::string shape_name(const char* shape, int dims, int radius, const std::vector<int>* signs) {
  std::string name =
      std::string(shape) + "(d=" + std::to_string(dims) + ", r=" + std::to_string(radius);
  if (signs) name += ", signs=" + list(*signs);
  return name + ")";
}

}  // namespace

Stencil::Stencil(iso::OffsetList offsets, std::vector<double> weights, std::string name)
    : offsets_(std::move(offsets)), weights_(std::move(weights)), name_(std::move(name)) {
  if (!weights_.empty() && static_cast<int>(weights_.size()) != offsets_.size())
    throw iso::Error("isostencil::core::Stencil: " + std::to_string(weights_.size()) +
                     " weights for " + std::to_string(offsets_.size()) + " offsets");
}

Stencil Stencil::star(int dims, int radius) {
  check_shape("isostencil::core::Stencil::star", dims, radius);
  std::vector<int> coords(dims, 0);  // the centre
  for (int j = 0; j < dims; ++j)
    for (int k = -radius; k <= radius; ++k) {
      if (k == 0) continue;
      std::vector<int> offset(dims, 0);
      offset[j] = k;
      coords.insert(coords.end(), offset.begin(), offset.end());
    }
  return Stencil(iso::OffsetList(dims, std::move(coords)), {},
                 shape_name("star", dims, radius, nullptr));
}

Stencil Stencil::box(int dims, int radius) {
  check_shape("isostencil::core::Stencil::box", dims, radius);
  return Stencil(iso::OffsetList::moore(dims, radius, true), {},
                 shape_name("box", dims, radius, nullptr));
}

Stencil Stencil::upwind(int dims, int radius, const std::vector<int>& signs) {
  const char* where = "isostencil::core::Stencil::upwind";
  check_shape(where, dims, radius);
  check_signs(where, dims, signs);
  const iso::OffsetList all = iso::OffsetList::moore(dims, radius, true);
  std::vector<int> coords;
  for (int i = 0; i < all.size(); ++i) {
    bool keep = true;
    for (int j = 0; j < dims; ++j)
      keep = keep && (signs[j] == 0 || all[i][j] * signs[j] >= 0);
    if (keep) coords.insert(coords.end(), all[i], all[i] + dims);
  }
  return Stencil(iso::OffsetList(dims, std::move(coords)), {},
                 shape_name("upwind", dims, radius, &signs));
}

Stencil Stencil::one_sided_star(int dims, int radius, const std::vector<int>& signs) {
  const char* where = "isostencil::core::Stencil::one_sided_star";
  check_shape(where, dims, radius);
  check_signs(where, dims, signs);
  std::vector<int> coords(dims, 0);
  for (int j = 0; j < dims; ++j)
    for (int k = -radius; k <= radius; ++k) {
      if (k == 0 || k * signs[j] < 0) continue;
      std::vector<int> offset(dims, 0);
      offset[j] = k;
      coords.insert(coords.end(), offset.begin(), offset.end());
    }
  return Stencil(iso::OffsetList(dims, std::move(coords)), {},
                 shape_name("one_sided_star", dims, radius, &signs));
}

Stencil Stencil::with_weights(std::vector<double> weights) const {
  return Stencil(offsets_, std::move(weights), name_);
}

Stencil Stencil::repeated(int k) const {
  if (k < 1)
    throw iso::Error("isostencil::core::Stencil::repeated: k must be >= 1, got " + std::to_string(k));
  if (k == 1) return *this;  // keeps the weights, so a grid of depth 1 checks them across ranks
  const int d = dims();
  if (size() == 0) return Stencil(offsets_, {}, name_ + " x" + std::to_string(k));
  // The sums live in the bounding box [-k w_lo, k w_hi]: one flag per cell of
  // it, row-major, so the result comes out sorted and each sum once (a set of
  // vectors is ~100x slower for a 4-D box at k = 8).
  const iso::HaloWidths widths = geometry().widths;
  std::vector<long> lo(static_cast<std::size_t>(d)), extent(static_cast<std::size_t>(d));
  std::vector<long> stride(static_cast<std::size_t>(d));
  long cells = 1;
  for (int j = d - 1; j >= 0; --j) {
    const auto u = static_cast<std::size_t>(j);
    lo[u] = -static_cast<long>(k) * widths.lo[u];
    extent[u] = static_cast<long>(k) * (widths.lo[u] + widths.hi[u]) + 1;
    stride[u] = cells;
    cells *= extent[u];
  }
  std::vector<long> shift(static_cast<std::size_t>(size()), 0);  // each offset as a linear step
  for (int i = 0; i < size(); ++i)
    for (int j = 0; j < d; ++j) shift[static_cast<std::size_t>(i)] += offsets_[i][j] * stride[static_cast<std::size_t>(j)];
  long origin = 0;
  for (int j = 0; j < d; ++j) origin -= lo[static_cast<std::size_t>(j)] * stride[static_cast<std::size_t>(j)];
  std::vector<char> marked(static_cast<std::size_t>(cells), 0);
  std::vector<long> current{origin};  // the 0-fold sum: the origin
  for (int step = 0; step < k; ++step) {
    std::vector<char> next(static_cast<std::size_t>(cells), 0);
    std::vector<long> reached;
    for (const long at : current)
      for (const long s : shift)
        if (!next[static_cast<std::size_t>(at + s)]) {
          next[static_cast<std::size_t>(at + s)] = 1;
          reached.push_back(at + s);
        }
    marked.swap(next);
    current.swap(reached);
  }
  std::vector<int> coords;
  coords.reserve(current.size() * static_cast<std::size_t>(d));
  for (long at = 0; at < cells; ++at) {
    if (!marked[static_cast<std::size_t>(at)]) continue;
    for (int j = 0; j < d; ++j) {
      const auto u = static_cast<std::size_t>(j);
      coords.push_back(static_cast<int>((at / stride[u]) % extent[u] + lo[u]));
    }
  }
  return Stencil(iso::OffsetList(d, std::move(coords)), {}, name_ + " x" + std::to_string(k));
}

int Stencil::radius() const {
  if (size() == 0) return 0;
  const iso::HaloWidths widths = geometry().widths;
  return std::max(*std::max_element(widths.lo.begin(), widths.lo.end()),
                  *std::max_element(widths.hi.begin(), widths.hi.end()));
}

std::string Stencil::describe() const {
  if (size() == 0 && dims() == 0) return name_ + ": no offsets";
  const iso::HaloGeometry halo = geometry();
  std::ostringstream text;
  text << name_ << ": " << size() << " offsets" << (has_weights() ? " (weighted)" : "")
       << ", halo lo " << list(halo.widths.lo) << " hi " << list(halo.widths.hi) << ", "
       << halo.directions.size() << " directions";
  return text.str();
}

std::uint64_t Stencil::hash() const {
  std::uint64_t hash = offsets_.hash();
  for (double w : weights_) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &w, sizeof bits);
    hash = iso::mix_fingerprint(hash, bits);
  }
  return iso::mix_fingerprint(hash, weights_.size());
}

std::ostream& operator<<(std::ostream& out, const Stencil& stencil) {
  return out << stencil.describe();
}

}  // namespace isostencil::core
