// The isostencil driver as a library (target isostencil::driver): a program
// registers its own kernels by name, then hands its command line to
// driver::main, and gets what `isostencil` has — `run DECK` (input decks,
// progress lines, parallel HDF5 + XDMF output, checkpoints and --restart,
// halo validation, a JSON summary), `check DECK`, `halo-check`, `plan`,
// `demo`, `--help` and `--version`.
//
//   template <int D>
//   struct Heat {                       // one cell's update; see CellModel below
//     double alpha, dt, q;
//     explicit Heat(const isostencil::deck::Deck& deck)
//         : alpha(deck.kernel.floating("alpha")), dt(deck.kernel.floating("dt")),
//           q(deck.kernel.floating("heat_source")) {}
//     std::string describe() const { return "u_t = alpha lap u + q"; }
//     template <class U>
//     KOKKOS_INLINE_FUNCTION double operator()(const U& u) const { ... }
//   };
//
//   int main(int argc, char** argv) {
//     isostencil::deck::DeckKernel heat{"heat", "explicit heat equation", "star", "gaussian", false,
//         {{"alpha", isostencil::deck::DeckValueKind::floating, "0.2", "> 0", "diffusivity"}, ...}};
//     isostencil::driver::register_cell_kernel<Heat>(heat);
//     return isostencil::driver::main(argc, argv, {"heat", "", "1.0"});
//   }
//
// A deck then selects the kernel with [kernel] name = "heat" and sets its
// parameters as [kernel] keys; every other table works as for `isostencil`.
// The driver's own kernels (jacobi, life, advection) register the same way,
// first (register_builtin_kernels), so jacobi stays the default kernel.name.
// Complete example: apps/examples/heat/ (docs/user-kernels.md).
#pragma once

#include "isostencil/driver/context.hpp"
#include "isostencil/driver/models.hpp"
#include "isostencil/driver/run.hpp"

#include "isostencil/core/grid.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/deck/kernel.hpp"
#include "isostencil/kernels/user_kernel.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace isostencil::driver {

/// The isostencil version the library was built as ("0.1.0").
const char* version();

/// How a program built on the driver names itself in --help, --version and
/// error messages.
struct Program {
  std::string name = "isostencil";
  std::string description;  ///< first line of --help; empty: the driver's own
  std::string version;      ///< --version prints "<version> (isostencil <version()>)"; empty: version()
};

/// A kernel decks can name: its deck description and its runner.
struct KernelEntry {
  deck::DeckKernel deck;
  /// Runs the deck (collective; returns the exit code): dispatch_dims<Model>.
  std::function<int(const Setup&)> run;
  /// Optional checks of the deck made before anything is created (by `run`
  /// and `check`); they must throw the same deck::DeckError on every rank
  /// (deck.fail(key, why)), e.g. for a parameter out of range.
  std::function<void(const deck::Deck&)> check;
};

/// Registers a kernel (on every rank, before main()), after the driver's own
/// (register_builtin_kernels). Throws iso::Error for a name that is taken or a
/// parameter the deck schema cannot hold.
void register_kernel(KernelEntry entry);
/// Registers the driver's kernels — jacobi, life, advection — as any program
/// registers its own, and describes the generic deck keys in their terms (the
/// docs/deck-keys.md). Idempotent; driver::main and register_kernel call it,
/// and so must a program that parses decks without them (tests).
void register_builtin_kernels();
/// The registered kernel of that name, or nullptr.
const KernelEntry* find_kernel(const std::string& name);

/// Registers a Model class template (the interface in run.hpp, for D = 1..4).
template <template <int> class Model>
void register_model(deck::DeckKernel deck, std::function<void(const deck::Deck&)> check = {}) {
  register_kernel({std::move(deck), &dispatch_dims<Model>, std::move(check)});
}

/// The driver's command line (MPI_Init to MPI_Finalize inside); returns the
/// process exit code: 0 success, 1 a run that does not validate, 2 bad input.
int main(int argc, char** argv, const Program& program = {});

/// Sets a field's interior from the deck's [init] table: constant (value),
/// random (low, high, seed: a hash of the global index) or gaussian (center,
/// width, amplitude). Each is a function of the global index alone, so the
/// field does not depend on the decomposition. Ghost cells stay as they are.
template <int D, class View>
void initialize_field(const deck::Deck& deck, const core::Grid<D>& grid, const View& field) {
  const deck::Deck::Init& init = deck.init;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  for_each_interior<D>(grid, [&](const std::array<int, D>& local, const std::array<long, D>& global) {
    double value = 0.0;
    if (init.type == "random") {
      value = init.low + (init.high - init.low) * random_unit(init.seed, global_linear<D>(grid, global));
    } else if (init.type == "gaussian") {
      double r2 = 0.0;
      for (int j = 0; j < D; ++j) {
        const double d = static_cast<double>(global[j]) - init.center[static_cast<std::size_t>(j)];
        r2 += d * d;
      }
      value = init.amplitude * std::exp(-r2 / (2.0 * init.width * init.width));
    } else {
      value = init.value;
    }
    host.data()[local_offset<D>(grid, local)] = static_cast<typename View::non_const_value_type>(value);
  });
  Kokkos::deep_copy(field, host);
}

/// What a cell kernel's checks() sees at the end of a run.
struct CellRun {
  FieldStats initial;   ///< the field at the first step (after a restart: the restored one)
  FieldStats final;     ///< the field at the last step
  long first_step = 0;
  long last_step = 0;
  long cells = 0;       ///< global interior cells
  bool periodic = true; ///< every dimension periodic
};

namespace detail {
template <class K, class = void>
struct has_time_step : std::false_type {};
template <class K>
struct has_time_step<K, std::void_t<decltype(std::declval<const K&>().time_step())>> : std::true_type {};
template <class K, class = void>
struct has_checks : std::false_type {};
template <class K>
struct has_checks<K, std::void_t<decltype(std::declval<const K&>().checks(std::declval<const CellRun&>()))>>
    : std::true_type {};
}  // namespace detail

/// The Model of a kernel given by one cell's update on one double field "u"
/// over the deck's stencil (stencil.shape, radius, offsets, weights).
/// Kernel<D> provides:
///   explicit Kernel(const deck::Deck& deck);   // reads deck.kernel.floating("key"), ...
///   std::string describe() const;              // one line for the header and the summary
///   template <class U> KOKKOS_INLINE_FUNCTION
///   double operator()(const U& u) const;       // u(offset...) / u.point(k): see user_kernel.hpp
/// and may provide
///   double time_step() const;                  // simulated time per step (default 1)
///   std::vector<Check> checks(const CellRun&) const;  // self-checks at the end of a run
/// The kernel is copied to the device: plain values only. Beyond bounded
/// sides the ghost cells hold 0.
template <int D, template <int> class Kernel>
class CellModel {
public:
  using Field = core::Field<double, D>;

  CellModel(const Setup& setup, std::shared_ptr<const core::Decomposition> decomposition)
      : setup_(setup),
        deck_(*setup.deck),
        kernel_(deck_),
        grid_(make_grid<D>(deck_, std::move(decomposition), deck_.make_stencil(), setup.depth)) {
    Field u = grid_.template make_field<double>("u");
    if (setup.restart)
      setup.restart->read("u", grid_, u);
    else
      initialize_field<D>(deck_, grid_, u);
    initial_ = field_stats<D>(grid_, u);
    kernels::StencilUpdateOptions options;
    options.overlap = deck_.run.overlap;
    options.halo = halo_options(deck_);
    options.label = "isostencil::" + deck_.kernel.name;
    try {
      update_.emplace(kernels::make_stencil_update(grid_, u, grid_.template make_field<double>("u next"),
                                                   kernel_, options));
    } catch (const iso::Error& error) {
      fail_with(deck_, "stencil.shape", error);
    }
  }

  const core::Decomposition& decomposition() const { return grid_.decomposition(); }
  std::string stencil_text() const { return stencil_and_depth<D>(grid_); }
  std::string describe() const { return kernel_.describe(); }
  std::vector<std::string> fields() const { return {"u"}; }

  kernels::UpdateTimes advance(long steps) { return update_->advance(steps); }

  Metric measure(long) {
    const FieldStats stats = field_stats<D>(grid_, update_->input());
    Metric metric;
    metric.name = "sum";
    metric.value = stats.sum;
    char text[128];
    std::snprintf(text, sizeof text, "sum %.10e  range [%.6g, %.6g]", stats.sum, stats.min, stats.max);
    metric.text = text;
    metric.figures = {{"sum", stats.sum}, {"min", stats.min}, {"max", stats.max}};
    return metric;
  }

  iso::HaloValidation validate_halo() { return update_->input_halo().validate(); }
  const iso::Operation& halo_operation() { return update_->input_halo().operation(); }
  const std::string& halo_note() { return update_->input_halo().pattern().algorithm_note(); }
  double time(long step) const { return static_cast<double>(step) * time_step(); }
  void write_fields(core::FieldSeries& series) { series.write("u", grid_, update_->input()); }
  void write_state(core::CheckpointWriter& writer) { writer.write("u", grid_, update_->input()); }
  std::string first_non_finite() { return driver::first_non_finite<D>("u", grid_, update_->input()); }

  std::vector<Check> checks(long step) {
    CellRun run;
    run.initial = initial_;
    run.final = field_stats<D>(grid_, update_->input());
    run.first_step = setup_.start_step;
    run.last_step = step;
    run.cells = 1;
    for (const long n : grid_.decomposition().global_extent()) run.cells *= n;
    for (const bool p : grid_.decomposition().periodic()) run.periodic = run.periodic && p;
    std::vector<Check> checks;
    checks.push_back({"finite", std::isfinite(run.final.sum) && std::isfinite(run.final.sum_abs),
                      "sum " + std::to_string(run.final.sum)});
    if constexpr (detail::has_checks<Kernel<D>>::value)
      for (Check& check : kernel_.checks(run)) checks.push_back(std::move(check));
    return checks;
  }

private:
  double time_step() const {
    if constexpr (detail::has_time_step<Kernel<D>>::value)
      return kernel_.time_step();
    else
      return 1.0;
  }

  const Setup& setup_;
  const deck::Deck& deck_;
  Kernel<D> kernel_;
  core::Grid<D> grid_;
  std::optional<kernels::StencilUpdate<D, Field, Kernel<D>>> update_;
  FieldStats initial_;
};

/// CellModel<D, Kernel> as a template of D alone (what dispatch_dims takes).
template <template <int> class Kernel>
struct CellModelOf {
  template <int D>
  using type = CellModel<D, Kernel>;
};

/// Registers a kernel given by one cell's update (CellModel).
template <template <int> class Kernel>
void register_cell_kernel(deck::DeckKernel deck, std::function<void(const deck::Deck&)> check = {}) {
  register_kernel({std::move(deck), &dispatch_dims<CellModelOf<Kernel>::template type>, std::move(check)});
}

}  // namespace isostencil::driver
