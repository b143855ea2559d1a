#!/usr/bin/env bash
# Side by side on one machine: Python's own json.load of a trace (what every Python tool pays
# before any analysis) against the whole `scalelens trace` analysis of the same file, with peak
# memory (/usr/bin/time -v). `scalelens trace` runs with --no-cache (a full parse and analysis
# every time), then once more from its summary cache. Usage: bench/trace_vs_python.sh [SCALELENS_BIN] [TRACE.json.gz] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/release/cli/scalelens}
src=${2:-${SCALELENS_REALDATA:-$here/../shared/data}/kineto/hta/v100-rank1of2-large.json.gz}
runs=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=$tmp/trace.json
gzip -dc "$src" > "$trace"   # inflated first: both sides read the same plain file
size=$(stat -c %s "$trace")

# median wall seconds and max peak RSS (KB) of `runs` runs of a command
measure() {
  local walls=() rss=0
  for _ in $(seq "$runs"); do
    /usr/bin/time -v "$@" > /dev/null 2> "$tmp/time.txt"
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tmp/time.txt")")
    local r; r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
    (( r > rss )) && rss=$r
  done
  local median; median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$median $rss"
}

cat "$trace" > /dev/null   # page cache warm for both
read -r py_s py_kb < <(measure python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$trace")
read -r sl_s sl_kb < <(measure "$bin" trace --no-cache "$trace")
"$bin" trace "$trace" > /dev/null   # writes the summary cache beside the trace
read -r ca_s ca_kb < <(measure "$bin" trace "$trace")
awk -v size="$size" -v py_s="$py_s" -v py_kb="$py_kb" -v sl_s="$sl_s" -v sl_kb="$sl_kb" -v ca_s="$ca_s" -v ca_kb="$ca_kb" -v runs="$runs" 'BEGIN {
  mb = size / 1e6
  printf "trace: %.1f MB uncompressed, median of %d runs\n", mb, runs
  printf "%-32s %8s %10s %12s\n", "", "wall s", "MB/s", "peak RSS MB"
  printf "%-32s %8.2f %10.1f %12.1f\n", "python3 json.load", py_s, mb / py_s, py_kb / 1024
  printf "%-32s %8.2f %10.1f %12.1f\n", "scalelens trace (full analysis)", sl_s, mb / sl_s, sl_kb / 1024
  printf "%-32s %8.2f %10s %12.1f\n", "scalelens trace (cached summary)", ca_s, "-", ca_kb / 1024
  printf "speed ratio (json.load / scalelens): %.1fx\n", py_s / sl_s
  printf "scalelens peak RSS / file size: %.2fx\n", sl_kb * 1024 / size
}'
