#include "halo_transport.hpp"

#include "iso/collectives.hpp"
#include "iso/error.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace isostencil::core::detail {

namespace {

// Grid<D> has at most 6 dimensions; one more for the leading dimension a
// 1-D block gets, so every segment has at least two.
constexpr int max_segment_dims = 7;

// One block of one field, in words (the element split into equal words, so
// one kernel serves every element type): the cells [start, start + size) of
// the field, row-major with `stride`, travel to or from the buffer at
// `buffer` in the same row-major order. The kernel's unit of work is one
// slab over the last two dimensions; the segment's units are numbered from
// `first_unit`.
struct PackSegment {
  int field = 0;
  int dims = 0;
  long buffer = 0;
  long first_unit = 0;
  long start[max_segment_dims] = {};
  long size[max_segment_dims] = {};
  long stride[max_segment_dims] = {};
};

// The one kernel of both directions: Pack copies field -> buffer, else buffer -> field.
template <class Space, class Word, bool Pack>
void move_segments(const Space& space, const Kokkos::View<const PackSegment*, typename Space::memory_space>& segments,
                   long units, const Kokkos::View<const std::uintptr_t*, typename Space::memory_space>& fields,
                   char* buffer_bytes) {
  if (units == 0) return;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  Word* const buffer = reinterpret_cast<Word*>(buffer_bytes);
  const int count = static_cast<int>(segments.extent(0));
  Kokkos::parallel_for(
      Pack ? "isostencil::core::HaloExchange::pack" : "isostencil::core::HaloExchange::unpack",
      Policy(space, static_cast<int>(units), Kokkos::AUTO), KOKKOS_LAMBDA(const Member& team) {
        const long unit = team.league_rank();
        int lo = 0, hi = count - 1;
        while (lo < hi) {
          const int mid = (lo + hi + 1) / 2;
          if (segments(mid).first_unit <= unit) lo = mid;
          else hi = mid - 1;
        }
        const PackSegment& s = segments(lo);
        const int d = s.dims;
        const long local = unit - s.first_unit;
        long rest = local, origin = 0;
        for (int j = d - 3; j >= 0; --j) {
          origin += (s.start[j] + rest % s.size[j]) * s.stride[j];
          rest /= s.size[j];
        }
        origin += s.start[d - 2] * s.stride[d - 2] + s.start[d - 1];
        const long rows = s.size[d - 2], run = s.size[d - 1], row_stride = s.stride[d - 2];
        Word* const field = reinterpret_cast<Word*>(fields(s.field)) + origin;
        Word* const slab = buffer + s.buffer + local * rows * run;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const long row) {
          Word* const cells = field + row * row_stride;
          Word* const packed = slab + row * run;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, run), [&](const long k) {
            if constexpr (Pack) packed[k] = cells[k];
            else cells[k] = packed[k];
          });
        });
      });
}

}  // namespace

struct PackedTransport::Impl {
  virtual ~Impl() = default;
  virtual void pack(const execution_space& space) = 0;
  virtual void unpack(const execution_space& space) = 0;
  iso::Operation operation;
  bool stage = false;
  bool done = true;  // no unpack pending
};

namespace {

template <class Space>
struct SpaceImpl final : PackedTransport::Impl {
  using execution_space = PackedTransport::execution_space;
  using memory_space = typename Space::memory_space;
  Kokkos::View<char*, memory_space> send, recv;
  Kokkos::View<char*, Kokkos::HostSpace> host_send, host_recv;  // staging (empty when not staged)
  Kokkos::View<PackSegment*, memory_space> pack_segments, unpack_segments;
  long pack_units = 0, unpack_units = 0;
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
  void run(const Space& space, const Kokkos::View<PackSegment*, memory_space>& segments, long units, char* buffer) {
    const Kokkos::View<const PackSegment*, memory_space> table = segments;
    const Kokkos::View<const std::uintptr_t*, memory_space> fields = field_addresses;
    switch (word) {
      case 8: return move_segments<Space, std::uint64_t, Pack>(space, table, units, fields, buffer);
      case 4: return move_segments<Space, std::uint32_t, Pack>(space, table, units, fields, buffer);
      case 2: return move_segments<Space, std::uint16_t, Pack>(space, table, units, fields, buffer);
      default: return move_segments<Space, std::uint8_t, Pack>(space, table, units, fields, buffer);
    }
  }

  void pack(const execution_space& exchange_space) override {
    const Space space = on(exchange_space);
    run<true>(space, pack_segments, pack_units, send.data());
    if (stage) Kokkos::deep_copy(space, host_send, send);
    // MPI reads the buffer next: only this instance's work must be done.
    space.fence();
  }

  void unpack(const execution_space& exchange_space) override {
    const Space space = on(exchange_space);
    if (stage) Kokkos::deep_copy(space, recv, host_recv);
    run<false>(space, unpack_segments, unpack_units, recv.data());
    space.fence();
  }
};

// The segments of every block of every field; `skip(i)` leaves block i out
// (no partner). Offsets in words; buffer block i starts at element
// `displacement[i]`, its fields one after another.
template <class Skip>
std::vector<PackSegment> make_segments(const iso::HaloPattern& pattern, bool send, int nfields,
                                       const std::vector<int>& extent, const std::vector<long>& displacement,
                                       long scale, Skip skip, long& units) {
  const int d = static_cast<int>(extent.size());
  const int normalized = std::max(d, 2);
  const int lead = normalized - d;  // 1 for a 1-D field
  std::vector<long> extent_words(normalized, 1), stride(normalized, 1);
  for (int j = 0; j < d; ++j) extent_words[lead + j] = extent[j];
  extent_words[normalized - 1] *= scale;
  for (int j = normalized - 2; j >= 0; --j) stride[j] = stride[j + 1] * extent_words[j + 1];
  std::vector<PackSegment> segments;
  units = 0;
  for (int i = 0; i < pattern.directions().size(); ++i) {
    const iso::HaloPattern::Block& block = send ? pattern.send_block(i) : pattern.recv_block(i);
    const long cells = block.cells();
    if (cells == 0 || skip(i)) continue;
    for (int f = 0; f < nfields; ++f) {
      PackSegment s;
      s.field = f;
      s.dims = normalized;
      s.buffer = (displacement[i] + f * cells) * scale;
      s.first_unit = units;
      for (int j = 0; j < normalized; ++j) {
        s.start[j] = j < lead ? 0 : block.start[j - lead];
        s.size[j] = j < lead ? 1 : block.size[j - lead];
        s.stride[j] = stride[j];
      }
      s.start[normalized - 1] *= scale;
      s.size[normalized - 1] *= scale;
      long slabs = 1;
      for (int j = 0; j + 2 < normalized; ++j) slabs *= s.size[j];
      units += slabs;
      segments.push_back(s);
    }
  }
  return segments;
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
  // Block i of either buffer: every field's cells of block i, contiguous,
  // so the collective may combine blocks as it would any alltoallv blocks.
  // Blocks without a partner keep their size: the signature rule sizes
  // forwarding slots by them (iso/collectives.hpp).
  std::vector<int> send_counts(s), send_displs(s), recv_counts(s), recv_displs(s);
  std::vector<long> send_at(s), recv_at(s);
  long send_total = 0, recv_total = 0;
  for (int i = 0; i < s; ++i) {
    const long send_cells = pattern.send_block(i).cells() * nfields;
    const long recv_cells = pattern.recv_block(i).cells() * nfields;
    send_at[i] = send_total;
    recv_at[i] = recv_total;
    send_total += send_cells;
    recv_total += recv_cells;
    if (send_total > INT_MAX || recv_total > INT_MAX)
      throw iso::Error("isostencil::core::HaloExchange: the packed halo buffer holds more than INT_MAX elements");
    send_counts[i] = static_cast<int>(send_cells);
    recv_counts[i] = static_cast<int>(recv_cells);
    send_displs[i] = static_cast<int>(send_at[i]);
    recv_displs[i] = static_cast<int>(recv_at[i]);
  }
  const std::vector<int> extent = pattern.layout(element).extent();
  std::vector<long> send_displacement(send_at), recv_displacement(recv_at);
  const auto pack = make_segments(
      pattern, true, nfields, extent, send_displacement, scale,
      [&](int i) { return neighborhood.target_rank(i) < 0; }, impl->pack_units);
  const auto unpack = make_segments(
      pattern, false, nfields, extent, recv_displacement, scale,
      [&](int i) { return neighborhood.source_rank(i) < 0; }, impl->unpack_units);

  auto upload = [](const std::vector<PackSegment>& table, const char* label) {
    Kokkos::View<PackSegment*, memory_space> view(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing),
                                                  table.size());
    auto host = Kokkos::create_mirror_view(view);
    for (std::size_t k = 0; k < table.size(); ++k) host(k) = table[k];
    Kokkos::deep_copy(view, host);
    return view;
  };
  impl->pack_segments = upload(pack, "isostencil::core::HaloExchange::pack_segments");
  impl->unpack_segments = upload(unpack, "isostencil::core::HaloExchange::unpack_segments");
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
  impl->operation = iso::alltoallv_init(neighborhood, send_buffer, send_counts.data(), send_displs.data(), element,
                                        recv_buffer, recv_counts.data(), recv_displs.data(), element,
                                        iso::OperationOptions{pattern.options().algorithm, false});
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

void PackedTransport::start(const execution_space& space) {
  impl_->pack(space);
  impl_->operation.start();
  impl_->done = false;
}

bool PackedTransport::test(const execution_space& space) {
  if (impl_->done) return true;
  if (!impl_->operation.test()) return false;
  impl_->unpack(space);
  impl_->done = true;
  return true;
}

void PackedTransport::wait(const execution_space& space) {
  if (impl_->done) return;
  impl_->operation.wait();
  impl_->unpack(space);
  impl_->done = true;
}

bool PackedTransport::staged() const { return impl_->stage; }

const iso::Operation& PackedTransport::operation() const { return impl_->operation; }

}  // namespace isostencil::core::detail
