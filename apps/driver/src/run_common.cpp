// `isostencil run`: header, progress lines, summary (text and JSON).
#include "isostencil/driver/run.hpp"
#include "isostencil/driver/kokkos_args.hpp"
#include "iso/file_write.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <iostream>

#ifndef ISOSTENCIL_VERSION
#define ISOSTENCIL_VERSION "unknown"
#endif

namespace isostencil::driver {

namespace {

std::string grid_text(const core::Decomposition& decomposition) {
  std::string periodic;
  for (int j = 0; j < decomposition.dims(); ++j)
    periodic += std::string(j ? ", " : "") + (decomposition.periodic()[j] ? "periodic" : "bounded");
  return fmt::format("{}", fmt::join(decomposition.global_extent(), "x")) + " (" + periodic + ") on " +
         std::to_string(decomposition.num_procs()) + " rank" +
         (decomposition.num_procs() == 1 ? "" : "s") + " as " + fmt::format("{}", fmt::join(decomposition.process_dims(), "x"));
}

/// Where the kernels ran: "OpenMP, concurrency 2".
std::string space_text() {
  return fmt::format("{}, concurrency {}", execution_space_name(), execution_space_concurrency());
}

std::string seconds_text(double seconds) {
  if (seconds < 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.2f} ms", seconds * 1e3);
  if (seconds < 120.0) return fmt::format("{:.2f} s", seconds);
  return fmt::format("{:.1f} min", seconds / 60.0);
}

std::string steps_list(const std::vector<long>& steps) {
  if (steps.size() <= 6) return fmt::format("{}", fmt::join(steps, ", "));
  return std::to_string(steps[0]) + ", " + std::to_string(steps[1]) + ", ..., " +
         std::to_string(steps.back()) + " (" + std::to_string(steps.size()) + " steps)";
}

}  // namespace

void inject_fault(const Setup& setup, long step, const char* phase) {
  static const char* const spec = std::getenv("ISOSTENCIL_FAULT_INJECT");
  if (spec == nullptr || *spec == '\0') return;
  int rank = -1;
  long at = -1;
  char where[16] = "step";
  if (std::sscanf(spec, "%d:%ld:%15s", &rank, &at, where) < 2)
    throw std::runtime_error(std::string("ISOSTENCIL_FAULT_INJECT=") + spec +
                             ": expected RANK:STEP[:step|output|checkpoint]");
  if (rank != setup.mpi.rank || step < at || std::strcmp(where, phase) != 0) return;
  throw std::runtime_error(fmt::format("fault injected by ISOSTENCIL_FAULT_INJECT={} on rank {} "
                                       "at step {} ({})",
                                       spec, rank, step, phase));
}

std::vector<std::pair<std::string, std::string>> output_attributes(const Setup& setup,
                                                                   const std::string& kernel_text) {
  const deck::Deck& deck = *setup.deck;
  std::string overrides;
  for (const std::string& item : deck.overrides)
    overrides += (overrides.empty() ? "" : "\n") + item;
  return {{"deck", deck.effective_toml()}, {"deck_text", deck.text},
          {"deck_file", deck.source},      {"overrides", overrides},
          {"kernel", deck.kernel.name},    {"kernel_description", kernel_text},
          {"restart", setup.restart_path}, {"isostencil_version", ISOSTENCIL_VERSION}};
}

void print_header(const Setup& setup, const core::Decomposition& decomposition,
                  const std::string& stencil, const std::string& describe,
                  const std::string& algorithm) {
  if (setup.mpi.rank != 0 || setup.quiet) return;
  const deck::Deck& deck = *setup.deck;
  std::string out;
  out += fmt::format("isostencil run: {}{}\n", deck.source,
                     setup.restart ? " (restart from " + setup.restart_path + " at step " +
                                         std::to_string(setup.start_step) + ")"
                                   : std::string());
  for (const std::string& item : deck.overrides)
    out += fmt::format("  --set {}\n", item);
  out += fmt::format("  kernel   {}: {}\n", deck.kernel.name, describe);
  out += fmt::format("  grid     {}\n", grid_text(decomposition));
  out += fmt::format("  space    {} ({})\n", space_text(), kokkos_description());
  out += fmt::format("  stencil  {}\n", stencil);
  if (!setup.depth_note.empty()) out += fmt::format("  depth    {}\n", setup.depth_note);
  out +=
      fmt::format("  halo     {} -> {}{}; overlap {}\n", deck.halo.algorithm, algorithm,
                  deck.halo.validate_every > 0
                      ? ", validated every " + std::to_string(deck.halo.validate_every) + " steps"
                      : std::string(", not validated"),
                  deck.run.overlap ? "on" : "off");
  std::string output =
      deck.output.format == "hdf5"
          ? deck.output_path(".h5") +
                (deck.output.every > 0 ? " every " + std::to_string(deck.output.every) + " steps"
                                       : std::string(" (final state)"))
          : std::string("none");
  if (deck.output.checkpoint_every > 0)
    output += "; checkpoint every " + std::to_string(deck.output.checkpoint_every) + " steps";
  out += fmt::format("  steps    {} -> {}, progress every {}; output {}\n", setup.start_step,
                     deck.run.steps, deck.run.residual_every, output);
  std::cout << out << std::flush;
}

void print_progress(const Setup& setup, long step, const Metric& metric, double seconds_per_step,
                    double halo_share, double eta_seconds) {
  if (setup.mpi.rank != 0) return;
  const long last = setup.deck->run.steps;
  const int width = static_cast<int>(std::to_string(last).size());
  std::string line = fmt::format("step {:>{}}/{}  {}", step, width, last, metric.text);
  if (seconds_per_step > 0)
    // With a tolerance the run may converge before run.steps: the time to
    // run.steps is then only an upper bound ("ETA <= ...").
    line += fmt::format("  {}/step  halo {:.0f}%  ETA {}{}", seconds_text(seconds_per_step),
                        100.0 * halo_share, setup.deck->run.tolerance > 0 ? "<= " : "",
                        eta_seconds <= 0 ? "0 s" : seconds_text(eta_seconds));
  std::cout << line << "\n" << std::flush;
}

int finish(const Setup& setup, const core::Decomposition& decomposition, Report& report) {
  const deck::Deck& deck = *setup.deck;
  const bool root = setup.mpi.rank == 0;
  const long steps = report.last_step - report.first_step;
  long cells = 1;
  for (const long n : decomposition.global_extent())
    cells *= n;
  const double compute = report.kernel_seconds + report.halo_seconds;
  const double rate =
      report.total_seconds > 0
          ? static_cast<double>(cells) * static_cast<double>(steps) / report.total_seconds / 1e6
          : 0.0;
  report.summary_path = deck.output_path(".summary.json");

  nlohmann::ordered_json json;
  json["deck"] = deck.source;
  json["overrides"] = deck.overrides;
  json["kernel"] = report.kernel;
  json["kernel_description"] = report.describe;
  json["dims"] = decomposition.dims();
  json["extent"] = decomposition.global_extent();
  json["periodic"] = decomposition.periodic();
  json["ranks"] = decomposition.num_procs();
  json["procs"] = decomposition.process_dims();
  json["stencil"] = report.stencil;
  json["execution_space"] = {{"name", execution_space_name()},
                             {"concurrency", execution_space_concurrency()},
                             {"kokkos", kokkos_description()}};
  json["restart"] =
      setup.restart ? nlohmann::ordered_json(setup.restart_path) : nlohmann::ordered_json();
  json["steps"] = {{"first", report.first_step},
                   {"last", report.last_step},
                   {"requested", report.steps_requested},
                   {"run", steps}};
  json["converged"] = report.converged;
  json["stopped"] = report.stopped_signal != 0
                        ? nlohmann::ordered_json{{"signal", stop_signal_name(report.stopped_signal)},
                                                 {"step", report.last_step},
                                                 {"checkpoint", report.checkpoint_path}}
                        : nlohmann::ordered_json();
  const auto metric_json = [](const Metric& metric) {
    nlohmann::ordered_json value = {
        {"name", metric.name}, {"value", metric.value}, {"text", metric.text}};
    for (const auto& [name, figure] : metric.figures)
      value[name] = figure;
    return value;
  };
  json["initial"] = metric_json(report.first_metric);
  json["final"] = metric_json(report.last_metric);
  json["timings"] = {
      {"total_s", report.total_seconds},
      {"kernel_s", report.kernel_seconds},
      {"halo_s", report.halo_seconds},
      {"io_s", report.io_seconds},
      {"validation_s", report.validation_seconds},
      {"measure_s", report.measure_seconds},
      {"setup_s", report.setup_seconds},
      {"per_step_s", steps > 0 ? report.total_seconds / static_cast<double>(steps) : 0.0},
      {"halo_share", compute > 0 ? report.halo_seconds / compute : 0.0},
      {"mcells_per_s", rate},
      {"note", "maxima over ranks; halo = exposed exchange time (start + wait)"}};
  nlohmann::ordered_json tune = nullptr;
  if (!report.tune_trials.empty()) {
    nlohmann::ordered_json trials = nlohmann::ordered_json::array();
    for (const iso::TuneTrial& t : report.tune_trials)
      trials.push_back({{"algorithm", iso::to_string(t.algorithm)},
                        {"ports", t.ports},
                        {"calls", t.calls},
                        {"seconds", t.seconds}});
    tune = {{"cached", report.tune_cached},
            {"trials", trials},
            {"rule", "least seconds per call (maximum over ranks); ties: the first tried"}};
  }
  json["halo"] = {{"requested", report.algorithm_requested},
                  {"algorithm", report.algorithm_chosen},
                  {"ports", report.halo_ports},
                  {"description", report.algorithm_text},
                  {"tune", tune},
                  {"validate_every", deck.halo.validate_every},
                  {"validations", report.validations},
                  {"validated_ghost_cells", report.validated_cells},
                  {"ok", report.validation_ok},
                  {"mismatch", report.validation_message},
                  {"depth", setup.depth > 0 ? static_cast<long>(setup.depth) : deck.halo.depth},
                  {"depth_requested", deck.halo.depth_auto ? nlohmann::ordered_json("auto")
                                                           : nlohmann::ordered_json(deck.halo.depth)},
                  {"depth_choice", setup.depth_note}};
  json["output"] = {{"h5", report.h5_path},
                    {"xmf", report.xmf_path},
                    {"xdmf_note", report.xdmf_note},
                    {"steps", report.output_steps},
                    {"checkpoint", report.checkpoint_path},
                    {"checkpoint_steps", report.checkpoint_steps}};
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const Check& check : report.checks)
    checks.push_back({{"name", check.name}, {"ok", check.ok}, {"detail", check.detail}});
  json["checks"] = checks;
  json["non_finite"] = report.non_finite;
  json["validates"] = report.validates();

  std::string write_error;
  if (root) {
    try {
      iso::write_file(report.summary_path, json.dump(2) + "\n", iso::PathUse::output);
    } catch (const iso::Error& error) {
      write_error = error.what();
    }
  }
  iso::agree_on_errors(decomposition.comm(), "isostencil run", write_error);

  if (root) {
    std::string out;
    if (!report.validation_ok) {
      out += fmt::format("HALO VALIDATION FAILED at exchange {} of {}: {}\n", report.validations,
                         deck.halo.validate_every, report.validation_message);
    }
    if (!report.non_finite.empty())
      out += fmt::format("NON-FINITE VALUE at {} (the first in global row-major order; run stopped, "
                         "run.check_finite_every = {})\n",
                         report.non_finite, deck.run.check_finite_every);
    out +=
        fmt::format("summary: {} steps ({} -> {}){}\n", steps, report.first_step, report.last_step,
                    report.converged ? ", converged (" + report.last_metric.text + ")" : "");
    out += fmt::format("  final    {}\n", report.last_metric.text);
    out += fmt::format("  space    {}\n", space_text());
    out += fmt::format(
        "  time     total {}: kernel {}, halo {} ({:.0f}% of kernel+halo), I/O {}, validation {}, "
        "measure {}; {:.2f} Mcell-steps/s\n",
        seconds_text(report.total_seconds), seconds_text(report.kernel_seconds),
        seconds_text(report.halo_seconds),
        compute > 0 ? 100.0 * report.halo_seconds / compute : 0.0, seconds_text(report.io_seconds),
        seconds_text(report.validation_seconds), seconds_text(report.measure_seconds), rate);
    out += fmt::format(
        "  halo     requested {}, ran {}; {}\n", report.algorithm_requested,
        report.algorithm_text,
        report.validations == 0
            ? (deck.halo.validate_every == 0
                   ? std::string("not validated (halo.validate_every = 0)")
                   : fmt::format("no validation in this segment (no step in {} -> {} is a multiple "
                                 "of halo.validate_every = {})",
                                 report.first_step, report.last_step, deck.halo.validate_every))
            : fmt::format("{} validation{} against the naive exchange, {} ({} ghost cells)",
                          report.validations, report.validations == 1 ? "" : "s",
                          report.validation_ok ? "all matched" : "MISMATCH",
                          report.validated_cells));
    if (!report.h5_path.empty())
      out += fmt::format(
          "  output   {} (steps {}){}\n", report.h5_path, steps_list(report.output_steps),
          report.xmf_path.empty() ? "; " + report.xdmf_note : ", " + report.xmf_path);
    if (!report.checkpoint_steps.empty())
      out += fmt::format("  restart  {} (step {})\n", report.checkpoint_path,
                         report.checkpoint_steps.back());
    out += fmt::format("  summary  {}\n", report.summary_path);
    std::string checks_text;
    for (const Check& check : report.checks)
      checks_text += (checks_text.empty() ? "" : "; ") + check.name + " " +
                     (check.ok ? "ok" : "FAILED") +
                     (check.detail.empty() ? "" : " (" + check.detail + ")");
    if (report.validations > 0)
      checks_text = (checks_text.empty() ? "" : checks_text + "; ") + "halo " +
                    (report.validation_ok ? "ok" : "MISMATCH");
    if (!report.non_finite.empty())
      checks_text = "values finite FAILED (" + report.non_finite + ")" +
                    (checks_text.empty() ? "" : "; " + checks_text);
    if (report.validates())
      out += "Solution validates: " + checks_text + "\n";
    else
      out += "Solution does not validate: " + checks_text + "\n";
    if (setup.quiet) {
      // Quiet: only the verdict (and a failure's report).
      std::string quiet_text;
      if (!report.validation_ok) quiet_text += out.substr(0, out.find('\n') + 1);
      if (!report.non_finite.empty()) {
        const std::size_t at = out.find("NON-FINITE");
        quiet_text += out.substr(at, out.find('\n', at) + 1 - at);
      }
      quiet_text += out.substr(out.rfind("Solution"));
      out = quiet_text;
    }
    if (setup.restart && steps == 0 && report.non_finite.empty())
      out += fmt::format("warning: the restart ran no steps: {} (--set run.steps=N to go on)\n",
                         report.converged
                             ? "the checkpoint's state at step " + std::to_string(report.first_step) +
                                   " has converged already"
                             : "the checkpoint is at step " + std::to_string(report.first_step) +
                                   " = run.steps");
    if (report.stopped_signal != 0)
      out += fmt::format("stopped by {} at step {}: checkpoint {}; restart with --restart {}\n",
                         stop_signal_name(report.stopped_signal), report.last_step,
                         report.checkpoint_path, report.checkpoint_path);
    (report.validates() ? std::cout : std::cerr) << out << std::flush;
  }
  if (report.stopped_signal != 0) return stopped_exit_code;
  return report.validates() ? 0 : 1;
}

void fail_with(const deck::Deck& deck, const std::string& key, const std::exception& error) {
  deck.fail(key, error.what());
}

}  // namespace isostencil::driver
