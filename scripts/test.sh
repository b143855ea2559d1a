#!/usr/bin/env bash
# Builds the normal and the sanitizer (ASan + UBSan) builds and runs every test in both.
# Real-data tests read SCALELENS_REALDATA (../shared/data beside the clone); they skip without it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SCALELENS_REALDATA:-}" ] && [ -d ../shared/data ]; then
  export SCALELENS_REALDATA="$(cd ../shared/data && pwd)"
fi
echo "== real data: ${SCALELENS_REALDATA:-not set, real-data tests will skip}"
# A private single-node SLURM for the sweep and srun tests (as root, where slurm-wlm is installed);
# stopped when the tests end. Without it those tests skip, unless SCALELENS_REQUIRE_SLURM=1.
if [ "$(id -u)" -eq 0 ] && command -v slurmctld > /dev/null && [ -z "${SLURM_CONF:-}" ]; then
  slurm_dir=$(mktemp -d)
  trap 'scripts/slurm-cluster.sh stop "$slurm_dir"; rm -rf "$slurm_dir"' EXIT
  eval "$(scripts/slurm-cluster.sh start "$slurm_dir")"
  echo "== SLURM: private cluster, SLURM_CONF=$SLURM_CONF"
fi
for preset in default asan; do
  echo "== build: $preset"
  scripts/build.sh "$preset"
  echo "== test: $preset"
  # The scaling model's calibration tests fit 200 generated studies × 400 bootstrap replicates:
  # the code the ScalingModel tests run under the sanitizers too, repeated, at 12× the time there
  # (a third of the sanitizer run). They run in the default build.
  skip=()
  [ "$preset" = asan ] && skip=(-E '^ScalingModelCalibration[.]')
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset "$preset" -j "$(nproc)" --timeout 600 "${skip[@]}"
done
