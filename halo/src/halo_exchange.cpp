#include "iso/halo_exchange.hpp"

#include "iso/error.hpp"
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

namespace iso {

int halo_reach(int width, long smallest_extent) {
  if (width <= 0) return 0;
  if (smallest_extent <= 0) return 1;
  return static_cast<int>((width + smallest_extent - 1) / smallest_extent);
}

std::vector<long> exchanged_extents(const std::vector<int>& process_dims, const std::vector<bool>& periodic,
                                    const std::vector<long>& smallest_extent) {
  std::vector<long> extents(process_dims.size(), 0);
  for (std::size_t j = 0; j < process_dims.size(); ++j) {
    const bool exchanged = process_dims[j] > 1 || (j < periodic.size() && periodic[j]);
    if (exchanged && j < smallest_extent.size()) extents[j] = smallest_extent[j];
  }
  return extents;
}

int halo_misfit_dimension(const HaloWidths& widths, const std::vector<int>& process_dims,
                          const std::vector<bool>& periodic, const std::vector<long>& smallest_extent) {
  const std::vector<long> exchanged = exchanged_extents(process_dims, periodic, smallest_extent);
  for (std::size_t j = 0; j < process_dims.size(); ++j) {
    const int width = std::max(j < widths.lo.size() ? widths.lo[j] : 0, j < widths.hi.size() ? widths.hi[j] : 0);
    if (exchanged[j] > 0 && halo_reach(width, exchanged[j]) > max_halo_reach) return static_cast<int>(j);
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

HaloGeometry stencil_geometry(const OffsetList& stencil, const std::vector<long>& smallest_extent) {
  const int d = stencil.dims();
  HaloWidths widths;
  widths.lo.assign(d, 0);
  widths.hi.assign(d, 0);
  std::set<std::vector<int>> directions;
  for (int i = 0; i < stencil.size(); ++i) {
    // Offset c_j reads, from a cell somewhere in the interior, the processes
    // 0..halo_reach(|c_j|) steps away on its side: the product of those
    // ranges (with unit reach: every subset of sign(c) kept, the others
    // zeroed).
    std::vector<int> low(d), high(d);
    for (int j = 0; j < d; ++j) {
      const int c = stencil[i][j];
      widths.lo[j] = std::max(widths.lo[j], -c);
      widths.hi[j] = std::max(widths.hi[j], c);
      const long smallest = static_cast<std::size_t>(j) < smallest_extent.size() ? smallest_extent[j] : 0;
      const int reach = halo_reach(std::abs(c), smallest);
      // The width rule's limit, so that no input makes (2 reach + 1)^d directions.
      if (reach > max_halo_reach)
        throw Error("iso::stencil_geometry: offset " + std::to_string(c) + " in dimension " + std::to_string(j) +
                    " reaches " + std::to_string(reach) + " processes away over subdomains of " +
                    std::to_string(smallest) + " cells (at most " + std::to_string(max_halo_reach) + ")");
      low[j] = c < 0 ? -reach : 0;
      high[j] = c > 0 ? reach : 0;
    }
    std::vector<int> e(low);
    while (true) {
      if (std::any_of(e.begin(), e.end(), [](int x) { return x != 0; })) directions.insert(e);
      int j = d - 1;
      while (j >= 0 && e[j] == high[j]) {
        e[j] = low[j];
        --j;
      }
      if (j < 0) break;
      ++e[j];
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
    for (int j = 0; j < d; ++j) zero = zero && directions[i][j] == 0;
    if (zero) return "direction " + std::to_string(i) + " is the zero vector";
  }
  return {};
}

// Directions reach no further than the ghost layers on their side need.
std::string check_reach(const HaloGeometry& geometry, const std::vector<long>& exchanged) {
  const OffsetList& directions = geometry.directions;
  for (int i = 0; i < directions.size(); ++i)
    for (int j = 0; j < directions.dims(); ++j) {
      const int e = directions[i][j];
      const int width = e < 0 ? geometry.widths.lo[j] : geometry.widths.hi[j];
      const int limit = std::max(1, halo_reach(width, exchanged[j]));
      if (std::abs(e) > limit)
        return "direction " + std::to_string(i) + " reaches " + std::to_string(std::abs(e)) +
               " processes away in dimension " + std::to_string(j) + ", where a ghost layer of " +
               std::to_string(width) + " cells reaches at most " + std::to_string(limit);
    }
  return {};
}

// The subdomain extents of every process coordinate, per dimension, as the
// pattern of a halo wider than a subdomain needs them (gathered once).
struct LineExtents {
  std::vector<std::vector<int>> extent;  // [dimension][coordinate]
  int at(int j, int coordinate) const {
    const auto& line = extent[static_cast<std::size_t>(j)];
    const int p = static_cast<int>(line.size());
    return line[static_cast<std::size_t>(((coordinate % p) + p) % p)];
  }
};

// Gathers every process's coordinates and interior; an error text where the
// interiors are not a block decomposition (one extent per coordinate).
std::string gather_line_extents(MPI_Comm cart, const std::vector<int>& process_dims, const std::vector<int>& coords,
                                const std::vector<int>& interior, LineExtents& lines) {
  const int d = static_cast<int>(interior.size());
  int size = 0;
  ISO_MPI_CHECK(MPI_Comm_size(cart, &size));
  std::vector<int> mine(coords);
  mine.insert(mine.end(), interior.begin(), interior.end());
  std::vector<int> all(static_cast<std::size_t>(size) * 2 * d);
  ISO_MPI_CHECK(MPI_Allgather(mine.data(), 2 * d, MPI_INT, all.data(), 2 * d, MPI_INT, cart));
  lines.extent.assign(d, {});
  for (int j = 0; j < d; ++j) lines.extent[j].assign(process_dims[j], 0);
  for (int r = 0; r < size; ++r)
    for (int j = 0; j < d; ++j) {
      const int c = all[static_cast<std::size_t>(r) * 2 * d + j];
      const int n = all[static_cast<std::size_t>(r) * 2 * d + d + j];
      int& slot = lines.extent[j][c];
      if (slot != 0 && slot != n)
        return "the interior extents are not a block decomposition: dimension " + std::to_string(j) +
               ", coordinate " + std::to_string(c) + " has extents " + std::to_string(slot) + " and " +
               std::to_string(n) + " (a halo wider than a subdomain needs one extent per coordinate)";
      slot = n;
    }
  return {};
}

// The cells [start, start + size) of one dimension of a block whose
// direction component is e (|e| >= 1) at process coordinate c: received, the
// part of my ghost layer that the process |e| steps away owns; sent, the
// part of my interior that the process |e| steps the other way reads as its
// direction e. Ghost layers are `width` cells deep (lo for e < 0, hi for
// e > 0); the processes between the two hold `before` cells of it.
struct Span {
  int start, size;
};
Span wide_recv_span(const LineExtents& lines, int j, int c, int e, int lo, int width) {
  const int step = e < 0 ? -1 : 1, k = std::abs(e);
  int before = 0;
  for (int i = 1; i < k; ++i) before += lines.at(j, c + step * i);
  const int owned = lines.at(j, c + step * k);
  const int size = std::max(0, std::min(before + owned, width) - before);
  const int n = lines.at(j, c);
  return {e < 0 ? lo - before - size : lo + n + before, size};
}
Span wide_send_span(const LineExtents& lines, int j, int c, int e, int lo, int width) {
  // The receiver sits |e| steps against e's sign; the cells between us come first.
  const int step = e < 0 ? 1 : -1, k = std::abs(e);
  int before = 0;
  for (int i = 1; i < k; ++i) before += lines.at(j, c + step * i);
  const int n = lines.at(j, c);
  const int size = std::max(0, std::min(before + n, width) - before);
  return {e < 0 ? lo + n - size : lo, size};
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

namespace detail {

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

}  // namespace detail

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
  topology = detail::topology_of(cart);
  if (topology != MPI_CART) throw Error(std::string(where) + ": the communicator has no Cartesian topology");
  ISO_MPI_CHECK(MPI_Cartdim_get(cart, &cart_dims));
  std::string error = check_pattern(interior_, geometry_, global_offset_, cart_dims);
  agree_on_errors(cart, where, error);
  const int d = dims();
  if (global_offset_.empty()) global_offset_.assign(d, 0);

  // The width rule (how many processes away the halo may reach), from the
  // smallest extent of each dimension over all processes.
  std::vector<int> process_dims(d), periods(d), coords(d);
  ISO_MPI_CHECK(MPI_Cart_get(cart, d, process_dims.data(), periods.data(), coords.data()));
  std::vector<int> smallest(interior_);
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, smallest.data(), d, MPI_INT, MPI_MIN, cart));
  const std::vector<bool> periodic(periods.begin(), periods.end());
  const std::vector<long> smallest_long(smallest.begin(), smallest.end());
  const HaloWidths& widths = geometry_.widths;
  const int misfit = halo_misfit_dimension(widths, process_dims, periodic, smallest_long);
  if (misfit >= 0) {
    const auto j = static_cast<std::size_t>(misfit);
    const int width = std::max(widths.lo[j], widths.hi[j]);
    throw Error(std::string(where) + ": dimension " + std::to_string(j) + ": halo width " + std::to_string(width) +
                " reaches " + std::to_string(halo_reach(width, smallest[j])) +
                " processes away over the smallest local extent " + std::to_string(smallest[j]) + " (at most " +
                std::to_string(max_halo_reach) +
                "); use fewer processes in this dimension, a larger grid or a narrower stencil");
  }
  const std::vector<long> exchanged = exchanged_extents(process_dims, periodic, smallest_long);
  agree_on_errors(cart, where, check_reach(geometry_, exchanged));

  // Ghosts from beyond the nearest process: block sizes follow the extents
  // of the processes in between, gathered once.
  const OffsetList& directions = geometry_.directions;
  reach_.assign(d, 0);
  bool wide = false;
  for (int i = 0; i < directions.size(); ++i)
    for (int j = 0; j < d; ++j) reach_[j] = std::max(reach_[j], std::abs(directions[i][j]));
  for (int j = 0; j < d; ++j)
    wide = wide || reach_[j] > 1 || (exchanged[j] > 0 && std::max(widths.lo[j], widths.hi[j]) > smallest[j]);
  LineExtents lines;
  if (wide) agree_on_errors(cart, where, gather_line_extents(cart, process_dims, coords, interior_, lines));

  for (int i = 0; i < directions.size(); ++i) {
    // Received: my ghost slab in direction e. Sent: the process x - e reads
    // my cells as its direction e: my interior slab on the side facing it,
    // as wide as its ghost layer there.
    Block recv, send;
    for (int j = 0; j < d; ++j) {
      const int e = directions[i][j];
      const int n = interior_[j], lo = widths.lo[j], hi = widths.hi[j];
      if (wide && e != 0) {
        const Span in = wide_recv_span(lines, j, coords[j], e, lo, e < 0 ? lo : hi);
        const Span out = wide_send_span(lines, j, coords[j], e, lo, e < 0 ? lo : hi);
        recv.start.push_back(in.start);
        recv.size.push_back(in.size);
        send.start.push_back(out.start);
        send.size.push_back(out.size);
        continue;
      }
      const int size = e < 0 ? lo : e == 0 ? n : hi;
      recv.start.push_back(e < 0 ? 0 : e == 0 ? lo : lo + n);
      send.start.push_back(e < 0 ? n : lo);
      recv.size.push_back(size);
      send.size.push_back(size);
    }
    recv_blocks_.push_back(std::move(recv));
    send_blocks_.push_back(std::move(send));
  }

  // Message combining forwards block i through processes that size it by
  // their own description (docs/design/irregular.md#the-signature-rule): its
  // extent along a dimension it travels must be the same at every coordinate
  // there. Wide blocks over uneven extents break that; linear sends each
  // block straight to its reader instead. Every process decides alike: the
  // extents are gathered.
  const Algorithm asked = options_.algorithm;
  const bool forwards = asked != Algorithm::linear && asked != Algorithm::mpi;
  if (wide && forwards) {
    std::string uneven;
    for (int i = 0; i < directions.size() && uneven.empty(); ++i)
      for (int j = 0; j < d && uneven.empty(); ++j) {
        const int e = directions[i][j];
        if (e == 0) continue;
        const int width = e < 0 ? widths.lo[j] : widths.hi[j];
        const int first = wide_recv_span(lines, j, 0, e, widths.lo[j], width).size;
        for (int c = 1; c < process_dims[j] && uneven.empty(); ++c) {
          const int size = wide_recv_span(lines, j, c, e, widths.lo[j], width).size;
          if (size != first)
            uneven = "direction " + describe(std::vector<int>(directions[i], directions[i] + d)) + " has " +
                     std::to_string(first) + " or " + std::to_string(size) + " cells along dimension " +
                     std::to_string(j);
        }
      }
    if (!uneven.empty()) {
      algorithm_note_ = std::string(to_string(asked)) +
                        " replaced by linear: the halo is wider than a subdomain over an uneven decomposition (" +
                        uneven + "), and combined messages cannot forward blocks whose size changes on the way";
      options_.algorithm = Algorithm::linear;
    }
  }

  // No directions: an empty neighborhood of the array's dimension.
  if (geometry_.directions.size() == 0 && geometry_.neighborhood.dims() != d)
    geometry_.neighborhood = OffsetList(d, {});
  neighborhood_ = std::make_unique<Neighborhood>(cart, geometry_.neighborhood, NeighborhoodOptions{options_.verify});
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

HaloExchange::HaloExchange(std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
                           std::vector<void*> fields, Deferred& deferred)
    : pattern_(std::move(pattern)), fields_(std::move(fields)) {
  if (!pattern_) throw Error("iso::HaloExchange: no pattern");
  layout_ = pattern_->layout(element);
  deferred = Deferred{};
  bind("iso::HaloExchange", &deferred);
}

void HaloExchange::finish() {
  if (!prepared_) throw Error("iso::HaloExchange::finish: no deferred binding to finish");
  operation_ = detail::finish_init(std::move(*prepared_), true);
  prepared_.reset();
}

void HaloExchange::bind(const char* where, Deferred* deferred) {
  const HaloPattern& pattern = *pattern_;
  // The binding's errors are agreed on in the operation's agreement
  // (detail::alltoallw_init): a rank with one makes no types and passes it on.
  // Deferred, it is not ready, and the caller binds again collectively.
  const std::string error = detail::check_binding(layout_.element, fields_);
  if (!error.empty() && deferred) return;
  if (!error.empty()) {
    operation_ = detail::alltoallw_init(where, error, pattern.neighborhood(), MPI_BOTTOM, nullptr, nullptr, nullptr,
                                        MPI_BOTTOM, nullptr, nullptr, nullptr, OperationOptions{});
    throw Error(std::string(where) + ": " + error);  // not reached: the agreement throws
  }
  ISO_MPI_CHECK(MPI_Type_size(layout_.element, &element_size_));

  const int d = layout_.dims();
  const int s = pattern.directions().size();
  const int nfields = static_cast<int>(fields_.size());
  const std::vector<int> extent = layout_.extent();
  std::vector<int> counts(s, 1);
  std::vector<MPI_Datatype> send_types(s), recv_types(s);
  std::vector<MPI_Aint> addresses(nfields);
  for (int f = 0; f < nfields; ++f) ISO_MPI_CHECK(MPI_Get_address(fields_[f], &addresses[f]));
  // Every type is owned by `made` from its creation on, so a failure below
  // frees all of them (a throwing constructor runs no destructor).
  // One field: the block's subarray itself, placed at the field's address
  // by its displacement (a struct around it would cost its creation and a
  // duplicate of the subarray in every look into it). Such types do not
  // depend on the field, so the pattern keeps them for its next exchange of
  // the same predefined element: a warm grid's set-up made 2 s of them (52
  // at 27 points).
  int combiner = MPI_COMBINER_NAMED, ni = 0, na = 0, nt = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(layout_.element, &ni, &na, &nt, &combiner));
  const bool shareable = nfields == 1 && combiner == MPI_COMBINER_NAMED;
  std::shared_ptr<const std::vector<MPI_Datatype>> shared;
  if (shareable && pattern.single_field_element_ == layout_.element) shared = pattern.single_field_types_;
  std::shared_ptr<std::vector<MPI_Datatype>> made;
  if (!shared) {
    made = std::shared_ptr<std::vector<MPI_Datatype>>(new std::vector<MPI_Datatype>, [](std::vector<MPI_Datatype>* owned) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        for (MPI_Datatype& type : *owned) MPI_Type_free(&type);
      delete owned;
    });
    made->reserve(2 * static_cast<std::size_t>(s));
  }
  auto block_type = [&](const HaloPattern::Block& block) {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    if (block_bytes(block) == 0) {
      ISO_MPI_CHECK(MPI_Type_contiguous(0, MPI_BYTE, &type));
    } else if (nfields == 1) {
      ISO_MPI_CHECK(MPI_Type_create_subarray(d, extent.data(), block.size.data(), block.start.data(), MPI_ORDER_C,
                                             layout_.element, &type));
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
    made->push_back(type);
    ISO_MPI_CHECK(MPI_Type_commit(&made->back()));
    return made->back();
  };
  try {
    std::vector<MPI_Aint> send_displacements(s, 0), recv_displacements(s, 0);
    for (int i = 0; i < s; ++i) {
      const std::size_t k = 2 * static_cast<std::size_t>(i);
      send_types[i] = shared ? (*shared)[k] : block_type(pattern.send_block(i));
      recv_types[i] = shared ? (*shared)[k + 1] : block_type(pattern.recv_block(i));
      if (nfields == 1 && block_bytes(pattern.send_block(i)) > 0) send_displacements[i] = addresses[0];
      if (nfields == 1 && block_bytes(pattern.recv_block(i)) > 0) recv_displacements[i] = addresses[0];
    }
    const OperationOptions options{pattern.options().algorithm, false, pattern.options().ports};
    if (deferred) {
      prepared_ = std::make_unique<detail::PreparedInit>(detail::prepare_alltoallw(
          where, {}, pattern.neighborhood(), MPI_BOTTOM, counts.data(), send_displacements.data(), send_types.data(),
          MPI_BOTTOM, counts.data(), recv_displacements.data(), recv_types.data(), options));
      deferred->ready = prepared_->ready();
      deferred->fingerprint = prepared_->ready_fingerprint();
    } else {
      operation_ = detail::alltoallw_init(where, {}, pattern.neighborhood(), MPI_BOTTOM, counts.data(),
                                          send_displacements.data(), send_types.data(), MPI_BOTTOM, counts.data(),
                                          recv_displacements.data(), recv_types.data(), options);
    }
  } catch (...) {
    operation_ = Operation();
    throw;  // `made` frees the types made here
  }
  if (shared) {
    types_ = std::move(shared);
  } else {
    types_ = made;
    if (shareable) pattern.single_field_types_ = made, pattern.single_field_element_ = layout_.element;
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
  std::swap(prepared_, other.prepared_);
  return *this;
}

HaloExchange::~HaloExchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  operation_ = Operation();  // requests before the types they use
  types_.reset();
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
