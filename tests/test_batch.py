"""Batch runs from a manifest: parsing and routing, local processes, Dask, resume, failures."""

import csv
import json
import os
import textwrap
from pathlib import Path

import click
import pytest

from metricopt.batch import SUMMARY_COLUMNS, read_manifest, run_batch, write_summary
from metricopt.exceptions import InputError

METHOD = "highs"
#: Report fields that must agree between two executions of the same job.
NUMERIC_FIELDS = ("lp_value", "lower_bound", "rounded_objective", "approximation_ratio",
                  "lp_approx_ratio", "gap", "max_violation", "iterations", "status")

GOOD_ROWS = f"""\
graph,problem,method,id,params,seed
karate,cc,{METHOD},karate-cc,weights=jaccard,1
karate,cd,{METHOD},karate-cd,,1
"""
BAD_ROW = f"missing-graph.txt,cc,{METHOD},bad-graph,,1\n"


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def report(out):
    return json.loads((Path(out) / "report.json").read_text())


@pytest.fixture(scope="module")
def local_batch(tmp_path_factory):
    """Two good jobs and one bad row, run once on two local processes."""
    root = tmp_path_factory.mktemp("batch")
    manifest = write(root / "jobs.csv", GOOD_ROWS + BAD_ROW)
    jobs = read_manifest(manifest)
    seen = []
    rows = run_batch(jobs, n_jobs=2, progress=lambda counts, row: seen.append((counts.finished, row)))
    return manifest, jobs, rows, seen


# ------------------------------------------------------------------ manifest
def test_csv_manifest_routing(tmp_path):
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "tri.txt").write_text("1 2\n2 3\n3 1\n")
    manifest = write(tmp_path / "m.csv", """\
        # comment lines are ignored
        graph,problem,method,params,tol,round,format
        graphs/tri.txt,cc,dykstra,weights=unit; gamma=2; solver.delta=1; round_tries=3,1e-5,pivot,edgelist
        karate,sc,,,,,
        """)
    first, second = read_manifest(manifest)
    assert first.graph == str(tmp_path / "graphs" / "tri.txt")
    assert first.problem_params == {"weights": "unit"}
    assert first.solver_options == {"gamma": 2, "delta": 1, "tol": 1e-5}
    assert first.rounding == {"n_tries": 3, "method": "pivot"}
    assert first.read_options == {"fmt": "edgelist"}
    assert first.id.startswith("tri-cc-dykstra-")
    # the forced solver option is checked when the manifest is read, not after the input
    assert "Unknown option(s) for method 'dykstra': delta" in first.error
    assert second.error is None
    assert Path(first.out) == tmp_path / "m-runs" / first.id
    assert (second.graph, second.method, second.id) == ("karate", "auto", "karate-sc-auto")
    assert second.problem_params == second.solver_options == {}


def test_toml_manifest_defaults_and_out(tmp_path):
    manifest = write(tmp_path / "m.toml", """\
        [defaults]
        method = "highs"
        seed = 3
        params = { weights = "unit" }

        [[jobs]]
        graph = "karate"
        problem = "cc"
        out = "runs/k"

        [[jobs]]
        graph = "dolphins"
        problem = "cc"
        params = { epsilon = 0.02 }
        """)
    first, second = read_manifest(manifest, out_root=tmp_path / "elsewhere")
    assert first.method == second.method == "highs"
    assert first.out == str(tmp_path / "runs" / "k")
    assert Path(second.out).parent == tmp_path / "elsewhere"
    assert first.problem_params == {"weights": "unit"}
    assert second.problem_params == {"weights": "unit", "epsilon": 0.02}
    assert first.solver_options == second.solver_options == {"seed": 3}


def test_bad_rows_are_marked_not_fatal(tmp_path):
    manifest = write(tmp_path / "m.csv", """\
        graph,problem,params
        karate,xx,
        karate,cc,novalue
        karate,cc,
        """)
    jobs = read_manifest(manifest)
    assert "unknown problem 'xx'" in jobs[0].error
    assert "'novalue' is not key=value" in jobs[1].error
    assert jobs[2].error is None


@pytest.mark.parametrize("text, message", [
    ("graph,method\nkarate,highs\n", "needs a column named 'problem'"),
    ("graph,problem\nkarate,cc\nkarate,cc\n", "jobs 1 and 2 have the same id 'karate-cc-auto'"),
    ("graph,problem\n", "lists no jobs"),
])
def test_manifest_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_manifest(write(tmp_path / "m.csv", text))


# ------------------------------------------------------------------ running
def test_bad_row_does_not_stop_the_others(local_batch):
    manifest, jobs, rows, seen = local_batch
    states = {row["job"]: row["state"] for row in rows}
    assert states == {"karate-cc": "done", "karate-cd": "done", "bad-graph": "failed"}
    bad = rows[2]
    assert bad["error"].startswith("InputError: File not found: missing-graph.txt")
    for job in jobs[:2]:
        rep = report(job.out)
        assert rep["method"] == METHOD and rep["success"] is True
        assert rows[jobs.index(job)]["lp_value"] == rep["lp_value"]
    assert not (Path(jobs[2].out) / "report.json").exists()
    assert seen[0] == (0, None) and seen[-1][0] == 3


def test_local_processes_and_dask_give_identical_reports(local_batch, tmp_path):
    distributed = pytest.importorskip("distributed")
    manifest, jobs, _, _ = local_batch
    good = write(tmp_path / "good.csv", GOOD_ROWS)
    dask_jobs = read_manifest(good, out_root=tmp_path / "dask")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        rows = run_batch(dask_jobs, scheduler=cluster.scheduler_address)
    assert [row["state"] for row in rows] == ["done", "done"]
    for local, remote in zip(jobs[:2], dask_jobs):
        a, b = report(local.out), report(remote.out)
        assert {k: a[k] for k in NUMERIC_FIELDS} == {k: b[k] for k in NUMERIC_FIELDS}
        assert a["problem"] == b["problem"] and a["graph"]["n"] == b["graph"]["n"]
        assert a["rounding"]["objective"] == b["rounding"]["objective"]


def test_resume_skips_and_force_reruns(local_batch):
    manifest, jobs, first, _ = local_batch
    good = jobs[:2]
    stamp = {job.id: os.stat(job.report_path).st_mtime_ns for job in good}
    again = run_batch(good, n_jobs=2)
    assert [row["state"] for row in again] == ["skipped", "skipped"]
    assert [row["lp_value"] for row in again] == [row["lp_value"] for row in first[:2]]
    assert all(os.stat(job.report_path).st_mtime_ns == stamp[job.id] for job in good)
    forced = run_batch(good[:1], n_jobs=1, force=True)
    assert forced[0]["state"] == "done" and forced[0]["lp_value"] == first[0]["lp_value"]
    assert os.stat(good[0].report_path).st_mtime_ns != stamp[good[0].id]


def test_summary_csv(local_batch, tmp_path):
    _, _, rows, _ = local_batch
    path = tmp_path / "summary.csv"
    write_summary(rows, path)
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    assert tuple(records[0]) == SUMMARY_COLUMNS
    assert [r["state"] for r in records] == ["done", "done", "failed"]
    assert float(records[0]["lp_value"]) == rows[0]["lp_value"]
    assert records[2]["lp_value"] == ""


def crash_or_pass(job, **kwargs):
    """A runner for the crash test: the job named 'crash' kills its worker process."""
    if job.id == "crash":
        os._exit(3)
    return {"job": job.id, "state": "done", "error": None, "out": job.out}


def test_a_crashing_worker_is_isolated(tmp_path):
    manifest = write(tmp_path / "m.csv", "graph,problem,id\nkarate,cc,a\nkarate,cc,crash\nkarate,cc,b\n")
    rows = run_batch(read_manifest(manifest), n_jobs=2, runner=crash_or_pass)
    states = {row["job"]: (row["state"], row["error"]) for row in rows}
    assert states["a"] == states["b"] == ("done", None)
    assert states["crash"][0] == "failed" and "worker process died" in states["crash"][1]


# ------------------------------------------------------------------ command
@pytest.fixture
def cli():
    from metricopt.cli.pipelines import COMMANDS  # imported here: crash-test workers import this module

    return click.Group("metricopt", commands={c.name: c for c in COMMANDS})


def test_cli_batch_reports_failures_after_all_jobs(cli, runner, local_batch, tmp_path):
    manifest, jobs, _, _ = local_batch
    summary = tmp_path / "summary.csv"
    result = runner.invoke(cli, ["batch", str(manifest), "--summary", str(summary), "--quiet"])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: 1 of 3 jobs failed (first: bad-graph: InputError: File not found: "
        f"missing-graph.txt); summary: {summary}"
    )
    with open(summary, newline="") as fh:
        assert [r["state"] for r in csv.DictReader(fh)] == ["skipped", "skipped", "failed"]


def test_cli_batch_dry_run_and_usage(cli, runner, tmp_path):
    manifest = write(tmp_path / "m.csv", "graph,problem,gamma\nkarate,cc,2\n")
    result = runner.invoke(cli, ["batch", str(manifest), "--dry-run"], catch_exceptions=False)
    assert result.exit_code == 0 and "gamma=2" in result.stderr
    assert not (tmp_path / "m-runs").exists()
    result = runner.invoke(cli, ["batch", str(manifest), "--jobs", "2", "--scheduler", "tcp://x:1"])
    assert result.exit_code == 2


def test_metricopt_batch_end_to_end(tmp_path):
    """The installed command: workers import the CLI (and numba) before the job runs."""
    import subprocess
    import sys

    manifest = write(tmp_path / "jobs.csv", f"""\
        graph,problem,method,seed
        karate,cd,dykstra,0
        karate,cc,{METHOD},0
        """)
    proc = subprocess.run([sys.executable, "-m", "metricopt", "batch", str(manifest), "--jobs", "2",
                           "--quiet"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "jobs-summary.csv", newline="") as fh:
        assert [r["state"] for r in csv.DictReader(fh)] == ["done", "done"]


# ------------------------------------------------------------------ two batches
def test_job_run_by_another_batch_is_awaited_and_its_values_summarised(tmp_path):
    """Two batches of one manifest: the job the other batch runs is not run again, and
    this batch's summary holds its values, read from its report once it is written."""
    import socket
    import subprocess
    import sys
    import threading

    from metricopt.io._rundir import LOCK_NAME

    manifest = write(tmp_path / "m.csv", f"graph,problem,method,id\nkarate,cc,{METHOD},mine\n"
                                          f"karate,cd,{METHOD},theirs\n")
    jobs = read_manifest(manifest)
    theirs = Path(next(job.out for job in jobs if job.id == "theirs"))
    theirs.mkdir(parents=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        lock = theirs / LOCK_NAME
        lock.write_text(json.dumps({"host": socket.gethostname(), "pid": other.pid}))

        def other_batch_finishes():
            (theirs / "report.json").write_text(json.dumps(
                {"method": METHOD, "status_name": "optimal", "lp_value": 12.5,
                 "lower_bound": 12.0, "iterations": 7, "total_seconds": 3.0}))
            lock.unlink()

        def progress(counts, row):
            if row is not None and row["job"] == "theirs":
                assert row["error"] == "running in another process"
                threading.Timer(1.0, other_batch_finishes).start()

        rows = {row["job"]: row for row in run_batch(jobs, n_jobs=1, progress=progress)}
    finally:
        other.kill()
        other.wait()
    assert rows["mine"]["state"] == "done"
    assert rows["theirs"]["state"] == "skipped" and rows["theirs"]["error"] is None
    assert (rows["theirs"]["lp_value"], rows["theirs"]["lower_bound"]) == (12.5, 12.0)
    assert rows["theirs"]["iterations"] == 7 and rows["theirs"]["seconds"] == 3.0
