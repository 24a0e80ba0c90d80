#include "isostencil/plan.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace isostencil {

bool Plan::all_periodic() const {
  return std::all_of(grid.periodic.begin(), grid.periodic.end(), [](bool p) { return p; });
}

const AlgorithmPlan& Plan::at(iso::Algorithm algorithm) const {
  for (const auto& entry : algorithms)
    if (entry.algorithm == algorithm) return entry;
  throw iso::Error(std::string("isostencil::Plan::at: no figures for algorithm ") +
                   iso::to_string(algorithm));
}

const std::vector<iso::Algorithm>& plan_algorithms() {
  static const std::vector<iso::Algorithm> algorithms = [] {
    std::vector<iso::Algorithm> scheduled;
    for (const iso::AlgorithmInfo& info : iso::algorithm_table())
      if (info.scheduled) scheduled.push_back(info.algorithm);
    return scheduled;
  }();
  return algorithms;
}

const std::vector<iso::Collective>& plan_collectives() {
  static const std::vector<iso::Collective> collectives{iso::Collective::alltoall,
                                                        iso::Collective::allgather};
  return collectives;
}

Plan compute_plan(const std::string& description, const iso::OffsetList& offsets,
                  const iso::CartGeometry& grid, int ports) {
  Plan plan;
  plan.ports = ports;
  plan.description = description;
  plan.offsets = offsets;
  plan.grid = grid;
  for (iso::Algorithm algorithm : plan_algorithms()) {
    AlgorithmPlan entry;
    entry.algorithm = algorithm;
    entry.alltoall = iso::schedule_figures(offsets, grid, algorithm, iso::Collective::alltoall, ports);
    entry.allgather = iso::schedule_figures(offsets, grid, algorithm, iso::Collective::allgather, ports);
    plan.algorithms.push_back(entry);
  }
  plan.basis = iso::additive_basis(offsets, grid.periodic);
  return plan;
}

namespace {

std::string format_offset(const int* v, int dims) {
  std::string out = "(";
  for (int j = 0; j < dims; ++j)
    out += (j ? "," : "") + std::to_string(v[j]);
  return out + ")";
}

std::string format_vector(const std::vector<int>& v) {
  return format_offset(v.data(), static_cast<int>(v.size()));
}

// A text table with right-aligned numeric columns and left-aligned labels.
class Table {
public:
  /// The first `label_columns` and the last `trailing_labels` columns are
  /// left-aligned, the others right-aligned.
  explicit Table(std::vector<std::string> header, std::size_t label_columns,
                 std::size_t trailing_labels = 0)
      : label_columns_(label_columns), trailing_labels_(trailing_labels) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> width(rows_.front().size(), 0);
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c)
        width[c] = std::max(width[c], row[c].size());
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c) line += "  ";
        if (c < label_columns_ || c + trailing_labels_ >= row.size())
          line += fmt::format("{:<{}}", row[c], width[c]);
        else
          line += fmt::format("{:>{}}", row[c], width[c]);
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out += "  " + line + "\n";
    }
    return out;
  }

private:
  std::size_t label_columns_;
  std::size_t trailing_labels_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace

std::string format_plan_text(const Plan& plan) {
  const int dims = plan.grid.dims();
  long double procs = 1;
  for (int p : plan.grid.sizes)
    procs *= p;
  std::string out;
  out += fmt::format("neighborhood  {}\n", plan.description);
  out += fmt::format("  dimensions  d = {}\n", dims);
  out += fmt::format("  offsets     s = {}", plan.offsets.size());
  if (plan.offsets.size() > 0 && plan.description.rfind("Moore", 0) != 0) {
    const int shown = std::min(plan.offsets.size(), 12);
    std::string list;
    for (int i = 0; i < shown; ++i)
      list += (i ? " " : "") + format_offset(plan.offsets[i], dims);
    if (shown < plan.offsets.size()) list += " ...";
    out += ": " + list;
  }
  out += "\n";
  out += fmt::format("process grid  {} = {:.0f} processes\n", format_sizes(plan.grid.sizes),
                     static_cast<double>(procs));
  out += fmt::format("  periodic    {}{}\n", format_flags(plan.grid.periodic),
                     plan.all_periodic() ? " (torus)" : "");
  {
    const auto& vectors = plan.basis.vectors;
    const std::size_t shown = std::min<std::size_t>(vectors.size(), 12);
    std::string list;
    for (std::size_t k = 0; k < shown; ++k) list += (k ? " " : "") + format_vector(vectors[k]);
    if (shown < vectors.size()) list += " ...";
    out += fmt::format("basis         {} vectors{}{}\n", vectors.size(), vectors.empty() ? "" : ": ", list);
    out += fmt::format("  smallest    {}\n",
                       !plan.basis.minimal ? fmt::format("not known (lower bound {})", plan.basis.lower_bound)
                       : static_cast<int>(vectors.size()) == plan.basis.lower_bound
                           ? fmt::format("yes (meets the lower bound {})", plan.basis.lower_bound)
                           : fmt::format("yes (exact search; lower bound {})", plan.basis.lower_bound));
  }
  out += "\n";

  const bool mesh = !plan.all_periodic();
  std::vector<std::string> header{"algorithm", "collective", "rounds", "steps", "messages", "volume"};
  if (mesh) {
    header.emplace_back("messages total");
    header.emplace_back("volume total");
  }
  header.emplace_back("local copies");
  header.emplace_back("temp blocks");
  Table table(header, 2);
  for (const auto& entry : plan.algorithms) {
    for (iso::Collective collective : plan_collectives()) {
      const auto& f = entry.figures(collective);
      std::vector<std::string> row{iso::to_string(entry.algorithm), iso::to_string(collective),
                                   std::to_string(f.rounds), std::to_string(f.steps), std::to_string(f.messages),
                                   std::to_string(f.volume)};
      if (mesh) {
        row.push_back(std::to_string(f.messages_total));
        row.push_back(std::to_string(f.volume_total));
      }
      row.push_back(std::to_string(f.local_copies));
      row.push_back(std::to_string(f.temp_blocks));
      table.add(std::move(row));
    }
  }
  out += table.str();
  out += "\n";
  out +=
      mesh
          ? "rounds: global round list; messages, volume (block transfers), local copies and temp\n"
            "blocks: per process, maximum over processes; totals: sum over all processes\n"
          : "rounds: global round list; messages, volume (block transfers), local copies and temp\n"
            "blocks: per process (the same on every process of a torus)\n";
  out += plan.ports > 0 ? fmt::format("steps: rounds posted together, at most {} message{} each way (--ports)\n",
                                      plan.ports, plan.ports == 1 ? "" : "s")
                        : std::string("steps: rounds posted together (independent consecutive rounds; no port limit)\n");
  return out;
}

nlohmann::ordered_json plan_to_json(const Plan& plan) {
  nlohmann::ordered_json json;
  json["neighborhood"] = plan.description;
  json["dims"] = plan.grid.dims();
  json["neighbors"] = plan.offsets.size();
  json["procs"] = plan.grid.sizes;
  json["periodic"] = nlohmann::ordered_json::array();
  for (bool p : plan.grid.periodic)
    json["periodic"].push_back(p);
  long double procs = 1;
  for (int p : plan.grid.sizes)
    procs *= p;
  json["processes"] = static_cast<long long>(procs);
  json["ports"] = plan.ports;
  auto& algorithms = json["algorithms"];
  algorithms = nlohmann::ordered_json::object();
  for (const auto& entry : plan.algorithms) {
    auto& per_algorithm = algorithms[iso::to_string(entry.algorithm)];
    for (iso::Collective collective : plan_collectives()) {
      const auto& f = entry.figures(collective);
      per_algorithm[iso::to_string(collective)] = {
          {"rounds", f.rounds},
          {"steps", f.steps},
          {"messages", f.messages},
          {"volume", f.volume},
          {"messages_total", f.messages_total},
          {"volume_total", f.volume_total},
          {"local_copies", f.local_copies},
          {"temp_blocks", f.temp_blocks},
      };
    }
  }
  json["basis"] = {{"vectors", plan.basis.vectors},
                   {"lower_bound", plan.basis.lower_bound},
                   {"minimal", plan.basis.minimal}};
  return json;
}

std::string format_block(const iso::BlockRef& block) {
  return std::string(iso::to_string(block.buffer)) + "[" + std::to_string(block.block) + "]";
}

namespace {
std::string format_blocks(const std::vector<iso::BlockRef>& blocks) {
  std::string out;
  for (std::size_t k = 0; k < blocks.size(); ++k)
    out += (k ? " " : "") + format_block(blocks[k]);
  return out.empty() ? "-" : out;
}
std::string format_partner(int rank) {
  return rank < 0 ? "none" : std::to_string(rank);
}
}  // namespace

std::string format_schedule_text(const iso::Schedule& schedule, const iso::CartGeometry& grid,
                                 int rank) {
  std::vector<int> coords(static_cast<std::size_t>(grid.dims()));
  grid.coords_of(rank, coords.data());
  std::string out = fmt::format(
      "{} {}, process {} at {}: {} of {} global rounds active, {} messages, {} block transfers\n",
      iso::to_string(schedule.algorithm), iso::to_string(schedule.collective), rank,
      format_vector(coords), schedule.rounds.size(), schedule.num_global_rounds,
      schedule.messages_sent(), schedule.blocks_sent());
  for (const auto& round : schedule.rounds) {
    out += fmt::format("  round {:>3}  shift {}  to {}  from {}\n", round.index,
                       format_vector(round.shift), format_partner(round.send_rank),
                       format_partner(round.recv_rank));
    out += fmt::format("      send {:>3}: {}\n", round.send.size(), format_blocks(round.send));
    out += fmt::format("      recv {:>3}: {}\n", round.recv.size(), format_blocks(round.recv));
  }
  if (!schedule.copies.empty()) {
    std::string copies;
    for (const auto& copy : schedule.copies)
      copies += " " + format_block(copy.from) + "->" + format_block(copy.to);
    out += fmt::format("  local copies {}:{}\n", schedule.copies.size(), copies);
  }
  auto count = [](const std::vector<char>& used) {
    return std::count_if(used.begin(), used.end(), [](char c) { return c != 0; });
  };
  out += fmt::format("  temp slots used: T {}, T2 {}\n", count(schedule.uses_temp),
                     count(schedule.uses_temp2));
  return out;
}

nlohmann::ordered_json schedule_to_json(const iso::Schedule& schedule) {
  nlohmann::ordered_json json;
  json["algorithm"] = iso::to_string(schedule.algorithm);
  json["collective"] = iso::to_string(schedule.collective);
  json["global_rounds"] = schedule.num_global_rounds;
  json["messages"] = schedule.messages_sent();
  json["volume"] = schedule.blocks_sent();
  auto blocks = [](const std::vector<iso::BlockRef>& refs) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& ref : refs)
      list.push_back(format_block(ref));
    return list;
  };
  json["rounds"] = nlohmann::ordered_json::array();
  for (const auto& round : schedule.rounds) {
    json["rounds"].push_back({{"index", round.index},
                              {"shift", round.shift},
                              {"send_rank", round.send_rank},
                              {"recv_rank", round.recv_rank},
                              {"send", blocks(round.send)},
                              {"recv", blocks(round.recv)}});
  }
  json["copies"] = nlohmann::ordered_json::array();
  for (const auto& copy : schedule.copies)
    json["copies"].push_back({{"from", format_block(copy.from)}, {"to", format_block(copy.to)}});
  return json;
}

// ---------------------------------------------------------------------------
// Predictions under the cost model.

iso::BlockBytes regular_block_bytes(int neighbors, iso::Collective collective, long bytes) {
  iso::BlockBytes weights;
  const int send_blocks = collective == iso::Collective::alltoall ? neighbors : 1;
  weights.send.assign(static_cast<std::size_t>(std::max(send_blocks, 0)), bytes);
  weights.recv.assign(static_cast<std::size_t>(std::max(neighbors, 0)), bytes);
  return weights;
}

const Prediction& SizePrediction::at(iso::Algorithm algorithm, iso::Collective collective) const {
  const auto& order = iso::automatic_candidates();
  const auto found = std::find(order.begin(), order.end(), algorithm);
  if (found == order.end())
    throw iso::Error(std::string("isostencil::SizePrediction::at: no prediction for ") +
                     iso::to_string(algorithm));
  return entries[static_cast<std::size_t>(found - order.begin())]
                [collective == iso::Collective::alltoall ? 0 : 1];
}

Predictions predict(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                    const iso::CostModel& model, const std::vector<long>& block_bytes, int ports) {
  Predictions out;
  out.model = model;
  out.ports = ports;
  out.port_counts = iso::candidate_port_counts(ports);
  const std::size_t n_ports = out.port_counts.size();
  out.torus = std::all_of(grid.periodic.begin(), grid.periodic.end(), [](bool p) { return p; });
  long double procs = 1;
  for (int p : grid.sizes)
    procs *= p;
  out.processes = static_cast<long>(procs);
  // On a torus every process has the same schedule (up to a translation of
  // ranks), so one process's prediction is the maximum over ranks; not where
  // the model has nodes (ranks_per_node): a rank's place in its node sets
  // which of its messages leave it, so every process is, up to the first
  // 4096 (a bound on plan's work for huge tori; nodes that tile the grid
  // repeat within them).
  const bool nodes = model.ranks_per_node > 1;
  const int evaluated = !out.torus ? grid.num_procs()
                        : nodes    ? std::min(grid.num_procs(), 4096)
                                   : (grid.num_procs() > 0 ? 1 : 0);
  out.processes_evaluated = evaluated;
  const int s = offsets.size();
  const auto& collectives = plan_collectives();
  const std::vector<iso::Algorithm>& candidates = iso::automatic_candidates();

  std::vector<std::array<iso::BlockBytes, 2>> weights;
  for (long bytes : block_bytes) {
    SizePrediction size;
    size.block_bytes = bytes;
    size.entries.resize(candidates.size());
    for (auto& entry : size.entries)
      for (Prediction& p : entry) p.seconds_at.assign(n_ports, 0.0);
    out.sizes.push_back(size);
    weights.push_back({regular_block_bytes(s, iso::Collective::alltoall, bytes),
                       regular_block_bytes(s, iso::Collective::allgather, bytes)});
  }
  auto keep_max = [](Prediction& into, long rounds, long blocks, long bytes, std::size_t port, double seconds) {
    into.rounds = std::max(into.rounds, rounds);
    into.volume_blocks = std::max(into.volume_blocks, blocks);
    into.volume_bytes = std::max(into.volume_bytes, bytes);
    into.seconds_at[port] = std::max(into.seconds_at[port], seconds);
  };

  std::vector<int> coords(static_cast<std::size_t>(grid.dims()));
  std::vector<int> targets;
  for (int rank = 0; rank < evaluated; ++rank) {
    grid.coords_of(rank, coords.data());
    targets.clear();
    for (int i = 0; i < s; ++i) targets.push_back(grid.shifted_rank(coords.data(), offsets[i], +1));
    if (!iso::mpi_is_candidate(targets)) out.mpi_candidate = false;
    const long existing =
        static_cast<long>(std::count_if(targets.begin(), targets.end(), [](int t) { return t >= 0; }));

    for (std::size_t a = 0; a < candidates.size(); ++a) {
      for (std::size_t c = 0; c < collectives.size(); ++c) {
        if (candidates[a] == iso::Algorithm::mpi) {
          // The native collective: all messages in one call.
          for (std::size_t k = 0; k < out.sizes.size(); ++k)
            for (std::size_t p = 0; p < n_ports; ++p)
              keep_max(out.sizes[k].entries[a][c], existing > 0 ? 1 : 0, existing,
                       existing * out.sizes[k].block_bytes, p,
                       iso::predict_native_seconds(model, s, weights[k][c]));
          continue;
        }
        const iso::Schedule schedule =
            iso::build_schedule(offsets, grid, coords.data(), candidates[a], collectives[c]);
        const long rounds = static_cast<long>(schedule.rounds.size());
        const long blocks = schedule.blocks_sent();
        for (std::size_t k = 0; k < out.sizes.size(); ++k)
          for (std::size_t p = 0; p < n_ports; ++p)
            keep_max(out.sizes[k].entries[a][c], rounds, blocks, blocks * out.sizes[k].block_bytes, p,
                     iso::predict_execution_seconds(model, schedule, weights[k][c], rank, out.port_counts[p]));
      }
    }
  }

  // The library's rule: each candidate at its best port count, then the
  // cheapest (iso::cheapest_choice).
  for (auto& size : out.sizes) {
    for (std::size_t c = 0; c < 2; ++c) {
      std::vector<double> seconds;
      for (std::size_t a = 0; a < candidates.size(); ++a) {
        Prediction& p = size.entries[a][c];
        seconds.insert(seconds.end(), p.seconds_at.begin(), p.seconds_at.end());
        std::size_t best = 0;
        for (std::size_t k = 1; k < n_ports; ++k)
          if (p.seconds_at[k] < p.seconds_at[best]) best = k;
        p.seconds = p.seconds_at[best];
        p.ports = candidates[a] == iso::Algorithm::mpi ? 0 : out.port_counts[best];
      }
      const iso::CheapestChoice choice = iso::cheapest_choice(seconds, out.port_counts, out.mpi_candidate);
      size.choice[c] = choice.algorithm;
      size.choice_ports[c] = choice.ports;
    }
  }
  return out;
}

void add_tune_cache(Predictions& predictions, const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                    MPI_Comm comm) {
  predictions.tune_looked_up = true;
  predictions.tune_cache = iso::tune_cache_path();
  predictions.tune_machine = iso::machine_signature(comm);
  if (predictions.tune_cache.empty()) return;
  const auto& collectives = plan_collectives();
  for (auto& size : predictions.sizes)
    for (std::size_t c = 0; c < collectives.size(); ++c) {
      const std::string key = iso::tune_cache_key(
          predictions.tune_machine, collectives[c], offsets, grid, predictions.ports,
          iso::block_bytes_digest(regular_block_bytes(offsets.size(), collectives[c], size.block_bytes)));
      size.tuned[c] = iso::tune_cache_find(predictions.tune_cache, key);
    }
}

namespace {

// What tune chose, and "<- auto" where auto runs it instead of the model's
// choice (the library's rule: iso::tune_entry_contradicts).
std::string tuned_text(const std::optional<iso::TuneChoice>& tuned, iso::Algorithm model, int model_ports) {
  if (!tuned) return "not cached";
  double least = 0;
  for (const iso::TuneTrial& t : tuned->trials)
    if (least == 0 || t.seconds < least) least = t.seconds;
  return fmt::format("{} ({:.3f} us, {} timed){}", iso::algorithm_label(tuned->algorithm, tuned->ports), least * 1e6,
                     tuned->trials.size(), iso::tune_entry_contradicts(*tuned, model, model_ports) ? " <- auto" : "");
}

}  // namespace

std::string format_model_text(const iso::CostModel& model, const std::string& note) {
  return fmt::format(
      "cost model    alpha = {:.3g} s per step, beta = {:.3g} s per byte,\n"
      "              gamma = {:.3g} s per block entry, delta = {:.3g} s per further message "
      "of a step\n"
      "  from        {}\n",
      model.alpha, model.beta, model.gamma, model.delta, note.empty() ? model.source : note);
}

std::string format_predictions_text(const Predictions& predictions) {
  std::string out = "predicted time per call (docs/design/cost-model.md)\n";
  out += format_model_text(predictions.model, predictions.model_note);
  if (predictions.torus && predictions.processes_evaluated <= 1)
    out +=
        "  evaluated   one process: on a torus every process has the same schedule, so its\n"
        "              prediction is the maximum over ranks that auto takes\n";
  else if (predictions.torus)
    out += fmt::format(
        "  evaluated   {} processes (the model has nodes of {} ranks: a rank's place in its node\n"
        "              sets which messages leave it): times are maxima over them, as auto takes them\n",
        predictions.processes_evaluated, static_cast<long>(predictions.model.ranks_per_node));
  else
    out += fmt::format(
        "  evaluated   all {} processes (non-periodic dimensions): rounds, volume and time\n"
        "              are maxima over processes, as auto takes them\n",
        predictions.processes_evaluated);
  if (!predictions.mpi_candidate)
    out +=
        "  mpi         not a candidate of auto: a process sends two blocks to the same rank\n"
        "              (tiny torus; MPI libraries' own collectives are unsafe there, "
        "docs/design/irregular.md#repeated-partners-on-tiny-tori)\n";
  for (const auto& size : predictions.sizes) {
    out += fmt::format("\nblocks of {} bytes\n", size.block_bytes);
    Table table({"collective", "algorithm", "rounds", "volume [blocks]", "volume [bytes]",
                 "predicted [us]", "auto"},
                2, 1);
    for (iso::Collective collective : plan_collectives()) {
      for (iso::Algorithm algorithm : iso::automatic_candidates()) {
        const Prediction& p = size.at(algorithm, collective);
        std::string mark;
        if (algorithm == size.chosen(collective))
          mark = "<- auto";
        else if (algorithm == iso::Algorithm::mpi && !predictions.mpi_candidate)
          mark = "excluded";
        table.add({iso::to_string(collective), iso::algorithm_label(algorithm, p.ports), std::to_string(p.rounds),
                   std::to_string(p.volume_blocks), std::to_string(p.volume_bytes),
                   fmt::format("{:.3f}", p.seconds * 1e6), mark});
      }
    }
    out += table.str();
  }
  std::string limits;
  for (int p : predictions.port_counts) limits += (limits.empty() ? "" : ", ") + std::to_string(p);
  out +=
      "\nauto picks the least predicted time (ties: the first of " +
      iso::algorithm_names(iso::AlgorithmNames::fixed) + ";\n"
      "each at its best port limit of " + limits + ", :pK = at most K messages each way, 0 = no limit;\n"
      "mpi = the MPI library's neighborhood collective, all messages in one call)" +
      (predictions.tune_looked_up
           ? ", and what tune chose\nin an earlier run (the tune cache; <- auto: auto runs it instead, tune having timed the\n"
             "model's choice at more than 1.1 times it)"
           : "") +
      ":\n";
  std::vector<std::string> heads{"block", "alltoall", "allgather"};
  if (predictions.tune_looked_up) heads = {"block", "alltoall", "allgather", "tune alltoall", "tune allgather"};
  Table choices(heads, 3);
  for (const auto& size : predictions.sizes) {
    std::vector<std::string> row{fmt::format("{} B", size.block_bytes),
                                 iso::algorithm_label(size.chosen(iso::Collective::alltoall),
                                            size.chosen_ports(iso::Collective::alltoall)),
                                 iso::algorithm_label(size.chosen(iso::Collective::allgather),
                                            size.chosen_ports(iso::Collective::allgather))};
    if (predictions.tune_looked_up) {
      row.push_back(tuned_text(size.tuned[0], size.chosen(iso::Collective::alltoall),
                               size.chosen_ports(iso::Collective::alltoall)));
      row.push_back(tuned_text(size.tuned[1], size.chosen(iso::Collective::allgather),
                               size.chosen_ports(iso::Collective::allgather)));
    }
    choices.add(row);
  }
  out += choices.str();
  if (predictions.tune_looked_up)
    out += predictions.tune_cache.empty()
               ? "tune cache: off (ISO_TUNE_CACHE=off)\n"
               : "tune cache: " + predictions.tune_cache + ", keyed for " + predictions.tune_machine +
                     " (docs/design/cost-model.md#the-tune-cache)\n";
  return out;
}

nlohmann::ordered_json model_to_json(const iso::CostModel& model, const std::string& note) {
  return {{"alpha", model.alpha}, {"beta", model.beta},     {"gamma", model.gamma},
          {"delta", model.delta}, {"source", model.source}, {"note", note}};
}

nlohmann::ordered_json predictions_to_json(const Predictions& predictions) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& size : predictions.sizes) {
    auto& per_size = json[std::to_string(size.block_bytes)];
    for (iso::Algorithm algorithm : iso::automatic_candidates())
      for (iso::Collective collective : plan_collectives()) {
        const Prediction& p = size.at(algorithm, collective);
        per_size[iso::to_string(algorithm)][iso::to_string(collective)] = {
            {"rounds", p.rounds},
            {"volume_blocks", p.volume_blocks},
            {"volume_bytes", p.volume_bytes},
            {"predicted_seconds", p.seconds},
            {"ports", p.ports},
        };
      }
    for (iso::Collective collective : plan_collectives()) {
      per_size["auto"][iso::to_string(collective)] = iso::to_string(size.chosen(collective));
      per_size["auto_ports"][iso::to_string(collective)] = size.chosen_ports(collective);
    }
    if (predictions.tune_looked_up)
      for (std::size_t c = 0; c < plan_collectives().size(); ++c) {
        const auto& tuned = size.tuned[c];
        nlohmann::ordered_json entry = {{"cached", tuned.has_value()}};
        if (tuned) {
          entry["algorithm"] = iso::to_string(tuned->algorithm);
          entry["ports"] = tuned->ports;
          auto trials = nlohmann::ordered_json::array();
          for (const iso::TuneTrial& t : tuned->trials)
            trials.push_back({{"algorithm", iso::to_string(t.algorithm)},
                              {"ports", t.ports},
                              {"calls", t.calls},
                              {"seconds", t.seconds}});
          entry["trials"] = trials;
          const iso::Collective collective = plan_collectives()[c];
          entry["auto_follows"] =
              iso::tune_entry_contradicts(*tuned, size.chosen(collective), size.chosen_ports(collective));
        }
        per_size["tune"][iso::to_string(plan_collectives()[c])] = entry;
      }
  }
  return json;
}

nlohmann::ordered_json prediction_basis_to_json(const Predictions& predictions) {
  return {{"processes", predictions.processes},
          {"processes_evaluated", predictions.processes_evaluated},
          {"torus", predictions.torus},
          {"mpi_candidate", predictions.mpi_candidate},
          {"ports", predictions.ports},
          {"port_counts", predictions.port_counts},
          {"tune_cache", predictions.tune_looked_up ? nlohmann::ordered_json{{"path", predictions.tune_cache},
                                                                             {"machine", predictions.tune_machine}}
                                                    : nlohmann::ordered_json()},
          {"rule",
           "auto = least predicted_seconds (maximum over processes), each algorithm at its best of "
           "port_counts; ties: first of " +
               iso::algorithm_names(iso::AlgorithmNames::fixed) +
               "; mpi excluded where a process's targets coincide"}};
}

iso::CostModel load_model(const std::string& spec, const std::string& option) {
  if (spec == "defaults") return iso::CostModel::builtin();
  try {
    return iso::CostModel::load(spec);
  } catch (const iso::Error& error) {
    throw UsageError(option + " " + spec + ": " + error.what() +
                     " (give a file of \"alpha = ...\" lines, defaults or calibrate)");
  }
}

iso::CostModel model_without_calibration(std::string& note) {
  const iso::CostModelSource source = iso::cost_model_source();
  // A character device (/dev/null) keeps no model, named or cached: plan
  // then uses the defaults, as it does where nothing was calibrated.
  if (source.path != "defaults" && iso::inspect_path(source.path, iso::PathUse::cache).keep_nothing) {
    note = std::string("built-in defaults (") + (source.named ? "ISO_COST_MODEL=" : "the cost model cache ") + source.path +
           " is a character device: no model kept; plan calibrates only with --model calibrate)";
    return iso::CostModel::builtin();
  }
  if (source.named) {
    note = "ISO_COST_MODEL=" + source.path;
    return load_model(source.path, "ISO_COST_MODEL");
  }
  const std::string& path = source.path;
  if (iso::inspect_path(path, iso::PathUse::cache).kind == iso::PathTarget::Kind::missing) {
    note = "built-in defaults (no ISO_COST_MODEL, no cached calibration " + path +
           "; plan calibrates only with --model calibrate)";
    return iso::CostModel::builtin();
  }
  try {
    iso::CostModel model = iso::CostModel::load(path);
    note = "the cached calibration " + path;
    return model;
  } catch (const iso::Error& error) {
    note = std::string("built-in defaults (the cached calibration cannot be used: ") +
           error.what() + ")";
    return iso::CostModel::builtin();
  }
}

}  // namespace isostencil
