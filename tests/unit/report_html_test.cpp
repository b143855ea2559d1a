// report.html, its per-run series and the static figures.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <tuple>

#include "analysis/analyze.hpp"
#include "analysis/energy_choice.hpp"
#include "common/decimate.hpp"
#include "ingest/ingest.hpp"
#include "report/figures.hpp"
#include "report/output_folder.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "report/web_bundle.hpp"
#include "support/gpu_study_writer.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using scalelens::testing::ScratchDir;
using scalelens::testing::slurp;

namespace {

constexpr std::string_view kSlot = R"(<script type="application/json" id="scalelens-data">)";

std::string data_slot(const std::string& html) {
  auto open = html.find(kSlot);
  if (open == std::string::npos) return {};
  open += kSlot.size();
  return html.substr(open, html.find("</script>", open) - open);
}

// The figures' JSON in a page's data (the last member), "" when there is none.
std::string figures_json_of(const std::string& html) {
  const auto slot = data_slot(html);
  const auto at = slot.find(",\"figures\":");
  return at == std::string::npos ? std::string() : slot.substr(at + 11, slot.size() - at - 12);
}

Study study_with_gpus(std::size_t samples, int gpus) {
  Study s;
  Run r;
  r.run_id = "r1";
  r.label = "<img src=x onerror=alert(1)>";
  r.world_size = gpus;
  r.path = "/runs/</script><script>alert(1)</script>";
  r.start_ns = 1'000'000'000;
  r.end_ns = r.start_ns.value() + static_cast<std::int64_t>(samples) * 500'000'000;
  r.samples_per_epoch = 1000;
  for (int g = 0; g < gpus; ++g) {
    GpuSeries series;
    series.node = "host-<b>";
    series.index = g;
    for (std::size_t i = 0; i < samples; ++i) {
      GpuSample x;
      x.t_ns = r.start_ns.value() + static_cast<std::int64_t>(i) * 500'000'000;
      x.util_pct = static_cast<float>(i % 100);
      x.power_w = i == samples / 3 ? 999.0f : 200.0f;  // one spike decimation must keep
      series.samples.push_back(x);
    }
    r.gpus.push_back(std::move(series));
  }
  RankBreakdown b;
  b.rank = 0;
  b.steps = 3;
  b.step_time_us = 3000, b.comp_us = 2000, b.comm_us = 800, b.overlap_us = 300, b.exposed_comm_us = 500;
  b.step_times_us = {1000, 1100, 900};
  r.breakdown.push_back(b);
  for (int e = 0; e < 3; ++e) {
    Interval iv;
    iv.index = e;
    iv.start_ns = r.start_ns.value() + e * 1'000'000'000LL;
    iv.end_ns = iv.start_ns + 1'000'000'000LL;
    r.epochs.push_back(iv);
  }
  s.runs.push_back(std::move(r));
  return s;
}

// `runs` one-GPU runs of `samples` samples each, r000, r001, ..., their world sizes cycling through
// 1..world_sizes: a study with many runs and configurations.
Study study_of_runs(int runs, std::size_t samples, int world_sizes) {
  Study study;
  for (int k = 0; k < runs; ++k) {
    scalelens::Run r = study_with_gpus(samples, 1).runs.front();
    r.run_id = fmt::format("r{:03}", k);
    r.world_size = 1 + k % world_sizes;
    study.runs.push_back(std::move(r));
  }
  return study;
}

// The report folder with the figures' scripts and data but not their pictures (no gnuplot run).
// study: nullptr for a report from a summary alone (no series).
Result<std::vector<std::filesystem::path>> write_report_without_gnuplot(const Summary& summary, const Study* study,
                                                                        const ScratchDir& out) {
  ::setenv("SCALELENS_NO_GNUPLOT", "1", 1);
  auto written = study ? write_report_files(summary, *study, out.path()) : write_report_files(summary, out.path());
  ::unsetenv("SCALELENS_NO_GNUPLOT");
  return written;
}

}  // namespace

TEST(ReportHtml, DataIsInlinedAndCannotCloseTheScript) {
  const std::string data = R"({"summary":{"label":"</script><img src=x onerror=alert(1)>"}})";
  auto html = render_report_html(data);
  auto slot = data_slot(html);
  EXPECT_EQ(slot, R"({"summary":{"label":"\u003c/script>\u003cimg src=x onerror=alert(1)>"}})");
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("</script><img"), std::string::npos);
}

// The data in pieces is the data as one text, whatever the pieces of the series (blank ones at the
// end are trimmed as the joined text's end would be; none at all is null).
TEST(ReportHtml, DataPiecesJoinToTheData) {
  auto joined = [](const std::vector<std::string_view>& pieces) {
    std::string s;
    for (auto p : pieces) s += p;
    return s;
  };
  for (std::vector<std::string_view> series : std::vector<std::vector<std::string_view>>{
           {}, {""}, {"{\"runs\":[", "]}"}, {"{\"runs\":[", "]}\n", " \n", ""}, {"{\"a\":", "1}", "  "}}) {
    std::string one;
    for (auto p : series) one += p;
    EXPECT_EQ(joined(report_data_pieces("{\"s\":1}\n", series, "static", "{\"f\":2}")),
              render_report_data("{\"s\":1}\n", one, "static", "{\"f\":2}"))
        << one;
  }
}

TEST(ReportHtml, BundleHasTheDataSlot) {
  auto page = web_bundle_html();
  EXPECT_NE(page.find(kSlot), std::string_view::npos);
  if (web_bundle_built()) EXPECT_NE(page.find("scalelens"), std::string_view::npos);
  else EXPECT_NE(page.find("interactive UI was not built"), std::string_view::npos);
}

TEST(ReportHtml, CompactNumbers) {
  EXPECT_EQ(compact_number(1.5, 3), "1.5");
  EXPECT_EQ(compact_number(2.0, 3), "2");
  EXPECT_EQ(compact_number(0.12345, 3), "0.123");
  EXPECT_EQ(compact_number(-0.0001, 2), "0");
  EXPECT_EQ(compact_number(std::nan(""), 1), "null");
}

TEST(ReportHtml, DecimationCapsPointsAndKeepsExtremes) {
  std::vector<double> v(100000, 1.0);
  v[4242] = 50, v[77777] = -50;
  auto idx = decimate_indices(v.size(), 2000, {&v});
  EXPECT_LE(idx.size(), 2000u);
  EXPECT_EQ(idx.front(), 0u);
  EXPECT_EQ(idx.back(), v.size() - 1);
  EXPECT_TRUE(std::binary_search(idx.begin(), idx.end(), 4242u));
  EXPECT_TRUE(std::binary_search(idx.begin(), idx.end(), 77777u));
  EXPECT_EQ(decimate_indices(5, 2000, {&v}).size(), 5u);
}

TEST(ReportHtml, SeriesAreDecimatedAndEscaped) {
  Study study = study_with_gpus(20000, 2);
  Summary summary = analyze(study, {});
  ASSERT_EQ(summary.runs.size(), 1u);
  auto json = render_series_json(study, summary);
  EXPECT_EQ(json.find("<"), std::string::npos) << "labels and hosts must be escaped";
  EXPECT_NE(json.find("\"run_id\":\"r1\""), std::string::npos);
  EXPECT_NE(json.find("\"samples\":20000"), std::string::npos);
  EXPECT_NE(json.find("999"), std::string::npos) << "the power spike survives decimation";
  EXPECT_NE(json.find("\"step_ms\":[1,1.1,0.9]"), std::string::npos) << json.substr(json.find("ranks"), 200);
  // Each GPU series at most 2000 points: count the numbers of the first "t" array.
  auto t = json.find("\"t\":[");
  auto end = json.find(']', t);
  auto commas = std::count(json.begin() + static_cast<long>(t), json.begin() + static_cast<long>(end), ',');
  EXPECT_LE(commas + 1, 2000);
  EXPECT_GT(commas + 1, 1000);
  EXPECT_EQ(render_series_json(study, summary, {}, "no-such-run"), "{\"runs\":[]}");
}

TEST(ReportHtml, PageBreakdownUsesTheSameRanksAsTheSummary) {
  // A run with a GPU trace for rank 0 and the MPI interposer's record of rank 0 too: figures come
  // from the trace alone, in summary.json and on the page.
  Study study = study_with_gpus(10, 1);
  RankBreakdown mpi;
  mpi.rank = 0;
  mpi.from_mpi = true;
  mpi.steps = 2;
  mpi.step_time_us = 4000, mpi.comp_us = 1000, mpi.comm_us = 3000, mpi.exposed_comm_us = 3000;
  mpi.step_times_us = {2000, 2000};
  study.runs[0].breakdown.push_back(mpi);
  Summary summary = analyze(study, {});
  ASSERT_TRUE(summary.runs[0].trace().exposed_comm_share);
  EXPECT_DOUBLE_EQ(*summary.runs[0].trace().exposed_comm_share, 500.0 / 3000);  // the trace's figures
  ASSERT_TRUE(summary.runs[0].trace().breakdown_shares);  // what the page draws
  EXPECT_NEAR(summary.runs[0].trace().breakdown_shares->exposed_comm, 500.0 / 3000, 1e-12);
  auto json = render_series_json(study, summary);
  const auto from = json.find("\"ranks\":[");
  const auto ranks = json.substr(from, json.find("]}", from) - from);
  EXPECT_EQ(ranks.find("\"rank\":0", ranks.find("\"rank\":0") + 1), std::string::npos) << "rank 0 listed once: " << ranks;
}

TEST(ReportHtml, StepTimesPerRankComeFromStepsCsvWithoutTraces) {
  Study study = study_with_gpus(10, 2);
  auto& run = study.runs[0];
  run.breakdown.clear();  // no trace, no MPI interposer: the program's own steps.csv
  // Logged out of order, as ranks appending to one file do: rank 1 is slow at step 4.
  for (int rank : {1, 0})
    for (int step : {4, 3}) {
      Interval iv;
      iv.rank = rank;
      iv.index = step;
      iv.start_ns = 5'000'000'000LL + step * 100'000'000LL;
      iv.end_ns = iv.start_ns + (rank == 1 && step == 4 ? 90'000'000 : 20'000'000);
      run.steps.push_back(iv);
    }
  const auto json = render_series_json(study, analyze(study, {}));
  EXPECT_NE(json.find(R"("ranks":[{"rank":0,"steps":2,"mean_ms":20,"step":[3,4],"step_ms":[20,20]},)"
                      R"({"rank":1,"steps":2,"mean_ms":55,"step":[3,4],"step_ms":[20,90]}])"),
            std::string::npos)
      << json.substr(json.find("\"ranks\":["), 200);
}

// The page marks the slowest rank by each rank's mean step; over a thinned chart (peaks and troughs
// kept) that mean is the spikes', so the page is given the mean over every step.
TEST(ReportHtml, RankMeanStepIsOverAllStepsNotTheThinnedPoints) {
  Study study = study_with_gpus(10, 2);
  auto& run = study.runs[0];
  run.breakdown.clear();
  const int steps = 20000;
  double sum_ms = 0;
  for (int step = 0; step < steps; ++step) {
    Interval iv;
    iv.rank = 0;
    iv.index = step;
    iv.start_ns = 5'000'000'000LL + step * 100'000'000LL;
    const double ms = step % 100 == 0 ? 30 : 9;  // 9 ms with a spike every 100 steps: 9.21 ms
    iv.end_ns = iv.start_ns + static_cast<std::int64_t>(ms * 1e6);
    sum_ms += ms;
    run.steps.push_back(iv);
  }
  const auto json = render_series_json(study, analyze(study, {}));
  const auto at = json.find("\"mean_ms\":");
  ASSERT_NE(at, std::string::npos) << json.substr(json.find("\"ranks\":["), 200);
  EXPECT_NEAR(std::stod(json.substr(at + 10)), sum_ms / steps, 1e-3);
  // The drawn points alone would say otherwise: the spikes are all kept.
  const auto from = json.find("\"step_ms\":[", at) + 11;
  std::vector<double> drawn;
  for (std::size_t p = from; json[p - 1] != ']'; p = json.find_first_of(",]", p) + 1) drawn.push_back(std::stod(json.substr(p)));
  ASSERT_LT(drawn.size(), static_cast<std::size_t>(steps));
  EXPECT_GT(std::accumulate(drawn.begin(), drawn.end(), 0.0) / static_cast<double>(drawn.size()), sum_ms / steps + 1);
}

TEST(ReportHtml, SeriesBudgetShrinksSeriesOfLargeStudies) {
  Study study = study_with_gpus(4000, 64);
  Summary summary = analyze(study, {});
  SeriesLimits limits;
  limits.gpu_point_budget = 64 * 100;
  auto json = render_series_json(study, summary, limits);
  auto t = json.find("\"t\":[");
  auto end = json.find(']', t);
  auto n = std::count(json.begin() + static_cast<long>(t), json.begin() + static_cast<long>(end), ',') + 1;
  EXPECT_LE(n, 100);
}

// The figure's breakdown.dat row of a configuration: its six shares.
std::vector<double> breakdown_row(const ScratchDir& out) {
  std::istringstream dat(slurp(out / "figures/breakdown.dat"));
  std::string line;
  while (std::getline(dat, line))
    if (!line.empty() && line[0] != '#') {
      std::istringstream fields(line.substr(line.rfind('"') + 1));
      std::vector<double> shares;
      for (double v; fields >> v;) shares.push_back(v);
      return shares;
    }
  return {};
}

// The page draws summary.json's breakdown_shares (it computes none): they are the figure's.
void expect_page_draws_the_figures_shares(const Summary& summary, const std::vector<double>& figure) {
  ASSERT_EQ(summary.configurations.size(), 1u);
  const auto& b = summary.configurations[0].breakdown_shares;
  ASSERT_TRUE(b.has_value());
  const std::vector<double> page{b->computation, b->overlapped_comm, b->exposed_comm, b->memory, b->idle, b->other};
  ASSERT_EQ(page.size(), figure.size());
  for (std::size_t i = 0; i < page.size(); ++i) EXPECT_NEAR(page[i], figure[i], 1e-5) << "part " << i;
}

TEST(ReportHtml, BreakdownFigureUsesTheSameRanksAsTheSummary) {
  // The trace's rank 0 and the MPI interposer's rank 0 (as above): the figure is the trace's.
  ScratchDir out;
  Study study = study_with_gpus(10, 1);
  RankBreakdown mpi;
  mpi.from_mpi = true;
  mpi.steps = 2;
  mpi.step_time_us = 4000, mpi.comp_us = 1000, mpi.comm_us = 3000, mpi.exposed_comm_us = 3000;
  study.runs[0].breakdown.push_back(mpi);
  // Launch lag: the GPU's work spans 3100 µs of steps that last 3000 µs, short of "ran behind"
  // (5 %). The parts are still shares of the longer, so that idle (span − busy) never exceeds the
  // whole (it was 101 % of a step); the page draws the same shares.
  study.runs[0].breakdown[0].span_us = 3100;
  const Summary summary = analyze(study, {});
  ASSERT_TRUE(write_report_without_gnuplot(summary, &study, out));
  const auto shares = breakdown_row(out);
  ASSERT_EQ(shares.size(), 6u);
  EXPECT_NEAR(shares[2], 500.0 / 3100, 1e-5) << "exposed communication of the trace alone";
  expect_page_draws_the_figures_shares(summary, shares);
}

TEST(ReportHtml, BreakdownOfAGpuThatRanBehindIsNoMoreThanTheWhole) {
  // The GPU's work spans 4000 µs of 3 steps that last 3000 µs: computation is 2/3 of the span, not
  // 2/3 × 4/3 of the step; the page draws the same shares.
  ScratchDir out;
  Study study = study_with_gpus(10, 1);
  auto& b = study.runs[0].breakdown[0];
  b.span_us = 4000, b.busy_us = 3500, b.idle_us = 500, b.comp_us = 2700, b.overlap_us = 300;
  Summary summary = analyze(study, {});
  ASSERT_TRUE(write_report_without_gnuplot(summary, &study, out));
  const auto shares = breakdown_row(out);
  ASSERT_EQ(shares.size(), 6u);
  EXPECT_NEAR(shares[0], 2400.0 / 4000, 1e-5);
  double whole = 0;
  for (double v : shares) {
    EXPECT_LE(v, 1.0);
    whole += v;
  }
  EXPECT_NEAR(whole, 1.0, 1e-5);
  expect_page_draws_the_figures_shares(summary, shares);
}

TEST(ReportHtml, OneRankThatRanBehindAmongEightCountsItsSpan) {
  // Seven ranks whose GPU work fits their steps and one whose 3000 µs of steps launched 4000 µs of
  // it. Summed over ranks the span is only 4.5% over the steps, which launch lag could explain; per
  // rank, the eighth's parts are shares of its span, and no part exceeds the whole.
  ScratchDir out;
  Study study = study_with_gpus(10, 8);
  auto& ranks = study.runs[0].breakdown;
  // Each part once: (comp − overlap) + overlap + exposed + memory + idle = the span.
  ranks[0].span_us = 3000, ranks[0].busy_us = 3000, ranks[0].idle_us = 0, ranks[0].comp_us = 2500, ranks[0].overlap_us = 300;
  for (int k = 1; k < 8; ++k) {
    RankBreakdown b = ranks[0];
    b.rank = k;
    ranks.push_back(b);
  }
  ranks[7].span_us = 4000, ranks[7].busy_us = 3200, ranks[7].idle_us = 800, ranks[7].comp_us = 2700;
  double span = 0, step = 0;
  for (const auto& b : ranks) span += b.span_us, step += b.step_time_us;
  ASSERT_FALSE(gpu_ran_behind(span, step)) << "the sums alone would not tell";
  Summary summary = analyze(study, {});
  ASSERT_TRUE(write_report_without_gnuplot(summary, &study, out));
  const auto shares = breakdown_row(out);
  ASSERT_EQ(shares.size(), 6u);
  const double whole = 7 * 3000 + 4000;
  EXPECT_NEAR(shares[0], (7 * 2200 + 2400) / whole, 1e-5);
  double sum = 0;
  for (double v : shares) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-5) << "the parts fill the whole, none drawn above it";
  expect_page_draws_the_figures_shares(summary, shares);
}

TEST(ReportHtml, OutputFolderHasReportAndFigures) {
  ScratchDir out;
  Study study = study_with_gpus(100, 2);
  Summary summary = analyze(study, {});
  auto written = write_report_without_gnuplot(summary, &study, out);
  ASSERT_TRUE(written) << written.error().message;
  auto html = slurp(out / "report.html");
  auto slot = data_slot(html);
  EXPECT_NE(slot.find("\"schema\":\"scalelens.report-data/1\""), std::string::npos);
  EXPECT_NE(slot.find("\"mode\":\"static\""), std::string::npos);
  EXPECT_NE(slot.find("scalelens.summary/2"), std::string::npos);
  EXPECT_NE(slot.find("\\u003cimg src=x"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(slot.find("gnuplot was not found"), std::string::npos) << "the report says how to render the figures";
  for (const char* f : {"utilization", "energy", "breakdown", "time"}) {
    EXPECT_TRUE(std::filesystem::exists(out / "figures" / (std::string(f) + ".gp"))) << f;
    EXPECT_TRUE(std::filesystem::exists(out / "figures" / (std::string(f) + ".dat"))) << f;
    EXPECT_FALSE(std::filesystem::exists(out / "figures" / (std::string(f) + ".svg"))) << f;
  }
  auto gp = slurp(out / "figures/utilization.gp");
  EXPECT_NE(gp.find("set output 'utilization.svg'"), std::string::npos);
  EXPECT_NE(gp.find("set output 'utilization.pdf'"), std::string::npos);
}

// report.html is written in pieces (never joined in memory): the file is the page that the joined
// data gives, with the study's '<' escaped in every piece (label, path, series).
TEST(ReportHtml, PageWrittenInPiecesIsThePageOfTheJoinedData) {
  ScratchDir out;
  Study study = study_with_gpus(300, 3);
  Summary summary = analyze(study, {});
  auto written = write_report_without_gnuplot(summary, &study, out);
  ASSERT_TRUE(written) << written.error().message;
  const std::string series = render_series_json(study, summary);
  const auto html = slurp(out / "report.html");
  const auto slot = data_slot(html);
  const std::string figures_json = figures_json_of(html);
  ASSERT_FALSE(figures_json.empty());
  EXPECT_EQ(html, render_report_html(render_report_data(render_summary_json(summary), series, "static", figures_json)));
  EXPECT_EQ(slot.find('<'), std::string::npos);
  EXPECT_NE(slot.find("/runs/\\u003c/script>"), std::string::npos);
}

// The series are rendered and handed on a batch of runs at a time: over several batches, and a
// last one not full, they are each run's own series, in the summary's order, joined by commas.
TEST(ReportHtml, SeriesOverManyBatchesAreEachRunsSeriesInOrder) {
  const Study study = study_of_runs(700, 20, 3);
  const Summary summary = analyze(study, {});
  ASSERT_EQ(summary.runs.size(), 700u);
  std::string expected = "{\"runs\":[";
  for (std::size_t k = 0; k < summary.runs.size(); ++k) {
    const std::string one = render_series_json(study, summary, {}, summary.runs[k].run_id);
    ASSERT_GT(one.size(), 12u);
    expected += (k ? "," : "") + one.substr(9, one.size() - 11);  // inside {"runs":[ ... ]}
  }
  expected += "]}";
  std::size_t parts = 0;
  std::string streamed;
  SeriesLimits batches;
  batches.runs_per_batch = 64;
  render_series_json_to(study, summary, [&](std::string_view part) { streamed += part, ++parts; }, batches);
  EXPECT_EQ(streamed, expected);
  EXPECT_EQ(parts, 702u);  // the opening, one per run, the closing
}

// summary.json and the page's summary are one rendering handed on every 64 KiB: past that point,
// with or without a study's series, both files are what the joined renderings give.
TEST(ReportHtml, LargeSummaryWrittenAsRenderedIsTheJoinedRenderingWithAndWithoutSeries) {
  const Study study = study_of_runs(400, 10, 4);
  const Summary summary = analyze(study, {});
  const std::string summary_json = render_summary_json(summary);
  ASSERT_GT(summary_json.size(), 3u * 65536) << "the summary must cross several hand-on points";
  for (const Study* with : std::initializer_list<const Study*>{&study, nullptr}) {
    ScratchDir out;
    auto written = write_report_without_gnuplot(summary, with, out);
    ASSERT_TRUE(written) << written.error().message;
    const std::string file = slurp(out / "summary.json");  // compared whole, printed by size only
    EXPECT_TRUE(file == summary_json) << file.size() << " bytes against " << summary_json.size();
    const auto html = slurp(out / "report.html");
    const std::string series = with ? render_series_json(study, summary) : "null";
    const std::string joined = render_report_html(render_report_data(summary_json, series, "static", figures_json_of(html)));
    EXPECT_TRUE(html == joined) << (with ? "with" : "without") << " the study: " << html.size() << " bytes against "
                                << joined.size();
    EXPECT_EQ(with == nullptr, data_slot(html).find("\"series\":null") != std::string::npos);
  }
}

TEST(ReportHtml, GnuplotQuoting) {
  EXPECT_EQ(gnuplot_quote("ddp"), "'ddp'");
  EXPECT_EQ(gnuplot_quote("it's\nme"), "'it''s me'");
  EXPECT_EQ(gnuplot_quote(std::string("a\0b\x1b", 4)), "'a b '");  // gnuplot cuts its line at a NUL
}

// Each curve's Pareto front is its own line, as the analysis chose it: one line through the fronts
// of two workloads joined points that no front holds.
TEST(ReportHtml, TheParetoFigureDrawsEachCurvesFront) {
  Summary summary;
  for (auto [curve, p, t, e] : {std::tuple{"ddp", 1, 40.0, 3.0}, {"ddp", 4, 12.0, 5.0}, {"ddp", 8, 13.0, 9.0}, {"logreg", 1, 0.5, 0.04}}) {
    ConfigurationSummary c;
    c.label = c.curve = curve;
    c.world_size = p;
    c.run_time_s = Stat{t, t, 0, 3, t, t};  // time to solution: the run's
    c.time_from = "run";
    c.energy_wh = e;
    summary.configurations.push_back(c);
  }
  for (const char* name : {"ddp", "logreg"}) {
    CurveModel cm;
    cm.curve = cm.label = name;
    summary.curves.push_back(cm);
  }
  choose_gpu_counts(summary, {});
  ScratchDir out;
  setenv("SCALELENS_NO_GNUPLOT", "1", 1);
  write_figures(summary, out.path());
  unsetenv("SCALELENS_NO_GNUPLOT");
  const std::string dat = slurp(out / "pareto.dat");
  EXPECT_NE(dat.find("# Pareto front: ddp\n\"front\" 12 5\n\"front\" 40 3\n\n\n# Pareto front: logreg\n\"front\" 0.5 0.04\n"),
            std::string::npos)
      << dat;
  const std::string gp = slurp(out / "pareto.gp");
  EXPECT_NE(gp.find("index 2 using 2:3 with lines dt 2 title 'Pareto front (logreg)'"), std::string::npos) << gp;
}

// A study of runs with epochs beside traces alone: the time figure took epoch time for every curve,
// and the traces' configurations were '?' there while the table and summary.json had their step time.
TEST(ReportHtml, TheTimeFigureTakesEachCurvesOwnTime) {
  Summary summary;
  for (auto [curve, basis, p, t] : {std::tuple{"ddp", "epoch", 1, 10.0}, {"ddp", "epoch", 2, 5.5}, {"traces", "step", 1, 0.4},
                                    {"traces", "step", 2, 0.23}}) {
    ConfigurationSummary c;
    c.label = c.curve = curve;
    c.world_size = p;
    c.time_from = basis;
    (std::string(basis) == "epoch" ? c.epoch_time_s : c.step_time_s) = Stat{t, t, 0, 1, NAN, NAN};
    summary.configurations.push_back(c);
  }
  ScratchDir out;
  setenv("SCALELENS_NO_GNUPLOT", "1", 1);
  write_figures(summary, out.path());
  unsetenv("SCALELENS_NO_GNUPLOT");
  EXPECT_EQ(slurp(out / "time.dat"), "# world_size mean_s ci95_low_s ci95_high_s\n# label: ddp (per epoch)\n1 10 ? ?\n2 5.5 ? ?\n"
                                     "\n\n# label: traces (per step)\n1 0.4 ? ?\n2 0.23 ? ?\n");
  const std::string gp = slurp(out / "time.gp");
  EXPECT_NE(gp.find("title 'traces (per step)'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel 'time per epoch, run or step (s)'"), std::string::npos) << gp;

  // One curve whose baseline has no epochs: its speedup is on run time, and so is its figure (it
  // took epoch time because one configuration had some, and the baseline was '?').
  Summary one;
  for (int p : {1, 2}) {
    ConfigurationSummary c;
    c.label = c.curve = "ddp";
    c.world_size = p;
    c.time_from = "run";
    c.run_time_s = Stat{30.0 / p, 30.0 / p, 0, 1, NAN, NAN};
    if (p == 2) c.epoch_time_s = Stat{5, 5, 0, 1, NAN, NAN};
    one.configurations.push_back(c);
  }
  ScratchDir out2;
  setenv("SCALELENS_NO_GNUPLOT", "1", 1);
  write_figures(one, out2.path());
  unsetenv("SCALELENS_NO_GNUPLOT");
  EXPECT_EQ(slurp(out2 / "time.dat"), "# world_size mean_s ci95_low_s ci95_high_s\n# label: ddp\n1 30 ? ?\n2 15 ? ?\n");
  EXPECT_NE(slurp(out2 / "time.gp").find("set ylabel 'run time (s)'"), std::string::npos);
}

// A label with line breaks put rows of its own in the figures' data ("ddp\n1 1000" drew a point at
// 1000 on the speedup curve), and blank lines in it moved the blocks `index` selects.
TEST(ReportHtml, ALabelsLineBreaksAddNoDataToTheFigures) {
  Summary summary;
  const std::string label = "ddp\n1 1000\n\n\n2 7\r";
  for (int p : {1, 2}) {
    ConfigurationSummary c;
    c.label = c.curve = label;
    c.world_size = p;
    c.speedup = p == 1 ? 1.0 : 1.8;
    summary.configurations.push_back(c);
  }
  ScratchDir out;
  setenv("SCALELENS_NO_GNUPLOT", "1", 1);
  auto r = write_figures(summary, out.path());
  unsetenv("SCALELENS_NO_GNUPLOT");
  const std::string dat = slurp(out / "speedup.dat");
  EXPECT_EQ(dat, "# world_size value\n# label: ddp 1 1000   2 7 \n1 1\n2 1.8\n") << dat;
}

// gnuplot's path on PATH, "" when it is not installed.
std::string gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  for (std::string dirs = path ? path : ""; !dirs.empty();) {
    auto colon = dirs.find(':');
    auto dir = dirs.substr(0, colon);
    if (::access((dir + "/gnuplot").c_str(), X_OK) == 0) return dir + "/gnuplot";
    dirs = colon == std::string::npos ? "" : dirs.substr(colon + 1);
  }
  return "";
}

TEST(ReportHtml, ToyStudyRendersFiguresWithGnuplot) {
  if (gnuplot_on_path().empty()) GTEST_SKIP() << "gnuplot is not installed";
  IngestOptions in;
  in.inputs = {std::string(SCALELENS_SOURCE_DIR) + "/examples/toy-study"};
  Study study = ingest(in);
  Summary summary = analyze(study, {});
  ASSERT_FALSE(summary.configurations.empty());
  ScratchDir out;
  auto r = write_figures(summary, out.path());
  EXPECT_TRUE(r.rendered) << r.message;
  for (const char* f : {"speedup", "efficiency", "time"})
    for (const char* ext : {".svg", ".png", ".pdf", ".gp", ".dat"})
      EXPECT_GT(std::filesystem::file_size(out / (std::string(f) + ext)), 20u) << f << ext;
  auto svg = slurp(out / "speedup.svg");
  EXPECT_NE(svg.find("ideal (p0=1)"), std::string::npos);
}

TEST(ReportHtml, FiguresDrawnSeveralPerGnuplotAreThoseDrawnOneByOne) {
  // Several scripts share a gnuplot process, `reset session` between them: no figure may inherit
  // another's axes or scales, so each picture is byte for byte what gnuplot draws from its script alone.
  const std::string gnuplot = gnuplot_on_path();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not installed";
  // A scaling study with GPU logs has every figure (utilization and energy on log scales among
  // them): drawn in one session without a reset, some fail or change.
  ScratchDir study_dir, batched, alone;
  std::mt19937_64 rng(5);
  scalelens::testing::write_gpu_study(study_dir, rng, scalelens::testing::GpuStudyShape{.runs = 12, .gpus = 8, .may_be_empty = false, .vary_gpus = true});
  IngestOptions in;
  in.inputs = {study_dir.path().string()};
  Study study = ingest(in);
  Summary summary = analyze(study, {});
  auto r = write_figures(summary, batched.path());
  ASSERT_TRUE(r.rendered) << r.message;
  ASSERT_GE(r.figures.size(), 6u);
  // Drawn again in two processes, whatever this machine's cores, so that scripts do share one.
  std::vector<std::string> scripts;
  for (const auto& name : r.figures) scripts.push_back(name + ".gp");
  ASSERT_TRUE(render_gnuplot_scripts(gnuplot, batched.path(), scripts, 2).all_drawn);
  for (const auto& name : r.figures) {
    for (const char* ext : {".gp", ".dat"}) std::filesystem::copy_file(batched / (name + ext), alone / (name + ext));
    auto one = render_gnuplot_scripts(gnuplot, alone.path(), {name + ".gp"}, 1);
    ASSERT_TRUE(one.all_drawn) << name;
    for (const char* ext : {".svg", ".png"})  // PDF holds its creation time
      EXPECT_TRUE(slurp(batched / (name + ext)) == slurp(alone / (name + ext))) << name << ext << " differs";
  }
}

TEST(ReportHtml, AFigureGnuplotCannotDrawCostsOnlyItself) {
  const std::string gnuplot = gnuplot_on_path();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not installed";
  ScratchDir dir;
  auto good = [&](const std::string& name) {
    dir.write(name + ".gp", "set terminal svg\nset output '" + name + ".svg'\nplot sin(x)\n"
                            "set terminal pngcairo\nset output '" + name + ".png'\nplot cos(x)\n");
  };
  for (const char* name : {"a", "c", "d"}) good(name);
  dir.write("b.gp", "set terminal svg\nset output 'b.svg'\nplot no_such_function(x)\n");
  // Two processes: {a, c} and {b, d}; b stops its gnuplot before d, which is drawn again alone.
  auto r = render_gnuplot_scripts(gnuplot, dir.path(), {"a.gp", "b.gp", "c.gp", "d.gp"}, 2);
  EXPECT_FALSE(r.all_drawn);
  EXPECT_EQ(r.failed, std::vector<std::string>{"b.gp"});  // named, for the report's warning
  for (const char* name : {"a", "c", "d"})
    for (const char* ext : {".svg", ".png"})
      EXPECT_GT(std::filesystem::file_size(dir / (std::string(name) + ext)), 100u) << name << ext;
  EXPECT_FALSE(std::filesystem::exists(dir / "b.svg")) << "an empty picture is not left behind";
  EXPECT_EQ(r.pictures.size(), 6u);
}
