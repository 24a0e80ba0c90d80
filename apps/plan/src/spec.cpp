#include "isostencil/spec.hpp"

#include "iso/offsets.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

namespace isostencil {

namespace {

std::string lower(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

MooreShape parse_moore(const std::string& text, const Limits& limits) {
  try {
    return iso::parse_moore(text, limits.max_offsets, "--moore");
  } catch (const iso::Error& error) {
    throw UsageError(error.what());
  }
}

std::vector<long long> parse_integer_list(const std::string& text, const std::string& option) {
  std::vector<long long> values;
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    long long value = 0;
    if (!iso::parse_strict_integer(part, value))
      throw UsageError(option + " " + text + ": \"" + iso::trim_blanks(part) + "\" is not an integer");
    values.push_back(value);
  }
  if (!text.empty() && text.back() == ',') throw UsageError(option + " " + text + ": trailing ','");
  if (values.empty())
    throw UsageError(option + ": expected a comma-separated list, got \"" + text + "\"");
  return values;
}

std::vector<int> parse_procs(const std::string& text, int dims, int min_size,
                             const Limits& limits) {
  auto values = parse_integer_list(text, "--procs");
  if (static_cast<int>(values.size()) != dims)
    throw UsageError("--procs " + text + ": " + std::to_string(values.size()) +
                     " process counts given for a " + std::to_string(dims) +
                     "-dimensional neighborhood; give one per dimension");
  std::vector<int> procs;
  long double total = 1;
  for (long long p : values) {
    if (p < min_size)
      throw UsageError("--procs " + text + ": every process count must be >= " +
                       std::to_string(min_size) + ", got " + std::to_string(p));
    if (p > INT_MAX)
      throw UsageError("--procs " + text + ": " + std::to_string(p) + " is too large");
    total *= static_cast<long double>(p);
    procs.push_back(static_cast<int>(p));
  }
  if (total > static_cast<long double>(limits.max_procs))
    throw UsageError("--procs " + text + ": " + format_sizes(procs) +
                     " processes is more than the " + std::to_string(limits.max_procs) +
                     " supported");
  return procs;
}

std::vector<long> parse_bytes_list(const std::string& text, const std::string& option) {
  const long long largest = 1LL << 30;
  std::vector<long> sizes;
  for (long long value : parse_integer_list(text, option)) {
    if (value < 1 || value > largest)
      throw UsageError(option + " " + text + ": " + std::to_string(value) +
                       " is not in range [1 - " + std::to_string(largest) + "] (bytes per block)");
    if (std::find(sizes.begin(), sizes.end(), value) == sizes.end())
      sizes.push_back(static_cast<long>(value));
  }
  if (sizes.size() > 64)
    throw UsageError(option + " " + text + ": at most 64 block sizes, got " +
                     std::to_string(sizes.size()));
  return sizes;
}

std::vector<bool> parse_periodic(const std::string& text, int dims) {
  std::vector<bool> flags;
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    std::string flag = lower(iso::trim_blanks(part));
    if (flag == "1" || flag == "true" || flag == "yes" || flag == "y" || flag == "t")
      flags.push_back(true);
    else if (flag == "0" || flag == "false" || flag == "no" || flag == "n" || flag == "f")
      flags.push_back(false);
    else
      throw UsageError("--periodic " + text + ": \"" + iso::trim_blanks(part) +
                       "\" is not a flag (use 1 or 0, true or false)");
  }
  if (!text.empty() && text.back() == ',')
    throw UsageError("--periodic " + text + ": trailing ','");
  if (static_cast<int>(flags.size()) != dims)
    throw UsageError("--periodic " + text + ": " + std::to_string(flags.size()) +
                     " flags given for a " + std::to_string(dims) +
                     "-dimensional neighborhood; give one per dimension");
  return flags;
}

iso::OffsetList read_offsets_file(const std::string& path) {
  try {
    return iso::read_offsets_file(path, "--offsets-file");
  } catch (const iso::Error& error) {
    throw UsageError(error.what());
  }
}

ResolvedOffsets resolve_offsets(const NeighborhoodArgs& args, const std::string& default_moore,
                                const Limits& limits) {
  int given = !args.moore.empty() + !args.offsets.empty() + !args.offsets_file.empty();
  if (given > 1) throw UsageError("give only one of --moore, --offsets and --offsets-file");
  if (args.self && args.moore.empty() && given == 1)
    throw UsageError(
        "--self applies to --moore only; list the zero vector among the offsets instead");
  ResolvedOffsets result;
  if (!args.offsets.empty()) {
    try {
      result.offsets = iso::OffsetList::parse(args.offsets);
    } catch (const iso::Error& error) {
      throw UsageError(std::string("--offsets: ") + error.what());
    }
    result.description = "explicit offsets";
  } else if (!args.offsets_file.empty()) {
    result.offsets = read_offsets_file(args.offsets_file);
    result.description = "offsets from " + args.offsets_file;
  } else {
    std::string text = args.moore.empty() ? default_moore : args.moore;
    if (text.empty())
      throw UsageError(
          "give the neighborhood: --moore D:R, --offsets \"1,0,0;0,1,1;...\" or "
          "--offsets-file FILE");
    MooreShape shape = parse_moore(text, limits);
    result.offsets = iso::OffsetList::moore(shape.dims, shape.radius, args.self);
    result.description = "Moore d=" + std::to_string(shape.dims) +
                         " r=" + std::to_string(shape.radius) +
                         (args.self ? ", self included" : ", self excluded");
  }
  if (result.offsets.size() > limits.max_offsets)
    throw UsageError("the neighborhood has " + std::to_string(result.offsets.size()) +
                     " offsets; at most " + std::to_string(limits.max_offsets) + " are supported");
  if (result.offsets.dims() > 64)
    throw UsageError("the neighborhood has " + std::to_string(result.offsets.dims()) +
                     " dimensions; at most 64 are supported");
  return result;
}

std::vector<bool> resolve_periodic(const NeighborhoodArgs& args, int dims) {
  if (args.mesh && !args.periodic.empty())
    throw UsageError("give only one of --mesh and --periodic");
  if (!args.periodic.empty()) return parse_periodic(args.periodic, dims);
  return std::vector<bool>(static_cast<std::size_t>(dims), !args.mesh);
}

std::int64_t torus_rounds(const iso::OffsetList& offsets) {
  std::int64_t rounds = 0;
  for (int j = 0; j < offsets.dims(); ++j) {
    std::int64_t forward = 0;
    std::int64_t backward = 0;
    for (int i = 0; i < offsets.size(); ++i) {
      forward = std::max<std::int64_t>(forward, offsets[i][j]);
      backward = std::max<std::int64_t>(backward, -static_cast<std::int64_t>(offsets[i][j]));
    }
    rounds += forward + backward;
  }
  return rounds;
}

void check_limits(const iso::OffsetList& offsets, const iso::CartGeometry& grid,
                  const Limits& limits) {
  long double procs = 1;
  bool all_periodic = true;
  for (int j = 0; j < grid.dims(); ++j) {
    procs *= grid.sizes[static_cast<std::size_t>(j)];
    all_periodic = all_periodic && grid.periodic[static_cast<std::size_t>(j)];
  }
  if (procs > static_cast<long double>(limits.max_procs))
    throw UsageError("the process grid " + format_sizes(grid.sizes) + " has more than the " +
                     std::to_string(limits.max_procs) + " supported processes");
  if (offsets.size() > limits.max_offsets)
    throw UsageError("the neighborhood has " + std::to_string(offsets.size()) +
                     " offsets; at most " + std::to_string(limits.max_offsets) + " are supported");
  const std::int64_t rounds = torus_rounds(offsets);
  if (rounds > limits.max_torus_rounds)
    throw UsageError("the offsets reach " + std::to_string(rounds) +
                     " unit hops (the torus algorithm's rounds), more than the " +
                     std::to_string(limits.max_torus_rounds) +
                     " supported; offsets far beyond the process grid make one round per hop");
  long double work =
      procs * (static_cast<long double>(offsets.size()) + static_cast<long double>(rounds));
  if (!all_periodic && work > static_cast<long double>(limits.max_mesh_work)) {
    std::ostringstream message;
    message << "a grid with non-periodic dimensions needs one schedule per process: "
            << format_sizes(grid.sizes) << " processes x (" << offsets.size() << " offsets + "
            << rounds << " torus rounds) = " << static_cast<double>(work)
            << " is more than the limit of " << limits.max_mesh_work
            << "; use fewer processes, a periodic grid or a higher --max-work";
    throw UsageError(message.str());
  }
}

std::string format_sizes(const std::vector<int>& sizes) {
  std::string out;
  for (std::size_t j = 0; j < sizes.size(); ++j)
    out += (j ? " x " : "") + std::to_string(sizes[j]);
  return out;
}

std::string format_flags(const std::vector<bool>& flags) {
  std::string out;
  for (std::size_t j = 0; j < flags.size(); ++j)
    out += std::string(j ? " " : "") + (flags[j] ? "yes" : "no");
  return out;
}

}  // namespace isostencil
