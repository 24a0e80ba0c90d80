#include "iso/geometry.hpp"

#include "iso/error.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>

namespace iso {

namespace {
// FNV-1a over 32-bit words: stable across processes and builds.
std::uint64_t mix(std::uint64_t h, std::int64_t value) {
  auto v = static_cast<std::uint64_t>(value);
  for (int byte = 0; byte < 8; ++byte) {
    h ^= (v >> (8 * byte)) & 0xffu;
    h *= 1099511628211ull;
  }
  return h;
}
constexpr std::uint64_t hash_seed = 14695981039346656037ull;
}  // namespace

OffsetList::OffsetList(int dims, std::vector<int> coords) : dims_(dims), coords_(std::move(coords)) {
  if (dims < 1) throw Error("iso::OffsetList: dimension must be >= 1, got " + std::to_string(dims));
  for (int c : coords_)
    if (c > max_coordinate || c < -max_coordinate)
      throw Error("iso::OffsetList: offset coordinate " + std::to_string(c) + " exceeds the supported magnitude " +
                  std::to_string(max_coordinate));
  if (coords_.size() % static_cast<std::size_t>(dims) != 0)
    throw Error("iso::OffsetList: " + std::to_string(coords_.size()) +
                " coordinates is not a multiple of the dimension " + std::to_string(dims));
  hash();
}

OffsetList OffsetList::moore(int dims, int radius, bool include_self) {
  if (dims < 1) throw Error("iso::OffsetList::moore: dimension must be >= 1, got " + std::to_string(dims));
  if (radius < 0) throw Error("iso::OffsetList::moore: radius must be >= 0, got " + std::to_string(radius));
  std::vector<int> coords;
  std::vector<int> v(dims, -radius);
  while (true) {
    bool zero = true;
    for (int c : v) zero = zero && c == 0;
    if (!zero || include_self) coords.insert(coords.end(), v.begin(), v.end());
    int j = dims - 1;
    while (j >= 0 && v[j] == radius) v[j--] = -radius;
    if (j < 0) break;
    ++v[j];
  }
  return OffsetList(dims, std::move(coords));
}

OffsetList OffsetList::parse(const std::string& text) {
  std::vector<int> coords;
  int dims = -1;
  std::stringstream offsets(text);
  std::string offset;
  int index = 0;
  while (std::getline(offsets, offset, ';')) {
    if (offset.find_first_not_of(" \t") == std::string::npos) continue;
    std::stringstream parts(offset);
    std::string part;
    int count = 0;
    while (std::getline(parts, part, ',')) {
      std::size_t used = 0;
      long long value = 0;
      try {
        value = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used > 0 && (value > max_coordinate || value < -max_coordinate))
        throw Error("iso::OffsetList::parse: offset " + std::to_string(index) + ": coordinate " + part +
                    " is out of range (|c| <= " + std::to_string(max_coordinate) + ")");
      if (used == 0 || part.find_first_not_of(" \t", used) != std::string::npos)
        throw Error("iso::OffsetList::parse: offset " + std::to_string(index) + " (\"" + offset +
                    "\"): \"" + part + "\" is not an integer");
      coords.push_back(static_cast<int>(value));
      ++count;
    }
    if (dims < 0) dims = count;
    if (count != dims)
      throw Error("iso::OffsetList::parse: offset " + std::to_string(index) + " (\"" + offset +
                  "\") has " + std::to_string(count) + " coordinates, the first has " +
                  std::to_string(dims));
    ++index;
  }
  if (dims <= 0) throw Error("iso::OffsetList::parse: no offsets in \"" + text + "\"");
  return OffsetList(dims, std::move(coords));
}

void OffsetList::push_back(const std::vector<int>& offset) {
  if (dims_ == 0) dims_ = static_cast<int>(offset.size());
  for (int c : offset)
    if (c > max_coordinate || c < -max_coordinate)
      throw Error("iso::OffsetList::push_back: offset coordinate " + std::to_string(c) + " is out of range");
  if (static_cast<int>(offset.size()) != dims_ || dims_ == 0)
    throw Error("iso::OffsetList::push_back: offset has " + std::to_string(offset.size()) +
                " coordinates, the list has dimension " + std::to_string(dims_));
  coords_.insert(coords_.end(), offset.begin(), offset.end());
  hashed_ = false;
}

std::uint64_t OffsetList::hash() const {
  if (!hashed_) hash_ = compute_hash(), hashed_ = true;
  return hash_;
}

std::uint64_t OffsetList::compute_hash() const {
  // Every neighborhood hashes its offsets (thousands at d = 4, r = 3), so
  // the coordinates go in two at a time over four independent lanes: byte-wise
  // FNV-1a took most of the creation time.
  auto step = mix_fingerprint;
  std::uint64_t lane[4] = {hash_seed, hash_seed ^ 1, hash_seed ^ 2, hash_seed ^ 3};
  const std::size_t n = coords_.size();
  auto word = [&](std::size_t k) {
    const auto low = static_cast<std::uint32_t>(coords_[k]);
    const auto high = k + 1 < n ? static_cast<std::uint32_t>(coords_[k + 1]) : 0u;
    return (static_cast<std::uint64_t>(high) << 32) | low;
  };
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 4; ++j) lane[j] = step(lane[j], word(k + 2 * static_cast<std::size_t>(j)));
  for (int j = 0; k < n; k += 2, j = (j + 1) % 4) lane[j] = step(lane[j], word(k));
  std::uint64_t h = mix(mix(hash_seed, dims_), size());
  for (std::uint64_t l : lane) h = step(h, l);
  return h;
}

std::string OffsetList::to_string() const {
  std::string out;
  for (int i = 0; i < size(); ++i) {
    out += i ? " (" : "(";
    for (int j = 0; j < dims_; ++j) out += (j ? "," : "") + std::to_string((*this)[i][j]);
    out += ")";
  }
  return out;
}

int CartGeometry::num_procs() const {
  long n = 1;
  for (int p : sizes) n *= p;
  return static_cast<int>(n);
}

int CartGeometry::rank_of(const int* coords) const {
  int rank = 0;
  for (int j = 0; j < dims(); ++j) rank = rank * sizes[j] + coords[j];
  return rank;
}

void CartGeometry::coords_of(int rank, int* coords) const {
  for (int j = dims() - 1; j >= 0; --j) {
    coords[j] = rank % sizes[j];
    rank /= sizes[j];
  }
}

bool CartGeometry::shift(const int* base, const int* v, int sign, int* out) const {
  for (int j = 0; j < dims(); ++j) {
    long c = static_cast<long>(base[j]) + static_cast<long>(sign) * v[j];
    if (periodic[j]) {
      c %= sizes[j];
      if (c < 0) c += sizes[j];
    } else if (c < 0 || c >= sizes[j]) {
      return false;
    }
    out[j] = static_cast<int>(c);
  }
  return true;
}

int CartGeometry::shifted_rank(const int* base, const int* v, int sign) const {
  int out[64];
  if (dims() > 64) throw Error("iso::CartGeometry: at most 64 dimensions are supported");
  return shift(base, v, sign, out) ? rank_of(out) : -1;
}

std::uint64_t CartGeometry::hash() const {
  std::uint64_t h = mix(hash_seed, dims());
  for (int j = 0; j < dims(); ++j) h = mix(mix(h, sizes[j]), periodic[j] ? 1 : 0);
  return h;
}

}  // namespace iso
