// `scalelens serve` in Chromium: the page shows the study and a run added to the folder appears
// without a reload, within 5 s, with the default polling.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, chartSeries, launch, openPage, startServe, tmpdir, waitReady, writeRun } from "./common.mjs";

let browser;
let server;
before(async () => { browser = await launch(); });
after(async () => {
  server?.child.kill("SIGINT");
  await browser?.close();
});

test("serve: page, drill-down over the API, new run shows within 5 s", async () => {
  const study = tmpdir("scalelens-serve-");
  writeRun(study, "ddp-1", { label: "ddp", p: 1, epoch_s: 40 });
  writeRun(study, "ddp-2", { label: "ddp", p: 2, epoch_s: 21, gpus: 2 });
  server = await startServe(study);
  const { page, log } = await openPage(browser.context, { allowLocal: true });
  await page.goto(server.url);
  await waitReady(page);
  assert.equal(await page.locator("#summary-table tbody tr").count(), 2);
  assert.match(await page.locator("#mode").textContent(), /live/);
  // The drill-down fetched its series from /api/series.
  await page.waitForFunction(() => window.__scalelens.charts.gpu_util.getOption().series.length === 2);
  assert.ok(log.requests.some((u) => u.includes("/api/series?run=ddp-2")));

  const renders = await page.evaluate(() => window.__scalelens.renders);
  const t0 = Date.now();
  writeRun(study, "fsdp-4", { label: "fsdp", p: 4, epoch_s: 12, gpus: 4 });
  await page.waitForFunction(() => document.querySelectorAll("#summary-table tbody tr").length === 3, null, { timeout: 5000 });
  const seconds = (Date.now() - t0) / 1000;
  assert.ok(seconds < 5, `new run shown after ${seconds} s`);
  assert.ok((await page.evaluate(() => window.__scalelens.renders)) > renders, "re-rendered without reload");
  const s = await chartSeries(page);
  assert.equal(s.time.filter((x) => x.id.startsWith("line:")).length, 2);
  await page.screenshot({ path: path.join(ARTIFACTS, "serve-after-new-run.png"), fullPage: true });
  console.log(`# new run shown after ${seconds.toFixed(2)} s`);
  assert.deepEqual(log.errors, []);
  assert.deepEqual(log.blocked, []);

  const exited = new Promise((r) => server.child.on("exit", (code) => r(code)));
  server.child.kill("SIGINT");
  assert.equal(await exited, 0, "clean shutdown on Ctrl-C");
  server = null;
  fs.rmSync(study, { recursive: true, force: true });
});
