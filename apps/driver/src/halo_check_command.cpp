// `isostencil halo-check`: sweeps stencil shapes (star, box, upwind), radii,
// dimensions and algorithms on MPI_COMM_WORLD and checks every grid halo
// exchange twice: validate() (isomorphic exchange vs the naive reference,
// bitwise, every ghost cell) and the values themselves (every exchanged ghost
// cell holds the value of the global cell it stands for; ghosts beyond a
// bounded side keep their sentinel). Prints a table of what was checked; exit
// code 1 on any mismatch.
#include "command.hpp"

#include "isostencil/core/grid.hpp"
#include "isostencil/core/stencil.hpp"

#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace isostencil::cli {

namespace {

struct Case {
  int dims = 1;
  std::string shape;
  int radius = 1;
  std::string periodicity;  // "torus" (all periodic) or "mesh" (alternating, dimension 0 bounded)
  std::string algorithm;
};

struct Outcome {
  std::string procs, extent, ran;
  int directions = 0;
  long cells = 0;
  bool naive_ok = true, values_ok = true;
  std::string message;
};

std::vector<int> upwind_signs(int dims) {
  const int pattern[] = {-1, 1, 0, -1};
  return std::vector<int>(pattern, pattern + dims);
}

core::Stencil make_stencil(const Case& c) {
  if (c.shape == "star") return core::Stencil::star(c.dims, c.radius);
  if (c.shape == "box") return core::Stencil::box(c.dims, c.radius);
  return core::Stencil::upwind(c.dims, c.radius, upwind_signs(c.dims));
}

double cell_value(long global_linear) { return 1.0 + static_cast<double>(global_linear); }

template <int D>
Outcome check_case(const Case& c, int num_procs) {
  std::array<bool, D> periodic{};
  for (int j = 0; j < D; ++j) periodic[j] = c.periodicity == "torus" || j % 2 == 1;
  const std::vector<int> procs = core::Decomposition::choose_process_dims(num_procs, std::vector<int>(D, 0));
  // Uneven extents (one cell more every other dimension) and subdomains at
  // least as wide as the halo.
  std::array<long, D> extent{};
  for (int j = 0; j < D; ++j) extent[j] = static_cast<long>(procs[static_cast<std::size_t>(j)]) * (c.radius + 1) + j % 2;
  core::Grid<D> grid(MPI_COMM_WORLD, extent, periodic, make_stencil(c));
  core::HaloOptions options;
  options.algorithm = iso::parse_algorithm(c.algorithm);
  auto field = grid.template make_field<double>("halo-check");
  auto exchange = grid.halo_exchange(field, options);

  // Interior: the cell's global row-major index + 1; ghosts: -1.
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), field);
  const std::size_t cells = host.span();
  std::array<int, D> local{};
  const auto global_linear = [&](const std::array<long, D>& global) {
    long index = 0;
    for (int j = 0; j < D; ++j) index = index * extent[j] + global[j];
    return index;
  };
  for (std::size_t at = 0; at < cells; ++at) {
    std::size_t rest = at;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(grid.field_extent()[j]));
      rest /= static_cast<std::size_t>(grid.field_extent()[j]);
    }
    host.data()[at] = grid.is_interior(local) ? cell_value(global_linear(grid.to_global(local))) : -1.0;
  }
  Kokkos::deep_copy(field, host);

  Outcome outcome;
  const iso::HaloValidation validation = exchange.validate();
  outcome.naive_ok = validation.ok;
  outcome.message = validation.message;
  long compared = validation.cells_compared;
  MPI_Allreduce(MPI_IN_PLACE, &compared, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  outcome.cells = compared;

  // Independent check of the values: ghost cells in an exchanged direction
  // hold the cell they stand for; all other ghosts keep -1.
  Kokkos::deep_copy(host, field);
  const iso::OffsetList& directions = grid.directions();
  std::string first_error;
  for (std::size_t at = 0; at < cells && first_error.empty(); ++at) {
    std::size_t rest = at;
    for (int j = D - 1; j >= 0; --j) {
      local[j] = static_cast<int>(rest % static_cast<std::size_t>(grid.field_extent()[j]));
      rest /= static_cast<std::size_t>(grid.field_extent()[j]);
    }
    if (grid.is_interior(local)) continue;
    std::vector<int> direction(D);
    for (int j = 0; j < D; ++j)
      direction[j] = local[j] < grid.ghost_lo()[j] ? -1 : local[j] >= grid.ghost_lo()[j] + grid.interior_extent()[j] ? 1 : 0;
    bool read = false;
    for (int i = 0; i < directions.size() && !read; ++i) {
      bool same = true;
      for (int j = 0; j < D; ++j) same = same && directions[i][j] == direction[j];
      read = same;
    }
    const auto wrapped = grid.wrap(grid.to_global(local));
    const double expected = read && wrapped ? cell_value(global_linear(*wrapped)) : -1.0;
    if (host.data()[at] != expected) {
      std::ostringstream text;
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      text << "rank " << rank << ": ghost cell at local (";
      for (int j = 0; j < D; ++j) text << (j ? "," : "") << local[j];
      text << ") holds " << host.data()[at] << ", expected " << expected;
      first_error = text.str();
    }
  }
  int bad = first_error.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  outcome.values_ok = bad == 0;
  if (!outcome.values_ok && outcome.message.empty()) {
    // Gather the lowest failing rank's message.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int first = first_error.empty() ? num_procs : rank;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int length = static_cast<int>(first_error.size());
    MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
    first_error.resize(static_cast<std::size_t>(length));
    MPI_Bcast(first_error.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
    outcome.message = first_error;
  }
  for (int j = 0; j < D; ++j) {
    outcome.procs += (j ? "x" : "") + std::to_string(procs[static_cast<std::size_t>(j)]);
    outcome.extent += (j ? "x" : "") + std::to_string(extent[j]);
  }
  outcome.directions = directions.size();
  outcome.ran = iso::to_string(exchange.algorithm());
  return outcome;
}

Outcome check(const Case& c, int num_procs) {
  switch (c.dims) {
    case 1: return check_case<1>(c, num_procs);
    case 2: return check_case<2>(c, num_procs);
    case 3: return check_case<3>(c, num_procs);
    default: return check_case<4>(c, num_procs);
  }
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

class HaloCheckCommand final : public Command {
public:
  explicit HaloCheckCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "halo-check",
        "Check the grid halo exchange on MPI_COMM_WORLD for every stencil shape, radius,\n"
        "dimension and algorithm: validate() against the naive exchange plus the ghost values.");
    app_->add_option("--dims", dims_, "dimensions, comma-separated")->capture_default_str();
    app_->add_option("--shapes", shapes_, "stencil shapes: star, box, upwind")->capture_default_str();
    app_->add_option("--radii", radii_, "stencil radii")->capture_default_str();
    app_->add_option("--algorithms", algorithms_, "linear, torus, direct, mpi, auto")->capture_default_str();
    app_->add_option("--periodicity", periodicity_,
                     "torus (all periodic), mesh (dimension 0 bounded, then alternating)")
        ->capture_default_str();
    app_->add_flag("--ranks-note", ranks_note_,
                   "end with a note on the process grids this rank count covers and the rank "
                   "counts worth running next");
  }

  int run(const MpiContext& mpi) override {
    std::optional<driver::KokkosScope> kokkos;
    start_kokkos(kokkos);
    std::vector<Case> cases;
    for (const std::string& d : split(dims_))
      for (const std::string& shape : split(shapes_))
        for (const std::string& r : split(radii_))
          for (const std::string& periodicity : split(periodicity_))
            for (const std::string& algorithm : split(algorithms_)) {
              Case c;
              try {
                c.dims = std::stoi(d);
                c.radius = std::stoi(r);
              } catch (const std::exception&) {
                throw UsageError("--dims and --radii take integers, got \"" + d + "\" / \"" + r + "\"");
              }
              if (c.dims < 1 || c.dims > 4) throw UsageError("--dims: 1 to 4, got " + d);
              if (c.radius < 1 || c.radius > 3) throw UsageError("--radii: 1 to 3, got " + r);
              if (shape != "star" && shape != "box" && shape != "upwind")
                throw UsageError("--shapes: star, box or upwind, got \"" + shape + "\"");
              if (periodicity != "torus" && periodicity != "mesh")
                throw UsageError("--periodicity: torus or mesh, got \"" + periodicity + "\"");
              try {
                iso::parse_algorithm(algorithm);
              } catch (const iso::Error&) {
                throw UsageError("--algorithms: linear, torus, direct, mpi or auto, got \"" + algorithm + "\"");
              }
              c.shape = shape;
              c.periodicity = periodicity;
              c.algorithm = algorithm;
              cases.push_back(c);
            }
    const bool root = mpi.rank == 0;
    if (root)
      std::cout << fmt::format("halo-check on {} rank{}: {} exchanges (validate() against the naive "
                               "exchange, then every ghost value)\n",
                               mpi.size, mpi.size == 1 ? "" : "s", cases.size())
                << fmt::format("{:>4}  {:<6} {:>2}  {:<8} {:<9} {:<12} {:>4}  {:<9} {:<7} {:>8}  {:<6} {}\n",
                               "dims", "shape", "r", "periodic", "procs", "extent", "dirs",
                               "algorithm", "ran", "ghosts", "naive", "values");
    long failures = 0, total_cells = 0;
    std::vector<std::string> grids;
    const double start = MPI_Wtime();
    for (const Case& c : cases) {
      const Outcome outcome = check(c, mpi.size);
      total_cells += outcome.cells;
      const bool ok = outcome.naive_ok && outcome.values_ok;
      failures += ok ? 0 : 1;
      const std::string grid = std::to_string(c.dims) + "-D: " + outcome.procs;
      if (std::find(grids.begin(), grids.end(), grid) == grids.end()) grids.push_back(grid);
      if (root) {
        std::cout << fmt::format("{:>4}  {:<6} {:>2}  {:<8} {:<9} {:<12} {:>4}  {:<9} {:<7} {:>8}  {:<6} {}\n",
                                 c.dims, c.shape, c.radius, c.periodicity, outcome.procs, outcome.extent,
                                 outcome.directions, c.algorithm, outcome.ran, outcome.cells,
                                 outcome.naive_ok ? "OK" : "FAILED", outcome.values_ok ? "OK" : "FAILED");
        if (!ok) std::cout << "      mismatch: " << outcome.message << "\n";
      }
    }
    if (root) {
      std::cout << fmt::format("halo-check: {} exchanges on {} rank{} in {:.2f} s, {} ghost cells compared: {}\n",
                               cases.size(), mpi.size, mpi.size == 1 ? "" : "s", MPI_Wtime() - start,
                               total_cells,
                               failures == 0 ? std::string("all match")
                                             : std::to_string(failures) + " MISMATCHED");
      if (ranks_note_) {
        std::string covered;
        for (const std::string& grid : grids) covered += (covered.empty() ? "" : "; ") + grid;
        std::cout << "note: process grids covered (MPI_Dims_create): " << covered << ".\n"
                  << "note: one rank exchanges with itself only (periodic wrap-around); 2 ranks split "
                     "dimension 0 only. Run at several rank counts (e.g. 1, 2, 3, 4, 8: "
                     "`for n in 1 2 3 4 8; do mpirun -np $n --oversubscribe isostencil halo-check; done`) "
                     "to cover uneven splits, several split dimensions and neighbors that coincide.\n";
      }
      std::cout << std::flush;
    }
    return failures == 0 ? 0 : 1;
  }

private:
  std::string dims_ = "1,2,3,4";
  std::string shapes_ = "star,box,upwind";
  std::string radii_ = "1,2";
  std::string algorithms_ = "linear,torus,direct,mpi,auto";
  std::string periodicity_ = "torus,mesh";
  bool ranks_note_ = false;
};

}  // namespace

std::unique_ptr<Command> make_halo_check_command(CLI::App& parent) {
  return std::make_unique<HaloCheckCommand>(parent);
}

}  // namespace isostencil::cli
