#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace scalelens {

namespace {
// Continued fraction for the incomplete beta function (modified Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}
}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double ln_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(ln_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_critical(double confidence, std::size_t dof) {
  return student_t_critical_fractional(confidence, static_cast<double>(dof));
}

double student_t_critical_fractional(double confidence, double nu) {
  if (!(nu > 0)) return std::numeric_limits<double>::quiet_NaN();
  // Two-sided tail probability of |T| > t is I_{nu/(nu+t^2)}(nu/2, 1/2); find t by bisection.
  const double tail = 1 - confidence;
  double lo = 0, hi = 1e4;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    double p = incomplete_beta(nu / 2, 0.5, nu / (nu + mid * mid));
    (p > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double mean_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::optional<Stat> describe(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  Stat s;
  s.n = values.size();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.n);
  std::sort(values.begin(), values.end());
  s.median = s.n % 2 ? values[s.n / 2] : 0.5 * (values[s.n / 2 - 1] + values[s.n / 2]);
  if (s.n < 2) {
    s.ci95_low = s.ci95_high = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  if (values.front() == values.back() ||
      values.back() - values.front() <= kRoundingSpread * std::max(std::fabs(values.front()), std::fabs(values.back()))) {
    // Equal values, or values that differ only by the rounding of the arithmetic that made them
    // (a sum in another order): the spread would be ~1e-16, which the table then printed as
    // "1.8 ± 3.11e-15". No spread, and the mean taken from the smallest so that it lies between.
    double above = 0;
    for (double v : values) above += v - values.front();
    s.mean = values.front() + above / static_cast<double>(s.n);
    s.std = 0;
    s.ci95_low = s.ci95_high = s.mean;
    return s;
  }
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(ss / static_cast<double>(s.n - 1));
  double half = student_t_critical(0.95, s.n - 1) * s.std / std::sqrt(static_cast<double>(s.n));
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  return s;
}

namespace {
// The mean over `histograms` of each one's shares of its own whole; `dense` gives one's bins.
template <class H, class Dense>
std::optional<UtilHistogram> mean_of_shares_of(const std::vector<const H*>& histograms, Dense dense) {
  std::array<double, kUtilBins> sum{};
  std::size_t counted = 0;
  for (const H* each : histograms) {
    const UtilHistogram& h = dense(*each);
    double total = 0;
    for (float w : h) total += w;
    if (!(total > 0)) continue;
    for (std::size_t v = 0; v < kUtilBins; ++v) sum[v] += h[v] / total;
    ++counted;
  }
  if (!counted) return std::nullopt;
  UtilHistogram out{};
  for (std::size_t v = 0; v < kUtilBins; ++v) out[v] = static_cast<float>(sum[v] / static_cast<double>(counted));
  return out;
}
}  // namespace

std::optional<UtilHistogram> mean_of_shares(const std::vector<const UtilHistogram*>& histograms) {
  return mean_of_shares_of(histograms, [](const UtilHistogram& h) -> const UtilHistogram& { return h; });
}

std::optional<UtilHistogram> mean_of_shares(const std::vector<const SparseUtilHistogram*>& histograms) {
  UtilHistogram one;  // one at a time: a configuration of many runs is not made dense all at once
  return mean_of_shares_of(histograms, [&](const SparseUtilHistogram& h) -> const UtilHistogram& { return one = h.dense(); });
}

UtilHistogram util_shares(const PackedUtilHistogram& packed) {
  UtilHistogram out{};
  for (std::size_t v = 0; v < kUtilBins; ++v)
    out[v] = static_cast<float>((packed[v] - (v ? packed[v - 1] : 0)) / kPackedShareUnit);
  return out;
}

std::optional<Percentiles> percentiles_of(const UtilHistogram& weights) {
  double total = 0;  // sums in double, of float weights
  for (float w : weights) total += w;
  if (!(total > 0)) return std::nullopt;
  auto at = [&](double q) {
    const double reach = q * total - 1e-5 * total;
    double below = 0;
    for (std::size_t v = 0; v < kUtilBins; ++v)
      if ((below += weights[v]) >= reach && weights[v] > 0) return static_cast<double>(v);
    return static_cast<double>(kUtilBins - 1);
  };
  return Percentiles{at(0.10), at(0.50), at(0.90)};
}

}  // namespace scalelens
