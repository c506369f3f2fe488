"""The active-set LP polish and the kernels that list active triangles."""

import numpy as np
import pytest

from metricopt import build_problem, read_graph, solve
from metricopt.result import Status
from metricopt.solvers import _active_kernels as A
from metricopt.solvers import _layouts as L
from metricopt.solvers.core.polish import ActiveRows, polish, shift_to_feasible
from naive_active import dense_active_triangles, sparse_active_triangles


def _growth(method):
    """Options of ``method`` that keep its gamma-growth stages (the proximal recentring,
    the default of both projection backends for dense l1 problems, has none)."""
    return {"proximal": 0}


def _to_packed(n):
    idx = L.packed_to_diagonal_index(n)
    inv = np.empty_like(idx)
    inv[idx] = np.arange(idx.size)
    return inv


@pytest.mark.parametrize("n,block", [(3, 16), (7, 2), (12, 16), (20, 3)])
def test_active_kernels_match_the_reference(n, block):
    rng = np.random.default_rng(n)
    rows = L.diagonal_rows(n, block)
    total = 3 * (n * (n - 1) * (n - 2) // 6)
    z = np.where(rng.random(total) < 0.3, rng.random(total), 0.0)
    off = L.diagonal_offsets(n)
    tri, dual = A.dense_active_triangles(z, rows, off, _to_packed(n))
    ref_tri, ref_dual = dense_active_triangles(z, rows, n)
    assert np.array_equal(tri, ref_tri) and np.array_equal(dual, ref_dual)
    pos, val = L.dense_to_sparse_duals(z, rows)
    val[::4] = 0.0  # a stored zero is not active
    tri, dual = A.sparse_active_triangles(pos, val, rows, off, _to_packed(n))
    ref_tri, ref_dual = sparse_active_triangles(pos, val, rows, n)
    assert np.array_equal(tri, ref_tri) and np.array_equal(dual, ref_dual)


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


@pytest.fixture(scope="module")
def karate_lp(karate):
    """Jaccard cc on karate, its exact LP optimum and value (HiGHS)."""
    problem = build_problem("cc", karate)
    x = solve(problem, method="highs", warm_up=False).x
    return problem, x, problem.objective_value(x)


def _exact(problem):
    return solve(problem, method="highs", lp_algorithm="simplex", warm_up=False).fun


@pytest.mark.parametrize("kind,params", [("cc", {}), ("cc", {"weights": "unit"}),
                                         ("cd", {}), ("mn", {"p": 1})])
def test_polish_from_nothing_reaches_the_lp(karate, kind, params):
    """With no active rows the polish is the lazy LP: separation alone gets there
    (not for sparsest cut, whose lazy LP needs a round per few pairs)."""
    problem = build_problem(kind, karate, **params)
    exact = _exact(problem)
    empty = ActiveRows(family=np.zeros(0, dtype=np.int64)) if kind == "cd" else \
        ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))
    res = polish(problem, empty, tol=1e-9)
    assert res["status"] == Status.OPTIMAL
    assert res["max_violation"] <= 1e-9
    assert problem.objective_value(res["x"]) == pytest.approx(exact, rel=1e-9, abs=1e-9)
    assert res["lower_bound"] <= exact * (1 + 1e-12) + 1e-12
    assert res["lower_bound"] == pytest.approx(exact, rel=1e-7, abs=1e-9)


def test_polish_bound_is_certified_when_stopped_early(karate):
    """A round limit leaves a relaxation's dual: still a bound on the full LP."""
    problem = build_problem("cc", karate)
    exact = _exact(problem)
    res = polish(problem, ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64)), tol=1e-9,
                 max_rounds=2)
    assert res["status"] != Status.OPTIMAL
    assert res["lower_bound"] <= exact * (1 + 1e-12)


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
@pytest.mark.parametrize("name", ["karate", "dolphins"])
def test_default_runs_reach_the_lp_optimum(method, name):
    problem = build_problem("cc", read_graph(name))
    exact = _exact(problem)
    res = solve(problem, method=method, gap_tol=1e-6)
    assert res.status_name == "optimal"
    assert res.gap <= 1e-6
    assert res.lower_bound <= exact * (1 + 1e-12)
    assert res.fun == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_gamma_schedule_without_polish_reaches_the_gap(karate, method):
    """polish=False: gamma grows tenfold per stage until the certificate closes the gap."""
    problem = build_problem("cc", karate)
    exact = _exact(problem)
    res = solve(problem, method=method, polish=False, gap_tol=1e-3)
    assert res.status_name == "optimal"
    assert res.gamma > 1.0
    assert res.gap <= 1e-3
    assert res.lower_bound <= exact * (1 + 1e-12)
    assert abs(res.fun - exact) <= 1e-3 * exact


@pytest.mark.parametrize("method,opts", [("dykstra", {"proximal": 0}),
                                         ("project-forget", {"passes": 10, "threads": 1,
                                                             "proximal": 0})])
def test_a_limit_after_a_gamma_change_returns_the_last_feasible_point(karate, method, opts):
    """Right after gamma grows the iterate is far from feasible; a run stopped there
    returns the point its last QP stage ended at, which violates nothing beyond tol.
    (project-forget with fixed passes: its default schedule depends on the clock.)"""
    problem = build_problem("cc", karate)
    full = solve(problem, method=method, polish=False, gap_tol=1e-6, **opts)
    grown = [h["iteration"] for h, g in zip(full.history[1:], full.history)
             if h["gamma"] > g["gamma"]]
    assert grown
    res = solve(problem, method=method, polish=False, gap_tol=1e-6, max_iter=grown[0],
                **opts)
    assert res.status_name == "limit_reached"
    assert res.history[-1]["gamma"] > 1.0
    assert res.max_violation <= res.options["tol"]
    assert res.max_violation == pytest.approx(problem.max_violation(res.x), abs=1e-15)
    assert res.lower_bound <= _exact(problem) * (1 + 1e-12)


@pytest.mark.parametrize("gap,grows", [(0.05, True), (0.5, True), (5.0, False)])
def test_a_stage_grows_gamma_instead_of_polishing_when_that_is_predicted_to_close_the_gap(
        karate_lp, gap, grows):
    """A converged stage's certified gap shrinks like 1/gamma: when one or two more
    stages are predicted to close it (gap / growth**2 <= gap_tol) gamma grows and the
    polish waits; otherwise the polish runs first."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    asked = []

    def active():
        asked.append(True)
        return ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))

    stage = LPStage(problem, tol=1e-6, gap_tol=1e-2, polish="auto")
    done, next_gamma = stage.finish(x, lambda: (value / (1 + gap), {}), active, None, 10.0)
    assert not done if grows else done
    assert (next_gamma == 100.0) if grows else next_gamma is None
    assert bool(asked) is not grows
    if grows:
        assert "predicted" in stage.polishes[-1]["skipped"]
        # the early polish of the next stage waits for the same prediction
        assert not stage.wants_early_polish(100.0)
    # with the polish switched off gamma grows either way
    off = LPStage(problem, tol=1e-6, gap_tol=1e-2, polish=False)
    assert off.finish(x, lambda: (value / (1 + gap), {}), active, None, 10.0) == (False, 100.0)
    assert not off.polishes


@pytest.mark.parametrize("small", [True, False])
def test_below_the_polish_gamma_only_a_small_restricted_lp_is_polished(monkeypatch, karate_lp,
                                                                      small):
    """Below POLISH_GAMMA the polish takes a restricted LP of at most SMALL_POLISH_ROWS
    rows; a larger one waits for gamma 10 (the stage grows), once per gamma."""
    from metricopt.solvers.core import stage as S

    problem, x, value = karate_lp
    monkeypatch.setattr(S, "SMALL_POLISH_ROWS", 10**6 if small else 0)
    lp_stage = S.LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert lp_stage.wants_early_polish(1.0)  # no stage has ended: no prediction
    rows = ActiveRows(triangles=np.array([[0, 1, 2]], dtype=np.int64))
    done, next_gamma = lp_stage.finish(x, lambda: (value / 2, {}), lambda: rows, None, 1.0)
    ran = [p for p in lp_stage.polishes if "seconds" in p]
    if small:
        assert ran and ran[0]["gamma"] == 1.0
    else:
        assert not ran and (done, next_gamma) == (False, 10.0)
        assert "waits for gamma 10" in lp_stage.polishes[-1]["skipped"]
    assert not lp_stage.may_polish(1.0)
    assert lp_stage.may_polish(10.0) is not lp_stage.polished
    # a gap of 1 at gamma 1 is not predicted to fall below 1e-4 by gamma 100
    assert lp_stage.wants_early_polish(10.0) is (not lp_stage.polished)


@pytest.mark.parametrize("first_gap,second_gap,grows", [(0.5, 1.5e-2, True),
                                                       (1e-2, 8e-3, False)])
def test_the_decay_of_the_certified_gap_is_measured_over_two_stages(karate_lp, first_gap,
                                                                    second_gap, grows):
    """Before two stages have ended the gap is predicted to shrink like 1/gamma; then at
    the rate measured between them. 0.5 -> 1.5e-2 (33x) predicts 1.4e-5 after two more
    stages: gamma grows (at 1/gamma, 1.5e-4: the polish would run); 1e-2 -> 8e-3 (1.25x)
    predicts the polish (at 1/gamma, 8e-5: gamma would grow)."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    asked = []

    def active():
        asked.append(True)
        return ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))

    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    stage.polish = False  # the first stage's polish is not what this test is about
    assert stage.decay() == stage.growth
    stage.finish(x, lambda: (value / (1 + first_gap), {}), active, None, 1.0)
    assert stage.decay() == stage.growth and not stage.growth_predicted(10.0)
    stage.polish = "auto"
    stage.best_bound = None  # the second stage's certificate is what decides
    done, next_gamma = stage.finish(x, lambda: (value / (1 + second_gap), {}), active,
                                    None, 10.0)
    assert stage.decay() == pytest.approx(first_gap / second_gap, rel=1e-9)
    assert [g for g, _ in stage.stage_gaps] == [1.0, 10.0]
    assert bool(asked) is not grows
    if grows:
        assert (done, next_gamma) == (False, 100.0)
        assert "/ 33.3 per stage" in stage.polishes[-1]["skipped"]
        assert stage.growth_predicted(100.0) and not stage.wants_early_polish(100.0)


def _wide_rows(problem, fraction=1.0):
    """Active rows whose triangles touch the first ``fraction`` of the pairs."""
    k = int(problem.n_variables * fraction) // 3 * 3
    tri = np.arange(k, dtype=np.int64).reshape(-1, 3)
    return ActiveRows(triangles=tri, duals=dict(triangles=np.ones(len(tri))))


@pytest.mark.parametrize("fraction", [0.2, 0.9])
def test_a_stall_decides_by_its_gap_only_where_the_restricted_lp_is_wide(karate_lp, fraction):
    """Where the restricted LP's columns cover at most a quarter of the variables
    (ca-GrQc: 2%) the polish runs at a stall as before; where they cover more
    (Harvard500: 48%) the stall's certified gap decides."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    stage.stage_gaps = [(1.0, 0.138)]
    got = stage.after_stall(10.0, lambda: x, 0.0, lambda: (value / 1.01, {}),
                            lambda: _wide_rows(problem, fraction))
    assert got == ("continue" if fraction > 0.25 else None)
    assert stage.certificates == (1 if fraction > 0.25 else 0)


@pytest.mark.parametrize("second,expect", [(4e-3, "continue"), (9e-3, 100.0),
                                           (1.3e-2, None), (5e-2, "continue"),
                                           (5e-5, "met")])
def test_a_stalled_stage_goes_on_grows_or_polishes_by_its_certified_gap(karate_lp, second,
                                                                       expect):
    """A stage stalled at gamma >= 10, once a stage has converged, measures its certified
    gap (a point made feasible from the iterate against a certificate of its duals):
    within gap_tol it is the answer; the first stall, a gap halved since the last, or
    one above the stage's predicted end (0.138 / 10) goes on; else gamma grows when two
    more stages are predicted to close the gap, else the polish runs (None). Without an
    earlier stage's gap or below gamma 10: None."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp

    def certify(gap):
        return lambda: (value / (1 + gap), {})

    def wide():
        return _wide_rows(problem)

    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert stage.after_stall(10.0, lambda: x, 0.0, certify(1e-2), wide) is None
    assert stage.certificates == 0
    stage.polish = False
    stage.finish(x, lambda: (value / (1 + 0.138), {}), None, None, 1.0)
    stage.polish = "auto"
    assert stage.after_stall(1.0, lambda: x, 0.0, certify(1e-2), wide) is None
    stage.best_bound = None
    # the iterate violates by 0.05: the point measured is made feasible from it
    worse = np.minimum(x + 0.05 * (np.arange(x.size) % 2), 1.0)
    assert stage.after_stall(10.0, lambda: worse, problem.max_violation(worse),
                             certify(1e-2), wide) == "continue"  # the first stall
    assert stage.certificates == 2 and stage.feasible_x is not None
    stage.best_bound = None
    got = stage.after_stall(10.0, lambda: x, 0.0, certify(second), wide)
    assert got == expect
    # a stall is a stage's end only when gamma grows from it
    assert [g for g, _ in stage.stage_gaps] == ([1.0, 10.0] if expect == 100.0 else [1.0])
    if expect == 100.0:
        assert "stalled at gamma 10" in stage.polishes[-1]["skipped"]
        assert stage.may_polish(10.0)  # the polish of gamma 10 was not tried
    if expect == "met":
        assert problem.max_violation(stage.x) <= 1e-6
        assert problem.objective_value(stage.x) == pytest.approx(value, rel=1e-9)
        assert "from the iterate of the stage at gamma 10" in stage.polish_how()


def test_a_stalled_stage_behind_the_last_stage_goes_on_a_bounded_number_of_times(karate_lp):
    """Right after gamma grows the iterate is far from the new stage's point: a stall
    whose gap is above the one predicted for the stage's end (1e-2 / 13.8 here) goes
    on, at most MAX_STALLS_BEHIND times; then the gap decides as for any stall."""
    from metricopt.solvers.core.stage import MAX_STALLS_BEHIND, LPStage

    problem, x, value = karate_lp
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    stage.stage_gaps = [(1.0, 0.138), (10.0, 1e-2)]
    assert stage.expected_gap(100.0) == pytest.approx(1e-2 / 13.8)
    got = [stage.after_stall(100.0, lambda: x, 0.0, lambda: (value / 1.009, {}),
                             lambda: _wide_rows(problem))
           for _ in range(MAX_STALLS_BEHIND + 1)]
    assert got == ["continue"] * MAX_STALLS_BEHIND + [None]  # no progress: the polish


def test_a_stage_stalled_below_the_polish_gamma_records_its_certified_gap(karate_lp):
    """A stage stalled below gamma 10 grows gamma and ends there: where the restricted
    LP is wide its certified gap, measured from a point made feasible from its iterate,
    is what the decay and the stalls above gamma 10 start from."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert stage.grow_before_polish(1.0, lambda: x, 0.0, lambda: (value / 1.138, {}),
                                    lambda: _wide_rows(problem, 0.2)) == 10.0
    assert not stage.stage_gaps  # a narrow restricted LP: the stall is not measured
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert stage.grow_before_polish(1.0, lambda: x, 0.0, lambda: (value / 1.138, {}),
                                    lambda: _wide_rows(problem)) == 10.0
    assert stage.stage_gaps == [(1.0, pytest.approx(0.138))] and stage.certificates == 1
    assert "polish waits for gamma 10" in stage.polishes[-1]["skipped"]
    # the stall above gamma 10 now has a gap before it: the first one goes on
    assert stage.after_stall(10.0, lambda: x, 0.0, lambda: (value / 1.01, {}),
                             lambda: _wide_rows(problem)) == "continue"


@pytest.mark.parametrize("gaps,last,expect", [
    ([], None, None),  # the stage's first measurement
    ([], 0.141, "floor"),  # fell by less than a tenth: the first stage ends
    ([], 0.2, None),  # still falling
    ([(1.0, 0.138)], 1.2e-2, "floor"),  # within the predicted 1.38e-2
    ([(1.0, 0.138)], None, None),
    ([(1.0, 0.03)], 1.2e-2, None),  # above the predicted 3e-3: a pause, not a floor
    ([(1.0, 0.138)], 0.5, "met"),  # within gap_tol (5e-5 measured)
])
def test_a_stage_ends_at_its_floor_when_its_certified_gap_stops_falling(karate_lp, gaps,
                                                                       last, expect):
    """Measured every few full checks of a stage whose restricted LP is wide, the
    certified gap ends the stage when it fell by less than FLOOR_DROP since the last
    measurement and is within the gap predicted for the stage's end."""
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    gap = 5e-5 if expect == "met" else (0.139 if not gaps else 1.1e-2)
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    stage.stage_gaps = list(gaps)
    gamma = 10.0 if gaps else 1.0
    got, measured = stage.at_floor(gamma, last, lambda: x, 0.0,
                                   lambda: (value / (1 + gap), {}),
                                   lambda: _wide_rows(problem))
    assert got == expect and measured == pytest.approx(gap)
    assert stage.certificates == 1
    if expect == "floor":
        assert stage.stage_gaps[-1] == (gamma, pytest.approx(gap))
    else:
        assert stage.stage_gaps == gaps
    if expect == "met":
        assert stage.x is not None and "from the iterate of the stage" in stage.polish_how()


@pytest.mark.parametrize("cheap_ok", [True, False])
def test_a_measured_point_is_the_cheapest_within_tol_scanned_cheapest_first(monkeypatch,
                                                                            karate_lp,
                                                                            cheap_ok):
    """Each candidate's O(n^3) violation scan runs only until one within tol is found,
    the cheapest first: one scan when the cheapest holds, the next point otherwise."""
    from metricopt.solvers.core import polish as P
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    cheap = x.copy()  # the LP optimum: nothing feasible is cheaper
    dear = np.minimum(x + 0.01, 1.0)
    assert problem.objective_value(dear) > value
    monkeypatch.setattr(P, "feasible_points", lambda *a, **k: [dict(x=dear), dict(x=cheap)])
    scans = []
    real = type(problem).max_violation

    def max_violation(self, z):
        scans.append(z)
        return 1.0 if z is cheap and not cheap_ok else real(self, z)

    monkeypatch.setattr(type(problem), "max_violation", max_violation)
    stage = LPStage(problem, tol=1e-9, gap_tol=1e-4, polish="auto")
    gap = stage.stall_gap(lambda: x, 0.0, lambda: (value, {}))
    assert [z is cheap for z in scans] == ([True] if cheap_ok else [True, False])
    assert stage.feasible_x is (cheap if cheap_ok else dear)
    assert (gap == pytest.approx(0.0, abs=1e-12)) == cheap_ok and gap >= -1e-12
    assert stage.feasible_violation <= 1e-9


def test_only_a_wide_complete_graph_lp_is_measured_for_its_floor(karate, karate_lp):
    from metricopt.solvers.core.stage import LPStage

    problem, x, value = karate_lp
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert stage.at_floor(1.0, 0.14, lambda: x, 0.0, lambda: (value / 1.139, {}),
                          lambda: _wide_rows(problem, 0.2)) == (None, None)
    stage = LPStage(problem, tol=1e-6, gap_tol=1e-4, polish=False)
    assert stage.at_floor(1.0, 0.14, lambda: x, 0.0, lambda: (value / 1.139, {}),
                          lambda: _wide_rows(problem)) == (None, None)
    cd = build_problem("cd", karate)  # edge lists: not measured
    stage = LPStage(cd, tol=1e-6, gap_tol=1e-4, polish="auto")
    assert stage.at_floor(1.0, 0.14, None, 0.0, None, None) == (None, None)
    assert stage.certificates == 0


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_a_stage_at_its_floor_grows_gamma_and_the_run_reaches_the_lp(monkeypatch, karate,
                                                                     method):
    """The driver measures the floor every ``floor_checks`` full checks; a first stage
    at its floor grows gamma before any polish, and the run still ends at the LP."""
    from metricopt.solvers.core import driver as D
    from metricopt.solvers.core import stage as S

    calls = []

    def at_floor(self, gamma, last, *args):
        calls.append((gamma, last))
        if gamma == 1.0 and last is not None:
            self.stage_gaps.append((gamma, 0.1))
            return "floor", 0.1
        return None, 0.2

    monkeypatch.setattr(S.LPStage, "at_floor", at_floor)
    monkeypatch.setattr(D, "POLISH_QP_GAP", 0.0)  # no early polish (dykstra)
    problem = build_problem("cc", karate)
    res = solve(problem, method=method, tol=1e-6, gap_tol=1e-6, threads=1, gamma=1.0,
                **_growth(method),
                warm_up=False)
    assert res["status"] == Status.OPTIMAL, res["message"]
    assert calls[0] == (1.0, None)
    assert any("reached its floor at gamma 1" in p.get("skipped", "") for p in res["polish"])
    assert res["fun"] == pytest.approx(_exact(problem), rel=1e-5)


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_the_gaps_measured_by_the_floor_checks_go_to_the_records(monkeypatch, karate,
                                                                 karate_lp, method):
    """Every certified gap a floor check measures is in its iteration's record (the
    ``gap`` column of iterations.csv), never below the gap of the exact LP value."""
    from metricopt.solvers.core import driver as D
    from metricopt.solvers.core import stage as S

    problem, _, exact = karate_lp
    measured = []
    at_floor = S.LPStage.at_floor

    def spy(self, *args):
        decision, gap = at_floor(self, *args)
        measured.append(gap)
        return decision, gap

    monkeypatch.setattr(S, "WIDE_POLISH_FRACTION", 0.0)  # every restricted LP is wide
    monkeypatch.setattr(S.LPStage, "at_floor", spy)
    monkeypatch.setattr(D, "POLISH_QP_GAP", 0.0)  # no early polish (dykstra)
    res = solve(problem, method=method, tol=1e-6, gap_tol=1e-6, threads=1, gamma=1.0,
                **_growth(method),
                warm_up=False)
    assert res["status"] == Status.OPTIMAL, res["message"]
    gaps = [h["gap"] for h in res["history"][:-1] if np.isfinite(h.get("gap", np.nan))]
    assert gaps and gaps == [g for g in measured if g is not None][:len(gaps)]
    assert min(gaps) >= exact / res["lower_bound"] - 1.0 - 1e-9


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_a_ctrl_c_during_a_floor_check_drops_its_iteration(monkeypatch, sigint_raises, karate_lp,
                                                           method):
    """A Ctrl-C held while a floor check measures (seconds on large graphs) ends it
    before its next part: no certificate is computed after the signal, the iteration
    is dropped (it is neither counted nor recorded) and the run ends interrupted."""
    import os
    import signal

    from metricopt.solvers.core import driver as D
    from metricopt.solvers.core import stage as S

    problem, _, _ = karate_lp
    records, seen = [], {}
    at_floor, certify = S.LPStage.at_floor, S.LPStage._certify

    def signalled(self, *args):
        if "records" not in seen:
            seen["records"] = len(records)
            os.kill(os.getpid(), signal.SIGINT)  # held until the iteration ends
        return at_floor(self, *args)

    def counted(self, *args):
        seen["certified_after"] = "records" in seen
        return certify(self, *args)

    monkeypatch.setattr(S, "WIDE_POLISH_FRACTION", 0.0)  # every restricted LP is wide
    monkeypatch.setattr(S.LPStage, "at_floor", signalled)
    monkeypatch.setattr(S.LPStage, "_certify", counted)
    monkeypatch.setattr(D, "POLISH_QP_GAP", 0.0)  # no early polish (dykstra)
    res = solve(problem, method=method, tol=1e-6, gap_tol=1e-6, threads=1, gamma=1.0,
                **_growth(method),
                warm_up=False, callback=records.append)
    assert "records" in seen, "no floor check ran"
    assert res["status"] == Status.INTERRUPTED, res["message"]
    assert not seen.get("certified_after", False)
    assert res["nit"] == seen["records"] == len(res["history"])


def test_a_ctrl_c_in_the_polish_ends_it_before_its_next_round(karate_lp):
    """The polish asks ``stopping`` before each round: asked true after round 1 it ends
    there, ``abandoned``, with round 1's certified bound; the stage keeps that bound and
    drops the iteration (StepAbandoned)."""
    from metricopt.solvers.core import stage as S
    from metricopt.solvers.core.loop import StepAbandoned

    problem, _, value = karate_lp
    rows = ActiveRows(triangles=np.array([[0, 1, 2]], dtype=np.int64))
    rounds = []
    res = polish(problem, rows, tol=1e-6, callback=lambda *a: rounds.append(a),
                 stopping=lambda: bool(rounds))
    assert res["abandoned"] and res["rounds"] == 1 == len(rounds)
    assert res["lower_bound"] is not None and res["lower_bound"] <= value + 1e-9
    assert polish(problem, rows, tol=1e-6)["rounds"] > 1  # it had rounds to go

    lp_stage = S.LPStage(problem, tol=1e-6, gap_tol=1e-8, polish="auto")
    lp_stage.stopping = lambda: True
    with pytest.raises(StepAbandoned):
        lp_stage.try_polish(lambda: rows, None, 10.0)
    assert lp_stage.best_bound is None  # stopped before round 1: no bound to keep
    rounds.clear()
    lp_stage = S.LPStage(problem, tol=1e-6, gap_tol=1e-8, polish="auto")
    lp_stage.progress = rounds.append
    lp_stage.stopping = lambda: any(r.get("polish_round", 0) > 0 for r in rounds)
    with pytest.raises(StepAbandoned):
        lp_stage.try_polish(lambda: rows, None, 10.0)
    assert lp_stage.best_bound == pytest.approx(res["lower_bound"])


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_a_ctrl_c_inside_a_polish_round_ends_the_run(sigint_from_highs, method):
    """A Ctrl-C while HiGHS solves a polish round stops HiGHS at its next iteration; the
    polish is abandoned, its iteration dropped, and the run ends interrupted."""
    problem = build_problem("cc", read_graph("lesmis"))
    seen = sigint_from_highs()
    res = solve(problem, method=method, tol=1e-8, gap_tol=1e-9, threads=1, warm_up=False,
                **_growth(method))
    assert seen["sent"]
    assert res["status"] == Status.INTERRUPTED, res["message"]
    ran = [p for p in res["polish"] if "seconds" in p]
    assert ran and ran[-1]["message"] == "stopped in the polish" and ran[-1]["rounds"] == 0


def test_a_large_early_polish_waits_for_the_stages_certified_gap(monkeypatch, karate_lp):
    """Before a stage converges (dykstra's early polish) only a restricted LP of at most
    SMALL_POLISH_ROWS rows is polished; a larger one waits for the stage's end, where the
    gamma is still untried and the certified gap decides."""
    from metricopt.solvers.core import stage as S

    problem, x, value = karate_lp
    monkeypatch.setattr(S, "SMALL_POLISH_ROWS", 0)
    lp_stage = S.LPStage(problem, tol=1e-6, gap_tol=1e-4, polish="auto")
    rows = ActiveRows(triangles=np.array([[0, 1, 2]], dtype=np.int64))
    assert lp_stage.wants_early_polish(10.0)
    assert not lp_stage.try_polish(lambda: rows, None, 10.0, early=True)
    assert "waits for the stage's certified gap" in lp_stage.polishes[-1]["skipped"]
    assert lp_stage.may_polish(10.0) and not lp_stage.wants_early_polish(10.0)
    lp_stage.finish(x, lambda: (value / 2, {}), lambda: rows, None, 10.0)
    ran = [p for p in lp_stage.polishes if "seconds" in p]
    assert ran and ran[0]["gamma"] == 10.0


def test_polish_rows_refuses_a_model_beyond_half_the_memory(karate):
    """The restricted LP must fit in half the memory allowed, counted by the larger of the
    simplex and interior-point models (the polish may switch to the latter)."""
    from metricopt.solvers.core.exact_lp import model_bytes
    from metricopt.solvers.core.polish import polish_rows

    problem = build_problem("cc", karate)
    tri = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int64)  # 6 pairs: 6 columns
    rows = ActiveRows(triangles=tri, duals=dict(triangles=np.ones(2)))
    got, why = polish_rows(problem, rows, max_memory=10**12)
    assert got is not None and why == ""
    k, cols = got.n_rows, 6
    ipm = model_bytes("ipm", 2 * k + 2 * cols, 4 * k + 3 * cols, 2 * cols)
    assert ipm > model_bytes("simplex", 2 * k + 2 * cols, 4 * k + 3 * cols, 2 * cols)
    got, why = polish_rows(problem, rows, max_memory=2 * ipm - 1)
    assert got is None and "restricted LP needs" in why
    assert polish_rows(problem, rows, max_memory=2 * ipm)[0] is not None


def test_polish_rows_sizes_the_model_by_the_kept_rows(karate, monkeypatch):
    """The memory need counts the columns of the rows kept (the strongest), not of every
    active row: rows with tiny duals on many other pairs do not make it refuse."""
    from metricopt.solvers.core import polish as P
    from metricopt.solvers.core.exact_lp import model_bytes

    problem = build_problem("cc", karate)
    monkeypatch.setattr(P, "MIN_ROWS", 2)
    monkeypatch.setattr(P, "ROWS_PER_COLUMN", 0.0)
    # two strong rows on 6 pairs, 100 weak ones on 300 others
    weak = 10 + np.arange(300, dtype=np.int64).reshape(100, 3)
    tri = np.vstack([np.array([[0, 1, 2], [3, 4, 5]]), weak])
    duals = np.r_[1.0, 1.0, np.full(100, 1e-6)]
    rows = ActiveRows(triangles=tri, duals=dict(triangles=duals))
    k, cols = 2, 6
    need = model_bytes("ipm", 2 * k + 2 * cols, 4 * k + 3 * cols, 2 * cols)
    got, why = P.polish_rows(problem, rows, max_memory=2 * need)
    assert got is not None and got.n_rows == 2, why


@pytest.mark.parametrize("n", [2, 3, 7, 50])
def test_layout_movers_match_the_index(n):
    """packed_to_diagonal / diagonal_to_packed / diagonal_positions_to_packed agree with
    the index array they replace (1-d and 2-d arrays)."""
    idx = L.packed_to_diagonal_index(n)
    rng = np.random.default_rng(n)
    for a in (rng.random(idx.size), rng.random((4, idx.size))):
        want = np.empty_like(a)
        want[..., idx] = a
        got = L.packed_to_diagonal(a, n, np.empty_like(a))
        assert np.array_equal(got, want)
        assert np.array_equal(L.diagonal_to_packed(got, n, np.empty_like(a)), a)
    assert np.array_equal(L.diagonal_positions_to_packed(np.arange(idx.size), n), _to_packed(n))


def test_polish_cut_by_the_clock_keeps_its_best_bound(karate, monkeypatch):
    """Every round's relaxation bounds the full LP: a polish whose third round is cut by
    the time limit (inside HiGHS) reports the bound of round 2."""
    from metricopt.solvers.core import polish as polish_module

    problem = build_problem("cc", karate)
    exact = _exact(problem)
    empty = ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))
    rounds = []
    full = polish(problem, empty, tol=1e-9, callback=lambda *a: rounds.append(a[0]))
    assert full["status"] == Status.OPTIMAL and len(rounds) > 3
    two = polish(problem, empty, tol=1e-9, max_rounds=2)
    solve_round = polish_module._solve
    calls = []

    def cut_third(rm, tol, gap_tol, deadline):
        calls.append(1)
        if len(calls) == 3:
            return Status.LIMIT, "Time limit reached.", None, float("nan")
        return solve_round(rm, tol, gap_tol, deadline)

    monkeypatch.setattr(polish_module, "_solve", cut_third)
    cut = polish(problem, empty, tol=1e-9)
    assert cut["status"] == Status.LIMIT and cut["rounds"] == 2
    assert cut["lower_bound"] is not None
    assert cut["lower_bound"] == two["lower_bound"] <= exact * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind,params", [("cc", {}), ("cc", {"weights": "unit"}), ("cd", {}),
                                         ("mn", {"p": 1}), ("cc", {"layout": "support"})])
def test_shift_to_feasible_meets_every_row(karate, kind, params, seed):
    """The move towards the constant point ``s 1`` by ``theta = v / (v + s)`` leaves no
    row violated (triangles, cycles, wedges, bounds), whatever the point."""
    from metricopt.problems.support import SupportPoint

    problem = build_problem(kind, karate, **params)
    rng = np.random.default_rng(seed)
    top = 3.0 if kind == "mn" else 1.0
    if problem.structure == "support":
        x = SupportPoint(problem.n, problem.pairs, rng.uniform(0, top, len(problem.pairs)),
                         1.0)
    else:
        x = rng.uniform(0, top, problem.n_variables)
    v = float(problem.max_violation(x))
    assert v > 0.1  # a random point is far from feasible
    xs, theta = shift_to_feasible(problem, x, v)
    values = xs.values if problem.structure == "support" else xs
    s = 1.0 if kind != "mn" else max(1.0, float(np.max(x)))
    assert theta == pytest.approx(v / (v + s))
    assert problem.max_violation(xs) <= 1e-12
    assert values.min() >= problem.lower and values.max() <= problem.upper


def test_shift_to_feasible_refuses_a_sum_row(karate):
    sc = build_problem("sc", karate)
    assert shift_to_feasible(sc, np.ones(sc.n_variables), 0.1) is None


@pytest.mark.parametrize("how", ["shift", "repair"])
def test_polish_ends_by_a_feasible_point_when_that_meets_the_gap(monkeypatch, how):
    """A restricted optimum that misses tol but whose shifted point or metric closure
    meets gap_tol ends the polish: exactly feasible, its cost within gap_tol of the
    round's certified bound."""
    from metricopt.solvers import _repair
    from metricopt.solvers.core import integral

    monkeypatch.setattr(integral, "integral_candidate", lambda *a, **k: None)
    if how == "shift":
        monkeypatch.setattr(_repair, "repair_dense", lambda problem, x: None)
    problem = build_problem("cc", read_graph("dolphins"), weights="unit")
    empty = ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))
    exact = polish(problem, empty, tol=1e-9, gap_tol=1e-4)
    loose = polish(problem, empty, tol=1e-9, gap_tol=0.5)
    assert exact["status"] == loose["status"] == Status.OPTIMAL
    assert "shift" not in exact and "repair" not in exact
    if how == "shift":
        assert 0 < loose["shift"] < 1 and "repair" not in loose
    else:
        assert loose["repair"] == "closure" and "shift" not in loose
    assert loose["rounds"] < exact["rounds"]
    assert problem.max_violation(loose["x"]) <= 1e-12
    fun = problem.objective_value(loose["x"])
    assert loose["lower_bound"] <= exact["lower_bound"] * (1 + 1e-12)
    assert fun <= (1 + 0.5) * loose["lower_bound"]
    assert fun >= exact["lower_bound"] * (1 - 1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind,params", [("cc", {}), ("cc", {"weights": "unit"}),
                                         ("mn", {"p": 1})])
def test_the_polish_keeps_the_cheaper_feasible_point(monkeypatch, karate, kind, params, seed):
    """Of the shifted point and the metric closure, both exactly feasible, the answer is
    the one of lower cost (the rounding, the last resort, left out)."""
    from metricopt.solvers._repair import repair_dense
    from metricopt.solvers.core import integral
    from metricopt.solvers.core.polish import _feasible_answer

    monkeypatch.setattr(integral, "integral_candidate", lambda *a, **k: None)

    problem = build_problem(kind, karate, **params)
    x = np.random.default_rng(seed).uniform(0, 1, problem.n_variables)
    v = float(problem.max_violation(x))
    both = [problem.objective_value(shift_to_feasible(problem, x, v)[0]),
            problem.objective_value(repair_dense(problem, x))]
    got = _feasible_answer(problem, x, v, 1.0, tol=1e-9, gap_tol=1e12)
    assert got["max_violation"] <= 1e-12
    assert problem.objective_value(got["x"]) == min(both)
    assert ("shift" in got) == (both[0] < both[1])
    # a bound the cheaper point misses: no answer
    assert _feasible_answer(problem, x, v, min(both) / 2, tol=1e-9, gap_tol=0.5) is None


def test_the_simplex_budget_is_per_layout(monkeypatch):
    """The support-sized layout's polish has its own simplex budget
    (:data:`SUPPORT_SIMPLEX_ITERATIONS_PER_ROW`): with no budget for the dense layout and
    an ample one for the support-sized one, the first switches to the interior-point
    method and the second stays with the simplex method, both to the same LP."""
    from metricopt.solvers.core import polish as polish_module

    monkeypatch.setattr(polish_module, "MIN_SIMPLEX_ITERATIONS", 1)
    monkeypatch.setattr(polish_module, "SIMPLEX_ITERATIONS_PER_ROW", 0.0)
    monkeypatch.setattr(polish_module, "SUPPORT_SIMPLEX_ITERATIONS_PER_ROW", 1e6)
    graph = read_graph("lesmis")
    got = {}
    for layout in ("dense", "support"):
        res = solve(build_problem("cc", graph, layout=layout), method="project-forget",
                    tol=1e-8, gap_tol=1e-9, threads=1)
        assert res["status_name"] == "optimal"
        ran = [p for p in res["polish"] if "seconds" in p]
        got[layout] = ({p["lp_algorithm"] for p in ran}, res["fun"])
    assert got["dense"][0] == {"ipm"} and got["support"][0] == {"simplex"}
    assert got["support"][1] == pytest.approx(got["dense"][1], rel=1e-8)


def test_the_dense_simplex_budget_is_capped():
    """Large dense restricted LPs go to the interior-point method after at most
    DENSE_MAX_SIMPLEX_ITERATIONS; small ones keep 0.25 per row (at least 5,000), the
    support-sized layout 1 per row."""
    from metricopt.solvers.core import polish as P

    assert P.simplex_budget("dense", 1_000) == P.MIN_SIMPLEX_ITERATIONS
    assert P.simplex_budget("dense", 36_000) == 9_000  # jazz's first polish: unchanged
    assert P.simplex_budget("dense", 189_136) == P.DENSE_MAX_SIMPLEX_ITERATIONS
    assert P.simplex_budget("support", 189_136) == 189_136
    assert P.simplex_budget("edges", 189_136) == 47_284  # edge problems keep 0.25 per row


@pytest.mark.parametrize("layout, kept", [("dense", 60), ("support", 30)])
def test_polish_rows_per_column_depend_on_the_layout(karate, monkeypatch, layout, kept):
    """The polish starts from the strongest 2 rows per column on the dense layout and 1
    on the support-sized one (``SUPPORT_ROWS_PER_COLUMN``), the strongest first."""
    from metricopt.solvers.core import polish as P

    problem = build_problem("cc", karate, layout=layout)
    monkeypatch.setattr(P, "MIN_ROWS", 1)
    rng = np.random.default_rng(0)
    tri = np.stack([rng.permutation(30)[:3] for _ in range(90)])
    tri[:30] = np.stack([np.arange(30), (np.arange(30) + 1) % 30, (np.arange(30) + 2) % 30], 1)
    duals = np.linspace(1.0, 0.01, 90)
    got, why = P.polish_rows(problem, ActiveRows(triangles=tri, duals=dict(triangles=duals)))
    assert got is not None, why
    assert got.n_rows == kept
    np.testing.assert_array_equal(got.triangles, tri[:kept])


def test_the_polish_ends_by_a_rounding_within_the_gap():
    """A round whose optimum misses tol, and whose shifted point and closure miss the
    gap, ends when its rounding (an integral point of the LP) meets gap_tol against the
    round's bound; the rounding is exactly feasible and said in the message."""
    from metricopt.solvers import _repair

    problem = build_problem("cc", read_graph("dolphins"), weights="unit")
    empty = ActiveRows(triangles=np.zeros((0, 3), dtype=np.int64))
    exact = polish(problem, empty, tol=1e-9, gap_tol=1e-4)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_repair, "repair_dense", lambda problem, x: None)
        mp.setattr("metricopt.solvers.core.polish.shift_to_feasible", lambda *a: None)
        loose = polish(problem, empty, tol=1e-9, gap_tol=0.5)
    assert loose["status"] == Status.OPTIMAL and "integral" in loose
    assert "rounded" in loose["message"]
    fun = problem.objective_value(loose["x"])
    assert set(np.unique(loose["x"])) <= {0.0, 1.0}
    assert problem.max_violation(loose["x"]) == 0.0
    assert fun == pytest.approx(loose["integral"]["value"])
    assert exact["lower_bound"] * (1 - 1e-12) <= fun <= 1.5 * loose["lower_bound"]
    assert loose["rounds"] < exact["rounds"]


@pytest.mark.parametrize("seed", range(6))
def test_distinct_count_equals_the_sorted_count(seed):
    """Dense ids (the mask), sparse or negative ids (the sort), empty input."""
    from metricopt.solvers.core.polish import distinct_count

    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 3000))
    top = [10, 5000, 2**40][seed % 3]
    ids = rng.integers(-3 if seed == 4 else 0, top, size=(size, 3))
    assert distinct_count(ids) == (np.unique(ids).size if ids.size else 0)
