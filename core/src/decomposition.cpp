#include "isostencil/core/decomposition.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

namespace isostencil::core {

namespace {

constexpr const char* where = "isostencil::core::Decomposition";

// Checks what can be checked before the process grid exists; fills the
// defaults (all periodic, all dims chosen by MPI) so every rank builds the
// same CartComm.
iso::CartComm make_cart(MPI_Comm comm, const std::vector<long>& global_extent,
                        std::vector<bool>& periodic, std::vector<int>& process_dims,
                        const Decomposition::AlsoAgreed* also) {
  const int d = static_cast<int>(global_extent.size());
  if (periodic.empty()) periodic.assign(global_extent.size(), true);
  if (process_dims.empty()) process_dims.assign(global_extent.size(), 0);
  std::string error;
  if (d < 1) {
    error = "the global extent needs at least one dimension";
  } else if (static_cast<int>(periodic.size()) != d) {
    error = std::to_string(periodic.size()) + " periodic flags for a " + std::to_string(d) +
            "-dimensional global extent";
  } else if (static_cast<int>(process_dims.size()) != d) {
    error = std::to_string(process_dims.size()) + " process grid sizes for a " + std::to_string(d) +
            "-dimensional global extent";
  } else {
    for (int j = 0; j < d && error.empty(); ++j) {
      if (global_extent[j] < 1)
        error = "global extent " + std::to_string(global_extent[j]) + " in dimension " +
                std::to_string(j) + " (needs at least one cell)";
      else if (global_extent[j] > std::numeric_limits<int>::max())
        error = "global extent " + std::to_string(global_extent[j]) + " in dimension " +
                std::to_string(j) + " exceeds the int range of MPI subarray types";
      else if (process_dims[j] < 0)
        error = "process grid size " + std::to_string(process_dims[j]) + " in dimension " +
                std::to_string(j) + " is negative";
    }
  }
  if (error.empty()) {
    // MPI_Dims_create aborts (MPI_ERR_DIMS, fatal on MPI_COMM_WORLD) when every
    // size is given and their product is not the number of processes.
    int size = 0;
    ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
    long product = 1;
    bool all_given = true;
    for (int p : process_dims) {
      if (p > 0) product *= p;
      all_given = all_given && p > 0;
    }
    if (size % product != 0 || (all_given && product != size)) {
      error = "the process grid sizes (";
      for (int j = 0; j < d; ++j)
        error += (j ? "," : "") +
                 (process_dims[j] == 0 ? std::string("any") : std::to_string(process_dims[j]));
      error += ") do not fit " + std::to_string(size) + " processes";
    }
  }
  std::uint64_t fingerprint = iso::mix_fingerprint(0, static_cast<std::uint64_t>(d));
  for (long n : global_extent)
    fingerprint = iso::mix_fingerprint(fingerprint, static_cast<std::uint64_t>(n));
  for (bool p : periodic)
    fingerprint = iso::mix_fingerprint(fingerprint, p ? 1 : 2);
  for (int p : process_dims)
    fingerprint = iso::mix_fingerprint(fingerprint, static_cast<std::uint64_t>(p));
  // CartComm's own checks (they complete the zero entries with
  // MPI_Dims_create), and whether this rank holds a communicator of equal
  // arguments already (another grid's): all in the one agreement, so that
  // every rank reuses it or every rank makes a new one.
  std::vector<int> dims = process_dims;
  if (error.empty()) error = iso::CartComm::check(comm, dims, periodic);
  if (error.empty() && also) error = also->error;
  std::unique_ptr<iso::CartComm> found = error.empty() ? iso::CartComm::find_shared(comm, dims, periodic) : nullptr;
  std::vector<iso::MustMatch> must_match{{fingerprint, "the global extent, periodic flags or process grid sizes"}};
  if (also) must_match.push_back(also->must_match);
  const bool everywhere = iso::agree_on_errors_and_all(comm, where, error, must_match, found != nullptr);
  if (everywhere) return std::move(*found);
  return iso::CartComm::create_shared(comm, std::move(dims), periodic);
}

}  // namespace

std::vector<int> Decomposition::choose_process_dims(int num_procs, std::vector<int> fixed) {
  const char* here = "isostencil::core::Decomposition::choose_process_dims";
  if (fixed.empty()) throw iso::Error(std::string(here) + ": no dimensions");
  long product = 1;
  for (int p : fixed) {
    if (p < 0) throw iso::Error(std::string(here) + ": negative process grid size");
    if (p > 0) product *= p;
  }
  const bool all_given = std::none_of(fixed.begin(), fixed.end(), [](int p) { return p == 0; });
  if (num_procs < 1 || num_procs % product != 0 || (all_given && product != num_procs))
    throw iso::Error(std::string(here) + ": the given process grid sizes (product " +
                     std::to_string(product) + ") do not divide " + std::to_string(num_procs) +
                     " processes");
  ISO_MPI_CHECK(MPI_Dims_create(num_procs, static_cast<int>(fixed.size()), fixed.data()));
  return fixed;
}

Decomposition::Decomposition(MPI_Comm comm, std::vector<long> global_extent,
                             std::vector<bool> periodic, std::vector<int> process_dims)
    : Decomposition(comm, std::move(global_extent), std::move(periodic), std::move(process_dims), nullptr) {}

Decomposition::Decomposition(MPI_Comm comm, std::vector<long> global_extent, std::vector<bool> periodic,
                             std::vector<int> process_dims, const AlsoAgreed& also)
    : Decomposition(comm, std::move(global_extent), std::move(periodic), std::move(process_dims), &also) {}

Decomposition::Decomposition(MPI_Comm comm, std::vector<long> global_extent, std::vector<bool> periodic,
                             std::vector<int> process_dims, const AlsoAgreed* also)
    : global_extent_(std::move(global_extent)),
      cart_(make_cart(comm, global_extent_, periodic, process_dims, also)) {
  const int d = dims();
  const std::vector<int>& procs = cart_.geometry().sizes;
  // Deterministic from agreed arguments: the same error on every rank
  // without communication.
  for (int j = 0; j < d; ++j)
    if (global_extent_[j] < procs[j])
      throw iso::Error(std::string(where) + ": dimension " + std::to_string(j) + " has " +
                       std::to_string(global_extent_[j]) + " cells but " +
                       std::to_string(procs[j]) +
                       " processes; every process needs at least one cell (use fewer processes "
                       "in this dimension or a larger grid)");
  ISO_MPI_CHECK(MPI_Comm_rank(cart_.get(), &rank_));
  coords_.resize(d);
  ISO_MPI_CHECK(MPI_Cart_coords(cart_.get(), rank_, d, coords_.data()));
  local_extent_.resize(d);
  global_offset_.resize(d);
  for (int j = 0; j < d; ++j) {
    local_extent_[j] = local_extent_of(j, coords_[j]);
    global_offset_[j] = global_offset_of(j, coords_[j]);
  }
}

int Decomposition::local_extent_of(int dim, int coord) const {
  const long n = global_extent_.at(dim);
  const int p = process_dims().at(dim);
  if (coord < 0 || coord >= p)
    throw iso::Error(std::string(where) + "::local_extent_of: coordinate " + std::to_string(coord) +
                     " outside [0, " + std::to_string(p) + ") in dimension " + std::to_string(dim));
  return static_cast<int>(n / p + (coord < n % p ? 1 : 0));
}

long Decomposition::global_offset_of(int dim, int coord) const {
  const long n = global_extent_.at(dim);
  const int p = process_dims().at(dim);
  if (coord < 0 || coord > p)
    throw iso::Error(std::string(where) + "::global_offset_of: coordinate " +
                     std::to_string(coord) + " outside [0, " + std::to_string(p) +
                     "] in dimension " + std::to_string(dim));
  return coord * (n / p) + std::min<long>(coord, n % p);
}

int Decomposition::smallest_local_extent(int dim) const {
  return static_cast<int>(global_extent_.at(dim) / process_dims().at(dim));
}

int Decomposition::owner_coord(int dim, long global) const {
  const long n = global_extent_.at(dim);
  const int p = process_dims().at(dim);
  if (global < 0 || global >= n)
    throw iso::Error(std::string(where) + "::owner_coord: global index " + std::to_string(global) +
                     " outside [0, " + std::to_string(n) + ") in dimension " + std::to_string(dim));
  const long small = n / p, larger = n % p;  // the first `larger` own small + 1
  const long boundary = larger * (small + 1);
  return static_cast<int>(global < boundary ? global / (small + 1)
                                            : larger + (global - boundary) / small);
}

std::string Decomposition::describe() const {
  std::ostringstream text;
  auto list = [&](const auto& values, const char* separator) {
    for (std::size_t j = 0; j < values.size(); ++j)
      text << (j ? separator : "") << values[j];
  };
  text << "global ";
  list(global_extent_, "x");
  text << " (";
  for (int j = 0; j < dims(); ++j)
    text << (j ? ", " : "") << (periodic()[j] ? "periodic" : "non-periodic");
  text << ") on ";
  list(process_dims(), "x");
  text << " processes; rank " << rank_ << " at (";
  list(coords_, ",");
  text << ") owns ";
  list(local_extent_, "x");
  text << " from (";
  list(global_offset_, ",");
  text << ")";
  return text.str();
}

}  // namespace isostencil::core
