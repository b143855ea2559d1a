"""The Python package against the command line: the same figures, to the last digit, on real data
(SCALELENS_REALDATA; CI sets it) and on a generated study; errors, optional pandas, the logging
helper without the compiled part."""
import json
import math
import os
import shutil
import subprocess
import sys
import time
import warnings

import pytest

import scalelens

BIN = os.environ.get("SCALELENS_BIN", "scalelens")
SOURCE = os.environ.get("SCALELENS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
REALDATA = os.environ.get("SCALELENS_REALDATA")
needs_realdata = pytest.mark.skipif(not REALDATA, reason="SCALELENS_REALDATA is not set (CI sets it)")


def cli_json(*args):
    out = subprocess.run([BIN, *args], check=True, capture_output=True, text=True, cwd=os.environ.get("TMPDIR", "/tmp"))
    return json.loads(out.stdout)


def same(a, b):
    """Equal figures: None and NaN both mean 'not measured'."""
    missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    if isinstance(a, float) or isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=0)
    return a == b


def assert_rows_equal(frame_rows, cli_rows):
    assert len(frame_rows) == len(cli_rows)
    compared = 0
    for mine, theirs in zip(frame_rows, cli_rows):
        flat = scalelens.flatten(theirs)
        for key, value in flat.items():
            if value is None and key not in mine and key in scalelens._configuration_objects():
                for part in scalelens._configuration_objects()[key]:  # null: each of its columns missing
                    assert same(mine[f"{key}_{part}"], None), (key, part)
                compared += 1
                continue
            assert key in mine, key
            if isinstance(value, list):
                assert mine[key] == value, key
            else:
                assert same(mine[key], value), (key, mine[key], value)
            compared += 1
    assert compared > 0


def records(frame):
    return frame if isinstance(frame, list) else frame.to_dict("records")


def write_study(root, repeats=2):
    """Run folders as `scalelens run` writes them: ddp at 1, 2, 4 GPUs, with GPU samples."""
    for p in (1, 2, 4):
        for r in range(repeats):
            run = os.path.join(root, f"ddp-{p}-{r}")
            os.makedirs(os.path.join(run, "nodes", "n01"))
            epoch = (40 / p) * (1 + 0.05 * math.log2(p)) * (1 + 0.01 * r)
            t0 = 1_700_000_000 * 10**9
            end = t0 + int(4 * epoch * 1e9)
            with open(os.path.join(run, "scalelens.json"), "w") as f:
                json.dump({"schema": "scalelens.run/1", "run_id": f"ddp-{p}-{r}", "label": "ddp", "world_size": p, "nodes": 1,
                           "gpus_per_node": p, "samples_per_epoch": 1000, "start_ns": t0, "end_ns": end, "status": "complete"}, f)
            with open(os.path.join(run, "epochs.csv"), "w") as f:
                f.write("rank,epoch,start_ns,end_ns,samples\n")
                for e in range(4):
                    f.write(f"0,{e},{t0 + int(e * epoch * 1e9)},{t0 + int((e + 1) * epoch * 1e9)},{1000 // p}\n")
            with open(os.path.join(run, "nodes", "n01", "gpu.csv"), "w") as f:
                f.write("t_ns,gpu,uuid,util_pct,mem_util_pct,mem_used_bytes,power_w,energy_mj,sm_clock_mhz,temp_c\n")
                for s in range(9):
                    for g in range(p):
                        t = t0 + int(s * (end - t0) / 8)
                        power = "" if s == 4 and g == 0 else f"{200 + 10 * g}"
                        f.write(f"{t},{g},GPU-{p}-{r}-{g},{60 + s},,{2**30 * (1 + s)},{power},,,\n")
    return root


@pytest.fixture
def study_dir(tmp_path):
    return write_study(str(tmp_path / "runs"))


def test_generated_study_configurations_and_runs_equal_the_cli(study_dir):
    study = scalelens.load(study_dir)
    cli = cli_json("report", study_dir, "--format", "json", "-q", "-o", os.path.join(study_dir, "..", "out"))
    assert_rows_equal(records(study.configurations()), cli["configurations"])
    assert_rows_equal(records(study.runs()), cli["runs"])
    frame = study.configurations()
    assert list(frame["world_size"]) == [1, 2, 4]
    assert "epoch_time_s_mean" in frame.columns and "gpu_util_pct_max" in frame.columns
    assert frame["karp_flatt"].isna().iloc[0]  # missing is NaN, never 0
    assert frame["peak_gpu_memory_gib"].iloc[0] == pytest.approx(9.0)
    # Utilization 60…68 % evenly over time, each end sample weighing half: 61, 64, 67.
    pcts = frame[["gpu_util_percentiles_pct_p10", "gpu_util_percentiles_pct_p50", "gpu_util_percentiles_pct_p90"]]
    assert pcts.values.tolist() == [[61, 64, 67]] * 3


@needs_realdata
def test_mlperf_configurations_equal_the_cli():
    data = os.path.join(REALDATA, "mlperf-hpc-v1.0-deepcam")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = scalelens.load(data)
    cli = cli_json("report", data, "--format", "json", "-q", "-o", os.path.join(os.environ.get("TMPDIR", "/tmp"), "sl-py-mlperf"))
    assert_rows_equal(records(study.configurations()), cli["configurations"])
    assert len(study.configurations()) == 2
    # The study's warnings reach Python's warnings module and warnings().
    assert any("batch-changed" in str(w.message) for w in caught)
    assert "batch-changed" in set(study.warnings()["code"])
    # A study-wide warning names no place: its text starts with the message, not with ": ".
    study_wide = [w for w in study.summary["warnings"] if not w.get("configuration") and not w.get("path")]
    assert study_wide, "the real data has a study-wide warning"
    said = [str(w.message) for w in caught]
    for w in study_wide:
        if w.get("severity") != "note":
            assert f"{w['message']} [{w['code']}]" in said
    assert not any(text.startswith(":") for text in said)


@needs_realdata
def test_trace_ranks_equal_scalelens_trace():
    traces = os.path.join(REALDATA, "kineto", "dlrm-8rank-v100")
    tr = scalelens.trace(traces, hta=True)
    cli = cli_json("trace", traces, "--format", "json", "--hta")
    ranks = records(tr.ranks())
    assert len(ranks) == 8
    for mine, theirs in zip(ranks, cli["ranks"]):
        for key in ("rank", "steps", "step_time_us", "comp_us", "comm_us", "overlap_us", "exposed_comm_us", "idle_us",
                    "computation_score", "overlap_ratio"):
            assert same(mine[key], theirs[key]), key
        for key, value in theirs["hta"].items():
            assert same(mine[f"hta_{key}"], value), key
    assert len(tr.steps()) >= 8
    kernels = tr.kernels(top=3)
    assert len(kernels) == 24 and set(kernels.columns) >= {"rank", "name", "type", "count", "time_us"}
    assert len(tr.collectives()) > 0


@pytest.mark.skipif(not os.environ.get("SCALELENS_MPI_TRAIN"), reason="the MPI example is not built")
def test_demo_study_configurations_equal_the_cli(tmp_path):
    """The demo study in small: the MPI example at 1 and 2 ranks, 2 repeats, measured by sweep."""
    study = tmp_path / "runs"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TMPDIR=str(tmp_path))
    subprocess.run([BIN, "sweep", "--study", str(study), "--label", "mpi-sgd-strong", "--tasks", "1,2", "--repeats", "2",
                    "--launcher", "local", "--mpi-comm", "--run-args", "--global-batch-size 256", "-q", "--",
                    os.environ["SCALELENS_MPI_TRAIN"], "--mode", "strong", "--epochs", "3", "--samples", "4096"],
                   check=True, env=env, capture_output=True)
    mine = scalelens.load(study)
    cli = cli_json("report", str(study), "--format", "json", "-q", "-o", str(tmp_path / "out"))
    assert_rows_equal(records(mine.configurations()), cli["configurations"])
    frame = mine.configurations()
    assert list(frame["runs"]) == [2, 2] and frame["pop_load_balance"].notna().all()


# `scalelens report`'s options and load()'s keywords of the same names: the same summary.json, each
# changing what it changes (a keyword load() ignored would give the default's summary).
@pytest.mark.parametrize("cli_args, kwargs, changed", [
    (["--baseline-gpus", "2"], {"baseline_gpus": 2}, lambda s: s["baseline"] == "2"),
    (["--predict", "12,64"], {"predict": [12, 64]},  # 64 is beyond 8x the largest measured (4): refused
     lambda s: [p["world_size"] for p in s["curves"][0]["predictions"]] == [12] and "64" in s["curves"][0]["refused_targets"][0]),
    (["--predict", "16"], {"predict": 16}, lambda s: [p["world_size"] for p in s["curves"][0]["predictions"]] == [16]),
    (["--objective", "energy"], {"objective": "energy"}, lambda s: s["curves"][0]["recommended"]["objective"] == "energy"),
    (["--objective", "edp"], {"objective": "edp"}, lambda s: s["curves"][0]["recommended"]["objective"] == "edp"),
    (["--min-efficiency", "0.99"], {"min_efficiency": 0.99}, lambda s: "99%" in json.dumps(s["curves"][0])),
    (["--max-gpus", "2"], {"max_gpus": 2}, lambda s: s["curves"][0]["recommended"]["world_size"] <= 2),
    (["--carbon-intensity", "400"], {"carbon_intensity": 400},
     lambda s: all(c["co2e_g"] == pytest.approx(c["energy_wh"] * 0.4) for c in s["configurations"])),
])
def test_report_options_give_the_cli_summary(study_dir, tmp_path, cli_args, kwargs, changed):
    theirs = cli_json("report", study_dir, "--format", "json", "-q", "-o", str(tmp_path / "out"), *cli_args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scalelens.ScalelensWarning)
        mine = scalelens.load(study_dir, **kwargs).summary
        default = scalelens.load(study_dir).summary
    assert mine == theirs
    assert changed(mine) and not changed(default)


def test_report_options_out_of_range_are_refused_by_name(study_dir):
    for kwargs, message in [({"baseline_gpus": 0}, "baseline_gpus must be a GPU count from 1 to 16777216, not 0"),
                            ({"baseline_gpus": 2.0}, "baseline_gpus must be a whole number of GPUs"),
                            ({"predict": [8, 0]}, "predict must be GPU counts from 1 to 16777216"),
                            ({"predict": "64"}, "predict must be a GPU count or a list of them"),
                            ({"predict": [True]}, "predict must be a whole number of GPUs"),
                            ({"objective": "cost"}, "objective must be 'time', 'energy' or 'edp'"),
                            ({"min_efficiency": float("nan")}, "min_efficiency must be a number from 0 to 1"),
                            ({"min_efficiency": 1.5}, "min_efficiency must be a number from 0 to 1"),
                            ({"max_gpus": 2**24 + 1}, "max_gpus must be a GPU count from 1 to 16777216"),
                            ({"max_gpus": 2**70}, "max_gpus must be a whole number of GPUs that fits 64 bits"),
                            ({"carbon_intensity": -1.0}, "carbon_intensity must be grams of CO2e per kWh from 0 to 100000"),
                            ({"carbon_intensity": float("inf")}, "carbon_intensity must be grams")]:
        with pytest.raises(scalelens.UsageError, match=message):
            scalelens.load(study_dir, **kwargs)


# (keyword, flag, value): options out of their rule, each refused by both front ends with the same
# words after the option's name, the flag or the keyword (analysis/option_rules.hpp holds the rules).
HOSTILE_OPTIONS = [
    ("warmup_epochs", "--warmup-epochs", 1000001),  # above the cap the command line kept alone
    ("warmup_epochs", "--warmup-epochs", -1),
    ("warmup_steps", "--warmup-steps", 2**40),
    ("warmup_steps", "--warmup-steps", -3),
    ("baseline_gpus", "--baseline-gpus", 0),
    ("baseline_gpus", "--baseline-gpus", 2**31),
    ("max_gpus", "--max-gpus", 2**24 + 1),
    ("predict", "--predict", -8),
    ("min_efficiency", "--min-efficiency", -0.5),
    ("carbon_intensity", "--carbon-intensity", 1e6),
    ("baseline", "--baseline", "fastest"),
    ("scaling", "--scaling", "both"),
    ("objective", "--objective", "cost"),
]


@pytest.mark.parametrize("keyword,flag,value", HOSTILE_OPTIONS)
def test_an_option_out_of_its_rule_is_refused_alike_by_python_and_the_command_line(study_dir, tmp_path, keyword, flag, value):
    with pytest.raises(scalelens.UsageError) as raised:
        scalelens.load(study_dir, **{keyword: value})
    said = str(raised.value)
    assert said.startswith(keyword + " must be "), said
    cli = subprocess.run([BIN, "report", study_dir, "-q", "-o", str(tmp_path / "out"), f"{flag}={value}"],
                         capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    assert flag + ": " + said[len(keyword) + 1:] in cli.stderr, (said, cli.stderr)
    assert not (tmp_path / "out").exists()


def test_warmup_out_of_its_rule_is_refused_by_compare_and_nan_is_no_count(study_dir):
    with pytest.raises(scalelens.UsageError, match="warmup_epochs must be a number of epochs from 0 to 1000000, not 1000001"):
        scalelens.compare(study_dir, study_dir, warmup_epochs=1000001)
    for bad in (float("nan"), 2.5, True):
        with pytest.raises(scalelens.UsageError, match="warmup_epochs must be a whole number of epochs, not"):
            scalelens.load(study_dir, warmup_epochs=bad)
        with pytest.raises(scalelens.UsageError, match="warmup_steps must be a whole number of steps, not"):
            scalelens.load(study_dir, warmup_steps=bad)
    with pytest.raises(scalelens.UsageError, match="warmup_epochs must be a whole number of epochs that fits 64 bits"):
        scalelens.load(study_dir, warmup_epochs=2**70)
    with pytest.raises(scalelens.UsageError, match="min_efficiency must be a number from 0 to 1, not nan"):
        scalelens.load(study_dir, min_efficiency=float("nan"))


def test_gpu_samples_long_format_with_nan_where_nothing_was_read(study_dir):
    study = scalelens.load(study_dir)
    samples = study.gpu_samples()
    assert len(samples) == 2 * 9 * (1 + 2 + 4)
    assert str(samples["t"].dtype) == "datetime64[ns]"
    one = study.gpu_samples(run_id="ddp-1-0")
    assert len(one) == 9 and one["power_w"].isna().sum() == 1
    with pytest.raises(scalelens.UsageError, match="no run 'nope'"):
        study.gpu_samples(run_id="nope")


def test_report_writes_what_the_cli_writes(study_dir, tmp_path):
    written = scalelens.load(study_dir).report(tmp_path / "py")
    assert any(p.endswith("report.html") for p in written)
    subprocess.run([BIN, "report", study_dir, "-q", "-o", str(tmp_path / "cli")], check=True, capture_output=True)
    mine = json.load(open(tmp_path / "py" / "summary.json"))
    theirs = json.load(open(tmp_path / "cli" / "summary.json"))
    assert mine["configurations"] == theirs["configurations"]


def test_report_warns_of_figures_gnuplot_could_not_draw(study_dir, tmp_path):
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot draws no figure here, so none can fail")
    # A folder where the speedup figure's file should go: gnuplot cannot write it.
    os.makedirs(tmp_path / "py" / "figures" / "speedup.svg")
    study = scalelens.load(study_dir)
    with pytest.warns(scalelens.ScalelensWarning, match="figures: gnuplot failed on speedup") as caught:
        written = study.report(tmp_path / "py")
    assert any(p.endswith("report.html") for p in written)
    assert len([w for w in caught if "figures:" in str(w.message)]) == 1
    # The command line says the same on stderr, and exits 0: the rest is written.
    os.makedirs(tmp_path / "cli" / "figures" / "speedup.svg")
    cli = subprocess.run([BIN, "report", study_dir, "-q", "-o", str(tmp_path / "cli")], capture_output=True, text=True)
    assert cli.returncode == 0 and "warning: figures: gnuplot failed on speedup" in cli.stderr


def test_help_shows_an_example_and_stubs_ship():
    assert "Example:" in scalelens.load.__doc__ and "scalelens.load(" in scalelens.load.__doc__
    here = os.path.dirname(scalelens.__file__)
    assert os.path.exists(os.path.join(here, "__init__.pyi")) and os.path.exists(os.path.join(here, "py.typed"))


def test_model_and_repr(study_dir):
    study = scalelens.load(study_dir)
    model = study.model()
    assert list(model["curve"]) == ["ddp"] and "model_formula" in model.columns
    html = study._repr_html_()
    assert "<table" in html and "3 configurations" in html
    # The charts inline: the dashboard, its data inlined, escaped into the frame's srcdoc.
    assert '<iframe sandbox="allow-scripts"' in html and "scalelens-data" in html
    assert "<script" not in html.split("<iframe", 1)[1].split('srcdoc="', 1)[1][:200]  # escaped, not live
    assert '"world_size":4' in study.dashboard_html().replace(" ", "").replace("\n", "")
    assert "3 configurations" in repr(study)


def test_compare_same_study_twice_is_unchanged(study_dir):
    rows = scalelens.compare(study_dir, study_dir)
    assert len(rows) > 0 and set(rows["verdict"]) == {"unchanged"}
    assert rows.attrs["comparison"]["schema"] == "scalelens.compare/1"


def test_errors_are_python_exceptions_with_the_cli_messages(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(scalelens.InputError, match="no usable data"):
        scalelens.load(tmp_path / "empty")
    with pytest.raises(scalelens.UsageError, match="not a valid regular expression"):
        scalelens.load(tmp_path / "empty", pattern="(")
    with pytest.raises(scalelens.UsageError, match="baseline"):
        scalelens.load(tmp_path / "empty", baseline="fastest")
    for bad in (float("nan"), float("inf"), 0.0, 1e-300):  # a NaN would pass any comparison
        with pytest.raises(scalelens.UsageError, match="global_batch_size must be a number of samples from 1e-07 to 1e\\+15"):
            scalelens.load(tmp_path / "empty", global_batch_size=bad)
        with pytest.raises(scalelens.UsageError, match="batch_per_gpu must be a number of samples from 1e-07 to 1e\\+15"):
            scalelens.load(tmp_path / "empty", batch_per_gpu=bad)
    with pytest.raises(scalelens.InputError, match="no trace could be analysed"):
        scalelens.trace(tmp_path / "empty")
    with pytest.raises(ValueError):  # UsageError is a ValueError
        scalelens.compare(tmp_path, tmp_path, threshold=5)


def test_hostile_arguments_are_refused_by_name(study_dir, tmp_path):
    """What a hostile-input hunt found: a NUL in a path made load() list one folder forever (memory
    without bound), None and bytes became folders named 'None' and "b'...'", one metric name was
    read as its letters, and a missing input was not named."""
    with pytest.raises(scalelens.UsageError, match="contains a NUL byte"):
        scalelens.load(str(study_dir) + "\0junk")
    with pytest.raises(scalelens.UsageError, match="contains a NUL byte"):
        scalelens.trace(str(study_dir) + "\0junk")
    with pytest.raises(scalelens.UsageError, match="contains a NUL byte"):
        scalelens.compare(str(study_dir) + "\0junk", study_dir)
    study = scalelens.load(os.fsencode(str(study_dir)))  # bytes: a path, as os.fspath takes it
    import shutil
    latin1 = os.path.join(os.fsencode(str(tmp_path)), b"lat\xe9")  # a name that is not UTF-8
    shutil.copytree(os.fsencode(str(study_dir)), latin1)
    assert len(scalelens.load(latin1).configurations()) == len(study.configurations())
    assert len(scalelens.load(os.fsdecode(latin1)).configurations()) == len(study.configurations())
    with pytest.raises(scalelens.UsageError, match="output_dir must be a path"):
        study.report(None)
    with pytest.raises(scalelens.UsageError, match="contains a NUL byte"):
        study.report(str(tmp_path / "o") + "\0ut")
    assert not (tmp_path / "o").exists()
    with pytest.raises(scalelens.UsageError, match="unknown metric 'speedup'"):
        scalelens.compare(study_dir, study_dir, metrics="speedup")
    assert set(scalelens.compare(study_dir, study_dir, metrics="time")["metric"]) == {"time"}
    with pytest.raises(scalelens.UsageError, match="warmup_epochs must be a number of epochs from 0 to 1000000, not -5"):
        scalelens.compare(study_dir, study_dir, warmup_epochs=-5)
    with pytest.raises(scalelens.InputError, match="/nonexistent"):
        scalelens.load("/nonexistent")
    with pytest.raises(scalelens.InputError, match="/nonexistent"):
        scalelens.trace("/nonexistent")


@needs_realdata
def test_trace_kernels_top_is_a_count():
    tr = scalelens.trace(os.path.join(REALDATA, "kineto", "dlrm-8rank-v100"))
    with pytest.raises(scalelens.UsageError, match="top must be a whole number"):
        tr.kernels(top=-1)
    assert len(tr.kernels(top=1)) == len(tr.ranks())


@needs_realdata
def test_ctrl_c_stops_a_long_load_between_files(tmp_path, monkeypatch):
    """SIGINT while reading (what interrupting a notebook kernel sends) raises KeyboardInterrupt
    soon, instead of after the whole study."""
    import signal
    import threading
    import time
    traces = os.path.join(REALDATA, "kineto", "dlrm-8rank-v100")
    # 80 traces of 1 MB, read one at a time without the cache: a few tenths of a second. Copies,
    # not links: links to one file are one file, read once (a load of 40 ms, too short to stop).
    for k in range(10):
        os.makedirs(tmp_path / f"dlrm-{k}")
        for name in os.listdir(traces):
            if name.endswith(".json"):
                shutil.copy(os.path.join(traces, name), tmp_path / f"dlrm-{k}" / name)
    monkeypatch.setenv("SCALELENS_NO_CACHE", "1")
    full_start = time.monotonic()
    scalelens.load(tmp_path, threads=1)
    full = time.monotonic() - full_start
    # The signal a quarter of the way in: the load must stop well before its end.
    timer = threading.Timer(full / 4, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            scalelens.load(tmp_path, threads=1)
    finally:
        timer.cancel()
    stopped = time.monotonic() - start
    assert stopped < 0.75 * full, (stopped, full)


# A figure no configuration has (no GPU samples, no traces, no steps) kept one column named after
# its object ("gpu_util_pct", None) where a measured one gave "gpu_util_pct_mean", ...: the
# documented columns were missing (KeyError) on exactly the studies that lack the figure.
def test_configuration_columns_do_not_depend_on_the_data(study_dir, monkeypatch):
    for run in os.listdir(study_dir):
        shutil.rmtree(os.path.join(study_dir, run, "nodes"))
    columns = ["gpu_util_pct_mean", "gpu_util_pct_max", "gpu_util_percentiles_pct_p50", "step_time_s_mean",
               "step_time_s_ci95_high", "pop_load_balance", "lost_time_s_total", "breakdown_shares_idle"]
    frame = scalelens.load(study_dir).configurations()
    for column in columns:
        assert column in frame.columns and frame[column].isna().all(), column
    assert not {"gpu_util_pct", "step_time_s", "pop"} & set(frame.columns)
    assert "epoch_time_s_mean" in frame.columns and not frame["epoch_time_s_mean"].isna().any()
    monkeypatch.setattr(scalelens, "_pd", None)
    rows = scalelens.load(study_dir).configurations()
    assert set(rows[0]) == set(frame.columns)
    assert all(rows[0][column] is None for column in columns)


def test_without_pandas_lists_of_dicts(study_dir, monkeypatch):
    monkeypatch.setattr(scalelens, "_pd", None)
    study = scalelens.load(study_dir)
    rows = study.configurations()
    assert isinstance(rows, list) and isinstance(rows[0], dict)
    assert rows[0]["karp_flatt"] is None
    assert isinstance(study.gpu_samples(run_id="ddp-1-0"), list)


def test_the_logging_helper_needs_neither_pandas_nor_the_compiled_part(tmp_path):
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import scalelens, scalelens.log, scalelens_log\n"
            "assert scalelens._scalelens is None\n"
            "assert scalelens.log.EPOCHS_HEADER == scalelens_log.EPOCHS_HEADER\n"
            "try:\n    scalelens.load('x')\nexcept ImportError as e:\n    print('missing:', e)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "the compiled module is missing" in out.stdout


def test_the_logging_helper_stamps_on_the_runs_clock():
    # Inside `scalelens run` (SCALELENS_CLOCK: the run's start and the monotonic clock then), a time
    # is the start plus the monotonic time elapsed, whatever the wall clock says: here a run started
    # in 2001, one second of monotonic time ago.
    start = 978303600000000000
    code = ("import time, scalelens.log as sl\n"
            "t = sl.now_ns()\n"
            "print(t - %d)\n" % start)
    env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"),
               SCALELENS_CLOCK="%d,%d" % (start, time.monotonic_ns() - 1000000000))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    elapsed = int(out.stdout)
    assert 1000000000 <= elapsed < 60000000000, out.stdout
