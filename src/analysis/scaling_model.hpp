#pragma once
// A scaling model per curve (DESIGN.md, "Scaling model"): the time T(p) as a function of the GPU
// count, chosen among Extra-P-style forms T(p) = c0 + Σ ck·p^i·log2(p)^j (one or two terms) by
// leave-one-out cross-validation, with the interpretable laws (Amdahl, Amdahl with a log2 p
// communication term, the Universal Scalability Law) as named special cases; predictions beyond
// the measured range with a 90% bootstrap interval that holds the doubt about the model as well as
// the noise of the repeats.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace scalelens {

// The measured times at one GPU count: one per repeat (run).
struct ScalingPoint {
  int p = 0;
  std::vector<double> times;
};

// One term ck·p^p_exp·log2(p)^log_exp; the constant c0 is the term with both exponents 0.
struct ScalingTerm {
  double coef = 0;
  double p_exp = 0;
  int log_exp = 0;
};

struct ScalingFit {
  std::vector<ScalingTerm> terms;  // the constant first
  std::string law;                 // "Amdahl", "Amdahl + log2 p", "USL", "constant", "" (another form)
  std::map<std::string, double> params;  // serial_fraction, comm_s_per_log2p, sigma, kappa, peak_p
  double adj_r2 = std::numeric_limits<double>::quiet_NaN();
  double loo_rel_error = std::numeric_limits<double>::quiet_NaN();  // mean |left-out error| / measured
  int n_points = 0;
  double operator()(double p) const;
  std::string formula(const std::string& unit = "s") const;  // "T(p) = 0.82 s + 410 s/p + 0.061 s·log2 p"
};

struct ScalingPrediction {
  int p = 0;
  double time = 0, lower = 0, upper = 0;  // the model's time and its interval
};

struct ScalingBacktest {
  int p = 0;  // the largest measured GPU count, left out
  double predicted = 0, lower = 0, upper = 0, measured = 0;
  // Within the interval, up to the fit's rounding: exact times give a zero-width interval that a
  // measured value equal but for the last bits must not fall outside (1e-9 is far below timing noise).
  // The slack scales with the bound it widens, so a wild prediction cannot widen the interval.
  bool inside() const {
    return measured >= lower - 1e-9 * std::abs(lower) && measured <= upper + 1e-9 * std::abs(upper);
  }
};

struct ScalingOptions {
  std::vector<int> predict;  // GPU counts; empty: 2× and 4× the largest measured
  int replicates = 1000;
  double confidence = 0.90;
  std::uint64_t seed = 0x5ca1e1e5;
  bool backtest = true;
  bool suggest = true;
  bool weak = false;  // weak scaling: no preference for the (strong-scaling) named laws
  std::string unit = "GPUs";  // what the world size counts, in the messages: summary.json's world_size_unit
};

struct ScalingModel {
  std::optional<ScalingFit> fit;       // none with fewer than 3 GPU counts
  std::string refused;                 // why there are no predictions ("" when there are)
  std::vector<ScalingPrediction> predictions;
  // The model with its interval at every power of two from the smallest measured GPU count to the
  // farthest prediction (and at the measured counts): what charts draw as a band.
  std::vector<ScalingPrediction> band;
  std::vector<std::string> refused_targets;  // "2048: beyond 8× the largest measured (128)"
  std::optional<ScalingBacktest> backtest;
  std::string backtest_refused;  // why there is no self-check where one was tried ("" otherwise)
  // Its self-check missed (the largest count, left out and predicted, outside its interval) or was
  // tried and could not be made (backtest_refused): its predictions are doubtful or unchecked
  // (warning model-self-check-failed) and recommend no count.
  bool self_check_failed() const { return (backtest && !backtest->inside()) || !backtest_refused.empty(); }
  // Why self_check_failed(), as a clause after "the model" ("" when it passed or had none):
  // "fitted without 8 GPUs predicts 14.1 s [12, 16], but 8.25 s was measured (+71%)".
  std::string self_check_failure() const;
  std::string unit = "GPUs";  // what its counts count (ScalingOptions::unit), for self_check_failure
  std::optional<int> suggest_next_p;
  std::string suggest_why;
};

inline constexpr double kMaxLooRelError = 0.15;  // beyond it the model does not predict
inline constexpr int kMaxExtrapolation = 8;      // × the largest measured GPU count

// Chooses and fits the model on `points` (one per GPU count, times > 0), predicts, backtests and
// suggests the next measurement. Deterministic for a given seed.
ScalingModel fit_scaling_model(std::vector<ScalingPoint> points, const ScalingOptions& options = {});

// Only the choice and fit, with no bootstrap (used inside the bootstrap and by tests).
std::optional<ScalingFit> choose_scaling_fit(const std::vector<int>& p, const std::vector<double>& mean_time, bool weak = false);

}  // namespace scalelens
