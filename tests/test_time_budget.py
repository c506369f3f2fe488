"""``--time-limit`` bounds the solve and its certificate; rounding has its own budget.

No assertion here depends on the machine's speed: a deadline already passed (0 s) or
none at all, and checks that hold however far a limited run got.
"""

import time
import warnings

import numpy as np
import pytest

from exact_values import BUNDLED_EXACT
from metricopt import build_problem, read_graph, round_solution, solve
from metricopt.bounds.streamed import correlation_clustering_bound_streamed
from metricopt.cli import cli
from metricopt.rounding._checks import is_partition
from metricopt.solvers import finish_allowance


def _iterate(seed=3, n=3000):
    rng = np.random.default_rng(seed)
    d = (rng.random(n) < 0.3).astype(float)
    x = np.clip(d + rng.normal(0.0, 0.3, n), 0.0, 1.0)
    f = np.abs(x - d)
    w = rng.uniform(0.1, 2.0, n)
    return x, f, w, d, w.copy(), 1.0, float(w @ f) * 0.95


def test_streamed_certificate_stops_at_its_deadline_with_a_weaker_bound():
    x, f, w, d, wr, gamma, mby = _iterate()
    full = correlation_clustering_bound_streamed(x, f, w, d, gamma=gamma, minus_b_dot_y=mby,
                                                 regularizer=wr)
    cut = correlation_clustering_bound_streamed(x, f, w, d, gamma=gamma, minus_b_dot_y=mby,
                                                regularizer=wr, deadline=time.perf_counter())
    assert not full.stopped and full.nit > 4
    assert cut.stopped and cut.nit == 1 and cut.certified
    assert cut.value <= full.value and cut.mu == 0.0
    # without a deadline the search is that of before (same passes, same value)
    again = correlation_clustering_bound_streamed(x, f, w, d, gamma=gamma, minus_b_dot_y=mby,
                                                  regularizer=wr, deadline=None)
    assert again.value == full.value and again.nit == full.nit


def test_finish_allowance_is_one_second_or_a_tenth():
    assert finish_allowance(1.0) == 1.0
    assert finish_allowance(5.0) == 1.0
    assert finish_allowance(60.0) == pytest.approx(6.0)


@pytest.mark.parametrize("limit", [1e-4, 0.05])
def test_a_time_limited_project_forget_run_reports_an_honest_violation(limit):
    """However far the run got: max_violation is the exact one or an upper bound (said
    so), and the bound is below the LP optimum."""
    from metricopt.solvers._pf_strategy import violation_bound as _violation_bound

    p = build_problem("cc", read_graph("lesmis"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve(p, method="project-forget", time_limit=limit)
    exact = BUNDLED_EXACT["cc-jaccard", "lesmis"].value  # recorded by exact_values.py
    measured = p.max_violation(res.x)
    if res.get("violation_bounded"):
        assert res.max_violation >= measured and "upper bound" in res.message
        assert res.max_violation == _violation_bound(p, res.x)
    else:
        assert res.max_violation == pytest.approx(measured, abs=1e-12)
    assert res.lower_bound <= exact * (1 + 1e-9)


def test_violation_bound_is_above_the_exact_violation():
    from metricopt.solvers._pf_strategy import violation_bound as _violation_bound

    p = build_problem("cc", read_graph("karate"))
    rng = np.random.default_rng(0)
    for scale in (1.0, 0.3):
        x = rng.random(p.n_variables) * scale
        assert _violation_bound(p, x) >= p.max_violation(x)


# --------------------------------------------------------------------- rounding
def _karate_x():
    p = build_problem("cc", read_graph("karate"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return p, solve(p, method="highs").x


def test_a_spent_rounding_budget_still_makes_one_try_per_method():
    p, x = _karate_x()
    got = round_solution(p, x, seed=0, time_limit=0.0)
    assert got["tries_run"] == 3  # pivot, threshold, region-growing: one each
    assert set(got["per_method"]) == {"pivot", "threshold", "region-growing"}
    assert is_partition(got["labels"], p.n)
    assert got["refine"]["stopped"] != "converged" or got["refine"]["sweeps"] <= 1


def test_rounding_without_a_budget_is_unchanged():
    p, x = _karate_x()
    plain = round_solution(p, x, seed=0)
    roomy = round_solution(p, x, seed=0, time_limit=1e6)
    assert "tries_run" not in plain
    assert roomy["tries_run"] == 60
    assert plain["objective"] == roomy["objective"]
    assert np.array_equal(plain["labels"], roomy["labels"])


def test_rounding_budget_is_checked():
    from metricopt.exceptions import InvalidParameterError

    p, x = _karate_x()
    with pytest.raises(InvalidParameterError, match="time_limit"):
        round_solution(p, x, seed=0, time_limit=-1.0)


def test_the_rounding_budget_defaults_to_the_time_limit():
    from metricopt import pipeline

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        limited = pipeline.run("karate", "cc", method="highs",
                               solver_options={"time_limit": 30.0, "seed": 0})
        own = pipeline.run("karate", "cc", method="highs",
                           solver_options={"time_limit": 30.0, "seed": 0},
                           rounding={"time_limit": 0.0})
        free = pipeline.run("karate", "cc", method="highs", solver_options={"seed": 0})
    assert limited.report["rounding"]["time_limit"] == 30.0
    assert own.report["rounding"]["time_limit"] == 0.0
    assert own.report["rounding"]["tries_run"] == 3
    assert free.report["rounding"]["time_limit"] is None
    assert free.report["rounding"]["tries_run"] is None
    assert free.report["rounding"]["seconds"] > 0.0


def test_round_time_limit_flag(runner):
    result = runner.invoke(cli, ["solve", "--help"])
    assert "--round-time-limit" in result.output and "max(1 s, 10%)" in result.output
    ok = runner.invoke(cli, ["solve", "cc", "karate", "--method", "highs", "--seed", "0",
                             "--round-time-limit", "0", "--json"])
    assert ok.exit_code == 0, ok.stderr
    assert '"tries_run": 3' in ok.stdout
    bad = runner.invoke(cli, ["solve", "cc", "karate", "--round-time-limit", "-1"])
    assert bad.exit_code == 2
    mn = runner.invoke(cli, ["solve", "mn", "karate", "--round-time-limit", "1"])
    assert mn.exit_code == 2 and "--round-time-limit" in mn.stderr


def test_an_exact_measurement_that_would_overrun_the_limit_is_bounded(monkeypatch):
    """The answer's exact violation scan takes about what the last oracle scan took
    (28 s on ca-HepPh's dense layout): when that would end past the limit's allowance,
    the answer reports the cheap upper bound instead, and says so."""
    from metricopt.solvers import _pf_strategy

    real = _pf_strategy.ProjectForgetStrategy.measure

    def slow_scans(self, loop):
        m = real(self, loop)
        self.scan_s = 1e6  # as if each scan had taken that long
        return m

    monkeypatch.setattr(_pf_strategy.ProjectForgetStrategy, "measure", slow_scans)
    p = build_problem("cc", read_graph("lesmis"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve(p, method="project-forget", max_iter=2, time_limit=1000.0)
        free = solve(p, method="project-forget", max_iter=2)  # no limit: the exact scan
    assert res.status != "optimal" and res.get("violation_bounded")
    assert "upper bound" in res.message and res.max_violation >= p.max_violation(res.x)
    assert not free.get("violation_bounded")
    assert free.max_violation == pytest.approx(p.max_violation(free.x), abs=1e-12)
