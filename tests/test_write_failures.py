"""Failed writes (a full disk, simulated) name the file the user asked for and leave the
directory usable; destinations are checked before the input is read."""

import errno
import json
import os

import pytest

from metricopt import _atomic
from metricopt.cli import _render, cli
from metricopt.io import _rundir

ENOSPC = "No space left on device"


def invoke(runner, args):
    return runner.invoke(cli, [str(a) for a in args])


def error_line(result):
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def full_disk(monkeypatch):
    """A set of file names: writing a file of one of them fails as on a full disk (the
    atomic writer's final step raises ENOSPC, naming nothing)."""
    names = set()
    original = os.replace

    def replace(src, dst, *args, **kwargs):
        if os.path.basename(os.fspath(dst)) in names:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(src, dst, *args, **kwargs)

    monkeypatch.setattr(_atomic.os, "replace", replace)
    return names


def hidden(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def solve_args(out, *extra):
    return ["solve", "cc", "karate", "--method", "dykstra", "--seed", "0", "--quiet",
            "--out", out, *extra]


def test_failed_output_names_it_and_the_rest_is_written(runner, tmp_path, full_disk):
    out = tmp_path / "run"
    full_disk.add("solution.npz")
    result = invoke(runner, solve_args(out))
    assert result.exit_code == 1, result.stderr
    assert error_line(result) == (f"Error: {out / 'solution.npz'}: {ENOSPC} "
                                  f"(iterations.csv, clusters.csv, report.json written)")
    report = json.loads((out / "report.json").read_text())
    assert report["files"] == {"iterations": "iterations.csv", "clusters": "clusters.csv",
                               "report": "report.json"}
    assert not (out / "solution.npz").exists()
    assert hidden(out) == []  # neither a temporary file nor the lock
    full_disk.clear()
    again = invoke(runner, solve_args(out, "--force"))  # the directory is not blocked
    assert again.exit_code == 0, again.stderr
    assert (out / "solution.npz").is_file()


def test_failed_report_names_it(runner, tmp_path, full_disk):
    out = tmp_path / "run"
    full_disk.add("report.json")
    result = invoke(runner, solve_args(out))
    assert result.exit_code == 1, result.stderr
    assert error_line(result) == (f"Error: {out / 'report.json'}: {ENOSPC} "
                                  f"(iterations.csv, clusters.csv, solution.npz written)")
    assert hidden(out) == []


def test_lock_that_cannot_be_written_is_removed(runner, tmp_path, monkeypatch):
    out = tmp_path / "run"

    def dump(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_rundir.json, "dump", dump)
    result = invoke(runner, solve_args(out))
    assert result.exit_code == 1, result.stderr
    assert error_line(result) == f"Error: {out}: cannot write in the directory: {ENOSPC}"
    assert hidden(out) == []  # no empty lock blocking the directory for a minute
    monkeypatch.undo()
    assert invoke(runner, solve_args(out)).exit_code == 0


def test_failed_checkpoint_names_it_and_keeps_the_run(runner, tmp_path, full_disk):
    out, ck = tmp_path / "run", tmp_path / "ck.npz"
    full_disk.add("ck.npz")
    result = invoke(runner, solve_args(out, "--checkpoint", ck))
    assert result.exit_code == 1, result.stderr
    assert error_line(result).startswith(f"Error: {ck}: {ENOSPC} (iterations.csv")
    assert (out / "report.json").is_file()
    assert hidden(tmp_path) == [] and hidden(out) == []


def test_failed_export_names_it(runner, tmp_path, full_disk):
    out, export = tmp_path / "run", tmp_path / "karate.graphml"
    full_disk.add("karate.graphml")
    result = invoke(runner, solve_args(out, "--export", export))
    assert result.exit_code == 1, result.stderr
    assert error_line(result).startswith(f"Error: {export}: {ENOSPC}")
    assert (out / "report.json").is_file()
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("flag", ["--export", "--checkpoint"])
def test_destination_checked_before_the_input_is_read(runner, tmp_path, monkeypatch, flag):
    import metricopt.io

    def read_input(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(metricopt.io, "read_input", read_input)
    name = "g.graphml" if flag == "--export" else "ck.npz"
    what = "export" if flag == "--export" else "checkpoint"
    target = tmp_path / "missing" / name
    result = invoke(runner, ["solve", "cc", "karate", "--method", "dykstra", flag, target])
    assert result.exit_code != 0
    assert error_line(result) == (f"Error: cannot write the {what} file {target}: the "
                                  f"directory {target.parent} does not exist")
    result = invoke(runner, ["solve", "cc", "karate", "--method", "dykstra", flag, tmp_path])
    assert result.exit_code != 0
    assert "is a directory" in error_line(result) or "--export" in error_line(result)


def test_out_checked_before_the_input_is_read(runner, tmp_path, monkeypatch):
    import metricopt.io

    def read_input(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(metricopt.io, "read_input", read_input)
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = invoke(runner, ["solve", "cc", "karate", "--out", blocker / "run"])
    assert result.exit_code != 0
    assert error_line(result).startswith(f"Error: cannot create output directory {blocker}")


def test_interrupted_run_says_resuming_needs_force(runner, tmp_path, monkeypatch):
    out = tmp_path / "run"

    def interrupt(self, record):
        raise KeyboardInterrupt

    monkeypatch.setattr(_render.RunProgress, "iteration", interrupt)
    args = ["solve", "cc", "karate", "--method", "dykstra", "--out", out]
    result = invoke(runner, args)
    assert result.exit_code == 130
    assert error_line(result) == (f"Error: interrupted by the user; partial results in {out} "
                                  f"(a new run into {out} needs --force)")
    monkeypatch.undo()
    assert invoke(runner, args).exit_code != 0  # as the message says
    assert invoke(runner, [*args, "--force"]).exit_code == 0
