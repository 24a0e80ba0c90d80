// `iso-bench collectives`, the checks: buffer layouts, test data that names
// each block's origin, and each contender's result against the
// straightforward algorithm's (linear).
#include "collectives.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace isobench::collectives {

namespace {

// Test data: block `block` as sent by `origin`, 8 bytes at a time.

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t block_key(std::uint32_t seed, int origin, int block) {
  return splitmix((static_cast<std::uint64_t>(seed) << 48) ^ (static_cast<std::uint64_t>(origin) << 24) ^
                  static_cast<std::uint64_t>(block) * 0x9E3779B1ull);
}

void fill_block(unsigned char* out, std::size_t bytes, std::uint64_t key) {
  for (std::size_t at = 0; at < bytes; at += 8) {
    const std::uint64_t word = splitmix(key + at);
    std::memcpy(out + at, &word, std::min<std::size_t>(8, bytes - at));
  }
}

std::uint64_t hash_bytes(const unsigned char* data, std::size_t bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull ^ bytes;
  std::size_t at = 0;
  for (; at + 8 <= bytes; at += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + at, 8);
    h = (h ^ word) * 0x100000001B3ull;
    h ^= h >> 29;
  }
  for (; at < bytes; ++at) h = (h ^ data[at]) * 0x100000001B3ull;
  return h;
}

constexpr unsigned char sentinel = 0xA5;

}  // namespace

Layout make_layout(Op op, const iso::OffsetList& offsets, long long m) {
  Layout layout;
  const int s = offsets.size();
  auto add = [&](std::vector<int>& counts, std::vector<MPI_Aint>& displs, long long& total, long double bytes) {
    if (bytes >= static_cast<long double>(INT_MAX)) {
      layout.fits_int = false;
      bytes = 0;
    }
    counts.push_back(static_cast<int>(bytes));
    displs.push_back(static_cast<MPI_Aint>(total));
    total += static_cast<long long>(bytes);
  };
  for (int i = 0; i < s; ++i) {
    long double bytes = static_cast<long double>(m);
    if (op == Op::alltoallw)
      bytes = std::pow(static_cast<long double>(m), offsets.dims() - nonzero_coordinates(offsets, i));
    add(layout.recv_counts, layout.recv_displs, layout.recv_total, bytes);
    if (op != Op::allgather) add(layout.send_counts, layout.send_displs, layout.send_total, bytes);
  }
  if (op == Op::allgather) add(layout.send_counts, layout.send_displs, layout.send_total, static_cast<long double>(m));
  return layout;
}

long double layout_bytes_estimate(Op op, const iso::OffsetList& offsets, long long m) {
  long double total = 0;
  for (int i = 0; i < offsets.size(); ++i)
    total += op == Op::alltoallw
                 ? std::pow(static_cast<long double>(m), offsets.dims() - nonzero_coordinates(offsets, i))
                 : static_cast<long double>(m);
  return total;
}

PointData::PointData(Op op, const iso::Neighborhood& nbh, const Layout& layout, long long m)
    : op_(op),
      nbh_(nbh),
      layout_(layout),
      m_(m),
      seed_(static_cast<std::uint32_t>(m * 7 + static_cast<long long>(op) + 1)),
      send_(static_cast<std::size_t>(std::max(layout.send_total, 1LL))),
      recv_(static_cast<std::size_t>(std::max(layout.recv_total, 1LL))) {}

Point PointData::point() { return Point{op_, &nbh_, &layout_, send_.data(), recv_.data(), m_}; }

void PointData::fill_send() {
  const int rank = nbh_.rank();
  for (std::size_t i = 0; i < layout_.send_counts.size(); ++i)
    fill_block(send_.data() + layout_.send_displs[i], static_cast<std::size_t>(layout_.send_counts[i]),
               block_key(seed_, rank, static_cast<int>(i)));
}

void PointData::clear_recv() { std::fill(recv_.begin(), recv_.end(), sentinel); }

std::vector<std::uint64_t> PointData::block_hashes() const {
  const int s = nbh_.size();
  std::vector<std::uint64_t> h(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i)
    h[static_cast<std::size_t>(i)] =
        hash_bytes(recv_.data() + layout_.recv_displs[static_cast<std::size_t>(i)],
                   static_cast<std::size_t>(layout_.recv_counts[static_cast<std::size_t>(i)]));
  return h;
}

long PointData::count_wrong_blocks() const {
  std::vector<unsigned char> want;
  long bad = 0;
  for (int i = 0; i < nbh_.size(); ++i) {
    const std::size_t bytes = static_cast<std::size_t>(layout_.recv_counts[static_cast<std::size_t>(i)]);
    want.assign(bytes, sentinel);
    const int source = nbh_.source_rank(i);
    if (source >= 0) fill_block(want.data(), bytes, block_key(seed_, source, op_ == Op::allgather ? 0 : i));
    bad += std::memcmp(want.data(), recv_.data() + layout_.recv_displs[static_cast<std::size_t>(i)], bytes) != 0;
  }
  return bad;
}

namespace {

long sum_over_ranks(long value, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG, MPI_SUM, comm);
  return value;
}

}  // namespace

Reference run_reference(PointData& data, MPI_Comm comm) {
  std::unique_ptr<Prepared> reference = prepare_iso(data.point(), iso::Algorithm::linear);
  data.fill_send();
  data.clear_recv();
  reference->check_run();
  Reference out;
  out.bad = sum_over_ranks(data.count_wrong_blocks(), comm);
  out.hashes = data.block_hashes();
  return out;
}

std::string check_contender(Prepared& prepared, PointData& data, const Reference& reference, MPI_Comm comm) {
  data.fill_send();
  data.clear_recv();
  prepared.check_run();
  long bad = 0;
  if (reference.bad == 0) {
    const std::vector<std::uint64_t> hashes = data.block_hashes();
    for (std::size_t i = 0; i < hashes.size(); ++i) bad += hashes[i] != reference.hashes[i];
  } else {
    bad = data.count_wrong_blocks();
  }
  bad = sum_over_ranks(bad, comm);
  if (!bad) return {};
  return reference.bad == 0 ? fmt::format("wrong result: {} blocks (over all ranks) differ from linear's", bad)
                            : fmt::format("wrong result: {} blocks (over all ranks) differ from the sent data "
                                          "(linear is wrong too)",
                                          bad);
}

}  // namespace isobench::collectives
