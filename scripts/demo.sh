#!/usr/bin/env bash
# The main job on the bundled example: builds scalelens and reports on examples/toy-study.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
out="${1:-build/example-report}"
build/default/cli/scalelens report examples/toy-study -o "$out"
