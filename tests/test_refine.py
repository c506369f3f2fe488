"""Tests of the local-search refinement: kernels against the plain-Python references in
naive_refine.py, the gain layouts, the never-worse and clique properties on random
instances, reproducibility, and its place in round_solution and the reports."""

import itertools
import json

import numpy as np
import pytest

import naive_refine as naive
from metricopt.exceptions import InputError, InvalidParameterError, UnsupportedProblemError
from metricopt.graph import Graph
from metricopt.problems import MetricProblem, build_problem
from metricopt.problems._pairs import n_pairs
from metricopt.rounding import _refine_kernels as RK
from metricopt.rounding import (
    clustering_objective,
    cut_objective,
    evaluate,
    refine_clustering,
    refine_cut,
    refine_rounding,
    round_solution,
)
from metricopt.rounding._checks import csr_from_pairs
from metricopt.rounding.refine import gain_layout

# ---------------------------------------------------------------------- builders


def make_graph(n, edges):
    edges = np.array(sorted({(min(a, b), max(a, b)) for a, b in edges if a != b}), dtype=np.int64)
    return Graph(n=n, edges=edges.reshape(-1, 2), labels=np.arange(n).astype(object))


def random_graph(rng, n, p):
    return make_graph(n, [(a, b) for a, b in itertools.combinations(range(n), 2) if rng.random() < p])


def planted_graph(rng, sizes, p_in=0.8, p_out=0.1):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    edges = [(a, b) for a, b in itertools.combinations(range(groups.size), 2)
             if rng.random() < (p_in if groups[a] == groups[b] else p_out)]
    return make_graph(groups.size, edges)


def dense_cc(rng, n, p_dissimilar=0.6, unit=False):
    npairs = n_pairs(n)
    w = np.ones(npairs) if unit else rng.uniform(0.2, 2.0, npairs)
    d = (rng.random(npairs) < p_dissimilar).astype(np.float64)
    return MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=w, target=d, lower=0.0, upper=1.0, constant=0.5)


def signed_sparse_cc(rng, n, p_edge=0.3, p_negative=0.4):
    pairs = np.array([(a, b) for a, b in itertools.combinations(range(n), 2) if rng.random() < p_edge],
                     dtype=np.int64).reshape(-1, 2)
    m = pairs.shape[0]
    return MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="sparse",
                         objective="l1", weights=rng.uniform(0.2, 2.0, m),
                         target=(rng.random(m) < p_negative).astype(np.float64), lower=0.0, upper=1.0,
                         pairs=pairs)


def gain_fn(problem):
    """Full pair gain s(i, j) of a cc problem, straight from its arrays."""
    w, d = problem.weights, problem.target
    table = {}
    if problem.structure == "dense":
        rows, cols = problem.pair_nodes()
    else:
        rows, cols = problem.pairs[:, 0], problem.pairs[:, 1]
    for v, (a, b) in enumerate(zip(rows.tolist(), cols.tolist())):
        table[(a, b)] = table[(b, a)] = w[v] * (abs(1 - d[v]) - abs(d[v]))
    return lambda i, j: table.get((i, j), 0.0), table


def scratch(n):
    return (np.zeros(n), np.zeros(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64))


def csr_lists(indptr, indices):
    return [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(indptr.size - 1)]


# ------------------------------------------------------ kernels against references


@pytest.mark.parametrize("case", ["sparse-signed", "dense-unit", "dense-together", "cd"])
@pytest.mark.parametrize("seed", range(4))
def test_move_sweep_sparse_matches_reference(case, seed):
    rng = np.random.default_rng(seed)
    n = 14
    if case == "sparse-signed":
        problem = signed_sparse_cc(rng, n)
    elif case == "dense-unit":  # gains +-1: a background of -1 and exact ties
        problem = dense_cc(rng, n, p_dissimilar=0.8, unit=True)
    elif case == "dense-together":  # most pairs want to be together: s0 > 0
        problem = dense_cc(rng, n, p_dissimilar=0.2, unit=True)
    else:
        problem = build_problem("cd", random_graph(rng, n, 0.45))
    layout = gain_layout(problem, sparse_share=1.0)
    assert layout["layout"] == "sparse"
    adj = csr_lists(layout["indptr"], layout["indices"])
    if case == "cd":
        edges = {tuple(e) for e in problem.pairs.tolist()}
        s = lambda i, j: 1.0 if (min(i, j), max(i, j)) in edges else 0.0  # noqa: E731
    else:
        s, _ = gain_fn(problem)
    labels = np.arange(n, dtype=np.int64) if case == "cd" else rng.integers(0, 5, n).astype(np.int64)
    for sweep in range(3):
        order = rng.permutation(n).astype(np.int64)
        ref, ref_moves = naive.move_sweep(n, adj, s, layout["s0"], layout["clique"], layout["tol"],
                                          labels.tolist(), order.tolist())
        sizes = np.bincount(labels, minlength=n).astype(np.int64)
        acc, cnt, touched, free = scratch(n)
        moves, _ = RK.move_sweep_sparse(order, layout["indptr"], layout["indices"], layout["delta"],
                                        layout["s0"], layout["clique"], layout["tol"], labels, sizes,
                                        acc, cnt, touched, free)
        assert labels.tolist() == ref and moves == ref_moves, sweep
        assert np.array_equal(sizes, np.bincount(labels, minlength=n))
        assert not acc.any() and not cnt.any()


@pytest.mark.parametrize("seed", range(4))
def test_move_sweep_dense_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n = 13
    problem = dense_cc(rng, n)
    s, _ = gain_fn(problem)
    adj = [[j for j in range(n) if j != i] for i in range(n)]
    labels = rng.integers(0, 4, n).astype(np.int64)
    for _ in range(3):
        order = rng.permutation(n).astype(np.int64)
        ref, ref_moves = naive.move_sweep(n, adj, s, 0.0, False, 1e-10, labels.tolist(), order.tolist())
        sizes = np.bincount(labels, minlength=n).astype(np.int64)
        acc, cnt, touched, free = scratch(n)
        moves, _ = RK.move_sweep_dense(order, problem.weights, problem.target, n, 1e-10, labels, sizes,
                                       acc, cnt, touched, free)
        assert labels.tolist() == ref and moves == ref_moves


@pytest.mark.parametrize("case", ["sparse-signed", "dense-unit", "dense", "cd"])
@pytest.mark.parametrize("seed", range(4))
def test_merge_pass_matches_reference(case, seed):
    rng = np.random.default_rng(seed)
    n = 15
    head, nxt, tail = (np.empty(n, np.int64) for _ in range(3))
    acc, cnt, touched, _ = scratch(n)
    if case == "dense":
        problem = dense_cc(rng, n, p_dissimilar=0.4)
        s, _ = gain_fn(problem)
        adj = [[j for j in range(n) if j != i] for i in range(n)]
        labels = rng.integers(0, 8, n).astype(np.int64)
        ref, ref_merges = naive.merge_pass(n, adj, s, False, 1e-10, labels.tolist())
        sizes = np.bincount(labels, minlength=n).astype(np.int64)
        merges, _ = RK.merge_pass_dense(problem.weights, problem.target, n, 1e-10, labels, sizes,
                                        head, nxt, tail, acc, cnt, touched)
    else:
        if case == "cd":
            graph = random_graph(rng, n, 0.6)
            problem = build_problem("cd", graph)
            edges = {tuple(e) for e in problem.pairs.tolist()}
            s = lambda i, j: 1.0 if (min(i, j), max(i, j)) in edges else 0.0  # noqa: E731
            labels = np.arange(n, dtype=np.int64)
            rng.shuffle(labels)
        else:
            problem = (signed_sparse_cc(rng, n, p_negative=0.3) if case == "sparse-signed"
                       else dense_cc(rng, n, p_dissimilar=0.7, unit=True))
            s, _ = gain_fn(problem)
            labels = rng.integers(0, 8, n).astype(np.int64)
        layout = gain_layout(problem, sparse_share=1.0)
        adj = csr_lists(layout["indptr"], layout["indices"])
        ref, ref_merges = naive.merge_pass(n, adj, s, layout["clique"], layout["tol"], labels.tolist())
        sizes = np.bincount(labels, minlength=n).astype(np.int64)
        merges, _ = RK.merge_pass_sparse(layout["indptr"], layout["indices"], layout["delta"],
                                         layout["s0"], layout["clique"], layout["tol"], labels, sizes,
                                         head, nxt, tail, acc, cnt, touched)
    assert labels.tolist() == ref and merges == ref_merges
    assert np.array_equal(sizes, np.bincount(labels, minlength=n))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_fm_pass_matches_reference(weighted, seed):
    rng = np.random.default_rng(seed)
    n = 12
    graph = planted_graph(rng, [6, 6], 0.7, 0.2)
    w = rng.uniform(0.5, 2.0, graph.m) if weighted else np.ones(graph.m)
    indptr, indices, var = csr_from_pairs(graph.edges, n)
    side = np.zeros(n, np.uint8)
    side[rng.permutation(n)[:5]] = 1
    ref, ref_kept = naive.fm_pass(n, graph.edges.tolist(), w.tolist(), side.tolist(), 1e-12)
    phi, kept = RK.fm_pass(indptr, indices, np.ascontiguousarray(w[var]), side, 1e-12)
    assert side.tolist() == ref and kept == ref_kept
    assert phi == pytest.approx(naive.phi(n, graph.edges.tolist(), w.tolist(), ref), rel=1e-12)


# ------------------------------------------------------------------------ layouts


def test_gain_layout_reduces_alike_dense_gains_exactly():
    rng = np.random.default_rng(1)
    graph = planted_graph(rng, [10, 10, 10], 0.6, 0.02)
    for weights in ("jaccard", "unit"):
        problem = build_problem("cc", graph, weights=weights)
        layout = gain_layout(problem, sparse_share=0.5)
        assert layout["layout"] == "sparse" and layout["s0"] < 0
        _, table = gain_fn(problem)
        rebuilt = {(i, j): layout["s0"] for i in range(graph.n) for j in range(graph.n) if i != j}
        for i in range(graph.n):
            for e in range(layout["indptr"][i], layout["indptr"][i + 1]):
                rebuilt[(i, int(layout["indices"][e]))] += layout["delta"][e]
        assert all(rebuilt[key] == pytest.approx(value, abs=1e-15) for key, value in table.items())
    # continuous random gains stay dense (read in place)
    assert gain_layout(dense_cc(rng, 20))["layout"] == "dense"


# ------------------------------------------------------------ refinement property


def _instances():
    rng = np.random.default_rng(7)
    for t in range(6):
        yield f"dense-weighted-{t}", dense_cc(rng, int(rng.integers(5, 25)))
        yield f"sparse-signed-{t}", signed_sparse_cc(rng, int(rng.integers(5, 25)))
        graph = planted_graph(rng, [int(v) for v in rng.integers(3, 8, 3)], 0.7, 0.1)
        yield f"jaccard-{t}", build_problem("cc", graph)
        yield f"unit-{t}", build_problem("cc", graph, weights="unit")
        yield f"modularity-{t}", build_problem("cc", graph, weights="modularity")


@pytest.mark.parametrize("name,problem", list(_instances()), ids=lambda v: v if isinstance(v, str) else "")
def test_refine_never_worse_and_matches_evaluate(name, problem):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    for start in (rng.integers(0, 4, problem.n), np.zeros(problem.n, int), np.arange(problem.n)):
        res = refine_clustering(problem, start, seed=3)
        assert res.objective_before == pytest.approx(evaluate(problem, labels=start), abs=0)
        assert res.objective <= res.objective_before
        assert res.objective == evaluate(problem, labels=res.labels)
        assert res.labels.max() + 1 == res.n_clusters
        if res.stopped == "converged":  # a local optimum of single-node moves
            s, _ = gain_fn(problem)
            assert naive.best_single_move_gain(problem.n, s, res.labels.tolist()) <= 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_refine_cd_keeps_cliques_and_never_worse(seed):
    rng = np.random.default_rng(seed)
    graph = random_graph(rng, int(rng.integers(6, 20)), float(rng.uniform(0.2, 0.7)))
    problem = build_problem("cd", graph)
    res = refine_clustering(problem, np.arange(graph.n), seed=seed)  # singletons are cliques
    assert res.objective <= res.objective_before
    assert res.objective == clustering_objective(problem, res.labels)  # raises on a non-clique
    if res.stopped == "converged":
        edges = {tuple(e) for e in problem.pairs.tolist()}
        adj = [[j for j in range(graph.n) if (min(i, j), max(i, j)) in edges] for i in range(graph.n)]
        s = lambda i, j: 1.0 if (min(i, j), max(i, j)) in edges else 0.0  # noqa: E731
        assert naive.best_single_move_gain(graph.n, s, res.labels.tolist(), clique_adj=adj) == 0.0


def test_refine_cd_rejects_non_clique_input():
    problem = build_problem("cd", make_graph(3, [(0, 1), (1, 2)]))
    with pytest.raises(InputError, match="clique"):
        refine_clustering(problem, [0, 0, 0])


@pytest.mark.parametrize("seed", range(8))
def test_refine_cut_never_worse(seed):
    rng = np.random.default_rng(seed)
    graph = planted_graph(rng, [int(v) for v in rng.integers(4, 12, 2)], 0.6, 0.1)
    problem = build_problem("sc", graph)
    side = np.zeros(graph.n, bool)
    side[rng.permutation(graph.n)[: int(rng.integers(1, graph.n))]] = True
    res = refine_cut(problem, side)
    assert res.objective <= res.objective_before == cut_objective(problem, side)
    assert res.objective == pytest.approx(cut_objective(problem, res.in_cut), rel=1e-15)
    assert 2 * res.in_cut.sum() <= graph.n


def test_refine_is_reproducible_and_seeded():
    rng = np.random.default_rng(11)
    problem = dense_cc(rng, 40, p_dissimilar=0.5)
    start = rng.integers(0, 3, 40)
    a = refine_clustering(problem, start, seed=5)
    b = refine_clustering(problem, start, seed=5)
    assert np.array_equal(a.labels, b.labels) and a.objective == b.objective and a.moves == b.moves
    others = {tuple(refine_clustering(problem, start, seed=s).labels) for s in range(6)}
    assert len(others) > 1  # the seed drives the node order


def test_budget_and_time_limit_only_stop():
    rng = np.random.default_rng(2)
    problem = dense_cc(rng, 30)
    start = np.zeros(30, int)
    none = refine_clustering(problem, start, max_sweeps=0)
    assert none.stopped == "budget" and none.objective == none.objective_before and none.moves == 0
    stopped = refine_clustering(problem, start, time_limit=0.0, seed=1)
    assert stopped.stopped == "time" and stopped.objective == stopped.objective_before
    one = refine_clustering(problem, start, max_sweeps=1, seed=1)
    full = refine_clustering(problem, start, seed=1)
    assert one.sweeps == 1 and full.objective <= one.objective < one.objective_before


def test_refine_errors():
    rng = np.random.default_rng(0)
    problem = dense_cc(rng, 6)
    with pytest.raises(InvalidParameterError, match="max_sweeps"):
        refine_clustering(problem, np.zeros(6, int), max_sweeps=-1)
    with pytest.raises(InvalidParameterError, match="time_limit"):
        refine_clustering(problem, np.zeros(6, int), time_limit="soon")
    with pytest.raises(InputError):
        refine_clustering(problem, np.zeros(5, int))
    with pytest.raises(UnsupportedProblemError):
        refine_cut(problem, np.zeros(6, bool))
    with pytest.raises(InvalidParameterError, match="refine"):
        round_solution(problem, np.ones(n_pairs(6)), refine="greedy")


# --------------------------------------------------------------- round_solution


def test_round_solution_refines_by_default():
    rng = np.random.default_rng(4)
    graph = planted_graph(rng, [8, 8, 8], 0.5, 0.15)
    problem = build_problem("cc", graph)
    x = np.clip(rng.random(problem.n_variables), 0, 1)  # a poor x: room to improve
    plain = round_solution(problem, x, seed=0, refine="none")
    refined = round_solution(problem, x, seed=0)
    assert plain.refine["method"] == "none" and plain.refine["objective_before"] == plain.objective
    assert refined.refine["objective_before"] == plain.objective
    assert refined.per_method == plain.per_method
    assert refined.objective < plain.objective
    assert refined.objective == evaluate(problem, labels=refined.labels)
    assert refined.refine["moves"] > 0


def test_round_solution_refines_cuts_and_cliques():
    rng = np.random.default_rng(5)
    graph = planted_graph(rng, [9, 9], 0.7, 0.1)
    sc = build_problem("sc", graph)
    x = rng.random(sc.n_variables)
    r = round_solution(sc, x, seed=0)
    assert r.objective <= r.refine["objective_before"]
    assert r.objective == pytest.approx(cut_objective(sc, r.in_cut), rel=1e-15)
    assert r.side_sizes == (int(r.in_cut.sum()), graph.n - int(r.in_cut.sum()))
    cd = build_problem("cd", graph)
    r = round_solution(cd, rng.random(cd.n_variables), seed=0)
    assert r.objective <= r.refine["objective_before"]
    assert r.objective == clustering_objective(cd, r.labels)


def test_refine_rounding_none_is_identity():
    rng = np.random.default_rng(6)
    problem = dense_cc(rng, 10)
    r = round_solution(problem, rng.random(problem.n_variables), seed=0, refine="none")
    same = refine_rounding(problem, r, method="none")
    assert np.array_equal(same.labels, r.labels) and same.objective == r.objective


# ----------------------------------------------------------------- reports, CLI


def test_report_and_clusters_csv_hold_the_refined_answer(tmp_path):
    from metricopt import pipeline

    out = tmp_path / "run"
    outcome = pipeline.run("karate", "cc", method="highs", rounding={"seed": 0, "n_tries": 2},
                           problem_params={"weights": "unit"}, out=out)
    rep = json.loads((out / "report.json").read_text())
    rnd = rep["rounding"]
    assert rnd["refine"]["method"] == "local"
    assert rep["rounded_objective"] == rnd["refined_objective"] <= rnd["objective"]
    assert rep["approximation_ratio"] == pytest.approx(rep["rounded_objective"] / rep["lower_bound"])
    again = pipeline.evaluate_file("karate", "cc", out / "clusters.csv", report=out / "report.json")
    assert again["objective"] == pytest.approx(rep["rounded_objective"], rel=1e-12)
    assert outcome.rounding["objective"] == rep["rounded_objective"]
    off = pipeline.run("karate", "cc", method="highs", problem_params={"weights": "unit"},
                       rounding={"seed": 0, "n_tries": 2, "refine": "none"})
    assert off.report["rounding"]["refine"]["method"] == "none"
    assert off.report["rounding"]["objective"] == rnd["objective"]
    assert off.report["rounded_objective"] == rnd["objective"]


def test_cli_refine_options(runner, tmp_path):
    from metricopt.cli import cli as main

    res = runner.invoke(main, ["solve", "cc", "karate", "--method", "highs", "--seed", "0",
                               "--refine", "none", "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["rounding"]["refine"]["method"] == "none"
    # a poor clustering: everything in one cluster, improved by evaluate --refine
    clusters = tmp_path / "one.csv"
    clusters.write_text("node,cluster\n" + "".join(f"{v},0\n" for v in range(1, 35)))
    written = tmp_path / "better.csv"
    res = runner.invoke(main, ["evaluate", "cc", "karate", str(clusters), "--weights", "unit",
                               "--lower-bound", "1", "--refine", "local", "--refined-out",
                               str(written), "--json"])
    assert res.exit_code == 0, res.output
    ev = json.loads(res.stdout)
    assert ev["refined"]["objective"] < ev["objective"]
    assert ev["refined"]["approximation_ratio"] == pytest.approx(ev["refined"]["objective"])
    res = runner.invoke(main, ["evaluate", "cc", "karate", str(written), "--weights", "unit", "--json"])
    assert json.loads(res.stdout)["objective"] == pytest.approx(ev["refined"]["objective"], rel=1e-12)
    res = runner.invoke(main, ["solve", "mn", "karate", "--refine", "local"])
    assert res.exit_code == 2 and "--refine" in res.output



@pytest.mark.parametrize("n,block", [(1, 8), (21, 8), (64, 8), (30, 1)])
def test_visit_order_is_a_seeded_permutation(n, block):
    from metricopt.rounding.refine import _visit_order

    a = _visit_order(np.random.default_rng(3), n, block)
    assert sorted(a.tolist()) == list(range(n))
    assert np.array_equal(a, _visit_order(np.random.default_rng(3), n, block))


@pytest.mark.parametrize("seed", range(3))
def test_more_candidates_never_worse(seed):
    rng = np.random.default_rng(seed)
    graph = planted_graph(rng, [7, 7, 7, 7], 0.6, 0.1)
    for problem in (build_problem("cc", graph, weights="unit"), build_problem("cd", graph)):
        x = rng.random(problem.n_variables)
        one = round_solution(problem, x, seed=seed, refine_candidates=1)
        many = round_solution(problem, x, seed=seed, refine_candidates=6)
        assert one.refine["candidates"] == 1 and many.refine["candidates"] >= 1
        assert many.objective <= one.objective <= one.refine["objective_before"]
        assert many.refine["objective_before"] == one.refine["objective_before"]
        assert many.objective == evaluate(problem, labels=many.labels)
    with pytest.raises(InvalidParameterError, match="refine_candidates"):
        round_solution(problem, x, refine_candidates=0)
