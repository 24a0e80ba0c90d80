// Statistics of the benchmark method (the paper's Section IV): per launch,
// the repetitions' times (each the maximum over ranks) lose their outliers by
// Tukey's rule and give a median; over launches, the median of the medians
// with their minimum and maximum. Pure functions, no MPI.
#pragma once

#include <cstddef>
#include <vector>

namespace isobench {

/// Quantile q in [0, 1] of sorted values by linear interpolation between
/// closest ranks (R type 7, numpy's default): position q*(n-1). Empty -> 0.
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Median of the values (mean of the two middle ones for an even count);
/// 0 for none.
double median(std::vector<double> values);

/// One launch's repetitions after Tukey's rule.
struct TukeySummary {
  double median = 0;       ///< median of the kept values
  double q1 = 0, q3 = 0;   ///< quartiles of all values
  double lower = 0;        ///< fences: kept values lie in [lower, upper]
  double upper = 0;
  std::size_t kept = 0;    ///< values inside the fences
  std::size_t removed = 0; ///< outliers
};

/// Removes values outside [Q1 - k*IQR, Q3 + k*IQR] (k = 3 in the paper) and
/// takes the median of the rest. With no values everything is 0.
TukeySummary tukey_median(std::vector<double> values, double k = 3.0);

/// Median of the launches' medians with their minimum and maximum.
struct LaunchSummary {
  double median = 0;
  double min = 0;
  double max = 0;
  std::size_t launches = 0;
};
LaunchSummary summarize_launches(const std::vector<double>& medians);

}  // namespace isobench
