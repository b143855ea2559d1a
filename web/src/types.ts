// The data the page shows: schema scalelens.report-data/1 (see src/report/report_html.hpp),
// whose `summary` is summary.json (docs/summary-schema.md).
export interface Stat {
  mean: number;
  median: number;
  std: number;
  n: number;
  ci95_low: number | null;
  ci95_high: number | null;
}
export interface Range {
  mean: number;
  min: number;
  max: number;
}
export type Num = number | null | undefined;
export interface Configuration {
  label: string;
  system?: string | null;
  curve?: string;
  world_size: number;
  instances?: Num;
  gpus_per_instance?: Num;
  time_to_train_all_s?: Num;
  models_per_minute?: Num;
  provenance?: string;
  nodes?: Num;
  gpus_per_node?: Num;
  runs: number;
  scaling?: string;
  global_batch_size?: Num;
  baseline_world_size?: Num;
  baseline_label?: string;
  epoch_time_s?: Stat | null;
  run_time_s?: Stat | null;
  // Over profiler steps (the slowest rank per step): the time of studies made of traces alone.
  step_time_s?: Stat | null;
  // Share of the matched collectives' kernel time spent waiting for the last rank (the rest: transfer).
  comm_wait_share?: Num;
  peak_gpu_memory_gib?: Num;
  exposed_comm_wait_share?: Num;
  // Ops losing most GPU time against the roofline (per step and rank) and the collectives' bus
  // bandwidth by message size, from profiler traces.
  roofline_ops?: { name: string; shapes: string; bound: string; gpu_ms_per_step: number; lost_ms_per_step: number }[];
  collective_bandwidth?: { collective: string; bytes: number; busbw_gbps: number; calls: number }[];
  // Time per step lost against the ideal, by cause (s), and the POP efficiencies (from traces).
  lost_time_s?: { step: number; ideal: number; total: number; exposed_comm: number; idle_imbalance: number; data_loading: number; extra_compute: number; unattributed: number } | null;
  pop?: { load_balance: number; comm_efficiency: number; parallel_efficiency: number; computation_scaling: Num; global_efficiency: Num; global_vs_baseline: Num } | null;
  time_from?: "epoch" | "run" | "step" | null;
  throughput_samples_per_s?: Num;
  throughput_per_gpu?: Num;
  speedup?: Num;
  ideal_speedup?: Num;
  efficiency?: Num;
  karp_flatt?: Num;
  gpu_util_pct?: Range | null;
  // GPU utilization over time (whole percents): p10 low while the mean is high means idle phases.
  gpu_util_percentiles_pct?: { p10: number; p50: number; p90: number } | null;
  energy_wh?: Num;
  energy_j_per_sample?: Num;
  // Energy measured on some GPUs only (itwinai's log_on_workers=0): energy_wh is the job's estimate,
  // energy_wh_per_gpu what one measured GPU used.
  energy_wh_per_gpu?: Num;
  energy_extrapolated?: boolean;
  host_energy_wh?: Num;
  computation_score?: Num;
  // itwinai's own figure from torch.profiler key averages: ATen/autograd time over total minus ProfilerStep.
  itwinai_computation_fraction?: Num;
  comp_comm_raw_share?: Num;
  overlap_ratio?: Num;
  exposed_comm_share?: Num;
  idle_share?: Num;
  straggler_spread?: Num;
  mfu?: Num;
  run_ids?: string[];
  // Chosen by the analysis (src/analysis/energy_choice.cpp), shown as they are: time to solution
  // (run time, else epoch time) and whether the configuration is on its curve's time-energy front.
  time_to_solution_s?: Num;
  pareto?: boolean;
  // The step's parts as shares of its whole, means over the runs with traces (src/analysis/run_metrics.cpp).
  breakdown_shares?: BreakdownShares | null;
}
export interface BreakdownShares {
  computation: number;
  overlapped_comm: number;
  exposed_comm: number;
  memory: number;
  idle: number;
  other: number;
}
export interface RunSummary {
  run_id: string;
  label: string;
  curve?: string;
  world_size: Num;
  path?: string;
  format?: string;
  nodes?: Num;
  gpus?: number;
  run_time_s?: Num;
  energy_wh?: Num;
  gpu_model?: string;
  [key: string]: unknown;
}
export interface Warning {
  severity: "error" | "warning" | "note";
  code: string;
  message: string;
  configuration?: string;
  path?: string;
  line?: number;
}
export interface Summary {
  schema: string;
  scalelens_version?: string;
  baseline: string;
  scaling: string;
  world_size_unit?: "GPUs" | "ranks"; // absent in summaries before it existed: GPUs
  systems?: (string | null)[]; // distinct systems; several: the table shows a system column
  configurations: Configuration[];
  runs: RunSummary[];
  curves?: CurveModel[]; // scalelens.summary/2: the scaling model of each curve
  warnings: Warning[];
}
export interface ModelPoint {
  world_size: number;
  time_s: number;
  lower: number;
  upper: number;
  speedup?: Num;
  speedup_lower?: Num;
  speedup_upper?: Num;
  efficiency?: Num;
  efficiency_lower?: Num;
  efficiency_upper?: Num;
}
export interface CurveModel {
  curve: string;
  label: string;
  time_from: string;
  model: { formula: string; law: string | null; loo_rel_error: number } | null;
  refused: string | null;
  // The self-check: the model fitted without the largest measured count, predicting it (≥ 4 counts).
  backtest?: { world_size: number; predicted: number; lower: number; upper: number; measured: number; inside: boolean } | null;
  backtest_refused?: string | null; // why that refit predicted nothing
  band?: ModelPoint[];
  predictions?: (ModelPoint & { energy_wh?: Num })[];
  pareto?: number[]; // world sizes on the curve's time-energy front, predicted ones included
  recommended?: { world_size: number; objective: string; predicted: boolean; reason: string } | null;
}
export interface GpuSeries {
  node: string;
  index: number;
  uuid?: string;
  name?: string;
  samples?: number;
  t: number[];
  util: (number | null)[] | null;
  power: (number | null)[] | null;
}
export interface RankSeries {
  rank: number;
  steps: number;
  mean_ms?: number; // over all its steps, before the thinning of step_ms (absent: pages before 2026-12)
  step: number[];
  step_ms: number[];
}
export interface RunSeries {
  run_id: string;
  label: string;
  world_size: Num;
  t0_ns: number;
  gpus: GpuSeries[];
  ranks: RankSeries[];
}
export interface Figures {
  rendered: boolean;
  gnuplot: string | null;
  figures: string[];
  skipped: string[];
  message: string;
}
export interface ReportData {
  schema: string;
  mode: "static" | "live";
  ui_built?: boolean;
  summary: Summary;
  series: { runs: RunSeries[] } | null;
  figures: Figures | null;
  // `scalelens compare`'s page: `summary` is the after study, `before` the baseline's summary.json.
  compare?: { before: Summary; comparison: Comparison } | null;
}

// scalelens.compare/1 (src/report/compare_writers.cpp).
export interface CompareMetric {
  metric: string;
  detail: string;
  unit: string;
  better: "lower" | "higher";
  before: Num;
  after: Num;
  n_before: number;
  n_after: number;
  rel_change: Num;
  ci_low: Num;
  ci_high: Num;
  method: string;
  verdict: Verdict;
  note: string;
}
export type Verdict = "regressed" | "improved" | "unchanged" | "inconclusive";
export interface CompareConfiguration {
  label: string;
  label_after: string;
  system: string;
  system_after: string;
  world_size: number;
  runs_before: number;
  runs_after: number;
  verdict: Verdict;
  metrics: CompareMetric[];
}
export interface Comparison {
  schema: string;
  before: string;
  after: string;
  threshold: number;
  confidence: number;
  world_size_unit: string;
  verdicts: Record<Verdict, number>;
  configurations: CompareConfiguration[];
  unmatched: { before: string[]; after: string[] };
  curves: { curve: string; sentence: string }[];
}
