#include "isostencil/core/halo_exchange.hpp"

#include "isostencil/core/host_mirror.hpp"
#include "isostencil/core/profiling.hpp"

#include "halo_transport.hpp"

#include "iso/error.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace isostencil::core {

namespace {

// The simulation switch of host_mirror.hpp: -1 until first read.
int& simulation_state() {
  static int state = -1;
  return state;
}

}  // namespace

void simulate_device_memory(bool on) { simulation_state() = on ? 1 : 0; }

bool device_memory_simulated() {
  int& state = simulation_state();
  if (state < 0) {
    const char* value = std::getenv("ISOSTENCIL_SIMULATE_DEVICE_MEMORY");
    state = value && *value && std::string(value) != "0" ? 1 : 0;
  }
  return state == 1;
}

const char* to_string(HaloTransport transport) {
  switch (transport) {
    case HaloTransport::automatic: return "auto";
    case HaloTransport::datatypes: return "datatypes";
    case HaloTransport::packed: return "packed";
  }
  return "?";
}

HaloTransport parse_halo_transport(const std::string& name) {
  for (HaloTransport transport : {HaloTransport::automatic, HaloTransport::datatypes, HaloTransport::packed})
    if (name == to_string(transport)) return transport;
  throw iso::Error("isostencil::core::parse_halo_transport: \"" + name +
                   "\" is no halo transport; allowed: auto, datatypes, packed");
}

HaloExchange::HaloExchange(Binding& binding, iso::HaloExchange::Deferred* deferred)
    : decomposition_(std::move(binding.decomposition)),
      pattern_(std::move(binding.pattern)),
      fields_(std::move(binding.fields)),
      keep_alive_(std::move(binding.keep_alive)),
      to_host_(std::move(binding.to_host)),
      from_host_(std::move(binding.from_host)),
      host_accessible_(binding.host_accessible),
      transport_(binding.transport),
      gpu_aware_mpi_(binding.gpu_aware_mpi),
      space_(std::move(binding.space)) {
  if (deferred) *deferred = iso::HaloExchange::Deferred{};
  if (!pattern_) throw iso::Error("isostencil::core::HaloExchange: no pattern");
  layout_ = pattern_->layout(binding.element);
}

HaloExchange::HaloExchange(Binding binding) : HaloExchange(binding, nullptr) {
  if (transport_ == HaloTransport::packed) {
    const bool stage = !host_accessible_ && !gpu_aware_mpi_;
    packed_ = std::make_unique<detail::PackedTransport>(*pattern_, binding.element, fields_, stage,
                                                        binding.pack_on_host);
  } else {
    transport_ = HaloTransport::datatypes;
    bind_datatypes(binding.element);
  }
}

HaloExchange::HaloExchange(std::shared_ptr<const Decomposition> decomposition,
                           std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
                           std::vector<void*> fields, std::vector<std::any> keep_alive,
                           bool host_accessible)
    : decomposition_(std::move(decomposition)),
      pattern_(std::move(pattern)),
      fields_(std::move(fields)),
      keep_alive_(std::move(keep_alive)),
      host_accessible_(host_accessible) {
  if (!pattern_) throw iso::Error("isostencil::core::HaloExchange: no pattern");
  layout_ = pattern_->layout(element);
  bind_datatypes(element);
}

HaloExchange::HaloExchange(Binding binding, iso::HaloExchange::Deferred& deferred)
    : HaloExchange(binding, &deferred) {
  if (transport_ != HaloTransport::datatypes) return;  // not ready: bound collectively instead
  datatypes_ = std::make_unique<iso::HaloExchange>(pattern_, binding.element, fields_, deferred);
}

void HaloExchange::finish() {
  if (!datatypes_) throw iso::Error("isostencil::core::HaloExchange::finish: no deferred binding to finish");
  datatypes_->finish();
}

void HaloExchange::bind_datatypes(MPI_Datatype element) {
  datatypes_ = std::make_unique<iso::HaloExchange>(pattern_, element, fields_);
}

HaloExchange::HaloExchange(HaloExchange&&) noexcept = default;
// Swapped, so `other` releases what this one held in the right order
// (the transports before the Views they read).
HaloExchange& HaloExchange::operator=(HaloExchange&& other) noexcept {
  std::swap(decomposition_, other.decomposition_);
  std::swap(pattern_, other.pattern_);
  std::swap(layout_, other.layout_);
  std::swap(fields_, other.fields_);
  std::swap(keep_alive_, other.keep_alive_);
  std::swap(to_host_, other.to_host_);
  std::swap(from_host_, other.from_host_);
  std::swap(host_accessible_, other.host_accessible_);
  std::swap(transport_, other.transport_);
  std::swap(gpu_aware_mpi_, other.gpu_aware_mpi_);
  std::swap(space_, other.space_);
  std::swap(datatypes_, other.datatypes_);
  std::swap(packed_, other.packed_);
  std::swap(in_flight_, other.in_flight_);
  return *this;
}
HaloExchange::~HaloExchange() = default;

void HaloExchange::start() {
  const ProfilingRegion region("isostencil::halo::start");
  if (packed_) {
    packed_->start(space_);
  } else {
    // MPI reads the interior next: the kernels queued on this instance must be done.
    space_.fence();
    datatypes_->start();
  }
  in_flight_ = true;
}

void HaloExchange::start(const execution_space& space) {
  space_ = space;
  start();
}

bool HaloExchange::test() {
  const bool done = packed_ ? packed_->test(space_) : datatypes_->test();
  if (done) in_flight_ = false;
  return done;
}

void HaloExchange::wait() {
  const ProfilingRegion region("isostencil::halo::wait");
  if (packed_) packed_->wait(space_);
  else datatypes_->wait();
  in_flight_ = false;
}

bool HaloExchange::host_staged() const { return packed_ && packed_->staged(); }

void HaloExchange::time_phases(HaloPhaseTimes* sink) {
  if (!packed_)
    throw iso::Error("isostencil::core::HaloExchange::time_phases: only the packed transport has phases to time");
  if (in_flight_) throw iso::Error("isostencil::core::HaloExchange::time_phases: the exchange is in flight; wait() first");
  packed_->time_phases(sink);
}

int HaloExchange::direct_blocks() const { return packed_ ? packed_->direct_blocks() : 0; }

const iso::HaloExchange& HaloExchange::exchange() const {
  if (!datatypes_)
    throw iso::Error("isostencil::core::HaloExchange::exchange: this exchange runs the packed transport");
  return *datatypes_;
}

const iso::Operation& HaloExchange::operation() const {
  return packed_ ? packed_->operation() : datatypes_->operation();
}

std::string HaloExchange::describe_transport() const {
  if (!packed_) return "datatypes";
  if (packed_->staged()) return "packed, host-staged";
  return !host_accessible_ && gpu_aware_mpi_ ? "packed, GPU-aware MPI" : "packed";
}

std::vector<std::vector<char>> HaloExchange::copy_fields_to_host() const {
  const std::vector<int> extent = layout_.extent();
  std::size_t bytes = 1;
  for (int e : extent) bytes *= static_cast<std::size_t>(e);
  int element_size = 0;
  ISO_MPI_CHECK(MPI_Type_size(layout_.element, &element_size));
  bytes *= static_cast<std::size_t>(element_size);
  std::vector<std::vector<char>> copies(fields_.size(), std::vector<char>(bytes));
  for (std::size_t f = 0; f < fields_.size(); ++f) {
    if (host_accessible_ || f >= to_host_.size()) std::memcpy(copies[f].data(), fields_[f], bytes);
    else to_host_[f](copies[f].data());
  }
  return copies;
}

void HaloExchange::run_naive() {
  const ProfilingRegion region("isostencil::halo::naive");
  if (in_flight_) throw iso::Error("isostencil::core::HaloExchange::run_naive: the exchange is in flight; wait() first");
  // The kernels that wrote the fields, and those that will read them.
  space_.fence();
  if (host_accessible_) {
    iso::naive_exchange(*pattern_, layout_.element, fields_);
    return;
  }
  std::vector<std::vector<char>> copies = copy_fields_to_host();
  std::vector<void*> host;
  for (auto& copy : copies) host.push_back(copy.data());
  iso::naive_exchange(*pattern_, layout_.element, host);
  for (std::size_t f = 0; f < fields_.size(); ++f) from_host_[f](copies[f].data());
  space_.fence();
}

iso::HaloValidation HaloExchange::validate() {
  const ProfilingRegion region("isostencil::validate::halo");
  if (in_flight_) throw iso::Error("isostencil::core::HaloExchange::validate: the exchange is in flight; wait() first");
  space_.fence();
  // The reference runs on host copies of the original contents; the fields
  // themselves run this exchange and keep its result.
  std::vector<std::vector<char>> reference = copy_fields_to_host();
  run();
  const std::vector<std::vector<char>> combined = copy_fields_to_host();
  std::vector<void*> host;
  for (auto& copy : reference) host.push_back(copy.data());
  iso::naive_exchange(*pattern_, layout_.element, host);

  iso::HaloValidation result;
  std::string mismatch;
  const std::string iso_name = std::string("isomorphic exchange (") + iso::to_string(algorithm()) + ", " +
                               describe_transport() + ")";
  const int nfields = num_fields();
  for (int f = 0; f < nfields && mismatch.empty(); ++f) {
    mismatch = iso::compare_cells(layout_, combined[f].data(), reference[f].data(), false, result.cells_compared,
                                  iso_name, "naive exchange");
    if (!mismatch.empty() && nfields > 1) mismatch = "field " + std::to_string(f) + ": " + mismatch;
  }
  try {
    iso::agree_on_errors(pattern_->neighborhood().comm(), "halo validation", mismatch);
  } catch (const iso::Error& e) {
    result.ok = false;
    result.message = e.what();
  }
  return result;
}

}  // namespace isostencil::core
