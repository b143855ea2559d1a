// Shared by the browser tests: playwright-core (from web/node_modules) driving Debian's Chromium,
// headless, with no network and a fresh profile. Never downloads a browser.
import { createRequire } from "node:module";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const SOURCE_DIR = process.env.SCALELENS_SOURCE_DIR ?? path.resolve(here, "../..");
export const BIN = process.env.SCALELENS_BIN ?? path.join(SOURCE_DIR, "build/default/cli/scalelens");
export const ARTIFACTS = process.env.SCALELENS_ARTIFACTS ?? path.join(os.tmpdir(), "scalelens-browser");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
fs.mkdirSync(ARTIFACTS, { recursive: true });

const require = createRequire(path.join(SOURCE_DIR, "web/package.json"));
const { chromium } = require("playwright-core");

export async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "scalelens-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1366, height: 900 },
    acceptDownloads: true,
    bypassCSP: true, // Playwright's own waitForFunction evaluates strings; the page's CSP is tested apart
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  const close = async () => {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context: browser, close };
}

// A page that records errors, dialogs (an XSS would alert) and every request it makes; requests
// that leave the machine are refused (file: always, 127.0.0.1 only when `allowLocal`).
export async function openPage(context, { allowLocal = false } = {}) {
  const page = await context.newPage();
  const log = { errors: [], dialogs: [], requests: [], blocked: [] };
  page.on("pageerror", (e) => log.errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") log.errors.push(m.text()); });
  page.on("dialog", async (d) => { log.dialogs.push(d.message()); await d.dismiss(); });
  await page.route("**/*", (route) => {
    const url = route.request().url();
    log.requests.push(url);
    const local = url.startsWith("file:") || url.startsWith("data:") || url.startsWith("blob:") ||
      (allowLocal && url.startsWith("http://127.0.0.1:"));
    if (local) return route.continue();
    log.blocked.push(url);
    return route.abort();
  });
  return { page, log };
}

export async function waitReady(page, timeout = 20000) {
  await page.waitForFunction(() => window.__scalelens && window.__scalelens.ready, null, { timeout });
}

// Per chart: [{type, id, name, points}] of its current option.
export async function chartSeries(page) {
  return page.evaluate(() => {
    const out = {};
    for (const [id, chart] of Object.entries(window.__scalelens.charts)) {
      const opt = chart.getOption();
      out[id] = (opt.series ?? []).map((s) => ({ type: s.type, id: s.id, name: s.name, points: (s.data ?? []).length }));
    }
    return out;
  });
}

// Element ids that occur more than once (getElementById would find the wrong one).
export async function duplicateIds(page) {
  return page.evaluate(() => {
    const seen = new Map();
    for (const e of document.querySelectorAll("[id]")) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  });
}

export function report(inputs, outDir, extra = []) {
  execFileSync(BIN, ["report", ...inputs, "-o", outDir, "-q", ...extra], { stdio: ["ignore", "ignore", "inherit"] });
  return path.join(outDir, "report.html");
}

export function tmpdir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

// A scalelens run folder with GPU samples: `gpus` GPUs × `samples` samples 1 s apart. With
// `cpuOnly`, a CPU-only MPI job instead: rank records without devices and no GPU samples.
export function writeRun(root, name, { label, p, epoch_s, gpus = 2, samples = 120, runId = name, cpuOnly = false, system = undefined }) {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, "nodes", "node-<b>"), { recursive: true });
  const ns = (s) => BigInt(Math.round(s * 1e9)).toString();
  const t0 = 1_700_000_000;
  const end = t0 + Math.max(3 * epoch_s, samples);
  fs.writeFileSync(path.join(dir, "scalelens.json"), JSON.stringify({
    schema: "scalelens.run/1", run_id: runId, label, ...(system ? { system } : {}), world_size: p, nodes: 1, ...(cpuOnly ? {} : { gpus_per_node: p }),
    samples_per_epoch: 1000, global_batch_size: 64, start_ns: Number(ns(t0)), end_ns: Number(ns(end)),
  }));
  if (cpuOnly) {
    fs.mkdirSync(path.join(dir, "ranks"));
    for (let r = 0; r < p; r++)
      fs.writeFileSync(path.join(dir, "ranks", `${r}.json`), JSON.stringify({ schema: "scalelens.rank/1", rank: r, host: "node-<b>", devices: [] }));
  }
  let e = "rank,epoch,start_ns,end_ns,samples\n";
  for (let k = 0; k < 3; k++) e += `0,${k},${ns(t0 + k * epoch_s)},${ns(t0 + (k + 1) * epoch_s)},${Math.round(1000 / p)}\n`;
  fs.writeFileSync(path.join(dir, "epochs.csv"), e);
  if (cpuOnly) return dir;
  let g = "t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n";
  for (let s = 0; s < samples; s++)
    for (let i = 0; i < gpus; i++)
      g += `${ns(t0 + s * (end - t0) / (samples - 1))},${i},GPU-${name}-${i},${(50 + 40 * Math.sin(s / 9 + i)).toFixed(1)},,,${(200 + 80 * Math.cos(s / 7 + i)).toFixed(1)},,,\n`;
  fs.writeFileSync(path.join(dir, "nodes", "node-<b>", "gpu.csv"), g);
  return dir;
}

export function startServe(dir, extra = []) {
  const child = spawn(BIN, ["serve", dir, "--port", "0", ...extra], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[0] });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

// A PyTorch profiler (Kineto) trace in the shape the profiler writes (compare
// tests/support/kineto_writer.hpp and ../shared/data/kineto): distributedInfo, deviceProperties,
// per step a ProfilerStep#N annotation, two launches (cuda_runtime) and their kernels — a GEMM of
// `computeUs` and an NCCL all-reduce of `commUs` starting at `commAtUs` — tied by correlation ids.
export function writeKinetoTrace(file, { rank, worldSize, stepUs, computeUs, commUs, commAtUs, steps = 4, startUs = 1_730_000_000_000_000 }) {
  const ev = [];
  let corr = 100;
  for (let k = 0; k < steps; k++) {
    const t = startUs + k * stepUs;
    ev.push({ ph: "X", cat: "user_annotation", name: `ProfilerStep#${k + 1}`, pid: 100 + rank, tid: 100 + rank, ts: t, dur: stepUs, args: { "External id": corr } });
    for (const [name, stream, at, dur, extra] of [
      ["ampere_sgemm_128x64_tn", 7, t + 20, computeUs, {}],
      ["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 20, t + commAtUs, commUs,
        { "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": worldSize, dtype: "Float",
          "Process Group Name": "0", "Process Group Ranks": `[${[...Array(worldSize).keys()].join(", ")}]` }],
    ]) {
      corr++;
      ev.push({ ph: "X", cat: "cuda_runtime", name: "cudaLaunchKernel", pid: 100 + rank, tid: 100 + rank, ts: t + 5, dur: 4, args: { "External id": corr, cbid: 211, correlation: corr } });
      ev.push({ ph: "X", cat: "kernel", name, pid: 0, tid: stream, ts: at, dur, args: { "External id": corr, device: 0, stream, correlation: corr, ...extra } });
    }
  }
  ev.push({ ph: "X", cat: "Trace", ts: startUs - 50, dur: steps * stepUs + 100, pid: "Spans", tid: "PyTorch Profiler", name: "PyTorch Profiler (0)", args: { "Op count": 0 } });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({
    schemaVersion: 1, deviceProperties: [{ id: 0, name: "NVIDIA A100-SXM4-80GB" }],
    distributedInfo: { backend: "nccl", rank, world_size: worldSize }, traceEvents: ev,
  }));
}
