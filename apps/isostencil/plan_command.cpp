// `isostencil plan`: the schedule figures of a neighborhood for every
// algorithm and collective. All work on rank 0; no communication.
#include "command.hpp"

#include "isostencil/plan.hpp"
#include "isostencil/spec.hpp"

#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <iostream>

namespace isostencil::cli {

namespace {

class PlanCommand final : public Command {
public:
  explicit PlanCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "plan",
        "Print a neighborhood's schedules and their figures (rounds, messages, block volume) "
        "for the linear, torus and direct algorithms, alltoall and allgather");
    app_->footer(
        "Examples:\n"
        "  isostencil plan --moore 3:1                    # 3-D 27-point stencil, 3x3x3 torus\n"
        "  isostencil plan --moore 2:1 --procs 4,4 --mesh # non-periodic: max and totals\n"
        "  isostencil plan --offsets \"1,0,0;0,1,1\" --rounds --algorithm torus\n"
        "  isostencil plan --moore 3:1 --json");
    add_neighborhood_options(*app_, args_,
                             "Moore neighborhood (Chebyshev ball, self excluded) of dimension D "
                             "and radius R, e.g. 3:1 for the 26 neighbors of a 27-point stencil",
                             "processes per dimension (default: 3 in every dimension)");
    app_->add_option("--max-work", limits_.max_mesh_work,
                     "refuse grids with a non-periodic dimension when processes x (offsets + "
                     "torus rounds) exceeds this (default 1000000; each process's schedule is "
                     "computed)")
        ->check(CLI::PositiveNumber)
        ->group("Process grid");
    app_->add_flag("--json", json_, "print JSON instead of text")->group("Output");
    app_->add_flag("--rounds,--verbose,-v", rounds_,
                   "also print every round of one process's schedule: shift, partners and the "
                   "blocks moving in it")
        ->group("Output");
    app_->add_option("--rank", rank_, "the process whose rounds --rounds prints (default 0)")
        ->check(CLI::NonNegativeNumber)
        ->group("Output");
    app_->add_option("--algorithm", algorithm_,
                     "restrict --rounds to one algorithm: linear, torus or direct")
        ->group("Output");
    app_->add_option("--collective", collective_,
                     "restrict --rounds to one collective: alltoall or allgather")
        ->check(CLI::IsMember({"alltoall", "allgather"}))
        ->group("Output");
  }

  bool rank0_only() const override { return true; }

  int run(const MpiContext& mpi) override {
    if (mpi.rank != 0) return 0;
    const ResolvedOffsets resolved = resolve_offsets(args_, "", limits_);
    const int dims = resolved.offsets.dims();
    iso::CartGeometry grid;
    grid.sizes = args_.procs.empty() ? std::vector<int>(static_cast<std::size_t>(dims), 3)
                                     : parse_procs(args_.procs, dims, 1, limits_);
    grid.periodic = resolve_periodic(args_, dims);
    check_limits(resolved.offsets, grid, limits_);

    std::vector<iso::Algorithm> algorithms = plan_algorithms();
    if (!algorithm_.empty()) {
      try {
        algorithms = {iso::parse_algorithm(algorithm_)};
      } catch (const iso::Error& error) {
        throw UsageError(std::string("--algorithm: ") + error.what());
      }
    }
    std::vector<iso::Collective> collectives = plan_collectives();
    if (collective_ == "alltoall") collectives = {iso::Collective::alltoall};
    if (collective_ == "allgather") collectives = {iso::Collective::allgather};
    if (rounds_ && rank_ >= static_cast<long long>(grid.num_procs()))
      throw UsageError("--rank " + std::to_string(rank_) + ": the grid has only " +
                       std::to_string(grid.num_procs()) + " processes");

    const Plan plan = compute_plan(resolved.description, resolved.offsets, grid);
    const int rank = static_cast<int>(rank_);
    std::vector<int> coords(static_cast<std::size_t>(dims));
    grid.coords_of(rank, coords.data());

    if (json_) {
      auto json = plan_to_json(plan);
      if (rounds_) {
        auto& schedules = json["schedules"];
        schedules["rank"] = rank;
        schedules["coords"] = coords;
        for (iso::Algorithm algorithm : algorithms)
          for (iso::Collective collective : collectives)
            schedules[iso::to_string(algorithm)][iso::to_string(collective)] = schedule_to_json(
                iso::build_schedule(resolved.offsets, grid, coords.data(), algorithm, collective));
      }
      std::cout << json.dump(2) << "\n";
      return 0;
    }
    std::cout << format_plan_text(plan);
    if (rounds_) {
      for (iso::Algorithm algorithm : algorithms)
        for (iso::Collective collective : collectives)
          std::cout << "\n"
                    << format_schedule_text(
                           iso::build_schedule(resolved.offsets, grid, coords.data(), algorithm,
                                               collective),
                           grid, rank);
    }
    return 0;
  }

private:
  NeighborhoodArgs args_;
  Limits limits_;
  bool json_ = false;
  bool rounds_ = false;
  long long rank_ = 0;
  std::string algorithm_;
  std::string collective_;
};

}  // namespace

std::unique_ptr<Command> make_plan_command(CLI::App& parent) {
  return std::make_unique<PlanCommand>(parent);
}

}  // namespace isostencil::cli
