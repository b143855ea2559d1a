import { describe, expect, it } from "vitest";
import { PALETTE, colorFor, countUnit, escapeHtml, fmt, fmtAxis, fmtMeanCi, fmtPercent, logBounds, pct, withUnit } from "../src/util";

describe("escapeHtml", () => {
  it("escapes markup from labels, paths and host names", () => {
    expect(escapeHtml("<img src=x onerror=alert(1)>")).toBe("&lt;img src=x onerror=alert(1)&gt;");
    expect(escapeHtml(`a&b"c'd\`e`)).toBe("a&amp;b&quot;c&#39;d&#96;e");
    expect(escapeHtml(null)).toBe("");
    expect(escapeHtml(42)).toBe("42");
  });
});

describe("numbers", () => {
  it("formats with 3 significant digits and unit prefixes", () => {
    expect(fmt(0.123456)).toBe("0.123");
    expect(fmt(123.456)).toBe("123");
    expect(fmt(1234.5)).toBe("1235");
    expect(fmt(2_500_000)).toBe("2.5M");
    expect(fmt(null)).toBe("–");
    expect(fmt(NaN)).toBe("–");
    expect(pct(0.8312)).toBe("83.1%");
  });
  it("gives a mean's ± in the mean's scale", () => {
    // The table's time column: "10M ± 6657" read as two magnitudes side by side.
    expect(fmtMeanCi(10_000_000, 6657)).toBe("10M ± 6.7k");
    expect(fmtMeanCi(2_500_000, 120)).toBe("2.5M ± 120");
    expect(fmtMeanCi(8.93, 0.1234)).toBe("8.93 ± 0.12");
    expect(fmtMeanCi(99_000, 6657)).toBe("99000 ± 6657");
    expect(fmtMeanCi(8.93, null)).toBe("8.93");
  });
  it("never gives a percentage an SI suffix", () => {
    // An efficiency of 1e9 (a broken baseline) was "100G%".
    expect(pct(1e9)).toBe("1.00e+11%");
    expect(fmtPercent(2_500_000)).toBe("2.50e+6%");
    expect(fmtPercent(-3e7)).toBe("-3.00e+7%");
    expect(pct(9999)).toBe("999900%");
    expect(fmtPercent(83.12)).toBe("83.1%");
    expect(fmtPercent(undefined)).toBe("–");
  });
  it("shortens thousands on axes from 10 000 on", () => {
    expect(fmtAxis(131072)).toBe("131k");
    expect(fmtAxis(65536)).toBe("65.5k");
    expect(fmtAxis(9500)).toBe("9500");
    expect(fmtAxis(2_500_000)).toBe("2.5M");
    expect(fmtAxis(-20000)).toBe("-20k");
  });
});

describe("log axis bounds", () => {
  it("snap to the powers of the base around the data", () => {
    expect(logBounds(16148, 16148, 2)).toEqual([8192, 16384]);
    expect(logBounds(107311, 171755, 2)).toEqual([65536, 262144]);
    expect(logBounds(0.032, 0.305, 10)).toEqual([0.01, 1]);
    expect(logBounds(1, 1, 2)).toEqual([1, 2]); // one speedup of 1: still a range
    expect(logBounds(1, 4, 2)).toEqual([1, 4]);
    expect(logBounds(0, 4, 2)).toBeNull(); // no log of 0: ECharts decides
  });
});

describe("world-size unit", () => {
  it("names GPUs unless the summary says ranks", () => {
    expect(withUnit("Time vs {count}, per {one}", countUnit(undefined))).toBe("Time vs GPUs, per GPU");
    expect(withUnit("Time vs {count}, per {one}", countUnit("GPUs"))).toBe("Time vs GPUs, per GPU");
    expect(withUnit("Time vs {count}, per {one}", countUnit("ranks"))).toBe("Time vs ranks, per rank");
  });
});

describe("palette", () => {
  it("gives each label a stable Okabe–Ito colour", () => {
    const labels = ["a", "b", "c"];
    expect(colorFor("b", labels)).toBe(PALETTE[1]);
    expect(colorFor("b", labels)).toBe(colorFor("b", [...labels]));
    expect(PALETTE).toContain("#E69F00");
  });
});
