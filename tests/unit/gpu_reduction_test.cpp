// GPU and host samples reduced as they are read (issue 17, part 2): a report made from the reduced series
// (figures over the run's window and a decimated chart) must say exactly what one made from every
// sample says. Checked over many generated run folders whose GPU logs have the shapes real ones
// have: windows that cut the samples anywhere, logger pauses, counters that reset or jump,
// missing columns, the same GPU in two sources (gpu.csv and an nvidia-smi log).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "common/decimate.hpp"
#include "ingest/ingest.hpp"
#include "model/limits.hpp"
#include "report/output_folder.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "support/gpu_study_writer.hpp"
#include "support/read_study.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

using scalelens::testing::read_study;
using scalelens::testing::read_study_as_report;

using testing::ScratchDir;
using testing::GpuStudyShape;
using testing::write_gpu_study;

std::string diagnostics_text(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.code + ": " + d.message + " @ " + d.path + "\n";
  return s;
}

// A small study drawn from `seed` into `dir`: 1-4 runs of 1-4 GPUs, a third with an nvidia-smi log
// of the same GPUs, half of mixed GPU counts, a third with some runs stating no window.
GpuStudyShape write_drawn_study(const ScratchDir& dir, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  GpuStudyShape shape;
  shape.runs = 1 + static_cast<int>(rng() % 4);
  shape.gpus = 1 + static_cast<int>(rng() % 4);
  shape.nvsmi_too = rng() % 3 == 0;
  shape.vary_gpus = rng() % 2 == 0;
  shape.no_window = rng() % 3 == 0 ? 0.3 : 0;
  write_gpu_study(dir, rng, shape);
  return shape;
}

// One run folder of one GPU whose log holds samples.
void write_one_run_study(const ScratchDir& dir) {
  GpuStudyShape shape;
  shape.may_be_empty = false;
  std::mt19937_64 rng(5);
  write_gpu_study(dir, rng, shape);
}

TEST(GpuReduction, ReducedSeriesGiveTheSameReportAsEverySampleOverManyGeneratedStudies) {
  std::size_t reduced_series = 0, host_energies = 0;
  std::set<std::string> codes;  // the warnings the generated studies met
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    ScratchDir dir;
    const GpuStudyShape shape = write_drawn_study(dir, seed);

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

// `scalelens report` summarizes a run folder's GPU log as it is read (GpuDigest) where nothing read
// later can change the run's GPU figures, and holds no record per GPU (issue 17, part 2): its
// summary, warnings and page series must be those of the GPUs kept, byte for byte, over the same
// generated studies (windows cut anywhere, pauses, counter jumps, coarse sampling; folders with a
// second GPU log, the same GPUs in an nvidia-smi log, or no window, which keep their GPUs).
TEST(GpuReduction, GpuLogsSummarizedAsReadGiveTheSameReport) {
  std::size_t summarized = 0, kept_whole = 0, spilled = 0;
  std::set<std::string> codes;  // warnings the summarized runs gave
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    ScratchDir dir;
    const GpuStudyShape shape = write_drawn_study(dir, seed);

    // Every other study with its page series set aside in a temporary file, as the report does in
    // one process.
    const auto spill = seed % 2 ? nullptr : TextSpill::create();
    const Study kept = read_study(dir, true), as_report = read_study_as_report(dir, 2, spill);
    ASSERT_EQ(as_report.runs.size(), kept.runs.size());
    for (const auto& run : as_report.runs) {
      if (run.gpu_digest) {
        EXPECT_TRUE(run.gpus.empty()) << run.path;  // the records are let go
        EXPECT_EQ(run.gpu_digest->page_json.spill != nullptr, spill != nullptr) << run.path;
        spilled += run.gpu_digest->page_json.spill != nullptr;
        EXPECT_TRUE(run.start_ns && run.end_ns) << run.path;
        ++summarized;
      } else {
        kept_whole += !run.gpus.empty();
      }
    }
    EXPECT_EQ(diagnostics_text(as_report.diagnostics), diagnostics_text(kept.diagnostics));
    const Summary from_kept = analyze(kept, {}), from_report = analyze(as_report, {});
    EXPECT_EQ(render_summary_json(from_report), render_summary_json(from_kept));
    EXPECT_EQ(render_series_json(as_report, from_report), render_series_json(kept, from_kept));
    for (std::size_t i = 0; i < from_report.runs.size(); ++i)
      if (as_report.runs[i].gpu_digest)
        for (const auto& d : as_report.runs[i].gpu_digest->figures->warnings) codes.insert(d.code);
  }
  // Both ways were taken, and the summarized runs met the figures' warnings.
  EXPECT_GT(summarized, 40u);
  EXPECT_GT(kept_whole, 10u);
  EXPECT_GT(spilled, 15u);
  for (const char* code : {"energy-gaps", "implausible-value", "coarse-sampling"}) EXPECT_TRUE(codes.count(code)) << code;
}

// `scalelens report` analyses with analyze_releasing: each run lets go of its epochs and its GPUs'
// figures once summarized, a batch of runs at a time (issue 17, part 2). The summary, warnings and
// page series must be analyze()'s, byte for byte, and what only the summaries needed must be gone.
void expect_releasing_gives_the_same_report(const std::vector<std::string>& inputs, unsigned threads,
                                            std::size_t& released_epochs, std::size_t& released_digests,
                                            std::size_t* released_step_rows = nullptr, std::size_t* odd_lists = nullptr) {
  IngestOptions in{inputs, {}, 2, {}};
  const auto spill = TextSpill::create();  // as the report reads in one process
  in.summarize_gpus = [spill](const Run& run, RunData& log) { summarize_gpu_log(run, log, spill); };
  in.tabulate_epochs = true;
  in.tabulate_steps = true;
  const Study whole = ingest(in);
  Study releasing = ingest(in);
  AnalysisOptions options;
  options.threads = threads;
  const Summary expected = analyze(whole, options), got = analyze_releasing(releasing, options);
  EXPECT_EQ(render_summary_json(got), render_summary_json(expected));
  EXPECT_EQ(render_summary_csv(got), render_summary_csv(expected));
  EXPECT_EQ(render_series_json(releasing, got), render_series_json(whole, expected));
  // A summary's epoch and step times are held in blocks of their own size, not grown by doubling (a
  // study holds one list each per run): a list of 9 held 16 places.
  for (const auto& r : got.runs)
    for (const auto* times : {&r.epoch_times_s, &r.step_times_s}) {
      EXPECT_EQ(times->capacity(), times->size()) << r.path;
      if (odd_lists) *odd_lists += times->size() > 2 && (times->size() & (times->size() - 1)) != 0;  // doubling would leave room
    }
  ASSERT_EQ(releasing.runs.size(), whole.runs.size());
  for (std::size_t i = 0; i < whole.runs.size(); ++i) {
    const Run &before = whole.runs[i], &after = releasing.runs[i];
    if (!before.world_size) {  // not summarized: left as read
      EXPECT_EQ(after.epochs.size(), before.epochs.size());
      EXPECT_EQ(after.epoch_table.size(), before.epoch_table.size());
      continue;
    }
    EXPECT_TRUE(after.epochs.empty() && after.epoch_table.empty()) << before.path;
    // Its path goes too: its summary holds it (summary.json above says the same path).
    EXPECT_TRUE(after.path.empty()) << before.path;
    released_epochs += before.epochs.size() + before.epoch_table.size();
    // Its step rows go; the page's charts stay.
    ASSERT_EQ(static_cast<bool>(after.step_table), static_cast<bool>(before.step_table)) << before.path;
    if (after.step_table) {
      EXPECT_TRUE(after.step_table->slowest.empty()) << before.path;
      EXPECT_EQ(after.step_table->ranks.size(), before.step_table->ranks.size()) << before.path;
      if (released_step_rows) *released_step_rows += before.step_table->slowest.size();
    }
    ASSERT_EQ(static_cast<bool>(after.gpu_digest), static_cast<bool>(before.gpu_digest)) << before.path;
    if (!after.gpu_digest) continue;
    EXPECT_FALSE(after.gpu_digest->figures) << before.path;
    ASSERT_TRUE(before.gpu_digest->figures) << before.path;
    released_digests += before.gpu_digest->figures->util_pct.has_value();
  }
}

TEST(GpuReduction, ReleasingWhatSummariesTookGivesTheSameReport) {
  std::size_t epochs = 0, digests = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    ScratchDir dir;
    write_drawn_study(dir, seed);
    expect_releasing_gives_the_same_report({dir.path().string()}, 2, epochs, digests);
  }
  {
    // More runs than a batch (64 a thread): summaries made over several batches keep the study's order.
    SCOPED_TRACE("150 runs, one thread");
    ScratchDir dir;
    std::mt19937_64 rng(77);
    GpuStudyShape shape;
    shape.runs = 150;
    shape.vary_gpus = true;
    shape.gpus = 3;
    write_gpu_study(dir, rng, shape);
    expect_releasing_gives_the_same_report({dir.path().string()}, 1, epochs, digests);
  }
  {
    SCOPED_TRACE("toy study");  // its runs log their steps too (steps.csv)
    std::size_t step_rows = 0, odd_lists = 0;
    expect_releasing_gives_the_same_report({std::string(SCALELENS_SOURCE_DIR) + "/examples/toy-study"}, 2, epochs, digests,
                                           &step_rows, &odd_lists);
    EXPECT_GT(step_rows, 100u);
    EXPECT_GT(odd_lists, 0u);  // lists whose growth by doubling would have left room: the check above can fail
  }
  EXPECT_GT(epochs, 500u);
  EXPECT_GT(digests, 150u);
}

TEST(GpuReduction, ReleasingWhatSummariesTookGivesTheSameReportOnRealData) {
  SCALELENS_REQUIRE_REALDATA(data);
  std::size_t epochs = 0, digests = 0;
  for (const char* study : {"kineto", "mlperf-hpc-v1.0-deepcam"}) {
    SCOPED_TRACE(study);
    expect_releasing_gives_the_same_report({(data / study).string()}, 2, epochs, digests);
  }
  EXPECT_GT(epochs, 0u);  // MLPerf's epochs
}

// A study whose runs let go of their GPU figures cannot be summarized again: analysing it twice
// is a logic_error naming the run, raised to the caller from the analysis threads, not an end of
// the program.
TEST(GpuReduction, AnalysingAReleasedStudyAgainIsAnErrorNamingTheRun) {
  ScratchDir dir;
  write_one_run_study(dir);
  Study study = read_study_as_report(dir, 2, nullptr);
  ASSERT_EQ(study.runs.size(), 1u);
  AnalysisOptions options;
  options.threads = 2;
  (void)analyze_releasing(study, options);
  ASSERT_TRUE(study.runs[0].gpu_digest);
  ASSERT_FALSE(study.runs[0].gpu_digest->figures);
  try {
    (void)analyze(study, options);
    ADD_FAILURE() << "a released digest was summarized";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(study.runs[0].run_id), std::string::npos) << e.what();
  }
}

// A page series set aside in a temporary file that cannot be read back (the file lost its bytes)
// makes writing the report an error naming the page, which is not left half written.
TEST(GpuReduction, APageSeriesThatCannotBeReadBackIsAnErrorNamingThePage) {
  ScratchDir dir;
  write_one_run_study(dir);
  const auto spill = TextSpill::create();
  ASSERT_TRUE(spill);
  Study study = read_study_as_report(dir, 2, spill);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_TRUE(study.runs[0].gpu_digest && study.runs[0].gpu_digest->page_json.spill);
  auto lost = std::make_shared<GpuDigest>(*study.runs[0].gpu_digest);
  lost->page_json.place.offset += 1u << 30;
  study.runs[0].gpu_digest = lost;
  const Summary summary = analyze(study, {});
  ScratchDir out;
  const auto written = write_report_files(summary, study, out.path());
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find("cannot read back"), std::string::npos) << written.error().message;
  EXPECT_EQ(written.error().path, (out.path() / "report.html").string());
  for (const auto& entry : std::filesystem::directory_iterator(out.path()))  // nor a half-written one
    EXPECT_NE(entry.path().filename().string().rfind("report.html", 0), 0u) << entry.path();
}

// A run whose GPUs were summarized as they were read keeps its series as drawn then, with the
// default limits: asked for with others, the page refuses rather than drawing them wrong.
TEST(GpuReduction, SeriesSummarizedAsReadAreNotRedrawnToOtherLimits) {
  ScratchDir dir;
  write_one_run_study(dir);
  const Study study = read_study_as_report(dir);
  ASSERT_EQ(study.runs.size(), 1u);
  ASSERT_TRUE(study.runs[0].gpu_digest);
  const Summary summary = analyze(study, {});
  EXPECT_EQ(render_series_json(study, summary, SeriesLimits{}), render_series_json(study, summary));
  SeriesLimits fewer;
  fewer.max_points_per_series = 100;
  EXPECT_THROW(render_series_json(study, summary, fewer), std::logic_error);
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

// A GPU's figures are taken in one pass over its samples; they must be exactly what the metric
// definitions give when each is computed on its own from the samples' columns, written out here as
// DESIGN.md states them: the utilization's trapezoid integral clipped to the window, the counter
// unwrapped at resets between its first and last readings inside, the power integral with its gap
// rule where the counter is absent or jumps impossibly, the chart's first, last and per-bucket
// extremes; and for nominal (itwinai) timestamps, plain sums over every sample. Checked bit for bit
// over generated series with missing values, resets, impossible jumps, repeated and out-of-order
// times, and windows that cut them anywhere.
namespace definitions {

// ∫ v dt over [t0, t1] through consecutive samples with values, and the seconds covered; segments
// longer than max_gap_ns (when > 0) are skipped and their seconds inside counted instead.
Integral trapezoid(const std::vector<std::int64_t>& ts, const std::vector<double>& v, std::int64_t t0, std::int64_t t1,
                   std::int64_t max_gap_ns) {
  Integral r;
  std::optional<std::size_t> prev;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    if (std::isnan(v[k])) continue;
    if (prev && ts[k] > ts[*prev]) {
      const std::int64_t pt = ts[*prev], a = std::max(pt, t0), b = std::min(ts[k], t1);
      const double pv = v[*prev];
      if (b > a) {
        const double secs = static_cast<double>(b - a) * 1e-9;
        if (max_gap_ns > 0 && ts[k] - pt > max_gap_ns) {
          r.skipped_s += secs;
          r.longest_skipped_s = std::max(r.longest_skipped_s, secs);
        } else {
          const double span = static_cast<double>(ts[k] - pt);
          // Interpolated only at a cut: an end that is a sample's time is its reading.
          const double va = a == pt ? pv : pv + (v[k] - pv) * static_cast<double>(a - pt) / span;
          const double vb = b == ts[k] ? v[k] : pv + (v[k] - pv) * static_cast<double>(b - pt) / span;
          r.value += 0.5 * (va + vb) * secs;
          r.covered_s += secs;
        }
      }
    }
    prev = k;
  }
  return r;
}

// The chart's indices: first, last, and in each of the buckets between them the lowest and highest
// value of each series that has any (NaN never picked; a bucket of only NaN keeps its first).
std::vector<std::size_t> chart_indices(std::size_t n, std::size_t max_points, const std::vector<const std::vector<double>*>& series) {
  std::set<std::size_t> keep;
  if (n <= max_points) {
    for (std::size_t i = 0; i < n; ++i) keep.insert(i);
    return {keep.begin(), keep.end()};
  }
  const std::size_t buckets = std::max<std::size_t>((max_points - 2) / (2 * std::max<std::size_t>(series.size(), 1)), 1);
  keep.insert({0, n - 1});
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = 1 + (n - 2) * b / buckets, hi = 1 + (n - 2) * (b + 1) / buckets;
    if (lo >= hi) continue;
    if (series.empty()) keep.insert(lo);
    for (const auto* v : series) {
      std::optional<std::size_t> low, high;
      for (std::size_t i = lo; i < hi; ++i) {
        if (std::isnan((*v)[i])) continue;
        if (!low || (*v)[i] < (*v)[*low]) low = i;
        if (!high || (*v)[i] > (*v)[*high]) high = i;
      }
      keep.insert({low.value_or(lo), high.value_or(lo)});
    }
  }
  return {keep.begin(), keep.end()};
}

}  // namespace definitions

TEST(GpuReduction, OnePassFiguresEqualTheDefinitionsOverManyGeneratedSeries) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  auto same_float = [](float a, double b) { return std::isnan(a) ? std::isnan(b) : a == static_cast<float>(b); };
  std::size_t from_counter = 0, from_power = 0, impossible = 0, plain_mean = 0, decimated = 0, nominal = 0;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    const double missing = chance(0.3) ? 0.3 : 0;  // share of missing readings, per column
    GpuSeries g;
    g.source = "nodes/n/gpu.csv";
    g.nominal_timestamps = chance(0.1);
    const std::size_t n = rng() % 400;
    std::int64_t t = static_cast<std::int64_t>(rng() % 1'000'000'000);
    double counter = chance(0.5) ? kNaN : 1e6;
    for (std::size_t i = 0; i < n; ++i) {
      GpuSample s;
      t += chance(0.05) ? 0 : chance(0.05) ? -static_cast<std::int64_t>(rng() % 500'000'000)  // repeated, back in time
                          : chance(0.03) ? 30'000'000'000 : 100'000'000 + static_cast<std::int64_t>(rng() % 20'000'000);
      s.t_ns = t;
      if (!chance(missing)) s.util_pct = static_cast<float>(rng() % 1001) / 10.0f;
      if (!chance(missing)) s.power_w = static_cast<float>(rng() % 70000) / 100.0f;
      if (!chance(missing)) s.mem_used_bytes = static_cast<float>(rng() % 80'000'000'000ULL);
      if (!std::isnan(counter)) {
        counter = chance(0.005) ? static_cast<double>(rng() % 1000)                 // reset
                  : chance(0.001) ? counter + 1e12                                    // impossible
                                  : counter + static_cast<double>(rng() % 70'000);  // up to 700 W over 0.1 s
        if (!chance(missing)) s.energy_mj = counter;
      }
      g.samples.push_back(s);
    }
    const std::int64_t lo = g.samples.empty() ? 0 : g.samples.front().t_ns, hi = g.samples.empty() ? 0 : t;
    const std::int64_t span = std::max<std::int64_t>(hi - lo, 1);
    const std::int64_t t0 = lo - span / 10 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
    const std::int64_t t1 = chance(0.1) ? t0 : t0 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
    // Nominal times have no window: every sample counts.
    auto in_window = [&](std::int64_t x) { return g.nominal_timestamps || (x >= t0 && x <= t1); };

    std::vector<std::int64_t> ts;
    std::vector<double> util, power, mj;
    for (const auto& s : g.samples) ts.push_back(s.t_ns), util.push_back(s.util_pct), power.push_back(s.power_w), mj.push_back(s.energy_mj);
    std::size_t inside = 0, util_n = 0, power_n = 0;
    std::optional<double> peak;
    double spacing = 0, util_sum = 0, power_sum = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const bool in = in_window(ts[k]);
      inside += in;
      if (in && !std::isnan(g.samples[k].mem_used_bytes)) peak = std::max(peak.value_or(0.0), static_cast<double>(g.samples[k].mem_used_bytes));
      if (in && !std::isnan(util[k])) util_sum += util[k], ++util_n;
      if (!std::isnan(power[k])) power_sum += power[k], ++power_n;
      if (k > 0 && spacing == 0 && ts[k] > ts[k - 1]) spacing = static_cast<double>(ts[k] - ts[k - 1]) * 1e-9;
    }
    const Integral u = definitions::trapezoid(ts, util, t0, t1, 0);
    std::optional<std::size_t> bad;  // the first counter reading that rose more than a GPU can draw
    for (std::size_t k = 0, prev = n; k < n && !bad; ++k) {
      if (std::isnan(mj[k])) continue;
      if (prev < n && (mj[k] >= mj[prev] ? mj[k] - mj[prev] : mj[k]) > limits::max_counter_gain_mj(ts[k] - ts[prev])) bad = k;
      prev = k;
    }
    // The counter's readings, unwrapped at resets: those inside, and the nearest either side.
    std::vector<std::pair<std::int64_t, double>> inside_mj;
    std::optional<std::pair<std::int64_t, double>> before_mj, after_mj;
    std::pair<std::int64_t, double> moved_mj{0, kNaN};  // its last reading unlike the one before it
    double offset = 0;
    for (std::size_t k = 0, prev = n; k < n && !bad; ++k) {
      if (std::isnan(mj[k])) continue;
      if (prev < n && mj[k] < mj[prev]) offset += mj[prev];
      if (prev == n || mj[k] != mj[prev]) moved_mj = {ts[k], mj[k] + offset};
      prev = k;
      if (in_window(ts[k])) inside_mj.emplace_back(ts[k], mj[k] + offset);
      else if (ts[k] < t0) before_mj = {ts[k], mj[k] + offset};
      else if (!after_mj) after_mj = {ts[k], mj[k] + offset};
    }
    // The counter at t0 and t1 on the line between the readings either side (DESIGN.md: the energy
    // over the window, as the power integral cuts its segments there).
    auto counter_at = [](std::int64_t t, std::pair<std::int64_t, double> a, std::pair<std::int64_t, double> b) {
      return a.second + (b.second - a.second) * (static_cast<double>(t - a.first) / static_cast<double>(b.first - a.first));
    };
    const Integral p = definitions::trapezoid(ts, power, t0, t1, energy_gap_threshold_ns(ts, power));

    const std::size_t max_points = 8 + rng() % 60;
    reduce_gpu_series(g, t0, t1, max_points);
    ASSERT_TRUE(g.reduced);
    const GpuSeriesFigures& f = g.reduced->figures;
    EXPECT_EQ(f.samples_inside, inside);
    EXPECT_EQ(f.peak_mem_bytes, peak);
    EXPECT_EQ(f.spacing_s, spacing);
    if (g.nominal_timestamps) {
      ++nominal;
      EXPECT_EQ(f.util_pct, util_n ? std::optional<double>(util_sum / static_cast<double>(util_n)) : std::nullopt);
      EXPECT_EQ(f.power_sum_w, power_sum);
      EXPECT_EQ(f.power_samples, power_n);
      EXPECT_EQ(f.energy_from, GpuSeriesFigures::EnergyFrom::none);
    } else {
      if (u.covered_s > 0) {
        ASSERT_TRUE(f.util_pct);
        EXPECT_EQ(*f.util_pct, u.value / u.covered_s);
      } else if (util_n) {
        ++plain_mean;
        ASSERT_TRUE(f.util_pct);
        EXPECT_EQ(*f.util_pct, util_sum / static_cast<double>(util_n));
      } else {
        EXPECT_FALSE(f.util_pct);
      }
      EXPECT_EQ(f.impossible_counter_mj.has_value(), bad.has_value());
      if (bad) {
        ++impossible;
        EXPECT_EQ(*f.impossible_counter_mj, mj[*bad]);
        EXPECT_EQ(f.impossible_counter_t_ns, ts[*bad]);
      }
      // What the counter measured: from t0 (a reading before it) else its first inside, to t1 (a
      // reading after it) else its last; where it held still, or stopped, before the samples did, or
      // began after them, for longer than a gap (5 median steps and 1 s), power stands in there and
      // what power lacks of that time is left out (DESIGN.md, "Energy").
      const std::int64_t gap = energy_gap_threshold_ns(ts, power);
      auto beyond_a_gap = [&](std::int64_t x) { return x > std::max(gap, kEnergyGapMinNs); };
      std::int64_t counter_from = 0, counter_to = 0;
      double start = 0, end = 0;
      bool counter_measured = inside_mj.size() >= 2;
      if (counter_measured) {
        counter_from = before_mj && inside_mj.front().first > t0 ? t0 : inside_mj.front().first;
        counter_to = after_mj && inside_mj.back().first < t1 ? t1 : inside_mj.back().first;
        start = counter_from == t0 && inside_mj.front().first > t0 ? counter_at(t0, *before_mj, inside_mj.front())
                                                                  : inside_mj.front().second;
        end = counter_to == t1 && inside_mj.back().first < t1 ? counter_at(t1, inside_mj.back(), *after_mj)
                                                             : inside_mj.back().second;
        if (const std::int64_t still = std::max(moved_mj.first, counter_from); beyond_a_gap(counter_to - still)) {
          end = moved_mj.first >= counter_from ? moved_mj.second : start;
          counter_to = still;
          counter_measured = counter_to > counter_from;
        }
      }
      if (counter_measured) {
        ++from_counter;
        EXPECT_EQ(f.energy_from, GpuSeriesFigures::EnergyFrom::counter);
        double energy = (end - start) * 1e-3, skipped = 0;
        const std::int64_t lo = std::max(t0, ts.front()), hi = std::min(t1, ts.back());
        for (const auto& [a, b] : {std::pair{lo, counter_from}, std::pair{counter_to, hi}})
          if (beyond_a_gap(b - a)) {
            const Integral q = definitions::trapezoid(ts, power, a, b, gap);
            energy += q.value, skipped += static_cast<double>(b - a) * 1e-9 - q.covered_s;
          }
        EXPECT_NEAR(f.energy_j, energy, 1e-9 * std::abs(energy) + 1e-12);
        EXPECT_NEAR(f.skipped_s, skipped, 1e-9);
      } else {
        from_power += p.covered_s > 0;
        EXPECT_EQ(f.energy_from, p.covered_s > 0 ? GpuSeriesFigures::EnergyFrom::power : GpuSeriesFigures::EnergyFrom::none);
        EXPECT_EQ(f.energy_j, p.covered_s > 0 ? p.value : 0.0);
        // Left out: the gaps, and the samples' time inside the run that no power reading covers
        // (power stopped or began while the other readings went on), where longer than a gap.
        double skipped = p.skipped_s, longest = p.longest_skipped_s;
        if (p.covered_s > 0 && n > 0) {
          const double span = static_cast<double>(std::min(t1, ts.back()) - std::max(t0, ts.front())) * 1e-9;
          const double uncovered = span - p.covered_s - p.skipped_s;
          if (uncovered * 1e9 > static_cast<double>(energy_gap_threshold_ns(ts, power)))
            skipped += uncovered, longest = std::max(longest, uncovered);
        }
        EXPECT_EQ(f.skipped_s, skipped);
        EXPECT_EQ(f.longest_skipped_s, longest);
      }
    }

    // The chart: over the series that have a value.
    std::vector<const std::vector<double>*> values;
    for (const auto* column : {&util, &power})
      if (std::any_of(column->begin(), column->end(), [](double x) { return !std::isnan(x); })) values.push_back(column);
    const auto keep = definitions::chart_indices(n, max_points, values);
    const auto& chart = g.reduced->chart;
    ASSERT_EQ(chart.size(), keep.size());
    for (std::size_t i = 0; i < keep.size(); ++i) {
      EXPECT_EQ(chart[i].t_ns, ts[keep[i]]);
      EXPECT_TRUE(same_float(chart[i].util_pct, util[keep[i]]));
      EXPECT_TRUE(same_float(chart[i].power_w, power[keep[i]]));
    }
    decimated += n > max_points;
  }
  EXPECT_GT(from_counter, 250u);
  EXPECT_GT(from_power, 250u);
  EXPECT_GT(impossible, 15u);
  EXPECT_GT(plain_mean, 3u);
  EXPECT_GT(nominal, 100u);
  EXPECT_GT(decimated, 1000u);
}

}  // namespace
}  // namespace scalelens
