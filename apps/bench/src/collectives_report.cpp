// `iso-bench collectives`, the report: the result rows (one per operation,
// neighborhood, size and contender, in output order) and the summary tables
// rank 0 prints at the end.
#include "collectives.hpp"

#include "isostencil/bench/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

namespace isobench::collectives {

namespace {

std::string key_of(const std::string& operation, const std::string& nbh, long long m, const std::string& contender) {
  return fmt::format("{}|{}|{}|{}", operation, nbh, m, contender);
}

}  // namespace

ResultRow& RowTable::row_for(Op op, const NamedNeighborhood& n, long long m, long long send_bytes, const Contender& c,
                             const std::string& proc_dims, const std::string& periodic) {
  const std::string key = key_of(op_name(op), n.name, m, c.name);
  auto found = row_of_.find(key);
  if (found != row_of_.end()) return rows_[found->second];
  ResultRow row;
  row.operation = op_name(op);
  row.neighborhood = n.name;
  row.dims = n.offsets.dims();
  row.neighbors = n.offsets.size();
  row.size_bytes = m;
  row.send_bytes = send_bytes;
  row.contender = c.name;
  row.status = "ok";
  row.proc_dims = proc_dims;
  row.periodic = periodic;
  row.reps = reps_;
  row_of_[key] = rows_.size();
  rows_.push_back(row);
  return rows_.back();
}

const ResultRow* RowTable::find(const std::string& operation, const std::string& neighborhood, long long m,
                                const std::string& contender) const {
  auto found = row_of_.find(key_of(operation, neighborhood, m, contender));
  return found == row_of_.end() ? nullptr : &rows_[found->second];
}

ResultRow& RowTable::at(Op op, const std::string& neighborhood, long long m, const std::string& contender) {
  return rows_[row_of_.at(key_of(op_name(op), neighborhood, m, contender))];
}

namespace {

/// What the choosing contenders (auto, tune, with or without :pK) ran per
/// size: nothing when there are none.
void print_choices(const RowTable& table, const ResultRow& first, const std::vector<Contender>& contenders,
                   const std::vector<long long>& sizes) {
  std::vector<const Contender*> choosing;
  for (const Contender& c : contenders)
    if (c.kind == Kind::iso && (c.algorithm == iso::Algorithm::automatic || c.algorithm == iso::Algorithm::tune))
      choosing.push_back(&c);
  if (choosing.empty()) return;
  std::vector<std::size_t> width;
  for (const Contender* c : choosing) {
    std::size_t w = std::max<std::size_t>(c->name.size(), 8);
    for (long long m : sizes)
      if (const ResultRow* r = table.find(first.operation, first.neighborhood, m, c->name))
        w = std::max(w, r->chosen.size());
    width.push_back(w);
  }
  std::string header = fmt::format("{:>9}", "chosen");
  for (std::size_t k = 0; k < choosing.size(); ++k) header += fmt::format("  {:<{}}", choosing[k]->name, width[k]);
  auto trimmed = [](std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  };
  std::cout << trimmed(header) << "\n";
  for (long long m : sizes) {
    std::string line = fmt::format("{:>9}", format_bytes(m));
    for (std::size_t k = 0; k < choosing.size(); ++k) {
      const ResultRow* r = table.find(first.operation, first.neighborhood, m, choosing[k]->name);
      line += fmt::format("  {:<{}}", r && !r->chosen.empty() ? r->chosen : "-", width[k]);
    }
    std::cout << trimmed(line) << "\n";
  }
}

/// One table: a line per size, a column per contender.
void print_table(const RowTable& table, const ResultRow& first, const std::vector<Contender>& contenders,
                 const std::vector<long long>& sizes, int world_size, int launches) {
  std::cout << fmt::format("\n{} {} (s = {}, {} ranks, {}): time per call [us], median of {} launch medians\n",
                           first.operation, first.neighborhood, first.neighbors, world_size, first.proc_dims,
                           launches);
  std::string header = fmt::format("{:>9}", "size");
  for (const Contender& c : contenders) header += fmt::format(" {:>12}", c.name);
  std::cout << header << "\n";
  for (long long m : sizes) {
    std::string line = fmt::format("{:>9}", format_bytes(m));
    for (const Contender& c : contenders) {
      const ResultRow* r = table.find(first.operation, first.neighborhood, m, c.name);
      if (!r)
        line += fmt::format(" {:>12}", "-");
      else if (r->status == "ok" && !r->launch_medians.empty())
        line += fmt::format(" {:>12.2f}", summarize_launches(r->launch_medians).median * 1e6);
      else
        line += fmt::format(" {:>12}", r->status);
    }
    std::cout << line << "\n";
  }
  print_choices(table, first, contenders, sizes);
}

}  // namespace

void print_summary(const RowTable& table, const std::vector<Contender>& contenders,
                   const std::vector<long long>& sizes, int world_size, int launches, const std::string& csv) {
  const std::vector<ResultRow>& rows = table.rows();
  std::string current;
  for (const ResultRow& row : rows) {
    const std::string name = row.operation + " " + row.neighborhood;
    if (name == current) continue;
    current = name;
    print_table(table, row, contenders, sizes, world_size, launches);
  }
  long errors = 0, skipped = 0;
  for (const ResultRow& row : rows) {
    errors += row.status == "error";
    skipped += row.status == "skipped";
  }
  std::cout << fmt::format("\n{} rows: {} measured, {} skipped, {} errors{}\n", rows.size(),
                           rows.size() - static_cast<std::size_t>(errors + skipped), skipped, errors,
                           csv.empty() ? "" : "; CSV: " + csv);
  if (errors) {
    for (const ResultRow& row : rows)
      if (row.status == "error")
        std::cout << fmt::format("error: {} {} {} {}: {}\n", row.operation, row.neighborhood,
                                 format_bytes(row.size_bytes), row.contender, row.note);
  }
  std::cout.flush();
}

}  // namespace isobench::collectives
