// GPU utilization over time (issue 17, part 2: a fixed-size sketch for percentiles, kept per GPU as
// its samples are read): the sketch against its definition over many generated series, its
// percentiles against distributions known in advance (over many seeds, as a statistic), and the
// run's and configuration's percentiles, in which each GPU and each run weighs the same, end to end
// from gpu.csv files to summary.json and summary.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "analysis/stats.hpp"
#include "ingest/ingest.hpp"
#include "report/summary_writers.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using testing::ScratchDir;

// The percentiles of one GPU's sketch, as a run of that GPU alone reads them.
Percentiles percentiles_of_gpu(const GpuSeriesFigures& f) {
  const UtilHistogram own = util_shares(f.util_time);
  const auto shares = mean_of_shares(std::vector<const UtilHistogram*>{&own});
  EXPECT_TRUE(shares);
  return shares ? percentiles_of(*shares).value_or(Percentiles{-1, -1, -1}) : Percentiles{-1, -1, -1};
}

// The definition, written out: between consecutive samples with a reading, both inside the window,
// half the stretch's time at either end's value (whole percents here); then the smallest value at
// or below which lies at least q of the time. Also how near to q the share at or below it, or at
// or below the value before it, comes.
struct Definition {
  std::map<int, double> time_at;  // value → seconds
  double total = 0;
  struct Answer {
    int value;
    double off;  // how near q the share at or below it, or below it, comes
    int other;   // the value a near-tie may read as: the one before, or after
  };
  Answer percentile(double q) const {
    double below = 0;
    int before_value = -1;
    for (auto it = time_at.begin(); it != time_at.end(); ++it) {
      const auto& [v, w] = *it;
      const double before = below / total;
      below += w;
      if (below >= q * total * (1 - 1e-12)) {
        const double off_after = std::abs(below / total - q), off_before = std::abs(before - q);
        const auto next = std::next(it);
        const int other = off_before < off_after ? before_value : next == time_at.end() ? v : next->first;
        return {v, std::min(off_after, off_before), other};
      }
      before_value = v;
    }
    return {100, 0, 100};
  }
};

TEST(UtilOverTime, SketchIsItsDefinitionOverManyGeneratedSeries) {
  std::size_t compared = 0, near_ties = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    // Idle and busy phases (as training with data loading or evaluation), or values anywhere.
    const bool phases = chance(0.5);
    GpuSeries g;
    const std::size_t n = 20 + rng() % 500;
    std::int64_t t = 1'700'000'000'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
      GpuSample s;
      t += 50'000'000 + static_cast<std::int64_t>(rng() % 3'000'000'000ULL);
      s.t_ns = t;
      if (!chance(0.1))
        s.util_pct = static_cast<float>(phases ? (chance(0.3) ? rng() % 3 : 90 + rng() % 11) : rng() % 101);
      g.samples.push_back(s);
    }
    // A window from one reading's time to a later one's: every stretch inside is whole.
    std::vector<std::int64_t> read_at;
    for (const auto& s : g.samples)
      if (!std::isnan(s.util_pct)) read_at.push_back(s.t_ns);
    if (read_at.empty()) continue;
    const std::size_t a = rng() % read_at.size(), b = a + rng() % (read_at.size() - a);
    const std::int64_t t0 = read_at[a], t1 = read_at[b];
    const GpuSeriesFigures f = gpu_series_figures(g, t0, t1);

    Definition d;
    const GpuSample* prev = nullptr;
    for (const auto& s : g.samples) {
      if (std::isnan(s.util_pct) || s.t_ns < t0 || s.t_ns > t1) continue;
      if (prev) {
        const double secs = static_cast<double>(s.t_ns - prev->t_ns) * 1e-9;
        d.time_at[static_cast<int>(prev->util_pct)] += secs / 2;
        d.time_at[static_cast<int>(s.util_pct)] += secs / 2;
        d.total += secs;
      }
      prev = &s;
    }
    if (d.total == 0) continue;  // under two readings inside: a plain mean, below
    ASSERT_TRUE(f.util_pct);
    double mean = 0, shares = 0;
    const UtilHistogram own = util_shares(f.util_time);
    for (std::size_t v = 0; v < kUtilBins; ++v) {
      mean += static_cast<double>(v) * own[v];
      shares += own[v];
    }
    EXPECT_NEAR(shares, 1, 1e-6);
    EXPECT_NEAR(mean, *f.util_pct, 0.1) << "the sketch's mean is the GPU's trapezoid mean";
    const Percentiles p = percentiles_of_gpu(f);
    const double got[] = {p.p10, p.p50, p.p90};
    const double qs[] = {0.10, 0.50, 0.90};
    for (int k = 0; k < 3; ++k) {
      const auto want = d.percentile(qs[k]);
      // Packing moves the share at or below a value by at most 0.5 / 65535, and ties within 1e-5
      // go to the lower value: only where the share at or below a value lies that near q may it
      // read as its neighbour.
      // An exact tie goes to the lower value, packed or not.
      if (want.off > 1e-12 && want.off < 2e-5) {
        ++near_ties;
        EXPECT_TRUE(got[k] == want.value || got[k] == want.other) << "q " << qs[k] << ": " << got[k];
        continue;
      }
      EXPECT_EQ(got[k], want.value) << "q " << qs[k];
      ++compared;
    }
  }
  EXPECT_GT(compared, 2500u);
  EXPECT_LT(near_ties, compared / 50) << "near-ties are rare";
}

// Where the mean is a plain one (one reading inside, or nominal times), each sample weighs one.
TEST(UtilOverTime, PlainMeansGiveEachSampleOneWeight) {
  GpuSeries g;
  g.nominal_timestamps = true;
  for (float u : {0.f, 0.f, 0.f, 100.f, 40.f}) g.samples.push_back({static_cast<std::int64_t>(g.samples.size()), 0, u});
  const auto f = gpu_series_figures(g, 0, 0);
  ASSERT_TRUE(f.util_pct);
  EXPECT_DOUBLE_EQ(*f.util_pct, 28);
  const Percentiles p = percentiles_of_gpu(f);
  EXPECT_EQ(p.p10, 0);
  EXPECT_EQ(p.p50, 0);   // 3 of 5 samples at 0
  EXPECT_EQ(p.p90, 100);  // 4 of 5 at or below 40, which is less than 90 %
}

// As a statistic: a GPU read every second for 2,000 s whose utilization is drawn from a known
// distribution (idle 30 % of the time, else 80…100 % evenly). Its true p10, p50, p90 are 0, 85
// and 97; the sketch's must be within one percent of them in at least 95 % of 300 seeds.
TEST(UtilOverTime, PercentilesOfAKnownDistributionOverManySeeds) {
  const double truth[] = {0, 85, 97};
  int within[3] = {};
  constexpr int kSeeds = 300;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::uniform_real_distribution<double> u(0, 1);
    GpuSeries g;
    for (int i = 0; i <= 2000; ++i) {
      GpuSample s;
      s.t_ns = static_cast<std::int64_t>(i) * 1'000'000'000;
      s.util_pct = u(rng) < 0.3 ? 0.f : static_cast<float>(80 + rng() % 21);
      g.samples.push_back(s);
    }
    const Percentiles p = percentiles_of_gpu(gpu_series_figures(g, 0, 2000'000'000'000));
    const double got[] = {p.p10, p.p50, p.p90};
    for (int k = 0; k < 3; ++k) within[k] += std::abs(got[k] - truth[k]) <= 1;
  }
  for (int k = 0; k < 3; ++k) EXPECT_GE(within[k], kSeeds * 95 / 100) << "percentile " << k;
}

// An exact tie survives packing: one sample each at 0…5 % and six at 100 % put exactly half the
// samples at or below 5 %, so p50 is 5 (per-bin shares packed apart read it as 100).
TEST(UtilOverTime, AnExactTieIsKeptThroughPacking) {
  GpuSeries g;
  g.nominal_timestamps = true;
  for (float u : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 100.f, 100.f, 100.f, 100.f, 100.f, 100.f})
    g.samples.push_back({static_cast<std::int64_t>(g.samples.size()), 0, u});
  EXPECT_EQ(percentiles_of_gpu(gpu_series_figures(g, 0, 0)).p50, 5);
}

TEST(UtilOverTime, ValuesGoToTheirNearestWholePercent) {
  EXPECT_EQ(util_bin(0.49), 0u);
  EXPECT_EQ(util_bin(0.5), 1u);
  EXPECT_EQ(util_bin(99.5), 100u);
  EXPECT_EQ(util_bin(100), 100u);
  EXPECT_EQ(util_bin(-0.0), 0u);
}

TEST(UtilOverTime, PercentilesOfNoWeightAreNone) {
  EXPECT_FALSE(percentiles_of({}));
  EXPECT_FALSE(mean_of_shares({}));
}

// gpu.csv of a GPU's samples (one node), every `step_s` seconds from t0 for `seconds`.
std::string gpu_csv(int gpu, double seconds, double step_s, const std::vector<int>& cycle) {
  std::string out = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  std::size_t k = 0;
  for (double s = 0; s <= seconds + 1e-9; s += step_s, ++k)
    out += fmt::format("{},{},GPU-{},{},,,200,,,\n", 1'700'000'000'000'000'000 + static_cast<std::int64_t>(s * 1e9), gpu, gpu,
                       cycle[k % cycle.size()]);
  return out;
}

// Each GPU weighs the same in its run, and each run in its configuration, whatever their lengths:
// the mean over GPUs (gpu_util_pct) and the percentiles are of one distribution.
TEST(UtilOverTime, RunAndConfigurationWeighEachGpuAndRunTheSame) {
  ScratchDir dir;
  constexpr const char* manifest = R"({{"run_id": "{}", "label": "ddp", "world_size": 2, "start_ns": 1700000000000000000, "end_ns": {}}})";
  // Run a: GPU 0 idle for 100 s, GPU 1 busy for 10 s (each still half of the run's utilization).
  dir.write("study/a/scalelens.json", fmt::format(fmt::runtime(manifest), "a", 1'700'000'000'000'000'000 + 100'000'000'000));
  dir.write("study/a/nodes/n0/gpu.csv", gpu_csv(0, 100, 1, {0}));
  dir.write("study/a/nodes/n1/gpu.csv", gpu_csv(1, 10, 1, {100}));
  // Run b: both GPUs at 60 % for 50 s.
  dir.write("study/b/scalelens.json", fmt::format(fmt::runtime(manifest), "b", 1'700'000'000'000'000'000 + 50'000'000'000));
  dir.write("study/b/nodes/n0/gpu.csv", gpu_csv(0, 50, 1, {60}));
  dir.write("study/b/nodes/n1/gpu.csv", gpu_csv(1, 50, 1, {60}));
  IngestOptions in;
  in.inputs = {(dir.path() / "study").string()};
  const Summary s = analyze(ingest(in), {});
  ASSERT_EQ(s.runs.size(), 2u);
  ASSERT_EQ(s.configurations.size(), 1u);
  for (const auto& r : s.runs) {
    ASSERT_TRUE(r.gpu_util_percentiles) << r.run_id;
    ASSERT_TRUE(r.gpu_util_pct);
    double mean = 0;
    for (std::size_t v = 0; v < kUtilBins; ++v) mean += static_cast<double>(v) * (*r.gpu_util_time_share)[v];
    EXPECT_NEAR(mean, r.gpu_util_pct->mean, 0.01) << r.run_id;
  }
  const auto& a = s.runs[0].run_id == "a" ? s.runs[0] : s.runs[1];
  EXPECT_EQ(a.gpu_util_percentiles->p10, 0);
  EXPECT_EQ(a.gpu_util_percentiles->p50, 0);  // half the run's GPU time at 0 %
  EXPECT_EQ(a.gpu_util_percentiles->p90, 100);
  // The configuration: a quarter at 0, half at 60, a quarter at 100.
  const auto& c = s.configurations[0];
  ASSERT_TRUE(c.gpu_util_percentiles);
  EXPECT_EQ(c.gpu_util_percentiles->p10, 0);
  EXPECT_EQ(c.gpu_util_percentiles->p50, 60);
  EXPECT_EQ(c.gpu_util_percentiles->p90, 100);
  EXPECT_NE(render_summary_json(s).find(R"("gpu_util_percentiles_pct":{"p10":0,"p50":60,"p90":100})"), std::string::npos)
      << render_summary_json(s).substr(0, 3000);
  const std::string csv = render_summary_csv(s);
  EXPECT_NE(csv.find("gpu_util_p10_pct,gpu_util_p50_pct,gpu_util_p90_pct\n"), std::string::npos);
  EXPECT_NE(csv.find(",0,60,100\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace scalelens
