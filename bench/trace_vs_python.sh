#!/usr/bin/env bash
# Side by side on one machine: Python's own json.load of a trace (what every Python tool pays
# before any analysis) against the whole `scalelens trace` analysis of the same file, with peak
# memory (/usr/bin/time -v). `scalelens trace` runs with --no-cache (a full parse and analysis
# every time), then once more from its summary cache; then both again on the gzipped file as
# PyTorch writes it (gzip.open + json.load; scalelens inflating and parsing as the text comes), with
# the CPU time (user + system) that "MB per CPU-second" divides by. Usage: bench/trace_vs_python.sh [SCALELENS_BIN] [TRACE.json.gz] [RUNS]
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

# median wall seconds, max peak RSS (KB) and median CPU seconds of `runs` runs of a command
measure() {
  local walls=() cpus=() rss=0
  for _ in $(seq "$runs"); do
    /usr/bin/time -v "$@" > /dev/null 2> "$tmp/time.txt"
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tmp/time.txt")")
    cpus+=("$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$tmp/time.txt")")
    local r; r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
    (( r > rss )) && rss=$r
  done
  local median; median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  local cpu; cpu=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$median $rss $cpu"
}

cat "$trace" > /dev/null   # page cache warm for both
read -r py_s py_kb _ < <(measure python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$trace")
read -r sl_s sl_kb sl_cpu < <(measure "$bin" trace --no-cache "$trace")
"$bin" trace "$trace" > /dev/null   # writes the summary cache beside the trace
read -r ca_s ca_kb _ < <(measure "$bin" trace "$trace")
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
read -r pz_s pz_kb _ < <(measure python3 -c 'import gzip, json, sys; json.load(gzip.open(sys.argv[1]))' "$src")
read -r gz_s gz_kb gz_cpu < <(measure "$bin" trace --no-cache "$src")
read -r g1_s g1_kb g1_cpu < <(measure "$bin" trace --no-cache -j 1 "$src")
awk -v size="$size" -v sl_cpu="$sl_cpu" -v pz_s="$pz_s" -v pz_kb="$pz_kb" -v gz_s="$gz_s" -v gz_kb="$gz_kb" -v gz_cpu="$gz_cpu" \
    -v g1_s="$g1_s" -v g1_kb="$g1_kb" -v g1_cpu="$g1_cpu" 'BEGIN {
  mb = size / 1e6
  printf "%-32s %8.2f %10.1f %12.1f\n", "python3 gzip.open + json.load", pz_s, mb / pz_s, pz_kb / 1024
  printf "%-32s %8.2f %10.1f %12.1f\n", "scalelens trace .json.gz", gz_s, mb / gz_s, gz_kb / 1024
  printf "%-32s %8.2f %10.1f %12.1f\n", "scalelens trace .json.gz -j 1", g1_s, mb / g1_s, g1_kb / 1024
  printf "speed ratio, gzipped (gzip.open + json.load / scalelens): %.1fx\n", pz_s / gz_s
  printf "scalelens .json.gz peak RSS / uncompressed size: %.2fx (-j 1: %.2fx)\n", gz_kb * 1024 / size, g1_kb * 1024 / size
  printf "MB of uncompressed JSON per CPU-second of full analysis: plain %.0f, gzipped %.0f (-j 1: %.0f)\n", mb / sl_cpu, mb / gz_cpu, mb / g1_cpu
}'
