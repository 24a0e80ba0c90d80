// Residual norms of a Jacobi iterate and the solver's report. The residual
// is r = f + L u (= f - A u); its norms over all ranks are
//   l2 = sqrt(Σ r²)  (plain ℓ2 over the global interior, no h scaling)
//   max = max |r|.
#pragma once

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace isostencil::kernels {

/// Residual norms of the iterate after `sweep` sweeps (global over all ranks).
struct Residual {
  long sweep = 0;
  double l2 = 0;
  double max = 0;
};

struct JacobiSummary {
  long sweeps = 0;         ///< sweeps run by this call
  bool converged = false;  ///< a tolerance was met
  /// Residuals measured during this call, in order. When solve() stops at a
  /// tolerance, the residual that met it is of the iterate before the last
  /// sweep (it is computed within that sweep); with final_residual the last
  /// entry is the returned iterate's.
  std::vector<Residual> history;
  double kernel_seconds = 0;  ///< this rank: sweeps and residual reductions
  double halo_seconds = 0;    ///< this rank: exposed start/wait time
  double reduce_seconds = 0;  ///< this rank: MPI_Allreduce of the norms
  double total_seconds = 0;   ///< this rank: wall time of the call

  /// One line: sweeps, convergence, last residual, time split.
  std::string describe() const;
};

/// Partial residual norms: `+=` combines two of them (sums add, maxima take
/// the larger), as Kokkos' default reduction join expects.
struct ResidualSums {
  double sum_of_squares = 0;
  double max_abs = 0;

  KOKKOS_INLINE_FUNCTION ResidualSums& operator+=(const ResidualSums& other) {
    sum_of_squares += other.sum_of_squares;
    if (!(other.max_abs <= max_abs)) max_abs = other.max_abs;  // NaN sticks
    return *this;
  }
  // Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile ResidualSums& other) volatile {
    sum_of_squares += other.sum_of_squares;
    if (!(other.max_abs <= max_abs)) max_abs = other.max_abs;
  }
  KOKKOS_INLINE_FUNCTION void add(double r) {
    sum_of_squares += r * r;
    const double magnitude = r < 0 ? -r : r;
    if (!(magnitude <= max_abs)) max_abs = magnitude;
  }
};

namespace detail {
/// Sum and max over `comm` (two MPI_Allreduce).
Residual reduce_residual(MPI_Comm comm, const ResidualSums& local, long sweep);
}  // namespace detail

}  // namespace isostencil::kernels
