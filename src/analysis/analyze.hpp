#pragma once
// Turns a Study into a Summary, following DESIGN.md's metric definitions exactly.
#include <optional>
#include <string>

#include "analysis/energy_choice.hpp"
#include "analysis/summary.hpp"
#include "model/study.hpp"

namespace scalelens {

enum class BaselineKind { per_label, common };

// The most GPUs --predict and --max-gpus (and the Python API's predict and max_gpus) may name.
inline constexpr int kMaxRequestedGpus = 1 << 24;

struct AnalysisOptions {
  int warmup_epochs = 1;
  int warmup_steps = 1;  // profiled steps left out of step time (--warmup-steps)
  BaselineKind baseline = BaselineKind::per_label;
  std::optional<int> baseline_gpus;   // --baseline-gpus N: fixes p0
  std::optional<std::string> scaling;  // "strong" | "weak": overrides detection
  unsigned threads = 0;                // runs summarized in parallel; 0 = every core this process may use
  std::vector<int> predict;            // --predict: GPU counts; empty: 2× and 4× each curve's largest
  int model_replicates = 1000;         // bootstrap replicates of the scaling model
  ChoiceOptions choice;                // --objective, --min-efficiency, --max-gpus, --carbon-intensity
};

// The ranks' breakdowns a run's figures come from: its GPU traces where it has any, else the MPI
// interposer's CPU-side records (mixing the two would add unlike figures). The report's page uses
// the same choice, so its bars and summary.json agree.
std::vector<const RankBreakdown*> measured_breakdown(const Run& run);

// Per-run figures (no configuration context); diagnostics about the run go to `warnings`.
// The ops that lose most time against the roofline, most first, at most 5 (run and configuration).
void keep_top_losses(std::vector<OpLoss>& ops);

// A run's epochs as its summary reads them: a row per epoch number, in order (EpochRow).
std::vector<EpochRow> tabulate_epochs(const std::vector<Interval>& epochs);
// A run's steps as its summary reads them (StepTable: the rows and the steps' extent; no charts).
StepTable tabulate_steps(const std::vector<Interval>& steps);
// Its ranks' step times as the report's page draws them, by rank: every step, or each rank thinned
// (decimate_indices) to its part of `log_points` points for them all (chart_points_per_series).
std::vector<RankStepChart> rank_step_charts(const std::vector<Interval>& steps,
                                            std::optional<std::size_t> log_points = std::nullopt);

// `unit` is what its study's world sizes count (Summary::world_size_unit), as its warnings say them.
RunSummary summarize_run(const Run& run, const AnalysisOptions& options, std::vector<Diagnostic>& warnings,
                         const std::string& unit = "GPUs");
// The world size a run is placed at, its summary's: its stated one, or where its files hold ranks
// beyond that, the least they allow (highest rank + 1, `ranks-beyond-world-size`); none where it
// states none. What scales with the run's GPUs (--batch-per-gpu's batch) scales with this.
std::optional<int> placed_world_size(const Run& run);
// The GPU half of a run's summary from `gpus`: the run's own, or (where `scalelens report` reads a
// run folder's only GPU log) that log's, before they are merged. The same figures and warnings
// either way; the run's window and format must be final (what depends on the world size the run
// is placed at is its summary's: summarize_run).
GpuDigest digest_gpus(const Run& run, const std::vector<GpuSeries>& gpus);

Summary analyze(const Study& study, const AnalysisOptions& options);
// As analyze(), for a caller that keeps the study only for the report's page and figures
// (`scalelens report`): each run lets go of what only its summary needed once it is made (its
// epochs, its GPUs' figures; its digest keeps the page's series), so that a large study and its
// summaries are not both whole in memory (issue 17, part 2). The same summary either way.
Summary analyze_releasing(Study& study, const AnalysisOptions& options);

// Integral over [t0, t1] of the piecewise-linear function through (t_ns[i], v[i]) (NaN values
// skipped), restricted to where samples exist. Returns {integral in value·seconds, seconds covered}.
// With max_gap_ns > 0, stretches between consecutive samples longer than that (the logger paused)
// are not integrated over: their seconds inside [t0, t1] go to skipped_s.
struct Integral {
  double value = 0, covered_s = 0;
  double skipped_s = 0, longest_skipped_s = 0;
};
Integral integrate_samples(const std::vector<std::int64_t>& t_ns, const std::vector<double>& v, std::int64_t t0,
                           std::int64_t t1, std::int64_t max_gap_ns = 0);

// One step of integrate_samples: the segment from (prev_t, prev_v) to (t, v), two samples with
// values, clipped to [t0, t1] and added to `r`; `piece(seconds, value_at_start, value_at_end)` is
// told the part that was. Inline: a GPU's figures take it once per sample.
struct NoPiece {
  void operator()(double, double, double) const {}
};
template <class Piece = NoPiece>
inline void integrate_segment(Integral& r, std::int64_t prev_t, double prev_v, std::int64_t t, double v,
                              std::int64_t t0, std::int64_t t1, std::int64_t max_gap_ns, Piece&& piece = {}) {
  if (t <= prev_t) return;
  // Clip the segment [prev_t, t] to [t0, t1], interpolating linearly at the cut points.
  const std::int64_t a = prev_t > t0 ? prev_t : t0, b = t < t1 ? t : t1;
  if (b <= a) return;
  const double secs = static_cast<double>(b - a) * 1e-9;
  if (max_gap_ns > 0 && t - prev_t > max_gap_ns) {
    // Nothing was measured there: a straight line across a pause would be made up.
    r.skipped_s += secs;
    r.longest_skipped_s = r.longest_skipped_s < secs ? secs : r.longest_skipped_s;
    return;
  }
  const double span = static_cast<double>(t - prev_t);
  // An end that is not cut keeps its sample's value exactly: interpolating at it can round to the
  // next double, which puts a reading of exactly 95.5 % in the 95 % bin of a piece's histogram.
  auto at = [&](std::int64_t x) {
    return x == prev_t ? prev_v : x == t ? v : prev_v + (v - prev_v) * static_cast<double>(x - prev_t) / span;
  };
  const double va = at(a), vb = at(b);
  r.value += 0.5 * (va + vb) * secs;
  r.covered_s += secs;
  piece(secs, va, vb);
}

// Gaps longer than this between a series' samples are not integrated over for energy: the
// typical (median) step between samples with a value × kEnergyGapIntervals, and at least
// kEnergyGapMinNs (a stall of a fraction of a second is interpolated). 0 with under 3 samples.
inline constexpr int kEnergyGapIntervals = 5;
inline constexpr std::int64_t kEnergyGapMinNs = 1'000'000'000;
// A GPU's log that begins this many sampling intervals (and kEnergyGapMinNs) or more after its
// run's start, or ends as long before its end, leaves that head or tail out of the energy: a gap.
inline constexpr int kEnergyEdgeIntervals = 2;
std::int64_t energy_gap_threshold_ns(const std::vector<std::int64_t>& t_ns, const std::vector<double>& v);

// A cumulative counter with resets (a decrease means it restarted from 0) made monotonic.
std::vector<double> unwrap_counter(const std::vector<double>& v);

}  // namespace scalelens
