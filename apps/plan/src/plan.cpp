#include "isostencil/plan.hpp"

#include "isostencil/spec.hpp"

#include "iso/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
  static const std::vector<iso::Algorithm> algorithms{iso::Algorithm::linear, iso::Algorithm::torus,
                                                      iso::Algorithm::direct};
  return algorithms;
}

const std::vector<iso::Collective>& plan_collectives() {
  static const std::vector<iso::Collective> collectives{iso::Collective::alltoall,
                                                        iso::Collective::allgather};
  return collectives;
}

Plan compute_plan(const std::string& description, const iso::OffsetList& offsets,
                  const iso::CartGeometry& grid) {
  Plan plan;
  plan.description = description;
  plan.offsets = offsets;
  plan.grid = grid;
  for (iso::Algorithm algorithm : plan_algorithms()) {
    AlgorithmPlan entry;
    entry.algorithm = algorithm;
    entry.alltoall = iso::schedule_figures(offsets, grid, algorithm, iso::Collective::alltoall);
    entry.allgather = iso::schedule_figures(offsets, grid, algorithm, iso::Collective::allgather);
    plan.algorithms.push_back(entry);
  }
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
  explicit Table(std::vector<std::string> header, std::size_t label_columns)
      : label_columns_(label_columns) {
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
        if (c < label_columns_)
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
  out += "\n";

  const bool mesh = !plan.all_periodic();
  std::vector<std::string> header{"algorithm", "collective", "rounds", "messages", "volume"};
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
                                   std::to_string(f.rounds), std::to_string(f.messages),
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
  auto& algorithms = json["algorithms"];
  algorithms = nlohmann::ordered_json::object();
  for (const auto& entry : plan.algorithms) {
    auto& per_algorithm = algorithms[iso::to_string(entry.algorithm)];
    for (iso::Collective collective : plan_collectives()) {
      const auto& f = entry.figures(collective);
      per_algorithm[iso::to_string(collective)] = {
          {"rounds", f.rounds},
          {"messages", f.messages},
          {"volume", f.volume},
          {"messages_total", f.messages_total},
          {"volume_total", f.volume_total},
          {"local_copies", f.local_copies},
          {"temp_blocks", f.temp_blocks},
      };
    }
  }
  return json;
}

std::string format_block(const iso::BlockRef& block) {
  switch (block.buffer) {
    case iso::Buffer::send:
      return "S[" + std::to_string(block.block) + "]";
    case iso::Buffer::recv:
      return "R[" + std::to_string(block.block) + "]";
    case iso::Buffer::temp:
      return "T[" + std::to_string(block.block) + "]";
    case iso::Buffer::temp2:
      return "T2[" + std::to_string(block.block) + "]";
  }
  return "?[" + std::to_string(block.block) + "]";
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

}  // namespace isostencil
