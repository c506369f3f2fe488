"""Same command, same answer: runs repeat exactly, whatever the machine's load or threads.

Every schedule decision of the iterative backends (passes per oracle call, stage
changes, extrapolation, polish) depends on iteration counts and measured progress,
never on the clock; the clock only stops a run. Two runs of the same command under a
CPU load in a second process, and runs on one and on two threads, must give the same
report numbers and the same ``clusters.csv``. A time limit is answered promptly and
said in the status.
"""

import json
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import metricopt
from metricopt import pipeline
from metricopt.problems import build_problem
from metricopt.solvers import _note_overrun
from shared_data import SHARED_DATA

#: Report fields that must repeat exactly (times, memory and dates may not).
NUMBERS = ("status", "message", "lp_value", "lower_bound", "rounded_objective",
           "approximation_ratio", "lp_approx_ratio", "gap", "max_violation", "iterations")


def _shared_graph(name):
    """A graph of the shared data directory, or skip."""
    path = SHARED_DATA / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"no copy of {name} in {SHARED_DATA}")
    return str(path)


@pytest.fixture
def cpu_load():
    """A second process that keeps one core busy while the test runs."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _signed_file(tmp_path):
    """A seeded signed edge list on 40 nodes (MET(G): project-forget's sparse oracle)."""
    rng = np.random.default_rng(7)
    n = 40
    pairs = {(i, i + 1) for i in range(n - 1)}
    while len(pairs) < 110:
        i, j = sorted(rng.choice(n, 2, replace=False).tolist())
        pairs.add((i, j))
    lines = [f"{i} {j} {'+1' if rng.random() < 0.6 else '-1'}" for i, j in sorted(pairs)]
    path = tmp_path / "signed40.txt"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(source, kind, method, out, threads=2, params=None, **solver_options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = pipeline.run(source, kind, method=method, problem_params=params,
                               solver_options=dict(threads=threads, seed=0, **solver_options),
                               rounding=dict(seed=0), out=out)
    report = json.loads((out / "report.json").read_text())
    clusters = (out / "clusters.csv").read_bytes()
    return {k: report[k] for k in NUMBERS}, clusters, outcome


def _assert_same(a, b):
    assert a[0] == b[0], {k: (a[0][k], b[0][k]) for k in NUMBERS if a[0][k] != b[0][k]}
    assert a[1] == b[1], "clusters.csv differs"


CASES = {
    # case: (source, kind, problem params, methods)
    "jazz-cc": ("jazz", "cc", None, ("dykstra", "project-forget")),
    "football-cc": ("football", "cc", None, ("dykstra", "project-forget")),
    "signed-cc": ("signed", "cc", dict(weights="signed"),
                  ("project-forget", "highs-lazy", "highs")),
    "karate-cd": ("karate", "cd", None, ("dykstra", "project-forget", "highs-lazy", "highs")),
}


#: (case, method) pairs run only with ``-m slow`` (signed graphs keep project-forget's cc
#: in the default run)
SLOW_CASES = {("jazz-cc", "project-forget"), ("football-cc", "project-forget")}


def _case_params():
    for case, (_, _, _, methods) in CASES.items():
        for method in methods:
            marks = [pytest.mark.slow] if (case, method) in SLOW_CASES else []
            yield pytest.param(case, method, id=f"{case}-{method}", marks=marks)


def _source(case, tmp_path):
    name = CASES[case][0]
    if name == "signed":
        return _signed_file(tmp_path)
    if name == "jazz":
        return _shared_graph("jazz")
    return name


@pytest.mark.parametrize("case, method", list(_case_params()))
def test_two_runs_under_load_agree(tmp_path, cpu_load, case, method):
    source = _source(case, tmp_path)
    _, kind, params, _ = CASES[case]
    first = _run(source, kind, method, tmp_path / "a", params=params)
    second = _run(source, kind, method, tmp_path / "b", params=params)
    _assert_same(first, second)


@pytest.mark.parametrize("case, method", [
    ("football-cc", "dykstra"),
    pytest.param("football-cc", "project-forget", marks=pytest.mark.slow),  # 8 s
    ("signed-cc", "project-forget"), ("karate-cd", "project-forget"),
    pytest.param("jazz-cc", "project-forget", marks=pytest.mark.slow),
])
def test_thread_count_does_not_change_the_answer(tmp_path, case, method):
    source = _source(case, tmp_path)
    _, kind, params, _ = CASES[case]
    one = _run(source, kind, method, tmp_path / "one", threads=1, params=params)
    two = _run(source, kind, method, tmp_path / "two", threads=2, params=params)
    _assert_same(one, two)


def test_project_forget_pass_schedule_counts_work_not_seconds(monkeypatch):
    """Slowing the clock down (a loaded machine) does not change project-forget's passes."""
    problem = build_problem("cc", metricopt.read_graph("football"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = metricopt.solve(problem, method="project-forget", threads=1)
        real = time.perf_counter
        ticks = [0.0]

        def slow_clock():  # every reading 10 ms later than the last: passes look slow
            ticks[0] += 0.01
            return real() + ticks[0]

        monkeypatch.setattr(time, "perf_counter", slow_clock)
        slowed = metricopt.solve(problem, method="project-forget", threads=1)
    assert [r["passes"] for r in slowed.history] == [r["passes"] for r in ref.history]
    assert slowed.fun == ref.fun and slowed.lower_bound == ref.lower_bound


def _hard_problem():
    """Jaccard cc on football at tolerances that take minutes to meet."""
    return build_problem("cc", metricopt.read_graph("football"))


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_time_limit_ends_the_run_at_the_next_iteration(monkeypatch, method):
    """The clock jumps past the limit during iteration 3: the run stops after that
    iteration, and its final certificate stops at its first value (still certified)
    instead of searching on. No wall clock is read by the test."""
    problem = _hard_problem()
    real = time.perf_counter
    jump = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: real() + jump[0])

    def late(rec):
        if rec["iteration"] == 3:
            jump[0] = 3600.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = metricopt.solve(problem, method=method, time_limit=60.0, tol=1e-12,
                              gap_tol=1e-12, polish=False, callback=late)
    assert res.status_name == "limit_reached"
    assert "time limit" in res.message
    assert res.nit == 3
    assert res.bound_details.get("theorem5_stopped"), res.bound_details
    assert res.lower_bound is not None


def test_an_overrun_is_reported_with_its_size():
    res = {"message": "time limit (1.0 s) reached"}
    _note_overrun(res, 1.0, 4.25)
    assert res["time_overrun"] == pytest.approx(3.25)
    assert "ended 3.2 s past the time limit of 1 s" in res["message"]
    quiet = {"message": "m"}
    _note_overrun(quiet, 1.0, 1.5)
    assert quiet["message"] == "m" and quiet["time_overrun"] == pytest.approx(0.5)
    untimed = {"message": "m"}
    _note_overrun(untimed, None, 100.0)
    assert "time_overrun" not in untimed


def test_lp_value_below_the_bound_is_explained():
    from metricopt.cli._render import _below_bound_text
    from metricopt.pipeline._report import _lp_value_below_bound

    assert _lp_value_below_bound(10.0, 9.0, 1e-5) is None
    assert _lp_value_below_bound(None, 9.0, 1e-5) is None
    why = _lp_value_below_bound(9.0, 9.5, 2e-5)
    assert "below the certified lower bound" in why and "violates constraints by up to 2e-05" in why
    assert "round-off" in _lp_value_below_bound(9.0, 9.0 + 1e-5, 0.0)
    # below by round-off (at most 1e-7 relative): no warning
    assert _lp_value_below_bound(9.0, 9.0 + 1e-12, 0.0) is None
    assert _lp_value_below_bound(0.4320557232, 0.4320557458, 5.7e-8) is None
    report = dict(lp_value=9.0, lower_bound=9.5, max_violation=2e-5)
    assert "below the bound" in _below_bound_text(report)
    assert _below_bound_text(dict(lp_value=10.0, lower_bound=9.5, max_violation=0.0)) == ""


def test_a_report_with_lp_value_below_the_bound_says_why():
    """A point within tol of feasibility can score below the certified bound; the
    report's warnings say so next to the numbers."""
    from metricopt.pipeline._report import _build_report

    graph = metricopt.read_graph("karate")
    problem = build_problem("cc", graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = metricopt.solve(problem, method="highs")
    res["fun"] = res["lower_bound"] * (1 - 1e-6)  # as a slightly infeasible x would score
    res["max_violation"] = 3e-5
    outcome = pipeline.RunOutcome(report={}, data=graph, problem=problem, result=res,
                                  rounding=None, out=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = _build_report(outcome, "karate", {}, metricopt.solvers.get_solver("highs"),
                               [], None, {})
    assert any("below the certified lower bound" in w and "3e-05" in w
               for w in report["warnings"]), report["warnings"]


def test_same_command_without_a_seed_gives_the_same_clusters(tmp_path):
    """No seed given: the rounding's seed is 0 (recorded), not fresh entropy, so a second
    run of the same command writes the same clusters.csv."""
    runs = []
    for name in ("a", "b"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipeline.run("karate", "cc", method="highs", out=tmp_path / name)
        report = json.loads((tmp_path / name / "report.json").read_text())
        runs.append((report["rounding"]["seed"], (tmp_path / name / "clusters.csv").read_bytes()))
    assert runs[0][0] == 0
    assert runs[0] == runs[1]
