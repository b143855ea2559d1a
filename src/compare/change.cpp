#include "compare/change.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "analysis/stats.hpp"

namespace scalelens {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::regressed: return "regressed";
    case Verdict::improved: return "improved";
    case Verdict::unchanged: return "unchanged";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

int severity_of(Verdict v) {
  switch (v) {
    case Verdict::regressed: return 3;
    case Verdict::inconclusive: return 2;
    case Verdict::improved: return 1;
    case Verdict::unchanged: return 0;
  }
  return 2;
}

namespace {

double variance(const std::vector<double>& v) {  // sample variance (n − 1)
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss / static_cast<double>(v.size() - 1);
}

bool same_values(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v) out.push_back(std::log(x));
  return out;
}

}  // namespace

LogDifference& LogDifference::operator-=(const LogDifference& o) {
  d -= o.d;
  var += o.var;
  dof_denominator += o.dof_denominator;
  identical = identical && o.identical;
  return *this;
}

double LogDifference::dof() const {
  // No spread on any side: the interval is a point whatever the degrees of freedom.
  return dof_denominator > 0 ? var * var / dof_denominator : 1e6;
}

std::optional<LogDifference> log_difference(const std::vector<double>& before, const std::vector<double>& after) {
  if (before.empty() || after.empty()) return std::nullopt;
  for (const auto* side : {&before, &after})
    for (double x : *side)
      if (!(x > 0) || !std::isfinite(x)) return std::nullopt;
  // The same samples on both sides differ by exactly 0, however few (DESIGN.md: identical samples
  // compare as 0 with interval [0, 0], whatever their number).
  if (same_values(before, after)) return LogDifference{};
  if (before.size() < 2 || after.size() < 2) return std::nullopt;
  const auto la = logs(before), lb = logs(after);
  const double na = static_cast<double>(la.size()), nb = static_cast<double>(lb.size());
  const double va = variance(la) / na, vb = variance(lb) / nb;
  LogDifference diff;
  diff.d = mean_of(lb) - mean_of(la);
  diff.var = va + vb;
  diff.dof_denominator = va * va / (na - 1) + vb * vb / (nb - 1);
  diff.identical = false;
  return diff;
}

std::optional<LogDifference> pooled_log_difference(const std::vector<Weighted>& before, const std::vector<Weighted>& after) {
  if (before.empty() || after.empty()) return std::nullopt;
  auto sorted = [](std::vector<Weighted> v) {
    std::ranges::sort(v);
    return v;
  };
  auto valid = [](const Weighted& x) { return x.value > 0 && std::isfinite(x.value) && x.weight > 0 && std::isfinite(x.weight); };
  // The same samples on both sides differ by exactly 0, however few (DESIGN.md: identical samples
  // compare as 0 with interval [0, 0], whatever their number).
  if (std::ranges::all_of(before, valid) && sorted(before) == sorted(after)) return LogDifference{};
  if (before.size() < 2 || after.size() < 2) return std::nullopt;
  // `dof`: the variance's degrees of freedom, from the runs' effective number (Σw)² / Σw², which
  // is n for equal weights and fewer where a few runs carry most of the weight.
  struct Side {
    double log_mean = 0, var = 0, dof = 0;
  };
  auto side = [&valid](const std::vector<Weighted>& v) -> std::optional<Side> {
    double sw = 0, swx = 0, sww = 0, swww = 0;
    for (const auto& x : v) {
      if (!valid(x)) return std::nullopt;
      const double w = x.weight;
      sw += w, swx += w * x.value, sww += w * w, swww += w * w * w;
    }
    const double m = swx / sw;
    double ss = 0;
    for (const auto& x : v) ss += x.weight * x.weight * (x.value - m) * (x.value - m);
    // E[Σ w²(x − x̄)²] = σ²(Σw² − 2Σw³/Σw + (Σw²)²/(Σw)²) for runs of one spread σ, and Var(x̄) =
    // σ²Σw²/(Σw)²: the unbiased estimate (n/(n − 1) · Σ(x − x̄)²/n² for equal weights).
    const double expected = sww - 2 * swww / sw + sww * sww / (sw * sw);
    if (!(expected > 0)) return std::nullopt;
    return Side{std::log(m), ss / expected * sww / (sw * sw) / (m * m), std::max(1.0, sw * sw / sww - 1)};
  };
  const auto a = side(before), b = side(after);
  if (!a || !b) return std::nullopt;
  LogDifference diff;
  diff.d = b->log_mean - a->log_mean;
  diff.var = a->var + b->var;
  diff.dof_denominator = a->var * a->var / a->dof + b->var * b->var / b->dof;
  diff.identical = false;
  return diff;
}

ChangeEstimate change_from_log_difference(const LogDifference& diff, const ChangeOptions& options) {
  ChangeEstimate c;
  if (diff.identical) {
    c.rel_change = c.ci_low = c.ci_high = 0.0;
    c.method = "identical";
    return c;
  }
  const double half = student_t_critical_fractional(options.confidence, diff.dof()) * std::sqrt(diff.var);
  c.rel_change = std::expm1(diff.d);
  c.ci_low = std::expm1(diff.d - half);
  c.ci_high = std::expm1(diff.d + half);
  c.method = "welch-log";
  return c;
}

double skewness(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 3) return 0;
  const double m = mean_of(v);
  double m2 = 0, m3 = 0;
  for (double x : v) {
    m2 += (x - m) * (x - m);
    m3 += (x - m) * (x - m) * (x - m);
  }
  m2 /= static_cast<double>(n);
  m3 /= static_cast<double>(n);
  if (m2 <= 0) return 0;
  const double g1 = m3 / std::pow(m2, 1.5);
  const double nn = static_cast<double>(n);
  return g1 * std::sqrt(nn * (nn - 1)) / (nn - 2);
}

ChangeEstimate estimate_change(const std::vector<double>& before, const std::vector<double>& after,
                               const ChangeOptions& options) {
  ChangeEstimate c;
  c.n_before = before.size();
  c.n_after = after.size();
  if (before.empty() || after.empty()) return c;
  const double ma = mean_of(before), mb = mean_of(after);
  c.before = ma;
  c.after = mb;
  if (ma != 0) c.rel_change = mb / ma - 1;
  if (same_values(before, after)) {
    c.rel_change = c.ci_low = c.ci_high = 0.0;
    c.method = "identical";
    return c;
  }
  if (before.size() < 2 || after.size() < 2) return c;

  if (auto diff = log_difference(before, after)) {
    const double na = static_cast<double>(before.size()), nb = static_cast<double>(after.size());
    c.log_sd = std::sqrt(diff->var / (1 / na + 1 / nb));
    const bool skewed = std::fabs(skewness(before)) > options.skew_limit || std::fabs(skewness(after)) > options.skew_limit;
    if (!skewed || before.size() < options.bootstrap_min_repeats || after.size() < options.bootstrap_min_repeats) {
      // The interval of the logs' difference, centred on the ratio of the means the change column
      // sits beside (with a few percent of spread the two centres differ by a fraction of it).
      auto w = change_from_log_difference(*diff, options);
      const double half = std::log1p(*w.ci_high) - diff->d;
      const double centre = std::log(mb / ma);
      c.ci_low = std::expm1(centre - half);
      c.ci_high = std::expm1(centre + half);
      c.method = w.method;
      return c;
    }
    // Skewed with enough repeats: the percentile bootstrap of the ratio of means.
    std::mt19937_64 rng(options.seed);
    std::uniform_int_distribution<std::size_t> pick_a(0, before.size() - 1), pick_b(0, after.size() - 1);
    std::vector<double> ratios;
    ratios.reserve(static_cast<std::size_t>(options.bootstrap_replicates));
    for (int r = 0; r < options.bootstrap_replicates; ++r) {
      double sa = 0, sb = 0;
      for (std::size_t i = 0; i < before.size(); ++i) sa += before[pick_a(rng)];
      for (std::size_t i = 0; i < after.size(); ++i) sb += after[pick_b(rng)];
      ratios.push_back((sb / nb) / (sa / na) - 1);
    }
    std::sort(ratios.begin(), ratios.end());
    const double tail = (1 - options.confidence) / 2;
    auto at = [&](double q) {
      const double pos = q * static_cast<double>(ratios.size() - 1);
      const auto lo = static_cast<std::size_t>(std::floor(pos));
      const auto hi = std::min(lo + 1, ratios.size() - 1);
      return ratios[lo] + (pos - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
    };
    c.ci_low = at(tail);
    c.ci_high = at(1 - tail);
    c.method = "bootstrap";
    return c;
  }
  // Values that are not all positive (a share that can be 0): Welch's t on the difference of the
  // means, relative to the mean before.
  if (!(ma > 0)) return c;
  const double na = static_cast<double>(before.size()), nb = static_cast<double>(after.size());
  const double va = variance(before) / na, vb = variance(after) / nb;
  const double den = va * va / (na - 1) + vb * vb / (nb - 1);
  const double dof = den > 0 ? (va + vb) * (va + vb) / den : 1e6;
  const double half = student_t_critical_fractional(options.confidence, dof) * std::sqrt(va + vb);
  c.ci_low = (mb - ma - half) / ma;
  c.ci_high = (mb - ma + half) / ma;
  c.log_sd = std::sqrt((va + vb) / (1 / na + 1 / nb)) / ma;  // relative spread, as the logs' would be
  c.method = "welch-delta";
  return c;
}

Verdict judge(const ChangeEstimate& c, Better better, double threshold) {
  if (!c.rel_change || !c.ci_low || !c.ci_high) return Verdict::inconclusive;
  if (*c.ci_low >= -threshold && *c.ci_high <= threshold) return Verdict::unchanged;
  // Worse is up for a time, down for a throughput.
  const double sign = better == Better::lower ? 1 : -1;
  const double est = sign * *c.rel_change;
  const double lo = std::min(sign * *c.ci_low, sign * *c.ci_high), hi = std::max(sign * *c.ci_low, sign * *c.ci_high);
  if (lo > 0 && est > threshold) return Verdict::regressed;
  if (hi < 0 && est < -threshold) return Verdict::improved;
  return Verdict::inconclusive;
}

std::size_t repeats_to_decide(const ChangeEstimate& c, double threshold, double confidence) {
  if (!c.rel_change || !c.log_sd || !(*c.log_sd > 0) || *c.rel_change <= -1) return 0;
  const double d = std::fabs(std::log1p(*c.rel_change));
  const double limit = std::log1p(threshold);
  // To show "unchanged" the interval must shrink inside ±threshold; to show a change beyond the
  // threshold it must exclude 0.
  const double margin = d < limit ? limit - d : d;
  if (margin < 0.02 * limit) return SIZE_MAX;
  const double s = *c.log_sd;
  for (std::size_t n = 2; n <= 10000; n = n < 64 ? n + 1 : n + n / 8) {
    const double half = student_t_critical(confidence, 2 * n - 2) * s * std::sqrt(2.0 / static_cast<double>(n));
    if (half < margin) return n;
  }
  return SIZE_MAX;
}

}  // namespace scalelens
