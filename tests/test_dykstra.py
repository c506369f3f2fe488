"""Tests of the ``dykstra`` backend: kernels against the slow reference, LP values against
an exact LP, orders, threads and checkpoint/resume."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import naive_dykstra as naive
from metricopt.exceptions import UnsupportedProblemError
from metricopt.graph import Graph
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.problems._pairs import n_pairs, pair_index
from metricopt.result import Status
from metricopt.solvers import _constraint_kernels as C
from metricopt.solvers import _layouts as L
from metricopt.solvers import _triangle_sparse as S
from metricopt.solvers import get_solver, solve
from metricopt.solvers._triangle_dense import triangle_pass_dense
from metricopt.solvers.dykstra import solve_dykstra


# ------------------------------------------------------------------ kernels vs reference
def _diag_index(n):
    off = L.diagonal_offsets(n)
    return lambda i, j: int(off[j - i] + i)


def _packed_index(n):
    return lambda i, j: int(pair_index(i, j, n))


@pytest.mark.parametrize("order", ["diagonal", "lexicographic", "parallel"])
@pytest.mark.parametrize("n", [3, 5, 9, 23])
def test_triangle_kernel_matches_reference(order, n):
    from metricopt.solvers._dykstra_parallel import triangle_pass_parallel

    rng = np.random.default_rng(n)
    npair = n_pairs(n)
    x0 = rng.choice([0.0, 1.0, 0.5, 3.0], size=npair) + rng.random(npair) * 0.1
    winv = 1.0 / rng.choice([1.0, 1e-3, 1e3, 2.0], size=npair)
    block = 2 if n < 20 else 4
    index = _diag_index(n) if L.LAYOUTS[order] == "diagonal" else _packed_index(n)
    x = x0.copy()
    xr = list(x0)
    duals = {}
    pos = np.empty(0, np.int64)
    val = np.empty(0)
    ppos, pval, pcnt = np.zeros((2, 1), np.int64), np.zeros((2, 1)), np.zeros(2, np.int64)
    for _ in range(4):
        if order == "parallel":
            # tiny scratch rows force the regrow-and-resume path
            ppos, pval, pcnt, _, _ = triangle_pass_parallel(
                x, winv, n, block, ppos, pval, pcnt, np.empty((2, 1), np.int64),
                np.empty((2, 1)))
            c = int(pcnt.sum())
            val = np.concatenate([pval[w, :pcnt[w]] for w in range(2)])
        else:
            p, v, c, _, _ = S.TRIANGLE_KERNELS[order](
                x, winv, n, block, pos, val, np.empty(1, np.int64), np.empty(1))
            pos, val = p[:c].copy(), v[:c].copy()
            assert np.all(np.diff(pos) > 0)
        naive.triangle_pass(xr, winv, n, order, duals, index, block)
        np.testing.assert_allclose(x, xr, rtol=0, atol=1e-12)
        assert c == sum(1 for z in duals.values() if z > 0)
        np.testing.assert_allclose(np.sort(val), np.sort([z for z in duals.values() if z > 0]),
                                   rtol=1e-12, atol=1e-12)


def test_parallel_pass_independent_of_threads():
    import numba

    from metricopt.solvers._dykstra_parallel import triangle_pass_parallel

    n = 40
    rng = np.random.default_rng(5)
    x0 = (rng.random(n_pairs(n)) < 0.2).astype(float)
    winv = 1.0 / rng.uniform(0.5, 2.0, n_pairs(n))
    out = []
    old = numba.get_num_threads()
    for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        numba.set_num_threads(threads)
        try:
            x = x0.copy()
            p, v, c = np.zeros((2, 1), np.int64), np.zeros((2, 1)), np.zeros(2, np.int64)
            for _ in range(3):
                p, v, c, _, _ = triangle_pass_parallel(x, winv, n, 8, p, v, c,
                                                       np.empty((2, 64), np.int64),
                                                       np.empty((2, 64)))
            out.append((x, c, p[0, :c[0]].copy(), v[1, :c[1]].copy()))
        finally:
            numba.set_num_threads(old)
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("flags", [(True, True, True), (False, True, False), (True, False, True)])
def test_pair_and_sum_kernels_match_reference(flags):
    has_f, has_lower, has_upper = flags
    rng = np.random.default_rng(1)
    m = 7
    x = rng.normal(size=m)
    f = rng.normal(size=m)
    winv = 1.0 / rng.uniform(0.01, 10, size=m)
    d = rng.choice([0.0, 1.0], size=m)
    z = np.zeros((4, m))
    xr, fr, zr = list(x), list(f), [[0.0] * m for _ in range(4)]
    for _ in range(3):
        bz, nnz, _, _ = C.pair_pass(x, winv, f, d, z, 0.0, 1.0, has_f, has_lower, has_upper)
        naive.pair_pass(xr, fr, winv, d, zr, 0.0, 1.0, has_f, has_lower, has_upper)
        np.testing.assert_allclose(x, xr, atol=1e-12)
        np.testing.assert_allclose(z, np.array(zr), atol=1e-12)
        assert nnz == int(np.count_nonzero(z))
        assert bz == pytest.approx(float(np.dot(d, z[0] - z[1])) * has_f + z[3].sum() * has_upper)
    zs, zr_s = 0.0, 0.0
    for _ in range(2):
        zs, _, _ = C.sum_step(x, winv, zs, 4.0)
        zr_s = naive.sum_step(xr, winv, zr_s, 4.0)
        np.testing.assert_allclose(x, xr, atol=1e-12)
        assert zs == pytest.approx(zr_s, abs=1e-12)


def test_edge_kernels_match_reference():
    rng = np.random.default_rng(2)
    m = 8
    tri = np.array([[0, 1, 2], [2, 3, 4], [1, 4, 5]], np.int64)
    wed = np.array([[0, 6], [5, 7], [3, 6]], np.int64)
    x = rng.uniform(-1, 2, size=m)
    winv = np.ones(m)
    zt, zw = np.zeros(9), np.zeros(3)
    xr, ztr, zwr = list(x), [0.0] * 9, [0.0] * 3
    for _ in range(3):
        C.edge_triangle_pass(x, winv, tri, zt)
        C.wedge_pass(x, winv, wed, zw)
        naive.edge_pass(xr, winv, tri.tolist(), wed.tolist(), ztr, zwr)
        np.testing.assert_allclose(x, xr, atol=1e-12)
        np.testing.assert_allclose(zt, ztr, atol=1e-12)
        np.testing.assert_allclose(zw, zwr, atol=1e-12)


@pytest.mark.parametrize("n", [3, 4, 9, 23, 40])
def test_dense_duals_and_chunked_passes_match_sparse_kernel(n):
    # the dense-dual kernel (vectorised rows) and a pass cut into parts of 7 rows give the
    # sparse kernel's iterates bit for bit; the dual conversions are inverse to each other
    rng = np.random.default_rng(100 + n)
    npair = n_pairs(n)
    x0 = rng.choice([0.0, 1.0, 0.5, 3.0], size=npair) + rng.random(npair) * 0.1
    winv = 1.0 / rng.choice([1.0, 1e-3, 1e3, 2.0], size=npair)
    block = 4
    xs, xd, xc = x0.copy(), x0.copy(), x0.copy()
    z = np.zeros(3 * (n * (n - 1) * (n - 2) // 6))
    pos, val = np.empty(0, np.int64), np.empty(0)
    cpos, cval = pos, val
    for _ in range(5):
        p, v, c, vmax, _ = S.triangle_pass_diagonal(xs, winv, n, block, pos, val,
                                                    np.empty(1, np.int64), np.empty(1))
        pos, val = p[:c].copy(), v[:c].copy()
        vmax_dense, _, nnz = triangle_pass_dense(xd, winv, n, block, z)
        assert nnz == c
        assert vmax_dense == pytest.approx(vmax, rel=1e-12, abs=1e-15)
        state, acc = np.zeros(6, np.int64), np.zeros(2)
        nb, nv, parts = np.empty(1, np.int64), np.empty(1), 0
        while True:
            nb, nv, done = S.triangle_rows_diagonal(xc, winv, n, block, cpos, cval, nb, nv,
                                                    state, acc, 7)
            parts += 1
            if done:
                break
        assert parts >= (n - 1) * (n - 2) // 2 // 7
        cpos, cval = nb[:state[5]].copy(), nv[:state[5]].copy()
        np.testing.assert_array_equal(xd, xs)
        np.testing.assert_array_equal(xc, xs)
        np.testing.assert_array_equal(cpos, pos)
        rows = L.diagonal_rows(n, block)
        dpos, dval = L.dense_to_sparse_duals(z, rows)
        np.testing.assert_array_equal(dpos, pos)
        np.testing.assert_array_equal(dval, val)
        np.testing.assert_array_equal(L.sparse_to_dense_duals(pos, val, rows), z)


def test_diagonal_pass_change_sum_is_zero_at_a_fixed_point():
    # the diagonal kernel reports the sum of |dz| over the pass (the driver's stall test
    # only compares it with ~0): 0 on a metric without duals, and at least the largest
    # single dual after a pass that creates duals
    n = 30
    winv = np.ones(n_pairs(n))
    empty_p, empty_v = np.empty(0, np.int64), np.empty(0)
    x = np.ones(n_pairs(n))
    p, v, c, vmax, dsum = S.triangle_pass_diagonal(x, winv, n, 4, empty_p, empty_v,
                                                   np.empty(8, np.int64), np.empty(8))
    assert (c, vmax, dsum) == (0, 0.0, 0.0)
    np.testing.assert_array_equal(x, 1.0)
    x = (np.random.default_rng(3).random(n_pairs(n)) < 0.2).astype(float)
    p, v, c, vmax, dsum = S.triangle_pass_diagonal(x, winv, n, 4, empty_p, empty_v,
                                                   np.empty(8, np.int64), np.empty(8))
    assert c > 0 and vmax > 0.0
    assert dsum >= v[:c].max()


def test_packed_to_diagonal_index_is_a_permutation():
    n = 11
    idx = L.packed_to_diagonal_index(n)
    assert sorted(idx.tolist()) == list(range(n_pairs(n)))
    off = L.diagonal_offsets(n)
    i, j = np.triu_indices(n, 1)
    np.testing.assert_array_equal(idx, off[j - i] + i)


# ------------------------------------------------------------------------ exact LPs
def _triangle_rows(n):
    rows, cols, vals = [], [], []
    r = 0
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                a, b, c = (pair_index(i, j, n), pair_index(i, k, n), pair_index(j, k, n))
                for s in ((1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                    rows += [r, r, r]
                    cols += [int(a), int(b), int(c)]
                    vals += list(s)
                    r += 1
    return sp.csr_matrix((vals, (rows, cols)), shape=(r, n_pairs(n)))


def exact_lp(problem):
    """LP optimum by scipy's HiGHS (small instances only)."""
    if problem.structure == "edges":
        m = problem.n_variables
        rows, cols, vals = [], [], []
        r = 0
        for a, b, c in problem.triangles:
            for s in ((1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                rows += [r] * 3
                cols += [a, b, c]
                vals += list(s)
                r += 1
        for a, b in problem.wedges:
            rows += [r, r]
            cols += [a, b]
            vals += [-1, -1]
            r += 1
        A = sp.csr_matrix((vals, (rows, cols)), shape=(r, m))
        ub = np.r_[np.zeros(3 * len(problem.triangles)), -np.ones(len(problem.wedges))]
        res = linprog(problem.cost, A_ub=A, b_ub=ub, bounds=(0, 1), method="highs")
        return res.fun
    n = problem.n
    N = n_pairs(n)
    T = _triangle_rows(n)
    if problem.objective == "linear":
        res = linprog(problem.cost, A_ub=T, b_ub=np.zeros(T.shape[0]), A_eq=np.ones((1, N)),
                      b_eq=[problem.sum_value], bounds=(0, None), method="highs")
        return res.fun
    # l1: variables (x, t), t >= |x - d|
    eye = sp.identity(N, format="csr")
    A = sp.vstack([sp.hstack([T, sp.csr_matrix((T.shape[0], N))]),
                   sp.hstack([eye, -eye]), sp.hstack([-eye, -eye])]).tocsr()
    d = problem.target
    b = np.r_[np.zeros(T.shape[0]), d, -d]
    ub = problem.upper if np.isfinite(problem.upper) else None
    bounds = [(0, ub)] * N + [(0, None)] * N
    res = linprog(np.r_[np.zeros(N), problem.weights], A_ub=A, b_ub=b, bounds=bounds,
                  method="highs")
    return res.fun


@pytest.fixture(scope="module")
def karate():
    return read_graph("karate")


@pytest.mark.parametrize("kind,params,apriori", [
    ("cc", {}, 1.0),           # gamma = 1: LP* <= c'x <= 2 LP*
    ("mn", {"p": 1}, 1.0),
    ("sc", {}, 0.2 + 0.2),     # (1 + lambda n) / (2 gamma), gamma = 5, lambda = 1/n
    ("cd", {}, 0.5),           # 1 / (2 gamma)
])
def test_lp_value_against_exact_lp(karate, kind, params, apriori):
    problem = build_problem(kind, karate, **params)
    res = solve(problem, method="dykstra")
    assert res.status == Status.OPTIMAL
    assert res.max_violation <= 1e-6
    assert res.gap <= 1e-4  # the certified LP gap (the QP need not have converged)
    lp = exact_lp(problem)
    assert res.fun >= lp * (1 - 1e-4) - 1e-6
    assert res.fun <= (1 + apriori) * lp * (1 + 1e-4)
    assert res.fun <= lp * (1 + 1e-4) + 1e-9
    assert res.lower_bound is not None  # every dykstra run certifies a bound
    assert res.lower_bound <= lp * (1 + 1e-9) + 1e-9
    assert res.lp_approx_ratio == pytest.approx(res.fun / res.lower_bound)


def test_large_gamma_reaches_lp_value(karate):
    problem = build_problem("cc", karate, weights="unit")
    res = solve_dykstra(problem, gamma=50.0, max_iter=20000)
    lp = exact_lp(problem)
    assert res["status"] == Status.OPTIMAL
    assert lp * (1 - 1e-4) <= res["fun"] <= lp * (1 + 1 / 50.0)


@pytest.mark.parametrize("kind,params", [("cc", {}), ("cc", {"weights": "unit"}), ("sc", {})])
def test_repaired_point_is_feasible_and_not_below_the_lp(karate, kind, params):
    problem = build_problem(kind, karate, **params)
    # without the LP polish, so that the answer is the repaired projection iterate
    res = solve_dykstra(problem, tol=1e-8, polish=False, proximal=0)
    lp = exact_lp(problem)
    assert res["status"] == Status.OPTIMAL
    # on karate the repair test fires for all three (for unit weights the entrywise
    # rounding of a later gamma stage gets there first)
    assert res["repaired"] or (params and res["rounded_digits"] is not None)
    # exactly feasible: its LP objective can never be below the LP optimum
    assert res["max_violation"] <= 1e-12
    assert res["fun"] >= lp * (1 - 1e-12) - 1e-12
    assert ("repaired" if res["repaired"] else "rounded") in res["message"]
    plain = solve_dykstra(problem, tol=1e-8, repair=False, polish=False, proximal=0)
    assert plain["repaired"] is False
    assert res["nit"] <= plain["nit"]
    assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9


def test_metric_nearness_l2_orders_agree(karate):
    problem = build_problem("mn", karate, p=2)
    a = solve_dykstra(problem, order="diagonal", tol=1e-7, gap_tol=1e-7, round_digits=())
    b = solve_dykstra(problem, order="lexicographic", tol=1e-7, gap_tol=1e-7, round_digits=())
    assert a["status"] == b["status"] == Status.OPTIMAL
    assert np.max(np.abs(a["x"] - b["x"])) < 1e-3
    assert a["fun"] == pytest.approx(a["qp_primal"])
    assert a["qp_dual"] <= a["qp_primal"] + 1e-9


def _random_graph(seed, n=12, p=0.35):
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < p
    # a path keeps the graph connected
    edges = set(zip(i[keep].tolist(), j[keep].tolist())) | {(a, a + 1) for a in range(n - 1)}
    e = np.array(sorted(edges), np.int64)
    return Graph(n=n, edges=e, labels=np.array([str(a) for a in range(n)], dtype=object))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind,params", [("cc", {}), ("sc", {}), ("mn", {"p": 1}), ("cd", {})])
def test_dual_and_lower_bound_below_exact_lp(seed, kind, params):
    g = _random_graph(seed)
    problem = build_problem(kind, g, **params)
    res = solve_dykstra(problem, max_iter=40)   # unconverged iterates too
    lp = exact_lp(problem)
    assert res["lower_bound"] is not None  # certified at any stop
    assert res["lower_bound"] <= lp * (1 + 1e-9) + 1e-9
    # weak duality for the QP: D(y) <= QP* <= QP(x_LP) <= (1 + A) LP*, with A of the
    # gamma of the returned iterate (a continuation stage's when stopped there)
    g = res["gamma"]
    apriori = {"cc": 1 / g, "mn": 1 / g, "sc": (1 + 1) / (2 * g), "cd": 1 / (2 * g)}[kind]
    assert res["qp_dual"] <= (1 + apriori) * lp + 1e-9


# ---------------------------------------------------------------- orders, threads, state
def test_serial_and_parallel_agree(karate):
    problem = build_problem("cc", karate)
    one = solve_dykstra(problem, order="parallel", block=8, threads=1, max_iter=60,
                        round_digits=())
    two = solve_dykstra(problem, order="parallel", block=8, threads=2, max_iter=60,
                        round_digits=())
    np.testing.assert_array_equal(one["x"], two["x"])
    # both run to the violation tolerance (no repair, which stops each at its own point)
    full = solve_dykstra(problem, order="blocked", block=8, threads=2, round_digits=(),
                         repair=False)
    ser = solve_dykstra(problem, order="diagonal", round_digits=(), repair=False)
    assert full["status"] == ser["status"] == Status.OPTIMAL
    assert np.max(np.abs(full["x"] - ser["x"])) < 1e-4


@pytest.mark.parametrize("order", ["diagonal", "lexicographic", "parallel"])
def test_resume_reaches_same_answer(tmp_path, karate, order):
    problem = build_problem("sc", karate)
    ref = solve_dykstra(problem, order=order, block=8, round_digits=())
    path = str(tmp_path / "state.npz")
    with pytest.warns(Warning):
        part = solve_dykstra(problem, order=order, block=8, max_iter=25, checkpoint=path,
                             round_digits=())
    assert part["status"] == Status.LIMIT
    res = solve_dykstra(problem, order=order, block=8, resume=path, round_digits=())
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])


@pytest.mark.parametrize("first,second", [("dense", "sparse"), ("sparse", "dense")])
def test_dense_and_sparse_duals_agree_and_resume_across(tmp_path, karate, first, second):
    problem = build_problem("sc", karate)
    opts = dict(round_digits=(), extrapolate=False)
    ref = solve_dykstra(problem, duals=second, **opts)
    other = solve_dykstra(problem, duals=first, **opts)
    assert other["nit"] == ref["nit"]
    np.testing.assert_array_equal(other["x"], ref["x"])
    path = str(tmp_path / "state.npz")
    with pytest.warns(Warning):
        solve_dykstra(problem, duals=first, max_iter=25, checkpoint=path, **opts)
    res = solve_dykstra(problem, duals=second, resume=path, **opts)
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])


@pytest.mark.parametrize("kind,params", [("sc", {}), ("cc", {}), ("mn", {"p": 2})])
def test_extrapolation_keeps_the_answer_and_saves_passes(karate, kind, params):
    problem = build_problem(kind, karate, **params)
    tol = 1e-8 if kind == "sc" else 1e-6
    # the passes of the QP alone (the polish would end either run early)
    opts = dict(tol=tol, round_digits=(), continuation=False, polish=False, proximal=0)
    plain = solve_dykstra(problem, extrapolate=False, **opts)
    fast = solve_dykstra(problem, extrapolate=True, **opts)
    assert plain["status"] == fast["status"] == Status.OPTIMAL
    assert fast["max_violation"] <= tol
    assert abs(fast["fun"] - plain["fun"]) <= 3e-4 * max(1.0, abs(plain["fun"]))
    assert fast["nit"] <= plain["nit"]
    # every recorded dual value is a true dual value: never above the primal optimum of
    # its own QP (the records of the final gamma stage)
    last = [h["dual"] for h in fast["history"] if h["gamma"] == fast["gamma"]]
    assert max(last) <= fast["qp_primal"] + 1e-9 * abs(fast["qp_primal"]) + 1e-12


def test_continuation_reaches_the_same_lp_in_fewer_passes(karate):
    problem = build_problem("sc", karate)
    plain = solve_dykstra(problem, continuation=False, tol=1e-8)
    warm = solve_dykstra(problem, tol=1e-8)   # on by default for sparsest cut
    assert plain["status"] == warm["status"] == Status.OPTIMAL
    assert warm["gammas"] == pytest.approx([0.1, 1.0, 5.0]) and warm["gamma"] == 5.0
    stages = [h["gamma"] for h in warm["history"]]
    assert stages[0] == pytest.approx(0.1) and stages == sorted(stages)
    assert warm["nit"] < plain["nit"]
    assert abs(warm["fun"] - plain["fun"]) <= 2e-4 * plain["fun"]
    assert warm["lower_bound"] <= exact_lp(problem) * (1 + 1e-9)
    assert warm["lower_bound"] == pytest.approx(plain["lower_bound"], rel=2e-4)


@pytest.mark.parametrize("duals", ["dense", "sparse"])
def test_continuation_keeps_the_dykstra_invariant(tmp_path, monkeypatch, duals):
    # after a stage change (and a few passes more) x is still x0 - W^-1 A'z for the
    # stage's gamma, with A written out constraint by constraint
    from metricopt import _config
    from metricopt.solvers._checkpoint import problem_digest, read_checkpoint
    from metricopt.solvers._dykstra_state import setup as _setup

    n = 12
    problem = build_problem("sc", _random_graph(3, n=n))
    monkeypatch.setattr(_config, "DYKSTRA_CONTINUATION_PASSES", 6)
    path = str(tmp_path / "state.npz")
    for stop in (3, 9):
        with pytest.warns(Warning):
            solve_dykstra(problem, continuation=[0.1], duals=duals, max_iter=stop,
                          checkpoint=path, block=4)
        st0 = _setup(problem, None, None)
        meta, data = read_checkpoint(path, backend="dykstra", problem=problem,
                                     digest=problem_digest(problem))
        x, zp, zs = data["x"], data["z_pair"], float(data["z_sum"])
        if duals == "dense":
            pos, val = L.dense_to_sparse_duals(data["z_dense"], L.diagonal_rows(n, 4))
        else:
            pos, val = data["tri_pos"], data["tri_val"]
        stage = int(meta["stage"])
        assert stop == 3 or stage == 1
        gamma = (0.5, 5.0)[stage]
        index = _diag_index(n)
        trip = list(naive.triplets(n, "diagonal", 4))
        atz = zp[0] - zp[1] - zp[2] + zp[3] + zs
        signs = ((1, -1, -1), (-1, 1, -1), (-1, -1, 1))
        for p, z in zip(pos.tolist(), val.tolist()):
            i, j, k = trip[p // 3]
            for pair, sign in zip((index(i, j), index(i, k), index(j, k)), signs[p % 3]):
                atz[pair] += sign * z
        x_expected = st0.x * (gamma / 5.0) - st0.winv * atz
        np.testing.assert_allclose(x, x_expected, rtol=0, atol=1e-12 * np.abs(x).max())


def test_resume_with_extrapolation_is_exact(tmp_path, karate):
    problem = build_problem("sc", karate)
    ref = solve_dykstra(problem, extrapolate=True, round_digits=())
    path = str(tmp_path / "state.npz")
    with pytest.warns(Warning):
        solve_dykstra(problem, extrapolate=True, max_iter=23, checkpoint=path, round_digits=())
    res = solve_dykstra(problem, extrapolate=True, resume=path, round_digits=())
    assert res["nit"] == ref["nit"]
    np.testing.assert_array_equal(res["x"], ref["x"])


def test_interleaved_sum_steps_converge_to_the_same_lp(karate):
    problem = build_problem("sc", karate)
    a = solve_dykstra(problem, interleave=1, tol=1e-8, round_digits=())
    b = solve_dykstra(problem, interleave=64, tol=1e-8, round_digits=())
    assert a["status"] == b["status"] == Status.OPTIMAL
    assert abs(a["fun"] - b["fun"]) <= 2e-4 * abs(a["fun"])
    assert b["nit"] < a["nit"]


def test_keyboard_interrupt_writes_checkpoint(tmp_path, karate):
    problem = build_problem("cc", karate)
    path = str(tmp_path / "ck.npz")

    def cb(rec):
        if rec["iteration"] == 5:
            raise KeyboardInterrupt

    res = solve_dykstra(problem, checkpoint=path, callback=cb)
    assert res["status"] == Status.INTERRUPTED and res["nit"] == 5
    ref = solve_dykstra(problem)
    again = solve_dykstra(problem, resume=path)
    np.testing.assert_array_equal(again["x"], ref["x"])


@pytest.mark.parametrize("kind,duals", [("sc", "dense"), ("sc", "sparse"), ("cc", "sparse")])
def test_ctrl_c_inside_a_pass_leaves_a_consistent_checkpoint(tmp_path, monkeypatch, karate,
                                                            kind, duals, sigint_raises):
    # SIGINT arrives in the middle of pass 7 (between two parts of the triangle pass for
    # sparsest cut); the pass finishes, then the run stops, and its checkpoint resumes
    # to the uninterrupted answer
    import signal

    import metricopt.solvers._dykstra_state as D

    problem = build_problem(kind, karate)
    opts = dict(duals=duals, round_digits=())
    ref = solve_dykstra(problem, **opts)
    real = D.one_pass
    calls = []

    def one_pass(st, *args, **kwargs):
        calls.append(1)
        if len(calls) == 7:
            signal.raise_signal(signal.SIGINT)
        return real(st, *args, **kwargs)

    monkeypatch.setattr(D, "one_pass", one_pass)
    path = str(tmp_path / "ck.npz")
    res = solve_dykstra(problem, checkpoint=path, **opts)
    assert res["status"] == Status.INTERRUPTED and res["nit"] == 7
    monkeypatch.setattr(D, "one_pass", real)
    again = solve_dykstra(problem, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    np.testing.assert_array_equal(again["x"], ref["x"])


def test_history_and_callback(karate):
    problem = build_problem("sc", karate)
    seen = []
    res = solve(problem, method="dykstra", callback=seen.append, max_iter=30)
    assert len(seen) == len(res.history) == res.nit
    keys = {"iteration", "seconds", "primal", "dual", "gap", "max_violation", "full_check",
            "active_constraints", "memory_bytes"}
    assert keys <= set(seen[0])
    assert seen[-1]["active_constraints"] > 0 and seen[-1]["memory_bytes"] > 0
    # coordinate ascent: the dual never decreases within one continuation stage
    pairs = zip(res.history, res.history[1:])
    assert all(b["dual"] >= a["dual"] - 1e-9 * abs(a["dual"]) for a, b in pairs
               if a["gamma"] == b["gamma"])


def test_sparse_problems_are_refused():
    g = Graph(n=4, edges=np.array([[0, 1], [1, 2], [2, 3], [0, 3]]),
              labels=np.array(list("abcd"), dtype=object), weights=np.array([1.0, -1.0, 1, 1]))
    problem = build_problem("cc", g)
    ok, why = get_solver("dykstra").supports(problem)
    assert not ok and "project-forget" in why
    with pytest.raises(UnsupportedProblemError):
        solve(problem, method="dykstra")


def test_bad_option_raises(karate):
    problem = build_problem("sc", karate)
    with pytest.raises(Exception, match="duals"):
        solve_dykstra(problem, duals="packed")
    with pytest.raises(Exception, match="interleave"):
        solve_dykstra(problem, interleave=0)
    with pytest.raises(Exception, match="order='diagonal'"):
        solve_dykstra(problem, duals="dense", order="lexicographic")
    with pytest.raises(Exception, match="extrapolate"):
        solve_dykstra(problem, duals="sparse", extrapolate=True)
    with pytest.raises(Exception, match="extrapolate"):
        solve_dykstra(problem, extrapolate="yes")
    for bad in ("yes", [0.5, 0.2], [0.1, 1.0], [0.0]):
        with pytest.raises(Exception, match="continuation"):
            solve_dykstra(problem, continuation=bad)
    with pytest.raises(Exception, match="continuation"):
        solve_dykstra(build_problem("mn", karate, p=2), continuation=True)


def test_bad_option_raises_generic(karate):
    problem = build_problem("sc", karate)
    with pytest.raises(ValueError):
        solve_dykstra(problem, order="random")
    with pytest.raises(ValueError):
        solve_dykstra(problem, tol=-1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lesmis", "dolphins"])
def test_cc_bundled_graphs(name):
    problem = build_problem("cc", read_graph(name))
    res = solve_dykstra(problem)
    assert res["status"] == Status.OPTIMAL
    lp = exact_lp(problem)
    assert lp * (1 - 1e-4) <= res["fun"] <= 2 * lp


def test_parallel_order_reproduces_lexicographic(karate):
    # every two triplets that share a pair keep their lexicographic relative order in the
    # block schedule, so the iterates are the same
    problem = build_problem("sc", karate)
    a = solve_dykstra(problem, order="parallel", block=8, max_iter=20, round_digits=())
    b = solve_dykstra(problem, order="lexicographic", max_iter=20, round_digits=())
    np.testing.assert_array_equal(a["x"], b["x"])


def test_pair_pass_holds_an_active_bound_exactly():
    """A bound whose dual stays positive holds x at the bound itself, not at a rounded
    neighbour (the support scans rely on exact plateaus)."""
    rng = np.random.default_rng(3)
    m = 1000
    winv = 1.0 / rng.uniform(0.01, 10, size=m)
    for row, lower, upper in ((2, True, False), (3, False, True)):
        x = rng.uniform(-3.0, 4.0, size=m)
        z = np.zeros((4, m))
        z[row] = rng.uniform(0.0, 50.0, size=m)  # large duals: the plain step rounds
        C.pair_pass(x, winv, x, x, z, 0.0, 1.0, False, lower, upper)
        assert z[row].any() and np.all(x[z[row] > 0] == (1.0 if upper else 0.0))
