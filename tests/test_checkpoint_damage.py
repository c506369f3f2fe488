"""A checkpoint is validated whole before a run resumes from it: every array present,
of its shape and dtype, finite, its indices in range; every header field in range.
Anything else is one ``Error:`` line and exit code 1."""

import json
import warnings

import numpy as np
import pytest

from metricopt import build_problem, read_graph
from metricopt.cli import cli
from metricopt.exceptions import InputError
from metricopt.solvers import solve

HEADER = "__header__"


@pytest.fixture(scope="module")
def problems():
    graph = read_graph("karate")
    return {kind: build_problem(kind, graph) for kind in ("cc", "cd")}


@pytest.fixture(scope="module")
def checkpoints(problems, tmp_path_factory):
    """One checkpoint per backend and state layout, after three iterations."""
    where = tmp_path_factory.mktemp("checkpoints")
    cases = {
        "dykstra": ("cc", "dykstra", {}),
        "dykstra-sparse-duals": ("cc", "dykstra", {"duals": "sparse"}),
        "dykstra-parallel": ("cc", "dykstra", {"order": "parallel"}),
        "dykstra-cd": ("cd", "dykstra", {}),
        "project-forget": ("cc", "project-forget", {}),
        "project-forget-cd": ("cd", "project-forget", {}),
        "lighttouch": ("cc", "lighttouch", {"seed": 0}),
    }
    out = {}
    for name, (kind, method, opts) in cases.items():
        path = where / f"{name}.npz"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solve(problems[kind], method, max_iter=3, checkpoint=str(path), warm_up=False,
                  **opts)
        out[name] = (problems[kind], method, opts, path)
    return out


def load(path):
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(arrays.pop(HEADER).tobytes().decode("utf-8"))
    return header, arrays


def save(path, header, arrays):
    raw = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **{HEADER: raw}, **arrays)


def resume(case, path):
    problem, method, opts, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve(problem, method, max_iter=4, resume=str(path), warm_up=False, **opts)


@pytest.mark.parametrize("name", ["dykstra", "dykstra-sparse-duals", "dykstra-parallel",
                                  "dykstra-cd", "project-forget", "project-forget-cd",
                                  "lighttouch"])
def test_whole_checkpoints_resume(checkpoints, name):
    res = resume(checkpoints[name], checkpoints[name][3])
    assert res.nit == 4


def _drop(name):
    def edit(header, arrays):
        del arrays[name]
    return edit


def _meta(field, value):
    def edit(header, arrays):
        header["meta"][field] = value
    return edit


def _array(name, change):
    def edit(header, arrays):
        arrays[name] = change(arrays[name])
    return edit


def _nan(a):
    a = a.astype(np.float64).copy()
    a.flat[0] = np.nan
    return a


DAMAGE = [
    ("dykstra", _drop("z_pair"), "it holds no array 'z_pair'"),
    ("dykstra", _drop("x"), "it holds no array 'x'"),
    ("dykstra", _drop("tri_pos"), "it holds no array 'tri_pos'"),
    ("dykstra-cd", _drop("z_wed"), "it holds no array 'z_wed'"),
    ("dykstra", _meta("iteration", 1e30), "its header field 'iteration' is 1e+30"),
    ("dykstra", _meta("iteration", -3), "its header field 'iteration' is -3"),
    ("dykstra", _meta("iteration", True), "its header field 'iteration' is True"),
    ("dykstra", _meta("seconds", "nan"), "its header field 'seconds' is nan"),
    ("dykstra", _meta("seconds", -1.0), "its header field 'seconds' is -1.0"),
    ("dykstra", _meta("stage", 7), "its header field 'stage' is 7"),
    ("dykstra", _meta("stage", -1), "its header field 'stage' is -1"),
    ("dykstra", _array("x", lambda a: a.astype(np.float32)), "its array 'x' has dtype float32"),
    ("dykstra", _array("x", lambda a: a[:-1]), "its array 'x' has shape (560,)"),
    ("dykstra", _array("z_pair", _nan), "its array 'z_pair' holds values that are not finite"),
    ("dykstra-sparse-duals", _array("tri_pos", lambda a: a + 10**9),
     "its array 'tri_pos' holds values outside"),
    ("dykstra-sparse-duals", _array("tri_val", lambda a: a[:-1]), "its array 'tri_val' has shape"),
    ("dykstra-parallel", _array("tri_start", lambda a: a[::-1].copy()),
     "'tri_start'"),
    ("project-forget", _drop("z_pair"), "it holds no array 'z_pair'"),
    ("project-forget", _drop("tri_c"), "it holds no array 'tri_c'"),
    ("project-forget", _meta("gamma", "nan"), "its header field 'gamma' is nan"),
    ("project-forget", _meta("gamma", -1.0), "its header field 'gamma' is -1.0"),
    ("project-forget", _meta("triangle_streak", -2), "its header field 'triangle_streak' is -2"),
    ("project-forget", _array("tri_a", lambda a: a + 10**6), "its array 'tri_a' holds values"),
    ("project-forget-cd", _array("act_mem", lambda a: a + 10**6),
     "its array 'act_mem' holds values"),
    ("project-forget-cd", _array("act_off", lambda a: a[::-1].copy()), "'act_off'"),
    ("project-forget-cd", _array("act_kind", lambda a: a + 5), "its array 'act_kind' holds"),
    ("lighttouch", _drop("perm"), "it holds no array 'perm'"),
    ("lighttouch", _array("perm", lambda a: a + 10**6), "its array 'perm' holds values"),
    ("lighttouch", _meta("penalty_now", -1.0), "its header field 'penalty_now' is -1.0"),
    ("lighttouch", _meta("iteration", 2.5), "its header field 'iteration' is 2.5"),
]


@pytest.mark.parametrize("name, edit, message", DAMAGE,
                         ids=[f"{d[0]}-{i}" for i, d in enumerate(DAMAGE)])
def test_damaged_checkpoint_is_refused(checkpoints, tmp_path, name, edit, message):
    header, arrays = load(checkpoints[name][3])
    edit(header, arrays)
    bad = tmp_path / "bad.npz"
    save(bad, header, arrays)
    with pytest.raises(InputError) as info:
        resume(checkpoints[name], bad)
    text = str(info.value)
    assert text.startswith(f"cannot resume from {bad}: "), text
    assert message in text, text
    assert "\n" not in text


def test_cli_refuses_a_damaged_checkpoint_in_one_line(runner, checkpoints, tmp_path):
    header, arrays = load(checkpoints["dykstra"][3])
    header["meta"]["iteration"] = 1e30
    bad = tmp_path / "bad.npz"
    save(bad, header, arrays)
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "dykstra", "--resume",
                                 str(bad), "--quiet"])
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot resume from {bad}: its "
                                                   f"header field 'iteration' is 1e+30")


# ------------------------------------------------------------------ resumed records
@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_resumed_run_continues_iterations_and_its_times_add_up(runner, tmp_path, method):
    import csv

    out, ck = tmp_path / "run", tmp_path / "ck.npz"
    base = ["solve", "cc", "karate", "--method", method, "--tol", "1e-13", "--gap-tol",
            "1e-13", "--seed", "0", "--quiet", "--out", str(out), "--checkpoint", str(ck)]
    first = runner.invoke(cli, [*base, "--max-iter", "4"])
    assert first.exit_code == 0, first.stderr
    second = runner.invoke(cli, [*base, "--max-iter", "9", "--resume", str(ck), "--force"])
    assert second.exit_code == 0, second.stderr
    with open(out / "iterations.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["iteration"]) for r in rows] == list(range(1, 10))
    seconds = [float(r["seconds"]) for r in rows]
    assert seconds == sorted(seconds)
    report = json.loads((out / "report.json").read_text())
    assert report["iterations"] == 9
    assert report["total_seconds"] >= report["solve_seconds"] + report["compile_seconds"]
    assert report["solve_seconds"] >= seconds[-1]
