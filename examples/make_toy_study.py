#!/usr/bin/env python3
"""Make a small but real scaling study: a data-parallel logistic-regression training on a
deterministic synthetic data set, run with 1, 2 and 4 worker processes (strong scaling: the global
batch is fixed and split across workers; gradients are averaged through a pipe every step, as an
all-reduce would), 3 repeats each. Each run is written as a scalelens run folder (docs/DESIGN.md):
scalelens.json, epochs.csv, steps.csv, ranks/<rank>.json and nodes/<host>/host.csv.

Standard library only, so it runs on any machine with Python 3. Until `scalelens run` (issue 4)
and the MPI example (issue 6) land, this is how the bundled example study was produced:

    python3 examples/make_toy_study.py examples/toy-study
"""
import json
import math
import multiprocessing as mp
import os
import random
import socket
import sys
import threading
import time

FEATURES = 16
SAMPLES = 2048          # per epoch, global
GLOBAL_BATCH = 256
EPOCHS = 4
LEARNING_RATE = 0.5


def make_data():
    rng = random.Random(42)
    w_true = [rng.uniform(-1, 1) for _ in range(FEATURES)]
    xs, ys = [], []
    for _ in range(SAMPLES):
        x = [rng.gauss(0, 1) for _ in range(FEATURES)]
        z = sum(a * b for a, b in zip(w_true, x))
        xs.append(x)
        ys.append(1.0 if rng.random() < 1 / (1 + math.exp(-z)) else 0.0)
    return xs, ys


def gradient(w, xs, ys):
    g = [0.0] * FEATURES
    loss = 0.0
    for x, y in zip(xs, ys):
        # Repeat the forward pass to give each sample a realistic amount of compute.
        for _ in range(40):
            z = sum(a * b for a, b in zip(w, x))
        p = 1 / (1 + math.exp(-z))
        loss -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
        for k in range(FEATURES):
            g[k] += (p - y) * x[k]
    return g, loss


def worker(rank, world, conn, run_dir, barrier):
    xs, ys = make_data()
    w = [0.0] * FEATURES
    per_rank = GLOBAL_BATCH // world
    epochs, steps = [], []
    barrier.wait()
    step_id = 0
    for epoch in range(EPOCHS):
        e0 = time.time_ns()
        seen = 0
        for start in range(0, SAMPLES, GLOBAL_BATCH):
            s0 = time.time_ns()
            lo = start + rank * per_rank
            g, _ = gradient(w, xs[lo:lo + per_rank], ys[lo:lo + per_rank])
            conn.send(g)             # "all-reduce" through the coordinator
            g = conn.recv()
            w = [a - LEARNING_RATE * b / GLOBAL_BATCH for a, b in zip(w, g)]
            seen += per_rank
            steps.append((rank, step_id, s0, time.time_ns(), per_rank))
            step_id += 1
        epochs.append((rank, epoch, e0, time.time_ns(), seen))
    _, loss = gradient(w, xs, ys)
    with open(os.path.join(run_dir, "epochs.csv"), "a") as f:
        for r in epochs:
            f.write(",".join(map(str, r)) + "\n")
    with open(os.path.join(run_dir, "steps.csv"), "a") as f:
        for r in steps:
            f.write(",".join(map(str, r)) + "\n")
    conn.send(("done", loss / SAMPLES))


def cpu_times():
    with open("/proc/stat") as f:
        parts = [int(v) for v in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return sum(parts), idle


def sample_host(path, stop):
    with open(path, "w") as f:
        f.write("t_ns,cpu_util_pct,mem_used_bytes,cpu_energy_uj\n")
        last = cpu_times()
        while not stop.wait(0.05):
            now = cpu_times()
            busy = 100.0 * (1 - (now[1] - last[1]) / max(1, now[0] - last[0]))
            last = now
            mem = 0
            with open("/proc/meminfo") as m:
                info = dict(line.split(":", 1) for line in m)
            mem = (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) * 1024
            f.write(f"{time.time_ns()},{busy:.1f},{mem},\n")


def run_once(root, world, repeat):
    host = socket.gethostname()
    run_id = f"toy-{world}r-{repeat}"
    run_dir = os.path.join(root, run_id)
    os.makedirs(os.path.join(run_dir, "ranks"), exist_ok=True)
    os.makedirs(os.path.join(run_dir, "nodes", host), exist_ok=True)
    for name, header in (("epochs.csv", "rank,epoch,start_ns,end_ns,samples"),
                         ("steps.csv", "rank,step,start_ns,end_ns,samples")):
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(header + "\n")
    stop = threading.Event()
    sampler = threading.Thread(target=sample_host, args=(os.path.join(run_dir, "nodes", host, "host.csv"), stop))
    sampler.start()
    start = time.time_ns()
    barrier = mp.Barrier(world)
    pipes = [mp.Pipe() for _ in range(world)]
    procs = [mp.Process(target=worker, args=(r, world, pipes[r][1], run_dir, barrier)) for r in range(world)]
    for p in procs:
        p.start()
    loss = None
    while True:
        grads = [pipes[r][0].recv() for r in range(world)]
        if isinstance(grads[0], tuple):
            loss = grads[0][1]
            break
        total = [sum(col) for col in zip(*grads)]
        for r in range(world):
            pipes[r][0].send(total)
    for p in procs:
        p.join()
    end = time.time_ns()
    stop.set()
    sampler.join()
    for r, p in enumerate(procs):
        with open(os.path.join(run_dir, "ranks", f"{r}.json"), "w") as f:
            json.dump({"schema": "scalelens.rank/1", "rank": r, "host": host, "local_rank": r,
                       "start_ns": start, "end_ns": end, "exit_status": p.exitcode}, f)
    manifest = {"schema": "scalelens.run/1", "run_id": run_id, "label": "toy-logreg", "world_size": world,
                "nodes": 1, "gpus_per_node": world, "global_batch_size": GLOBAL_BATCH,
                "samples_per_epoch": SAMPLES, "scaling": "strong", "start_ns": start, "end_ns": end,
                "exit_status": 0, "command": ["python3", "examples/make_toy_study.py"], "hosts": [host],
                "cores": os.cpu_count(), "final_loss": loss}
    tmp = os.path.join(run_dir, "scalelens.json.tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2)
    os.replace(tmp, os.path.join(run_dir, "scalelens.json"))
    print(f"{run_id}: {(end - start) / 1e9:.2f} s, final loss {loss:.4f}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "toy-study"
    for world in (1, 2, 4):
        for repeat in range(3):
            run_once(root, world, repeat)


if __name__ == "__main__":
    main()
