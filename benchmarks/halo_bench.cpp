// isostencil-bench-halo: time per step of a stencil code split into kernel,
// halo exchange and other, with the halo exchanged by each contender:
//
//   linear, torus, direct, auto   isomorphic alltoallw over subarray blocks
//                                 (core::HaloExchange, one algorithm each)
//   iso-mpi                       the library's Algorithm::mpi path (on request)
//   naive                         the straightforward exchange: one
//                                 MPI_Isend/MPI_Irecv of a subarray type per
//                                 direction, built here (not through halo/)
//   mpi-neighbor                  plain MPI_Neighbor_alltoallw with the same
//                                 subarray types on an adjacent dist graph
//                                 built here (not through halo/)
//   packed-linear, packed-torus,  the same algorithms on core::HaloExchange's
//   packed-direct, packed-auto,   packed transport (Kokkos pack kernels, one
//   packed-iso-mpi                contiguous buffer, alltoallv); each is also
//                                 reported as a ratio to its datatype twin
//                                 (halo time packed / datatypes, same run)
//
// Cases: jacobi7 / jacobi27 (3-D, doubles, kernels' star and box sweeps),
// life2d / life3d (bytes, B3/S23 and B5/S45 on the Moore box). Every local
// size n gives n^D cells per rank on the MPI_Dims_create grid, periodic.
//
// Correctness first: for each case every contender's exchange of a patterned
// field is compared bitwise with the naive exchange's ghosts; any mismatch
// ends the run with exit code 1 before anything is timed.
//
// Method (the paper's, as iso-bench): per repetition MPI_Barrier, then
// `steps` steps (exchange, kernel, swap); each rank's kernel, halo and total
// times are reduced with MPI_MAX; the contenders take turns repetition by
// repetition (same load for all, ratios within one run); Tukey's rule (k * IQR, k = 3) removes
// outliers per component and the median of the rest, divided by `steps`, is
// the time per step. other = total - kernel - halo (per rank, then max).
//
// --phases: then `reps` more repetitions per packed contender with phase
// timing on (HaloExchange::time_phases, fences between phases): pack, to
// host, MPI, to device, unpack, and the staging (the two copies) over the
// exchange. Per repetition the rank with the longest exchange gives all its
// figures; the row shows the repetition of median exchange, whole (its
// phases are disjoint parts of it). Unstaged buffers: copies 0, and why.
//
//   mpirun -np 2 isostencil-bench-halo --csv halo.csv
#include "isostencil/kernels/jacobi.hpp"
#include "isostencil/kernels/life.hpp"

#include "bench_main.hpp"
#include "isostencil/bench/report.hpp"
#include "isostencil/bench/stats.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace isostencil;

struct Settings {
  std::vector<std::string> cases{"jacobi7", "jacobi27", "life2d", "life3d"};
  std::vector<long> sizes3{16, 64, 128};
  std::vector<long> sizes2{256, 1024, 4096};
  std::vector<std::string> contenders{"linear", "torus", "direct", "auto", "naive", "mpi-neighbor"};
  int reps = 20;
  int warmup = 3;
  long steps = 0;           ///< steps per repetition; 0: about 1M cell updates, 1..50
  double tukey = 3.0;
  bool phases = false;      ///< time the packed transport's phases (extra repetitions)
  std::string csv;
};

/// Exchanges the ghosts of field 0 or 1 of a case.
class Exchanger {
public:
  virtual ~Exchanger() = default;
  virtual void exchange(int field) = 0;
  virtual std::string chosen() const { return {}; }
  /// Packed transport: phase times of later exchanges go to `sink` (null:
  /// off); false where there are no phases to time.
  virtual bool time_phases(core::HaloPhaseTimes* /*sink*/) { return false; }
  /// Packed transport: how its buffers reach MPI.
  virtual std::string staging() const { return {}; }
};

class IsoExchanger : public Exchanger {
public:
  explicit IsoExchanger(std::vector<core::HaloExchange> halos) : halos_(std::move(halos)) {}
  void exchange(int field) override { halos_[static_cast<std::size_t>(field)].run(); }
  std::string chosen() const override { return iso::to_string(halos_[0].algorithm()); }
  bool time_phases(core::HaloPhaseTimes* sink) override {
    if (halos_[0].transport() != core::HaloTransport::packed) return false;
    for (core::HaloExchange& halo : halos_) halo.time_phases(sink);
    return true;
  }
  std::string staging() const override {
    if (halos_[0].transport() != core::HaloTransport::packed) return {};
    if (!halos_[0].host_staged())
      return halos_[0].gpu_aware_mpi() ? "none: GPU-aware MPI" : "none: host memory space";
    // Every block to this rank itself (one rank, periodic): no buffers, no copies.
    return halos_[0].direct_blocks() == halos_[0].directions().size() ? "none: no block leaves the rank"
                                                                       : "host-staged";
  }

private:
  std::vector<core::HaloExchange> halos_;
};

/// MPI_Neighbor_alltoallw on MPI_Dist_graph_create_adjacent: edge i carries
/// ghost direction e_i (received from x + e_i, sent to x - e_i), blocks are
/// MPI_Type_create_subarray of the field, counts 1, displacements 0. With
/// `point_to_point`, the same blocks as one MPI_Irecv/MPI_Isend each on the
/// Cartesian communicator, tagged by direction (the straightforward exchange).
class NeighborExchanger : public Exchanger {
public:
  NeighborExchanger(MPI_Comm cart, const iso::ArrayLayout& layout, const iso::OffsetList& directions,
                    std::vector<void*> fields, bool point_to_point = false)
      : fields_(std::move(fields)), cart_(cart) {
    const int d = layout.dims();
    std::vector<int> coords(static_cast<std::size_t>(d)), extent = layout.extent();
    int me = 0;
    MPI_Comm_rank(cart, &me);
    MPI_Cart_coords(cart, me, d, coords.data());
    std::vector<int> sources, destinations;
    for (int i = 0; i < directions.size(); ++i) {
      std::vector<int> plus(coords), minus(coords), start_send(d), start_recv(d), size(d);
      for (int j = 0; j < d; ++j) {
        const int e = directions[i][j];
        plus[j] += e;
        minus[j] -= e;
        const int lo = layout.ghost_lo[j], n = layout.interior[j], hi = layout.ghost_hi[j];
        // Ghost layer e_j of mine; the neighbor x - e needs my cells on side -e_j.
        if (e < 0) {
          start_recv[j] = 0;
          size[j] = lo;
          start_send[j] = n;  // the last lo interior cells
        } else if (e > 0) {
          start_recv[j] = lo + n;
          size[j] = hi;
          start_send[j] = lo;  // the first hi interior cells
        } else {
          start_recv[j] = lo;
          size[j] = n;
          start_send[j] = lo;
        }
      }
      int source = MPI_PROC_NULL, destination = MPI_PROC_NULL;
      MPI_Cart_rank(cart, plus.data(), &source);  // periodic: coordinates wrap
      MPI_Cart_rank(cart, minus.data(), &destination);
      sources.push_back(source);
      destinations.push_back(destination);
      MPI_Datatype send = MPI_DATATYPE_NULL, recv = MPI_DATATYPE_NULL;
      MPI_Type_create_subarray(d, extent.data(), size.data(), start_send.data(), MPI_ORDER_C,
                               layout.element, &send);
      MPI_Type_create_subarray(d, extent.data(), size.data(), start_recv.data(), MPI_ORDER_C,
                               layout.element, &recv);
      MPI_Type_commit(&send);
      MPI_Type_commit(&recv);
      send_types_.push_back(send);
      recv_types_.push_back(recv);
    }
    const int degree = static_cast<int>(sources.size());
    sources_ = sources, destinations_ = destinations;
    requests_.assign(2 * static_cast<std::size_t>(degree), MPI_REQUEST_NULL);  // MPI_Waitall leaves them null
    if (point_to_point) return;
    MPI_Dist_graph_create_adjacent(cart, degree, sources.data(), MPI_UNWEIGHTED, degree,
                                   destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_);
    counts_.assign(static_cast<std::size_t>(degree), 1);
    displs_.assign(static_cast<std::size_t>(degree), 0);
  }
  ~NeighborExchanger() override {
    for (MPI_Datatype& t : send_types_) MPI_Type_free(&t);
    for (MPI_Datatype& t : recv_types_) MPI_Type_free(&t);
    if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  }
  NeighborExchanger(const NeighborExchanger&) = delete;
  NeighborExchanger& operator=(const NeighborExchanger&) = delete;
  void exchange(int field) override {
    Kokkos::fence();
    void* data = fields_[static_cast<std::size_t>(field)];
    if (graph_ == MPI_COMM_NULL) {
      const int n = static_cast<int>(sources_.size());
      for (int i = 0; i < n; ++i)
        MPI_Irecv(data, 1, recv_types_[static_cast<std::size_t>(i)], sources_[static_cast<std::size_t>(i)], i, cart_,
                  &requests_[static_cast<std::size_t>(i)]);
      for (int i = 0; i < n; ++i)
        MPI_Isend(data, 1, send_types_[static_cast<std::size_t>(i)], destinations_[static_cast<std::size_t>(i)], i,
                  cart_, &requests_[static_cast<std::size_t>(n + i)]);
      MPI_Waitall(2 * n, requests_.data(), MPI_STATUSES_IGNORE);
      return;
    }
    MPI_Neighbor_alltoallw(data, counts_.data(), displs_.data(), send_types_.data(), data,
                           counts_.data(), displs_.data(), recv_types_.data(), graph_);
  }

private:
  std::vector<void*> fields_;
  std::vector<MPI_Datatype> send_types_, recv_types_;
  std::vector<int> counts_;
  std::vector<MPI_Aint> displs_;
  MPI_Comm graph_ = MPI_COMM_NULL, cart_ = MPI_COMM_NULL;
  std::vector<int> sources_, destinations_;
  std::vector<MPI_Request> requests_;
};

/// Calls body(linear host index, global row-major index, interior?) for every
/// cell of a grid's field, ghosts included (ghost global indices unwrapped).
template <int D, class Body>
void for_all_cells(const core::Grid<D>& grid, const Body& body) {
  long cells = 1;
  for (int j = 0; j < D; ++j) cells *= grid.field_extent()[j];
  std::array<int, D> x{};
  for (long at = 0; at < cells; ++at) {
    long rest = at;
    for (int j = D - 1; j >= 0; --j) {
      x[j] = static_cast<int>(rest % grid.field_extent()[j]);
      rest /= grid.field_extent()[j];
    }
    long global = 0;
    bool interior = true;
    for (int j = 0; j < D; ++j) {
      const long g = grid.to_global(j, x[j]);
      interior = interior && x[j] >= grid.ghost_lo()[j] && x[j] < grid.ghost_lo()[j] + grid.interior_extent()[j];
      global = global * (grid.global_extent()[j] + 2) + (g + 1);
    }
    body(at, global, interior);
  }
}

/// One case: a grid, two fields and the kernel updating field `from` into 1 - from.
template <int D, class T>
struct Problem {
  std::string name;
  long n = 0;
  std::unique_ptr<core::Grid<D>> grid;
  core::Field<T, D> fields[2];
  std::function<void(int)> kernel;
  std::function<void()> init;  ///< valid contents for the kernel (after the check)
};

/// Interior cells distinct per global index, ghosts a sentinel.
template <int D, class T>
void fill_pattern(const core::Grid<D>& grid, const core::Field<T, D>& field) {
  auto host = Kokkos::create_mirror_view(field);
  T* data = host.data();
  for_all_cells<D>(grid, [&](long at, long global, bool interior) {
    if constexpr (std::is_same_v<T, double>)
      data[at] = interior ? 1.0 + static_cast<double>(global) : -1.0;
    else
      data[at] = interior ? static_cast<T>(1 + (global * 131 + 7) % 251) : T(0);
  });
  Kokkos::deep_copy(field, host);
}

std::unique_ptr<Problem<3, double>> make_jacobi(long n, bool box) {
  auto p = std::make_unique<Problem<3, double>>();
  p->name = box ? "jacobi27" : "jacobi7";
  p->n = n;
  const std::array<int, 3> dims = isobench::process_dims<3>();
  p->grid = std::make_unique<core::Grid<3>>(
      MPI_COMM_WORLD, core::Grid<3>::global_index{n * dims[0], n * dims[1], n * dims[2]},
      std::array<bool, 3>{true, true, true},
      box ? kernels::box_laplacian(3, 1.0) : kernels::star_laplacian(3, 1.0), dims);
  for (auto& f : p->fields) f = p->grid->make_field<double>("u");
  Problem<3, double>* raw = p.get();
  const auto stride = kernels::detail::layout_right_strides<3>(p->fields[0]);
  const kernels::InteriorSplit<3> split = kernels::split_interior(*p->grid);
  if (box) {
    const std::vector<double> w = kernels::box_laplacian_class_weights(3);
    Kokkos::Array<double, 4> weight;
    for (int k = 0; k <= 3; ++k) weight[k] = w[static_cast<std::size_t>(k)];
    const double inverse_diag = 1.0 / -w[0];
    p->kernel = [raw, stride, split, weight, inverse_diag](int from) {
      const kernels::detail::BoxSweep<3, false, false> functor{
          raw->fields[from].data(), raw->fields[1 - from].data(), nullptr, stride, weight, inverse_diag};
      kernels::sweep_cells<3>("halo bench jacobi27", split.interior, functor);
    };
  } else {
    p->kernel = [raw, stride, split](int from) {
      const kernels::detail::StarSweep<3, false, false> functor{
          raw->fields[from].data(), raw->fields[1 - from].data(), nullptr, stride, 1.0 / 6, 1.0 / 6, -6.0, 1.0};
      kernels::sweep_cells<3>("halo bench jacobi7", split.interior, functor);
    };
  }
  p->init = [raw] {
    fill_pattern<3, double>(*raw->grid, raw->fields[0]);
    fill_pattern<3, double>(*raw->grid, raw->fields[1]);
  };
  return p;
}

template <int D>
std::unique_ptr<Problem<D, std::uint8_t>> make_life(long n) {
  auto p = std::make_unique<Problem<D, std::uint8_t>>();
  p->name = D == 2 ? "life2d" : "life3d";
  p->n = n;
  const std::array<int, D> dims = isobench::process_dims<D>();
  typename core::Grid<D>::global_index global{};
  std::array<bool, D> periodic{};
  for (int j = 0; j < D; ++j) {
    global[j] = n * dims[j];
    periodic[j] = true;
  }
  p->grid = std::make_unique<core::Grid<D>>(MPI_COMM_WORLD, global, periodic, core::Stencil::box(D, 1), dims);
  for (auto& f : p->fields) f = p->grid->template make_field<std::uint8_t>("cells");
  Problem<D, std::uint8_t>* raw = p.get();
  Kokkos::Array<std::ptrdiff_t, D> stride;
  stride[D - 1] = 1;
  for (int j = D - 2; j >= 0; --j) stride[j] = stride[j + 1] * static_cast<std::ptrdiff_t>(p->fields[0].extent(j + 1));
  const kernels::LifeRule rule = D == 2 ? kernels::LifeRule("B3/S23", 2) : kernels::LifeRule("B5/S45", 3);
  const auto table = kernels::detail::LifeTable<D>::from(rule);
  const kernels::InteriorSplit<D> split = kernels::split_interior(*p->grid);
  p->kernel = [raw, stride, table, split](int from) {
    const kernels::detail::LifeUpdate<D> update{raw->fields[from], raw->fields[1 - from], stride, table};
    kernels::for_each_cell<D>("halo bench life", split.interior, update);
  };
  p->init = [raw] {
    for (auto& f : raw->fields) {
      auto host = Kokkos::create_mirror_view(f);
      std::uint8_t* data = host.data();
      for_all_cells<D>(*raw->grid, [&](long at, long index, bool interior) {
        data[at] = interior ? kernels::life_random_cell(12345, static_cast<std::uint64_t>(index), 0.3) : 0;
      });
      Kokkos::deep_copy(f, host);
    }
  };
  return p;
}

struct Component {
  isobench::TukeySummary total, kernel, halo, other;
  /// Fastest repetition: on a loaded machine (ranks descheduled at random)
  /// the median can land on a slow mode; the minimum shows the undisturbed cost.
  double total_min = 0, halo_min = 0;
};

/// --phases: one repetition's figures, seconds per exchange.
struct Phases {
  bool measured = false;
  double exchange = 0, pack = 0, to_host = 0, mpi = 0, to_device = 0, unpack = 0;
  std::string staging;  ///< "host-staged", or "none: " and why (Exchanger::staging)
  double staging_seconds() const { return to_host + to_device; }
};

struct Row {
  std::string case_name;
  int dims = 0;
  long n = 0;
  std::string contender, chosen, status, note;
  long steps = 0;
  int reps = 0;
  Component stats;
  long halo_bytes = 0;  ///< ghost bytes received per rank and step
  std::string proc_dims;  ///< "2x1x1"
  /// packed-X: halo median over that of X (the datatype transport), same run; 0: none.
  double halo_vs_datatypes = 0, halo_min_vs_datatypes = 0;
  Phases phases;
};

template <int D, class T>
std::unique_ptr<Exchanger> make_exchanger(Problem<D, T>& p, const std::string& name) {
  std::vector<T*> pointers{p.fields[0].data(), p.fields[1].data()};
  if (name == "mpi-neighbor" || name == "naive")
    return std::make_unique<NeighborExchanger>(p.grid->comm(), p.grid->layout(core::mpi_datatype<T>::get()),
                                               p.grid->directions(), std::vector<void*>{pointers[0], pointers[1]},
                                               name == "naive");
  core::HaloOptions options;
  const std::string packed_prefix = "packed-";
  const bool packed = name.rfind(packed_prefix, 0) == 0;
  const std::string algorithm = packed ? name.substr(packed_prefix.size()) : name;
  options.algorithm = iso::parse_algorithm(algorithm == "iso-mpi" ? "mpi" : algorithm);
  options.transport = packed ? core::HaloTransport::packed : core::HaloTransport::datatypes;
  std::vector<core::HaloExchange> halos;
  halos.push_back(p.grid->halo_exchange(p.fields[0], options));
  halos.push_back(p.grid->halo_exchange(p.fields[1], options));
  return std::make_unique<IsoExchanger>(std::move(halos));
}

long ghost_bytes(const iso::ArrayLayout& layout, const iso::OffsetList& directions, int element) {
  long total = 0;
  for (int i = 0; i < directions.size(); ++i) {
    long cells = 1;
    for (int j = 0; j < layout.dims(); ++j) {
      const int e = directions[i][j];
      cells *= e < 0 ? layout.ghost_lo[j] : e > 0 ? layout.ghost_hi[j] : layout.interior[j];
    }
    total += cells;
  }
  return total * element;
}

/// Correctness first: each contender's exchange of patterned fields against
/// the naive exchange. Returns a row per contender and, in `exchangers`, the
/// contenders that passed (null for one that did not; then `failed`).
template <int D, class T>
std::vector<Row> check_contenders(const Settings& s, Problem<D, T>& p, long steps,
                                  std::vector<std::unique_ptr<Exchanger>>& exchangers, bool& failed) {
  const core::Grid<D>& grid = *p.grid;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // The reference: the naive exchange of the patterned field.
  auto reference = grid.template make_field<T>("reference");
  fill_pattern<D, T>(grid, reference);
  {
    core::HaloOptions options;
    options.algorithm = iso::Algorithm::linear;
    auto halo = grid.halo_exchange(reference, options);
    halo.run_naive();
  }
  const std::string proc_dims = isobench::format_dims(grid.decomposition().process_dims());
  std::vector<Row> rows;
  for (const std::string& name : s.contenders) {
    Row row;
    row.case_name = p.name;
    row.dims = D;
    row.n = p.n;
    row.contender = name;
    row.steps = steps;
    row.reps = s.reps;
    row.proc_dims = proc_dims;
    row.halo_bytes = ghost_bytes(grid.layout(core::mpi_datatype<T>::get()), grid.directions(), sizeof(T));
    std::unique_ptr<Exchanger> exchanger = make_exchanger(p, name);
    row.chosen = exchanger->chosen();
    // Correctness: both fields, patterned, exchanged once, ghosts vs naive.
    std::string mismatch;
    for (int f = 0; f < 2 && mismatch.empty(); ++f) {
      fill_pattern<D, T>(grid, p.fields[f]);
      exchanger->exchange(f);
      const iso::HaloValidation check = grid.compare(p.fields[f], reference, true);
      if (!check.ok) mismatch = check.message;
    }
    if (mismatch.empty()) {
      row.status = "ok";
      exchangers.push_back(std::move(exchanger));
    } else {
      row.status = "error";
      row.note = "ghosts differ from the naive exchange: " + mismatch;
      failed = true;
      if (rank == 0)
        std::fprintf(stderr, "isostencil-bench-halo: %s n=%ld %s: %s\n", p.name.c_str(), p.n, name.c_str(),
                     row.note.c_str());
      exchangers.push_back(nullptr);
    }
    rows.push_back(row);
  }
  return rows;
}

/// Times the checked contenders, `steps` steps per repetition, and fills
/// their rows' statistics.
template <int D, class T>
void time_contenders(const Settings& s, Problem<D, T>& p, long steps,
                     const std::vector<std::unique_ptr<Exchanger>>& exchangers, std::vector<Row>& rows) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Timing. The contenders take turns within each repetition (the starting
  // one rotates), so that all of them see the same stretch of machine load.
  p.init();
  int current = 0;
  for (auto& exchanger : exchangers)
    for (int w = 0; w < s.warmup; ++w) {
      exchanger->exchange(current);
      p.kernel(current);
      current = 1 - current;
    }
  Kokkos::fence();
  const std::size_t count = exchangers.size();
  std::vector<std::vector<double>> total(count), kernel(count), halo(count), other(count);
  for (int r = 0; r < s.reps; ++r)
    for (std::size_t turn = 0; turn < count; ++turn) {
      const std::size_t c = (turn + static_cast<std::size_t>(r)) % count;
      Exchanger& exchanger = *exchangers[c];
      double t[4] = {0, 0, 0, 0};  // total, kernel, halo, other
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (long k = 0; k < steps; ++k) {
        const double a = MPI_Wtime();
        exchanger.exchange(current);
        const double b = MPI_Wtime();
        p.kernel(current);
        Kokkos::fence();
        const double e = MPI_Wtime();
        t[2] += b - a;
        t[1] += e - b;
        current = 1 - current;
      }
      t[0] = MPI_Wtime() - start;
      t[3] = t[0] - t[1] - t[2];
      MPI_Allreduce(MPI_IN_PLACE, t, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      total[c].push_back(t[0] / steps);
      kernel[c].push_back(t[1] / steps);
      halo[c].push_back(t[2] / steps);
      other[c].push_back(t[3] / steps);
    }
  for (std::size_t c = 0; c < count; ++c) {
    Row& row = rows[c];
    row.stats.total = isobench::tukey_median(total[c], s.tukey);
    row.stats.kernel = isobench::tukey_median(kernel[c], s.tukey);
    row.stats.halo = isobench::tukey_median(halo[c], s.tukey);
    row.stats.other = isobench::tukey_median(other[c], s.tukey);
    row.stats.total_min = *std::min_element(total[c].begin(), total[c].end());
    row.stats.halo_min = *std::min_element(halo[c].begin(), halo[c].end());
    if (rank == 0)
      std::printf("  %-8s %5ld %-13s %-7s %11.2f %11.2f %11.2f %9.2f %7.1f%%\n", p.name.c_str(), p.n,
                  row.contender.c_str(), row.chosen.c_str(), row.stats.total.median * 1e6,
                  row.stats.kernel.median * 1e6, row.stats.halo.median * 1e6, row.stats.other.median * 1e6,
                  100.0 * row.stats.halo.median / row.stats.total.median);
  }
  // Packed against datatypes: each packed-X next to X of this run.
  for (Row& row : rows) {
    const std::string prefix = "packed-";
    if (row.contender.rfind(prefix, 0) != 0) continue;
    for (const Row& twin : rows)
      if (twin.contender == row.contender.substr(prefix.size()) && twin.stats.halo.median > 0 &&
          twin.stats.halo_min > 0) {
        row.halo_vs_datatypes = row.stats.halo.median / twin.stats.halo.median;
        row.halo_min_vs_datatypes = row.stats.halo_min / twin.stats.halo_min;
        if (rank == 0)
          std::printf("  %-8s %5ld %-13s halo packed / datatypes: %.3f (median), %.3f (fastest rep)\n",
                      p.name.c_str(), p.n, row.contender.c_str(), row.halo_vs_datatypes, row.halo_min_vs_datatypes);
      }
  }
  if (s.phases) time_packed_phases(s, p, steps, exchangers, rows, current);
  std::fflush(stdout);
}

/// --phases: the packed contenders' extra repetitions (see the file's head).
template <int D, class T>
void time_packed_phases(const Settings& s, Problem<D, T>& p, long steps,
                        const std::vector<std::unique_ptr<Exchanger>>& exchangers, std::vector<Row>& rows,
                        int& current) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  using Clock = std::chrono::steady_clock;  // the transport's clock: its phases nest in `exchange`
  for (std::size_t c = 0; c < exchangers.size(); ++c) {
    Exchanger& exchanger = *exchangers[c];
    core::HaloPhaseTimes sink;
    if (!exchanger.time_phases(&sink)) continue;
    std::vector<std::array<double, 6>> reps;  // exchange, pack, to_host, mpi, to_device, unpack
    for (int r = 0; r < s.reps; ++r) {
      sink = core::HaloPhaseTimes();
      double exchange = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      for (long k = 0; k < steps; ++k) {
        const Clock::time_point a = Clock::now();
        exchanger.exchange(current);
        const Clock::time_point b = Clock::now();
        p.kernel(current);
        Kokkos::fence();
        exchange += std::chrono::duration<double>(b - a).count();
        current = 1 - current;
      }
      if (sink.exchanges != steps)
        throw iso::Error("isostencil-bench-halo: phase timing saw " + std::to_string(sink.exchanges) +
                         " exchanges in " + std::to_string(steps) + " steps");
      struct {
        double value;
        int rank;
      } mine{exchange, rank}, slowest{0, 0};
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
      std::array<double, 6> v{exchange, sink.pack, sink.to_host, sink.mpi, sink.to_device, sink.unpack};
      MPI_Bcast(v.data(), 6, MPI_DOUBLE, slowest.rank, MPI_COMM_WORLD);
      for (double& x : v) x /= static_cast<double>(steps);
      reps.push_back(v);
    }
    exchanger.time_phases(nullptr);
    std::sort(reps.begin(), reps.end(), [](const auto& x, const auto& y) { return x[0] < y[0]; });
    const std::array<double, 6>& m = reps[(reps.size() - 1) / 2];
    Phases& ph = rows[c].phases;
    ph = Phases{true, m[0], m[1], m[2], m[3], m[4], m[5], exchanger.staging()};
    if (rank == 0)
      std::printf("  %-8s %5ld %-13s phases us: pack %.2f, to host %.2f, MPI %.2f, to device %.2f, unpack %.2f "
                  "of %.2f; staging %.2f (%.1f%%, %s)\n",
                  p.name.c_str(), p.n, rows[c].contender.c_str(), ph.pack * 1e6, ph.to_host * 1e6, ph.mpi * 1e6,
                  ph.to_device * 1e6, ph.unpack * 1e6, ph.exchange * 1e6, ph.staging_seconds() * 1e6,
                  ph.exchange > 0 ? 100.0 * ph.staging_seconds() / ph.exchange : 0.0, ph.staging.c_str());
  }
}

template <int D, class T>
std::vector<Row> run_case(const Settings& s, Problem<D, T>& p, bool& failed) {
  long cells = 1;
  for (int j = 0; j < D; ++j) cells *= p.n;
  const long steps = s.steps > 0 ? s.steps : std::clamp(1'000'000L / cells, 1L, 50L);
  std::vector<std::unique_ptr<Exchanger>> exchangers;
  std::vector<Row> rows = check_contenders(s, p, steps, exchangers, failed);
  if (failed) return rows;  // nothing is timed after a wrong exchange
  time_contenders(s, p, steps, exchangers, rows);
  return rows;
}

/// The note on one CSV line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

void write_csv(const std::string& path, const std::vector<Row>& rows, const isobench::Environment& env) {
  std::ostringstream out;
  out << "case,dims,local_n,cells_per_rank,contender,chosen,status,note,steps,reps,"
         "step_us,kernel_us,halo_us,other_us,halo_share,halo_reps_kept,halo_outliers,"
         "halo_bytes_per_rank,step_min_us,halo_min_us,mpi_library,mpi_version,np,proc_dims,hostname,date,"
         "halo_vs_datatypes,halo_min_vs_datatypes,phase_exchange_us,pack_us,to_host_us,mpi_us,to_device_us,"
         "unpack_us,staging_us,staging_share,staging\n";
  for (const Row& r : rows) {
    long cells = 1;
    for (int j = 0; j < r.dims; ++j) cells *= r.n;
    const bool ok = r.status == "ok";
    auto us = [&](double seconds) { return ok ? std::to_string(seconds * 1e6) : std::string(); };
    const std::string share =
        ok && r.stats.total.median > 0 ? std::to_string(r.stats.halo.median / r.stats.total.median) : "";
    const Phases& ph = r.phases;
    auto phase_us = [&](double seconds) { return ph.measured ? std::to_string(seconds * 1e6) : std::string(); };
    const std::string staging_share =
        ph.measured && ph.exchange > 0 ? std::to_string(ph.staging_seconds() / ph.exchange) : std::string();
    isobench::write_csv_fields(out, r.case_name, r.dims, r.n, cells, r.contender, r.chosen, r.status,
                               isobench::csv_field(one_line(r.note)), r.steps, r.reps, us(r.stats.total.median),
                               us(r.stats.kernel.median), us(r.stats.halo.median), us(r.stats.other.median), share,
                               r.stats.halo.kept, r.stats.halo.removed, r.halo_bytes, us(r.stats.total_min),
                               us(r.stats.halo_min), isobench::csv_field(env.mpi_library), env.mpi_version, env.np,
                               r.proc_dims, isobench::csv_field(env.hostname), env.date,
                               r.halo_vs_datatypes > 0 ? std::to_string(r.halo_vs_datatypes) : std::string(),
                               r.halo_min_vs_datatypes > 0 ? std::to_string(r.halo_min_vs_datatypes) : std::string(),
                               phase_us(ph.exchange), phase_us(ph.pack), phase_us(ph.to_host), phase_us(ph.mpi),
                               phase_us(ph.to_device), phase_us(ph.unpack), phase_us(ph.staging_seconds()),
                               staging_share, isobench::csv_field(ph.staging));
  }
  isobench::write_text_file(path, out.str());
}

}  // namespace

int main(int argc, char** argv) {
  isobench::BenchMain bench(argc, argv, "isostencil-bench-halo");
  Settings s;
  CLI::App app{"Time per stencil step split into kernel, halo and other, per halo-exchange contender"};
  app.add_option("--cases", s.cases, "jacobi7, jacobi27 (3-D), life2d, life3d")
      ->check(CLI::IsMember({"jacobi7", "jacobi27", "life2d", "life3d"}));
  app.add_option("--size3", s.sizes3, "local n for the 3-D cases (n^3 per rank)")->check(CLI::Range(2L, 1024L));
  app.add_option("--size2", s.sizes2, "local n for life2d (n^2 per rank)")->check(CLI::Range(2L, 65536L));
  app.add_option("--contenders", s.contenders,
                 "linear, torus, direct, auto, iso-mpi, naive, mpi-neighbor; packed-linear, packed-torus, "
                 "packed-direct, packed-auto, packed-iso-mpi (the packed transport)")
      ->check(CLI::IsMember({"linear", "torus", "direct", "auto", "iso-mpi", "naive", "mpi-neighbor", "packed-linear",
                             "packed-torus", "packed-direct", "packed-auto", "packed-iso-mpi"}));
  app.add_option("--reps", s.reps, "timed repetitions (each: barrier, then --steps steps)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", s.warmup, "untimed steps first")->check(CLI::Range(0, 100000));
  app.add_option("--steps", s.steps, "steps per repetition (0: about 1M cell updates, 1..50)")->check(CLI::Range(0L, 100000L));
  app.add_option("--tukey", s.tukey, "Tukey fence factor k (outside [Q1 - k IQR, Q3 + k IQR] removed)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--phases", s.phases,
               "packed contenders: time pack, device-to-host, MPI, host-to-device and unpack in extra "
               "repetitions (fences between phases), and the staging through host memory");
  app.add_option("--csv", s.csv, "write the rows as CSV to this file (rank 0)");
  if (const auto code = bench.parse(app)) return *code;
  Kokkos::ScopeGuard kokkos(argc, argv);
  return bench.run([&] {
    isobench::check_output_path(MPI_COMM_WORLD, s.csv);  // a directory or a device: refused before measuring
    const int rank = bench.rank(), size = bench.size();
    const isobench::Environment env = isobench::Environment::collect(MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("isostencil-bench-halo: %d rank(s), %s, Kokkos %s, %d reps (Tukey %.1f x IQR, median)\n", size,
                  env.mpi_library.c_str(), Kokkos::DefaultExecutionSpace::name(), s.reps, s.tukey);
      std::printf("  %-8s %5s %-13s %-7s %11s %11s %11s %9s %8s\n", "case", "n", "contender", "chosen", "step us",
                  "kernel us", "halo us", "other us", "halo %");
    }
    std::vector<Row> rows;
    bool failed = false;
    for (const std::string& name : s.cases) {
      if (name == "life2d") {
        for (long n : s.sizes2) {
          auto p = make_life<2>(n);
          auto more = run_case(s, *p, failed);
          rows.insert(rows.end(), more.begin(), more.end());
        }
      } else {
        for (long n : s.sizes3) {
          std::vector<Row> more;
          if (name == "life3d") {
            auto p = make_life<3>(n);
            more = run_case(s, *p, failed);
          } else {
            auto p = make_jacobi(n, name == "jacobi27");
            more = run_case(s, *p, failed);
          }
          rows.insert(rows.end(), more.begin(), more.end());
        }
      }
      if (rank == 0 && !s.csv.empty()) write_csv(s.csv, rows, env);
    }
    if (failed) {
      if (rank == 0) std::fprintf(stderr, "isostencil-bench-halo: a contender's ghosts differ from the naive exchange\n");
      return 1;
    }
    return 0;
  });
}
