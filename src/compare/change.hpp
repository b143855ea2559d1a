#pragma once
// Did a figure change between two sets of repeats, beyond noise? (DESIGN.md, "Comparing studies".)
// The relative change after/before − 1 with a confidence interval, and a verdict against a
// threshold: regressed, improved, unchanged (the interval lies within ±threshold) or inconclusive.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelens {

enum class Verdict { regressed, improved, unchanged, inconclusive };
std::string_view verdict_name(Verdict v);
// How bad a verdict is, for sorting and for the exit code: regressed 3, inconclusive 2,
// improved 1, unchanged 0.
int severity_of(Verdict v);

enum class Better { lower, higher };

struct ChangeOptions {
  double threshold = 0.05;   // relative: 0.05 = ±5%
  double confidence = 0.95;
  int bootstrap_replicates = 2000;
  std::uint64_t seed = 0xc0ffee5;
  // The ratio of means is bootstrapped instead of Welch's t on logs when a side is skewed and both
  // have at least this many repeats (with fewer a bootstrap resamples too few distinct values and
  // its interval is too narrow).
  std::size_t bootstrap_min_repeats = 8;
  double skew_limit = 1.0;  // |sample skewness| beyond which a side counts as skewed
};

// The difference of the mean logs after − before, with its variance and the Welch–Satterthwaite
// pieces (Σ (s²/n)² / (n − 1)) that give its degrees of freedom; differences of several
// independent samples add (efficiency = baseline time / time).
struct LogDifference {
  double d = 0, var = 0, dof_denominator = 0;
  bool identical = true;  // every sample the same on both sides
  LogDifference& operator-=(const LogDifference& o);
  double dof() const;
};
// Needs every value > 0 and at least 2 on each side (else nullopt), unless both sides hold the same
// values: then 0 with no spread, whatever their number.
std::optional<LogDifference> log_difference(const std::vector<double>& before, const std::vector<double>& after);

// A value with the weight it has in a pooled mean: a run's mean epoch time and its epochs, as a
// configuration's epoch time pools them.
struct Weighted {
  double value = 0, weight = 1;
  auto operator<=>(const Weighted&) const = default;
};
// The same for pooled means Σ w·x / Σ w (the configurations' own times): the difference of their
// logs, each with the delta method's variance of a mean of clusters (runs), n/(n − 1) ·
// Σ w²(x − x̄)² / (Σ w)² / x̄², which the runs' spread gives whatever their weights. With equal
// weights it is the runs' relative variance over n; with unequal ones, wider, as the pooled mean
// leans on the runs with most epochs (an interval from the plain runs then covered too seldom).
std::optional<LogDifference> pooled_log_difference(const std::vector<Weighted>& before, const std::vector<Weighted>& after);

struct ChangeEstimate {
  std::optional<double> before, after;  // means
  std::size_t n_before = 0, n_after = 0;
  std::optional<double> rel_change;     // the point estimate of after/before − 1
  std::optional<double> ci_low, ci_high;
  // "welch-log" (Welch's t on log values: the ratio of geometric means), "bootstrap" (percentile
  // bootstrap of the ratio of means), "welch-delta" (values ≤ 0: Welch's t on the difference of
  // means over the mean before), "identical" (the same values on both sides), "" (no interval).
  std::string method;
  std::optional<double> log_sd;  // pooled standard deviation of the logs, for repeats needed
};

// The change of the mean from `before` to `after`; an interval needs ≥ 2 values per side.
ChangeEstimate estimate_change(const std::vector<double>& before, const std::vector<double>& after,
                               const ChangeOptions& options = {});
// The interval of exp(d) − 1 for a log difference (Welch's t).
ChangeEstimate change_from_log_difference(const LogDifference& diff, const ChangeOptions& options = {});

// The verdict: unchanged when the interval lies within ±threshold; regressed (improved) when it
// lies wholly on the worse (better) side of 0 and the estimate is beyond the threshold; else
// inconclusive. No interval: inconclusive.
Verdict judge(const ChangeEstimate& change, Better better, double threshold);

// Repeats per side about enough to decide an inconclusive change (0: cannot say, e.g. no spread
// known; SIZE_MAX: the change sits at the threshold, no practical number decides it).
std::size_t repeats_to_decide(const ChangeEstimate& change, double threshold, double confidence = 0.95);

// Sample skewness (adjusted Fisher–Pearson); 0 with fewer than 3 values or no spread.
double skewness(const std::vector<double>& values);

}  // namespace scalelens
