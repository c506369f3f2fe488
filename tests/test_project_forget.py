"""Tests of the Project and Forget backend (``method="project-forget"``).

Exact references are LPs solved by HiGHS through scipy with the metric constraints
added lazily (cycle inequalities by ``problems._cycles.violated_cycles``, triangles by a
dense scan), so the tests need neither the ``highs`` backends nor large memory.
"""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import metricopt
from metricopt.exceptions import MemoryLimitError
from metricopt.problems._base import MetricProblem
from metricopt.problems._cycles import edge_csr, max_cycle_violation, violated_cycles
from metricopt.problems._pairs import pair_index
from metricopt.result import Status
from metricopt.solvers import _pf_kernels as K
from metricopt.solvers import _pf_list as DL
from metricopt.solvers import _pf_scan as D
from metricopt.solvers.project_forget import solve_project_forget

HISTORY_KEYS = {"iteration", "seconds", "primal", "dual", "gap", "max_violation", "full_check",
                "active_constraints", "memory_bytes", "constraints_found", "remembered",
                "oracle_seconds", "passes"}


# ----------------------------------------------------------------- instances
def signed_problem(seed, n=16, p=0.3, zero_frac=0.15):
    """Correlation clustering on a random signed graph (MET(G)); some weights are 0."""
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    mask = rng.random(iu[0].shape[0]) < p
    pairs = np.stack([iu[0][mask], iu[1][mask]], 1).astype(np.int64)
    m = pairs.shape[0]
    sw = rng.choice([-1.0, 1.0], m) * rng.uniform(0.1, 1.0, m)
    sw[rng.random(m) < zero_frac] = 0.0
    return MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object), structure="sparse",
                         objective="l1", weights=np.abs(sw), target=(sw < 0).astype(float),
                         lower=0.0, upper=1.0, pairs=pairs)


def weighted_mn_problem(seed, p_norm, n=14, p=0.35):
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    mask = rng.random(iu[0].shape[0]) < p
    pairs = np.stack([iu[0][mask], iu[1][mask]], 1).astype(np.int64)
    m = pairs.shape[0]
    return MetricProblem(kind="mn", n=n, labels=np.arange(n).astype(object), structure="sparse",
                         objective="l1" if p_norm == 1 else "l2", weights=np.ones(m),
                         target=rng.uniform(0.0, 3.0, m), lower=0.0, upper=np.inf, pairs=pairs)


def _lp_l1(problem, metric_rows):
    """min sum w t, t >= |x - d|, bounds, the given metric rows (on x): (value, x)."""
    m = problem.n_variables
    w, d = problem.weights, problem.target
    eye = sp.identity(m, format="csr")
    rows = [sp.hstack([eye, -eye]), sp.hstack([-eye, -eye])]
    rhs = [d, -d]
    if metric_rows is not None and metric_rows[0].shape[0]:
        a, b = metric_rows
        rows.append(sp.hstack([a, sp.csr_matrix((a.shape[0], m))]))
        rhs.append(b)
    hi = problem.upper if np.isfinite(problem.upper) else None
    res = linprog(np.concatenate([np.zeros(m), w]), A_ub=sp.vstack(rows, format="csr"),
                  b_ub=np.concatenate(rhs), bounds=[(problem.lower, hi)] * m + [(0, None)] * m,
                  method="highs")
    assert res.status == 0
    return res.fun, res.x[:m]


def exact_sparse_lp(problem):
    """The MET(G) l1 LP, cycle inequalities separated lazily (exact)."""
    m = problem.n_variables
    blocks = []
    for _ in range(500):
        a = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, m))
        val, x = _lp_l1(problem, (a, np.zeros(a.shape[0])))
        off, mem, viol = violated_cycles(x, problem.n, problem.pairs, tol=1e-9)
        if viol.shape[0] == 0:
            return val
        r, c, v = [], [], []
        for k in range(viol.shape[0]):
            ids = mem[off[k]:off[k + 1]]
            r += [k] * ids.shape[0]
            c += list(ids)
            v += [1.0] + [-1.0] * (ids.shape[0] - 1)
        blocks.append(sp.csr_matrix((v, (r, c)), shape=(viol.shape[0], m)))
    raise AssertionError("lazy reference did not converge")


def _triangle_rows(n, nvar):
    """All 3 C(n, 3) triangle inequalities of K_n on packed pairs (rows ``a'x <= 0``)."""
    i, j, k = (a.ravel() for a in np.meshgrid(*(np.arange(n),) * 3, indexing="ij"))
    keep = (i < j) & (j < k)
    i, j, k = i[keep], j[keep], k[keep]
    ij, ik, jk = pair_index(i, j, n), pair_index(i, k, n), pair_index(j, k, n)
    t = ij.shape[0]
    rows, cols, vals = [], [], []
    for s, (a, b, c) in enumerate(((ij, ik, jk), (ik, ij, jk), (jk, ij, ik))):
        r = np.arange(t) + s * t
        rows += [r, r, r]
        cols += [a, b, c]
        vals += [np.ones(t), -np.ones(t), -np.ones(t)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(3 * t, nvar))


def exact_dense_lp(problem):
    """Dense l1 LP on K_n with all triangle inequalities."""
    a = _triangle_rows(problem.n, problem.n_variables)
    return _lp_l1(problem, (a, np.zeros(a.shape[0])))[0]


def exact_sc_lp(problem):
    """Leighton-Rao sparsest-cut LP on K_n: min c'x, triangles, x >= 0, sum x = n."""
    m = problem.n_variables
    a = _triangle_rows(problem.n, m)
    res = linprog(problem.cost, A_ub=a, b_ub=np.zeros(a.shape[0]), A_eq=np.ones((1, m)),
                  b_eq=[problem.sum_value], bounds=[(0, None)] * m, method="highs")
    assert res.status == 0
    return res.fun


def exact_cd_lp(problem):
    m = problem.n_variables
    tri = problem.triangles.reshape(-1, 3)
    wed = problem.wedges.reshape(-1, 2)
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for a, b, c in tri:
        for p, q, s in ((a, b, c), (b, a, c), (c, a, b)):
            rows += [r, r, r]
            cols += [p, q, s]
            vals += [1.0, -1.0, -1.0]
            rhs.append(0.0)
            r += 1
    for a, b in wed:
        rows += [r, r]
        cols += [a, b]
        vals += [-1.0, -1.0]
        rhs.append(-1.0)
        r += 1
    a = sp.csr_matrix((vals, (rows, cols)), shape=(r, m))
    res = linprog(np.ones(m), A_ub=a, b_ub=np.array(rhs), bounds=[(0, 1)] * m, method="highs")
    assert res.status == 0
    return res.fun


# ------------------------------------------------------------ naive references
def naive_project(x, winv, cons, z):
    """Hildreth pass over a list of (ids, kind) constraints, in Python."""
    x = x.copy()
    z = z.copy()
    for c, (ids, kind) in enumerate(cons):
        coef = np.full(len(ids), -1.0)
        b = 0.0
        if kind == 0:
            coef[0] = 1.0
        else:
            b = -1.0
        v = float(coef @ x[ids]) - b
        zn = max(0.0, z[c] + v / float(winv[ids].sum()))
        x[ids] -= (zn - z[c]) * coef * winv[ids]
        z[c] = zn
    return x, z


def flat(cons):
    off = np.zeros(len(cons) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(ids) for ids, _ in cons])
    mem = np.concatenate([np.asarray(ids, dtype=np.int64) for ids, _ in cons])
    kind = np.array([k for _, k in cons], dtype=np.uint8)
    return off, mem, kind


# ------------------------------------------------------------------- kernels
def test_project_active_matches_naive():
    rng = np.random.default_rng(1)
    x = rng.normal(size=7)
    winv = rng.uniform(0.2, 3.0, 7)
    cons = [([0, 1, 2], 0), ([3, 4], 1), ([2, 0, 5, 6], 0), ([1, 6], 1), ([0, 1, 2], 0)]
    z = np.array([0.0, 0.3, 0.0, 0.0, 0.5])
    off, mem, kind = flat(cons)
    xk, zk = x.copy(), z.copy()
    K.project_active(xk, winv, off, mem, kind, zk, len(cons))
    xr, zr = naive_project(x, winv, cons, z)
    np.testing.assert_allclose(xk, xr, atol=1e-12)
    np.testing.assert_allclose(zk, zr, atol=1e-12)


def test_forget_keeps_order():
    cons = [([0, 1, 2], 0), ([3, 4], 1), ([5, 6, 7, 8], 0), ([9, 10], 1)]
    off, mem, kind = flat(cons)
    z = np.array([0.0, 1.0, 0.0, 2.0])
    nc, nm = K.forget_inactive(off, mem, kind, z, 4)
    assert (nc, nm) == (2, 4)
    np.testing.assert_array_equal(off[:3], [0, 2, 4])
    np.testing.assert_array_equal(mem[:4], [3, 4, 9, 10])
    np.testing.assert_array_equal(z[:2], [1.0, 2.0])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threads", [1, 3])
def test_cycle_oracle_matches_reference(seed, threads):
    """The bounded bidirectional searches find, for every edge, the violation that a full
    Dijkstra from every node finds, with a cycle that has it."""
    from metricopt.problems._cycles import collect_cycles, violated_cycles_reference

    prob = signed_problem(seed, n=18, p=0.3)
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, prob.n_variables)
    x[rng.random(x.shape[0]) < 0.2] = 0.0  # zero lengths must count
    indptr, nbrs, eids = edge_csr(prob.n, prob.pairs)
    edges = np.arange(prob.pairs.shape[0], dtype=np.int64)
    # cap 2: tiny rows, exercises the resume-after-full path
    off, mem, viol, worst, cap, _ = collect_cycles(indptr, nbrs, eids, prob.pairs, x, edges,
                                                   1e-12, threads, 2)
    ro, rm, rv, rworst = violated_cycles_reference(x, prob.n, prob.pairs, tol=1e-12)
    assert cap > 2
    assert worst == pytest.approx(rworst, abs=1e-12)
    assert worst == pytest.approx(max_cycle_violation(x, prob.n, prob.pairs), abs=1e-12)
    got = {}
    for c in range(viol.shape[0]):
        ids = mem[off[c]:off[c + 1]]
        # a cycle: the edge's value minus its path's sum is the reported violation
        assert x[ids[0]] - x[ids[1:]].sum() == pytest.approx(viol[c], abs=1e-12)
        ends = np.bincount(prob.pairs[ids].ravel(), minlength=prob.n)
        assert set(ends[ends > 0]) == {2}
        got[ids[0]] = viol[c]
    ref = {rm[ro[c]]: rv[c] for c in range(rv.shape[0])}
    assert got.keys() == ref.keys()
    for e in ref:
        assert got[e] == pytest.approx(ref[e], abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_violated_cycles_and_max_violation_match_the_full_dijkstra(seed):
    """On sparser random graphs with many zero lengths and some negative values."""
    from metricopt.problems._cycles import violated_cycles_reference

    prob = signed_problem(seed + 10, n=40, p=0.12)
    rng = np.random.default_rng(seed)
    x = rng.choice([0.0, 0.25, 0.5, 1.0], prob.n_variables) + rng.normal(0, 1e-3, prob.n_variables)
    x[rng.random(x.shape[0]) < 0.05] = -0.1  # counted as length 0
    off, mem, viol = violated_cycles(x, prob.n, prob.pairs, tol=1e-9)
    ro, rm, rv, rworst = violated_cycles_reference(x, prob.n, prob.pairs, tol=1e-9)
    assert rv.shape[0] > 0
    np.testing.assert_array_equal(np.sort(mem[off[:-1]]), np.sort(rm[ro[:-1]]))
    np.testing.assert_allclose(np.sort(viol), np.sort(rv), atol=1e-12)
    assert max_cycle_violation(x, prob.n, prob.pairs, threads=2) == pytest.approx(rworst,
                                                                                 abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("accept", [0.25, 0.5])
def test_first_short_path_mode_finds_violated_cycles_of_the_same_edges(seed, accept):
    """With ``accept > 0`` a search stops at the first path of length at most
    ``accept * x_e``: the same edges get a cycle as in the exact separation, each cycle
    is violated by what it reports and either that much or a shortest path's violation,
    and the largest violation found is a lower bound of the exact one."""
    from metricopt.problems._cycles import collect_cycles

    prob = signed_problem(seed + 20, n=40, p=0.15)
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, prob.n_variables) ** 3  # many short edges: long paths
    indptr, nbrs, eids = edge_csr(prob.n, prob.pairs)
    edges = np.arange(prob.pairs.shape[0], dtype=np.int64)
    eo, em, ev, ew, _, _ = collect_cycles(indptr, nbrs, eids, prob.pairs, x, edges, 1e-9, 2, 64)
    fo, fm, fv, fw, _, _ = collect_cycles(indptr, nbrs, eids, prob.pairs, x, edges, 1e-9, 2, 64,
                                          accept=accept)
    exact = dict(zip(em[eo[:-1]], ev))
    assert len(exact) > 10
    assert sorted(fm[fo[:-1]]) == sorted(exact)
    for c in range(fv.shape[0]):
        ids = fm[fo[c]:fo[c + 1]]
        path = x[ids[1:]].sum()
        assert x[ids[0]] - path == pytest.approx(fv[c], abs=1e-12)
        assert path <= accept * x[ids[0]] + 1e-12 or fv[c] == pytest.approx(exact[ids[0]],
                                                                             abs=1e-12)
        assert fv[c] <= exact[ids[0]] + 1e-12
    assert fw <= ew + 1e-15 and ew == pytest.approx(max_cycle_violation(x, prob.n, prob.pairs))


def test_cycle_oracle_schedule_triangles_first_then_paths():
    """The sparse oracle answers with triangles while one is violated by more than tol
    (at most MAX_STREAK calls in a row), then with path searches, exact (a full check)
    once the last search found no violation above EXACT_BELOW * tol."""
    from metricopt.solvers._pf_oracles import CycleOracle as _CycleOracle

    prob = signed_problem(5, n=30, p=0.3)
    oracle = _CycleOracle(prob, 2, 1e-6, 1e-3)
    assert oracle.triangles.shape[0] > 0
    x = np.asarray(prob.target, dtype=float)  # negative edges 1, positive 0
    off, mem, kind, worst, full = oracle(x)
    assert not full and worst == pytest.approx(1.0) and oracle.streak == 1
    assert all(off[c + 1] - off[c] == 3 for c in range(off.shape[0] - 1))
    oracle.streak = _CycleOracle.MAX_STREAK  # the streak is over: paths, not exact yet
    off, mem, kind, worst, full = oracle(x)
    assert not full and oracle.streak == 0 and oracle.last_worst == worst
    # a point in MET(G): the triangles hold, the last search found nothing -> exact
    y = np.full(prob.n_variables, 0.5)
    oracle.last_worst = 0.0
    off, mem, kind, worst, full = oracle(y)
    assert full and worst == 0.0 and off.shape[0] == 1


@pytest.mark.parametrize("accept", [0.0, 0.25])
def test_search_in_parts_finds_the_cycles_of_one_search(monkeypatch, accept):
    """The path search run in parts of a few edges gives the one call's cycles (in the
    canonical order) and worst; a stop after the first part ends it there."""
    from metricopt.solvers import _cycle_search as CS

    prob = signed_problem(11, n=40, p=0.25)
    graph = CS.CycleGraph.from_problem(prob)
    x = np.random.default_rng(3).random(prob.n_variables)
    one = CS.search_cycles(graph, x, graph.edges, 1e-6, 2, 8, accept=accept)
    monkeypatch.setattr(CS, "MIN_PART_EDGES", 7)
    parts = []
    real = CS.search_cycles

    def counted(*args, **kwargs):
        parts.append(args[2].shape[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(CS, "search_cycles", counted)
    off, mem, worst, _, _, complete = CS.search_cycles_until(graph, x, 1e-6, 2, 8,
                                                             accept=accept)
    assert complete and len(parts) == -(-graph.edges.shape[0] // 7) > 10
    a, b = CS.canonical_cycles(*one[:2]), CS.canonical_cycles(off, mem)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert worst == one[2]
    parts.clear()
    *_, complete = CS.search_cycles_until(graph, x, 1e-6, 2, 8, accept=accept,
                                          stop=lambda: True)
    assert not complete and parts == [7]


def test_stopped_path_search_drops_the_oracle_call(monkeypatch):
    """A stop between two parts of the path search gives None and leaves the schedule's
    state; a search of one part is never stopped."""
    from metricopt.solvers import _cycle_search as CS
    from metricopt.solvers._pf_oracles import CycleOracle as _CycleOracle

    prob = signed_problem(5, n=30, p=0.3)
    oracle = _CycleOracle(prob, 2, 1e-6, 1e-3)
    x = np.asarray(prob.target, dtype=float)
    oracle.streak, oracle.last_worst = _CycleOracle.MAX_STREAK, 0.5
    assert oracle(x, stop=lambda: True) is not None and oracle.last_worst != 0.5
    monkeypatch.setattr(CS, "MIN_PART_EDGES", 5)
    oracle.streak, oracle.last_worst = _CycleOracle.MAX_STREAK, 0.5
    assert oracle(x, stop=lambda: True) is None
    assert oracle.last_worst == 0.5


def _diag_triplets(n, block):
    """The visiting order of the dense kernels, in Python: (a, b, c) diagonal positions."""
    off = D.diagonal_offsets(n)
    out = []
    for sb in range(1, n - 1, block):
        for s2 in range(1, n - 1):
            for s1 in range(sb, min(sb + block, n - s2)):
                for q in range(n - s1 - s2):
                    out.append((off[s1] + q, off[s1 + s2] + q, off[s2] + s1 + q))
    return out


def _detect(x, n, block, add_tol, threads, cap=None, chunk=D.CHUNK):
    row_sb, row_s2, starts = D.scan_rows(n, block, threads)
    lo, hi = D.chunk_extremes(x, n, max(chunk, 1))
    cap = 3 * block * n + 8 if cap is None else cap
    pos = starts[:-1].copy()
    count = np.zeros(threads, np.int64)
    worst = np.zeros(threads)
    outs = [np.empty((threads, cap), np.int32) for _ in range(3)]
    while True:
        D.dense_detect(x, D.diagonal_offsets(n), n, block, add_tol, row_sb, row_s2, starts, pos,
                       *outs, count, worst, lo, hi, chunk)
        if np.all(pos >= starts[1:]):
            break
        cap *= 2
        new = [np.zeros((threads, cap), np.int32) for _ in range(3)]
        for a, b in zip(new, outs):
            a[:, :b.shape[1]] = b
        outs = new
    found = [np.concatenate([o[t, :count[t]] for t in range(threads)]) for o in outs]
    return found, float(worst.max())


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("chunk", [0, 3, D.CHUNK])
def test_dense_detect_matches_brute_force(threads, chunk):
    n, block = 11, 4
    rng = np.random.default_rng(3)
    m = n * (n - 1) // 2
    x = rng.choice([0.0, 1.0], m) + rng.normal(0, 0.1, m)
    listed = set(map(tuple, _diag_triplets(n, block)))
    assert sorted(map(tuple, _diag_triplets(n, block))) == sorted(
        (a, b, c) for a in range(m) for b in range(m) for c in range(m)
        if (a, b, c) in listed)  # each triplet once
    ref, worst = [], 0.0
    for a, b, c in _diag_triplets(n, block):
        for side, (e, r1, r2) in enumerate(((a, b, c), (b, a, c), (c, a, b))):
            v = x[e] - x[r1] - x[r2]
            worst = max(worst, v)
            if v > 0.05:
                ref.append((a, b, c | (side << 29)))
    (fa, fb, fc), w = _detect(x, n, block, 0.05, threads, cap=3 * block * n, chunk=chunk)
    assert list(zip(fa, fb, fc)) == ref  # visiting order, whatever the thread count
    assert w == pytest.approx(worst, abs=1e-15)
    # the exact largest violation agrees with the problem's own (packed) check
    idx = D.diagonal_offsets(n)
    iu = np.triu_indices(n, 1)
    packed = x[idx[iu[1] - iu[0]] + iu[0]]
    prob = MetricProblem(kind="mn", n=n, labels=np.arange(n).astype(object), structure="dense",
                         objective="l1", weights=np.ones(m), target=np.zeros(m), lower=-np.inf,
                         upper=np.inf)
    assert D.dense_max_violation(x, n, chunk) == pytest.approx(prob.max_violation(packed),
                                                               abs=1e-14)


def test_dense_merge_project_forget_localise():
    n, block = 9, 3
    rng = np.random.default_rng(5)
    m = n * (n - 1) // 2
    trip = _diag_triplets(n, block)
    cons = [(a, b, c | (s << 29)) for a, b, c in trip for s in range(3)]
    old = sorted(rng.choice(len(cons), 12, replace=False))
    new = sorted(set(rng.choice(len(cons), 10, replace=False)) | {old[3]})
    ca, cb, cc = (np.array([cons[i][k] for i in old], np.int32) for k in range(3))
    cz = rng.uniform(0.1, 1.0, len(old))
    na, nb, ncc = (np.array([cons[i][k] for i in new], np.int32) for k in range(3))
    off = D.diagonal_offsets(n)
    ta, tb, tc, tz, w = DL.dense_merge(ca, cb, cc, cz, len(old), na, nb, ncc, len(new), off, n,
                                      block)
    want = sorted(set(old) | set(new))
    assert w == len(want)
    assert list(zip(ta[:w], tb[:w], tc[:w])) == [cons[i] for i in want]
    zmap = dict(zip(old, cz))
    np.testing.assert_array_equal(tz[:w], [zmap.get(i, 0.0) for i in want])
    # one projection pass against the naive Hildreth pass on the same rows
    x = rng.normal(size=m)
    winv = rng.uniform(0.5, 2.0, m)
    rows = []
    for a, b, c in zip(ta[:w], tb[:w], tc[:w]):
        ids = (a, b, c & ((1 << 29) - 1))
        s = c >> 29
        rows.append(([ids[s]] + [ids[k] for k in range(3) if k != s], 0))
    xr, zr = naive_project(x, winv, rows, tz[:w])
    xk, zk = x.copy(), tz[:w].copy()
    DL.dense_project(xk, winv, ta, tb, tc, zk, w)
    np.testing.assert_allclose(xk, xr, atol=1e-12)
    np.testing.assert_allclose(zk, zr, atol=1e-12)
    # local <-> global ids, and forgetting keeps the order
    la, lb, lc = ta.copy(), tb.copy(), tc.copy()
    used = DL.localise(la, lb, lc, w, m)
    assert np.all(np.diff(used) > 0) and set(used) == set(ta[:w]) | set(tb[:w]) | set(
        tc[:w] & ((1 << 29) - 1))
    assert la[:w].max() < used.size and (lc[:w] >> 29 == tc[:w] >> 29).all()
    np.testing.assert_array_equal(used[la[:w]], ta[:w])
    DL.globalise(used, la, lb, lc, w)
    ga, gb, gc = la[:w], lb[:w], lc[:w]
    np.testing.assert_array_equal(np.c_[ga, gb, gc], np.c_[ta[:w], tb[:w], tc[:w]])
    keep = zk > 0
    k = DL.dense_forget(ta, tb, tc, zk, w)
    assert k == keep.sum()
    np.testing.assert_array_equal(ta[:k], ga[keep])


def test_dense_oracle_memory_limit():
    from metricopt.solvers._pf_oracles import DenseOracle as _DenseOracle
    from metricopt.solvers._pf_oracles import TriangleList as _TriangleList

    n = 60
    m = n * (n - 1) // 2
    x = np.random.default_rng(6).normal(size=m)  # about a third of all rows violated
    oracle = _DenseOracle(n, 8 * 14 * m, 0.0, max_memory=8 * 14 * m + 10**5, threads=1)
    with pytest.raises(MemoryLimitError, match="dense oracle"):
        oracle(x, _TriangleList())
    oracle = _DenseOracle(n, 8 * 14 * m, 0.0, max_memory=None, threads=2)
    lst, worst, found = oracle(x, _TriangleList())
    assert lst.nc == found > 3 * 16 * n and worst == pytest.approx(D.dense_max_violation(x, n))


def test_edge_oracle_matches_numpy():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 1, 9)
    tri = np.array([[0, 1, 2], [3, 4, 5], [2, 6, 8]], np.int64)
    wed = np.array([[0, 3], [6, 7], [1, 8]], np.int64)
    off, mem, kind, worst = K.edge_oracle(x, tri, wed, 0.0)
    ref = []
    for a, b, c in tri:
        for p, q, r in ((a, b, c), (b, c, a), (c, a, b)):
            if x[p] - x[q] - x[r] > 0:
                ref.append(((p, q, r), 0, x[p] - x[q] - x[r]))
    for a, b in wed:
        if 1 - x[a] - x[b] > 0:
            ref.append(((a, b), 1, 1 - x[a] - x[b]))
    assert [tuple(mem[off[c]:off[c + 1]]) for c in range(len(kind))] == [r[0] for r in ref]
    assert list(kind) == [r[1] for r in ref]
    assert worst == pytest.approx(max([0.0] + [r[2] for r in ref]))


# ---------------------------------------------------------- sparse (MET(G))
@pytest.mark.parametrize("seed", range(4))
def test_sparse_cc_matches_exact_lp(seed):
    prob = signed_problem(seed)
    ref = exact_sparse_lp(prob)
    # the package's own exact references agree: cycles added lazily, and the dense embedding
    for method in ("highs-lazy", "highs"):
        exact = metricopt.solve(prob, method=method)
        assert exact.status == Status.OPTIMAL
        assert exact.fun == pytest.approx(ref, rel=1e-7, abs=1e-9)
    res = metricopt.solve(prob, method="project-forget", gamma=1000.0, tol=1e-7, gap_tol=1e-8,
                          max_iter=5000)
    assert res.status == Status.OPTIMAL
    assert res.max_violation <= 1e-7
    assert res.fun == pytest.approx(ref, rel=1e-5, abs=1e-7)
    assert res.lower_bound <= ref + 1e-9
    assert res.lower_bound >= ref * (1 - 1e-2)


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gamma", [0.5, 1.0, 20.0])
def test_lower_bound_is_certified(seed, gamma):
    prob = signed_problem(100 + seed, n=12, p=0.4)
    ref = exact_sparse_lp(prob)
    for max_iter in (1, 3, 50):
        res = solve_project_forget(prob, gamma=gamma, max_iter=max_iter)
        assert res["lower_bound"] <= ref + 1e-9


def test_sparse_mn_l1_matches_exact_lp():
    prob = weighted_mn_problem(7, 1)
    ref = exact_sparse_lp(prob)
    res = solve_project_forget(prob, gamma=1000.0, tol=1e-7, gap_tol=1e-8, max_iter=5000)
    assert res["status"] == Status.OPTIMAL
    assert res["fun"] == pytest.approx(ref, rel=1e-5)
    assert res["lower_bound"] <= ref + 1e-9


def test_sparse_mn_l2_certified_gap():
    prob = weighted_mn_problem(8, 2)
    res = solve_project_forget(prob, tol=1e-8, gap_tol=1e-8, max_iter=5000)
    assert res["status"] == Status.OPTIMAL
    assert res["max_violation"] <= 1e-8
    assert res["lower_bound"] <= res["fun"]
    assert res["fun"] - res["lower_bound"] <= 1e-6 * res["fun"]


def test_threads_do_not_change_the_answer():
    prob = signed_problem(11, n=30, p=0.2)
    a = solve_project_forget(prob, threads=1, max_iter=20)
    b = solve_project_forget(prob, threads=2, max_iter=20)
    np.testing.assert_array_equal(a["x"], b["x"])


def test_history_callback_and_result_fields():
    prob = signed_problem(12)
    seen = []
    res = metricopt.solve(prob, method="project-forget", callback=seen.append, max_iter=50)
    # the callback also receives the polish's events (stage="polish"), not iterations
    iterations = [r for r in seen if r.get("stage") != "polish"]
    assert len(iterations) == len(res.history) == res.nit
    assert HISTORY_KEYS <= set(iterations[0])
    polish = [r for r in seen if r.get("stage") == "polish"]
    ran = [p for p in res.polish if "skipped" not in p]
    assert len(polish) == sum(p["rounds"] + 1 for p in ran)
    assert res.peak_memory > 0 and res.method == "project-forget"


def test_runs_without_the_resource_module(monkeypatch):
    # Windows has no ``resource``: the module imports it only to read the peak, which is
    # then unknown
    import subprocess
    import sys

    code = ("import sys; sys.modules['resource'] = None; "
            "import metricopt.solvers._pf_strategy as pf; assert pf.peak_rss() is None")
    subprocess.run([sys.executable, "-c", code], check=True)
    monkeypatch.setitem(sys.modules, "resource", None)
    res = metricopt.solve(signed_problem(12), method="project-forget", max_iter=5, warm_up=False)
    assert res.peak_memory is None and res.nit >= 1


# ------------------------------------------------------- cd and dense problems
@pytest.mark.parametrize("name", ["karate", "lesmis"])
def test_cd_matches_exact_lp(name):
    prob = metricopt.build_problem("cd", metricopt.read_graph(name))
    ref = exact_cd_lp(prob)
    res = solve_project_forget(prob, gamma=200.0, tol=1e-7, gap_tol=1e-8, max_iter=2000)
    assert res["status"] == Status.OPTIMAL
    assert res["fun"] == pytest.approx(ref, rel=1e-5)
    assert res["lower_bound"] <= ref + 1e-9


def test_dense_cc_karate_matches_exact_lp():
    prob = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    ref = exact_dense_lp(prob)
    res = solve_project_forget(prob, gamma=100.0, tol=1e-7, gap_tol=1e-8, max_iter=2000)
    assert res["status"] == Status.OPTIMAL
    assert res["fun"] == pytest.approx(ref, rel=1e-6)
    assert res["lower_bound"] <= ref + 1e-9
    assert ref == pytest.approx(21.6704, abs=1e-4)  # the paper rule's value (DESIGN §1)


@pytest.mark.slow
def test_dense_cc_lesmis_matches_exact_lp():
    prob = metricopt.build_problem("cc", metricopt.read_graph("lesmis"))
    ref = exact_dense_lp(prob)
    res = solve_project_forget(prob, gamma=1000.0, tol=1e-7, gap_tol=1e-8, max_iter=5000)
    assert res["status"] == Status.OPTIMAL
    assert res["fun"] == pytest.approx(ref, rel=1e-5)
    assert res["lower_bound"] <= ref + 1e-9


def test_dense_sc_karate_converges():
    prob = metricopt.build_problem("sc", metricopt.read_graph("karate"))
    res = solve_project_forget(prob, tol=1e-6, gap_tol=1e-6)
    assert res["status"] == Status.OPTIMAL
    assert res["max_violation"] <= 1e-6
    assert abs(res["x"].sum() - prob.sum_value) <= 1e-6


@pytest.mark.slow
def test_sc_on_a_sparse_random_graph_converges_within_the_default_limits():
    """Sparsest cut on G(200, 0.035) keeps progressing past 1,000 oracle calls (1,133 at
    gap_tol 1e-4); its path rows are too many for the polish, so only the default call
    limit stood between it and the contract. dykstra's certified answer is the oracle."""
    import networkx as nx

    prob = metricopt.build_problem("sc", metricopt.read_graph(
        nx.gnp_random_graph(200, 0.035, seed=1)))
    res = metricopt.solve(prob, method="project-forget", threads=2)
    ref = metricopt.solve(prob, method="dykstra", threads=2)
    assert res["status"] == Status.OPTIMAL and ref["status"] == Status.OPTIMAL
    assert res["nit"] > 1000
    assert res["max_violation"] <= 1e-4
    assert res["lower_bound"] <= ref["fun"] + 1e-9 and ref["lower_bound"] <= res["fun"] + 1e-9
    assert res["fun"] == pytest.approx(ref["fun"], rel=2e-4)


# ----------------------------------------- checkpoints, limits, interruption
@pytest.mark.parametrize("which", ["sparse", "dense"])
def test_resume_reaches_the_same_answer(tmp_path, which):
    if which == "sparse":
        prob = signed_problem(21, n=25, p=0.25)
    else:
        prob = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    # fixed passes: the dense default balances passes against measured scan time
    opts = dict(gamma=50.0, tol=1e-7, gap_tol=1e-8, max_iter=4000, passes=6)
    full = solve_project_forget(prob, **opts)
    ck = tmp_path / "pf.npz"
    with pytest.warns(metricopt.exceptions.ConvergenceWarning):
        part = solve_project_forget(prob, **{**opts, "max_iter": 3}, checkpoint=str(ck))
    assert part["status"] == Status.LIMIT and ck.exists()
    rest = solve_project_forget(prob, **opts, resume=str(ck))
    assert rest["status"] == Status.OPTIMAL and rest["nit"] == full["nit"]
    np.testing.assert_allclose(rest["x"], full["x"], atol=1e-12)


def test_memory_refusal():
    prob = signed_problem(0)
    with pytest.raises(MemoryLimitError):
        solve_project_forget(prob, max_memory=1000)


def test_keyboard_interrupt_gives_status(tmp_path):
    prob = signed_problem(5)

    def stop(rec):
        if rec["iteration"] == 2:
            raise KeyboardInterrupt

    ck = tmp_path / "i.npz"
    res = solve_project_forget(prob, callback=stop, checkpoint=str(ck))
    assert res["status"] == Status.INTERRUPTED and ck.exists()
    assert res["lower_bound"] is not None  # certified in one pass, even when stopped
    assert res["lower_bound"] <= exact_sparse_lp(prob) + 1e-9


# --------------------------------------------------------------- lower bounds
def _assert_bound(res, ref):
    det = res["bound_details"]
    assert res["lower_bound"] is not None
    assert res["lower_bound"] <= ref + 1e-9 * max(1.0, abs(ref))
    assert res["lower_bound"] >= det.get("dual_bound", -np.inf)
    assert "theorem5" in det, det


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(3))
def test_sparse_theorem5_bound_beats_dual_bound(seed):
    prob = signed_problem(200 + seed, n=14, p=0.4)  # zero weights: raised in W
    ref = exact_sparse_lp(prob)
    for max_iter in (2, 1000):
        # a gap_tol the certificate of gamma 1 meets: the stage is not grown
        res = solve_project_forget(prob, gamma=1.0, max_iter=max_iter, gap_tol=0.25)
        _assert_bound(res, ref)
    # at convergence (gamma = 1) Thm 5 is far tighter than D(y) / (1 + 1/gamma)
    assert res["gamma"] == 1.0
    assert res["lower_bound"] >= 1.2 * res["bound_details"]["dual_bound"]
    assert res["lower_bound"] >= 0.85 * ref


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
def test_sparse_mn_l1_theorem5_bound():
    prob = weighted_mn_problem(9, 1)
    ref = exact_sparse_lp(prob)
    for max_iter in (1, 5, 1000):
        _assert_bound(solve_project_forget(prob, gamma=1.0, max_iter=max_iter), ref)


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
def test_dense_sc_corollary6_bound():
    prob = metricopt.build_problem("sc", metricopt.read_graph("karate"))
    ref = exact_sc_lp(prob)
    for max_iter in (1, 1000):
        # the certificate itself, not the polish's LP dual (the path rows' LP)
        res = solve_project_forget(prob, tol=1e-6, gap_tol=1e-6, max_iter=max_iter,
                                   polish=False)
        _assert_bound(res, ref)
    assert res["bound_details"]["theorem5_method"] == "corollary6"
    assert res["lower_bound"] >= 0.99 * ref > 0


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
def test_cd_and_dense_cc_theorem5_bound():
    prob = metricopt.build_problem("cd", metricopt.read_graph("karate"))
    ref = exact_cd_lp(prob)
    for max_iter in (1, 1000):
        _assert_bound(solve_project_forget(prob, gamma=1.0, max_iter=max_iter), ref)
    prob = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    ref = exact_dense_lp(prob)
    for max_iter in (1, 3, 1000):
        res = solve_project_forget(prob, gamma=1.0, tol=1e-3, max_iter=max_iter)
        _assert_bound(res, ref)
    assert res["lower_bound"] >= 0.99 * ref


@pytest.mark.parametrize("kind", ["cc", "cd"])
def test_ctrl_c_waits_for_the_iteration_and_resumes_exactly(tmp_path, monkeypatch, kind,
                                                            sigint_raises):
    """SIGINT during the third oracle call: the iteration finishes, the run stops with a
    checkpoint, and resuming gives the uninterrupted answer (fixed passes: no clock)."""
    import signal

    import metricopt.solvers._pf_strategy as PF

    problem = metricopt.build_problem(kind, metricopt.read_graph("karate"))
    opts = dict(passes=5, threads=1, polish=False)
    ref = solve_project_forget(problem, **opts)
    real = PF.ProjectForgetStrategy._qp_values
    calls = []

    def qp_values(self):  # measured once per oracle call
        calls.append(1)
        if len(calls) == 3:
            signal.raise_signal(signal.SIGINT)
        return real(self)

    monkeypatch.setattr(PF.ProjectForgetStrategy, "_qp_values", qp_values)
    path = str(tmp_path / "ck.npz")
    res = solve_project_forget(problem, checkpoint=path, **opts)
    assert res["status"] == Status.INTERRUPTED and res["nit"] == 3
    monkeypatch.setattr(PF.ProjectForgetStrategy, "_qp_values", real)
    again = solve_project_forget(problem, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    np.testing.assert_array_equal(again["x"], ref["x"])


def _sigint_in_part(tmp_path, monkeypatch, prob, module, kernel, at):
    """Solve ``prob`` with SIGINT raised in the ``at``-th call of ``module.kernel`` (a
    part of an oracle call): no further part runs, the call is dropped (the run reports
    the calls before it), and resuming gives the uninterrupted answer."""
    import signal

    opts = dict(threads=1, tol=1e-3, gap_tol=1e-3)
    ref = solve_project_forget(prob, **opts)
    real = getattr(module, kernel)
    parts = []

    def part(*args, **kwargs):
        parts.append(1)
        if len(parts) == at:
            signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, kernel, part)
    path = str(tmp_path / "ck.npz")
    seen = []
    res = solve_project_forget(prob, checkpoint=path, callback=seen.append, **opts)
    assert res["status"] == Status.INTERRUPTED and len(parts) == at
    assert res["nit"] == len(seen) < ref["nit"]
    monkeypatch.setattr(module, kernel, real)
    again = solve_project_forget(prob, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    np.testing.assert_array_equal(again["x"], ref["x"])


def test_ctrl_c_during_a_path_search_is_answered_after_one_part(tmp_path, monkeypatch,
                                                                sigint_raises):
    from metricopt.solvers import _cycle_search as CS

    monkeypatch.setattr(CS, "MIN_PART_EDGES", 9)  # 22 parts of the 195 edges
    _sigint_in_part(tmp_path, monkeypatch, signed_problem(7, n=40, p=0.25), CS,
                    "search_cycles", 3)


def test_ctrl_c_during_a_dense_scan_is_answered_after_one_part(tmp_path, monkeypatch,
                                                                sigint_raises):
    import metricopt.solvers._pf_oracles as PF

    monkeypatch.setattr(PF, "SCAN_PART_TRIPLETS", 700)  # about 8 parts
    _sigint_in_part(tmp_path, monkeypatch,
                    metricopt.build_problem("cc", metricopt.read_graph("karate")), D,
                    "dense_detect", 30)


def test_time_limit_during_the_first_path_search_returns_a_certified_answer(monkeypatch):
    """A ring has no triangle, so the first call is a path search; a time limit that has
    passed after its first part drops it: no call counts, and the answer (the starting
    point) still has its exact violation and a certified bound."""
    from metricopt.solvers import _cycle_search as CS

    n = 30
    pairs = np.stack([np.arange(n), (np.arange(n) + 1) % n], 1)
    pairs = np.sort(pairs, axis=1).astype(np.int64)
    sw = np.ones(n)
    sw[0] = -1.0
    prob = MetricProblem(kind="cc", n=n, labels=np.arange(n).astype(object),
                         structure="sparse", objective="l1", weights=np.abs(sw),
                         target=(sw < 0).astype(float), lower=0.0, upper=1.0, pairs=pairs)
    monkeypatch.setattr(CS, "MIN_PART_EDGES", 5)
    with pytest.warns(metricopt.exceptions.ConvergenceWarning):
        res = metricopt.solve(prob, method="project-forget", time_limit=1e-9, threads=1)
    assert res["status"] == Status.LIMIT and res["nit"] == 0 and res["history"] == []
    assert res["max_violation"] == pytest.approx(1.0)  # x_0 = 1 against a path of zeros
    assert res["lower_bound"] <= exact_sparse_lp(prob) + 1e-9


def test_iteration_loop_stopping_and_drop(sigint_raises):
    import signal

    from metricopt.solvers.core.loop import IterationLoop

    loop = IterationLoop("calls", dict(iteration=0, seconds=0.0), max_iter=5)
    with loop:
        assert loop.next() and loop.it == 1
        with pytest.raises(KeyboardInterrupt):
            with loop.iteration():
                assert not loop.stopping()
                signal.raise_signal(signal.SIGINT)
                assert loop.stopping()  # held, not raised, until the block ends
                loop.drop()
        assert loop.it == 0 and not loop.stopping()
    timed = IterationLoop("calls", dict(iteration=0, seconds=5.0), max_iter=5, time_limit=1.0)
    with timed:
        assert timed.stopping()


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("raise_weights", [False, True])
def test_certificate_in_the_layout_equals_the_problem_order_one(monkeypatch, raise_weights):
    """Dense l1: the certificate runs on the diagonal layout's arrays (with their
    targets); it equals the one from problem-order copies when no weight was raised,
    stays below it by at most raised * emax otherwise, and never exceeds the LP."""
    from metricopt import bounds
    from metricopt.bounds import driver
    from metricopt.solvers._layouts import diagonal_to_packed

    prob = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    if raise_weights:  # zero weights are raised to the floor of W
        w = np.array(prob.weights, dtype=float)
        w[::7] = 0.0
        prob = dataclasses.replace(prob, weights=w)
    ref = exact_dense_lp(prob)
    seen = []
    real = bounds.certify

    def both(problem, it, **kw):
        got = real(problem, it, **kw)
        if it.target is not None:
            n = problem.n
            back = [diagonal_to_packed(a, n, np.empty_like(a)) for a in (it.x, it.f, it.w)]
            plain = real(problem, it._replace(x=back[0], f=back[1], w=back[2], target=None))
            seen.append((got, plain, it.raised))
        return got

    monkeypatch.setattr(bounds, "certify", both)
    monkeypatch.setattr(driver, "certify", both)
    res = solve_project_forget(prob, gamma=1.0, tol=1e-3, gap_tol=1e-5, polish=False,
                               max_iter=60)
    assert seen, "no stage was certified"
    for (lb, got), (plain, plain_details), raised in seen:
        assert lb <= ref * (1 + 1e-12) + 1e-12 and plain <= ref * (1 + 1e-12) + 1e-12
        assert (raised > 0) is raise_weights
        if raised == 0:
            assert got["theorem5"] == pytest.approx(plain_details["theorem5"], rel=1e-9)
        else:
            assert got["theorem5"] <= plain_details["theorem5"] + 1e-9
    assert res["lower_bound"] <= ref * (1 + 1e-12)


def test_csr_triangles_match_the_enumeration_and_respect_the_cap():
    from metricopt.problems._wedges import csr_triangle_count, csr_triangles

    prob = signed_problem(7, n=25, p=0.3)
    indptr, nbrs, eids = edge_csr(prob.n, prob.pairs)
    tri = csr_triangles(prob.n, indptr, nbrs, eids)
    t = csr_triangle_count(prob.n, indptr, nbrs, eids)
    assert tri.shape == (t, 3) and t > 0
    # every row is a triangle: three edges on three nodes, each node twice
    for row in tri:
        ends = np.bincount(prob.pairs[row].ravel(), minlength=prob.n)
        assert sorted(ends[ends > 0]) == [2, 2, 2]
    assert len({tuple(sorted(r)) for r in tri.tolist()}) == t
    assert csr_triangles(prob.n, indptr, nbrs, eids, max_count=t).shape == (t, 3)
    assert csr_triangles(prob.n, indptr, nbrs, eids, max_count=t - 1).shape == (0, 3)


def test_an_interrupted_run_returns_its_feasible_point_without_a_scan(monkeypatch):
    """After Ctrl-C, a run that has met a point within tol (here at a floor check)
    returns it with the violation measured when it was made: no O(n^3) scan of the
    iterate or of that point delays the answer."""
    from metricopt.solvers import _pf_strategy as PF
    from metricopt.solvers.core import driver as DR
    from metricopt.solvers.core import stage as S

    problem = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    monkeypatch.setattr(S, "WIDE_POLISH_FRACTION", 0.0)  # floor checks on karate
    monkeypatch.setattr(DR, "POLISH_QP_GAP", 0.0)
    scans = []
    after = []
    real_violation, real_max = PF.violation, type(problem).max_violation

    def violation(*args):
        scans.append(bool(after))
        return real_violation(*args)

    def max_violation(self, x):
        scans.append(bool(after))
        return real_max(self, x)

    monkeypatch.setattr(PF, "violation", violation)
    monkeypatch.setattr(type(problem), "max_violation", max_violation)

    def stop(rec):
        if np.isfinite(rec.get("gap", np.nan)):  # a floor check measured a point
            after.append(rec["iteration"])
            raise KeyboardInterrupt

    res = solve_project_forget(problem, threads=1, gamma=1.0, tol=1e-8, gap_tol=1e-9,
                               callback=stop)
    assert res["status"] == Status.INTERRUPTED and after
    assert True not in scans  # no scan after the interruption
    assert res["max_violation"] <= 1e-8 and not res.get("violation_bounded")
    assert real_max(problem, res["x"]) == pytest.approx(res["max_violation"], abs=1e-15)
    assert "upper bound" not in res["message"]
