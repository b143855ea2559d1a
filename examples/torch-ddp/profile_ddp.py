"""A few profiled steps of a real DDP training, for `scalelens trace` and `scalelens report`.
Run under torchrun; one Kineto trace per rank goes to --out, by default the run folder's traces/
($SCALELENS_TRACE_DIR) when started under `scalelens run`.

  scalelens run --study runs --label ddp -- torchrun --nproc_per_node=1 examples/torch-ddp/profile_ddp.py
  torchrun --nproc_per_node=2 examples/torch-ddp/profile_ddp.py --backend gloo --out DIR   # 2 ranks, one GPU
  torchrun --nproc_per_node=2 examples/torch-ddp/profile_ddp.py --device cpu --out DIR     # no GPU: CPU, gloo

The CPU form is what the test suite runs with Debian's PyTorch; the GPU forms are the device
check of bench/gpu/run_on_device.sh.

The model is an MLP of bf16 matrix products wide enough that the GPU has real work; the input
comes through a DataLoader so the trace has data-loading ops; the profiler records FLOPs
(with_flops) so MFU can be checked against the H200's peak.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

# Epochs and steps go to the run folder through scalelens' own logger (standard library only).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import scalelens_log as sl  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default=None, choices=["nccl", "gloo"], help="default: nccl on cuda, gloo on cpu")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: the same job without a GPU (CI runs it with Debian's PyTorch)")
    ap.add_argument("--out", default=os.environ.get("SCALELENS_TRACE_DIR"),
                    help="folder for the traces, one per rank (default: $SCALELENS_TRACE_DIR, set by scalelens run)")
    ap.add_argument("--width", type=int, default=8192)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=8, help="steps per epoch")
    ap.add_argument("--epochs", type=int, default=2, help="the first is warm-up in the report")
    args = ap.parse_args()
    if not args.out:
        ap.error("--out is needed outside scalelens run (no SCALELENS_TRACE_DIR)")
    cuda = args.device == "cuda"
    backend = args.backend or ("nccl" if cuda else "gloo")

    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if cuda:
        torch.cuda.set_device(0 if backend == "gloo" else int(os.environ.get("LOCAL_RANK", 0)))
    device = torch.device(args.device)
    torch.manual_seed(rank)

    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.GELU()]
    model = DDP(torch.nn.Sequential(*layers).to(device), device_ids=[device.index] if cuda and backend == "nccl" else None)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(args.batch * (args.steps + 2), args.width), torch.randn(args.batch * (args.steps + 2), args.width))
    loader = DataLoader(data, batch_size=args.batch, shuffle=True)

    os.makedirs(args.out, exist_ok=True)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    handler = torch.profiler.tensorboard_trace_handler(args.out, worker_name=f"rank{rank}", use_gzip=True)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    t0 = time.time()
    # The profiler records steps 3-5 of the first epoch (wait 1, warm-up 1, active 3).
    with torch.profiler.profile(activities=activities, schedule=schedule, on_trace_ready=handler,
                                record_shapes=True, with_flops=True) as prof:
        for epoch in range(args.epochs):
            with sl.epoch(epoch) as logged:
                seen = 0
                for step, (x, y) in enumerate(loader):
                    if step >= args.steps:
                        break
                    with sl.step(epoch * args.steps + step, samples=len(x)):
                        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                        with torch.autocast(args.device, dtype=torch.bfloat16):
                            loss = torch.nn.functional.mse_loss(model(x), y)
                        opt.zero_grad(set_to_none=True)
                        loss.backward()
                        opt.step()
                        if cuda:
                            torch.cuda.synchronize()
                    prof.step()
                    seen += len(x)
                logged.samples = seen
    if rank == 0:
        where = f"GPU {torch.cuda.get_device_name(0)}" if cuda else "CPU"
        print(f"{world} rank(s), backend {backend}, {args.epochs} x {args.steps} steps in {time.time() - t0:.1f} s; "
              f"{where}; traces in {args.out}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
