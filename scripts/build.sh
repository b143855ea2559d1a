#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default"): scripts/build.sh [default|asan|bench]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
# ccache, where installed, keeps compiled objects between builds and clones (CI builds a fresh
# clone twice per run); paths under the clone are hashed relative to it, so another clone hits.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
