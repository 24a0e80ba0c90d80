// Options shared by the subcommands: the neighborhood and process grid, and
// the cost model.
#include "command.hpp"

#include "iso/error.hpp"

namespace isostencil::cli {

void add_neighborhood_options(CLI::App& app, NeighborhoodArgs& args, const std::string& moore_help,
                              const std::string& procs_help) {
  auto* moore =
      app.add_option("--moore", args.moore, moore_help)->type_name("D:R")->group("Neighborhood");
  auto* offsets = app.add_option("--offsets", args.offsets,
                                 "explicit offset list: ';' between offsets, ',' between "
                                 "coordinates, e.g. \"1,0,0;0,1,1\" (use --offsets=-1,0,0;... "
                                 "when the list starts with '-')")
                      ->type_name("LIST")
                      ->group("Neighborhood");
  auto* file = app.add_option("--offsets-file", args.offsets_file,
                              "file with one offset per line (\"1,0,-1\" or \"1 0 -1\"); "
                              "'#' starts a comment")
                   ->type_name("FILE")
                   ->group("Neighborhood");
  moore->excludes(offsets)->excludes(file);
  offsets->excludes(moore)->excludes(file);
  file->excludes(moore)->excludes(offsets);
  auto* self = app.add_flag("--self", args.self, "include the zero offset (--moore only)")
                   ->group("Neighborhood");
  self->excludes(offsets)->excludes(file);

  app.add_option("--procs", args.procs, procs_help)->type_name("P0,P1,...")->group("Process grid");
  auto* mesh = app.add_flag("--mesh", args.mesh, "no periodic dimension (default: all periodic)")
                   ->group("Process grid");
  auto* periodic = app.add_option("--periodic", args.periodic,
                                  "periodic flag per dimension, e.g. 1,0,1 (default: all 1)")
                       ->type_name("F0,F1,...")
                       ->group("Process grid");
  mesh->excludes(periodic);
  periodic->excludes(mesh);
}

CLI::Option* add_model_options(CLI::App& app, ModelArgs& args, const std::string& default_help) {
  auto* model =
      app.add_option("--model", args.model,
                     "cost model (docs/design/cost-model.md): a FILE of \"alpha = ...\" lines "
                     "(beta, gamma, delta too), defaults (built-in figures) or "
                     "calibrate (measure now on MPI_COMM_WORLD, a second or two; run under "
                     "mpirun). Default: " +
                         default_help)
          ->type_name("FILE|defaults|calibrate")
          ->group("Cost model");
  app.add_option("--save-model", args.save,
                 "write the model used to FILE (full precision; a calibration to reuse with "
                 "--model FILE or ISO_COST_MODEL=FILE)")
      ->type_name("FILE")
      ->group("Cost model");
  return model;
}

std::string save_model(const iso::CostModel& model, const std::string& path) {
  if (path.empty()) return {};
  try {
    model.save(path);
  } catch (const iso::Error& error) {
    return "--save-model " + path + ": " + error.what();
  }
  return {};
}

}  // namespace isostencil::cli
