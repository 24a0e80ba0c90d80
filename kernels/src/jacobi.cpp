#include "isostencil/kernels/jacobi.hpp"

#include "iso/error.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace isostencil::kernels {

namespace {

std::string offset_text(const int* offset, int dims) {
  std::string text = "(";
  for (int j = 0; j < dims; ++j)
    text += (j ? "," : "") + std::to_string(offset[j]);
  return text + ")";
}

void check_laplacian_args(const char* where, int dims, double h) {
  if (dims < 1 || dims > 6)
    throw iso::Error(std::string(where) + ": dimension must be 1 to 6, got " +
                     std::to_string(dims));
  if (!(h > 0) || !std::isfinite(h))
    throw iso::Error(std::string(where) + ": grid spacing h must be positive and finite, got " +
                     std::to_string(h));
}

}  // namespace

std::vector<double> box_laplacian_class_weights(int dims) {
  check_laplacian_args("isostencil::kernels::box_laplacian_class_weights", dims, 1.0);
  // L = Σ_j δ_j² Π_{i≠j} M_i with δ² = [1,-2,1] and M = [a, b, a], a = 1/12,
  // b = 1 - 2a: an offset with k nonzero components gets, from the k terms
  // whose δ² dimension is nonzero, 1 * a^{k-1} * b^{d-k}, and from the d-k
  // terms whose δ² dimension is zero, -2 * a^k * b^{d-k-1}.
  const double a = 1.0 / 12.0;
  const double b = 1.0 - 2.0 * a;
  std::vector<double> weights(static_cast<std::size_t>(dims) + 1);
  for (int k = 0; k <= dims; ++k) {
    double w = 0;
    if (k > 0) w += k * std::pow(a, k - 1) * std::pow(b, dims - k);
    if (k < dims) w -= 2.0 * (dims - k) * std::pow(a, k) * std::pow(b, dims - k - 1);
    weights[static_cast<std::size_t>(k)] = w;
  }
  return weights;
}

core::Stencil star_laplacian(int dims, double h) {
  check_laplacian_args("isostencil::kernels::star_laplacian", dims, h);
  const core::Stencil shape = core::Stencil::star(dims, 1);
  const double inverse_h2 = 1.0 / (h * h);
  std::vector<double> weights;
  for (int i = 0; i < shape.size(); ++i) {
    bool center = true;
    for (int j = 0; j < dims; ++j)
      center = center && shape.offsets()[i][j] == 0;
    weights.push_back(center ? -2.0 * dims * inverse_h2 : inverse_h2);
  }
  return core::Stencil(shape.offsets(), std::move(weights),
                       "star_laplacian(d=" + std::to_string(dims) + ")");
}

core::Stencil box_laplacian(int dims, double h) {
  check_laplacian_args("isostencil::kernels::box_laplacian", dims, h);
  const core::Stencil shape = core::Stencil::box(dims, 1);
  const std::vector<double> class_weights = box_laplacian_class_weights(dims);
  const double inverse_h2 = 1.0 / (h * h);
  std::vector<double> weights;
  for (int i = 0; i < shape.size(); ++i) {
    int nonzero = 0;
    for (int j = 0; j < dims; ++j)
      nonzero += shape.offsets()[i][j] != 0;
    weights.push_back(class_weights[static_cast<std::size_t>(nonzero)] * inverse_h2);
  }
  return core::Stencil(shape.offsets(), std::move(weights),
                       "box_laplacian(d=" + std::to_string(dims) + ")");
}

std::string JacobiSummary::describe() const {
  std::ostringstream text;
  text << sweeps << " sweeps, " << (converged ? "converged" : "not converged");
  if (!history.empty()) {
    const Residual& last = history.back();
    char norms[96];
    std::snprintf(norms, sizeof norms, "; residual after %ld sweeps: l2 %.3e, max %.3e", last.sweep,
                  last.l2, last.max);
    text << norms;
  }
  char times[128];
  std::snprintf(times, sizeof times, "; %.3f s (kernel %.3f s, halo %.3f s, reductions %.3f s)",
                total_seconds, kernel_seconds, halo_seconds, reduce_seconds);
  text << times;
  return text.str();
}

namespace detail {

JacobiOperator analyze_operator(const core::Stencil& stencil, int dims, const char* where) {
  const std::string prefix = std::string(where) + ": stencil " + stencil.name() + ": ";
  if (stencil.dims() != dims)
    throw iso::Error(prefix + "has " + std::to_string(stencil.dims()) + " dimensions, the grid " +
                     std::to_string(dims));
  if (!stencil.has_weights())
    throw iso::Error(prefix +
                     "has no weights; build the grid with kernels::star_laplacian or "
                     "kernels::box_laplacian, or give weights with Stencil::with_weights");
  JacobiOperator op;
  int centers = 0;
  for (int i = 0; i < stencil.size(); ++i) {
    const int* offset = stencil.offsets()[i];
    bool center = true;
    for (int j = 0; j < dims; ++j)
      center = center && offset[j] == 0;
    const double weight = stencil.weights()[static_cast<std::size_t>(i)];
    if (!std::isfinite(weight))
      throw iso::Error(prefix + "weight of offset " + offset_text(offset, dims) + " is not finite");
    if (center) {
      ++centers;
      op.center_weight = weight;
    } else {
      op.offsets.emplace_back(offset, offset + dims);
      op.weights.push_back(weight);
    }
  }
  if (centers != 1)
    throw iso::Error(prefix + "needs the centre offset exactly once, has it " +
                     std::to_string(centers) + " times");
  if (!(op.center_weight < 0))
    throw iso::Error(prefix + "centre weight must be negative (a Laplacian), got " +
                     std::to_string(op.center_weight));
  // The fast path: exactly the 2d unit offsets, each once, one common weight.
  if (static_cast<int>(op.offsets.size()) == 2 * dims) {
    std::vector<int> seen(static_cast<std::size_t>(2 * dims), 0);
    bool star = true;
    for (std::size_t t = 0; t < op.offsets.size() && star; ++t) {
      int axis = -1, nonzero = 0;
      for (int j = 0; j < dims; ++j)
        if (op.offsets[t][static_cast<std::size_t>(j)] != 0) {
          ++nonzero;
          axis = j;
        }
      const int value = axis >= 0 ? op.offsets[t][static_cast<std::size_t>(axis)] : 0;
      star = nonzero == 1 && (value == 1 || value == -1) && op.weights[t] == op.weights[0];
      if (star) ++seen[static_cast<std::size_t>(2 * axis + (value > 0))];
    }
    for (int count : seen)
      star = star && count == 1;
    op.uniform_star = star;
    op.neighbor_weight = star ? op.weights[0] : 0.0;
  }
  // The box path: each offset of {-1,0,1}^d exactly once, one weight per
  // number of nonzero components.
  int points = 1;
  for (int j = 0; j < dims; ++j)
    points *= 3;
  if (static_cast<int>(op.offsets.size()) == points - 1) {
    std::vector<int> seen(static_cast<std::size_t>(points), 0);
    std::vector<double> by_class(static_cast<std::size_t>(dims) + 1, 0.0);
    std::vector<int> class_set(static_cast<std::size_t>(dims) + 1, 0);
    bool box = true;
    for (std::size_t t = 0; t < op.offsets.size() && box; ++t) {
      int index = 0, nonzero = 0;
      for (int j = 0; j < dims && box; ++j) {
        const int c = op.offsets[t][static_cast<std::size_t>(j)];
        box = c >= -1 && c <= 1;
        index = index * 3 + (c + 1);
        nonzero += c != 0;
      }
      if (!box) break;
      ++seen[static_cast<std::size_t>(index)];
      auto k = static_cast<std::size_t>(nonzero);
      if (class_set[k] && by_class[k] != op.weights[t]) box = false;
      class_set[k] = 1;
      by_class[k] = op.weights[t];
    }
    for (int i = 0; i < points && box; ++i)
      box = (i == (points - 1) / 2) ? seen[static_cast<std::size_t>(i)] == 0
                                    : seen[static_cast<std::size_t>(i)] == 1;
    if (box) {
      op.box_by_class = true;
      by_class[0] = op.center_weight;
      op.class_weights = by_class;
    }
  }
  return op;
}

Residual reduce_residual(MPI_Comm comm, const ResidualSums& local, long sweep) {
  double sum = local.sum_of_squares;
  double max = local.max_abs;
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &max, 1, MPI_DOUBLE, MPI_MAX, comm));
  // MPI_MAX may drop a NaN (its comparison is false); the sum of squares is
  // NaN exactly when some residual is, so the max says so too.
  if (std::isnan(sum)) max = sum;
  return Residual{sweep, std::sqrt(sum), max};
}

}  // namespace detail

}  // namespace isostencil::kernels
