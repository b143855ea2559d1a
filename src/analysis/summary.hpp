#pragma once
// What analysis produces and every renderer (table, CSV, JSON, HTML) reads. Field names follow
// the summary.json contract (DESIGN.md, "Outputs"). Absent figures are nullopt, never 0.
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/scaling_model.hpp"
#include "analysis/stats.hpp"
#include "common/diagnostics.hpp"
#include "common/held_apart.hpp"
#include "common/nan_optional.hpp"
#include "model/study.hpp"

namespace scalelens {

// A run's figures from its traces (RunSummary::trace()).
// A step's parts as shares of its whole (RankBreakdown::breakdown_whole_us, summed over ranks):
// computation not overlapped, overlapped communication, exposed communication, memory, idle and
// the rest (CPU, launch), which is at least 0. What the breakdown figure and the page draw.
struct BreakdownShares {
  double computation = 0, overlapped_comm = 0, exposed_comm = 0, memory = 0, idle = 0, other = 0;
};

struct RunTraceFigures {
  // Trace breakdown, summed over ranks and steps (DESIGN.md, "Trace breakdown").
  std::optional<double> computation_score, comp_comm_raw_share, overlap_ratio, exposed_comm_share, idle_share,
      straggler_spread;
  // Model FLOP utilization: mean over the ranks whose traces carry FLOPs and a known GPU peak.
  std::optional<double> mfu;
  std::optional<BreakdownShares> breakdown_shares;
  // Of the collective kernel time of its calls matched across ranks, the share spent waiting for
  // the last rank to arrive (DESIGN.md, "Collective wait and transfer"); the rest is transfer.
  std::optional<double> comm_wait_share;
  // The same split of exposed communication (not overlapped by computation): its waiting share.
  std::optional<double> exposed_comm_wait_share;
  // Per profiler step, from its GPU traces, else per step of the MPI interposer's records (DESIGN.md,
  // "Where the efficiency went"): the slowest
  // rank's step time, and per rank the mean (and the largest, and the sum over ranks of)
  // computation, exposed communication, idle and GPU idle while loading data. µs.
  struct TraceStep {
    double step_us = 0;
    double comp_mean_us = 0, comp_max_us = 0, comp_sum_us = 0;
    bool gpu_behind = false;  // some rank's GPU ran behind its own steps (the trace's warning)
    double exposed_comm_us = 0, idle_us = 0, dataloader_idle_us = 0;
    int ranks = 0;
  };
  std::optional<TraceStep> trace_step;
  // Roofline: per step and traced rank, the ops that lose most GPU time (at most 5), and the bus
  // bandwidth of the matched collectives by message size.
  std::vector<OpLoss> roofline_ops;
  std::vector<BandwidthPoint> collective_bandwidth;
  std::vector<OpLoss> op_times;  // every traced op signature's GPU time per step and rank (not written out)
};

// What only some runs' summaries have (RunSummary::details()): held apart, as most runs of a large
// study have none of it, 104 bytes a run less (issue 17, part 2).
struct RunSummaryDetails {
  std::string benchmark;    // "" when the source does not say
  std::string division;     // MLPerf's submission_division, "" when the source does not say
  std::string instance_of;  // the run this is one concurrent instance of ("" for a run)
  std::optional<int> instance_id;
  std::optional<ProfilerAverages> profiler_averages;  // itwinai's, for its computation fraction
};

// Figures that may be absent are NanOptional (std::optional's interface, none as NaN: 8 bytes, not
// 16) where present ones are finite by construction; a study holds one summary per run.
struct RunSummary {
  std::string run_id, label, path, format;
  std::string system;  // "" when the source does not say
  std::string curve;   // its configuration's curve (ConfigurationSummary::curve)
  std::optional<int> world_size, nodes, gpus_per_node;
  NanOptional global_batch_size;
  std::string gpu_model;
  std::size_t epochs_logged = 0, warmup_excluded = 0;
  std::vector<double> epoch_times_s;  // after warm-up exclusion, by epoch number
  NanOptional run_time_s;
  // Step time (DESIGN.md, "Time"): per step, the slowest rank's duration, from the traces' step
  // times (the ProfilerStep, or the GPU's pace where the GPU ran behind; else steps.csv), after
  // leaving out the first warm-up steps; by step number.
  std::size_t steps_timed = 0, warmup_steps_excluded = 0;
  std::vector<double> step_times_s;
  NanOptional throughput_samples_per_s;
  std::string throughput_from;     // "samples column" | "samples_per_epoch" | "global_batch_size x steps" | "global_batch_size / step time"
  NanOptional samples;   // processed in the whole run, for energy per sample
  std::optional<RangeStat> gpu_util_pct;
  // Its GPUs' utilization over time: the share of time at each whole percent, each GPU weighing
  // the same (as in gpu_util_pct's mean), and the percentiles of it (DESIGN.md).
  std::shared_ptr<const SparseUtilHistogram> gpu_util_time_share;  // shared with its GPUs' figures (GpuFigures): set once, never changed
  std::optional<Percentiles> gpu_util_percentiles;
  NanOptional peak_gpu_memory_bytes;  // the most memory in use on any one of its GPUs, during the run
  std::size_t gpus = 0;             // distinct GPUs seen
  NanOptional energy_j;   // all GPUs of all nodes
  std::string energy_from;          // "counter" | "power" | "counter+power"
  NanOptional energy_j_per_sample;
  std::size_t energy_gpus = 0;                // GPUs whose energy was measured
  NanOptional energy_j_per_gpu;     // measured energy / energy_gpus
  bool energy_extrapolated = false;           // energy_j = energy_j_per_gpu x world size (partial GPU data)
  bool world_size_from_ranks = false;  // world_size is the ranks its files hold, above its stated one (ranks-beyond-world-size)
  NanOptional host_energy_j;
  std::optional<int> exit_status;
  // Its figures from traces (none for a run without any: a fresh RunTraceFigures). Held apart, as
  // most runs of a large study have no trace: 288 bytes a run less (issue 17, part 2).
  const RunTraceFigures& trace() const { return trace_.get(); }
  RunTraceFigures& trace_to_fill() { return trace_.to_fill(); }  // made where it is missing
  using TraceStep = RunTraceFigures::TraceStep;
  // What only some runs have (an empty one where none was filled).
  const RunSummaryDetails& details() const { return details_.get(); }
  RunSummaryDetails& details_to_fill() { return details_.to_fill(); }  // made where it is missing
  // Its time on a basis: "epoch" (the mean of its epoch times), "run", "step" (the mean step time).
  std::optional<double> time_on(std::string_view basis) const;

 private:
  HeldApart<RunTraceFigures> trace_;
  HeldApart<RunSummaryDetails> details_;
};

struct ConfigurationSummary {
  std::string label;
  std::string system;  // "" when unknown; part of the identity (label, system, world size)
  // The scaling curve it lies on: its label, or "label @ system" when the study spans several
  // systems. Curves have their own baselines; charts draw one line per curve.
  std::string curve;
  int world_size = 0;  // for concurrent instances: instances × GPUs per instance
  std::optional<int> nodes, gpus_per_node;
  std::size_t runs = 0;
  std::string scaling;  // of its label's curve: "strong" | "weak"
  std::optional<double> global_batch_size;
  std::optional<Stat> epoch_time_s, run_time_s;
  std::optional<Stat> step_time_s;  // over the steps of all its runs
  // Its time on a basis ("epoch", "run", anything else: "step").
  const std::optional<Stat>& time_on(std::string_view basis) const {
    return basis == "epoch" ? epoch_time_s : basis == "run" ? run_time_s : step_time_s;
  }
  // The time its speedup is measured with, chosen at its curve's baseline: "epoch" where the
  // baseline has epoch times, else "run", else "step"; "" when there is none.
  std::string time_from;
  std::optional<double> throughput_samples_per_s, throughput_per_gpu;
  std::optional<double> speedup, ideal_speedup, efficiency, karp_flatt;
  std::optional<int> baseline_world_size;
  std::string baseline_label;
  std::optional<RangeStat> gpu_util_pct;
  std::optional<Percentiles> gpu_util_percentiles;  // of its runs' utilization over time, each run weighing the same
  std::optional<double> peak_gpu_memory_bytes;  // mean over its runs of their peaks
  std::optional<double> energy_wh, energy_j_per_sample, host_energy_wh;
  // Energy per GPU measured; energy_wh is extrapolated from it when some run had partial GPU data.
  std::optional<double> energy_wh_per_gpu;
  bool energy_extrapolated = false;
  // itwinai's own "computation fraction" (ATen/c10/autograd over all profiled GPU time less
  // ProfilerStep*), pooled over the configuration's runs like itwinai pools them.
  std::optional<double> itwinai_computation_fraction;
  std::optional<double> computation_score, comp_comm_raw_share, overlap_ratio, exposed_comm_share, idle_share,
      straggler_spread, mfu;
  std::optional<double> comm_wait_share, exposed_comm_wait_share;  // means over its runs
  std::optional<BreakdownShares> breakdown_shares;   // each share's mean over the runs that have one
  std::vector<OpLoss> roofline_ops;                  // per step and rank, means over the runs that have each op
  std::vector<OpLoss> op_times;                      // the same for every traced op's GPU time (not written out)
  // POP efficiencies (DESIGN.md, "Where the efficiency went"); computation scaling and global
  // efficiency need traces at the baseline too. global_vs_baseline = GE / GE(baseline), which
  // equals the efficiency from step times.
  struct Pop {
    double load_balance = 0, comm_efficiency = 0, parallel_efficiency = 0;
    std::optional<double> computation_scaling, global_efficiency, global_vs_baseline;
  };
  std::optional<Pop> pop;
  // Time per step lost against the ideal (the baseline's step time × p0/p; weak scaling: × 1),
  // split additively; seconds. Components can be negative (better than the baseline).
  struct LostTime {
    double step_s = 0, ideal_s = 0, total_s = 0;
    double exposed_comm_s = 0, idle_imbalance_s = 0, data_loading_s = 0, extra_compute_s = 0, unattributed_s = 0;
  };
  std::optional<LostTime> lost_time;
  // Energy and time (DESIGN.md, "Energy and time"): time to solution (a run's time, else its epoch
  // time), GPU energy per unit of the curve's time (epoch, run or step), the energy-delay product
  // of a run (J·s), CO2e of a run (g, with --carbon-intensity), and whether it is on its curve's
  // Pareto front of time and energy per run.
  std::optional<double> time_to_solution_s, energy_per_time_unit_wh, edp_js, co2e_g;
  bool pareto = false;
  std::vector<BandwidthPoint> collective_bandwidth;  // its runs' points pooled by collective and size bin
  // Concurrent model instances (MLPerf weak scaling): how many in a run, the GPUs of each, the
  // time to train them all (latest run_stop − earliest run_start) and models trained per minute.
  // Runs then counts the runs they belong to; epoch and run times are per instance.
  std::optional<std::size_t> instances;
  std::optional<int> gpus_per_instance;
  std::optional<double> time_to_train_all_s, models_per_minute;
  // Where its figures came from: files, reader, how the GPUs were counted and told apart, what
  // was left out (one line, for the page and summary.json).
  std::string provenance;
  std::vector<std::size_t> run_indices;  // into Summary::runs (every instance, for instances)
  std::string key() const { return (curve.empty() ? label : curve) + "/" + std::to_string(world_size); }
};

// A curve's scaling model (analysis/scaling_model.hpp) and what it predicts, with the figures that
// follow from the predicted time: speedup and efficiency against the curve's baseline, throughput
// from the largest measured configuration that has one. Bounds are the interval's.
struct CurvePrediction {
  int world_size = 0;
  double time_s = 0, time_lower_s = 0, time_upper_s = 0;
  std::optional<double> speedup, speedup_lower, speedup_upper;
  std::optional<double> efficiency, efficiency_lower, efficiency_upper;
  std::optional<double> throughput, throughput_lower, throughput_upper;
  // GPU energy per unit of the curve's time at the measured power per GPU, with the time's bounds.
  std::optional<double> energy_wh, energy_lower_wh, energy_upper_wh;
};
struct CurveModel {
  std::string curve, label, system, scaling, time_from;
  ScalingModel model;
  std::vector<CurvePrediction> predictions;
  std::vector<CurvePrediction> band;  // model.band with the same figures: what the charts draw
  // The dominant loss along the curve and how it grows with p, in one sentence ("" without traces).
  std::string loss_sentence;
  std::vector<int> pareto;  // world sizes on the time–energy Pareto front (measured, and predicted where the time is per run)
  struct Recommendation {
    int world_size = 0;
    std::string objective;  // time | energy | edp
    bool predicted = false;
    std::string reason;
  };
  std::optional<Recommendation> recommended;
  std::string not_recommended;  // why there is no recommendation
  // The traced op whose GPU time summed over ranks grows most from the smallest to the largest
  // traced configuration (strong scaling: the same work, so growth is overhead).
  struct GrowingOp {
    std::string name, shapes;
    int from_p = 0, to_p = 0;
    double from_ms = 0, to_ms = 0;  // summed over ranks, per step
  };
  std::optional<GrowingOp> growing_op;
};

struct Summary {
  std::string baseline = "per-label";  // "per-label" | "common" | "<N>"
  std::string scaling = "strong";      // "strong" | "weak" | "mixed"
  // What world size counts: "GPUs", or "ranks" when every run is known to have used no GPU
  // (a CPU-only MPI job measured by scalelens run).
  std::string world_size_unit = "GPUs";
  // Distinct systems of the configurations ("" = unknown); several: tables show a system column.
  std::vector<std::string> systems;
  std::vector<ConfigurationSummary> configurations;  // by label, system, then world size
  // A node each (not one array): a large study's summaries, made as its runs let go of their
  // epochs and GPU figures, fill the memory those leave instead of a new block (issue 17, part 2).
  std::deque<RunSummary> runs;
  std::vector<CurveModel> curves;    // one per curve with a time, in configuration order
  std::vector<Diagnostic> warnings;  // ingest's and analysis's, in that order
};

}  // namespace scalelens
