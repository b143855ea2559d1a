#!/usr/bin/env bash
# Installs what scalelens needs to build and test on Debian 12 (run as root, or with sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
packages=(
  build-essential cmake ninja-build pkg-config ccache
  libsimdjson-dev libdeflate-dev libisal-dev zlib1g-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libre2-dev libeigen3-dev
  python3
  openmpi-bin libopenmpi-dev
  libcpp-httplib-dev gnuplot-nox chromium util-linux
  clang libclang-rt-dev llvm  # scripts/fuzz.sh: clang 14, its libFuzzer runtime, llvm-symbolizer
  python3-torch  # tests/cli/torch_cli_test.cpp: real torchrun and torch.profiler, on the CPU
  pybind11-dev python3-dev python3-pandas python3-pytest  # python/: the scalelens module and its tests
  python3-nbclient python3-nbformat python3-ipykernel    # examples/notebook, executed by the Python tests
  slurm-wlm munge  # tests/cli/sweep_cli_test.cpp: a private single-node SLURM (scripts/slurm-cluster.sh)
)
# Node.js: machines that carry NodeSource's nodejs (which bundles npm) keep it; Debian's own
# packages split it in two, and the two conflict.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "scalelens setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
