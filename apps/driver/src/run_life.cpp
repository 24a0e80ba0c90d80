// `isostencil run` with kernel.name = "life": kernels::Life<D> with the
// deck's rule, started from a seeded random fill, a constant or an RLE
// pattern (inputs/patterns/), or from a checkpoint.
#include "builtin_kernels.hpp"

#include "isostencil/driver/run.hpp"
#include "isostencil/driver/models.hpp"
#include "isostencil/driver/driver.hpp"

#include "isostencil/kernels/life.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace isostencil::driver {

namespace {

kernels::LifeRule parse_rule(const deck::Deck& deck, int dims) {
  try {
    return kernels::LifeRule(deck.kernel.string("rule"), dims);
  } catch (const iso::Error& error) {
    fail_with(deck, "kernel.rule", error);
  }
}

/// Rank 0 reads the pattern file and broadcasts it; every rank parses the
/// same text, so every rank reaches the same verdict.
kernels::LifePattern read_pattern(const deck::Deck& deck, MPI_Comm comm) {
  const std::string path = deck.resolve(deck.init.pattern);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  long header[2] = {1, 0};
  if (rank == 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      header[0] = 0;
      text = "cannot read pattern file \"" + path + "\": " + std::strerror(errno);
    } else {
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    header[1] = static_cast<long>(text.size());
  }
  ISO_MPI_CHECK(MPI_Bcast(header, 2, MPI_LONG, 0, comm));
  text.resize(static_cast<std::size_t>(header[1]));
  if (header[1] > 0) ISO_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(header[1]), MPI_CHAR, 0, comm));
  if (header[0] == 0) deck.fail("init.pattern", text);
  try {
    return kernels::parse_rle_string(text, path);
  } catch (const iso::Error& error) {
    fail_with(deck, "init.pattern", error);
  }
}

template <int D>
class LifeModel {
public:
  LifeModel(const Setup& setup, std::shared_ptr<const core::Decomposition> decomposition)
      : deck_(*setup.deck),
        rule_(parse_rule(deck_, D)),
        life_(checked_depth<D>(deck_, decomposition, core::Stencil::box(D, 1), setup.depth), rule_,
              kernels::LifeOptions{deck_.run.overlap, halo_options(deck_),
                                   setup.depth > 0 ? setup.depth : deck_depth(deck_)}) {
    if (setup.restart) {
      typename kernels::Life<D>::Cells cells = life_.cells();
      setup.restart->read("cells", life_.grid(), cells);
    } else if (deck_.init.type == "random") {
      life_.fill_random(deck_.init.seed, deck_.init.density);
    } else if (deck_.init.type == "constant") {
      life_.fill_random(0, deck_.init.value);  // density 0 or 1: all dead or all alive
    } else {
      place_pattern();
    }
  }

  const core::Decomposition& decomposition() const { return life_.grid().decomposition(); }
  std::string stencil_text() const { return stencil_and_depth<D>(life_.grid()); }
  std::string describe() const {
    std::string init = deck_.init.type;
    if (deck_.init.type == "random")
      init = fmt::format("random (density {:g}, seed {})", deck_.init.density, deck_.init.seed);
    else if (deck_.init.type == "pattern")
      init = "pattern " + pattern_text_;
    else if (deck_.init.type == "constant")
      init = deck_.init.value != 0.0 ? "all alive" : "all dead";
    return fmt::format("rule {} ({}-D Moore neighborhood, {}), start {}", rule_.to_string(), D,
                       life_.grid().decomposition().periodic()[0] ? "periodic" : "dead boundary",
                       init);
  }
  std::vector<std::string> fields() const { return {"cells"}; }

  kernels::UpdateTimes advance(long steps) { return life_.step(static_cast<int>(steps)); }

  Metric measure(long) {
    live_ = life_.live_cells();
    Metric metric;
    metric.name = "live cells";
    metric.value = static_cast<double>(live_);
    metric.text = fmt::format("live {} ({:.2f}%)", live_,
                              100.0 * static_cast<double>(live_) / static_cast<double>(life_.global_cells()));
    metric.figures = {{"live_cells", static_cast<double>(live_)}};
    return metric;
  }

  iso::HaloValidation validate_halo() { return life_.halo().validate(); }
  const iso::Operation& halo_operation() { return life_.halo().operation(); }
  const std::string& halo_note() { return life_.halo().pattern().algorithm_note(); }
  double time(long step) const { return static_cast<double>(step); }
  void write_fields(core::FieldSeries& series) { series.write("cells", life_.grid(), life_.cells()); }
  void write_state(core::CheckpointWriter& writer) { writer.write("cells", life_.grid(), life_.cells()); }

  std::vector<Check> checks(long) {
    const FieldStats stats = field_stats<D>(life_.grid(), life_.cells());
    const long live = life_.live_cells();
    std::vector<Check> checks;
    checks.push_back({"cells are 0 or 1", stats.min >= 0 && stats.max <= 1,
                      fmt::format("values in [{:g}, {:g}]", stats.min, stats.max)});
    checks.push_back({"live count", static_cast<long>(stats.sum) == live,
                      fmt::format("{} cells alive", live)});
    return checks;
  }

private:
  void place_pattern() {
    const kernels::LifePattern pattern = read_pattern(deck_, life_.grid().comm());
    if (pattern.dims() != D)
      deck_.fail("init.pattern", "pattern \"" + pattern.name + "\" is " + std::to_string(pattern.dims()) +
                                     "-D but the grid is " + std::to_string(D) + "-D");
    std::array<long, D> offset{};
    for (int j = 0; j < D; ++j) {
      const long extent = life_.grid().global_extent()[j];
      const long size = pattern.extent[static_cast<std::size_t>(j)];
      if (deck_.init.offset.empty()) {
        if (size > extent)
          deck_.fail("init.pattern", fmt::format("pattern \"{}\" has {} cells in dimension {} but the grid {}",
                                                 pattern.name, size, j, extent));
        offset[j] = (extent - size) / 2;
      } else {
        offset[j] = deck_.init.offset[static_cast<std::size_t>(j)];
      }
    }
    try {
      life_.place(pattern, offset);
    } catch (const iso::Error& error) {
      fail_with(deck_, deck_.init.offset.empty() ? "init.pattern" : "init.offset", error);
    }
    std::string at;
    for (int j = 0; j < D; ++j) at += (j ? "," : "") + std::to_string(offset[j]);
    pattern_text_ = "\"" + pattern.name + "\" at (" + at + ")";
  }

  const deck::Deck& deck_;
  kernels::LifeRule rule_;
  kernels::Life<D> life_;
  std::string pattern_text_;
  long live_ = 0;
};

/// What a Life deck cannot be (and what only Life takes): the Moore
/// neighborhood of radius 1, cells 0 or 1, patterns.
void check_life_deck(deck::DeckCheck& check) {
  const deck::Deck& d = check.deck();
  if (d.kernel.name != "life") {
    if (d.init.type == "pattern")
      check.error("init.type", "init.type = \"pattern\" places a Life pattern: it needs "
                               "kernel.name = \"life\"; this deck has " + deck_quoted(d.kernel.name));
    return;
  }
  if (d.stencil.shape != "box" || d.stencil.radius != 1) {
    const std::string key = d.stencil.shape != "box" ? "stencil.shape" : "stencil.radius";
    check.error(key, "kernel.name = \"life\" counts the Moore neighborhood: it needs "
                     "stencil.shape = \"box\" (or \"auto\") with radius 1; this deck has shape = " +
                         deck_quoted(d.stencil.shape) + ", radius = " + std::to_string(d.stencil.radius));
  }
  if (d.init.type == "gaussian")
    check.error("init.type", "init.type = \"gaussian\" makes a smooth field: Life cells are 0 or 1; "
                             "use \"random\", \"pattern\" or \"constant\"");
  if (d.init.type == "constant" && d.init.value != 0.0 && d.init.value != 1.0)
    check.error("init.value", "init.value = " + deck::deck_float(d.init.value) +
                                  ": Life cells are 0 (dead) or 1 (alive)");
}

/// Collective: the rule and the pattern file, read by rank 0 and parsed by every rank.
void check_life_inputs(const deck::Deck& deck) {
  parse_rule(deck, deck.grid.dims);
  if (deck.init.type != "pattern") return;
  const kernels::LifePattern pattern = read_pattern(deck, MPI_COMM_WORLD);
  const int dims = deck.grid.dims;
  if (pattern.dims() != dims)
    deck.fail("init.pattern", "pattern \"" + pattern.name + "\" is " + std::to_string(pattern.dims()) +
                                  "-D but the grid is " + std::to_string(dims) + "-D");
  for (int j = 0; j < dims; ++j) {
    const auto at = static_cast<std::size_t>(j);
    const long size = pattern.extent[at];
    const long extent = deck.grid.extent[at];
    const long first = deck.init.offset.empty() ? (extent - size) / 2 : deck.init.offset[at];
    if (size > extent || (!deck.grid.periodic[at] && first + size > extent))
      deck.fail(deck.init.offset.empty() ? "init.pattern" : "init.offset",
                fmt::format("pattern \"{}\" ({} cells in dimension {}) placed at {} does not fit the "
                            "bounded grid (extent {})",
                            pattern.name, size, j, first, extent));
  }
}

}  // namespace

int run_life(const Setup& setup) { return dispatch_dims<LifeModel>(setup); }

KernelEntry life_kernel() {
  deck::DeckKernel kernel;
  kernel.name = "life";
  kernel.meaning = "Life-like automaton";
  kernel.default_shape = "box";
  kernel.default_init = "random";
  kernel.takes = {"init.density"};
  kernel.parameters = {
      {"rule", deck::DeckValueKind::string, "\"B3/S23\"", "B{births}/S{survivals}",
       "birth and survival counts (\"B36/S23\", \"B5,6/S4-7\"); counts up to 3^d - 1",
       "\"B3/S23\" (Conway)"},
  };
  kernel.validate = check_life_deck;
  return {kernel, &run_life, check_life_inputs};
}

}  // namespace isostencil::driver
