// node tests/browser/bench_open.mjs REPORT.html [REPEATS]: in headless Chromium, opened from disk,
// offline: time from navigation to the charts in view drawn, and to every view drawn.
import { launch, openPage, waitReady } from "./common.mjs";

const [html, repeats = "3"] = process.argv.slice(2);
const browser = await launch();
const times = [];
const visible = [];
for (let i = 0; i < Number(repeats); i++) {
  const { page, log } = await openPage(browser.context);
  const t0 = Date.now();
  await page.goto("file://" + html, { waitUntil: "load", timeout: 60000 });
  await waitReady(page, 60000);
  // Let the charts paint before stopping the clock.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  times.push(Date.now() - t0);
  visible.push(Math.round(await page.evaluate(() => window.__scalelens.timings.visible)));
  const nav = await page.evaluate(() => performance.now());
  if (i === 0) console.error(JSON.stringify(await page.evaluate(() => window.__scalelens.timings)));
  if (log.errors.length) console.error(log.errors);
  console.error(`run ${i + 1}: ${times.at(-1)} ms (page clock ${nav.toFixed(0)} ms)`);
  await page.close();
}
await browser.close();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// visible: page clock when the charts in view are drawn; all: every view drawn (wall clock).
console.log(JSON.stringify({ visible_median_ms: median(visible), visible_ms: visible, all_views_median_ms: median(times), all_views_ms: times }));
