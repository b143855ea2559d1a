#!/usr/bin/env bash
# Memory benchmark for `scalelens report` (issue 17, part 2): peak RSS of a SMALL-run and a
# LARGE-run study of GPUS GPUs × SAMPLES samples, and their ratio against the target (the larger
# study ≤ 1.5× the smaller's), of scalelens itself (--timings) and, as /usr/bin/time measures it,
# with the gnuplot that draws the figures. Also prints what each run adds (the slope between the
# two) and the most each run may add for the ratio to hold at the measured fixed cost.
# Usage: [ROUNDS=N] [HEAPTRACK=1] [BIN=build/bench] bench/report_memory.sh [SMALL=1000] [LARGE=10000] [GPUS=8] [SAMPLES=36]
#   (needs: scripts/build.sh bench, or BIN naming another build folder with cli/scalelens and
#   bench/generate_study, e.g. build/default configured with -DSCALELENS_BUILD_BENCH=ON; HEAPTRACK=1
#   also needs heaptrack and prints the large study's peak consumers)
set -euo pipefail
cd "$(dirname "$0")/.."
small="${1:-1000}" large="${2:-10000}" gpus="${3:-8}" samples="${4:-36}"
bin="${BIN:-build/bench}"
[ -x "$bin/cli/scalelens" ] || [ -n "${BIN:-}" ] || scripts/build.sh bench
[ -x "$bin/cli/scalelens" ] || { echo "no $bin/cli/scalelens: build it first" >&2; exit 1; }
# -v2: generate_study's data changed on 2026-12-07 (samples_per_epoch agrees with epochs.csv); a
# study generated before is not reused.
study_of() { echo "${STUDY_ROOT:-/tmp}/scalelens-bench-study-$1-$gpus-$samples-v2"; }
for runs in 10 "$small" "$large"; do
  study=$(study_of "$runs")
  if [ ! -f "$study/.complete" ]; then
    rm -rf "$study"
    echo "generating $runs runs × $gpus GPUs × $samples samples in $study ..."
    "$bin/bench/generate_study" "$study" "$runs" "$gpus" "$samples"
    touch "$study/.complete"
  fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
peak_kib() {  # the report's peak RSS in KiB: scalelens itself (--timings), then with gnuplot (/usr/bin/time's %M)
  /usr/bin/time -f '%M' -o "$out/rss" "$bin/cli/scalelens" report "$1" -q --timings -o "$out/report" >/dev/null \
    2>"$out/err" || { cat "$out/err"; exit 1; }
  self=$(sed -n 's/^peak memory: scalelens \([0-9.]*\) MiB.*/\1/p' "$out/err")
  echo "$(python3 -c "print(round($self * 1024))")/$(cat "$out/rss")"
}
# ROUNDS (default 3) alternates the studies; the medians are printed (RSS varies by a MiB or two
# with thread timing).
rounds="${ROUNDS:-3}"
rows=()
for ((round = 0; round < rounds; ++round)); do
  rows+=("$(peak_kib "$(study_of 10)"),$(peak_kib "$(study_of "$small")"),$(peak_kib "$(study_of "$large")")")
done
python3 - "$small" "$large" "$gpus" "$samples" "${rows[@]}" <<'PY'
import statistics, sys
small, large, gpus, samples = (int(x) for x in sys.argv[1:5])
rows = [[[int(y) / 1024 for y in x.split("/")] for x in r.split(",")] for r in sys.argv[5:]]
# scalelens's own peak is the target's measure; /usr/bin/time's %M is the larger of it and the
# figures' gnuplot (about 25 MiB whatever the study), which hides scalelens's own below that.
for which, title in ((0, "scalelens itself (the target's measure)"), (1, "with gnuplot (/usr/bin/time %M: the larger process)")):
    tiny, s, l = (statistics.median(col[which] for col in cols) for cols in [[row[i] for row in rows] for i in range(3)])
    print(f"peak RSS of {title}, medians of {len(rows)} rounds ({gpus} GPUs x {samples} samples a run):")
    print(f"  {10:>6} runs: {tiny:7.1f} MiB   (about the fixed cost)")
    print(f"  {small:>6} runs: {s:7.1f} MiB")
    print(f"  {large:>6} runs: {l:7.1f} MiB")
    print(f"  ratio {large} / {small} runs: {l / s:.2f}x   (target <= 1.5x: {'met' if l <= 1.5 * s else 'not met'})")
    per_run = (l - s) * 1024 / (large - small)
    # The ratio holds when fixed + large*x <= 1.5 (fixed + small*x): x <= 0.5 fixed / (large - 1.5 small).
    budget = 0.5 * tiny * 1024 / (large - 1.5 * small) if large > 1.5 * small else float("inf")
    print(f"  each run adds {per_run:.2f} KiB; for the target, at most {budget:.2f} KiB a run")
PY
if [ "${HEAPTRACK:-0}" = 1 ]; then
  heaptrack -o "$out/ht" "$bin/cli/scalelens" report "$(study_of "$large")" -q -o "$out/report" >/dev/null 2>&1
  echo "heaptrack, the $large-run study's peak consumers:"
  heaptrack_print -f "$out/ht.zst" --print-peaks 1 --print-allocators 0 --print-temporary 0 --print-leaks 0 \
    --peak-limit 8 2>/dev/null |
    awk '/peak memory consumed over/ {print; getline; print "    " substr($0, 1, 150)} /^peak heap memory/'
fi
