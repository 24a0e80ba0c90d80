// `isostencil plan`: the schedule figures of a neighborhood for every
// algorithm and collective and, with --predict, each candidate's predicted
// time under the cost model and automatic's choice. All work on rank 0 and no
// communication, except for --model calibrate (collective on MPI_COMM_WORLD).
#include "command.hpp"
#include "isostencil/driver/depth_choice.hpp"

#include "isostencil/plan.hpp"
#include "isostencil/spec.hpp"

#include "isostencil/core/stencil.hpp"
#include "isostencil/deck/deck.hpp"

#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <fmt/ranges.h>

#include <iostream>
#include <optional>

namespace isostencil::cli {

namespace {

class PlanCommand final : public Command {
public:
  explicit PlanCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "plan",
        "Print a neighborhood's schedules and their figures (rounds, messages, block volume) "
        "for the " + iso::algorithm_names(iso::AlgorithmNames::scheduled, ", ", " and ") +
        " algorithms, alltoall and allgather; with --predict, "
        "every algorithm's predicted time under the cost model and auto's choice");
    app_->footer(
        "Examples:\n"
        "  isostencil plan --moore 3:1                    # 3-D 27-point stencil, 3x3x3 torus\n"
        "  isostencil plan --moore 2:1 --procs 4,4 --mesh # non-periodic: max and totals\n"
        "  isostencil plan --offsets \"1,0,0;0,1,1\" --rounds --algorithm torus\n"
        "  isostencil plan --moore 3:1 --json\n"
        "  isostencil plan --moore 3:1 --procs 16,16,16 --predict --bytes 8,512,8192\n"
        "  isostencil plan --moore 3:1 --procs 4,4,4 --predict --depths 8   # halo.depth k = 1..8\n"
        "  mpirun -np 2 isostencil plan --moore 3:1 --procs 100,100,100 --predict --model "
        "calibrate");
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
    auto* predict =
        app_->add_flag("--predict", predict_,
                       "also predict each algorithm's time per call (" +
                           iso::algorithm_names(iso::AlgorithmNames::fixed, ", ", " and ") +
                           ", the MPI library's neighborhood collective) under the cost model, "
                           "and which one auto picks")
            ->group("Cost model");
    app_->add_option("--bytes,-b", bytes_,
                     "bytes per block for --predict, one size or a list, e.g. 8,512,8192 "
                     "(default 8)")
        ->type_name("B[,B...]")
        ->group("Cost model")
        ->needs(predict);
    app_->add_option("--depths", depths_,
                     "cells per process (N, or N0,N1,... per dimension): also predict the time per step "
                     "of a deep halo (deck halo.depth k = 1..8: one exchange of a k times deeper halo "
                     "per k steps, and the ghost cells recomputed) for the stencil that reads the "
                     "neighborhood's offsets as cell offsets (--moore D:R: the box stencil of radius R), "
                     "8-byte cells, the update rate measured here; isostencil check shows the same for a deck")
        ->type_name("CELLS")
        ->group("Cost model")
        ->needs(predict);
    auto* model = add_model_options(
        *app_, model_args_,
        "ISO_COST_MODEL (a file or defaults), else the cached calibration "
        "(~/.cache/isostencil/cost_model-<machine>.txt, one per MPI library, transport and host count), else the built-in defaults; plan never "
        "calibrates unless asked");
    model->needs(predict);
    app_->get_option("--save-model")->needs(predict);
    app_->add_option("--ports", ports_,
                     "the steps column, and --predict's times and auto's choice, for operations with "
                     "at most K messages in flight each way (OperationOptions::ports, deck halo.ports; "
                     "default 0: no limit, where auto also weighs limits 1 and 2)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("K")
        ->group("Output");
    app_->add_flag("--json", json_, "print JSON instead of text")->group("Output");
    app_->add_flag("--rounds,--verbose,-v", rounds_,
                   "also print every round of one process's schedule: shift, partners and the "
                   "blocks moving in it")
        ->group("Output");
    app_->add_option("--rank", rank_, "the process whose rounds --rounds prints (default 0)")
        ->check(CLI::NonNegativeNumber)
        ->group("Output");
    app_->add_option("--algorithm", algorithm_,
                     "restrict --rounds to one algorithm: " +
                         iso::algorithm_names(iso::AlgorithmNames::scheduled, ", ", " or "))
        ->group("Output");
    app_->add_option("--collective", collective_,
                     "restrict --rounds to one collective: alltoall or allgather")
        ->check(CLI::IsMember({"alltoall", "allgather"}))
        ->group("Output");
  }

  // A calibration is collective: then every rank validates and measures.
  bool rank0_only() const override { return !model_args_.calibrate(); }

  int run(const MpiContext& mpi) override {
    if (mpi.rank != 0 && rank0_only()) return 0;
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

    std::vector<long> block_bytes;
    iso::CostModel model;
    std::string model_note;
    if (predict_) {
      block_bytes = parse_bytes_list(bytes_);
      if (model_args_.calibrate()) {
        if (mpi.size < 2)
          throw UsageError(
              "--model calibrate measures messages between ranks: run under mpirun -np 2 (or "
              "more), or use --model FILE|defaults");
        model = iso::CostModel::calibrate(MPI_COMM_WORLD);
        model_note = fmt::format("calibrated now on {} ranks of MPI_COMM_WORLD", mpi.size);
        if (mpi.rank != 0) return 0;
      } else if (model_args_.model == "defaults") {
        model = iso::CostModel::builtin();
        model_note = "built-in defaults (--model defaults)";
      } else if (!model_args_.model.empty()) {
        model = load_model(model_args_.model);
        model_note = "--model " + model_args_.model;
      } else {
        model = model_without_calibration(model_note);
      }
      if (const std::string error = save_model(model, model_args_.save); !error.empty())
        throw UsageError(error);
      if (!model_args_.save.empty()) model_note += "; saved to " + model_args_.save;
    }

    const Plan plan = compute_plan(resolved.description, resolved.offsets, grid, ports_);
    std::optional<driver::DepthChoice> depths;
    std::vector<int> cells;
    if (!depths_.empty()) {
      cells = parse_depth_cells(depths_, dims);
      depths = predict_depths(resolved.offsets, grid, cells, model, model_note);
    }
    Predictions predictions;
    if (predict_) {
      predictions = predict(resolved.offsets, grid, model, block_bytes, ports_);
      predictions.model_note = model_note;
      // Rank 0 alone from here: the key of a one-host run in this environment.
      add_tune_cache(predictions, resolved.offsets, grid, MPI_COMM_SELF);
    }
    const int rank = static_cast<int>(rank_);
    std::vector<int> coords(static_cast<std::size_t>(dims));
    grid.coords_of(rank, coords.data());

    if (json_) {
      auto json = plan_to_json(plan);
      if (predict_) {
        json["model"] = model_to_json(predictions.model, predictions.model_note);
        json["prediction_basis"] = prediction_basis_to_json(predictions);
        json["predictions"] = predictions_to_json(predictions);
      }
      if (depths) {
        auto& entry = json["depths"];
        entry["cells_per_process"] = cells;
        entry["per_step_s"] = depths->per_step;
        entry["exchange_s"] = depths->exchange;
        entry["cell_s"] = depths->cell_seconds;
        entry["best"] = depths->depth;
      }
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
    if (predict_) std::cout << "\n" << format_predictions_text(predictions);
    if (depths)
      std::cout << fmt::format("\ndeep halos over {} cells per process (halo.depth): ", fmt::join(cells, "x"))
                << depths->text() << "\n";
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
  static std::vector<int> parse_depth_cells(const std::string& text, int dims) {
    std::vector<long long> values;
    try {
      values = parse_integer_list(text, "--depths");
    } catch (const iso::Error& error) {
      throw UsageError(error.what());
    }
    if (values.size() == 1) values.assign(static_cast<std::size_t>(dims), values[0]);
    if (static_cast<int>(values.size()) != dims)
      throw UsageError(fmt::format("--depths {}: give one count or {} (one per dimension)", text, dims));
    std::vector<int> cells;
    for (long long v : values) {
      if (v < 1 || v > 4096)
        throw UsageError(fmt::format("--depths {}: cells per process must be 1 .. 4096", text));
      cells.push_back(static_cast<int>(v));
    }
    return cells;
  }

  // The neighborhood's offsets read as a stencil's cell offsets, over even
  // subdomains of `cells` (driver::predict_depths: what depth = "auto" uses).
  driver::DepthChoice predict_depths(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                                     const std::vector<int>& cells, const iso::CostModel& model,
                                     const std::string& model_note) const {
    bool torus = true;
    for (const bool p : grid.periodic) torus = torus && p;
    if (!torus && grid.num_procs() > 512)
      throw UsageError("--depths prices every process of a grid with a non-periodic dimension: at most 512 "
                       "processes (a periodic grid of any size is priced by one)");
    driver::DepthLayout layout;
    for (std::size_t j = 0; j < cells.size(); ++j) {
      layout.extent.push_back(static_cast<long>(cells[j]) * grid.sizes[j]);
      layout.periodic.push_back(grid.periodic[j]);
      layout.procs.push_back(grid.sizes[j]);
    }
    const core::Stencil stencil(offsets, {}, "the neighborhood's offsets");
    try {
      driver::DepthChoice choice = driver::predict_depths(
          layout, stencil, 8, static_cast<int>(deck::max_halo_depth), ports_, model,
          driver::measure_cell_seconds(cells, stencil));
      choice.model_note = model_note;
      return choice;
    } catch (const iso::Error& error) {
      throw UsageError(std::string("--depths: ") + error.what());
    }
  }

  int ports_ = 0;
  std::string depths_;
  NeighborhoodArgs args_;
  Limits limits_;
  ModelArgs model_args_;
  bool predict_ = false;
  std::string bytes_ = "8";
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
