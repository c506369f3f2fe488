"""Standard output carries only what --json asks for, in a real process.

The click runner captures Python's ``sys.stdout`` only; native libraries (highspy's
banner) write to file descriptor 1 directly, so these tests run ``python -m metricopt``
as a subprocess and parse what reaches the descriptor.
"""

import json
import os
import subprocess
import sys

import pytest


def _metricopt(*args, cwd=None, stdin=subprocess.DEVNULL):
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "metricopt", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, stdin=stdin, timeout=300)


def _json_stdout(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("method", ["auto", "highs", "highs-lazy", "dykstra", "project-forget"])
def test_solve_json_stdout_parses_for_every_backend(method):
    proc = _metricopt("solve", "cc", "karate", "--method", method, "--seed", "0", "--json",
                      "--quiet")
    report = _json_stdout(proc)
    assert report["method"] == (report["method"] if method == "auto" else method)
    assert report["lower_bound"] > 0


def test_bound_and_qp_json_stdout_parses(tmp_path):
    # sparsest cut through HiGHS (auto on karate), and the l2 QP through HiGHS's QP solver
    _json_stdout(_metricopt("bound", "sc", "karate", "--json", "--quiet"))
    rng_matrix = tmp_path / "d.csv"
    rows = [[abs(i - j) % 3 for j in range(6)] for i in range(6)]
    rng_matrix.write_text("\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    report = _json_stdout(_metricopt("solve", "mn", str(rng_matrix), "--method", "highs",
                                     "--json", "--quiet"))
    assert report["problem"]["objective"] == "l2"


def test_other_commands_json_stdout_parses(tmp_path):
    run = tmp_path / "run"
    _json_stdout(_metricopt("solve", "cc", "karate", "--method", "highs", "--seed", "0",
                            "--out", str(run), "--json"))
    _json_stdout(_metricopt("evaluate", "cc", "karate", str(run / "clusters.csv"), "--report",
                            str(run), "--json"))
    _json_stdout(_metricopt("info", "karate", "--problem", "cc", "--json"))
    _json_stdout(_metricopt("solvers", "--json"))
    _json_stdout(_metricopt("solvers", "highs", "--json"))
    _json_stdout(_metricopt("datasets", "list", "--json"))
    _json_stdout(_metricopt("datasets", "info", "karate", "--json"))
    matrix = tmp_path / "m.csv"
    matrix.write_text("0,1,5\n1,0,1\n5,1,0\n")
    answer = _json_stdout(_metricopt("check-metric", str(matrix), "--repair", "--json"))
    assert answer["check"]["violated_triplets"] == 1 and answer["repair"]["check"]["is_metric"]


@pytest.mark.parametrize("args", [
    ("solve", "cc", "karate", "--method", "highs", "--json", "--quiet"),
    ("--help",),
    ("solvers", "--json"),
    ("solvers",),
    ("solvers", "dykstra"),
    ("datasets", "list"),
])
def test_closed_pipe_ends_quietly(args):
    # the reader closes the pipe at once, as `| head -c 0` would
    proc = subprocess.Popen([sys.executable, "-m", "metricopt", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert "Broken pipe" not in err and "Traceback" not in err
