#pragma once
// Descriptive statistics as every figure of the report uses them (DESIGN.md, "Time").
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "model/study.hpp"

namespace scalelens {

struct Stat {
  double mean = 0, median = 0, std = 0;  // std: sample standard deviation (n − 1); 0 when n = 1
  std::size_t n = 0;
  // Student-t 95% confidence interval of the mean; absent (NaN) when n < 2.
  double ci95_low = 0, ci95_high = 0;
  double cv() const { return mean != 0 ? std / mean : 0; }
};

// Values whose spread is at most this share of their size differ by the rounding of the arithmetic
// that made them, not by measurement: describe() gives them no spread.
inline constexpr double kRoundingSpread = 1e-12;
// nullopt for an empty sample.
std::optional<Stat> describe(std::vector<double> values);
// The arithmetic mean; NaN for an empty sample.
double mean_of(const std::vector<double>& values);

// Two-sided Student-t critical value: P(|T| <= t) = confidence, with `dof` degrees of freedom.
double student_t_critical(double confidence, std::size_t dof);
// The same for a fractional number of degrees of freedom (Welch–Satterthwaite), nu > 0.
double student_t_critical_fractional(double confidence, double nu);

// Percentiles of a distribution over whole percents (weights per value 0…100, DESIGN.md "GPU
// utilization over time"): each the smallest value at or below which lies at least that share of
// the weight (ties, within 1e-5 of the total, go to the lower value). None without weight.
struct Percentiles {
  double p10 = 0, p50 = 0, p90 = 0;
};
std::optional<Percentiles> percentiles_of(const UtilHistogram& weights);

// Histograms merged with each weighing the same (each scaled to sum to 1, then averaged): shares
// that sum to 1. None when none has weight.
std::optional<UtilHistogram> mean_of_shares(const std::vector<const UtilHistogram*>& histograms);
std::optional<UtilHistogram> mean_of_shares(const std::vector<const SparseUtilHistogram*>& histograms);
// A GPU's packed histogram as each bin's share (all zero when it has none).
UtilHistogram util_shares(const PackedUtilHistogram& packed);

// Regularized incomplete beta function I_x(a, b), exposed for testing.
double incomplete_beta(double a, double b, double x);

}  // namespace scalelens
