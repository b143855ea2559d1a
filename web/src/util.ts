// Escaping, number formatting and the colour palette: small pure helpers.

// Text from the study (labels, paths, host names) as HTML text: for the few places that build
// HTML strings (ECharts tooltips). Everything else uses textContent.
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" })[c] as string,
  );
}

export function isNum(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

// `v` with an SI suffix from a thousand on (6657 -> "6.7k" with 2 digits).
function withSiSuffix(v: number, digits: number): string {
  const units = ["", "k", "M", "G", "T", "P"];
  let u = 0;
  let x = v;
  while (Math.abs(x) >= 1000 && u < units.length - 1) {
    x /= 1000;
    u++;
  }
  return `${Number(x.toPrecision(digits))}${units[u]}`;
}

// A figure with 3 significant digits, as people read them (1234567 -> "1.23M").
export function fmt(v: unknown, digits = 3): string {
  if (!isNum(v)) return "–";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e6) return withSiSuffix(v, digits);
  if (a >= 10 ** digits) return Math.round(v).toString();
  return Number(v.toPrecision(digits)).toString();
}

// A mean and the half width of its interval, "8.93 ± 0.12": the half width in the mean's scale,
// with a suffix where the mean has one ("10M ± 6.7k", where "10M ± 6657" read as two magnitudes).
export function fmtMeanCi(mean: unknown, half: unknown): string {
  if (!isNum(half) || !isNum(mean)) return fmt(mean);
  return `${fmt(mean)} ± ${Math.abs(mean) >= 1e6 && Math.abs(half) >= 1000 ? withSiSuffix(half, 2) : fmt(half, 2)}`;
}

// Percentage points as text: never an SI suffix ("100G%" read as a figure with a unit); beyond a
// million points (a broken baseline's efficiency) in powers of ten, "1.00e+11%".
export function fmtPercent(points: unknown, digits = 3): string {
  if (!isNum(points)) return "–";
  return Math.abs(points) >= 1e6 ? `${points.toExponential(digits - 1)}%` : `${fmt(points, digits)}%`;
}

// Axis ticks: as fmt, but thousands shortened from 10 000 on ("131k"), so a tick label stays
// narrower than the gap before the axis name.
export function fmtAxis(v: unknown): string {
  if (!isNum(v) || Math.abs(v) < 1e4 || Math.abs(v) >= 1e6) return fmt(v);
  return `${Number((v / 1000).toPrecision(3))}k`;
}

// Bounds of a log axis at the powers of `base` around the data, so that one point or a narrow
// range does not leave ECharts to choose one spanning decades (1 to 1M around one throughput).
export function logBounds(lo: number, hi: number, base: number): [number, number] | null {
  if (!(lo > 0) || !(hi >= lo) || !Number.isFinite(hi)) return null;
  const down = base ** Math.floor(Math.log(lo) / Math.log(base) + 1e-9);
  let up = base ** Math.ceil(Math.log(hi) / Math.log(base) - 1e-9);
  if (up <= down) up = down * base;
  return [down, up];
}

export function pct(v: unknown, digits = 3): string {
  return isNum(v) ? fmtPercent(v * 100, digits) : "–";
}

// What world size counts: GPUs, or ranks for CPU-only jobs. Texts name it through the tokens
// {count} (plural) and {one} (singular).
export interface CountUnit {
  plural: string;
  singular: string;
}
export function countUnit(worldSizeUnit: string | undefined): CountUnit {
  return worldSizeUnit === "ranks" ? { plural: "ranks", singular: "rank" } : { plural: "GPUs", singular: "GPU" };
}
export function withUnit(text: string, unit: CountUnit): string {
  return text.replace(/\{count\}/g, unit.plural).replace(/\{one\}/g, unit.singular);
}

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
const DASHES: (number[] | "solid")[] = ["solid", [6, 3], [2, 2], [8, 3, 2, 3]];

// Colours are stable per label: by the label's position in the sorted list of all labels.
export function colorFor(label: string, allLabels: string[]): string {
  const i = allLabels.indexOf(label);
  return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
}
// With more labels than colours, the line style tells them apart.
export function dashFor(label: string, allLabels: string[]): number[] | "solid" {
  const i = Math.max(0, allLabels.indexOf(label));
  return DASHES[Math.floor(i / PALETTE.length) % DASHES.length];
}
