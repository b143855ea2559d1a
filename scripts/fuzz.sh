#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each reader for a bounded time:
# the Kineto trace reader (trace_reader_fuzzer) and every other input reader (input_reader_fuzzer,
# one run per format: run_csv manifest rank_record mlperf nvsmi itwinai_csv itwinai_mlflow
# summary_json sweep_json, and gzip: the streaming and whole-buffer inflaters against each other).
# Each corpus is seeded from fuzz/corpus/<reader>/ (small hand-written inputs in each format) and,
# where it has that format, from the real data (SCALELENS_REALDATA, else ../shared/data), cut to
# the first 16 KiB; the growing corpora live in the build folder, never in the repository.
# Readers run SCALELENS_JOBS at a time (default 2). Exit status non-zero on a crash, with the
# reproducer in BUILD_DIR/artifacts/<reader>/ and the log in BUILD_DIR/logs/<reader>.log; a crash
# found becomes a regression input in fuzz/regressions/<reader>/ (tests/unit/fuzz_regressions_test.cpp).
# Usage: scripts/fuzz.sh [SECONDS_PER_READER=20] [BUILD_DIR=build/fuzz] [READER...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
build=${2:-build/fuzz}
shift $(( $# > 2 ? 2 : $# ))
readers=("$@")
if [ ${#readers[@]} -eq 0 ]; then
  readers=(trace_reader run_csv manifest rank_record mlperf nvsmi itwinai_csv itwinai_mlflow summary_json sweep_json gzip)
fi
if ! command -v clang++ > /dev/null; then
  echo "scripts/fuzz.sh: clang++ not found (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
realdata=${SCALELENS_REALDATA:-../shared/data}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DSCALELENS_BUILD_FUZZERS=ON -DSCALELENS_BUILD_TESTS=OFF -DSCALELENS_BUILD_WEB=OFF > /dev/null
cmake --build "$build" -j "${SCALELENS_JOBS:-2}" --target trace_reader_fuzzer input_reader_fuzzer
mkdir -p "$build/logs"

# Real inputs of a reader's format, as seeds (cut: the fuzzer works on small inputs).
seed_real() {
  local reader=$1 corpus=$2 f
  [ -d "$realdata" ] || return 0
  case $reader in
    mlperf) find "$realdata/mlperf-hpc-v1.0-deepcam" -name 'result_*.txt' ;;
    trace_reader) find "$realdata/kineto" -name '*.json' -size -2M ;;
    *) ;;
  esac | while read -r f; do
    head -c 16384 "$f" > "$corpus/real-$(echo "$f" | md5sum | cut -c1-12)"
  done
}

run_one() {
  local reader=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1/ binary dict
  mkdir -p "$corpus" "$artifacts"
  cp -n fuzz/corpus/"$reader"/* "$corpus"/
  seed_real "$reader" "$corpus"
  if [ "$reader" = trace_reader ]; then
    binary=$build/fuzz/trace_reader_fuzzer dict=fuzz/kineto.dict
  else
    binary=$build/fuzz/input_reader_fuzzer dict=fuzz/inputs.dict
  fi
  if SCALELENS_FUZZ_READER=$reader ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$binary" "$corpus" -dict="$dict" -max_total_time="$seconds" -max_len=16384 -timeout=20 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts" > "$build/logs/$reader.log" 2>&1; then
    echo "fuzz $reader: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$build/logs/$reader.log" | tail -n 1)"
  else
    echo "fuzz $reader: FAILED (log: $build/logs/$reader.log, reproducer in $artifacts)"
    tail -n 60 "$build/logs/$reader.log"
    return 1
  fi
}
export -f run_one seed_real
export build seconds realdata
printf '%s\n' "${readers[@]}" | xargs -P "${SCALELENS_JOBS:-2}" -I{} bash -c 'run_one {}'
