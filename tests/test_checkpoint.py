"""The checkpoint format: safe to read, bound to its backend and instance, atomic."""

import json
import os
import zipfile

import numpy as np
import pytest

from metricopt import build_problem, read_graph
from metricopt.cli import cli
from metricopt.exceptions import InputError
from metricopt.solvers._checkpoint import (
    SPARSE_MIN_SIZE,
    problem_digest,
    read_checkpoint,
    write_checkpoint,
)
from metricopt.solvers.dykstra import solve_dykstra
from metricopt.solvers.project_forget import solve_project_forget


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


class _Marker:
    """Unpickling this creates a file: the side effect a crafted checkpoint would have."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _crafted_pickle(path, marker):
    payload = np.empty(1, dtype=object)
    payload[0] = _Marker(str(marker))
    np.savez(path, x=np.zeros(3), meta_keys=payload, meta_vals=payload, __header__=payload)


def _error_lines(result):
    return [line for line in result.stderr.splitlines() if line.strip()]


# ----------------------------------------------------------------- the library
def test_round_trip_restores_arrays_bit_for_bit(tmp_path, karate):
    problem = build_problem("cc", karate)
    digest = problem_digest(problem)
    rng = np.random.default_rng(0)
    mostly_zero = np.zeros(3 * SPARSE_MIN_SIZE)
    mostly_zero[rng.choice(mostly_zero.size, 50, replace=False)] = rng.normal(size=50)
    mostly_zero[7] = -0.0  # a negative zero survives
    arrays = {"dense": rng.normal(size=SPARSE_MIN_SIZE), "sparse": mostly_zero,
              "ints": np.arange(5, dtype=np.int64), "scalar": np.array(2.5)}
    path = tmp_path / "ck.npz"
    size = write_checkpoint(path, backend="dykstra", problem=problem, digest=digest,
                            meta={"iteration": 3, "seconds": 1.5, "gammas": [1.0, float("inf")]},
                            arrays=arrays)
    assert size == path.stat().st_size
    with np.load(path) as data:
        assert "sparse@idx" in data.files and "dense" in data.files
    meta, back = read_checkpoint(path, backend="dykstra", problem=problem, digest=digest)
    assert meta == {"iteration": 3, "seconds": 1.5, "gammas": [1.0, float("inf")]}
    for name, arr in arrays.items():
        assert back[name].dtype == arr.dtype
        assert back[name].tobytes() == arr.tobytes() and back[name].shape == arr.shape


def test_digest_tells_instances_apart(karate):
    a = build_problem("cc", karate)
    assert problem_digest(a) == problem_digest(build_problem("cc", karate))
    assert problem_digest(a) != problem_digest(build_problem("cc", karate, delta=0.1))
    assert problem_digest(a) != problem_digest(build_problem("cc", karate, weights="unit"))


def test_crafted_pickle_is_refused_and_not_executed(tmp_path, karate):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.npz"
    _crafted_pickle(path, marker)
    problem = build_problem("cc", karate)
    for solver in (solve_dykstra, solve_project_forget):
        with pytest.raises(InputError, match="pickled"):
            solver(problem, resume=str(path), max_iter=2)
    assert not marker.exists()


# project-forget's passes per oracle call are fixed so that its iterates repeat
@pytest.mark.parametrize("solver,opts", [(solve_dykstra, {}),
                                         (solve_project_forget, {"passes": 10})])
def test_resume_through_the_shared_format_reaches_the_same_answer(tmp_path, karate, solver,
                                                                  opts):
    problem = build_problem("cc", karate)
    ref = solver(problem, max_iter=12, **opts)
    path = str(tmp_path / "ck.npz")
    solver(problem, max_iter=5, checkpoint=path, **opts)
    again = solver(problem, max_iter=12, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    np.testing.assert_array_equal(again["x"], ref["x"])


# ------------------------------------------------------------ the command line
def _checkpoint_of(runner, tmp_path, *args, name="ck.npz"):
    path = tmp_path / name
    result = runner.invoke(cli, ["bound", *args, "--checkpoint", str(path), "--max-iter", "4",
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    assert path.is_file()
    return path


def _bad_cases(runner, tmp_path, karate):
    cases = {}
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    cases["empty"] = (empty, "dykstra")
    good = _checkpoint_of(runner, tmp_path, "cc", "karate", "--method", "dykstra")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases["truncated"] = (truncated, "dykstra")
    run = tmp_path / "run"
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "dykstra", "--out",
                                 str(run), "--quiet", "--max-iter", "3"])
    assert result.exit_code == 0, result.output
    cases["solution.npz"] = (run / "solution.npz", "dykstra")
    cases["dykstra file to project-forget"] = (good, "project-forget")
    pf = _checkpoint_of(runner, tmp_path, "cc", "karate", "--method", "project-forget",
                        name="pf.npz")
    cases["project-forget file to dykstra"] = (pf, "dykstra")
    text = tmp_path / "notes.npz"
    text.write_text("x y\n1 2\n")
    cases["text"] = (text, "dykstra")
    # same node count, other edges: another instance
    edges = karate.edges.copy()
    edges[0, 1] = (edges[0, 1] + 5) % karate.n
    other = tmp_path / "other.txt"
    other.write_text("".join(f"{a} {b}\n" for a, b in edges))
    cases["other graph, same n"] = (good, "dykstra", str(other))
    return cases


def test_every_bad_checkpoint_gives_one_error_line(runner, tmp_path, karate):
    for name, case in _bad_cases(runner, tmp_path, karate).items():
        path, method = case[0], case[1]
        graph = case[2] if len(case) > 2 else "karate"
        result = runner.invoke(cli, ["solve", "cc", graph, "--method", method, "--resume",
                                     str(path), "--quiet"])
        lines = _error_lines(result)
        assert result.exit_code == 1, (name, result.output, result.exception)
        assert len(lines) == 1 and lines[0].startswith("Error: "), (name, lines)
        assert "Traceback" not in result.stderr, name


def test_crafted_pickle_through_the_cli(runner, tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.npz"
    _crafted_pickle(path, marker)
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "dykstra", "--resume",
                                 str(path), "--quiet"])
    assert result.exit_code == 1
    assert _error_lines(result) == [_error_lines(result)[0]]
    assert "pickled" in result.stderr
    assert not marker.exists()


def test_checkpoint_every_reaches_the_backend(runner, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(cli, ["bound", "cc", "karate", "--method", "dykstra", "--checkpoint",
                                 str(tmp_path / "ck.npz"), "--checkpoint-every", "0.5",
                                 "--out", str(out), "--quiet", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["options"]["checkpoint_every"] == 0.5


def test_checkpoint_files_hold_no_object_arrays(tmp_path, karate):
    problem = build_problem("sc", karate)
    path = str(tmp_path / "ck.npz")
    solve_dykstra(problem, max_iter=3, checkpoint=path)
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            header = zf.read(name)[:128]
            assert b"'O'" not in header and b"|O" not in header, name
    np.load(path, allow_pickle=False)  # readable without pickle
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
