"""Log epochs and steps into the run folder of `scalelens run` (standard library only).

    import scalelens.log as sl     # or, with python/ on sys.path: import scalelens_log as sl
    for epoch in range(epochs):
        with sl.epoch(epoch) as e:
            ...train...
            e.samples = samples_seen_by_this_rank
    # PyTorch profiler traces into the run's trace folder:
    #   torch.profiler.profile(..., on_trace_ready=sl.torch_trace_handler())

Without `scalelens run` around the program (SCALELENS_RUN_DIR unset) every call does nothing,
so the same script runs either way. Lines follow docs/collect.md: `rank,epoch,start_ns,end_ns,samples`
in epochs.csv and `rank,step,...` in steps.csv, times in Unix-epoch nanoseconds. Each line is one
O_APPEND write, so all ranks of a node can append to one file.
"""
import contextlib
import os
import time

EPOCHS_HEADER = "rank,epoch,start_ns,end_ns,samples\n"
STEPS_HEADER = "rank,step,start_ns,end_ns,samples\n"


def run_dir():
    """The run folder, or None outside `scalelens run`."""
    return os.environ.get("SCALELENS_RUN_DIR") or None


def rank():
    """This process's rank: a launcher's RANK inside the wrapper (torchrun under one wrapper per
    node) wins over the wrapper's own SCALELENS_RANK."""
    for name in ("RANK", "SCALELENS_RANK"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def trace_dir():
    """Where profiler traces go (SCALELENS_TRACE_DIR), or None outside `scalelens run`."""
    if os.environ.get("SCALELENS_TRACE_DIR"):
        return os.environ["SCALELENS_TRACE_DIR"]
    d = run_dir()
    return os.path.join(d, "traces") if d else None


def _run_clock():
    """`scalelens run`'s clock (SCALELENS_CLOCK: "<start_ns>,<monotonic_ns at start>"), or None."""
    try:
        start, monotonic = os.environ["SCALELENS_CLOCK"].split(",")
        return int(start), int(monotonic)
    except (KeyError, ValueError):
        return None


_RUN_CLOCK = _run_clock()


def now_ns():
    """Inside `scalelens run`, the run's start plus the monotonic time elapsed since (CLOCK_MONOTONIC,
    as the wrapper's), so that a step of the wall clock during the run (an NTP step) enters no time
    logged; else the wall clock."""
    if _RUN_CLOCK is not None:
        return _RUN_CLOCK[0] + (time.monotonic_ns() - _RUN_CLOCK[1])
    return time.time_ns()


def _ensure_header(path, header):
    if os.path.exists(path):
        return
    # Written aside and linked into place: a concurrent appender never sees a file without header.
    aside = "%s.%d.%d" % (path, os.getpid(), time.monotonic_ns())
    with open(aside, "w") as f:
        f.write(header)
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(aside)


def _append(name, header, index, start_ns, end_ns, samples):
    d = run_dir()
    if not d:
        return False
    path = os.path.join(d, name)
    _ensure_header(path, header)
    s = "" if samples is None else repr(float(samples)) if not float(samples).is_integer() else str(int(samples))
    line = "%d,%d,%d,%d,%s\n" % (rank(), int(index), int(start_ns), int(end_ns), s)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return True


def log_epoch(epoch, start_ns, end_ns, samples=None):
    """Appends one epoch of this rank; returns False outside `scalelens run`."""
    return _append("epochs.csv", EPOCHS_HEADER, epoch, start_ns, end_ns, samples)


def log_step(step, start_ns, end_ns, samples=None):
    """Appends one step of this rank; returns False outside `scalelens run`."""
    return _append("steps.csv", STEPS_HEADER, step, start_ns, end_ns, samples)


class _Interval:
    def __init__(self, samples):
        self.samples = samples
        self.start_ns = now_ns()


@contextlib.contextmanager
def epoch(index, samples=None):
    """Times the body as epoch `index`; set `.samples` on the yielded object to record them."""
    iv = _Interval(samples)
    yield iv
    log_epoch(index, iv.start_ns, now_ns(), iv.samples)


@contextlib.contextmanager
def step(index, samples=None):
    """Times the body as step `index`."""
    iv = _Interval(samples)
    yield iv
    log_step(index, iv.start_ns, now_ns(), iv.samples)


def torch_trace_handler():
    """torch.profiler's tensorboard_trace_handler writing into the run's trace folder (None outside)."""
    d = trace_dir()
    if not d:
        return None
    from torch.profiler import tensorboard_trace_handler  # only when asked for: no hard dependency

    return tensorboard_trace_handler(d, worker_name="rank%d" % rank())
