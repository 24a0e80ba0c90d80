// `isostencil plan`: a neighborhood's schedule figures for every algorithm and
// collective, as a text table or JSON. Pure computation (no MPI calls), so it
// is unit-testable and `plan` runs without mpirun.
#pragma once

#include "iso/cost_model.hpp"
#include "iso/tune_cache.hpp"
#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace isostencil {

struct AlgorithmPlan {
  iso::Algorithm algorithm = iso::Algorithm::linear;
  iso::ScheduleFigures alltoall;
  iso::ScheduleFigures allgather;

  const iso::ScheduleFigures& figures(iso::Collective collective) const {
    return collective == iso::Collective::alltoall ? alltoall : allgather;
  }
};

struct Plan {
  std::string description;  ///< "Moore d=3 r=1, self excluded", "explicit offsets", ...
  iso::OffsetList offsets;
  iso::CartGeometry grid;
  std::vector<AlgorithmPlan> algorithms;  ///< in plan_algorithms() order
  iso::AdditiveBasis basis;               ///< the basis algorithm's vectors (iso::additive_basis)
  int ports = 0;                          ///< for the steps column (0: no limit)

  bool all_periodic() const;
  const AlgorithmPlan& at(iso::Algorithm algorithm) const;
};

/// The algorithms with a schedule of their own (iso::algorithm_table(): linear,
/// torus, direct, basis), the ones `plan` reports, in table order.
const std::vector<iso::Algorithm>& plan_algorithms();
const std::vector<iso::Collective>& plan_collectives();

/// Figures of every algorithm and collective (iso::schedule_figures).
/// `ports`: the steps an operation runs with OperationOptions::ports (0: no limit).
Plan compute_plan(const std::string& description, const iso::OffsetList& offsets,
                  const iso::CartGeometry& grid, int ports = 0);

/// The neighborhood summary and one table row per algorithm and collective;
/// on grids with non-periodic dimensions also the totals over processes.
std::string format_plan_text(const Plan& plan);
/// {"dims", "neighbors", "procs", "periodic", "algorithms": {alg: {coll: {...}}},
///  "basis": {"vectors", "lower_bound", "minimal"}}
nlohmann::ordered_json plan_to_json(const Plan& plan);

/// "S[3]", "R[0]", "T[12]", "T2[5]": a block slot as docs/design/schedules.md#buffer-scheme names it.
std::string format_block(const iso::BlockRef& block);
/// Every round of one process's schedule: shift, partners, blocks; then the
/// local copies and temporary slots.
std::string format_schedule_text(const iso::Schedule& schedule, const iso::CartGeometry& grid,
                                 int rank);
nlohmann::ordered_json schedule_to_json(const iso::Schedule& schedule);

// ---------------------------------------------------------------------------
// Predictions under the cost model (docs/design/cost-model.md#predicting-with-plan; `plan --predict`, `demo`).
// Pure computation with the library's own predict_execution_seconds and
// predict_native_seconds, and the rule of Algorithm::automatic
// (iso::cheapest_algorithm over iso::automatic_candidates()).

/// The block sizes the library weighs a regular collective's schedule entries
/// with: s send blocks (alltoall) or one (allgather), s receive blocks, each
/// of `bytes` bytes.
iso::BlockBytes regular_block_bytes(int neighbors, iso::Collective collective, long bytes);

/// One algorithm and collective at one block size.
struct Prediction {
  long rounds = 0;         ///< communication rounds at a process (the native collective: 1)
  long volume_blocks = 0;  ///< blocks sent per call by a process
  long volume_bytes = 0;   ///< bytes sent per call by a process
  double seconds = 0;      ///< predicted time per call, at `ports`
  /// The port limit of that prediction: the one asked for, or where that is
  /// 0 the best of iso::candidate_port_counts (mpi: 0).
  int ports = 0;
  std::vector<double> seconds_at;  ///< per candidate port count (maximum over processes)
};

struct SizePrediction {
  long block_bytes = 0;
  /// [algorithm in iso::automatic_candidates() order][0: alltoall, 1: allgather]
  std::vector<std::array<Prediction, 2>> entries;
  std::array<iso::Algorithm, 2> choice{iso::Algorithm::linear, iso::Algorithm::linear};
  std::array<int, 2> choice_ports{0, 0};  ///< the port limit auto runs `choice` with
  /// What Algorithm::tune chose earlier for this operation, from the tune
  /// cache (add_tune_cache; empty: not cached, or not looked up).
  std::array<std::optional<iso::TuneChoice>, 2> tuned;

  const Prediction& at(iso::Algorithm algorithm, iso::Collective collective) const;
  iso::Algorithm chosen(iso::Collective collective) const {
    return choice[collective == iso::Collective::alltoall ? 0 : 1];
  }
  int chosen_ports(iso::Collective collective) const {
    return choice_ports[collective == iso::Collective::alltoall ? 0 : 1];
  }
};

struct Predictions {
  iso::CostModel model;
  std::string model_note;        ///< where the model came from, for the reader
  bool torus = true;             ///< every dimension periodic: one process evaluated
  long processes = 0;            ///< processes of the grid
  long processes_evaluated = 0;  ///< 1 on a torus, all on a mesh
  /// False where some process sends two blocks to the same rank (tiny tori):
  /// automatic never picks mpi there (docs/design/irregular.md#repeated-partners-on-tiny-tori).
  bool mpi_candidate = true;
  std::vector<SizePrediction> sizes;
  int ports = 0;                 ///< the port limit asked for (--ports; 0: no limit)
  std::vector<int> port_counts;  ///< what auto considers (iso::candidate_port_counts)
  bool tune_looked_up = false;   ///< add_tune_cache ran
  std::string tune_cache;        ///< its file ("" when ISO_TUNE_CACHE=off)
  std::string tune_machine;      ///< the machine signature its keys were made with
};

/// Figures (maximum over the evaluated processes) and predicted times of every
/// candidate and collective for each block size, and automatic's choice. On a
/// torus every process has the same schedule, so one process is evaluated
/// and its figures are the maximum over ranks the library takes; on a mesh
/// every process is evaluated (call check_limits first: that is
/// processes x (offsets + torus rounds) work).
Predictions predict(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                    const iso::CostModel& model, const std::vector<long>& block_bytes, int ports = 0);

/// Looks every size and collective up in the tune cache (iso::tune_cache_path)
/// under the key a run of the same operation on one host with this
/// process's environment would have (machine signature over `comm`, which
/// should be MPI_COMM_SELF unless every rank calls).
void add_tune_cache(Predictions& predictions, const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                    MPI_Comm comm);

/// "alpha = 3e-06 s/round, beta = ..." and the source.
std::string format_model_text(const iso::CostModel& model, const std::string& note);
/// One table per block size, automatic's choice marked.
std::string format_predictions_text(const Predictions& predictions);
/// {"alpha", "beta", "gamma", "delta", "source", "note"}
nlohmann::ordered_json model_to_json(const iso::CostModel& model, const std::string& note);
/// {"8": {"linear": {"alltoall": {"rounds", "volume_blocks", "volume_bytes",
/// "predicted_seconds"}, "allgather": {...}}, ..., "mpi": {...},
/// "auto": {"alltoall": "torus", "allgather": "torus"}}, "512": {...}}
nlohmann::ordered_json predictions_to_json(const Predictions& predictions);
/// How the predictions were evaluated: {"processes", "processes_evaluated",
/// "torus", "mpi_candidate", "rule"}.
nlohmann::ordered_json prediction_basis_to_json(const Predictions& predictions);

/// The model a command uses when the user names one: "defaults" (built-in
/// figures) or a file of "key = value" lines. UsageError naming `option` when
/// the file cannot be used.
iso::CostModel load_model(const std::string& spec, const std::string& option = "--model");

/// The model without --model and without MPI (`plan`): CostModel::for_comm's
/// sources in its order (iso::cost_model_source(): ISO_COST_MODEL, which must
/// load, else the cached calibration) but never a calibration: without
/// either, the built-in defaults. `note` says which source was used (and why
/// a cache file was skipped).
iso::CostModel model_without_calibration(std::string& note);

}  // namespace isostencil
