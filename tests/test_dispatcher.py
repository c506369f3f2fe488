"""The dispatcher: method resolution, option checks, ``auto`` and the common result fields."""

import numpy as np
import pytest

from metricopt.exceptions import InvalidParameterError, UnsupportedProblemError
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.result import SolveResult, Status
from metricopt.solvers import (
    EXACT_ROW_LIMIT,
    available_solvers,
    choose_method,
    get_solver,
    registered_solvers,
    solve,
)
from problem_bank import make_graph


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


def test_registry_in_preference_order():
    names = registered_solvers()
    assert names[:2] == ["highs", "highs-lazy"]
    assert {"dykstra", "project-forget"} <= set(names)
    assert set(available_solvers()) <= set(names)
    assert get_solver("HIGHS") is get_solver("highs")


def test_unknown_method_and_option(karate):
    problem = build_problem("cd", karate)
    with pytest.raises(InvalidParameterError, match="Unknown method 'simplex'"):
        solve(problem, method="simplex")
    with pytest.raises(InvalidParameterError, match="Unknown option\\(s\\) for method 'highs': gama"):
        solve(problem, method="highs", gama=2)


def test_unsupported_pair_is_an_error():
    signed = read_graph("karate")
    signed.weights = np.where(np.arange(signed.m) % 3 == 0, -1.0, 1.0)
    problem = build_problem("cc", signed)
    assert problem.structure == "sparse"
    with pytest.raises(UnsupportedProblemError):
        solve(problem, method="dykstra")


def test_auto_rules(karate):
    small = build_problem("cc", karate)
    assert choose_method(small)[0] == "highs"
    assert "constraints" in choose_method(small)[1]
    # a QP beyond the size HiGHS's QP solver handles goes to a projection method
    assert choose_method(build_problem("mn", karate, p=2))[0] == "dykstra"
    football = read_graph("football")
    big = build_problem("cc", football)
    assert big.n_constraints > EXACT_ROW_LIMIT
    assert choose_method(big)[0] == "dykstra"
    # too little memory for dykstra: only violated constraints are kept
    method, reason = choose_method(big, max_memory=10_000)
    assert method == "project-forget" and "would need" in reason
    signed = read_graph("football")
    signed.weights = np.where(np.arange(signed.m) % 3 == 0, -1.0, 1.0)
    sparse = build_problem("cc", signed)
    assert sparse.n_constraints is None
    assert choose_method(sparse)[0] == "project-forget"
    # MET(G) on at most 34 nodes: its LP on K_n is small, so exact
    small = read_graph("karate")
    small.weights = np.where(np.arange(small.m) % 3 == 0, -1.0, 1.0)
    method, reason = choose_method(build_problem("cc", small))
    assert method == "highs" and "MET(G) embedded in K_34" in reason


def test_auto_result_says_why(karate):
    res = solve(build_problem("cd", karate))
    assert isinstance(res, SolveResult)
    assert res.method == "highs" and "constraints" in res.auto_reason
    assert res.status == Status.OPTIMAL and res.success
    assert res.fun == pytest.approx(39.0)
    assert res.gap == pytest.approx(0.0)
    assert set(res) >= {"x", "fun", "lower_bound", "status", "status_name", "message", "nit",
                        "max_violation", "elapsed", "method", "history", "options"}
    assert "options" in repr(res)


def test_auto_picks_the_lazy_lp_for_cluster_editing_beyond_dense_duals():
    """Unit-weight cc beyond dykstra's dense duals goes to highs-lazy; Jaccard to
    project-forget; a small unit-weight instance stays with the projection methods."""
    from metricopt.problems import build_problem
    from metricopt.solvers import choose_method
    from metricopt.solvers.core.memory import dense_duals_fit

    n = 700
    assert not dense_duals_fit(n)
    rng = np.random.default_rng(0)
    edges = [(i, i + 1) for i in range(n - 1)] + [
        tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(3 * n)]
    graph = make_graph(n, sorted(set(e for e in edges if e[0] != e[1])))
    assert choose_method(build_problem("cc", graph, weights="unit"))[0] == "highs-lazy"
    assert choose_method(build_problem("cc", graph))[0] == "project-forget"
    small = make_graph(60, [(i, i + 1) for i in range(59)] + [(0, 30), (5, 40)])
    assert choose_method(build_problem("cc", small, weights="unit"))[0] != "highs-lazy"


def test_auto_picks_the_lazy_lp_for_cluster_deletion_on_many_edges():
    """Cluster deletion from CD_LAZY_EDGES edges goes to highs-lazy when its first round
    fits and its rows per edge are few; below that, without the memory, or on a dense
    graph, to dykstra."""
    from metricopt.datasets import community_graph
    from metricopt.solvers import CD_LAZY_EDGES, CD_LAZY_ROWS_PER_EDGE

    graph = community_graph(5000, seed=0)
    assert graph.m >= CD_LAZY_EDGES
    problem = build_problem("cd", graph)
    method, reason = choose_method(problem)
    assert method == "highs-lazy" and "cluster deletion" in reason
    assert choose_method(problem, max_memory=10 ** 7)[0] == "dykstra"
    small = build_problem("cd", community_graph(1000, seed=0))
    assert small.n_variables < CD_LAZY_EDGES
    assert choose_method(small)[0] == "dykstra"
    rng = np.random.default_rng(0)
    n = 300
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < 0.3
    dense = build_problem("cd", make_graph(n, list(zip(i[keep].tolist(), j[keep].tolist()))))
    assert dense.n_variables >= CD_LAZY_EDGES
    assert dense.n_constraints > CD_LAZY_ROWS_PER_EDGE * dense.n_variables
    assert choose_method(dense)[0] == "dykstra"
