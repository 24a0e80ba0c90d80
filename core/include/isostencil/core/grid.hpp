// A D-dimensional distributed grid: a Decomposition plus a Stencil. The grid
// computes the stencil's halo geometry once (iso::stencil_geometry: ghost
// widths per dimension and side, ghost directions, neighborhood), makes its
// halo pattern from it on first use (halo_pattern(): neighborhood, blocks,
// options; one per distinct HaloOptions, shared by copies of the grid), and
// binds fields to that pattern: halo_exchange() builds a persistent exchange
// of one field or of a group of fields in one collective. Fields are Kokkos
// Views with the geometry's ghost layers.
//
//   auto grid = isostencil::core::Grid<3>(MPI_COMM_WORLD, {64, 64, 64}, {true, true, true},
//                                         isostencil::core::Stencil::star(3, 1));
//   auto u = grid.make_field<double>("u");
//   auto halo = grid.halo_exchange(u);
//   halo.start(); /* interior work */ halo.wait();
#pragma once

#include "isostencil/core/decomposition.hpp"
#include "isostencil/core/field.hpp"
#include "isostencil/core/halo_exchange.hpp"
#include "isostencil/core/host_mirror.hpp"
#include "isostencil/core/stencil.hpp"

#include "iso/error.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <any>
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::core {

namespace detail {

/// Collective over the decomposition: checks that decomposition and stencil
/// have `dims` dimensions, that every rank passes the same stencil (offsets
/// and weights) and depth, and that no halo is wider than the width rule
/// allows (iso::Error naming the dimension, the width and the smallest local
/// extent); returns the halo geometry of `halo_stencil` (the stencil
/// repeated `depth` times).
iso::HaloGeometry grid_geometry(const char* where, const Decomposition& decomposition,
                                const Stencil& stencil, const Stencil& halo_stencil, int depth, int dims,
                                bool agreed = false);
/// Local: grid_geometry's checks and fingerprint, for a grid that makes its
/// decomposition and agrees on both at once (then grid_geometry(agreed)).
Decomposition::AlsoAgreed grid_agreement(int decomposition_dims, const Stencil& stencil,
                                         const Stencil& halo_stencil, int depth, int dims);
/// The halo patterns of a grid and its copies, made on first use, one per
/// distinct HaloOptions (creation is collective, as every exchange's). A
/// pattern made here is also found (find) by other grids on the same shared
/// communicator with the same subdomain, geometry and options while it lives,
/// which they use once every rank found it (docs/design/grid.md).
class HaloPatterns {
public:
  std::shared_ptr<const HaloPattern> get(const Decomposition& decomposition,
                                         const std::vector<int>& interior,
                                         const iso::HaloGeometry& geometry,
                                         const std::vector<long>& global_offset,
                                         const HaloOptions& options,
                                         std::shared_ptr<const HaloPattern> found_everywhere = nullptr);
  /// Local: this grid's pattern for `options`, or a live one of equal
  /// arguments that another grid made; null when there is none.
  std::shared_ptr<const HaloPattern> find(const Decomposition& decomposition,
                                          const std::vector<int>& interior,
                                          const iso::HaloGeometry& geometry,
                                          const std::vector<long>& global_offset,
                                          const HaloOptions& options) const;

private:
  std::vector<std::pair<HaloOptions, std::shared_ptr<const HaloPattern>>> made_;
};
/// Collective: compares two arrays of `layout` bitwise (ghost cells, and the
/// interior too when asked); the first mismatch over all ranks is reported as
/// "rank R: ghost cell in direction (..), global index (..) (local (..)): ...".
iso::HaloValidation compare_cells(const Decomposition& decomposition, const char* where,
                                  const iso::ArrayLayout& layout, const void* first,
                                  const void* second, bool interior_too);

}  // namespace detail

template <int D>
class Grid {
  static_assert(D >= 1 && D <= 6, "isostencil::core::Grid supports 1 to 6 dimensions");

public:
  using local_index = std::array<int, D>;
  using global_index = std::array<long, D>;

  /// Collective over the decomposition's communicator (checks that all ranks
  /// pass the same stencil). Throws iso::Error, the same on every rank, when
  /// dimensions differ or a halo is wider than a neighbor's subdomain.
  /// `depth` k >= 1: the ghost region holds what k updates in a row read
  /// (the stencil repeated k times, halo_stencil()), so one exchange serves k
  /// updates over shrinking boxes (docs/design/halo-exchange.md#deep-halos).
  Grid(std::shared_ptr<const Decomposition> decomposition, Stencil stencil, int depth = 1)
      : Grid(std::move(decomposition), std::move(stencil), checked_depth(depth), false) {}
  Grid(Decomposition&& decomposition, Stencil stencil, int depth = 1)
      : Grid(std::make_shared<const Decomposition>(std::move(decomposition)), std::move(stencil),
             depth) {}
  /// Decomposes `global_extent` over `comm`; zero entries of `process_dims`
  /// are chosen by MPI_Dims_create.
  Grid(MPI_Comm comm, const global_index& global_extent, const std::array<bool, D>& periodic,
       Stencil stencil, const std::array<int, D>& process_dims = {}, int depth = 1)
      : Grid(std::make_shared<const Decomposition>(
                 comm, std::vector<long>(global_extent.begin(), global_extent.end()),
                 std::vector<bool>(periodic.begin(), periodic.end()),
                 std::vector<int>(process_dims.begin(), process_dims.end()),
                 // The grid's checks ride in the decomposition's agreement.
                 detail::grid_agreement(D, stencil, depth >= 1 ? stencil.repeated(depth) : stencil, depth, D)),
             stencil, depth, true) {}

  /// The same decomposition and stencil with halos of depth `depth`
  /// (collective, as the constructor).
  Grid with_depth(int depth) const { return Grid(decomposition_, stencil_, depth); }

  static constexpr int dims() { return D; }
  const Decomposition& decomposition() const { return *decomposition_; }
  const std::shared_ptr<const Decomposition>& shared_decomposition() const {
    return decomposition_;
  }
  /// The kernel's stencil (what one update reads).
  const Stencil& stencil() const { return stencil_; }
  /// Updates one exchange serves (1: an exchange before every update).
  int depth() const { return depth_; }
  /// stencil().repeated(depth()): what depth() updates read, the stencil
  /// the ghost region and the halo pattern are made for.
  const Stencil& halo_stencil() const { return halo_stencil_; }
  /// The ghost widths of one update (stencil().geometry().widths): how far
  /// each substep box of a deep halo grows per remaining substep.
  const iso::HaloWidths& reach() const { return reach_; }
  MPI_Comm comm() const { return decomposition_->comm(); }

  /// Interior cells owned here, ghost widths below and above, field extents.
  const local_index& interior_extent() const { return interior_; }
  const local_index& ghost_lo() const { return ghost_lo_; }
  const local_index& ghost_hi() const { return ghost_hi_; }
  const local_index& field_extent() const { return field_extent_; }
  const global_index& global_extent() const { return global_extent_; }
  /// Global index of the first interior cell.
  const global_index& global_offset() const { return global_offset_; }
  /// The halo geometry of halo_stencil(), computed once: ghost widths, ghost
  /// directions e and neighborhood v = -e (at depth 1, the stencil's).
  const iso::HaloGeometry& geometry() const { return geometry_; }
  /// Ghost directions e the stencil reads (its halo neighborhood is -e).
  const iso::OffsetList& directions() const { return geometry_.directions; }

  /// The grid's halo pattern for `options`: made on the first call with
  /// those options (collective over the grid's communicator, as every
  /// exchange), then shared by every exchange of this grid and its copies.
  std::shared_ptr<const HaloPattern> halo_pattern(const HaloOptions& options = {}) const {
    return patterns_->get(*decomposition_, std::vector<int>(interior_.begin(), interior_.end()),
                          geometry_,
                          std::vector<long>(global_offset_.begin(), global_offset_.end()), options);
  }

  /// Local indices [first, last) of the interior in `dim`.
  std::pair<int, int> interior_range(int dim) const {
    return {ghost_lo_[dim], ghost_lo_[dim] + interior_[dim]};
  }
  /// Local (field) index -> global index; ghosts map outside the interior
  /// range and, at the domain boundary, outside [0, N).
  long to_global(int dim, int local) const { return global_offset_[dim] + local - ghost_lo_[dim]; }
  global_index to_global(const local_index& local) const {
    global_index global{};
    for (int j = 0; j < D; ++j)
      global[j] = to_global(j, local[j]);
    return global;
  }
  /// Global index -> local (field) index; no wrapping.
  int to_local(int dim, long global) const {
    return static_cast<int>(global - global_offset_[dim] + ghost_lo_[dim]);
  }
  local_index to_local(const global_index& global) const {
    local_index local{};
    for (int j = 0; j < D; ++j)
      local[j] = to_local(j, global[j]);
    return local;
  }
  /// The cell `global` stands for: wrapped into [0, N) in periodic
  /// dimensions; std::nullopt where it lies outside a non-periodic dimension.
  std::optional<long> wrap(int dim, long global) const {
    const long n = global_extent_[dim];
    if (global >= 0 && global < n) return global;
    if (!decomposition_->periodic()[dim]) return std::nullopt;
    return ((global % n) + n) % n;
  }
  std::optional<global_index> wrap(const global_index& global) const {
    global_index wrapped{};
    for (int j = 0; j < D; ++j) {
      const std::optional<long> w = wrap(j, global[j]);
      if (!w) return std::nullopt;
      wrapped[j] = *w;
    }
    return wrapped;
  }
  /// True when this process owns interior cell `global` (no wrapping).
  bool owns(const global_index& global) const {
    for (int j = 0; j < D; ++j)
      if (global[j] < global_offset_[j] || global[j] >= global_offset_[j] + interior_[j])
        return false;
    return true;
  }
  bool is_interior(const local_index& local) const {
    for (int j = 0; j < D; ++j)
      if (local[j] < ghost_lo_[j] || local[j] >= ghost_lo_[j] + interior_[j]) return false;
    return true;
  }

  /// A policy over the local interior indices: MDRangePolicy for D >= 2,
  /// iterating row-major as the fields are laid out (a device's default order
  /// is the other one), RangePolicy for D == 1 (MDRangePolicy needs rank 2-6).
  template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
  auto interior_policy() const {
    if constexpr (D == 1) {
      return Kokkos::RangePolicy<ExecutionSpace>(ghost_lo_[0], ghost_lo_[0] + interior_[0]);
    } else {
      using Policy = Kokkos::MDRangePolicy<
          ExecutionSpace, Kokkos::Rank<D, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
      typename Policy::point_type first{}, last{};
      for (int j = 0; j < D; ++j) {
        first[j] = ghost_lo_[j];
        last[j] = ghost_lo_[j] + interior_[j];
      }
      return Policy(first, last);
    }
  }

  /// The array layout the halo exchange works on (element type `element`).
  iso::ArrayLayout layout(MPI_Datatype element) const {
    iso::ArrayLayout layout;
    layout.interior.assign(interior_.begin(), interior_.end());
    layout.ghost_lo.assign(ghost_lo_.begin(), ghost_lo_.end());
    layout.ghost_hi.assign(ghost_hi_.begin(), ghost_hi_.end());
    layout.global_offset.assign(global_offset_.begin(), global_offset_.end());
    layout.element = element;
    return layout;
  }

  /// A new field with this grid's ghost layers (zero-initialized; not collective).
  template <class T, class... Properties>
  Field<T, D, Properties...> make_field(const std::string& name) const {
    return make_field_impl<T, Properties...>(name, std::make_index_sequence<D>{});
  }

  /// A persistent halo exchange of one field, bound to halo_pattern(options)
  /// (collective over the grid's communicator). The exchange keeps the View's
  /// memory alive. options.transport picks datatypes or packed (automatic:
  /// datatypes where the host may access the memory, packed otherwise; see
  /// HaloExchange); `space` is the execution space instance it fences and
  /// packs on (start(space) may change it).
  template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
  HaloExchange halo_exchange(const View& field, const HaloOptions& options = {},
                             const HaloExchange::execution_space& space = {}) const {
    return make_exchange(std::vector<View>{field}, options, space);
  }
  /// One exchange for a group of fields of the same type (one message per
  /// neighbor and round carries all of them). Known limitation of halo/ (see
  /// the issue note): with the datatype transport, torus and direct size
  /// their forwarding slots by the true extent of the group's datatype, i.e.
  /// the address span from the first to the last field; fields allocated far
  /// apart (heap vs mmap) can make that allocation fail. linear and mpi, and
  /// the packed transport (whose blocks are contiguous), are unaffected.
  template <class View>
  HaloExchange halo_exchange(std::initializer_list<View> fields, const HaloOptions& options = {},
                             const HaloExchange::execution_space& space = {}) const {
    return make_exchange(std::vector<View>(fields), options, space);
  }
  template <class View>
  HaloExchange halo_exchange(const std::vector<View>& fields, const HaloOptions& options = {},
                             const HaloExchange::execution_space& space = {}) const {
    return make_exchange(fields, options, space);
  }

  /// Collective: compares two fields of this grid bitwise (ghost cells, plus
  /// the interior when `interior_too`); `message` names the first mismatch
  /// over all ranks by rank, direction and global index.
  template <class View>
  iso::HaloValidation compare(const View& first, const View& second,
                              bool interior_too = false) const {
    using value_type = typename View::non_const_value_type;
    std::string error = check_field("compare", first, 0);
    if (error.empty()) error = check_field("compare", second, 1);
    iso::agree_on_errors(decomposition_->comm(), "isostencil::core::Grid::compare", error);
    const auto host_first = host_copy(first);
    const auto host_second = host_copy(second);
    return detail::compare_cells(*decomposition_, "isostencil::core::Grid::compare",
                                 layout(mpi_datatype<value_type>::get()), host_first.data(),
                                 host_second.data(), interior_too);
  }

  /// "3-D grid: <decomposition>; stencil <stencil>; ghosts lo (..) hi (..)".
  std::string describe() const {
    std::ostringstream text;
    text << D << "-D grid: " << decomposition_->describe() << "; stencil " << stencil_.describe();
    if (depth_ > 1) text << "; halo depth " << depth_ << " (" << halo_stencil_.describe() << ")";
    return text.str();
  }

private:
  // `agreed`: the caller agreed on grid_agreement's checks (and depth >= 1).
  Grid(std::shared_ptr<const Decomposition> decomposition, Stencil stencil, int depth, bool agreed)
      : decomposition_(std::move(decomposition)),
        stencil_(std::move(stencil)),
        depth_(depth),
        halo_stencil_(stencil_.repeated(depth_)),
        geometry_(detail::grid_geometry("isostencil::core::Grid", *decomposition_, stencil_, halo_stencil_, depth_, D,
                                        agreed)),
        reach_(stencil_.geometry().widths),
        patterns_(std::make_shared<detail::HaloPatterns>()) {
    for (int j = 0; j < D; ++j) {
      ghost_lo_[j] = geometry_.widths.lo[j];
      ghost_hi_[j] = geometry_.widths.hi[j];
      interior_[j] = decomposition_->local_extent()[j];
      field_extent_[j] = ghost_lo_[j] + interior_[j] + ghost_hi_[j];
      global_extent_[j] = decomposition_->global_extent()[j];
      global_offset_[j] = decomposition_->global_offset()[j];
    }
  }

  static int checked_depth(int depth) {
    if (depth < 1)
      throw iso::Error("isostencil::core::Grid: halo depth must be >= 1, got " +
                       std::to_string(depth));
    return depth;
  }

  template <class T, class... Properties, std::size_t... I>
  Field<T, D, Properties...> make_field_impl(const std::string& name,
                                             std::index_sequence<I...>) const {
    return Field<T, D, Properties...>(name, static_cast<std::size_t>(field_extent_[I])...);
  }

  template <class View>
  std::string check_field(const char* what, const View& field, std::size_t index) const {
    static_assert(Kokkos::is_view<View>::value, "fields are Kokkos::Views");
    static_assert(static_cast<int>(View::rank) == D,
                  "the field's rank differs from the grid's dimension");
    static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                  "fields must be LayoutRight (row-major), as make_field gives them");
    static_assert(has_mpi_datatype<typename View::non_const_value_type>::value,
                  "no MPI datatype for this element type: specialize "
                  "isostencil::core::mpi_datatype");
    const std::string which =
        std::string(what) + ": field " + std::to_string(index) + " (\"" + field.label() + "\")";
    if (field.data() == nullptr) return which + " is not allocated";
    std::size_t cells = 1;
    for (int j = 0; j < D; ++j) {
      cells *= field.extent(j);
      if (field.extent(j) != static_cast<std::size_t>(field_extent_[j]))
        return which + " has extent " + std::to_string(field.extent(j)) + " in dimension " +
               std::to_string(j) + ", the grid's fields have " + std::to_string(field_extent_[j]) +
               " (ghost " + std::to_string(ghost_lo_[j]) + " + interior " +
               std::to_string(interior_[j]) + " + ghost " + std::to_string(ghost_hi_[j]) +
               "); make it with Grid::make_field";
    }
    if (!field.span_is_contiguous() || field.span() != cells)
      return which + " is not contiguous (a padded View or a strided subview)";
    return {};
  }

  template <class View>
  HaloExchange make_exchange(const std::vector<View>& fields, const HaloOptions& options,
                             const HaloExchange::execution_space& space) const {
    static_assert(!std::is_const_v<typename View::value_type>,
                  "the halo exchange writes the ghost cells: pass non-const Views");
    using value_type = typename View::non_const_value_type;
    using memory_space = typename View::memory_space;
    constexpr bool default_space_reaches =
        Kokkos::SpaceAccessibility<HaloExchange::execution_space, memory_space>::accessible;
    constexpr bool host_space_reaches =
        Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, memory_space>::accessible;
    const char* where = "isostencil::core::Grid::halo_exchange";
    HaloExchange::Binding binding;
    binding.host_accessible = host_may_access<View>();
    binding.gpu_aware_mpi = options.gpu_aware_mpi;
    binding.pack_on_host = !default_space_reaches;
    binding.space = space;
    binding.transport = options.transport != HaloTransport::automatic ? options.transport
                        : binding.host_accessible                     ? HaloTransport::datatypes
                                                                      : HaloTransport::packed;
    std::string error;
    if (fields.empty()) error = "no fields to exchange";
    for (std::size_t f = 0; f < fields.size() && error.empty(); ++f) {
      error = check_field("halo_exchange", fields[f], f);
      for (void* other : binding.fields)
        if (error.empty() && other == fields[f].data())
          error = "field " + std::to_string(f) + " (\"" + fields[f].label() +
                  "\") appears twice in one exchange";
      binding.fields.push_back(fields[f].data());
      binding.keep_alive.emplace_back(fields[f]);
      using HostView = Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight,
                                    Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      binding.to_host.emplace_back([field = fields[f]](void* bytes) {
        Kokkos::deep_copy(HostView(static_cast<value_type*>(bytes), field.layout()), field);
      });
      binding.from_host.emplace_back([field = fields[f]](const void* bytes) {
        Kokkos::deep_copy(field, HostView(static_cast<value_type*>(const_cast<void*>(bytes)),
                                          field.layout()));
      });
    }
    const std::string memory = binding.host_accessible ? ""
                               : device_memory_simulated()
                                   ? "memory the host may not access (device memory simulated)"
                                   : std::string("device memory (") + memory_space::name() + ")";
    if (error.empty() && !binding.host_accessible && binding.transport == HaloTransport::datatypes &&
        !options.gpu_aware_mpi)
      error = "transport \"datatypes\" hands the fields to MPI, but they live in " + memory +
              " and gpu_aware_mpi is off; use transport \"packed\" (the default there), or "
              "gpu_aware_mpi with an MPI library that reads device memory";
    if (error.empty() && !binding.host_accessible && options.gpu_aware_mpi &&
        options.algorithm != iso::Algorithm::mpi)
      error = std::string("gpu_aware_mpi hands buffers in ") + memory +
              " to the collective, but algorithm " + iso::to_string(options.algorithm) +
              " copies blocks on the host (staging slots, blocks a process sends itself); use "
              "algorithm mpi, or gpu_aware_mpi off (the packed transport stages through the host)";
    if (error.empty() && binding.transport == HaloTransport::packed && !default_space_reaches &&
        !host_space_reaches)
      error = std::string("no execution space of this build can access the fields' memory (") +
              memory_space::name() + ") for the packed transport's kernels";
    // The agreement also asks whether every rank holds a pattern to reuse
    // (this grid's, or another grid's of equal arguments), so that reuse
    // costs no collective call of its own; and, where one is found, whether
    // every rank bound the exchange to it locally and is ready to make its
    // operation without a collective call, with the same fingerprint
    // (iso::HaloExchange::Deferred: auto's kept choice,
    // docs/design/cost-model.md#kept-choices). Otherwise every rank drops
    // that binding and binds collectively.
    const std::vector<int> interior(interior_.begin(), interior_.end());
    const std::vector<long> offset(global_offset_.begin(), global_offset_.end());
    std::shared_ptr<const HaloPattern> found =
        error.empty() ? patterns_->find(*decomposition_, interior, geometry_, offset, options) : nullptr;
    binding.decomposition = decomposition_;
    binding.element = mpi_datatype<value_type>::get();
    std::optional<HaloExchange> bound;
    iso::HaloExchange::Deferred deferred;
    if (found) {
      HaloExchange::Binding local = binding;
      local.pattern = found;
      try {
        bound.emplace(std::move(local), deferred);
      } catch (const iso::Error& e) {
        error = e.what();  // the same error on every rank, below
      }
    }
    const std::vector<bool> everywhere = iso::agree_on_errors_and_each(
        decomposition_->comm(), where, error, {},
        {iso::Found{found != nullptr, 0}, iso::Found{deferred.ready, deferred.fingerprint}});
    binding.pattern = patterns_->get(*decomposition_, interior, geometry_, offset, options,
                                     everywhere[0] ? std::move(found) : nullptr);
    if (everywhere[1]) {
      bound->finish();
      return std::move(*bound);
    }
    bound.reset();
    return HaloExchange(std::move(binding));
  }

  std::shared_ptr<const Decomposition> decomposition_;
  Stencil stencil_;
  int depth_ = 1;
  Stencil halo_stencil_;
  iso::HaloGeometry geometry_;
  iso::HaloWidths reach_;
  std::shared_ptr<detail::HaloPatterns> patterns_;  // shared by copies of the grid
  local_index interior_{}, ghost_lo_{}, ghost_hi_{}, field_extent_{};
  global_index global_extent_{}, global_offset_{};
};

}  // namespace isostencil::core
