#include "isostencil/bench/report.hpp"

#include "isostencil/bench/stats.hpp"

#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

namespace isobench {

namespace {

std::string micro(double seconds) { return fmt::format("{:.4f}", seconds * 1e6); }

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string format_dims(const std::vector<int>& dims) {
  std::string out;
  for (std::size_t k = 0; k < dims.size(); ++k) out += (k ? "x" : "") + std::to_string(dims[k]);
  return out;
}

std::string format_periodic(const std::vector<bool>& periodic) {
  std::string out;
  for (std::size_t k = 0; k < periodic.size(); ++k) out += (k ? "," : "") + std::string(periodic[k] ? "1" : "0");
  return out;
}

Environment Environment::collect(MPI_Comm comm) {
  Environment env;
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  env.mpi_library = std::string(library, static_cast<std::size_t>(std::max(length, 0))).c_str();
  if (const auto end = env.mpi_library.find_first_of("\r\n"); end != std::string::npos)
    env.mpi_library.resize(end);
  while (!env.mpi_library.empty() && std::string(" \t,;").find(env.mpi_library.back()) != std::string::npos)
    env.mpi_library.pop_back();
  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);
  env.mpi_version = fmt::format("{}.{}", version, subversion);
  MPI_Comm_size(comm, &env.np);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) env.hostname = host;
  // Rank 0's clock names the run on every rank.
  long long now = static_cast<long long>(std::time(nullptr));
  MPI_Bcast(&now, 1, MPI_LONG_LONG, 0, comm);
  const std::time_t t = static_cast<std::time_t>(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char date[32] = {};
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  env.date = date;
  return env;
}

std::string csv_header() {
  return "operation,neighborhood,dims,neighbors,size_bytes,send_bytes,contender,chosen,status,note,"
         "median_us,min_us,max_us,launches,reps,reps_kept,outliers_removed,launch_medians_us,"
         "mpi_library,mpi_version,np,proc_dims,periodic,hostname,date,turn_medians_us";
}

std::string csv_line(const ResultRow& row, const Environment& env) {
  const LaunchSummary summary = summarize_launches(row.launch_medians);
  const bool timed = row.status == "ok" && summary.launches > 0;
  std::string medians;
  for (std::size_t k = 0; k < row.launch_medians.size(); ++k)
    medians += (k ? ";" : "") + micro(row.launch_medians[k]);
  std::string turns;
  for (std::size_t k = 0; k < row.turn_medians.size(); ++k)
    turns += (k ? ";" : "") + micro(row.turn_medians[k]);
  std::vector<std::string> fields = {
      row.operation,
      row.neighborhood,
      std::to_string(row.dims),
      std::to_string(row.neighbors),
      std::to_string(row.size_bytes),
      std::to_string(row.send_bytes),
      row.contender,
      row.chosen,
      row.status,
      row.note,
      timed ? micro(summary.median) : "",
      timed ? micro(summary.min) : "",
      timed ? micro(summary.max) : "",
      std::to_string(timed ? summary.launches : 0),
      std::to_string(row.reps),
      std::to_string(row.reps_kept),
      std::to_string(row.outliers),
      medians,
      env.mpi_library,
      env.mpi_version,
      std::to_string(env.np),
      row.proc_dims,
      row.periodic,
      env.hostname,
      env.date,
      turns};
  std::string line;
  for (std::size_t k = 0; k < fields.size(); ++k) line += (k ? "," : "") + csv_field(fields[k]);
  return line;
}

void write_csv(const std::string& path, const std::vector<ResultRow>& rows, const Environment& env) {
  std::string text = csv_header() + "\n";
  for (const ResultRow& row : rows) text += csv_line(row, env) + "\n";
  write_text_file(path, text);
}

void write_text_file(const std::string& path, const std::string& text) {
  try {
    iso::write_file(path, text, iso::PathUse::output);
  } catch (const iso::Error& error) {
    throw std::runtime_error(error.what());
  }
}

void check_output_path(MPI_Comm comm, const std::string& path, const std::string& option) {
  if (!path.empty()) iso::agreed_target(comm, path, iso::PathUse::output, option + " " + path);
}

std::string format_bytes(long long bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, units[unit]);
  return fmt::format("{:.1f} {}", value, units[unit]);
}

long long parse_bytes(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !(value >= 0)) return -1;
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I')) suffix.pop_back();
  double scale = 1;
  if (suffix.empty()) scale = 1;
  else if (suffix == "K" || suffix == "k") scale = 1024.0;
  else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  else return -1;
  const double bytes = value * scale;
  if (bytes > 9e18) return -1;
  return static_cast<long long>(std::llround(bytes));
}

}  // namespace isobench
