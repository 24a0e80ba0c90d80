#include "iso/neighborhood.hpp"

#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <string>

namespace iso {

Comm& Comm::operator=(Comm&& other) noexcept {
  if (this != &other) {
    reset();
    comm_ = other.comm_;
    other.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

void Comm::reset() {
  if (comm_ != MPI_COMM_NULL && comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_SELF) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  comm_ = MPI_COMM_NULL;
}

std::string CartComm::check(MPI_Comm parent, std::vector<int>& dims, std::vector<bool>& periodic) {
  int size = 0;
  ISO_MPI_CHECK(MPI_Comm_size(parent, &size));
  std::string error;
  const int d = static_cast<int>(dims.size());
  if (periodic.empty()) periodic.assign(dims.size(), true);
  long fixed = 1;
  for (int p : dims) {
    if (p < 0) error = "process grid size " + std::to_string(p) + " is negative";
    if (p > 0) fixed *= p;
  }
  if (d < 1) error = "the process grid needs at least one dimension";
  else if (periodic.size() != dims.size())
    error = std::to_string(periodic.size()) + " periodic flags for " + std::to_string(d) + " dimensions";
  else if (error.empty() && std::find(dims.begin(), dims.end(), 0) == dims.end() && fixed != size)
    error = "the process grid has " + std::to_string(fixed) + " processes but the communicator has " +
            std::to_string(size) + " ranks";
  else if (error.empty() && size % fixed != 0)
    error = "the given process grid sizes (product " + std::to_string(fixed) + ") do not divide the " +
            std::to_string(size) + " processes";
  if (error.empty()) {
    ISO_MPI_CHECK(MPI_Dims_create(size, d, dims.data()));
    long product = std::accumulate(dims.begin(), dims.end(), 1L, std::multiplies<long>());
    if (product != size)
      error = "process grid of " + std::to_string(product) + " processes for " + std::to_string(size) + " ranks";
  }
  return error;
}

CartComm::CartComm(MPI_Comm parent, std::vector<int> dims, std::vector<bool> periodic, bool reorder) {
  agree_on_errors(parent, "iso::CartComm", check(parent, dims, periodic));
  std::vector<int> periods(periodic.begin(), periodic.end());
  MPI_Comm cart = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Cart_create(parent, static_cast<int>(dims.size()), dims.data(), periods.data(), reorder ? 1 : 0,
                                &cart));
  comm_ = std::make_shared<Comm>(cart);
  geometry_ = CartGeometry{std::move(dims), std::move(periodic)};
}

namespace {

// The communicators create_shared made, while a copy of each lives. Found by
// value and checked against the parent's processes (MPI_Comm_compare), so a
// freed parent whose handle comes back names no stale entry.
struct SharedCart {
  std::vector<int> dims;
  std::vector<bool> periodic;
  std::weak_ptr<Comm> comm;
};
std::mutex shared_carts_mutex;
std::vector<SharedCart> shared_carts;

}  // namespace

std::unique_ptr<CartComm> CartComm::find_shared(MPI_Comm parent, const std::vector<int>& dims,
                                                const std::vector<bool>& periodic) {
  std::shared_ptr<Comm> comm;
  {
    const std::lock_guard<std::mutex> lock(shared_carts_mutex);
    for (const SharedCart& entry : shared_carts) {
      if (entry.dims != dims || entry.periodic != periodic) continue;
      std::shared_ptr<Comm> live = entry.comm.lock();
      if (!live) continue;
      // Congruent: the same processes in the same order, another context.
      int same = MPI_UNEQUAL;
      ISO_MPI_CHECK(MPI_Comm_compare(live->get(), parent, &same));
      if (same == MPI_CONGRUENT) {
        comm = std::move(live);
        break;
      }
    }
  }
  if (!comm) return nullptr;
  std::unique_ptr<CartComm> found(new CartComm);
  found->comm_ = std::move(comm);
  found->geometry_ = CartGeometry{dims, periodic};
  return found;
}

CartComm CartComm::create_shared(MPI_Comm parent, std::vector<int> dims, std::vector<bool> periodic) {
  std::vector<int> periods(periodic.begin(), periodic.end());
  MPI_Comm cart = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Cart_create(parent, static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &cart));
  CartComm made;
  made.comm_ = std::make_shared<Comm>(cart);
  made.geometry_ = CartGeometry{dims, periodic};
  const std::lock_guard<std::mutex> lock(shared_carts_mutex);
  shared_carts.erase(std::remove_if(shared_carts.begin(), shared_carts.end(),
                                    [](const SharedCart& entry) { return entry.comm.expired(); }),
                     shared_carts.end());
  shared_carts.push_back(SharedCart{std::move(dims), std::move(periodic), made.comm_});
  return made;
}

// The duplicate of a Cartesian communicator that its neighborhoods
// communicate on, cached on it as an attribute. References: the attribute
// (dropped when the parent is freed) and each neighborhood; the last one
// frees the duplicate.
struct detail::SharedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int references = 0;
  long next_tag = 0;  // tags reserved by all operations on `comm`
  std::string machine;  // machine_signature(comm) once computed
};

namespace {

int shared_key = MPI_KEYVAL_INVALID;
int live_shared = 0;  // caches alive: the key goes with the last one

void drop_key_if_unused(bool in_callback) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (--live_shared > 0 || finalized || shared_key == MPI_KEYVAL_INVALID) return;
  // No cache left: the key goes too, so that a program's handle count comes
  // back to where it was. Open MPI holds a non-recursive lock around delete
  // callbacks when threads are in use; there the key stays for the run.
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (!in_callback || level < MPI_THREAD_MULTIPLE) MPI_Comm_free_keyval(&shared_key);
}

void release(detail::SharedComm* shared, bool in_callback) {
  if (--shared->references > 0) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&shared->comm);
  delete shared;
  drop_key_if_unused(in_callback);
}

int parent_freed(MPI_Comm, int, void* value, void*) {
  release(static_cast<detail::SharedComm*>(value), true);
  return MPI_SUCCESS;
}

// The cached duplicate of `cart` with one more reference (collective the
// first time: MPI_Comm_dup). Every rank finds the same state, as the cache
// is made and dropped by collective calls on `cart`.
detail::SharedComm* acquire(MPI_Comm cart) {
  if (shared_key == MPI_KEYVAL_INVALID)
    ISO_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, parent_freed, &shared_key, nullptr));
  void* value = nullptr;
  int found = 0;
  ISO_MPI_CHECK(MPI_Comm_get_attr(cart, shared_key, &value, &found));
  if (found) {
    auto* shared = static_cast<detail::SharedComm*>(value);
    ++shared->references;
    return shared;
  }
  auto* shared = new detail::SharedComm;
  ++live_shared;
  shared->references = 1;
  const int duplicated = MPI_Comm_dup(cart, &shared->comm);
  if (duplicated != MPI_SUCCESS) {
    delete shared;
    drop_key_if_unused(false);
    ISO_MPI_CHECK(duplicated);
  }
  // Communication errors come back as codes and become iso::Error, instead
  // of aborting the job from inside the library.
  int attached = MPI_Comm_set_errhandler(shared->comm, MPI_ERRORS_RETURN);
  if (attached == MPI_SUCCESS) attached = MPI_Comm_set_attr(cart, shared_key, shared);
  if (attached != MPI_SUCCESS) {
    release(shared, false);
    ISO_MPI_CHECK(attached);
  }
  ++shared->references;  // the neighborhood's own, besides the parent's
  return shared;
}

}  // namespace

Neighborhood::~Neighborhood() {
  if (shared_) release(shared_, false);
}

Neighborhood::Neighborhood(Neighborhood&& other) noexcept
    : shared_(other.shared_),
      comm_(other.comm_),
      offsets_(std::move(other.offsets_)),
      geometry_(std::move(other.geometry_)),
      coords_(std::move(other.coords_)),
      rank_(other.rank_),
      offsets_hash_(other.offsets_hash_),
      schedules_(std::move(other.schedules_)),
      choices_(std::move(other.choices_)) {
  other.shared_ = nullptr;
  other.comm_ = MPI_COMM_NULL;
}

Neighborhood& Neighborhood::operator=(Neighborhood&& other) noexcept {
  if (this != &other) {
    if (shared_) release(shared_, false);
    shared_ = other.shared_, comm_ = other.comm_;
    other.shared_ = nullptr, other.comm_ = MPI_COMM_NULL;
    offsets_ = std::move(other.offsets_);
    geometry_ = std::move(other.geometry_);
    coords_ = std::move(other.coords_);
    rank_ = other.rank_;
    offsets_hash_ = other.offsets_hash_;
    schedules_ = std::move(other.schedules_);
    choices_ = std::move(other.choices_);
  }
  return *this;
}

Neighborhood::Neighborhood(MPI_Comm cart, OffsetList offsets, const NeighborhoodOptions& options)
    : offsets_(std::move(offsets)) {
  const char* where = "iso::Neighborhood";
  if (cart == MPI_COMM_NULL) throw Error(std::string(where) + ": the communicator is MPI_COMM_NULL");
  int topology = MPI_UNDEFINED;
  topology = detail::topology_of(cart);
  std::string error;
  int d = 0;
  if (topology != MPI_CART) {
    error = "the communicator has no Cartesian topology (create it with MPI_Cart_create or iso::CartComm)";
  } else {
    ISO_MPI_CHECK(MPI_Cartdim_get(cart, &d));
    std::vector<int> dims(d), periods(d);
    coords_.resize(d);
    ISO_MPI_CHECK(MPI_Cart_get(cart, d, dims.data(), periods.data(), coords_.data()));
    geometry_.sizes = dims;
    geometry_.periodic.assign(periods.begin(), periods.end());
    if (offsets_.size() > 0 && offsets_.dims() != d)
      error = "offsets have " + std::to_string(offsets_.dims()) + " coordinates but the Cartesian communicator has " +
              std::to_string(d) + " dimensions";
    if (offsets_.size() == 0) offsets_ = OffsetList(std::max(d, 1), {});
  }
  offsets_hash_ = offsets_.hash();
  if (options.verify) {
    // One allreduce of (error, largest hash, complement of the smallest):
    // all agree unless an error or two different hashes show. Only then an
    // allgather names the ranks that disagree.
    const std::uint64_t hash = offsets_hash_ ^ (geometry_.hash() * 31u);
    std::int64_t summary[3] = {error.empty() ? 0 : 1, static_cast<std::int64_t>(hash), ~static_cast<std::int64_t>(hash)};
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, summary, 3, MPI_INT64_T, MPI_MAX, cart));
    if (summary[0] != 0) agree_on_errors(cart, where, error);
    if (summary[1] != ~summary[2]) {
      int size = 1;
      ISO_MPI_CHECK(MPI_Comm_size(cart, &size));
      std::int64_t mine[3] = {static_cast<std::int64_t>(hash), offsets_.size(), d};
      std::vector<std::int64_t> all(3 * static_cast<std::size_t>(size));
      ISO_MPI_CHECK(MPI_Allgather(mine, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, cart));
      std::string differing;
      int count = 0;
      for (int r = 1; r < size; ++r) {
        if (all[3 * r] == all[0]) continue;
        if (count < 8)
          differing += (count ? ", " : "") + std::to_string(r) + " (" + std::to_string(all[3 * r + 1]) + " offsets)";
        ++count;
      }
      throw Error(std::string(where) + ": the neighborhood differs between ranks: rank 0 passed " +
                  std::to_string(all[1]) + " offsets in " + std::to_string(all[2]) + "-D; " +
                  std::to_string(count) + " rank(s) passed a different offset list, order or process grid: " +
                  differing + (count > 8 ? ", ..." : "") +
                  "; every rank must pass the same offsets in the same order");
    }
  } else {
    agree_on_errors(cart, where, error);
  }
  shared_ = acquire(cart);
  comm_ = shared_->comm;
  ISO_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
}

const Neighborhood::KeptChoice* Neighborhood::kept_choice(std::uint64_t key) const {
  const auto found = choices_.find(key);
  return found == choices_.end() ? nullptr : &found->second;
}

void Neighborhood::keep_choice(std::uint64_t key, KeptChoice choice) const {
  // A bound for programs that vary their block sizes without end: forgetting
  // only costs the next init its prediction.
  if (choices_.size() >= 64) choices_.clear();
  choices_[key] = choice;
}

const std::string& Neighborhood::machine_signature() const {
  // Every rank reaches this at the same collective point, so every rank's
  // shared state is filled at once.
  if (!shared_) throw Error("iso::Neighborhood::machine_signature: the neighborhood is empty (moved from)");
  if (shared_->machine.empty()) shared_->machine = iso::machine_signature(comm_);
  return shared_->machine;
}

const Schedule& Neighborhood::schedule(Algorithm algorithm, Collective collective) const {
  return *shared_schedule(algorithm, collective);
}

std::shared_ptr<const Schedule> Neighborhood::shared_schedule(Algorithm algorithm, Collective collective) const {
  const auto key = std::make_pair(algorithm, collective);
  auto found = schedules_.find(key);
  if (found == schedules_.end())
    found = schedules_
                .emplace(key, detail::cached_schedule(offsets_, offsets_hash_, geometry_, coords_, algorithm, collective))
                .first;
  return found->second;
}

int Neighborhood::reserve_tags(int count) const {
  int flag = 0;
  int* upper = nullptr;
  ISO_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &upper, &flag));
  const long limit = (flag && upper) ? *upper : 32767;
  if (!shared_ || count < 0 || shared_->next_tag + count - 1 > limit) return -1;
  const long first = shared_->next_tag;
  shared_->next_tag += count;
  return static_cast<int>(first);
}

int Neighborhood::target_rank(int block) const {
  if (block < 0 || block >= size()) throw Error("iso::Neighborhood::target_rank: block out of range");
  return geometry_.shifted_rank(coords_.data(), offsets_[block], +1);
}

int Neighborhood::source_rank(int block) const {
  if (block < 0 || block >= size()) throw Error("iso::Neighborhood::source_rank: block out of range");
  return geometry_.shifted_rank(coords_.data(), offsets_[block], -1);
}

bool Neighborhood::has_repeated_partner() const {
  std::vector<int> targets, sources;
  for (int i = 0; i < size(); ++i) {
    if (target_rank(i) >= 0) targets.push_back(target_rank(i));
    if (source_rank(i) >= 0) sources.push_back(source_rank(i));
  }
  for (std::vector<int>* ranks : {&targets, &sources}) {
    std::sort(ranks->begin(), ranks->end());
    if (std::adjacent_find(ranks->begin(), ranks->end()) != ranks->end()) return true;
  }
  return false;
}

}  // namespace iso
