// The deck schema: the generic keys of every table (neutral about kernels:
// the registered ones add their [kernel] keys and say which generic keys they
// take), the Markdown key table, and the schema lookups of the parser.
#include "isostencil/deck/schema.hpp"

#include "text.hpp"

#include "iso/schedule.hpp"

#include <algorithm>
#include <sstream>

namespace isostencil::deck {

namespace {

using Kind = DeckValueKind;

std::vector<DeckKey> make_schema() {
  const std::string all_dims = " (one per dimension, or one value for all)";
  std::vector<DeckKey> keys = {
      // [grid]
      {"grid", "dims", Kind::integer, "2, or the length of `extent`", "1 to 4",
       "number of dimensions", {}},
      {"grid", "extent", Kind::integers, "64 in every dimension", "each >= 1 and >= procs",
       "global cells per dimension" + all_dims, {}},
      {"grid", "periodic", Kind::booleans, "true", "true, false",
       "periodic (torus) or bounded dimension" + all_dims, {}},
      {"grid", "procs", Kind::integers, "0 (chosen by MPI_Dims_create)", "each >= 0",
       "processes per dimension; 0 entries are chosen, the others must divide the rank count" +
           all_dims,
       {}},
      // [stencil]
      {"stencil", "shape", Kind::string, "\"auto\" (the kernel's default shape)",
       "auto, star, box, upwind, offsets",
       "the offsets each cell reads: star = 2d·r+1 points (faces only), box = (2r+1)^d "
       "points (Moore), upwind = the box's offsets on one side per dimension, offsets = "
       "the list in `offsets`",
       {}},
      {"stencil", "radius", Kind::integer, "1", "1 to 8", "reach of star, box and upwind",
       {{"stencil.shape", {"star", "box", "upwind"}}}},
      {"stencil", "signs", Kind::integers,
       "-1, unless the kernel derives them", "-1, 0, 1",
       "upwind: the sign of the offsets read per dimension, 0 = both sides" + all_dims,
       {{"stencil.shape", {"upwind"}}}},
      {"stencil", "offsets", Kind::offsets, "none (required with shape = \"offsets\")",
       "d integers each, |c| <= 8", "explicit offsets, e.g. [[0,0],[-1,0],[0,-1]]",
       {{"stencil.shape", {"offsets"}}}},
      {"stencil", "weights", Kind::floats, "the kernel's default weights",
       "one per offset in stencil order (star: centre, then -r..r per dimension; box: "
       "row-major)",
       "the weight of each offset, for the kernels that read them", {{"kernel.name", {}}}},
      // [kernel]
      {"kernel", "name", Kind::string, "the first kernel registered", "", "the kernel", {}},
      // [init]
      {"init", "type", Kind::string, "\"auto\" (the kernel's default)",
       "auto, constant, random, pattern, gaussian",
       "initial condition; every one is a function of the global index, so it does not "
       "depend on the decomposition",
       {}},
      {"init", "value", Kind::floating, "0.0", "finite", "constant: the value of every cell",
       {{"init.type", {"constant"}}}},
      {"init", "density", Kind::floating, "0.5", "0 to 1",
       "random: probability that a cell is alive",
       {{"init.type", {"random"}}, {"kernel.name", {}}}},
      {"init", "low", Kind::floating, "0.0", "<= high",
       "random: values uniform in [low, high)",
       {{"init.type", {"random"}}, {"kernel.name", {}}}},
      {"init", "high", Kind::floating, "1.0", ">= low", "random: see low",
       {{"init.type", {"random"}}, {"kernel.name", {}}}},
      {"init", "seed", Kind::integer, "1", ">= 0",
       "random: seed; cell values are a hash of seed and global index",
       {{"init.type", {"random"}}}},
      {"init", "pattern", Kind::string, "none (required with type = \"pattern\")",
       "a pattern file", "pattern: the kernel's pattern file, relative to the deck's directory",
       {{"init.type", {"pattern"}}}},
      {"init", "offset", Kind::integers, "the pattern centred in the grid", "inside the grid",
       "pattern: global index of the pattern's first cell (RLE: row, column)" + all_dims,
       {{"init.type", {"pattern"}}}},
      {"init", "center", Kind::floats, "the middle of the grid", "finite",
       "gaussian: centre in cells (cell i has coordinate i)" + all_dims,
       {{"init.type", {"gaussian"}}}},
      {"init", "width", Kind::floating, "the smallest extent / 8", "> 0",
       "gaussian: standard deviation in cells", {{"init.type", {"gaussian"}}}},
      {"init", "amplitude", Kind::floating, "1.0", "finite", "gaussian: peak value",
       {{"init.type", {"gaussian"}}}},
      // [run]
      {"run", "steps", Kind::integer, "100", ">= 0",
       "last step (a restart continues up to it)", {}},
      {"run", "tolerance", Kind::floating, "0.0 (run all steps)", ">= 0",
       "stop once the kernel's residual is at most this (checked every residual_every steps)",
       {{"kernel.name", {}}}},
      {"run", "residual_every", Kind::integer, "10", ">= 1",
       "measure the state (a residual, a count) and print a progress line every N steps", {}},
      {"run", "check_finite_every", Kind::integer, "run.residual_every", ">= 0 (0: never)",
       "check every N steps, and at the first and last step, that every field value is finite: "
       "a NaN or infinity stops the run (exit code 1) naming the step, the field and the first "
       "such cell's global index",
       {}},
      {"run", "overlap", Kind::boolean, "true", "true, false",
       "update the cells that read no ghost while the halo exchange is in flight", {}},
      // [halo]
      {"halo", "algorithm", Kind::string, "\"auto\"", iso::algorithm_names(iso::AlgorithmNames::auto_first),
       "halo exchange schedule; auto lets the cost model choose (or follows what tune measured for the same exchange earlier), tune times every candidate at init and caches the choice (the summary says what was chosen and whether from the cache; `ISO_TUNE_CACHE`)",
       {}},
      {"halo", "validate_every", Kind::integer, "0 (never)", ">= 0",
       "the exchanges of steps 0, N, 2N, ... also run the naive reference exchange and "
       "compare every ghost cell; a mismatch stops the run with the report (exit code 1)",
       {}},
      {"halo", "transport", Kind::string, "\"auto\" (datatypes on host memory, packed on device memory)",
       "auto, datatypes, packed",
       "how blocks travel: datatypes = MPI datatypes on the fields themselves; packed = Kokkos "
       "kernels pack the blocks into one contiguous buffer per exchange (staged through host "
       "memory for device fields unless gpu_aware_mpi)",
       {}},
      {"halo", "ports", Kind::integer, "0 (no limit)", ">= 0",
       "messages in flight each way at once: rounds that do not depend on each other are "
       "posted together, at most this many (1: one round at a time)",
       {}},
      {"halo", "depth", Kind::integer_or_auto, "1", "1 to 8, or \"auto\"",
       "deep halos: ghost layers `depth` times as wide as the stencil's, exchanged once every "
       "`depth` steps; the steps between update shrinking boxes over the ghost region "
       "(redundant work instead of messages; results bit-identical to depth 1). auto: the cost "
       "model predicts the time per step of every depth, the run times the promising ones on "
       "its own kernel for a few milliseconds and takes the fastest (the run header says which "
       "and why)",
       {}},
      {"halo", "gpu_aware_mpi", Kind::boolean, "false", "true, false",
       "the MPI library reads device memory: device buffers go to MPI unstaged (then algorithm "
       "must be mpi); no effect on host memory",
       {}},
      // [output]
      {"output", "dir", Kind::string, "\"output\"", "a writable directory (created)",
       "where fields, checkpoints and the summary go (relative to the working directory)", {}},
      {"output", "name", Kind::string, "the deck file's name without .toml (\"default\")",
       "no '/'", "file name stem: dir/name.h5, .xmf, .checkpoint.h5, .summary.json", {}},
      {"output", "format", Kind::string, "\"hdf5\"", "hdf5, none",
       "field output: parallel HDF5 plus an XDMF time series (2-D and 3-D), or none", {}},
      {"output", "every", Kind::integer, "0 (the final state only)", ">= 0",
       "write the fields at step 0, every N steps and at the end (ignored with format = \"none\")",
       {}},
      {"output", "checkpoint_every", Kind::integer, "0 (never)", ">= 0",
       "write a checkpoint every N steps (atomically: temporary file, then rename)", {}},
  };
  return keys;
}

}  // namespace

namespace detail {

std::vector<DeckKey>& schema_storage() {
  static std::vector<DeckKey> schema = make_schema();
  return schema;
}

const DeckKey* find_key(const std::string& table, const std::string& key) {
  for (const DeckKey& entry : deck_schema())
    if (entry.table == table && entry.key == key) return &entry;
  return nullptr;
}

std::vector<std::string> table_names() {
  std::vector<std::string> names;
  for (const DeckKey& entry : deck_schema())
    if (std::find(names.begin(), names.end(), entry.table) == names.end())
      names.push_back(entry.table);
  return names;
}

std::vector<std::string> keys_of(const std::string& table) {
  std::vector<std::string> names;
  for (const DeckKey& entry : deck_schema())
    if (entry.table == table) names.push_back(entry.key);
  return names;
}

}  // namespace detail

const char* to_string(DeckValueKind kind) {
  switch (kind) {
    case Kind::integer: return "integer";
    case Kind::floating: return "float";
    case Kind::boolean: return "boolean";
    case Kind::string: return "string";
    case Kind::integer_or_auto: return "integer or \"auto\"";
    case Kind::integers: return "integer list";
    case Kind::floats: return "float list";
    case Kind::booleans: return "boolean list";
    case Kind::offsets: return "offset list";
  }
  return "value";
}

std::string DeckKey::applies_text() const {
  std::vector<std::string> parts;
  for (const auto& [condition, values] : applies)
    parts.push_back(condition + " = " + detail::join(values, ", "));
  return detail::join(parts, "; ");
}

const std::vector<DeckKey>& deck_schema() { return detail::schema_storage(); }

std::string deck_schema_markdown() {
  std::ostringstream out;
  std::string table;
  for (const DeckKey& entry : deck_schema()) {
    if (entry.table != table) {
      table = entry.table;
      out << (out.tellp() > 0 ? "\n" : "") << "`[" << table << "]`\n\n"
          << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    }
    std::string meaning = entry.meaning;
    if (!entry.applies.empty()) meaning += " (only with " + entry.applies_text() + ")";
    // A '|' inside a cell would end it.
    const auto cell = [](std::string text) {
      for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
        text.replace(at, 1, "\\|");
      return text;
    };
    out << "| `" << entry.key << "` | " << to_string(entry.kind) << " | " << cell(entry.default_value)
        << " | " << cell(entry.allowed) << " | " << cell(meaning) << " |\n";
  }
  return out.str();
}

void describe_deck_key(const std::string& dotted, const std::string& default_text,
                       const std::string& allowed, const std::string& meaning) {
  for (DeckKey& entry : detail::schema_storage()) {
    if (entry.dotted() != dotted) continue;
    if (!default_text.empty()) entry.default_value = default_text;
    if (!allowed.empty()) entry.allowed = allowed;
    if (!meaning.empty()) entry.meaning = meaning;
    return;
  }
  throw iso::Error("isostencil::deck::describe_deck_key: the deck schema has no key " + dotted);
}

}  // namespace isostencil::deck
