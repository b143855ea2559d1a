#!/usr/bin/env bash
# Report UI benchmark: a study of 64 configurations (8 labels x 4..512 GPUs, one 2-hour run each,
# every GPU sampled every 30 s) -> `scalelens report` -> report.html size and the time Chromium
# takes to open it and draw every view. Targets (issue 5): opens in under 2 s, under 10 MB.
# Usage: bench/report_ui.sh [BUILD_DIR=build/default] [WORK_DIR=build/bench-report-ui]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
work=${2:-build/bench-report-ui}
bin=$build/cli/scalelens
[ -x "$bin" ] || { echo "build scalelens first: $bin" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/study"
python3 - "$work/study" <<'PY'
import math, os, sys
root = sys.argv[1]
labels = ["ddp", "fsdp", "deepspeed-z1", "deepspeed-z2", "deepspeed-z3", "horovod", "horovod-fp16", "megatron-tp2"]
t0, dur, samples, gpn = 1_700_000_000 * 10**9, 7200 * 10**9, 240, 4
for li, label in enumerate(labels):
    for p in [4, 8, 16, 32, 64, 128, 256, 512]:
        run = f"{label}-{p}"
        d = os.path.join(root, run)
        os.makedirs(d)
        nodes = max(1, p // gpn)
        with open(os.path.join(d, "scalelens.json"), "w") as f:
            f.write('{"schema": "scalelens.run/1", "run_id": "%s", "label": "%s", "world_size": %d, "nodes": %d, '
                    '"gpus_per_node": %d, "samples_per_epoch": 1281167, "global_batch_size": 1024, "scaling": "strong", '
                    '"start_ns": %d, "end_ns": %d}' % (run, label, p, nodes, min(p, gpn), t0, t0 + dur))
        eff = 1 / (1 + 0.02 * (li + 1) * math.log2(p))
        epoch = dur / 10
        with open(os.path.join(d, "epochs.csv"), "w") as f:
            f.write("rank,epoch,start_ns,end_ns\n")
            for e in range(10):
                f.write(f"0,{e},{t0 + e * int(epoch)},{t0 + (e + 1) * int(epoch)}\n")
        for n in range(nodes):
            nd = os.path.join(d, "nodes", f"node{n:03d}")
            os.makedirs(nd)
            lines = ["t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n"]
            for s in range(samples):
                t = t0 + s * dur // (samples - 1)
                for g in range(min(p, gpn)):
                    u = 100 * eff * (0.9 + 0.1 * math.sin(s / 7 + g))
                    lines.append(f"{t},{g},GPU-{li:02x}{p:04x}{n:03x}{g:x},{u:.1f},,,{150 + 2.5 * u:.1f},,,\n")
            with open(os.path.join(nd, "gpu.csv"), "w") as f:
                f.writelines(lines)
PY
echo "study: $(du -sh "$work/study" | cut -f1), $(find "$work/study" -name gpu.csv | wc -l) gpu.csv files"
start=$(date +%s.%N)
"$bin" report "$work/study" -o "$work/out" -q >/dev/null
end=$(date +%s.%N)
size=$(stat -c %s "$work/out/report.html")
echo "scalelens report: $(echo "$end - $start" | bc) s; report.html: $size bytes ($(echo "scale=2; $size / 1048576" | bc) MiB)"
node tests/browser/bench_open.mjs "$PWD/$work/out/report.html" 3
