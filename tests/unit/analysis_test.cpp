// Every metric of DESIGN.md against a hand computation on a small study built in the test.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/analyze.hpp"
#include "report/summary_writers.hpp"
#include "support/test_support.hpp"

using namespace scalelens;

namespace {

constexpr std::int64_t kSec = 1'000'000'000;

Run make_run(std::string label, int p, std::vector<double> epoch_seconds, std::string id) {
  Run r;
  r.label = std::move(label);
  r.world_size = p;
  r.run_id = std::move(id);
  r.path = "/runs/" + r.run_id;
  std::int64_t t = 0;
  for (std::size_t e = 0; e < epoch_seconds.size(); ++e) {
    auto d = static_cast<std::int64_t>(epoch_seconds[e] * kSec);
    r.epochs.push_back(Interval{0, static_cast<std::int64_t>(e), t, t + d, std::nullopt});
    t += d;
  }
  r.start_ns = 0;
  r.end_ns = t;
  return r;
}

const ConfigurationSummary& config(const Summary& s, const std::string& label, int p) {
  auto it = std::find_if(s.configurations.begin(), s.configurations.end(),
                         [&](auto& c) { return c.label == label && c.world_size == p; });
  EXPECT_NE(it, s.configurations.end()) << label << "/" << p;
  return *it;
}

bool has_warning(const Summary& s, const std::string& code) {
  return std::any_of(s.warnings.begin(), s.warnings.end(), [&](auto& d) { return d.code == code; });
}

GpuSeries gpu(std::string node, int index, std::vector<std::pair<double, double>> t_power,
              std::vector<double> energy_mj = {}, std::vector<double> util = {}) {
  GpuSeries g;
  g.node = std::move(node);
  g.index = index;
  g.source = "gpu.csv";
  for (std::size_t i = 0; i < t_power.size(); ++i) {
    GpuSample s;
    s.t_ns = static_cast<std::int64_t>(t_power[i].first * kSec);
    s.power_w = static_cast<float>(t_power[i].second);
    if (i < energy_mj.size()) s.energy_mj = energy_mj[i];
    if (i < util.size()) s.util_pct = static_cast<float>(util[i]);
    g.samples.push_back(s);
  }
  return g;
}

}  // namespace

TEST(EpochTime, ExcludesWarmupEpochs) {
  Study st;
  st.runs.push_back(make_run("ddp", 1, {100, 10, 12}, "a"));
  auto s = analyze(st, {});
  const auto& c = config(s, "ddp", 1);
  ASSERT_TRUE(c.epoch_time_s);
  EXPECT_DOUBLE_EQ(c.epoch_time_s->mean, 11);  // (10 + 12) / 2; the 100 s warm-up epoch is out
  EXPECT_EQ(c.epoch_time_s->n, 2u);
  AnalysisOptions two;
  two.warmup_epochs = 2;
  EXPECT_DOUBLE_EQ(config(analyze(st, two), "ddp", 1).epoch_time_s->mean, 12);
}

TEST(EpochTime, IsTheSlowestRankOfEachEpoch) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {}, "a");
  r.epochs = {{0, 0, 0, 5 * kSec, {}}, {1, 0, 0, 6 * kSec, {}},        // warm-up
              {0, 1, 0, 10 * kSec, {}}, {1, 1, 1 * kSec, 13 * kSec, {}}};  // 10 s and 12 s: max is 12
  st.runs.push_back(r);
  AnalysisOptions o;
  auto s = analyze(st, o);
  EXPECT_DOUBLE_EQ(config(s, "ddp", 2).epoch_time_s->mean, 12);
}

TEST(EpochTime, SingleEpochRunKeepsItAndWarns) {
  Study st;
  st.runs.push_back(make_run("ddp", 1, {7}, "a"));
  auto s = analyze(st, {});
  EXPECT_DOUBLE_EQ(config(s, "ddp", 1).epoch_time_s->mean, 7);
  EXPECT_TRUE(has_warning(s, "warmup-not-excluded"));
}

TEST(EpochTime, PooledOverRepeatsWithConfidenceInterval) {
  Study st;
  st.runs.push_back(make_run("ddp", 4, {99, 10, 11}, "a"));
  st.runs.push_back(make_run("ddp", 4, {99, 12, 13}, "b"));
  st.runs.push_back(make_run("ddp", 4, {99, 10, 10}, "c"));
  auto s = analyze(st, {});
  const auto& c = config(s, "ddp", 4);
  // Pooled: 10 11 12 13 10 10 → mean 11, median 10.5
  EXPECT_DOUBLE_EQ(c.epoch_time_s->mean, 11);
  EXPECT_DOUBLE_EQ(c.epoch_time_s->median, 10.5);
  EXPECT_EQ(c.runs, 3u);
  EXPECT_FALSE(has_warning(s, "few-repeats"));
  EXPECT_TRUE(has_warning(s, "high-variation"));  // std 1.265 / 11 = 11.5% > 5%
}

TEST(Throughput, FromSamplesColumnSummedOverRanks) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {}, "a");
  r.epochs = {{0, 0, 0, 4 * kSec, 100.0}, {1, 0, 0, 4 * kSec, 100.0},
              {0, 1, 4 * kSec, 8 * kSec, 100.0}, {1, 1, 4 * kSec, 9 * kSec, 150.0}};
  st.runs.push_back(r);
  auto s = analyze(st, {});
  // Epoch 1 kept: 250 samples in max(4, 5) = 5 s → 50 samples/s; per GPU 25.
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 2).throughput_samples_per_s, 50);
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 2).throughput_per_gpu, 25);
}

TEST(Throughput, FromSamplesPerEpochElseBatchTimesSteps) {
  Study st;
  scalelens::Run a = make_run("x", 1, {1, 2, 2}, "a");
  a.samples_per_epoch = 1000;  // 1000 / 2 s
  scalelens::Run b = make_run("y", 1, {}, "b");
  b.global_batch_size = 32;
  for (int i = 0; i < 10; ++i) b.steps.push_back({0, i, i * kSec / 2, (i + 1) * kSec / 2, {}});
  st.runs = {a, b};
  auto s = analyze(st, {});
  EXPECT_DOUBLE_EQ(*config(s, "x", 1).throughput_samples_per_s, 500);
  EXPECT_DOUBLE_EQ(*config(s, "y", 1).throughput_samples_per_s, 64);  // 32 × 10 steps / 5 s
}

TEST(Throughput, MissingSamplesCountIsNamedNotGuessed) {
  Study st;
  st.runs.push_back(make_run("ddp", 1, {1, 2}, "a"));
  auto s = analyze(st, {});
  EXPECT_FALSE(config(s, "ddp", 1).throughput_samples_per_s);
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "missing-figure"; });
  ASSERT_NE(it, s.warnings.end());
  EXPECT_NE(it->message.find("throughput not computed for ddp/1"), std::string::npos) << it->message;
}

TEST(Speedup, StrongScalingPerLabelBaselineAndKarpFlatt) {
  Study st;
  st.runs.push_back(make_run("ddp", 1, {9, 100}, "a"));
  st.runs.push_back(make_run("ddp", 4, {9, 40}, "b"));
  st.runs.push_back(make_run("hvd", 2, {9, 30}, "c"));
  st.runs.push_back(make_run("hvd", 8, {9, 10}, "d"));
  auto s = analyze(st, {});
  const auto& d4 = config(s, "ddp", 4);
  EXPECT_DOUBLE_EQ(*d4.speedup, 2.5);        // 100 / 40
  EXPECT_DOUBLE_EQ(*d4.ideal_speedup, 4);
  EXPECT_DOUBLE_EQ(*d4.efficiency, 0.625);   // 2.5 × 1 / 4
  EXPECT_NEAR(*d4.karp_flatt, 0.2, 1e-12);   // (1/2.5 − 1/4) / (1 − 1/4) = 0.15 / 0.75
  const auto& h8 = config(s, "hvd", 8);
  EXPECT_DOUBLE_EQ(*h8.speedup, 3);          // 30 / 10, against hvd's own 2 GPUs
  EXPECT_DOUBLE_EQ(*h8.ideal_speedup, 4);
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 1).speedup, 1);
  EXPECT_FALSE(config(s, "ddp", 1).karp_flatt);  // defined for p > p0 only
  EXPECT_EQ(s.baseline, "per-label");
}

TEST(Speedup, CommonBaselineIsFastestLabelAtSmallestGpuCount) {
  Study st;
  st.runs.push_back(make_run("ddp", 2, {9, 50}, "a"));
  st.runs.push_back(make_run("hvd", 2, {9, 40}, "b"));
  st.runs.push_back(make_run("ddp", 8, {9, 20}, "c"));
  AnalysisOptions o;
  o.baseline = BaselineKind::common;
  auto s = analyze(st, o);
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 8).speedup, 2);     // 40 (hvd at 2) / 20
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 2).speedup, 0.8);   // 40 / 50
  EXPECT_EQ(config(s, "ddp", 8).baseline_label, "hvd");
  EXPECT_EQ(s.baseline, "common");
}

TEST(Speedup, BaselineGpusFixesP0) {
  Study st;
  st.runs.push_back(make_run("ddp", 1, {9, 100}, "a"));
  st.runs.push_back(make_run("ddp", 2, {9, 60}, "b"));
  st.runs.push_back(make_run("ddp", 4, {9, 30}, "c"));
  AnalysisOptions o;
  o.baseline_gpus = 2;
  auto s = analyze(st, o);
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 4).speedup, 2);  // 60 / 30
  EXPECT_DOUBLE_EQ(*config(s, "ddp", 4).ideal_speedup, 2);
  EXPECT_EQ(s.baseline, "2");
  o.baseline_gpus = 3;
  EXPECT_TRUE(has_warning(analyze(st, o), "no-baseline"));
}

TEST(Speedup, WeakScalingDetectedFromBatchGrowingWithGpus) {
  Study st;
  scalelens::Run a = make_run("ddp", 1, {9, 10}, "a");
  a.global_batch_size = 64;
  a.samples_per_epoch = 6400;   // 640 samples/s
  scalelens::Run b = make_run("ddp", 4, {9, 12}, "b");
  b.global_batch_size = 256;
  b.samples_per_epoch = 25600;  // 2133.3 samples/s
  st.runs = {a, b};
  auto s = analyze(st, {});
  EXPECT_EQ(s.scaling, "weak");
  const auto& c = config(s, "ddp", 4);
  EXPECT_NEAR(*c.speedup, (25600.0 / 12) / 640, 1e-9);  // X(4) / X(1) = 3.333
  EXPECT_NEAR(*c.efficiency, 3.3333333333 / 4, 1e-9);
  EXPECT_FALSE(has_warning(s, "batch-changed"));
}

TEST(Speedup, StrongCurveWithChangedBatchIsFlagged) {
  Study st;
  scalelens::Run a = make_run("deepcam", 512, {9, 8.8}, "a");
  a.global_batch_size = 1024;
  scalelens::Run b = make_run("deepcam", 2048, {9, 3.3}, "b");
  b.global_batch_size = 2048;
  st.runs = {a, b};
  auto s = analyze(st, {});
  EXPECT_EQ(s.scaling, "strong");  // batch grew, but not in proportion to the GPUs
  EXPECT_TRUE(has_warning(s, "batch-changed"));
  EXPECT_NEAR(*config(s, "deepcam", 2048).speedup, 8.8 / 3.3, 1e-9);
}

TEST(GpuUtilization, IsTimeWeightedOverTheRun) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");  // run 0..10 s
  // Samples at 0 s (0%), 1 s (100%), 10 s (100%): trapezoids 0.5·1 + 1·9 = 9.5 %·s... over 10 s = 95%,
  // where a plain mean of samples would say 66.7%.
  r.gpus.push_back(gpu("n0", 0, {{0, 0}, {1, 0}, {10, 0}}, {}, {0, 100, 100}));
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(config(s, "ddp", 1).gpu_util_pct->mean, 95, 1e-4);
}

TEST(Energy, TrapezoidOverRealTimestampsInsideTheRun) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");
  r.start_ns = 2 * kSec;
  r.end_ns = 8 * kSec;
  // Power 100 W at 0 s rising to 200 W at 10 s; sampled unevenly. Inside [2, 8] s: mean 150 W × 6 s = 900 J.
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {1, 110}, {5, 150}, {10, 200}}));
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 900, 1e-3);
  EXPECT_NEAR(*config(s, "ddp", 1).energy_wh, 0.25, 1e-6);
  EXPECT_EQ(s.runs[0].energy_from, "power");
}

TEST(Energy, PrefersCounterOverPowerAndHandlesReset) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");
  // Power says 100 W × 10 s = 1000 J, the counter says 5000 J (it is the better instrument).
  // Counter (mJ): 1e6, 3e6, reset to 0, 1e6, 4e6 → +2e6 + (0) + 1e6 + 3e6 = 6e6 mJ... the reset
  // loses nothing: 3e6 → 0 counts as a restart, so the span is 2e6 + 0 + 1e6 + 3e6 = 6e6 mJ = 6000 J.
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {2, 100}, {4, 100}, {6, 100}, {10, 100}}, {1e6, 3e6, 0, 1e6, 4e6}));
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 6000, 1e-6);
  EXPECT_EQ(s.runs[0].energy_from, "counter");
}

TEST(Energy, SumsGpusOfAllNodesAndPerSample) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {10}, "a");
  r.samples_per_epoch = 100;
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));  // 1000 J
  r.gpus.push_back(gpu("n1", 0, {{0, 200}, {10, 200}}));  // 2000 J (same index, other node)
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 3000, 1e-6);
  EXPECT_NEAR(*s.runs[0].energy_j_per_sample, 30, 1e-9);  // 3000 J / (100 samples × 1 epoch)
}

TEST(Energy, SameGpuFromTwoSourcesIsCountedOnceAndFlagged) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));
  auto copy = gpu("n0", 0, {{0, 100}, {10, 100}});
  copy.source = "nvidia-smi.csv";
  r.gpus.push_back(copy);
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 1000, 1e-6);
  EXPECT_TRUE(has_warning(s, "energy-double-counted"));
}

// A GPU known by node and index only (an nvidia-smi log queried without uuid) where the node's
// other sources give that index two UUIDs (gpu.csv of one node folder holding two GPUs' index 0,
// as when two nodes' files were put under one): which it is cannot be told. Counted apart, said.
TEST(Energy, AnIndexOnlyGpuWhoseIndexHasTwoUuidsIsSaid) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {10}, "a");
  auto a = gpu("n0", 0, {{0, 100}, {10, 100}});
  a.uuid = "GPU-6b1a0f0e-5b7c-9c33-5f0a-2a8d1c4e9f01";
  auto b = gpu("n0", 0, {{0, 100}, {10, 100}});
  b.uuid = "GPU-0d3c7a52-81e4-4f0b-a9c6-5e2f7b1d8c02";
  auto by_index = gpu("n0", 0, {{0, 100}, {10, 100}});
  by_index.source = "nodes/n0/nvsmi.log";
  r.gpus = {a, b, by_index};
  st.runs.push_back(r);
  const auto s = analyze(st, {});
  EXPECT_EQ(s.runs[0].gpus, 3u);
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](const auto& w) { return w.code == "energy-double-counted"; });
  ASSERT_NE(it, s.warnings.end());
  EXPECT_NE(it->message.find("which GPU it is cannot be told"), std::string::npos) << it->message;
  EXPECT_EQ(it->path, "nodes/n0/nvsmi.log");
}

// nvidia-smi's log of one node rotated (nvsmi.log, then nvsmi.log.1) or its logger restarted: one
// GPU's samples in two files one after the other. Counted as "two sources", the second was dropped
// and the energy halved, with a warning that said they were the same samples.
TEST(Energy, OneGpusLogInTwoFilesOneAfterTheOtherIsOneSeries) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {20}, "a");  // the run: 0 to 20 s
  auto first = gpu("n0", 0, {{0, 100}, {10, 100}}, {}, {90, 90});
  first.source = "nodes/n0/nvsmi.log";
  auto second = gpu("n0", 0, {{10.5, 300}, {20, 300}}, {}, {50, 50});
  second.source = "nodes/n0/nvsmi.log.1";
  r.gpus = {first, second};
  st.runs.push_back(r);
  const auto s = analyze(st, {});
  EXPECT_FALSE(has_warning(s, "energy-double-counted"));
  ASSERT_TRUE(s.runs[0].energy_j);
  EXPECT_NEAR(*s.runs[0].energy_j, 100 * 10 + 300 * 9.5 + 0.5 * 200, 1e-6) << "both stretches, and the half-second between";
  ASSERT_TRUE(s.runs[0].gpu_util_pct);
  EXPECT_NEAR(s.runs[0].gpu_util_pct->mean, (90 * 10 + 50 * 9.5) / 19.5, 1e-9) << "time-weighted over both";
  EXPECT_EQ(s.runs[0].gpus, 1u);
  // Files 60 s apart, 10 s steps: the time between them is a gap (over 5 steps): no energy, said.
  // 20 s apart it is two steps, integrated as within one series.
  auto two_files = [](double second_from) {
    Study st2;
    scalelens::Run r2 = make_run("ddp", 1, {second_from + 20}, "b");  // the run ends with the second file
    auto early = gpu("n0", 0, {{0, 100}, {10, 100}, {20, 100}});
    early.source = "nodes/n0/gpu.csv";
    auto late = gpu("n0", 0, {{second_from, 100}, {second_from + 10, 100}, {second_from + 20, 100}});
    late.source = "nodes/n0/gpu2.csv";
    r2.gpus = {early, late};
    st2.runs.push_back(r2);
    return analyze(st2, {});
  };
  const auto far = two_files(80);
  EXPECT_NEAR(*far.runs[0].energy_j, 4000, 1e-6);
  ASSERT_TRUE(has_warning(far, "energy-gaps"));
  for (const auto& w : far.warnings)
    if (w.code == "energy-gaps") EXPECT_NE(w.message.find("60.0 s of GPU time"), std::string::npos) << w.message;
  const auto near = two_files(40);
  EXPECT_NEAR(*near.runs[0].energy_j, 6000, 1e-6);
  EXPECT_FALSE(has_warning(near, "energy-gaps"));
}

// A GPU's energy counter (gpu.csv's energy_mj, NVML's total energy) in a log split over files that
// do not overlap in time. The counter goes on across the stretch between them: its gain there is
// that stretch's measured energy, as within one file (it was left out as a gap, or stepped over
// from power). Files taken in time order whatever order they come in (nvsmi.log, the newest,
// before nvsmi.log.1). A counter that went back (a reboot) is not used across the stretch.
TEST(Energy, ACounterThatGoesOnAcrossRotatedFilesMeasuresTheStretchBetween) {
  // 100 W: the counter gains 1e6 mJ every 10 s.
  auto piece = [](const std::string& source, double from, double to, double counter_at_from) {
    std::vector<std::pair<double, double>> t_power;
    std::vector<double> counter;
    for (double t = from; t <= to; t += 10) t_power.emplace_back(t, 100), counter.push_back(counter_at_from + (t - from) * 1e5);
    auto g = gpu("n0", 0, t_power, counter);
    g.source = source;
    return g;
  };
  auto energy = [](std::vector<GpuSeries> pieces, double run_s, bool* gaps) {
    Study st;
    scalelens::Run r = make_run("ddp", 1, {run_s}, "a");
    r.gpus = std::move(pieces);
    st.runs.push_back(r);
    const auto s = analyze(st, {});
    if (gaps) *gaps = has_warning(s, "energy-gaps");
    EXPECT_FALSE(has_warning(s, "energy-double-counted"));
    return s.runs[0].energy_j.value_or(-1);
  };
  // Three files, 0–30 s, 40–60 s and 80–100 s, the counter going on: 100 W over the whole 100 s.
  bool gaps = true;
  EXPECT_NEAR(energy({piece("nvsmi.log", 80, 100, 8e6), piece("nvsmi.log.2", 0, 30, 0), piece("nvsmi.log.1", 40, 60, 4e6)}, 100, &gaps),
              10000, 1e-6);
  EXPECT_FALSE(gaps) << "the counter measured the stretches between the files";
  // The run ends 20 s into the 50 s between two files: the counter's gain there, 5e6 mJ, counts
  // for the 20 s inside (2e6 mJ), on top of the 3e6 mJ of the first file.
  EXPECT_NEAR(energy({piece("gpu.csv", 0, 30, 0), piece("gpu.1.csv", 80, 100, 8e6)}, 50, &gaps), 5000, 1e-6);
  EXPECT_FALSE(gaps);
  // A reboot between the files: the second's counter starts from 5e5 mJ, below the first's last
  // 3e6. Its gain is not used: the 60 s between are a gap (over 5 steps), left out and said; 10 s
  // between are a step, integrated from power (100 W) as within one file.
  EXPECT_NEAR(energy({piece("gpu.csv", 0, 30, 0), piece("gpu.1.csv", 90, 100, 5e5)}, 100, &gaps), 3000 + 1000, 1e-6);
  EXPECT_TRUE(gaps);
  EXPECT_NEAR(energy({piece("gpu.csv", 0, 30, 0), piece("gpu.1.csv", 40, 100, 5e5)}, 100, &gaps), 3000 + 1000 + 6000, 1e-6);
  EXPECT_FALSE(gaps);
}

// nvidia-smi's power.draw read "[GPU is lost]" from some sample on while the log went on: the
// energy stopped there (a third of the run's), unsaid. That time is now left out as a gap is.
TEST(Energy, PowerReadingsThatStopWhileTheLogGoesOnAreSaid) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {30}, "a");
  std::vector<std::pair<double, double>> t_power;
  std::vector<double> util;
  for (int t = 0; t <= 30; ++t) t_power.emplace_back(t, t <= 10 ? 100.0 : std::nan("")), util.push_back(50);
  r.gpus.push_back(gpu("n0", 0, t_power, {}, util));
  st.runs.push_back(r);
  const auto s = analyze(st, {});
  ASSERT_TRUE(s.runs[0].energy_j);
  EXPECT_NEAR(*s.runs[0].energy_j, 1000, 1e-6);
  ASSERT_TRUE(has_warning(s, "energy-gaps"));
  for (const auto& w : s.warnings)
    if (w.code == "energy-gaps") EXPECT_NE(w.message.find("20.0 s of GPU time"), std::string::npos) << w.message;
}

// A node's log copied under another node's folder: the same UUIDs twice made 8 GPUs and twice the
// energy of a 4-GPU run, with no warning.
TEST(Energy, OneUuidUnderTwoNodesIsOneGpu) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");
  auto g = gpu("node00", 0, {{0, 100}, {10, 100}});
  g.uuid = "GPU-6b1a0f0e-5b7c-9c33-5f0a-2a8d1c4e9f01";
  r.gpus.push_back(g);
  auto copy = g;
  copy.node = "node09";
  copy.source = "nodes/node09/gpu.csv";
  r.gpus.push_back(copy);
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 1000, 1e-6);
  EXPECT_EQ(s.runs[0].energy_gpus, 1u);
  EXPECT_TRUE(has_warning(s, "energy-double-counted"));
}

// nvidia-smi logs every GPU of a node unless told -i: a 1-GPU run on a 4-GPU node read 24% busy
// and drew its idle neighbours' power, unwarned. Fewer GPUs than the world size, or a GPU whose
// power reads [Not Supported] throughout, left energy out, unwarned.
TEST(Energy, GpusOtherThanTheRunsAreSaid) {
  auto one_run = [](int world, int logged, bool second_without_power) {
    Study st;
    scalelens::Run r = make_run("ddp", world, {10}, "a");
    for (int i = 0; i < logged; ++i) {
      const double w = i == 1 && second_without_power ? std::nan("") : 100.0;
      r.gpus.push_back(gpu("n0", i, {{0, w}, {10, w}}, {}, {i == 0 ? 95.0 : 0.0, i == 0 ? 95.0 : 0.0}));
    }
    st.runs.push_back(r);
    return analyze(st, {});
  };
  const auto beyond = one_run(1, 4, false);
  EXPECT_TRUE(has_warning(beyond, "gpus-beyond-world-size"));
  EXPECT_FALSE(has_warning(beyond, "energy-from-some-gpus"));
  const auto fewer = one_run(4, 2, false);
  EXPECT_TRUE(has_warning(fewer, "energy-from-some-gpus"));
  const auto not_supported = one_run(2, 2, true);
  EXPECT_TRUE(has_warning(not_supported, "energy-from-some-gpus"));
  EXPECT_NEAR(*not_supported.runs[0].energy_j, 1000, 1e-6);
  const auto matched = one_run(2, 2, false);
  EXPECT_FALSE(has_warning(matched, "gpus-beyond-world-size"));
  EXPECT_FALSE(has_warning(matched, "energy-from-some-gpus"));
}

// An nvidia-smi log stamped in the node's local time (UTC+2) beside a run folder in UTC: no sample
// inside the run, which was said as "only 0 samples: sample more often".
TEST(Energy, SamplesOnlyOutsideTheRunAreSaidAsSuch) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {10}, "a");
  r.gpus.push_back(gpu("n0", 0, {{7200, 100}, {7201, 100}, {7210, 100}}));
  st.runs.push_back(r);
  const auto s = analyze(st, {});
  EXPECT_FALSE(s.runs[0].energy_j);
  EXPECT_FALSE(has_warning(s, "coarse-sampling"));
  ASSERT_TRUE(has_warning(s, "gpu-samples-outside-run"));
  for (const auto& w : s.warnings)
    if (w.code == "gpu-samples-outside-run") EXPECT_NE(w.message.find("begins 2.00 h after the run's start"), std::string::npos) << w.message;
  // One GPU of two outside: that one is named (the first in order was), and the other's sampling
  // is still judged.
  Study two;
  scalelens::Run r2 = make_run("ddp", 2, {10}, "b");
  auto inside = gpu("n0", 0, {{0, 100}, {5, 100}, {10, 100}});
  inside.uuid = "GPU-a";
  auto later = gpu("n0", 1, {{7200, 100}, {7201, 100}, {7210, 100}});
  later.uuid = "GPU-b";
  r2.gpus = {inside, later};
  two.runs.push_back(r2);
  const auto s2 = analyze(two, {});
  for (const auto& w : s2.warnings)
    if (w.code == "gpu-samples-outside-run")
      EXPECT_NE(w.message.find("1 of 2 GPUs have samples, none inside the run (GPU GPU-b of node 'n0' begins 2.00 h after"),
                std::string::npos) << w.message;
  EXPECT_TRUE(has_warning(s2, "gpu-samples-outside-run"));
  EXPECT_TRUE(has_warning(s2, "coarse-sampling")) << "GPU-a's 3 samples";
}

// MLflow power readings that all carry one timestamp gave no energy and no reason.
TEST(Energy, PowerReadingsAtOneInstantAreSaidToGiveNoEnergy) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {10}, "a");
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));                 // 1000 J
  r.gpus.push_back(gpu("n0", 1, {{5, 300}, {5, 310}, {5, 320}}));        // one instant: none
  r.gpus.back().source = "metrics/gpu_power_W";
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_NEAR(*s.runs[0].energy_j, 1000, 1e-6);
  EXPECT_EQ(s.runs[0].energy_gpus, 1u);
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "energy-no-time"; });
  ASSERT_NE(it, s.warnings.end());
  EXPECT_EQ(it->path, "metrics/gpu_power_W");
  EXPECT_NE(it->message.find("1 GPU left out of the energy: its power readings inside the run lie at one instant "
                             "(GPU 1 of node 'n0': 3 readings)"),
            std::string::npos)
      << it->message;
  // Readings spread over time, or none at all, say nothing.
  Study fine;
  fine.runs.push_back(make_run("ddp", 1, {10}, "b"));
  fine.runs[0].gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));
  fine.runs[0].gpus.push_back(gpu("n0", 1, {}, {}, {}));
  EXPECT_FALSE(has_warning(analyze(fine, {}), "energy-no-time"));
}

TEST(Warnings, CoarseSamplingFewRepeatsMissingRanksAndNodes) {
  Study st;
  scalelens::Run r = make_run("ddp", 4, {10, 10}, "a");
  r.nodes = 2;
  r.gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));
  r.ranks.push_back({0, "n0", 0, {}, {}, {}, 0, "ranks/0.json"});
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_TRUE(has_warning(s, "coarse-sampling"));
  EXPECT_TRUE(has_warning(s, "few-repeats"));
  EXPECT_TRUE(has_warning(s, "missing-ranks"));
  EXPECT_TRUE(has_warning(s, "missing-nodes"));
}

// Dell's MLPerf GNN runs stop at epoch 1.0 in some runs and before it in others: the epoch time was
// then the slower runs' alone, unsaid.
TEST(Warnings, AnEpochTimeFromSomeRunsOnlyIsSaid) {
  Study st;
  scalelens::Run a = make_run("ddp", 4, {10, 10}, "a");
  scalelens::Run b = make_run("ddp", 4, {}, "b");
  b.end_ns = 15 * kSec;  // converged before its first epoch ended
  scalelens::Run c = make_run("ddp", 4, {12, 12}, "c");
  st.runs = {a, b, c};
  auto s = analyze(st, {});
  EXPECT_DOUBLE_EQ(config(s, "ddp", 4).epoch_time_s->mean, 11);
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "epochs-from-some-runs"; });
  ASSERT_NE(it, s.warnings.end());
  EXPECT_NE(it->message.find("its epoch time comes from 2 of its 3 runs: 1 run (/runs/b) logged no whole epoch"),
            std::string::npos)
      << it->message;
  st.runs = {a, c};
  EXPECT_FALSE(has_warning(analyze(st, {}), "epochs-from-some-runs"));
}

// A configuration's energy was the mean of the runs that measured one, without a word where another
// run had no GPU log (the study-assembly hunt, 2026-12-07).
TEST(Warnings, AnEnergyFromSomeRunsOnlyIsSaid) {
  Study st;
  scalelens::Run a = make_run("ddp", 1, {10}, "a");
  a.gpus.push_back(gpu("n0", 0, {{0, 100}, {10, 100}}));
  scalelens::Run b = make_run("ddp", 1, {10}, "b");  // no GPU log
  scalelens::Run c = make_run("ddp", 1, {10}, "c");
  c.gpus.push_back(gpu("n0", 0, {{0, 200}, {10, 200}}));
  st.runs = {a, b, c};
  auto s = analyze(st, {});
  ASSERT_TRUE(config(s, "ddp", 1).energy_wh);
  EXPECT_NEAR(*config(s, "ddp", 1).energy_wh, (1000.0 + 2000.0) / 2 / 3600, 1e-9);
  auto it = std::find_if(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "energy-from-some-runs"; });
  ASSERT_NE(it, s.warnings.end());
  EXPECT_NE(it->message.find("its energy comes from 2 of its 3 runs: 1 run (/runs/b) measured no GPU energy"), std::string::npos)
      << it->message;
  st.runs = {a, c};
  EXPECT_FALSE(has_warning(analyze(st, {}), "energy-from-some-runs"));
  st.runs = {b};  // none measured: no energy, nothing to qualify
  EXPECT_FALSE(has_warning(analyze(st, {}), "energy-from-some-runs"));
}

TEST(Warnings, RunsOfOneConfigurationThatDisagreeAreFlagged) {
  Study st;
  // Batch and GPU model differences split a configuration (configuration_identity_test.cpp);
  // node counts do not, and are flagged.
  scalelens::Run a = make_run("ddp", 4, {10, 10}, "a");
  a.nodes = 1;
  scalelens::Run b = make_run("ddp", 4, {10, 10}, "b");
  b.nodes = 2;
  st.runs = {a, b};
  auto s = analyze(st, {});
  auto n = std::count_if(s.warnings.begin(), s.warnings.end(), [](auto& d) { return d.code == "inconsistent-runs"; });
  EXPECT_EQ(n, 1);
}

TEST(Runs, UnknownWorldSizeIsLeftOutWithAReason) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {1, 1}, "a");
  r.world_size.reset();
  st.runs.push_back(r);
  auto s = analyze(st, {});
  EXPECT_TRUE(s.configurations.empty());
  EXPECT_TRUE(has_warning(s, "unknown-world-size"));
}

TEST(Breakdown, ComputationScoreFromExposedCommunication) {
  Study st;
  scalelens::Run r = make_run("ddp", 2, {1, 1}, "a");
  // Rank 0: comp 80, comm 40 of which 20 overlapped → exposed 20; rank 1: comp 70, comm 30, overlap 0.
  r.breakdown.push_back({0, "t0", 1, 120, 80, 40, 20, 20, 0, 100, 20, 120, {120}});
  r.breakdown.push_back({1, "t1", 1, 100, 70, 30, 0, 30, 0, 100, 0, 100, {100}});
  st.runs.push_back(r);
  auto s = analyze(st, {});
  const auto& c = config(s, "ddp", 2);
  EXPECT_NEAR(*c.computation_score, 150.0 / 200, 1e-12);  // 150 / (150 + 50)
  EXPECT_NEAR(*c.comp_comm_raw_share, 150.0 / 220, 1e-12);
  EXPECT_NEAR(*c.overlap_ratio, 20.0 / 70, 1e-12);
  EXPECT_NEAR(*c.exposed_comm_share, 50.0 / 220, 1e-12);
  EXPECT_NEAR(*c.straggler_spread, 20.0 / 110, 1e-12);     // (120 − 100) / 110
}

TEST(Warnings, MoreRanksThanCpusIsOversubscribed) {
  Study st;
  scalelens::Run r = make_run("mpi", 4, {1, 1}, "a");
  r.cpus_per_node = 2;
  st.runs.push_back(r);
  EXPECT_TRUE(has_warning(analyze(st, {}), "oversubscribed"));
  st.runs[0].cpus_per_node = 4;
  EXPECT_FALSE(has_warning(analyze(st, {}), "oversubscribed"));
}

TEST(Warnings, SameWarningOverRepeatsIsPrintedOnceWithItsCount) {
  Study st;
  for (const char* id : {"a", "b", "c"}) {
    scalelens::Run r = make_run("mpi", 4, {1, 1}, id);
    r.cpus_per_node = 2;
    st.runs.push_back(r);
  }
  const auto s = analyze(st, {});
  // summary.json keeps one per run; people read one line naming the first run and the count.
  EXPECT_EQ(std::count_if(s.warnings.begin(), s.warnings.end(), [](const auto& d) { return d.code == "oversubscribed"; }), 3);
  const std::string printed = scalelens::render_diagnostics(s);
  EXPECT_EQ(scalelens::testing::count_lines(printed, "[oversubscribed]"), 1u) << printed;
  EXPECT_NE(printed.find("mpi/4 (/runs/a and 2 more): 4 ranks per node on 2 logical CPUs"), std::string::npos) << printed;
  // Diagnostics about lines of a file stay apart even when they read the same.
  std::vector<scalelens::Diagnostic> lines = {{scalelens::Severity::warning, "bad-csv", "bad number", "f.csv", 3, {}},
                                              {scalelens::Severity::warning, "bad-csv", "bad number", "f.csv", 9, {}}};
  EXPECT_EQ(scalelens::fold_repeats(lines).size(), 2u);
}

TEST(Warnings, WrappersAroundALauncherAreCountedPerNodeNotPerRank) {
  Study st;
  scalelens::Run r = make_run("ddp", 8, {1, 1}, "a");
  r.format = "scalelens";
  r.ranks = {{0, "n0", {}, {}, {}, {}, {}, ""}};
  r.nodes = 1;
  st.runs.push_back(r);
  EXPECT_TRUE(has_warning(analyze(st, {}), "missing-ranks"));  // a rank-per-wrapper run: 1 of 8
  st.runs[0].launcher = "torchrun";                             // one wrapper around torchrun
  EXPECT_FALSE(has_warning(analyze(st, {}), "missing-ranks"));
  st.runs[0].nodes = 2;  // two nodes, one wrapper's record
  const auto s = analyze(st, {});
  ASSERT_TRUE(has_warning(s, "missing-ranks"));
  for (const auto& w : s.warnings)
    if (w.code == "missing-ranks") EXPECT_NE(w.message.find("1 of 2 nodes' wrappers (scalelens run around torchrun)"), std::string::npos) << w.message;
}

TEST(WorldSizeUnit, RanksOnlyWhenEveryRunIsKnownToHaveUsedNoGpu) {
  Study st;
  scalelens::Run r = make_run("mpi", 2, {1, 1}, "a");
  r.format = "scalelens";
  r.ranks = {{0, "n0", 0, {}, {}, {}, {}, ""}, {1, "n0", 1, {}, {}, {}, {}, ""}};
  st.runs.push_back(r);
  EXPECT_EQ(analyze(st, {}).world_size_unit, "ranks");
  st.runs[0].ranks[1].devices = {"GPU-1"};  // one rank was given a GPU
  EXPECT_EQ(analyze(st, {}).world_size_unit, "GPUs");
  st.runs[0].ranks[1].devices.clear();
  st.runs[0].breakdown.push_back({});  // a Kineto trace: a GPU job
  EXPECT_EQ(analyze(st, {}).world_size_unit, "GPUs");
  st.runs[0].breakdown.back().from_mpi = true;  // the MPI interposer sees CPU time only
  EXPECT_EQ(analyze(st, {}).world_size_unit, "ranks");
  scalelens::Run foreign = make_run("mlperf", 8, {1, 1}, "b");
  foreign.format = "mlperf";  // foreign logs say nothing of devices: GPUs
  st.runs.push_back(foreign);
  EXPECT_EQ(analyze(st, {}).world_size_unit, "GPUs");
}

// Where a rank's GPU work outlasts its steps (the GPU ran behind), its shares are of that span, as
// the page and the trace table take them: HTA's negative_queue_length_values_check trace gave an
// idle share of 1.383 otherwise.
TEST(Breakdown, SharesAreOfTheGpuSpanWhereItOutlastsTheSteps) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {1, 1}, "a");
  //             rank source       steps step  comp   comm  overlap exposed mem busy    idle    span
  RankBreakdown b{0, "trace.json", 1, 214.81, 62, 56.5, 0.5, 56, 15, 76, 297, 373, {214.81}};
  r.breakdown = {b};
  st.runs.push_back(r);
  const Summary summary = analyze(st, {});
  const auto& t = summary.runs[0].trace();
  ASSERT_TRUE(t.idle_share);
  EXPECT_NEAR(*t.idle_share, 297.0 / 373, 1e-12);
  EXPECT_NEAR(*t.exposed_comm_share, 56.0 / 373, 1e-12);
  // A span a little past the steps (3 %, short of "ran behind"'s 5 %) is still the whole: idle
  // (span − busy) was 101 % of the step time.
  auto& near = st.runs[0].breakdown[0];
  near.span_us = 1.03 * 214.81, near.busy_us = 4, near.idle_us = near.span_us - near.busy_us;
  EXPECT_NEAR(*analyze(st, {}).runs[0].trace().idle_share, near.idle_us / near.span_us, 1e-12);
  EXPECT_LE(*analyze(st, {}).runs[0].trace().idle_share, 1.0);
  // Steps that hold their GPU work keep their step time as the whole.
  near.span_us = 200, near.idle_us = 150;
  EXPECT_NEAR(*analyze(st, {}).runs[0].trace().idle_share, 150 / 214.81, 1e-12);
}

TEST(Breakdown, GpuTraceWinsOverMpiInterposerForTheSameRun) {
  Study st;
  scalelens::Run r = make_run("ddp", 1, {1, 1}, "a");
  RankBreakdown trace{0, "trace.json", 1, 100, 90, 10, 0, 10, 0, 100, 0, 100, {100}};
  RankBreakdown mpi{0, "comm/0.csv", 1, 100, 50, 50, 0, 50, 0, 0, 0, 100, {100}};
  mpi.from_mpi = true;
  r.breakdown = {mpi, trace};
  st.runs.push_back(r);
  EXPECT_NEAR(*analyze(st, {}).runs[0].trace().computation_score, 0.9, 1e-12);  // 90 / (90 + 10)
  st.runs[0].breakdown = {mpi};
  EXPECT_NEAR(*analyze(st, {}).runs[0].trace().computation_score, 0.5, 1e-12);  // 50 / (50 + 50)
}
