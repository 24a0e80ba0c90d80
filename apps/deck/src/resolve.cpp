// Deck parsing, second half: every key's value with its default, "auto"
// and the kernel-dependent defaults resolved, lists one entry per dimension,
// and the checks of single values (ranges, allowed sets).
#include "parser.hpp"

#include "isostencil/deck/kernel.hpp"

#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace isostencil::deck::detail {

namespace {
constexpr int max_dims = 4;     // the driver instantiates kernels for 1 to 4 dimensions
constexpr int max_radius = 8;   // farther reaches make halos wider than useful subdomains
constexpr long max_offset = 8;  // per component of an explicit offset
using Kind = DeckValueKind;
}  // namespace

const RawValue* DeckParser::raw(const std::string& dotted) const {
  const auto found = values_.find(dotted);
  return found == values_.end() ? nullptr : &found->second;
}

DeckCheck DeckParser::kernel_check() {
  return DeckCheck(deck_, errors_, [this](const std::string& dotted) {
    return given(dotted) && deck_.where(dotted).origin != "default";
  });
}

template <class T>
std::vector<T> DeckParser::per_dimension(const std::string& dotted, const std::vector<T>& given_values,
                                         bool scalar, T fallback) {
  const int dims = deck_.grid.dims;
  if (!raw(dotted)) return std::vector<T>(static_cast<std::size_t>(dims), fallback);
  if (scalar) return std::vector<T>(static_cast<std::size_t>(dims), given_values.front());
  if (static_cast<int>(given_values.size()) != dims) {
    error_at(dotted, dotted + " has " + std::to_string(given_values.size()) + " " +
                         (given_values.size() == 1 ? "entry" : "entries") + " but the grid has " +
                         std::to_string(dims) + " dimension" + (dims == 1 ? "" : "s") +
                         dims_origin() + "; give one per dimension or a single value");
    return std::vector<T>(static_cast<std::size_t>(dims), given_values.front());
  }
  return given_values;
}


std::string DeckParser::dims_origin() const {
  if (given("grid.dims")) return " (grid.dims = " + std::to_string(deck_.grid.dims) + ")";
  if (dims_from_.empty()) return " (the default grid.dims)";
  return " (from " + dims_from_ + ")";
}

std::string DeckParser::string_or(const std::string& dotted, const std::string& fallback) const {
  const RawValue* value = raw(dotted);
  return value && value->string ? *value->string : fallback;
}
double DeckParser::float_or(const std::string& dotted, double fallback) const {
  const RawValue* value = raw(dotted);
  return value && value->floating ? *value->floating : fallback;
}
long DeckParser::int_or(const std::string& dotted, long fallback) const {
  const RawValue* value = raw(dotted);
  return value && value->integer ? *value->integer : fallback;
}

void DeckParser::check_choice(const std::string& dotted, const std::string& value,
                  const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    error_at(dotted, dotted + " = " + quoted(value) + " is not allowed" +
                         suggestion(value, allowed) + "; allowed: " + join(allowed, ", "));
}
void DeckParser::check_range(const std::string& dotted, double value, double low, double high,
                 const std::string& allowed_text) {
  if (!(value >= low && value <= high))
    error_at(dotted, dotted + " = " + deck_float(value) + " is out of range; allowed: " +
                         allowed_text);
}
void DeckParser::check_at_least(const std::string& dotted, long value, long low) {
  if (value < low)
    error_at(dotted, dotted + " = " + std::to_string(value) + " is out of range; allowed: >= " +
                         std::to_string(low));
}


std::string DeckParser::default_name() const {
  std::string name = deck_.source;
  const std::size_t slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0)
    name.resize(name.size() - 5);
  if (name.empty() || name.front() == '<') return "default";
  return name;
}


/// The [kernel] keys of every registered kernel the deck gives (a key of
/// another kernel is reported as not applying later, unless its value is
/// wrong); the deck's own kernel keeps its values, defaults included.
void DeckParser::resolve_parameters() {
  std::map<std::string, DeckValue> values;
  for (const DeckKernel& kernel : deck_kernels())
    for (const DeckKernelParameter& parameter : kernel.parameters) {
      const std::string dotted = "kernel." + parameter.key;
      const RawValue* value = raw(dotted);
      if (!value) continue;  // not given, or of a wrong type (reported already)
      auto found = values.find(parameter.key);
      if (found == values.end()) {
        DeckValue resolved_value;
        resolved_value.kind = parameter.kind;
        resolved_value.integer = value->integer.value_or(0);
        resolved_value.floating = value->floating.value_or(0.0);
        resolved_value.boolean = value->boolean.value_or(false);
        resolved_value.string = value->string.value_or(std::string());
        if (parameter.kind == Kind::integers)
          resolved_value.integers = per_dimension<long>(dotted, value->integers, value->scalar_list, 0L);
        if (parameter.kind == Kind::floats)
          resolved_value.floats = per_dimension<double>(dotted, value->floats, value->scalar_list, 0.0);
        if (parameter.kind == Kind::booleans)
          resolved_value.booleans = per_dimension<bool>(dotted, value->booleans, value->scalar_list, false);
        found = values.emplace(parameter.key, resolved_value).first;
      }
      if (parameter.check) {
        const std::string problem = parameter.check(found->second);
        if (!problem.empty()) error_at(dotted, problem);
        continue;
      }
      if (parameter.kind == Kind::floating && !std::isfinite(found->second.floating))
        error_at(dotted, dotted + " must be finite");
      for (const double v : found->second.floats)
        if (!std::isfinite(v)) error_at(dotted, dotted + " entries must be finite");
    }
  if (const DeckKernel* kernel = find_deck_kernel(deck_.kernel.name))
    for (const DeckKernelParameter& parameter : kernel->parameters) {
      const auto found = values.find(parameter.key);
      if (found != values.end()) deck_.kernel.parameters[parameter.key] = found->second;
    }
}

/// Values with their defaults; "auto" and kernel-dependent defaults resolved.
void DeckParser::resolve() {
  Deck& d = deck_;
  // [kernel] first: defaults elsewhere depend on it.
  std::vector<std::string> kernel_names;
  for (const DeckKernel& registered : deck_kernels()) kernel_names.push_back(registered.name);
  d.kernel.name = string_or("kernel.name", kernel_names.empty() ? std::string() : kernel_names.front());
  check_choice("kernel.name", d.kernel.name, kernel_names);
  const DeckKernel* kernel = find_deck_kernel(d.kernel.name);

  // [grid]
  const RawValue* extent = raw("grid.extent");
  const RawValue* periodic = raw("grid.periodic");
  const RawValue* procs = raw("grid.procs");
  if (given("grid.dims")) {
    d.grid.dims = static_cast<int>(int_or("grid.dims", 2));
    if (int_or("grid.dims", 2) < 1 || int_or("grid.dims", 2) > max_dims) {
      error_at("grid.dims", "grid.dims = " + std::to_string(int_or("grid.dims", 2)) +
                                " is out of range; allowed: 1 to " + std::to_string(max_dims));
      d.grid.dims = 2;
    }
  } else if (extent && !extent->scalar_list) {
    d.grid.dims = static_cast<int>(extent->integers.size());
    dims_from_ = "grid.extent";
  } else if (periodic && !periodic->scalar_list) {
    d.grid.dims = static_cast<int>(periodic->booleans.size());
    dims_from_ = "grid.periodic";
  } else if (procs && !procs->scalar_list) {
    d.grid.dims = static_cast<int>(procs->integers.size());
    dims_from_ = "grid.procs";
  }
  if (!given("grid.dims") && (d.grid.dims < 1 || d.grid.dims > max_dims)) {
    error_at(dims_from_, dims_from_ + " has " + std::to_string(d.grid.dims) +
                             " entries: grids have 1 to " + std::to_string(max_dims) +
                             " dimensions");
    d.grid.dims = 2;
  }
  const int dims = d.grid.dims;
  d.grid.extent = per_dimension<long>("grid.extent", extent ? extent->integers : std::vector<long>{},
                                      extent && extent->scalar_list, 64L);
  d.grid.periodic =
      per_dimension<bool>("grid.periodic", periodic ? periodic->booleans : std::vector<bool>{},
                          periodic && periodic->scalar_list, true);
  const std::vector<long> procs_long =
      per_dimension<long>("grid.procs", procs ? procs->integers : std::vector<long>{},
                          procs && procs->scalar_list, 0L);
  d.grid.procs.clear();
  for (int j = 0; j < dims; ++j) {
    const long n = d.grid.extent[static_cast<std::size_t>(j)];
    if (n < 1 || n > (1L << 40))
      error_at("grid.extent", "grid.extent[" + std::to_string(j) + "] = " + std::to_string(n) +
                                  " is out of range; allowed: 1 to 2^40");
    const long p = procs_long[static_cast<std::size_t>(j)];
    if (p < 0 || p > (1L << 24))
      error_at("grid.procs", "grid.procs[" + std::to_string(j) + "] = " + std::to_string(p) +
                                 " is out of range; allowed: 0 (chosen) or a process count");
    d.grid.procs.push_back(static_cast<int>(std::clamp(p, 0L, 1L << 24)));
    if (p > 0 && n >= 1 && p > n)
      error_at("grid.procs", "grid.procs[" + std::to_string(j) + "] = " + std::to_string(p) +
                                 " exceeds grid.extent[" + std::to_string(j) + "] = " +
                                 std::to_string(n) + ": every process needs at least one cell");
  }

  // [stencil]
  const std::string default_shape = kernel ? kernel->default_shape : "star";
  d.stencil.shape = string_or("stencil.shape", "auto");
  check_choice("stencil.shape", d.stencil.shape, {"auto", "star", "box", "upwind", "offsets"});
  shape_was_auto_ = d.stencil.shape == "auto";
  if (shape_was_auto_) d.stencil.shape = default_shape;
  d.stencil.radius = static_cast<int>(std::clamp(int_or("stencil.radius", 1), -1L, 1000L));
  if (d.stencil.radius < 1 || d.stencil.radius > max_radius)
    error_at("stencil.radius", "stencil.radius = " + std::to_string(int_or("stencil.radius", 1)) +
                                   " is out of range; allowed: 1 to " + std::to_string(max_radius));

  resolve_parameters();

  const RawValue* signs = raw("stencil.signs");
  // A kernel may derive the signs the deck leaves out (its resolve hook, below).
  const std::vector<long> signs_long =
      signs ? per_dimension<long>("stencil.signs", signs->integers, signs->scalar_list, -1L)
            : std::vector<long>(static_cast<std::size_t>(dims), -1L);
  d.stencil.signs.clear();
  for (const long s : signs_long) {
    if (s < -1 || s > 1)
      error_at("stencil.signs", "stencil.signs entries must be -1, 0 or 1, not " + std::to_string(s));
    d.stencil.signs.push_back(static_cast<int>(std::clamp(s, -1L, 1L)));
  }
  if (const RawValue* offsets = raw("stencil.offsets")) {
    for (const std::vector<long>& offset : offsets->offsets) {
      if (static_cast<int>(offset.size()) != dims) {
        error_at("stencil.offsets", "stencil.offsets has an offset with " +
                                        std::to_string(offset.size()) + " components but the grid has " +
                                        std::to_string(dims) + " dimensions" + dims_origin());
        break;
      }
      std::vector<int> converted;
      for (const long c : offset) {
        if (c < -max_offset || c > max_offset) {
          error_at("stencil.offsets", "stencil.offsets component " + std::to_string(c) +
                                          " is out of range; allowed: -8 to 8");
          break;
        }
        converted.push_back(static_cast<int>(c));
      }
      d.stencil.offsets.push_back(converted);
    }
  } else if (d.stencil.shape == "offsets") {
    error_at("stencil.shape", "stencil.shape = \"offsets\" needs stencil.offsets, e.g. "
                              "offsets = [[0,0],[-1,0],[0,-1]]");
  }
  if (const RawValue* weights = raw("stencil.weights")) d.stencil.weights = weights->floats;

  // [init]
  const std::string default_init = kernel ? kernel->default_init : "constant";
  d.init.type = string_or("init.type", "auto");
  check_choice("init.type", d.init.type, {"auto", "constant", "random", "pattern", "gaussian"});
  if (d.init.type == "auto") d.init.type = default_init;
  d.init.value = float_or("init.value", 0.0);
  d.init.density = float_or("init.density", 0.5);
  check_range("init.density", d.init.density, 0.0, 1.0, "0 to 1");
  d.init.low = float_or("init.low", 0.0);
  d.init.high = float_or("init.high", 1.0);
  if (!std::isfinite(d.init.low) || !std::isfinite(d.init.high) || d.init.low > d.init.high)
    error_at(given("init.low") ? "init.low" : "init.high",
             "init.low = " + deck_float(d.init.low) + " and init.high = " +
                 deck_float(d.init.high) + ": need finite low <= high");
  const long seed = int_or("init.seed", 1);
  check_at_least("init.seed", seed, 0);
  d.init.seed = static_cast<std::uint64_t>(std::max(seed, 0L));
  d.init.pattern = string_or("init.pattern", "");
  if (d.init.type == "pattern" && d.init.pattern.empty())
    error_at(given("init.type") ? "init.type" : "kernel.name",
             "init.type = \"pattern\" needs init.pattern (an RLE file)");
  if (const RawValue* offset = raw("init.offset"))
    d.init.offset = per_dimension<long>("init.offset", offset->integers, offset->scalar_list, 0L);
  std::vector<double> middle;
  long smallest = std::numeric_limits<long>::max();
  for (const long n : d.grid.extent) {
    middle.push_back(static_cast<double>(n - 1) / 2.0);
    smallest = std::min(smallest, n);
  }
  const RawValue* center = raw("init.center");
  d.init.center = center ? per_dimension<double>("init.center", center->floats,
                                                 center->scalar_list, 0.0)
                         : middle;
  d.init.width = float_or("init.width", std::max(1.0, static_cast<double>(smallest) / 8.0));
  if (!(d.init.width > 0.0) || !std::isfinite(d.init.width))
    error_at("init.width", "init.width = " + deck_float(d.init.width) +
                               " is out of range; allowed: > 0");
  d.init.amplitude = float_or("init.amplitude", 1.0);
  if (!std::isfinite(d.init.amplitude) || !std::isfinite(d.init.value))
    error_at(given("init.value") ? "init.value" : "init.amplitude", "values must be finite");

  // [run]
  d.run.steps = int_or("run.steps", 100);
  check_at_least("run.steps", d.run.steps, 0);
  d.run.tolerance = float_or("run.tolerance", 0.0);
  if (!(d.run.tolerance >= 0.0) || !std::isfinite(d.run.tolerance))
    error_at("run.tolerance", "run.tolerance = " + deck_float(d.run.tolerance) +
                                  " is out of range; allowed: >= 0");
  d.run.residual_every = int_or("run.residual_every", 10);
  check_at_least("run.residual_every", d.run.residual_every, 1);
  d.run.check_finite_every = int_or("run.check_finite_every", d.run.residual_every);
  check_at_least("run.check_finite_every", d.run.check_finite_every, 0);
  const RawValue* overlap = raw("run.overlap");
  d.run.overlap = overlap && overlap->boolean ? *overlap->boolean : true;

  // [halo]
  d.halo.algorithm = string_or("halo.algorithm", "auto");
  std::vector<std::string> algorithms{"auto"};  // the default first, as the key table shows
  for (const iso::AlgorithmInfo& info : iso::algorithm_table())
    if (info.algorithm != iso::Algorithm::automatic) algorithms.emplace_back(info.name);
  check_choice("halo.algorithm", d.halo.algorithm, algorithms);
  d.halo.validate_every = int_or("halo.validate_every", 0);
  check_at_least("halo.validate_every", d.halo.validate_every, 0);
  d.halo.transport = string_or("halo.transport", "auto");
  check_choice("halo.transport", d.halo.transport, {"auto", "datatypes", "packed"});
  d.halo.ports = int_or("halo.ports", 0);
  check_at_least("halo.ports", d.halo.ports, 0);
  if (d.halo.ports > 1000000) error_at("halo.ports", "halo.ports = " + std::to_string(d.halo.ports) + " is out of range; allowed: 0 to 1000000");
  if (const RawValue* depth = raw("halo.depth"); depth && depth->string) {
    d.halo.depth_auto = *depth->string == "auto";
    if (!d.halo.depth_auto)
      error_at("halo.depth", "halo.depth = " + quoted(*depth->string) +
                                 " is not allowed; allowed: an integer from 1 to " +
                                 std::to_string(max_halo_depth) + ", or \"auto\"");
  } else {
    d.halo.depth = int_or("halo.depth", 1);
    if (d.halo.depth < 1 || d.halo.depth > max_halo_depth)
      error_at("halo.depth", "halo.depth = " + std::to_string(d.halo.depth) +
                                 " is out of range; allowed: 1 to " +
                                 std::to_string(max_halo_depth) + ", or \"auto\"");
  }
  const RawValue* gpu_aware = raw("halo.gpu_aware_mpi");
  d.halo.gpu_aware_mpi = gpu_aware && gpu_aware->boolean ? *gpu_aware->boolean : false;

  // [output]
  d.output.dir = string_or("output.dir", "output");
  if (d.output.dir.empty()) error_at("output.dir", "output.dir must not be empty");
  d.output.name = string_or("output.name", default_name());
  if (d.output.name.empty() || d.output.name.find('/') != std::string::npos ||
      d.output.name == "." || d.output.name == "..")
    error_at("output.name", "output.name = " + quoted(d.output.name) +
                                " is not a file name stem (non-empty, no '/')");
  d.output.format = string_or("output.format", "hdf5");
  check_choice("output.format", d.output.format, {"hdf5", "none"});
  d.output.every = int_or("output.every", 0);
  check_at_least("output.every", d.output.every, 0);
  d.output.checkpoint_every = int_or("output.checkpoint_every", 0);
  check_at_least("output.checkpoint_every", d.output.checkpoint_every, 0);

  if (kernel && kernel->resolve) {
    DeckCheck check = kernel_check();
    kernel->resolve(check);
  }
}


}  // namespace isostencil::deck::detail
