#include "isostencil/bench/stats.hpp"

#include <algorithm>
#include <cmath>

namespace isobench {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double position = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

TukeySummary tukey_median(std::vector<double> values, double k) {
  TukeySummary out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  out.q1 = quantile_sorted(values, 0.25);
  out.q3 = quantile_sorted(values, 0.75);
  const double iqr = out.q3 - out.q1;
  out.lower = out.q1 - k * iqr;
  out.upper = out.q3 + k * iqr;
  std::vector<double> kept;
  kept.reserve(values.size());
  for (double v : values)
    if (v >= out.lower && v <= out.upper) kept.push_back(v);
  out.kept = kept.size();
  out.removed = values.size() - kept.size();
  out.median = quantile_sorted(kept, 0.5);  // kept is sorted: a subsequence of sorted values
  return out;
}

LaunchSummary summarize_launches(const std::vector<double>& medians) {
  LaunchSummary out;
  out.launches = medians.size();
  if (medians.empty()) return out;
  out.median = median(medians);
  const auto [low, high] = std::minmax_element(medians.begin(), medians.end());
  out.min = *low;
  out.max = *high;
  return out;
}

}  // namespace isobench
