"""Cluster editing: exact search, data reduction and the cutting-plane LP bound.

Checked against two independent references: every partition of a small graph
(brute force) and an integer program (binary pair variables with the triangle
inequalities, solved by HiGHS's MIP solver).
"""

import itertools

import numpy as np
import pytest

from metricopt.bounds.editing_exact import (
    components,
    critical_cliques,
    editing_cost,
    exact_cluster_editing,
)
from metricopt.exceptions import InvalidParameterError


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < p
    return np.column_stack([iu[keep], ju[keep]]).astype(np.int64)


def _planted_graph(n, n_clusters, flips, seed):
    """Cliques with ``flips`` random pairs toggled (so critical cliques and components occur)."""
    rng = np.random.default_rng(seed)
    lab = rng.integers(n_clusters, size=n)
    adj = lab[:, None] == lab[None, :]
    iu, ju = np.triu_indices(n, 1)
    on = adj[iu, ju]
    flip = rng.choice(iu.size, size=min(flips, iu.size), replace=False)
    on[flip] = ~on[flip]
    return np.column_stack([iu[on], ju[on]]).astype(np.int64)


def _partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]
        yield [[first]] + part


def _brute_force(n, edges):
    best = None
    for part in _partitions(list(range(n))):
        lab = np.empty(n, dtype=np.int64)
        for c, block in enumerate(part):
            lab[block] = c
        cost = editing_cost(n, edges, lab)
        best = cost if best is None else min(best, cost)
    return best


def _mip_optimum(n, edges):
    """Cluster-editing optimum by an integer program (x_uv = 1: u, v separated)."""
    highspy = pytest.importorskip("highspy")
    iu, ju = np.triu_indices(n, 1)
    col = {(int(a), int(b)): c for c, (a, b) in enumerate(zip(iu, ju))}
    adj = np.zeros((n, n), dtype=bool)
    adj[edges[:, 0], edges[:, 1]] = adj[edges[:, 1], edges[:, 0]] = True
    cost = np.where(adj[iu, ju], 1.0, -1.0)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    empty = np.empty(0, dtype=np.int32)
    h.addCols(cost.size, cost, np.zeros(cost.size), np.ones(cost.size), 0, empty, empty, np.empty(0))
    h.changeColsIntegrality(cost.size, np.arange(cost.size, dtype=np.int32),
                            np.full(cost.size, highspy.HighsVarType.kInteger))
    starts, index = [], []
    for i, j, k in itertools.combinations(range(n), 3):
        pij, pik, pjk = col[(i, j)], col[(i, k)], col[(j, k)]
        for long, a, b in ((pij, pik, pjk), (pik, pij, pjk), (pjk, pij, pik)):
            starts.append(len(index))
            index += [long, a, b]
    r = len(starts)
    h.addRows(r, np.full(r, -np.inf), np.zeros(r), len(index), np.array(starts, dtype=np.int32),
              np.array(index, dtype=np.int32), np.tile([1.0, -1.0, -1.0], r))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return int(round(h.getInfo().objective_function_value + float(np.sum(~adj[iu, ju]))))


# ------------------------------------------------------------------ exact search
@pytest.mark.parametrize("seed", range(12))
def test_exact_matches_brute_force(seed):
    n = 4 + seed % 5  # 4..8 nodes
    edges = _random_graph(n, 0.3 + 0.05 * (seed % 6), seed) if seed % 2 else _planted_graph(n, 3, 3, seed)
    sol = exact_cluster_editing(n, edges)
    assert sol.cost == _brute_force(n, edges)
    assert editing_cost(n, edges, sol.labels) == sol.cost


@pytest.mark.parametrize("seed", range(6))
def test_exact_matches_integer_program(seed):
    n = 10 + 2 * seed  # 10..20 nodes
    edges = _planted_graph(n, 3, n, seed) if seed % 2 else _random_graph(n, 0.35, seed)
    sol = exact_cluster_editing(n, edges, max_nodes=20)
    assert sol.cost == _mip_optimum(n, edges)
    assert editing_cost(n, edges, sol.labels) == sol.cost


def test_critical_cliques_and_components():
    # a triangle 0-1-2 with a pendant 3 on node 2, and a separate edge 4-5
    edges = np.array([[0, 1], [0, 2], [1, 2], [2, 3], [4, 5]])
    assert critical_cliques(6, edges).tolist() == [0, 0, 1, 2, 3, 3]
    assert components(6, edges).tolist() == [0, 0, 0, 0, 1, 1]
    sol = exact_cluster_editing(6, edges)
    assert sol.cost == 1 and sol.n_cliques == 3


def test_exact_refuses_large_components():
    edges = np.array([[i, i + 1] for i in range(9)])
    with pytest.raises(InvalidParameterError, match="critical cliques"):
        exact_cluster_editing(10, edges, max_nodes=5)
    with pytest.raises(InvalidParameterError):
        exact_cluster_editing(3, [[0, 0]])


def test_editing_cost_counts_both_kinds_of_edit():
    edges = np.array([[0, 1], [1, 2]])
    assert editing_cost(3, edges, [0, 0, 0]) == 1  # joins the non-edge 0-2
    assert editing_cost(3, edges, [0, 1, 2]) == 2  # cuts both edges
    assert editing_cost(3, edges, [0, 0, 1]) == 1


# ------------------------------------------------------------------ LP bounds
@pytest.mark.parametrize("seed", range(6))
def test_lp_bound_never_above_optimum(seed):
    from metricopt.solvers.editing_lp import cluster_editing_bound

    n = 10 + 2 * seed
    edges = _planted_graph(n, 3, n, seed) if seed % 2 else _random_graph(n, 0.35, seed)
    opt = exact_cluster_editing(n, edges, max_nodes=20).cost
    plain = cluster_editing_bound(n, edges, exact_nodes=0, cuts=False, reduce=False)
    cut = cluster_editing_bound(n, edges, exact_nodes=0)
    assert plain.bound <= cut.bound <= opt
    assert cut.lp_value >= plain.lp_value - 1e-6
    assert set(cut.relaxations) <= {"triangle-lp", "2-partition-lp", "exhaustive"}
    exact = cluster_editing_bound(n, edges, exact_nodes=20)
    assert exact.exact and exact.bound == opt
    assert editing_cost(n, edges, exact.labels) == opt


def test_star_cuts_raise_the_triangle_lp():
    """The triangle LP is fractional on a star; the 2-partition row with S = {centre} cuts it."""
    from metricopt.solvers.editing_lp import cluster_editing_bound, editing_lp_bound

    # star with 4 leaves: triangle LP puts x = 1/2 on edges (value 2), optimum 3
    edges = np.array([[0, 1], [0, 2], [0, 3], [0, 4]])
    plain = editing_lp_bound(5, np.ones(5), edges, cuts=False)
    cut = editing_lp_bound(5, np.ones(5), edges, cuts=True)
    assert plain["value"] == pytest.approx(2.0, abs=1e-6)
    assert plain["relaxation"] == "triangle-lp"
    assert cut["value"] > plain["value"] + 0.4
    assert cut["relaxation"] == "2-partition-lp"
    r = cluster_editing_bound(5, edges, exact_nodes=0)
    assert r.bound == 3 == exact_cluster_editing(5, edges).cost


@pytest.mark.parametrize("seed", range(4))
def test_lp_stops_once_its_bound_reaches_a_known_clustering(seed):
    """Given a clustering, each component's LP stops when its bound reaches the
    clustering's cost there; the bound stays certified and the per-component costs add
    up to the clustering's."""
    from metricopt.bounds.editing_exact import components
    from metricopt.solvers.editing_lp import _component_cost, cluster_editing_bound

    n = 12 + 2 * seed
    # two planted components side by side
    left = _planted_graph(n // 2, 2, 3, seed)
    edges = np.vstack([left, _planted_graph(n - n // 2, 3, 4, seed + 10) + n // 2])
    best = exact_cluster_editing(n, edges, max_nodes=20)
    free = cluster_editing_bound(n, edges, exact_nodes=0)
    given = cluster_editing_bound(n, edges, exact_nodes=0, clustering=best.labels)
    assert given.bound <= best.cost and free.bound <= best.cost
    assert all(c["stopped"] in ("reached", "converged", "stalled") for c in given.components)
    assert sum(c["rounds"] for c in given.components) <= sum(c["rounds"] for c in free.components)
    if free.bound == best.cost:
        assert given.bound == best.cost
        assert {c["stopped"] for c in given.components} == {"reached"}
    comp = components(n, edges)
    costs = [_component_cost(np.flatnonzero(comp == c), edges[comp[edges[:, 0]] == c], best.labels)
             for c in range(comp.max() + 1)]
    assert sum(costs) == editing_cost(n, edges, best.labels) == best.cost
    with pytest.raises(InvalidParameterError, match="one label per node"):
        cluster_editing_bound(n, edges, clustering=best.labels[:-1])


def test_lp_bound_on_30_nodes_against_integer_program():
    from metricopt.solvers.editing_lp import cluster_editing_bound

    n = 30
    edges = _planted_graph(n, 5, 40, 7)
    opt = _mip_optimum(n, edges)
    r = cluster_editing_bound(n, edges, exact_nodes=0)
    assert r.bound <= opt
    assert cluster_editing_bound(n, edges, exact_nodes=0, cuts=False, reduce=False).bound <= r.bound


# ------------------------------------------------------------------ search
def test_search_reaches_the_optimum_on_small_components():
    from metricopt.rounding.editing_search import search_cluster_editing

    edges = np.concatenate([_planted_graph(9, 3, 4, 1), 9 + _planted_graph(8, 2, 3, 2)])
    opt = exact_cluster_editing(17, edges).cost
    r = search_cluster_editing(17, edges, seed=0)
    assert r.objective == opt == editing_cost(17, edges, r.labels)
    assert r.exact_components == 2 and r.searched_components == 0


@pytest.mark.parametrize("seed", range(3))
def test_search_is_seeded_and_never_worse(seed):
    from metricopt.rounding.editing_search import search_cluster_editing

    n = 40
    edges = _planted_graph(n, 5, 60, seed)
    start = np.arange(n) % 3
    a = search_cluster_editing(n, edges, start, seed=seed, n_starts=2, iterations_per_node=3,
                               exact_nodes=0)
    b = search_cluster_editing(n, edges, start, seed=seed, n_starts=2, iterations_per_node=3,
                               exact_nodes=0)
    assert a.labels.tolist() == b.labels.tolist() and a.objective == b.objective
    assert a.objective_before == editing_cost(n, edges, start)
    assert a.objective <= a.objective_before
    assert a.objective == editing_cost(n, edges, a.labels)
    assert a.searched_components >= 1


def test_search_matches_the_integer_program_on_20_nodes():
    from metricopt.rounding.editing_search import search_cluster_editing

    n = 20
    edges = _planted_graph(n, 4, 25, 3)
    opt = _mip_optimum(n, edges)
    r = search_cluster_editing(n, edges, seed=0, exact_nodes=0)
    assert r.objective >= opt  # a clustering is never below the optimum
    assert r.objective == opt  # and the search finds it on this instance


def _single_move_gains(n, edges, labels):
    """Brute force: the smallest cost change of moving one node to another cluster or
    alone."""
    base = editing_cost(n, edges, labels)
    best = 0
    for v in range(n):
        for c in set(labels.tolist()) | {int(labels.max()) + 1}:
            if c != labels[v]:
                moved = labels.copy()
                moved[v] = c
                best = min(best, editing_cost(n, edges, moved) - base)
    return best


@pytest.mark.parametrize("seed", range(8))
def test_search_kernel_accounts_its_cost_and_ends_at_a_local_optimum(seed):
    """The kernel's incremental cost is the clustering's cost, it is never worse than its
    start (after a local search), the same seed gives the same clustering, and no
    single-node move improves what it returns."""
    from metricopt.rounding._editing_search_kernels import iterated_local_search
    from metricopt.rounding.editing_search import _csr

    rng = np.random.default_rng(seed)
    n = 20 + 5 * seed
    edges = _planted_graph(n, 3 + seed % 3, 2 * n, seed) if seed % 2 else _random_graph(n, 0.2, seed)
    indptr, indices = _csr(n, edges)
    start = rng.integers(0, n // 3, n).astype(np.int64)
    start = np.unique(start, return_inverse=True)[1].astype(np.int64)
    out, again = np.empty(n, np.int64), np.empty(n, np.int64)
    iterations = 0 if seed == 0 else 30 * seed
    cost, accepted, improved = iterated_local_search(indptr, indices, start, iterations, seed, 0.1,
                                                     50, out)
    iterated_local_search(indptr, indices, start, iterations, seed, 0.1, 50, again)
    assert cost == editing_cost(n, edges, out)
    assert cost <= editing_cost(n, edges, start)
    np.testing.assert_array_equal(out, again)
    assert _single_move_gains(n, edges, out) == 0
    assert 0 <= improved <= accepted <= iterations


@pytest.mark.parametrize("seed", range(4))
def test_search_kernel_does_as_well_as_its_reference_on_small_graphs(seed):
    """On planted graphs of 12-16 nodes both the kernel and the former full-sweep search
    (its reference) reach the exhaustive optimum."""
    from metricopt.rounding.editing_search import _ils, _ils_reference

    n = 12 + seed
    edges = _planted_graph(n, 3, n, seed)
    opt = exact_cluster_editing(n, edges, max_nodes=20).cost
    start = np.arange(n, dtype=np.int64)
    _, cost, _, _ = _ils(n, edges, start, seed, 20 * n)
    _, ref_cost, _, _ = _ils_reference(n, edges, start, np.random.default_rng(seed), 20 * n)
    assert cost == ref_cost == opt


def test_search_rejects_bad_parameters():
    from metricopt.rounding.editing_search import search_cluster_editing

    with pytest.raises(InvalidParameterError, match="n_starts"):
        search_cluster_editing(3, [[0, 1]], n_starts=0)
    with pytest.raises(InvalidParameterError, match="labels"):
        search_cluster_editing(3, [[0, 1]], [0, 1])


# ------------------------------------------------------------------ evaluate
def test_evaluate_certifies_a_clustering_with_the_editing_bound(runner, tmp_path):
    import json

    from metricopt.cli import cli
    from metricopt.io import read_graph
    from metricopt.rounding.editing_search import search_cluster_editing
    from metricopt.solvers.editing_lp import cluster_editing_bound

    g = read_graph("karate")
    found = search_cluster_editing(g.n, g.edges, seed=0, n_starts=1, iterations_per_node=2)
    path = tmp_path / "clusters.csv"
    path.write_text("node,cluster\n" + "".join(f"{name},{c}\n" for name, c in zip(g.labels, found.labels)))
    args = ["evaluate", "cc", "karate", str(path), "--weights", "unit", "--editing-bound", "--json"]
    result = runner.invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    bound = cluster_editing_bound(g.n, g.edges).bound
    assert data["objective"] == found.objective
    assert data["editing_bound"]["bound"] == bound == data["lower_bound"]
    assert data["bound_source"] == "editing"
    assert bound <= found.objective
    assert data["approximation_ratio"] == pytest.approx(found.objective / bound)
    assert "editing bound" in result.stderr
    # a larger given bound is kept (both are certified)
    args[-1:] = ["--lower-bound", str(bound + 0.5), "--json"]
    data = json.loads(runner.invoke(cli, args, catch_exceptions=False).stdout)
    assert data["lower_bound"] == bound + 0.5 and data["bound_source"] == "given"


def test_evaluate_editing_bound_needs_unit_weights(runner, tmp_path):
    from metricopt.cli import cli
    from metricopt.io import read_graph

    g = read_graph("karate")
    path = tmp_path / "clusters.csv"
    path.write_text("node,cluster\n" + "".join(f"{name},0\n" for name in g.labels))
    result = runner.invoke(cli, ["evaluate", "cc", "karate", str(path), "--editing-bound"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: the editing bound is for cc with unit weights (cluster editing) or cd "
        "(cluster deletion)")


def _point_csr(k, density, seed):
    """A random point on some pairs of ``k`` nodes (the others at 1), as the model's CSRs."""
    from types import SimpleNamespace

    from metricopt.solvers.editing_lp import _PairModel

    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(k, 1)
    keep = rng.random(iu.size) < density
    u, v = iu[keep], ju[keep]
    # vertex-like values (ties) and arbitrary ones
    x = np.where(rng.random(u.size) < 0.5, rng.choice([0.0, 0.5, 1.0], u.size), rng.random(u.size))
    return _PairModel.x_csr(SimpleNamespace(col_u=u, col_v=v, k=k), x)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_tries", [1, 5, 40])
def test_star_kernel_matches_its_reference_and_every_row_is_violated(seed, n_tries):
    from metricopt.solvers import _editing_kernels as ek

    k = 14 + 3 * seed
    csr = _point_csr(k, 0.5, seed)
    cap = 8 if seed % 2 else 64
    cand = np.empty((k, min(cap, ek.MAX_STAR_CANDIDATES)), dtype=np.int64)
    size = 2 * k * n_tries
    centre, mask, viol = np.empty(size, np.int64), np.empty(size, np.uint64), np.empty(size)
    count = ek.violated_stars(k, *csr, cap, n_tries, 1e-9, cand, centre, mask, viol)
    ref_cand, ref_rows = ek.violated_stars_reference(k, *csr, cap, n_tries, 1e-9)
    np.testing.assert_array_equal(cand, ref_cand)
    indptr, indices, xval = csr[:3]
    x = np.ones((k, k))
    for a in range(k):
        x[a, indices[indptr[a]:indptr[a + 1]]] = xval[indptr[a]:indptr[a + 1]]
    rows = []
    for r in range(count):
        s = int(centre[r])
        members = [int(cand[s, i]) for i in range(cand.shape[1]) if int(mask[r]) >> i & 1]
        # the star row in x: sum_{t<t'} x_tt' - sum_t x_st <= (|T| - 1)(|T| - 2) / 2
        lhs = sum(x[a, b] for a, b in itertools.combinations(members, 2)) - x[s, members].sum()
        excess = lhs - (len(members) - 1) * (len(members) - 2) / 2
        assert len(members) >= 3 and excess == pytest.approx(viol[r], abs=1e-9) and excess > 0
        rows.append((s, frozenset(members)))
    assert len(set(rows)) == count
    assert rows == [(s, members) for s, members, _ in ref_rows]
    assert viol[:count] == pytest.approx([v for *_, v in ref_rows], abs=1e-9)
    if n_tries == 40 and seed < 2:
        assert count > 0


def test_lp_certificate_tracks_the_lp_value_over_many_blocks():
    """The certificate is rebuilt from the model's rows after many additions and
    deletions of rows: at every round it equals HiGHS's objective up to the tolerance of
    its interior-point method (relative duality gap 1e-8, without crossover)."""
    from metricopt.solvers.editing_lp import editing_lp_bound

    n = 40
    edges = _random_graph(n, 0.2, 1)
    seen = []
    r = editing_lp_bound(n, np.ones(n), edges, max_rows=30, progress=seen.append)
    assert len(seen) > 10
    for rec in seen:
        assert rec["bound"] == pytest.approx(rec["objective"], rel=1e-7, abs=1e-6)
    assert r["value"] == pytest.approx(max(rec["objective"] for rec in seen), rel=1e-7, abs=1e-6)
    assert r["star_rows"] > 0


# ------------------------------------------------------------------ solve --relaxation editing
@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow)])  # 10 nodes: 8 s
def test_run_with_the_editing_relaxation_certifies_against_the_larger_bound(seed):
    """On planted graphs of 8-10 nodes the run's editing bound is the brute-force optimum
    (never above it), its clustering reaches it, and the ratio uses the larger bound."""
    import networkx as nx

    from metricopt import pipeline

    n = 8 + seed
    edges = _planted_graph(n, 3, 6, seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(map(tuple, edges.tolist()))
    optimum = _brute_force(n, edges)
    outcome = pipeline.run(g, "cc", problem_params=dict(weights="unit", relaxation="editing"),
                           read_options=dict(keep_all_components=True))
    rep = outcome.report
    ed = rep["editing"]
    assert rep["problem"]["params"].get("relaxation", "full") == "full"  # the LP solved
    assert rep["lower_bound"] <= ed["bound"] + 1e-9 <= optimum + 1e-9
    assert ed["bound_source"] == ("editing" if ed["bound"] > rep["lower_bound"] else "lp")
    assert ed["search"]["objective"] <= ed["search"]["objective_before"]
    assert rep["rounded_objective"] == ed["search"]["objective"] >= optimum
    labels = outcome.rounding["labels"]
    assert editing_cost(n, edges, labels) == rep["rounded_objective"]  # a partition, scored
    assert rep["approximation_ratio"] == pytest.approx(
        rep["rounded_objective"] / max(ed["bound"], rep["lower_bound"]))
    # the refinement's own answer stays reported beside the search's
    assert rep["rounding"]["refined_objective"] == ed["search"]["objective_before"]


def test_solve_and_bound_with_the_editing_relaxation(runner, tmp_path):
    import json

    from metricopt.cli import cli
    from metricopt.io import read_graph
    from metricopt.solvers.editing_lp import cluster_editing_bound

    g = read_graph("karate")
    bound = cluster_editing_bound(g.n, g.edges).bound
    out = tmp_path / "run"
    args = ["solve", "cc", "karate", "--weights", "unit", "--relaxation", "editing", "--json",
            "--out", str(out)]
    result = runner.invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    assert data["editing"]["bound"] == bound > data["lower_bound"]
    assert data["editing"]["bound_source"] == "editing"
    assert data["approximation_ratio"] == pytest.approx(data["rounded_objective"] / bound)
    assert "editing bound" in result.stderr and "Cluster editing" in result.stderr
    from metricopt.io.reports import read_clusters
    from metricopt.reporting import report_table
    from metricopt.rounding.editing_search import editing_cost

    labels = read_clusters(out / "clusters.csv", g.labels)
    assert editing_cost(g.n, g.edges, labels) == data["rounded_objective"]
    assert report_table([tmp_path])["editing_bound"].tolist() == [bound]
    # the same command, the same answer (the bound's budget is counted in rounds)
    again = json.loads(runner.invoke(cli, args[:-2], catch_exceptions=False).stdout)
    assert again["editing"]["bound"] == bound
    assert again["rounded_objective"] == data["rounded_objective"]
    result = runner.invoke(cli, ["bound", "cc", "karate", "--weights", "unit", "--relaxation",
                                 "editing", "--json"], catch_exceptions=False)
    data = json.loads(result.stdout)
    assert data["editing"]["bound"] == bound and data["editing"]["search"] is None
    assert data["rounded_objective"] is None


@pytest.mark.parametrize("args, hint", [
    (["solve", "cc", "karate", "--relaxation", "editing"], "--weights auto"),
    (["solve", "cc", "karate", "--weights", "jaccard", "--relaxation", "editing"], "--weights jaccard"),
    (["bound", "sc", "karate", "--relaxation", "editing"], "problem sc"),
])
def test_the_editing_relaxation_needs_cc_with_unit_weights(runner, args, hint):
    from metricopt.cli import cli

    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert "'--relaxation'" in result.stderr and hint in result.stderr


def test_the_editing_relaxation_is_refused_where_it_does_not_apply():
    import metricopt
    from metricopt import pipeline

    with pytest.raises(InvalidParameterError, match="weights='unit'"):
        pipeline.run("karate", "cc", problem_params=dict(relaxation="editing"))
    with pytest.raises(InvalidParameterError, match="a run adds"):
        metricopt.build_problem("cc", metricopt.read_graph("karate"), weights="unit",
                                relaxation="editing")
    # evaluate takes it as --editing-bound
    info = pipeline.describe("karate", kinds=["cc"], problem_params=dict(
        weights="unit", relaxation="editing"))
    assert "error" not in info["problems"][0]
