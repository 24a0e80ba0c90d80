// Cost model for choosing an algorithm (ALGORITHMS.md section 5).
//
// A round costs  alpha + beta * bytes + gamma * entries  (latency, inverse
// bandwidth, datatype cost per block entry); a schedule costs the sum of its
// rounds. The MPI library's own neighborhood collective posts all s messages
// at once: alpha + delta * (s - 1) + beta * bytes + gamma * s.
#pragma once

#include "iso/schedule.hpp"

#include <mpi.h>

#include <string>
#include <vector>

namespace iso {

struct CostModel {
  double alpha = 3e-6;    ///< seconds per round (message start-up and completion)
  double beta = 2e-10;    ///< seconds per byte
  double gamma = 2e-8;    ///< seconds per datatype entry (block) sent or received
  double delta = 1e-6;    ///< seconds per extra message in flight (native collective)
  std::string source = "defaults";  ///< "defaults", "calibrated" or the file it came from

  /// Reads "key = value" lines (alpha, beta, gamma, delta; '#' comments).
  /// Throws iso::Error naming the file and line on a malformed file.
  static CostModel load(const std::string& path);
  /// Writes the model; throws iso::Error when the file cannot be written.
  void save(const std::string& path) const;

  /// Measures alpha, beta, gamma and delta on `comm` in about `budget_seconds`
  /// (collective; every rank gets the same figures).
  static CostModel calibrate(MPI_Comm comm, double budget_seconds = 2.0);

  /// The model `automatic` uses on `comm` (collective on first use): the file
  /// named by ISO_COST_MODEL if set ("defaults" selects the built-in figures),
  /// else the cached calibration file (default_cache_path()), else a fresh
  /// calibration that is then written there (on a one-rank communicator the
  /// defaults, not cached: there is nobody to measure against). Cached per
  /// process.
  static const CostModel& for_comm(MPI_Comm comm);
  static std::string default_cache_path();
};

/// Byte size of each block of a collective as this process sees it, used to
/// weigh schedule entries: send[i] (one entry for allgather), recv[i].
struct BlockBytes {
  std::vector<long> send;
  std::vector<long> recv;
};

/// Predicted seconds of one schedule at this process.
double predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes);
/// Predicted seconds of the MPI library's neighborhood collective at this
/// process (`neighbors` messages each way).
double predict_native_seconds(const CostModel& model, int neighbors, const BlockBytes& bytes);

}  // namespace iso
