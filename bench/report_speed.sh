#!/usr/bin/env bash
# Ingest benchmark for `scalelens report` (issue 2): a generated study of RUNS runs × GPUS GPUs ×
# SAMPLES samples, reported end to end; printed beside `wc -l` over the same files in the same
# script (both from the page cache, after one warm-up read).
# Usage: [ROUNDS=N] bench/report_speed.sh [RUNS=1000] [GPUS=8] [SAMPLES=3600]   (needs: scripts/build.sh bench)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000}" gpus="${2:-8}" samples="${3:-3600}"
bin=build/bench
[ -x "$bin/cli/scalelens" ] || scripts/build.sh bench
# -v2: generate_study's data as of 2026-12-07 (bench/report_memory.sh); one generated before is not reused.
study="${STUDY_DIR:-/tmp/scalelens-bench-study-$runs-$gpus-$samples-v2}"
if [ ! -f "$study/.complete" ]; then
  rm -rf "$study"
  echo "generating $runs runs × $gpus GPUs × $samples samples in $study ..."
  "$bin/bench/generate_study" "$study" "$runs" "$gpus" "$samples"
  touch "$study/.complete"
fi
bytes=$(find "$study" -name '*.csv' -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
cat $(find "$study" -name gpu.csv) >/dev/null  # warm the page cache
# ROUNDS (default 1) alternates the baseline and the report that many times: this VM's speed drifts
# by a quarter from minute to minute, so one pair says little; the medians and each round's ratio
# are printed.
rounds="${ROUNDS:-1}"
now() { date +%s.%N; }
times=()
for ((round = 0; round < rounds; ++round)); do
  t0=$(now); find "$study" -name '*.csv' -print0 | xargs -0 cat | wc -l >/dev/null; t1=$(now)
  /usr/bin/time -f '%M' -o /tmp/scalelens-bench-rss "$bin/cli/scalelens" report "$study" -q --timings --format json -o /tmp/scalelens-bench-out >/dev/null 2>/tmp/scalelens-bench-err || { cat /tmp/scalelens-bench-err; exit 1; }
  t2=$(now)
  read_s=$(sed -n 's/^timings: read \([0-9.]*\) s.*/\1/p' /tmp/scalelens-bench-err)
  self_mib=$(sed -n 's/^peak memory: scalelens \([0-9.]*\) MiB.*/\1/p' /tmp/scalelens-bench-err)
  grep '^timings:' /tmp/scalelens-bench-err
  times+=("$t0,$t1,$t2,$(cat /tmp/scalelens-bench-rss),$read_s,$self_mib")
done
python3 - "$bytes" "$(nproc)" "$runs" "$gpus" "$samples" "${times[@]}" <<'PY'
import statistics, sys
b, cores, runs, gpus, samples = sys.argv[1:6]
b = int(b); cores = int(cores)
rows = [[float(x) for x in r.split(",")] for r in sys.argv[6:]]
wcs = [r[1] - r[0] for r in rows]
sls = [r[2] - r[1] for r in rows]
reads = [r[4] for r in rows]
wc, sl, read_s, rss = statistics.median(wcs), statistics.median(sls), statistics.median(reads), max(r[3] for r in rows)
self_rss = max(r[5] for r in rows)  # MiB, scalelens alone (%M is the larger of it and gnuplot)
n = int(runs) * int(gpus) * int(samples)
print(f"study: {runs} runs x {gpus} GPUs x {samples} samples = {n/1e6:.1f} M samples, {b/1e6:.0f} MB of CSV")
if len(rows) > 1:
    print(f"medians of {len(rows)} rounds; each round's report / wc -l: " + " ".join(f"{s/w:.2f}" for s, w in zip(sls, wcs)))
print(f"wc -l (cat | wc -l):     {wc:7.2f} s  {b/1e6/wc:8.0f} MB/s")
print(f"scalelens report:        {sl:7.2f} s  {b/1e6/sl:8.0f} MB/s  ({b/1e6/sl/cores:.0f} MB/s per core, {cores} cores), peak RSS {rss/1024:.0f} MiB (scalelens itself {self_rss:.0f} MiB)")
print(f"  of which reading:      {read_s:7.2f} s  {b/1e6/read_s:8.0f} MB/s  ({b/1e6/read_s/cores:.0f} MB/s per core)")
print(f"ratio scalelens / wc -l: {sl/wc:7.2f}x")
PY
