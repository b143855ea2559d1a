// GPU and host samples reduced as they are read (issue 17, part 2): a report made from the reduced series
// (figures over the run's window and a decimated chart) must say exactly what one made from every
// sample says. Checked over many generated run folders whose GPU logs have the shapes real ones
// have: windows that cut the samples anywhere, logger pauses, counters that reset or jump,
// missing columns, the same GPU in two sources (gpu.csv and an nvidia-smi log).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "ingest/ingest.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "support/gpu_study_writer.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using scalelens::testing::read_study;

using testing::ScratchDir;
using testing::GpuStudyShape;
using testing::write_gpu_study;

std::string diagnostics_text(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.code + ": " + d.message + " @ " + d.path + "\n";
  return s;
}

TEST(GpuReduction, ReducedSeriesGiveTheSameReportAsEverySampleOverManyGeneratedStudies) {
  std::size_t reduced_series = 0, host_energies = 0;
  std::set<std::string> codes;  // the warnings the generated studies met
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    ScratchDir dir;
    GpuStudyShape shape;
    shape.runs = 1 + static_cast<int>(rng() % 4);
    shape.gpus = 1 + static_cast<int>(rng() % 4);
    shape.nvsmi_too = rng() % 3 == 0;
    shape.vary_gpus = rng() % 2 == 0;
    shape.no_window = rng() % 3 == 0 ? 0.3 : 0;
    write_gpu_study(dir, rng, shape);

    const Study kept = read_study(dir, true), reduced = read_study(dir, false);
    ASSERT_EQ(kept.runs.size(), static_cast<std::size_t>(shape.runs));
    ASSERT_EQ(reduced.runs.size(), kept.runs.size());
    for (const auto& run : reduced.runs) {
      // Reduced where the run states its window; kept, for the analysis to reduce, where it does not.
      const bool window = run.start_ns && run.end_ns;
      for (const auto& h : run.host_series) {
        ASSERT_EQ(h.reduced.has_value(), window) << h.source;
        EXPECT_EQ(h.samples.empty(), window);
        if (window) host_energies += h.reduced->cpu_energy_j.has_value();
      }
      for (const auto& g : run.gpus) {
        ASSERT_EQ(g.reduced.has_value(), window) << g.source;
        EXPECT_EQ(g.samples.empty(), window || g.sample_count() == 0);
        EXPECT_GE(g.chart_points, 8u);
        EXPECT_LE(g.chart_points, kChartPointsPerSeries);
        if (window) EXPECT_LE(g.reduced->chart.size(), g.chart_points);
        reduced_series += window;
      }
    }
    EXPECT_EQ(diagnostics_text(reduced.diagnostics), diagnostics_text(kept.diagnostics));

    const Summary from_kept = analyze(kept, {}), from_reduced = analyze(reduced, {});
    EXPECT_EQ(render_summary_json(from_reduced), render_summary_json(from_kept));
    EXPECT_EQ(render_series_json(reduced, from_reduced), render_series_json(kept, from_kept));
    for (const auto& d : from_kept.warnings) codes.insert(d.code);
  }
  EXPECT_GT(reduced_series, 100u);
  EXPECT_GT(host_energies, 20u);
  // The shapes that take the figures' other paths were met.
  for (const char* code : {"energy-gaps", "implausible-value", "energy-double-counted", "coarse-sampling"})
    EXPECT_TRUE(codes.count(code)) << code;
}

// Charts share one point budget among all GPU files: a study of many long series, of 1 to 4 GPUs
// per run, some without a stated window, keeps about the budget in all, not every sample, and the
// report draws the same charts from them.
TEST(GpuReduction, ChartsShareOnePointBudgetAcrossFiles) {
  std::mt19937_64 rng(7);
  ScratchDir dir;
  GpuStudyShape shape;
  shape.runs = 100;
  shape.gpus = 4;
  shape.may_be_empty = false;
  shape.vary_gpus = true;
  shape.no_window = 0.2;
  std::size_t samples = 0;
  for (int tries = 0; tries < 5 && samples <= kGpuChartPointBudget; ++tries)
    samples = write_gpu_study(dir, rng, shape);  // the same folders, redrawn
  ASSERT_GT(samples, kGpuChartPointBudget);
  const Study reduced = read_study(dir, false), kept = read_study(dir, true);
  std::size_t points = 0, reduced_series = 0, shares = 0;
  for (const auto& run : reduced.runs)
    for (const auto& g : run.gpus) {
      shares += g.chart_points;
      if (g.reduced) points += g.reduced->chart.size(), ++reduced_series;
    }
  EXPECT_GT(reduced_series, 100u);
  EXPECT_LE(points, kGpuChartPointBudget);
  EXPECT_LE(shares, kGpuChartPointBudget);
  EXPECT_GT(shares, kGpuChartPointBudget * 9 / 10);
  const Summary from_kept = analyze(kept, {}), from_reduced = analyze(reduced, {});
  EXPECT_EQ(render_summary_json(from_reduced), render_summary_json(from_kept));
  EXPECT_EQ(render_series_json(reduced, from_reduced), render_series_json(kept, from_kept));
}

// Without a window stated before the samples are read (no start_ns/end_ns in scalelens.json), the
// samples are kept and reduced at analysis as before; and a caller may keep every sample.
TEST(GpuReduction, SamplesAreKeptWithoutAStatedWindowOrWhenAsked) {
  ScratchDir dir;
  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 1})");
  dir.write("run/nodes/n/gpu.csv",
            "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"
            "1000000000,0,GPU-a,50,,,100,,,\n2000000000,0,GPU-a,70,,,120,,,\n");
  const Study s = read_study(dir, false);
  ASSERT_EQ(s.runs.size(), 1u);
  ASSERT_EQ(s.runs[0].gpus.size(), 1u);
  EXPECT_FALSE(s.runs[0].gpus[0].reduced);
  EXPECT_EQ(s.runs[0].gpus[0].samples.size(), 2u);

  dir.write("run/scalelens.json", R"({"label": "ddp", "world_size": 1, "start_ns": 0, "end_ns": 3000000000})");
  const Study kept = read_study(dir, true);
  EXPECT_FALSE(kept.runs[0].gpus[0].reduced);
  EXPECT_EQ(kept.runs[0].gpus[0].samples.size(), 2u);
  const Study reduced = read_study(dir, false);
  ASSERT_TRUE(reduced.runs[0].gpus[0].reduced);
  EXPECT_EQ(reduced.runs[0].gpus[0].sample_count(), 2u);
  EXPECT_DOUBLE_EQ(*reduced.runs[0].gpus[0].reduced->figures.util_pct, 60);
}

// A reduced series answers only for the window it was reduced over: any other is a mistake in the
// program, said as one, never a figure over the wrong window.
TEST(GpuReduction, AReducedSeriesAskedAboutAnotherWindowIsAnInternalError) {
  GpuSeries g;
  g.source = "nodes/n/gpu.csv";
  for (int i = 0; i < 10; ++i) {
    GpuSample s;
    s.t_ns = i * 1'000'000'000LL;
    s.util_pct = 50;
    g.samples.push_back(s);
  }
  HostSeries h;
  h.source = "nodes/n/host.csv";
  h.samples.push_back({0, 10, 1e9, 1e6});
  h.samples.push_back({5'000'000'000, 10, 1e9, 2e6});
  reduce_gpu_series(g, 0, 9'000'000'000, 100);
  reduce_host_series(h, 0, 9'000'000'000);
  EXPECT_DOUBLE_EQ(*figures_of(g, 0, 9'000'000'000).util_pct, 50);
  EXPECT_DOUBLE_EQ(*host_series_energy_j(h, 0, 9'000'000'000), 1.0);
  EXPECT_THROW(figures_of(g, 0, 8'000'000'000), std::logic_error);
  EXPECT_THROW(host_series_energy_j(h, 1, 9'000'000'000), std::logic_error);
}

// A chart kept at reduction is drawn as kept when the page's share allows it, and decimated again
// (first, last and the extremes kept, nothing invented) when the share is smaller.
TEST(GpuReduction, AKeptChartLargerThanTheShareIsDecimatedAgain) {
  GpuSeries g;
  g.source = "nodes/n/gpu.csv";
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> util(0, 100), power(50, 400);
  for (int i = 0; i < 5000; ++i) {
    GpuSample s;
    s.t_ns = i * 100'000'000LL;
    s.util_pct = util(rng);
    s.power_w = power(rng);
    g.samples.push_back(s);
  }
  reduce_gpu_series(g, 0, 4999 * 100'000'000LL, 400);
  ASSERT_TRUE(g.reduced);
  const auto& kept = g.reduced->chart;
  ASSERT_GT(kept.size(), 100u);
  ASSERT_LE(kept.size(), 400u);
  auto same = [](const GpuChartPoint& a, const GpuChartPoint& b) {
    return a.t_ns == b.t_ns && a.util_pct == b.util_pct && a.power_w == b.power_w;
  };
  const auto whole = gpu_chart_points(g, kept.size());
  ASSERT_EQ(whole.size(), kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_TRUE(same(whole[i], kept[i])) << i;

  const auto fewer = gpu_chart_points(g, 40);
  ASSERT_LE(fewer.size(), 40u);
  ASSERT_GE(fewer.size(), 2u);
  EXPECT_TRUE(same(fewer.front(), kept.front()));
  EXPECT_TRUE(same(fewer.back(), kept.back()));
  std::size_t at = 0;  // every point is one of the kept chart's, in its order
  for (const auto& p : fewer) {
    while (at < kept.size() && !same(kept[at], p)) ++at;
    ASSERT_LT(at, kept.size()) << "a point not in the kept chart, or out of order, at t " << p.t_ns;
  }
  auto by_util = [](const GpuChartPoint& a, const GpuChartPoint& b) { return a.util_pct < b.util_pct; };
  auto by_power = [](const GpuChartPoint& a, const GpuChartPoint& b) { return a.power_w < b.power_w; };
  EXPECT_EQ(std::max_element(fewer.begin(), fewer.end(), by_util)->util_pct,
            std::max_element(kept.begin(), kept.end(), by_util)->util_pct);
  EXPECT_EQ(std::min_element(fewer.begin(), fewer.end(), by_power)->power_w,
            std::min_element(kept.begin(), kept.end(), by_power)->power_w);
}

}  // namespace
}  // namespace scalelens
