// `iso-bench collectives`: the paper's Figures 2-5 on this machine. For each
// operation, neighborhood, block size and contender: a correctness check
// against the straightforward algorithm, then `reps` timed calls (barrier
// before each, maximum over ranks), Tukey's rule, median; `launches` times
// over, median of the medians with min and max. One CSV row per
// (operation, neighborhood, size, contender). This file: the command line and
// the measurement loop; collectives.hpp names the other pieces.
#include "isostencil/bench/bench.hpp"
#include "collectives.hpp"

#include "isostencil/spec.hpp"

#include "iso/cost_model.hpp"
#include "iso/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

namespace isobench {

namespace {

using isostencil::UsageError;
using namespace collectives;

struct Options {
  std::vector<std::string> ops;
  std::vector<std::string> neighborhoods;
  std::vector<std::string> offsets_files;
  std::string sizes;
  std::string contenders;
  int reps = 100;
  int warmup = 5;
  int launches = 3;
  int interleave = 0;
  std::string max_memory = "1G";
  double max_seconds = 60;
  double tukey = 3;
  std::string csv;
  std::string procs;
  bool mesh = false;
  bool no_reorder = false;
  bool quiet = false;
};

class CollectivesCommand final : public Subcommand {
public:
  explicit CollectivesCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "collectives",
        "Time the isomorphic collectives against MPI's neighborhood collectives (the paper's Fig. 2-5); "
        "the default subcommand");
    app_->footer(
        "Contenders: linear, torus, direct, basis, auto, tune (isomorphic alltoall/allgather/\n"
        "alltoallw with that algorithm; tune times every candidate of auto, scheduled ones at 1, 2\n"
        "and unlimited ports, at each init: once per launch), iso-mpi (the library's native\n"
        "wrapper), mpi-create and mpi-adjacent (MPI_Neighbor_* on MPI_Dist_graph_create /\n"
        "_adjacent), mpi-persistent (MPI_Neighbor_*_init, MPI-4 libraries only), bound-torus and\n"
        "bound-direct (the schedule's rounds as plain contiguous MPI_Sendrecv: the best zero-copy\n"
        "can do). Not by default: basis, tune, iso-mpi. A suffix :pK limits an isomorphic contender\n"
        "to K messages in flight; @fresh or @persistent fixes how it posts its messages\n"
        "(OperationOptions::posting; default: fresh up to 256 B per message): torus@persistent.\n\n"
        "What auto and tune chose is printed after each time (-> torus, -> direct:p2), in a table\n"
        "after each summary table and in the CSV column chosen: the algorithm, with :pK where it\n"
        "runs with at most K messages in flight (tune always names K, p0 = no limit; where\n"
        "launches chose differently, each launch's choice, ';'-separated). A tune row's note lists\n"
        "every candidate it timed.\n\n"
        "Neighborhoods: moore (d=2..5, r=1..3), moore:D, moore:D:R, octant[:D:R] (default 3:3),\n"
        "shales[:D[:R1,R2]] (default 3:3,7; {-r,0,r}^D without 0, as the paper's Fig. 4(b)),\n"
        "shells:D:R1,R2 (every offset at Chebyshev distance R1 or R2), file:PATH, offsets:LIST.\n\n"
        "Examples:\n"
        "  mpirun -np 2 iso-bench collectives --op alltoall -n moore:3:1 --csv a2a.csv\n"
        "  mpirun -np 2 iso-bench --op alltoallw -n moore:3:1 moore:4:1 --sizes 2,8,32,128\n"
        "  mpirun -np 2 iso-bench -n shales --contenders linear,torus,direct --launches 10");
    app_->add_option("--op,-o", opt_.ops, "operations: alltoall allgather alltoallw (default all)")
        ->check(CLI::IsMember({"alltoall", "allgather", "alltoallw"}))
        ->delimiter(',');
    app_->add_option("--neighborhood,-n", opt_.neighborhoods,
                     "neighborhood specifications (default: moore:3:1 moore:4:1 octant shales)");
    app_->add_option("--offsets-file", opt_.offsets_files, "add the neighborhood in FILE (one offset per line)");
    app_->add_option("--sizes,-s", opt_.sizes,
                     "block sizes in bytes, e.g. 1,8,64 or 1K,64K (default powers of two 1 B..64 KiB); "
                     "for alltoallw the base m of blocks m^(d-nz(v))");
    app_->add_option("--contenders,-c", opt_.contenders,
                     "comma-separated contenders (default all but iso-mpi, basis and tune); an isomorphic one "
                     "with :pK (torus:p1, linear:p4) runs with at most K messages in flight each way");
    app_->add_option("--reps,-r", opt_.reps, "timed repetitions per launch (default 100)")->check(CLI::Range(1, 10000000));
    app_->add_option("--warmup", opt_.warmup, "untimed calls before each measurement (default 5)")
        ->check(CLI::Range(0, 1000000));
    app_->add_option("--launches,-l", opt_.launches,
                     "repeat the whole measurement L times; rows give median, min and max of the "
                     "launches' medians (default 3)")
        ->check(CLI::Range(1, 100000));
    app_->add_option("--interleave", opt_.interleave,
                     "time the contenders in turns of K calls each (one untimed call a turn), so that all "
                     "sample the same moments of a machine whose speed drifts; every contender's operation "
                     "is held at once (default 0: contender after contender)")
        ->check(CLI::Range(0, 10000000));
    app_->add_option("--max-memory", opt_.max_memory,
                     "skip points whose 3 buffers (send, receive, temporary) exceed this per rank (default 1G)");
    app_->add_option("--max-seconds", opt_.max_seconds,
                     "skip points estimated (from the fastest of 3 probe calls per contender) to take longer; "
                     "0: no limit, and no probe calls "
                     "(default 60)")
        ->check(CLI::Range(0.0, 1e9));
    app_->add_option("--tukey", opt_.tukey, "outlier fence factor k: keep [Q1-k*IQR, Q3+k*IQR] (default 3)")
        ->check(CLI::Range(0.0, 1e6));
    app_->add_option("--csv", opt_.csv, "write the rows to FILE (rewritten after each launch)");
    app_->add_option("--procs", opt_.procs, "process grid P0,P1,... (default MPI_Dims_create per neighborhood)");
    app_->add_flag("--mesh", opt_.mesh, "non-periodic process grid (default: torus)");
    app_->add_flag("--no-reorder", opt_.no_reorder, "MPI_Cart_create without reordering (default: reorder)");
    app_->add_flag("--quiet,-q", opt_.quiet, "print only the summary tables");
  }

  CLI::App* app() const override { return app_; }

  int run(MPI_Comm world) override;

private:
  CLI::App* app_ = nullptr;
  Options opt_;
};

std::vector<long long> parse_sizes(const std::string& text) {
  std::vector<long long> sizes;
  if (text.empty()) {
    for (long long m = 1; m <= 65536; m *= 2) sizes.push_back(m);
    return sizes;
  }
  for (const std::string& item : split_list(text)) {
    const long long bytes = parse_bytes(item);
    if (bytes < 1 || bytes > (1LL << 30)) throw UsageError("--sizes: \"" + item + "\" is not a size in 1 B..1 GiB");
    sizes.push_back(bytes);
  }
  if (sizes.empty()) throw UsageError("--sizes: no sizes given");
  return sizes;
}

/// What the options name, validated before anything is communicated (the
/// same verdict on every rank).
struct Plan {
  std::vector<Op> ops;
  std::vector<NamedNeighborhood> neighborhoods;
  std::vector<long long> sizes;
  long long max_memory = 0;
  std::vector<Contender> contenders;
  std::vector<int> fixed_procs;
  bool need_create = false, need_adjacent = false;
};

Plan make_plan(Options& opt, int world_size) {
  Plan plan;
  if (opt.ops.empty()) opt.ops = {"alltoall", "allgather", "alltoallw"};
  for (const std::string& name : opt.ops)
    plan.ops.push_back(name == "alltoall" ? Op::alltoall : name == "allgather" ? Op::allgather : Op::alltoallw);
  if (opt.neighborhoods.empty() && opt.offsets_files.empty())
    opt.neighborhoods = {"moore:3:1", "moore:4:1", "octant", "shales"};
  std::vector<NamedNeighborhood>& neighborhoods = plan.neighborhoods;
  for (const std::string& spec : opt.neighborhoods)
    for (NamedNeighborhood& n : expand_neighborhood(spec)) neighborhoods.push_back(std::move(n));
  for (const std::string& path : opt.offsets_files)
    for (NamedNeighborhood& n : expand_neighborhood("file:" + path)) neighborhoods.push_back(std::move(n));
  plan.sizes = parse_sizes(opt.sizes);
  plan.max_memory = parse_bytes(opt.max_memory);
  if (plan.max_memory <= 0) throw UsageError("--max-memory: \"" + opt.max_memory + "\" is not a size like 1G or 512M");
  plan.contenders = select_contenders(opt.contenders);
  plan.need_create = std::any_of(plan.contenders.begin(), plan.contenders.end(),
                                 [](const Contender& c) { return c.kind == Kind::mpi_create; });
  plan.need_adjacent = std::any_of(plan.contenders.begin(), plan.contenders.end(), [](const Contender& c) {
    return c.kind == Kind::mpi_adjacent || c.kind == Kind::mpi_persistent;
  });
  for (const NamedNeighborhood& n : neighborhoods) {
    if (!opt.procs.empty()) {
      plan.fixed_procs = isostencil::parse_procs(opt.procs, n.offsets.dims());
      long long product = 1;
      for (int p : plan.fixed_procs) product *= p;
      if (product != world_size)
        throw UsageError(fmt::format("--procs {}: {} processes, but {} ranks run", opt.procs, product, world_size));
    }
  }
  return plan;
}

/// One neighborhood on its process grid, as every point of it sees it.
struct NeighborhoodRun {
  const NamedNeighborhood& named;
  const iso::Neighborhood& nbh;
  MPI_Comm bench;  ///< a duplicate of the grid's communicator, errors returned
  const Graphs& graphs;
  std::string create_error, adjacent_error;  ///< graph edges that do not match
  std::string repeated_skip;                 ///< why MPI's own collectives are skipped
  std::string proc_dims, periodic;
};

/// The measurement: launches over neighborhoods over points, the rows they fill.
class Measurement {
public:
  Measurement(const Options& opt, const Plan& plan, MPI_Comm world)
      : opt_(opt), plan_(plan), world_(world), rows_(opt.reps) {
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    root_ = rank == 0;
  }

  void launch(int index) {
    const bool first = index == 0;
    if (opt_.launches > 1) say(fmt::format("--- launch {}/{}", index + 1, opt_.launches));
    for (const NamedNeighborhood& n : plan_.neighborhoods) neighborhood(n, first);
  }

  const RowTable& rows() const { return rows_; }

private:
  void say(const std::string& line) const {
    if (root_ && !opt_.quiet) {
      std::cout << line << "\n";
      std::cout.flush();
    }
  }

  void neighborhood(const NamedNeighborhood& n, bool first);
  void point(const NeighborhoodRun& run, Op op, long long m, bool first);
  bool check_point(const NeighborhoodRun& run, Op op, long long m, PointData& data,
                   const std::function<void(const std::string&)>& skip_point);
  void check_contender_row(const NeighborhoodRun& run, Op op, long long m, const Contender& c, PointData& data,
                           const Reference& reference, double& probe_total);

  void record_tune(ResultRow& row, const Prepared& prepared);

  const Options& opt_;
  const Plan& plan_;
  MPI_Comm world_;
  bool root_ = false;
  RowTable rows_;
  std::map<std::string, std::string> point_skipped_;  // op|nbh|size -> reason
  struct TuneLaunches {
    std::vector<std::string> chosen, trials;
  };
  std::map<std::string, TuneLaunches> tune_launches_;  // op|nbh|size|contender
};

bool is_auto(const Contender& c) { return c.kind == Kind::iso && c.algorithm == iso::Algorithm::automatic; }
bool is_tune(const Contender& c) { return c.kind == Kind::iso && c.algorithm == iso::Algorithm::tune; }

// A tune row: chosen is the launches' common choice, or each launch's in
// order ("torus:p0;direct:p0;torus:p0") where they differ; the note lists
// every launch's measurements.
void Measurement::record_tune(ResultRow& row, const Prepared& prepared) {
  TuneLaunches& launches =
      tune_launches_[fmt::format("{}|{}|{}|{}", row.operation, row.neighborhood, row.size_bytes, row.contender)];
  launches.chosen.push_back(prepared.chosen);
  launches.trials.push_back(prepared.trials);
  const bool agree = std::all_of(launches.chosen.begin(), launches.chosen.end(),
                                 [&](const std::string& x) { return x == launches.chosen.front(); });
  row.chosen.clear();
  row.note = "tune trials [us per call]";
  for (std::size_t k = 0; k < launches.chosen.size(); ++k) {
    if (!agree || k == 0) row.chosen += (k ? ";" : "") + launches.chosen[k];
    row.note += fmt::format("{} launch {}: {}", k ? ";" : "", k + 1, launches.trials[k]);
  }
}

/// Collective over `comm`: the graph's error, or another rank's, or "".
std::string graph_error(const Graph* graph, MPI_Comm comm) {
  int bad = graph && !graph->error.empty() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  return bad ? (graph && !graph->error.empty() ? graph->error : std::string("graph edges do not match on another rank"))
             : std::string();
}

void Measurement::neighborhood(const NamedNeighborhood& n, bool first) {
  const int d = n.offsets.dims();
  const int s = n.offsets.size();
  std::vector<int> dims = opt_.procs.empty() ? std::vector<int>(static_cast<std::size_t>(d), 0) : plan_.fixed_procs;
  const std::vector<bool> periodic(static_cast<std::size_t>(d), !opt_.mesh);
  iso::CartComm cart(world_, dims, periodic, !opt_.no_reorder);
  const std::string proc_dims = format_dims(cart.geometry().sizes);
  const std::string periodic_text = format_periodic(periodic);
  std::string nbh_skip;
  try {
    isostencil::check_limits(n.offsets, cart.geometry());
  } catch (const UsageError& error) {
    nbh_skip = std::string("beyond the schedule limits: ") + error.what();
  }
  if (!nbh_skip.empty()) {
    if (first) {
      say(fmt::format("{}: skipped ({})", n.name, nbh_skip));
      for (Op op : plan_.ops)
        for (long long m : plan_.sizes)
          for (const Contender& c : plan_.contenders) {
            ResultRow& row = rows_.row_for(op, n, m, 0, c, proc_dims, periodic_text);
            row.status = "skipped";
            row.note = nbh_skip;
          }
    }
    return;
  }
  iso::Neighborhood nbh(cart.get(), n.offsets);
  MPI_Comm bench_raw = MPI_COMM_NULL;
  ISO_MPI_CHECK(MPI_Comm_dup(cart.get(), &bench_raw));
  iso::Comm bench(bench_raw);
  ISO_MPI_CHECK(MPI_Comm_set_errhandler(bench_raw, MPI_ERRORS_RETURN));
  Graphs graphs;
  graphs.create = plan_.need_create ? make_graph(cart.get(), nbh, false) : nullptr;
  graphs.adjacent = plan_.need_adjacent ? make_graph(cart.get(), nbh, true) : nullptr;
  // A graph whose edges do not match the neighborhood makes its rows errors.
  NeighborhoodRun run{n, nbh, bench.get(), graphs, {}, {}, {}, proc_dims, periodic_text};
  run.create_error = graph_error(graphs.create.get(), bench.get());
  run.adjacent_error = graph_error(graphs.adjacent.get(), bench.get());
  // The MPI library's own collectives on a neighborhood where some rank
  // has a neighbor in several directions: measured only if the library
  // pairs repeated edges in order; otherwise their rows are skipped.
  {
    int repeated = nbh.has_repeated_partner() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT, MPI_MAX, bench.get());
    if (repeated && !iso::mpi_pairs_repeated_edges_in_order())
      run.repeated_skip = "unsupported: repeated partners, and this MPI library pairs repeated edges out of order";
  }
  if (first)
    say(fmt::format("{} ({}, s = {}) on {} processes{}", n.name, n.description, s, proc_dims,
                    opt_.mesh ? " (mesh)" : ""));
  for (Op op : plan_.ops)
    for (long long m : plan_.sizes) point(run, op, m, first);
}

void Measurement::point(const NeighborhoodRun& run, Op op, long long m, bool first) {
  const NamedNeighborhood& n = run.named;
  const std::string point_key = fmt::format("{}|{}|{}", op_name(op), n.name, m);
  if (!first && point_skipped_.count(point_key)) return;
  const long double estimate = layout_bytes_estimate(op, n.offsets, m);
  const long long send_estimate =
      op == Op::allgather ? m : static_cast<long long>(std::min<long double>(estimate, 9e18L));
  auto skip_point = [&](const std::string& reason) {
    point_skipped_[point_key] = reason;
    for (const Contender& c : plan_.contenders) {
      ResultRow& row = rows_.row_for(op, n, m, send_estimate, c, run.proc_dims, run.periodic);
      row.status = "skipped";
      row.note = reason;
    }
    say(fmt::format("  {} {} {}: skipped: {}", op_name(op), n.name, format_bytes(m), reason));
  };
  // Memory: send, receive and temporary buffers of the largest size.
  const long double need = 3.0L * estimate;
  if (first && need > static_cast<long double>(plan_.max_memory)) {
    skip_point(fmt::format("needs about {} per rank (3 buffers of {}) > --max-memory {}",
                           format_bytes(static_cast<long long>(std::min<long double>(need, 9e18L))),
                           format_bytes(static_cast<long long>(std::min<long double>(estimate, 9e18L))),
                           format_bytes(plan_.max_memory)));
    return;
  }
  const Layout layout = make_layout(op, n.offsets, m);
  if (first && !layout.fits_int) {
    skip_point("a block exceeds INT_MAX bytes");
    return;
  }
  PointData data(op, run.nbh, layout, m);
  if (first && !check_point(run, op, m, data, skip_point)) return;

  // --- Timing: contender after contender, or (--interleave K) in turns of
  // K calls each, so that every contender samples the same moments of a
  // machine whose speed drifts (a shared VM: 2x between launches).
  const Point point = data.point();
  struct Timed {
    const Contender* contender;
    ResultRow* row;
    std::unique_ptr<Prepared> prepared;
    std::vector<double> times;
  };
  auto start = [&](const Contender& c) -> std::optional<Timed> {
    ResultRow& row = rows_.at(op, n.name, m, c.name);
    if (row.status != "ok") return std::nullopt;
    std::unique_ptr<Prepared> prepared = prepare(c, point, run.graphs, run.bench);
    // tune measures anew at each init: each launch may choose differently.
    if (is_tune(c)) record_tune(row, *prepared);
    return Timed{&c, &row, std::move(prepared), {}};
  };
  auto finish = [&](const Timed& t) {
    const TukeySummary summary = add_launch(*t.row, t.times, opt_.tukey);
    const std::string chosen =
        is_tune(*t.contender) || is_auto(*t.contender) ? t.prepared->chosen : t.row->chosen;
    say(fmt::format("  {:<9} {:<16} {:>9}  {:<14} {:>11.2f} us  ({}/{} kept){}", op_name(op), n.name,
                    format_bytes(m), t.contender->name, summary.median * 1e6, summary.kept, t.times.size(),
                    chosen.empty() ? "" : " -> " + chosen));
  };
  if (opt_.interleave == 0) {
    for (const Contender& c : plan_.contenders)
      if (std::optional<Timed> t = start(c)) {
        Prepared& prepared = *t->prepared;
        t->times = time_repetitions(run.bench, opt_.warmup, opt_.reps, [&] { prepared.call(); });
        finish(*t);
      }
    return;
  }
  std::vector<Timed> timed;
  for (const Contender& c : plan_.contenders)
    if (std::optional<Timed> t = start(c)) timed.push_back(std::move(*t));
  for (Timed& t : timed)
    for (int k = 0; k < opt_.warmup; ++k) {
      MPI_Barrier(run.bench);
      t.prepared->call();
    }
  for (int done = 0; done < opt_.reps; done += opt_.interleave) {
    const int turn = std::min(opt_.interleave, opt_.reps - done);
    for (Timed& t : timed) {
      Prepared& prepared = *t.prepared;
      // One untimed call a turn: the others' calls have had the caches.
      const std::vector<double> times = time_repetitions(run.bench, 1, turn, [&] { prepared.call(); });
      t.times.insert(t.times.end(), times.begin(), times.end());
      t.row->turn_medians.push_back(median(times));
    }
  }
  for (const Timed& t : timed) finish(t);
}

// The first launch: the reference, then each contender checked once; probe
// calls estimate the time of the point, which is skipped when too long.
bool Measurement::check_point(const NeighborhoodRun& run, Op op, long long m, PointData& data,
                              const std::function<void(const std::string&)>& skip_point) {
  // The reference: the straightforward algorithm, checked against the data
  // its source ranks sent.
  const Reference reference = run_reference(data, run.bench);
  double probe_total = 0;
  for (const Contender& c : plan_.contenders) check_contender_row(run, op, m, c, data, reference, probe_total);
  const double predicted = probe_total * (opt_.reps + opt_.warmup) * opt_.launches;
  if (opt_.max_seconds > 0 && predicted > opt_.max_seconds) {
    skip_point(fmt::format("estimated {:.0f} s ({} launches x {} calls of {} contenders, {:.3g} ms "
                           "for one call of each contender) > --max-seconds {:g}",
                           predicted, opt_.launches, opt_.reps + opt_.warmup, plan_.contenders.size(),
                           probe_total * 1e3, opt_.max_seconds));
    return false;
  }
  return true;
}

// One contender's row in the first launch: skipped, an error, or checked and
// probed (adding its fastest probe call to probe_total).
void Measurement::check_contender_row(const NeighborhoodRun& run, Op op, long long m, const Contender& c,
                                      PointData& data, const Reference& reference, double& probe_total) {
  const NamedNeighborhood& n = run.named;
  ResultRow& row = rows_.row_for(op, n, m, data.point().layout->send_total, c, run.proc_dims, run.periodic);
  const std::string& graph_problem = c.kind == Kind::mpi_create ? run.create_error
                                     : (c.kind == Kind::mpi_adjacent || c.kind == Kind::mpi_persistent)
                                         ? run.adjacent_error
                                         : std::string();
  if (!run.repeated_skip.empty() && c.algorithm == iso::Algorithm::mpi && c.kind != Kind::bound &&
      c.kind != Kind::iso) {
    row.status = "skipped";
    row.note = run.repeated_skip;
    say(fmt::format("  {} {} {} {}: skipped: {}", op_name(op), n.name, format_bytes(m), c.name, run.repeated_skip));
    return;
  }
  if (!graph_problem.empty()) {
    row.status = "error";
    row.note = graph_problem;
    return;
  }
  std::unique_ptr<Prepared> prepared;
  std::string failure;
  try {
    prepared = prepare(c, data.point(), run.graphs, run.bench);
  } catch (const std::exception& error) {
    failure = error.what();
  }
  int failed = failure.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run.bench);
  if (failed) {
    row.status = "error";
    row.note = failure.empty() ? "init failed on another rank" : "init failed: " + failure;
    say(fmt::format("  {} {} {} {}: ERROR {}", op_name(op), n.name, format_bytes(m), c.name, row.note));
    return;
  }
  if (is_auto(c)) {
    row.chosen = prepared->chosen;
    const iso::CostModel& model = iso::CostModel::for_comm(run.nbh.comm());
    row.note = fmt::format("cost model {}: alpha={:.3g} beta={:.3g} gamma={:.3g} delta={:.3g}", model.source,
                           model.alpha, model.beta, model.gamma, model.delta);
    if (model.eager_limit > 0)
      row.note += fmt::format(" above {:g} B: alpha={:.3g} beta={:.3g}", model.eager_limit, model.alpha_large,
                              model.beta_large);
  }
  if (c.kind != Kind::bound) {
    const std::string wrong = check_contender(*prepared, data, reference, run.bench);
    if (!wrong.empty()) {
      row.status = "error";
      row.note = wrong;
      say(fmt::format("  {} {} {} {}: ERROR {}", op_name(op), n.name, format_bytes(m), c.name, row.note));
      return;
    }
  } else {
    row.note = fmt::format("bound: {} schedule as contiguous MPI_Sendrecv, no data check", prepared->chosen);
  }
  // Probe: the fastest of 3 calls (the first calls pay for page faults and
  // connection set-up), each the maximum over ranks; only where a limit
  // uses it (--max-seconds 0: none; simulations at thousands of ranks).
  if (opt_.max_seconds <= 0) return;
  const std::vector<double> probes = time_repetitions(run.bench, 0, 3, [&] { prepared->call(); });
  probe_total += *std::min_element(probes.begin(), probes.end());
}

void print_header(const Options& opt, const Environment& env, int world_size) {
  std::cout << fmt::format("iso-bench collectives: {} ranks, {} ({})\n", world_size, env.mpi_library,
                           "MPI " + env.mpi_version);
  std::cout << fmt::format(
      "method: barrier before each call, maximum over ranks, {} reps ({} warm-up), Tukey k={}, median; "
      "{} launch(es): median of medians [min, max]{}\n",
      opt.reps, opt.warmup, opt.tukey, opt.launches,
      opt.interleave ? fmt::format("; contenders interleaved, {} calls a turn", opt.interleave) : "");
  if (!have_persistent_neighbor)
    std::cout << fmt::format("mpi-persistent: not measured, MPI {}.{} has no MPI_Neighbor_*_init (MPI-4)\n",
                             MPI_VERSION, MPI_SUBVERSION);
  std::cout.flush();
}

int CollectivesCommand::run(MPI_Comm world) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(world, &world_rank);
  MPI_Comm_size(world, &world_size);
  const bool root = world_rank == 0;
  const Plan plan = make_plan(opt_, world_size);
  check_output_path(world, opt_.csv);  // a directory or a device there: refused before any launch
  const Environment env = Environment::collect(world);
  if (root && !opt_.quiet) print_header(opt_, env, world_size);
  Measurement measurement(opt_, plan, world);
  for (int launch = 0; launch < opt_.launches; ++launch) {
    measurement.launch(launch);
    if (root && !opt_.csv.empty()) write_csv(opt_.csv, measurement.rows().rows(), env);
  }
  const std::vector<ResultRow>& rows = measurement.rows().rows();
  if (root) print_summary(measurement.rows(), plan.contenders, plan.sizes, world_size, opt_.launches, opt_.csv);
  long errors = 0;
  for (const ResultRow& row : rows) errors += row.status == "error";
  MPI_Bcast(&errors, 1, MPI_LONG, 0, world);
  return errors ? 1 : 0;
}

}  // namespace

std::unique_ptr<Subcommand> make_collectives_command(CLI::App& parent) {
  return std::make_unique<CollectivesCommand>(parent);
}

}  // namespace isobench
