"""Tests of metricopt.rounding: partitions, reproducibility, exactness on integral
solutions, objectives against naive references, kernels against naive.py-style
references, and the error contract."""

import itertools
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import naive_rounding as naive
from metricopt.exceptions import InputError, InvalidParameterError, UnsupportedProblemError
from metricopt.graph import Graph
from metricopt.problems import MetricProblem
from metricopt.problems._pairs import n_pairs, pair_index
from metricopt.rounding import (
    Rounding,
    canonical_labels,
    cluster_deletion_pivot,
    clustering_objective,
    cut_objective,
    evaluate,
    is_partition,
    kwikcluster,
    lp_pivot,
    region_growing,
    round_solution,
    spectral_cut,
    sweep_cut,
    threshold_pivot,
)
from metricopt.rounding import _kernels as K
from metricopt.rounding._checks import csr_from_pairs

# ---------------------------------------------------------------------- builders


def make_graph(n, edges):
    edges = np.array(sorted({(min(a, b), max(a, b)) for a, b in edges if a != b}), dtype=np.int64)
    return Graph(n=n, edges=edges.reshape(-1, 2), labels=np.array([f"v{i}" for i in range(n)], dtype=object))


def planted_graph(rng, sizes, p_in=0.8, p_out=0.1):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n = groups.size
    edges = [(a, b) for a, b in itertools.combinations(range(n), 2)
             if rng.random() < (p_in if groups[a] == groups[b] else p_out)]
    return make_graph(n, edges), groups


def dense_cc(n, rng, p_dissimilar=0.6, weights=True):
    npairs = n_pairs(n)
    w = rng.uniform(0.2, 2.0, npairs) if weights else np.ones(npairs)
    d = (rng.random(npairs) < p_dissimilar).astype(np.float64)
    return MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=w, target=d, lower=0.0, upper=1.0, constant=0.5)


def sparse_cc(n, pairs, rng, p_dissimilar=0.4):
    pairs = np.array(sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b}), dtype=np.int64)
    m = pairs.shape[0]
    return MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="sparse",
                         objective="l1", weights=rng.uniform(0.2, 2.0, m),
                         target=(rng.random(m) < p_dissimilar).astype(np.float64),
                         lower=0.0, upper=1.0, pairs=pairs)


def sc_problem(graph):
    cost = np.zeros(n_pairs(graph.n))
    cost[pair_index(graph.edges[:, 0], graph.edges[:, 1], graph.n)] = 1.0
    return MetricProblem(kind="sc", n=graph.n, labels=graph.labels, structure="dense", objective="linear",
                         cost=cost, lower=0.0, upper=np.inf, sum_value=float(graph.n), graph=graph)


def cd_problem(graph):
    return MetricProblem(kind="cd", n=graph.n, labels=graph.labels, structure="edges", objective="linear",
                         cost=np.ones(graph.m), lower=0.0, upper=1.0, pairs=graph.edges.copy(),
                         triangles=np.zeros((0, 3), np.int64), wedges=np.zeros((0, 2), np.int64),
                         graph=graph)


def mn_problem(n):
    npairs = n_pairs(n)
    return MetricProblem(kind="mn", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l2", weights=np.ones(npairs), target=np.ones(npairs),
                         lower=-np.inf, upper=np.inf)


def x_from_labels(problem, labels):
    i, j = problem.pair_nodes()
    return (np.asarray(labels)[i] != np.asarray(labels)[j]).astype(np.float64)


def x_from_points(problem, rng, scale=1.5):
    """A metric in [0, 1]: clipped Euclidean distances of random points (restricted to
    the problem's pairs)."""
    pts = rng.random((problem.n, 2))
    i, j = problem.pair_nodes()
    return np.minimum(scale * np.linalg.norm(pts[i] - pts[j], axis=1), 1.0)


# ------------------------------------------------------------- exact LP solutions


def _triangle_matrix(n):
    rows, cols, vals = [], [], []
    r = 0
    for i, j, k in itertools.combinations(range(n), 3):
        a, b, c = pair_index(i, j, n), pair_index(i, k, n), pair_index(j, k, n)
        for top, o1, o2 in ((a, b, c), (b, a, c), (c, a, b)):
            rows += [r, r, r]
            cols += [top, o1, o2]
            vals += [1.0, -1.0, -1.0]
            r += 1
    return sp.csr_matrix((vals, (rows, cols)), shape=(r, n_pairs(n)))


def cc_lp(problem):
    w, d = problem.weights, problem.target
    A = _triangle_matrix(problem.n)
    res = linprog(w * (1 - 2 * d), A_ub=A, b_ub=np.zeros(A.shape[0]), bounds=(0, 1), method="highs")
    assert res.status == 0
    return res.x, res.fun + w @ d + problem.constant


def sc_lp(problem):
    A = _triangle_matrix(problem.n)
    res = linprog(problem.cost, A_ub=A, b_ub=np.zeros(A.shape[0]), A_eq=np.ones((1, A.shape[1])),
                  b_eq=[problem.n], bounds=(0, None), method="highs")
    assert res.status == 0
    return res.x, res.fun


def cd_lp(problem):
    from metricopt.problems.cluster_deletion import cluster_deletion

    full = cluster_deletion(problem.graph)
    m = full.n_variables
    rows = []
    for a, b, c in full.triangles.tolist():
        for top, o1, o2 in ((a, b, c), (b, a, c), (c, a, b)):
            row = np.zeros(m)
            row[[top, o1, o2]] = [1.0, -1.0, -1.0]
            rows.append((row, 0.0))
    for a, b in full.wedges.tolist():
        row = np.zeros(m)
        row[[a, b]] = -1.0
        rows.append((row, -1.0))
    A = np.array([r for r, _ in rows]).reshape(-1, m)
    res = linprog(full.cost, A_ub=A, b_ub=[b for _, b in rows], bounds=(0, 1), method="highs")
    assert res.status == 0
    return full, res.x, res.fun


# --------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(20240611)


CC_METHODS = ("pivot", "threshold", "region-growing", "kwikcluster", "auto")


# ------------------------------------------------------------ partition property


@pytest.mark.parametrize("case", range(6))
def test_every_cc_rounding_is_a_partition(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(2, 14))
    if case % 2:
        prob = dense_cc(n, rng)
    else:
        pairs = [tuple(p) for p in itertools.combinations(range(n), 2) if rng.random() < 0.5]
        prob = sparse_cc(n, pairs or [(0, 1)], rng)
    for x in (x_from_points(prob, rng), x_from_labels(prob, rng.integers(0, 3, n)),
              rng.uniform(-0.2, 1.2, prob.n_variables)):  # last one: not a metric
        for method in CC_METHODS:
            r = round_solution(prob, x, method=method, n_tries=3, seed=case)
            assert is_partition(r.labels, n)
            assert r.labels.dtype == np.int64
            assert np.array_equal(r.labels, canonical_labels(r.labels))
            assert r.n_clusters == r.labels.max() + 1
            assert r.objective == evaluate(prob, labels=r.labels)


@pytest.mark.parametrize("case", range(4))
def test_cd_and_sc_roundings_are_partitions_and_cuts(case):
    rng = np.random.default_rng(100 + case)
    graph, _ = planted_graph(rng, [3, 4, 3], 0.9, 0.15)
    cd = cd_problem(graph)
    for x in (x_from_points(cd, rng), rng.random(graph.m)):
        r = round_solution(cd, x, n_tries=5, seed=case)
        assert is_partition(r.labels, graph.n)
        labels_ok = naive.cd_cost(cd, r.labels)
        assert labels_ok is not None  # every cluster is a clique
        assert r.objective == pytest.approx(labels_ok, abs=1e-12)
    sc = sc_problem(graph)
    r = round_solution(sc, x_from_points(sc, rng), seed=case)
    assert r.in_cut.dtype == bool and 0 < r.in_cut.sum() <= graph.n // 2
    assert r.side_sizes == (int(r.in_cut.sum()), graph.n - int(r.in_cut.sum()))
    assert set(r.per_method) == {"sweep", "spectral"}
    assert r.objective == min(r.per_method.values())


# ------------------------------------------------------------- reproducibility


def test_seeded_runs_are_reproducible_and_seeds_matter(rng):
    prob = dense_cc(40, rng)
    x = x_from_points(prob, rng, scale=1.0)
    for method in ("pivot", "threshold", "region-growing", "auto"):
        a = round_solution(prob, x, method=method, n_tries=4, seed=7)
        b = round_solution(prob, x, method=method, n_tries=4, seed=7)
        assert np.array_equal(a.labels, b.labels) and a.objective == b.objective
        assert a.method == b.method and a.per_method == b.per_method
    outcomes = {tuple(lp_pivot(prob, x, seed=s)) for s in range(6)}
    assert len(outcomes) > 1
    # a method gives the same tries alone as inside "auto"
    auto = round_solution(prob, x, method="auto", n_tries=4, seed=7)
    alone = round_solution(prob, x, method="threshold", n_tries=4, seed=7, refine="none")
    assert auto.per_method["threshold"] == alone.objective


def test_unseeded_run_reports_a_seed_that_reproduces_it(rng):
    prob = dense_cc(25, rng)
    x = x_from_points(prob, rng)
    a = round_solution(prob, x, n_tries=3)
    b = round_solution(prob, x, n_tries=3, seed=a.seed)
    assert np.array_equal(a.labels, b.labels) and a.objective == b.objective
    assert isinstance(a.seed, int)
    gen_a = round_solution(prob, x, n_tries=3, seed=np.random.default_rng(3))
    gen_b = round_solution(prob, x, n_tries=3, seed=np.random.default_rng(3))
    assert gen_a.seed == gen_b.seed and np.array_equal(gen_a.labels, gen_b.labels)


# --------------------------------------------------------- integral solutions


@pytest.mark.parametrize("structure", ["dense", "sparse"])
def test_integral_x_gives_back_its_clustering(structure, rng):
    n = 15
    truth = canonical_labels(rng.integers(0, 4, n))
    if structure == "dense":
        prob = dense_cc(n, rng)
    else:  # every pair inside a cluster plus random ones between
        pairs = [(a, b) for a, b in itertools.combinations(range(n), 2)
                 if truth[a] == truth[b] or rng.random() < 0.3]
        prob = sparse_cc(n, pairs, rng)
    x = x_from_labels(prob, truth)
    expected = evaluate(prob, labels=truth)
    for method in ("pivot", "threshold", "region-growing", "auto"):
        r = round_solution(prob, x, method=method, n_tries=3, seed=1, refine="none")
        assert np.array_equal(r.labels, truth), method
        assert r.objective == expected
        refined = round_solution(prob, x, method=method, n_tries=3, seed=1)
        assert refined.refine["objective_before"] == expected >= refined.objective
    assert np.array_equal(region_growing(prob, x, seed=5), truth)
    assert np.array_equal(threshold_pivot(prob, x, seed=5), truth)


def test_kwikcluster_recovers_disjoint_cliques():
    rng = np.random.default_rng(3)
    truth = np.repeat([0, 1, 2, 3], [4, 1, 5, 3])
    n = truth.size
    npairs = n_pairs(n)
    i, j = np.triu_indices(n, 1)
    prob = MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=np.ones(npairs),
                         target=(truth[i] != truth[j]).astype(float), lower=0.0, upper=1.0)
    r = kwikcluster(prob, seed=rng)
    assert np.array_equal(r.labels, truth) and r.objective == 0.0 and r.method == "kwikcluster"
    r2 = round_solution(prob, None, method="kwikcluster", n_tries=2, seed=0)
    assert np.array_equal(r2.labels, truth)


def test_sweep_recovers_a_planted_cut_and_it_is_optimal():
    # two cliques (5 and 7 nodes) joined by one edge: the cliques are the sparsest cut
    side = np.array([1] * 5 + [0] * 7, dtype=bool)
    n = side.size
    edges = [(a, b) for a, b in itertools.combinations(range(n), 2) if side[a] == side[b]] + [(4, 5)]
    graph = make_graph(n, edges)
    prob = sc_problem(graph)
    alpha = n / (side.sum() * (n - side.sum()))
    x = alpha * x_from_labels(prob, side.astype(int))
    phi_s = naive.phi(n, graph.edges.tolist(), np.flatnonzero(side))
    assert phi_s == pytest.approx(naive.sparsest_cut_brute_force(n, graph.edges.tolist()))
    assert prob.objective_value(x) == pytest.approx(phi_s)  # the cut metric is LP-feasible
    for method in ("sweep", "spectral", "auto"):
        r = round_solution(prob, x, method=method, seed=0)
        assert r.objective == pytest.approx(phi_s, rel=1e-14)
        assert np.array_equal(r.in_cut, side)  # the smaller side
        assert r.cut_edges == 1 and r.side_sizes == (5, 7)
        assert r.objective == evaluate(prob, in_cut=r.in_cut) == cut_objective(prob, r.in_cut)
    assert np.array_equal(sweep_cut(prob, x) | ~sweep_cut(prob, x), np.ones(n, bool))
    s = spectral_cut(prob)
    assert np.array_equal(s, side) or np.array_equal(s, ~side)


# ------------------------------------------------- against exact LP solutions


def test_cc_rounding_of_the_exact_lp_is_no_better_than_the_lp(rng):
    prob = dense_cc(9, rng)
    x, lp_value = cc_lp(prob)
    assert prob.objective_value(x) == pytest.approx(lp_value)
    r = round_solution(prob, x, n_tries=10, seed=0)
    assert r.objective >= lp_value - 1e-9
    assert r.objective == pytest.approx(naive.cc_cost(prob, r.labels), rel=1e-12)
    # region growing is deterministic-guaranteed: similar pairs cut cost at most
    # 3 ln(n+1) * 2F, dissimilar pairs kept at most 3 times their LP cost
    rg = round_solution(prob, x, method="region-growing", n_tries=5, seed=0)
    c = prob.constant
    assert rg.objective - c <= 6 * np.log(prob.n + 1) * (lp_value - c) + 1e-9


def test_sc_rounding_of_the_exact_lp(rng):
    graph, _ = planted_graph(rng, [4, 5], 0.8, 0.15)
    prob = sc_problem(graph)
    x, lp_value = sc_lp(prob)
    r = round_solution(prob, x, seed=0)
    best = naive.sparsest_cut_brute_force(graph.n, graph.edges.tolist())
    assert r.objective >= best - 1e-12 >= lp_value - 1e-9
    assert r.per_method["sweep"] == pytest.approx(naive.best_row_sweep(prob, x, graph.edges.tolist()))
    assert r.objective == pytest.approx(naive.phi(graph.n, graph.edges.tolist(), np.flatnonzero(r.in_cut)))


def test_cd_rounding_of_the_exact_lp_is_a_clique_2_approximation(rng):
    graph, _ = planted_graph(rng, [4, 3, 5], 0.85, 0.12)
    full, x, lp_value = cd_lp(cd_problem(graph))
    r = round_solution(full, x, n_tries=20, seed=0)
    assert r.n_repaired == 0
    assert naive.cd_cost(full, r.labels) == r.objective
    assert lp_value - 1e-9 <= r.objective <= 2 * lp_value + 1e-9
    labels, repaired = cluster_deletion_pivot(full, x, seed=1)
    assert repaired == 0 and naive.cd_cost(full, labels) is not None


def test_cd_integral_x_and_infeasible_x():
    truth = np.repeat([0, 1, 2], [3, 4, 2])
    n = truth.size
    edges = [(a, b) for a, b in itertools.combinations(range(n), 2) if truth[a] == truth[b]]
    edges += [(0, 3), (2, 7), (6, 8)]
    graph = make_graph(n, edges)
    prob = cd_problem(graph)
    x = x_from_labels(prob, truth)
    r = round_solution(prob, x, n_tries=4, seed=0)
    assert np.array_equal(r.labels, truth) and r.objective == 3.0 and r.n_repaired == 0
    # all-zero x violates every wedge constraint: the clique guard must act
    r0 = round_solution(prob, np.zeros(graph.m), n_tries=4, seed=0)
    assert naive.cd_cost(prob, r0.labels) == r0.objective
    assert r0.n_repaired > 0


# ---------------------------------------------------- kernels against naive


@pytest.mark.parametrize("case", range(5))
def test_pivot_kernels_match_naive(case):
    rng = np.random.default_rng(200 + case)
    n = 11
    dense = dense_cc(n, rng)
    pairs = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.45]
    sparse = sparse_cc(n, pairs, rng)
    order = rng.permutation(n).astype(np.int64)
    seed = int(rng.integers(0, 2**63))
    for prob in (dense, sparse):
        x = rng.random(prob.n_variables)
        for threshold in (-1.0, 1 / 3):
            if prob.structure == "dense":
                got = K.pivot_dense(x, n, order, threshold, seed)
            else:
                indptr, indices, var = csr_from_pairs(prob.pairs, n)
                got = K.pivot_sparse(x, indptr, indices, var, order, threshold, seed)
            assert np.array_equal(got, naive.pivot(prob, x, order, threshold, seed))


@pytest.mark.parametrize("case", range(6))
def test_region_growing_kernels_match_naive(case):
    rng = np.random.default_rng(300 + case)
    n = 12
    dense = dense_cc(n, rng, p_dissimilar=0.5)
    pairs = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.5]
    sparse = sparse_cc(n, pairs, rng)
    order = rng.permutation(n).astype(np.int64)
    for prob in (dense, sparse):
        # small distances so that balls have several levels below 1/3
        for x in (x_from_points(prob, rng, scale=0.4), rng.random(prob.n_variables) * 0.5):
            run_labels = _region_kernel(prob, x, order)
            assert np.array_equal(run_labels, naive.region_growing(prob, x, order)), prob.structure


def _region_kernel(prob, x, order):
    from metricopt.rounding.region_growing import region_runner

    return region_runner(prob, np.ascontiguousarray(x))(order, 0)


@pytest.mark.parametrize("case", range(3))
def test_cd_kernel_matches_naive(case):
    rng = np.random.default_rng(400 + case)
    graph, _ = planted_graph(rng, [4, 4, 4], 0.7, 0.2)
    prob = cd_problem(graph)
    x = rng.random(graph.m) * 0.8
    order = rng.permutation(graph.n).astype(np.int64)
    indptr, indices, var = csr_from_pairs(prob.pairs, graph.n)
    labels, skipped = K.cd_pivot(x, indptr, indices, var, order, 0.5)
    ref_labels, ref_skipped = naive.cd_pivot(prob, x, order)
    assert np.array_equal(labels, ref_labels) and skipped == ref_skipped


def test_sweep_kernel_matches_naive_with_ties(rng):
    graph, _ = planted_graph(rng, [5, 5], 0.7, 0.2)
    prob = sc_problem(graph)
    x = np.round(x_from_points(prob, rng), 1)  # many ties
    phi, _, _ = _sweep_rows(prob, x)
    assert phi == pytest.approx(naive.best_row_sweep(prob, x, graph.edges.tolist()), rel=1e-14)
    side = sweep_cut(prob, x)
    assert cut_objective(prob, side) == pytest.approx(phi, rel=1e-14)


def _sweep_rows(prob, x):
    from metricopt.rounding.sweep import sc_adjacency

    indptr, indices, ew = sc_adjacency(prob)
    return K.sweep_rows(x, prob.n, indptr, indices, ew)


# -------------------------------------------------------------- objectives


@pytest.mark.parametrize("case", range(4))
def test_objectives_match_naive(case):
    rng = np.random.default_rng(500 + case)
    n = 10
    labels = rng.integers(0, 4, n)
    dense = dense_cc(n, rng)
    assert evaluate(dense, labels=labels) == pytest.approx(naive.cc_cost(dense, labels), rel=1e-13)
    pairs = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.5]
    sparse = sparse_cc(n, pairs, rng)
    assert clustering_objective(sparse, labels) == pytest.approx(naive.cc_cost(sparse, labels), rel=1e-13)
    graph, _ = planted_graph(rng, [5, 5], 0.7, 0.2)
    side = rng.random(n) < 0.5
    side[0], side[1] = True, False
    sc = sc_problem(graph)
    expected = naive.phi(n, graph.edges.tolist(), np.flatnonzero(side))
    assert evaluate(sc, in_cut=side) == pytest.approx(expected)
    assert evaluate(sc, labels=side.astype(int)) == evaluate(sc, in_cut=side)
    cd = cd_problem(graph)
    singletons = np.arange(n)
    assert evaluate(cd, labels=singletons) == graph.m == naive.cd_cost(cd, singletons)


def _traced(func, *args, **kwargs):
    """``func``'s value and the peak bytes that Python and numpy allocated meanwhile."""
    tracemalloc.start()
    try:
        value = func(*args, **kwargs)
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_dense_objective_without_temporaries():
    n = 3000
    rng = np.random.default_rng(0)
    npairs = n_pairs(n)
    prob = MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=rng.random(npairs), target=(rng.random(npairs) < 0.5) * 1.0,
                         lower=0.0, upper=1.0)
    labels = rng.integers(0, 50, n)
    evaluate(prob, labels=labels)  # compile
    value, peak = _traced(evaluate, prob, labels=labels)
    assert peak < npairs  # no per-pair temporary (one would take 8 bytes a pair)
    i, j = np.triu_indices(n, 1)
    split = (labels[i] != labels[j]).astype(float)
    assert value == pytest.approx(float(prob.weights @ np.abs(split - prob.target)), rel=1e-10)


@pytest.mark.slow
def test_dense_objective_n_10000():
    n = 10_000
    npairs = n_pairs(n)
    prob = MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=np.ones(npairs), target=np.ones(npairs),
                         lower=0.0, upper=1.0)
    labels = np.arange(n) % 100
    evaluate(prob, labels=labels)  # compile and touch the arrays
    value, peak = _traced(evaluate, prob, labels=labels)
    assert peak < npairs
    assert value == 100 * n_pairs(100)  # dissimilar pairs joined: 100 clusters of 100


# ---------------------------------------------------------------- checks


def test_is_partition_and_canonical_labels():
    assert is_partition(np.array([0, 1, 0]), 3)
    assert not is_partition(np.array([0, -1, 0]), 3)
    assert not is_partition(np.array([0.0, 1.0, 0.0]), 3)
    assert not is_partition(np.array([0, 1]), 3)
    assert not is_partition(np.array([[0, 1, 2]]), 3)
    assert is_partition([{0, 2}, [1]], 3)
    assert not is_partition([{0, 1}, {1, 2}], 3)
    assert not is_partition([{0, 1}], 3)
    assert canonical_labels(np.array([7, 7, 3, 9, 3])).tolist() == [0, 0, 1, 2, 1]


def test_rounding_result_type(rng):
    prob = dense_cc(6, rng)
    r = round_solution(prob, {"x": x_from_points(prob, rng)}, method="Pivot", n_tries=2, seed=0)
    assert isinstance(r, Rounding) and isinstance(r, dict)
    assert r.kind == "cc" and r["method"] == r.method == "pivot" and r.n_tries == 2 and r.seed == 0
    for key in ("objective", "labels", "n_clusters", "per_method", "elapsed"):
        assert key in r
    assert "labels" in repr(r)
    with pytest.raises(AttributeError):
        r.no_such_field


# ---------------------------------------------------------------- errors


def test_metric_nearness_cannot_be_rounded():
    prob = mn_problem(4)
    with pytest.raises(UnsupportedProblemError, match="rounding is not defined for metric nearness"):
        round_solution(prob, np.zeros(6))
    with pytest.raises(UnsupportedProblemError, match="metric nearness"):
        evaluate(prob, labels=[0, 0, 1, 1])


def test_bad_labels_raise_input_error(rng):
    prob = dense_cc(5, rng)
    for bad in ([0, 1, 2], np.zeros(5, float), np.array([0, 1, -1, 0, 0]), np.zeros((5, 1), int),
                np.ones(5, bool), ["a"] * 5):
        with pytest.raises(InputError):
            evaluate(prob, labels=bad)
    with pytest.raises(InputError, match="needs labels"):
        evaluate(prob)
    graph = make_graph(4, [(0, 1), (1, 2), (2, 3)])
    with pytest.raises(InputError, match=r"v0.*v2|nodes 0 .*and 2"):
        evaluate(cd_problem(graph), labels=[0, 0, 0, 1])
    sc = sc_problem(graph)
    for bad_cut in (np.zeros(4, bool), np.ones(4, bool), np.array([0, 1, 2, 0]), [True, False]):
        with pytest.raises(InputError):
            evaluate(sc, in_cut=bad_cut)
    with pytest.raises(InputError):
        evaluate(sc, labels=[0, 1, 2, 0])


def test_bad_arguments(rng):
    prob = dense_cc(5, rng)
    x = x_from_points(prob, rng)
    with pytest.raises(InvalidParameterError, match="'method'"):
        round_solution(prob, x, method="sweep")
    with pytest.raises(InvalidParameterError, match="'n_tries'"):
        round_solution(prob, x, n_tries=0)
    with pytest.raises(InvalidParameterError, match="'seed'"):
        round_solution(prob, x, seed=-3)
    with pytest.raises(InputError, match="one value per variable"):
        round_solution(prob, x[:-1])
    with pytest.raises(InputError, match="NaN"):
        round_solution(prob, np.full_like(x, np.nan))
    with pytest.raises(InputError):
        round_solution(prob, None, method="pivot")
    with pytest.raises(UnsupportedProblemError):
        sweep_cut(prob, x)


def test_region_growing_on_a_non_metric_falls_back_to_the_least_ratio_ball():
    # a chain of nodes ever closer to the radius, each with a heavier similar pair whose
    # LP value breaks the triangle inequality: no ball meets cut <= 3 ln(n+1) vol
    k, gap = 7, 0.04
    n = 2 * k + 2
    npairs = n_pairs(n)
    w, d, x = np.zeros(npairs), np.ones(npairs), np.ones(npairs)
    for i in range(1, k + 1):
        x[pair_index(0, i, n)] = i * gap
    for i in range(k + 1):
        v = pair_index(i, k + 1 + i, n)
        w[v], d[v], x[v] = 100.0**i, 0.0, (1.0 if i == 0 else 0.0)
    prob = MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=w, target=d, lower=0.0, upper=1.0)
    order = np.arange(n, dtype=np.int64)
    labels = _region_kernel(prob, x, order)
    assert np.array_equal(labels, naive.region_growing(prob, x, order))
    assert is_partition(labels, n) and np.sum(labels == labels[0]) == 1


def test_spectral_sweep_on_a_larger_graph_uses_the_sparse_eigensolver():
    from metricopt.rounding.sweep import DENSE_EIGH_MAX

    rng = np.random.default_rng(11)
    half = 260
    n = 2 * half
    assert n > DENSE_EIGH_MAX
    edges = [(a, b) for blk in (0, half) for a in range(blk, blk + half) for b in range(a + 1, blk + half)
             if rng.random() < 0.08]
    edges += [(0, half), (1, half + 1), (2, half + 2)]
    graph = make_graph(n, edges)
    prob = sc_problem(graph)
    side = np.arange(n) < half
    expected = cut_objective(prob, side)
    a = spectral_cut(prob, seed=1)
    assert cut_objective(prob, a) == pytest.approx(expected)
    r = round_solution(prob, None, method="spectral", seed=1)
    assert r.objective == pytest.approx(expected) and r.cut_edges == 3


def test_builder_problems_round_and_evaluate():
    from metricopt.problems import cluster_deletion, correlation_clustering, sparsest_cut

    rng = np.random.default_rng(5)
    graph, groups = planted_graph(rng, [4, 4, 3], 0.9, 0.1)
    cc = correlation_clustering(graph, weights="unit")
    x, lp_value = cc_lp(cc)
    r = round_solution(cc, x, seed=0)
    assert r.objective == evaluate(cc, labels=r.labels) >= lp_value - 1e-9
    assert kwikcluster(cc, seed=0, n_tries=5).objective >= lp_value - 1e-9
    sc = sparsest_cut(graph)
    r = round_solution(sc, sc_lp(sc)[0], seed=0)
    assert r.objective == pytest.approx(naive.sparsest_cut_brute_force(graph.n, graph.edges.tolist()))
    cd = cluster_deletion(graph)
    r = round_solution(cd, np.ones(graph.m), seed=0, refine="none")  # x = 1: every node alone
    assert r.objective == graph.m and r.n_clusters == graph.n
    r = round_solution(cd, np.ones(graph.m), seed=0)  # the refinement joins cliques
    assert r.objective < graph.m and r.objective == clustering_objective(cd, r.labels)
