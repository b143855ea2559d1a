#!/usr/bin/env bash
# The main job: builds scalelens and the MPI training example, measures the example at 1, 2 and
# 4 ranks (3 repeats each) with `scalelens sweep` (each run under `scalelens run --mpi-comm`), and
# writes the report.
#   scripts/demo.sh [OUTPUT_DIR]     (default build/demo; the report lands in OUTPUT_DIR/report)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
bin=build/default/cli/scalelens
train=build/default/examples/mpi-train/mpi_train
out="${1:-build/demo}"
study="$out/runs"
rm -rf "$study"
mkdir -p "$out"
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # Open MPI refuses root otherwise
fi
# mpirun's session directory goes into a private folder: another MPI job's (or user's) under /tmp
# would otherwise make Open MPI fail in orte_init.
mpi_tmp=$(mktemp -d)
trap 'rm -rf "$mpi_tmp"' EXIT
export TMPDIR="$mpi_tmp" OMPI_MCA_orte_tmpdir_base="$mpi_tmp"
# The study itself: 1, 2 and 4 ranks, 3 repeats each, one after the other on this machine, each
# under `scalelens run --mpi-comm` (resumable: `scalelens sweep --study "$study" --resume`).
"$bin" sweep --study "$study" --label mpi-sgd-strong --tasks 1,2,4 --repeats 3 --launcher local --mpi-comm \
  --run-args "--global-batch-size 256" -- "$train" --mode strong --epochs 4 --samples 32768 --hidden 192
"$bin" report "$study" -o "$out/report"
echo
echo "Open $out/report/report.html in a browser (it works offline)."
