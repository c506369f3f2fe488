"""Dykstra's proximal recentring (:func:`metricopt.solvers._regularised.recentre`): the
centred objective sums, the certificate of the implied iterate, the LP reached, resumes."""

import numpy as np
import pytest

from metricopt.graph import Graph
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.solvers import _dykstra_state as S
from metricopt.solvers import _proximal as P
from metricopt.solvers import _regularised
from metricopt.solvers._constraint_kernels import centred_sums, centred_sums_reference
from metricopt.solvers._dykstra_strategy import _certify_implied
from metricopt.solvers.dykstra import solve_dykstra
from test_dykstra import exact_lp


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    edges = {(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p}
    edges |= {(i, i + 1) for i in range(n - 1)}  # connected
    return Graph(n=n, edges=np.array(sorted(edges)),
                 labels=np.array([str(a) for a in range(n)], dtype=object))


def test_centred_sums_match_the_reference():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=1000) for _ in range(6)]
    arrays[2] = np.abs(arrays[2]) + 0.1  # weights
    np.testing.assert_allclose(centred_sums(*arrays), centred_sums_reference(*arrays),
                               rtol=1e-12)


def test_the_first_recentring_keeps_the_objectives_of_the_qp_at_the_targets(karate):
    """Centred at the targets (shifts 0), the centred objectives are the plain ones."""
    st = S.setup(build_problem("cc", karate), 10.0, None, "diagonal")
    bufs = S.work_buffers(st, "diagonal", 16, False, False)
    bz = S.one_pass(st, "diagonal", 16, bufs)[0]
    plain = _regularised.objectives(st, bz)
    st.shift_x, st.shift_f = np.zeros_like(st.x), np.zeros_like(st.f)
    primal, dual, _ = _regularised.centred_objectives(st, bz)
    assert primal == pytest.approx(plain[0], rel=1e-12)
    assert dual == pytest.approx(plain[1], rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_certificate_of_recentred_duals_never_exceeds_the_lp(seed):
    """After any number of recentrings and passes, the certificate of the implied
    iterate is below the exact LP, and it rises to it."""
    problem = build_problem("cc", _random_graph(14, 0.3, seed))
    lp = exact_lp(problem)
    st = S.setup(problem, 10.0, None, "diagonal")
    bufs = S.work_buffers(st, "diagonal", 16, False, False)
    bounds = []
    for p in range(1, 301):
        S.one_pass(st, "diagonal", 16, bufs)
        if p % 5 == 0:
            if p % 25 == 0:
                lb, _ = _certify_implied(problem, st)
                assert lb <= lp * (1 + 1e-9) + 1e-9
                bounds.append(lb)
            _regularised.recentre(st)
    assert bounds[-1] == pytest.approx(lp, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("weights", ["jaccard", "unit"])
def test_a_proximal_run_reaches_the_lp(weights):
    problem = build_problem("cc", read_graph("lesmis"), weights=weights)
    lp = exact_lp(problem)
    res = solve_dykstra(problem, gap_tol=1e-6, polish=False)
    gammas = [h["gamma"] for h in res["history"]]  # the proximal default, then the late one
    assert gammas[0] == P.DYKSTRA_GAMMA and gammas == sorted(gammas)
    assert set(gammas) <= {P.DYKSTRA_GAMMA, P.DYKSTRA_LATE_GAMMA}
    assert res["status"] == 0, res["message"]
    assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9
    assert res["fun"] >= lp * (1 - 1e-9) - 1e-9
    assert (res["fun"] - res["lower_bound"]) <= 1e-6 * res["lower_bound"]


def test_dykstra_takes_the_longer_proximal_step_near_the_lp(tmp_path):
    """Once a certified gap of at most LATE_GAP is measured, dykstra's default gamma grows
    to DYKSTRA_LATE_GAMMA, once (duals rescaled exactly); the bound stays below the exact
    LP and reaches it; a checkpoint after the switch resumes to the same answer; a given
    gamma stays."""
    problem = build_problem("cc", read_graph("dolphins"))
    lp = exact_lp(problem)
    opts = dict(gap_tol=1e-6, polish=False, check_every=1)
    res = solve_dykstra(problem, **opts)
    gammas = [h["gamma"] for h in res["history"]]
    switch = gammas.index(P.DYKSTRA_LATE_GAMMA)
    assert set(gammas[:switch]) == {P.DYKSTRA_GAMMA}
    assert set(gammas[switch:]) == {P.DYKSTRA_LATE_GAMMA}
    assert res["history"][switch - 1]["gap"] <= P.LATE_GAP
    assert res["status"] == 0, res["message"]
    assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9
    assert res["fun"] - res["lower_bound"] <= 1e-6 * res["lower_bound"]
    path = str(tmp_path / "ck.npz")
    solve_dykstra(problem, max_iter=switch + 3, checkpoint=path, **opts)
    again = solve_dykstra(problem, resume=path, **opts)
    assert again["nit"] == res["nit"]
    np.testing.assert_array_equal(again["x"], res["x"])
    given = solve_dykstra(problem, gamma=P.DYKSTRA_GAMMA, max_iter=switch + 20, **opts)
    assert {h["gamma"] for h in given["history"]} == {P.DYKSTRA_GAMMA}


def test_proximal_options_are_checked(karate):
    with pytest.raises(Exception, match="complete-graph l1"):
        solve_dykstra(build_problem("sc", karate), proximal=5)
    with pytest.raises(Exception, match="extrapolate"):
        solve_dykstra(build_problem("cc", karate), proximal=5, extrapolate=True)
    off = solve_dykstra(build_problem("cc", karate), extrapolate=True, max_iter=3)
    assert off["gamma"] == 1.0  # the gamma-growth stages


def test_a_resumed_proximal_run_ends_where_the_uninterrupted_one_does(tmp_path, karate):
    problem = build_problem("cc", karate)
    opts = dict(gap_tol=1e-8, polish=False)
    ref = solve_dykstra(problem, **opts)
    path = str(tmp_path / "ck.npz")
    part = solve_dykstra(problem, max_iter=7, checkpoint=path, **opts)  # mid-interval
    assert part["nit"] == 7
    again = solve_dykstra(problem, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    np.testing.assert_array_equal(again["x"], ref["x"])
    with pytest.raises(Exception, match="proximal"):
        solve_dykstra(problem, resume=path, proximal=10, **opts)


@pytest.mark.parametrize("layout", ["dense", "support"])
@pytest.mark.parametrize("name", ["lesmis", "dolphins"])
def test_a_proximal_project_forget_run_reaches_the_lp(name, layout):
    """project-forget recentres before every call's passes by default (both layouts);
    its certificate, of the implied iterate, is below the exact LP and reaches it."""
    from metricopt.solvers.project_forget import solve_project_forget

    g = read_graph(name)
    lp = exact_lp(build_problem("cc", g))
    res = solve_project_forget(build_problem("cc", g, layout=layout), gap_tol=1e-6,
                               polish=False, threads=1)
    assert res["status"] == 0, res["message"]
    assert res["gamma"] == P.PF_GAMMA and all(h["gamma"] == P.PF_GAMMA for h in res["history"])
    assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9
    # the contract: within tol (its point may sit below the LP by what tol allows)
    assert res["max_violation"] <= 1e-4 and res["fun"] >= res["lower_bound"]
    assert res["fun"] - res["lower_bound"] <= 1e-6 * res["lower_bound"]


@pytest.mark.parametrize("layout", ["dense"])
def test_project_forget_recentres_within_a_calls_passes(layout, monkeypatch):
    """Every PF_PASSES passes of a call over the remembered triangles (dense layout) the QP
    is recentred too: fewer calls, the same LP, a certificate below it; with PF_PASSES = 0
    only the calls recentre."""
    from metricopt.solvers.project_forget import solve_project_forget

    g = read_graph("dolphins")
    lp = exact_lp(build_problem("cc", g))
    opts = dict(gap_tol=1e-6, polish=False, threads=1)
    inner = solve_project_forget(build_problem("cc", g, layout=layout), **opts)
    monkeypatch.setattr(P, "PF_PASSES", 0)
    calls_only = solve_project_forget(build_problem("cc", g, layout=layout), **opts)
    for res in (inner, calls_only):
        assert res["status"] == 0, res["message"]
        assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9
        assert res["fun"] - res["lower_bound"] <= 1e-6 * res["lower_bound"]
    assert inner["nit"] < calls_only["nit"]


def test_project_forget_refuses_proximal_where_it_does_not_apply(karate):
    from metricopt.solvers.project_forget import solve_project_forget

    with pytest.raises(Exception, match="complete-graph l1"):
        solve_project_forget(build_problem("cd", karate), proximal=1)
    res = solve_project_forget(build_problem("cd", karate), max_iter=2)  # default: off
    assert res["gamma"] == 1.0
