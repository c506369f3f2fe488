"""check-metric: the triangle-inequality check against a pure-Python count, the planted
violation, and the repair by metric nearness whose output passes the check."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metricopt
from metricopt.cli import cli
from metricopt.exceptions import InputError, InvalidParameterError
from metricopt.metric_check import check_metric, repair_metric
from naive_metric import violated_triplets, worst_detours

LABELS = [f"p{i}" for i in range(12)]


def euclidean(n, seed=0):
    points = np.random.default_rng(seed).random((n, 3))
    return np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))


def planted():
    """12 Euclidean points with the distance of p2 and p9 made far too large."""
    d = euclidean(12)
    d[2, 9] = d[9, 2] = 4.0
    return d


def write_csv(path, d, labels=LABELS):
    rows = [",".join(labels)] + [",".join(repr(float(v)) for v in row) for row in d]
    path.write_text("\n".join(rows) + "\n")
    return path


@settings(deadline=None, max_examples=60)  # the first example loads the numba kernel
@given(st.integers(3, 9), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1e-9, 0.05]))
def test_count_matches_the_reference(n, seed, tol):
    rng = np.random.default_rng(seed)
    d = rng.integers(0, 5, (n, n)).astype(float)  # small integers: many exact ties
    d = np.triu(d, 1) + np.triu(d, 1).T
    result = check_metric(d, tol=tol, top=n * n)
    threshold = tol * d.max()
    count, worst = violated_triplets(d.tolist(), threshold)
    assert result.violated_triplets == count
    assert result.is_metric == (count == 0)
    assert result.max_violation == pytest.approx(max(worst, 0.0))
    detours = worst_detours(d.tolist(), threshold)
    assert {(v["i"], v["j"]) for v in result.violations} == set(detours)
    for v in result.violations:
        assert v["excess"] == detours[(v["i"], v["j"])][0]
        assert v["excess"] == v["d_ij"] - v["d_ik"] - v["d_kj"]
        assert d[v["i"], v["k"]] == v["d_ik"] and d[v["k"], v["j"]] == v["d_kj"]
    excesses = [v["excess"] for v in result.violations]
    assert excesses == sorted(excesses, reverse=True)


def test_planted_violation_is_found_with_its_labels(tmp_path):
    d = planted()
    result = check_metric(write_csv(tmp_path / "d.csv", d), top=3)
    count, _ = violated_triplets(d.tolist(), 1e-9 * d.max())
    assert not result.is_metric and result.violated_triplets == count == 10
    top = result.violations[0]
    assert (top["i"], top["j"]) == ("p2", "p9")
    k = LABELS.index(top["k"])
    assert top["excess"] == pytest.approx(4.0 - d[2, k] - d[k, 9])
    assert top["excess"] == pytest.approx(4.0 - min(d[2, m] + d[m, 9] for m in range(12)
                                                    if m not in (2, 9)))
    assert check_metric(euclidean(12)).is_metric


def test_tolerance_and_parameter_checks():
    d = np.array([[0, 1, 2 + 1e-12], [1, 0, 1], [2 + 1e-12, 1, 0]])
    assert check_metric(d).is_metric  # round-off, not a violation
    assert check_metric(d, tol=0).violated_triplets == 1
    with pytest.raises(InvalidParameterError, match="'tol'"):
        check_metric(d, tol=-1)
    with pytest.raises(InvalidParameterError, match="'top'"):
        check_metric(d, top=1.5)
    with pytest.raises(InputError, match="negative"):
        check_metric(np.array([[0, -1.0], [-1.0, 0]]))


@pytest.mark.parametrize("p, method", [(1, "highs"), (2, "auto")])
def test_repair_gives_a_metric_near_the_input(p, method):
    d = planted()
    repaired = repair_metric(d, p=p, method=method)
    assert repaired.check.is_metric
    assert check_metric(repaired.matrix, tol=0).max_violation <= 1e-12
    change = np.abs(repaired.matrix - d)[np.triu_indices(12, 1)]
    assert repaired.distance == pytest.approx((change ** p).sum() ** (1 / p))
    assert repaired.lower_bound <= repaired.objective * (1 + 1e-9)
    if p == 1:  # lowering d_29 to its shortest detour is optimal for the l1 distance
        assert repaired.objective == pytest.approx(check_metric(d).max_violation, rel=1e-7)


def test_cli_check_repair_and_check_again(runner, tmp_path):
    source = write_csv(tmp_path / "d.csv", planted())
    result = runner.invoke(cli, ["check-metric", str(source)])
    assert result.exit_code == 0, result.stderr
    assert "not a metric: 10 violated triplets" in result.stdout
    assert any(line.split("│")[1:3] == [" p2 ", " p9 "] for line in result.stdout.splitlines()
               if "│" in line)
    out = tmp_path / "nearest.npy"
    result = runner.invoke(cli, ["check-metric", str(source), "--repair", "--p", "2", "-o",
                                 str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["check"]["violated_triplets"] == 10
    assert answer["repair"]["check"]["is_metric"] and answer["repair"]["file"] == str(out)
    again = json.loads(runner.invoke(cli, ["check-metric", str(out), "--json"]).stdout)
    assert again["check"]["is_metric"] and again["check"]["violated_triplets"] == 0
    labelled = tmp_path / "nearest.csv"
    assert runner.invoke(cli, ["check-metric", str(source), "--repair", "--p", "1",
                               "-o", str(labelled)]).exit_code == 0
    assert metricopt.read_dissimilarity(labelled).labels.tolist() == LABELS
    result = runner.invoke(cli, ["check-metric", str(labelled)])
    assert "metric: no violated triplet" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--p", "1"], "--p needs --repair"),
    (["-o", "x.npy"], "-o/--out needs --repair"),
    (["--repair", "-o", "x.txt"], "must end in .npy or .csv"),
])
def test_cli_usage_errors(runner, tmp_path, args, message):
    source = write_csv(tmp_path / "d.csv", planted())
    result = runner.invoke(cli, ["check-metric", str(source), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_cli_bad_matrix_is_one_error_line(runner, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("0,1\n2,0\n")
    result = runner.invoke(cli, ["check-metric", str(bad)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith(f"Error: {bad}: the matrix is not "
                                                             f"symmetric")
