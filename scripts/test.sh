#!/usr/bin/env bash
# Builds the normal and the sanitizer (ASan + UBSan) builds and runs every test in both.
# Real-data tests read SCALELENS_REALDATA (../shared/data beside the clone); they skip without it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SCALELENS_REALDATA:-}" ] && [ -d ../shared/data ]; then
  export SCALELENS_REALDATA="$(cd ../shared/data && pwd)"
fi
echo "== real data: ${SCALELENS_REALDATA:-not set, real-data tests will skip}"
for preset in default asan; do
  echo "== build: $preset"
  scripts/build.sh "$preset"
  echo "== test: $preset"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset "$preset" -j "$(nproc)" --timeout 600
done
