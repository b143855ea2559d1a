"""scalelens in Python: the same figures as the `scalelens` command, as DataFrames.

    import scalelens
    study = scalelens.load("runs/", "mllogs/mlflow", pattern="ddp|deepspeed", warmup_epochs=1)
    study.configurations()   # one row per configuration: summary.json's keys, nested ones joined by "_"
    study.runs()             # one row per run
    study.gpu_samples()      # every GPU sample, long format (run_id, node, gpu, t, util_pct, power_w, ...)
    study.warnings()         # what was left out and why
    study.model()            # per curve: the scaling model and its predictions
    scalelens.load("runs/", baseline_gpus=2, predict=[64], carbon_intensity=400)   # report's options, by name
    study.report("out/")     # what `scalelens report -o out/` writes
    tr = scalelens.trace("traces/", hta=True)
    tr.ranks(); tr.steps(); tr.kernels(top=20); tr.collectives()
    scalelens.compare("baseline/summary.json", "runs/")   # verdicts per configuration and metric

Every figure is computed by libscalelens, the library the command line uses (no second
implementation here); this package only reshapes its JSON. With pandas installed the functions
return DataFrames (times as datetime64[ns], missing figures as NaN); without it, lists of dicts.
Errors are scalelens.InputError (nothing usable in the inputs) and scalelens.UsageError (a bad
argument), with the command line's messages. `scalelens.log` (logging epochs and steps from a
training script) needs neither pandas nor the compiled part.
"""
import functools as _functools
import json as _json
import operator as _operator
import os as _os
import warnings as _warnings

try:
    from . import _scalelens
    from ._scalelens import InputError, UsageError
    __version__ = _scalelens.__version__
except ImportError as _error:  # the logging helper works without the compiled part
    _scalelens = None
    _import_error = _error
    __version__ = "unknown"

    class InputError(Exception):
        """Nothing usable in the inputs."""

    class UsageError(ValueError):
        """A bad argument."""

try:
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the tests with pandas hidden
    _pd = None

__all__ = ["load", "trace", "compare", "Study", "Trace", "InputError", "UsageError", "flatten"]


class ScalelensWarning(UserWarning):
    """A warning of the study (the command line's warnings), also in Study.warnings()."""


def _path(value, what):
    """A path argument as the library takes it: str, bytes or os.PathLike (never str(None), which
    would name a folder 'None'), handed on as the file system's bytes, so that a name that is not
    UTF-8 (b'lat\\xe9') is read as it is."""
    try:
        path = _os.fspath(value)
    except TypeError:
        raise UsageError(f"{what} must be a path (str, bytes or os.PathLike), not {type(value).__name__}") from None
    return _os.fsencode(path)


def _names(value, what):
    """A list of names; one name given as a string is that name, not its letters."""
    if isinstance(value, (str, bytes)):
        return [_os.fsdecode(value) if isinstance(value, bytes) else value]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise UsageError(f"{what} must be a name or a list of names, not {type(value).__name__}") from None


def _whole_number(value, what, unit):
    """A whole number (of GPUs, epochs, steps) as given (an int, a numpy integer), never a float or
    bool rounded to one; its range is the library's to check, by the command line's rules."""
    if isinstance(value, bool):
        raise UsageError(f"{what} must be a whole number of {unit}, not {value!r}")
    try:
        count = _operator.index(value)
    except TypeError:
        raise UsageError(f"{what} must be a whole number of {unit}, not {value!r}") from None
    if not -2**63 <= count < 2**63:
        raise UsageError(f"{what} must be a whole number of {unit} that fits 64 bits, not {count}")
    return count


def _gpu_counts(value, what):
    """GPU counts: one count, or a list of them (as the command line's 8,64)."""
    if isinstance(value, (str, bytes)):
        raise UsageError(f"{what} must be a GPU count or a list of them, not {value!r}")
    try:
        values = list(value)
    except TypeError:
        values = [value]
    return [_whole_number(v, what, "GPUs") for v in values]


def _ext():
    if _scalelens is None:
        raise ImportError(f"scalelens: the compiled module is missing ({_import_error}); build it with CMake "
                          "(see README.md) and put <build>/python on PYTHONPATH")
    return _scalelens


def flatten(record, prefix=""):
    """One level of keys: nested objects joined with "_" (epoch_time_s.mean -> epoch_time_s_mean).
    Lists stay as they are (one cell)."""
    out = {}
    for key, value in record.items():
        name = f"{prefix}_{key}" if prefix else key
        if isinstance(value, dict):
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


@_functools.cache
def _configuration_objects():
    """The objects of a configuration in summary.json (docs/summary-schema.md) that may be null, with
    their keys, as the compiled writer writes them: a null one becomes each of its columns, None, so
    the columns do not depend on the data (a traces-only study has no epoch time, yet
    epoch_time_s_mean is a column of it)."""
    configuration = _json.loads(_ext().configuration_objects_json())["configurations"][0]
    return {key: tuple(value) for key, value in configuration.items() if isinstance(value, dict)}


def _configuration_row(configuration):
    objects = _configuration_objects()
    return flatten({key: dict.fromkeys(objects[key]) if value is None and key in objects else value
                    for key, value in configuration.items()})


def _frame(rows, time_columns=()):
    """A DataFrame with NaN for missing figures, or the rows themselves without pandas."""
    if _pd is None:
        return rows
    frame = _pd.DataFrame.from_records(rows)
    for column in frame.columns:
        if column in time_columns:
            frame[column] = _pd.to_datetime(frame[column], unit="ns")
        elif frame[column].dtype == object and all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
                                                   for v in frame[column]):
            frame[column] = frame[column].astype("float64")  # None -> NaN, never 0
    return frame


class Study:
    """A study read and analysed once, as `scalelens report` reads it (see scalelens.load)."""

    def __init__(self, handle):
        self._handle = handle
        self._summary = _json.loads(handle.summary_json())
        for w in self._summary.get("warnings", []):
            if w.get("severity") != "note":
                place = w.get("configuration") or w.get("path")  # none for a study-wide warning
                _warnings.warn(f"{place + ': ' if place else ''}{w['message']} [{w['code']}]", ScalelensWarning,
                               stacklevel=3)

    @property
    def summary(self):
        """summary.json (schema scalelens.summary/2) as a dict."""
        return self._summary

    def configurations(self):
        """One row per configuration: summary.json's keys, nested ones joined by "_"
        (epoch_time_s_mean, gpu_util_pct_max, pop_load_balance), the same columns whatever the data:
        a figure not measured is None (NaN), each of its columns where it has several."""
        return _frame([_configuration_row(c) for c in self._summary["configurations"]])

    def runs(self):
        """One row per run, with each run's own figures."""
        return _frame([flatten(r) for r in self._summary["runs"]])

    def warnings(self):
        """The warnings and notes: severity, code, message, configuration, path, line."""
        return _frame([dict(w) for w in self._summary["warnings"]])

    def model(self):
        """One row per curve: its scaling model (law, formula, parameters, fit quality) and the
        predictions (a list per row); rows without a model have NaN there."""
        rows = []
        for curve in self._summary.get("curves", []):
            row = {k: v for k, v in curve.items() if k not in ("model", "band")}
            # The same columns whether or not a curve has a model (fewer than 3 sizes: none).
            row.update({f"model_{k}": None for k in ("formula", "law", "terms", "adj_r2", "loo_rel_error", "n_points")})
            row.update(flatten(curve.get("model") or {}, "model"))
            rows.append(row)
        return _frame(rows)

    def gpu_samples(self, run_id=None):
        """Every GPU sample (of one run with run_id), long format: run_id, node, gpu, uuid, t
        (datetime64[ns]; t_ns without pandas), util_pct, mem_util_pct, mem_used_bytes, power_w,
        energy_mj, sm_clock_mhz, temp_c; NaN where the source gave no reading."""
        columns = self._handle.gpu_samples(run_id)
        if _pd is None:
            names = list(columns)
            return [dict(zip(names, values)) for values in zip(*columns.values())]
        frame = _pd.DataFrame(columns)
        frame.insert(4, "t", _pd.to_datetime(frame.pop("t_ns"), unit="ns"))
        return frame

    def report(self, output_dir):
        """Writes what `scalelens report -o output_dir` writes; returns the paths written. Figures
        gnuplot could not draw (their scripts and data are written) are a ScalelensWarning, as the
        command line's warning on stderr."""
        written, figures_failed = self._handle.write_report(_path(output_dir, "output_dir"))
        if figures_failed:
            _warnings.warn(f"figures: {figures_failed}", ScalelensWarning, stacklevel=2)
        return written

    def dashboard_html(self):
        """The interactive dashboard (what report.html shows, charts and table) for this study, as
        one self-contained HTML page."""
        return self._handle.dashboard_html()

    def _repr_html_(self):
        configs = self.configurations()
        keep = ["label", "system", "world_size", "nodes", "runs", "epoch_time_s_mean", "run_time_s_mean",
                "step_time_s_mean", "throughput_samples_per_s", "speedup", "efficiency", "computation_score",
                "gpu_util_pct_mean", "energy_j_per_sample"]
        head = (f"<p><b>scalelens</b>: {len(self._summary['configurations'])} configurations, "
                f"{len(self._summary['runs'])} runs, {self._summary['scaling']} scaling</p>")
        if _pd is None:
            return head
        shown = configs[[c for c in keep if c in configs.columns and not configs[c].isna().all()]]
        table = shown.to_html(index=False, na_rep="–", float_format=lambda v: f"{v:.4g}")
        # The charts inline: the dashboard in a sandboxed frame (scripts run, nothing else reachable).
        import html as _html
        frame = (f'<iframe sandbox="allow-scripts" style="width:100%;height:720px;border:1px solid #ddd" '
                 f'srcdoc="{_html.escape(self.dashboard_html(), quote=True)}"></iframe>')
        return head + table + frame

    def __repr__(self):
        return (f"<scalelens.Study: {len(self._summary['configurations'])} configurations, "
                f"{len(self._summary['runs'])} runs>")


def load(*inputs, pattern=None, experiment=None, run_names=(), warmup_epochs=1, warmup_steps=1,
         baseline="per-label", scaling="auto", label=None, global_batch_size=None, batch_per_gpu=None,
         baseline_gpus=None, predict=(), objective="time", min_efficiency=0.7, max_gpus=None,
         carbon_intensity=None, threads=0):
    """Reads and analyses folders of runs (what `scalelens report` reads) into a Study.

    Example:
        >>> study = scalelens.load("runs/", pattern="ddp", warmup_epochs=2)
        >>> study.configurations()[["label", "world_size", "speedup", "efficiency"]]
        >>> scalelens.load("runs/", baseline_gpus=2, predict=[64, 128], carbon_intensity=400).model()

    The keywords are `scalelens report`'s options of the same names, with the same figures:
        pattern, experiment, run_names: which runs (--pattern, --experiment, --run-names)
        warmup_epochs, warmup_steps: left out at the start of each run
        baseline: "per-label" (each label's smallest GPU count) or "common" (--baseline)
        baseline_gpus: measure speedup against this GPU count (--baseline-gpus N)
        scaling: "auto", "strong" or "weak" (--scaling)
        label, global_batch_size, batch_per_gpu: for runs that do not state them
        predict: GPU counts (one or a list) to predict with each curve's scaling model (--predict;
            default 2x and 4x the largest measured; at most 8x it)
        objective: what the recommended GPU count per curve minimises: "time", "energy" or "edp"
            (energy x time) (--objective)
        min_efficiency: the recommendation keeps to GPU counts at least this efficient, 0..1
            (--min-efficiency)
        max_gpus: the recommendation keeps to at most this many GPUs (--max-gpus)
        carbon_intensity: grams of CO2e per kWh of the electricity used: CO2e per configuration
            (--carbon-intensity)
        threads: reader threads (0: every core this process may use)

    Raises InputError when nothing usable was found, UsageError for a bad argument. The study's
    warnings go to Study.warnings() and to Python's warnings module."""
    handle = _ext().load([_path(i, "input") for i in inputs], pattern=pattern, experiment=experiment,
                         run_names=_names(run_names, "run_names"),
                         warmup_epochs=_whole_number(warmup_epochs, "warmup_epochs", "epochs"),
                         warmup_steps=_whole_number(warmup_steps, "warmup_steps", "steps"), baseline=baseline, scaling=scaling,
                         label=label, global_batch_size=global_batch_size, batch_per_gpu=batch_per_gpu,
                         baseline_gpus=None if baseline_gpus is None else _whole_number(baseline_gpus, "baseline_gpus", "GPUs"),
                         predict=_gpu_counts(predict, "predict"), objective=objective, min_efficiency=min_efficiency,
                         max_gpus=None if max_gpus is None else _whole_number(max_gpus, "max_gpus", "GPUs"),
                         carbon_intensity=carbon_intensity, threads=threads)
    return Study(handle)


class Trace:
    """PyTorch profiler traces analysed per rank (see scalelens.trace)."""

    def __init__(self, data):
        self._data = data

    @property
    def data(self):
        """`scalelens trace --format json` as a dict."""
        return self._data

    def ranks(self):
        """One row per rank: step time, computation, communication, overlap, idle (µs summed over
        the analysed steps), computation score; HTA's figures as hta_* with hta=True."""
        return _frame([flatten({k: v for k, v in r.items() if not isinstance(v, list)}) for r in self._data["ranks"]])

    def steps(self):
        """One row per rank and profiler step."""
        rows = []
        for r in self._data["ranks"]:
            for s in r.get("per_step", []):
                rows.append({"rank": r["rank"], "file": r["file"], **flatten(s)})
        return _frame(rows)

    def kernels(self, top=None):
        """One row per rank and kernel name: class, calls, time_us; the `top` longest per rank."""
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            raise UsageError(f"top must be a whole number of kernels, 1 or more, not {top!r}")
        rows = []
        for r in self._data["ranks"]:
            kernels = sorted(r.get("kernels", []), key=lambda k: -k.get("time_us", 0))
            for k in kernels[:top] if top else kernels:
                rows.append({"rank": r["rank"], **flatten(k)})
        return _frame(rows)

    def collectives(self):
        """One row per rank and collective (AllReduce, ...): calls, time, bytes, bandwidth."""
        rows = []
        for r in self._data["ranks"]:
            for c in r.get("collectives", []):
                rows.append({"rank": r["rank"], **flatten(c)})
        return _frame(rows)


def trace(*paths, hta=False, comm_kernel_regex=None, threads=0, cache=True):
    """Analyses PyTorch profiler traces (files or folders) as `scalelens trace` does.

    Example:
        >>> tr = scalelens.trace("traces/", hta=True)
        >>> tr.ranks()[["rank", "computation_score", "hta_idle_pct"]]
    """
    text = _ext().trace_json([_path(p, "path") for p in paths], hta=hta, comm_kernel_regex=comm_kernel_regex, threads=threads, cache=cache)
    return Trace(_json.loads(text))


def compare(before, after, threshold=0.05, metrics=(), kernels=10, warmup_epochs=1, threads=0):
    """`scalelens compare`: one row per configuration and metric with before, after, rel_change,
    ci_low, ci_high and verdict (regressed, improved, unchanged, inconclusive).

    Example:
        >>> rows = scalelens.compare("baseline/summary.json", "runs/", threshold=0.05)
        >>> rows[rows.verdict == "regressed"]
    The whole scalelens.compare/1 document is in the frame's attrs["comparison"] (pandas) ."""
    data = _json.loads(_ext().compare_json(_path(before, "before"), _path(after, "after"), threshold=threshold,
                                           metrics=_names(metrics, "metrics"),
                                           kernels=kernels, warmup_epochs=_whole_number(warmup_epochs, "warmup_epochs", "epochs"),
                                           threads=threads))
    rows = []
    for c in data["configurations"]:
        for m in c["metrics"]:
            rows.append({"label": c["label"], "label_after": c["label_after"], "system": c["system"],
                         "world_size": c["world_size"], **m})
    frame = _frame(rows)
    if _pd is not None:
        frame.attrs["comparison"] = data
    return frame
