#!/usr/bin/env bash
# Ingest benchmark for `scalelens report` (issue 2): a generated study of RUNS runs × GPUS GPUs ×
# SAMPLES samples, reported end to end; printed beside `wc -l` over the same files in the same
# script (both from the page cache, after one warm-up read).
# Usage: bench/report_speed.sh [RUNS=1000] [GPUS=8] [SAMPLES=3600]   (needs: scripts/build.sh bench)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000}" gpus="${2:-8}" samples="${3:-3600}"
bin=build/bench
[ -x "$bin/cli/scalelens" ] || scripts/build.sh bench
study="${STUDY_DIR:-/tmp/scalelens-bench-study-$runs-$gpus-$samples}"
if [ ! -f "$study/.complete" ]; then
  rm -rf "$study"
  echo "generating $runs runs × $gpus GPUs × $samples samples in $study ..."
  "$bin/bench/generate_study" "$study" "$runs" "$gpus" "$samples"
  touch "$study/.complete"
fi
bytes=$(find "$study" -name '*.csv' -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
cat $(find "$study" -name gpu.csv) >/dev/null  # warm the page cache
now() { date +%s.%N; }
t0=$(now); find "$study" -name '*.csv' -print0 | xargs -0 cat | wc -l >/dev/null; t1=$(now)
/usr/bin/time -f '%M' -o /tmp/scalelens-bench-rss "$bin/cli/scalelens" report "$study" -q --timings --format json -o /tmp/scalelens-bench-out >/dev/null 2>/tmp/scalelens-bench-err || { cat /tmp/scalelens-bench-err; exit 1; }
t2=$(now)
read_s=$(sed -n 's/^timings: read \([0-9.]*\) s.*/\1/p' /tmp/scalelens-bench-err)
grep '^timings:' /tmp/scalelens-bench-err
python3 - "$bytes" "$t0" "$t1" "$t2" "$(cat /tmp/scalelens-bench-rss)" "$(nproc)" "$runs" "$gpus" "$samples" "$read_s" <<'PY'
import sys
b, t0, t1, t2, rss, cores, runs, gpus, samples, read_s = sys.argv[1:]
b = int(b); wc = float(t1) - float(t0); sl = float(t2) - float(t1); cores = int(cores)
n = int(runs) * int(gpus) * int(samples)
print(f"study: {runs} runs x {gpus} GPUs x {samples} samples = {n/1e6:.1f} M samples, {b/1e6:.0f} MB of CSV")
print(f"wc -l (cat | wc -l):     {wc:7.2f} s  {b/1e6/wc:8.0f} MB/s")
print(f"scalelens report:        {sl:7.2f} s  {b/1e6/sl:8.0f} MB/s  ({b/1e6/sl/cores:.0f} MB/s per core, {cores} cores), peak RSS {int(rss)/1024:.0f} MiB")
print(f"  of which reading:      {float(read_s):7.2f} s  {b/1e6/float(read_s):8.0f} MB/s  ({b/1e6/float(read_s)/cores:.0f} MB/s per core)")
print(f"ratio scalelens / wc -l: {sl/wc:7.2f}x")
PY
