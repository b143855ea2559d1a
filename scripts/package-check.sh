#!/usr/bin/env bash
# Builds the Debian package of a build folder, installs it with apt, uses it from the installed
# paths only (the binary on the real MLPerf logs, `scalelens run --mpi-comm` finding the installed
# libscalelens-mpi, the Python module, the C++ API through find_package), then removes it.
# As root (CI).   scripts/package-check.sh [BUILD_DIR=build/default]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
data=${SCALELENS_REALDATA:-../shared/data}
(cd "$build" && rm -f scalelens_*.deb && cpack -G DEB > /dev/null)
deb=$(ls "$build"/scalelens_*.deb)
echo "== package: $deb ($(du -h "$deb" | cut -f1))"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" > /dev/null
out=$(mktemp -d)
trap 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq scalelens > /dev/null; rm -rf "$out"' EXIT
# Nothing of the build tree on the paths.
export PATH=/usr/bin:/bin PYTHONPATH=
/usr/bin/scalelens --version
/usr/bin/scalelens report "$data/mlperf-hpc-v1.0-deepcam" -q -o "$out/report" > /dev/null
test -s "$out/report/summary.json" && test -s "$out/report/report.html"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR="$out"
mpirun --oversubscribe -n 2 /usr/bin/scalelens run --study "$out/runs" --label mpi --mpi-comm -q -- \
  "$build/examples/mpi-train/mpi_train" --epochs 2 --samples 2048 > /dev/null
ls "$out"/runs/*/comm/0.csv > /dev/null  # the installed interposer was found and preloaded
/usr/bin/python3 - "$data/mlperf-hpc-v1.0-deepcam" <<'PY'
import sys
import scalelens
assert scalelens.__file__.startswith("/usr/lib/python3/dist-packages/"), scalelens.__file__
study = scalelens.load(sys.argv[1])
assert len(study.configurations()) == 2
print("python module:", scalelens.__file__)
PY
cmake -S tests/package/consumer -B "$out/consumer" > /dev/null
cmake --build "$out/consumer" > /dev/null
"$out/consumer/consumer"
echo "== package: installed, used from /usr and removed"
