#include "irregular_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <sstream>

namespace iso_irregular_test {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

bool all_ranks(bool ok, MPI_Comm comm) {
  int local = ok ? 1 : 0, global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LAND, comm);
  return global != 0;
}

std::uint64_t hash_string(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

bool same_on_all_ranks(const std::string& text, MPI_Comm comm) {
  const std::uint64_t h = hash_string(text);
  std::uint64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  return lo == hi;
}

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::atoi(text);
}

// ---------------------------------------------------------------------------
// TypeSpec

TypeSpec TypeSpec::make_subarray(int nd_, const int* sizes_, const int* subsizes_, const int* starts_) {
  TypeSpec t;
  t.kind = subarray;
  t.nd = nd_;
  for (int j = 0; j < nd_; ++j) {
    t.sizes[static_cast<std::size_t>(j)] = sizes_[j];
    t.subsizes[static_cast<std::size_t>(j)] = subsizes_[j];
    t.starts[static_cast<std::size_t>(j)] = starts_[j];
  }
  return t;
}

int TypeSpec::ints() const {
  switch (kind) {
    case int_: return 1;
    case contiguous: return a;
    case vector: return a * b;
    case reversed: return a;
    case resized: return 1;
    case shifted: return 1;
    case subarray: {
      int n = 1;
      for (int j = 0; j < nd; ++j) n *= subsizes[static_cast<std::size_t>(j)];
      return n;
    }
  }
  return 0;
}

std::vector<long> TypeSpec::offsets() const {
  std::vector<long> out;
  switch (kind) {
    case int_:
    case resized: out.push_back(0); break;
    case shifted: out.push_back(4L * a); break;
    case contiguous:
      for (int k = 0; k < a; ++k) out.push_back(4L * k);
      break;
    case vector:
      for (int blk = 0; blk < a; ++blk)
        for (int e = 0; e < b; ++e) out.push_back(4L * (static_cast<long>(blk) * c + e));
      break;
    case reversed:
      for (int k = 0; k < a; ++k) out.push_back(-8L * k);
      break;
    case subarray: {
      const int n = ints();
      std::vector<long> stride(static_cast<std::size_t>(nd), 1);
      for (int j = nd - 2; j >= 0; --j)
        stride[static_cast<std::size_t>(j)] = stride[static_cast<std::size_t>(j) + 1] * sizes[static_cast<std::size_t>(j) + 1];
      std::vector<int> idx(static_cast<std::size_t>(nd), 0);
      for (int k = 0; k < n; ++k) {
        long off = 0;
        for (int j = 0; j < nd; ++j)
          off += (starts[static_cast<std::size_t>(j)] + idx[static_cast<std::size_t>(j)]) * stride[static_cast<std::size_t>(j)];
        out.push_back(4 * off);
        for (int j = nd - 1; j >= 0; --j) {  // row-major increment
          if (++idx[static_cast<std::size_t>(j)] < subsizes[static_cast<std::size_t>(j)]) break;
          idx[static_cast<std::size_t>(j)] = 0;
        }
      }
      break;
    }
  }
  return out;
}

long TypeSpec::extent() const {
  switch (kind) {
    case int_: return 4;
    case contiguous: return 4L * a;
    case vector: return a == 0 ? 0 : 4L * ((static_cast<long>(a) - 1) * c + b);
    case reversed: return a == 0 ? 0 : 8L * (a - 1) + 4;
    case resized: return 4L * a;
    case shifted: return 4L * (a + b);
    case subarray: {
      long n = 4;
      for (int j = 0; j < nd; ++j) n *= sizes[static_cast<std::size_t>(j)];
      return n;
    }
  }
  return 0;
}

std::string TypeSpec::key() const {
  std::ostringstream out;
  out << kind << ':' << a << ',' << b << ',' << c;
  if (kind == subarray) {
    out << ':' << nd;
    for (int j = 0; j < nd; ++j)
      out << ';' << sizes[static_cast<std::size_t>(j)] << ',' << subsizes[static_cast<std::size_t>(j)] << ','
          << starts[static_cast<std::size_t>(j)];
  }
  return out.str();
}

std::string TypeSpec::describe() const {
  std::ostringstream out;
  switch (kind) {
    case int_: out << "MPI_INT"; break;
    case contiguous: out << "contiguous(" << a << ")"; break;
    case vector: out << "vector(" << a << "," << b << "," << c << ")"; break;
    case reversed: out << "hindexed-reversed(" << a << ")"; break;
    case resized: out << "resized(int, extent " << 4 * a << ")"; break;
    case shifted: out << "struct(int at " << 4 * a << ", extent " << 4 * (a + b) << ")"; break;
    case subarray:
      out << "subarray(";
      for (int j = 0; j < nd; ++j)
        out << (j ? " x " : "") << sizes[static_cast<std::size_t>(j)] << "/" << subsizes[static_cast<std::size_t>(j)]
            << "@" << starts[static_cast<std::size_t>(j)];
      out << ")";
      break;
  }
  return out.str();
}

TypePool::~TypePool() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (auto& entry : types_)
    if (entry.second != MPI_INT) MPI_Type_free(&entry.second);
}

MPI_Datatype TypePool::get(const TypeSpec& spec) {
  const std::string key = spec.key();
  auto found = types_.find(key);
  if (found != types_.end()) return found->second;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  switch (spec.kind) {
    case TypeSpec::int_: type = MPI_INT; break;
    case TypeSpec::contiguous: MPI_Type_contiguous(spec.a, MPI_INT, &type); break;
    case TypeSpec::vector: MPI_Type_vector(spec.a, spec.b, spec.c, MPI_INT, &type); break;
    case TypeSpec::reversed: {
      std::vector<int> lengths(static_cast<std::size_t>(spec.a), 1);
      std::vector<MPI_Aint> displs(static_cast<std::size_t>(spec.a));
      for (int k = 0; k < spec.a; ++k) displs[static_cast<std::size_t>(k)] = -8 * static_cast<MPI_Aint>(k);
      MPI_Type_create_hindexed(spec.a, lengths.data(), displs.data(), MPI_INT, &type);
      break;
    }
    case TypeSpec::resized: MPI_Type_create_resized(MPI_INT, 0, 4 * static_cast<MPI_Aint>(spec.a), &type); break;
    case TypeSpec::shifted: {
      MPI_Datatype inner = MPI_DATATYPE_NULL;
      int one = 1;
      MPI_Aint at = 4 * static_cast<MPI_Aint>(spec.a);
      MPI_Datatype member = MPI_INT;
      MPI_Type_create_struct(1, &one, &at, &member, &inner);
      MPI_Type_create_resized(inner, 0, 4 * static_cast<MPI_Aint>(spec.a + spec.b), &type);
      MPI_Type_free(&inner);
      break;
    }
    case TypeSpec::subarray:
      MPI_Type_create_subarray(spec.nd, spec.sizes.data(), spec.subsizes.data(), spec.starts.data(), MPI_ORDER_C,
                               MPI_INT, &type);
      break;
  }
  if (type != MPI_INT) MPI_Type_commit(&type);
  // Self-check of the offsets/extent model against MPI's view of the type.
  MPI_Aint lb = 0, extent = 0;
  int size = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_size(type, &size);
  if (extent != spec.extent() || size != 4 * spec.ints())
    ADD_FAILURE() << "test bug: type " << spec.describe() << " has extent " << extent << " size " << size
                  << ", model says extent " << spec.extent() << " size " << 4 * spec.ints();
  types_.emplace(key, type);
  return type;
}

std::vector<long> BlockSpec::offsets() const {
  const std::vector<long> inner = type.offsets();
  const long extent = type.extent();
  std::vector<long> out;
  out.reserve(static_cast<std::size_t>(count) * inner.size());
  for (int k = 0; k < count; ++k)
    for (long off : inner) out.push_back(displ + k * extent + off);
  return out;
}

void place_blocks(SideSpec& side, long gap_bytes, long aligned_to) {
  long cursor = 0;
  for (BlockSpec& block : side.blocks) {
    block.displ = 0;
    const std::vector<long> offs = block.offsets();
    long low = 0, high = 0;
    if (!offs.empty()) {
      low = *std::min_element(offs.begin(), offs.end());
      high = *std::max_element(offs.begin(), offs.end()) + 4;
    }
    long displ = cursor - std::min(low, 0L);
    if (aligned_to > 0) displ = (displ + aligned_to - 1) / aligned_to * aligned_to;
    block.displ = displ;
    cursor = displ + std::max(high, 0L) + gap_bytes;
  }
  side.bytes = cursor;
}

// ---------------------------------------------------------------------------
// Buffers

std::int32_t value_of(int generation, int rank, long offset) {
  std::uint64_t x = static_cast<std::uint64_t>(generation) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(rank) << 40) ^ static_cast<std::uint64_t>(offset);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<std::int32_t>(1 + x % 0x7FFFFFF0ull);
}

Buffer::Buffer(long bytes, long margin) : bytes_(bytes), margin_(margin) {
  ints_.assign(static_cast<std::size_t>((bytes + 2 * margin + 3) / 4), sentinel);
}

void Buffer::fill_sentinel() { std::fill(ints_.begin(), ints_.end(), sentinel); }

void Buffer::fill_values(int generation, int rank) {
  fill_sentinel();
  for (long off = 0; off + 4 <= bytes_; off += 4) set(off, value_of(generation, rank, off));
}

void Buffer::set(long offset, std::int32_t value) {
  ints_.at(static_cast<std::size_t>((offset + margin_) / 4)) = value;
}

std::int32_t Buffer::get(long offset) const { return ints_.at(static_cast<std::size_t>((offset + margin_) / 4)); }

std::string Buffer::first_difference(const Buffer& expected) const {
  if (ints_.size() != expected.ints_.size()) return "buffer sizes differ";
  for (std::size_t k = 0; k < ints_.size(); ++k)
    if (ints_[k] != expected.ints_[k]) {
      std::ostringstream out;
      long different = 0;
      for (std::size_t l = k; l < ints_.size(); ++l) different += ints_[l] != expected.ints_[l];
      out << "byte offset " << static_cast<long>(k) * 4 - margin_ << " holds " << ints_[k] << ", expected "
          << expected.ints_[k] << " (" << different << " int(s) differ)";
      return out.str();
    }
  return {};
}

// ---------------------------------------------------------------------------
// Cases

std::string Case::describe() const {
  std::ostringstream out;
  out << name << ": grid ";
  for (std::size_t j = 0; j < dims.size(); ++j) out << (j ? "x" : "") << dims[j] << (periodic[j] ? "p" : "m");
  out << ", offsets {";
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    out << (i ? "; " : "");
    for (std::size_t j = 0; j < offsets[i].size(); ++j) out << (j ? "," : "") << offsets[i][j];
  }
  out << "}";
  return out.str();
}

iso::OffsetList Case::offset_list() const {
  std::vector<int> flat;
  for (const auto& v : offsets) flat.insert(flat.end(), v.begin(), v.end());
  return iso::OffsetList(static_cast<int>(dims.size()), flat);
}

namespace {

std::vector<int> partners(MPI_Comm cart, const std::vector<std::vector<int>>& offsets, int sign) {
  int rank = 0, d = 0;
  MPI_Comm_rank(cart, &rank);
  MPI_Cartdim_get(cart, &d);
  std::vector<int> dims(static_cast<std::size_t>(d)), periods(static_cast<std::size_t>(d)),
      me(static_cast<std::size_t>(d));
  MPI_Cart_get(cart, d, dims.data(), periods.data(), me.data());
  std::vector<int> out;
  for (const auto& v : offsets) {
    std::vector<int> there(static_cast<std::size_t>(d));
    bool exists = true;
    for (int j = 0; j < d; ++j) {
      const std::size_t u = static_cast<std::size_t>(j);
      long x = me[u] + static_cast<long>(sign) * v[u];
      if (periods[u]) {
        x %= dims[u];
        if (x < 0) x += dims[u];
      } else if (x < 0 || x >= dims[u]) {
        exists = false;
      }
      there[u] = static_cast<int>(x);
    }
    int r = -1;
    if (exists) MPI_Cart_rank(cart, there.data(), &r);
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::vector<int> independent_sources(MPI_Comm cart, const std::vector<std::vector<int>>& offsets) {
  return partners(cart, offsets, -1);
}

std::vector<int> independent_targets(MPI_Comm cart, const std::vector<std::vector<int>>& offsets) {
  return partners(cart, offsets, +1);
}

Buffer expected_receive(MPI_Comm cart, const Case& c, const ProcessLayout& mine, const std::vector<int>& sources,
                        int generation, bool& consistent) {
  Buffer expected(mine.recv.bytes);
  const int d = static_cast<int>(c.dims.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const int source = sources[i];
    if (source < 0) continue;
    std::vector<int> coords(static_cast<std::size_t>(d));
    MPI_Cart_coords(cart, source, d, coords.data());
    const ProcessLayout theirs = c.layout(coords, source);
    const std::vector<long> from = theirs.send.blocks[i].offsets();
    const std::vector<long> to = mine.recv.blocks[i].offsets();
    if (from.size() != to.size()) {
      consistent = false;
      continue;
    }
    for (std::size_t k = 0; k < to.size(); ++k) expected.set(to[k], value_of(generation, source, from[k]));
  }
  return expected;
}

Buffer mpi_reference(MPI_Comm cart, const std::vector<int>& sources, const std::vector<int>& targets,
                     const ProcessLayout& mine, TypePool& pool, int generation) {
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  Buffer send(mine.send.bytes), recv(mine.recv.bytes);
  send.fill_values(generation, rank);
  std::vector<int> src, dst, scounts, rcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::vector<MPI_Datatype> stypes, rtypes;
  // MPICH before 4.1 reads the send arrays of MPI_Neighbor_alltoallw by the
  // indegree and the receive arrays by the outdegree (heap corruption where
  // they differ, on meshes): there missing partners stay as MPI_PROC_NULL.
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
  constexpr bool keep_missing = true;
#else
  constexpr bool keep_missing = false;
#endif
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (targets[i] >= 0 || keep_missing) {
      dst.push_back(targets[i] >= 0 ? targets[i] : MPI_PROC_NULL);
      const BlockSpec& b = mine.send.blocks[i];
      scounts.push_back(b.count);
      sdispls.push_back(b.displ);
      stypes.push_back(pool.get(b.type));
    }
    if (sources[i] >= 0 || keep_missing) {
      src.push_back(sources[i] >= 0 ? sources[i] : MPI_PROC_NULL);
      const BlockSpec& b = mine.recv.blocks[i];
      rcounts.push_back(b.count);
      rdispls.push_back(b.displ);
      rtypes.push_back(pool.get(b.type));
    }
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(cart, static_cast<int>(src.size()), src.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(dst.size()), dst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  MPI_Neighbor_alltoallw(send.origin(), scounts.data(), sdispls.data(), stypes.data(), recv.origin(),
                         rcounts.data(), rdispls.data(), rtypes.data(), graph);
  MPI_Comm_free(&graph);
  return recv;
}

bool usable_for_alltoallv(const ProcessLayout& layout) {
  for (const SideSpec* side : {&layout.send, &layout.recv}) {
    if (side->blocks.empty()) continue;
    const std::string key = side->blocks[0].type.key();
    const long extent = side->blocks[0].type.extent();
    for (const BlockSpec& b : side->blocks)
      if (b.type.key() != key || extent == 0 || b.displ % extent != 0) return false;
  }
  return true;
}

CallArgs call_args(const ProcessLayout& layout, TypePool& pool) {
  CallArgs args;
  for (const BlockSpec& b : layout.send.blocks) {
    args.send_counts.push_back(b.count);
    args.send_displs_w.push_back(b.displ);
    args.send_types.push_back(pool.get(b.type));
    const long extent = b.type.extent();
    args.send_displs_v.push_back(extent > 0 ? static_cast<int>(b.displ / extent) : 0);
  }
  for (const BlockSpec& b : layout.recv.blocks) {
    args.recv_counts.push_back(b.count);
    args.recv_displs_w.push_back(b.displ);
    args.recv_types.push_back(pool.get(b.type));
    const long extent = b.type.extent();
    args.recv_displs_v.push_back(extent > 0 ? static_cast<int>(b.displ / extent) : 0);
  }
  args.send_type_v = args.send_types.empty() ? MPI_INT : args.send_types[0];
  args.recv_type_v = args.recv_types.empty() ? MPI_INT : args.recv_types[0];
  return args;
}

iso::Operation init_operation(Api api, const iso::Neighborhood& nbh, const CallArgs& args, const Buffer& send,
                              Buffer& recv, const iso::OperationOptions& options) {
  if (api == Api::alltoallw)
    return iso::alltoallw_init(nbh, send.origin(), args.send_counts.data(), args.send_displs_w.data(),
                               args.send_types.data(), recv.origin(), args.recv_counts.data(),
                               args.recv_displs_w.data(), args.recv_types.data(), options);
  return iso::alltoallv_init(nbh, send.origin(), args.send_counts.data(), args.send_displs_v.data(), args.send_type_v,
                             recv.origin(), args.recv_counts.data(), args.recv_displs_v.data(), args.recv_type_v,
                             options);
}

const std::vector<iso::Algorithm>& all_algorithms() {
  static const std::vector<iso::Algorithm> list = {iso::Algorithm::linear, iso::Algorithm::torus,
                                                   iso::Algorithm::direct, iso::Algorithm::basis,
                                                   iso::Algorithm::mpi,
                                                   iso::Algorithm::automatic};
  return list;
}

bool neighbor_reference_untrusted(const iso::Neighborhood& nbh) {
  int repeated = nbh.has_repeated_partner() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT, MPI_MAX, nbh.comm());
  return repeated && !iso::mpi_pairs_repeated_edges_in_order();
}

CaseResult run_case(const Case& c, Api api, const std::vector<iso::Algorithm>& algorithms, int generations,
                    bool with_reference) {
  CaseResult result;
  auto fail = [&](const std::string& what) { result.failures.push_back(what); };
  std::unique_ptr<iso::CartComm> cart;
  std::unique_ptr<iso::Neighborhood> nbh;
  try {
    cart = std::make_unique<iso::CartComm>(MPI_COMM_WORLD, c.dims, c.periodic);
    nbh = std::make_unique<iso::Neighborhood>(cart->get(), c.offset_list());
  } catch (const std::exception& e) {
    fail(std::string("setup threw: ") + e.what());  // agreed by the library: every rank throws
    return result;
  }
  const int rank = nbh->rank();
  const std::vector<int> sources = independent_sources(cart->get(), c.offsets);
  const std::vector<int> targets = independent_targets(cart->get(), c.offsets);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const int b = static_cast<int>(i);
    if (nbh->source_rank(b) != sources[i] || nbh->target_rank(b) != targets[i])
      fail("block " + std::to_string(i) + ": Neighborhood::source_rank/target_rank " +
           std::to_string(nbh->source_rank(b)) + "/" + std::to_string(nbh->target_rank(b)) +
           " differ from MPI_Cart_rank's " + std::to_string(sources[i]) + "/" + std::to_string(targets[i]));
  }
  const ProcessLayout mine = c.layout(nbh->coords(), rank);
  if (api == Api::alltoallv && !usable_for_alltoallv(mine)) fail("test bug: layout not usable for alltoallv");
  TypePool pool;
  const CallArgs args = call_args(mine, pool);
  std::vector<Buffer> expected;
  bool consistent = true;
  for (int g = 1; g <= generations; ++g)
    expected.push_back(expected_receive(cart->get(), c, mine, sources, g, consistent));
  if (!consistent) fail("test bug: send and receive block sizes differ (layout function breaks the rule)");

  // Where some rank has a neighbor in several directions, an MPI library that
  // pairs repeated edges out of order (MPICH 4.0.2) cannot be the reference.
  if (neighbor_reference_untrusted(*nbh)) with_reference = false;

  std::vector<Buffer> linear_results;
  Buffer send(mine.send.bytes), recv(mine.recv.bytes);
  for (iso::Algorithm algorithm : algorithms) {
    const std::string label = std::string(iso::to_string(algorithm));
    send.fill_values(1, rank);
    recv.fill_sentinel();
    iso::Operation op;
    try {
      // Signature verification on for some algorithms, off for others: a legal
      // layout must pass it, and the unverified path must work too.
      const bool verify = algorithm != iso::Algorithm::torus && algorithm != iso::Algorithm::mpi;
      op = init_operation(api, *nbh, args, send, recv, iso::OperationOptions{algorithm, verify});
    } catch (const std::exception& e) {
      fail(label + ": init threw: " + e.what());
      continue;
    }
    for (int g = 1; g <= generations; ++g) {
      send.fill_values(g, rank);
      recv.fill_sentinel();
      const Buffer before = send;
      if (g % 2 == 1) {
        op.start();
        op.wait();
      } else {
        op.start();
        while (!op.test()) {
        }
      }
      const std::string gen = " (generation " + std::to_string(g) + ")";
      const std::string diff = recv.first_difference(expected[static_cast<std::size_t>(g - 1)]);
      if (!diff.empty()) fail(label + gen + ": wrong result at " + diff);
      if (send != before) fail(label + gen + ": send buffer modified");
      if (algorithm == iso::Algorithm::linear) {
        linear_results.push_back(recv);
      } else if (linear_results.size() >= static_cast<std::size_t>(g) &&
                 recv != linear_results[static_cast<std::size_t>(g - 1)]) {
        fail(label + gen + ": differs from linear at " +
             recv.first_difference(linear_results[static_cast<std::size_t>(g - 1)]));
      }
    }
  }
  if (with_reference) {
    const Buffer reference = mpi_reference(cart->get(), sources, targets, mine, pool, 1);
    const std::string diff = reference.first_difference(expected[0]);
    if (!diff.empty()) fail("MPI_Neighbor_alltoallw reference differs from expected at " + diff);
  }
  return result;
}

bool report(const Case& c, const CaseResult& result, const char* api_name) {
  const bool ok = all_ranks(result.failures.empty());
  if (ok) return true;
  if (world_rank() == 0)
    ADD_FAILURE() << api_name << " case failed on " << world_size() << " ranks: " << c.describe();
  if (!result.failures.empty()) {
    std::ostringstream out;
    out << api_name << " " << c.name << ", rank " << world_rank() << ":";
    for (std::size_t k = 0; k < result.failures.size() && k < 6; ++k) out << "\n    " << result.failures[k];
    if (result.failures.size() > 6) out << "\n    ... " << result.failures.size() - 6 << " more";
    ADD_FAILURE() << out.str();
  }
  return false;
}

// ---------------------------------------------------------------------------
// Layout helpers

int nonzeros(const std::vector<int>& v) {
  return static_cast<int>(std::count_if(v.begin(), v.end(), [](int x) { return x != 0; }));
}

long figure3_size(const std::vector<int>& v, int m) {
  long n = 1;
  for (int k = 0; k < static_cast<int>(v.size()) - nonzeros(v); ++k) n *= m;
  return n;
}

std::vector<int> dims_create(int nprocs, int d) {
  std::vector<int> dims(static_cast<std::size_t>(d), 0);
  MPI_Dims_create(nprocs, d, dims.data());
  return dims;
}

std::vector<std::vector<int>> moore(int d, int radius, bool include_self) {
  const iso::OffsetList list = iso::OffsetList::moore(d, radius, include_self);
  std::vector<std::vector<int>> out;
  for (int i = 0; i < list.size(); ++i) out.emplace_back(list[i], list[i] + d);
  return out;
}

Watchdog::Watchdog(std::string what, int seconds) {
  const int limit = env_int("ISO_IRREGULAR_WATCHDOG", seconds);
  const int rank = world_rank();
  thread_ = std::thread([this, what = std::move(what), limit, rank] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_.wait_for(lock, std::chrono::seconds(limit), [this] { return disarmed_; })) return;
    std::fprintf(stderr, "[rank %d] WATCHDOG: %s did not finish within %d s: hang; ending the process\n", rank,
                 what.c_str(), limit);
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(124);
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    disarmed_ = true;
  }
  done_.notify_all();
  thread_.join();
}

}  // namespace iso_irregular_test
