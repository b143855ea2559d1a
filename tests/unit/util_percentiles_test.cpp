// GPU utilization over time (issue 17, part 2: a fixed-size sketch for percentiles, kept per GPU as
// its samples are read): the sketch against its definition over many generated series, its
// percentiles against distributions known in advance (over many seeds, as a statistic), and the
// run's and configuration's percentiles, in which each GPU and each run weighs the same, end to end
// from gpu.csv files to summary.json and summary.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
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

// The definition, written out: each stretch between consecutive samples with a reading, clipped to
// the window (the value interpolated linearly at a cut), gives half its time to either end's value,
// put at its nearest whole percent; then the smallest value at or below which lies at least q of
// the time. Also how near to q the share at or below it, or at or below the value before it, comes.
struct Definition {
  std::map<int, double> time_at;  // value → seconds
  double total = 0;
  bool cut_near_half = false;  // a cut's value within 1e-9 of x.5, where its bin hangs on rounding
  static int bin(double x) { return x <= 0 ? 0 : x >= 100 ? 100 : static_cast<int>(std::floor(x + 0.5)); }
  Definition(const GpuSeries& g, std::int64_t t0, std::int64_t t1) {
    const GpuSample* prev = nullptr;
    for (const auto& s : g.samples) {
      if (std::isnan(s.util_pct)) continue;
      if (prev) {
        const std::int64_t a = std::max(prev->t_ns, t0), b = std::min(s.t_ns, t1);
        if (b > a) {
          auto at = [&](std::int64_t x) {
            const double from = prev->util_pct, to = s.util_pct;
            if (x == prev->t_ns) return from;
            if (x == s.t_ns) return to;
            const double v = from + (to - from) * static_cast<double>(x - prev->t_ns) / static_cast<double>(s.t_ns - prev->t_ns);
            if (std::abs(v - std::floor(v) - 0.5) < 1e-9) cut_near_half = true;
            return v;
          };
          const double secs = static_cast<double>(b - a) * 1e-9;
          time_at[bin(at(a))] += secs / 2;
          time_at[bin(at(b))] += secs / 2;
          total += secs;
        }
      }
      prev = &s;
    }
  }
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
  double mean() const {
    double m = 0;
    for (const auto& [v, w] : time_at) m += v * w;
    return m / total;
  }
};

// Half the seeds: whole percents, and a window from one reading's time to a later one's (every
// stretch inside is whole). The other half: values with two decimals, and a window anywhere, even
// past the samples, so that stretches are cut and their ends interpolated.
TEST(UtilOverTime, SketchIsItsDefinitionOverManyGeneratedSeries) {
  std::size_t compared = 0, near_ties = 0, cut_series = 0, near_half = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    // Idle and busy phases (as training with data loading or evaluation), or values anywhere.
    const bool phases = chance(0.5), whole = seed % 2;
    auto value = [&](int lo, int hi) {  // in lo…hi, whole or to two decimals
      return whole ? static_cast<float>(lo + static_cast<int>(rng() % (hi - lo + 1)))
                   : static_cast<float>(lo * 100 + static_cast<int>(rng() % ((hi - lo) * 100 + 1))) / 100.f;
    };
    GpuSeries g;
    const std::size_t n = 20 + rng() % 500;
    std::int64_t t = 1'700'000'000'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
      GpuSample s;
      t += 50'000'000 + static_cast<std::int64_t>(rng() % 3'000'000'000ULL);
      s.t_ns = t;
      if (!chance(0.1)) s.util_pct = phases ? (chance(0.3) ? value(0, 2) : value(90, 100)) : value(0, 100);
      g.samples.push_back(s);
    }
    std::vector<std::int64_t> read_at;
    for (const auto& s : g.samples)
      if (!std::isnan(s.util_pct)) read_at.push_back(s.t_ns);
    if (read_at.empty()) continue;
    std::int64_t t0, t1;
    if (whole) {
      const std::size_t a = rng() % read_at.size(), b = a + rng() % (read_at.size() - a);
      t0 = read_at[a], t1 = read_at[b];
    } else {
      const std::int64_t first = g.samples.front().t_ns, span = g.samples.back().t_ns - first;
      t0 = first - span / 10 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
      t1 = t0 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
      ++cut_series;
    }
    const GpuSeriesFigures f = gpu_series_figures(g, t0, t1);
    const Definition d(g, t0, t1);
    if (d.total == 0) continue;  // no stretch inside: a plain mean, below
    if (d.cut_near_half) {
      ++near_half;
      continue;
    }
    ASSERT_TRUE(f.util_pct);
    double mean = 0, shares = 0;
    const UtilHistogram own = util_shares(f.util_time);
    for (std::size_t v = 0; v < kUtilBins; ++v) {
      mean += static_cast<double>(v) * own[v];
      shares += own[v];
    }
    EXPECT_NEAR(shares, 1, 1e-6);
    EXPECT_NEAR(mean, d.mean(), 0.01) << "the sketch holds the definition's time at each percent";
    // Its mean is the GPU's trapezoid mean, to the bins' rounding (none for whole percents but at cuts).
    EXPECT_NEAR(mean, *f.util_pct, whole ? 0.1 : 0.51);
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
  EXPECT_GT(cut_series, 450u);
  EXPECT_LT(near_ties, compared / 50) << "near-ties are rare";
  EXPECT_LT(near_half, 10u) << "cuts that land on a rounding edge are rare";
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

// A stretch's end keeps its reading exactly: interpolated at its own time, 0.34 → 95.5 over these
// 1.96 s gave 95.49999999999999 (the product and quotient round), so the 95.5 % went to 95.
TEST(UtilOverTime, AStretchsEndIsItsReadingExactly) {
  GpuSeries g;
  constexpr std::int64_t span = 1'962'923'437;
  g.samples.push_back({0, kMissing, 0.34f});
  g.samples.push_back({span, kMissing, 95.5f});
  const auto p = percentiles_of_gpu(gpu_series_figures(g, 0, span));
  EXPECT_EQ(p.p10, 0);
  EXPECT_EQ(p.p90, 96);
}

TEST(UtilOverTime, PercentilesOfNoWeightAreNone) {
  EXPECT_FALSE(percentiles_of({}));
  EXPECT_FALSE(mean_of_shares(std::vector<const UtilHistogram*>{}));
  EXPECT_FALSE(mean_of_shares(std::vector<const SparseUtilHistogram*>{}));
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

// A run's histogram is held sparse (the bins with a value): it must give back every value bit for
// bit (-0, NaN and subnormals too), hold only those bins, and pool like the dense ones.
TEST(UtilOverTime, ASparseHistogramGivesBackTheSameBinsBitForBit) {
  std::mt19937_64 rng(17);
  const float odd[] = {-0.0f, std::nanf(""), 1e-42f, 1.0f, 0.25f};
  std::vector<UtilHistogram> dense_ones;
  std::vector<SparseUtilHistogram> sparse_ones;
  for (int seed = 0; seed < 500; ++seed) {
    UtilHistogram h{};
    const double fill = std::uniform_real_distribution<double>(0, 1)(rng);  // from none to every bin
    std::size_t set = 0;
    for (std::size_t v = 0; v < kUtilBins; ++v)
      if (std::uniform_real_distribution<double>(0, 1)(rng) < fill) {
        h[v] = seed % 7 == 0 ? odd[v % 5] : std::uniform_real_distribution<float>(0, 1)(rng);
        set += std::bit_cast<std::uint32_t>(h[v]) != 0;
      }
    const SparseUtilHistogram sparse = SparseUtilHistogram::of(h);
    EXPECT_EQ(sparse.values.size(), set) << "seed " << seed;
    const UtilHistogram back = sparse.dense();
    for (std::size_t v = 0; v < kUtilBins; ++v)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(back[v]), std::bit_cast<std::uint32_t>(h[v])) << "seed " << seed << " bin " << v;
    if (seed % 7) dense_ones.push_back(h), sparse_ones.push_back(sparse);
  }
  std::vector<const UtilHistogram*> dense_of;
  std::vector<const SparseUtilHistogram*> sparse_of;
  for (std::size_t i = 0; i < dense_ones.size(); ++i) dense_of.push_back(&dense_ones[i]), sparse_of.push_back(&sparse_ones[i]);
  const auto a = mean_of_shares(dense_of), b = mean_of_shares(sparse_of);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b) << "pooled the same, sparse or dense";
  // Values beyond those its bits name (a damaged copy) are never read past.
  SparseUtilHistogram short_one;
  short_one.filled = {~std::uint64_t{0}, ~std::uint64_t{0}};
  short_one.values = {0.5f};
  EXPECT_EQ(short_one.dense()[0], 0.5f);
  EXPECT_EQ(short_one.dense()[1], 0.0f);
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
    const UtilHistogram shares = r.gpu_util_time_share->dense();
    for (std::size_t v = 0; v < kUtilBins; ++v) mean += static_cast<double>(v) * shares[v];
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
  EXPECT_NE(csv.find("gpu_util_p10_pct,gpu_util_p50_pct,gpu_util_p90_pct,"), std::string::npos);
  EXPECT_NE(csv.find(",0,60,100,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace scalelens
