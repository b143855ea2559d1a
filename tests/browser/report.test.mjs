// report.html opened from disk in headless Chromium with the network cut off: every view renders
// with the right series and points, labels toggle together, the drill-down follows the chosen run,
// and a label that is HTML renders as text; with real PyTorch profiler traces (SCALELENS_REALDATA),
// the trace breakdown draws one stacked bar per configuration that agrees with summary.json and
// with `scalelens trace`. Screenshots go to $SCALELENS_ARTIFACTS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, BIN, SOURCE_DIR, chartSeries, duplicateIds, launch, openPage, report, tmpdir, waitReady, writeKinetoTrace, writeRun } from "./common.mjs";

const XSS = "<img src=x onerror=alert(1)>";
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function xssStudy() {
  const root = tmpdir("scalelens-xss-");
  for (const [label, base] of [["ddp", 40], [XSS, 50]])
    for (const p of [1, 2, 4])
      for (const rep of [0, 1])
        writeRun(root, `${label === "ddp" ? "ddp" : "xss"}-${p}-${rep}`, { label, p, epoch_s: (base / p) * (1 + 0.1 * Math.log2(p)) * (1 + 0.01 * rep), gpus: p });
  return root;
}

async function shoot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

test("report.html: every view, label toggle, drill-down, XSS label as text, offline", async () => {
  const study = xssStudy();
  const html = report([study], path.join(study, "out"));
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  await page.waitForTimeout(400);

  const s = await chartSeries(page);
  const lines = (id) => s[id].filter((x) => x.type === "line" && x.id.startsWith("line:"));
  // 2 labels × 3 GPU counts.
  for (const id of ["time", "speedup", "efficiency", "throughput", "throughput_per_gpu"]) {
    assert.equal(lines(id).length, 2, id);
    for (const l of lines(id)) assert.equal(l.points, 3, `${id} ${l.name}`);
  }
  assert.equal(s.time.filter((x) => x.type === "custom" && x.id.startsWith("ci:")).length, 2, "CI error bars per label");
  assert.deepEqual(s.speedup.filter((x) => x.id.startsWith("ideal:")).map((x) => x.points), [3], "one ideal line");
  assert.equal(s.utilization.find((x) => x.type === "bar").points, 6);
  assert.deepEqual(s.energy.map((x) => x.points), [6, 6]);
  assert.equal(s.pareto.filter((x) => x.type === "scatter").reduce((a, x) => a + x.points, 0), 6);
  // Each curve's front as summary.json states it (the page does not choose its own).
  {
    const curves = JSON.parse(fs.readFileSync(path.join(study, "out", "summary.json"), "utf8")).curves;
    const fronts = curves.filter((c) => c.pareto.length);
    assert.ok(fronts.length >= 1, "a front to draw");
    for (const c of fronts)
      assert.equal(s.pareto.find((x) => x.id === `pareto:${c.curve}`)?.points, c.pareto.length, `front of ${c.curve}`);
    assert.equal(s.pareto.filter((x) => x.id.startsWith("pareto:")).length, fronts.length);
  }
  assert.equal(s.breakdown.length, 0, "no traces, no breakdown bars");
  // Drill-down defaults to a largest run: 4 GPUs with 120 samples each.
  assert.equal(s.gpu_util.length, 4);
  assert.ok(s.gpu_util.every((x) => x.points === 120));
  assert.equal(s.gpu_power.length, 4);
  assert.equal(await page.locator("#summary-table tbody tr").count(), 6);
  // Utilization over time: a column whose cells are summary.json's percentiles.
  const summary = JSON.parse(fs.readFileSync(path.join(study, "out", "summary.json"), "utf8"));
  const pcts = summary.configurations.map((c) => c.gpu_util_percentiles_pct);
  assert.ok(pcts.every((p) => p && p.p10 <= p.p50 && p.p50 <= p.p90), JSON.stringify(pcts));
  const tableText = await page.locator("#summary-table").textContent();
  assert.ok(tableText.includes("p10 / p50 / p90"), "percentiles column");
  for (const p of pcts) assert.ok(tableText.includes(`${p.p10} / ${p.p50} / ${p.p90}`), JSON.stringify(p));

  // The HTML label is text everywhere: in the toggles, the table, the run list, the tooltips.
  assert.equal(await page.locator("#app img").count(), 0);
  assert.ok((await page.locator("#label-toggles").textContent()).includes(XSS));
  assert.ok((await page.locator("#summary-table").textContent()).includes(XSS));
  const tip = await page.evaluate(() => {
    const c = window.__scalelens.charts.time;
    const idx = c.getOption().series.findIndex((x) => x.id === "line:<img src=x onerror=alert(1)>");
    c.dispatchAction({ type: "showTip", seriesIndex: idx, dataIndex: 0 });
    return new Promise((r) => setTimeout(() => r(c.getDom().innerHTML), 300));
  });
  assert.ok(tip.includes("&lt;img src=x onerror=alert(1)&gt;"), "tooltip escapes the label");
  assert.ok(!/<img[^>]*onerror/i.test(tip));
  await shoot(page, "report-xss-study");

  // Label toggle: hiding a label removes it from every chart and the table.
  await page.locator(`#label-toggles input[data-label="${XSS}"]`).uncheck();
  const s2 = await chartSeries(page);
  for (const id of ["time", "speedup", "efficiency", "throughput"]) assert.equal(s2[id].filter((x) => x.id.startsWith("line:")).length, 1, id);
  assert.equal(s2.utilization.find((x) => x.type === "bar").points, 3);
  assert.equal(await page.locator("#summary-table tbody tr").count(), 3);
  await page.locator("#labels-all").click();
  assert.equal((await chartSeries(page)).time.filter((x) => x.id.startsWith("line:")).length, 2);

  // Drill-down: choose a 1-GPU run.
  await page.selectOption("#run-select", "ddp-1-0");
  await page.waitForFunction(() => window.__scalelens.charts.gpu_util.getOption().series.length === 1);
  assert.equal((await chartSeries(page)).gpu_power.length, 1);
  await page.locator("#sec-drill").screenshot({ path: path.join(ARTIFACTS, "report-drilldown.png") });

  // Value labels toggle and table sort.
  await page.locator("#show-values").check();
  assert.equal(await page.evaluate(() => window.__scalelens.charts.speedup.getOption().series[0].label.show), true);
  await page.locator('#summary-table button[data-sort="gpus"]').click();
  await page.locator('#summary-table button[data-sort="gpus"]').click();
  assert.equal((await page.locator("#summary-table tbody tr td:nth-child(2)").first().textContent()).trim(), "4");

  // Save as SVG and CSV downloads work offline.
  const [svg] = await Promise.all([page.waitForEvent("download"), page.evaluate(() => {
    const c = window.__scalelens.charts.speedup;
    c.getOption().toolbox[0].feature.mySvg.onclick();
  })]);
  const svgText = fs.readFileSync(await svg.path(), "utf8");
  assert.ok(svgText.includes("<svg") && svgText.includes("ideal"), "SVG export");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.locator("#csv").click()]);
  assert.ok(fs.readFileSync(await csv.path(), "utf8").startsWith("label,GPUs,"));

  // At laptop width nothing overflows horizontally.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(200);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), "fits 1280 px");

  assert.deepEqual(await duplicateIds(page), [], "element ids are unique");
  assert.deepEqual(log.dialogs, [], "no script from data ran");
  assert.deepEqual(log.errors, []);
  assert.deepEqual(log.blocked, [], "no network request");
  fs.rmSync(study, { recursive: true, force: true });
});

test("report.html of a CPU-only MPI study counts ranks, not GPUs, and re-renders", async () => {
  const study = tmpdir("scalelens-cpu-");
  writeRun(study, "mpi-1", { label: "mpi", p: 1, epoch_s: 40, cpuOnly: true });
  writeRun(study, "mpi-4", { label: "mpi", p: 4, epoch_s: 12, cpuOnly: true });
  writeRun(study, "hybrid-2", { label: "hybrid", p: 2, epoch_s: 22, cpuOnly: true });
  const out = tmpdir("scalelens-cpu-out-");
  const html = report([study], out);
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const texts = async () => page.evaluate(() => ({
    axis: window.__scalelens.charts.time.getOption().xAxis[0].name,
    title: document.querySelector("#card-time h3").textContent,
    perUnit: document.querySelector("#card-throughput_per_gpu h3").textContent,
    cards: document.getElementById("cards").textContent,
    header: document.querySelector('#summary-table button[data-sort="gpus"]').textContent,
  }));
  const expectRanks = (t) => {
    assert.equal(t.axis, "ranks (world size)");
    assert.equal(t.title, "Time vs ranks");
    assert.equal(t.perUnit, "Throughput per rank");
    assert.ok(t.cards.includes("4 ranks") && !t.cards.includes("GPUs"), t.cards);
    assert.ok(t.header.startsWith("ranks"), t.header);
  };
  expectRanks(await texts());
  // A second render (label toggle) keeps the words and the page whole.
  await page.locator('#label-toggles input[data-label="hybrid"]').uncheck();
  assert.equal(await page.locator("#summary-table tbody tr").count(), 2);
  expectRanks(await texts());
  assert.deepEqual(await duplicateIds(page), []);
  assert.deepEqual(log.errors, []);
  await page.close();
  fs.rmSync(study, { recursive: true, force: true });
  fs.rmSync(out, { recursive: true, force: true });
});

test("report.html of the bundled toy study and of the MLPerf logs", async () => {
  const inputs = [["toy", path.join(SOURCE_DIR, "examples/toy-study")]];
  if (process.env.SCALELENS_REALDATA) inputs.push(["mlperf", path.join(process.env.SCALELENS_REALDATA, "mlperf-hpc-v1.0-deepcam")]);
  for (const [name, input] of inputs) {
    const out = tmpdir(`scalelens-${name}-`);
    const html = report([input], out);
    const { page, log } = await openPage(browser.context);
    await page.goto("file://" + html);
    await waitReady(page);
    await page.waitForTimeout(400);
    const s = await chartSeries(page);
    const data = await page.evaluate(() => JSON.parse(document.getElementById("scalelens-data").textContent).summary);
    const labels = new Set(data.configurations.map((c) => c.label));
    const withTime = data.configurations.filter((c) => c.epoch_time_s || c.run_time_s).length;
    assert.equal(s.time.filter((x) => x.id.startsWith("line:")).length, labels.size, name);
    assert.equal(s.time.filter((x) => x.id.startsWith("line:")).reduce((a, x) => a + x.points, 0), withTime, name);
    assert.equal(s.speedup.filter((x) => x.id.startsWith("line:")).reduce((a, x) => a + x.points, 0),
      data.configurations.filter((c) => c.speedup > 0).length, name);
    assert.equal(await page.locator("#summary-table tbody tr").count(), data.configurations.length);
    assert.ok((await page.locator("#cards").textContent()).includes("GPUs"));
    await shoot(page, `report-${name}`);
    assert.deepEqual(log.errors, [], name);
    assert.deepEqual(log.blocked, [], name);
    await page.close();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

// A run folder holding only a manifest and, under traces/, copies of real Kineto traces (copies, so
// that the trace cache scalelens writes beside them stays in the temporary study).
function traceRun(root, name, { label, p }, files) {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, "traces"), { recursive: true });
  fs.writeFileSync(path.join(dir, "scalelens.json"), JSON.stringify({ schema: "scalelens.run/1", run_id: name, label, world_size: p }));
  for (const f of files) fs.copyFileSync(f, path.join(dir, "traces", path.basename(f)));
  return dir;
}

const near = (actual, expected, tol, what) =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} vs ${expected} (±${tol})`);
// The page's fmt() (web/src/util.ts) for the values used here: 3 significant digits.
const fmt3 = (v) => Number(v.toPrecision(3)).toString();

// The shared real data set, or null after marking the test skipped (CI always sets it).
function realDataOrSkip(t) {
  const real = process.env.SCALELENS_REALDATA;
  if (!real) t.skip("SCALELENS_REALDATA is not set (CI sets it)");
  return real || null;
}

test("report.html: trace breakdown bars from real Kineto traces agree with summary.json", async (t) => {
  const real = realDataOrSkip(t);
  if (!real) return;
  const kineto = path.join(real, "kineto");
  const inDir = (dir, re) => fs.readdirSync(dir).filter((f) => re.test(f)).sort().map((f) => path.join(dir, f));
  const dlrmFiles = inDir(path.join(kineto, "dlrm-8rank-v100"), /\.pt\.trace\.json$/);
  assert.equal(dlrmFiles.length, 8, "the 8 DLRM rank traces");
  const study = tmpdir("scalelens-traces-");
  t.after(() => fs.rmSync(study, { recursive: true, force: true }));
  // dlrm/8: one run, all 8 ranks of one job. hta/2: two runs (a 2-rank ResNet DDP job's rank 0, and
  // 2 sampled ranks of a 128-rank job), only so that the chart's mean over runs is exercised.
  const dlrmDir = traceRun(study, "dlrm-8", { label: "dlrm", p: 8 }, dlrmFiles);
  traceRun(study, "hta-2-resnet", { label: "hta", p: 2 }, [path.join(kineto, "hta/resnet-ddp-rank0of2-a100.json.gz")]);
  traceRun(study, "hta-2-sampled", { label: "hta", p: 2 }, inDir(path.join(kineto, "hta/sampled-2of128"), /\.json\.gz$/));

  const out = path.join(study, "out");
  const html = report([study], out);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const withTraces = summary.configurations.filter((c) => c.computation_score !== null && c.computation_score !== undefined);
  const keys = withTraces.map((c) => `${c.label}/${c.world_size}`);
  assert.deepEqual([...keys].sort(), ["dlrm/8", "hta/2"], "summary.json: both configurations have a trace breakdown");
  assert.deepEqual(withTraces.find((c) => c.label === "hta").run_ids.length, 2);

  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  await page.waitForTimeout(400); // bar animation (300 ms)

  const chart = await page.evaluate(() => {
    const c = window.__scalelens.charts.breakdown;
    const opt = c.getOption();
    const model = c.getModel();
    const y0 = c.convertToPixel({ yAxisIndex: 0 }, 0);
    const y100 = c.convertToPixel({ yAxisIndex: 0 }, 100);
    return {
      categories: opt.xAxis[0].data,
      graphic: (opt.graphic ?? []).flatMap((g) => (g.elements ?? [g]).map((e) => e.style?.text ?? "")).filter(Boolean),
      axisPx: y0 - y100,
      series: opt.series.map((s, i) => ({
        type: s.type,
        id: s.id,
        name: s.name,
        stack: s.stack,
        values: s.data.map((d) => (typeof d === "object" && d !== null ? d.value : d)),
        heights: s.data.map((_, j) => Math.abs(model.getSeriesByIndex(i).getData().getItemLayout(j)?.height ?? 0)),
      })),
    };
  });

  // One bar per configuration with traces, in summary.json's order, and no "no data" note.
  assert.deepEqual(chart.categories, keys);
  assert.deepEqual(chart.graphic, [], "no 'no trace breakdown' note");
  const part = (name) => {
    const s = chart.series.find((x) => x.name === name);
    assert.ok(s, `series ${name}`);
    return s;
  };
  const names = ["computation", "overlapped communication", "exposed communication", "idle"];
  for (const n of names) assert.equal(part(n).values.length, keys.length, n);
  for (const s of chart.series) {
    assert.equal(s.type, "bar", s.name);
    assert.equal(s.stack, chart.series[0].stack, `${s.name} stacked with the others`);
    assert.equal(s.values.length, keys.length, s.name);
    assert.ok(s.values.every((v) => Number.isFinite(v) && v >= 0 && v <= 100), `${s.name}: ${s.values}`);
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const c = withTraces[i];
    // The stacked shares fill the step (each rounded to 0.01%).
    near(chart.series.reduce((a, s) => a + s.values[i], 0), 100, 0.05, `${key} stack total`);
    // summary.json's shares: the mean over the configuration's runs, as the chart's.
    near(part("exposed communication").values[i], 100 * c.exposed_comm_share, 0.011, `${key} exposed communication %`);
    near(part("idle").values[i], 100 * c.idle_share, 0.011, `${key} idle %`);
    // Every part is summary.json's breakdown_shares (the page computes none of them).
    for (const [n, k] of [["computation", "computation"], ["overlapped communication", "overlapped_comm"], ["exposed communication", "exposed_comm"],
                          ["memory", "memory"], ["idle", "idle"], ["other (CPU, launch)", "other"]])
      near(part(n).values[i], 100 * c.breakdown_shares[k], 0.006, `${key} ${n} % as summary.json's`);
    for (const n of names.slice(0, 3)) assert.ok(part(n).values[i] > 0, `${key} ${n} > 0 (real traces)`);
    // Drawn: every non-zero part has a bar of proportional height, and the stack spans the axis.
    for (const s of chart.series) {
      near(s.heights[i], (s.values[i] / 100) * chart.axisPx, 1.5, `${key} ${s.name} bar height (px)`);
      if (s.values[i] >= 1) assert.ok(s.heights[i] >= 1, `${key} ${s.name} drawn`);
    }
    near(chart.series.reduce((a, s) => a + s.heights[i], 0), chart.axisPx, 2, `${key} stack height (px)`);
  }
  // With one run, the computation score and the overlap ratio follow from the bars:
  // comp = computation + overlapped, comm = overlapped + exposed.
  const d = keys.indexOf("dlrm/8");
  const dlrm = withTraces[d];
  const [comp, ovl, exp] = ["computation", "overlapped communication", "exposed communication"].map((n) => part(n).values[d]);
  near((comp + ovl) / (comp + ovl + exp), dlrm.computation_score, 0.002, "dlrm/8 computation score");
  near(ovl / (ovl + exp), dlrm.overlap_ratio, 0.002, "dlrm/8 overlap ratio");

  // The same files through `scalelens trace` (no cache): per-rank sums give the dlrm/8 bar.
  const traced = JSON.parse(execFileSync(BIN, ["trace", path.join(dlrmDir, "traces"), "--format", "json", "--no-cache"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 << 20 }));
  assert.equal(traced.ranks.length, 8, "scalelens trace: 8 ranks");
  const sum = (k) => traced.ranks.reduce((a, r) => a + r[k], 0);
  const step = sum("step_time_us");
  near(comp, (100 * (sum("comp_us") - sum("overlap_us"))) / step, 0.011, "dlrm/8 computation % vs scalelens trace");
  near(ovl, (100 * sum("overlap_us")) / step, 0.011, "dlrm/8 overlapped % vs scalelens trace");
  near(exp, (100 * sum("exposed_comm_us")) / step, 0.011, "dlrm/8 exposed % vs scalelens trace");
  near(part("idle").values[d], (100 * sum("idle_us")) / step, 0.011, "dlrm/8 idle % vs scalelens trace");

  await page.locator('[data-chart="breakdown"]').scrollIntoViewIfNeeded();
  await page.locator('[data-chart="breakdown"]').screenshot({ path: path.join(ARTIFACTS, "report-trace-breakdown.png") });
  await shoot(page, "report-traces");

  // The tooltip names each configuration with its computation score from summary.json.
  for (let i = 0; i < keys.length; i++) {
    const tip = await page.evaluate((i) => {
      const c = window.__scalelens.charts.breakdown;
      c.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: i });
      return new Promise((r) => setTimeout(() => r(c.getDom().textContent), 300));
    }, i);
    assert.ok(tip.includes(keys[i]), `tooltip names ${keys[i]}: ${tip}`);
    assert.ok(tip.includes(`computation score ${fmt3(withTraces[i].computation_score)}`), `tooltip score of ${keys[i]}: ${tip}`);
  }

  // Per-rank step times of the DLRM run, from the same traces, in the drill-down.
  await page.selectOption("#run-select", "dlrm-8");
  await page.waitForFunction(() => window.__scalelens.charts.steps.getOption().series.length === 8);
  const steps = await page.evaluate(() => window.__scalelens.charts.steps.getOption().series.map((s) => ({ name: s.name, data: s.data })));
  for (const r of traced.ranks) {
    const s = steps.find((x) => x.name === `rank ${r.rank}` || x.name === `rank ${r.rank} (slowest)`);
    assert.ok(s, `steps: rank ${r.rank}`);
    assert.equal(s.data.length, r.steps, `rank ${r.rank} steps`);
    near(s.data.reduce((a, p) => a + p[1], 0), r.step_time_us / 1000, 0.01, `rank ${r.rank} step time (ms)`);
  }
  assert.equal(steps.filter((s) => s.name.endsWith("(slowest)")).length, 1, "one slowest rank");

  // Hiding a label removes its bar.
  await page.locator('#label-toggles input[data-label="hta"]').uncheck();
  assert.deepEqual(await page.evaluate(() => window.__scalelens.charts.breakdown.getOption().xAxis[0].data), ["dlrm/8"]);

  assert.deepEqual(log.errors, []);
  assert.deepEqual(log.blocked, [], "no network request");
  await page.close();
});

test("report.html: a rank with two traces (two profiling windows) renders without an error", async (t) => {
  const real = realDataOrSkip(t);
  if (!real) return;
  const dlrm = path.join(real, "kineto/dlrm-8rank-v100");
  const rank0 = path.join(dlrm, fs.readdirSync(dlrm).find((f) => f.startsWith("worker0_")));
  const study = tmpdir("scalelens-rank-twice-");
  t.after(() => fs.rmSync(study, { recursive: true, force: true }));
  const dir = traceRun(study, "dlrm-1", { label: "dlrm", p: 1 }, []);
  // Window b is the same trace with other step numbers (a second schedule window, not a copy).
  const text = fs.readFileSync(rank0, "utf8");
  fs.writeFileSync(path.join(dir, "traces", "window-a.pt.trace.json"), text);
  fs.writeFileSync(path.join(dir, "traces", "window-b.pt.trace.json"),
    text.replace(/ProfilerStep#(\d+)/g, (_, n) => `ProfilerStep#${Number(n) + 1000}`));
  const out = path.join(study, "out");
  const html = report([study], out);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const steps = await page.evaluate(() => window.__scalelens.charts.steps.getOption().series.map((s) => ({ id: s.id, name: s.name, points: s.data.length })));
  assert.equal(steps.length, 2, "one step-time series per trace");
  assert.equal(new Set(steps.map((s) => s.id)).size, 2, "distinct series ids");
  assert.ok(steps.every((s) => s.name.startsWith("rank 0 #") && s.points >= 1), JSON.stringify(steps));
  const exposed = await page.evaluate(() => {
    const o = window.__scalelens.charts.breakdown.getOption();
    return o.series.find((s) => s.name === "exposed communication").data;
  });
  assert.equal(exposed.length, 1);
  near(exposed[0], 100 * summary.configurations[0].exposed_comm_share, 0.011, "exposed communication %");
  assert.deepEqual(log.errors, []);
  await page.close();
});

// One label on two machines (issue 13 §2): two curves that toggle apart, a system column in the
// table and one provenance line per configuration.
test("report.html: one label on two systems is two curves with a system column and provenance", async () => {
  const root = tmpdir("scalelens-systems-");
  for (const [system, base] of [["jureca", 40], ["juwels", 30]])
    for (const p of [1, 2, 4]) writeRun(root, `${system}-${p}`, { label: "ddp", system, p, epoch_s: base / p, gpus: p });
  const html = report([root], path.join(root, "out"));
  const { page } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);

  const s = await chartSeries(page);
  const lines = s.speedup.filter((x) => x.type === "line" && x.id.startsWith("line:"));
  assert.deepEqual(lines.map((l) => l.name).sort(), ["ddp @ jureca", "ddp @ juwels"]);
  for (const l of lines) assert.equal(l.points, 3, l.name);
  const headers = await page.locator("#summary-table thead th").allTextContents();
  assert.ok(headers.some((h) => h.startsWith("system")), headers.join("|"));
  assert.equal(await page.locator("#summary-table tbody tr").count(), 6);
  assert.equal(await page.locator("#provenance li").count(), 6);
  assert.match(await page.locator("#provenance li").first().textContent(), /^ddp @ jureca\/1: file .*jureca-1 \(scalelens reader\); system jureca/);

  // Hiding one machine's curve leaves the other's.
  await page.locator('#label-toggles input[data-label="ddp @ juwels"]').uncheck();
  const s2 = await chartSeries(page);
  assert.deepEqual(s2.speedup.filter((x) => x.id.startsWith("line:")).map((l) => l.name), ["ddp @ jureca"]);
  assert.equal(await page.locator("#summary-table tbody tr").count(), 3);
});

// The first field of each line of a CSV file: quoted fields (with "" for a quote) read as text.
function firstFields(csv) {
  const out = [];
  for (let at = 0; at < csv.length; ) {
    let field = "";
    if (csv[at] === '"') {
      for (at++; at < csv.length; at++) {
        if (csv[at] === '"' && csv[at + 1] === '"') field += '"', at++;
        else if (csv[at] === '"') break;
        else field += csv[at];
      }
      at++;
    } else {
      while (at < csv.length && csv[at] !== "," && csv[at] !== "\n") field += csv[at++];
    }
    out.push(field);
    at = csv.indexOf("\n", at) + 1 || csv.length;
  }
  return out;
}

// Labels a spreadsheet would run as formulas, one of them on two systems, one system unknown.
// summary.csv wrote "=1+1" as it was where the page's "Download CSV" wrote "'=1+1"; and the page
// sorted its curves by name ("=1+1 @ juwels" first) where the table, summary.csv and summary.json's
// configurations put the unknown system first (and summary.json's curves sorted by name as well).
test("report.html: the CSV download writes text as summary.csv does, and curves come in one order everywhere", async () => {
  const root = tmpdir("scalelens-csv-");
  for (const [label, system, name] of [["=1+1", "juwels", "a"], ["=1+1", undefined, "b"], ["@x,y", "juwels", "c"]])
    for (const p of [1, 2]) writeRun(root, `${name}-${p}`, { label, system, p, epoch_s: 40 / p, gpus: p });
  const html = report([root], path.join(root, "out"));
  const summary = JSON.parse(fs.readFileSync(path.join(root, "out", "summary.json"), "utf8"));
  const configOrder = [...new Set(summary.configurations.map((c) => c.curve))];
  assert.deepEqual(configOrder, ["=1+1 @ unknown system", "=1+1 @ juwels", "@x,y @ juwels"]);
  assert.deepEqual(summary.curves.map((c) => c.curve), configOrder, "summary.json's curves in configuration order");

  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const toggles = await page.locator("#label-toggles input[data-label]").evaluateAll((els) => els.map((e) => e.dataset.label));
  assert.deepEqual(toggles, configOrder, "the page's curves in summary.json's order");

  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#csv").click()]);
  const pageLabels = firstFields(fs.readFileSync(await download.path(), "utf8"));
  const fileLabels = firstFields(fs.readFileSync(path.join(root, "out", "summary.csv"), "utf8"));
  assert.deepEqual(pageLabels, fileLabels, "the label column of both CSV files, cell for cell");
  assert.deepEqual(fileLabels, ["label", "'=1+1", "'=1+1", "'=1+1", "'=1+1", "'@x,y", "'@x,y"]);
  assert.match(fs.readFileSync(path.join(root, "out", "summary.csv"), "utf8"), /\n"'@x,y",/, "quoted after the apostrophe");
  assert.deepEqual(log.errors, []);
  fs.rmSync(root, { recursive: true, force: true });
});

// itwinai's MLflow file store as its TorchTrainer writes it with log_on_workers=0 (issue 13 §3):
// GPU metrics of rank 0 only, and torch.profiler key averages. The page shows itwinai's own
// computation fraction under that name and marks the job's energy as extrapolated.
function itwinaiStore(root, world) {
  const exp = path.join(root, "mllogs", "mlflow", "1");
  const write = (rel, text) => { fs.mkdirSync(path.dirname(path.join(exp, rel)), { recursive: true }); fs.writeFileSync(path.join(exp, rel), text); };
  const t0 = 1_700_000_000_000;
  write("meta.yaml", `artifact_location: file:///scratch/mllogs/mlflow/1\ncreation_time: ${t0}\nexperiment_id: '1'\nlast_update_time: ${t0}\nlifecycle_stage: active\nname: scaling-test\n`);
  const run = (id, name, parent) => {
    write(`${id}/meta.yaml`, `artifact_uri: file:///scratch/mllogs/mlflow/1/${id}/artifacts\nend_time: ${t0 + 30_000}\nentry_point_name: ''\nexperiment_id: '1'\nlifecycle_stage: active\nrun_id: ${id}\nrun_name: ${name}\nrun_uuid: ${id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: ${t0}\nstatus: 3\ntags: []\nuser_id: someone\n`);
    write(`${id}/tags/mlflow.runName`, name);
    if (parent) write(`${id}/tags/mlflow.parentRunId`, parent);
  };
  run("t", "big-run");
  run("w0", "worker_0 (main)", "t");
  for (const [k, v] of [["strategy", "torch-ddp"], ["global_rank", "0"], ["global_world_size", String(world)], ["probing_interval", "1"]]) write(`w0/params/${k}`, v);
  write("w0/metrics/epoch_time_s", `${t0 + 10_000} 10 0\n${t0 + 20_000} 10 1\n`);
  write("w0/metrics/gpu_power_W", `${t0 + 5000} 300.5 5\n${t0 + 6001} 310.0 6\n`);
  write("w0/metrics/gpu_utilization_percent", `${t0 + 5002} 90 5\n${t0 + 6003} 95 6\n`);
  write("w0/artifacts/torch_profiling_averages/torch_profiling_averages.csv",
    "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n" +
    `ProfilerStep*,-1,100,5000,5.000ms,4,torch-ddp,${world},0\naten::addmm,-1,600,600,600.000us,40,torch-ddp,${world},0\n` +
    `nccl:all_reduce,-1,300,300,300.000us,8,torch-ddp,${world},0\n`);
}

test("report.html: itwinai's computation fraction and an extrapolated energy are shown as such", async () => {
  const root = tmpdir("scalelens-itwinai-");
  itwinaiStore(root, 16);
  const out = path.join(root, "out");
  const html = report([root], out);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const c = summary.configurations.find((x) => x.world_size === 16);
  assert.ok(c && c.energy_extrapolated && Number.isFinite(c.itwinai_computation_fraction), JSON.stringify(c));
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const table = await page.evaluate(() => {
    const t = document.getElementById("summary-table");
    const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent.replace(/ [▲▼]$/, ""));
    const cells = [...t.querySelectorAll("tbody tr")[0].querySelectorAll("td")].map((td) => td.textContent);
    return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
  });
  assert.equal(table["computation fraction (itwinai)"], fmt3(c.itwinai_computation_fraction), JSON.stringify(table));
  assert.equal(table["energy (Wh)"], `~${fmt3(c.energy_wh)}`, JSON.stringify(table));
  assert.equal(table["energy per measured GPU (Wh)"], fmt3(c.energy_wh_per_gpu), JSON.stringify(table));
  const card = await page.locator("#cards").textContent();
  assert.match(card, /extrapolated from the GPUs measured/);
  assert.deepEqual(log.errors, []);
  await page.close();
  fs.rmSync(root, { recursive: true, force: true });
});

test("report.html of profiler traces alone (no scalelens.json): step time is the time", async (t) => {
  const real = realDataOrSkip(t);
  if (!real) return;
  const out = tmpdir("scalelens-traces-alone-");
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  const html = report([path.join(real, "kineto/dlrm-8rank-v100"), path.join(real, "kineto/hta/sampled-2of128")], out, ["--no-cache"]);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  assert.deepEqual(summary.configurations.map((c) => `${c.label}/${c.world_size}/${c.time_from}`).sort(),
                   ["dlrm-v100/8/step", "sampled-2of128/128/step"]);
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  assert.equal(await page.locator("#time-kind").inputValue(), "step", "the time selector starts on step time");
  const s = await chartSeries(page);
  assert.equal(s.time.filter((x) => x.id.startsWith("line:")).length, 2, "one step-time line per label");
  const table = await page.evaluate(() => {
    const t = document.getElementById("summary-table");
    const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent.replace(/ [▲▼]$/, ""));
    return [...t.querySelectorAll("tbody tr")].map((tr) => Object.fromEntries(heads.map((h, i) => [h, tr.querySelectorAll("td")[i].textContent])));
  });
  for (const row of table) {
    const c = summary.configurations.find((x) => x.label === row.label);
    assert.ok(row["step time (s)"].startsWith(fmt3(c.step_time_s.mean)), JSON.stringify(row));
    // Of the collectives' time, the share waiting for the last rank: as summary.json says; none
    // where nothing was matched ("–").
    const waiting = c.comm_wait_share === null || c.comm_wait_share === undefined ? "–" : `${fmt3(c.comm_wait_share * 100)}%`;
    assert.equal(row["comm waiting (%)"], waiting, JSON.stringify(row));
  }
  // sampled-2of128's SendRecv kernels record no peer and do not overlap as an all-to-all's would
  // (ranks 0 and 1 of a pipeline): not paired, so no waiting share; DLRM's all-to-all is.
  assert.equal(summary.configurations.find((c) => c.label === "sampled-2of128").comm_wait_share ?? null, null);
  assert.ok(summary.configurations.find((c) => c.label === "dlrm-v100").comm_wait_share > 0.5);
  assert.deepEqual(log.errors, []);
  await shoot(page, "report-traces-alone");
  await page.close();
});

test("report.html: collective bus bandwidth by message size and ops against the roofline (real DLRM traces)", async (t) => {
  const real = realDataOrSkip(t);
  if (!real) return;
  // The 8 DLRM rank traces (record_shapes=True, V100), with NCCL's message size written into each
  // collective kernel's args as PyTorch ≥ 2.2 records it: the i-th call of every rank moves
  // 2^(14 + i mod 6) floats, so that matched calls fall in six size bins.
  const src = path.join(real, "kineto/dlrm-8rank-v100");
  const study = tmpdir("scalelens-bandwidth-");
  t.after(() => fs.rmSync(study, { recursive: true, force: true }));
  const traces = path.join(study, "dlrm-bw");
  fs.mkdirSync(traces);
  for (const f of fs.readdirSync(src).filter((f) => f.endsWith(".pt.trace.json"))) {
    const trace = JSON.parse(fs.readFileSync(path.join(src, f), "utf8"));
    const comm = trace.traceEvents.filter((e) => e.cat === "kernel" && /^ncclKernel|ncclDevKernel/.test(e.name)).sort((a, b) => a.ts - b.ts);
    comm.forEach((e, i) => Object.assign(e.args, { "In msg nelems": 2 ** (14 + (i % 6)), "Out msg nelems": 2 ** (14 + (i % 6)), dtype: "Float" }));
    fs.writeFileSync(path.join(traces, f), JSON.stringify(trace));
  }
  const out = path.join(study, "out");
  const html = report([traces], out, ["--no-cache"]);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const c = summary.configurations[0];
  assert.ok(c.collective_bandwidth.length >= 2, JSON.stringify(c.collective_bandwidth));
  for (const p of c.collective_bandwidth) assert.ok(p.busbw_gbps > 0 && p.bytes >= 4 * 2 ** 14 && p.calls >= 1, JSON.stringify(p));
  assert.ok(c.roofline_ops.length >= 1, "ops against the roofline in summary.json");
  for (const o of c.roofline_ops) assert.ok(o.lost_ms_per_step <= o.gpu_ms_per_step + 1e-9 && ["compute", "memory"].includes(o.bound), JSON.stringify(o));

  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const s = await chartSeries(page);
  // One line per collective, with a point per size bin, as summary.json has them.
  const byCollective = {};
  for (const p of c.collective_bandwidth) byCollective[p.collective] = (byCollective[p.collective] ?? 0) + 1;
  const lines = s.bandwidth.filter((x) => x.id.startsWith("bw:"));
  assert.equal(lines.length, Object.keys(byCollective).length);
  for (const l of lines) assert.equal(l.points, byCollective[l.name.split(" ").pop()], l.name);
  // The roofline bars: at the roofline and lost, one bar each per op shown (up to 3 per configuration).
  const bars = s.roofline.filter((x) => x.type === "bar");
  assert.deepEqual(bars.map((b) => b.id), ["roofline:ok", "roofline:lost"]);
  for (const b of bars) assert.equal(b.points, Math.min(3, c.roofline_ops.length));
  assert.deepEqual(log.errors, []);
  await page.locator('[data-chart="bandwidth"]').scrollIntoViewIfNeeded();
  await page.locator('[data-chart="bandwidth"]').screenshot({ path: path.join(ARTIFACTS, "report-bandwidth.png") });
  await page.locator('[data-chart="roofline"]').screenshot({ path: path.join(ARTIFACTS, "report-roofline.png") });
  await page.close();
});

test("report.html: the scaling model's band on the time chart, its self-check, and the note of a curve it refuses", async (t) => {
  // ddp follows Amdahl's law (5% serial) at 1..16 GPUs, 3 repeats within ±1%; fsdp has 2 GPU counts;
  // fast is faster than linear (100 s/p^1.2 at 1..8 GPUs), so its self-check misses.
  const study = tmpdir("scalelens-model-");
  t.after(() => fs.rmSync(study, { recursive: true, force: true }));
  const law = (p) => 100 * (0.05 + 0.95 / p);
  for (const p of [1, 2, 4, 8, 16])
    for (const rep of [0, 1, 2]) writeRun(study, `ddp-${p}-${rep}`, { label: "ddp", p, epoch_s: law(p) * (0.99 + 0.01 * rep), gpus: 1, samples: 20 });
  for (const p of [1, 2]) writeRun(study, `fsdp-${p}`, { label: "fsdp", p, epoch_s: 60 / p, gpus: 1, samples: 20 });
  for (const p of [1, 2, 4, 8]) writeRun(study, `fast-${p}`, { label: "fast", p, epoch_s: 100 / p ** 1.2, gpus: 1, samples: 20 });
  const out = path.join(study, "out");
  const html = report([study], out);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const ddp = summary.curves.find((c) => c.label === "ddp");
  assert.equal(ddp.model.law, "Amdahl");
  assert.ok(ddp.band.length >= 7, "band from 1 to 64 GPUs");
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const chart = await page.evaluate(() => {
    const c = window.__scalelens.charts.time;
    const opt = c.getOption();
    return {
      series: opt.series.map((s) => ({ id: s.id, type: s.type, data: s.data, dash: s.lineStyle?.type })),
      notes: (opt.graphic ?? []).flatMap((g) => (g.elements ?? [g]).map((e) => e.style?.text ?? "")).filter(Boolean),
    };
  });
  const band = chart.series.find((s) => s.id === "band:ddp");
  assert.ok(band, "the band is drawn");
  assert.equal(band.data.length, ddp.band.length);
  for (const [i, b] of ddp.band.entries()) assert.deepEqual(band.data[i], [b.world_size, b.lower, b.upper]);
  const solid = chart.series.find((s) => s.id === "model:ddp"), dashed = chart.series.find((s) => s.id === "prediction:ddp");
  assert.equal(solid.dash, "solid");
  assert.equal(dashed.dash, "dashed");
  assert.ok(solid.data.every(([p]) => p <= 16) && dashed.data.every(([p]) => p >= 16), "solid over the measured range, dashed beyond");
  assert.ok(chart.notes.some((n) => n.includes("fsdp: no model: 2 measured GPU counts")), JSON.stringify(chart.notes));
  // The self-check under the chart, visible, with summary.json's numbers (3 significant digits);
  // none for fsdp, which has no model.
  const g3 = (v) => String(Number(v.toPrecision(3)));
  const fast = summary.curves.find((c) => c.label === "fast");
  assert.equal(ddp.backtest.inside, true);
  assert.equal(fast.backtest.inside, false);
  for (const [c, verdict] of [[ddp, "inside the 90% interval"], [fast, "outside the 90% interval: its predictions are doubtful, and no recommendation rests on them"]]) {
    const item = page.locator(`#model-checks li[data-curve="${c.curve}"]`);
    assert.ok(await item.isVisible(), `self-check of ${c.curve} visible`);
    const b = c.backtest;
    assert.equal(await item.textContent(), `${c.curve}: self-check: fitted without ${b.world_size} GPUs, the model predicts ${g3(b.predicted)} s ` +
      `[${g3(b.lower)}, ${g3(b.upper)}] per epoch there; measured ${g3(b.measured)} s: ${verdict}`);
  }
  assert.equal(await page.locator("#model-checks li").count(), 2);
  // Speedup and efficiency of the model: the baseline's measured time over the band's times.
  const tBase = summary.configurations.find((c) => c.label === "ddp" && c.world_size === 1).epoch_time_s.mean;
  const through = await page.evaluate(() => Object.fromEntries(["speedup", "efficiency"].map((id) => [id,
    window.__scalelens.charts[id].getOption().series.filter((s) => s.id === "band:ddp").map((s) => s.data)[0]])));
  const close = (a, b) => Math.abs(a - b) <= 1e-6 * Math.abs(b);
  for (const [i, b] of ddp.band.entries()) {
    // summary.json: the baseline's time over the band's (the bounds swap) ...
    assert.ok(close(b.speedup_lower, tBase / b.upper) && close(b.speedup_upper, tBase / b.lower), `speedup at ${b.world_size}`);
    assert.ok(close(b.efficiency_lower, tBase / b.upper / b.world_size), `efficiency at ${b.world_size}`);
    // ... and the page draws exactly those.
    assert.deepEqual(through.speedup[i], [b.world_size, b.speedup_lower, b.speedup_upper]);
    assert.deepEqual(through.efficiency[i], [b.world_size, 100 * b.efficiency_lower, 100 * b.efficiency_upper]);
  }
  assert.equal(chart.series.find((s) => s.id === "band:fsdp"), undefined);
  assert.deepEqual(log.errors, []);
  await page.locator("#card-time").screenshot({ path: path.join(ARTIFACTS, "report-scaling-model.png") });  // the chart and its self-checks
  await page.close();
});

test("report.html: where the lost time went, stacked by cause per configuration beyond the baseline", async (t) => {
  // One job per GPU count (traces alone): the same 600 µs of computation split p ways, an
  // all-reduce of 300 µs whose start is later on higher ranks, steps of 1000, 640 and 450 µs.
  const study = tmpdir("scalelens-lost-");
  t.after(() => fs.rmSync(study, { recursive: true, force: true }));
  for (const [p, stepUs] of [[1, 1000], [2, 640], [4, 450]])
    for (let r = 0; r < p; r++)
      writeKinetoTrace(path.join(study, `ddp-${p}gpu`, `rank${r}.pt.trace.json`), {
        rank: r, worldSize: p, stepUs, computeUs: 600 / p, commUs: 300 - 10 * r, commAtUs: Math.round(stepUs * 0.3) + 10 * r, startUs: 1_730_000_000_000_000 + p * 10_000_000,
      });
  const out = path.join(study, "out");
  const html = report([study], out, ["--no-cache", "--warmup-steps", "0"]);
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const beyond = summary.configurations.filter((c) => c.world_size > 1);
  assert.equal(beyond.length, 2);
  for (const c of beyond) {
    const l = c.lost_time_s;
    const sum = l.exposed_comm + l.idle_imbalance + l.data_loading + l.extra_compute + l.unattributed;
    assert.ok(Math.abs(sum - l.total) < 1e-12, JSON.stringify(l));
  }
  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + html);
  await waitReady(page);
  const chart = await page.evaluate(() => {
    const opt = window.__scalelens.charts.lost.getOption();
    return { categories: opt.xAxis[0].data, series: opt.series.map((s) => ({ id: s.id, data: s.data })) };
  });
  assert.deepEqual(chart.categories, beyond.map((c) => `${c.label}/${c.world_size}`));
  assert.equal(chart.series.length, 5);
  for (const [i, c] of beyond.entries()) {
    const drawn = chart.series.reduce((a, s) => a + s.data[i], 0);
    assert.ok(Math.abs(drawn - c.lost_time_s.total * 1e3) < 1e-3, `${drawn} vs ${c.lost_time_s.total * 1e3}`);
  }
  assert.deepEqual(log.errors, []);
  await page.locator('[data-chart="lost"]').scrollIntoViewIfNeeded();
  await page.locator('[data-chart="lost"]').screenshot({ path: path.join(ARTIFACTS, "report-lost-time.png") });
  await page.close();
});
