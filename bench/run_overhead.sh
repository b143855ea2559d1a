#!/usr/bin/env bash
# Overhead of `scalelens run`, measured against the same child without the wrapper, in one run:
#   start-up: time from spawn to the child's own start (it prints CLOCK_REALTIME), with and
#             without the wrapper, and the whole run of `true` both ways (median of N);
#   sampling: CPU time and peak RSS of the wrapper around `sleep D` at 10 Hz with host sampling.
# Usage: bench/run_overhead.sh [path/to/scalelens] [D seconds, default 10] [N, default 40]
set -euo pipefail
BIN=${1:-build/default/cli/scalelens}
DURATION=${2:-10}
N=${3:-40}
BIN=$(readlink -f "$BIN")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$BIN" "$DURATION" "$N" "$WORK" <<'PY'
import os, resource, statistics, subprocess, sys, time
bin_, duration, n, work = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t

def children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

wrapper = [bin_, "run", "-q", "--study", work + "/startup"]

def child_start_ms(cmd):
    # The child prints its own start time (CLOCK_REALTIME): latency from our spawn to its start.
    t = time.time_ns()
    out = subprocess.run(cmd + ["date", "+%s%N"], check=True, stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
    return (int(out.strip()) - t) / 1e6

bare, wrapped, bare_wall, wrapped_wall = [], [], [], []
for i in range(n):  # interleaved, so that a busy moment of the machine hits both alike
    bare.append(child_start_ms([]))
    wrapped.append(child_start_ms(wrapper + ["--"]))
    bare_wall.append(timed(["true"]))
    wrapped_wall.append(timed(wrapper + ["--", "true"]))
b, w = statistics.median(bare), statistics.median(wrapped)
print(f"start-up: the child starts {b:.2f} ms after spawn alone, {w:.2f} ms with the wrapper (median of {n}); "
      f"added {w - b:.2f} ms (target < 50 ms): {'met' if w - b < 50 else 'NOT met'}")
bw, ww = statistics.median(bare_wall) * 1e3, statistics.median(wrapped_wall) * 1e3
print(f"whole run of `true`: {bw:.2f} ms alone, {ww:.2f} ms wrapped (start and end-of-run writes): "
      f"ratio {ww / bw:.1f}x, added {ww - bw:.2f} ms")
c0 = children(); t0 = time.perf_counter()
subprocess.run(["sleep", str(duration)], check=True)
bare_cpu, bare_wall = children() - c0, time.perf_counter() - t0
c0 = children(); t0 = time.perf_counter()
subprocess.run([bin_, "run", "-q", "--study", work + "/sampling", "--interval", "0.1", "--", "sleep", str(duration)], check=True)
cpu, wall = children() - c0, time.perf_counter() - t0
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # largest child so far: the wrapper
share = (cpu - bare_cpu) / wall * 100
lines = sum(1 for root, _, files in os.walk(work + "/sampling") for f in files if f == "host.csv"
            for _ in open(os.path.join(root, f)))
print(f"sampling at 10 Hz for {duration:g} s ({lines - 1} host samples): CPU {cpu - bare_cpu:.3f} s over the child alone "
      f"= {share:.3f}% of one core (target < 1%): {'met' if share < 1 else 'NOT met'}")
print(f"peak RSS of the wrapper: {rss_mb:.1f} MB (target < 20 MB): {'met' if rss_mb < 20 else 'NOT met'}")
PY
