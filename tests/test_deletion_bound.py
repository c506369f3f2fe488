"""The cluster-deletion bound with neighbourhood independent-set rows: its separation
kernel against the reference, and the bound against brute force, an independent
integer program and the plain LP."""

import itertools

import networkx as nx
import numpy as np
import pytest

import metricopt
from metricopt.solvers import _deletion_kernels as K
from metricopt.solvers.deletion_lp import cluster_deletion_bound
from test_editing import _partitions  # every set partition of a list


def _graph(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    return np.array(sorted(g.edges()), dtype=np.int64).reshape(-1, 2)


def _csr(n, edges):
    from metricopt.problems._cycles import edge_csr

    return edge_csr(n, edges)


def brute_force_deletion(n, edges):
    """The cluster-deletion optimum by trying every partition into cliques."""
    adj = {tuple(e) for e in edges.tolist()} | {(b, a) for a, b in edges.tolist()}
    best = len(edges)
    for part in _partitions(list(range(n))):
        kept = 0
        for block in part:
            pairs = list(itertools.combinations(block, 2))
            if any(p not in adj for p in pairs):
                break
            kept += len(pairs)
        else:
            best = min(best, len(edges) - kept)
    return best


def mip_deletion(n, edges):
    """The cluster-deletion optimum by HiGHS's branch and bound on the textbook integer
    program (triangle and open-wedge rows, binary edges), written here independently."""
    import highspy

    m = len(edges)
    eid = {tuple(e): i for i, e in enumerate(edges.tolist())}
    eid.update({(b, a): i for (a, b), i in list(eid.items())})
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(m, np.zeros(m), np.ones(m))
    h.changeColsCost(m, np.arange(m), np.ones(m))
    h.changeColsIntegrality(m, np.arange(m), np.ones(m, dtype=np.uint8))
    nbrs = [[] for _ in range(n)]
    for a, b in edges.tolist():
        nbrs[a].append(b)
        nbrs[b].append(a)
    for j in range(n):
        for a, b in itertools.combinations(nbrs[j], 2):
            if (a, b) in eid:
                t = [eid[j, a], eid[j, b], eid[a, b]]
                for r in range(3):
                    h.addRow(-np.inf, 0.0, 3, np.array([t[r], t[r - 1], t[r - 2]], dtype=np.int32),
                             np.array([1.0, -1.0, -1.0]))
            else:
                h.addRow(1.0, np.inf, 2, np.array([eid[j, a], eid[j, b]], dtype=np.int32),
                         np.array([1.0, 1.0]))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return round(h.getInfo().objective_function_value)


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_the_reference(seed):
    rng = np.random.default_rng(seed)
    n = 30
    edges = _graph(n, 0.25, seed)
    indptr, nbrs, eids = _csr(n, edges)
    x = rng.choice([0.0, 0.25, 0.5, 1.0], size=len(edges)) if seed % 2 else rng.uniform(size=len(edges))
    for max_cand, tries in ((32, 8), (4, 2)):
        offsets = np.zeros(n * tries + 1, dtype=np.int64)
        members = np.empty(n * tries * max_cand, dtype=np.int64)
        viol = np.empty(n * tries)
        count = K.violated_independent_sets(n, indptr, nbrs, eids, x, max_cand, tries, 1e-6,
                                            offsets, members, viol)
        got = [(members[offsets[i]:offsets[i + 1]].tolist(), viol[i]) for i in range(count)]
        want = K.independent_set_rows_reference(n, indptr, nbrs, eids, x, max_cand, tries, 1e-6)
        assert [g[0] for g in got] == [w[0] for w in want]
        np.testing.assert_allclose([g[1] for g in got], [w[1] for w in want], rtol=1e-12)
        for row, _ in got:  # each row: edges of one centre to pairwise non-adjacent ends
            ends = [set(edges[e].tolist()) for e in row]
            centre = set.intersection(*ends)
            assert len(centre) == 1
            others = [(e - centre).pop() for e in ends]
            adj = {tuple(e) for e in edges.tolist()}
            assert not any((a, b) in adj or (b, a) in adj for a, b in itertools.combinations(others, 2))


@pytest.mark.parametrize("seed", range(12))
def test_bound_never_above_the_brute_force_optimum(seed):
    n = 7 + seed % 3
    edges = _graph(n, 0.3 + 0.05 * (seed % 4), seed)
    opt = brute_force_deletion(n, edges)
    res = cluster_deletion_bound(n, edges)
    plain = cluster_deletion_bound(n, edges, cuts=False)
    assert plain.bound <= res.bound <= opt
    assert res.lp_value <= opt + 1e-9


@pytest.mark.parametrize("n, seed", [(12, 0), (18, 1), (24, 2), (30, 3)])
def test_bound_against_an_integer_program(n, seed):
    edges = _graph(n, 0.25, 100 + seed)
    opt = mip_deletion(n, edges)
    res = cluster_deletion_bound(n, edges)
    assert res.bound <= opt
    assert res.bound >= cluster_deletion_bound(n, edges, cuts=False).bound


def test_a_star_needs_the_set_rows():
    """A star of k leaves: every clustering deletes k - 1 edges; the plain LP k / 2."""
    k = 6
    edges = np.array([[0, i] for i in range(1, k + 1)])
    plain = cluster_deletion_bound(k + 1, edges, cuts=False)
    res = cluster_deletion_bound(k + 1, edges)
    assert plain.lp_value == pytest.approx(k / 2) and plain.relaxation == "triangle-lp"
    assert res.bound == k - 1 and res.relaxation == "independent-set-lp"
    assert res.stopped == "converged"


@pytest.mark.parametrize("graph", ["karate", "dolphins", "lesmis"])
def test_plain_rows_give_the_cd_lp_and_the_set_rows_more(graph):
    g = metricopt.read_graph(graph)
    lp = metricopt.solve(metricopt.build_problem("cd", g), method="highs")
    plain = cluster_deletion_bound(g.n, g.edges, cuts=False)
    assert plain.lp_value == pytest.approx(lp.fun, rel=1e-9, abs=1e-9)
    res = cluster_deletion_bound(g.n, g.edges)
    assert res.lp_value >= lp.fun - 1e-9
    assert res.bound > np.ceil(lp.fun - 1e-9)  # strictly stronger on these graphs


def test_time_limit_keeps_a_certified_bound():
    g = metricopt.read_graph("football")
    res = cluster_deletion_bound(g.n, g.edges, time_limit=0.0)
    assert res.stopped == "time" and res.rounds == 1
    assert 0 <= res.bound <= cluster_deletion_bound(g.n, g.edges).bound


def test_parameters_are_checked():
    from metricopt.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="max_rounds"):
        cluster_deletion_bound(3, [[0, 1]], max_rounds=0)


def test_a_run_with_the_editing_relaxation_certifies_cd_against_the_larger_bound(tmp_path):
    from metricopt import pipeline

    out = pipeline.run("karate", "cd", problem_params={"relaxation": "editing"},
                       out=tmp_path / "run")
    rep = out.report
    ed = rep["editing"]
    assert ed["relaxations"] == {"independent-set-lp": 1}
    assert ed["bound"] > rep["lower_bound"] and ed["bound_source"] == "editing"
    assert rep["rounded_objective"] >= ed["bound"]
    assert rep["approximation_ratio"] == pytest.approx(rep["rounded_objective"] / ed["bound"])
    assert ed["exact"] == (rep["rounded_objective"] == ed["bound"])
    assert ed["search"]["objective"] >= ed["bound"]


def test_evaluate_certifies_a_cd_clustering_with_the_deletion_bound(tmp_path):
    from metricopt import pipeline

    g = metricopt.read_graph("dolphins")
    path = tmp_path / "clusters.csv"  # every node alone: all edges deleted
    path.write_text("node,cluster\n" + "".join(f"{name},{i}\n" for i, name in enumerate(g.labels)))
    res = pipeline.evaluate_file("dolphins", "cd", path, editing_bound=True)
    bound = cluster_deletion_bound(g.n, g.edges).bound
    assert res["editing_bound"]["bound"] == bound and res["bound_source"] == "editing"
    assert res["approximation_ratio"] == pytest.approx(g.m / bound)


@pytest.mark.parametrize("kind", ["cd", "cc"])
def test_a_ctrl_c_stops_the_bound_inside_highs(kind, sigint_from_highs, sigint_raises):
    """A SIGINT from HiGHS's first callback in the deletion (cd) or editing (cc) bound:
    HiGHS stops at that iteration and the interrupt reaches the caller."""
    import time

    from metricopt.solvers.editing_lp import editing_lp_bound

    g = metricopt.read_graph("football")
    sent = sigint_from_highs()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if kind == "cd":
            cluster_deletion_bound(g.n, g.edges)
        else:
            editing_lp_bound(g.n, np.ones(g.n), g.edges)
    assert sent.get("sent") and time.perf_counter() - t0 < 5


def test_cd_has_the_full_and_editing_relaxations_only():
    from click.testing import CliRunner

    from metricopt import pipeline
    from metricopt.cli import cli
    from metricopt.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="is cc's"):
        pipeline.run("karate", "cd", problem_params={"relaxation": "wedges"})
    with pytest.raises(InvalidParameterError, match="build the problem with relaxation=.full."):
        metricopt.build_problem("cd", metricopt.read_graph("karate"), relaxation="editing")
    res = CliRunner().invoke(cli, ["solve", "cd", "karate", "--relaxation", "wedges"])
    assert res.exit_code == 2 and "is cc's" in res.output
