// `iso-bench halo`: the halo exchange of a real grid. Each rank holds n^d
// interior doubles with ghost layers w cells wide (w: the halo depth) on a
// periodic Cartesian grid of all ranks; the ghost directions come from the
// box (27-point in 3-D) stencil repeated w times, as the framework's grid
// derives them (iso::stencil_geometry), and the fields are exchanged with
// iso::HaloPattern / iso::HaloExchange, the subarray-datatype exchange the
// grid uses. Per contender (an algorithm of the library): one exchange
// checked cell by cell against the values the ghosts must hold (every cell
// holds a function of its global index), then the timing of iso-bench
// collectives (barrier before each call, maximum over ranks, Tukey's rule,
// median). MPI only: builds and runs under SimGrid SMPI too.
#include "isostencil/bench/bench.hpp"
#include "collectives.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"
#include "iso/halo_exchange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

namespace isobench {

namespace {

using isostencil::UsageError;

struct HaloOptionsCli {
  int dims = 3;
  std::string sizes = "8,16,32";
  std::string widths = "1";
  std::string contenders = "linear,torus,direct,auto";
  int reps = 20;
  int warmup = 2;
  int launches = 1;
  double tukey = 3;
  std::string csv;
  std::string procs;
  bool no_reorder = false;
  bool quiet = false;
  int corrupt_rank = -1;  // for the tests: spoil one ghost cell on this rank after each checked exchange
};

// parse_int_list without repeats, and not empty.
std::vector<int> int_list(const std::string& text, const char* option, int low, int high) {
  std::vector<int> out;
  for (int value : parse_int_list(text, option, low, high))
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  if (out.empty()) throw UsageError(fmt::format("{}: nothing given", option));
  return out;
}

/// One rank's field: n^d interior cells and w ghost layers on each side,
/// row-major, with the global index of each cell's wrapped position.
class Field {
public:
  Field(const iso::CartGeometry& grid, const std::vector<int>& coords, int n, int w)
      : n_(n), w_(w), d_(static_cast<int>(coords.size())) {
    for (int j = 0; j < d_; ++j) {
      global_.push_back(static_cast<long>(grid.sizes[static_cast<std::size_t>(j)]) * n);
      offset_.push_back(static_cast<long>(coords[static_cast<std::size_t>(j)]) * n);
    }
    long cells = 1;
    for (int j = 0; j < d_; ++j) cells *= n + 2L * w;
    data_.assign(static_cast<std::size_t>(cells), 0.0);
  }

  double* data() { return data_.data(); }
  std::vector<long> global_offset() const { return offset_; }

  /// Interior cells get expected(cell), ghosts a value no cell holds.
  void fill() {
    visit([&](std::size_t at, bool ghost, double expected) { data_[at] = ghost ? -1.0 : expected; });
  }

  /// The first cell whose value differs from what it must hold, or empty.
  /// Every ghost cell must hold its owner's value: the box stencil's
  /// directions cover the whole ghost region.
  std::string check(long& compared) const {
    std::string wrong;
    long cells = 0, bad = 0;
    visit([&](std::size_t at, bool ghost, double expected) {
      ++cells;
      if (data_[at] == expected) return;
      ++bad;
      if (wrong.empty())
        wrong = fmt::format("{} cell at local index {} (global {}) holds {}, expected {}", ghost ? "ghost" : "interior",
                            local_text(at), global_text(at), data_[at], expected);
    });
    compared += cells;
    return bad ? fmt::format("{} of {} cells wrong; the first: {}", bad, cells, wrong) : wrong;
  }

  /// Spoils one ghost cell (the first one): the tests' broken exchange.
  void spoil() { data_[0] += 0.5; }

private:
  // Calls f(flat index, is ghost, expected value) for every cell.
  template <class F>
  void visit(F&& f) const {
    const long extent = n_ + 2L * w_;
    std::vector<long> local(static_cast<std::size_t>(d_), 0);
    for (std::size_t at = 0; at < data_.size(); ++at) {
      bool ghost = false;
      double expected = 0;
      for (int j = 0; j < d_; ++j) {
        const long l = local[static_cast<std::size_t>(j)];
        ghost = ghost || l < w_ || l >= w_ + n_;
        const long period = global_[static_cast<std::size_t>(j)];
        const long g = ((offset_[static_cast<std::size_t>(j)] + l - w_) % period + period) % period;
        expected = expected * static_cast<double>(period) + static_cast<double>(g);
      }
      f(at, ghost, expected + 1.0);
      for (int j = d_ - 1; j >= 0; --j) {
        if (++local[static_cast<std::size_t>(j)] < extent) break;
        local[static_cast<std::size_t>(j)] = 0;
      }
    }
  }

  std::vector<long> local_of(std::size_t at) const {
    std::vector<long> local(static_cast<std::size_t>(d_));
    const long extent = n_ + 2L * w_;
    for (int j = d_ - 1; j >= 0; --j) {
      local[static_cast<std::size_t>(j)] = static_cast<long>(at) % extent;
      at /= static_cast<std::size_t>(extent);
    }
    return local;
  }
  std::string local_text(std::size_t at) const { return fmt::format("({})", fmt::join(local_of(at), ",")); }
  std::string global_text(std::size_t at) const {
    std::vector<long> g = local_of(at);
    for (int j = 0; j < d_; ++j) {
      const auto u = static_cast<std::size_t>(j);
      g[u] = ((offset_[u] + g[u] - w_) % global_[u] + global_[u]) % global_[u];
    }
    return fmt::format("({})", fmt::join(g, ","));
  }

  int n_, w_, d_;
  std::vector<long> global_, offset_;
  std::vector<double> data_;
};

class HaloCommand final : public Subcommand {
public:
  explicit HaloCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("halo",
                                 "Halo exchange of a real grid: n^d doubles a rank, ghost layers w wide (the depth), "
                                 "box-stencil directions, iso::HaloExchange per algorithm");
    app_->footer(
        "Each rank holds n^d interior doubles and w ghost layers a side on a periodic process grid of\n"
        "all ranks; the ghost directions are those of the box stencil (27-point in 3-D) repeated w\n"
        "times, as the framework's grid derives them. Contenders: the library's algorithms (linear =\n"
        "one message a neighbor, torus, direct, basis, auto, tune, mpi), each checked once cell by\n"
        "cell against the values every ghost must hold (a wrong halo: status error, exit code 1),\n"
        "then timed as iso-bench collectives (barrier, maximum over ranks, Tukey, median). CSV rows:\n"
        "operation halo, neighborhood halo-dD-nN-wW, size_bytes = one face block, send_bytes = all\n"
        "blocks a rank sends.\n\n"
        "Examples:\n"
        "  mpirun -np 8 iso-bench halo -n 8,16,32 -c linear,auto --csv halo.csv\n"
        "  mpirun -np 8 iso-bench halo -n 32 -w 1,2,3,4 --procs 2,2,2");
    app_->add_option("--dims,-d", opt_.dims, "dimensions (default 3)")->check(CLI::Range(1, 6));
    app_->add_option("--sizes,-n", opt_.sizes, "interior cells a side per rank (default 8,16,32)");
    app_->add_option("--widths,-w", opt_.widths, "halo widths, the depth (default 1)");
    app_->add_option("--contenders,-c", opt_.contenders, "algorithms (default linear,torus,direct,auto)");
    app_->add_option("--reps,-r", opt_.reps, "timed exchanges per launch (default 20)")->check(CLI::Range(1, 10000000));
    app_->add_option("--warmup", opt_.warmup, "untimed exchanges first (default 2)")->check(CLI::Range(0, 1000000));
    app_->add_option("--launches,-l", opt_.launches, "repeat the measurement L times (default 1)")
        ->check(CLI::Range(1, 100000));
    app_->add_option("--tukey", opt_.tukey, "outlier fence factor k (default 3)")->check(CLI::Range(0.0, 1e6));
    app_->add_option("--csv", opt_.csv, "write the rows to FILE");
    app_->add_option("--procs", opt_.procs, "process grid P0,P1,... (default MPI_Dims_create)");
    app_->add_flag("--no-reorder", opt_.no_reorder, "MPI_Cart_create without reordering (default: reorder)");
    app_->add_flag("--quiet,-q", opt_.quiet, "print only the summary");
    app_->add_option("--corrupt-rank", opt_.corrupt_rank,
                     "testing: spoil one ghost cell on this rank after each exchange, before the check");
  }

  CLI::App* app() const override { return app_; }
  int run(MPI_Comm world) override;

private:
  void say(const std::string& line) const {
    if (root_ && !opt_.quiet) {
      std::cout << line << "\n";
      std::cout.flush();
    }
  }

  CLI::App* app_ = nullptr;
  HaloOptionsCli opt_;
  bool root_ = false;
};

int HaloCommand::run(MPI_Comm world) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(world, &world_rank);
  MPI_Comm_size(world, &world_size);
  root_ = world_rank == 0;
  const int d = opt_.dims;
  const std::vector<int> sizes = int_list(opt_.sizes, "--sizes", 1, 1 << 20);
  const std::vector<int> widths = int_list(opt_.widths, "--widths", 1, 64);
  std::vector<iso::Algorithm> algorithms;
  std::vector<std::string> names;
  for (const std::string& name : collectives::split_list(opt_.contenders)) {
    try {
      algorithms.push_back(iso::parse_algorithm(name));
    } catch (const iso::Error& error) {
      throw UsageError(std::string("--contenders: ") + error.what());
    }
    names.push_back(name);
  }
  if (algorithms.empty()) throw UsageError("--contenders: nothing given");
  std::vector<int> dims(static_cast<std::size_t>(d), 0);
  if (!opt_.procs.empty()) {
    dims = isostencil::parse_procs(opt_.procs, d);
    long long product = 1;
    for (int p : dims) product *= p;
    if (product != world_size)
      throw UsageError(fmt::format("--procs {}: {} processes, but {} ranks run", opt_.procs, product, world_size));
  }
  for (int n : sizes) {
    long double bytes = 8;
    for (int j = 0; j < d; ++j) bytes *= n + 2.0L * widths.back();
    if (bytes > (1LL << 31)) throw UsageError(fmt::format("--sizes {}: a field of over 2 GiB per rank", n));
  }
  check_output_path(world, opt_.csv);
  const Environment env = Environment::collect(world);

  const std::vector<bool> periodic(static_cast<std::size_t>(d), true);
  iso::CartComm cart(world, dims, periodic, !opt_.no_reorder);
  const iso::CartGeometry& grid = cart.geometry();
  MPI_Comm bench_raw = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Comm_dup(cart.get(), &bench_raw));
  iso::Comm bench(bench_raw);
  int rank = 0;
  MPI_Comm_rank(cart.get(), &rank);
  std::vector<int> coords(static_cast<std::size_t>(d));
  grid.coords_of(rank, coords.data());
  const std::string proc_dims = format_dims(grid.sizes);
  if (root_ && !opt_.quiet)
    std::cout << fmt::format("iso-bench halo: {} ranks on {} (periodic), {} (MPI {}); {} reps ({} warm-up), {} "
                             "launch(es)\n",
                             world_size, proc_dims, env.mpi_library, env.mpi_version, opt_.reps, opt_.warmup,
                             opt_.launches);

  std::vector<ResultRow> rows;
  std::map<std::string, std::size_t> row_of;
  long errors = 0;
  for (int launch = 0; launch < opt_.launches; ++launch) {
    for (int w : widths) {
      for (int n : sizes) {
        const std::string name = fmt::format("halo-d{}-n{}-w{}", d, n, w);
        // The framework's rule: the box stencil repeated w times, its
        // directions over the smallest extents of the exchanged dimensions.
        const iso::OffsetList stencil = iso::OffsetList::moore(d, w, true);
        const std::vector<long> smallest(static_cast<std::size_t>(d), n);
        const iso::HaloGeometry geometry =
            iso::stencil_geometry(stencil, iso::exchanged_extents(grid.sizes, periodic, smallest));
        std::string misfit;
        if (const int j = iso::halo_misfit_dimension(geometry.widths, grid.sizes, periodic, smallest); j >= 0)
          misfit = fmt::format("halo width {} over {} cells reaches beyond {} processes in dimension {}", w, n,
                               iso::max_halo_reach, j);
        Field field(grid, coords, n, w);
        const std::vector<int> interior(static_cast<std::size_t>(d), n);
        for (std::size_t c = 0; c < algorithms.size(); ++c) {
          const std::string key = name + "|" + names[c];
          auto found = row_of.find(key);
          if (found == row_of.end()) {
            ResultRow row;
            row.operation = "halo";
            row.neighborhood = name;
            row.dims = d;
            row.neighbors = geometry.directions.size();
            long face = 8L * w;
            for (int j = 1; j < d; ++j) face *= n;
            row.size_bytes = face;
            row.contender = names[c];
            row.status = misfit.empty() ? "ok" : "skipped";
            row.note = misfit.empty() ? fmt::format("{} doubles a side, ghosts {} deep", n, w) : misfit;
            row.proc_dims = proc_dims;
            row.periodic = format_periodic(periodic);
            found = row_of.emplace(key, rows.size()).first;
            rows.push_back(row);
          }
          ResultRow& row = rows[found->second];
          if (row.status != "ok") continue;
          iso::HaloOptions options;
          options.algorithm = algorithms[c];
          std::unique_ptr<iso::HaloExchange> exchange;
          std::string failure;
          try {
            auto pattern = std::make_shared<const iso::HaloPattern>(cart.get(), interior, geometry,
                                                                    field.global_offset(), options);
            exchange = std::make_unique<iso::HaloExchange>(pattern, MPI_DOUBLE, std::vector<void*>{field.data()});
          } catch (const std::exception& error) {
            failure = error.what();
          }
          int failed = failure.empty() ? 0 : 1;
          MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, bench.get());
          if (failed) {
            row.status = "error";
            row.note = failure.empty() ? "set-up failed on another rank" : "set-up failed: " + failure;
            say(fmt::format("  {} {}: ERROR {}", name, names[c], row.note));
            continue;
          }
          long long send = 0;
          for (int i = 0; i < exchange->pattern().directions().size(); ++i)
            send += exchange->pattern().send_block(i).cells() * 8;
          row.send_bytes = send;
          if (algorithms[c] == iso::Algorithm::automatic || algorithms[c] == iso::Algorithm::tune)
            row.chosen = iso::describe_choice(exchange->operation());
          // The check, once per contender and launch: every cell against
          // the value its global index gives (interior unchanged).
          field.fill();
          exchange->run();
          if (rank == opt_.corrupt_rank) field.spoil();
          long compared = 0;
          std::string wrong = field.check(compared);
          try {
            iso::agree_on_errors(bench.get(), name + " " + names[c], wrong);
          } catch (const iso::Error& error) {
            row.status = "error";
            row.note = fmt::format("wrong halo: {}", error.what());
            if (root_) std::cerr << "iso-bench halo: " << row.note << "\n";
            continue;
          }
          const std::vector<double> times =
              time_repetitions(bench.get(), opt_.warmup, opt_.reps, [&] { exchange->run(); });
          const TukeySummary summary = add_launch(row, times, opt_.tukey);
          say(fmt::format("  {:<18} {:<8} {:>11.2f} us  ({}/{} kept){}", name, names[c], summary.median * 1e6,
                          summary.kept, times.size(), row.chosen.empty() ? "" : " -> " + row.chosen));
          // After every point: a long simulation stopped by a time limit keeps what it measured.
          if (root_ && !opt_.csv.empty()) write_csv(opt_.csv, rows, env);
        }
      }
    }
    if (root_ && !opt_.csv.empty()) write_csv(opt_.csv, rows, env);
  }
  for (const ResultRow& row : rows) errors += row.status == "error";
  if (root_) {
    std::cout << fmt::format("\nHalo exchange on {} ranks ({}), us per exchange (median of launch medians)\n",
                             world_size, proc_dims);
    for (const ResultRow& row : rows)
      std::cout << fmt::format("{:<18} {:<8} {:>12} {}\n", row.neighborhood, row.contender,
                               row.status == "ok" ? fmt::format("{:.2f}", summarize_launches(row.launch_medians).median * 1e6)
                                                  : row.status,
                               row.chosen.empty() ? "" : "-> " + row.chosen);
    if (!opt_.csv.empty()) std::cout << "CSV: " << opt_.csv << "\n";
    std::cout.flush();
  }
  return errors ? 1 : 0;
}

}  // namespace

std::unique_ptr<Subcommand> make_halo_command(CLI::App& parent) { return std::make_unique<HaloCommand>(parent); }

}  // namespace isobench
