"""Leiden clusterings (``--round leiden``), scored and certified like any rounding.

Needs the optional packages (``pip install 'metricopt[leiden]'``, part of ``.[dev]``);
the tests that do are skipped without them, except the one that checks the error.
"""

import json
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import metricopt
from metricopt import pipeline
from metricopt.cli import cli
from metricopt.exceptions import SolverNotAvailableError
from metricopt.graph import Graph
from metricopt.rounding import is_partition, round_solution
from test_resolution import communities, naive_objective, nx_graph

DATA = Path(__file__).parent / "data"
POLBOOKS = str(DATA / "polbooks.txt")


def needs_leiden():
    pytest.importorskip("leidenalg")
    pytest.importorskip("igraph")


@pytest.fixture(scope="module")
def graphs():
    return {"karate": metricopt.read_graph("karate"), "polbooks": metricopt.read_graph(POLBOOKS)}


def pairwise_cost(problem, labels):
    """``sum w |split - d|`` over the problem's pairs, one pair at a time."""
    i, j = problem.pair_nodes()
    total = 0.0
    for a, b, w, d in zip(i.tolist(), j.tolist(), problem.weights.tolist(),
                          problem.target.tolist()):
        split = 0.0 if labels[a] == labels[b] else 1.0
        total += w * abs(split - d)
    return total


CASES = [("lambda", 0.2), ("lambda-degree", 0.003), ("modularity", 1.0), ("modularity", 0.6),
         ("unit", None), ("jaccard", None)]


@pytest.mark.parametrize("name", ["karate", "polbooks"])
@pytest.mark.parametrize("mode,resolution", CASES)
def test_leiden_is_a_partition_scored_by_the_objective(graphs, name, mode, resolution):
    needs_leiden()
    g = graphs[name]
    kw = {} if resolution is None else {"resolution": resolution}
    p = metricopt.build_problem("cc", g, weights=mode, **kw)
    r = round_solution(p, None, method="leiden", n_tries=3, seed=1)
    assert r.method == "leiden" and list(r.per_method) == ["leiden"]
    assert is_partition(r.labels, g.n)
    assert r.n_clusters == len(np.unique(r.labels))
    if resolution is None:
        expected = pairwise_cost(p, r.labels)
    else:
        expected = naive_objective(g, mode, resolution, r.labels)
    assert r.objective == pytest.approx(expected, rel=1e-12, abs=1e-9)
    # the rounding is reproducible from its seed
    again = round_solution(p, None, method="leiden", n_tries=3, seed=1)
    np.testing.assert_array_equal(again.labels, r.labels)


def test_leiden_quality_is_an_affine_image_of_the_objective(graphs):
    # the docstring's claim: Leiden's quality function and the objective have the same
    # optimisers (CPM at R for lambda; modularity for modularity weights)
    needs_leiden()
    import igraph as ig
    import leidenalg as la

    g = graphs["karate"]
    G = ig.Graph(n=g.n, edges=g.edges.tolist())
    rng = np.random.default_rng(0)
    lam = metricopt.build_problem("cc", g, weights="lambda", resolution=0.3)
    mod = metricopt.build_problem("cc", g, weights="modularity")
    for k in (1, 3, 9):
        labels = rng.integers(0, k, g.n)
        cpm = la.CPMVertexPartition(G, initial_membership=labels.tolist(),
                                    resolution_parameter=0.3)
        # leidenalg sums CPM over ordered pairs: quality = 2 sum_c (m_c - R C(n_c, 2))
        assert metricopt.evaluate(lam, labels=labels) == pytest.approx(
            0.7 * g.m - cpm.quality() / 2)
        q = la.ModularityVertexPartition(G, initial_membership=labels.tolist()).quality()
        assert pipeline.objective_scores(mod, metricopt.evaluate(mod, labels=labels))[
            "modularity"] == pytest.approx(q, abs=1e-12)


def test_signed_graph_uses_two_layers(graphs):
    needs_leiden()
    from metricopt.rounding.leiden import leiden_quality

    g = graphs["karate"]
    signs = np.where(np.random.default_rng(3).random(g.m) < 0.3, -1.0, 1.0)
    signed = Graph(n=g.n, edges=g.edges, labels=g.labels, weights=signs * 2.0, name="signed")
    p = metricopt.build_problem("cc", signed, weights="signed")
    assert leiden_quality(p) == ("signed-cpm", 0.0)
    r = round_solution(p, None, method="leiden", n_tries=2, seed=0)
    assert is_partition(r.labels, g.n)
    cost = sum(2.0 for (a, b), s in zip(g.edges.tolist(), signs)
               if (s > 0) != (r.labels[a] == r.labels[b]))
    assert r.objective == pytest.approx(cost)
    # no negative edge inside a cluster is worth keeping when singletons cost less
    assert r.objective <= 2.0 * np.count_nonzero(signs > 0)


def test_leiden_with_comparison_keeps_its_own_answer(graphs):
    needs_leiden()
    g = graphs["karate"]
    p = metricopt.build_problem("cc", g, weights="lambda", resolution=0.3)
    res = metricopt.solve(p, method="highs")
    alone = round_solution(p, res.x, method="leiden", n_tries=4, seed=5)
    both = round_solution(p, res.x, method="leiden", n_tries=4, seed=5, compare="auto")
    lp = round_solution(p, res.x, method="auto", n_tries=4, seed=5)
    assert both.method == "leiden" and both.objective == alone.objective
    np.testing.assert_array_equal(both.labels, alone.labels)
    assert set(both.per_method) == {"leiden", "pivot", "threshold", "region-growing"}
    for name, value in lp.per_method.items():
        assert both.per_method[name] == value


@pytest.mark.parametrize("name,mode,resolution", [("karate", "modularity", None),
                                                  ("polbooks", "modularity", None),
                                                  ("polbooks", "lambda", "0.2"),
                                                  ("karate", "lambda-degree", "0.01")])
def test_cli_round_leiden_is_certified(runner, graphs, tmp_path, name, mode, resolution):
    needs_leiden()
    source = "karate" if name == "karate" else POLBOOKS
    out = tmp_path / "run"
    args = ["solve", "cc", source, "--weights", mode, "--round", "leiden", "--seed", "0",
            "--round-tries", "5", "--out", str(out), "--json", "--quiet"]
    if resolution is not None:
        args += ["--resolution", resolution]
    res = runner.invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    rnd = rep["rounding"]
    assert rnd["method"] == "leiden" and rnd["requested_method"] == "leiden"
    assert set(rnd["per_method"]) == {"leiden", "pivot", "threshold", "region-growing"}
    lb = rep["lower_bound"]
    assert lb > 0
    assert rep["approximation_ratio"] == pytest.approx(rep["rounded_objective"] / lb)
    assert rep["approximation_ratio"] >= 1.0
    assert rnd["per_method_ratio"]["leiden"] == rep["approximation_ratio"]
    # the clustering written out: a partition whose objective is recomputed here
    g = graphs[name]
    clusters = dict(line.split(",") for line in (out / "clusters.csv").read_text().split()[1:])
    labels = np.array([int(clusters[str(label)]) for label in g.labels])
    assert is_partition(labels, g.n)
    r = 1.0 if resolution is None else float(resolution)
    assert naive_objective(g, mode, r, labels) == pytest.approx(rep["rounded_objective"],
                                                                rel=1e-12)
    if mode == "modularity":
        q = nx.community.modularity(nx_graph(g), communities(labels))
        assert rep["scores"]["modularity"] == pytest.approx(q, abs=1e-12)
        assert q <= rep["scores"]["modularity_upper_bound"] + 1e-9


def test_cli_summary_shows_modularity_and_comparison(runner):
    needs_leiden()
    res = runner.invoke(cli, ["solve", "cc", "karate", "--weights", "modularity", "--round",
                              "leiden", "--seed", "0", "--round-tries", "2"],
                        catch_exceptions=False)
    assert res.exit_code == 0
    assert res.stdout == ""
    assert "modularity upper bound" in res.stderr
    assert "per method" in res.stderr and "leiden" in res.stderr


def test_evaluate_reports_modularity(runner, tmp_path, graphs):
    g = graphs["karate"]
    labels = (np.arange(g.n) % 3).astype(np.int64)
    path = tmp_path / "c.csv"
    path.write_text("node,cluster\n" + "".join(f"{lab},{c}\n" for lab, c in zip(g.labels, labels)))
    res = runner.invoke(cli, ["evaluate", "cc", "karate", str(path), "--weights", "modularity",
                              "--lower-bound", "18.0", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    q = nx.community.modularity(nx_graph(g), communities(labels))
    assert out["scores"]["modularity"] == pytest.approx(q, abs=1e-12)
    p = metricopt.build_problem("cc", g, weights="modularity")
    scale, offset = p.units["modularity"]
    assert out["scores"]["modularity_upper_bound"] == pytest.approx(scale * 18.0 + offset)


def test_missing_leidenalg_is_one_error_line(runner, monkeypatch, graphs):
    monkeypatch.setitem(sys.modules, "leidenalg", None)
    res = runner.invoke(cli, ["solve", "cc", "karate", "--round", "leiden"])
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert lines == ["Error: rounding method 'leiden' needs the leidenalg and igraph packages "
                     "(leidenalg is not installed): pip install 'metricopt[leiden]'"]
    p = metricopt.build_problem("cc", graphs["karate"], weights="unit")
    with pytest.raises(SolverNotAvailableError, match=r"pip install 'metricopt\[leiden\]'"):
        round_solution(p, None, method="leiden")


@pytest.mark.parametrize("args,message", [
    (["--weights", "lambda"], "--weights lambda needs --resolution R"),
    (["--weights", "lambda-degree"], "--weights lambda-degree needs --resolution R"),
    (["--resolution", "0.5"], "--resolution applies to --weights lambda, lambda-degree, "
                              "modularity only"),
    (["--weights", "lambda", "--resolution", "1"], "needs R in (0, 1)"),
    (["--weights", "modularity", "--resolution", "0"], "not a finite number in (0, inf)"),
])
def test_resolution_usage_errors(runner, args, message):
    res = runner.invoke(cli, ["solve", "cc", "karate", *args])
    assert res.exit_code == 2
    assert message in res.stderr


def test_round_leiden_does_not_apply_to_cluster_deletion(runner):
    res = runner.invoke(cli, ["solve", "cd", "karate", "--round", "leiden"])
    assert res.exit_code == 2
    assert "--round leiden does not apply to cd" in res.stderr
