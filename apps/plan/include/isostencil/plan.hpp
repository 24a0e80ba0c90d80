// `isostencil plan`: a neighborhood's schedule figures for every algorithm and
// collective, as a text table or JSON. Pure computation (no MPI calls), so it
// is unit-testable and `plan` runs without mpirun.
#pragma once

#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <nlohmann/json.hpp>

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

  bool all_periodic() const;
  const AlgorithmPlan& at(iso::Algorithm algorithm) const;
};

/// linear, torus, direct: the algorithms `plan` and `demo` report, in order.
const std::vector<iso::Algorithm>& plan_algorithms();
const std::vector<iso::Collective>& plan_collectives();

/// Figures of every algorithm and collective (iso::schedule_figures).
Plan compute_plan(const std::string& description, const iso::OffsetList& offsets,
                  const iso::CartGeometry& grid);

/// The neighborhood summary and one table row per algorithm and collective;
/// on grids with non-periodic dimensions also the totals over processes.
std::string format_plan_text(const Plan& plan);
/// {"dims", "neighbors", "procs", "periodic", "algorithms": {alg: {coll: {...}}}}
nlohmann::ordered_json plan_to_json(const Plan& plan);

/// "S[3]", "R[0]", "T[12]", "T2[5]": a block slot as ALGORITHMS.md names it.
std::string format_block(const iso::BlockRef& block);
/// Every round of one process's schedule: shift, partners, blocks; then the
/// local copies and temporary slots.
std::string format_schedule_text(const iso::Schedule& schedule, const iso::CartGeometry& grid,
                                 int rank);
nlohmann::ordered_json schedule_to_json(const iso::Schedule& schedule);

}  // namespace isostencil
