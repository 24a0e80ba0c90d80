#include "collectives_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>

namespace iso_collectives_test {

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

bool all_ranks(bool ok) {
  int local = ok ? 1 : 0;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return global != 0;
}

std::uint64_t any_rank_bits(std::uint64_t bits) {
  std::uint64_t global = 0;
  MPI_Allreduce(&bits, &global, 1, MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD);
  return global;
}

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::atoi(text);
}

// ---------------------------------------------------------------------------
// Layouts

long Layout::position(long block, long element) const {
  const long per_instance = static_cast<long>(disps.size());
  const long instance = block * count + element / per_instance;
  return instance * extent + disps[static_cast<std::size_t>(element % per_instance)];
}

long Layout::min_position(int blocks) const {
  if (blocks == 0 || count == 0) return 0;
  return *std::min_element(disps.begin(), disps.end());
}

long Layout::end_position(int blocks) const {
  if (blocks == 0 || count == 0) return 0;
  return (static_cast<long>(blocks) * count - 1) * extent +
         *std::max_element(disps.begin(), disps.end()) + 1;
}

std::string LayoutPair::describe() const {
  return "send " + std::to_string(send.count) + " x " + send.name + ", recv " +
         std::to_string(recv.count) + " x " + recv.name;
}

namespace {

Layout predefined(bool is_double, int count) {
  Layout layout;
  layout.name = is_double ? "MPI_DOUBLE" : "MPI_INT";
  layout.type = is_double ? MPI_DOUBLE : MPI_INT;
  layout.is_double = is_double;
  layout.disps = {0};
  layout.extent = 1;
  layout.count = count;
  return layout;
}

// Commits `type` and checks that MPI agrees with the layout we model.
Layout derived(std::string name, MPI_Datatype type, bool is_double, std::vector<long> disps,
               long extent, int count) {
  MPI_Type_commit(&type);
  MPI_Aint lb = 0;
  MPI_Aint mpi_extent = 0;
  MPI_Type_get_extent(type, &lb, &mpi_extent);
  const long element = is_double ? 8 : 4;
  if (mpi_extent != extent * element)
    throw std::logic_error("test layout " + name + ": MPI extent " + std::to_string(mpi_extent) +
                           " bytes, modelled " + std::to_string(extent * element));
  int size = 0;
  MPI_Type_size(type, &size);
  if (size != static_cast<int>(disps.size()) * element)
    throw std::logic_error("test layout " + name + ": MPI size " + std::to_string(size));
  Layout layout;
  layout.name = std::move(name);
  layout.type = type;
  layout.owns_type = true;
  layout.is_double = is_double;
  layout.disps = std::move(disps);
  layout.extent = extent;
  layout.count = count;
  return layout;
}

Layout contiguous4(bool is_double, int count) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(4, is_double ? MPI_DOUBLE : MPI_INT, &type);
  return derived(is_double ? "contiguous(4,MPI_DOUBLE)" : "contiguous(4,MPI_INT)", type, is_double,
                 {0, 1, 2, 3}, 4, count);
}

}  // namespace

int num_layout_kinds() {
  return 9;
}

LayoutPair make_layout_pair(int kind, int elements) {
  LayoutPair pair;
  switch (kind) {
    case 0:  // plain ints
      pair.send = predefined(false, elements);
      pair.recv = predefined(false, elements);
      break;
    case 1:  // plain doubles
      pair.send = predefined(true, elements);
      pair.recv = predefined(true, elements);
      break;
    case 2:  // 4k ints sent, received as k contiguous(4, int)
      pair.send = predefined(false, elements / 4 * 4);
      pair.recv = contiguous4(false, elements / 4);
      break;
    case 3:  // k contiguous(4, double) sent, received as 4k doubles
      pair.send = contiguous4(true, elements / 4);
      pair.recv = predefined(true, elements / 4 * 4);
      break;
    case 4: {  // strided send: vector(3, 1, stride 2) of int, extent 5 ints
      MPI_Datatype type = MPI_DATATYPE_NULL;
      MPI_Type_vector(3, 1, 2, MPI_INT, &type);
      pair.send = derived("vector(3,1,2,MPI_INT)", type, false, {0, 2, 4}, 5, elements / 3);
      pair.recv = predefined(false, elements / 3 * 3);
      break;
    }
    case 5: {  // strided receive: vector(2, 1, stride 3) of double, extent 4 doubles
      MPI_Datatype type = MPI_DATATYPE_NULL;
      MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &type);
      pair.send = predefined(true, elements / 2 * 2);
      pair.recv = derived("vector(2,1,3,MPI_DOUBLE)", type, true, {0, 3}, 4, elements / 2);
      break;
    }
    case 6: {  // send type with a positive lower bound: ints at bytes 4 and 12, extent 12
      MPI_Datatype type = MPI_DATATYPE_NULL;
      int lengths[2] = {1, 1};
      MPI_Aint displacements[2] = {4, 12};
      MPI_Type_create_hindexed(2, lengths, displacements, MPI_INT, &type);
      pair.send =
          derived("hindexed({4,12} bytes,MPI_INT) lb=4", type, false, {1, 3}, 3, elements / 2);
      pair.recv = predefined(false, elements / 2 * 2);
      break;
    }
    case 7: {  // receive type with a negative lower bound: ints at bytes -4 and +4
      MPI_Datatype type = MPI_DATATYPE_NULL;
      int lengths[2] = {1, 1};
      MPI_Aint displacements[2] = {-4, 4};
      MPI_Type_create_hindexed(2, lengths, displacements, MPI_INT, &type);
      pair.send = predefined(false, elements / 2 * 2);
      pair.recv =
          derived("hindexed({-4,4} bytes,MPI_INT) lb=-4", type, false, {-1, 1}, 3, elements / 2);
      break;
    }
    case 8: {  // both sides derived and different: resized contiguous vs vector
      MPI_Datatype contiguous = MPI_DATATYPE_NULL;
      MPI_Datatype resized = MPI_DATATYPE_NULL;
      MPI_Type_contiguous(2, MPI_DOUBLE, &contiguous);
      MPI_Type_create_resized(contiguous, 0, 5 * 8, &resized);
      MPI_Type_free(&contiguous);
      MPI_Datatype vector = MPI_DATATYPE_NULL;
      MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vector);
      pair.send = derived("resized(contiguous(2,MPI_DOUBLE),extent 5)", resized, true, {0, 1}, 5,
                          elements / 2);
      pair.recv = derived("vector(2,1,2,MPI_DOUBLE)", vector, true, {0, 2}, 3, elements / 2);
      break;
    }
    default:
      throw std::logic_error("unknown layout kind " + std::to_string(kind));
  }
  return pair;
}

void free_layout_pair(LayoutPair& pair) {
  for (Layout* layout : {&pair.send, &pair.recv}) {
    if (layout->owns_type && layout->type != MPI_DATATYPE_NULL) MPI_Type_free(&layout->type);
    layout->owns_type = false;
  }
}

// ---------------------------------------------------------------------------
// Buffers

namespace {
constexpr long margin_elements = 8;
}

Buffer::Buffer(const Layout& layout, int blocks) : is_double_(layout.is_double) {
  const long low = std::min(0L, layout.min_position(blocks)) - margin_elements;
  const long high = std::max(0L, layout.end_position(blocks)) + margin_elements;
  origin_ = static_cast<std::size_t>(-low * element_size());
  bytes_.assign(static_cast<std::size_t>((high - low) * element_size()), 0);
  fill_sentinel();
}

void Buffer::set(long position, std::int64_t value) {
  unsigned char* at = bytes_.data() + origin_ + position * element_size();
  if (is_double_) {
    const double v = static_cast<double>(value) + 0.25;
    std::memcpy(at, &v, sizeof v);
  } else {
    const auto v = static_cast<std::int32_t>(value);
    std::memcpy(at, &v, sizeof v);
  }
}

std::int64_t Buffer::get(long position) const {
  const unsigned char* at = bytes_.data() + origin_ + position * element_size();
  if (is_double_) {
    double v = 0;
    std::memcpy(&v, at, sizeof v);
    return static_cast<std::int64_t>(v - 0.25);
  }
  std::int32_t v = 0;
  std::memcpy(&v, at, sizeof v);
  return v;
}

void Buffer::fill_sentinel() {
  for (long p = first(); p < last(); ++p)
    set(p, sentinel_value);
}

std::int64_t value_of(int generation, int rank, int block, long element) {
  return 1 + element + 64 * (block + 128 * (static_cast<std::int64_t>(rank) + 64 * generation));
}

void fill_send(Buffer& buffer, const Layout& layout, int blocks, int generation, int rank) {
  for (long p = buffer.first(); p < buffer.last(); ++p)
    buffer.set(p, hole_value);
  for (int b = 0; b < blocks; ++b)
    for (long e = 0; e < layout.elements_per_block(); ++e)
      buffer.set(layout.position(b, e), value_of(generation, rank, b, e));
}

namespace {
std::string describe_value(std::int64_t v) {
  if (v == sentinel_value) return "sentinel";
  if (v == hole_value) return "send-buffer hole filler";
  if (v <= 0) return std::to_string(v);
  const std::int64_t x = v - 1;
  std::ostringstream out;
  out << v << " (= generation " << x / (64 * 128 * 64) << ", rank " << (x / (64 * 128)) % 64
      << ", block " << (x / 64) % 128 << ", element " << x % 64 << ")";
  return out.str();
}
}  // namespace

std::string first_difference(const Buffer& got, const Buffer& expected, const Layout& layout,
                             int blocks) {
  if (got.bytes() == expected.bytes()) return "";
  if (got.bytes().size() != expected.bytes().size()) return "buffer sizes differ";
  long mismatches = 0;
  std::string first;
  for (long p = got.first(); p < got.last(); ++p) {
    const std::size_t offset = static_cast<std::size_t>((p - got.first()) * got.element_size());
    if (std::memcmp(got.bytes().data() + offset, expected.bytes().data() + offset,
                    static_cast<std::size_t>(got.element_size())) == 0)
      continue;
    if (mismatches++ > 0) continue;
    std::string where = "outside every block (hole or margin)";
    for (int b = 0; b < blocks; ++b)
      for (long e = 0; e < layout.elements_per_block(); ++e)
        if (layout.position(b, e) == p)
          where = "block " + std::to_string(b) + " element " + std::to_string(e);
    first = "element index " + std::to_string(p) + " [" + where + "]: got " +
            describe_value(got.get(p)) + ", expected " + describe_value(expected.get(p));
  }
  return first + " (" + std::to_string(mismatches) + " differing element(s))";
}

// ---------------------------------------------------------------------------
// Cases

std::string Case::describe() const {
  std::ostringstream out;
  out << "dims=[";
  for (std::size_t j = 0; j < dims.size(); ++j)
    out << (j ? "," : "") << dims[j];
  out << "] periodic=[";
  for (std::size_t j = 0; j < periodic.size(); ++j)
    out << (j ? "," : "") << (periodic[j] ? 1 : 0);
  out << "] offsets=\"";
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    out << (i ? ";" : "");
    for (std::size_t j = 0; j < offsets[i].size(); ++j)
      out << (j ? "," : "") << offsets[i][j];
  }
  out << "\" layout_kind=" << layout_kind << " elements=" << elements;
  if (rank_dependent_layout) out << " rank_dependent_layout=1";
  return out.str();
}

int Case::kind_for_rank(int rank) const {
  if (!rank_dependent_layout) return layout_kind;
  static const int int_kinds[] = {0, 2, 4, 6, 7};
  static const int double_kinds[] = {1, 3, 5, 8};
  const bool doubles = layout_kind == 1 || layout_kind == 3 || layout_kind == 5 || layout_kind == 8;
  return doubles ? double_kinds[(rank + layout_kind) % 4] : int_kinds[(rank + layout_kind) % 5];
}

iso::OffsetList Case::offset_list() const {
  std::vector<int> flat;
  for (const auto& v : offsets)
    flat.insert(flat.end(), v.begin(), v.end());
  return iso::OffsetList(static_cast<int>(dims.size()), flat);
}

Case random_case(std::mt19937_64& rng, int nprocs) {
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&rng](double p) {
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p;
  };
  Case c;
  const int d = uniform(1, 4);
  c.dims.assign(static_cast<std::size_t>(d), 1);
  int rest = nprocs;
  for (int factor = 2; rest > 1; ++factor)
    while (rest % factor == 0) {
      c.dims[static_cast<std::size_t>(uniform(0, d - 1))] *= factor;
      rest /= factor;
    }
  for (int j = 0; j < d; ++j)
    c.periodic.push_back(chance(0.5));
  const int s = uniform(1, 10);
  for (int i = 0; i < s; ++i) {
    std::vector<int> v(static_cast<std::size_t>(d), 0);
    if (i > 0 && chance(0.15)) {
      v = c.offsets[static_cast<std::size_t>(uniform(0, i - 1))];
    } else if (!chance(0.1)) {
      for (int& x : v)
        x = chance(0.05) ? uniform(-7, 7) : uniform(-3, 3);
    }
    c.offsets.push_back(v);
  }
  c.layout_kind = uniform(0, num_layout_kinds() - 1);
  c.elements = chance(0.1) ? 0 : uniform(1, 40);
  if (chance(0.2)) {
    c.rank_dependent_layout = true;
    c.elements = 12 * uniform(0, 3);
  }
  return c;
}

Partners independent_partners(MPI_Comm cart, const Case& c) {
  const int d = static_cast<int>(c.dims.size());
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  std::vector<int> coords(static_cast<std::size_t>(d)), shifted(static_cast<std::size_t>(d));
  MPI_Cart_coords(cart, rank, d, coords.data());
  Partners partners;
  for (const auto& v : c.offsets) {
    for (int sign : {+1, -1}) {
      bool exists = true;
      for (int j = 0; j < d; ++j) {
        const int p = c.dims[static_cast<std::size_t>(j)];
        int x = coords[static_cast<std::size_t>(j)] + sign * v[static_cast<std::size_t>(j)];
        if (c.periodic[static_cast<std::size_t>(j)]) {
          x = ((x % p) + p) % p;
        } else if (x < 0 || x >= p) {
          exists = false;
        }
        shifted[static_cast<std::size_t>(j)] = x;
      }
      int partner = -1;
      if (exists) MPI_Cart_rank(cart, shifted.data(), &partner);
      (sign > 0 ? partners.targets : partners.sources).push_back(partner);
    }
  }
  return partners;
}

Buffer expected_result(const Layout& recv, const std::vector<int>& sources,
                       iso::Collective collective, int generation) {
  const int s = static_cast<int>(sources.size());
  Buffer expected(recv, s);
  for (int i = 0; i < s; ++i) {
    if (sources[static_cast<std::size_t>(i)] < 0) continue;
    const int block = collective == iso::Collective::alltoall ? i : 0;
    for (long e = 0; e < recv.elements_per_block(); ++e)
      expected.set(recv.position(i, e),
                   value_of(generation, sources[static_cast<std::size_t>(i)], block, e));
  }
  return expected;
}

Buffer mpi_reference(MPI_Comm cart, const Partners& partners, const LayoutPair& layouts,
                     iso::Collective collective, int generation) {
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  const int s = static_cast<int>(partners.sources.size());
  std::vector<int> sources, source_blocks, targets, target_blocks;
  for (int i = 0; i < s; ++i) {
    if (partners.sources[static_cast<std::size_t>(i)] >= 0) {
      sources.push_back(partners.sources[static_cast<std::size_t>(i)]);
      source_blocks.push_back(i);
    }
    if (partners.targets[static_cast<std::size_t>(i)] >= 0) {
      targets.push_back(partners.targets[static_cast<std::size_t>(i)]);
      target_blocks.push_back(i);
    }
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(cart, static_cast<int>(sources.size()), sources.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(targets.size()), targets.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  const int indegree = static_cast<int>(sources.size());
  Buffer compact_recv(layouts.recv, indegree);
  if (collective == iso::Collective::alltoall) {
    const int outdegree = static_cast<int>(targets.size());
    Buffer compact_send(layouts.send, outdegree);
    for (long p = compact_send.first(); p < compact_send.last(); ++p)
      compact_send.set(p, hole_value);
    for (int k = 0; k < outdegree; ++k)
      for (long e = 0; e < layouts.send.elements_per_block(); ++e)
        compact_send.set(layouts.send.position(k, e),
                         value_of(generation, rank, target_blocks[static_cast<std::size_t>(k)], e));
    MPI_Neighbor_alltoall(compact_send.data(), layouts.send.count, layouts.send.type,
                          compact_recv.data(), layouts.recv.count, layouts.recv.type, graph);
  } else {
    Buffer send(layouts.send, 1);
    fill_send(send, layouts.send, 1, generation, rank);
    MPI_Neighbor_allgather(send.data(), layouts.send.count, layouts.send.type, compact_recv.data(),
                           layouts.recv.count, layouts.recv.type, graph);
  }
  MPI_Comm_free(&graph);
  Buffer result(layouts.recv, s);
  for (int k = 0; k < indegree; ++k)
    for (long e = 0; e < layouts.recv.elements_per_block(); ++e)
      result.set(layouts.recv.position(source_blocks[static_cast<std::size_t>(k)], e),
                 compact_recv.get(layouts.recv.position(k, e)));
  return result;
}

std::vector<int> dims_create(int d) {
  std::vector<int> dims(static_cast<std::size_t>(d), 0);
  MPI_Dims_create(world_size(), d, dims.data());
  return dims;
}

RunResult run_library(const iso::Neighborhood& nbh, const LayoutPair& layouts,
                      iso::Algorithm algorithm, iso::Collective collective, int generation) {
  const int s = nbh.size();
  const int blocks = send_blocks(s, collective);
  Buffer send(layouts.send, blocks);
  fill_send(send, layouts.send, blocks, generation, nbh.rank());
  const std::vector<unsigned char> send_before = send.bytes();
  RunResult result;
  result.recv = Buffer(layouts.recv, s);
  iso::OperationOptions options;
  options.algorithm = algorithm;
  // Port limits vary with the case (the same on every rank): 0 (no limit),
  // one message each way at a time, 2 and 3.
  options.ports = (generation / 2) % 4;
  // Posting too: automatic (what a caller gets: fresh up to the limit,
  // persistent above), forced persistent, forced fresh.
  options.posting = static_cast<iso::Posting>((generation / 8) % 3);
  try {
    iso::Operation op =
        collective == iso::Collective::alltoall
            ? iso::alltoall_init(nbh, send.data(), layouts.send.count, layouts.send.type,
                                 result.recv.data(), layouts.recv.count, layouts.recv.type, options)
            : iso::allgather_init(nbh, send.data(), layouts.send.count, layouts.send.type,
                                  result.recv.data(), layouts.recv.count, layouts.recv.type,
                                  options);
    op.run();
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  result.send_unchanged = send.bytes() == send_before;
  return result;
}

Watchdog::Watchdog(std::string what, int seconds) {
  const int limit = env_int("ISO_COLLECTIVES_WATCHDOG", seconds);
  const int rank = world_rank();
  thread_ = std::thread([this, what = std::move(what), limit, rank] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_.wait_for(lock, std::chrono::seconds(limit), [this] { return disarmed_; })) return;
    std::fprintf(stderr,
                 "[rank %d] WATCHDOG: %s did not finish within %d s: hang; ending the process\n",
                 rank, what.c_str(), limit);
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

Exchange::Exchange(const iso::Neighborhood& nbh, const LayoutPair& layouts,
                   iso::Collective collective, iso::Algorithm algorithm, iso::Posting posting)
    : nbh_(&nbh),
      layouts_(&layouts),
      collective_(collective),
      algorithm_(algorithm),
      posting_(posting),
      send_(layouts.send, send_blocks(nbh.size(), collective)),
      recv_(layouts.recv, nbh.size()) {
  prepare(0);
  iso::OperationOptions options;
  options.algorithm = algorithm;
  options.posting = posting;
  op_ = collective == iso::Collective::alltoall
            ? iso::alltoall_init(nbh, send_.data(), layouts.send.count, layouts.send.type,
                                 recv_.data(), layouts.recv.count, layouts.recv.type, options)
            : iso::allgather_init(nbh, send_.data(), layouts.send.count, layouts.send.type,
                                  recv_.data(), layouts.recv.count, layouts.recv.type, options);
}

void Exchange::prepare(int generation) {
  fill_send(send_, layouts_->send, send_blocks(nbh_->size(), collective_), generation,
            nbh_->rank());
  recv_.fill_sentinel();
}

std::string Exchange::check(int generation) const {
  std::vector<int> sources;
  for (int i = 0; i < nbh_->size(); ++i)
    sources.push_back(nbh_->source_rank(i));
  const Buffer expected = expected_result(layouts_->recv, sources, collective_, generation);
  const std::string diff = first_difference(recv_, expected, layouts_->recv, nbh_->size());
  return diff.empty() ? diff : name() + " generation " + std::to_string(generation) + ": " + diff;
}

std::string Exchange::name() const {
  return std::string(iso::to_string(collective_)) + "/" + iso::to_string(algorithm_) + "@" +
         iso::to_string(posting_) + " [" +
         layouts_->describe() + "] offsets " + nbh_->offsets().to_string();
}

std::uint64_t hash_string(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

bool same_on_all_ranks(const std::string& text) {
  std::uint64_t h = hash_string(text);
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

}  // namespace iso_collectives_test
