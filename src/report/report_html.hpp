#pragma once
// report.html: the dashboard bundle with the study's data inlined, so that it opens offline.
// Also the per-run time series (GPU utilization and power per GPU, per-rank step times) that the
// drill-down view shows and the Summary does not hold.
#include <array>
#include <cstddef>
#include <functional>
#include <vector>
#include <string>
#include <string_view>

#include "analysis/summary.hpp"
#include "model/study.hpp"

namespace scalelens {

inline constexpr const char* kReportDataSchema = "scalelens.report-data/1";

struct SeriesLimits {
  std::size_t max_points_per_series = kChartPointsPerSeries;  // per GPU series and per rank's step times
  std::size_t gpu_point_budget = kGpuChartPointBudget;       // all GPU series of all runs together
  std::size_t step_budget = kStepChartPointBudget;  // all per-rank step times of all runs together
  std::size_t runs_per_batch = 0;            // runs rendered together before they are handed on (0: 64 per thread)
};

// {"runs": [{"run_id", "label", "world_size", "t0_ns", "gpus": [{"node", "index", "uuid", "name",
//   "t": [s since t0], "util": [%], "power": [W]}], "ranks": [{"rank", "steps", "mean_ms" (over all
//   its steps, before decimation), "step": [index], "step_ms": [ms]}], "breakdown": {...µs summed over ranks} | null}]}
// Only runs that are in `summary.runs`; when `run_id` is not empty, only that run. Series are
// decimated (min and max of each bucket kept) to the limits.
std::string render_series_json(const Study& study, const Summary& summary, const SeriesLimits& limits = {},
                               std::string_view run_id = {});
// The same handed to `sink` in parts, in order (a batch of runs rendered in parallel at a time), so
// that a large study's series are written as they are made, never whole in memory. A series set
// aside in a temporary file that cannot be read back is a std::runtime_error, on the caller's thread.
void render_series_json_to(const Study& study, const Summary& summary, const std::function<void(std::string_view)>& sink,
                           const SeriesLimits& limits = {}, std::string_view run_id = {});
// A run whose GPUs were summarized as they were read (GpuDigest) keeps the series drawn then, with
// the default limits (`scalelens report`'s).

// Each of the summary's runs as the study holds it, by run id (the first of an id, in the study's
// order), in the summary's order; nullptr where the study has none. For the page and the figures.
std::vector<const Run*> study_runs_of(const Study& study, const Summary& summary);

// For ingest (IngestOptions::summarize_gpus), `scalelens report`'s: a run folder's GPU log, as it is
// read, becomes the run's GPU figures and the page's series of them, and its GPUs are let go. With
// `spill`, the series wait there rather than in memory (one process only: they cannot travel).
void summarize_gpu_log(const Run& run, RunData& log, const std::shared_ptr<TextSpill>& spill = nullptr);

// {"schema": kReportDataSchema, "mode": "static"|"live", "ui_built": bool, "summary": <summary.json>,
//  "series": <series json or null>, "figures": <figures json or null>[, "compare": {"before":
//  <the other study's summary.json>, "comparison": <scalelens.compare/1>}]}
std::string render_report_data(std::string_view summary_json, std::string_view series_json, std::string_view mode,
                               std::string_view figures_json = {}, std::string_view compare_json = {});

// The report data of render_report_data as the pieces it is made of, in order: views into the
// arguments and into constant text, so that a large report is not copied to be joined. `mode` is
// written unquoted between quotes: "static" or "live" only.
std::vector<std::string_view> report_data_pieces(std::string_view summary_json, std::string_view series_json,
                                                 std::string_view mode, std::string_view figures_json = {},
                                                 std::string_view compare_json = {});
// With the series given in pieces.
std::vector<std::string_view> report_data_pieces(std::string_view summary_json,
                                                 const std::vector<std::string_view>& series_pieces,
                                                 std::string_view mode, std::string_view figures_json = {},
                                                 std::string_view compare_json = {});

// The pieces of report_data_pieces in three parts, for a writer that hands the summary and the
// series over as they are rendered (write_summary_json, render_series_json_to): the head, then
// the summary, kReportDataSeriesKey, the series, then the tail.
std::vector<std::string_view> report_data_head(std::string_view mode);
inline constexpr std::string_view kReportDataSeriesKey = ",\"series\":";
std::vector<std::string_view> report_data_tail(std::string_view figures_json = {}, std::string_view compare_json = {});

// The bundle with the data inlined into its scalelens-data script; every '<' of the data is
// written as \u003c so the data can never close the script element. Written to `out` piece by
// piece (views into the bundle, the data and constant text): the page up to the data when made,
// each data piece as it is given, the rest of the page at finish().
class ReportPageWriter {
 public:
  explicit ReportPageWriter(std::function<void(std::string_view)> out);
  void data(std::string_view piece);
  void finish();

 private:
  std::function<void(std::string_view)> out_;
  std::array<std::string_view, 2> after_{};  // the page after the data
};
// The page as pieces, for write_file_atomic, or joined.
std::vector<std::string_view> report_html_pieces(const std::vector<std::string_view>& data_pieces);
std::string render_report_html(std::string_view data_json);

// Compact number for the series: at most `decimals` decimals, trailing zeros dropped, NaN -> null.
std::string compact_number(double v, int decimals);

}  // namespace scalelens
