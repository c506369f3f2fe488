"""The lighttouch backend: its kernels against plain-Python references, its answers
against the exact LP and dykstra, seeds, checkpoints, options and refusals."""

import warnings

import numpy as np
import pytest

import naive_lighttouch as ref
from metricopt import build_problem, read_graph, solve
from metricopt.exceptions import InvalidParameterError, MemoryLimitError, UnsupportedProblemError
from metricopt.problems._pairs import pair_arrays
from metricopt.result import Status
from metricopt.solvers import _lighttouch_kernels as K
from metricopt.solvers._lighttouch_run import _Instance, _state
from metricopt.solvers.lighttouch import solve_lighttouch
from problem_bank import make_graph, make_matrix


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


def _dense_args(n):
    r, c = pair_arrays(n)
    return (0, n, K.pair_base(n), r, c, np.zeros((0, 3), dtype=np.int64),
            np.zeros((0, 2), dtype=np.int64))


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


# ----------------------------------------------------------------------- kernels
def test_rng_matches_xoshiro256starstar():
    state = np.random.SeedSequence(7).generate_state(4, dtype=np.uint64)
    expected, new = ref.rng_stream(state, 20)
    s = state.copy()
    assert [int(K.rng_next(s)) for _ in range(20)] == expected
    assert [int(v) for v in s] == new


@pytest.mark.parametrize("n, gsz", [(3, 1), (6, 1), (7, 4), (8, 5), (9, 36)])
@pytest.mark.parametrize("shift", [0.0, -0.3])
def test_dense_group_violations_match_reference(n, gsz, shift):
    rng = np.random.default_rng(n * gsz)
    npairs = n * (n - 1) // 2
    y = rng.uniform(-1, 2, npairs)
    y[rng.integers(0, npairs, 3)] = 0.0  # ties and zeros
    ngroups = -(-npairs // gsz)
    out = np.empty(ngroups)
    structure, nn, base, r, c, tri, wed = _dense_args(n)
    arg = K.group_violations(y, shift, structure, nn, base, r, c, tri, wed, gsz, npairs,
                             ngroups, out)
    want = ref.group_violations_dense(y + shift, n, gsz)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-12)
    assert out[arg] == out.max()
    # the inequality reported attains the group's violation
    x = y + shift
    for g in range(ngroups):
        val, a, b, cc, checked = K.check_group(g, y, shift, structure, nn, base, r, c, tri,
                                               wed, gsz, npairs)
        assert checked == (min(gsz, npairs - g * gsz)) * (n - 2)
        assert x[a] - x[b] - x[cc] == pytest.approx(val, abs=1e-12)


@pytest.mark.parametrize("gsz", [1, 2, 7])
def test_edge_group_violations_match_reference(karate, gsz):
    p = build_problem("cd", karate)
    rng = np.random.default_rng(gsz)
    y = rng.uniform(0, 1, p.n_variables)
    tri = np.ascontiguousarray(p.triangles, dtype=np.int64)
    wed = np.ascontiguousarray(p.wedges, dtype=np.int64)
    nmem = 3 * len(tri) + len(wed)
    ngroups = -(-nmem // gsz)
    out = np.empty(ngroups)
    z = np.zeros(0, dtype=np.int64)
    K.group_violations(y, 0.0, 1, p.n, np.zeros(p.n, dtype=np.int64), z, z, tri, wed, gsz,
                       nmem, ngroups, out)
    np.testing.assert_allclose(out, ref.group_violations_edges(y, tri, wed, gsz), atol=1e-12)


def test_top_active_keeps_the_largest_rows():
    n, cap, floor = 7, 25, -0.2
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, n * (n - 1) // 2)
    structure, nn, base, r, c, tri, wed = _dense_args(n)
    score, rows = np.empty(cap), np.empty((cap, 3), dtype=np.int64)
    cnt = K.top_active(x, structure, nn, base, r, c, tri, wed, x.size, floor, score, rows)
    want = ref.top_active_dense(x, n, floor, cap)
    assert cnt == len(want)
    got = sorted(zip(score[:cnt].tolist(), map(tuple, rows[:cnt].tolist())), reverse=True)
    assert [g[1] for g in got] == [w[1] for w in want]
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], atol=1e-12)


def _steps_args(inst, s, work, *, full=False, penalty=5.0, eta_w=0.01, eta_p=0.01):
    return (s.y, s.acc, s.last, s.logp, s.cdf, s.mu, s.perm, s.st,
            s.ct, s.rng, work["gbuf"], work["hbuf"], work["mark"], work["touched"],
            work["sel"], inst.structure, inst.n, inst.base, inst.prow, inst.pcol, inst.tri,
            inst.wed, inst.gsz, inst.nmem, inst.ngroups, inst.vsz, inst.objective,
            inst.coef, inst.target, inst.wts, inst.lo, inst.hi, inst.has_sum, penalty,
            eta_w, eta_p, 10.0, inst.strong, full, 8, 0.999, float(inst.vsz), inst.cost_g)


def _work(inst):
    return dict(gbuf=np.zeros(inst.nvar), hbuf=np.zeros(inst.nvar),
                mark=np.zeros(inst.nvar, dtype=np.uint8),
                touched=np.empty(2 * inst.vsz + 40, dtype=np.int64), sel=np.empty(9))


@pytest.mark.parametrize("kind", ["cc", "sc", "cd"])
def test_steps_average_caches_and_distribution(karate, kind):
    """The lazily kept average is the average of the iterates; the cached violations
    of the groups checked for p are their violations at the iterate the step started
    from; p stays a distribution; sparsest cut keeps sum(x) = n."""
    from metricopt.solvers._lighttouch_run import _average

    p = build_problem(kind, karate)
    inst = _Instance(p, 3)
    s = _state(inst, p, seed=1)
    work = _work(inst)
    iterates = []
    viol = np.empty(inst.ngroups)
    for _ in range(40):
        x = s.y + s.st[K.ST["shift"]]
        iterates.append(x.copy())
        K.group_violations(s.y, s.st[K.ST["shift"]], inst.structure, inst.n, inst.base,
                           inst.prow, inst.pcol, inst.tri, inst.wed, inst.gsz, inst.nmem,
                           inst.ngroups, viol)
        K.lt_steps(*_steps_args(inst, s, work), 1, np.inf)
        kp = int(s.ct[K.CT["kp"]])
        checked = s.perm[:kp]
        np.testing.assert_allclose(s.mu[checked], np.maximum(viol[checked], 0.0),
                                   atol=1e-12)
        assert not work["gbuf"].any() and not work["hbuf"].any() and not work["mark"].any()
    np.testing.assert_allclose(_average(inst, s), ref.iterate_average(iterates), atol=1e-12)
    prob = np.exp(s.logp - s.logp.max())
    assert np.all(prob > 0) and np.all(np.isfinite(prob))
    assert s.cdf[-1] == pytest.approx(prob.sum())
    x = s.y + s.st[K.ST["shift"]]
    if kind == "sc":
        assert x.sum() == pytest.approx(p.sum_value)
    else:
        assert x.min() >= inst.lo - 1e-15 and x.max() <= inst.hi + 1e-15


def test_fulltouch_checks_every_group_each_step(karate):
    p = build_problem("cc", karate)
    inst = _Instance(p, None)
    s = _state(inst, p, seed=0)
    K.lt_steps(*_steps_args(inst, s, _work(inst), full=True), 3, np.inf)
    assert s.ct[K.CT["checks"]] == 3 * inst.total_checks
    s = _state(inst, p, seed=0)
    K.lt_steps(*_steps_args(inst, s, _work(inst)), 3, np.inf)
    assert 0 < s.ct[K.CT["checks"]] < inst.total_checks  # the light touch


# ------------------------------------------------------------------ the backend
def _small_cases(karate):
    rng = np.random.default_rng(5)
    a = np.triu(rng.uniform(0, 1, (14, 14)), 1)
    return [("karate-cc", build_problem("cc", karate)),
            ("karate-sc", build_problem("sc", karate)),
            ("random-mn1", build_problem("mn", a + a.T, p=1)),
            ("random-cc", build_problem("cc", make_graph(
                16, [(i, j) for i in range(16) for j in range(i + 1, 16)
                     if rng.uniform() < 0.3])))]


def test_reaches_dykstras_certified_gap_and_never_exceeds_the_exact_optimum(karate):
    for name, p in _small_cases(karate):
        exact = solve(p, method="highs").fun
        lt = _quiet(solve, p, method="lighttouch", max_iter=30)
        dy = _quiet(solve, p, method="dykstra")
        assert dy.status == Status.OPTIMAL, name
        assert lt.status == Status.OPTIMAL, (name, lt.message)
        assert lt.gap <= lt.options["gap_tol"] and lt.max_violation <= lt.options["tol"]
        assert lt.lower_bound <= exact + 1e-9 * max(1.0, abs(exact)), name
        assert abs(lt.fun - exact) <= 1e-4 * max(1.0, abs(exact)), name
        assert len(lt.finish_stage) >= 1


@pytest.mark.slow
def test_football_reaches_the_lp_optimum():
    p = build_problem("cc", read_graph("football"))
    exact = solve(p, method="highs").fun
    lt = _quiet(solve, p, method="lighttouch")
    assert lt.status == Status.OPTIMAL and lt.lower_bound <= exact + 1e-9 * exact
    assert lt.gap <= 1e-4


def test_dense_cc_finishes_with_dykstra_and_cd_with_the_polish(karate, monkeypatch):
    from metricopt.solvers import _lighttouch_run

    p = build_problem("cc", karate)
    exact = solve(p, method="highs").fun
    lt = _quiet(solve, p, method="lighttouch")
    assert lt.finish_stage == ["dykstra"]
    skipped = [e for e in lt.polish if "too far from the LP's active" in e.get("skipped", "")]
    assert len(skipped) == 1
    assert lt.status == Status.OPTIMAL and lt.gap <= lt.options["gap_tol"]
    assert lt.lower_bound <= exact + 1e-9 * exact
    # the polish from the average, where it is asked for, reaches the same LP
    monkeypatch.setattr(_lighttouch_run, "POLISH_DENSE_AVERAGE", True)
    polished = _quiet(solve, p, method="lighttouch")
    assert polished.finish_stage == ["polish"] and polished.status == Status.OPTIMAL
    assert abs(polished.fun - lt.fun) <= 1e-4 * exact
    # cluster deletion (left out of _small_cases: one lighttouch run of it suffices)
    pcd = build_problem("cd", karate)
    exact_cd = solve(pcd, method="highs").fun
    cd = _quiet(solve, pcd, method="lighttouch")
    assert cd.finish_stage == ["polish"] and cd.status == Status.OPTIMAL
    assert cd.gap <= cd.options["gap_tol"] and cd.max_violation <= cd.options["tol"]
    assert cd.lower_bound <= exact_cd + 1e-9 * exact_cd
    assert abs(cd.fun - exact_cd) <= 1e-4 * exact_cd


def test_l2_metric_nearness_finishes_with_dykstra():
    rng = np.random.default_rng(2)
    a = np.triu(rng.uniform(0, 1, (12, 12)), 1)
    p = build_problem("mn", a + a.T, p=2)
    lt = _quiet(solve, p, method="lighttouch", max_iter=10)
    dy = _quiet(solve, p, method="dykstra")
    assert lt.finish_stage == ["dykstra"]
    assert lt.status == Status.OPTIMAL
    np.testing.assert_allclose(lt.x, dy.x)


def test_seeded_runs_are_identical_on_any_thread_count(karate):
    p = build_problem("cc", karate)
    opts = dict(max_iter=6, finish="none", steps=2000)
    a = _quiet(solve_lighttouch, p, seed=3, threads=1, **opts)
    b = _quiet(solve_lighttouch, p, seed=3, threads=2, **opts)
    c = _quiet(solve_lighttouch, p, seed=4, threads=1, **opts)
    assert np.array_equal(a["x"], b["x"])
    strip = [{k: v for k, v in h.items() if k != "seconds"} for h in a["history"]]
    assert strip == [{k: v for k, v in h.items() if k != "seconds"} for h in b["history"]]
    assert not np.array_equal(a["x"], c["x"])


def test_checkpoint_resume_gives_the_uninterrupted_answer(tmp_path, karate):
    p = build_problem("cd", karate)
    opts = dict(steps=500, check_every=2, seed=1)
    whole = _quiet(solve_lighttouch, p, max_iter=10, **opts)
    ck = tmp_path / "lt.npz"
    _quiet(solve_lighttouch, p, max_iter=5, finish="none", checkpoint=str(ck), **opts)
    resumed = _quiet(solve_lighttouch, p, max_iter=10, resume=str(ck), **opts)
    assert np.array_equal(whole["x"], resumed["x"])
    assert whole["average_value"] == resumed["average_value"]
    assert whole["penalty"] == resumed["penalty"]
    assert resumed["history"][0]["iteration"] == 6
    with pytest.raises(InvalidParameterError, match="steps"):
        solve_lighttouch(p, max_iter=10, resume=str(ck), steps=400, check_every=2, seed=1)


def test_history_has_the_sampling_columns(karate):
    p = build_problem("cc", karate)
    res = _quiet(solve_lighttouch, p, max_iter=3, steps=500, finish="none")
    rec = res["history"][-1]
    for key in ("constraints_checked", "k_f", "k_g", "k_p", "p_max", "p_entropy"):
        assert key in rec
    assert rec["k_f"] == 2 and rec["k_g"] >= 2 and rec["k_p"] >= 1
    assert 0 < rec["p_max"] <= 1
    checks = [h["constraints_checked"] for h in res["history"]]
    assert checks == sorted(checks) and checks[0] > 0
    # the raw average is not certified, and says so
    assert res["lower_bound"] is None and res["status"] == Status.LIMIT


def test_refuses_sparse_inputs_and_memory_beyond_the_allowance(karate):
    signed = make_graph(4, [(0, 1), (1, 2), (0, 2), (2, 3)], weights=[1.0, -1.0, 1.0, 1.0])
    p = build_problem("cc", signed, weights="signed")
    with pytest.raises(UnsupportedProblemError, match="project-forget"):
        solve(p, method="lighttouch")
    with pytest.raises(MemoryLimitError):
        solve_lighttouch(build_problem("cc", karate), max_memory=1000)


@pytest.mark.parametrize("bad", [dict(touch="half"), dict(finish="round"), dict(penalty=-1.0),
                                 dict(group_size=0), dict(steps=1.5), dict(eta_w=0.0),
                                 dict(penalty_growth=0.5), dict(seed=-1)])
def test_bad_options_raise(karate, bad):
    with pytest.raises(InvalidParameterError):
        solve_lighttouch(build_problem("cc", karate), **bad)


def test_midtouch_switches_phases_and_resumes_across_the_switch(tmp_path):
    rng = np.random.default_rng(4)
    a = np.triu(rng.uniform(0, 1, (12, 12)), 1)
    p = build_problem("mn", a + a.T, p=2)
    opts = dict(touch="mid", full_rounds=2, steps=2, seed=2, finish="none", check_every=1,
                finish_at=1e-12)
    whole = _quiet(solve_lighttouch, p, max_iter=5, **opts)
    kps = [h["k_p"] for h in whole["history"]]
    assert kps[:2] == [0, 0] and min(kps[2:]) >= 1  # FullTouch, then LightTouch
    ck = tmp_path / "mid.npz"
    _quiet(solve_lighttouch, p, max_iter=2, checkpoint=str(ck), **opts)
    resumed = _quiet(solve_lighttouch, p, max_iter=5, resume=str(ck), **opts)
    assert np.array_equal(whole["x"], resumed["x"])
    done = _quiet(solve, p, method="lighttouch", touch="mid", full_rounds=2, max_iter=5)
    assert done.status == Status.OPTIMAL


def test_cli_resumes_its_own_checkpoint_and_refuses_another_backends(runner, tmp_path):
    from metricopt.cli import cli

    ck, dk = tmp_path / "lt.npz", tmp_path / "dk.npz"
    base = ["solve", "cd", "karate", "--quiet", "--seed", "1", "--option", "steps=300"]
    first = runner.invoke(cli, [*base, "--method", "lighttouch", "--max-iter", "3",
                                "--checkpoint", str(ck)])
    assert first.exit_code == 0, first.output
    again = runner.invoke(cli, [*base, "--method", "lighttouch", "--max-iter", "6", "--resume",
                                str(ck), "--json"])
    assert again.exit_code == 0, again.output
    done = runner.invoke(cli, ["solve", "cd", "karate", "--quiet", "--method", "dykstra",
                               "--max-iter", "3", "--checkpoint", str(dk)])
    assert done.exit_code == 0, done.output
    wrong = runner.invoke(cli, [*base, "--method", "lighttouch", "--resume", str(dk)])
    lines = [line for line in wrong.stderr.splitlines() if line.strip()]
    assert wrong.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: ")


@pytest.mark.parametrize("n", [2, 3])
def test_tiny_instances(n):
    """One group, no or one triangle: the minibatch rules still hold (k_g >= 2)."""
    a = np.ones((n, n)) - np.eye(n)
    a[0, -1] = a[-1, 0] = 5.0
    p = build_problem("mn", a, p=1)
    res = _quiet(solve, p, method="lighttouch", max_iter=3)
    assert res.status == Status.OPTIMAL
    assert res.fun == pytest.approx(solve(p, method="highs").fun, abs=1e-9)


def test_a_round_is_at_most_a_thousand_passes(karate):
    """A tiny problem's round is ROUND_PASSES passes of work, not ROUND_WORK (a 2-node
    problem took millions of steps per round); karate's dense cc keeps ROUND_WORK."""
    from metricopt.solvers import _lighttouch_run as R

    tiny = build_problem("mn", np.array([[0.0, 5.0], [5.0, 0.0]]), p=1)
    inst = R._Instance(tiny, None)
    assert R.round_work(inst) == R.ROUND_PASSES * (inst.total_checks + 2 * inst.nvar
                                                   + inst.ngroups)
    res = _quiet(solve_lighttouch, tiny, max_iter=2, finish="none")
    steps = [r["steps"] for r in res["history"]]
    assert 0 < steps[0] <= R.round_work(inst) and steps[1] - steps[0] <= R.round_work(inst)
    assert R.round_work(R._Instance(build_problem("cc", karate), None)) == R.ROUND_WORK


def test_projection_finish_is_feasible_and_not_certified(karate):
    """LT Alg. 4 line 17: the Euclidean projection of the average, by dykstra."""
    from metricopt.problems._pairs import packed_to_square

    p = build_problem("cc", karate)
    raw = _quiet(solve_lighttouch, p, max_iter=4, steps=500, finish="none", seed=5)
    proj = _quiet(solve_lighttouch, p, max_iter=4, steps=500, finish="project", seed=5)
    assert proj["finish_stage"] == ["projection"]
    assert proj["max_violation"] <= 1e-6 < raw["max_violation"]
    assert proj["lower_bound"] is None and proj["status"] == Status.LIMIT
    # the projection is the l2 metric nearness answer for the average (dykstra directly)
    target = build_problem("mn", make_matrix(packed_to_square(raw["x"], p.n)), p=2)
    direct = _quiet(solve, target, method="dykstra")
    np.testing.assert_allclose(proj["x"], direct.x, atol=1e-9)
    with pytest.raises(InvalidParameterError, match="dense cc and mn"):
        solve_lighttouch(build_problem("sc", karate), finish="project")
