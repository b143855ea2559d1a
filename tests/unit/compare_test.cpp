// scalelens compare's statistics, tested as statistics: false-alarm rate and power of the verdict
// and coverage of the intervals over many generated seeds, plus matching, the summary.json reader
// and the trace-level diff.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "analysis/stats.hpp"
#include "compare/change.hpp"
#include "compare/compare.hpp"
#include "compare/summary_reader.hpp"
#include "compare/trace_diff.hpp"
#include "report/compare_writers.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {
namespace {

// `n` repeats of a time with mean `mean` and coefficient of variation `cv` (normal noise).
std::vector<double> repeats(std::mt19937_64& rng, std::size_t n, double mean, double cv) {
  std::normal_distribution<double> noise(0, cv);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(mean * (1 + noise(rng)));
  return v;
}

constexpr int kSeeds = 100;

TEST(CompareChange, NoiseOnlyRaisesAFalseAlarmInAtMostFivePercentOfSeeds) {
  // 5 repeats each side, CV 3%, no true change, threshold 5%.
  int regressed = 0, improved = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(1000 + seed);
    auto before = repeats(rng, 5, 10.0, 0.03), after = repeats(rng, 5, 10.0, 0.03);
    const auto v = judge(estimate_change(before, after), Better::lower, 0.05);
    regressed += v == Verdict::regressed;
    improved += v == Verdict::improved;
  }
  // Measured: 0 of 100 seeds regressed (the estimate must exceed the threshold as well as the
  // interval clear 0, so the rate is far below the interval's 2.5% one-sided error).
  RecordProperty("false_alarms", regressed);
  EXPECT_LE(regressed, 5) << "false alarms in " << kSeeds << " seeds";
  EXPECT_LE(improved, 5);
}

TEST(CompareChange, TenPercentSlowdownIsRegressedInAtLeastNinetyFivePercentOfSeeds) {
  int regressed = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(2000 + seed);
    auto before = repeats(rng, 5, 10.0, 0.03), after = repeats(rng, 5, 11.0, 0.03);
    regressed += judge(estimate_change(before, after), Better::lower, 0.05) == Verdict::regressed;
  }
  RecordProperty("regressed", regressed);
  EXPECT_GE(regressed, 95) << "power over " << kSeeds << " seeds";
}

TEST(CompareChange, AThroughputDropIsARegressionToo) {
  int regressed = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(3000 + seed);
    auto before = repeats(rng, 5, 1000.0, 0.03), after = repeats(rng, 5, 900.0, 0.03);
    regressed += judge(estimate_change(before, after), Better::higher, 0.05) == Verdict::regressed;
  }
  EXPECT_GE(regressed, 95);
}

TEST(CompareChange, OneRepeatEachIsInconclusiveNeverRegressed) {
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(4000 + seed);
    auto before = repeats(rng, 1, 10.0, 0.03), after = repeats(rng, 1, 13.0, 0.03);  // even 30% slower
    const auto change = estimate_change(before, after);
    EXPECT_EQ(judge(change, Better::lower, 0.05), Verdict::inconclusive);
    EXPECT_FALSE(change.ci_low);
    ASSERT_TRUE(change.rel_change);
    EXPECT_NEAR(*change.rel_change, after[0] / before[0] - 1, 1e-12);
  }
}

TEST(CompareChange, IdenticalValuesAreUnchangedWhateverTheirNumber) {
  for (std::size_t n : {1u, 2u, 5u}) {
    std::mt19937_64 rng(n);
    auto v = repeats(rng, n, 10.0, 0.2);
    auto shuffled = v;
    std::reverse(shuffled.begin(), shuffled.end());
    const auto change = estimate_change(v, shuffled);
    EXPECT_EQ(change.method, "identical");
    EXPECT_EQ(judge(change, Better::lower, 0.05), Verdict::unchanged);
  }
}

// Coverage: the share of seeds whose interval holds the true relative change.
TEST(CompareChange, WelchIntervalOnLogsCoversTheTrueChangeAboutNinetyFivePercentOfTheTime) {
  const int seeds = 1000;
  int covered = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(5000 + seed);
    // Log-normal times: the interval is for the ratio of (geometric) means, 1.07 here.
    std::normal_distribution<double> z(0, 0.04);
    std::vector<double> before, after;
    for (int i = 0; i < 4; ++i) before.push_back(10 * std::exp(z(rng)));
    for (int i = 0; i < 6; ++i) after.push_back(10.7 * std::exp(z(rng)));
    const auto c = estimate_change(before, after);
    ASSERT_EQ(c.method, "welch-log");
    covered += *c.ci_low <= 0.07 && 0.07 <= *c.ci_high;
  }
  const double rate = static_cast<double>(covered) / seeds;
  RecordProperty("coverage_permille", covered);
  EXPECT_GE(rate, 0.93) << "coverage " << rate;
  EXPECT_LE(rate, 0.975) << "coverage " << rate << " (too wide)";
}

TEST(CompareChange, SkewedRepeatsUseTheBootstrapAndStillCoverTheRatioOfMeans) {
  // Exponential-tailed times (a straggler now and then): mean 10 + 1 before, 11 + 1 after.
  const int seeds = 300;
  int covered = 0, bootstrapped = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(6000 + seed);
    std::exponential_distribution<double> tail(1.0);
    std::vector<double> before, after;
    for (int i = 0; i < 20; ++i) before.push_back(10 + tail(rng));
    for (int i = 0; i < 20; ++i) after.push_back(11 + tail(rng));
    ChangeOptions o;
    o.bootstrap_replicates = 500;
    o.seed = static_cast<std::uint64_t>(seed);
    const auto c = estimate_change(before, after, o);
    if (c.method != "bootstrap") continue;
    ++bootstrapped;
    const double truth = 12.0 / 11.0 - 1;
    covered += *c.ci_low <= truth && truth <= *c.ci_high;
  }
  ASSERT_GE(bootstrapped, 50) << "skewed samples should take the bootstrap";
  const double rate = static_cast<double>(covered) / bootstrapped;
  RecordProperty("covered", covered);
  RecordProperty("bootstrapped", bootstrapped);
  // The percentile bootstrap runs a little narrow at n = 20.
  EXPECT_GE(rate, 0.88) << "coverage " << rate << " over " << bootstrapped;
}

TEST(CompareChange, RepeatsToDecideAreEnoughToDecideMostOfTheTime) {
  // Three repeats with CV 3% and no change: inconclusive; with the repeats it suggests, the
  // interval falls within ±5% (unchanged) in most seeds.
  std::mt19937_64 rng(7);
  auto before = repeats(rng, 3, 10.0, 0.03), after = repeats(rng, 3, 10.0, 0.03);
  auto c = estimate_change(before, after);
  const auto n = repeats_to_decide(c, 0.05);
  ASSERT_GT(n, 3u);
  ASSERT_LT(n, 100u);
  int unchanged = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 r(8000 + seed);
    unchanged += judge(estimate_change(repeats(r, n, 10.0, 0.03), repeats(r, n, 10.0, 0.03)), Better::lower, 0.05) == Verdict::unchanged;
  }
  EXPECT_GE(unchanged, 50) << "with " << n << " repeats per side";
}

TEST(CompareChange, ValuesThatCanBeZeroUseTheDifferenceOfMeans) {
  const auto c = estimate_change({0.0, 0.1, 0.05}, {0.2, 0.25, 0.3});
  EXPECT_EQ(c.method, "welch-delta");
  ASSERT_TRUE(c.ci_low);
  EXPECT_GT(*c.ci_low, 0);
  EXPECT_EQ(judge(c, Better::higher, 0.05), Verdict::improved);
}

TEST(CompareChange, SkewnessOfASymmetricSampleIsZeroAndOfATailPositive) {
  EXPECT_NEAR(skewness({1, 2, 3, 4, 5}), 0, 1e-12);
  EXPECT_GT(skewness({1, 1, 1, 1, 10}), 1);
}

// A study of one strong-scaling curve: run times at each GPU count, `repeats` runs each.
Summary study(std::mt19937_64& rng, const std::map<int, double>& mean_time, std::size_t n, double cv, const std::string& label = "ddp") {
  Summary s;
  const int p0 = mean_time.begin()->first;
  double t0 = 0;
  for (const auto& [p, mean] : mean_time) {
    ConfigurationSummary c;
    c.label = c.curve = label;
    c.world_size = p;
    c.scaling = "strong";
    c.time_from = "run";
    c.baseline_world_size = p0;
    c.baseline_label = label;
    c.runs = n;
    double sum = 0;
    for (double t : repeats(rng, n, mean, cv)) {
      RunSummary r;
      r.run_id = fmt::format("{}-{}-{}", label, p, s.runs.size());
      r.label = r.curve = label;
      r.world_size = p;
      r.run_time_s = t;
      r.throughput_samples_per_s = 1000 * p / t;
      r.peak_gpu_memory_bytes = 40.0 * (1ull << 30) * (1 + 0.01 * static_cast<double>(s.runs.size() % 3));
      c.run_indices.push_back(s.runs.size());
      s.runs.push_back(r);
      sum += t;
    }
    const double mean_t = sum / static_cast<double>(n);
    if (p == p0) t0 = mean_t;
    c.speedup = t0 / mean_t;
    c.efficiency = *c.speedup * p0 / p;
    s.configurations.push_back(c);
  }
  return s;
}

const MetricComparison* metric(const Comparison& c, int p, std::string_view name) {
  for (const auto& cc : c.configurations)
    if (cc.world_size == p)
      for (const auto& m : cc.metrics)
        if (m.metric->name == name) return &m;
  return nullptr;
}

TEST(CompareSummaries, EfficiencyNoiseOnlyRarelyRegressesAndItsIntervalCoversNoChange) {
  int regressed = 0, covered = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(9000 + seed);
    auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 5, 0.03);
    auto b = study(rng, {{1, 40.0}, {4, 12.0}}, 5, 0.03);
    const auto c = compare_summaries(a, b, {});
    const auto* e = metric(c, 4, "efficiency");
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->change.ci_low) << e->note;
    regressed += e->verdict == Verdict::regressed;
    covered += *e->change.ci_low <= 0 && 0 <= *e->change.ci_high;
    EXPECT_FALSE(metric(c, 1, "efficiency")) << "the baseline's efficiency is 1 by definition";
  }
  RecordProperty("false_alarms", regressed);
  RecordProperty("covered", covered);
  EXPECT_LE(regressed, 5);
  EXPECT_GE(covered, 90);
}

// A strong-scaling curve timed per epoch, its runs logging unequal numbers of epochs (runs cut
// short, or longer jobs): each run has a level of its own (run-to-run noise `run_cv`) and each
// epoch noise around it (`epoch_cv`). The configuration's time pools every epoch, as the analysis
// does, so its efficiency weighs a run by its epochs, while the interval is made from the runs.
Summary epoch_study(std::mt19937_64& rng, const std::map<int, double>& mean_time, const std::vector<int>& epochs_per_run,
                    double run_cv, double epoch_cv) {
  Summary s;
  const int p0 = mean_time.begin()->first;
  double t0 = 0;
  std::normal_distribution<double> run_noise(0, run_cv), epoch_noise(0, epoch_cv);
  for (const auto& [p, mean] : mean_time) {
    ConfigurationSummary c;
    c.label = c.curve = "ddp";
    c.world_size = p;
    c.scaling = "strong";
    c.time_from = "epoch";
    c.baseline_world_size = p0;
    c.baseline_label = "ddp";
    c.runs = epochs_per_run.size();
    double sum = 0, epochs = 0;
    for (int n : epochs_per_run) {
      RunSummary r;
      r.run_id = fmt::format("ddp-{}-{}", p, s.runs.size());
      r.label = r.curve = "ddp";
      r.world_size = p;
      const double level = mean * std::exp(run_noise(rng));
      for (int e = 0; e < n; ++e) r.epoch_times_s.push_back(level * std::exp(epoch_noise(rng)));
      for (double t : r.epoch_times_s) sum += t, ++epochs;
      c.run_indices.push_back(s.runs.size());
      s.runs.push_back(r);
    }
    const double pooled = sum / epochs;
    if (p == p0) t0 = pooled;
    c.speedup = t0 / pooled;
    c.efficiency = *c.speedup * p0 / p;
    s.configurations.push_back(c);
  }
  return s;
}

TEST(CompareSummaries, EfficiencyIntervalCoversNoChangeWhenRunsLogUnequalEpochCounts) {
  // The same machine before and after; runs that logged 2 to 25 epochs, in another order on each
  // side. The efficiency shown is the summaries' (pooled epochs); its interval must still hold
  // "no change" about 95% of the time, and noise alone must seldom be called a regression.
  const int seeds = 400;
  int covered = 0, regressed = 0, improved = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(9500 + seed);
    auto a = epoch_study(rng, {{1, 40.0}, {4, 12.0}}, {2, 12, 3, 25, 4}, 0.03, 0.02);
    auto b = epoch_study(rng, {{1, 40.0}, {4, 12.0}}, {15, 2, 6, 3, 20}, 0.03, 0.02);
    const auto c = compare_summaries(a, b, {});
    const auto* e = metric(c, 4, "efficiency");
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->change.ci_low) << e->note;
    covered += *e->change.ci_low <= 0 && 0 <= *e->change.ci_high;
    regressed += e->verdict == Verdict::regressed;
    improved += e->verdict == Verdict::improved;
  }
  RecordProperty("covered", covered);
  // Measured: 386 of 400 (96.5%); the runs' plain interval re-centred on the summaries gave 371.
  EXPECT_GE(static_cast<double>(covered) / seeds, 0.93) << covered << " of " << seeds;
  EXPECT_LE(static_cast<double>(covered) / seeds, 0.99) << covered << " of " << seeds << " (too wide)";
  EXPECT_LE(regressed, seeds / 20);
  EXPECT_LE(improved, seeds / 20);
}

TEST(CompareSummaries, ASlowerConfigurationRegressesTimeThroughputAndEfficiency) {
  int time = 0, throughput = 0, efficiency = 0, baseline_regressed = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(10000 + seed);
    auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 5, 0.03);
    auto b = study(rng, {{1, 40.0}, {4, 13.2}}, 5, 0.03);  // 10% slower at 4 GPUs
    const auto c = compare_summaries(a, b, {});
    time += metric(c, 4, "time")->verdict == Verdict::regressed;
    throughput += metric(c, 4, "throughput")->verdict == Verdict::regressed;
    efficiency += metric(c, 4, "efficiency")->verdict == Verdict::regressed;
    baseline_regressed += metric(c, 1, "time")->verdict == Verdict::regressed;
    if (metric(c, 4, "time")->verdict == Verdict::regressed) {
      EXPECT_EQ(c.configurations.front().worst(), Verdict::regressed) << "the most severe first";
    }
  }
  RecordProperty("time_regressed", time);
  RecordProperty("throughput_regressed", throughput);
  RecordProperty("efficiency_regressed", efficiency);
  RecordProperty("unchanged_baseline_regressed", baseline_regressed);
  EXPECT_GE(time, 95);
  EXPECT_GE(throughput, 95);
  // Efficiency (−9.1%) carries the noise of the baseline's repeats too: its interval is √2 wider.
  EXPECT_GE(efficiency, 75);
  EXPECT_LE(baseline_regressed, 5);
}

TEST(CompareSummaries, MorePeakMemoryIsARegression) {
  std::mt19937_64 rng(6);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03);
  auto b = a;
  for (auto& r : b.runs) r.peak_gpu_memory_bytes = *r.peak_gpu_memory_bytes * 1.25;
  const auto c = compare_summaries(a, b, {});
  const auto* m = metric(c, 4, "peak_memory");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->verdict, Verdict::regressed);
  EXPECT_NEAR(*m->change.rel_change, 0.25, 1e-9);
  EXPECT_EQ(find_metric("memory"), m->metric);
}

TEST(CompareSummaries, UnmatchedConfigurationsAreListedAndRenamesPairThem) {
  std::mt19937_64 rng(1);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}, {8, 7.0}}, 3, 0.03);
  auto b = study(rng, {{1, 40.0}, {4, 12.0}, {16, 4.0}}, 3, 0.03, "ddp-new");
  auto c = compare_summaries(a, b, {});
  EXPECT_TRUE(c.configurations.empty());
  EXPECT_EQ(c.only_before.size(), 3u);
  EXPECT_EQ(c.only_after.size(), 3u);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings.front().message.find("--match label=ddp:ddp-new"), std::string::npos) << c.warnings.front().message;

  CompareOptions o;
  o.label_renames["ddp"] = "ddp-new";
  c = compare_summaries(a, b, o);
  EXPECT_EQ(c.configurations.size(), 2u);
  EXPECT_EQ(c.only_before, std::vector<std::string>{"ddp 8 GPUs"});
  EXPECT_EQ(c.only_after, std::vector<std::string>{"ddp-new 16 GPUs"});
  EXPECT_EQ(c.configurations.front().name(), "ddp→ddp-new");
}

TEST(CompareSummaries, MetricsCanBeChosen) {
  std::mt19937_64 rng(2);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03);
  CompareOptions o;
  o.metrics = {"efficiency"};
  const auto c = compare_summaries(a, a, o);
  for (const auto& cc : c.configurations)
    for (const auto& m : cc.metrics) EXPECT_STREQ(m.metric->name, "efficiency");
  EXPECT_EQ(c.count(Verdict::unchanged), 1u);
  EXPECT_TRUE(find_metric("energy"));
  EXPECT_FALSE(find_metric("bogus"));
}

TEST(CompareSummaries, ScalingModelParametersAreSetSideBySide) {
  Summary a, b;
  CurveModel m;
  m.curve = m.label = "ddp";
  ScalingFit fit;
  fit.law = "Amdahl";
  fit.terms = {{1, 0, 0}, {40, -1, 0}};
  fit.params["serial_fraction"] = 0.021;
  m.model.fit = fit;
  a.curves.push_back(m);
  m.model.fit->params["serial_fraction"] = 0.034;
  b.curves.push_back(m);
  const auto c = compare_summaries(a, b, {});
  ASSERT_EQ(c.curves.size(), 1u);
  ASSERT_EQ(c.curves[0].parameters.size(), 1u);
  EXPECT_EQ(*c.curves[0].parameters[0].before, 0.021);
  EXPECT_EQ(*c.curves[0].parameters[0].after, 0.034);
  EXPECT_NE(render_compare_table(c).find("serial fraction 2.1% → 3.4%"), std::string::npos) << render_compare_table(c);
}

TEST(SummaryReader, ASummaryReadBackComparesUnchangedWithItsStudy) {
  std::mt19937_64 rng(3);
  auto a = study(rng, {{1, 40.0}, {2, 21.0}, {4, 12.0}}, 3, 0.03);
  auto saved = parse_summary_json(render_summary_json(a), "summary.json");
  ASSERT_TRUE(saved) << saved.error().message;
  const auto c = compare_summaries(saved.value().summary, a, {});
  EXPECT_EQ(c.configurations.size(), 3u);
  EXPECT_EQ(c.count(Verdict::unchanged), c.count(Verdict::unchanged) + c.count(Verdict::regressed) + c.count(Verdict::improved) +
                                             c.count(Verdict::inconclusive));
  EXPECT_GT(c.count(Verdict::unchanged), 5u);
}

TEST(SummaryReader, RefusesWhatScalelensDidNotWriteNamingTheFileAndField) {
  struct Case {
    const char* json;
    const char* says;
  } cases[] = {
      {"not json", "not JSON"},
      {"[1]", "not an object"},
      {R"({"schema": "scalelens.trace/1"})", "its schema is 'scalelens.trace/1'"},
      {R"({"schema": "scalelens.summary/9", "configurations": []})", "newer"},
      // Older or never-released versions are refused too, but not as newer ones.
      {R"({"schema": "scalelens.summary/0", "configurations": []})", "'scalelens.summary/0' is not a version this scalelens knows"},
      {R"({"schema": "scalelens.summary/1-beta", "configurations": []})",
       "'scalelens.summary/1-beta' is not a version this scalelens knows"},
      {R"({"schema": "scalelens.summary/2"})", "no \"configurations\""},
      {R"({"schema": "scalelens.summary/2", "configurations": [{"label": "a", "world_size": "eight"}]})",
       "configurations[0].world_size should be a number"},
      {R"({"schema": "scalelens.summary/2", "configurations": [{"label": "a", "world_size": -3}]})", "world_size"},
      {R"({"schema": "scalelens.summary/2", "configurations": [], "runs": [{"run_id": "r", "epoch_times_s": [1, "x"]}]})",
       "runs[0].epoch_times_s should be an array of numbers"},
      {R"({"schema": "scalelens.summary/2", "configurations": [{"label": "a", "world_size": 2, "run_ids": [3]}]})", "run_ids"},
      // Figures no measurement has: compared, they gave "-1.5 s per epoch, improved", "500 % GPU utilization, improved".
      {R"({"schema": "scalelens.summary/2", "configurations": [], "runs": [{"run_id": "r", "epoch_times_s": [1, -2]}]})",
       "runs[0].epoch_times_s should be an array, each value a number of seconds above 0 and at most 1e+08"},
      {R"({"schema": "scalelens.summary/2", "configurations": [], "runs": [{"run_id": "r", "gpu_util_pct": {"mean": 500}}]})",
       "runs[0].gpu_util_pct.mean should be a number from 0 to 100"},
      {R"({"schema": "scalelens.summary/2", "configurations": [], "runs": [{"run_id": "r", "peak_gpu_memory_gib": -10}]})",
       "runs[0].peak_gpu_memory_gib should be a number of GiB from 0 to 16384"},
      {R"({"schema": "scalelens.summary/2", "configurations": [], "runs": [{"run_id": "r", "throughput_samples_per_s": -5}]})",
       "runs[0].throughput_samples_per_s should be a number above 0"},
      {R"({"schema": "scalelens.summary/2", "configurations": [{"label": "a", "world_size": 2, "epoch_time_s": {"mean": 0}}]})",
       "configurations[0].epoch_time_s.mean should be a number of seconds above 0"},
      {R"({"schema": "scalelens.summary/2", "configurations": [{"label": "a", "world_size": 2, "computation_score": 1.5}]})",
       "configurations[0].computation_score should be a number from 0 to 1"},
  };
  for (const auto& k : cases) {
    auto r = parse_summary_json(k.json, "/ci/baseline.json");
    ASSERT_FALSE(r) << k.json;
    EXPECT_EQ(r.error().path, "/ci/baseline.json");
    EXPECT_NE(r.error().message.find(k.says), std::string::npos) << k.json << " -> " << r.error().message;
  }
}

TEST(SummaryReader, ConfigurationsWithoutTheirRunsCompareAsOneRepeatAndTwinIdentitiesAreRefused) {
  const std::string head = R"({"schema": "scalelens.summary/2", "configurations": [)";
  auto saved = parse_summary_json(head + R"({"label": "ddp", "world_size": 8, "runs": 3, "time_from": "epoch",
      "epoch_time_s": {"mean": 10}, "throughput_samples_per_s": 100, "run_ids": ["gone"]}]})",
                                  "s.json");
  ASSERT_TRUE(saved) << saved.error().message;
  const auto c = compare_summaries(saved.value().summary, saved.value().summary, {});
  ASSERT_EQ(c.configurations.size(), 1u);
  ASSERT_EQ(c.configurations[0].metrics.size(), 2u);  // time and throughput from the means
  EXPECT_EQ(c.configurations[0].metrics[0].change.n_before, 1u);

  auto twins = parse_summary_json(head + R"({"label": "ddp", "world_size": 8}, {"label": "ddp", "world_size": 8}]})", "s.json");
  ASSERT_FALSE(twins);
  EXPECT_NE(twins.error().message.find("configurations[1] has the identity"), std::string::npos) << twins.error().message;
  auto runs = parse_summary_json(head + R"(], "runs": [{"run_id": "r"}, {"run_id": "r"}]})", "s.json");
  ASSERT_FALSE(runs);
  EXPECT_NE(runs.error().message.find("runs[1].run_id 'r' is another run's too"), std::string::npos) << runs.error().message;
}

// A summary kept without its runs (one repeat of each configuration's means) compared with itself:
// time and throughput were unchanged [0, 0], but efficiency "inconclusive: an interval needs at
// least 2 repeats", though identical samples compare as 0 whatever their number.
TEST(CompareSummaries, ASummaryWithoutItsRunsComparedWithItselfIsUnchangedInEveryFigure) {
  std::mt19937_64 rng(11);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03);
  // What report writes of each configuration: its run time over its runs; then the runs trimmed.
  for (auto& c : a.configurations) {
    std::vector<double> times;
    for (auto i : c.run_indices) times.push_back(*a.runs[i].run_time_s);
    c.run_time_s = describe(times);
    c.run_indices.clear();
  }
  a.runs.clear();
  auto saved = parse_summary_json(render_summary_json(a), "summary.json");
  ASSERT_TRUE(saved) << saved.error().message;
  const auto c = compare_summaries(saved.value().summary, saved.value().summary, {});
  const auto* e = metric(c, 4, "efficiency");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->verdict, Verdict::unchanged) << e->note;
  EXPECT_EQ(e->change.ci_low, 0.0);
  EXPECT_EQ(e->change.ci_high, 0.0);
  for (const auto& cc : c.configurations)
    for (const auto& m : cc.metrics) EXPECT_EQ(m.verdict, Verdict::unchanged) << cc.world_size << " " << m.metric->name << ": " << m.note;
}

// A summary compared with itself, its efficiency edited by hand: the runs are the same, so the
// change was called "unchanged" beside two different efficiencies.
TEST(CompareSummaries, AnEfficiencyThatIsNotItsRunsIsNotCalledUnchanged) {
  std::mt19937_64 rng(11);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03);
  auto b = a;
  const auto same = compare_summaries(a, b, {});
  ASSERT_TRUE(metric(same, 4, "efficiency"));
  EXPECT_EQ(metric(same, 4, "efficiency")->verdict, Verdict::unchanged);
  b.configurations[1].efficiency = *a.configurations[1].efficiency * 0.5;
  const auto edited = compare_summaries(a, b, {});
  const auto* e = metric(edited, 4, "efficiency");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->verdict, Verdict::inconclusive);
  EXPECT_FALSE(e->change.ci_low);
  EXPECT_NE(e->note.find("the runs are the same on both sides, but the saved efficiencies differ"), std::string::npos)
      << e->note;
}

TEST(CompareSummaries, EfficiencyAgainstAnotherBaselineIsInconclusiveAndAMissingTimeIsSaid) {
  std::mt19937_64 rng(5);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03);
  auto b = a;
  // The after study measures against another label's configuration at the same size.
  b.configurations[1].baseline_label = "fsdp";
  auto fsdp = b.configurations[0];
  fsdp.label = fsdp.curve = "fsdp";
  b.configurations.push_back(fsdp);
  auto c = compare_summaries(a, b, {});
  const auto* e = metric(c, 4, "efficiency");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->verdict, Verdict::inconclusive);
  EXPECT_EQ(e->note, "the two sides measure efficiency against different baselines");

  // The after runs lost their times: a row says so rather than none.
  auto no_time = a;
  for (auto& r : no_time.runs) r.run_time_s.reset();
  c = compare_summaries(a, no_time, {});
  const auto* t = metric(c, 4, "time");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->verdict, Verdict::inconclusive);
  EXPECT_EQ(t->note, "no time basis both sides have (before: run; after: none)");
}

trace::RankSummary rank_with(int rank, int steps, std::vector<std::pair<std::string, double>> kernels) {
  trace::RankSummary r;
  r.rank = rank;
  r.steps.resize(static_cast<std::size_t>(steps));
  r.steps_analysed = steps;
  r.total.exposed_comm_us = 100.0 * steps;
  r.total.idle_us = 50.0 * steps;
  for (auto& [name, us] : kernels) r.kernels.push_back({name, trace::KernelClass::computation, static_cast<std::size_t>(steps), us});
  return r;
}

TEST(TraceDiff, KernelsPerRankAndStepLargestChangeFirstWithNewAndGone) {
  trace::TraceSet before, after;
  // Before: 2 ranks × 4 steps; after: 2 ranks × 2 steps, so totals halve where nothing changed.
  for (int rank : {0, 1}) {
    before.ranks.push_back(rank_with(rank, 4, {{"gemm", 4000}, {"relu", 400}, {"old", 80}}));
    after.ranks.push_back(rank_with(rank, 2, {{"gemm", 3000}, {"relu", 200}, {"new", 20}}));
  }
  const auto d = diff_trace_sets(before, after, 2);
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].name, "gemm");
  EXPECT_DOUBLE_EQ(d.kernels[0].before_us, 1000);  // 8000 µs over 8 rank-steps
  EXPECT_DOUBLE_EQ(d.kernels[0].after_us, 1500);
  EXPECT_EQ(d.kernels[1].name, "old");
  EXPECT_TRUE(d.kernels[1].vanished());
  EXPECT_EQ(d.added, 1u);
  EXPECT_EQ(d.vanished, 1u);
  EXPECT_DOUBLE_EQ(d.steps_before, 4);
  ASSERT_EQ(d.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(*d.ranks[1].exposed_comm_after_us, 100);
}

TEST(CompareWriters, JunitAndMarkdownCarryEveryVerdictAndEscapeNames) {
  std::mt19937_64 rng(4);
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 5, 0.03, "a<b>&\"c|d");
  auto b = study(rng, {{1, 40.0}, {4, 15.0}}, 5, 0.03, "a<b>&\"c|d");
  const auto c = compare_summaries(a, b, {});
  const auto junit = render_compare_junit(c);
  EXPECT_NE(junit.find("a&lt;b&gt;&amp;&quot;c|d"), std::string::npos);
  EXPECT_EQ(junit.find("a<b>"), std::string::npos);
  EXPECT_NE(junit.find("<failure type=\"regressed\""), std::string::npos);
  const auto md = render_compare_markdown(c);
  EXPECT_NE(md.find("a&lt;b&gt;&amp;\"c\\|d"), std::string::npos) << md;
  EXPECT_EQ(md.find("a<b>"), std::string::npos) << "a label cannot open an HTML tag in a pull-request comment";
  EXPECT_NE(md.find("**regressed**"), std::string::npos);
  EXPECT_EQ(signed_percent(0.1), "+10.0%");
  // Bytes that are not UTF-8 (a folder name) leave the XML well-formed.
  auto bad = study(rng, {{1, 40.0}}, 2, 0.03, "x\xff\xfey");
  const auto junit_bad = render_compare_junit(compare_summaries(bad, bad, {}));
  EXPECT_NE(junit_bad.find("x\xEF\xBF\xBD\xEF\xBF\xBDy"), std::string::npos);
  EXPECT_EQ(signed_percent(-0.0001), "0.0%");
}

// A label of markdown links, an image, a mention and an escape sequence: in a pull request's
// comment it was a live link, a tracking image and a notification, and ESC reached the terminal.
TEST(CompareWriters, MarkdownShowsALabelAsTextOnly) {
  std::mt19937_64 rng(4);
  const std::string label = "[x](https://evil.example) ![p](https://evil.example/p.png) @octocat \x1b[31mRED\xC2\x9B";
  auto a = study(rng, {{1, 40.0}, {4, 12.0}}, 3, 0.03, label);
  const auto md = render_compare_markdown(compare_summaries(a, a, {}));
  EXPECT_NE(md.find("\\[x\\](https://evil.example) !\\[p\\](https://evil.example/p.png) &#64;octocat  \\[31mRED "),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("[x]("), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace scalelens
