// ECharts options for each view. Every builder takes the visible configurations and returns a full
// option (the page sets it with notMerge). Tooltips build HTML only through escapeHtml.
import type { Configuration, CurveModel, GpuSeries, ModelPoint, RankSeries, RunSeries } from "./types";
import {
  BREAKDOWN_PARTS,
  byLabel,
  ciBars,
  configurationBreakdown,
  curve,
  beforeCurve,
  curveOf,
  envelope,
  idealLines,
  paretoFronts,
  seriesPairs,
  slowestRank,
  timeEnergyPoints,
  timeStat,
  type TimeKind,
} from "./shape";
import { PALETTE, type CountUnit, colorFor, dashFor, escapeHtml as esc, fmt, fmtAxis, fmtPercent, isNum, logBounds } from "./util";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Option = Record<string, any>;

export interface ChartContext {
  allLabels: string[];
  showLabels: boolean; // value labels on points and bars
  unit: CountUnit; // what world size counts
  models?: CurveModel[]; // summary.json curves[]: the scaling models
  before?: Set<string>; // a comparison page's before curves ("ddp (before)"), drawn dashed in their after curve's colour
}

// The after curve a comparison's before curve belongs to; null for every other curve.
function afterOf(label: string, ctx: ChartContext): string | null {
  return ctx.before?.has(label) ? beforeCurve(label) : null;
}
// A curve's colour: a before curve takes its after curve's.
function curveColor(label: string, ctx: ChartContext): string {
  return colorFor(afterOf(label, ctx) ?? label, ctx.allLabels);
}

const GRID = { left: 64, right: 24, top: 48, bottom: 56, containLabel: false };
const AXIS_NAME = { nameLocation: "middle" as const, nameGap: 34, nameTextStyle: { fontWeight: "bold" as const } };

function noData(text: string): Option {
  return {
    graphic: [
      {
        type: "text",
        left: "center",
        top: "middle",
        // lineHeight: wrapped lines were drawn on top of each other without it.
        style: { text, fill: "#666", fontSize: 14, lineHeight: 20, width: 320, overflow: "break", align: "center" },
      },
    ],
  };
}

// A legend of the given series (for exported images); toggling is the page's label bar.
function legendOf(series: Option[]): Option {
  return {
    top: 0,
    left: 8,
    right: 56,
    type: "scroll",
    selectedMode: false,
    textStyle: { fontSize: 11 },
    data: series.filter((x) => x.type !== "custom").map((x) => x.name),
  };
}
const GRID_LEGEND = { ...GRID, top: 64 };

// Category labels (label/GPUs): all shown, rotated when many, long ones cut with an ellipsis.
function catLabels(categories: string[]): Option {
  return { interval: 0, rotate: categories.length > 4 ? 30 : 0, fontSize: 11, width: categories.length > 4 ? 120 : 160, overflow: "truncate" };
}

// A log value axis whose range snaps to powers of `base` around the data (logBounds).
function logAxis(base: number, name: string, nameGap?: number): Option {
  return {
    type: "log",
    logBase: base,
    name,
    ...AXIS_NAME,
    ...(nameGap ? { nameGap } : {}),
    min: (e: { min: number; max: number }) => logBounds(e.min, e.max, base)?.[0],
    max: (e: { min: number; max: number }) => logBounds(e.min, e.max, base)?.[1],
    axisLabel: { formatter: (v: number) => fmtAxis(v) },
  };
}

function worldSizeAxis(ctx: ChartContext): Option {
  return { type: "log", logBase: 2, name: `${ctx.unit.plural} (world size)`, ...AXIS_NAME, minorSplitLine: { show: false }, axisLabel: { formatter: (v: number) => fmtAxis(v) } };
}

function lineSeries(label: string, ctx: ChartContext, data: [number, number][], unit: string, pctScale = false): Option {
  // A compared study's before curve: its after curve's colour, dashed and lighter.
  const after = afterOf(label, ctx);
  return {
    type: "line",
    id: `line:${label}`,
    name: label,
    data,
    color: curveColor(label, ctx),
    lineStyle: after ? { width: 2, type: "dashed", opacity: 0.6 } : { width: 2, type: dashFor(label, ctx.allLabels) },
    ...(after ? { symbol: "emptyCircle", itemStyle: { opacity: 0.6 } } : {}),
    symbolSize: 7,
    label: {
      show: ctx.showLabels,
      position: "top",
      formatter: (p: { value: [number, number] }) => (pctScale ? fmtPercent(p.value[1]) : fmt(p.value[1])) + (unit && !pctScale ? "" : ""),
    },
    emphasis: { focus: "series" },
  };
}

function itemTooltip(unit: string, what: string, ctx: ChartContext): Option {
  return {
    trigger: "item",
    confine: true,
    formatter: (p: { seriesName: string; value: unknown; data: unknown }) => {
      const v = p.value as number[];
      // A percentage as fmtPercent says it (never "100G %"); one GPU is "1 GPU".
      const figure = (x: number) => (unit === "%" ? fmtPercent(x) : `${fmt(x)} ${unit}`);
      const count = `${fmt(v[0])} ${v[0] === 1 ? ctx.unit.singular : ctx.unit.plural}`;
      if (Array.isArray(v) && v.length >= 3)
        return `<b>${esc(p.seriesName)}</b><br>${esc(count)}<br>95% CI ${esc(unit === "%" ? `${fmtPercent(v[1])} – ${fmtPercent(v[2])}` : `${fmt(v[1])} – ${fmt(v[2])} ${unit}`)}`;
      return `<b>${esc(p.seriesName)}</b><br>${esc(count)}<br>${esc(what)}: ${esc(figure(v[1]))}`;
    },
  };
}

// Vertical error bars [x, low, high] as a custom series.
function errorBars(id: string, name: string, color: string, data: (number | string)[][]): Option {
  return {
    type: "custom",
    id,
    name,
    data,
    encode: { x: 0, y: [1, 2] },
    z: 3,
    renderItem: (_params: unknown, api: { value: (i: number) => number; coord: (p: number[]) => number[] }) => {
      const lo = api.coord([api.value(0), api.value(1)]);
      const hi = api.coord([api.value(0), api.value(2)]);
      const w = 5;
      const style = { stroke: color, lineWidth: 1.5 };
      return {
        type: "group",
        children: [
          { type: "line", shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style },
          { type: "line", shape: { x1: lo[0] - w, y1: lo[1], x2: lo[0] + w, y2: lo[1] }, style },
          { type: "line", shape: { x1: hi[0] - w, y1: hi[1], x2: hi[0] + w, y2: hi[1] }, style },
        ],
      };
    },
  };
}

// A curve's scaling model on the time, speedup and efficiency charts (summary.json curves[].band,
// which carries each figure with its bounds): the 90% band as one polygon, the model solid over
// the measured range and dashed beyond it.
type BandFigure = "time" | "speedup" | "efficiency";
function modelSeries(label: string, model: CurveModel, measuredMax: number, ctx: ChartContext, figure: BandFigure = "time"): Option[] {
  const scale = figure === "efficiency" ? 100 : 1;
  const band = (model.band ?? [])
    .map((b) => {
      const [v, lo, hi] = figure === "time" ? [b.time_s, b.lower, b.upper]
        : figure === "speedup" ? [b.speedup, b.speedup_lower, b.speedup_upper] : [b.efficiency, b.efficiency_lower, b.efficiency_upper];
      return isNum(v) && isNum(lo) && isNum(hi) ? { world_size: b.world_size, time_s: v * scale, lower: lo * scale, upper: hi * scale } : null;
    })
    .filter((b): b is ModelPoint => b !== null && b.world_size > 0 && b.lower > 0 && b.upper > 0);
  if (!band.length || !model.model) return [];
  const color = colorFor(label, ctx.allLabels);
  const name = `${label} model: ${model.model.formula}`;
  const inside = band.filter((b) => b.world_size <= measuredMax).map((b) => [b.world_size, b.time_s]);
  const beyond = band.filter((b) => b.world_size >= measuredMax).map((b) => [b.world_size, b.time_s]);
  const line = (id: string, data: number[][], type: string) => ({
    type: "line", id, name, data, color, symbol: "none", silent: true, z: 1, lineStyle: { width: 1.5, type, opacity: 0.8 },
  });
  return [
    {
      type: "custom",
      id: `band:${label}`,
      name: `${label} model (90% interval)`,
      data: band.map((b) => [b.world_size, b.lower, b.upper]),
      silent: true,
      z: 0,
      // The whole polygon once, from the first item: lower edge out, upper edge back.
      renderItem: (params: { dataIndex: number }, api: { coord: (p: number[]) => number[] }) => {
        if (params.dataIndex !== 0) return null;
        const pts = [...band.map((b) => api.coord([b.world_size, b.lower])), ...band.slice().reverse().map((b) => api.coord([b.world_size, b.upper]))];
        return { type: "polygon", shape: { points: pts }, style: { fill: color, opacity: 0.15 } };
      },
    },
    line(`model:${label}`, inside, "solid"),
    line(`prediction:${label}`, beyond, "dashed"),
  ];
}

export function timeChart(configs: Configuration[], kind: TimeKind, ctx: ChartContext): Option {
  const series: Option[] = [];
  const notes: string[] = [];
  for (const [label, cs] of byLabel(configs)) {
    const data = curve(cs, (c) => timeStat(c, kind)?.mean, true);
    if (!data.length) continue;
    series.push(lineSeries(label, ctx, data, "s"));
    const ci = ciBars(cs, kind);
    if (ci.length) series.push(errorBars(`ci:${label}`, `${label} (95% CI)`, curveColor(label, ctx), ci));
    const model = ctx.models?.find((m) => m.curve === label && m.time_from === kind);
    if (model) {
      series.push(...modelSeries(label, model, Math.max(...data.map((d) => d[0])), ctx));
      if (model.refused) notes.push(`${label}: ${model.model ? "no prediction" : "no model"}: ${model.refused}`);
    }
  }
  const what = `${kind} time`;
  return {
    ...(series.length ? {} : noData(`no ${what} in this study`)),
    ...(series.length && notes.length
      ? { graphic: [{ type: "text", id: "model-notes", right: 24, bottom: 62, style: { text: notes.join("\n"), fill: "#666", fontSize: 11, lineHeight: 15, width: 300, overflow: "break", align: "right" } }] }
      : {}),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: itemTooltip("s", what, ctx),
    xAxis: worldSizeAxis(ctx),
    yAxis: logAxis(10, `${what} (s)`, 48),
    series,
  };
}

// Speedup and efficiency of a curve's model, as summary.json gives them.
function modelThrough(label: string, cs: Configuration[], ctx: ChartContext, figure: BandFigure): Option[] {
  const model = ctx.models?.find((m) => m.curve === label);
  return model ? modelSeries(label, model, Math.max(...cs.map((c) => c.world_size)), ctx, figure) : [];
}

export function speedupChart(configs: Configuration[], ctx: ChartContext): Option {
  const series: Option[] = [];
  for (const [label, cs] of byLabel(configs)) {
    const data = curve(cs, (c) => c.speedup, true);
    if (data.length) series.push(lineSeries(label, ctx, data, "×"));
    if (data.length) series.push(...modelThrough(label, cs, ctx, "speedup"));
  }
  if (series.length) {
    for (const ideal of idealLines(configs)) {
      series.push({
        type: "line",
        id: `ideal:${ideal.p0}`,
        name: `ideal (p0 = ${ideal.p0})`,
        data: ideal.points,
        symbol: "none",
        color: "#555",
        lineStyle: { type: "dashed", width: 1.5 },
        tooltip: { show: false },
        z: 1,
      });
    }
  }
  return {
    ...(series.length ? {} : noData("no speedup: a label needs runs at two GPU counts")),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: itemTooltip("×", "speedup", ctx),
    xAxis: worldSizeAxis(ctx),
    yAxis: logAxis(2, "speedup (×)"),
    series,
  };
}

export function efficiencyChart(configs: Configuration[], ctx: ChartContext): Option {
  const series: Option[] = [];
  for (const [label, cs] of byLabel(configs)) {
    const data = curve(cs, (c) => (isNum(c.efficiency) ? c.efficiency * 100 : null));
    if (data.length) series.push(lineSeries(label, ctx, data, "%", true));
    if (data.length) series.push(...modelThrough(label, cs, ctx, "efficiency"));
  }
  if (series.length) series[0].markLine = { silent: true, symbol: "none", lineStyle: { color: "#555", type: "dashed" }, label: { formatter: "ideal", position: "insideEndTop" }, data: [{ yAxis: 100 }] };
  return {
    ...(series.length ? {} : noData("no efficiency: a label needs runs at two GPU counts")),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: itemTooltip("%", "efficiency", ctx),
    xAxis: worldSizeAxis(ctx),
    yAxis: { type: "value", min: 0, name: "parallel efficiency (%)", ...AXIS_NAME, nameGap: 44 },
    series,
  };
}

export function throughputChart(configs: Configuration[], perGpu: boolean, ctx: ChartContext): Option {
  const series: Option[] = [];
  for (const [label, cs] of byLabel(configs)) {
    const data = curve(cs, (c) => (perGpu ? c.throughput_per_gpu : c.throughput_samples_per_s), true);
    if (data.length) series.push(lineSeries(label, ctx, data, "samples/s"));
  }
  const unit = perGpu ? `samples/s per ${ctx.unit.singular}` : "samples/s";
  return {
    ...(series.length ? {} : noData("no throughput: the runs report no samples, samples_per_epoch or global batch (traces: --global-batch-size)")),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: itemTooltip(unit, perGpu ? `throughput per ${ctx.unit.singular}` : "throughput", ctx),
    xAxis: worldSizeAxis(ctx),
    yAxis: perGpu
      ? { type: "value", min: 0, name: `throughput (${unit})`, ...AXIS_NAME, nameGap: 48, axisLabel: { formatter: (v: number) => fmtAxis(v) } }
      : logAxis(2, `throughput (${unit})`, 48),
    series,
  };
}

const BREAKDOWN_COLORS = ["#0072B2", "#56B4E9", "#D55E00", "#CC79A7", "#999999", "#E69F00"];

// Stacked bars of a few fixed parts: a legend that wraps to a second row shows them all on a
// half-width card, where a scrolling one hid some behind its pager.
const STACKED_PARTS_LAYOUT = {
  grid: { ...GRID, top: 72, bottom: 72 },
  legend: { top: 0, left: 8, width: "80%", type: "plain", itemWidth: 18, itemGap: 8, textStyle: { fontSize: 11 } },
};

export function breakdownChart(configs: Configuration[], ctx: ChartContext): Option {
  const rows = configurationBreakdown(configs);
  const categories = rows.map((r) => r.key);
  const series = BREAKDOWN_PARTS.map((part, k) => ({
    type: "bar",
    id: `part:${part}`,
    name: part,
    stack: "share",
    color: BREAKDOWN_COLORS[k],
    data: rows.map((r) => +(r.shares[k] * 100).toFixed(2)),
    label: { show: ctx.showLabels && k === 0, position: "inside", formatter: (p: { value: number }) => fmtPercent(p.value, 2) },
    barMaxWidth: 48,
  }));
  return {
    ...(rows.length ? {} : noData("no trace breakdown: add PyTorch profiler traces to the runs")),
    ...STACKED_PARTS_LAYOUT,
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      confine: true,
      formatter: (ps: { name: string; seriesName: string; value: number; dataIndex: number }[]) => {
        if (!ps.length) return "";
        const row = rows[ps[0].dataIndex];
        const score = row && row.score !== null ? `<br>computation score ${esc(fmt(row.score))}` : "";
        return `<b>${esc(ps[0].name)}</b>${score}<br>` + ps.map((p) => `${esc(p.seriesName)}: ${esc(fmtPercent(p.value))} of step`).join("<br>");
      },
    },
    xAxis: { type: "category", data: categories, name: `configuration (label/${ctx.unit.plural})`, ...AXIS_NAME, nameGap: 50, axisLabel: catLabels(categories) },
    yAxis: { type: "value", max: 100, min: 0, name: "share of step time (%)", ...AXIS_NAME, nameGap: 44 },
    series: rows.length ? series : [],
  };
}

// Bus bandwidth of the collectives matched across ranks against their message size: one line per
// configuration and collective (the label's colour, one dash per collective; the world size is in
// the name).
export function bandwidthChart(configs: Configuration[], ctx: ChartContext): Option {
  const series: Option[] = [];
  const collectives = [...new Set(configs.flatMap((c) => (c.collective_bandwidth ?? []).map((p) => p.collective)))].sort();
  const dashes = ["solid", "dashed", "dotted"];
  for (const c of configs)
    for (const name of [...new Set((c.collective_bandwidth ?? []).map((p) => p.collective))].sort()) {
      const points = (c.collective_bandwidth ?? []).filter((p) => p.collective === name && isNum(p.bytes) && isNum(p.busbw_gbps) && p.bytes > 0);
      if (!points.length) continue;
      points.sort((a, b) => a.bytes - b.bytes);
      const id = `${curveOf(c)}/${c.world_size} ${name}`;
      series.push({
        type: "line",
        id: `bw:${id}`,
        name: id,
        data: points.map((p) => [p.bytes, p.busbw_gbps, p.calls]),
        color: curveColor(curveOf(c), ctx),
        // One dash per collective; a comparison's before study lighter.
        lineStyle: { width: 2, type: dashes[collectives.indexOf(name) % dashes.length], opacity: afterOf(curveOf(c), ctx) ? 0.5 : 1 },
        symbolSize: 7,
        label: { show: ctx.showLabels, position: "top", formatter: (p: { value: number[] }) => fmt(p.value[1]) },
        emphasis: { focus: "series" },
      });
    }
  return {
    ...(series.length ? {} : noData("no message sizes: collectives matched across ranks with NCCL's sizes (PyTorch ≥ 2.2 traces) draw here")),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: {
      trigger: "item",
      confine: true,
      formatter: (p: { seriesName: string; value: number[] }) =>
        `<b>${esc(p.seriesName)}</b><br>${esc(fmt(p.value[0]))} bytes<br>bus bandwidth ${esc(fmt(p.value[1]))} GB/s<br>${esc(String(p.value[2]))} calls`,
    },
    xAxis: logAxis(2, "message size (bytes)"),
    yAxis: { type: "value", name: "bus bandwidth (GB/s)", ...AXIS_NAME, nameGap: 44 },
    series,
  };
}

// Where the time went: per configuration beyond its baseline, the step time lost against the ideal
// (the baseline's × p0/p) stacked by cause, ms per step; the POP efficiencies in the tooltip.
const LOST_PARTS: [string, string, string][] = [
  ["exposed_comm", "exposed communication", "#e4572e"],
  ["idle_imbalance", "waiting and idle", "#f3a712"],
  ["data_loading", "data loading", "#a8c686"],
  ["extra_compute", "extra computation", "#4c8bf5"],
  ["unattributed", "unattributed", "#999999"],
];
export function lostTimeChart(configs: Configuration[], ctx: ChartContext): Option {
  const rows = configs.filter((c) => c.lost_time_s && c.world_size !== c.baseline_world_size);
  const categories = rows.map((c) => `${curveOf(c)}/${c.world_size}`);
  const series = LOST_PARTS.map(([key, name, color]) => ({
    type: "bar",
    id: `lost:${key}`,
    name,
    stack: "lost",
    color,
    data: rows.map((c) => +(((c.lost_time_s as Record<string, number>)[key] ?? 0) * 1e3).toPrecision(4)),
    label: { show: ctx.showLabels, position: "inside", formatter: (p: { value: number }) => fmt(p.value) },
    barMaxWidth: 48,
  }));
  return {
    ...(rows.length ? {} : noData("no account of lost time: it needs profiler traces at the baseline and at larger counts")),
    ...STACKED_PARTS_LAYOUT,
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      confine: true,
      formatter: (ps: { seriesName: string; value: number; dataIndex: number }[]) => {
        const c = rows[ps[0]?.dataIndex ?? -1];
        if (!c || !c.lost_time_s) return "";
        const l = c.lost_time_s;
        const pop = c.pop ? `<br>LB ${esc(fmt(c.pop.load_balance))} × CommE ${esc(fmt(c.pop.comm_efficiency))} = PE ${esc(fmt(c.pop.parallel_efficiency))}` : "";
        return `<b>${esc(c.label)}/${c.world_size}</b><br>step ${esc(fmt(l.step * 1e3))} ms, ideal ${esc(fmt(l.ideal * 1e3))} ms${pop}<br>` +
          ps.map((p) => `${esc(p.seriesName)}: ${esc(fmt(p.value))} ms`).join("<br>");
      },
    },
    xAxis: { type: "category", data: categories, name: `configuration (label/${ctx.unit.plural})`, ...AXIS_NAME, nameGap: 50, axisLabel: catLabels(categories) },
    yAxis: { type: "value", name: "ms per step lost", ...AXIS_NAME, nameGap: 44 },
    series: rows.length ? series : [],
  };
}

// The ops that lose most GPU time against the roofline, per configuration: what the roofline
// allows (attainable) and what it lost, ms per step and rank, one bar per configuration and op.
export function rooflineChart(configs: Configuration[], ctx: ChartContext): Option {
  const rows: { key: string; op: string; bound: string; ok: number; lost: number }[] = [];
  for (const c of configs)
    for (const o of (c.roofline_ops ?? []).slice(0, 3))
      rows.push({ key: `${curveOf(c)}/${c.world_size}`, op: `${o.name} ${o.shapes}`, bound: o.bound, ok: Math.max(0, o.gpu_ms_per_step - o.lost_ms_per_step), lost: o.lost_ms_per_step });
  const categories = rows.map((r) => `${r.key}: ${r.op}`);
  const bar = (id: string, name: string, color: string, values: number[]) => ({
    type: "bar",
    id,
    name,
    stack: "time",
    color,
    data: values,
    label: { show: ctx.showLabels, position: "inside", formatter: (p: { value: number }) => fmt(p.value) },
    barMaxWidth: 28,
  });
  return {
    ...(rows.length ? {} : noData("no operator shapes: profile with record_shapes=True to see ops against the roofline")),
    grid: { ...GRID, left: 16, top: 40, containLabel: true },
    legend: { top: 0, left: 8, textStyle: { fontSize: 11 } },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      confine: true,
      formatter: (ps: { dataIndex: number }[]) => {
        const r = rows[ps[0]?.dataIndex ?? -1];
        if (!r) return "";
        return `<b>${esc(r.key)}</b><br>${esc(r.op)}<br>${esc(r.bound)}-bound<br>at the roofline ${esc(fmt(r.ok))} ms, lost ${esc(fmt(r.lost))} ms per step`;
      },
    },
    yAxis: { type: "category", data: categories, inverse: true, axisLabel: { fontSize: 10, width: 260, overflow: "truncate" } },
    xAxis: { type: "value", name: "ms per step and rank", ...AXIS_NAME },
    series: rows.length ? [bar("roofline:ok", "at the roofline", "#4c8bf5", rows.map((r) => r.ok)), bar("roofline:lost", "lost against it", "#e4572e", rows.map((r) => r.lost))] : [],
  };
}

export function utilizationChart(configs: Configuration[], ctx: ChartContext): Option {
  const rows = configs.filter((c) => c.gpu_util_pct);
  const categories = rows.map((c) => `${curveOf(c)}/${c.world_size}`);
  const series: Option[] = rows.length
    ? [
        {
          type: "bar",
          id: "util:mean",
          name: "mean GPU utilization",
          barMaxWidth: 40,
          data: rows.map((c) => ({
            value: c.gpu_util_pct!.mean,
            itemStyle: { color: curveColor(curveOf(c), ctx), opacity: afterOf(curveOf(c), ctx) ? 0.5 : 1 },
          })),
          label: { show: ctx.showLabels, position: "insideTop", formatter: (p: { value: number }) => fmtPercent(p.value) },
        },
        errorBars("util:range", "min–max over GPUs", "#000", rows.map((c, i) => [i, c.gpu_util_pct!.min, c.gpu_util_pct!.max])),
      ]
    : [];
  return {
    ...(rows.length ? {} : noData("no GPU samples in this study")),
    grid: { ...GRID, bottom: 72 },
    tooltip: {
      trigger: "item",
      confine: true,
      formatter: (p: { dataIndex: number }) => {
        const c = rows[p.dataIndex];
        if (!c) return "";
        const u = c.gpu_util_pct!;
        return `<b>${esc(curveOf(c))}/${esc(c.world_size)}</b><br>mean ${esc(fmtPercent(u.mean))}<br>min ${esc(fmtPercent(u.min))} · max ${esc(fmtPercent(u.max))}`;
      },
    },
    xAxis: { type: "category", data: categories, name: `configuration (label/${ctx.unit.plural})`, ...AXIS_NAME, nameGap: 50, axisLabel: catLabels(categories) },
    yAxis: { type: "value", min: 0, max: 100, name: "GPU utilization (%)", ...AXIS_NAME, nameGap: 40 },
    series,
  };
}

export function energyChart(configs: Configuration[], ctx: ChartContext): Option {
  const rows = configs.filter((c) => isNum(c.energy_wh) || isNum(c.energy_j_per_sample));
  const categories = rows.map((c) => `${curveOf(c)}/${c.world_size}`);
  const series: Option[] = rows.length
    ? [
        { type: "bar", id: "energy:wh", name: "energy per run (Wh)", color: PALETTE[0], barMaxWidth: 32, data: rows.map((c) => c.energy_wh ?? null), label: { show: ctx.showLabels, position: "top", formatter: (p: { value: number }) => fmt(p.value) } },
        { type: "bar", id: "energy:jps", name: "energy per sample (J)", yAxisIndex: 1, color: PALETTE[1], barMaxWidth: 32, data: rows.map((c) => c.energy_j_per_sample ?? null), label: { show: ctx.showLabels, position: "top", formatter: (p: { value: number }) => fmt(p.value) } },
      ]
    : [];
  return {
    ...(rows.length ? {} : noData("no GPU energy in this study (needs power or energy samples)")),
    grid: { ...GRID, right: 64, top: 56, bottom: 72 },
    legend: { top: 0 },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      confine: true,
      formatter: (ps: { name: string; seriesName: string; value: number }[]) =>
        ps.length ? `<b>${esc(ps[0].name)}</b><br>` + ps.map((p) => `${esc(p.seriesName)}: ${esc(fmt(p.value))}`).join("<br>") : "",
    },
    xAxis: { type: "category", data: categories, name: `configuration (label/${ctx.unit.plural})`, ...AXIS_NAME, nameGap: 50, axisLabel: catLabels(categories) },
    yAxis: [
      { type: "value", min: 0, name: "energy per run (Wh)", ...AXIS_NAME, nameGap: 44 },
      { type: "value", min: 0, name: "energy per sample (J)", ...AXIS_NAME, nameGap: 44, splitLine: { show: false } },
    ],
    series,
  };
}

export function paretoChart(configs: Configuration[], ctx: ChartContext): Option {
  const points = timeEnergyPoints(configs);
  const fronts = paretoFronts(configs, ctx.models ?? []);
  const frontKeys = new Set(points.filter((p) => p.front).map((p) => p.key));
  const series: Option[] = [];
  for (const [label] of byLabel(configs)) {
    const mine = points.filter((p) => p.label === label);
    if (!mine.length) continue;
    series.push({
      type: "scatter",
      id: `pt:${label}`,
      name: label,
      color: colorFor(label, ctx.allLabels),
      symbolSize: (v: number[], p: { dataIndex: number }) => (frontKeys.has(mine[p.dataIndex]?.key) ? 14 : 9),
      data: mine.map((p) => ({ value: [p.x, p.y, p.ws], name: p.key })),
      label: { show: ctx.showLabels, position: "right", formatter: (p: { data: { value: number[] } }) => `${p.data.value[2]} ${ctx.unit.plural}` },
    });
  }
  // One front per curve, as the analysis chose it: curves of other workloads do not dominate each other.
  for (const [curve, front] of fronts)
    series.push({
      type: "line",
      id: `pareto:${curve}`,
      name: fronts.size > 1 ? `Pareto front (${curve})` : "Pareto front",
      data: front.map((p) => [p.x, p.y]),
      color: fronts.size > 1 ? curveColor(curve, ctx) : "#555",
      symbol: "none",
      lineStyle: { type: "dashed", width: 1.5 },
      step: false,
      tooltip: { show: false },
      z: 1,
    });
  return {
    ...(series.length ? {} : noData("no configuration has both a time and an energy")),
    grid: GRID_LEGEND,
    legend: legendOf(series),
    tooltip: {
      trigger: "item",
      confine: true,
      formatter: (p: { name: string; value: number[] }) =>
        `<b>${esc(p.name)}</b>${frontKeys.has(p.name) ? " (on the Pareto front)" : ""}<br>time ${esc(fmt(p.value[0]))} s<br>energy ${esc(fmt(p.value[1]))} Wh`,
    },
    xAxis: { type: "value", scale: true, name: "time per run (s)", ...AXIS_NAME, axisLabel: { formatter: (v: number) => fmtAxis(v) } },
    yAxis: { type: "value", scale: true, name: "GPU energy per run (Wh)", ...AXIS_NAME, nameGap: 48, axisLabel: { formatter: (v: number) => fmtAxis(v) } },
    series,
  };
}

function gpuName(g: GpuSeries): string {
  return g.node ? `${g.node}:${g.index}` : `GPU ${g.index}`;
}

const ZOOM = [
  { type: "inside", xAxisIndex: 0, filterMode: "none" },
  { type: "slider", xAxisIndex: 0, filterMode: "none", height: 18, bottom: 8 },
];

// Per GPU when there are few (or `everyGpu`), else min/mean/max over the GPUs.
export const ENVELOPE_ABOVE = 16;
export function gpuTimeChart(run: RunSeries | null, metric: "util" | "power", maxPoints = 2000, everyGpu = false): Option {
  const gpus = (run?.gpus ?? []).filter((g) => g[metric]);
  const many = gpus.length > 16;
  let series: Option[];
  if (gpus.length > ENVELOPE_ABOVE && !everyGpu) {
    // No more buckets than samples per GPU, or most buckets would be empty.
    const bins = Math.max(1, Math.min(600, maxPoints, ...gpus.map((g) => g.t.length)));
    const env = envelope(gpus.map((g) => ({ t: g.t, v: g[metric] })), bins);
    const line = (id: string, name: string, v: (number | null)[], color: string, width: number, dashed = false) => ({
      type: "line", id, name, data: env.t.map((t, i) => [t, v[i]]), showSymbol: false, connectNulls: true, color, animation: false,
      lineStyle: { width, type: dashed ? "dashed" : "solid" },
    });
    series = [
      line("env:max", `max over ${gpus.length} GPUs`, env.max, "#D55E00", 1.2, true),
      line("env:mean", `mean over ${gpus.length} GPUs`, env.mean, "#0072B2", 2),
      line("env:min", `min over ${gpus.length} GPUs`, env.min, "#009E73", 1.2, true),
    ];
  } else {
    series = gpus.map((g, i) => ({
      type: "line",
      id: `gpu:${i}`,
      name: gpuName(g),
      data: seriesPairs(g.t, g[metric], maxPoints),
      showSymbol: false,
      sampling: "lttb",
      color: PALETTE[i % PALETTE.length],
      lineStyle: { width: many ? 0.8 : 1.4, opacity: many ? 0.6 : 1 },
      emphasis: { focus: "series", lineStyle: { width: 2.5, opacity: 1 } },
      animation: false,
      progressive: 4000,
    }));
  }
  const unit = metric === "util" ? "%" : "W";
  const what = metric === "util" ? "GPU utilization" : "GPU power";
  return {
    ...(series.length ? {} : noData(run ? `no ${what} samples in this run` : "choose a run")),
    animation: false,
    grid: { ...GRID, bottom: 72 },
    tooltip: {
      trigger: "item",
      confine: true,
      formatter: (p: { seriesName: string; value: number[] }) =>
        `<b>${esc(p.seriesName)}</b><br>t = ${esc(fmt(p.value[0], 4))} s<br>${esc(what)} ${esc(unit === "%" ? fmtPercent(p.value[1]) : `${fmt(p.value[1])} ${unit}`)}`,
    },
    dataZoom: series.length ? ZOOM : [],
    xAxis: { type: "value", name: "time since run start (s)", ...AXIS_NAME, nameGap: 28, axisLabel: { formatter: (v: number) => fmtAxis(v) } },
    yAxis: { type: "value", min: 0, max: metric === "util" ? 100 : undefined, name: `${what} (${unit})`, ...AXIS_NAME, nameGap: 44 },
    series,
  };
}

export function stepTimeChart(run: RunSeries | null, maxPoints = 2000): Option {
  const ranks: RankSeries[] = run?.ranks ?? [];
  const slowest = slowestRank(ranks);
  // A rank may come more than once (several traces of one rank, or a trace and the MPI
  // interposer's record): ECharts refuses duplicate series ids, so the later ones get a suffix.
  const count = new Map<number, number>();
  for (const r of ranks) count.set(r.rank, (count.get(r.rank) ?? 0) + 1);
  const seen = new Map<number, number>();
  const nth = ranks.map((r) => {
    const k = (seen.get(r.rank) ?? 0) + 1;
    seen.set(r.rank, k);
    return k;
  });
  const series = ranks.map((r, i) => ({
    type: "line",
    id: nth[i] === 1 ? `rank:${r.rank}` : `rank:${r.rank}:${nth[i]}`,
    name: `rank ${r.rank}${count.get(r.rank)! > 1 ? ` #${nth[i]}` : ""}${i === slowest && ranks.length > 1 ? " (slowest)" : ""}`,
    data: seriesPairs(r.step, r.step_ms, maxPoints),
    showSymbol: r.step.length < 60,
    color: i === slowest && ranks.length > 1 ? "#D55E00" : PALETTE[(i % (PALETTE.length - 1)) + 0],
    lineStyle: { width: i === slowest ? 2.2 : 1, opacity: i === slowest || ranks.length <= 16 ? 1 : 0.5 },
    z: i === slowest ? 5 : 2,
    animation: false,
  }));
  return {
    ...(series.length ? {} : noData(run ? "no per-rank step times in this run (from profiler traces, the MPI interposer or steps.csv)" : "choose a run")),
    animation: false,
    grid: { ...GRID, bottom: 72 },
    tooltip: {
      trigger: "item",
      confine: true,
      formatter: (p: { seriesName: string; value: number[] }) => `<b>${esc(p.seriesName)}</b><br>step ${esc(p.value[0])}: ${esc(fmt(p.value[1]))} ms`,
    },
    dataZoom: series.length ? ZOOM : [],
    xAxis: { type: "value", name: "step", ...AXIS_NAME, nameGap: 28 },
    yAxis: { type: "value", scale: true, name: "step time (ms)", ...AXIS_NAME, nameGap: 44 },
    series,
  };
}
