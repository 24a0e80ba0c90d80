// The halo exchange of one or several fields of a grid, made by
// Grid<D>::halo_exchange and bound to the grid's halo pattern (every
// exchange of a grid with the same algorithm shares Grid<D>::halo_pattern()).
// Two transports move the same blocks through the same isomorphic collective
// (docs/design/halo-exchange.md#transports):
//
// - datatypes: iso::HaloExchange, an alltoallw over subarray datatypes on the
//   field memory itself (MPI reads and writes the fields);
// - packed: Kokkos kernels on the exchange's execution space instance pack
//   every send block of every field into one contiguous buffer in block
//   order, an alltoallv over that buffer runs (host-staged where the fields
//   live in memory the host cannot touch, unless gpu_aware_mpi), and unpack
//   kernels scatter the receive buffer into the ghosts. Blocks a process
//   sends itself skip the buffers: the pack kernel copies them straight
//   from the interior to the ghosts.
#pragma once

#include "isostencil/core/decomposition.hpp"

#include "iso/halo_exchange.hpp"

#include <Kokkos_Core.hpp>

#include <any>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace isostencil::core {

/// How an exchange moves its blocks. automatic: datatypes where the host may
/// access the fields' memory, packed otherwise.
enum class HaloTransport { automatic, datatypes, packed };
/// "auto", "datatypes", "packed".
const char* to_string(HaloTransport transport);
/// The inverse of to_string; throws iso::Error naming the allowed values.
HaloTransport parse_halo_transport(const std::string& name);

/// The options of a grid's exchanges: the pattern's (iso::HaloOptions:
/// algorithm, torus by default, automatic consulting the cost model; the
/// neighborhood check at creation) plus how the blocks travel. Converts from
/// iso::HaloOptions (transport automatic, gpu_aware_mpi false).
struct HaloOptions : iso::HaloOptions {
  HaloTransport transport = HaloTransport::automatic;
  /// The MPI library reads and writes device memory: the packed transport
  /// hands its device buffers to MPI instead of staging them through host
  /// mirrors, and the datatype transport may run on device memory. Ignored
  /// for host-accessible memory. The isomorphic schedules copy blocks on the
  /// host (staging slots, blocks a process sends itself), so on device memory
  /// only Algorithm::mpi may run with it; other algorithms are an error.
  bool gpu_aware_mpi = false;

  HaloOptions() = default;
  HaloOptions(const iso::HaloOptions& options) : iso::HaloOptions(options) {}  // NOLINT: implicit on purpose
};

/// Seconds the packed transport spent in each of its phases, summed over the
/// exchanges completed while a HaloExchange wrote here (time_phases). Each
/// phase is timed between fences of the exchange's instance, so the phases
/// are disjoint parts of the exchange and sum to at most its time. The
/// staging copies (to_host, to_device) run only where the buffers go through
/// host mirrors (host_staged()); elsewhere they stay 0.
struct HaloPhaseTimes {
  double pack = 0;       ///< pack kernel (blocks to itself included)
  double to_host = 0;    ///< send buffer, device -> host mirror
  double mpi = 0;        ///< inside the collective's start, test and wait
  double to_device = 0;  ///< receive buffer, host mirror -> device
  double unpack = 0;     ///< unpack kernel
  long exchanges = 0;    ///< exchanges completed
  double staging() const { return to_host + to_device; }
  double sum() const { return pack + to_host + mpi + to_device + unpack; }
};

/// The neighborhood, blocks and options shared by a grid's exchanges.
using HaloPattern = iso::HaloPattern;

namespace detail {
class PackedTransport;
/// Testing aid: when nonzero, packed exchanges made afterwards copy every
/// block a process sends itself one element beside its ghosts (a wrong cell),
/// so tests can show that they catch it (tests/grid/transport_test.cpp).
inline int direct_copy_error = 0;
/// The packed transport's host kernels take a block's slabs (or the rows of
/// a block of one slab) in units of at most this many words
/// (halo_transport.cpp, WordLayout::pieces), read when an exchange is made.
/// Tests set it small so that blocks split into units, the last one
/// shorter, at sizes that run quickly.
inline long packed_host_unit_words = 8192;
}

/// Memory: with the datatype transport the Views' data pointers go to MPI as
/// they are (host-accessible memory, or device memory with gpu_aware_mpi);
/// the packed transport's kernels read and write the fields on an execution
/// space that can access them. run_naive() and validate() work on host copies
/// of fields the host may not access (Kokkos::deep_copy), so they work for
/// device memory too.
///
/// Execution spaces: the exchange runs on one instance of execution_space
/// (the default instance unless one is handed in at construction, through
/// set_space() or start(space)): start() fences that instance only (the
/// kernels that wrote the interior must have finished before MPI or the pack
/// kernels read it; no global Kokkos::fence), the pack and unpack kernels run
/// on it, and wait() returns once the ghosts are written (fenced again).
/// Fields the default execution space cannot access (host memory in a device
/// build) are packed on Kokkos::DefaultHostExecutionSpace instead.
///
/// Threads: start/test/wait/run, run_naive/validate, and the progress engine
/// they drive (iso::Operation), are called from the host thread only, one
/// exchange at a time; kernels on other threads or streams may run while an
/// exchange is in flight, but not on the cells it reads or writes.
class HaloExchange {
public:
  using execution_space = Kokkos::DefaultExecutionSpace;

  /// What Grid<D>::halo_exchange hands over: the fields (type-erased), how
  /// to copy each to and from host bytes (whole field, ghosts included), and
  /// the checked, resolved choice of transport.
  struct Binding {
    std::shared_ptr<const Decomposition> decomposition;
    std::shared_ptr<const HaloPattern> pattern;
    MPI_Datatype element = MPI_DATATYPE_NULL;
    std::vector<void*> fields;
    std::vector<std::any> keep_alive;  ///< holds the Views (their memory outlives the exchange)
    /// Per field: copy the field into / from `bytes` host bytes (deep_copy).
    std::vector<std::function<void(void* bytes)>> to_host;
    std::vector<std::function<void(const void* bytes)>> from_host;
    bool host_accessible = true;  ///< the host may touch the fields (false under simulation)
    HaloTransport transport = HaloTransport::datatypes;  ///< resolved: datatypes or packed
    bool gpu_aware_mpi = false;
    /// packed: kernels on DefaultHostExecutionSpace (the default space cannot
    /// access the fields).
    bool pack_on_host = false;
    execution_space space;
  };

  /// Use Grid<D>::halo_exchange. Collective over the pattern's communicator.
  explicit HaloExchange(Binding binding);
  /// Grid<D>::halo_exchange on a pattern it found: the datatypes transport
  /// bound locally (iso::HaloExchange::Deferred; `ready` false for the packed
  /// transport), finish() once the grid's agreement found every rank ready.
  HaloExchange(Binding binding, iso::HaloExchange::Deferred& deferred);
  void finish();
  /// The datatype transport on host-accessible fields (kept for callers that
  /// bind raw fields; Grid<D>::halo_exchange uses the Binding).
  HaloExchange(std::shared_ptr<const Decomposition> decomposition,
               std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
               std::vector<void*> fields, std::vector<std::any> keep_alive, bool host_accessible);
  HaloExchange(HaloExchange&&) noexcept;
  HaloExchange& operator=(HaloExchange&&) noexcept;
  ~HaloExchange();

  /// Fences the exchange's execution space instance, packs (packed
  /// transport), then posts the first round.
  void start();
  /// The same on `space`, which the exchange keeps for its later calls.
  void start(const execution_space& space);
  /// Advances as far as arrived messages allow; true once complete (the
  /// packed transport has then unpacked and fenced).
  bool test();
  /// Completes the exchange: ghost cells in every direction the stencil reads
  /// hold the neighbors' interior values. Boundary ghosts of non-periodic
  /// dimensions are left untouched.
  void wait();
  void run() {
    start();
    wait();
  }
  void run(const execution_space& space) {
    start(space);
    wait();
  }

  /// The execution space instance the exchange fences and packs on.
  const execution_space& space() const { return space_; }
  void set_space(const execution_space& space) { space_ = space; }

  /// The reference exchange: one message per direction, packed by hand on
  /// the host (on host copies where the host may not access the fields).
  void run_naive();
  /// Runs the exchange and the reference from the same contents and compares
  /// every ghost cell bitwise (collective); the fields end with the
  /// exchange's result.
  iso::HaloValidation validate();

  HaloTransport transport() const { return transport_; }
  /// packed: the buffers go through host mirrors around MPI.
  bool host_staged() const;
  /// packed: adds each later exchange's phase times to `*sink` (kept by
  /// pointer; it must outlive the timing), at the cost of a fence between
  /// phases; nullptr (the default) turns timing off, and with it those
  /// fences. Throws iso::Error for the datatype transport (one MPI call, no
  /// phases) and while an exchange is in flight.
  void time_phases(HaloPhaseTimes* sink);
  /// packed: the blocks this process sends itself, copied by the pack kernel
  /// straight from interior to ghosts (0 for datatypes).
  int direct_blocks() const;
  bool gpu_aware_mpi() const { return gpu_aware_mpi_; }
  /// The datatype transport's exchange; throws iso::Error for packed.
  const iso::HaloExchange& exchange() const;
  const HaloPattern& pattern() const { return *pattern_; }
  /// The persistent collective that runs (alltoallw or alltoallv).
  const iso::Operation& operation() const;
  const iso::Neighborhood& neighborhood() const { return pattern_->neighborhood(); }
  const iso::ArrayLayout& layout() const { return layout_; }
  /// Ghost directions e exchanged (the neighborhood lists v = -e).
  const iso::OffsetList& directions() const { return pattern_->directions(); }
  /// The algorithm that runs (automatic resolved).
  iso::Algorithm algorithm() const { return operation().algorithm(); }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  /// "datatypes", "packed", "packed, host-staged", "packed, GPU-aware MPI".
  std::string describe_transport() const;

private:
  // The members every Binding sets, and the pattern checked: the two
  // Binding constructors go on from here. `deferred`, where given, is
  // cleared first, so it never outlives a failed binding.
  HaloExchange(Binding& binding, iso::HaloExchange::Deferred* deferred);
  void bind_datatypes(MPI_Datatype element);
  // Host copies of every field (bytes of the whole array each).
  std::vector<std::vector<char>> copy_fields_to_host() const;

  std::shared_ptr<const Decomposition> decomposition_;
  std::shared_ptr<const HaloPattern> pattern_;
  iso::ArrayLayout layout_;
  std::vector<void*> fields_;
  std::vector<std::any> keep_alive_;  // declared before the transports: released after them
  std::vector<std::function<void(void*)>> to_host_;
  std::vector<std::function<void(const void*)>> from_host_;
  bool host_accessible_ = true;
  HaloTransport transport_ = HaloTransport::datatypes;
  bool gpu_aware_mpi_ = false;
  execution_space space_;
  std::unique_ptr<iso::HaloExchange> datatypes_;
  std::unique_ptr<detail::PackedTransport> packed_;
  bool in_flight_ = false;
};

}  // namespace isostencil::core
