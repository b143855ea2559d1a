#include "analysis/scaling_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "analysis/self_check_text.hpp"
#include "analysis/stats.hpp"
#include "common/text.hpp"

namespace scalelens {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct TermShape {
  double p_exp;
  int log_exp;
  bool operator==(const TermShape& o) const { return p_exp == o.p_exp && log_exp == o.log_exp; }
};

// Extra-P's normal form with one or two terms besides the constant: p^i·log2(p)^j, i from a small
// set of rationals, j in {0, 1, 2}. (p−1)/p, the ring all-reduce term, is 1 − 1/p: the constant
// and the 1/p term already span it.
struct Candidate {
  std::vector<TermShape> terms;  // without the constant
};

const std::vector<Candidate>& candidates() {
  static const std::vector<Candidate> all = [] {
    const double exps[] = {-1, -0.5, 0, 0.25, 1.0 / 3, 0.5, 2.0 / 3, 1, 1.5, 2};
    std::vector<TermShape> shapes;
    for (double i : exps)
      for (int j = 0; j <= 2; ++j)
        if (i != 0 || j != 0) shapes.push_back({i, j});
    std::vector<Candidate> out;
    out.push_back({});  // constant
    for (const auto& s : shapes) out.push_back({{s}});
    for (std::size_t a = 0; a < shapes.size(); ++a)
      for (std::size_t b = a + 1; b < shapes.size(); ++b) out.push_back({{shapes[a], shapes[b]}});
    return out;
  }();
  return all;
}

double basis(const TermShape& t, double p) {
  const double l = std::log2(p);
  return std::pow(p, t.p_exp) * (t.log_exp == 0 ? 1.0 : t.log_exp == 1 ? l : l * l);
}

std::string law_of(const Candidate& c) {
  const TermShape inv{-1, 0}, log{0, 1}, lin{1, 0};
  auto has = [&](const TermShape& t) { return std::find(c.terms.begin(), c.terms.end(), t) != c.terms.end(); };
  if (c.terms.empty()) return "constant";
  if (c.terms.size() == 1 && has(inv)) return "Amdahl";
  if (c.terms.size() == 2 && has(inv) && has(log)) return "Amdahl + log2 p";
  if (c.terms.size() == 2 && has(inv) && has(lin)) return "USL";
  return {};
}

// Least squares on relative errors (rows weighted by 1/y: the noise of times is multiplicative),
// leaving out row `skip` (−1: none). False when the design is rank-deficient.
bool fit_coefs(const Candidate& c, const std::vector<double>& p, const std::vector<double>& y, int skip, VectorXd& coef) {
  const int n = static_cast<int>(p.size()) - (skip >= 0 ? 1 : 0);
  const int k = static_cast<int>(c.terms.size()) + 1;
  if (n < k) return false;
  MatrixXd a(n, k);
  VectorXd b(n);
  int row = 0;
  for (int i = 0; i < static_cast<int>(p.size()); ++i) {
    if (i == skip) continue;
    a(row, 0) = 1 / y[i];
    for (int t = 0; t < k - 1; ++t) a(row, t + 1) = basis(c.terms[t], p[i]) / y[i];
    b(row) = 1;
    ++row;
  }
  auto qr = a.colPivHouseholderQr();
  if (qr.rank() < k) return false;
  coef = qr.solve(b);
  return coef.allFinite();
}

double evaluate(const Candidate& c, const VectorXd& coef, double p) {
  double v = coef(0);
  for (std::size_t t = 0; t < c.terms.size(); ++t) v += coef(static_cast<int>(t) + 1) * basis(c.terms[t], p);
  return v;
}

struct Scored {
  std::size_t candidate = 0;
  double loo = std::numeric_limits<double>::infinity();
  double aicc = std::numeric_limits<double>::infinity();
  VectorXd coef;
};

// Every candidate with fewer parameters than points: its full fit (positive at every measured p
// and up to kMaxExtrapolation × the largest) and its leave-one-out relative error. Weak scaling
// whose measured time rises (the largest p's above the smallest's): a candidate must not fall
// beyond the data either, for each added GPU adds its share of work and its communication: two
// forms that fit the points alike tied, and the one falling below the measured times won.
std::vector<Scored> score(const std::vector<std::size_t>& subset, const std::vector<double>& p, const std::vector<double>& y,
                          bool weak) {
  const auto& all = candidates();
  const int n = static_cast<int>(p.size());
  const bool must_not_fall = weak && y.back() > y.front();
  std::vector<Scored> out;
  for (auto ci : subset) {
    const auto& c = all[ci];
    const int k = static_cast<int>(c.terms.size()) + 1;
    if (k > n - 1) continue;  // never more parameters than points allow (one left out still fits)
    Scored s;
    s.candidate = ci;
    if (!fit_coefs(c, p, y, -1, s.coef)) continue;
    double rss = 0;
    bool positive = true;
    for (int i = 0; i < n; ++i) {
      const double f = evaluate(c, s.coef, p[i]);
      positive = positive && f > 0;
      rss += std::pow((f - y[i]) / y[i], 2);
    }
    // A time must stay positive as far as the model may be asked to predict.
    for (double q = p.back(); q <= p.back() * kMaxExtrapolation && positive; q *= 2) positive = evaluate(c, s.coef, q) > 0;
    if (!positive) continue;
    bool rising = true;
    for (double q = p.back(); must_not_fall && q < p.back() * kMaxExtrapolation && rising; q *= 2)
      rising = evaluate(c, s.coef, 2 * q) >= evaluate(c, s.coef, q);
    if (!rising) continue;
    double loo = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) {
      VectorXd coef;
      if (!fit_coefs(c, p, y, i, coef)) {
        ok = false;
        break;
      }
      const double f = evaluate(c, coef, p[i]);
      if (!(f > 0)) ok = false;
      loo += std::fabs(f - y[i]) / y[i];
    }
    if (!ok) continue;
    s.loo = loo / n;
    const double fit_term = n * std::log(std::max(rss / n, 1e-300));
    s.aicc = fit_term + 2.0 * k + (n - k - 1 > 0 ? 2.0 * k * (k + 1) / (n - k - 1) : 0.0);
    out.push_back(std::move(s));
  }
  return out;
}

// The choice: the candidates whose leave-one-out error is within twice the best (+1 point) are
// tied; among them a named law first (an interpretable law wins unless another form predicts
// left-out points clearly better; strong scaling only: Amdahl and USL describe a fixed problem
// split p ways), then the fewest parameters, then the lowest AICc, then the lowest error.
// Returns the index into `scored`, or −1.
int pick(const std::vector<Scored>& scored, bool prefer_laws) {
  if (scored.empty()) return -1;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& s : scored) best = std::min(best, s.loo);
  const double tied = best * 2 + 0.01;
  const auto& all = candidates();
  int chosen = -1;
  auto key = [&](const Scored& s) {
    const auto& c = all[s.candidate];
    return std::make_tuple(prefer_laws && law_of(c).empty() ? 1 : 0, c.terms.size(), s.aicc, s.loo);
  };
  for (int i = 0; i < static_cast<int>(scored.size()); ++i) {
    if (scored[i].loo > tied) continue;
    if (chosen < 0 || key(scored[i]) < key(scored[chosen])) chosen = i;
  }
  return chosen;
}

ScalingFit to_fit(const Scored& s, const std::vector<double>& p, const std::vector<double>& y) {
  const auto& c = candidates()[s.candidate];
  ScalingFit f;
  f.terms.push_back({s.coef(0), 0, 0});
  for (std::size_t t = 0; t < c.terms.size(); ++t) f.terms.push_back({s.coef(static_cast<int>(t) + 1), c.terms[t].p_exp, c.terms[t].log_exp});
  f.law = law_of(c);
  f.loo_rel_error = s.loo;
  f.n_points = static_cast<int>(p.size());
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  double rss = 0, tss = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    rss += std::pow(y[i] - f(p[i]), 2);
    tss += std::pow(y[i] - mean, 2);
  }
  const int n = static_cast<int>(p.size()), k = static_cast<int>(f.terms.size());
  if (tss > 0 && n > k) f.adj_r2 = 1 - (rss / tss) * (n - 1) / (n - k);
  const double c0 = f.terms[0].coef;
  if (f.law == "Amdahl" || f.law == "Amdahl + log2 p") {
    const double c1 = f.terms[1].coef;
    // A share of the time only where both parts are times: a fit with c0 < 0 (the log term taking
    // the rise) made a serial fraction of −75%.
    if (c0 >= 0 && c1 >= 0 && c0 + c1 > 0) f.params["serial_fraction"] = c0 / (c0 + c1);
    if (f.law == "Amdahl + log2 p") f.params["comm_s_per_log2p"] = f.terms[2].coef;
  } else if (f.law == "USL") {
    // T(p) = a·(1 + σ(p−1) + κp(p−1))/p for the throughput law X(p) = λp / (1 + σ(p−1) + κp(p−1)):
    // c0 = a(σ − κ), c1 = a(1 − σ), c2 = aκ, so a = T(1) = c0 + c1 + c2.
    double c1 = 0, c2 = 0;
    for (const auto& t : f.terms) {
      if (t.p_exp == -1) c1 = t.coef;
      if (t.p_exp == 1) c2 = t.coef;
    }
    const double a = c0 + c1 + c2;
    if (a > 0) {
      f.params["sigma"] = (c0 + c2) / a;
      f.params["kappa"] = c2 / a;
      if (c2 > 0 && c1 > 0) f.params["peak_p"] = std::sqrt(c1 / c2);  // = √((1 − σ)/κ)
    }
  }
  return f;
}

std::vector<std::size_t> all_indices() {
  std::vector<std::size_t> v(candidates().size());
  std::iota(v.begin(), v.end(), 0);
  return v;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

// The lack-of-fit F test on relative errors: do the configuration means miss the fit by more
// than their repeats vary (5% level)? Mean squares of r_i·(mean_i − fit_i)²/fit_i² over n − k
// degrees of freedom against the runs' squared relative deviations from their mean over Σ(r_i − 1).
// Identical repeats with a miss: yes. No repeats anywhere: nothing to judge by, no.
bool lack_of_fit(const std::vector<ScalingPoint>& points, const std::vector<double>& rel_resid, int k) {
  double ss_miss = 0, ss_repeats = 0, dof_repeats = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& t = points[i].times;
    const double mean = mean_of(t);
    ss_miss += static_cast<double>(t.size()) * rel_resid[i] * rel_resid[i];
    for (double v : t) ss_repeats += std::pow((v - mean) / mean, 2);
    dof_repeats += static_cast<double>(t.size() - 1);
  }
  const double dof_miss = static_cast<double>(points.size()) - k;
  if (dof_repeats < 1 || dof_miss < 1 || !(ss_miss > 0)) return false;
  if (!(ss_repeats > 0)) return true;
  const double f = (ss_miss / dof_miss) / (ss_repeats / dof_repeats);
  // P(F ≥ f) for F(dof_miss, dof_repeats) = I_x(dof_repeats/2, dof_miss/2), x = d2/(d2 + d1·f).
  return incomplete_beta(dof_repeats / 2, dof_miss / 2, dof_repeats / (dof_repeats + dof_miss * f)) < 0.05;
}

struct Intervals {
  std::vector<double> lower, upper;
  bool ok = false;
};

// The bootstrap over repeats (runs resampled within each GPU count; a count with one run gets a
// resampled relative residual of the fit), with the choice among the 10 best candidates redone
// in every replicate. Each interval is the replicates' percentile interval around the fit,
// widened for what resampling few repeats understates: × √(r/(r−1)) (the resampled mean's
// variance is (r−1)/r of the mean's) and × t(df)/z (Student's t over the normal quantile the
// percentiles stand for, df the fewer of the repeats' pooled degrees of freedom and the curve's
// points − parameters).
// Where the means miss the fit by more than their repeats vary (lack of fit), the repeats say
// nothing of the miss (identical repeats gave intervals of zero width); a second bootstrap then
// moves each mean by a resampled leave-one-out relative error of the chosen form (its own
// out-of-sample miss) and adds one more to the prediction (a measurement there misses as the
// measured ones do), widened × t(n − k)/z; the interval holds both.
Intervals bootstrap(const std::vector<ScalingPoint>& points, const std::vector<double>& p, const std::vector<double>& y,
                    const std::vector<Scored>& scored, int chosen, const std::vector<double>& targets, int replicates,
                    double confidence, std::uint64_t seed, bool weak) {
  Intervals out;
  const auto& all = candidates();
  const auto& best = scored[static_cast<std::size_t>(chosen)];
  std::vector<std::size_t> order(scored.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return scored[a].loo < scored[b].loo; });
  std::vector<std::size_t> top;
  for (std::size_t i = 0; i < order.size() && top.size() < 10; ++i) top.push_back(scored[order[i]].candidate);
  if (std::find(top.begin(), top.end(), best.candidate) == top.end()) top.push_back(best.candidate);

  const auto& model = all[best.candidate];
  std::vector<double> rel_resid;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double f = evaluate(model, best.coef, p[i]);
    rel_resid.push_back((y[i] - f) / f);
  }
  const double k = static_cast<double>(model.terms.size() + 1), n = static_cast<double>(p.size());
  const double resid_scale = n > k ? std::sqrt(n / (n - k)) : 1.0;
  const bool misfit = lack_of_fit(points, rel_resid, static_cast<int>(k));
  std::vector<double> loo_resid;
  for (std::size_t i = 0; misfit && i < p.size(); ++i) {
    VectorXd coef;
    if (!fit_coefs(model, p, y, static_cast<int>(i), coef)) break;  // scored: never, its leave-one-out fits all exist
    const double f = evaluate(model, coef, p[i]);
    loo_resid.push_back((y[i] - f) / f);
  }
  const bool from_fit = misfit && loo_resid.size() == p.size();

  std::mt19937_64 rng(seed);
  // The miss added to each target's prediction draws from a stream of its own, seeded by the
  // target: drawn from `rng`, the draws (and every later replicate's resampling) shifted with the
  // other targets asked for, and one GPU count got as many intervals as lists it was in.
  std::vector<std::mt19937_64> target_rng;
  for (double q : targets) {
    std::seed_seq from{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                       static_cast<std::uint32_t>(std::llround(q))};
    target_rng.emplace_back(from);
  }
  std::vector<std::vector<double>> preds(targets.size()), fit_preds(targets.size());
  std::vector<double> yb(p.size());
  std::uniform_int_distribution<std::size_t> pick_loo(0, p.size() - 1);
  for (int b = 0; b < replicates; ++b) {
    if (from_fit) {
      for (std::size_t i = 0; i < p.size(); ++i)
        yb[i] = std::max(evaluate(model, best.coef, p[i]) * (1 + loo_resid[pick_loo(rng)]), 1e-12);
      const auto s = score(top, p, yb, weak);
      if (const int c = pick(s, !weak); c >= 0) {
        const auto& refit = s[static_cast<std::size_t>(c)];
        for (std::size_t t = 0; t < targets.size(); ++t)
          fit_preds[t].push_back(evaluate(all[refit.candidate], refit.coef, targets[t]) * (1 + loo_resid[pick_loo(target_rng[t])]));
      }
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto& t = points[i].times;
      if (t.size() >= 2) {
        std::uniform_int_distribution<std::size_t> pick_run(0, t.size() - 1);
        double s = 0;
        for (std::size_t r = 0; r < t.size(); ++r) s += t[pick_run(rng)];
        yb[i] = s / static_cast<double>(t.size());
      } else {
        std::uniform_int_distribution<std::size_t> pick_resid(0, rel_resid.size() - 1);
        const double f = evaluate(model, best.coef, p[i]);
        yb[i] = std::max(f * (1 + rel_resid[pick_resid(rng)] * resid_scale), 1e-12);
      }
    }
    const auto s = score(top, p, yb, weak);
    const int c = pick(s, !weak);
    if (c < 0) continue;
    for (std::size_t t = 0; t < targets.size(); ++t) preds[t].push_back(evaluate(all[s[static_cast<std::size_t>(c)].candidate], s[static_cast<std::size_t>(c)].coef, targets[t]));
  }
  const auto enough = static_cast<std::size_t>(replicates) / 2;
  if (preds.empty() || preds[0].size() < enough || (from_fit && fit_preds[0].size() < enough)) return out;

  // The small-sample widening.
  double harmonic = 0, dof = 0;
  std::size_t with_repeats = 0;
  for (const auto& pt : points)
    if (pt.times.size() >= 2) {
      harmonic += 1.0 / static_cast<double>(pt.times.size());
      dof += static_cast<double>(pt.times.size() - 1);
      ++with_repeats;
    }
  double widen = 1;
  if (with_repeats > 0) {
    const double r = static_cast<double>(with_repeats) / harmonic;
    widen = std::sqrt(r / (r - 1));
    // The curve's own degrees of freedom (points − parameters) bound those of the repeats.
    dof = std::min(dof, n - k);
    const double z = student_t_critical(confidence, 100000);
    widen *= student_t_critical(confidence, static_cast<std::size_t>(std::max(1.0, dof))) / z;
  }
  const double alpha = 1 - confidence;
  const double fit_widen = student_t_critical(confidence, static_cast<std::size_t>(n - k)) / student_t_critical(confidence, 100000);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const double f = evaluate(model, best.coef, targets[t]);
    double lower = f - std::max(0.0, f - quantile(preds[t], alpha / 2)) * widen;
    double upper = f + std::max(0.0, quantile(preds[t], 1 - alpha / 2) - f) * widen;
    if (from_fit) {
      lower = std::min(lower, f - std::max(0.0, f - quantile(fit_preds[t], alpha / 2)) * fit_widen);
      upper = std::max(upper, f + std::max(0.0, quantile(fit_preds[t], 1 - alpha / 2) - f) * fit_widen);
    }
    out.lower.push_back(std::max(0.0, lower));
    out.upper.push_back(upper);
  }
  out.ok = true;
  return out;
}

struct Prepared {
  std::vector<ScalingPoint> points;
  std::vector<double> p, y;
};

Prepared prepare(std::vector<ScalingPoint> points) {
  Prepared out;
  std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.p < b.p; });
  for (auto& pt : points) {
    std::erase_if(pt.times, [](double t) { return !(t > 0) || !std::isfinite(t); });
    if (pt.p <= 0 || pt.times.empty()) continue;
    out.p.push_back(pt.p);
    out.y.push_back(mean_of(pt.times));
    out.points.push_back(std::move(pt));
  }
  return out;
}

}  // namespace

double ScalingFit::operator()(double p) const {
  double v = 0;
  for (const auto& t : terms) v += t.coef * basis({t.p_exp, t.log_exp}, p);
  return v;
}

std::string ScalingFit::formula(const std::string& unit) const {
  auto exp_text = [](double e) {
    const double a = std::fabs(e);
    if (a == 0.5) return std::string("^(1/2)");
    if (std::fabs(a - 1.0 / 3) < 1e-12) return std::string("^(1/3)");
    if (std::fabs(a - 2.0 / 3) < 1e-12) return std::string("^(2/3)");
    if (a == 0.25) return std::string("^(1/4)");
    if (a == 1.5) return std::string("^(3/2)");
    if (a == 1) return std::string();
    return fmt::format("^{:g}", a);
  };
  std::string out = "T(p) =";
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    std::string text = fmt::format("{:.3g} {}", std::fabs(t.coef), unit);
    if (t.p_exp < 0) text += "/p" + exp_text(t.p_exp);
    else if (t.p_exp > 0) text += "·p" + exp_text(t.p_exp);
    if (t.log_exp == 1) text += "·log2 p";
    if (t.log_exp == 2) text += "·log2² p";
    out += i == 0 ? (t.coef < 0 ? " −" : " ") + text : (t.coef < 0 ? " − " : " + ") + text;
  }
  return out;
}

std::optional<ScalingFit> choose_scaling_fit(const std::vector<int>& p_in, const std::vector<double>& y, bool weak) {
  const std::vector<double> p(p_in.begin(), p_in.end());
  if (p.size() < 3 || y.size() != p.size()) return std::nullopt;
  const auto scored = score(all_indices(), p, y, weak);
  const int c = pick(scored, !weak);
  if (c < 0) return std::nullopt;
  return to_fit(scored[static_cast<std::size_t>(c)], p, y);
}

std::string prediction_text(const ScalingBacktest& b) { return fmt::format("{:.3g} s [{:.3g}, {:.3g}]", b.predicted, b.lower, b.upper); }

std::string fitted_without(int p, const std::string& unit) { return "fitted without " + count_of(p, unit); }

std::string ScalingModel::self_check_failure() const {
  if (backtest && !backtest->inside())
    return fmt::format("{} predicts {}, but {:.3g} s was measured ({:+.0f}%)", fitted_without(backtest->p, unit),
                       prediction_text(*backtest), backtest->measured, 100 * (backtest->predicted / backtest->measured - 1));
  if (!backtest_refused.empty()) return "could not check itself (" + backtest_refused + ")";
  return "";
}

ScalingModel fit_scaling_model(std::vector<ScalingPoint> points_in, const ScalingOptions& options) {
  ScalingModel m;
  m.unit = options.unit;
  auto prep = prepare(std::move(points_in));
  const auto& p = prep.p;
  const auto& y = prep.y;
  if (p.size() < 3) {
    m.refused = fmt::format("{} measured {} count{}; a model needs at least 3", p.size(), one_unit(options.unit),
                            p.size() == 1 ? "" : "s");
    return m;
  }
  const auto scored = score(all_indices(), p, y, options.weak);
  const int chosen = pick(scored, !options.weak);
  if (chosen < 0) {
    m.refused = "no candidate model fits the measured times with positive values";
    return m;
  }
  m.fit = to_fit(scored[static_cast<std::size_t>(chosen)], p, y);
  const int largest = static_cast<int>(p.back());

  // Self-check: refit without the largest p and predict it. With 3 counts the refit would have 2
  // points, too few for any model (a 2-point fit of a 2-parameter law passes through them and checks
  // nothing): the check could not be made, which leaves the predictions out of the recommendation.
  if (options.backtest && p.size() < 4) {
    m.backtest_refused = fmt::format("fitted without {}, the {} {} counts left are too few for a model, which needs at least 3",
                                     count_of(largest, options.unit), p.size() - 1, one_unit(options.unit));
  } else if (options.backtest) {
    std::vector<ScalingPoint> fewer(prep.points.begin(), prep.points.end() - 1);
    ScalingOptions o = options;
    o.predict = {largest};
    o.backtest = false;
    o.suggest = false;
    o.replicates = std::max(200, options.replicates / 2);
    const auto inner = fit_scaling_model(fewer, o);
    if (inner.fit && !inner.predictions.empty()) {
      const auto& pr = inner.predictions.front();
      m.backtest = ScalingBacktest{largest, pr.time, pr.lower, pr.upper, y.back()};
    } else {  // said, as a prediction's refusal is: a missing self-check looked like none was tried
      m.backtest_refused = fmt::format("{}, {}", fitted_without(largest, options.unit),
                                       !inner.refused.empty() ? inner.refused
                                       : !inner.refused_targets.empty() ? inner.refused_targets.front()
                                                                        : std::string("no model predicts it"));
    }
  }

  if (m.fit->loo_rel_error > kMaxLooRelError) {
    m.refused = fmt::format("its leave-one-out error is {:.0f}%, above the {:.0f}% a prediction needs", 100 * m.fit->loo_rel_error,
                            100 * kMaxLooRelError);
    return m;
  }
  std::vector<int> targets = options.predict;
  if (targets.empty()) targets = {2 * largest, 4 * largest};
  std::vector<double> kept;
  for (int t : targets) {
    if (t <= 0) continue;
    if (t > kMaxExtrapolation * largest) {
      m.refused_targets.push_back(fmt::format("{}: beyond {}× the largest measured ({})", t, kMaxExtrapolation, largest));
      continue;
    }
    kept.push_back(t);
  }
  if (kept.empty()) {
    m.refused = m.refused_targets.empty() ? fmt::format("no {} count to predict", one_unit(options.unit))
                                          : fmt::format("every {} count asked for is beyond {}× the largest measured",
                                                        one_unit(options.unit), kMaxExtrapolation);
    return m;
  }
  // One bootstrap, one interval per GPU count, for the band and the targets (among its counts).
  std::set<double> band_at(p.begin(), p.end());
  const double farthest = *std::max_element(kept.begin(), kept.end());
  for (double q = p.front(); q <= farthest; q *= 2) band_at.insert(q);
  band_at.insert(kept.begin(), kept.end());
  const std::vector<double> at(band_at.begin(), band_at.end());
  const auto iv = bootstrap(prep.points, p, y, scored, chosen, at, options.replicates, options.confidence, options.seed, options.weak);
  if (!iv.ok) {
    m.refused = "the bootstrap could not refit the model in most replicates";
    return m;
  }
  // An interval that reaches 0 s rules out no time at all from below (and bounds no throughput
  // from above): such a prediction is refused with that reason, not printed as "74.7 s [0, 1.79e+03]".
  for (const double q : kept) {
    const auto t = static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), q) - at.begin());
    if (iv.lower[t] > 0) m.predictions.push_back({static_cast<int>(at[t]), (*m.fit)(at[t]), iv.lower[t], iv.upper[t]});
    else
      m.refused_targets.push_back(fmt::format("{}: its {:.0f}% interval reaches 0 s ({:.3g} s at most): the model cannot bound the time from below there",
                                              static_cast<int>(at[t]), 100 * options.confidence, iv.upper[t]));
  }
  if (m.predictions.empty()) {
    m.refused = fmt::format("the {:.0f}% interval of every {} count left to predict reaches 0 s", 100 * options.confidence,
                            one_unit(options.unit));
    return m;
  }
  const auto& farthest_predicted =
      *std::max_element(m.predictions.begin(), m.predictions.end(), [](const auto& a, const auto& b) { return a.p < b.p; });
  const double target = farthest_predicted.p;
  for (std::size_t t = 0; t < at.size(); ++t)
    if (at[t] <= target && iv.lower[t] > 0) m.band.push_back({static_cast<int>(at[t]), (*m.fit)(at[t]), iv.lower[t], iv.upper[t]});

  // The next measurement: among the powers of two above the largest measured and below the
  // farthest target predicted, the one whose (simulated) measurement on the model narrows the
  // interval at that target most.
  if (options.suggest) {
    const double width_now = farthest_predicted.upper - farthest_predicted.lower;
    double pooled_cv = 0;
    std::size_t cvs = 0, repeats = 0;
    for (const auto& pt : prep.points) {
      repeats = std::max(repeats, pt.times.size());
      if (pt.times.size() < 2) continue;
      const auto s = describe(pt.times);
      pooled_cv += s->cv();
      ++cvs;
    }
    pooled_cv = cvs ? pooled_cv / static_cast<double>(cvs) : 0.02;
    double best_width = width_now;
    // Below the target itself: measuring there would answer the question rather than narrow it.
    for (int q = 1; q < target; q *= 2) {
      if (q <= largest) continue;
      auto more = prep.points;
      const double f = (*m.fit)(q);
      ScalingPoint sim{q, {}};
      // Repeats spread symmetrically by the pooled coefficient of variation.
      const std::size_t r = std::max<std::size_t>(repeats, 2);
      for (std::size_t i = 0; i < r; ++i) sim.times.push_back(f * (1 + pooled_cv * (2.0 * static_cast<double>(i) / static_cast<double>(r - 1) - 1) * std::sqrt(3.0)));
      more.push_back(sim);
      ScalingOptions o = options;
      o.predict = {static_cast<int>(target)};
      o.backtest = o.suggest = false;
      o.replicates = std::max(200, options.replicates / 4);
      const auto with = fit_scaling_model(more, o);
      if (with.predictions.empty()) continue;
      const double w = with.predictions.front().upper - with.predictions.front().lower;
      if (w < best_width) {
        best_width = w;
        m.suggest_next_p = q;
      }
    }
    if (m.suggest_next_p && best_width > 0.95 * width_now) m.suggest_next_p.reset();  // no real gain: no advice
    if (m.suggest_next_p)
      m.suggest_why = fmt::format(
          "measuring at {} would narrow the {:.0f}% interval at {} most (from ±{:.2g} to ±{:.2g}), "
          "judged by refitting with a simulated measurement on the model there",
          count_of(*m.suggest_next_p, options.unit), 100 * options.confidence, count_of(static_cast<int>(target), options.unit), width_now / 2,
          best_width / 2);
  }
  return m;
}

}  // namespace scalelens
