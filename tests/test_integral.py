"""A rounded clustering or cut as the LP's answer (solvers/core/integral.py)."""

import numpy as np
import pytest

from metricopt import build_problem, read_graph, solve
from metricopt.rounding import round_solution
from metricopt.solvers.core.integral import integral_candidate, integral_point, roundable


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


CASES = [("cc", {}), ("cc", {"layout": "support"}), ("cc", {"weights": "unit"}),
         ("cd", {}), ("sc", {})]


@pytest.fixture(scope="module")
def exact_solutions():
    """An LP solution and bound of each case on lesmis, certified to 1e-9."""
    graph = read_graph("lesmis")
    out = {}
    for kind, params in CASES:
        problem = build_problem(kind, graph, **params)
        res = solve(problem, tol=1e-8, gap_tol=1e-9)
        assert res.status_name == "optimal"
        out[kind, tuple(params.items())] = problem, res
    return out


@pytest.mark.parametrize("kind,params", CASES)
def test_the_integral_point_is_feasible_and_costs_the_rounding(exact_solutions, kind, params):
    """The metric of a rounded clustering (or the scaled metric of a cut) violates no
    row of the LP, and its LP objective is the rounding's objective."""
    problem, res = exact_solutions[kind, tuple(params.items())]
    assert roundable(problem)
    rounding = round_solution(problem, res.x, seed=0, n_tries=3)
    point = integral_point(problem, rounding)
    assert problem.max_violation(point) <= 1e-12
    assert problem.objective_value(point) == pytest.approx(rounding.objective, rel=1e-12)
    # never below the LP optimum (the bound), as a feasible point
    assert problem.objective_value(point) >= res.lower_bound * (1 - 1e-12)


@pytest.mark.parametrize("kind,params", CASES)
def test_the_candidate_is_offered_exactly_when_it_meets_the_gap(exact_solutions, kind, params):
    problem, res = exact_solutions[kind, tuple(params.items())]
    rounded = round_solution(problem, res.x, seed=0, n_tries=5).objective
    gap = (rounded - res.lower_bound) / res.lower_bound
    assert integral_candidate(problem, res.x, None, tol=1e-9, gap_tol=1.0) is None
    if gap > 1e-9:
        assert integral_candidate(problem, res.x, res.lower_bound, tol=1e-9,
                                  gap_tol=gap / 2) is None
    got = integral_candidate(problem, res.x, res.lower_bound, tol=1e-9, gap_tol=gap * 1.01 + 1e-12)
    assert got is not None
    assert got["value"] == pytest.approx(rounded, rel=1e-12)
    assert got["gap"] <= gap * 1.01 + 1e-12 and got["max_violation"] == 0.0
    # the same command, the same point
    again = integral_candidate(problem, res.x, res.lower_bound, tol=1e-9, gap_tol=1.0)
    first = got["x"].to_packed() if hasattr(got["x"], "to_packed") else got["x"]
    second = again["x"].to_packed() if hasattr(again["x"], "to_packed") else again["x"]
    np.testing.assert_array_equal(first, second)


def test_metric_nearness_is_not_rounded(karate):
    assert not roundable(build_problem("mn", karate, p=1))
    assert not roundable(build_problem("mn", karate, p=2))


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_a_run_ends_with_a_rounding_that_meets_a_loose_gap(method):
    """Jaccard cc on lesmis: the LP (60.18) and the rounding of a QP point (60.66-60.79)
    are 1 % apart; at gap_tol 2e-2 the run ends with the rounding, an exactly feasible,
    integral answer within gap_tol of its certified bound. With polish=False the QP
    stages alone answer."""
    problem = build_problem("cc", read_graph("lesmis"))
    # dykstra's gamma-growth stages (its proximal recentring certifies the LP first)
    opts = {"proximal": 0} if method == "dykstra" else {}
    res = solve(problem, method=method, gap_tol=2e-2, **opts)
    assert res.status_name == "optimal"
    assert res.gap <= 2e-2 and res.max_violation <= res.options["tol"]
    assert res.fun >= 60.18450411 * (1 - 1e-9)  # the LP optimum (benchmarks/README.md)
    if "stalled" in res.message:
        # project-forget's stage of gamma 10 stalls first (a wide restricted LP): the
        # point made feasible from it meets the gap before its rounding is offered
        assert method == "project-forget"
    else:
        assert "rounded clustering" in res.message
        assert set(np.unique(res.x)) <= {0.0, 1.0}
        assert problem.max_violation(res.x) == 0.0
    off = solve(problem, method=method, gap_tol=2e-2, polish=False, **opts)
    assert "rounded" not in off.message


def test_a_run_stopped_by_its_limit_answers_with_a_rounding_that_meets_the_gap(karate):
    """A run stopped by its iteration limit whose rounding meets the contract against
    the final certificate's bound is optimal, and says how: the status holds to the
    numbers (violation <= tol, certified gap <= gap_tol)."""
    problem = build_problem("cc", karate)
    # at gamma 1 (the gamma-growth stages): the first call's point is near the LP's
    res = solve(problem, method="project-forget", gap_tol=0.5, max_iter=1, proximal=0)
    assert res.status_name == "optimal", res.message
    assert "the run stopped" in res.message and "rounded clustering" in res.message
    assert res.gap <= 0.5 and res.max_violation == 0.0
    stopped = solve(problem, method="project-forget", gap_tol=0.5, max_iter=1, polish=False)
    assert stopped.status_name == "limit_reached"
