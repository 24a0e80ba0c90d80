// Input decks (apps/deck, with the driver's kernels registered): the schema, parsing, overrides, the messages of
// bad decks (file:line:column, key, allowed values), the effective deck's
// round trip, the collective reading and the output directory check. The
// catalogue of whole bad decks run through the driver is tests/apps/bad_decks.
#include "isostencil_test.hpp"

#include "isostencil/deck/checks.hpp"
#include "isostencil/deck/deck.hpp"
#include "isostencil/driver/driver.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using isostencil::deck::Deck;
using isostencil::deck::DeckError;
using isostencil::deck::parse_deck;

// Decks name the driver's kernels, registered as the driver does at start.
[[maybe_unused]] const bool builtin_kernels_registered =
    (isostencil::driver::register_builtin_kernels(), true);

/// The DeckError message of parsing `text` ("" when it parses).
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_deck(text, "test.toml", overrides);
  } catch (const DeckError& error) {
    return error.what();
  }
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> sample_decks() {
  std::vector<std::string> decks;
  const std::string dir = std::string(ISOSTENCIL_SOURCE_DIR) + "/inputs";
  if (DIR* handle = opendir(dir.c_str())) {
    while (dirent* entry = readdir(handle)) {
      const std::string name = entry->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".toml") decks.push_back(dir + "/" + name);
    }
    closedir(handle);
  }
  return decks;
}

TEST(Deck, EmptyDeckTakesEveryDefault) {
  const Deck deck = parse_deck("", "empty.toml");
  EXPECT_EQ(deck.grid.dims, 2);
  EXPECT_EQ(deck.grid.extent, (std::vector<long>{64, 64}));
  EXPECT_EQ(deck.grid.periodic, (std::vector<bool>{true, true}));
  EXPECT_EQ(deck.grid.procs, (std::vector<int>{0, 0}));
  EXPECT_EQ(deck.kernel.name, "jacobi");
  EXPECT_EQ(deck.stencil.shape, "star");  // auto, resolved for jacobi
  EXPECT_EQ(deck.init.type, "constant");
  EXPECT_EQ(deck.run.steps, 100);
  EXPECT_EQ(deck.run.residual_every, 10);
  EXPECT_TRUE(deck.run.overlap);
  EXPECT_EQ(deck.halo.algorithm, "auto");
  EXPECT_EQ(deck.halo.validate_every, 0);
  EXPECT_EQ(deck.output.dir, "output");
  EXPECT_EQ(deck.output.name, "empty");
  EXPECT_EQ(deck.output.format, "hdf5");
  EXPECT_EQ(deck.where("run.steps").origin, "default");
}

TEST(Deck, KernelDependentDefaults) {
  const Deck life = parse_deck("[kernel]\nname = \"life\"\n", "life.toml");
  EXPECT_EQ(life.stencil.shape, "box");
  EXPECT_EQ(life.init.type, "random");
  EXPECT_EQ(life.make_stencil().size(), 9);
  const Deck advection =
      parse_deck("[grid]\ndims = 3\n[kernel]\nname = \"advection\"\nvelocity = [1.0, -2.0, 0.0]\n", "a.toml");
  EXPECT_EQ(advection.stencil.shape, "upwind");
  EXPECT_EQ(advection.stencil.signs, (std::vector<int>{-1, 1, 0}));
  EXPECT_EQ(advection.init.type, "gaussian");
  EXPECT_EQ(advection.init.center, (std::vector<double>{31.5, 31.5, 31.5}));
}

TEST(Deck, ScalarsBroadcastAndDimsFollowExtent) {
  const Deck deck = parse_deck("[grid]\nextent = [8, 9, 10]\nperiodic = false\nprocs = 0\n", "x.toml");
  EXPECT_EQ(deck.grid.dims, 3);
  EXPECT_EQ(deck.grid.periodic, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(deck.grid.procs, (std::vector<int>{0, 0, 0}));
  const Deck cube = parse_deck("[grid]\ndims = 4\nextent = 12\n", "x.toml");
  EXPECT_EQ(cube.grid.extent, (std::vector<long>{12, 12, 12, 12}));
}

TEST(Deck, ErrorsNameFileLineKeyAndAllowedValues) {
  const std::string unknown = error_of("[grid]\nextent = [8, 8]\nextnet = 3\n");
  EXPECT_NE(unknown.find("test.toml:3:1: error: unknown key grid.extnet"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean \"extent\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("allowed keys in [grid]: dims, extent, periodic, procs"), std::string::npos);

  const std::string table = error_of("[grdi]\nx = 1\n");
  EXPECT_NE(table.find("test.toml:1:2: error: unknown table [grdi] (did you mean \"grid\"?)"),
            std::string::npos)
      << table;

  const std::string shape = error_of("[stencil]\nshape = \"hex\"\n");
  EXPECT_NE(shape.find("test.toml:2:1: error: stencil.shape = \"hex\" is not allowed; allowed: auto, "
                       "star, box, upwind, offsets"),
            std::string::npos)
      << shape;

  const std::string type = error_of("[run]\nsteps = \"ten\"\n");
  EXPECT_NE(type.find("test.toml:2:1: error: run.steps must be an integer, not a string"), std::string::npos)
      << type;

  const std::string syntax = error_of("[run]\nsteps = \n");
  EXPECT_NE(syntax.find("test.toml:2:"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("TOML syntax"), std::string::npos) << syntax;
}

TEST(Deck, ImpossibleCombinations) {
  EXPECT_NE(error_of("[kernel]\nname = \"life\"\n[stencil]\nshape = \"star\"\n")
                .find("test.toml:4:1: error: kernel.name = \"life\" counts the Moore neighborhood"),
            std::string::npos);
  EXPECT_NE(error_of("[grid]\ndims = 3\nextent = [8, 8]\n")
                .find("test.toml:3:1: error: grid.extent has 2 entries but the grid has 3 dimensions (grid.dims = 3)"),
            std::string::npos);
  EXPECT_NE(error_of("[kernel]\nrule = \"B3/S23\"\n").find("kernel.rule applies only with kernel.name = \"life\""),
            std::string::npos);
  EXPECT_NE(error_of("[kernel]\nname = \"advection\"\nvelocity = [1.0, 1.0]\n[stencil]\nsigns = [1, -1]\n")
                .find("reads downwind"),
            std::string::npos);
  EXPECT_NE(error_of("[kernel]\nsource = 1.0\n").find("no steady state"), std::string::npos);
  EXPECT_NE(error_of("[stencil]\nshape = \"offsets\"\noffsets = [[1, 0], [0, 1]]\n")
                .find("needs stencil.weights"),
            std::string::npos);
  EXPECT_NE(error_of("[stencil]\nweights = [1.0, 1.0, 1.0, 1.0, 1.0]\n").find("negative weight"),
            std::string::npos);
  EXPECT_NE(error_of("[stencil]\nweights = [1.0, 1.0]\n").find("stencil.weights has 2 entries but the star stencil has 5"),
            std::string::npos);
  // Several problems: all reported, one line each.
  const std::string many = error_of("[grid]\nfoo = 1\n[run]\nbar = 2\n");
  EXPECT_EQ(std::count(many.begin(), many.end(), '\n'), 1) << many;
}

TEST(Deck, OverridesAreTypedByTheSchema) {
  const Deck deck = parse_deck("[run]\nsteps = 5\n", "o.toml",
                               {"run.steps=10", "grid.extent=32,48", "halo.algorithm=torus",
                                "output.dir=/tmp/x", "run.overlap=false", "kernel.source=2",
                                "grid.periodic=false"});
  EXPECT_EQ(deck.run.steps, 10);
  EXPECT_EQ(deck.grid.extent, (std::vector<long>{32, 48}));
  EXPECT_EQ(deck.halo.algorithm, "torus");
  EXPECT_EQ(deck.output.dir, "/tmp/x");
  EXPECT_FALSE(deck.run.overlap);
  EXPECT_EQ(deck.kernel.floating("source"), 2.0);
  EXPECT_EQ(deck.where("run.steps").describe("run.steps"), "--set run.steps");
  EXPECT_NE(error_of("", {"run.steps=ten"}).find("--set run.steps=ten: error: cannot read \"ten\" as integer"),
            std::string::npos);
  EXPECT_NE(error_of("", {"run.stpes=1"}).find("unknown key run.stpes (did you mean \"steps\"?)"),
            std::string::npos);
  EXPECT_NE(error_of("", {"steps=1"}).find("expected table.key=value"), std::string::npos);
  EXPECT_NE(error_of("", {"run.steps=1.5"}).find("--set run.steps: error: run.steps must be an integer, not a float"),
            std::string::npos);
}

TEST(Deck, EffectiveDeckRoundTripsForEverySampleDeck) {
  const std::vector<std::string> decks = sample_decks();
  ASSERT_GE(decks.size(), 10u);
  for (const std::string& path : decks) {
    SCOPED_TRACE(path);
    const std::string dir = path.substr(0, path.find_last_of('/'));
    const Deck deck = parse_deck(read_file(path), path, {}, dir);
    const std::string effective = deck.effective_toml();
    const Deck again = parse_deck(effective, "effective.toml");
    const std::string twice = again.effective_toml();
    // Equal but for the first line (a comment naming the source).
    EXPECT_EQ(twice.substr(twice.find('\n')), effective.substr(effective.find('\n')));
    EXPECT_EQ(again.grid.extent, deck.grid.extent);
    if (deck.kernel.name == "advection") {
      EXPECT_EQ(again.kernel.floats("velocity"), deck.kernel.floats("velocity"));
    }
    EXPECT_EQ(again.init.center, deck.init.center);
  }
}

TEST(Deck, FloatsRoundTripExactly) {
  const Deck deck = parse_deck("[kernel]\nname = \"advection\"\nvelocity = [0.1, 0.7]\ncourant = 0.3\n", "f.toml");
  const Deck again = parse_deck(deck.effective_toml(), "again.toml");
  EXPECT_EQ(again.kernel.floats("velocity"), deck.kernel.floats("velocity"));
  EXPECT_EQ(again.kernel.floating("courant"), deck.kernel.floating("courant"));
}

TEST(Deck, BuiltinDefaultIsInputsDefaultToml) {
  EXPECT_EQ(isostencil::deck::builtin_default_deck(),
            read_file(std::string(ISOSTENCIL_SOURCE_DIR) + "/inputs/default.toml"));
}

TEST(Deck, DocsListEveryKeyWithItsDefault) {
  // docs/deck-keys.md holds `isostencil check --keys`' output; the README links to it.
  const std::string keys = read_file(std::string(ISOSTENCIL_SOURCE_DIR) + "/docs/deck-keys.md");
  EXPECT_NE(keys.find(isostencil::deck::deck_schema_markdown()), std::string::npos)
      << "docs/deck-keys.md's key tables differ from `isostencil check --keys`; paste its output";
  const std::string readme = read_file(std::string(ISOSTENCIL_SOURCE_DIR) + "/README.md");
  EXPECT_NE(readme.find("(docs/deck-keys.md)"), std::string::npos) << "README.md does not link docs/deck-keys.md";
}

TEST(Deck, ReadDeckAgreesOnEveryRank) {
  // A missing file: rank 0 finds out, every rank throws the same error.
  std::string message;
  try {
    isostencil::deck::read_deck(MPI_COMM_WORLD, "/nonexistent/deck.toml");
  } catch (const DeckError& error) {
    message = error.what();
  }
  EXPECT_TRUE(iso_test::all_ranks(message.find("/nonexistent/deck.toml: error: cannot read the deck") == 0))
      << message;
  const Deck deck = isostencil::deck::read_deck(MPI_COMM_WORLD, "", {"run.steps=3"});
  EXPECT_EQ(deck.source, "<built-in default>");
  EXPECT_EQ(deck.run.steps, 3);
}

TEST(Deck, UnwritableOutputIsReportedOnEveryRank) {
  const Deck deck = parse_deck("[output]\ndir = \"/dev/null/output\"\n", "w.toml");
  for (const bool create : {true, false}) {
    std::string message;
    try {
      isostencil::deck::check_output_writable(MPI_COMM_WORLD, deck, create);
    } catch (const DeckError& error) {
      message = error.what();
    }
    EXPECT_TRUE(iso_test::all_ranks(message.find("w.toml:2:1: error: output.dir = \"/dev/null/output\"") == 0))
        << message;
  }
}

TEST(Deck, DecompositionIsCheckedAgainstTheRankCount) {
  const Deck deck = parse_deck("[grid]\nextent = [4, 4]\nprocs = [3, 0]\n", "d.toml");
  EXPECT_THROW(isostencil::deck::check_decomposition(deck, 2), DeckError);
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(deck, 3));
  // A 5x5 box (centre at index 12, row-major) reaching 2 cells: 5 cells over
  // 4 processes leaves subdomains of 1.
  std::string weights = "[";
  for (int i = 0; i < 25; ++i) weights += std::string(i ? ", " : "") + (i == 12 ? "-24.0" : "1.0");
  const Deck wide = parse_deck("[grid]\nextent = [5, 64]\nprocs = [0, 1]\n[stencil]\nshape = \"box\"\n"
                               "radius = 2\nweights = " + weights + "]\n",
                               "w.toml");
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(wide, 2));
  // Wider than a subdomain but within the width rule (2 processes away): accepted.
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(wide, 4));
}

// One periodic process is its own neighbor: check_decomposition applies the
// grid's rule (iso::halo_misfit_dimension: at most 8 processes away) there too. It once tested only
// dimensions with several processes, so a deck whose extent shrank after
// parsing (a restart, an override checked later) passed it and the grid then
// failed at run time.
TEST(DeckDecomposition, PeriodicDimensionOnOneProcessBoundsTheHalo) {
  const std::string text = "[grid]\nextent = [8, 64]\nperiodic = [true, false]\nprocs = [1, 0]\n"
                           "[stencil]\nshape = \"offsets\"\noffsets = [[0, 0], [3, 0], [-3, 0]]\n"
                           "weights = [-2.0, 1.0, 1.0]\n";
  Deck narrow = parse_deck(text, "p.toml");
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(narrow, 1));
  // Wider than the one process's 2 cells: the ghosts wrap round it twice,
  // within the width rule (a deck's offsets reach at most 8 cells, so only a
  // deep halo can pass its 8 processes).
  narrow.grid.extent[0] = 2;
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(narrow, 1));
  narrow.grid.extent[0] = 1;
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(narrow, 1));
  // Not periodic: nothing is exchanged in dimension 0, as for the grid.
  narrow.grid.periodic[0] = false;
  EXPECT_NO_THROW(isostencil::deck::check_decomposition(narrow, 1));
}

}  // namespace
