// Input decks: the TOML description of one run. One table per concern —
// [grid], [stencil], [kernel], [init], [run], [halo], [output] — with every
// key typed, documented and defaulted by one schema (schema.hpp); the kernels
// a deck may name, with their [kernel] keys, are registered (kernel.hpp).
//
//   auto deck = isostencil::deck::read_deck(MPI_COMM_WORLD, "inputs/default.toml",
//                                           {"run.steps=10"});
//   isostencil::deck::check_output_writable(MPI_COMM_WORLD, deck);
//
// Errors (a TOML syntax error, an unknown table or key, a value of the wrong
// type or outside its allowed set, impossible combinations such as a kernel on a
// stencil it cannot read) are DeckErrors whose message has one line per problem:
//
//   inputs/bad.toml:7:9: error: stencil.shape = "hex" is not allowed; allowed: auto, star, box, upwind, offsets
//
// Parsing is a pure function of the text, the overrides and the registered
// kernels, so every rank of a run reaches the same verdict: read_deck() reads
// the file on rank 0 and broadcasts its text (or the read error), then every
// rank parses it.
#pragma once

#include "isostencil/deck/schema.hpp"

#include "isostencil/core/stencil.hpp"

#include "iso/schedule.hpp"

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace isostencil::deck {

/// The largest halo.depth a deck may ask for (and the largest "auto" tries):
/// the ghost region's offsets grow as depth^d.
inline constexpr long max_halo_depth = 8;

/// The resolved value of a registered kernel's parameter.
struct DeckValue {
  DeckValueKind kind = DeckValueKind::floating;
  long integer = 0;
  double floating = 0.0;
  bool boolean = false;
  std::string string;
  std::vector<long> integers;  ///< one per dimension
  std::vector<double> floats;  ///< one per dimension
  std::vector<bool> booleans;  ///< one per dimension
};

/// Where a value came from: a file position, an override or the default.
struct DeckLocation {
  std::string file;    ///< deck file ("" for defaults and overrides)
  int line = 0;        ///< 1-based; 0 when unknown
  int column = 0;
  std::string origin;  ///< "file", "--set" or "default"
  /// "inputs/x.toml:3:9", "--set run.steps" or "default run.steps".
  std::string describe(const std::string& dotted_key) const;
};

/// A parsed and checked deck. Values are resolved: kernel-dependent defaults
/// ("auto") are replaced by what they stand for, and list keys have one entry
/// per dimension.
struct Deck {
  std::string source;                  ///< the file ("<built-in default>" for the default deck)
  std::string base_dir;                ///< relative paths in the deck (init.pattern) start here
  std::string text;                    ///< the deck text as read
  std::vector<std::string> overrides;  ///< the --set items, in order

  struct Grid {
    int dims = 2;
    std::vector<long> extent;
    std::vector<bool> periodic;
    std::vector<int> procs;  ///< 0 entries: chosen by MPI_Dims_create
  } grid;

  struct StencilSpec {
    std::string shape;                      ///< star, box, upwind, offsets (never auto)
    int radius = 1;
    std::vector<int> signs;                 ///< upwind: sign read per dimension
    std::vector<std::vector<int>> offsets;  ///< shape = offsets
    std::vector<double> weights;            ///< empty: the kernel's default weights
  } stencil;

  struct Kernel {
    std::string name;  ///< a registered kernel (default: the first registered)
    /// The kernel's parameters (every one, defaults filled in), by key.
    std::map<std::string, DeckValue> parameters;
    /// A parameter's value (read the member of its kind); throws iso::Error
    /// when the kernel has no such parameter.
    const DeckValue& parameter(const std::string& key) const;
    double floating(const std::string& key) const { return parameter(key).floating; }
    long integer(const std::string& key) const { return parameter(key).integer; }
    bool boolean(const std::string& key) const { return parameter(key).boolean; }
    const std::string& string(const std::string& key) const { return parameter(key).string; }
    const std::vector<double>& floats(const std::string& key) const { return parameter(key).floats; }
    const std::vector<long>& integers(const std::string& key) const { return parameter(key).integers; }
    const std::vector<bool>& booleans(const std::string& key) const { return parameter(key).booleans; }
  } kernel;

  struct Init {
    std::string type;          ///< constant, random, pattern, gaussian (never auto)
    double value = 0.0;        ///< constant
    double density = 0.5;      ///< random (kernels of 0/1 cells)
    double low = 0.0;          ///< random (floating-point fields)
    double high = 1.0;
    std::uint64_t seed = 1;    ///< random
    std::string pattern;       ///< pattern: a pattern file, resolved against base_dir
    std::vector<long> offset;  ///< pattern: global index of its first cell; empty = centred
    std::vector<double> center;  ///< gaussian: in cells, one per dimension
    double width = 0.0;        ///< gaussian: standard deviation in cells
    double amplitude = 1.0;    ///< gaussian
  } init;

  struct Run {
    long steps = 100;
    double tolerance = 0.0;    ///< stop once the kernel's residual is below it (0: never)
    long residual_every = 10;  ///< residual / live cells / progress line every N steps
    long check_finite_every = 10;  ///< NaN/infinity check every N steps (0: never); default residual_every
    bool overlap = true;
  } run;

  struct Halo {
    std::string algorithm = "auto";
    long validate_every = 0;  ///< 0: never
    long ports = 0;  ///< messages in flight each way (0: no limit)
    std::string transport = "auto";  ///< auto, datatypes, packed (core::HaloTransport)
    bool gpu_aware_mpi = false;
    long depth = 1;           ///< updates per exchange (deep halos); see depth_auto
    bool depth_auto = false;  ///< depth = "auto": the run chooses (depth is then 1 until it has)
  } halo;

  struct Output {
    std::string dir = "output";
    std::string name;          ///< file name stem; default: the deck file's stem
    std::string format = "hdf5";
    long every = 0;            ///< 0: the final state only
    long checkpoint_every = 0; ///< 0: never
  } output;

  /// The stencil the kernel runs (weights attached when given).
  core::Stencil make_stencil() const;
  iso::Algorithm algorithm() const;
  /// Where `dotted_key` ("stencil.shape") was set.
  DeckLocation where(const std::string& dotted_key) const;
  /// Throws a DeckError naming the key's location (for checks made after
  /// parsing, e.g. a value a kernel rejects).
  [[noreturn]] void fail(const std::string& dotted_key, const std::string& message) const;
  /// Every key with its resolved value, as a TOML document that parses back
  /// to an equal deck (floats written round-trip exactly). Stored in outputs
  /// and checkpoints; a restart reads it back.
  std::string effective_toml() const;
  /// `path` relative to base_dir unless absolute.
  std::string resolve(const std::string& path) const;
  /// output.dir + "/" + output.name + suffix.
  std::string output_path(const std::string& suffix) const;

  std::map<std::string, DeckLocation> locations;  ///< per dotted key
};

/// Parses and checks a deck (not collective). `source` names the text in
/// messages; `base_dir` anchors relative paths. Throws DeckError.
Deck parse_deck(const std::string& text, const std::string& source,
                const std::vector<std::string>& overrides = {}, const std::string& base_dir = ".");

/// Collective over `comm`: rank 0 reads `path` ("" for the built-in default
/// deck) and broadcasts the text or the read error; every rank then parses
/// it, so every rank throws the same DeckError or returns the same deck.
Deck read_deck(MPI_Comm comm, const std::string& path, const std::vector<std::string>& overrides = {});
/// The same from text every rank already has (a checkpoint's stored deck).
Deck deck_from_text(const std::string& text, const std::string& source,
                    const std::vector<std::string>& overrides, const std::string& base_dir);

/// The built-in default deck (`isostencil run` without DECK): the text of
/// inputs/default.toml, compiled in.
const std::string& builtin_default_deck();

}  // namespace isostencil::deck
