"""Rounding, refinement, scoring and outputs of support-sized correlation clustering.

A support-sized problem lists its explicit pairs and a point lists the pairs it moved;
every other pair is at 1. Its roundings must be the dense problem's for the same ``x``
and seed (LP-pivot's coins included), its costs the dense costs, and its local search
the dense problem's search (the same moves, from any start); nothing may take ``n^2``
memory.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import metricopt
import naive_refine as naive
from metricopt.exceptions import InputError
from metricopt.graph import Graph
from metricopt.io import read_input
from metricopt.problems import build_problem
from metricopt.problems._pairs import pair_arrays
from metricopt.problems.support import SupportPoint, clustering_cost
from metricopt.rounding import _support_kernels as SK
from metricopt.rounding import (
    evaluate,
    is_partition,
    kwikcluster,
    lp_pivot,
    refine_clustering,
    region_growing,
    round_solution,
    threshold_pivot,
)
from metricopt.rounding.objectives import cc_cost
from metricopt.rounding.refine import gain_layout

WEIGHTS = {"jaccard": {}, "unit": {}, "lambda": {"resolution": 0.3},
           "lambda-degree": {"resolution": 0.05}, "modularity": {"resolution": 1.0}}
ROUNDINGS = ("pivot", "threshold", "region-growing", "kwikcluster")


# ---------------------------------------------------------------------- builders
def make_graph(n, edges):
    edges = np.array(sorted({(min(a, b), max(a, b)) for a, b in edges if a != b}), dtype=np.int64)
    return Graph(n=n, edges=edges.reshape(-1, 2), labels=np.arange(n).astype(object))


def random_graph(rng, n, p):
    """G(n, p) with the edge (0, 1) (the builders need one edge)."""
    return make_graph(n, [(0, 1)] + [(a, b) for a, b in itertools.combinations(range(n), 2)
                                     if rng.random() < p])


def both(graph, weights):
    """The dense and the support-sized problem of one graph and weight mode."""
    params = WEIGHTS[weights]
    return (build_problem("cc", graph, weights=weights, **params),
            build_problem("cc", graph, weights=weights, layout="support", **params))


def to_point(n, x):
    """The support point of a dense packed vector (the pairs not at 1)."""
    i, j = pair_arrays(n)
    keep = x != 1.0
    return SupportPoint(n, np.column_stack([i[keep], j[keep]]), x[keep])


def random_x(rng, n, share=0.3):
    """A packed point with most pairs at 1 and the others anywhere in [-0.1, 1.2]."""
    i, _ = pair_arrays(n)
    x = np.ones(i.size)
    low = rng.random(i.size) < share
    x[low] = rng.uniform(-0.1, 1.2, int(low.sum()))
    x[low & (rng.random(i.size) < 0.2)] = rng.choice([0.0, 1.0 / 3.0, 1.0])  # ties, edges
    return x


# ------------------------------------------------------------------- roundings
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 16),
       weights=st.sampled_from(sorted(WEIGHTS)))
def test_roundings_are_the_dense_ones_for_any_point(seed, n, weights):
    rng = np.random.default_rng(seed)
    dense, support = both(random_graph(rng, n, 0.3), weights)
    x = random_x(rng, n)
    point = to_point(n, x)
    for method in ROUNDINGS:
        rd = round_solution(dense, x, method=method, seed=seed, n_tries=3, refine="none")
        rs = round_solution(support, point, method=method, seed=seed, n_tries=3, refine="none")
        assert rs.labels.tolist() == rd.labels.tolist(), method
        assert rs.objective == pytest.approx(rd.objective, rel=1e-12, abs=1e-12)
        assert is_partition(rs.labels, n)
        assert rs.objective == pytest.approx(cc_cost(dense, rs.labels), rel=1e-12, abs=1e-12)


def test_single_roundings_take_support_points():
    graph = read_input("karate", "cc")
    dense, support = both(graph, "unit")
    x = random_x(np.random.default_rng(1), graph.n)
    point = to_point(graph.n, x)
    for func in (lp_pivot, threshold_pivot, region_growing):
        assert func(support, point, seed=4).tolist() == func(dense, x, seed=4).tolist()
    assert kwikcluster(support, seed=2).labels.tolist() == kwikcluster(dense, seed=2).labels.tolist()


@pytest.fixture(scope="module")
def karate_solved():
    """The dense LP of karate solved exactly, per weight mode."""
    graph = read_input("karate", "cc")
    out = {}
    for weights in ("jaccard", "unit", "modularity"):
        dense, support = both(graph, weights)
        x = np.asarray(metricopt.solve(dense, method="highs")["x"])
        out[weights] = (dense, support, x, to_point(graph.n, x))
    return out


@pytest.mark.parametrize("weights", ["jaccard", "unit", "modularity"])
def test_roundings_of_the_exact_lp_are_the_dense_ones(karate_solved, weights):
    dense, support, x, point = karate_solved[weights]
    assert support.objective_value(point) == pytest.approx(dense.objective_value(x), rel=1e-12)
    for method in ROUNDINGS:
        rd = round_solution(dense, x, method=method, seed=7, n_tries=10, refine="none")
        rs = round_solution(support, point, method=method, seed=7, n_tries=10, refine="none")
        assert rs.labels.tolist() == rd.labels.tolist(), method
        assert rs.objective == pytest.approx(rd.objective, rel=1e-12)
        assert rs.per_method == pytest.approx(rd.per_method, rel=1e-12)


def test_round_solution_with_refinement_is_the_dense_one_on_sparse_gains():
    """Dolphins with unit weights: the dense refinement takes the sparse layout, with
    the bulk gain as background, so the whole answer (rounding and local search) is the
    same."""
    graph = read_input("dolphins", "cc")
    dense, support = both(graph, "unit")
    assert gain_layout(dense)["layout"] == "sparse"
    result = metricopt.solve(dense, method="highs")
    point = to_point(graph.n, np.asarray(result["x"]))
    rd = round_solution(dense, result, seed=5)
    rs = round_solution(support, {"x": point}, seed=5)
    assert rs.labels.tolist() == rd.labels.tolist()
    assert rs.objective == pytest.approx(rd.objective, rel=1e-12)
    assert rs.refine["layout"] == "support"
    assert (rs.refine["moves"], rs.refine["merges"]) == (rd.refine["moves"], rd.refine["merges"])


def test_same_seed_same_clustering():
    graph = read_input("lesmis", "cc")
    _, support = both(graph, "jaccard")
    point = to_point(graph.n, random_x(np.random.default_rng(3), graph.n, share=0.1))
    first = round_solution(support, point, seed=11, n_tries=5)
    again = round_solution(support, point, seed=first.seed, n_tries=5)
    assert again.labels.tolist() == first.labels.tolist()
    assert again.objective == first.objective


def test_lp_pivot_draws_the_dense_coins():
    """The counter-based draw equals the sequential SplitMix64 stream of the dense kernel."""
    from metricopt.rounding import _kernels as K

    n = 9
    x = np.full(n * (n - 1) // 2, 0.5)
    order = np.arange(n, dtype=np.int64)
    for seed in (0, 1, 2**62 + 12345):
        labels = K.pivot_dense(x, n, order, -1.0, seed)
        point = to_point(n, x)
        from metricopt.rounding._checks import csr_from_pairs

        indptr, indices, var = csr_from_pairs(point.pairs, n)
        got = SK.pivot_support(point.values, indptr, indices, var, order, -1.0, seed)
        assert got.tolist() == labels.tolist()


# ------------------------------------------------------------------ leiden
@pytest.mark.parametrize("weights", ["jaccard", "unit", "modularity"])
def test_leiden_on_support_problems(weights):
    pytest.importorskip("leidenalg")
    pytest.importorskip("igraph")
    graph = read_input("karate", "cc")
    dense, support = both(graph, weights)
    rs = round_solution(support, None, method="leiden", seed=1, n_tries=4, refine="none")
    rd = round_solution(dense, None, method="leiden", seed=1, n_tries=4, refine="none")
    assert is_partition(rs.labels, graph.n)
    assert rs.objective == pytest.approx(cc_cost(dense, rs.labels), rel=1e-12)
    # the same quality function (up to a constant): the same answer
    assert rs.objective == pytest.approx(rd.objective, rel=1e-9)


# ------------------------------------------------------------------ objectives
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 15),
       weights=st.sampled_from(sorted(WEIGHTS)))
def test_costs_are_the_dense_costs(seed, n, weights):
    rng = np.random.default_rng(seed)
    dense, support = both(random_graph(rng, n, 0.35), weights)
    labels = rng.integers(0, rng.integers(1, n + 1), n)
    want = cc_cost(dense, labels)
    assert cc_cost(support, labels) == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert evaluate(support, labels=labels) == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert clustering_cost(support, labels) == pytest.approx(want, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------ refinement
@pytest.mark.parametrize("name", ["karate", "lesmis"])
@pytest.mark.parametrize("weights", sorted(WEIGHTS))
def test_refinement_is_the_dense_refinement(name, weights):
    """From any start the support search makes the dense search's moves: on the sparse
    kernels where the dense gains take the sparse layout (bulk gain as background), else
    on the bulk kernels in the dense kernels' order."""
    graph = read_input(name, "cc")
    dense, support = both(graph, weights)
    want_layout, mine = gain_layout(dense), gain_layout(support)
    assert (want_layout["layout"] == "sparse") == ("node_weights" not in mine)
    rng = np.random.default_rng(0)
    for t in range(4):
        labels = rng.integers(0, rng.integers(1, graph.n + 1), graph.n)
        want = refine_clustering(dense, labels, seed=t)
        got = refine_clustering(support, labels, seed=t)
        assert got.labels.tolist() == want.labels.tolist()
        assert (got.moves, got.merges, got.sweeps) == (want.moves, want.merges, want.sweeps)
        assert got.objective == pytest.approx(want.objective, rel=1e-12)
        assert got.objective == pytest.approx(cc_cost(dense, got.labels), rel=1e-12)


def test_sparse_gains_are_the_dense_sparse_layout():
    """Where the dense gains take the sparse layout, the support adjacency and gains are
    those of the dense problem, entry for entry."""
    graph = read_input("lesmis", "cc")
    for weights in ("unit", "lambda"):
        dense, support = both(graph, weights)
        want, got = gain_layout(dense), gain_layout(support)
        assert want["layout"] == "sparse" and "node_weights" not in got
        for key in ("indptr", "indices", "delta"):
            assert np.array_equal(want[key], got[key]), key
        assert (want["s0"], want["tol"]) == (got["s0"], got["tol"])


def _gain_table(dense):
    s, table = {}, {}
    i, j = dense.pair_nodes()
    w, d = dense.weights, dense.target
    for v, (a, b) in enumerate(zip(i.tolist(), j.tolist())):
        table[a, b] = table[b, a] = w[v] * (abs(1 - d[v]) - abs(d[v]))
    return lambda a, b: table[a, b], s


@pytest.mark.parametrize("weights", ["lambda-degree", "modularity", "unit", "jaccard"])
@pytest.mark.parametrize("seed", range(4))
def test_bulk_kernels_match_the_dense_reference(weights, seed):
    """The bulk kernels against the plain-Python reference of the dense kernels (every
    other node adjacent, clusters met in increasing node id, every value recomputed from
    the full pair gains)."""
    rng = np.random.default_rng(seed)
    n = 14
    dense, support = both(random_graph(rng, n, 0.3), weights)
    lay = gain_layout(support, sparse_share=0.0)  # the bulk kernels, whatever the weights
    every = [[j for j in range(n) if j != i] for i in range(n)]
    s, _ = _gain_table(dense)
    nw, cw, tol = lay["node_weights"], lay["bulk_weight"], lay["tol"]
    labels = rng.integers(0, 5, n).astype(np.int64)
    acc, cnt = np.zeros(n), np.zeros(n, np.int64)
    touched, free, head, nxt, prv, tail, minid, cand, rank = (np.empty(n, np.int64)
                                                               for _ in range(9))
    cval = np.empty(n)
    for sweep in range(3):
        order = rng.permutation(n).astype(np.int64)
        ref, ref_moves = naive.move_sweep(n, every, s, 0.0, False, tol, labels.tolist(),
                                          order.tolist())
        sizes = np.bincount(labels, minlength=n).astype(np.int64)
        dsum = np.bincount(labels, weights=nw, minlength=n)
        moves, _ = SK.move_sweep_bulk(order, lay["indptr"], lay["indices"], lay["delta"], cw, nw,
                                      tol, labels, sizes, dsum, acc, cnt, touched, free, head, nxt,
                                      prv, minid, cand, cval, rank)
        assert labels.tolist() == ref and moves == ref_moves, sweep
        assert np.allclose(dsum, np.bincount(labels, weights=nw, minlength=n))
        assert not acc.any() and not cnt.any()
    ref, ref_merges = naive.merge_pass(n, every, s, False, tol, labels.tolist())
    sizes = np.bincount(labels, minlength=n).astype(np.int64)
    dsum = np.bincount(labels, weights=nw, minlength=n)
    merges, _ = SK.merge_pass_bulk(lay["indptr"], lay["indices"], lay["delta"], cw, tol, labels,
                                   sizes, dsum, head, nxt, tail, acc, cnt, touched, minid, cand,
                                   cval, rank)
    assert labels.tolist() == ref and merges == ref_merges


@pytest.mark.parametrize("weights", sorted(WEIGHTS))
def test_refinement_ends_in_a_local_optimum(weights):
    """Never worse, the cost recomputed right, and no single move or merge left that
    lowers the dense cost by more than the tolerance."""
    graph = read_input("karate", "cc")
    dense, support = both(graph, weights)
    tol = gain_layout(support)["tol"]
    rng = np.random.default_rng(2)
    for t in range(3):
        labels = rng.integers(0, 6, graph.n)
        res = refine_clustering(support, labels, seed=t)
        assert res.stopped == "converged"
        assert res.objective <= cc_cost(dense, labels) + 1e-12
        assert res.objective == pytest.approx(cc_cost(dense, res.labels), rel=1e-12)
        lab = res.labels.copy()
        here = cc_cost(dense, lab)
        for i in range(graph.n):
            for c in range(lab.max() + 2):
                moved = lab.copy()
                moved[i] = c
                assert cc_cost(dense, moved) >= here - 2 * tol
        for a, b in itertools.combinations(range(lab.max() + 1), 2):
            assert cc_cost(dense, np.where(lab == b, a, lab)) >= here - 2 * tol


# ---------------------------------------------------------------- checks, outputs
def test_support_x_is_checked():
    graph = read_input("karate", "cc")
    _, support = both(graph, "unit")
    n = graph.n
    with pytest.raises(InputError, match="SupportPoint"):
        round_solution(support, np.zeros(support.n_variables), method="pivot")
    with pytest.raises(InputError, match="nodes"):
        round_solution(support, SupportPoint(n + 1, [[0, 1]], [0.0]), method="pivot")
    with pytest.raises(InputError, match="at 0.5"):
        round_solution(support, SupportPoint(n, [[0, 1]], [0.0], bulk=0.5), method="pivot")
    with pytest.raises(InputError, match="more than once"):
        round_solution(support, SupportPoint(n, [[0, 1], [1, 0]], [0.0, 0.2]), method="pivot")
    with pytest.raises(InputError, match=r"\(0, 1\) more than once"):  # one copy at 1
        round_solution(support, SupportPoint(n, [[0, 1], [1, 0]], [1.0, 0.2]), method="pivot")
    with pytest.raises(InputError, match="distinct"):
        round_solution(support, SupportPoint(n, [[2, 2]], [0.0]), method="pivot")
    with pytest.raises(InputError, match="NaN"):
        round_solution(support, SupportPoint(n, [[0, 1]], [np.nan]), method="pivot")
    # unordered pairs and pairs at 1 are fine: (1, 0) is (0, 1)
    a = round_solution(support, SupportPoint(n, [[1, 0], [2, 3]], [0.0, 1.0]), method="threshold",
                       seed=0, refine="none")
    b = round_solution(support, SupportPoint(n, [[0, 1]], [0.0]), method="threshold", seed=0,
                       refine="none")
    assert a.labels.tolist() == b.labels.tolist()


def test_solution_npz_stores_the_pairs_away_from_one(tmp_path):
    from metricopt.io.reports import write_solution_npz

    graph = read_input("karate", "cc")
    _, support = both(graph, "jaccard")
    point = SupportPoint(graph.n, [[3, 5], [0, 2], [1, 4]], [0.25, 1.0, 0.0])
    write_solution_npz(support, point, tmp_path / "solution.npz")
    with np.load(tmp_path / "solution.npz", allow_pickle=False) as z:
        assert str(z["structure"]) == "support" and int(z["n"]) == graph.n
        assert z["i"].tolist() == [1, 3] and z["j"].tolist() == [4, 5]
        assert z["x"].tolist() == [0.0, 0.25] and float(z["bulk"]) == 1.0
        assert "pairs" not in z.files
    with pytest.raises(InputError, match="SupportPoint"):
        write_solution_npz(support, np.ones(3), tmp_path / "bad.npz")


def test_evaluate_file_on_a_support_problem(tmp_path):
    from metricopt.pipeline import evaluate_file

    graph = read_input("karate", "cc")
    dense, _ = both(graph, "jaccard")
    labels = np.arange(graph.n) % 3
    path = tmp_path / "clusters.csv"
    path.write_text("node,cluster\n" + "".join(f"{graph.labels[v]},{labels[v]}\n"
                                              for v in range(graph.n)))
    out = evaluate_file("karate", "cc", path, problem_params={"layout": "support"},
                        refine="local", seed=0)
    assert out["problem"]["params"]["layout"] == "support"
    assert out["objective"] == pytest.approx(cc_cost(dense, labels), rel=1e-12)
    assert out["refined"]["objective"] <= out["objective"]


def test_nothing_takes_n_squared_memory():
    """200,000 nodes (2e10 pairs): any dense array or pass over all pairs would fail."""
    n = 200_000
    ring = np.column_stack([np.arange(n), (np.arange(n) + 1) % n])
    graph = make_graph(n, ring.tolist())
    support = build_problem("cc", graph, weights="unit", layout="support")
    point = SupportPoint(n, support.pairs, np.full(support.pairs.shape[0], 0.2))
    res = round_solution(support, point, n_tries=2, seed=0, refine_candidates=1)
    assert is_partition(res.labels, n)
    assert res.objective == pytest.approx(clustering_cost(support, res.labels))


def test_a_run_rounds_and_writes_a_support_solution(tmp_path):
    """The whole run with a backend that returns a SupportPoint: rounding, report and
    files, with ``solution.npz`` holding the triples."""
    from metricopt import pipeline
    from metricopt.io.reports import read_clusters
    from metricopt.solvers._base import Solver

    class PointBackend(Solver):
        name = "support-point"
        structures = ("support",)
        objectives = ("l1",)
        options = ()

        def driver(self, problem):  # the explicit pairs at their targets
            point = SupportPoint(problem.n, problem.pairs, problem.target.copy())
            return dict(x=point, fun=problem.objective_value(point), status=0,
                        message="point", nit=1)

    out = tmp_path / "run"
    outcome = pipeline.run("karate", "cc", method=PointBackend(), out=out,
                           problem_params={"weights": "jaccard", "layout": "support"})
    problem = outcome.problem
    assert problem.structure == "support"
    labels = read_clusters(out / "clusters.csv", problem.labels)
    assert outcome.report["rounded_objective"] == pytest.approx(evaluate(problem, labels=labels))
    with np.load(out / "solution.npz", allow_pickle=False) as z:
        listed = problem.target != 1.0
        assert z["i"].tolist() == problem.pairs[listed, 0].tolist()
        assert z["j"].tolist() == problem.pairs[listed, 1].tolist()
        assert np.all(z["x"] == 0.0) and float(z["bulk"]) == 1.0


def test_a_point_listing_nothing_gives_the_dense_answer():
    graph = read_input("dolphins", "cc")
    dense, support = both(graph, "lambda")
    assert gain_layout(dense)["layout"] == "sparse"
    x = np.ones(dense.n_variables)
    empty = SupportPoint(graph.n, np.zeros((0, 2), dtype=np.int64), np.zeros(0))
    for method in ("auto", "kwikcluster"):
        rd = round_solution(dense, x, method=method, seed=1, n_tries=3)
        rs = round_solution(support, empty, method=method, seed=1, n_tries=3)
        assert rs.labels.tolist() == rd.labels.tolist()
        assert rs.objective == pytest.approx(rd.objective, rel=1e-12)


@pytest.mark.parametrize("weights", ["jaccard", "unit", "modularity"])
def test_round_solution_with_refinement_is_the_dense_one(karate_solved, weights):
    """Karate: the dense gains are read in place (dense layout); rounding and local
    search together still give the dense answer."""
    dense, support, x, point = karate_solved[weights]
    assert gain_layout(dense)["layout"] == "dense"
    rd = round_solution(dense, x, seed=9, n_tries=8)
    rs = round_solution(support, point, seed=9, n_tries=8)
    assert rs.labels.tolist() == rd.labels.tolist()
    assert rs.objective == pytest.approx(rd.objective, rel=1e-12)
    assert rs.refine["moves"] == rd.refine["moves"] and rs.method == rd.method


@pytest.mark.parametrize("name", ["karate", "football"])
@pytest.mark.parametrize("weights", sorted(WEIGHTS))
def test_refinement_tolerance_is_the_dense_one(name, weights):
    graph = read_input(name, "cc")
    dense, support = both(graph, weights)
    assert gain_layout(support)["tol"] == gain_layout(dense)["tol"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 24), p=st.sampled_from([0.1, 0.3, 0.6, 0.9]),
       weights=st.sampled_from(sorted(WEIGHTS)))
def test_refinement_equals_the_dense_one_on_random_graphs(seed, n, p, weights):
    """The layout the dense problem takes is taken again, and the search is the same,
    except around a background other than the bulk gain (the dense sparse layout then
    lists bulk pairs; the support search keeps the dense kernels' moves)."""
    rng = np.random.default_rng(seed)
    dense, support = both(random_graph(rng, n, p), weights)
    want, got = gain_layout(dense), gain_layout(support)
    bulk_gain = -support.bulk.weight if support.bulk.node_weights is None else None
    other = want["layout"] == "sparse" and want["s0"] != bulk_gain
    assert ("node_weights" in got) == (want["layout"] == "dense" or other)
    labels = rng.integers(0, rng.integers(1, n + 1), n)
    rd, rs = refine_clustering(dense, labels, seed=seed), refine_clustering(support, labels, seed=seed)
    assert rs.objective <= cc_cost(dense, labels) + 1e-12
    assert rs.objective == pytest.approx(cc_cost(dense, rs.labels), rel=1e-12, abs=1e-12)
    if not other:
        assert rs.labels.tolist() == rd.labels.tolist()
