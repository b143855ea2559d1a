#include "report/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "common/decimate.hpp"
#include "common/json.hpp"
#include "common/parallel.hpp"
#include "report/web_bundle.hpp"

namespace scalelens {

std::string compact_number(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {

void append_array(std::string& out, const std::vector<double>& v, const std::vector<std::size_t>& idx, int decimals) {
  out += '[';
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (k) out += ',';
    out += compact_number(v[idx[k]], decimals);
  }
  out += ']';
}

// Per-rank step times for the drill-down: from the measured breakdown (traces, else the MPI
// interposer), else from the steps the program logged itself (steps.csv), so that a run without
// traces still shows its stragglers. Sorted by rank; `step` is the step's index or number. A run
// folder's step log tabulated as it was read (StepTable) brings its charts thinned already.
bool has_measured_step_times(const Run& run) {
  const auto parts = measured_breakdown(run);
  return std::any_of(parts.begin(), parts.end(), [](const RankBreakdown* b) { return !b->step_times_us.empty(); });
}
// Whether a run's page charts are its step table's, thinned where its step log was read.
bool step_charts_from_table(const Run& run) { return run.step_table && !has_measured_step_times(run); }

std::vector<RankStepChart> rank_step_times(const Run& run) {
  std::vector<RankStepChart> out;
  const bool measured = has_measured_step_times(run);
  if (run.step_table && !measured) {  // step_charts_from_table
    out = run.step_table->ranks;
  } else if (measured) {
    for (const auto* b : measured_breakdown(run)) {
      if (b->step_times_us.empty()) continue;
      RankStepChart r{b->rank, b->step_times_us.size(), {}, {}};
      for (std::size_t i = 0; i < b->step_times_us.size(); ++i) {
        r.step.push_back(static_cast<double>(i));
        r.ms.push_back(b->step_times_us[i] / 1000);
      }
      r.mean_ms = mean_of(r.ms);
      out.push_back(std::move(r));
    }
  } else {
    out = rank_step_charts(run.steps);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankStepChart& a, const RankStepChart& b) { return a.rank < b.rank; });
  return out;
}

// The members of a run's "gpus" array: its GPUs in a stable order (node, then index), each chart
// of at most its share of points (GpuSeries::chart_points, else `gpu_cap`) and `max_points`; times
// in seconds since `t0`.
void append_gpu_series(std::string& out, const std::vector<GpuSeries>& all, std::int64_t t0, std::size_t gpu_cap,
                       std::size_t max_points) {
  // GPUs in a stable order: node, then index.
  std::vector<const GpuSeries*> gpus;
  for (const auto& g : all) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(), [](auto* a, auto* b) {
    return a->node != b->node ? a->node < b->node : a->index < b->index;
  });
  std::vector<double> t, util, power;
  bool first = true;
  for (const auto* g : gpus) {
    const std::vector<GpuChartPoint> chart =
        gpu_chart_points(*g, g->chart_points ? std::min(g->chart_points, max_points) : gpu_cap);
    const std::size_t n = chart.size();
    t.resize(n), util.resize(n), power.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t[i] = static_cast<double>(chart[i].t_ns - t0) * 1e-9;
      util[i] = chart[i].util_pct;
      power[i] = chart[i].power_w;
    }
    const bool has_util = std::any_of(util.begin(), util.end(), [](double v) { return !std::isnan(v); });
    const bool has_power = std::any_of(power.begin(), power.end(), [](double v) { return !std::isnan(v); });
    std::vector<std::size_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = i;
    if (!first) out += ',';
    first = false;
    out += fmt::format("{{\"node\":{},\"index\":{},\"uuid\":{},\"name\":{},\"samples\":{},\"t\":", json_quote(g->node),
                       g->index, json_quote(g->uuid), json_quote(g->name), g->sample_count());
    append_array(out, t, idx, 3);
    out += ",\"util\":";
    if (has_util) append_array(out, util, idx, 1); else out += "null";
    out += ",\"power\":";
    if (has_power) append_array(out, power, idx, 1); else out += "null";
    out += '}';
  }
}

// One run's series: its GPUs' utilization and power and its ranks' step times, decimated.
// `gpu_cap` for series without a share of ingest's chart budget (GpuSeries::chart_points).
// `world_size`: its summary's (ranks beyond the stated one move a run: analyze), not the Run's.
std::string render_run_series(const Run& run, std::optional<int> world_size, const std::vector<RankStepChart>& rank_steps,
                              std::size_t gpu_cap, std::size_t step_cap, std::size_t max_points) {
  std::string out;
  // Time origin: the run's start, else its first sample.
  std::int64_t t0 = run.start_ns.value_or(0);
  if (!run.start_ns) {
    bool any = false;
    for (const auto& g : run.gpus)
      if (g.sample_count() && (!any || g.first_t_ns() < t0)) t0 = g.first_t_ns(), any = true;
  }
  out += fmt::format("{{\"run_id\":{},\"label\":{},\"world_size\":{},\"t0_ns\":{},\"gpus\":[", json_quote(run.run_id),
                     json_quote(run.label), world_size ? std::to_string(*world_size) : "null", t0);
  // Its GPUs: summarized where they were read (their series rendered then, by the function below),
  // else rendered here.
  if (run.gpu_digest) run.gpu_digest->page_json.unpack_to(out);
  else append_gpu_series(out, run.gpus, t0, gpu_cap, max_points);
  out += "],\"ranks\":[";
  bool first = true;
  for (const auto& r : rank_steps) {
    const std::size_t n = r.ms.size();
    auto idx = decimate_indices(n, step_cap, {&r.ms});
    if (!first) out += ',';
    first = false;
    out += fmt::format("{{\"rank\":{},\"steps\":{},\"mean_ms\":", r.rank, r.steps);
    out += compact_number(r.mean_ms, 3);
    out += ",\"step\":";
    append_array(out, r.step, idx, 0);
    out += ",\"step_ms\":";
    append_array(out, r.ms, idx, 3);
    out += '}';
  }
  out += ']';
  out += '}';
  return out;
}

// A JSON text without the blanks and newline at its end; "null" for none.
std::string_view trim_json_end(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s.empty() ? std::string_view("null") : s;
}

}  // namespace

void summarize_gpu_log(const Run& run, RunData& log, const std::shared_ptr<TextSpill>& spill) {
  GpuDigest digest = digest_gpus(run, log.gpus);
  // As render_series_json_to draws them with its default limits (`scalelens report`'s): each
  // chart its share of points, which ingest set (run folders' GPU logs always have one).
  std::string page;
  append_gpu_series(page, log.gpus, run.start_ns.value_or(0), SeriesLimits{}.max_points_per_series,
                    SeriesLimits{}.max_points_per_series);
  digest.page_json = PackedText::pack(page);
  digest.page_json.spill_to(spill);
  log.gpu_digest = std::make_shared<const GpuDigest>(std::move(digest));
  std::vector<GpuSeries>().swap(log.gpus);
}

std::vector<const Run*> study_runs_of(const Study& study, const Summary& summary) {
  // Sorted ids, not a hash map: for 10,000 runs a map was a MiB held while the page was written.
  std::vector<std::pair<std::string_view, const Run*>> ids;
  ids.reserve(study.runs.size());
  for (const auto& run : study.runs) ids.emplace_back(run.run_id, &run);
  std::stable_sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Run*> runs(summary.runs.size(), nullptr);
  for (std::size_t i = 0; i < summary.runs.size(); ++i) {
    const std::string_view id = summary.runs[i].run_id;
    auto it = std::lower_bound(ids.begin(), ids.end(), id, [](const auto& e, std::string_view v) { return e.first < v; });
    if (it != ids.end() && it->first == id) runs[i] = it->second;
  }
  return runs;
}

void render_series_json_to(const Study& study, const Summary& summary, const std::function<void(std::string_view)>& sink,
                           const SeriesLimits& limits, std::string_view run_id) {
  // Runs that made it onto a curve (ingest already left out duplicate ids).
  std::vector<const Run*> runs = study_runs_of(study, summary);
  std::vector<std::optional<int>> world_sizes;  // the summaries', as summary.json gives them
  std::size_t kept = 0;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i] && (run_id.empty() || summary.runs[i].run_id == run_id)) {
      runs[kept++] = runs[i];
      world_sizes.push_back(summary.runs[i].world_size);
    }
  runs.resize(kept);
  // Runs whose GPUs were summarized as they were read carry their series drawn then, with the
  // default limits (`scalelens report`'s): other limits would not apply to them.
  if (limits.max_points_per_series != SeriesLimits{}.max_points_per_series)
    for (const Run* run : runs)
      if (run->gpu_digest)
        throw std::logic_error("the page's series of run '" + run->run_id +
                               "' were drawn with the default limits when its GPUs were summarized");
  const bool default_step_limits = limits.max_points_per_series == SeriesLimits{}.max_points_per_series &&
                                   limits.step_budget == SeriesLimits{}.step_budget;
  // Step times gathered once per run: counted here for the budget (every chart with the steps it had
  // before any thinning), rendered below. Charts thinned as they were read (their log's share by
  // size, which is about this cap where ranks log alike) are drawn as they are; the others (steps
  // kept as intervals, traces) get the cap over all.
  std::vector<std::vector<RankStepChart>> rank_steps(runs.size());
  std::vector<char> thinned(runs.size());  // its charts thinned as read (step_charts_from_table)
  std::size_t gpu_series = 0, gpu_points = 0, rank_series = 0, rank_points = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& g : runs[i]->gpus)
      if (!g.chart_points) gpu_series += 1, gpu_points += g.sample_count();  // the others have their share
    thinned[i] = step_charts_from_table(*runs[i]);
    if (thinned[i] && !default_step_limits)
      throw std::logic_error("the page's step charts of run '" + runs[i]->run_id +
                             "' were thinned with the default limits when its step log was read");
    rank_steps[i] = rank_step_times(*runs[i]);
    for (const auto& rs : rank_steps[i]) rank_series += 1, rank_points += rs.steps;
  }
  auto cap = [&](std::size_t series, std::size_t budget) {
    return std::min(chart_points_per_series(budget, series), limits.max_points_per_series);
  };
  const std::size_t gpu_cap = gpu_points <= limits.gpu_point_budget ? limits.max_points_per_series
                                                                     : cap(gpu_series, limits.gpu_point_budget);
  const std::size_t step_cap =
      rank_points <= limits.step_budget ? limits.max_points_per_series : cap(rank_series, limits.step_budget);

  // Runs rendered in parallel (each decimates thousands of samples per GPU) a batch at a time and
  // handed on in order, so that only one batch of runs' text is held however many runs there are.
  const unsigned threads = default_threads(0);
  const std::size_t batch = limits.runs_per_batch ? limits.runs_per_batch : std::size_t{64} * threads;
  std::vector<std::string> parts(std::min(batch, runs.size()));
  sink("{\"runs\":[");
  for (std::size_t first = 0; first < runs.size(); first += batch) {
    const std::size_t n = std::min(batch, runs.size() - first);
    parallel_for(n, threads, [&](std::size_t i) {  // a run that cannot be rendered is raised here
      parts[i] = (first + i ? "," : "") +
                 render_run_series(*runs[first + i], world_sizes[first + i], rank_steps[first + i], gpu_cap,
                                   thinned[first + i] ? limits.max_points_per_series : step_cap,
                                   limits.max_points_per_series);
    });
    for (std::size_t i = 0; i < n; ++i) {
      sink(parts[i]);
      std::string().swap(parts[i]);
    }
  }
  sink("]}");
}

std::string render_series_json(const Study& study, const Summary& summary, const SeriesLimits& limits,
                               std::string_view run_id) {
  std::string out;
  render_series_json_to(study, summary, [&](std::string_view part) { out += part; }, limits, run_id);
  return out;
}

std::vector<std::string_view> report_data_pieces(std::string_view summary_json, std::string_view series_json,
                                                 std::string_view mode, std::string_view figures_json,
                                                 std::string_view compare_json) {
  return report_data_pieces(summary_json, std::vector<std::string_view>{series_json}, mode, figures_json, compare_json);
}

std::vector<std::string_view> report_data_head(std::string_view mode) {
  // `mode` is one of our own words ("static", "live"): quoted as it is.
  return {"{\"schema\":\"", kReportDataSchema, "\",\"mode\":\"", mode,
          web_bundle_built() ? "\",\"ui_built\":true,\"summary\":" : "\",\"ui_built\":false,\"summary\":"};
}

std::vector<std::string_view> report_data_tail(std::string_view figures_json, std::string_view compare_json) {
  std::vector<std::string_view> pieces{",\"figures\":", trim_json_end(figures_json)};
  if (!compare_json.empty()) pieces.insert(pieces.end(), {",\"compare\":", trim_json_end(compare_json)});
  pieces.push_back("}");
  return pieces;
}

std::vector<std::string_view> report_data_pieces(std::string_view summary_json,
                                                 const std::vector<std::string_view>& series_pieces,
                                                 std::string_view mode, std::string_view figures_json,
                                                 std::string_view compare_json) {
  // Trimmed as one text would be: blank pieces at the end go, then the last one's blanks.
  std::vector<std::string_view> series(series_pieces);
  while (!series.empty() && series.back().find_first_not_of(" \n") == std::string_view::npos) series.pop_back();
  if (series.empty()) series.push_back("null");
  series.back() = trim_json_end(series.back());
  auto pieces = report_data_head(mode);
  pieces.insert(pieces.end(), {trim_json_end(summary_json), kReportDataSeriesKey});
  pieces.insert(pieces.end(), series.begin(), series.end());
  const auto tail = report_data_tail(figures_json, compare_json);
  pieces.insert(pieces.end(), tail.begin(), tail.end());
  return pieces;
}

std::string render_report_data(std::string_view summary_json, std::string_view series_json, std::string_view mode,
                               std::string_view figures_json, std::string_view compare_json) {
  std::string out;
  for (std::string_view piece : report_data_pieces(summary_json, series_json, mode, figures_json, compare_json)) out += piece;
  return out;
}

ReportPageWriter::ReportPageWriter(std::function<void(std::string_view)> out) : out_(std::move(out)) {
  const std::string_view page = web_bundle_html();
  static constexpr std::string_view kOpen = R"(<script type="application/json" id="scalelens-data">)";
  const auto open = page.find(kOpen);
  const auto close = open == std::string_view::npos ? open : page.find("</script>", open + kOpen.size());
  if (open == std::string_view::npos || close == std::string_view::npos) {
    // A page without the data slot (should not happen): add one before </body>.
    auto body = page.rfind("</body>");
    if (body == std::string_view::npos) body = page.size();
    out_(page.substr(0, body));
    out_(kOpen);
    after_ = {"</script>", page.substr(body)};
    return;
  }
  out_(page.substr(0, open));
  out_(kOpen);
  after_ = {page.substr(close), {}};
}

void ReportPageWriter::data(std::string_view piece) {
  for (std::size_t at = 0; at < piece.size();) {
    const std::size_t lt = std::min(piece.find('<', at), piece.size());
    if (lt > at) out_(piece.substr(at, lt - at));
    if (lt == piece.size()) break;
    out_("\\u003c");  // only ever inside JSON strings, where this is the same character
    at = lt + 1;
  }
}

void ReportPageWriter::finish() {
  for (std::string_view piece : after_)
    if (!piece.empty()) out_(piece);
}

std::vector<std::string_view> report_html_pieces(const std::vector<std::string_view>& data_pieces) {
  std::vector<std::string_view> out;
  ReportPageWriter page([&](std::string_view piece) { out.push_back(piece); });
  for (std::string_view piece : data_pieces) page.data(piece);
  page.finish();
  return out;
}

std::string render_report_html(std::string_view data_json) {
  std::string out;
  for (std::string_view piece : report_html_pieces({data_json})) out += piece;
  return out;
}

}  // namespace scalelens
