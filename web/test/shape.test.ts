import { describe, expect, it } from "vitest";
import {
  BEFORE_SUFFIX,
  beforeConfigs,
  beforeCurve,
  compareRows,
  foldRepeats,
  withBefore,
  byLabel,
  ciBars,
  configurationBreakdown,
  curve,
  curveOf,
  decimateIndices,
  defaultTimeKind,
  headline,
  idealLines,
  labelsOf,
  paretoFronts,
  parseInlineData,
  selfCheckText,
  seriesPairs,
  slowestRank,
  sortRows,
  timeStat,
  timeEnergyPoints,
  toCsv,
  type Column,
} from "../src/shape";
import type { Configuration, Summary } from "../src/types";

const stat = (mean: number, lo: number | null = null, hi: number | null = null) => ({ mean, median: mean, std: 0, n: 3, ci95_low: lo, ci95_high: hi });
const cfg = (label: string, ws: number, extra: Partial<Configuration> = {}): Configuration => ({ label, world_size: ws, runs: 3, ...extra });

const summary: Summary = {
  schema: "scalelens.summary/1",
  baseline: "per-label",
  scaling: "strong",
  configurations: [
    cfg("ddp", 4, { epoch_time_s: stat(30, 29, 31), speedup: 3.3, efficiency: 0.83, baseline_world_size: 1, throughput_samples_per_s: 330, energy_wh: 5, run_time_s: stat(300), energy_j_per_sample: 0.2 }),
    cfg("ddp", 1, { epoch_time_s: stat(100, 98, 102), speedup: 1, efficiency: 1, baseline_world_size: 1, throughput_samples_per_s: 100, energy_wh: 3, run_time_s: stat(1000) }),
    cfg("fsdp", 2, { epoch_time_s: stat(55), speedup: null, efficiency: null, baseline_world_size: 2, throughput_samples_per_s: 180, energy_wh: 8, run_time_s: stat(550) }),
  ],
  runs: [],
  warnings: [
    { severity: "note", code: "few-repeats", message: "n" },
    { severity: "error", code: "unreadable-file", message: "e" },
    { severity: "warning", code: "high-variation", message: "w" },
  ],
};

describe("data shaping", () => {
  it("groups configurations by label, sorted by world size", () => {
    const g = byLabel(summary.configurations);
    expect([...g.keys()]).toEqual(["ddp", "fsdp"]);
    expect(g.get("ddp")!.map((c) => c.world_size)).toEqual([1, 4]);
  });
  it("leaves unknown figures out of a curve instead of drawing 0", () => {
    const g = byLabel(summary.configurations);
    expect(curve(g.get("fsdp")!, (c) => c.speedup)).toEqual([]);
    expect(curve(g.get("ddp")!, (c) => c.speedup)).toEqual([[1, 1], [4, 3.3]]);
    expect(curve([cfg("a", 1, { speedup: 0 })], (c) => c.speedup, true)).toEqual([]);
  });
  it("gives CI bars only where the interval is known", () => {
    const g = byLabel(summary.configurations);
    expect(ciBars(g.get("ddp")!, "epoch")).toEqual([[1, 98, 102], [4, 29, 31]]);
    expect(ciBars(g.get("fsdp")!, "epoch")).toEqual([]);
  });
  it("draws one ideal line per baseline over the measured range", () => {
    const lines = idealLines(summary.configurations);
    expect(lines.map((l) => l.p0)).toEqual([1, 2]);
    expect(lines[0].points).toEqual([[1, 1], [2, 2], [4, 4]]);
    expect(lines[1].points[0]).toEqual([1, 0.5]);
  });
  it("picks headline figures and orders findings by severity", () => {
    const h = headline(summary, "epoch");
    expect(h.best?.world_size).toBe(4);
    expect(h.bestBy).toBe("throughput");
    expect(h.largest?.world_size).toBe(4);
    expect(h.findings.map((w) => w.severity)).toEqual(["error", "warning", "note"]);
  });
  it("folds the same warning about several runs into one finding with its count", () => {
    const w = (path: string, line?: number) => ({ severity: "warning" as const, code: "oversubscribed", message: "4 ranks on 2 CPUs", configuration: "mpi/4", path, line });
    const f = foldRepeats([w("/runs/a"), w("/runs/b"), w("/runs/c"), w("f.csv", 3), w("f.csv", 9)]);
    expect(f.map((x) => [x.path, x.count])).toEqual([["/runs/a", 3], ["f.csv", 1], ["f.csv", 1]]);
  });
  it("parses inline data and rejects a page without data", () => {
    expect(parseInlineData("null")).toBeNull();
    expect(parseInlineData("{broken")).toBeNull();
    expect(parseInlineData(JSON.stringify({ schema: "x", summary }))?.summary.configurations.length).toBe(3);
  });
});

describe("model self-check", () => {
  // summary.json's curve (fields the page reads) of a study at 1, 2, 4 and 64 GPUs: the refit
  // without 64 GPUs may not predict 8× beyond 4, so the predictions are unchecked.
  const unchecked = {
    curve: "ddp", label: "ddp", time_from: "epoch", refused: null, backtest: null,
    backtest_refused: "fitted without 64 GPUs, every GPU count asked for is beyond 8× the largest measured",
    model: { formula: "T(p) = 0.2 s + 99.8 s/p", law: "Amdahl", loo_rel_error: 3.182779480975625e-11 },
    predictions: [{ world_size: 128, time_s: 0.9796874994955833, lower: 0.9796874994812158, upper: 0.9796874995102114 }],
  };
  it("says a self-check that could not be made, and that no recommendation rests on the predictions", () => {
    expect(selfCheckText(unchecked, "GPUs")).toBe("ddp: no self-check: fitted without 64 GPUs, every GPU count asked for is beyond 8× the " +
      "largest measured; its predictions are unchecked, and no recommendation rests on them");
  });
  it("says nothing where there is no model", () => {
    expect(selfCheckText({ ...unchecked, model: null, backtest_refused: null, refused: "2 measured GPU counts; a model needs at least 3" }, "GPUs")).toBeNull();
  });
});

describe("Pareto front", () => {
  // As summary.json states it: time to solution and the front per curve are the analysis's.
  const configs = [
    cfg("ddp", 1, { time_to_solution_s: 1000, energy_wh: 3, pareto: true }),
    cfg("ddp", 4, { time_to_solution_s: 300, energy_wh: 5, pareto: true }),
    cfg("ddp", 8, { time_to_solution_s: 320, energy_wh: 9, pareto: false }),
    cfg("fsdp", 2, { time_to_solution_s: 550, energy_wh: 8, pareto: true }),
    cfg("fsdp", 4, { time_to_solution_s: 600, energy_wh: null, pareto: false }),
  ];
  const curves = [
    { curve: "ddp", label: "ddp", time_from: "run", model: null, refused: null, pareto: [4, 1, 16],
      predictions: [{ world_size: 16, time_s: 100, lower: 90, upper: 110, energy_wh: 12 }] },
    { curve: "fsdp", label: "fsdp", time_from: "run", model: null, refused: null, pareto: [2] },
  ];
  it("takes the points from time to solution and energy, marking the analysis's front", () => {
    const pts = timeEnergyPoints(configs);
    expect(pts.map((p) => [p.key, p.x, p.y, p.front])).toEqual([
      ["ddp/1", 1000, 3, true], ["ddp/4", 300, 5, true], ["ddp/8", 320, 9, false], ["fsdp/2", 550, 8, true]]);
  });
  it("draws each curve's front, predicted counts included, in time order", () => {
    const fronts = paretoFronts(configs, curves);
    expect([...fronts.keys()]).toEqual(["ddp", "fsdp"]);
    expect(fronts.get("ddp")!.map((p) => p.key)).toEqual(["ddp/16 (predicted)", "ddp/4", "ddp/1"]);
    expect(fronts.get("fsdp")!.map((p) => [p.x, p.y])).toEqual([[550, 8]]);
    // fsdp/2 is not dominated by ddp's points, being another curve's: no front across curves.
    expect(paretoFronts(configs, [])).toEqual(new Map());
    // A hidden curve (its configurations left out) draws no front, predicted points included.
    expect([...paretoFronts(configs.filter((c) => c.label === "fsdp"), curves).keys()]).toEqual(["fsdp"]);
  });
});

describe("decimation", () => {
  it("keeps everything when under the limit", () => {
    expect(decimateIndices([1, 2, 3], 10)).toEqual([0, 1, 2]);
  });
  it("caps the points and keeps extremes, first and last", () => {
    const n = 100000;
    const v = Array.from({ length: n }, (_, i) => Math.sin(i / 50));
    v[54321] = 1000; // a spike
    v[77777] = -1000; // a dip
    const idx = decimateIndices(v, 2000);
    expect(idx.length).toBeLessThanOrEqual(2000);
    expect(idx[0]).toBe(0);
    expect(idx[idx.length - 1]).toBe(n - 1);
    expect(idx).toContain(54321);
    expect(idx).toContain(77777);
    for (let i = 1; i < idx.length; i++) expect(idx[i]).toBeGreaterThan(idx[i - 1]);
  });
  it("skips nulls and keeps pairs aligned with time", () => {
    const t = Array.from({ length: 5000 }, (_, i) => i * 0.5);
    const v = t.map((x, i) => (i % 7 === 0 ? null : x));
    const pairs = seriesPairs(t, v, 100);
    expect(pairs.length).toBeLessThanOrEqual(100);
    for (const [x, y] of pairs) if (y !== null) expect(y).toBe(x);
    expect(seriesPairs(t, null)).toEqual([]);
  });
});

describe("slowest rank", () => {
  // Rank 0 steady at 10 ms, rank 1 at 9 ms with a few 30 ms spikes; the thinned points keep the
  // spikes, so their mean puts rank 1 above rank 0 although its mean over all steps is lower.
  const steady = { rank: 0, steps: 1000, mean_ms: 10, step: [0, 999], step_ms: [10, 10] };
  const spiky = { rank: 1, steps: 1000, mean_ms: 9.06, step: [0, 500, 999], step_ms: [9, 30, 9] };
  it("is the rank with the longest mean over all its steps, not over the drawn points", () => {
    expect(slowestRank([steady, spiky])).toBe(0);
  });
  it("falls back to the drawn points' mean for pages without mean_ms", () => {
    const old = [steady, spiky].map(({ mean_ms: _, ...r }) => r);
    expect(slowestRank(old)).toBe(1);
    expect(slowestRank([])).toBe(-1);
  });
});

describe("breakdown", () => {
  it("shows summary.json's shares per configuration and skips configurations without traces", () => {
    const shares = { computation: 0.5, overlapped_comm: 0.1, exposed_comm: 0.2, memory: 0.05, idle: 0.1, other: 0.05 };
    const rows = configurationBreakdown([cfg("ddp", 1, { breakdown_shares: shares, computation_score: 0.7 }), cfg("ddp", 2, { breakdown_shares: null })]);
    expect(rows).toEqual([{ key: "ddp/1", label: "ddp", shares: [0.5, 0.1, 0.2, 0.05, 0.1, 0.05], score: 0.7 }]);
  });
});

describe("table", () => {
  const cols: Column[] = [
    { key: "label", title: "label", value: (c) => c.label, text: (c) => c.label },
    { key: "s", title: "speedup (×)", value: (c) => c.speedup ?? null, text: () => "" },
  ];
  it("sorts numbers, with unknown figures last both ways", () => {
    const rows = summary.configurations;
    expect(sortRows(rows, cols[1], true).map((c) => c.speedup)).toEqual([1, 3.3, null]);
    expect(sortRows(rows, cols[1], false).map((c) => c.speedup)).toEqual([3.3, 1, null]);
  });
  it("writes CSV with quoting and defuses spreadsheet formulas", () => {
    const csv = toCsv([cfg('a,"b"', 1, { speedup: 2 }), cfg("=HYPERLINK(1)", 2)], cols);
    expect(csv).toBe('label,speedup (×)\n"a,""b""",2\n\'=HYPERLINK(1),\n');
  });
});

describe("envelope", () => {
  it("gives min, mean and max over GPUs per time bucket", async () => {
    const { envelope } = await import("../src/shape");
    const t = [0, 1, 2, 3];
    const e = envelope([{ t, v: [10, 20, 30, 40] }, { t, v: [30, null, 10, 0] }, { t, v: null }], 4);
    expect(e.t.length).toBe(4);
    expect(e.min).toEqual([10, 20, 10, 0]);
    expect(e.max).toEqual([30, 20, 30, 40]);
    expect(e.mean).toEqual([20, 20, 20, 20]);
    expect(envelope([]).t).toEqual([]);
  });
});

describe("curves across systems", () => {
  // summary.json of a study on two machines: same label, same GPU count, two curves.
  const two: Configuration[] = [
    cfg("deepcam", 16, { system: "dgxa100", curve: "deepcam @ dgxa100", epoch_time_s: stat(11) }),
    cfg("deepcam", 32, { system: "dgxa100", curve: "deepcam @ dgxa100", epoch_time_s: stat(5.5) }),
    cfg("deepcam", 16, { system: "juwelsbooster_gpu", curve: "deepcam @ juwelsbooster_gpu", epoch_time_s: stat(21) }),
  ];
  it("groups by curve, not by label, and falls back to the label without one", () => {
    const groups = byLabel(two);
    expect([...groups.keys()]).toEqual(["deepcam @ dgxa100", "deepcam @ juwelsbooster_gpu"]);
    expect(groups.get("deepcam @ dgxa100")!.map((c) => c.world_size)).toEqual([16, 32]);
    expect(curveOf(cfg("ddp", 4))).toBe("ddp");
  });
  it("lists the curves in summary.json's order, as the table and summary.csv do", () => {
    // Configurations sorted by label, system, world size: the unknown system ("") first. A sort of
    // the curve names put "deepcam @ unknown system" last on the page alone.
    const mixed: Configuration[] = [
      cfg("deepcam", 16, { system: "", curve: "deepcam @ unknown system" }),
      cfg("deepcam", 32, { system: "", curve: "deepcam @ unknown system" }),
      cfg("deepcam", 16, { system: "dgxa100", curve: "deepcam @ dgxa100" }),
    ];
    expect(labelsOf({ ...summary, configurations: mixed })).toEqual(["deepcam @ unknown system", "deepcam @ dgxa100"]);
    expect([...byLabel(mixed).keys()]).toEqual(["deepcam @ unknown system", "deepcam @ dgxa100"]);
  });
  it("keys energy points by curve", () => {
    const pts = timeEnergyPoints(two.map((c) => ({ ...c, energy_wh: 1, time_to_solution_s: 10 })));
    expect(pts.map((p) => p.key)).toEqual(["deepcam @ dgxa100/16", "deepcam @ dgxa100/32", "deepcam @ juwelsbooster_gpu/16"]);
  });
});

describe("studies made of traces alone", () => {
  // summary.json of `scalelens report traces/`: no epochs, no run times, step time from the profiler.
  const traces: Summary = {
    schema: "scalelens.summary/1",
    baseline: "per-label",
    scaling: "strong",
    configurations: [
      cfg("ddp", 1, { step_time_s: stat(0.4, 0.39, 0.41), time_from: "step", speedup: 1 }),
      cfg("ddp", 2, { step_time_s: stat(0.23, 0.22, 0.24), time_from: "step", speedup: 0.4 / 0.23 }),
    ],
    runs: [],
    warnings: [],
  };
  it("shows step time where nothing else gives the time", () => {
    expect(defaultTimeKind(traces)).toBe("step");
    expect(timeStat(traces.configurations[1], "step")?.mean).toBe(0.23);
    expect(ciBars(traces.configurations, "step")).toEqual([[1, 0.39, 0.41], [2, 0.22, 0.24]]);
  });
  it("keeps epoch time first where a study has it", () => {
    expect(defaultTimeKind(summary)).toBe("epoch");
    expect(defaultTimeKind({ ...summary, configurations: [cfg("a", 1, { run_time_s: stat(3), step_time_s: stat(0.1) })] })).toBe("run");
  });
  it("falls back to the fastest step time for the headline's best configuration", () => {
    expect(headline(traces, "step").best?.world_size).toBe(2);
  });
});

describe("comparison", () => {
  const metric = (name: string, verdict: "regressed" | "improved" | "unchanged" | "inconclusive") => ({
    metric: name, detail: "", unit: "s", better: "lower" as const, before: 1, after: 1, n_before: 3, n_after: 3,
    rel_change: 0, ci_low: 0, ci_high: 0, method: "welch-log", verdict, note: "",
  });
  const comparison = {
    schema: "scalelens.compare/1", before: "a", after: "b", threshold: 0.05, confidence: 0.95, world_size_unit: "GPUs",
    verdicts: { regressed: 1, improved: 0, unchanged: 2, inconclusive: 1 },
    configurations: [
      { label: "ddp", label_after: "ddp-new", system: "", system_after: "", world_size: 1, runs_before: 3, runs_after: 3, verdict: "inconclusive" as const,
        metrics: [metric("time", "unchanged"), metric("throughput", "inconclusive")] },
      { label: "ddp", label_after: "ddp-new", system: "", system_after: "", world_size: 4, runs_before: 3, runs_after: 3, verdict: "regressed" as const,
        metrics: [metric("time", "unchanged"), metric("efficiency", "regressed")] },
    ],
    unmatched: { before: [], after: [] },
    curves: [],
  };
  it("orders rows most severe first, keeping the order among equals", () => {
    const rows = compareRows(comparison);
    expect(rows.map((r) => `${r.configuration.world_size}/${r.metric.metric}`)).toEqual(["4/efficiency", "1/throughput", "1/time", "4/time"]);
  });
  it("names the before curves after their (renamed) after curves", () => {
    const before = { configurations: [{ label: "ddp", curve: "ddp", world_size: 1, runs: 3 }, { label: "other", world_size: 2, runs: 1 }] } as never;
    const cs = beforeConfigs(before, comparison);
    expect(cs.map((c) => c.curve)).toEqual([`ddp-new${BEFORE_SUFFIX}`, `other${BEFORE_SUFFIX}`]);
    expect(beforeCurve(cs[0].curve!)).toBe("ddp-new");
    expect(beforeCurve("ddp")).toBeNull();
  });
  it("sets each before configuration just ahead of its after one", () => {
    const c = (curve: string, world_size: number) => ({ label: curve, curve, world_size, runs: 1 });
    const after = [c("ddp", 1), c("ddp", 4)];
    const before = [c(`ddp${BEFORE_SUFFIX}`, 4), c(`ddp${BEFORE_SUFFIX}`, 1), c(`ddp${BEFORE_SUFFIX}`, 8)];
    expect(withBefore(after, before).map((x) => `${x.curve}/${x.world_size}`)).toEqual([
      `ddp${BEFORE_SUFFIX}/1`, "ddp/1", `ddp${BEFORE_SUFFIX}/4`, "ddp/4", `ddp${BEFORE_SUFFIX}/8`,
    ]);
  });
});
