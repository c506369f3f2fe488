"""The solver core: the stall watch of the stages and the one result path."""

import json
import warnings

import numpy as np
import pytest

import metricopt
from metricopt.exceptions import ConvergenceWarning, InputError
from metricopt.result import Status
from metricopt.solvers.core.driver import STALL_CHECKS, Measure, ProgressWatch
from metricopt.solvers.core.result import complete
from metricopt.solvers.core.stage import POLISH_GAMMA, LPStage


def _full(viol, gap):
    return Measure(primal=1.0, dual=1.0, qp_gap=gap, violation=viol, full=True)


def test_watch_stalls_after_checks_without_progress():
    watch = ProgressWatch()
    assert not watch.stalled(1.0, _full(1e-2, 1e-2))
    # halving either number is progress, and restarts the count
    for k in range(20):
        assert not watch.stalled(1.0, _full(1e-2 / 2 ** (k + 1), 1e-2))
    last = 1e-2 / 2 ** 20
    flat = [watch.stalled(1.0, _full(0.9 * last, 1e-2)) for _ in range(STALL_CHECKS)]
    assert flat == [False] * (STALL_CHECKS - 1) + [True]


def test_watch_counts_no_progress_on_a_number_that_met_its_target():
    # the QP gap halves at every check, below gap_tol: only the violation counts
    watch = ProgressWatch(tol=1e-4, gap_tol=1e-4)
    gaps = [1e-6 / 2 ** k for k in range(STALL_CHECKS + 1)]
    got = [watch.stalled(1.0, _full(7e-4, g)) for g in gaps]
    assert got == [False] * STALL_CHECKS + [True]
    # the same with no targets: the halving QP gap is progress
    watch = ProgressWatch()
    assert not any(watch.stalled(1.0, _full(7e-4, g)) for g in gaps)
    # and the violation, once below tol, no longer counts while the QP gap hovers
    watch = ProgressWatch(tol=1e-4, gap_tol=1e-4)
    viol = [1e-5 / 2 ** k for k in range(STALL_CHECKS + 1)]
    got = [watch.stalled(1.0, _full(v, 3e-3)) for v in viol]
    assert got == [False] * STALL_CHECKS + [True]


def test_watch_ignores_estimates_and_starts_afresh_with_gamma():
    watch = ProgressWatch(checks=2)
    watch.stalled(1.0, _full(1e-3, 1e-3))
    watch.stalled(1.0, _full(1e-3, 1e-3))
    estimate = Measure(qp_gap=1e-3, violation=1e-3, full=False)
    assert not watch.stalled(1.0, estimate)  # not a full check: not counted
    assert watch.stalled(1.0, _full(1e-3, 1e-3))
    assert not watch.stalled(10.0, _full(1e-3, 1e-3))  # a new stage


def test_watch_state_round_trips_and_refuses_damage():
    watch = ProgressWatch()
    for _ in range(3):
        watch.stalled(2.0, _full(1e-4, 1e-5))
    again = ProgressWatch()
    again.restore(watch.state())
    assert (again.gamma, again.count, again.violation, again.qp_gap) == \
        (watch.gamma, watch.count, watch.violation, watch.qp_gap)
    fresh = ProgressWatch()
    fresh.restore(ProgressWatch().state())  # infinities travel as null
    assert fresh.violation == np.inf and fresh.gamma is None
    for bad in ({"count": -1}, {"count": 1.5}, {"violation": "x"}, {"qp_gap": True}, [1]):
        with pytest.raises(InputError, match="stall_watch"):
            ProgressWatch().restore(bad)


def test_watch_times_the_floor_measurements_in_full_checks_of_a_stage():
    watch = ProgressWatch()
    due = []
    for k in range(7):
        watch.stalled(1.0, _full(1e-2 / 2 ** k, 1e-2))
        due.append(watch.floor_due(3))
    assert due == [False, False, True, False, False, True, False]
    assert not watch.floor_due(None)
    watch.stalled(1.0, Measure(qp_gap=1e-3, violation=1e-3, full=False))
    assert watch.full_checks == 7  # an estimate is not a full check
    watch.floor_gap = 0.14
    again = ProgressWatch()
    again.restore(watch.state())  # the stage's measurements travel in checkpoints
    assert (again.full_checks, again.floor_gap) == (7, 0.14)
    watch.stalled(10.0, _full(1e-2, 1e-2))  # a new stage counts afresh
    assert (watch.full_checks, watch.floor_gap) == (1, None)
    old = {k: v for k, v in watch.state().items() if k not in ("full_checks", "floor_gap")}
    again.restore(old)  # a checkpoint of an earlier version
    assert (again.full_checks, again.floor_gap) == (0, None)
    with pytest.raises(InputError, match="stall_watch"):
        ProgressWatch().restore(dict(old, full_checks=-2))


def test_stage_gaps_round_trip_and_refuse_damage():
    """The measured gaps travel in a checkpoint's header: a resumed run predicts the
    decay as the uninterrupted one does."""
    problem = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    stage = LPStage(problem, tol=1e-4, gap_tol=1e-4)
    stage.stage_gaps = [(1.0, 0.138), (10.0, 9.2e-3)]
    again = LPStage(problem, tol=1e-4, gap_tol=1e-4)
    again.restore_gaps(json.loads(json.dumps([list(p) for p in stage.stage_gaps])))
    assert again.stage_gaps == stage.stage_gaps and again.decay() == stage.decay()
    again.restore_gaps(None)  # a checkpoint written before the field: none measured
    assert again.stage_gaps == stage.stage_gaps
    for bad in ({"gamma": 1}, [[1.0]], [[1.0, "x"]], [[True, 0.1]], [[1.0, float("nan")]]):
        with pytest.raises(InputError, match="stage_gaps"):
            LPStage(problem, tol=1e-4, gap_tol=1e-4).restore_gaps(bad)


def test_a_stalled_stage_is_polished_to_the_exact_lp():
    # the violation of project-forget's QP stalls at 2e-7 here: the stage never reaches
    # tol = 1e-8, and only a polish tried on the stall reaches the contract
    problem = metricopt.build_problem("cc", metricopt.read_graph("dolphins"))
    res = metricopt.solve(problem, method="project-forget", tol=1e-8, gap_tol=1e-6,
                          threads=1)
    assert res["status"] == Status.OPTIMAL, res["message"]
    assert res["polish_rounds"] > 0
    assert res["max_violation"] <= 1e-8 and res["gap"] <= 1e-6


def test_the_polish_reports_its_start_and_rounds_to_the_callback():
    problem = metricopt.build_problem("cc", metricopt.read_graph("dolphins"))
    records = []
    res = metricopt.solve(problem, method="project-forget", tol=1e-8, gap_tol=1e-6,
                          threads=1, callback=records.append)
    polish = [r for r in records if r.get("stage") == "polish"]
    ran = [p for p in res["polish"] if "skipped" not in p]
    # one start record per polish that ran, then one record per round it solved
    assert [r["polish_round"] for r in polish] == [
        k for p in ran for k in range(p["rounds"] + 1)]
    assert all(r["rows"] > 0 and r["gamma"] >= POLISH_GAMMA for r in polish)
    ends = [r for r in polish if r["polish_round"] > 0]
    # every round's LP value is a certified bound: none above the run's best bound
    assert all(r["lp_value"] <= res["lower_bound"] * (1 + 1e-9) for r in ends)
    # the iteration records of the history are the iterations only
    assert len(res["history"]) == len(records) - len(polish)
    assert not any("polish_round" in h for h in res["history"])


def test_a_stalled_stage_of_small_gamma_grows_before_the_polish():
    # the polish starts from the active rows of a stage with gamma >= POLISH_GAMMA
    problem = metricopt.build_problem("cc", metricopt.read_graph("dolphins"))
    res = metricopt.solve(problem, method="project-forget", tol=1e-8, gap_tol=1e-6,
                          threads=1, gamma=1.0, proximal=0)
    assert res["status"] == Status.OPTIMAL, res["message"]
    polishes = res["polish"]
    waits = [p for p in polishes if "waits for gamma" in p.get("skipped", "")]
    ran = [p for p in polishes if "skipped" not in p]
    assert waits and waits[0]["gamma"] == 1.0
    assert ran and all(p["gamma"] >= POLISH_GAMMA for p in ran)


def test_grow_before_polish_only_below_polish_gamma():
    cc = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    stage = LPStage(cc, tol=1e-4, gap_tol=1e-4)
    assert stage.grow_before_polish(1.0) == 10.0
    assert stage.grow_before_polish(POLISH_GAMMA) is None
    assert LPStage(cc, tol=1e-4, gap_tol=1e-4, polish=False).grow_before_polish(1.0) is None
    # sparsest cut's polish solves its path rows, whatever the active rows are
    sc = metricopt.build_problem("sc", metricopt.read_graph("karate"))
    assert LPStage(sc, tol=1e-4, gap_tol=1e-4).grow_before_polish(1.0) is None


@pytest.fixture(scope="module")
def karate_cc():
    return metricopt.build_problem("cc", metricopt.read_graph("karate"))


STATUSES = [Status.LIMIT, Status.STALLED, Status.NUMERICAL, Status.OPTIMAL]


@pytest.mark.parametrize("seed", range(40))
def test_status_is_optimal_exactly_when_the_numbers_meet_the_contract(karate_cc, seed):
    rng = np.random.default_rng(seed)
    x = np.clip(karate_cc.target + rng.normal(0, 0.05, karate_cc.n_variables), 0, 1)
    fun = karate_cc.objective_value(x)
    tol, gap_tol = 10.0 ** rng.integers(-8, -1), 10.0 ** rng.integers(-8, -1)
    viol = float(karate_cc.max_violation(x)) * rng.choice([0.0, 1e-9, 1e-3, 1.0])
    bound = fun * (1 - rng.choice([0.0, 1e-9, 1e-6, 1e-3, 0.1]))
    status = STATUSES[seed % len(STATUSES)]
    out = dict(x=x, max_violation=viol, lower_bound=bound, status=status, message="m")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        complete(karate_cc, out, backend="test", tol=tol, gap_tol=gap_tol)
    meets = out["max_violation"] <= tol * (1 + 1e-9) and out["gap"] <= gap_tol * (1 + 1e-9)
    assert (out["status"] == Status.OPTIMAL) == meets
    if not meets:
        assert "missed:" in out["message"] or "not optimal" in out["message"]


def test_an_interrupted_run_keeps_its_status(karate_cc):
    x = karate_cc.target.copy()
    out = dict(x=x, max_violation=0.0, lower_bound=karate_cc.objective_value(x),
               status=Status.INTERRUPTED, message="interrupted after 3 passes")
    complete(karate_cc, out, backend="test", tol=1e-6, gap_tol=1e-4)
    assert out["status"] == Status.INTERRUPTED
    assert out["message"] == "interrupted after 3 passes"


def test_an_optimal_value_below_its_bound_is_repaired():
    # project-forget's sparsest cut on dolphins ends within tol with a value below its
    # certified bound (a rescaled iterate); the answer is its exactly feasible repair
    problem = metricopt.build_problem("sc", metricopt.read_graph("dolphins"))
    res = metricopt.solve(problem, method="project-forget", threads=1)
    assert res["status"] == Status.OPTIMAL
    assert res["fun"] >= res["lower_bound"]
    assert res["max_violation"] <= 1e-12
    if "repaired_below_bound" in res:
        assert res["repaired_below_bound"] < res["lower_bound"]
        assert "repaired" in res["message"]
