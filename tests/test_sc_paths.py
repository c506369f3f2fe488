"""Sparsest cut's path rows (solvers/_sc_paths.py): the compact start and exact repair."""

from functools import lru_cache

import networkx as nx
import numpy as np
import pytest

from exact_values import BUNDLED_EXACT
from metricopt import build_problem, read_graph, solve
from metricopt.problems._pairs import n_pairs, pair_arrays
from metricopt.result import Status
from metricopt.solvers import _sc_paths
from problem_bank import bundled_problem


def _sc(graph):
    return build_problem("sc", read_graph(graph))


def _random_graphs():
    yield nx.barabasi_albert_graph(12, 2, seed=3)
    yield nx.powerlaw_cluster_graph(11, 2, 0.3, seed=4)
    yield nx.connected_watts_strogatz_graph(10, 4, 0.3, seed=5)
    yield nx.path_graph(7)
    yield nx.star_graph(8)


def test_path_rows_are_distinct_triangle_rows_over_an_edge():
    p = _sc(nx.barabasi_albert_graph(15, 2, seed=1))
    rows = _sc_paths.path_rows(p)
    r, c = pair_arrays(p.n)
    edge = np.asarray(p.cost) != 0
    assert len(rows) <= _sc_paths.count_path_rows(p)
    npairs = n_pairs(p.n)
    keys = rows[:, 0] * npairs**2 + np.sort(rows[:, 1:], axis=1) @ [npairs, 1]
    assert np.unique(keys).size == len(rows)
    for a, b, cc in rows:
        nodes_a = {r[a], c[a]}
        assert edge[b] or edge[cc]  # one short side is an edge
        # the three pairs form a triangle whose long side is a
        assert len(nodes_a | {r[b], c[b]} | {r[cc], c[cc]}) == 3


def test_repair_is_feasible_and_no_costlier_on_path_feasible_points():
    rng = np.random.default_rng(0)
    for g in _random_graphs():
        p = _sc(g)
        x = rng.uniform(0.1, 2.0, n_pairs(p.n))
        xr = _sc_paths.repair_by_paths(p, x)
        assert xr is not None
        assert p.max_violation(xr) <= 1e-12
        assert xr.sum() == pytest.approx(p.sum_value, rel=1e-12)
        # an exact metric satisfies the path rows: its repair costs no more
        xm = _sc_paths.repair_by_paths(p, xr)
        assert p.objective_value(xm) <= p.objective_value(xr) * (1 + 1e-12)


def _full_lp_value(p):
    """The LP on every triangle row, built here and solved by scipy (the oracle)."""
    from itertools import combinations

    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    from metricopt.problems._pairs import pair_index

    rows, cols, vals = [], [], []
    r = 0
    for i, j, k in combinations(range(p.n), 3):
        a, b, c = (int(pair_index(u, v, p.n)) for u, v in ((i, j), (i, k), (j, k)))
        for long, s1, s2 in ((a, b, c), (b, a, c), (c, a, b)):
            rows += [r, r, r]
            cols += [long, s1, s2]
            vals += [1.0, -1.0, -1.0]
            r += 1
    a_ub = coo_matrix((vals, (rows, cols)), shape=(r, p.n_variables))
    res = linprog(np.asarray(p.cost), A_ub=a_ub, b_ub=np.zeros(r),
                  A_eq=np.ones((1, p.n_variables)), b_eq=[p.sum_value], bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return float(res.fun) + float(p.constant)


@pytest.mark.parametrize("method", ["highs-lazy", "highs"])
@pytest.mark.parametrize("index", range(5))
def test_path_rows_give_the_full_lp_optimum(index, method):
    g = list(_random_graphs())[index]
    p = _sc(g)
    full = _full_lp_value(p)
    res = solve(p, method=method)
    assert res.status == Status.OPTIMAL, res.message
    assert res.nit == 1 or method == "highs"
    assert res.n_rows <= _sc_paths.count_path_rows(p) + 1 < 3 * (p.n * (p.n - 1) * (p.n - 2) // 6)
    assert res.fun == pytest.approx(full, rel=1e-8)
    assert res.lower_bound <= full * (1 + 1e-9)
    assert res.max_violation <= 1e-9


@pytest.mark.parametrize("method", ["highs-lazy", "highs"])
@pytest.mark.parametrize("graph", ["karate", "dolphins"])
def test_path_start_matches_the_recorded_exact_lp(graph, method):
    exact = BUNDLED_EXACT[("sc", graph)].value
    res = solve(bundled_problem("sc", graph), method=method)
    assert res.status == Status.OPTIMAL and (res.nit == 1 or method == "highs")
    assert abs(res.fun - exact) <= 1e-8 * exact
    assert res.lower_bound <= exact * (1 + 1e-9)


def test_not_applied_without_a_connected_edge_set_or_a_sum_row():
    two = nx.disjoint_union(nx.path_graph(4), nx.path_graph(5))
    p = build_problem("sc", read_graph(two, keep_all_components=True))
    assert not _sc_paths.applies(p)
    assert _sc_paths.repair_by_paths(p, np.ones(n_pairs(p.n))) is None
    assert not _sc_paths.applies(build_problem("cc", read_graph(nx.path_graph(6))))
    # still solved exactly, by separation
    res = solve(p, method="highs-lazy")
    assert res.status == Status.OPTIMAL


@lru_cache(maxsize=None)
def _ba(n, seed):
    """Sparsest cut on a Barabasi-Albert graph (m = 2) and its exact LP."""
    p = _sc(nx.barabasi_albert_graph(n, 2, seed=seed))
    return p, solve(p, method="highs-lazy")


def test_project_forget_ends_sparsest_cut_by_the_path_repair():
    """project-forget's sparsest-cut iterate keeps violating above tol while its QP gap
    holds; the repair by shortest paths ends the stage with an exactly feasible x."""
    p, exact = _ba(60, 3)
    res = solve(p, method="project-forget", gap_tol=1e-2, polish=False)
    assert res.status == Status.OPTIMAL, res.message
    assert "repaired by shortest paths" in res.message
    assert res.max_violation <= 1e-12
    assert res.lower_bound <= exact.fun * (1 + 1e-9) <= res.fun * (1 + 1e-9)
    assert res.gap <= 1e-2


@pytest.mark.parametrize("method", [pytest.param("project-forget", marks=pytest.mark.slow),
                                    "dykstra"])  # project-forget: 11 s
def test_projection_methods_polish_sparsest_cut_from_its_path_rows(method):
    """The stalled QP stage hands over to the path rows' LP (:func:`polish_paths`): the
    exact LP at gap_tol 1e-4, where project-forget alone stopped at its call limit."""
    p, exact = _ba(100, 1)
    assert 0 < _sc_paths.polish_rows(p) <= _sc_paths.MAX_POLISH_ROWS
    res = solve(p, method=method, gap_tol=1e-4)
    assert res.status == Status.OPTIMAL, res.message
    assert res.max_violation <= 1e-12
    assert res.fun == pytest.approx(exact.fun, rel=1e-9)
    assert res.lower_bound <= exact.fun * (1 + 1e-9)
    assert res["polish_rounds"] == 1
    assert "x from the LP on the path rows" in res.message


def test_polish_paths_is_the_exact_lp_with_a_certified_bound():
    from metricopt.solvers.core.polish import polish_paths

    p, exact = _ba(60, 3)
    res = polish_paths(p, tol=1e-9, gap_tol=1e-8)
    assert res["status"] == Status.OPTIMAL and res["rounds"] == 1
    assert p.max_violation(res["x"]) <= 1e-12
    assert p.objective_value(res["x"]) == pytest.approx(exact.fun, rel=1e-9)
    assert res["lower_bound"] <= exact.fun * (1 + 1e-9)
    assert res["lower_bound"] == pytest.approx(exact.fun, rel=1e-8)
    # a model over half the memory allowed is not built: only the reason comes back
    skipped = polish_paths(p, tol=1e-9, max_memory=1000)
    assert set(skipped) == {"skipped"} and "needs about" in skipped["skipped"]


def test_the_lazy_memory_estimate_counts_the_path_rows(monkeypatch):
    from metricopt.solvers import get_solver

    p = bundled_problem("sc", "dolphins")
    lazy = get_solver("highs-lazy")
    with_paths = lazy.estimate_memory(p)
    assert _sc_paths.start_rows(p) == _sc_paths.count_path_rows(p) > 0
    monkeypatch.setattr(_sc_paths, "MAX_ROWS_PER_PAIR", 0)
    assert _sc_paths.start_rows(p) == 0
    assert lazy.estimate_memory(p) < with_paths
