// report.html opened from disk in headless Chromium with the network cut off: every view renders
// with the right series and points, labels toggle together, the drill-down follows the chosen run,
// and a label that is HTML renders as text. Screenshots go to $SCALELENS_ARTIFACTS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, SOURCE_DIR, chartSeries, launch, openPage, report, tmpdir, waitReady, writeRun } from "./common.mjs";

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
  assert.equal(s.time.filter((x) => x.type === "custom").length, 2, "CI error bars per label");
  assert.deepEqual(s.speedup.filter((x) => x.id.startsWith("ideal:")).map((x) => x.points), [3], "one ideal line");
  assert.equal(s.utilization.find((x) => x.type === "bar").points, 6);
  assert.deepEqual(s.energy.map((x) => x.points), [6, 6]);
  assert.equal(s.pareto.filter((x) => x.type === "scatter").reduce((a, x) => a + x.points, 0), 6);
  assert.ok(s.pareto.find((x) => x.id === "pareto").points >= 1, "Pareto front drawn");
  assert.equal(s.breakdown.length, 0, "no traces, no breakdown bars");
  // Drill-down defaults to a largest run: 4 GPUs with 120 samples each.
  assert.equal(s.gpu_util.length, 4);
  assert.ok(s.gpu_util.every((x) => x.points === 120));
  assert.equal(s.gpu_power.length, 4);
  assert.equal(await page.locator("#summary-table tbody tr").count(), 6);

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

  assert.deepEqual(log.dialogs, [], "no script from data ran");
  assert.deepEqual(log.errors, []);
  assert.deepEqual(log.blocked, [], "no network request");
  fs.rmSync(study, { recursive: true, force: true });
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
