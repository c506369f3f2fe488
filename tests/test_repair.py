"""Tests of the metric repair of dense iterates: the Floyd-Warshall closure against
independent references, and feasibility of repaired points on the bundled graphs."""

import dataclasses

import numpy as np
import pytest
from scipy.sparse.csgraph import shortest_path

from metricopt.exceptions import InputError
from metricopt.graph import Graph
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.problems._pairs import n_pairs, packed_to_square, pair_arrays, square_to_packed
from metricopt.problems._triangles import max_triangle_violation
from metricopt.solvers import _repair, solve
from metricopt.solvers._repair import metric_closure, repair_dense


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


def _reference_closure(x, n):
    """Floyd-Warshall with numpy on the full symmetric matrix."""
    d = packed_to_square(x, n)
    for k in range(n):
        d = np.minimum(d, d[:, [k]] + d[[k], :])
    return square_to_packed(d)


def _brute_violation(x, n):
    """Largest ``d_ij - d_ik - d_kj`` over all triples, by broadcasting."""
    d = packed_to_square(x, n)
    return max(0.0, float(np.max(d[:, None, :] - d[:, :, None] - d[None, :, :].transpose(0, 2, 1))))


def _random_lengths(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.random(n_pairs(n)) * rng.choice([0.1, 1.0, 10.0], size=n_pairs(n))
    x[rng.random(x.size) < 0.1] = 0.0
    return x


# ------------------------------------------------------------------ metric_closure
@pytest.mark.parametrize("n", [1, 2, 3, 5, 17, 40])
def test_closure_matches_reference(n):
    x = _random_lengths(n, seed=n)
    x_in = x.copy()
    out = metric_closure(x, n)
    np.testing.assert_array_equal(x, x_in)  # input untouched
    assert out.shape == x.shape and out.dtype == np.float64
    np.testing.assert_allclose(out, _reference_closure(x, n), rtol=1e-12, atol=0)
    assert np.all(out <= x)
    assert max_triangle_violation(out, n) <= 1e-12
    if n >= 3:
        assert _brute_violation(out, n) <= 1e-12
        assert max_triangle_violation(x, n) > 0  # the test data needed repairing


@pytest.mark.parametrize("n", [5, 17, 40])
def test_closure_matches_scipy(n):
    x = _random_lengths(n, seed=100 + n) + 0.01  # positive: scipy reads dense zeros as no edge
    expected = square_to_packed(shortest_path(packed_to_square(x, n), method="D", directed=False))
    np.testing.assert_allclose(metric_closure(x, n), expected, rtol=1e-12, atol=0)


def test_closure_small_example_packed_order():
    # pairs (0,1), (0,2), (1,2): the long side 0-1 shortcuts through node 2
    np.testing.assert_array_equal(metric_closure(np.array([5.0, 1.0, 1.5]), 3), [2.5, 1.0, 1.5])
    # pairs (0,1), (0,2), (0,3), (1,2), (1,3), (2,3): the path 1-0-3-2 shortens 1-2
    x = np.array([1.0, 9.0, 1.0, 9.0, 9.0, 1.0])
    np.testing.assert_array_equal(metric_closure(x, 4), [1.0, 2.0, 1.0, 3.0, 2.0, 1.0])


@pytest.mark.parametrize("n", [3, 17, 40])
def test_closure_keeps_metric(n):
    rng = np.random.default_rng(n)
    i, j = pair_arrays(n)
    # an l1 metric on integer points and a cut metric: sums are exact in float64
    pts = rng.integers(0, 50, size=(n, 3)).astype(np.float64)
    l1 = np.abs(pts[i] - pts[j]).sum(axis=1)
    side = rng.random(n) < 0.5
    cut = (side[i] != side[j]).astype(np.float64)
    for x in (l1, cut, np.zeros(n_pairs(n)), np.full(n_pairs(n), 0.7)):
        np.testing.assert_array_equal(metric_closure(x, n), x)
    once = metric_closure(_random_lengths(n, seed=7), n)
    np.testing.assert_allclose(metric_closure(once, n), once, rtol=1e-14, atol=0)


def test_closure_rejects_bad_input():
    with pytest.raises(InputError, match="expected 3"):
        metric_closure(np.ones(4), 3)
    with pytest.raises(InputError, match="nonnegative"):
        metric_closure(np.array([1.0, -0.5, 1.0]), 3)
    with pytest.raises(InputError, match="finite"):
        metric_closure(np.array([1.0, np.nan, 1.0]), 3)


# ------------------------------------------------------------------ repair_dense
def _feasible_point(problem):
    """An exactly feasible point (sums exact in float64 where it matters)."""
    n = problem.n
    i, j = pair_arrays(n)
    if problem.kind == "cc":
        label = np.arange(n) % 3  # a clustering
        return (label[i] != label[j]).astype(np.float64)
    if problem.kind == "sc":
        side = np.arange(n) < n // 2  # a cut metric, scaled to sum n
        cut = (side[i] != side[j]).astype(np.float64)
        return cut * (problem.sum_value / cut.sum())
    pts = np.random.default_rng(3).integers(0, 64, size=(n, 2))  # an l1 metric, exact
    return np.abs(pts[i] - pts[j]).sum(axis=1) / 64.0


@pytest.mark.parametrize("kind", ["cc", "sc", "mn"])
def test_repair_noisy_point_is_feasible(kind, karate):
    p = build_problem(kind, karate)
    assert p.structure == "dense" and p.lower == 0
    rng = np.random.default_rng(0)
    x0 = _feasible_point(p)
    x = x0 + rng.normal(scale=0.05 * x0.max(), size=p.n_variables)
    assert p.max_violation(x) > 1e-3
    x_in = x.copy()
    y = repair_dense(p, x)
    np.testing.assert_array_equal(x, x_in)
    assert y is not None and y.shape == x.shape
    assert p.max_violation(y) <= 1e-12
    assert y.min() >= 0 and (not np.isfinite(p.upper) or y.max() <= p.upper)
    if kind == "sc":
        assert abs(y.sum() - p.n) <= 1e-9
    else:
        assert np.all(y <= np.clip(x, p.lower, p.upper))


@pytest.mark.parametrize("kind", ["cc", "sc", "mn"])
def test_repair_keeps_feasible_point(kind, karate):
    p = build_problem(kind, karate)
    x = _feasible_point(p)
    assert p.max_violation(x) <= 1e-12
    y = repair_dense(p, x)
    assert np.max(np.abs(y - x)) <= 1e-12


@pytest.mark.parametrize("kind", ["cc", "sc"])
def test_repair_near_optimum(kind, karate):
    """A slightly perturbed LP optimum repairs to a feasible point of nearly optimal value."""
    p = build_problem(kind, karate)
    res = solve(p, method="highs")
    opt = p.objective_value(res.x)
    rng = np.random.default_rng(1)
    x = res.x + rng.normal(scale=1e-4, size=p.n_variables)
    y = repair_dense(p, x)
    assert p.max_violation(y) <= 1e-12
    val = p.objective_value(y)
    assert val >= opt - 1e-7 * max(1.0, abs(opt))  # feasible, so no better than the optimum
    assert val - opt <= 1e-2 * max(1.0, abs(opt))


def test_repair_sparsest_cut_refusals(karate):
    p = build_problem("sc", karate)
    assert repair_dense(p, np.zeros(p.n_variables)) is None  # sum 0: cannot rescale
    assert repair_dense(p, np.full(p.n_variables, -1.0)) is None  # clipped to 0
    # one node cut off: every crossing pair becomes n / (n - 1) > 1 after rescaling
    i, j = pair_arrays(p.n)
    star = ((i == 0) | (j == 0)).astype(np.float64)
    assert repair_dense(dataclasses.replace(p, upper=1.0), star) is None
    y = repair_dense(dataclasses.replace(p, upper=2.0), star)
    np.testing.assert_allclose(y, star * p.n / (p.n - 1), rtol=1e-14)


def test_repair_not_applicable(karate):
    x_edges = np.zeros(karate.m)
    assert repair_dense(build_problem("cd", karate), x_edges) is None  # structure "edges"
    signs = np.where(np.arange(karate.m) % 3 == 0, -1.0, 1.0)
    signed = Graph(n=karate.n, edges=karate.edges, labels=karate.labels, weights=signs)
    sparse = build_problem("cc", signed)
    assert sparse.structure == "sparse"
    assert repair_dense(sparse, x_edges) is None
    p = build_problem("cc", karate)
    x = np.full(p.n_variables, 0.5)
    assert repair_dense(dataclasses.replace(p, lower=-np.inf), x) is None
    assert repair_dense(dataclasses.replace(p, lower=0.25), x) is None
    assert repair_dense(p, np.where(np.arange(x.size) == 3, np.nan, x)) is None


def test_repair_memory_guard(karate, monkeypatch):
    p = build_problem("cc", karate)
    x = np.full(p.n_variables, 0.5)
    assert repair_dense(p, x) is not None
    monkeypatch.setattr(_repair, "available_memory", lambda: 2 * 8 * p.n_variables)
    assert repair_dense(p, x) is None


def test_repair_rejects_wrong_length(karate):
    with pytest.raises(InputError, match="expected 561"):
        repair_dense(build_problem("cc", karate), np.zeros(10))


# ------------------------------------------------------------------ repair_support
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("weights", ["jaccard", "unit"])
def test_support_closure_is_the_dense_closure(karate, weights, seed):
    """The closure from the listed pairs equals the Floyd-Warshall closure of the
    completed point (every other pair at 1), and it is feasible."""
    from metricopt.problems.support import SupportPoint
    from metricopt.solvers._repair import repair_support

    problem = build_problem("cc", karate, weights=weights, layout="support")
    rng = np.random.default_rng(seed)
    x = SupportPoint(problem.n, problem.pairs, rng.uniform(0, 1.3, len(problem.pairs)), 1.0)
    assert problem.max_violation(x) > 0.1
    y = repair_support(x, max_pairs=n_pairs(problem.n))
    expected = metric_closure(np.clip(x.to_packed(), 0.0, 1.0), x.n)
    np.testing.assert_allclose(y.to_packed(), expected, rtol=0, atol=1e-12)
    assert np.all(y.values < 1.0) and problem.max_violation(y) <= 1e-12
    # a metric comes back unchanged (up to the round-off of summed paths)
    again = repair_support(y, max_pairs=n_pairs(problem.n))
    np.testing.assert_allclose(again.to_packed(), y.to_packed(), rtol=0, atol=1e-12)


def test_support_closure_refusals(karate):
    from metricopt.problems.support import SupportPoint
    from metricopt.solvers._repair import repair_support

    problem = build_problem("cc", karate, layout="support")
    zeros = SupportPoint(problem.n, problem.pairs, np.zeros(len(problem.pairs)), 1.0)
    # one connected component at distance 0: every pair of it joins the list
    assert repair_support(zeros, max_pairs=len(problem.pairs)) is None
    assert len(repair_support(zeros, max_pairs=n_pairs(problem.n)).values) == problem.n * (problem.n - 1) // 2
    assert repair_support(SupportPoint(problem.n, problem.pairs, zeros.values, 0.5)) is None


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_support_closure_on_threads_is_the_serial_closure(threads):
    """The searches dealt to threads list the serial closure's pairs in its order; a stop
    before the first share gives up."""
    from metricopt.datasets import load_bundled
    from metricopt.problems.support import SupportPoint
    from metricopt.solvers._repair import repair_support

    problem = build_problem("cc", load_bundled("lesmis"), layout="support")
    rng = np.random.default_rng(threads)
    x = SupportPoint(problem.n, problem.pairs, rng.uniform(0, 1.2, len(problem.pairs)), 1.0)
    serial = repair_support(x, max_pairs=n_pairs(problem.n), threads=1)
    got = repair_support(x, max_pairs=n_pairs(problem.n), threads=threads)
    np.testing.assert_array_equal(got.pairs, serial.pairs)
    np.testing.assert_array_equal(got.values, serial.values)
    expected = metric_closure(np.clip(x.to_packed(), 0.0, 1.0), x.n)
    np.testing.assert_allclose(got.to_packed(), expected, rtol=0, atol=1e-12)
    assert repair_support(x, max_pairs=n_pairs(problem.n), threads=threads,
                          stop=lambda: True) is None
