"""LambdaCC (standard and degree-weighted) and modularity as correlation clustering.

The builder's weights and the objective of explicit clusterings are checked against
pure-Python recomputations from the definitions (and networkx's modularity); the LP
values against an LP built here with scipy (karate) and against the exact HiGHS
backend (the default backend on karate, dolphins and lesmis, three resolutions each).
"""

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import metricopt
from metricopt.exceptions import InvalidParameterError
from metricopt.pipeline import objective_scores
from metricopt.rounding import evaluate

GRAPHS = ("karate", "dolphins", "lesmis")


@pytest.fixture(scope="module")
def graphs():
    return {name: metricopt.read_graph(name) for name in GRAPHS}


def signed_weight(g, mode, resolution):
    """``{(i, j): s_ij}`` for every pair, straight from the definitions."""
    edges = {tuple(e) for e in g.edges.tolist()}
    deg = [0] * g.n
    for u, v in edges:
        deg[u] += 1
        deg[v] += 1
    m = len(edges)
    out = {}
    for i, j in itertools.combinations(range(g.n), 2):
        a = 1.0 if (i, j) in edges else 0.0
        if mode == "lambda":
            out[i, j] = 1.0 - resolution if a else -resolution
        elif mode == "lambda-degree":
            out[i, j] = a - resolution * deg[i] * deg[j]
        else:
            out[i, j] = a - resolution * deg[i] * deg[j] / (2 * m)
    return out


def naive_objective(g, mode, resolution, labels):
    """The correlation-clustering cost of ``labels``: split positive pairs, joined negative."""
    total = 0.0
    for (i, j), s in signed_weight(g, mode, resolution).items():
        together = labels[i] == labels[j]
        if s > 0 and not together:
            total += s
        elif s < 0 and together:
            total -= s
    return total


def lambdacc_linear(g, resolution, labels):
    """Veldt-Gleich-Wirth's unsigned form: edges (1 - R d_i d_j) if split, non-edges
    R d_i d_j if together."""
    edges = {tuple(e) for e in g.edges.tolist()}
    deg = np.bincount(g.edges.ravel(), minlength=g.n)
    total = 0.0
    for i, j in itertools.combinations(range(g.n), 2):
        together = labels[i] == labels[j]
        if (i, j) in edges and not together:
            total += 1.0 - resolution * deg[i] * deg[j]
        elif (i, j) not in edges and together:
            total += resolution * deg[i] * deg[j]
    return total


def nx_graph(g):
    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    G.add_edges_from(g.edges.tolist())
    return G


def communities(labels):
    return [set(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)]


def some_clusterings(g, seed=0):
    rng = np.random.default_rng(seed)
    yield np.zeros(g.n, dtype=np.int64)  # one cluster
    yield np.arange(g.n, dtype=np.int64)  # singletons
    for k in (2, 3, 7):
        yield rng.integers(0, k, g.n)
    G = nx_graph(g)
    comms = nx.community.greedy_modularity_communities(G)
    labels = np.empty(g.n, dtype=np.int64)
    for c, members in enumerate(comms):
        labels[list(members)] = c
    yield labels


# ----------------------------------------------------------------- the builder itself
@pytest.mark.parametrize("mode,resolution", [("lambda", 0.3), ("lambda-degree", 0.004),
                                             ("lambda-degree", 0.03), ("modularity", 1.0),
                                             ("modularity", 0.5)])
def test_weights_and_targets_follow_the_sign_of_the_definition(graphs, mode, resolution):
    g = graphs["karate"]
    p = metricopt.build_problem("cc", g, weights=mode, resolution=resolution)
    s = np.array(list(signed_weight(g, mode, resolution).values()))
    assert p.structure == "dense" and p.objective == "l1" and p.constant == 0.0
    np.testing.assert_allclose(p.weights, np.abs(s), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p.target, (s < 0).astype(float))
    assert p.params == {"weights": mode, "resolution": resolution}


def test_degree_weighted_edges_can_want_apart(graphs):
    # at R = 0.03 the edges between high-degree nodes have R d_i d_j > 1: their target
    # is "apart", decided by the sign of A_ij - R d_i d_j, not by adjacency
    g = graphs["karate"]
    p = metricopt.build_problem("cc", g, weights="lambda-degree", resolution=0.03)
    deg = g.degrees()
    u, v = g.edges[:, 0], g.edges[:, 1]
    idx = metricopt.problems.pair_index(u, v, g.n)
    negative = deg[u] * deg[v] * 0.03 > 1
    assert negative.any() and not negative.all()
    np.testing.assert_array_equal(p.target[idx], negative.astype(float))
    # the constant between the signed and the unsigned (linear) form
    scale, offset = p.units["lambdacc_linear"]
    assert scale == 1.0
    assert offset == pytest.approx(float(np.sum(1 - 0.03 * (deg[u] * deg[v])[negative])))


@pytest.mark.parametrize("mode,resolution", [("lambda", 0.1), ("lambda", 0.5), ("lambda", 0.8),
                                             ("lambda-degree", 0.002), ("lambda-degree", 0.02),
                                             ("modularity", 1.0), ("modularity", 0.4),
                                             ("modularity", 2.5)])
def test_objective_of_explicit_clusterings(graphs, mode, resolution):
    for name in ("karate", "dolphins"):
        g = graphs[name]
        p = metricopt.build_problem("cc", g, weights=mode, resolution=resolution)
        for labels in some_clusterings(g):
            value = evaluate(p, labels=labels)
            assert value == pytest.approx(naive_objective(g, mode, resolution, labels),
                                          rel=1e-12, abs=1e-9)
            scores = objective_scores(p, value)
            if mode == "modularity":
                q = nx.community.modularity(nx_graph(g), communities(labels),
                                            resolution=resolution)
                assert scores["modularity"] == pytest.approx(q, abs=1e-12)
            elif mode == "lambda-degree":
                assert scores["lambdacc_linear"] == pytest.approx(
                    lambdacc_linear(g, resolution, labels), rel=1e-12, abs=1e-9)
            else:
                assert scores is None


def test_lambda_objective_is_the_lambdacc_count(graphs):
    g = graphs["karate"]
    r = 0.25
    p = metricopt.build_problem("cc", g, weights="lambda", resolution=r)
    labels = np.array([0] * 17 + [1] * 17)
    edges = {tuple(e) for e in g.edges.tolist()}
    cut = sum(labels[i] != labels[j] for i, j in edges)
    inside = sum(1 for i, j in itertools.combinations(range(g.n), 2)
                 if labels[i] == labels[j] and (i, j) not in edges)
    assert evaluate(p, labels=labels) == pytest.approx((1 - r) * cut + r * inside)


def test_modularity_is_lambda_degree_at_one_over_2m(graphs):
    g = graphs["lesmis"]
    a = metricopt.build_problem("cc", g, weights="modularity", resolution=1.3)
    b = metricopt.build_problem("cc", g, weights="lambda-degree", resolution=1.3 / (2 * g.m))
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(a.target, b.target)


def test_modularity_defaults_to_gamma_one(graphs):
    p = metricopt.build_problem("cc", graphs["karate"], weights="modularity")
    assert p.params["resolution"] == 1.0


@pytest.mark.parametrize("kwargs,match", [
    ({"weights": "lambda"}, "needs a resolution"),
    ({"weights": "lambda-degree"}, "needs a resolution"),
    ({"weights": "lambda", "resolution": 1.0}, r"range \(0, 1\)"),
    ({"weights": "lambda", "resolution": 0.0}, r"range \(0, 1\)"),
    ({"weights": "modularity", "resolution": -1.0}, r"range \(0, inf\)"),
    ({"weights": "lambda-degree", "resolution": float("nan")}, "resolution"),
    ({"weights": "jaccard", "resolution": 0.5}, "applies to weights"),
    ({"resolution": 0.5}, "applies to weights"),
])
def test_bad_resolution(graphs, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        metricopt.build_problem("cc", graphs["karate"], **kwargs)


# ------------------------------------------------------------------------ LP values
def scipy_lp_value(g, mode, resolution):
    """The LP built independently: min sum s_ij x_ij + sum_{s<0} |s_ij| over the metric
    polytope in [0, 1] (w |x - d| is s x for d = 0 and |s| + s x for d = 1)."""
    s = signed_weight(g, mode, resolution)
    n = g.n
    index = {pair: v for v, pair in enumerate(s)}
    rows, cols, vals = [], [], []
    r = 0
    for i, j, k in itertools.combinations(range(n), 3):
        for a, b, c in (((i, j), (i, k), (j, k)), ((i, k), (i, j), (j, k)),
                        ((j, k), (i, j), (i, k))):
            rows += [r, r, r]
            cols += [index[a], index[b], index[c]]
            vals += [1.0, -1.0, -1.0]
            r += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, len(s)))
    c = np.array(list(s.values()))
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(r), bounds=(0, 1), method="highs")
    assert res.status == 0
    return res.fun + float(-c[c < 0].sum())


KARATE_CASES = [("lambda", 0.3), ("lambda-degree", 0.01), ("modularity", 1.0)]


@pytest.mark.parametrize("mode,resolution", KARATE_CASES)
def test_highs_lp_equals_an_independent_lp_on_karate(graphs, mode, resolution):
    g = graphs["karate"]
    p = metricopt.build_problem("cc", g, weights=mode, resolution=resolution)
    res = metricopt.solve(p, method="highs")
    assert res.success
    expected = scipy_lp_value(g, mode, resolution)
    assert res.fun == pytest.approx(expected, rel=1e-8)
    assert res.lower_bound == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("mode,resolution", KARATE_CASES)
def test_dykstra_reaches_the_highs_lp_on_karate(graphs, mode, resolution):
    p = metricopt.build_problem("cc", graphs["karate"], weights=mode, resolution=resolution)
    exact = metricopt.solve(p, method="highs")
    res = metricopt.solve(p, method="dykstra", gap_tol=1e-6)
    assert res.success
    assert res.lower_bound <= exact.fun * (1 + 1e-9)
    assert res.fun == pytest.approx(exact.fun, rel=1e-7)


def test_modularity_upper_bound_of_karate_is_its_optimum(graphs):
    # The Agarwal-Kempe LP is tight on karate: max modularity 0.4197896 (Brandes et al.,
    # IEEE TKDE 20(2), 2008), reached by the rounding.
    g = graphs["karate"]
    p = metricopt.build_problem("cc", g, weights="modularity")
    res = metricopt.solve(p, method="highs")
    rounded = metricopt.round_solution(p, res.x, seed=0)
    scores = objective_scores(p, rounded.objective, res.lower_bound)
    assert scores["modularity_upper_bound"] == pytest.approx(0.4197896, abs=1e-7)
    q = nx.community.modularity(nx_graph(g), communities(rounded.labels))
    assert scores["modularity"] == pytest.approx(q, abs=1e-12)
    assert q == pytest.approx(0.4197896, abs=1e-7)


def test_run_reports_modularity_and_the_table_has_it(graphs, tmp_path):
    from metricopt import pipeline
    from metricopt.reporting import report_table

    out = tmp_path / "run"
    outcome = pipeline.run("karate", "cc", method="highs", out=out, rounding={"seed": 0},
                           problem_params={"weights": "modularity", "resolution": 1.0})
    rep = outcome.report
    assert rep["problem"]["params"] == {"weights": "modularity", "resolution": 1.0}
    labels = outcome.rounding.labels
    q = nx.community.modularity(nx_graph(graphs["karate"]), communities(labels))
    assert rep["scores"]["modularity"] == pytest.approx(q, abs=1e-12)
    assert rep["scores"]["modularity_upper_bound"] == pytest.approx(0.4197896, abs=1e-7)
    row = report_table([out]).iloc[0]
    assert row["score_modularity"] == pytest.approx(q, abs=1e-12)
    assert row["param_resolution"] == 1.0


RESOLUTIONS = {
    "lambda": (0.1, 0.3, 0.6),
    "lambda-degree": (0.002, 0.005, 0.01),
    "modularity": (0.5, 1.0, 2.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("mode", list(RESOLUTIONS))
def test_default_backend_lp_equals_highs(graphs, name, mode):
    g = graphs[name]
    for resolution in RESOLUTIONS[mode]:
        p = metricopt.build_problem("cc", g, weights=mode, resolution=resolution)
        exact = metricopt.solve(p, method="highs")
        assert exact.success
        methods = ["auto"]
        for method in methods:
            res = metricopt.solve(p, method=method, gap_tol=1e-6)
            if res.method == "highs":  # auto's choice on karate: check dykstra there too
                methods.append("dykstra")
            assert res.success, (name, mode, resolution, method, res.message)
            assert res.fun == pytest.approx(exact.fun, rel=1e-7), (name, mode, resolution, method)
            assert res.lower_bound <= exact.fun * (1 + 1e-9)
