#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default"): scripts/build.sh [default|asan|bench]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
# ccache, where installed, keeps compiled objects between builds and clones (CI builds a fresh
# clone twice per run); paths under the clone are hashed relative to it, so another clone hits.
# ccache stops the compile where it cannot write its folder, so only where it can.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  cache_dir=$(ccache -k cache_dir 2>/dev/null || true)
  if [ -n "$cache_dir" ] && mkdir -p "$cache_dir" 2>/dev/null && [ -w "$cache_dir" ]; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  fi
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
