// Input decks: the TOML description of one run (ARCHITECTURE.md, "Input
// decks"). One table per concern — [grid], [stencil], [kernel], [init], [run],
// [halo], [output] — with every key typed, documented and defaulted by one
// schema (deck_schema(); the README's "Input decks" table lists it).
//
//   auto deck = isostencil::core::read_deck(MPI_COMM_WORLD, "inputs/jacobi_2d_5pt.toml",
//                                           {"run.steps=10"});
//   isostencil::core::check_output_writable(MPI_COMM_WORLD, deck);
//
// Errors (a TOML syntax error, an unknown table or key, a value of the wrong
// type or outside its allowed set, impossible combinations such as Life on a
// star stencil) are DeckErrors whose message has one line per problem:
//
//   inputs/bad.toml:7:9: error: stencil.shape = "hex" is not allowed; allowed: auto, star, box, upwind, offsets
//
// Parsing is a pure function of the text and the overrides, so every rank of
// a run reaches the same verdict: read_deck() reads the file on rank 0 and
// broadcasts its text (or the read error), then every rank parses it.
#pragma once

#include "isostencil/core/stencil.hpp"

#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

namespace isostencil::core {

/// Every problem with a deck: the message has one line per problem, each
/// "<file>:<line>:<column>: error: <key> ...", or "--set <key>: error: ..."
/// for an override.
class DeckError : public iso::Error {
public:
  explicit DeckError(const std::string& message) : iso::Error(message) {}
};

/// The type of a deck key's value.
enum class DeckValueKind {
  integer,
  floating,  ///< an integer is accepted too
  boolean,
  string,
  integers,  ///< an array of integers, or one integer meaning "the same in every dimension"
  floats,    ///< an array of numbers, or one number for every dimension
  booleans,  ///< an array of booleans, or one boolean for every dimension
  offsets,   ///< an array of integer arrays (stencil offsets)
};
const char* to_string(DeckValueKind kind);

/// One documented key of the schema.
struct DeckKey {
  std::string table;
  std::string key;
  DeckValueKind kind;
  std::string default_value;  ///< as the README shows it
  std::string allowed;        ///< allowed values or range ("star, box", ">= 1")
  std::string meaning;
  /// Conditions under which the key may be given, all of them must hold:
  /// {"kernel.name", {"life"}} means "only with kernel.name = life". Empty:
  /// always. A key given where it does not apply is an error.
  std::vector<std::pair<std::string, std::vector<std::string>>> applies;
  std::string dotted() const { return table + "." + key; }
  /// "kernel.name = life" / "init.type = random, pattern" joined by "; " ("" = always).
  std::string applies_text() const;
};
/// Every key of every table, in README order.
const std::vector<DeckKey>& deck_schema();
/// The schema as a Markdown table (`isostencil check --keys`), for the README.
std::string deck_schema_markdown();

/// One parameter of a registered kernel: the key `kernel.<key>` of its decks.
/// Kinds: integer, floating, boolean, string, and the per-dimension lists
/// integers, floats, booleans (one value means "the same in every dimension").
struct DeckKernelParameter {
  std::string key;
  DeckValueKind kind = DeckValueKind::floating;
  std::string default_value;  ///< TOML text of the value taken when the deck omits it ("0.25")
  std::string allowed;        ///< for the key table ("> 0"); the kernel checks it (Deck::fail)
  std::string meaning;
};

/// A kernel a program adds to the decks it reads (isostencil::driver registers
/// them): its name becomes a value of kernel.name, its parameters keys of
/// [kernel] that apply only with that name.
struct DeckKernel {
  std::string name;                   ///< kernel.name; letters, digits, '_' and '-'
  std::string meaning;                ///< one line for the key table
  std::string default_shape = "star"; ///< stencil.shape "auto" stands for this
  std::string default_init = "constant";  ///< init.type "auto": constant, random or gaussian
  bool weights = false;               ///< stencil.weights applies (the kernel reads them)
  std::vector<DeckKernelParameter> parameters;
};

/// Adds a kernel to the schema (not collective; call it on every rank before
/// reading a deck). Throws iso::Error for a name already taken, a parameter
/// key that [kernel] already has, or a default that is not of its kind.
void register_deck_kernel(const DeckKernel& kernel);
/// The registered kernel of that name, or nullptr (built-in kernels are not registered).
const DeckKernel* find_deck_kernel(const std::string& name);

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
    std::string name = "jacobi";  ///< jacobi, life, advection
    double source = 0.0;          ///< jacobi: constant right-hand side
    double boundary = 0.0;        ///< jacobi: Dirichlet value beyond non-periodic sides
    std::string rule = "B3/S23";  ///< life
    std::vector<double> velocity; ///< advection: one per dimension
    double courant = 0.5;         ///< advection: sum_j |v_j| dt / dx
    /// A registered kernel's parameters (every one, defaults filled in), by key.
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
  } kernel;

  struct Init {
    std::string type;          ///< constant, random, pattern, gaussian (never auto)
    double value = 0.0;        ///< constant
    double density = 0.5;      ///< random (life)
    double low = 0.0;          ///< random (floating-point fields)
    double high = 1.0;
    std::uint64_t seed = 1;    ///< random
    std::string pattern;       ///< pattern: RLE file, resolved against base_dir
    std::vector<long> offset;  ///< pattern: global index of its first cell; empty = centred
    std::vector<double> center;  ///< gaussian: in cells, one per dimension
    double width = 0.0;        ///< gaussian: standard deviation in cells
    double amplitude = 1.0;    ///< gaussian
  } init;

  struct Run {
    long steps = 100;
    double tolerance = 0.0;    ///< jacobi: stop once the residual is below it (0: never)
    long residual_every = 10;  ///< residual / live cells / progress line every N steps
    bool overlap = true;
  } run;

  struct Halo {
    std::string algorithm = "auto";
    long validate_every = 0;  ///< 0: never
  } halo;

  struct Output {
    std::string dir = "output";
    std::string name;          ///< file name stem; default: the deck file's stem
    std::string format = "hdf5";
    long every = 0;            ///< 0: the final state only
    long checkpoint_every = 0; ///< 0: never
  } output;

  /// The stencil the kernel runs (weights attached when given).
  Stencil make_stencil() const;
  iso::Algorithm algorithm() const;
  /// Where `dotted_key` ("stencil.shape") was set.
  DeckLocation where(const std::string& dotted_key) const;
  /// Throws a DeckError naming the key's location (for checks made after
  /// parsing, e.g. a Life rule or an RLE file the kernels reject).
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

/// Checks the deck against a run on `num_procs` processes (not collective):
/// the process grid MPI_Dims_create gives (grid.procs kept), at least one
/// cell per process, no halo wider than the smallest subdomain. Throws
/// DeckError naming grid.procs, grid.extent or stencil.radius.
void check_decomposition(const Deck& deck, int num_procs);

/// Collective: creates output.dir (rank 0) and writes and removes a temporary
/// file there on every rank; throws the same DeckError on every rank (naming
/// output.dir's location) when any rank cannot. With `create` false nothing
/// is created: an existing output.dir is probed, a missing one must have a
/// writable nearest existing ancestor (`isostencil check`).
void check_output_writable(MPI_Comm comm, const Deck& deck, bool create = true);

}  // namespace isostencil::core
