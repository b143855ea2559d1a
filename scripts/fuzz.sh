#!/usr/bin/env bash
# Builds the libFuzzer target over the trace reader (clang, ASan + UBSan) and runs it for a bounded
# time over a corpus seeded from fuzz/corpus/ (hand-written small traces; the growing corpus
# lives in the build folder, never in the repository). Exit status non-zero on a crash, with the
# reproducer in build/fuzz/artifacts/.
# Usage: scripts/fuzz.sh [SECONDS=60] [BUILD_DIR=build/fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build/fuzz}
if ! command -v clang++ > /dev/null; then
  echo "scripts/fuzz.sh: clang++ not found (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DSCALELENS_BUILD_FUZZERS=ON -DSCALELENS_BUILD_TESTS=OFF -DSCALELENS_BUILD_WEB=OFF > /dev/null
cmake --build "$build" -j "${SCALELENS_JOBS:-2}" --target trace_reader_fuzzer
corpus=$build/corpus/trace_reader
mkdir -p "$corpus" "$build/artifacts"
cp -n fuzz/corpus/trace_reader/* "$corpus"/
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/fuzz/trace_reader_fuzzer" "$corpus" -dict=fuzz/kineto.dict -max_total_time="$seconds" \
  -max_len=16384 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$build/artifacts/"
