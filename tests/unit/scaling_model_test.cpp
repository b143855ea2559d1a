// Issue 14 §1: the scaling model. Exact laws are recovered, and over many generated studies with
// noise (statistics tested as statistics) the right family wins, its parameters land near the
// truth, and the 90% prediction intervals cover the true time as often as they claim.
#include <gtest/gtest.h>

#include <limits>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "analysis/scaling_model.hpp"

using namespace scalelens;

namespace {

// A study of `law` at `ps`, `repeats` runs each with multiplicative log-normal noise of `cv`.
std::vector<ScalingPoint> study(const std::function<double(double)>& law, const std::vector<int>& ps, int repeats, double cv,
                                std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, cv);
  std::vector<ScalingPoint> out;
  for (int p : ps) {
    ScalingPoint pt{p, {}};
    for (int r = 0; r < repeats; ++r) pt.times.push_back(law(p) * std::exp(noise(rng)));
    out.push_back(pt);
  }
  return out;
}

TEST(ScalingModel, ExactAmdahlIsRecognisedAndPrinted) {
  auto amdahl = [](double p) { return 100 * (0.03 + 0.97 / p); };
  auto m = fit_scaling_model(study(amdahl, {1, 2, 4, 8, 16}, 1, 0, 1), {});
  ASSERT_TRUE(m.fit);
  EXPECT_EQ(m.fit->law, "Amdahl");
  EXPECT_NEAR(m.fit->params.at("serial_fraction"), 0.03, 1e-9);
  EXPECT_NEAR(m.fit->loo_rel_error, 0, 1e-9);
  EXPECT_EQ(m.fit->formula(), "T(p) = 3 s + 97 s/p");
  ASSERT_EQ(m.predictions.size(), 2u);  // 2× and 4× the largest measured
  EXPECT_EQ(m.predictions[0].p, 32);
  EXPECT_NEAR(m.predictions[0].time, amdahl(32), 1e-9);
  ASSERT_TRUE(m.backtest);
  EXPECT_EQ(m.backtest->p, 16);
  EXPECT_NEAR(m.backtest->predicted, amdahl(16), 1e-9);
}

// Exact times leave a zero-width interval; the left-out point, refitted with rounding of order
// 1e-16, must still count as inside it (it read "OUTSIDE the interval" for a constant study).
TEST(ScalingModel, ExactLawsPassTheirOwnSelfCheck) {
  const std::vector<std::pair<const char*, std::function<double(double)>>> laws{
      {"constant", [](double) { return 1.8; }},
      {"Amdahl", [](double p) { return 100 * (0.03 + 0.97 / p); }},
      {"Amdahl, tenths", [](double p) { return 0.1 + 0.7 / p; }}};
  for (const auto& [name, law] : laws)
    for (int repeats : {1, 3, 250}) {
      auto m = fit_scaling_model(study(law, {1, 2, 4, 8}, repeats, 0, 1), {});
      ASSERT_TRUE(m.backtest) << name;
      EXPECT_TRUE(m.backtest->inside()) << name << ", " << repeats << " runs each: measured " << m.backtest->measured
                                        << " against [" << m.backtest->lower << ", " << m.backtest->upper << "]";
    }
  ScalingBacktest off{8, 1.8, 1.8, 1.8, 1.8 * (1 + 1e-6)};  // a real difference is still outside
  EXPECT_FALSE(off.inside());
  // The slack is the bounds' own: a wildly wrong prediction does not widen the interval around it.
  ScalingBacktest wild{8, 1e10, 1.7, 1.9, 1.95};
  EXPECT_FALSE(wild.inside());
  ScalingBacktest infinite{8, std::numeric_limits<double>::infinity(), 1.7, 1.9, 1.95};
  EXPECT_FALSE(infinite.inside());
}

TEST(ScalingModel, RefusesWithTheReason) {
  auto amdahl = [](double p) { return 100 * (0.03 + 0.97 / p); };
  auto two = fit_scaling_model(study(amdahl, {1, 2}, 3, 0.02, 1), {});
  EXPECT_FALSE(two.fit);
  EXPECT_NE(two.refused.find("at least 3"), std::string::npos) << two.refused;
  ScalingOptions far;
  far.predict = {64, 1024};
  auto m = fit_scaling_model(study(amdahl, {1, 2, 4, 8, 16}, 3, 0.02, 1), far);
  ASSERT_EQ(m.predictions.size(), 1u);
  ASSERT_EQ(m.refused_targets.size(), 1u);
  EXPECT_NE(m.refused_targets[0].find("beyond 8×"), std::string::npos);
  // Noise far beyond any law: the leave-one-out error is too large to predict from.
  auto noisy = fit_scaling_model(study(amdahl, {1, 2, 4, 8}, 1, 0.6, 3), {});
  ASSERT_TRUE(noisy.fit);
  if (noisy.fit->loo_rel_error > kMaxLooRelError) {
    EXPECT_TRUE(noisy.predictions.empty());
    EXPECT_NE(noisy.refused.find("leave-one-out"), std::string::npos);
  }
}

struct Calibration {
  int seeds = 0, family = 0, params_close = 0, covered = 0, predicted = 0;
};

std::vector<int> powers_of_two(int up_to) {
  std::vector<int> ps;
  for (int p = 1; p <= up_to; p *= 2) ps.push_back(p);
  return ps;
}

// 200 studies of `law` at `ps`, 3 repeats with `cv` noise: how often the family wins, the
// parameters land within 10%, and the 90% intervals (2× and 4× the largest p) hold the truth.
Calibration calibrate(const std::function<double(double)>& law, const std::vector<int>& ps, double cv,
                      const std::function<bool(const ScalingFit&)>& is_family,
                      const std::function<bool(const ScalingFit&)>& params_close, bool weak = false, int seeds = 200) {
  Calibration c;
  ScalingOptions o;
  o.weak = weak;
  o.replicates = 400;
  o.backtest = o.suggest = false;
  for (int s = 0; s < seeds; ++s) {
    auto m = fit_scaling_model(study(law, ps, 3, cv, 1000 + s), o);
    ++c.seeds;
    if (!m.fit) continue;
    if (is_family(*m.fit)) ++c.family;
    if (params_close(*m.fit)) ++c.params_close;
    for (const auto& pr : m.predictions) {
      ++c.predicted;
      if (law(pr.p) >= pr.lower && law(pr.p) <= pr.upper) ++c.covered;
    }
  }
  std::printf("family %d/%d, params within 10%% %d/%d, 90%% intervals covering the truth %d/%d\n", c.family, c.seeds,
              c.params_close, c.seeds, c.covered, c.predicted);
  return c;
}

void expect_calibrated(const Calibration& c) {
  EXPECT_GE(c.family, c.seeds * 9 / 10);
  EXPECT_GE(c.params_close, c.seeds * 9 / 10);
  ASSERT_GT(c.predicted, 0);
  const double coverage = static_cast<double>(c.covered) / c.predicted;
  EXPECT_GE(coverage, 0.85);
  EXPECT_LE(coverage, 0.95);
}

auto law_is(std::string name) {
  return [name](const ScalingFit& f) { return f.law == name; };
}
auto param_near(std::string key, double truth) {
  return [key, truth](const ScalingFit& f) { return f.params.count(key) && std::fabs(f.params.at(key) / truth - 1) <= 0.1; };
}

TEST(ScalingModelCalibration, AmdahlThreePercent) {
  auto law = [](double p) { return 100 * (0.03 + 0.97 / p); };
  expect_calibrated(calibrate(law, powers_of_two(64), 0.03, law_is("Amdahl"), param_near("serial_fraction", 0.03)));
}

TEST(ScalingModelCalibration, AmdahlWithLogCommunication) {
  auto law = [](double p) { return 100 * (0.02 + 0.98 / p) + 1.5 * std::log2(p); };
  expect_calibrated(calibrate(law, powers_of_two(128), 0.02, law_is("Amdahl + log2 p"), param_near("comm_s_per_log2p", 1.5)));
}

TEST(ScalingModelCalibration, UniversalScalabilityLawWithAPeak) {
  // σ = 2%, κ = 0.05%: throughput peaks at √(0.98/0.0005) ≈ 44 GPUs.
  const double a = 100, sigma = 0.02, kappa = 0.0005;
  auto law = [=](double p) { return a * (1 + sigma * (p - 1) + kappa * p * (p - 1)) / p; };
  expect_calibrated(calibrate(law, powers_of_two(128), 0.03, law_is("USL"), param_near("peak_p", std::sqrt((1 - sigma) / kappa))));
}

TEST(ScalingModelCalibration, WeakScalingGrowingWithLog2p) {
  // Weak scaling: the time per step grows only by the all-reduce's log2 p.
  auto law = [](double p) { return 10 + 0.4 * std::log2(p); };
  auto is_log = [](const ScalingFit& f) {
    return f.terms.size() == 2 && f.terms[1].p_exp == 0 && f.terms[1].log_exp == 1;
  };
  auto slope_near = [](const ScalingFit& f) { return f.terms.size() == 2 && std::fabs(f.terms[1].coef / 0.4 - 1) <= 0.1; };
  expect_calibrated(calibrate(law, powers_of_two(128), 0.02, is_log, slope_near, true));
}

}  // namespace

namespace {
// A curve that slows past 4 GPUs, one run each (times from a helper's audit study): Amdahl + log2 p
// fits it with a negative constant, which is no serial time: no serial fraction is stated (it was
// −75%).
TEST(ScalingModel, ANegativeConstantIsNoSerialFraction) {
  const auto fit = choose_scaling_fit({1, 2, 4, 8}, {57.227650472, 22.089051511, 11.706614138, 14.040504157});
  ASSERT_TRUE(fit);
  for (const auto& [name, value] : fit->params)
    if (name == "serial_fraction") EXPECT_TRUE(value >= 0 && value <= 1) << fit->law << " " << fit->formula();
  if (fit->law == "Amdahl + log2 p" && fit->terms[0].coef < 0) EXPECT_FALSE(fit->params.count("serial_fraction"));
}

// Four GPU counts ask for a self-check; where the refit without the largest predicts nothing, the
// reason is said (summary.json's backtest_refused, the table), not left as a silent null.
TEST(ScalingModel, AMissingSelfCheckSaysWhy) {
  std::vector<ScalingPoint> points;
  const std::vector<double> times{57.227650472, 22.089051511, 11.706614138, 14.040504157};
  for (std::size_t i = 0; i < times.size(); ++i) points.push_back({1 << i, {times[i]}});
  const auto m = fit_scaling_model(points, {});
  ASSERT_TRUE(m.fit);
  EXPECT_FALSE(m.backtest);
  EXPECT_EQ(m.backtest_refused.rfind("fitted without 8 GPUs, its leave-one-out error is", 0), 0u) << m.backtest_refused;
  // The model predicts (its own leave-one-out error is 1.4%) but nothing checked it: no pass.
  EXPECT_FALSE(m.predictions.empty());
  EXPECT_TRUE(m.self_check_failed());
  EXPECT_EQ(m.self_check_failure().rfind("could not check itself (fitted without 8 GPUs, its leave-one-out error is", 0), 0u)
      << m.self_check_failure();
  // A self-check that ran leaves no reason.
  auto amdahl = [](double p) { return 100 * (0.03 + 0.97 / p); };
  const auto checked = fit_scaling_model(study(amdahl, {1, 2, 4, 8, 16}, 1, 0, 1), {});
  EXPECT_TRUE(checked.backtest);
  EXPECT_TRUE(checked.backtest_refused.empty());
  EXPECT_FALSE(checked.self_check_failed());
}

// Three GPU counts: the self-check would refit on two, which any two-parameter law passes through
// exactly, so it checks nothing. It had no self-check at all and counted as passed, so its
// predictions were recommended; now it could not be made, said as such, and the predictions stay
// out of the recommendation (self_check_failed).
TEST(ScalingModel, ThreeCountsLeaveTooFewForASelfCheck) {
  auto amdahl = [](double p) { return 100 * (0.002 + 0.998 / p); };
  const auto m = fit_scaling_model(study(amdahl, {1, 2, 4}, 3, 0.01, 7), {});
  ASSERT_TRUE(m.fit);
  EXPECT_FALSE(m.predictions.empty()) << m.refused;  // it still predicts, as before
  EXPECT_FALSE(m.backtest);
  EXPECT_EQ(m.backtest_refused, "fitted without 4 GPUs, the 2 GPU counts left are too few for a model, which needs at least 3");
  EXPECT_TRUE(m.self_check_failed());
  ScalingOptions ranks;
  ranks.unit = "ranks";
  EXPECT_EQ(fit_scaling_model(study(amdahl, {1, 2, 4}, 3, 0.01, 7), ranks).self_check_failure(),
            "could not check itself (fitted without 4 ranks, the 2 rank counts left are too few for a model, which needs at least 3)");
  // Four counts: the refit has three, and the check is made.
  const auto four = fit_scaling_model(study(amdahl, {1, 2, 4, 8}, 3, 0.01, 7), {});
  EXPECT_TRUE(four.backtest);
  EXPECT_TRUE(four.backtest_refused.empty()) << four.backtest_refused;
}
}  // namespace

namespace {
// Weak scaling at 89, 94, 99 s on 1, 2, 4 GPUs (3 repeats, ±0.5%): c0 + c1·log2 p and
// c0 + c1·log2² p/p both fit exactly, and the tie went to the second, whose time falls beyond the
// data (96.8 s at 32 GPUs, below the 4-GPU measurement). A weak-scaling time that rises where
// measured does not fall beyond it.
TEST(ScalingModel, WeakScalingTimeRisingWhereMeasuredDoesNotFallBeyond) {
  std::vector<ScalingPoint> points;
  for (int p : {1, 2, 4}) {
    ScalingPoint pt{p, {}};
    for (double n : {1.0, 1.005, 0.995}) pt.times.push_back((89 + 5 * std::log2(p)) * n);
    points.push_back(pt);
  }
  ScalingOptions o;
  o.weak = true;
  o.predict = {8, 16, 32};
  const auto m = fit_scaling_model(points, o);
  ASSERT_TRUE(m.fit);
  EXPECT_EQ(m.fit->formula(), "T(p) = 89 s + 5 s·log2 p");
  ASSERT_EQ(m.predictions.size(), 3u);
  for (std::size_t i = 0; i < m.predictions.size(); ++i) {
    EXPECT_GE(m.predictions[i].time, 99) << m.predictions[i].p;
    if (i > 0) EXPECT_GE(m.predictions[i].time, m.predictions[i - 1].time) << m.predictions[i].p;
  }
  EXPECT_NEAR(m.predictions.back().time, 114, 0.5);
}
}  // namespace

namespace {
// A weak-scaling curve measured flat at about 44–56 s per epoch on 2, 6, 8 and 32 GPUs (each run's
// mean epoch time, from a helper's audit study) was predicted as "at 64 GPUs: 74.7 s [0, 1.79e+03]":
// an interval reaching 0 s bounds nothing from below, and the throughput from it had no upper bound.
// Such a prediction is refused with the reason.
TEST(ScalingModel, AnIntervalReachingZeroIsARefusalNotAPrediction) {
  auto mean = [](std::vector<double> v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); };
  const std::vector<ScalingPoint> points{
      {2, {43.954340621, mean({45.012454787, 52.516423825000004})}},
      {6, {54.871339904, 54.487183528}},
      {8, {mean({48.845813910000004, 45.304943817, 52.263274273, 54.674588828000005, 54.763037695, 51.635960434000005,
                 48.563451911, 48.631285568, 51.901144637})}},
      {32, {mean({53.82512097, 55.860603392})}}};
  ScalingOptions o;
  o.weak = true;
  const auto m = fit_scaling_model(points, o);
  ASSERT_TRUE(m.fit);
  for (const auto& pr : m.predictions) EXPECT_GT(pr.lower, 0) << pr.p;
  for (const auto& pr : m.band) EXPECT_GT(pr.lower, 0) << pr.p;
  std::size_t reaching_zero = 0;
  for (const auto& r : m.refused_targets) reaching_zero += r.find("interval reaches 0 s") != std::string::npos;
  EXPECT_EQ(m.predictions.size() + reaching_zero, 2u);  // 64 and 128: each predicted or refused, never both
  ASSERT_GT(reaching_zero, 0u) << "this curve's intervals reach 0 s";
  EXPECT_EQ(m.refused_targets.front().rfind("64: its 90% interval reaches 0 s", 0), 0u) << m.refused_targets.front();
  if (m.predictions.empty()) EXPECT_NE(m.refused.find("reaches 0 s"), std::string::npos) << m.refused;
}
}  // namespace

namespace {
// T(p) = 100/p^1.2 on 1–8 GPUs, no form of the model's: with one run per count the interval at 16
// GPUs was [3.65, 4.41], with 3 identical runs per count [3.77, 3.77]: more repeats of the same
// figure made the prediction certain. The fit's own miss now bounds the interval from below.
TEST(ScalingModel, IdenticalRepeatsDoNotMakeAMisfitCertain) {
  auto law = [](double p) { return 100 / std::pow(p, 1.2); };
  ScalingOptions o;
  o.predict = {16};
  const auto one = fit_scaling_model(study(law, {1, 2, 4, 8}, 1, 0, 1), o);
  const auto three = fit_scaling_model(study(law, {1, 2, 4, 8}, 3, 0, 1), o);
  ASSERT_EQ(one.predictions.size(), 1u);
  ASSERT_EQ(three.predictions.size(), 1u);
  const auto& a = one.predictions[0];
  const auto& b = three.predictions[0];
  EXPECT_GT(a.upper - a.lower, 0.1 * a.time);
  EXPECT_GE(b.upper - b.lower, a.upper - a.lower) << "3 identical runs: [" << b.lower << ", " << b.upper << "], one run: ["
                                                  << a.lower << ", " << a.upper << "]";
  EXPECT_LE(b.lower, law(16));
  EXPECT_GE(b.upper, law(16));
}

// Means that miss the law by more than their repeats vary (the second bootstrap, which draws a
// miss per GPU count predicted): a count's interval is one figure, the same in the predictions and
// in the band, whichever other counts are asked for. It was [6.266, 6.443] in the predictions and
// [6.262, 6.441] in the band at 16 GPUs, and moved with --predict 16 or 12,16.
TEST(ScalingModel, AnIntervalDependsOnlyOnItsGpuCount) {
  std::vector<ScalingPoint> points;
  for (auto [p, t] : {std::pair{1, 100.0}, std::pair{2, 50.2}, std::pair{4, 25.1}, std::pair{8, 12.6}})
    points.push_back({p, {t, t * 1.001, t * 1.002}});
  std::vector<std::vector<ScalingPrediction>> at16;
  for (const std::vector<int>& asked : {std::vector<int>{}, {16}, {12, 16}, {16, 48, 64}}) {
    ScalingOptions o;
    o.predict = asked;
    o.backtest = o.suggest = false;
    const auto m = fit_scaling_model(points, o);
    auto& found = at16.emplace_back();
    for (const auto* list : {&m.predictions, &m.band})
      for (const auto& x : *list)
        if (x.p == 16) found.push_back(x);
    ASSERT_EQ(found.size(), 2u) << "a prediction and a band point at 16 GPUs, predicting " << asked.size() << " counts";
  }
  for (const auto& found : at16)
    for (const auto& x : found) {
      EXPECT_EQ(x.lower, at16[0][0].lower);
      EXPECT_EQ(x.upper, at16[0][0].upper);
    }
  EXPECT_LT(at16[0][0].lower, at16[0][0].time);
}

// Repeats that agree with one another far better than the GPU counts agree with the law (each
// count's jobs share a placement, a node set, a data layout: a factor of their own, 3% here,
// while its runs differ by 0.5%): the fit's own error, not the repeats' noise, is what a
// prediction misses by. Over 400 studies of Amdahl's law on 1–32 GPUs the 90% intervals at 64 and
// 128 GPUs must hold a held-out measurement there (made the same way: its own factor, 3 runs) in
// 85–95% of the predictions. Intervals from the repeats alone held it in 11% (86 of 800).
TEST(ScalingModelCalibration, HeldOutMeasurementsWhereTheFitMissesMoreThanTheRepeatsVary) {
  auto law = [](double p) { return 100 * (0.05 + 0.95 / p); };
  const double between = 0.03, within = 0.005;
  auto measure = [&](int p, std::mt19937_64& rng) {
    std::normal_distribution<double> shared(0, between), own(0, within);
    const double factor = std::exp(shared(rng));
    ScalingPoint pt{p, {}};
    for (int r = 0; r < 3; ++r) pt.times.push_back(law(p) * factor * std::exp(own(rng)));
    return pt;
  };
  ScalingOptions o;
  o.replicates = 400;
  o.backtest = o.suggest = false;
  int covered = 0, predicted = 0;
  for (int s = 0; s < 400; ++s) {
    std::mt19937_64 rng(5000 + s);
    std::vector<ScalingPoint> points;
    for (int p : powers_of_two(32)) points.push_back(measure(p, rng));
    const auto m = fit_scaling_model(points, o);
    for (const auto& pr : m.predictions) {
      const auto held_out = measure(pr.p, rng);
      const double t = std::accumulate(held_out.times.begin(), held_out.times.end(), 0.0) / 3;
      ++predicted;
      covered += t >= pr.lower && t <= pr.upper;
    }
  }
  std::printf("90%% intervals holding a held-out measurement %d/%d\n", covered, predicted);
  ASSERT_GT(predicted, 600);
  const double coverage = static_cast<double>(covered) / predicted;
  EXPECT_GE(coverage, 0.85);
  EXPECT_LE(coverage, 0.95);
}
}  // namespace
