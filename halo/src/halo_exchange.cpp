#include "iso/halo_exchange.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

namespace iso {

int halo_misfit_dimension(const HaloWidths& widths, const std::vector<int>& process_dims,
                          const std::vector<bool>& periodic, const std::vector<long>& smallest_extent) {
  for (std::size_t j = 0; j < process_dims.size(); ++j) {
    const bool exchanged = process_dims[j] > 1 || (j < periodic.size() && periodic[j]);
    const int width = std::max(j < widths.lo.size() ? widths.lo[j] : 0, j < widths.hi.size() ? widths.hi[j] : 0);
    if (exchanged && width > smallest_extent[j]) return static_cast<int>(j);
  }
  return -1;
}

HaloGeometry HaloGeometry::of(HaloWidths widths, OffsetList directions) {
  HaloGeometry geometry;
  const int d = directions.dims() > 0 ? directions.dims() : std::max(1, static_cast<int>(widths.lo.size()));
  std::vector<int> offsets;
  offsets.reserve(directions.flat().size());
  for (int c : directions.flat()) offsets.push_back(-c);
  geometry.neighborhood = OffsetList(d, std::move(offsets));
  geometry.widths = std::move(widths);
  geometry.directions = std::move(directions);
  return geometry;
}

HaloGeometry stencil_geometry(const OffsetList& stencil) {
  const int d = stencil.dims();
  HaloWidths widths;
  widths.lo.assign(d, 0);
  widths.hi.assign(d, 0);
  std::set<std::vector<int>> directions;
  for (int i = 0; i < stencil.size(); ++i) {
    std::vector<int> sign(d);
    std::vector<int> nonzero;
    for (int j = 0; j < d; ++j) {
      widths.lo[j] = std::max(widths.lo[j], -stencil[i][j]);
      widths.hi[j] = std::max(widths.hi[j], stencil[i][j]);
      sign[j] = (stencil[i][j] > 0) - (stencil[i][j] < 0);
      if (sign[j] != 0) nonzero.push_back(j);
    }
    // Every subset of the nonzero components survives zeroing the others.
    const int k = static_cast<int>(nonzero.size());
    for (long mask = 1; mask < (1L << k); ++mask) {
      std::vector<int> e(d, 0);
      for (int b = 0; b < k; ++b)
        if (mask & (1L << b)) e[nonzero[b]] = sign[nonzero[b]];
      directions.insert(e);
    }
  }
  std::vector<int> flat;
  for (const auto& e : directions) flat.insert(flat.end(), e.begin(), e.end());
  return HaloGeometry::of(std::move(widths), OffsetList(std::max(d, 1), std::move(flat)));
}

std::vector<int> ArrayLayout::extent() const {
  std::vector<int> e(dims());
  for (int j = 0; j < dims(); ++j) e[j] = ghost_lo[j] + interior[j] + ghost_hi[j];
  return e;
}

namespace {

std::string describe(const std::vector<int>& v) {
  std::string out = "(";
  for (std::size_t j = 0; j < v.size(); ++j) out += (j ? "," : "") + std::to_string(v[j]);
  return out + ")";
}

// The pattern's part of the checks: the geometry against the communicator.
std::string check_pattern(const std::vector<int>& interior, const HaloGeometry& geometry,
                          const std::vector<long>& global_offset, int cart_dims) {
  const int d = static_cast<int>(interior.size());
  if (d != cart_dims)
    return "the array has " + std::to_string(d) + " dimensions but the Cartesian communicator has " +
           std::to_string(cart_dims);
  const HaloWidths& widths = geometry.widths;
  if (static_cast<int>(widths.lo.size()) != d || static_cast<int>(widths.hi.size()) != d)
    return "ghost widths need one entry per dimension";
  if (!global_offset.empty() && static_cast<int>(global_offset.size()) != d)
    return "global_offset needs one entry per dimension";
  for (int j = 0; j < d; ++j) {
    if (interior[j] < 1)
      return "interior extent " + std::to_string(interior[j]) + " in dimension " + std::to_string(j) +
             " (every process needs at least one cell)";
    if (widths.lo[j] < 0 || widths.hi[j] < 0) return "negative ghost width in dimension " + std::to_string(j);
  }
  const OffsetList& directions = geometry.directions;
  if (directions.size() > 0 && directions.dims() != d)
    return "directions have " + std::to_string(directions.dims()) + " coordinates, the array " + std::to_string(d);
  for (int i = 0; i < directions.size(); ++i) {
    bool zero = true;
    for (int j = 0; j < d; ++j) {
      if (directions[i][j] < -1 || directions[i][j] > 1)
        return "direction " + std::to_string(i) + " has a component outside {-1,0,1}";
      zero = zero && directions[i][j] == 0;
    }
    if (zero) return "direction " + std::to_string(i) + " is the zero vector";
  }
  return {};
}

// The exchange's part: the element type and the fields bound.
std::string check_binding(MPI_Datatype element, const std::vector<void*>& fields) {
  if (element == MPI_DATATYPE_NULL) return "element type is MPI_DATATYPE_NULL";
  MPI_Aint lb = 0, extent = 0;
  int size = 0;
  ISO_MPI_CHECK(MPI_Type_get_extent(element, &lb, &extent));
  ISO_MPI_CHECK(MPI_Type_size(element, &size));
  if (lb != 0 || extent != size) return "the element type must be contiguous (lower bound 0, extent == size)";
  if (fields.empty()) return "no fields to exchange";
  for (std::size_t f = 0; f < fields.size(); ++f)
    if (!fields[f]) return "field " + std::to_string(f) + " is a null pointer";
  return {};
}

}  // namespace

std::string compare_cells(const ArrayLayout& layout, const void* first, const void* second, bool interior_too,
                          long& compared, const std::string& first_name, const std::string& second_name) {
  int element_size = 0;
  ISO_MPI_CHECK(MPI_Type_size(layout.element, &element_size));
  const int d = layout.dims();
  const std::vector<int> extent = layout.extent();
  long cells = 1;
  for (int e : extent) cells *= e;
  const auto* a = static_cast<const char*>(first);
  const auto* b = static_cast<const char*>(second);
  std::vector<int> index(d);
  for (long cell = 0; cell < cells; ++cell) {
    long rest = cell;
    bool ghost = false;
    for (int j = d - 1; j >= 0; --j) {
      index[j] = static_cast<int>(rest % extent[j]);
      rest /= extent[j];
      ghost = ghost || index[j] < layout.ghost_lo[j] || index[j] >= layout.ghost_lo[j] + layout.interior[j];
    }
    if (!ghost && !interior_too) continue;
    ++compared;
    const std::size_t at = static_cast<std::size_t>(cell) * element_size;
    if (std::memcmp(a + at, b + at, static_cast<std::size_t>(element_size)) == 0) continue;
    std::vector<int> direction(d), global(d);
    for (int j = 0; j < d; ++j) {
      direction[j] = index[j] < layout.ghost_lo[j] ? -1 : index[j] >= layout.ghost_lo[j] + layout.interior[j] ? 1 : 0;
      const long offset = layout.global_offset.empty() ? 0 : layout.global_offset[j];
      global[j] = static_cast<int>(offset + index[j] - layout.ghost_lo[j]);
    }
    std::ostringstream text;
    text << (ghost ? "ghost cell" : "interior cell") << " in direction " << describe(direction) << ", global index "
         << describe(global) << " (local " << describe(index) << "): " << first_name << " has bytes" << std::hex;
    for (int byte = 0; byte < element_size; ++byte) text << ' ' << (static_cast<unsigned>(a[at + byte]) & 0xffu);
    text << ", " << second_name << " has";
    for (int byte = 0; byte < element_size; ++byte) text << ' ' << (static_cast<unsigned>(b[at + byte]) & 0xffu);
    return text.str();
  }
  return {};
}

namespace {

// Visits the contiguous runs (last dimension) of a box in a row-major array.
template <class Visit>
void for_each_run(const std::vector<int>& extent, const std::vector<int>& start, const std::vector<int>& size,
                  long element_size, Visit&& visit) {
  const int d = static_cast<int>(extent.size());
  for (int s : size)
    if (s == 0) return;
  std::vector<int> index(start);
  const long run = size[d - 1] * element_size;
  while (true) {
    long offset = 0;
    for (int j = 0; j < d; ++j) offset = offset * extent[j] + index[j];
    visit(offset * element_size, run);
    int j = d - 2;
    while (j >= 0 && ++index[j] == start[j] + size[j]) {
      index[j] = start[j];
      --j;
    }
    if (j < 0) return;
  }
}

// The naive exchange's hand packing: a block's rows copied to or from a
// contiguous buffer.
void pack_block(const std::vector<int>& extent, long element_size, const char* field, const HaloPattern::Block& block,
                char* out) {
  for_each_run(extent, block.start, block.size, element_size, [&](long offset, long bytes) {
    std::memcpy(out, field + offset, static_cast<std::size_t>(bytes));
    out += bytes;
  });
}

void unpack_block(const std::vector<int>& extent, long element_size, const char* in, const HaloPattern::Block& block,
                  char* field) {
  for_each_run(extent, block.start, block.size, element_size, [&](long offset, long bytes) {
    std::memcpy(field + offset, in, static_cast<std::size_t>(bytes));
    in += bytes;
  });
}

}  // namespace

long HaloPattern::Block::cells() const {
  long cells = 1;
  for (int s : size) cells *= s;
  return cells;
}

HaloPattern::HaloPattern(MPI_Comm cart, std::vector<int> interior, HaloGeometry geometry,
                         std::vector<long> global_offset, const HaloOptions& options)
    : HaloPattern("iso::HaloPattern", cart, std::move(interior), std::move(geometry), std::move(global_offset),
                  options) {}

HaloPattern::HaloPattern(const char* where, MPI_Comm cart, std::vector<int> interior, HaloGeometry geometry,
                         std::vector<long> global_offset, const HaloOptions& options)
    : interior_(std::move(interior)),
      geometry_(std::move(geometry)),
      global_offset_(std::move(global_offset)),
      options_(options) {
  int topology = MPI_UNDEFINED, cart_dims = 0;
  ISO_MPI_CHECK(MPI_Topo_test(cart, &topology));
  if (topology != MPI_CART) throw Error(std::string(where) + ": the communicator has no Cartesian topology");
  ISO_MPI_CHECK(MPI_Cartdim_get(cart, &cart_dims));
  std::string error = check_pattern(interior_, geometry_, global_offset_, cart_dims);
  agree_on_errors(cart, where, error);
  const int d = dims();
  if (global_offset_.empty()) global_offset_.assign(d, 0);

  // A ghost layer wider than a neighbor's subdomain would need data from
  // beyond that neighbor; reject it naming the dimension.
  std::vector<int> process_dims(d), periods(d), coords(d);
  ISO_MPI_CHECK(MPI_Cart_get(cart, d, process_dims.data(), periods.data(), coords.data()));
  std::vector<int> smallest(interior_);
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, smallest.data(), d, MPI_INT, MPI_MIN, cart));
  const HaloWidths& widths = geometry_.widths;
  const int misfit = halo_misfit_dimension(widths, process_dims, std::vector<bool>(periods.begin(), periods.end()),
                                           std::vector<long>(smallest.begin(), smallest.end()));
  if (misfit >= 0) {
    const auto j = static_cast<std::size_t>(misfit);
    throw Error(std::string(where) + ": dimension " + std::to_string(j) + ": halo width " +
                std::to_string(std::max(widths.lo[j], widths.hi[j])) + " is wider than the smallest local extent " +
                std::to_string(smallest[j]) +
                " of a neighbor's subdomain; use fewer processes in this dimension, a larger grid or a narrower "
                "stencil");
  }

  // No directions: an empty neighborhood of the array's dimension.
  if (geometry_.directions.size() == 0 && geometry_.neighborhood.dims() != d)
    geometry_.neighborhood = OffsetList(d, {});
  neighborhood_ = std::make_unique<Neighborhood>(cart, geometry_.neighborhood, NeighborhoodOptions{options_.verify});

  const OffsetList& directions = geometry_.directions;
  for (int i = 0; i < directions.size(); ++i) {
    // Received: my ghost slab in direction e. Sent: the process x - e reads
    // my cells as its direction e: my interior slab on the side facing it,
    // as wide as its ghost layer there.
    Block recv, send;
    for (int j = 0; j < d; ++j) {
      const int e = directions[i][j];
      const int n = interior_[j], lo = widths.lo[j], hi = widths.hi[j];
      const int size = e < 0 ? lo : e == 0 ? n : hi;
      recv.start.push_back(e < 0 ? 0 : e == 0 ? lo : lo + n);
      send.start.push_back(e < 0 ? n : lo);
      recv.size.push_back(size);
      send.size.push_back(size);
    }
    recv_blocks_.push_back(std::move(recv));
    send_blocks_.push_back(std::move(send));
  }
  MPI_Comm naive = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Comm_dup(neighborhood_->comm(), &naive));
  naive_comm_ = Comm(naive);
}

HaloPattern::~HaloPattern() = default;

ArrayLayout HaloPattern::layout(MPI_Datatype element) const {
  ArrayLayout layout;
  layout.interior = interior_;
  layout.ghost_lo = geometry_.widths.lo;
  layout.ghost_hi = geometry_.widths.hi;
  layout.global_offset = global_offset_;
  layout.element = element;
  return layout;
}

HaloExchange::HaloExchange(std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
                           std::vector<void*> fields)
    : pattern_(std::move(pattern)), fields_(std::move(fields)) {
  if (!pattern_) throw Error("iso::HaloExchange: no pattern");
  layout_ = pattern_->layout(element);
  bind("iso::HaloExchange");
}

HaloExchange::HaloExchange(MPI_Comm cart, ArrayLayout layout, const OffsetList& directions, std::vector<void*> fields,
                           const HaloOptions& options)
    : pattern_(new HaloPattern("iso::HaloExchange", cart, layout.interior,
                               HaloGeometry::of(HaloWidths{layout.ghost_lo, layout.ghost_hi}, directions),
                               layout.global_offset, options)),
      fields_(std::move(fields)) {
  layout_ = pattern_->layout(layout.element);
  bind("iso::HaloExchange");
}

void HaloExchange::bind(const char* where) {
  const HaloPattern& pattern = *pattern_;
  const std::string error = check_binding(layout_.element, fields_);
  agree_on_errors(pattern.neighborhood().comm(), where, error);
  ISO_MPI_CHECK(MPI_Type_size(layout_.element, &element_size_));

  const int d = layout_.dims();
  const int s = pattern.directions().size();
  const int nfields = static_cast<int>(fields_.size());
  const std::vector<int> extent = layout_.extent();
  std::vector<int> counts(s, 1);
  std::vector<MPI_Aint> displacements(s, 0);
  std::vector<MPI_Datatype> send_types(s), recv_types(s);
  std::vector<MPI_Aint> addresses(nfields);
  for (int f = 0; f < nfields; ++f) ISO_MPI_CHECK(MPI_Get_address(fields_[f], &addresses[f]));
  // Every type is owned by types_ from its creation on, so a failure below
  // frees all of them (a throwing constructor runs no destructor).
  auto block_type = [&](const HaloPattern::Block& block) {
    types_.reserve(types_.size() + 1);
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (block_bytes(block) == 0) {
      ISO_MPI_CHECK(MPI_Type_contiguous(0, MPI_BYTE, &type));
    } else {
      MPI_Datatype box = MPI_DATATYPE_NULL;
      ISO_MPI_CHECK(MPI_Type_create_subarray(d, extent.data(), block.size.data(), block.start.data(), MPI_ORDER_C,
                                             layout_.element, &box));
      std::vector<int> ones(nfields, 1);
      std::vector<MPI_Datatype> boxes(nfields, box);
      const int rc = MPI_Type_create_struct(nfields, ones.data(), addresses.data(), boxes.data(), &type);
      MPI_Type_free(&box);
      ISO_MPI_CHECK(rc);
    }
    types_.push_back(type);
    ISO_MPI_CHECK(MPI_Type_commit(&type));
    return type;
  };
  try {
    for (int i = 0; i < s; ++i) {
      send_types[i] = block_type(pattern.send_block(i));
      recv_types[i] = block_type(pattern.recv_block(i));
    }
    operation_ = alltoallw_init(pattern.neighborhood(), MPI_BOTTOM, counts.data(), displacements.data(),
                                send_types.data(), MPI_BOTTOM, counts.data(), displacements.data(), recv_types.data(),
                                OperationOptions{pattern.options().algorithm, false, pattern.options().ports});
  } catch (...) {
    operation_ = Operation();
    for (MPI_Datatype& type : types_) MPI_Type_free(&type);
    throw;
  }
}

HaloExchange::HaloExchange(HaloExchange&&) noexcept = default;

// Swapped, so the exchange this one held is released by `other`'s destructor
// (its block types included, which a member-wise move would drop).
HaloExchange& HaloExchange::operator=(HaloExchange&& other) noexcept {
  std::swap(pattern_, other.pattern_);
  std::swap(layout_, other.layout_);
  std::swap(fields_, other.fields_);
  std::swap(types_, other.types_);
  std::swap(operation_, other.operation_);
  std::swap(element_size_, other.element_size_);
  return *this;
}

HaloExchange::~HaloExchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  operation_ = Operation();  // requests before the types they use
  for (MPI_Datatype& type : types_) MPI_Type_free(&type);
}

void naive_exchange(const HaloPattern& pattern, MPI_Datatype element, const std::vector<void*>& fields) {
  const std::string error = check_binding(element, fields);
  if (!error.empty()) throw Error("iso::naive_exchange: " + error);
  int element_size = 0;
  ISO_MPI_CHECK(MPI_Type_size(element, &element_size));
  const std::vector<int> extent = pattern.layout(element).extent();
  auto block_bytes = [&](const HaloPattern::Block& block) { return block.cells() * element_size; };
  const int s = pattern.directions().size();
  const int nfields = static_cast<int>(fields.size());
  std::vector<std::vector<char>> incoming(s), outgoing(s);
  std::vector<MPI_Request> requests;
  for (int i = 0; i < s; ++i) {
    const int source = pattern.neighborhood().source_rank(i);
    const long bytes = block_bytes(pattern.recv_block(i)) * nfields;
    if (source < 0 || bytes == 0) continue;
    incoming[i].resize(static_cast<std::size_t>(bytes));
    requests.emplace_back();
    ISO_MPI_CHECK(MPI_Irecv(incoming[i].data(), static_cast<int>(bytes), MPI_BYTE, source, i, pattern.naive_comm(),
                            &requests.back()));
  }
  for (int i = 0; i < s; ++i) {
    const int target = pattern.neighborhood().target_rank(i);
    const HaloPattern::Block& block = pattern.send_block(i);
    const long bytes = block_bytes(block);
    if (target < 0 || bytes == 0) continue;
    outgoing[i].resize(static_cast<std::size_t>(bytes * nfields));
    for (int f = 0; f < nfields; ++f)
      pack_block(extent, element_size, static_cast<const char*>(fields[f]), block, outgoing[i].data() + f * bytes);
    requests.emplace_back();
    ISO_MPI_CHECK(MPI_Isend(outgoing[i].data(), static_cast<int>(bytes * nfields), MPI_BYTE, target, i,
                            pattern.naive_comm(), &requests.back()));
  }
  ISO_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  for (int i = 0; i < s; ++i) {
    if (incoming[i].empty()) continue;
    const HaloPattern::Block& block = pattern.recv_block(i);
    const long bytes = block_bytes(block);
    for (int f = 0; f < nfields; ++f)
      unpack_block(extent, element_size, incoming[i].data() + f * bytes, block, static_cast<char*>(fields[f]));
  }
}

void HaloExchange::run_naive() { naive_exchange(*pattern_, layout_.element, fields_); }

HaloValidation HaloExchange::validate() {
  const std::vector<int> extent = layout_.extent();
  long cells = 1;
  for (int e : extent) cells *= e;
  const std::size_t bytes = static_cast<std::size_t>(cells) * element_size_;
  const int nfields = static_cast<int>(fields_.size());
  std::vector<std::vector<char>> original(nfields), combined(nfields);
  for (int f = 0; f < nfields; ++f) {
    const char* field = static_cast<const char*>(fields_[f]);
    original[f].assign(field, field + bytes);
  }
  run();
  for (int f = 0; f < nfields; ++f) {
    const char* field = static_cast<const char*>(fields_[f]);
    combined[f].assign(field, field + bytes);
    std::memcpy(fields_[f], original[f].data(), bytes);
  }
  run_naive();

  HaloValidation result;
  std::string mismatch;
  const std::string iso_name = std::string("isomorphic exchange (") + to_string(algorithm()) + ")";
  for (int f = 0; f < nfields && mismatch.empty(); ++f) {
    mismatch = compare_cells(layout_, combined[f].data(), fields_[f], false, result.cells_compared, iso_name,
                             "naive exchange");
    if (!mismatch.empty() && nfields > 1) mismatch = "field " + std::to_string(f) + ": " + mismatch;
  }
  for (int f = 0; f < nfields; ++f) std::memcpy(fields_[f], combined[f].data(), bytes);
  try {
    agree_on_errors(pattern_->neighborhood().comm(), "halo validation", mismatch);
  } catch (const Error& e) {
    result.ok = false;
    result.message = e.what();
  }
  return result;
}

}  // namespace iso
