// Data shaping for the charts: pure functions over summary.json and the run series, unit-tested.
import type {
  CompareConfiguration,
  CompareMetric,
  Comparison,
  Configuration,
  CurveModel,
  RankSeries,
  ReportData,
  Stat,
  Summary,
  Verdict,
  Warning,
} from "./types";
import { fmt, isNum } from "./util";

export type TimeKind = "epoch" | "run" | "step";

// The scaling curve a configuration (or run) lies on: its label, or "label @ system" when the
// study spans several systems (summary.json `curve`; older files have none).
export function curveOf(c: { label: string; curve?: unknown }): string {
  return typeof c.curve === "string" && c.curve ? c.curve : c.label;
}

// The curves of the study: what the charts draw one line each for and the toggles hide. In the
// order of summary.json's configurations, which the terminal table and summary.csv list too (a sort
// of its own here put "ddp @ juwels" before "ddp @ unknown system", which they list after it).
export function labelsOf(summary: Summary): string[] {
  return [...new Set(summary.configurations.map(curveOf))];
}

// Configurations per curve, by world size; the curves in the order of their first configuration.
export function byLabel(configs: Configuration[]): Map<string, Configuration[]> {
  const out = new Map<string, Configuration[]>();
  for (const c of configs) {
    const k = curveOf(c);
    if (!out.has(k)) out.set(k, []);
    out.get(k)!.push(c);
  }
  for (const list of out.values()) list.sort((a, b) => a.world_size - b.world_size);
  return out;
}

export function timeStat(c: Configuration, kind: TimeKind): Stat | null {
  return (kind === "epoch" ? c.epoch_time_s : kind === "run" ? c.run_time_s : c.step_time_s) ?? null;
}

// Epoch time when any configuration has it, else run time, else step time (traces alone).
export function defaultTimeKind(summary: Summary): TimeKind {
  const cs = summary.configurations;
  return cs.some((c) => c.epoch_time_s) ? "epoch" : cs.some((c) => c.run_time_s) ? "run" : cs.some((c) => c.step_time_s) ? "step" : "run";
}

// [x, y] points of one figure along a label's curve; configurations without it are left out
// (never drawn as 0). Log axes need y > 0.
export function curve(
  configs: Configuration[],
  value: (c: Configuration) => unknown,
  positiveOnly = false,
): [number, number][] {
  const out: [number, number][] = [];
  for (const c of configs) {
    const v = value(c);
    if (isNum(v) && (!positiveOnly || v > 0)) out.push([c.world_size, v]);
  }
  return out;
}

// [x, low, high] of the 95% interval, where it is known.
export function ciBars(configs: Configuration[], kind: TimeKind): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const c of configs) {
    const s = timeStat(c, kind);
    if (s && isNum(s.ci95_low) && isNum(s.ci95_high) && s.ci95_low > 0) out.push([c.world_size, s.ci95_low, s.ci95_high]);
  }
  return out;
}

// The ideal speedup line for each distinct baseline world size p0: S = p / p0 over the measured range.
export function idealLines(configs: Configuration[]): { p0: number; points: [number, number][] }[] {
  if (!configs.length) return [];
  const ws = configs.map((c) => c.world_size);
  const lo = Math.min(...ws);
  const hi = Math.max(...ws);
  const p0s = [...new Set(configs.map((c) => c.baseline_world_size).filter(isNum))].sort((a, b) => a - b);
  return p0s.map((p0) => {
    const xs = [...new Set([lo, ...ws, hi])].sort((a, b) => a - b);
    return { p0, points: xs.map((x) => [x, x / p0] as [number, number]) };
  });
}

export interface ParetoPoint {
  x: number;
  y: number;
  key: string;
}
// Per configuration: time to solution (the analysis's: run time, else epoch time) against energy
// per run.
export function timeEnergyPoints(configs: Configuration[]): (ParetoPoint & { label: string; ws: number; front: boolean })[] {
  const out: (ParetoPoint & { label: string; ws: number; front: boolean })[] = [];
  for (const c of configs) {
    const t = c.time_to_solution_s;
    if (isNum(t) && isNum(c.energy_wh))
      out.push({ x: t, y: c.energy_wh, key: `${curveOf(c)}/${c.world_size}`, label: curveOf(c), ws: c.world_size, front: c.pareto === true });
  }
  return out;
}

// Each curve's time-energy front as the analysis found it (summary.json's curves[].pareto): its
// measured configurations on the front, and the predicted counts it put there (where the curve's
// time is a run's), in time order. The page draws it; it does not choose it again.
export function paretoFronts(configs: Configuration[], curves: CurveModel[]): Map<string, ParetoPoint[]> {
  const measured = timeEnergyPoints(configs);
  const shown = new Set(configs.map(curveOf));  // a hidden curve's front is hidden with it
  const out = new Map<string, ParetoPoint[]>();
  for (const cm of curves) {
    const sizes = new Set(cm.pareto ?? []);
    if (!sizes.size || !shown.has(cm.curve)) continue;
    const mine = measured.filter((p) => p.label === cm.curve && sizes.has(p.ws));
    const have = new Set(mine.map((p) => p.ws));
    const predicted: ParetoPoint[] = [];
    for (const p of cm.predictions ?? [])
      if (sizes.has(p.world_size) && !have.has(p.world_size) && isNum(p.time_s) && isNum(p.energy_wh))
        predicted.push({ x: p.time_s, y: p.energy_wh, key: `${cm.curve}/${p.world_size} (predicted)` });
    const front: ParetoPoint[] = [...mine.map(({ x, y, key }) => ({ x, y, key })), ...predicted].sort((a, b) => a.x - b.x || a.y - b.y);
    if (front.length) out.set(cm.curve, front);
  }
  return out;
}

// Min/max-per-bucket decimation: keeps the first and last point and, per bucket, the minimum and
// maximum, so peaks and dips survive. Returns the kept indices (sorted).
export function decimateIndices(values: (number | null)[], maxPoints: number): number[] {
  const n = values.length;
  if (n <= maxPoints || maxPoints < 4) return Array.from({ length: n }, (_, i) => i);
  const buckets = Math.max(1, Math.floor((maxPoints - 2) / 2));
  const keep = new Set<number>([0, n - 1]);
  for (let b = 0; b < buckets; b++) {
    const lo = 1 + Math.floor(((n - 2) * b) / buckets);
    const hi = 1 + Math.floor(((n - 2) * (b + 1)) / buckets);
    let imin = -1;
    let imax = -1;
    for (let i = lo; i < hi; i++) {
      const v = values[i];
      if (!isNum(v)) continue;
      if (imin < 0 || v < (values[imin] as number)) imin = i;
      if (imax < 0 || v > (values[imax] as number)) imax = i;
    }
    if (imin >= 0) keep.add(imin).add(imax);
    else if (lo < hi) keep.add(lo);
  }
  return [...keep].sort((a, b) => a - b);
}

// [t, v] pairs of one series, decimated to maxPoints; null values stay (gaps).
export function seriesPairs(t: number[], v: (number | null)[] | null, maxPoints = 2000): [number, number | null][] {
  if (!v) return [];
  const idx = decimateIndices(v, maxPoints);
  return idx.map((i) => [t[i], v[i]]);
}

// The index of the rank with the longest mean step, as the report computed it over all its steps
// (mean_ms); -1 for none. Pages written before mean_ms existed fall back to the drawn points' mean.
export function slowestRank(ranks: RankSeries[]): number {
  const means = ranks.map((r) =>
    typeof r.mean_ms === "number" ? r.mean_ms : r.step_ms.length ? r.step_ms.reduce((a, b) => a + b, 0) / r.step_ms.length : 0,
  );
  return means.length ? means.indexOf(Math.max(...means)) : -1;
}

export const BREAKDOWN_PARTS = [
  "computation",
  "overlapped communication",
  "exposed communication",
  "memory",
  "idle",
  "other (CPU, launch)",
] as const;

// The order BREAKDOWN_PARTS names them in.
const SHARE_KEYS = ["computation", "overlapped_comm", "exposed_comm", "memory", "idle", "other"] as const;

// Per configuration with traces, its breakdown shares as summary.json states them (the analysis
// takes them from the ranks' breakdowns; the page draws them, it does not compute them again).
export function configurationBreakdown(configs: Configuration[]): { key: string; label: string; shares: number[]; score: number | null }[] {
  const out: { key: string; label: string; shares: number[]; score: number | null }[] = [];
  for (const c of configs) {
    const b = c.breakdown_shares;
    if (!b) continue;
    out.push({ key: `${curveOf(c)}/${c.world_size}`, label: curveOf(c), shares: SHARE_KEYS.map((k) => b[k]), score: isNum(c.computation_score) ? c.computation_score : null });
  }
  return out;
}

export interface Headline {
  best: Configuration | null;
  bestBy: "throughput" | "time" | null;
  largest: Configuration | null;
  findings: Finding[];
}

// A warning as shown: the same one about several files (each repeat of a configuration, say) once,
// with how many said it; as the terminal shows them (fold_repeats in the C++ library).
export interface Finding extends Warning {
  count: number;
}

export function foldRepeats(warnings: Warning[]): Finding[] {
  const out: Finding[] = [];
  const seen = new Map<string, Finding>();
  for (const w of warnings) {
    const key = JSON.stringify([w.severity, w.code, w.message, w.configuration ?? ""]);
    const first = w.line ? undefined : seen.get(key);
    if (first) {
      first.count++;
      continue;
    }
    const f = { ...w, count: 1 };
    if (!w.line) seen.set(key, f);
    out.push(f);
  }
  return out;
}

const SEVERITY_RANK: Record<string, number> = { error: 0, warning: 1, note: 2 };

export function headline(summary: Summary, kind: TimeKind): Headline {
  const cs = summary.configurations;
  let best: Configuration | null = null;
  let bestBy: Headline["bestBy"] = null;
  const withX = cs.filter((c) => isNum(c.throughput_samples_per_s));
  if (withX.length) {
    best = withX.reduce((a, b) => ((b.throughput_samples_per_s as number) > (a.throughput_samples_per_s as number) ? b : a));
    bestBy = "throughput";
  } else {
    const withT = cs.filter((c) => timeStat(c, kind));
    if (withT.length) {
      best = withT.reduce((a, b) => (timeStat(b, kind)!.mean < timeStat(a, kind)!.mean ? b : a));
      bestBy = "time";
    }
  }
  // Largest scale: the most GPUs; among those, the most efficient.
  let largest: Configuration | null = null;
  for (const c of cs) {
    if (
      !largest ||
      c.world_size > largest.world_size ||
      (c.world_size === largest.world_size && (c.efficiency ?? -1) > (largest.efficiency ?? -1))
    )
      largest = c;
  }
  const findings = foldRepeats(summary.warnings).sort((a, b) => (SEVERITY_RANK[a.severity] ?? 3) - (SEVERITY_RANK[b.severity] ?? 3));
  return { best, bestBy, largest, findings };
}

// The summary table's columns: header, unit, value (number for sorting), text.
export interface Column {
  key: string;
  title: string;
  value: (c: Configuration) => number | string | null;
  text: (c: Configuration) => string;
}

// CSV of the given rows and columns; a text cell that a spreadsheet would run as a formula
// (= + - @ at the start) gets a leading apostrophe.
export function toCsv(rows: Configuration[], columns: Column[]): string {
  const cell = (v: number | string | null): string => {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
    let s = v;
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [columns.map((c) => cell(c.title)).join(",")];
  for (const r of rows) lines.push(columns.map((c) => cell(c.value(r))).join(","));
  return lines.join("\n") + "\n";
}

export function sortRows(rows: Configuration[], column: Column, ascending: boolean): Configuration[] {
  const dir = ascending ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = column.value(a);
    const vb = column.value(b);
    if (va === null && vb === null) return 0;
    if (va === null) return 1; // unknown figures last, whatever the direction
    if (vb === null) return -1;
    if (typeof va === "number" && typeof vb === "number") return (va - vb) * dir;
    return String(va).localeCompare(String(vb)) * dir;
  });
}

// The page's data from the inlined script; null when the page has none (opened bare).
export function parseInlineData(text: string | null | undefined): ReportData | null {
  if (!text) return null;
  try {
    const d = JSON.parse(text);
    if (!d || typeof d !== "object" || !d.summary) return null;
    return d as ReportData;
  } catch {
    return null;
  }
}

// Min, mean and max over many GPUs on a common time grid of `bins` buckets: how a 512-GPU run is
// drawn by default (every GPU on request).
export function envelope(
  series: { t: number[]; v: (number | null)[] | null }[],
  bins = 500,
): { t: number[]; min: (number | null)[]; mean: (number | null)[]; max: (number | null)[] } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    if (!s.v || !s.t.length) continue;
    lo = Math.min(lo, s.t[0]);
    hi = Math.max(hi, s.t[s.t.length - 1]);
  }
  if (!(hi >= lo)) return { t: [], min: [], mean: [], max: [] };
  const n = hi > lo ? bins : 1;
  const width = (hi - lo) / n || 1;
  const min = new Array<number>(n).fill(Infinity);
  const max = new Array<number>(n).fill(-Infinity);
  const sum = new Array<number>(n).fill(0);
  const count = new Array<number>(n).fill(0);
  for (const s of series) {
    if (!s.v) continue;
    for (let i = 0; i < s.t.length; i++) {
      const v = s.v[i];
      if (!isNum(v)) continue;
      const b = Math.min(n - 1, Math.floor((s.t[i] - lo) / width));
      if (v < min[b]) min[b] = v;
      if (v > max[b]) max[b] = v;
      sum[b] += v;
      count[b]++;
    }
  }
  const out = { t: [] as number[], min: [] as (number | null)[], mean: [] as (number | null)[], max: [] as (number | null)[] };
  for (let b = 0; b < n; b++) {
    out.t.push(lo + (b + 0.5) * width);
    out.min.push(count[b] ? min[b] : null);
    out.max.push(count[b] ? max[b] : null);
    out.mean.push(count[b] ? sum[b] / count[b] : null);
  }
  return out;
}

// ---- Comparison (scalelens compare) ---------------------------------------------------------
// The before study's curves are drawn beside the after study's under this suffix, dashed.
export const BEFORE_SUFFIX = " (before)";
export function beforeCurve(label: string): string | null {
  return label.endsWith(BEFORE_SUFFIX) ? label.slice(0, -BEFORE_SUFFIX.length) : null;
}
// The before study's configurations as curves of their own ("ddp (before)"); a renamed label
// (--match) takes its after name, so both lines share a colour.
export function beforeConfigs(before: Summary, comparison: Comparison): Configuration[] {
  const renamed = new Map(comparison.configurations.map((c) => [c.label, c.label_after]));
  return before.configurations.map((c) => {
    const name = curveOf(c);
    const after = renamed.get(c.label);
    return { ...c, curve: (after && name === c.label ? after : name) + BEFORE_SUFFIX };
  });
}

// Per-configuration charts of a comparison: each before configuration just ahead of its after one
// (same curve and world size), the rest of the before study after them.
export function withBefore(after: Configuration[], before: Configuration[]): Configuration[] {
  const out: Configuration[] = [];
  const used = new Set<Configuration>();
  for (const c of after) {
    for (const b of before)
      if (!used.has(b) && beforeCurve(curveOf(b)) === curveOf(c) && b.world_size === c.world_size) {
        out.push(b);
        used.add(b);
      }
    out.push(c);
  }
  return out.concat(before.filter((b) => !used.has(b)));
}

const SEVERITY: Record<Verdict, number> = { regressed: 3, inconclusive: 2, improved: 1, unchanged: 0 };
export interface CompareRow {
  configuration: CompareConfiguration;
  metric: CompareMetric;
}
// Every (configuration, metric), the most severe first, as the terminal table orders them.
export function compareRows(comparison: Comparison): CompareRow[] {
  const rows = comparison.configurations.flatMap((configuration) => configuration.metrics.map((metric) => ({ configuration, metric })));
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => SEVERITY[b.r.metric.verdict] - SEVERITY[a.r.metric.verdict] || a.i - b.i)
    .map((x) => x.r);
}

// A curve's model self-check in words, beside its prediction (null: no model, or under 4 counts
// and so no self-check): held-out count, predicted against measured, inside or outside the 90%
// interval, and what that means for the recommendation (summary.json's, not decided here).
export function selfCheckText(cm: CurveModel, unit: string): string | null {
  if (!cm.model) return null;
  const b = cm.backtest;
  const predicts = (cm.predictions ?? []).length > 0;
  if (b) {
    const verdict = b.inside ? "inside the 90% interval"
      : `outside the 90% interval${predicts ? ": its predictions are doubtful, and no recommendation rests on them" : ""}`;
    return `${cm.curve}: self-check: fitted without ${b.world_size} ${unit}, the model predicts ${fmt(b.predicted)} s [${fmt(b.lower)}, ${fmt(b.upper)}] ` +
      `per ${cm.time_from} there; measured ${fmt(b.measured)} s: ${verdict}`;
  }
  if (cm.backtest_refused)
    return `${cm.curve}: no self-check: ${cm.backtest_refused}${predicts ? "; its predictions are unchecked, and no recommendation rests on them" : ""}`;
  return null;
}
