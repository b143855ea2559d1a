#pragma once
// The one study model every reader fills and every analysis reads (see docs/DESIGN.md). Readers
// never compute figures; analyses never look at file formats.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostics.hpp"
#include "common/held_apart.hpp"
#include "common/nan_optional.hpp"
#include "common/packed_text.hpp"

namespace scalelens {

// One application-reported interval (epochs.csv / steps.csv, an MLPerf epoch, an itwinai epoch).
// Formats that give only a duration set start_ns = 0 and end_ns = duration.
struct Interval {
  int rank = 0;
  std::int64_t index = 0;  // epoch or step number
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  NanOptional samples;  // samples processed by that rank in it (40 bytes an interval, not 48)
  double seconds() const { return static_cast<double>(end_ns - start_ns) * 1e-9; }
};

// A value a source did not provide. Samples use NaN rather than std::optional: a study holds tens
// of millions of them, and this halves their size (see bench/RESULTS.md).
inline constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();
inline bool present(double v) { return !std::isnan(v); }

// One GPU sample (gpu.csv, nvidia-smi, itwinai energy data).
struct GpuSample {
  std::int64_t t_ns = 0;
  double energy_mj = kMissing;  // cumulative counter; double because it is large and differenced
  float util_pct = kMissing, mem_util_pct = kMissing, mem_used_bytes = kMissing, power_w = kMissing,
        sm_clock_mhz = kMissing, temp_c = kMissing;
};

// How long a GPU spent at each whole percent of utilization (0…100): a fixed-size sketch of its
// utilization over time, from which percentiles are read, of one GPU or of many merged (DESIGN.md,
// "GPU utilization over time"). Weights: seconds, or samples where times are nominal.
inline constexpr std::size_t kUtilBins = 101;
using UtilHistogram = std::array<float, kUtilBins>;
// A run's, held in the bytes its bins with a value need: a study keeps one per run, and a run's
// utilization mostly falls in a few whole percents (issue 17, part 2). dense() gives back the same
// values, bit for bit.
struct SparseUtilHistogram {
  std::array<std::uint64_t, 2> filled{};  // bit v: bin v has a value other than +0
  std::vector<float> values;              // those bins' values, in bin order
  static SparseUtilHistogram of(const UtilHistogram& dense) {
    SparseUtilHistogram s;
    std::size_t count = 0;
    for (float w : dense) count += std::bit_cast<std::uint32_t>(w) != 0;
    s.values.reserve(count);
    for (std::size_t v = 0; v < kUtilBins; ++v)
      if (std::bit_cast<std::uint32_t>(dense[v]) != 0) {
        s.filled[v / 64] |= std::uint64_t{1} << (v % 64);
        s.values.push_back(dense[v]);
      }
    return s;
  }
  UtilHistogram dense() const {
    UtilHistogram out{};
    std::size_t next = 0;
    for (std::size_t v = 0; v < kUtilBins && next < values.size(); ++v)
      if (filled[v / 64] >> (v % 64) & 1) out[v] = values[next++];
    return out;
  }
};
// One GPU's, as the share of its whole at or below each bin, in 1/65535: half the size, for a
// study keeps one per GPU. Cumulative, so that packing moves each share at or below a value by at
// most 1/131070 (per-bin shares would add up 101 such errors and break ties).
inline constexpr double kPackedShareUnit = 65535;
using PackedUtilHistogram = std::array<std::uint16_t, kUtilBins>;
// The bin of a utilization in 0…100 %: the nearest whole percent.
inline std::size_t util_bin(double pct) {
  if (!(pct > 0)) return 0;
  return pct >= 100 ? 100 : static_cast<std::size_t>(pct + 0.5);
}

// What one GPU's samples say over a run's window: the per-GPU half of the run's GPU figures
// (analysis/series_figures.hpp computes it; run_metrics.cpp adds them up over the run's GPUs).
struct GpuSeriesFigures {
  std::size_t samples_inside = 0;         // samples within the window
  std::optional<double> peak_mem_bytes;   // the most memory in use within the window
  std::optional<double> util_pct;         // time-weighted mean utilization (plain mean when time-less)
  double util_covered_s = 0;              // the time util_pct is a mean over (0: a plain mean)
  // The series' first and last sample times (measured times only): a log rotated or restarted
  // holds one GPU's samples in two files, one after the other, which are one series, not two.
  std::int64_t first_t_ns = 0, last_t_ns = 0;
  // Its first and last power readings (NaN: none), to integrate the stretch between two such files.
  float first_power_w = std::numeric_limits<float>::quiet_NaN(), last_power_w = std::numeric_limits<float>::quiet_NaN();
  // Its first and last energy counter readings as read (NaN: none) and their times: a counter that
  // goes on across the stretch between two such files measures that stretch's energy.
  double first_counter_mj = std::numeric_limits<double>::quiet_NaN(), last_counter_mj = std::numeric_limits<double>::quiet_NaN();
  std::int64_t first_counter_t_ns = 0, last_counter_t_ns = 0;
  // Its time at each whole percent (cumulative shares), whose mean is util_pct (to the bins' rounding): each stretch
  // between two samples gives half its time to either end's value, as the trapezoid mean weighs
  // them; per sample where util_pct is a plain mean. All zero without utilization.
  PackedUtilHistogram util_time{};
  // What the energy counter gave, beside energy_from (which series the energy came from).
  enum class CounterUse : std::uint8_t {
    none,                         // it gave none of the energy (too few readings in the window, or left out)
    measured_all,                 // energy_from counter: the counter alone
    measured_with_power_at_ends,  // energy_from counter: power where it stopped before the samples did or began
                                  // after them (the energy covers the samples' span)
    held_still,                   // energy_from power: the counter held still over the window while the GPU drew
  } counter_use = CounterUse::none;
  enum class EnergyFrom { none, counter, power } energy_from = EnergyFrom::none;
  double energy_j = 0;                    // from the counter, or the power integral (measured times)
  // Nominal times (rebuilt from sample index × interval): power summed over the samples, for the
  // caller to multiply by the interval the run states (else `spacing_s`).
  double power_sum_w = 0;
  // Power readings counted: all of them (nominal times), or those inside the window (measured), so
  // that readings which give no energy (all at one instant) can be said to.
  std::size_t power_samples = 0;
  double spacing_s = 0;                   // the first step between two distinct sample times
  // Power-series time left out of the energy: pauses longer than the series' usual step.
  double skipped_s = 0, longest_skipped_s = 0;
  // An energy counter that rose by more than a GPU can draw: its reading and time (it is then not
  // used; the energy comes from power).
  std::optional<double> impossible_counter_mj;
  std::int64_t impossible_counter_t_ns = 0;
};

// One point of a GPU's chart (the report's drill-down): time, utilization and power. A chart has
// at most kChartPointsPerSeries points, and a report's GPU charts together about kGpuChartPointBudget.
inline constexpr std::size_t kChartPointsPerSeries = 2000;
inline constexpr std::size_t kGpuChartPointBudget = 300000;
// The report's per-rank step-time charts together keep about this many points.
inline constexpr std::size_t kStepChartPointBudget = 200000;
// Points each of `series` charts may keep so that all keep about `budget` (0: no budget): at least
// 8, at most kChartPointsPerSeries.
inline std::size_t chart_points_per_series(std::size_t budget, std::size_t series) {
  if (budget == 0) return kChartPointsPerSeries;
  const std::size_t each = budget / (series ? series : 1);
  return each < 8 ? 8 : each > kChartPointsPerSeries ? kChartPointsPerSeries : each;
}
struct GpuChartPoint {
  std::int64_t t_ns = 0;
  float util_pct = kMissing, power_w = kMissing;
};

// A GPU series reduced as it was read, once its run's window was known (ingest): the figures over
// that window and a decimated chart stand for the samples, which are not kept, so that a report's
// memory does not grow with the samples.
struct ReducedGpuSeries {
  std::int64_t t0 = 0, t1 = 0;  // the window the figures are over
  GpuSeriesFigures figures;
  std::size_t sample_count = 0;  // how many samples were read
  std::int64_t first_t_ns = 0;  // the first sample's time
  std::vector<GpuChartPoint> chart;
};

// Samples of one GPU from one source file. Identity is (node, uuid) where a uuid is known, else
// (node, index): the same GPU seen in two sources would be counted twice, which analysis flags.
struct GpuSeries {
  std::string node;  // host name; "" when the source does not say
  int index = 0;
  std::string uuid;
  std::string name;    // GPU model, e.g. "NVIDIA A100-SXM4-80GB", when known
  std::string source;  // file it came from
  bool nominal_timestamps = false;  // times rebuilt from sample index × interval, not measured
  std::vector<GpuSample> samples;   // sorted by t_ns; empty once reduced
  std::optional<ReducedGpuSeries> reduced;  // set when the samples were reduced as they were read
  // The points its chart keeps, set by ingest for the GPU logs of run folders (their share of the
  // chart budget, the same whether the samples are reduced or kept); 0: the report's budget decides.
  std::size_t chart_points = 0;
  std::size_t sample_count() const { return reduced ? reduced->sample_count : samples.size(); }
  // The first sample's time; only when sample_count() > 0.
  std::int64_t first_t_ns() const { return reduced ? reduced->first_t_ns : samples.front().t_ns; }
};

struct HostSample {
  std::int64_t t_ns = 0;
  double cpu_util_pct = kMissing, mem_used_bytes = kMissing, cpu_energy_uj = kMissing;
};

// A host series reduced as it was read (as ReducedGpuSeries): its CPU energy over the run's window.
struct ReducedHostSeries {
  std::int64_t t0 = 0, t1 = 0;
  std::optional<double> cpu_energy_j;
  std::size_t sample_count = 0;
};

struct HostSeries {
  std::string node;
  std::string source;
  std::vector<HostSample> samples;  // empty once reduced
  std::optional<ReducedHostSeries> reduced;
};

// ranks/<rank>.json
struct RankRecord {
  int rank = 0;
  std::string host;
  std::optional<int> local_rank;
  std::vector<std::string> devices;
  std::optional<std::int64_t> start_ns, end_ns;
  std::optional<int> exit_status;
  std::string source;
};

// FLOP/s achieved by `flops` over `step_time_us` of steps; NaN when the time is not positive.
// MFU is this over the GPU's peak (DESIGN.md): one formula for `scalelens trace` and the report.
inline double achieved_flops_per_s(double flops, double step_time_us) {
  return step_time_us > 0 ? flops / (step_time_us * 1e-6) : std::numeric_limits<double>::quiet_NaN();
}

// One collective kernel of a trace's analysed steps, kept for matching the calls of one
// collective across ranks (trace/collectives.hpp: wait vs transfer).
struct CollectiveCall {
  std::string group;  // "Process Group Name" and "Ranks" where the trace records them, else ""
  std::string name;   // AllReduce, AllGather, SendRecv ...
  std::int64_t start_ns = 0, dur_ns = 0;  // start on the trace's clock plus baseTimeNanoseconds
  double bytes = -1;  // the larger of the in and out message × dtype size (nccl-tests' size); -1 unknown
  int group_size = -1;
  // The ProfilerStep#N it was launched in: calls are matched across ranks within one step number
  // only (ranks that profiled different steps made different calls); -1 unknown.
  std::int64_t step = -1;
  // Its parts that no computation kernel overlapped (exposed communication), as [begin, end)
  // offsets in ns from start_ns, flattened: b0, e0, b1, e1, ...
  std::vector<std::int64_t> exposed_ns;
  // A send or a receive ("Collective name" send/recv): it pairs two ranks, not the group. `peer`:
  // the other rank (global; "Dst Rank" / "Src Rank"), -1 unknown.
  bool point_to_point = false, sends = false;
  int peer = -1;
};

// An op's GPU time and the part of it beyond what the roofline allows (trace/roofline.hpp), for
// the report's "ops that lose most against the roofline" and "the op that grows most with p".
// Per rank: totals over its analysed steps; per run and configuration: per step and rank.
struct OpLoss {
  std::string name, shapes;  // aten::mm, [[16, 512], [512, 512]]
  std::string bound;         // "compute" | "memory"
  double gpu_us = 0, lost_us = 0;
};

// Bus bandwidth of the matched calls of one collective whose message sizes fall in one
// power-of-two bin (trace/collectives.hpp): the points of the bandwidth-vs-message-size chart.
struct BandwidthPoint {
  std::string collective;
  double bytes = 0;       // mean message size of the calls
  double busbw_gbps = 0;  // median (per run) / calls-weighted mean over runs (per configuration)
  std::size_t calls = 0;
};

// The GPU ran behind the CPU: the GPU work a rank's steps launched spans more than their duration
// (launches queue up without a sync), so a ProfilerStep is shorter than the step it stands for.
// Launch lag alone stretches the span by a few percent; past 5% it is said, and no efficiency rests
// on that step time. Both per step or both summed over steps; µs.
inline constexpr double kGpuBehindSpanRatio = 1.05;
inline bool gpu_ran_behind(double gpu_span_us, double step_time_us) {
  return gpu_span_us > kGpuBehindSpanRatio * step_time_us;
}

// One profiled step's parts on one rank (µs), kept beside its step time so that the lost-time
// account can leave out the warm-up steps that the step time leaves out (--warmup-steps).
struct RankStepParts {
  double comp_us = 0, exposed_comm_us = 0, idle_us = 0, dataloader_gpu_idle_us = 0, span_us = 0;
};

// Per-rank communication/computation breakdown (from a Kineto trace or an MPI interposer), summed
// over the steps analysed. Filled by the trace and comm readers; all times in microseconds.
struct RankBreakdown {
  int rank = 0;
  std::string source;
  int steps = 0;
  double step_time_us = 0, comp_us = 0, comm_us = 0, overlap_us = 0, exposed_comm_us = 0;
  double mem_us = 0, busy_us = 0, idle_us = 0, span_us = 0;
  std::vector<double> step_times_us;  // per step, for stragglers
  std::vector<std::int64_t> step_ids;  // ProfilerStep number of each step_times_us entry (traces only)
  std::vector<RankStepParts> step_parts;  // each step_times_us entry's parts (traces only)
  std::vector<std::int64_t> step_numbers;  // the ProfilerStep numbers the trace holds (tells windows from copies)
  // From an MPI interposer (comm/<rank>.csv): time inside MPI calls vs outside, on the CPU. A GPU
  // trace is the better instrument: a run with traces is summarized from its traces alone (mixing
  // GPU-side and CPU-side ranks would add unlike figures).
  bool from_mpi = false;
  // From a Kineto trace with with_flops=True: the FLOPs the profiler estimated over the steps, and
  // the GPU's peak FLOP/s at their precision when known. MFU = flops / (step_time_us·1e-6) / peak_flops.
  std::optional<double> flops, peak_flops;
  // How the trace says it was recorded, to form runs of traces that have no scalelens.json:
  // distributedInfo's world size and backend, and when profiling began (Unix ns) where known.
  std::optional<int> world_size;
  std::string backend;
  std::optional<std::int64_t> start_ns;
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: one per profiled process (RankSummary)
  std::vector<CollectiveCall> calls;  // its collective kernels, in start order
  std::vector<OpLoss> op_losses;      // the ops with most GPU time, most first; lost_us NaN when unknown
  double dataloader_gpu_idle_us = 0;  // GPU idle while the input pipeline loaded (traces)
  // Model FLOP utilization, when the FLOPs, a step time and the peak are all known.
  std::optional<double> mfu() const {
    if (!flops || !peak_flops || *peak_flops <= 0) return std::nullopt;
    const double achieved = achieved_flops_per_s(*flops, step_time_us);
    return std::isfinite(achieved) ? std::optional<double>(achieved / *peak_flops) : std::nullopt;
  }
  // Per rank: summed over ranks, one rank's excess would hide below the others' 5%.
  bool ran_behind() const { return gpu_ran_behind(span_us, step_time_us); }
  // The time its parts are shares of in the breakdown charts, the trace table and the summary: its
  // steps', or its GPU work's span where that is longer, so that no part exceeds the whole (idle is
  // span − busy: a span 3% past the steps, short of ran_behind's 5%, made idle 101%).
  double breakdown_whole_us() const { return std::max(span_us, step_time_us); }
};

// itwinai's profiler averages (torch.profiler key_averages() as CSV, one file per rank:
// torch_profiling_averages.csv in MLflow, computation-data/ and communication-data/ before), as the
// sums itwinai's own "computation fraction" needs: self_cuda_time_total in µs over every row of
// every rank, of the ATen/c10/autograd rows, and of the "ProfilerStep*" row.
struct ProfilerAverages {
  double total_us = 0, aten_us = 0, profiler_step_us = 0;
  int files = 0;
  void add(const ProfilerAverages& o) {
    total_us += o.total_us;
    aten_us += o.aten_us;
    profiler_step_us += o.profiler_step_us;
    files += o.files;
  }
};
// Adds `more` to a sum that is none until the first is added (itwinai pools its ranks' files,
// runs' files and a configuration's runs alike).
inline void add_to(std::optional<ProfilerAverages>& sum, const ProfilerAverages& more) {
  if (!sum) sum.emplace();
  sum->add(more);
}

struct RangeStat {
  double mean = 0, min = 0, max = 0;
};

// What a run's summary takes from its GPUs (analysis/run_metrics.cpp, digest_gpus).
struct GpuFigures {
  std::optional<double> peak_mem_bytes;
  // Of its GPUs' mean utilizations: their mean, min and max (a vector of them was 64 bytes a run more).
  std::optional<RangeStat> util_pct;
  // The GPUs' shares of time at each percent, averaged; shared with the run's summary.
  std::shared_ptr<const SparseUtilHistogram> util_time_share;
  // Measured, over energy_gpus GPUs. What the run's GPUs drew beyond them (itwinai's partial
  // logging) is its summary's to extrapolate, at the world size the run is placed at.
  std::optional<double> energy_j;
  std::string energy_from;
  std::size_t energy_gpus = 0;
  std::optional<double> energy_j_per_gpu;
  std::vector<Diagnostic> warnings;  // about the GPUs, in the order the run's summary gives them
  std::vector<std::string> nodes;    // the GPUs' nodes, each once, sorted
  std::string name;                  // the first GPU's model name that is not empty
};

// A run's GPUs summarized: their figures for its summary, and what the configuration's provenance
// and the report's drill-down read (analysis/run_metrics.cpp makes it, analysis and the report's
// reading threads alike). `scalelens report` makes it where a run folder's GPU log is read, in
// place of that log's GPUs, when nothing read later can change the run's GPU figures (ingest.cpp,
// IngestOptions::summarize_gpus): a large study then holds a few hundred bytes a run instead of a
// record per GPU (issue 17, part 2).
struct GpuDigest {
  std::size_t gpus = 0;  // distinct GPUs, each counted once whichever sources saw it
  std::size_t with_uuid = 0, by_index = 0;  // GPUs told apart by UUID, by node and index
  // Let go once the run's summary is made where the study is kept only for the page
  // (analyze_releasing): a digest then holds only what is read after.
  std::shared_ptr<const GpuFigures> figures;
  // The GPUs' drill-down series as report.html carries them (the members of its "gpus" array),
  // deflated while it waits; empty where the GPUs are kept (report_html.cpp renders them then).
  PackedText page_json;
};

// One epoch of a run as its summary reads it (analysis/run_metrics.cpp, tabulate_epochs): the
// slowest rank's time and the samples of all its ranks. A run folder's epochs are held so, in
// epoch-number order, once its files are merged (ingest): a row per epoch instead of an interval
// per rank and epoch, and no number or times the summary does not read (issue 17, part 2).
struct EpochRow {
  double seconds = 0;   // the longest of its ranks' intervals
  NanOptional samples;  // summed over its ranks; none where some rank gave none
};

// One step number of a run as its summary reads it (analysis/run_metrics.cpp, tabulate_steps): the
// slowest rank's time.
struct StepRow {
  std::int64_t number = 0;
  double seconds = 0;  // the longest of its ranks' intervals
};
// One rank's step times as the report's drill-down draws them (rank_step_charts): by step number,
// thinned to at most a number of points where it is drawn (its peaks and troughs kept).
struct RankStepChart {
  int rank = 0;
  std::size_t steps = 0;  // before thinning
  std::vector<double> step, ms;
  // Over all its steps, before thinning: the page marks the slowest rank by it (a mean of the kept
  // peaks and troughs is not the rank's mean).
  double mean_ms = 0;
};
// A run folder's steps as its summary and the report's page read them, made as its only step log
// is read (ingest, IngestOptions::tabulate_steps): a row per step and a bounded chart per rank
// instead of an interval per rank and step (issue 17, part 2).
struct StepTable {
  std::vector<StepRow> slowest;  // by step number; let go once the run's summary is made
  std::int64_t begin_ns = std::numeric_limits<std::int64_t>::max(), end_ns = 0;  // first start, last end
  NanOptional samples;  // summed over every rank's steps; none where some step gave none
  std::vector<RankStepChart> ranks;  // by rank, each within its share of kStepChartPointBudget
};

// What one file adds to the run it belongs to: its intervals, samples and breakdowns, and the
// world size and GPU model it states. Readers fill one per file (ReadOutput::attach) and ingest
// merges it into the run; a run's metadata stays with the run, so that the thousands of per-file
// outputs a large study holds until they are merged are a third of a Run each (issue 17, part 2).
struct RunData {
  std::optional<int> world_size;
  std::string gpu_model;
  std::vector<Interval> epochs;
  // In place of `epochs` once a run folder's files are merged (EpochRow); never beside them.
  std::vector<EpochRow> epoch_table;
  std::vector<Interval> steps;
  // In place of `steps` once a run folder's only step log is read (StepTable); by pointer, so that
  // the many outputs that have none stay small.
  std::shared_ptr<const StepTable> step_table;
  std::vector<GpuSeries> gpus;
  std::vector<HostSeries> host_series;
  std::vector<RankRecord> ranks;
  std::vector<RankBreakdown> breakdown;
  // In place of `gpus` where the GPUs were summarized as they were read (GpuDigest); by pointer, so
  // that the many outputs that have none stay small.
  std::shared_ptr<const GpuDigest> gpu_digest;
  bool has_gpus() const { return !gpus.empty() || gpu_digest; }
  // Whether it holds any data (what a file attaches, or a run has beyond its metadata).
  bool has_data() const {
    return !epochs.empty() || !epoch_table.empty() || !steps.empty() || step_table || has_gpus() || !host_series.empty() ||
           !ranks.empty() || !breakdown.empty();
  }
};

// What only some sources say of a run: held apart from it (Run::details()), as most runs of a
// large study have none of it, 216 bytes a run less (issue 17, part 2). What `scalelens run`
// writes of every run (hosts, launcher) stays in Run, so that a study of collected runs gains too.
struct RunDetails {
  // What was trained, where the source names it (MLPerf submission_benchmark); "" otherwise. Runs
  // of different benchmarks are never repeats of one configuration.
  std::string benchmark;
  // MLPerf's submission_division ("closed", "open"): the open division may change the model and
  // its rules, so runs of the two are never repeats of one configuration.
  std::string division;
  // Concurrent model instances of one run (MLPerf weak scaling: the result files of one weak/
  // folder, each with its instance_id): `instance_of` names that run (its folder), "" for an
  // ordinary run. Instances are never pooled as repeats.
  std::string instance_of;
  std::optional<int> instance_id;
  // Names the source gave the run (MLflow: its experiment's `name` and the train run's name), for
  // --experiment, --run-names and --pattern; two experiments in one study are told apart by label.
  std::string experiment, run_name;
  // The collector's own account of what it could not measure: figure key → reason
  // (docs/collect.md, "missing"), e.g. {"gpu": "no NVML library"}.
  std::map<std::string, std::string> missing;
  std::optional<ProfilerAverages> profiler_averages;
};

// Everything known about one execution of one configuration: its metadata here, its data in
// RunData.
struct Run : RunData {
  std::string run_id;
  // Whether the source wrote run_id (scalelens.json's "run_id", MLflow's run id): only such an id
  // claims an identity another copy of the run shares. Otherwise it was made from the path (a
  // folder's, a file's) and names nothing beyond this study.
  bool run_id_written = false;
  // Its scalelens.json (its folder's, or one above it it would take defaults from) could not be
  // read or parsed: that file's `bad-manifest` error says why it is left out, which
  // `unknown-world-size` would say again. Set where the read failed, not matched by path later.
  // (Beside the bool above: in its padding, no byte more a run.)
  bool manifest_unread = false;
  // Ingest's place for the run folder that defines it (kNoFolder: none), by which ingest's
  // per-folder records stay the run's as runs are dropped. In the bools' padding too.
  static constexpr std::uint32_t kNoFolder = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t folder = kNoFolder;
  std::string label;
  std::string path;    // run folder or file that defines the run
  std::string format;  // "scalelens", "mlperf", "itwinai-mlflow", "itwinai-csv"
  // The machine it ran on (MLPerf platform or system file, scalelens.json "system"); "" when the
  // source does not say. Part of a configuration's identity: (label, system, world size).
  std::string system;
  std::optional<int> nodes, gpus_per_node;  // world_size: in RunData
  std::optional<int> cpus_per_node;  // logical CPUs of a node, to tell oversubscribed runs
  std::optional<double> global_batch_size, samples_per_epoch;
  std::optional<std::string> scaling;  // "weak" | "strong" as the source declares it
  std::optional<std::int64_t> start_ns, end_ns;
  std::optional<int> exit_status;
  std::optional<double> sampling_interval_s;
  std::vector<std::string> hosts;
  // Set when scalelens run wrapped a launcher (torchrun, mpirun): its rank records are one per
  // node's wrapper, and their devices say nothing of the training ranks'.
  std::string launcher;
  std::map<std::string, std::string> detected_from;
  HeldApart<RunDetails> details_part;
  const RunDetails& details() const { return details_part.get(); }
  RunDetails& details_to_fill() { return details_part.to_fill(); }  // made where it is missing
};

struct Study {
  std::vector<std::string> inputs;
  std::vector<Run> runs;
  std::vector<Diagnostic> diagnostics;  // from ingest; analysis adds its own to its result
  std::size_t files_seen = 0;
  std::size_t files_read = 0;
  std::uintmax_t bytes_read = 0;  // size on disk of the files read
  bool cancelled = false;         // reading stopped early (IngestOptions::cancel): the study is partial
};

}  // namespace scalelens
