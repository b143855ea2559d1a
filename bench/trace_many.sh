#!/usr/bin/env bash
# Many traces at once: N links to the large shared trace (inflated once into a temp folder, never
# into the repository) analysed by `scalelens trace --no-cache` with T threads; wall time and peak
# memory per (files, threads), then the same folder twice with the summary cache.
# Usage: bench/trace_many.sh [SCALELENS_BIN] [TRACE.json.gz] [MAX_FILES=64]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/release/cli/scalelens}
src=${2:-${SCALELENS_REALDATA:-$here/../shared/data}/kineto/hta/v100-rank1of2-large.json.gz}
max_files=${3:-64}
cores=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gzip -dc "$src" > "$tmp/trace.json"
size=$(stat -c %s "$tmp/trace.json")
cat "$tmp/trace.json" > /dev/null   # page cache warm

folder() {  # a folder of $1 links to the one trace
  local d=$tmp/files-$1
  if [ ! -d "$d" ]; then
    mkdir "$d"
    for i in $(seq -w 1 "$1"); do ln -s "$tmp/trace.json" "$d/rank$i.json"; done
  fi
  echo "$d"
}
run() {  # wall seconds and peak RSS MB of: scalelens trace ARGS
  /usr/bin/time -f '%e %M' "$bin" trace "$@" > /dev/null 2> "$tmp/time.txt" || true
  tail -1 "$tmp/time.txt" | awk '{printf "%s %.1f\n", $1, $2 / 1024}'
}

echo "trace: $(awk -v s="$size" 'BEGIN {printf "%.1f", s / 1e6}') MB uncompressed; $cores cores"
printf '%6s %8s %8s %10s %14s %12s\n' files threads "wall s" "files/s" "s/file/thread" "peak RSS MB"
threads_list=1
for t in 2 4 8 16 32 64; do
  if (( t <= cores )); then threads_list="$threads_list $t"; fi
done
if (( cores > 1 )) && [[ " $threads_list " != *" $cores "* ]]; then threads_list="$threads_list $cores"; fi
for t in $threads_list; do
  read -r wall rss < <(run --no-cache -j "$t" "$(folder "$max_files")")
  awk -v n="$max_files" -v t="$t" -v w="$wall" -v r="$rss" 'BEGIN {printf "%6d %8d %8.2f %10.1f %14.3f %12s\n", n, t, w, n / w, w * t / n, r}'
done
for n in 1 4 16; do
  if (( n >= max_files )); then continue; fi
  read -r wall rss < <(run --no-cache -j "$cores" "$(folder "$n")")
  awk -v n="$n" -v t="$cores" -v w="$wall" -v r="$rss" 'BEGIN {printf "%6d %8d %8.2f %10.1f %14.3f %12s\n", n, t, w, n / w, w * t / n, r}'
done
# The summary cache (a private one here): the first run writes it, the second reads it.
d=$(folder "$max_files")
read -r w1 r1 < <(run -j "$cores" --cache-dir "$tmp/cache" "$d")
read -r w2 r2 < <(run -j "$cores" --cache-dir "$tmp/cache" "$d")
echo "cache: first run $w1 s (writes summaries), second run $w2 s ($r2 MB), $max_files files"
