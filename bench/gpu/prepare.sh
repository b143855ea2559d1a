#!/usr/bin/env bash
# Packs the scalelens binary with the shared libraries it needs (all but glibc's own) into
# build/device/, for `run` to carry to the device machine, whose system may lack Debian 12's fmt,
# simdjson, libdeflate or cpp-httplib. Usage: bench/gpu/prepare.sh [BUILD=build/default]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
[ -x "$build/cli/scalelens" ] || scripts/build.sh default
rm -rf build/device && mkdir -p build/device/lib
cp "$build/cli/scalelens" build/device/ && strip build/device/scalelens  # the tree that travels is capped at 64 MiB
ldd "$build/cli/scalelens" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;; *) cp -L "$lib" build/device/lib/ && strip --strip-unneeded "build/device/lib/$(basename "$lib")" ;; esac
done
du -sh build/device
