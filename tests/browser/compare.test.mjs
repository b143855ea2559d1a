// compare.html (`scalelens compare -o`) opened from disk in headless Chromium with the network cut
// off: the scaling charts draw both studies (the before curve dashed beside the after one), and the
// verdict table carries each configuration's verdicts, the regression first. Screenshot to
// $SCALELENS_ARTIFACTS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ARTIFACTS, BIN, chartSeries, launch, openPage, tmpdir, waitReady, writeRun } from "./common.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Three repeats at 1, 2 and 4 GPUs; `slower` stretches the 4-GPU epochs.
function study(root, slower) {
  for (const p of [1, 2, 4])
    for (const rep of [0, 1, 2]) {
      const noise = [1, 1.01, 0.99][rep];
      const epoch = (40 / p) * (1 + 0.1 * Math.log2(p)) * noise * (p === 4 ? slower : 1);
      writeRun(root, `ddp-${p}-${rep}`, { label: "ddp", p, epoch_s: epoch, gpus: p });
    }
  return root;
}

test("compare.html: both studies on the scaling charts, verdicts in the table, offline", async () => {
  const root = tmpdir("scalelens-compare-");
  const a = study(path.join(root, "before"), 1);
  const b = study(path.join(root, "after"), 1.2);
  const out = path.join(root, "out");
  const run = spawnSync(BIN, ["compare", a, b, "-o", out, "-q"], { encoding: "utf8" });
  assert.equal(run.status, 4, run.stdout + run.stderr);  // 20% slower at 4 GPUs: regressed

  const { page, log } = await openPage(browser.context);
  await page.goto("file://" + path.join(out, "compare.html"));
  await waitReady(page);
  await page.waitForTimeout(300);

  const s = await chartSeries(page);
  for (const id of ["time", "speedup", "efficiency", "throughput"]) {
    const lines = s[id].filter((x) => x.type === "line" && x.id.startsWith("line:")).map((x) => x.name).sort();
    assert.deepEqual(lines, ["ddp", "ddp (before)"], id);
  }
  const time = await page.evaluate(() => window.__scalelens.charts.time.getOption().series
    .filter((x) => x.id.startsWith("line:")).map((x) => ({ name: x.name, data: x.data, dashed: x.lineStyle?.type === "dashed" })));
  const at4 = (name) => time.find((x) => x.name === name).data.find((d) => d[0] === 4)[1];
  assert.ok(time.find((x) => x.name === "ddp (before)").dashed, "the before curve is dashed");
  assert.ok(at4("ddp") > at4("ddp (before)") * 1.15, `after ${at4("ddp")} vs before ${at4("ddp (before)")}`);

  // Per-configuration charts: each before bar just ahead of its after bar.
  const util = await page.evaluate(() => window.__scalelens.charts.utilization.getOption().xAxis[0].data);
  assert.deepEqual(util, ["ddp (before)/1", "ddp/1", "ddp (before)/2", "ddp/2", "ddp (before)/4", "ddp/4"]);

  const rows = await page.$$eval("#compare-table tbody tr", (trs) => trs.map((tr) => ({
    verdict: tr.getAttribute("data-verdict"),
    cells: [...tr.querySelectorAll("td")].map((td) => td.textContent),
  })));
  assert.ok(rows.length >= 6, JSON.stringify(rows));
  assert.equal(rows[0].verdict, "regressed", JSON.stringify(rows[0]));
  assert.match(rows[0].cells[0], /^ddp 4 GPUs$/);
  assert.match(rows[0].cells[4], /^\+\d+\.\d%$/);
  assert.ok(rows.some((r) => r.cells[0] === "ddp 1 GPU" && r.verdict !== "regressed"), JSON.stringify(rows));
  const counts = await page.textContent("#compare-counts");
  assert.match(counts, /[1-9]\d* regressed/);
  assert.equal(await page.textContent("#mode"), "comparison");

  await page.screenshot({ path: path.join(ARTIFACTS, "compare.png"), fullPage: true });
  assert.deepEqual(log.errors, [], log.errors.join("\n"));
  assert.deepEqual(log.blocked, [], "no network requests from a file:// page");
});
