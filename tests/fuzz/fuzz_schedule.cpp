// Fuzz target: neighborhood + schedule construction (pure, no MPI calls).
//
// The input bytes describe a process grid (dimensions, sizes, periodic flags),
// an algorithm, a collective and an offset list. Construction must either
// reject the input with iso::Error exactly when it is invalid, or produce
// schedules that the independent simulator of tests/schedule accepts on every
// process, with figures that agree with counts taken from the rounds.
//
// Layout (missing bytes read as 0):
//   byte 0      dimensions d = b % 8 (0 must be rejected)
//   byte 1      algorithm = b % 5 (linear, torus, direct, mpi, auto);
//               bit 3: allgather; bit 6: offsets have d+1 coordinates;
//               bit 7: one periodic flag too many
//   byte 2      periodic flags, bit j for dimension j
//   d bytes     grid sizes: b % 9 (0 must be rejected); 0xff: next 4 bytes raw
//   rest        offset coordinates as signed bytes; -128: next 4 bytes raw
#include "simulator.hpp"

#include "iso/error.hpp"
#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Reader {
  const std::uint8_t* data;
  std::size_t size;
  bool empty() const { return size == 0; }
  std::uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  std::int32_t word() {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(byte()) << (8 * k);
    std::int32_t out;
    std::memcpy(&out, &v, sizeof out);
    return out;
  }
};

[[noreturn]] void fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_schedule: INVARIANT VIOLATED: %s\n  %s\n", what.c_str(), detail.c_str());
  std::abort();
}

// Work bound for the all-process simulation, so each input stays fast.
constexpr long max_simulated_work = 4000;

void check(const iso::OffsetList& offsets, const iso::CartGeometry& grid, iso::Algorithm algorithm,
           iso::Collective collective, bool expect_valid, const std::string& what) {
  std::vector<int> coords(grid.sizes.size(), 0);
  iso::Schedule first;
  try {
    first = iso::build_schedule(offsets, grid, coords.data(), algorithm, collective);
  } catch (const iso::Error& error) {
    if (expect_valid && std::strstr(error.what(), "torus schedule of these offsets needs") == nullptr)
      fail("a valid neighborhood was rejected", what + ": " + error.what());
    return;
  }
  if (!expect_valid) fail("an invalid neighborhood was accepted", what);

  const iso::RoundList list = iso::build_round_list(offsets, algorithm);
  if (first.num_global_rounds != static_cast<int>(list.shifts.size()))
    fail("global round count differs from the round list", what);
  if (first.num_blocks != offsets.size()) fail("num_blocks differs from the offset count", what);

  const long procs = grid.num_procs();
  if (procs * (static_cast<long>(offsets.size()) + static_cast<long>(list.shifts.size()) + 1) >
      max_simulated_work) {
    // Too large to simulate every process: the last process must still build.
    std::vector<int> last(grid.sizes.size());
    for (std::size_t j = 0; j < last.size(); ++j) last[j] = grid.sizes[j] - 1;
    (void)iso::build_schedule(offsets, grid, last.data(), algorithm, collective);
    return;
  }
  const std::vector<iso::Schedule> all = schedtest::build_all(offsets, grid, algorithm, collective);
  const schedtest::SimResult sim = schedtest::simulate(offsets, grid, collective, all, &list);
  if (!sim.ok()) fail("the simulator rejects the schedules", what + "\n" + sim.summary());

  // Figures must agree with counts taken directly from the rounds.
  const iso::ScheduleFigures figures = iso::schedule_figures(offsets, grid, algorithm, collective);
  long messages = 0, volume = 0, messages_total = 0, volume_total = 0;
  for (const iso::Schedule& schedule : all) {
    const long m = schedtest::count_messages_sent(schedule);
    const long b = schedtest::count_blocks_sent(schedule);
    messages = std::max(messages, m);
    volume = std::max(volume, b);
    messages_total += m;
    volume_total += b;
  }
  if (figures.rounds != static_cast<int>(list.shifts.size()) || figures.messages != messages ||
      figures.volume != volume || figures.messages_total != messages_total ||
      figures.volume_total != volume_total)
    fail("schedule_figures disagrees with the schedules' rounds",
         what + ": figures rounds/messages/volume/totals " + std::to_string(figures.rounds) + "/" +
             std::to_string(figures.messages) + "/" + std::to_string(figures.volume) + "/" +
             std::to_string(figures.messages_total) + "/" + std::to_string(figures.volume_total) +
             ", counted " + std::to_string(list.shifts.size()) + "/" + std::to_string(messages) + "/" +
             std::to_string(volume) + "/" + std::to_string(messages_total) + "/" +
             std::to_string(volume_total));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  const int dims = in.byte() % 8;
  const std::uint8_t mode = in.byte();
  const std::uint8_t periodic_bits = in.byte();
  const auto algorithm = static_cast<iso::Algorithm>(mode % 5);
  const auto collective = (mode & 0x08) ? iso::Collective::allgather : iso::Collective::alltoall;
  const int offset_dims = (mode & 0x40) ? dims + 1 : dims;

  iso::CartGeometry grid;
  for (int j = 0; j < dims; ++j) {
    const std::uint8_t b = in.byte();
    grid.sizes.push_back(b == 0xff ? in.word() : b % 9);
    grid.periodic.push_back(((periodic_bits >> j) & 1) != 0);
  }
  if (mode & 0x80) grid.periodic.push_back(true);

  std::vector<int> coords;
  while (!in.empty()) {
    const auto c = static_cast<std::int8_t>(in.byte());
    coords.push_back(c == -128 ? in.word() : c);
  }
  if (offset_dims > 0) coords.resize(coords.size() - coords.size() % offset_dims);

  // The offset list on its own: rejected exactly when a rule is broken.
  bool offsets_valid = offset_dims >= 1;
  for (int c : coords)
    offsets_valid = offsets_valid && c >= -iso::OffsetList::max_coordinate && c <= iso::OffsetList::max_coordinate;
  iso::OffsetList offsets;
  try {
    offsets = iso::OffsetList(offset_dims, coords);
  } catch (const iso::Error& error) {
    if (offsets_valid) fail("a valid offset list was rejected", error.what());
    return 0;
  }
  if (!offsets_valid) fail("an invalid offset list was accepted", offsets.to_string());
  // Its text form parses back to the same list.
  if (offsets.size() > 0) {
    std::string text;
    for (int i = 0; i < offsets.size(); ++i) {
      for (int j = 0; j < offset_dims; ++j) text += (j ? "," : "") + std::to_string(offsets[i][j]);
      text += ";";
    }
    if (!(iso::OffsetList::parse(text) == offsets)) fail("parse(text) differs from the list", text);
  }

  long procs = 1;
  bool grid_valid = dims >= 1 && grid.periodic.size() == grid.sizes.size();
  for (int p : grid.sizes) {
    grid_valid = grid_valid && p >= 1;
    if (grid_valid) procs *= p;
    grid_valid = grid_valid && procs <= 2147483647L;
  }
  const bool dims_match = offsets.size() == 0 || offset_dims == dims;
  const bool has_schedule = algorithm == iso::Algorithm::linear || algorithm == iso::Algorithm::torus ||
                            algorithm == iso::Algorithm::direct;
  const bool expect_valid = grid_valid && dims_match && has_schedule;

  std::string what = "dims=" + std::to_string(dims) + " sizes=";
  for (int p : grid.sizes) what += std::to_string(p) + " ";
  what += "flags=" + std::to_string(grid.periodic.size()) + " algorithm=" + iso::to_string(algorithm) +
          " collective=" + iso::to_string(collective) + " offsets(" + std::to_string(offsets.size()) +
          ")=" + offsets.to_string().substr(0, 200);
  // Torus routes cost one step per unit hop of every block: the library
  // refuses more than 10^7; between 2*10^4 and that, inputs are valid but too
  // slow to fuzz at a useful rate.
  if (algorithm == iso::Algorithm::torus) {
    long hops = 0;
    for (int c : offsets.flat()) hops += c < 0 ? -static_cast<long>(c) : c;
    if (hops > 20000 && hops <= 10000000) return 0;
    if (hops > 10000000 && expect_valid) {
      std::vector<int> origin(grid.sizes.size(), 0);
      try {
        (void)iso::build_schedule(offsets, grid, origin.data(), algorithm, collective);
      } catch (const iso::Error&) {
        return 0;
      }
      fail("a torus list over 10^7 block hops was accepted", what);
    }
  }
  check(offsets, grid, algorithm, collective, expect_valid, what);
  return 0;
}
