#!/usr/bin/env bash
# The one device check of issue 3 (and of the NVML monitor): profile a real DDP training on the
# GPU with torch.profiler, once NCCL with 1 rank and once gloo with 2 ranks sharing the GPU, the
# second under `scalelens run` so the run folder has NVML samples too; then `scalelens trace` on
# the traces where the carried binary runs. Everything worth keeping goes to $OUT (at most 8 files).
# Here: bench/gpu/prepare.sh; then through the device tool:
#   run(command="bash bench/gpu/run_on_device.sh", carry=["build/device"], timeout_s=420)
# Back here: tar -xzf <files_at>/gpu-check.tar.gz -C /tmp and `scalelens trace` / `report` on it.
set -uo pipefail
out=${OUT:-/tmp/gpu-out}
work=/tmp/gpu-check
rm -rf "$work" && mkdir -p "$work/traces" "$out"
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$PWD/build/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$PWD/build/device/scalelens
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  "$bin" --version || echo "carried scalelens does not run here"; } > "$out/env.txt" 2>&1
cat "$out/env.txt"
script=$PWD/examples/torch-ddp/profile_ddp.py
echo "== NCCL, 1 rank"
timeout 180 torchrun --standalone --nproc_per_node=1 "$script" --backend nccl --out "$work/traces/nccl-1" 2>&1 | tail -20
echo "== gloo, 2 ranks on one GPU, under scalelens run"
if "$bin" --version > /dev/null 2>&1; then
  # Traces go into the run folder (SCALELENS_TRACE_DIR), so the report gets their breakdown and MFU.
  (cd "$work" && timeout 240 "$bin" run --study runs --label gloo-ddp --interval 0.2 -- \
     torchrun --standalone --nproc_per_node=2 "$script" --backend gloo) 2>&1 | tail -20
  mkdir -p "$work/traces/gloo-2" && cp "$work"/runs/*/traces/*.pt.trace.json* "$work/traces/gloo-2/" 2>/dev/null
  for d in nccl-1 gloo-2; do
    echo "== scalelens trace $d"
    "$bin" trace "$work/traces/$d" --kernels 10 --hta --no-cache 2>&1 | tee "$out/trace-$d.txt" | head -60
  done
  "$bin" report "$work/runs" -o "$work/report" -q 2>&1 | tee "$out/report.txt"
else
  timeout 240 torchrun --standalone --nproc_per_node=2 "$script" --backend gloo --out "$work/traces/gloo-2" 2>&1 | tail -20
fi
tar -C "$work" --exclude=report -czf "$out/gpu-check.tar.gz" . && ls -la "$out"
