// `iso-bench setup`: the paper's Table II. Set-up times of Moore
// neighborhoods d = 2..5, r = 1..3: iso::Neighborhood creation and the
// operations' init (schedule computation and derived datatypes) against
// MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent with the same
// neighbors. Same method as the collectives: barrier, maximum over ranks,
// Tukey's rule, median, median of launch medians.
#include "isostencil/bench/bench.hpp"
#include "isostencil/bench/neighborhoods.hpp"

#include "isostencil/spec.hpp"

#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

namespace isobench {

std::vector<int> parse_int_list(const std::string& text, const char* option, int low, int high) {
  std::vector<int> out;
  for (long long value : isostencil::parse_integer_list(text, option)) {
    if (value < low || value > high)
      throw isostencil::UsageError(fmt::format("{}: {} is not in [{}, {}]", option, value, low, high));
    out.push_back(static_cast<int>(value));
  }
  return out;
}

namespace {

using isostencil::UsageError;

class SetupCommand final : public Subcommand {
public:
  explicit SetupCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("setup",
                                 "Set-up times (the paper's Table II): iso::Neighborhood + init vs "
                                 "MPI_Dist_graph_create(_adjacent), Moore d x r");
    app_->footer(
        "Rows (contender column): iso-neighborhood (iso::Neighborhood, with its hash check),\n"
        "iso-alltoall-init / iso-allgather-init (torus schedule and datatypes, on an existing\n"
        "neighborhood), iso-create+init (both, timed together; the process's set-up caches hold the\n"
        "schedule and execution plan of the earlier repetitions), iso-create+init-cold (the same with\n"
        "the caches emptied before each repetition), mpi-create (MPI_Dist_graph_create,\n"
        "each rank naming its own out-edges), mpi-adjacent (MPI_Dist_graph_create_adjacent).\n\n"
        "Example:\n"
        "  mpirun -np 2 iso-bench setup --csv setup.csv");
    app_->add_option("--dims", dims_, "dimensions (default 2,3,4,5)");
    app_->add_option("--radii", radii_, "radii (default 1,2,3)");
    app_->add_option("--bytes", bytes_, "block size of the init calls (default 8)")->check(CLI::Range(1, 1 << 20));
    app_->add_option("--algorithm", algorithm_, "algorithm of the init calls (default torus)")
        ->check(CLI::IsMember({"linear", "torus", "direct"}));
    app_->add_option("--reps,-r", reps_, "repetitions per launch (default 30)")->check(CLI::Range(1, 1000000));
    app_->add_option("--warmup", warmup_, "untimed repetitions first (default 2)")->check(CLI::Range(0, 100000));
    app_->add_option("--launches,-l", launches_, "repeat the whole measurement L times (default 3)")
        ->check(CLI::Range(1, 100000));
    app_->add_option("--tukey", tukey_, "outlier fence factor k (default 3)")->check(CLI::Range(0.0, 1e6));
    app_->add_option("--csv", csv_, "write the rows to FILE");
    app_->add_flag("--no-reorder", no_reorder_, "MPI_Cart_create without reordering (default: reorder)");
    app_->add_flag("--quiet,-q", quiet_, "print only the table");
  }

  CLI::App* app() const override { return app_; }
  int run(MPI_Comm world) override;

private:
  CLI::App* app_ = nullptr;
  std::string dims_ = "2,3,4,5";
  std::string radii_ = "1,2,3";
  int bytes_ = 8;
  std::string algorithm_ = "torus";
  int reps_ = 30;
  int warmup_ = 2;
  int launches_ = 3;
  double tukey_ = 3;
  std::string csv_;
  bool no_reorder_ = false;
  bool quiet_ = false;
};

int SetupCommand::run(MPI_Comm world) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(world, &world_rank);
  MPI_Comm_size(world, &world_size);
  const bool root = world_rank == 0;
  const std::vector<int> dims_list = parse_int_list(dims_, "--dims", 1, 8);
  const std::vector<int> radii_list = parse_int_list(radii_, "--radii", 1, 8);
  check_output_path(world, csv_);  // a directory or a device there: refused before anything is timed
  for (int d : dims_list)
    for (int r : radii_list)
      if (isostencil::moore_size({d, r}, false) > 200000)
        throw UsageError(fmt::format("Moore d={} r={} has more than 200000 neighbors", d, r));
  const iso::Algorithm algorithm = iso::parse_algorithm(algorithm_);
#if defined(SMPI_H)
  throw UsageError("iso-bench setup compares with MPI_Dist_graph_create(_adjacent): not available under SMPI");
#endif
  const Environment env = Environment::collect(world);
  const std::vector<std::string> contenders = {"iso-neighborhood", "iso-alltoall-init", "iso-allgather-init",
                                               "iso-create+init", "mpi-create", "mpi-adjacent",
                                               "iso-create+init-cold"};
  if (root && !quiet_) {
    std::cout << fmt::format("iso-bench setup: {} ranks, {} (MPI {}); {} reps, {} launch(es), init with {} B "
                             "blocks, {} algorithm\n",
                             world_size, env.mpi_library, env.mpi_version, reps_, launches_, bytes_, algorithm_);
    std::cout.flush();
  }

  std::vector<ResultRow> rows;
  std::map<std::string, std::size_t> row_of;
  for (int launch = 0; launch < launches_; ++launch) {
    for (int d : dims_list) {
      std::vector<int> procs(static_cast<std::size_t>(d), 0);
      const std::vector<bool> periodic(static_cast<std::size_t>(d), true);
      iso::CartComm cart(world, procs, periodic, !no_reorder_);
      MPI_Comm bench_raw = MPI_COMM_NULL;
      ISO_MPI_CHECK(MPI_Comm_dup(cart.get(), &bench_raw));
      iso::Comm bench(bench_raw);
      for (int r : radii_list) {
        const iso::OffsetList offsets = iso::OffsetList::moore(d, r);
        const int s = offsets.size();
        const iso::CartGeometry& grid = cart.geometry();
        int rank = 0;
        MPI_Comm_rank(cart.get(), &rank);
        std::vector<int> coords(static_cast<std::size_t>(d));
        grid.coords_of(rank, coords.data());
        std::vector<int> targets, sources;
        for (int i = 0; i < s; ++i) {
          targets.push_back(grid.shifted_rank(coords.data(), offsets[i], +1));
          sources.push_back(grid.shifted_rank(coords.data(), offsets[i], -1));
        }
        const std::size_t block = static_cast<std::size_t>(bytes_);
        std::vector<unsigned char> send(static_cast<std::size_t>(s) * block, 1), recv(send.size(), 0);
        iso::OperationOptions options;
        options.algorithm = algorithm;

        std::optional<iso::Neighborhood> nbh;
        std::optional<iso::Operation> op;
        MPI_Comm graph = MPI_COMM_NULL;
        auto destroy_all = [&] {
          op.reset();
          nbh.reset();
          if (graph != MPI_COMM_NULL) MPI_Comm_free(&graph);
        };
        auto make_nbh = [&] { nbh.emplace(cart.get(), offsets); };
        auto init_alltoall = [&] {
          op = iso::alltoall_init(*nbh, send.data(), bytes_, MPI_BYTE, recv.data(), bytes_, MPI_BYTE, options);
        };
        auto init_allgather = [&] {
          op = iso::allgather_init(*nbh, send.data(), bytes_, MPI_BYTE, recv.data(), bytes_, MPI_BYTE, options);
        };
        auto graph_create = [&] {
          const int degree = s;
          ISO_MPI_CHECK(MPI_Dist_graph_create(cart.get(), 1, &rank, &degree, targets.data(), MPI_UNWEIGHTED,
                                              MPI_INFO_NULL, 0, &graph));
        };
        auto graph_adjacent = [&] {
          ISO_MPI_CHECK(MPI_Dist_graph_create_adjacent(cart.get(), s, sources.data(), MPI_UNWEIGHTED, s,
                                                       targets.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
        };

        auto record = [&](const std::string& contender, const std::vector<double>& times) {
          const std::string key = fmt::format("{}|{}|{}", d, r, contender);
          auto found = row_of.find(key);
          if (found == row_of.end()) {
            ResultRow row;
            row.operation = "setup";
            row.neighborhood = fmt::format("moore-d{}-r{}", d, r);
            row.dims = d;
            row.neighbors = s;
            row.size_bytes = bytes_;
            row.send_bytes = static_cast<long long>(s) * bytes_;
            row.contender = contender;
            row.status = "ok";
            row.proc_dims = format_dims(grid.sizes);
            row.periodic = format_periodic(periodic);
            if (contender.rfind("iso-a", 0) == 0 || contender.rfind("iso-create+init", 0) == 0)
              row.note = std::string(iso::to_string(algorithm)) + " schedule";
            found = row_of.emplace(key, rows.size()).first;
            rows.push_back(row);
          }
          ResultRow& row = rows[found->second];
          const TukeySummary summary = add_launch(row, times, tukey_);
          if (root && !quiet_) {
            std::cout << fmt::format("  moore-d{}-r{} (s = {:>5}) {:<20} {:>12.2f} us ({}/{} kept)\n", d, r, s,
                                     contender, summary.median * 1e6, summary.kept, times.size());
            std::cout.flush();
          }
        };

        const MPI_Comm comm = bench.get();
        record(contenders[0], time_repetitions(comm, warmup_, reps_, make_nbh, destroy_all));
        make_nbh();
        record(contenders[1], time_repetitions(comm, warmup_, reps_, init_alltoall, [&] { op.reset(); }));
        record(contenders[2], time_repetitions(comm, warmup_, reps_, init_allgather, [&] { op.reset(); }));
        destroy_all();
        record(contenders[3], time_repetitions(comm, warmup_, reps_, [&] {
                 make_nbh();
                 init_alltoall();
               }, destroy_all));
        iso::clear_setup_caches();
        record(contenders[6], time_repetitions(comm, warmup_, reps_, [&] {
                 make_nbh();
                 init_alltoall();
               }, [&] {
                 destroy_all();
                 iso::clear_setup_caches();
               }));
        record(contenders[4], time_repetitions(comm, warmup_, reps_, graph_create, destroy_all));
        record(contenders[5], time_repetitions(comm, warmup_, reps_, graph_adjacent, destroy_all));
      }
    }
    if (root && !csv_.empty()) write_csv(csv_, rows, env);
  }

  if (root) {
    auto median_us = [&](int d, int r, const std::string& contender) {
      const ResultRow& row = rows[row_of.at(fmt::format("{}|{}|{}", d, r, contender))];
      return summarize_launches(row.launch_medians).median * 1e6;
    };
    std::cout << fmt::format(
        "\nSet-up times [us] on {} ranks (median of {} launch medians; init = {} alltoall, {} B blocks)\n",
        world_size, launches_, algorithm_, bytes_);
    std::cout << fmt::format("{:>2} {:>2} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9}\n", "d",
                             "r", "s", "iso-nbh", "a2a-init", "agather-init", "nbh+init", "cold", "dist-graph",
                             "adjacent", "adj/iso", "adj/cold");
    for (int d : dims_list)
      for (int r : radii_list) {
        const double total = median_us(d, r, "iso-create+init");
        const double cold = median_us(d, r, "iso-create+init-cold");
        const double adjacent = median_us(d, r, "mpi-adjacent");
        std::cout << fmt::format(
            "{:>2} {:>2} {:>6} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>9.2f} {:>9.2f}\n", d,
            r, isostencil::moore_size({d, r}, false), median_us(d, r, "iso-neighborhood"),
            median_us(d, r, "iso-alltoall-init"), median_us(d, r, "iso-allgather-init"), total, cold,
            median_us(d, r, "mpi-create"), adjacent, total > 0 ? adjacent / total : 0.0,
            cold > 0 ? adjacent / cold : 0.0);
      }
    std::cout << "adj/iso > 1: neighborhood creation + init is faster than MPI_Dist_graph_create_adjacent\n"
                 "(nbh+init: repeated set-ups, served by the set-up caches; cold: caches emptied each time)\n";
    if (!csv_.empty()) std::cout << "CSV: " << csv_ << "\n";
    std::cout.flush();
  }
  return 0;
}

}  // namespace

std::unique_ptr<Subcommand> make_setup_command(CLI::App& parent) { return std::make_unique<SetupCommand>(parent); }

}  // namespace isobench
