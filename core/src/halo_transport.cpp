#include "halo_transport.hpp"

#include "iso/collectives.hpp"
#include "iso/error.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace isostencil::core::detail {

namespace {

// The kernels' unit of work: `slabs` slabs of `rows` rows of `run` words of
// one block of one field (the element split into equal words, so one kernel
// serves every element type). Row r of slab q is at field word
// `field_offset + q * slab_stride + r * row_stride` and at buffer word
// `buffer_offset + (q * rows + r) * run`: a block's units follow one another
// in the buffer in row-major order, field after field. A direct unit (a
// block the process sends itself) copies field to field: the ghosts' row r
// of slab q is at field word `buffer_offset + q * slab_stride + r * row_stride`.
struct PackUnit {
  int field = 0;
  int direct = 0;
  long field_offset = 0;
  long buffer_offset = 0;
  long slabs = 1;
  long slab_stride = 0;
  long rows = 0;
  long run = 0;
  long row_stride = 0;
};

// The one kernel of both directions: Pack copies field -> buffer (and, for
// direct units, field -> field), else buffer -> field. On the host a unit is
// a plain loop nest (few, large units: no per-element index arithmetic); on
// a device a team copies it. Direct units only ever read interior cells and
// write ghost cells, which no other unit reads: no order among units.
template <class Space, class Word, bool Pack>
void move_units(const Space& space, const Kokkos::View<PackUnit*, typename Space::memory_space>& units,
                const Kokkos::View<std::uintptr_t*, typename Space::memory_space>& fields, char* buffer_bytes) {
  const long count = static_cast<long>(units.extent(0));
  if (count == 0) return;
  Word* const buffer = reinterpret_cast<Word*>(buffer_bytes);
  // Kept strings: Kokkos takes the label as a std::string, and one made from
  // a literal this long is a heap allocation at every launch.
  static const std::string pack_label = "isostencil::core::HaloExchange::pack";
  static const std::string unpack_label = "isostencil::core::HaloExchange::unpack";
  const std::string& label = Pack ? pack_label : unpack_label;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible) {
    // A host lambda (host spaces only) over raw pointers: copying the views
    // into it costs reference-count updates at every launch. Rows go
    // through memcpy, and the unit is copied first, so the stores cannot
    // alias its bounds (with them read through a reference, the element
    // loop reloaded them at every word and ran at 1.6x the instructions of
    // the datatype path's local copies).
    const PackUnit* const table = units.data();
    const std::uintptr_t* const addresses = fields.data();
    auto copy_unit = [=](const long u) {
      const PackUnit unit = table[u];
      Word* const base = reinterpret_cast<Word*>(addresses[unit.field]);
      Word* const field = base + unit.field_offset;
      Word* const packed = (unit.direct ? base : buffer) + unit.buffer_offset;
      const long packed_row = unit.direct ? unit.row_stride : unit.run;
      const long packed_slab = unit.direct ? unit.slab_stride : unit.rows * unit.run;
      // Pack reads the field, unpack the buffer.
      const long from_row = Pack ? unit.row_stride : packed_row, to_row = Pack ? packed_row : unit.row_stride;
      const long from_slab = Pack ? unit.slab_stride : packed_slab, to_slab = Pack ? packed_slab : unit.slab_stride;
      const Word* const from = Pack ? field : packed;
      Word* const to = Pack ? packed : field;
      const long slabs = unit.slabs, rows = unit.rows;
      const std::size_t bytes = static_cast<std::size_t>(unit.run) * sizeof(Word);
      for (long slab = 0; slab < slabs; ++slab) {
        const Word* const source = from + slab * from_slab;
        Word* const target = to + slab * to_slab;
        if (unit.run == 1)  // a column of single words (normal to the last dimension)
          for (long row = 0; row < rows; ++row) target[row * to_row] = source[row * from_row];
        else
          for (long row = 0; row < rows; ++row) std::memcpy(target + row * to_row, source + row * from_row, bytes);
      }
    };
#ifdef KOKKOS_ENABLE_SERIAL
    // Serial runs a kernel in the calling thread at once: the loop itself,
    // without the launch (0.15-0.3 us of a 0.9 us exchange at 16^3 on one
    // rank). With a Kokkos tool loaded the launch stays, so that the tool
    // sees the kernel.
    if constexpr (std::is_same_v<Space, Kokkos::Serial>) {
      if (!Kokkos::Tools::profileLibraryLoaded()) {
        for (long u = 0; u < count; ++u) copy_unit(u);
        return;
      }
    }
#endif
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Space>(space, 0, count), copy_unit);
  } else {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    Kokkos::parallel_for(label, Policy(space, static_cast<int>(count), Kokkos::AUTO), KOKKOS_LAMBDA(const Member& team) {
      const PackUnit& unit = units(team.league_rank());
      Word* const base = reinterpret_cast<Word*>(fields(unit.field));
      Word* const field = base + unit.field_offset;
      Word* const packed = (unit.direct ? base : buffer) + unit.buffer_offset;
      const long packed_row = unit.direct ? unit.row_stride : unit.run;
      const long packed_slab = unit.direct ? unit.slab_stride : unit.rows * unit.run;
      // Threads over the unit's rows of all its slabs, vector lanes over words.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, unit.slabs * unit.rows), [&](const long line) {
        const long slab = line / unit.rows, row = line % unit.rows;
        Word* const cells = field + slab * unit.slab_stride + row * unit.row_stride;
        Word* const slot = packed + slab * packed_slab + row * packed_row;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, unit.run), [&](const long k) {
          if constexpr (Pack) slot[k] = cells[k];
          else cells[k] = slot[k];
        });
      });
    });
  }
}

// Seconds between successive calls of next(), from construction on; reads
// the clock only when on (phase timing asked for).
class Lap {
public:
  explicit Lap(bool on) : on_(on) {
    if (on_) last_ = std::chrono::steady_clock::now();
  }
  double next() {
    if (!on_) return 0;
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

private:
  bool on_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

struct PackedTransport::Impl {
  virtual ~Impl() = default;
  virtual void pack(const execution_space& space) = 0;
  virtual void unpack(const execution_space& space) = 0;
  iso::Operation operation;
  bool stage = false;
  bool done = true;        // no unpack pending
  bool collective = true;  // some block travels to another process: the operation runs
  int direct_blocks = 0;   // blocks sent to itself, copied by the pack kernel
  HaloPhaseTimes* phases = nullptr;  // phase timing on: fences between phases
};

namespace {

template <class Space>
struct SpaceImpl final : PackedTransport::Impl {
  using execution_space = PackedTransport::execution_space;
  using memory_space = typename Space::memory_space;
  Kokkos::View<char*, memory_space> send, recv;
  Kokkos::View<char*, Kokkos::HostSpace> host_send, host_recv;  // staging (empty when not staged)
  Kokkos::View<PackUnit*, memory_space> pack_units, unpack_units;
  Kokkos::View<std::uintptr_t*, memory_space> field_addresses;
  int word = 1;

  // The operation refers to the buffers: it goes first (completing, if active).
  ~SpaceImpl() override { operation = iso::Operation(); }

  // The instance the kernels run on: the exchange's, or the default host
  // space's for fields the exchange's space cannot access.
  static Space on(const PackedTransport::execution_space& space) {
    if constexpr (std::is_same_v<Space, PackedTransport::execution_space>) {
      return space;
    } else {
      space.fence();  // the fields' writers may be queued there
      return Space();
    }
  }

  template <bool Pack>
  void run(const Space& space, const Kokkos::View<PackUnit*, memory_space>& units, char* buffer) {
    switch (word) {
      case 8: return move_units<Space, std::uint64_t, Pack>(space, units, field_addresses, buffer);
      case 4: return move_units<Space, std::uint32_t, Pack>(space, units, field_addresses, buffer);
      case 2: return move_units<Space, std::uint16_t, Pack>(space, units, field_addresses, buffer);
      default: return move_units<Space, std::uint8_t, Pack>(space, units, field_addresses, buffer);
    }
  }

  void pack(const execution_space& exchange_space) override {
    // Timed: the work queued before the exchange is the caller's, not the pack's.
    if (phases) exchange_space.fence();
    const Space space = on(exchange_space);
    Lap lap(phases != nullptr);
    run<true>(space, pack_units, send.data());
    if (phases) {
      space.fence();
      phases->pack += lap.next();
    }
    if (stage && send.extent(0) > 0) {
      Kokkos::deep_copy(space, host_send, send);
      if (phases) {
        space.fence();
        phases->to_host += lap.next();
      }
    }
    // MPI reads the buffer next, and the direct copies' ghosts are the
    // caller's once wait() returns: only this instance's work must be done.
    space.fence();
  }

  void unpack(const execution_space& exchange_space) override {
    // Every block sent to itself or without a partner: nothing to unpack.
    if (unpack_units.extent(0) == 0) return;
    const Space space = on(exchange_space);
    Lap lap(phases != nullptr);
    if (stage) {
      Kokkos::deep_copy(space, recv, host_recv);
      if (phases) {
        space.fence();
        phases->to_device += lap.next();
      }
    }
    run<false>(space, unpack_units, recv.data());
    space.fence();
    if (phases) phases->unpack += lap.next();
  }
};

// A field in words, as the kernels see it: a 1-D field gets a leading
// dimension of extent 1 (every block has two), and the last dimension counts
// words (`scale` per element).
struct WordLayout {
  int lead = 0;
  long scale = 1;
  std::vector<long> stride, extent;

  WordLayout(const std::vector<int>& cells, long words_per_element) : scale(words_per_element) {
    const int d = static_cast<int>(cells.size());
    const int normalized = std::max(d, 2);
    lead = normalized - d;
    stride.assign(normalized, 1);
    extent.assign(normalized, 1);
    for (int j = 0; j < d; ++j) extent[lead + j] = cells[j];
    extent[normalized - 1] *= scale;
    for (int j = normalized - 2; j >= 0; --j) stride[j] = stride[j + 1] * extent[j + 1];
  }

  long words() const { return stride[0] * extent[0]; }

  // A block as units of one shape (`shape`: slabs, rows, run and strides),
  // in row-major order: their first field words. Device kernels (`merge`
  // false) take one slab of the last two dimensions a unit, for teams
  // enough. Host loops (`merge` true) take as few units as the layout
  // allows: dimensions of extent 1 dropped, dimensions that continue one
  // another joined, rows that follow one another one run, the inner two of
  // what is left a unit, split into units of at most
  // `detail::packed_host_unit_words` words where it has several slabs or
  // rows (threads enough). At 16^3 a 27-point halo was 146 units of 1-256
  // words, now 26.
  struct Piece {
    long first = 0;  // field word of its first row
    long slabs = 1;
  };
  std::vector<Piece> pieces(const iso::HaloPattern::Block& block, bool merge, PackUnit& shape) const {
    const int normalized = static_cast<int>(stride.size());
    std::vector<long> start(normalized, 0), size(normalized, 1);
    for (std::size_t j = 0; j < block.size.size(); ++j) {
      start[lead + j] = block.start[j];
      size[lead + j] = block.size[j];
    }
    start[normalized - 1] *= scale;
    size[normalized - 1] *= scale;
    long first_word = 0;
    for (int j = 0; j < normalized; ++j) first_word += start[j] * stride[j];
    long run = size[normalized - 1];
    std::vector<std::pair<long, long>> dims;  // (extent, stride) of the dimensions before the last, outer first
    for (int j = 0; j + 1 < normalized; ++j) {
      if (!merge) {
        dims.emplace_back(size[j], stride[j]);
        continue;
      }
      if (size[j] == 1) continue;
      if (!dims.empty() && dims.back().second == size[j] * stride[j])
        dims.back() = {dims.back().first * size[j], stride[j]};
      else
        dims.emplace_back(size[j], stride[j]);
    }
    while (merge && !dims.empty() && dims.back().second == run) {
      run *= dims.back().first;
      dims.pop_back();
    }
    const std::size_t inner = std::min<std::size_t>(dims.size(), merge ? 2 : 1);
    const std::size_t outer = dims.size() - inner;
    shape.run = run;
    shape.rows = inner >= 1 ? dims.back().first : 1;
    shape.row_stride = inner >= 1 ? dims.back().second : run;
    shape.slabs = inner == 2 ? dims[outer].first : 1;
    shape.slab_stride = inner == 2 ? dims[outer].second : shape.rows * shape.row_stride;
    // A unit of one slab larger than that is its rows taken as slabs of one
    // row, so that it splits as well (a face of 128 x 128 words, 16384).
    if (merge && shape.slabs == 1 && shape.rows > 1 && shape.rows * run > detail::packed_host_unit_words) {
      shape.slabs = shape.rows, shape.slab_stride = shape.row_stride;
      shape.rows = 1, shape.row_stride = run;
    }
    // Slabs split into groups (the last one may be shorter).
    long group = shape.slabs;
    if (merge && shape.slabs > 1)
      group = std::clamp(detail::packed_host_unit_words / std::max(1L, shape.rows * run), 1L, shape.slabs);
    long count = 1;
    for (std::size_t j = 0; j < outer; ++j) count *= dims[j].first;
    std::vector<Piece> units;
    units.reserve(static_cast<std::size_t>(count * ((shape.slabs + group - 1) / group)));
    for (long index = 0; index < count; ++index) {
      long rest = index, offset = first_word;
      for (std::size_t j = outer; j-- > 0;) {
        offset += (rest % dims[j].first) * dims[j].second;
        rest /= dims[j].first;
      }
      for (long slab = 0; slab < shape.slabs; slab += group)
        units.push_back({offset + slab * shape.slab_stride, std::min(group, shape.slabs - slab)});
    }
    return units;
  }
};

// The units of every block of every field; `skip(i)` leaves block i out (no
// partner, or sent to itself). Offsets in words; buffer block i starts at
// element `displacement[i]`, its fields one after another.
template <class Skip>
std::vector<PackUnit> make_units(const iso::HaloPattern& pattern, bool send, int nfields, const WordLayout& layout,
                                 bool merge, const std::vector<long>& displacement, Skip skip) {
  std::vector<PackUnit> units;
  for (int i = 0; i < pattern.directions().size(); ++i) {
    const iso::HaloPattern::Block& block = send ? pattern.send_block(i) : pattern.recv_block(i);
    const long cells = block.cells();
    if (cells == 0 || skip(i)) continue;
    PackUnit shape;
    const std::vector<WordLayout::Piece> pieces = layout.pieces(block, merge, shape);
    const long slab_words = shape.rows * shape.run;
    for (int f = 0; f < nfields; ++f) {
      long at = (displacement[i] + f * cells) * layout.scale;
      for (const WordLayout::Piece& piece : pieces) {
        PackUnit unit = shape;
        unit.field = f;
        unit.field_offset = piece.first;
        unit.slabs = piece.slabs;
        unit.buffer_offset = at;
        at += piece.slabs * slab_words;
        units.push_back(unit);
      }
    }
  }
  return units;
}

// Whether block i goes from every process to itself: its offset wraps to
// zero in every dimension (zero, or a multiple of the process count of a
// periodic dimension). A property of the offset and the process grid alone,
// so every process agrees, which the collective's block sizes need: these
// blocks travel with size zero everywhere.
bool to_itself(const iso::Neighborhood& neighborhood, int i) {
  const iso::CartGeometry& geometry = neighborhood.geometry();
  const int* v = neighborhood.offsets()[i];
  for (int j = 0; j < geometry.dims(); ++j)
    if (v[j] != 0 && !(geometry.periodic[j] && v[j] % geometry.sizes[j] == 0)) return false;
  return true;
}

// The direct units of the blocks sent to itself: send block i's slabs
// straight onto receive block i's, field by field. Both blocks describe the
// same cells of the same process, so their shapes agree.
std::vector<PackUnit> make_direct_units(const iso::HaloPattern& pattern, int nfields, const WordLayout& layout,
                                        bool merge, const std::vector<char>& direct) {
  std::vector<PackUnit> units;
  const long words = layout.words();
  for (int i = 0; i < pattern.directions().size(); ++i) {
    if (!direct[static_cast<std::size_t>(i)]) continue;
    const iso::HaloPattern::Block& from = pattern.send_block(i);
    const iso::HaloPattern::Block& to = pattern.recv_block(i);
    if (from.size != to.size)
      throw iso::Error("isostencil::core::HaloExchange: block " + std::to_string(i) +
                       " goes to this process itself, but its send and receive blocks differ in shape");
    if (from.cells() == 0) continue;
    // The shapes depend on the sizes alone, not on where a block starts.
    PackUnit shape, to_shape;
    const std::vector<WordLayout::Piece> sources = layout.pieces(from, merge, shape);
    const std::vector<WordLayout::Piece> targets = layout.pieces(to, merge, to_shape);
    for (int f = 0; f < nfields; ++f)
      for (std::size_t k = 0; k < sources.size(); ++k) {
        PackUnit unit = shape;
        unit.field = f;
        unit.direct = 1;
        unit.field_offset = sources[k].first;
        unit.slabs = sources[k].slabs;
        unit.buffer_offset = targets[k].first;
        if (detail::direct_copy_error != 0) {
          // One element further, or back where that would leave the field.
          const long last = unit.buffer_offset + (unit.slabs - 1) * unit.slab_stride +
                            (unit.rows - 1) * unit.row_stride + unit.run - 1;
          unit.buffer_offset += last + layout.scale < words ? layout.scale : -layout.scale;
        }
        units.push_back(unit);
      }
  }
  return units;
}

template <class Space>
std::unique_ptr<PackedTransport::Impl> make_impl(const iso::HaloPattern& pattern, MPI_Datatype element,
                                                 const std::vector<void*>& fields, bool stage) {
  using memory_space = typename Space::memory_space;
  auto impl = std::make_unique<SpaceImpl<Space>>();
  impl->stage = stage;
  int element_size = 0;
  ISO_MPI_CHECK(MPI_Type_size(element, &element_size));
  if (element_size <= 0) throw iso::Error("isostencil::core::HaloExchange: the element type has no bytes");
  // The widest word that divides the element and every field's alignment
  // (buffers are Kokkos allocations, aligned for any of them).
  int word = 8;
  while (word > 1 && element_size % word != 0) word /= 2;
  for (void* field : fields)
    while (word > 1 && reinterpret_cast<std::uintptr_t>(field) % static_cast<std::uintptr_t>(word) != 0) word /= 2;
  impl->word = word;
  const long scale = element_size / word;

  const int s = pattern.directions().size();
  const int nfields = static_cast<int>(fields.size());
  const iso::Neighborhood& neighborhood = pattern.neighborhood();
  std::vector<char> direct(static_cast<std::size_t>(s), 0);
  for (int i = 0; i < s; ++i) {
    direct[static_cast<std::size_t>(i)] = to_itself(neighborhood, i) ? 1 : 0;
    impl->direct_blocks += direct[static_cast<std::size_t>(i)];
  }
  impl->collective = impl->direct_blocks < s;
  // Block i of either buffer: every field's cells of block i, contiguous,
  // so the collective may combine blocks as it would any alltoallv blocks.
  // Blocks without a partner keep their size: the signature rule sizes
  // forwarding slots by them (iso/collectives.hpp). Blocks to itself take
  // no room and travel with size zero (on every process alike: to_itself).
  std::vector<int> send_counts(s), send_displs(s), recv_counts(s), recv_displs(s);
  std::vector<int> full_send_counts(s), full_recv_counts(s);
  std::vector<long> send_at(s), recv_at(s);
  long send_total = 0, recv_total = 0, full_send_total = 0, full_recv_total = 0;
  for (int i = 0; i < s; ++i) {
    const long send_cells = pattern.send_block(i).cells() * nfields;
    const long recv_cells = pattern.recv_block(i).cells() * nfields;
    full_send_total += send_cells;
    full_recv_total += recv_cells;
    if (full_send_total > INT_MAX || full_recv_total > INT_MAX)
      throw iso::Error("isostencil::core::HaloExchange: the packed halo buffer holds more than INT_MAX elements");
    full_send_counts[i] = static_cast<int>(send_cells);
    full_recv_counts[i] = static_cast<int>(recv_cells);
    const bool moved = !direct[static_cast<std::size_t>(i)];
    send_at[i] = send_total;
    recv_at[i] = recv_total;
    send_counts[i] = moved ? static_cast<int>(send_cells) : 0;
    recv_counts[i] = moved ? static_cast<int>(recv_cells) : 0;
    send_displs[i] = static_cast<int>(send_total);
    recv_displs[i] = static_cast<int>(recv_total);
    send_total += send_counts[i];
    recv_total += recv_counts[i];
  }
  const WordLayout layout(pattern.layout(element).extent(), scale);
  // Host loops take merged units, device teams one slab each (WordLayout::pieces).
  constexpr bool merge = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
  auto pack = make_units(pattern, true, nfields, layout, merge, send_at, [&](int i) {
    return direct[static_cast<std::size_t>(i)] || neighborhood.target_rank(i) < 0;
  });
  const auto unpack = make_units(pattern, false, nfields, layout, merge, recv_at, [&](int i) {
    return direct[static_cast<std::size_t>(i)] || neighborhood.source_rank(i) < 0;
  });
  // The direct copies ride in the pack kernel: one launch for both.
  const auto direct_units = make_direct_units(pattern, nfields, layout, merge, direct);
  pack.insert(pack.end(), direct_units.begin(), direct_units.end());

  auto upload = [](const std::vector<PackUnit>& table, const char* label) {
    Kokkos::View<PackUnit*, memory_space> view(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing),
                                                  table.size());
    auto host = Kokkos::create_mirror_view(view);
    for (std::size_t k = 0; k < table.size(); ++k) host(k) = table[k];
    Kokkos::deep_copy(view, host);
    return view;
  };
  impl->pack_units = upload(pack, "isostencil::core::HaloExchange::pack_units");
  impl->unpack_units = upload(unpack, "isostencil::core::HaloExchange::unpack_units");
  impl->field_addresses = Kokkos::View<std::uintptr_t*, memory_space>("isostencil::core::HaloExchange::fields",
                                                                       fields.size());
  auto addresses = Kokkos::create_mirror_view(impl->field_addresses);
  for (std::size_t f = 0; f < fields.size(); ++f) addresses(f) = reinterpret_cast<std::uintptr_t>(fields[f]);
  Kokkos::deep_copy(impl->field_addresses, addresses);

  const auto bytes = [&](long elements) { return static_cast<std::size_t>(elements) * element_size; };
  impl->send = Kokkos::View<char*, memory_space>("isostencil::core::HaloExchange::send", bytes(send_total));
  impl->recv = Kokkos::View<char*, memory_space>("isostencil::core::HaloExchange::recv", bytes(recv_total));
  void* send_buffer = impl->send.data();
  void* recv_buffer = impl->recv.data();
  if (stage) {
    // Separate host allocations even where the space's memory is the host's
    // (the simulation of device memory, host_mirror.hpp).
    impl->host_send = Kokkos::View<char*, Kokkos::HostSpace>("isostencil::core::HaloExchange::host_send",
                                                             bytes(send_total));
    impl->host_recv = Kokkos::View<char*, Kokkos::HostSpace>("isostencil::core::HaloExchange::host_recv",
                                                             bytes(recv_total));
    send_buffer = impl->host_send.data();
    recv_buffer = impl->host_recv.data();
  }
  iso::OperationOptions options{pattern.options().algorithm, false, pattern.options().ports};
  if (options.algorithm == iso::Algorithm::automatic && impl->direct_blocks > 0) {
    // Automatic is resolved from the blocks' full sizes, as for the datatype
    // transport (the same algorithm either way): one operation over the
    // undivided layout, made only to ask it, on scratch host buffers.
    std::vector<int> full_send_displs(s), full_recv_displs(s);
    for (int i = 1; i < s; ++i) {
      full_send_displs[i] = full_send_displs[i - 1] + full_send_counts[i - 1];
      full_recv_displs[i] = full_recv_displs[i - 1] + full_recv_counts[i - 1];
    }
    std::vector<char> scratch_send(bytes(full_send_total) + 1), scratch_recv(bytes(full_recv_total) + 1);
    const iso::Operation probe = iso::alltoallv_init(
        neighborhood, scratch_send.data(), full_send_counts.data(), full_send_displs.data(), element,
        scratch_recv.data(), full_recv_counts.data(), full_recv_displs.data(), element, options);
    options.algorithm = probe.algorithm();
    options.ports = probe.ports();
  }
  impl->operation = iso::alltoallv_init(neighborhood, send_buffer, send_counts.data(), send_displs.data(), element,
                                        recv_buffer, recv_counts.data(), recv_displs.data(), element, options);
  return impl;
}

}  // namespace

PackedTransport::PackedTransport(const HaloPattern& pattern, MPI_Datatype element, const std::vector<void*>& fields,
                                 bool stage, bool pack_on_host) {
  if constexpr (std::is_same_v<execution_space, Kokkos::DefaultHostExecutionSpace>) {
    (void)pack_on_host;
    impl_ = make_impl<execution_space>(pattern, element, fields, stage);
  } else {
    impl_ = pack_on_host ? make_impl<Kokkos::DefaultHostExecutionSpace>(pattern, element, fields, stage)
                         : make_impl<execution_space>(pattern, element, fields, stage);
  }
}

PackedTransport::~PackedTransport() = default;

// Where every block goes to the process itself (on every process alike),
// the pack kernel has done the whole exchange: the operation never runs.
void PackedTransport::start(const execution_space& space) {
  impl_->pack(space);
  if (impl_->collective) {
    Lap lap(impl_->phases != nullptr);
    impl_->operation.start();
    if (impl_->phases) impl_->phases->mpi += lap.next();
  }
  impl_->done = false;
}

bool PackedTransport::test(const execution_space& space) {
  if (impl_->done) return true;
  if (impl_->collective) {
    Lap lap(impl_->phases != nullptr);
    const bool complete = impl_->operation.test();
    if (impl_->phases) impl_->phases->mpi += lap.next();
    if (!complete) return false;
  }
  impl_->unpack(space);
  impl_->done = true;
  if (impl_->phases) ++impl_->phases->exchanges;
  return true;
}

void PackedTransport::wait(const execution_space& space) {
  if (impl_->done) return;
  if (impl_->collective) {
    Lap lap(impl_->phases != nullptr);
    impl_->operation.wait();
    if (impl_->phases) impl_->phases->mpi += lap.next();
  }
  impl_->unpack(space);
  impl_->done = true;
  if (impl_->phases) ++impl_->phases->exchanges;
}

void PackedTransport::time_phases(HaloPhaseTimes* sink) { impl_->phases = sink; }

bool PackedTransport::staged() const { return impl_->stage; }

int PackedTransport::direct_blocks() const { return impl_->direct_blocks; }

const iso::Operation& PackedTransport::operation() const { return impl_->operation; }

}  // namespace isostencil::core::detail
