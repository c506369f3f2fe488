"""Run outputs: readable by others, one run per directory, one run per batch job."""

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap

import pytest

from metricopt import pipeline
from metricopt.cli import cli
from metricopt.io._rundir import LOCK_NAME, RunDirBusyError, RunDirExistsError, claim_run_dir


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(directory):
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir() if p.is_file()}


def test_outputs_are_0644_under_umask_022(runner, tmp_path, umask_022):
    out = tmp_path / "run"
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "dykstra", "--out",
                                 str(out), "--quiet", "--checkpoint", str(tmp_path / "ck.npz")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["plot", str(out)])
    assert result.exit_code == 0, result.output
    modes = _modes(out)
    assert {"report.json", "iterations.csv", "clusters.csv", "solution.npz",
            "convergence.png"} <= set(modes)
    assert set(modes.values()) == {0o644}, modes
    assert stat.S_IMODE((tmp_path / "ck.npz").stat().st_mode) == 0o644


def test_out_refuses_an_earlier_run_unless_force(runner, tmp_path):
    out = tmp_path / "run"
    args = ["--method", "highs", "--out", str(out), "--quiet"]
    assert runner.invoke(cli, ["solve", "cc", "karate", *args]).exit_code == 0
    (out / "notes.txt").write_text("mine")
    result = runner.invoke(cli, ["solve", "sc", "karate", *args])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "--force" in lines[0]
    result = runner.invoke(cli, ["solve", "sc", "karate", *args, "--force"])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert "cut.csv" in names and "clusters.csv" not in names  # no file of the old run
    assert (out / "notes.txt").read_text() == "mine"  # other files are left alone
    assert LOCK_NAME not in names
    report = json.loads((out / "report.json").read_text())
    assert report["problem"]["kind"] == "sc"


def test_a_failing_forced_run_keeps_the_earlier_files(tmp_path):
    out = tmp_path / "run"
    pipeline.run("karate", "cc", method="highs", out=out)
    with pytest.raises(Exception):
        pipeline.run(str(tmp_path / "missing.txt"), "cc", method="highs", out=out, force=True)
    assert (out / "report.json").is_file() and not (out / LOCK_NAME).exists()


def test_a_busy_directory_is_refused_and_a_stale_lock_taken_over(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    with claim_run_dir(out):
        with pytest.raises(RunDirBusyError):
            pipeline.run("karate", "cc", method="highs", out=out)
    assert not (out / LOCK_NAME).exists()
    # a lock of a process that no longer exists on this host
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (out / LOCK_NAME).write_text(json.dumps({"host": socket.gethostname(),
                                             "pid": int(dead.stdout)}))
    pipeline.run("karate", "cc", method="highs", out=out)
    assert (out / "report.json").is_file() and not (out / LOCK_NAME).exists()
    with pytest.raises(RunDirExistsError):
        pipeline.run("karate", "cc", method="highs", out=out)


MANIFEST = textwrap.dedent("""\
    id,graph,problem,method,seed
    k-cc,karate,cc,highs,0
    k-cd,karate,cd,highs,0
    d-cc,dolphins,cc,highs-lazy,0
    d-cd,dolphins,cd,highs,0
    l-cd,lesmis,cd,highs,0
    f-cd,football,cd,highs,0
    """)


@pytest.mark.slow  # 9 s; test_batch.py keeps a job run by another batch in the default run
def test_two_concurrent_batches_run_each_job_once(tmp_path, umask_022):
    manifest = tmp_path / "jobs.csv"
    manifest.write_text(MANIFEST)
    procs = [subprocess.Popen([sys.executable, "-m", "metricopt", "batch", str(manifest),
                               "--jobs", "1", "--quiet", "--json", "--summary",
                               str(tmp_path / f"summary-{k}.csv")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    rows = [json.loads(out) for out, _ in outputs]
    for job in ("k-cc", "k-cd", "d-cc", "d-cd", "l-cd", "f-cd"):
        states = [r["state"] for batch in rows for r in batch if r["job"] == job]
        assert sorted(states) == ["done", "skipped"], (job, states)
    runs = tmp_path / "jobs-runs"
    for job_dir in runs.iterdir():
        assert set(_modes(job_dir).values()) == {0o644}
        assert not (job_dir / LOCK_NAME).exists()
    # resumed: every job skipped, and the summary keeps their timings
    again = subprocess.run([sys.executable, "-m", "metricopt", "batch", str(manifest), "--quiet",
                            "--json"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert {r["state"] for r in resumed} == {"skipped"}
    assert all(isinstance(r["seconds"], float) and r["seconds"] > 0 for r in resumed)
    summary = (tmp_path / "jobs-summary.csv").read_text().splitlines()
    header = summary[0].split(",")
    col = header.index("seconds")
    assert all(line.split(",")[col] for line in summary[1:])
