#!/usr/bin/env bash
# `mpirun -n K scalelens trace|report` on this machine (docs/parallel.md), each process with one
# thread (-j 1 / --threads 1) so that K processes use K cores:
#   weak scaling:   FILES traces (RUNS runs) per process, K = 1, 2, ...: ideal is a flat time
#   strong scaling: the same FILES × max K traces (RUNS × max K runs) on K = 1, 2, ...: ideal is 1/K
# and one process with K threads beside them. Traces: links to the large shared trace, inflated
# once into a temp folder; runs: bench/generate_study (8 GPUs × 3,600 samples each). Medians of 3.
# Usage: bench/parallel_scaling.sh [SCALELENS_BIN] [FILES=16] [RUNS=100] [MAX_K=nproc]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/bench/cli/scalelens}
files=${2:-16}
runs=${3:-100}
max_k=${4:-$(nproc)}
generate=$(dirname "$(dirname "$bin")")/bench/generate_study
trace=${SCALELENS_REALDATA:-$here/../shared/data}/kineto/hta/v100-rank1of2-large.json.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp OMPI_MCA_orte_tmpdir_base=$tmp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gzip -dc "$trace" > "$tmp/trace.json"

traces() {  # a folder of $1 links to the one trace
  local d=$tmp/traces-$1
  if [ ! -d "$d" ]; then
    mkdir "$d"
    for i in $(seq -w 1 "$1"); do ln -s "$tmp/trace.json" "$d/rank$i.json"; done
  fi
  echo "$d"
}
study() {  # a generated study of $1 runs
  local d=$tmp/study-$1
  [ -d "$d" ] || "$generate" "$d" "$1" 8 3600 > /dev/null
  echo "$d"
}
median3() {  # median wall seconds of three runs of a command
  local t=()
  for _ in 1 2 3; do
    local s; s=$(date +%s.%N)
    "$@" > /dev/null 2>&1
    t+=("$(awk -v a="$(date +%s.%N)" -v b="$s" 'BEGIN {print a - b}')")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}
launch() {  # K, then the scalelens arguments
  local k=$1; shift
  if (( k == 1 )); then "$bin" "$@"; else mpirun -n "$k" "$bin" "$@"; fi
}

cat "$tmp/trace.json" > /dev/null
echo "machine: $(nproc) cores; trace $(( $(stat -c %s "$tmp/trace.json") / 1000000 )) MB; $files traces or $runs runs (8 GPUs x 3,600 samples) per process"
printf '%-8s %-7s %3s %7s %8s %9s\n' command scaling K files "wall s" "vs ideal"
for kind in trace report; do
  for k in $(seq 1 "$max_k"); do
    if [ "$kind" = trace ]; then
      w=$(median3 launch "$k" trace --no-cache -j 1 "$(traces $((files * k)))")
    else
      w=$(median3 launch "$k" report --no-cache --threads 1 -q -o "$tmp/out" "$(study $((runs * k)))")
    fi
    (( k == 1 )) && w1=$w
    n=$([ "$kind" = trace ] && echo $((files * k)) || echo $((runs * k)))
    printf '%-8s %-7s %3d %7d %8.2f %8.2fx\n' "$kind" weak "$k" "$n" "$w" "$(awk -v a="$w1" -v b="$w" 'BEGIN {print a / b}')"
  done
  for k in $(seq 1 "$max_k"); do
    if [ "$kind" = trace ]; then
      n=$((files * max_k)); w=$(median3 launch "$k" trace --no-cache -j 1 "$(traces "$n")")
    else
      n=$((runs * max_k)); w=$(median3 launch "$k" report --no-cache --threads 1 -q -o "$tmp/out" "$(study "$n")")
    fi
    (( k == 1 )) && s1=$w
    printf '%-8s %-7s %3d %7d %8.2f %8.2fx\n' "$kind" strong "$k" "$n" "$w" "$(awk -v a="$s1" -v b="$w" -v k="$k" 'BEGIN {print a / b / k}')"
  done
  if [ "$kind" = trace ]; then
    w=$(median3 "$bin" trace --no-cache -j "$max_k" "$(traces $((files * max_k)))")
  else
    w=$(median3 "$bin" report --no-cache --threads "$max_k" -q -o "$tmp/out" "$(study $((runs * max_k)))")
  fi
  printf '%-8s %-7s %3s %7d %8.2f %8.2fx   (one process, %d threads)\n' "$kind" strong "1" "$n" "$w" "$(awk -v a="$s1" -v b="$w" -v k="$max_k" 'BEGIN {print a / b / k}')" "$max_k"
done
