// Algorithm::tune's cache file (docs/design/cost-model.md#the-tune-cache).
//
// One line per tuning:
//   <key> <algorithm> <ports> <trials> <algorithm>:<ports>:<calls>:<seconds> ... # note
// Lines that do not parse are ignored (and dropped on the next write): the
// cache only ever saves time, a bad entry costs one tuning.
#include "iso/tune_cache.hpp"

#include "cost_model_internal.hpp"
#include "iso/error.hpp"
#include "iso/file_write.hpp"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <sstream>

#ifndef ISO_HALO_VERSION
#define ISO_HALO_VERSION "unknown"
#endif

namespace iso {

namespace {

// Parses one entry line; false when it is not one (comment, blank, damaged).
bool parse_line(const std::string& line, std::string& key, TuneChoice& choice) {
  std::istringstream in(line.substr(0, line.find('#')));
  std::string algorithm;
  int trials = 0;
  if (!(in >> key >> algorithm >> choice.ports >> trials) || key.size() != 16 || choice.ports < 0 || trials < 1 ||
      trials > 1000)
    return false;
  try {
    choice.algorithm = parse_algorithm(algorithm);
    choice.trials.clear();
    for (int k = 0; k < trials; ++k) {
      std::string item;
      if (!(in >> item)) return false;
      TuneTrial trial{};
      char name[32];
      if (std::sscanf(item.c_str(), "%31[a-z_]:%d:%d:%lf", name, &trial.ports, &trial.calls, &trial.seconds) != 4 ||
          trial.ports < 0 || trial.calls < 1 || !(trial.seconds > 0))
        return false;
      trial.algorithm = parse_algorithm(name);
      choice.trials.push_back(trial);
    }
  } catch (const Error&) {
    return false;  // an algorithm this version does not know
  }
  std::string extra;
  return !(in >> extra);
}

}  // namespace

std::string tune_cache_path() {
  // A character device there (/dev/null) keeps nothing too: read_cache_file
  // and update_cache_file see to that (iso/file_write.hpp).
  if (const char* chosen = std::getenv("ISO_TUNE_CACHE"); chosen && *chosen)
    return std::string(chosen) == "off" ? std::string() : std::string(chosen);
  return CostModel::cache_directory() + "tune_cache.txt";
}

std::uint64_t block_bytes_digest(const BlockBytes& bytes) {
  std::uint64_t hash = mix_fingerprint(0, bytes.send.size());
  for (long b : bytes.send) hash = mix_fingerprint(hash, static_cast<std::uint64_t>(b));
  hash = mix_fingerprint(hash, bytes.recv.size());
  for (long b : bytes.recv) hash = mix_fingerprint(hash, static_cast<std::uint64_t>(b));
  return hash;
}

std::string tune_cache_key(const std::string& machine, Collective collective, const OffsetList& offsets,
                           const CartGeometry& grid, int ports, std::uint64_t bytes_digest) {
  std::string text = machine + "|isostencil " ISO_HALO_VERSION "|" + to_string(collective) + "|dims";
  for (int p : grid.sizes) text += " " + std::to_string(p);
  text += "|periods";
  for (bool p : grid.periodic) text += p ? " 1" : " 0";
  text += "|offsets " + std::to_string(offsets.dims());
  for (int c : offsets.flat()) text += " " + std::to_string(c);
  text += "|ports " + std::to_string(ports) + "|bytes " + detail::hex16(bytes_digest);
  return detail::hex16(detail::text_digest(text));
}

std::optional<TuneChoice> tune_cache_find(const std::string& path, const std::string& key) {
  if (path.empty()) return std::nullopt;
  const std::optional<std::string> text = read_cache_file(path);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line, found;
  std::optional<TuneChoice> result;
  TuneChoice choice;
  while (std::getline(in, line))
    if (parse_line(line, found, choice) && found == key) result = choice;  // the newest wins
  return result;
}

void tune_cache_store(const std::string& path, const std::string& key, const TuneChoice& choice,
                      const std::string& note) {
  if (path.empty()) return;
  std::ostringstream entry;
  entry.precision(9);
  entry << key << ' ' << to_string(choice.algorithm) << ' ' << choice.ports << ' ' << choice.trials.size();
  for (const TuneTrial& t : choice.trials)
    entry << ' ' << to_string(t.algorithm) << ':' << t.ports << ':' << t.calls << ':' << t.seconds;
  std::string clean = note;
  for (char& c : clean)
    if (c == '\n' || c == '\r') c = ' ';
  entry << " # " << clean;
  // Merged under the cache's lock into the file as it is now: entries that
  // another job wrote since this one read the file stay.
  update_cache_file(path, [&](const std::string& current) {
    std::deque<std::string> kept;
    std::istringstream in(current);
    std::string line, found;
    TuneChoice other;
    while (std::getline(in, line))
      if (parse_line(line, found, other) && found != key) kept.push_back(line);
    kept.push_back(entry.str());
    while (kept.size() > static_cast<std::size_t>(tune_cache_capacity)) kept.pop_front();
    std::string text =
        "# isostencil tune cache: key algorithm ports trials (algorithm:ports:calls:seconds per call) # what\n"
        "# Written by Algorithm::tune (docs/design/cost-model.md#the-tune-cache). Delete to tune again.\n";
    for (const std::string& kept_line : kept) text += kept_line + '\n';
    return text;
  });
}

bool tune_entry_contradicts(const TuneChoice& entry, Algorithm model_algorithm, int model_ports) {
  auto time_of = [&](Algorithm algorithm, int ports) {
    for (const TuneTrial& t : entry.trials)
      if (t.algorithm == algorithm && t.ports == ports) return t.seconds;
    return 0.0;
  };
  const double model = time_of(model_algorithm, model_ports);
  const double pick = time_of(entry.algorithm, entry.ports);
  return !(model > 0 && pick > 0) || model > tune_follow_margin * pick;
}

}  // namespace iso
