// The dashboard: report.html (data inlined) and `scalelens serve` (data inlined, then polled).
import * as echarts from "echarts/core";
import { BarChart, CustomChart, LineChart, ScatterChart } from "echarts/charts";
import {
  DataZoomComponent,
  GraphicComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  ToolboxComponent,
  TooltipComponent,
} from "echarts/components";
import { CanvasRenderer, SVGRenderer } from "echarts/renderers";
import "./style.css";
import {
  bandwidthChart,
  breakdownChart,
  efficiencyChart,
  energyChart,
  gpuTimeChart,
  lostTimeChart,
  paretoChart,
  rooflineChart,
  speedupChart,
  stepTimeChart,
  throughputChart,
  timeChart,
  utilizationChart,
  type ChartContext,
  type Option,
} from "./charts";
import {
  beforeConfigs,
  beforeCurve,
  compareRows,
  curveOf,
  defaultTimeKind,
  headline,
  labelsOf,
  parseInlineData,
  selfCheckText,
  sortRows,
  timeStat,
  toCsv,
  withBefore,
  type Column,
  type TimeKind,
} from "./shape";
import type { CompareMetric, Comparison, Configuration, CurveModel, ReportData, RunSeries, Summary } from "./types";
import { type CountUnit, colorFor, countUnit, fmt, fmtMeanCi, fmtPercent, isNum, pct, withUnit } from "./util";

echarts.use([
  BarChart, CustomChart, LineChart, ScatterChart, DataZoomComponent, GraphicComponent, GridComponent, LegendComponent,
  MarkLineComponent, TitleComponent, ToolboxComponent, TooltipComponent, CanvasRenderer, SVGRenderer,
]);

interface State {
  data: ReportData | null;
  hidden: Set<string>;
  showLabels: boolean;
  timeKind: TimeKind | null;
  run: string | null;
  sortKey: string;
  sortAsc: boolean;
  generation: number;
  everyGpu: boolean;
}

const state: State = { data: null, hidden: new Set(), showLabels: false, timeKind: null, run: null, sortKey: "label", sortAsc: true, generation: 0, everyGpu: false };
const charts: Record<string, echarts.ECharts> = {};
const seriesCache = new Map<string, RunSeries | null>();
const hook = { charts, state, ready: false, renders: 0, generation: 0, errors: [] as string[], timings: {} as Record<string, number> };
(window as unknown as { __scalelens: typeof hook }).__scalelens = hook;

// ---- DOM helpers: text only through textContent -------------------------------------------
function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}
function setText(id: string, text: string): void {
  const e = document.getElementById(id);
  if (e) e.textContent = text;
}
function download(name: string, url: string): void {
  const a = el("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

// ---- Layout ---------------------------------------------------------------------------------
const CHARTS: { id: string; section: string; title: string; desc: string; wide?: boolean }[] = [
  { id: "time", section: "scaling", title: "Time vs {count}", desc: "Mean per configuration, log-log, with the 95% confidence interval over repeats." },
  { id: "speedup", section: "scaling", title: "Speedup vs {count}", desc: "Against the baseline the report used; the dashed line is ideal scaling." },
  { id: "efficiency", section: "scaling", title: "Parallel efficiency", desc: "Speedup · p0 / p; 100% is ideal." },
  { id: "throughput", section: "scaling", title: "Throughput", desc: "Samples per second, all {count} together." },
  { id: "throughput_per_gpu", section: "scaling", title: "Throughput per {one}", desc: "Samples per second per {one}; flat is ideal." },
  { id: "breakdown", section: "why", title: "Where step time goes", desc: "From profiler traces: shares of step time, mean over runs." },
  { id: "lost", section: "why", title: "Where the lost time went", desc: "From profiler traces: per step, the time beyond the ideal (the baseline's × p0/p) split by cause; the tooltip has the POP efficiencies." },
  { id: "bandwidth", section: "why", title: "Collective bus bandwidth vs message size", desc: "From profiler traces: collectives matched across ranks, median bus bandwidth (NCCL's definition) per power-of-two message size." },
  { id: "roofline", section: "why", title: "Ops against the roofline", desc: "From profiler traces with shapes: the ops losing most GPU time per step and rank, split into what the roofline allows and what was lost against it." },
  { id: "utilization", section: "why", title: "GPU utilization", desc: "Time-weighted mean per configuration; whiskers: min–max over GPUs." },
  { id: "energy", section: "cost", title: "Energy", desc: "GPU energy per run (Wh) and per sample (J), mean over runs." },
  { id: "pareto", section: "cost", title: "Time vs energy", desc: "Per configuration; large points and the dashed line are the Pareto front (no other is both faster and cheaper)." },
  { id: "gpu_util", section: "drill", title: "GPU utilization over time", desc: "Per GPU (above 16 GPUs: min, mean and max over the GPUs; tick \"every GPU\" for all); drag or scroll to zoom.", wide: true },
  { id: "gpu_power", section: "drill", title: "GPU power over time", desc: "Per GPU (above 16 GPUs: min, mean and max over the GPUs; tick \"every GPU\" for all); drag or scroll to zoom.", wide: true },
  { id: "steps", section: "drill", title: "Step time per rank", desc: "Per-rank step times from profiler traces (else the MPI interposer, else the steps the program logged in steps.csv); the slowest rank is highlighted (stragglers).", wide: true },
];

const SECTIONS: { id: string; title: string }[] = [
  { id: "scaling", title: "How well it scales" },
  { id: "why", title: "Why not better" },
  { id: "cost", title: "At what cost" },
  { id: "drill", title: "One run in detail" },
];

function buildLayout(root: HTMLElement): void {
  root.replaceChildren();
  const header = el("header", {},
    el("div", { class: "brand" }, el("h1", {}, "scalelens"), el("span", { id: "mode", class: "badge" })),
    el("p", { id: "meta", class: "meta" }));
  const controls = el("section", { id: "controls", class: "controls", "aria-label": "Labels and display options" },
    el("div", { id: "label-toggles", class: "toggles" }),
    el("div", { class: "options" },
      el("button", { id: "labels-all", type: "button" }, "all"),
      el("button", { id: "labels-none", type: "button" }, "none"),
      el("label", {}, el("input", { id: "show-values", type: "checkbox" }), " values on charts"),
      el("label", {}, "time: ", el("select", { id: "time-kind" }, el("option", { value: "epoch" }, "epoch time"), el("option", { value: "run" }, "run time"), el("option", { value: "step" }, "step time")))));
  const head = el("section", { id: "headline" }, el("div", { id: "cards", class: "cards" }), el("div", { id: "findings", class: "findings" }));
  root.append(header, controls, head);
  if (state.data?.compare) root.append(el("section", { id: "sec-compare" }, el("h2", {}, "Before and after"), el("div", { id: "compare" })));
  for (const s of SECTIONS) {
    const sec = el("section", { id: `sec-${s.id}` }, el("h2", {}, s.title));
    if (s.id === "drill")
      sec.append(el("div", { class: "drill-controls" },
        el("label", {}, "run: ", el("select", { id: "run-select" })),
        el("label", {}, el("input", { id: "every-gpu", type: "checkbox" }), " every GPU (default: min/mean/max above 16 GPUs)"),
        el("span", { id: "run-info", class: "meta" })));
    const grid = el("div", { class: "grid" });
    for (const c of CHARTS.filter((c) => c.section === s.id)) {
      grid.append(el("div", { class: c.wide ? "card wide" : "card", id: `card-${c.id}` },
        el("h3", {}, withUnit(c.title, GPU_UNIT)), el("p", { class: "desc" }, withUnit(c.desc, GPU_UNIT)), el("div", { class: "chart", "data-chart": c.id })));
    }
    // Each model's self-check, under the time chart that draws its predictions.
    grid.querySelector("#card-time")?.append(el("ul", { id: "model-checks", class: "model-checks meta" }));
    sec.append(grid);
    root.append(sec);
  }
  root.append(
    el("section", { id: "sec-table" }, el("h2", {}, "Summary table"),
      el("div", { class: "table-tools" }, el("button", { id: "csv", type: "button" }, "Download CSV"), el("span", { class: "meta" }, "Click a column to sort.")),
      el("div", { class: "table-wrap" }, el("table", { id: "summary-table" })),
      el("details", { class: "provenance" }, el("summary", {}, "Where each row comes from"), el("ul", { id: "provenance", class: "meta" }))),
    el("section", { id: "sec-figures" }, el("h2", {}, "Static figures"), el("p", { id: "figures-note", class: "meta" })),
    el("footer", {}, el("span", { id: "footer" })));

  document.getElementById("labels-all")!.addEventListener("click", () => { state.hidden.clear(); renderAll(); });
  document.getElementById("labels-none")!.addEventListener("click", () => { labelsOf(state.data!.summary).forEach((l) => state.hidden.add(l)); renderAll(); });
  document.getElementById("show-values")!.addEventListener("change", (e) => { state.showLabels = (e.target as HTMLInputElement).checked; renderAll(); });
  document.getElementById("time-kind")!.addEventListener("change", (e) => { state.timeKind = (e.target as HTMLSelectElement).value as TimeKind; renderAll(); });
  document.getElementById("run-select")!.addEventListener("change", (e) => { state.run = (e.target as HTMLSelectElement).value; void renderDrill(); });
  document.getElementById("every-gpu")!.addEventListener("change", (e) => { state.everyGpu = (e.target as HTMLInputElement).checked; void renderDrill(); });
  document.getElementById("csv")!.addEventListener("click", () => {
    const csv = toCsv(visibleConfigs(), columnsFor(state.data?.summary));
    download("scalelens-summary.csv", URL.createObjectURL(new Blob([csv], { type: "text/csv" })));
  });
  window.addEventListener("resize", () => Object.values(charts).forEach((c) => c.resize()));
}

// ---- Charts ---------------------------------------------------------------------------------
const SVG_ICON = "path://M4 4h16v16H4z M8 15l3-4 2 3 2-2 3 3";

function saveSvg(id: string): void {
  const chart = charts[id];
  if (!chart) return;
  const box = el("div");
  box.style.cssText = `position:fixed;left:-10000px;top:0;width:${chart.getWidth()}px;height:${chart.getHeight()}px`;
  document.body.append(box);
  const tmp = echarts.init(box, undefined, { renderer: "svg" });
  const option = chart.getOption() as Option;
  option.animation = false;
  tmp.setOption(option);
  download(`scalelens-${id}.svg`, tmp.getDataURL({ type: "svg" }));
  tmp.dispose();
  box.remove();
}

function setChart(id: string, option: Option): void {
  const node = document.querySelector<HTMLElement>(`[data-chart="${id}"]`);
  if (!node) return;
  let chart = charts[id];
  if (!chart) chart = charts[id] = echarts.init(node, undefined, { renderer: "canvas" });
  option.toolbox = {
    right: 4,
    top: 0,
    itemSize: 14,
    feature: {
      saveAsImage: { title: "PNG", name: `scalelens-${id}`, pixelRatio: 2, backgroundColor: "#fff" },
      mySvg: { show: true, title: "SVG", icon: SVG_ICON, onclick: () => saveSvg(id) },
    },
  };
  option.textStyle = { fontFamily: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif" };
  option.animationDuration = option.animation === false ? 0 : 300;
  const t0 = performance.now();
  chart.setOption(option, { notMerge: true });
  hook.timings[id] = performance.now() - t0;
  hook.renders++;
}

function visibleConfigs(): Configuration[] {
  if (!state.data) return [];
  return state.data.summary.configurations.filter((c) => !state.hidden.has(curveOf(c)));
}

// The before study's configurations of the visible curves (comparison pages only).
function visibleBefore(): Configuration[] {
  const compare = state.data?.compare;
  if (!compare) return [];
  return beforeConfigs(compare.before, compare.comparison).filter((c) => !state.hidden.has(beforeCurve(curveOf(c)) ?? curveOf(c)));
}

function renderAll(): void {
  const data = state.data;
  if (!data) return;
  const summary = data.summary;
  const all = labelsOf(summary);
  const kind = state.timeKind ?? defaultTimeKind(summary);
  const unit = countUnit(summary.world_size_unit);
  const configs = visibleConfigs();
  // Scaling charts draw a comparison's before curves too, dashed.
  const before = visibleBefore();
  const scaling = [...configs, ...before];
  const paired = withBefore(configs, before);  // per-configuration charts: before beside after
  const ctx: ChartContext = { allLabels: all, showLabels: state.showLabels, unit, models: summary.curves, before: new Set(before.map(curveOf)) };

  (document.getElementById("time-kind") as HTMLSelectElement).value = kind;
  renderToggles(all);
  renderHeader(data);
  renderChartTitles(unit);
  renderHeadline(kind);

  const jobs: [string, () => Option][] = [
    ["time", () => timeChart(scaling, kind, ctx)],
    ["speedup", () => speedupChart(scaling, ctx)],
    ["efficiency", () => efficiencyChart(scaling, ctx)],
    ["throughput", () => throughputChart(scaling, false, ctx)],
    ["throughput_per_gpu", () => throughputChart(scaling, true, ctx)],
    ["breakdown", () => breakdownChart(configs, ctx)],
    ["lost", () => lostTimeChart(paired, ctx)],
    ["bandwidth", () => bandwidthChart(paired, ctx)],
    ["roofline", () => rooflineChart(paired, ctx)],
    ["utilization", () => utilizationChart(paired, ctx)],
    ["energy", () => energyChart(paired, ctx)],
    ["pareto", () => paretoChart(configs, ctx)],
  ];
  renderModelChecks(summary.curves ?? [], unit);
  renderTable(configs, kind);
  if (data.compare) renderComparison(data.compare.comparison);
  renderRunSelect();
  if (hook.renders > 0) {
    for (const [id, make] of jobs) setChart(id, make());
    void renderDrill();
    return;
  }
  // First paint: the charts in view now, the rest one per task so the page is usable at once.
  const inView = (id: string) => {
    const node = document.querySelector(`[data-chart="${id}"]`);
    return !!node && node.getBoundingClientRect().top < window.innerHeight;
  };
  const later = jobs.filter(([id]) => !inView(id));
  for (const [id, make] of jobs) if (inView(id)) setChart(id, make());
  hook.timings.visible = performance.now();
  const next = () => {
    const job = later.shift();
    if (!job) {
      void renderDrill();
      return;
    }
    setChart(job[0], job[1]());
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}

function renderToggles(all: string[]): void {
  const box = document.getElementById("label-toggles")!;
  box.replaceChildren();
  for (const label of all) {
    const input = el("input", { type: "checkbox", "data-label": label });
    input.checked = !state.hidden.has(label);
    input.addEventListener("change", () => {
      if (input.checked) state.hidden.delete(label);
      else state.hidden.add(label);
      renderAll();
    });
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = colorFor(label, all);
    box.append(el("label", { class: "toggle" }, input, swatch, label));
  }
}

const GPU_UNIT = countUnit("GPUs");

// Chart titles name the study's unit; the layout is built before the data is known.
function renderChartTitles(unit: CountUnit): void {
  for (const c of CHARTS) {
    const card = document.getElementById(`card-${c.id}`);
    if (!card) continue;
    card.querySelector("h3")!.textContent = withUnit(c.title, unit);
    card.querySelector(".desc")!.textContent = withUnit(c.desc, unit);
  }
}

function renderModelChecks(curves: CurveModel[], unit: CountUnit): void {
  const list = document.getElementById("model-checks");
  if (!list) return;
  list.replaceChildren();
  for (const cm of curves) {
    const text = state.hidden.has(cm.curve) ? null : selfCheckText(cm, unit.plural);
    if (text) list.append(el("li", { "data-curve": cm.curve }, text));
  }
}

function renderHeader(data: ReportData): void {
  const s = data.summary;
  const nRuns = s.runs.length;
  setText("meta", `${s.configurations.length} configurations · ${nRuns} runs · baseline: ${s.baseline} · scaling: ${s.scaling}`);
  setText("mode", data.mode === "live" ? `live · updated ${new Date().toLocaleTimeString()}` : data.compare ? "comparison" : "report");
  if (data.compare) {
    const c = data.compare.comparison;
    setText("meta", `${c.before} (before, dashed) → ${c.after} (after): ${s.configurations.length} configurations · ${nRuns} runs after`);
  }
  setText("footer", `scalelens ${s.scalelens_version ?? ""} · ${s.schema} · metric definitions: docs/DESIGN.md`);
  const f = data.figures;
  setText("figures-note", f ? `figures/: ${f.figures.join(", ") || "none"}. ${f.message}` : data.mode === "live" ? "Static figures are written by 'scalelens report'." : "");
}

function card(title: string, value: string, sub: string, id: string): HTMLElement {
  return el("div", { class: "card-h", id }, el("div", { class: "card-title" }, title), el("div", { class: "card-value" }, value), el("div", { class: "card-sub" }, sub));
}

function renderHeadline(kind: TimeKind): void {
  const s = state.data!.summary;
  const h = headline(s, kind);
  const unit = countUnit(s.world_size_unit);
  const cards = document.getElementById("cards")!;
  cards.replaceChildren();
  if (h.best) {
    const value = h.bestBy === "throughput" ? `${fmt(h.best.throughput_samples_per_s)} samples/s` : `${fmt(timeStat(h.best, kind)?.mean)} s`;
    // Named for what it is: across curves of different workloads no count is "best"; the analysis's
    // recommendation (efficiency-aware, per curve) is the card after it.
    cards.append(card(h.bestBy === "throughput" ? "Highest throughput" : "Fastest", `${curveOf(h.best)} · ${h.best.world_size} ${unit.plural}`, value, "headline-best"));
  }
  const recommended = (s.curves ?? []).filter((cm) => cm.recommended);
  if (recommended.length === 1) {
    const r = recommended[0].recommended!;
    cards.append(card("Recommended", `${recommended[0].curve} · ${r.world_size} ${unit.plural}${r.predicted ? " (predicted)" : ""}`, r.reason, "headline-recommended"));
  } else if (recommended.length > 1) {
    const list = recommended.map((cm) => `${cm.curve}: ${cm.recommended!.world_size}${cm.recommended!.predicted ? " (predicted)" : ""}`).join(" · ");
    cards.append(card("Recommended", `${recommended.length} curves`, list, "headline-recommended"));
  }
  if (h.largest) {
    const l = h.largest;
    cards.append(card("Largest scale measured", `${l.world_size} ${unit.plural}`, `${isNum(l.nodes) ? `${l.nodes} nodes · ` : ""}${curveOf(l)}`, "headline-largest"));
    cards.append(card("Efficiency there", pct(l.efficiency), isNum(l.speedup) ? `speedup ${fmt(l.speedup)}× of ideal ${fmt(l.ideal_speedup)}×` : "no baseline to compare with", "headline-eff"));
    cards.append(card("Energy per sample there", isNum(l.energy_j_per_sample) ? `${fmt(l.energy_j_per_sample)} J` : "–", isNum(l.energy_wh) ? `${l.energy_extrapolated ? "~" : ""}${fmt(l.energy_wh)} Wh per run${l.energy_extrapolated ? " (extrapolated from the GPUs measured)" : ""}` : "no GPU energy measured", "headline-energy"));
  }
  const box = document.getElementById("findings")!;
  box.replaceChildren();
  if (!h.findings.length) {
    box.append(el("p", { class: "meta" }, "No warnings: every figure could be computed and repeats agree."));
    return;
  }
  const top = h.findings.slice(0, 5);
  const list = el("ul", { class: "findings-list" });
  for (const w of [...top, ...h.findings.slice(5)]) {
    const others = w.count > 1 ? ` and ${w.count - 1} more` : "";
    const where = [w.configuration, w.path ? `${w.path}${w.line ? `:${w.line}` : ""}${others}` : ""].filter(Boolean).join(" · ");
    const li = el("li", { class: `sev-${w.severity}` }, el("span", { class: "sev" }, w.severity), " ", w.message, where ? el("span", { class: "where" }, ` (${where})`) : "", el("span", { class: "code" }, ` [${w.code}]`));
    list.append(li);
  }
  if (h.findings.length > 5) {
    [...list.children].slice(5).forEach((li) => li.classList.add("more"));
    const more = el("button", { type: "button", class: "link" }, `show all ${h.findings.length} findings`);
    more.addEventListener("click", () => { list.classList.toggle("open"); more.textContent = list.classList.contains("open") ? "show fewer" : `show all ${h.findings.length} findings`; });
    box.append(el("h3", {}, "Findings"), list, more);
  } else {
    box.append(el("h3", {}, "Findings"), list);
  }
}

// ---- Summary table --------------------------------------------------------------------------
const num = (f: (c: Configuration) => unknown) => (c: Configuration) => { const v = f(c); return isNum(v) ? v : null; };
const COLUMNS: Column[] = [
  { key: "label", title: "label", value: (c) => c.label, text: (c) => c.label },
  { key: "system", title: "system", value: (c) => c.system ?? "", text: (c) => c.system ?? "?" },
  { key: "gpus", title: "{count}", value: (c) => c.world_size, text: (c) => String(c.world_size) },
  { key: "nodes", title: "nodes", value: num((c) => c.nodes), text: (c) => fmt(c.nodes) },
  { key: "runs", title: "runs", value: (c) => c.runs, text: (c) => String(c.runs) },
  { key: "instances", title: "instances × {count}", value: num((c) => c.instances), text: (c) => (isNum(c.instances) ? `${c.instances} × ${fmt(c.gpus_per_instance)}` : "–") },
  { key: "epoch", title: "epoch time (s)", value: num((c) => c.epoch_time_s?.mean), text: (c) => ci(c.epoch_time_s) },
  { key: "run", title: "run time (s)", value: num((c) => c.run_time_s?.mean), text: (c) => ci(c.run_time_s) },
  { key: "step", title: "step time (s)", value: num((c) => c.step_time_s?.mean), text: (c) => ci(c.step_time_s) },
  { key: "x", title: "throughput (samples/s)", value: num((c) => c.throughput_samples_per_s), text: (c) => fmt(c.throughput_samples_per_s) },
  { key: "mpm", title: "models/min", value: num((c) => c.models_per_minute), text: (c) => fmt(c.models_per_minute) },
  { key: "xg", title: "per {one} (samples/s)", value: num((c) => c.throughput_per_gpu), text: (c) => fmt(c.throughput_per_gpu) },
  { key: "s", title: "speedup (×)", value: num((c) => c.speedup), text: (c) => fmt(c.speedup) },
  { key: "e", title: "efficiency (%)", value: num((c) => (isNum(c.efficiency) ? c.efficiency * 100 : null)), text: (c) => pct(c.efficiency) },
  { key: "kf", title: "Karp–Flatt", value: num((c) => c.karp_flatt), text: (c) => fmt(c.karp_flatt) },
  { key: "cs", title: "computation score", value: num((c) => c.computation_score), text: (c) => fmt(c.computation_score) },
  // Of the collectives' kernel time, the share spent waiting for the last rank (imbalance, not network).
  { key: "cw", title: "comm waiting (%)", value: num((c) => (isNum(c.comm_wait_share) ? c.comm_wait_share * 100 : null)), text: (c) => pct(c.comm_wait_share) },
  { key: "itf", title: "computation fraction (itwinai)", value: num((c) => c.itwinai_computation_fraction), text: (c) => fmt(c.itwinai_computation_fraction) },
  { key: "u", title: "GPU util (%)", value: num((c) => c.gpu_util_pct?.mean), text: (c) => fmt(c.gpu_util_pct?.mean) },
  // Over time: a GPU busy at a steady 50 % and one idle half the time share a mean, not these.
  {
    key: "up",
    title: "GPU util over time p10 / p50 / p90 (%)",
    value: num((c) => c.gpu_util_percentiles_pct?.p50),
    text: (c) => (c.gpu_util_percentiles_pct ? `${c.gpu_util_percentiles_pct.p10} / ${c.gpu_util_percentiles_pct.p50} / ${c.gpu_util_percentiles_pct.p90}` : "–"),
  },
  // "~": the job's energy extrapolated from the GPUs that were measured.
  { key: "wh", title: "energy (Wh)", value: num((c) => c.energy_wh), text: (c) => (c.energy_extrapolated && isNum(c.energy_wh) ? `~${fmt(c.energy_wh)}` : fmt(c.energy_wh)) },
  { key: "whg", title: "energy per measured {one} (Wh)", value: num((c) => c.energy_wh_per_gpu), text: (c) => fmt(c.energy_wh_per_gpu) },
  { key: "jps", title: "energy (J/sample)", value: num((c) => c.energy_j_per_sample), text: (c) => fmt(c.energy_j_per_sample) },
  { key: "mem", title: "peak GPU memory (GiB)", value: num((c) => c.peak_gpu_memory_gib), text: (c) => fmt(c.peak_gpu_memory_gib) },
];
// The table's columns with the study's unit in their titles (GPUs, or ranks for CPU-only jobs).
// A system column only when the study spans several systems; instance columns only where
// some configuration is concurrent instances (MLPerf weak scaling); itwinai's computation fraction
// and energy per measured GPU only where some configuration has them.
function columnsFor(summary: Summary | undefined): Column[] {
  const unit = countUnit(summary?.world_size_unit);
  const several = (summary?.systems?.length ?? 0) > 1;
  const some = (f: (c: Configuration) => unknown) => !!summary?.configurations.some((c) => f(c));
  const shown: Record<string, boolean> = {
    system: several,
    instances: some((c) => isNum(c.instances)),
    mpm: some((c) => isNum(c.instances)),
    itf: some((c) => isNum(c.itwinai_computation_fraction)),
    whg: some((c) => c.energy_extrapolated),
    // Step time where it is some configuration's time (traces alone); else the other times say it.
    step: some((c) => c.time_from === "step"),
    cw: some((c) => isNum(c.comm_wait_share)),
    mem: some((c) => isNum(c.peak_gpu_memory_gib)),
    up: some((c) => !!c.gpu_util_percentiles_pct),
  };
  return COLUMNS.filter((c) => shown[c.key] ?? true).map((c) => ({ ...c, title: withUnit(c.title, unit) }));
}

function ci(s: Configuration["epoch_time_s"]): string {
  if (!s) return "–";
  if (isNum(s.ci95_low) && isNum(s.ci95_high)) return fmtMeanCi(s.mean, (s.ci95_high - s.ci95_low) / 2);
  return fmt(s.mean);
}

function renderTable(configs: Configuration[], _kind: TimeKind): void {
  const table = document.getElementById("summary-table")!;
  const columns = columnsFor(state.data?.summary);
  const column = columns.find((c) => c.key === state.sortKey) ?? columns[0];
  const rows = sortRows(configs, column, state.sortAsc);
  const head = el("tr");
  for (const c of columns) {
    const b = el("button", { type: "button", "data-sort": c.key }, c.title + (c.key === state.sortKey ? (state.sortAsc ? " ▲" : " ▼") : ""));
    b.addEventListener("click", () => {
      state.sortAsc = state.sortKey === c.key ? !state.sortAsc : true;
      state.sortKey = c.key;
      renderTable(visibleConfigs(), _kind);
    });
    const th = el("th", { scope: "col" }, b);
    if (c.key === state.sortKey) th.setAttribute("aria-sort", state.sortAsc ? "ascending" : "descending");
    head.append(th);
  }
  const body = el("tbody");
  for (const r of rows) {
    const tr = el("tr");
    for (const c of columns) tr.append(el("td", { class: c.key === "label" || c.key === "system" ? "text" : "num" }, c.text(r)));
    if (r.provenance) tr.title = r.provenance;
    body.append(tr);
  }
  table.replaceChildren(el("thead", {}, head), body);
  // One provenance line per configuration: files, reader, how the GPUs were counted, what was left out.
  const list = document.getElementById("provenance")!;
  list.replaceChildren(...rows.filter((r) => r.provenance).map((r) => el("li", {}, el("b", {}, `${curveOf(r)}/${r.world_size}`), `: ${r.provenance}`)));
}

// ---- Comparison -----------------------------------------------------------------------------
function changeText(v: unknown): string {
  if (!isNum(v)) return "–";
  const p = v * 100;
  return Math.abs(p) < 0.05 ? "0.0%" : `${p > 0 ? "+" : ""}${p.toFixed(1)}%`;
}
function metricValue(m: CompareMetric, v: unknown): string {
  if (!isNum(v)) return "–";
  if (m.metric === "efficiency") return pct(v);
  if (m.metric === "gpu_util") return fmtPercent(v);
  return m.unit ? `${fmt(v)} ${m.unit}` : fmt(v);
}

function renderComparison(c: Comparison): void {
  const box = document.getElementById("compare");
  if (!box) return;
  const counts = el("p", { id: "compare-counts", class: "compare-counts" });
  for (const v of ["regressed", "improved", "unchanged", "inconclusive"] as const)
    counts.append(el("span", { class: `verdict verdict-${v}` }, `${c.verdicts[v] ?? 0} ${v}`), " ");
  counts.append(el("span", { class: "meta" }, `change = after / before − 1 with its ${Math.round(c.confidence * 100)}% confidence interval over the repeats; threshold ±${(c.threshold * 100).toFixed(1)}%`));
  const head = el("tr");
  for (const t of ["configuration", "metric", "before", "after", "change", "95% CI", "verdict", "note"]) head.append(el("th", { scope: "col" }, t));
  const body = el("tbody");
  const unit = countUnit(c.world_size_unit);
  for (const { configuration: cc, metric: m } of compareRows(c)) {
    const name = cc.label_after === cc.label ? cc.label : `${cc.label} → ${cc.label_after}`;
    const system = cc.system || cc.system_after ? ` @ ${cc.system_after === cc.system ? cc.system : `${cc.system} → ${cc.system_after}`}` : "";
    const ci = isNum(m.ci_low) && isNum(m.ci_high) ? `[${changeText(m.ci_low)}, ${changeText(m.ci_high)}]` : "–";
    body.append(el("tr", { class: `verdict-${m.verdict}`, "data-verdict": m.verdict },
      el("td", { class: "text" }, `${name}${system} ${cc.world_size} ${cc.world_size === 1 ? unit.singular : unit.plural}`),
      el("td", { class: "text" }, m.detail ? `${m.metric} ${m.detail}` : m.metric),
      el("td", { class: "num" }, metricValue(m, m.before)),
      el("td", { class: "num" }, metricValue(m, m.after)),
      el("td", { class: "num" }, changeText(m.rel_change)),
      el("td", { class: "num" }, ci),
      el("td", { class: "text" }, el("span", { class: `verdict verdict-${m.verdict}` }, m.verdict)),
      el("td", { class: "text meta" }, m.note)));
  }
  const table = el("div", { class: "table-wrap" }, el("table", { id: "compare-table" }, el("thead", {}, head), body));
  const extra = el("ul", { class: "meta" });
  for (const n of c.unmatched.before) extra.append(el("li", {}, `only before (no match after): ${n}`));
  for (const n of c.unmatched.after) extra.append(el("li", {}, `only after (no match before): ${n}`));
  for (const m of c.curves) if (m.sentence) extra.append(el("li", {}, `scaling model of ${m.curve}: ${m.sentence}`));
  box.replaceChildren(counts, table, extra);
}

// ---- Drill-down -----------------------------------------------------------------------------
function renderRunSelect(): void {
  const select = document.getElementById("run-select") as HTMLSelectElement;
  const runs = state.data!.summary.runs.filter((r) => !state.hidden.has(curveOf(r)));
  const unit = countUnit(state.data!.summary.world_size_unit);
  if (!state.run || !runs.some((r) => r.run_id === state.run)) {
    // Default: the largest run that has GPU samples, else the largest.
    const withGpus = runs.filter((r) => (r.gpus ?? 0) > 0);
    const pick = (withGpus.length ? withGpus : runs).reduce<typeof runs[number] | null>((a, b) => (!a || (b.world_size ?? 0) > (a.world_size ?? 0) ? b : a), null);
    state.run = pick?.run_id ?? null;
  }
  select.replaceChildren();
  // Curves in the order every view lists them (labelsOf), then by size.
  const curves = labelsOf(state.data!.summary);
  const place = (r: (typeof runs)[number]) => curves.indexOf(curveOf(r));
  for (const r of [...runs].sort((a, b) => place(a) - place(b) || (a.world_size ?? 0) - (b.world_size ?? 0) || (a.run_id < b.run_id ? -1 : 1))) {
    const o = el("option", { value: r.run_id }, `${curveOf(r)} · ${r.world_size ?? "?"} ${unit.plural} · ${r.run_id}`);
    if (r.run_id === state.run) o.selected = true;
    select.append(o);
  }
}

async function runSeries(id: string): Promise<RunSeries | null> {
  const data = state.data!;
  if (data.series) return data.series.runs.find((r) => r.run_id === id) ?? null;
  if (data.mode !== "live") return null;  // a page without series (a comparison against a saved summary) has no server to ask
  const key = `${state.generation}:${id}`;
  if (seriesCache.has(key)) return seriesCache.get(key)!;
  try {
    const res = await fetch(`api/series?run=${encodeURIComponent(id)}`, { cache: "no-store" });
    const json = res.ok ? ((await res.json()) as { runs: RunSeries[] }) : null;
    const run = json?.runs[0] ?? null;
    seriesCache.set(key, run);
    return run;
  } catch {
    return null;
  }
}

async function renderDrill(): Promise<void> {
  const id = state.run;
  const info = state.data!.summary.runs.find((r) => r.run_id === id);
  const run = id ? await runSeries(id) : null;
  if (id !== state.run) return; // another run was chosen meanwhile
  const parts: string[] = [];
  if (info) {
    if (info.path) parts.push(info.path);
    if (run) parts.push(`${run.gpus.length} GPU series, ${run.ranks.length} ranks with step times`);
    if (info.gpu_model) parts.push(String(info.gpu_model));
  }
  setText("run-info", parts.join(" · "));
  setChart("gpu_util", gpuTimeChart(run, "util", 2000, state.everyGpu));
  setChart("gpu_power", gpuTimeChart(run, "power", 2000, state.everyGpu));
  setChart("steps", stepTimeChart(run));
  hook.ready = true;
}

// ---- Live mode ------------------------------------------------------------------------------
async function poll(): Promise<void> {
  try {
    const res = await fetch("api/version", { cache: "no-store" });
    if (res.ok) {
      const { generation } = (await res.json()) as { generation: number };
      if (generation !== state.generation) {
        const d = await fetch("api/data", { cache: "no-store" });
        if (d.ok) {
          state.data = (await d.json()) as ReportData;
          state.generation = generation;
          hook.generation = generation;
          seriesCache.clear();
          renderAll();
        }
      }
    }
  } catch (e) {
    hook.errors.push(String(e));
  }
  setTimeout(poll, 1000);
}

function main(): void {
  const root = document.getElementById("app")!;
  const t0 = performance.now();
  const data = parseInlineData(document.getElementById("scalelens-data")?.textContent);
  hook.timings.parse = performance.now() - t0;
  state.data = data;  // before the layout: a comparison page has a section more
  buildLayout(root);
  if (!data) {
    root.prepend(el("p", { class: "empty" }, "No study data in this page. Open the report.html that 'scalelens report' writes, or run 'scalelens serve DIR'."));
    hook.ready = true;
    return;
  }
  state.data = data;
  const t1 = performance.now();
  renderAll();
  hook.timings.renderAll = performance.now() - t1;
  if (data.mode === "live" && location.protocol.startsWith("http")) {
    state.generation = -1; // fetch once to learn the generation
    void poll();
  }
}

try {
  main();
} catch (e) {
  hook.errors.push(String(e));
  throw e;
}
