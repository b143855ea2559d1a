#!/usr/bin/env bash
# Overhead of libscalelens-mpi on the MPI example at 2 ranks: the same run with and without the
# interposer preloaded, alternated REPEATS times in one script; prints the ratio of medians.
#   bench/mpi_overhead.sh [REPEATS=7]      (needs scripts/build.sh default)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-7}"
lib=build/default/mpi/libscalelens-mpi.so
train=build/default/examples/mpi-train/mpi_train
[ -x "$train" ] && [ -f "$lib" ] || scripts/build.sh default
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private session directory for mpirun (another MPI job's under /tmp would break it).
mkdir "$tmp/mpi-tmp"
export TMPDIR="$tmp/mpi-tmp" OMPI_MCA_orte_tmpdir_base="$tmp/mpi-tmp"
args=(--mode strong --epochs 4 --samples 32768 --hidden 192)
one() {  # prints wall nanoseconds of one run
  local start end
  start=$(date +%s%N)
  mpirun --oversubscribe -n 2 "$@" "$train" "${args[@]}" >/dev/null
  end=$(date +%s%N)
  echo $((end - start))
}
plain=() with=()
for i in $(seq "$repeats"); do
  plain+=("$(one)")
  with+=("$(one -x SCALELENS_RUN_DIR="$tmp/run$i" -x LD_PRELOAD="$(realpath "$lib")")")
done
python3 - "${plain[*]}" "${with[*]}" <<'PY'
import statistics, sys
plain = [int(x) / 1e9 for x in sys.argv[1].split()]
with_ = [int(x) / 1e9 for x in sys.argv[2].split()]
p, w = statistics.median(plain), statistics.median(with_)
print(f"mpi_train, 2 ranks, {len(plain)} runs each (medians):")
print(f"  without interposer: {p:.3f} s   with: {w:.3f} s   overhead: {100 * (w / p - 1):+.2f}%")
PY
