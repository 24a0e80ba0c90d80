// Result rows and their CSV form: one row per (operation, neighborhood, size,
// contender) with the statistics and the environment they were measured in.
#pragma once

#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

namespace isobench {

/// Where the numbers come from (the same on every rank; filled on all).
struct Environment {
  std::string mpi_library;  ///< first line of MPI_Get_library_version
  std::string mpi_version;  ///< MPI_Get_version, "3.1"
  int np = 1;
  std::string hostname;
  std::string date;         ///< start of the run, ISO 8601 UTC
  static Environment collect(MPI_Comm comm);
};

struct ResultRow {
  std::string operation;     ///< alltoall, allgather, alltoallw, setup
  std::string neighborhood;  ///< e.g. moore-d3-r1
  int dims = 0;
  int neighbors = 0;         ///< s
  long long size_bytes = 0;  ///< block size (alltoallw: the base m)
  long long send_bytes = 0;  ///< send buffer per rank
  std::string contender;
  std::string chosen;        ///< the algorithm `auto` picked; else empty
  std::string status;        ///< ok, skipped, error
  std::string note;
  std::vector<double> launch_medians;  ///< seconds, one per launch
  /// Seconds, the median of each turn of interleaved timing (iso-bench
  /// --interleave), launch after launch: the same turns for every contender
  /// of a point, so ratios can be taken turn by turn. Empty otherwise.
  std::vector<double> turn_medians;
  long long reps = 0;        ///< repetitions per launch
  long long reps_kept = 0;   ///< over all launches
  long long outliers = 0;    ///< over all launches
  std::string proc_dims;     ///< "2x1x1"
  std::string periodic;      ///< "1,1,1"
};

/// The CSV header line (no newline).
std::string csv_header();
/// One CSV line (no newline); fields quoted as RFC 4180 where needed.
std::string csv_line(const ResultRow& row, const Environment& env);
/// Writes header and rows; throws std::runtime_error when the file cannot be written.
void write_csv(const std::string& path, const std::vector<ResultRow>& rows, const Environment& env);

/// Writes `text` at `path` by iso/file_write.hpp's rule for outputs (a
/// regular file replaced whole, a link followed and kept; a directory, a
/// device or a FIFO refused): every benchmark's CSV goes through here.
/// Throws std::runtime_error naming the path.
void write_text_file(const std::string& path, const std::string& text);

/// Collective: the same error on every rank, before anything is measured,
/// when `path` (non-empty) may not hold an output (iso::agreed_target).
void check_output_path(MPI_Comm comm, const std::string& path, const std::string& option = "--csv");

/// One CSV field, quoted as RFC 4180 when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

/// Writes one CSV line: the fields as `out` formats them, comma-separated.
/// (Strings that may hold commas go through csv_field first.)
template <class... Fields>
void write_csv_fields(std::ostream& out, const Fields&... fields) {
  const char* separator = "";
  ((out << separator << fields, separator = ","), ...);
  out << '\n';
}

/// "2x1x1" and "1,1,1".
std::string format_dims(const std::vector<int>& dims);
std::string format_periodic(const std::vector<bool>& periodic);

std::string format_bytes(long long bytes);  ///< "64 B", "4 KiB", "1.5 MiB"
/// Parses "1G", "512M", "64K", "4096" (binary units) into bytes; -1 when malformed.
long long parse_bytes(const std::string& text);

}  // namespace isobench
