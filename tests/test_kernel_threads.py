"""Threaded kernels as cached serial shares on a thread pool (:mod:`metricopt._threads`).

No kernel of the package is ``parallel=True`` (numba cannot cache those reliably, so
every run compiled them again), and every kernel a solve calls is cached: a static scan
of the source, and the same checked on the compiled dispatchers. Each share kernel
(one worker's part of a threaded scan) is compared with a slow reference, and the
threaded drivers with the same shares run one after the other.
"""

import ast
import importlib
import importlib.util
import pkgutil
import threading
from pathlib import Path

import numpy as np
import pytest

import metricopt
from metricopt import _threads


# ------------------------------------------------------------------ the source
def _source_files():
    root = Path(importlib.util.find_spec("metricopt").origin).parent
    return sorted(root.rglob("*.py"))


def _jit_calls(tree):
    """``(lineno, name, keywords)`` of every ``numba.njit(...)``/``njit(...)``/``jit(...)``
    call in ``tree``, decorators and ``numba.njit(...)(f)`` alike."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
            else None
        if name in ("njit", "jit", "vectorize", "guvectorize", "generated_jit"):
            yield node.lineno, name, {k.arg: k.value for k in node.keywords if k.arg}


def _bare_jit_decorators(tree):
    """``@numba.njit`` / ``@njit`` used without a call (no options, so no cache)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                name = d.attr if isinstance(d, ast.Attribute) else d.id \
                    if isinstance(d, ast.Name) else None
                if name in ("njit", "jit"):
                    yield node.lineno, node.name


def _is_true(node):
    return isinstance(node, ast.Constant) and node.value is True


def _problems_of(source, where="<src>"):
    tree = ast.parse(source, filename=where)
    bad = []
    for line, name, kw in _jit_calls(tree):
        if name != "njit":
            bad.append(f"{where}:{line}: numba.{name} (use numba.njit(cache=True, ...))")
            continue
        if "parallel" in kw and not (isinstance(kw["parallel"], ast.Constant)
                                     and kw["parallel"].value is False):
            bad.append(f"{where}:{line}: parallel njit")
        inline = kw.get("inline")
        inlined = isinstance(inline, ast.Constant) and inline.value == "always"
        if not inlined and not _is_true(kw.get("cache")):
            bad.append(f"{where}:{line}: njit without cache=True")
    for line, fname in _bare_jit_decorators(tree):
        bad.append(f"{where}:{line}: bare @njit on {fname} (no cache)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "prange":
            bad.append(f"{where}:{node.lineno}: numba.prange")
    return bad


def test_scan_finds_what_it_forbids():
    src = ("import numba\n"
           "@numba.njit(parallel=True, cache=True)\ndef a(x):\n    pass\n"
           "@numba.njit(fastmath=True)\ndef b(x):\n    pass\n"
           "@numba.njit\ndef c(x):\n    pass\n"
           "d = numba.njit(cache=False)(c)\n"
           "@numba.njit(cache=True)\ndef e(x):\n"
           "    for i in numba.prange(3):\n        pass\n"
           "@numba.njit(cache=True, nogil=True)\ndef ok(x):\n    pass\n"
           "@numba.njit(inline='always')\ndef ok2(x):\n    pass\n")
    assert sorted(_problems_of(src)) == sorted([
        "<src>:2: parallel njit", "<src>:5: njit without cache=True",
        "<src>:9: bare @njit on c (no cache)", "<src>:11: njit without cache=True",
        "<src>:14: numba.prange"])


def test_no_parallel_or_uncached_kernel_in_the_package():
    bad = []
    for path in _source_files():
        bad += _problems_of(path.read_text(encoding="utf-8"), str(path))
    assert not bad, "kernels that would compile on every run:\n" + "\n".join(bad)


def _dispatchers():
    """Every numba dispatcher defined at module level in the package."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for mod in pkgutil.walk_packages(metricopt.__path__, "metricopt."):
        if mod.name.startswith(("metricopt.cli", "metricopt.plotting", "metricopt.__main__")):
            continue
        module = importlib.import_module(mod.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.name:
                found[f"{mod.name}.{name}"] = obj
    return found


def test_compiled_dispatchers_are_cached_and_serial():
    from numba.core.caching import NullCache

    found = _dispatchers()
    assert "metricopt.solvers._pf_scan.detect_share" in found
    bad = [name for name, d in found.items()
           if d.targetoptions.get("parallel")
           or (isinstance(d._cache, NullCache) and d.targetoptions.get("inline") != "always")]
    assert not bad, f"parallel or uncached kernels: {bad}"


# ------------------------------------------------------------------ the pool
def test_run_workers_in_order_and_on_threads():
    seen = set()

    def work(t):
        seen.add(threading.get_ident())
        return t * t

    assert _threads.run_workers(work, 7, threads=3) == [t * t for t in range(7)]
    assert _threads.run_workers(work, 0, threads=3) == []
    assert _threads.run_workers(work, 5, threads=1) == [t * t for t in range(5)]


def test_run_workers_finishes_every_started_share_before_raising():
    done = []
    gate = threading.Event()

    def work(t):
        if t == 0:
            gate.wait(60)
            raise ValueError("share 0")
        done.append(t)
        gate.set()
        return t

    with pytest.raises(ValueError, match="share 0"):
        _threads.run_workers(work, 2, threads=2)
    assert done == [1]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_run_workers_starts_no_share_once_stopped(threads):
    """A stop turned true after a few shares: no further share starts, the ones under
    way end, and the call answers None."""
    started = []
    lock = threading.Lock()

    def work(t):
        with lock:
            started.append(t)
        return t

    def stop():
        with lock:
            return len(started) >= 4

    assert _threads.run_workers(work, 50, threads=threads, stop=stop) is None
    assert 4 <= len(started) <= 4 + threads
    assert _threads.run_workers(work, 6, threads=threads, stop=lambda: False) == list(range(6))


def test_run_workers_nested_runs_inline():
    inner = []

    def work(t):
        inner.append(_threads.run_workers(lambda u: (t, u), 3, threads=2))
        return t

    assert _threads.run_workers(work, 2, threads=2) == [0, 1]
    assert sorted(inner) == [[(0, 0), (0, 1), (0, 2)], [(1, 0), (1, 1), (1, 2)]]


def test_thread_count_follows_numba():
    import numba

    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert _threads.thread_count() == 1
    finally:
        numba.set_num_threads(old)
    assert _threads.thread_count(3) == 3
    assert _threads.thread_count(0) == 1


# ------------------------------------------------------------------ shares vs references
def _dense_x(n, seed):
    rng = np.random.default_rng(seed)
    m = n * (n - 1) // 2
    return rng.choice([0.0, 1.0], m) + rng.normal(0, 0.1, m)


def _reference_detect(x, n, block, add_tol):
    """Violated inequalities of ``K_n`` in the dense visiting order, and the largest
    violation (plain Python)."""
    from metricopt.solvers import _pf_scan as D

    off = D.diagonal_offsets(n)
    found, worst = [], 0.0
    for sb in range(1, n - 1, block):
        for s2 in range(1, n - 1):
            for s1 in range(sb, min(sb + block, n - s2)):
                for q in range(n - s1 - s2):
                    a, b, c = off[s1] + q, off[s1 + s2] + q, off[s2] + s1 + q
                    for side, (e, r1, r2) in enumerate(((a, b, c), (b, a, c), (c, a, b))):
                        v = x[e] - x[r1] - x[r2]
                        worst = max(worst, v)
                        if v > add_tol:
                            found.append((int(a), int(b), int(c) | (side << 29)))
    return found, worst


@pytest.mark.parametrize("chunk", [0, 4])
@pytest.mark.parametrize("T", [1, 3])
def test_detect_share_matches_reference(chunk, T):
    from metricopt.solvers import _pf_scan as D

    n, block, add_tol = 13, 4, 0.05
    x = _dense_x(n, 1)
    row_sb, row_s2, starts = D.scan_rows(n, block, T)
    off = D.diagonal_offsets(n)
    L = max(chunk, 1)
    lo, hi = D.chunk_extremes(x, n, L) if chunk else (np.empty(0), np.empty(0))
    coff = D.chunk_offsets(n, L)
    margin = D._bound_margin(lo, hi) if chunk else 0.0
    cap = 3 * block * n * n
    pos = starts[:-1].copy()
    count = np.zeros(T, np.int64)
    worst = np.zeros(T)
    outs = [np.empty((T, cap), np.int32) for _ in range(3)]
    for t in range(T):  # the shares one after the other, on this thread
        D.detect_share(x, off, coff, n, block, add_tol, margin, row_sb, row_s2, starts, pos,
                       *outs, count, worst, lo, hi, chunk, t)
    assert np.array_equal(pos, starts[1:])
    got = [tuple(int(o[t, k]) for o in outs) for t in range(T) for k in range(count[t])]
    ref, ref_worst = _reference_detect(x, n, block, add_tol)
    assert got == ref
    assert worst.max() == pytest.approx(ref_worst, abs=1e-14)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_dense_detect_threads_give_the_shares_output(threads):
    from metricopt.solvers import _pf_scan as D
    from metricopt.solvers._pf_oracles import full_scan

    n = 17
    x = _dense_x(n, 2)
    rows = D.scan_rows(n, 4, 3)
    ref, ref_worst = _reference_detect(x, n, 4, 0.05)
    import numba

    old = numba.get_num_threads()
    try:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        found, worst, _, _, _ = full_scan(x, n, 0.05, rows, block=4, cap=8)
    finally:
        numba.set_num_threads(old)
    assert list(zip(*(a.tolist() for a in found))) == ref
    assert worst == pytest.approx(ref_worst, abs=1e-14)


@pytest.mark.parametrize("chunk", [0, 3])
def test_max_violation_share_matches_reference(chunk):
    from metricopt.solvers import _pf_scan as D

    n = 15
    x = _dense_x(n, 3)
    _, ref = _reference_detect(x, n, 16, np.inf)
    off = D.diagonal_offsets(n)
    L = max(chunk, 1)
    lo, hi = D.chunk_extremes(x, n, L) if chunk else (np.empty(0), np.empty(0))
    coff = D.chunk_offsets(n, L)
    margin = D._bound_margin(lo, hi)
    for T in (1, 2, 4):
        shares = [D.max_violation_share(x, off, n, lo, hi, coff, chunk, margin, t, T)
                  for t in range(T)]
        assert max(s[0] for s in shares) == pytest.approx(ref, abs=1e-14)
        for threads in (1, 2, 4):
            got = D.max_violation_stretches(x, n, chunk, threads=threads)
            assert got == (max(s[0] for s in shares), sum(s[1] for s in shares),
                           sum(s[2] for s in shares))


def _signed_instance(n, seed):
    from metricopt.problems._cycles import edge_csr

    rng = np.random.default_rng(seed)
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.35],
                     dtype=np.int64)
    x = (rng.random(pairs.shape[0]) < 0.3).astype(float) + rng.random(pairs.shape[0]) * 0.05
    return pairs, x, edge_csr(n, pairs)


@pytest.mark.parametrize("T", [1, 2, 3])
def test_separate_share_matches_reference(T):
    from metricopt.problems import _cycles as Y

    n = 14
    pairs, x, (indptr, nbrs, eids) = _signed_instance(n, T)
    ne = pairs.shape[0]
    edges = np.arange(ne, dtype=np.int64)
    cap = 4 * ne * n
    pos = np.arange(T, dtype=np.int64)
    ncyc, nmem, worst = np.zeros(T, np.int64), np.zeros(T, np.int64), np.zeros(T)
    mem = np.empty((T, cap), np.int64)
    off = np.zeros((T, cap + 1), np.int64)
    viol = np.empty((T, cap))
    for t in range(T):
        Y.separate_share(indptr, nbrs, eids, pairs, x, edges, pos, 1e-9, 0.0, mem, off, viol,
                         ncyc, nmem, worst, t)
    assert np.all(pos >= ne)
    _, _, ref_viol, ref_worst = Y.violated_cycles_reference(x, n, pairs, tol=1e-9)
    got = np.concatenate([viol[t, :ncyc[t]] for t in range(T)])
    assert worst.max() == pytest.approx(ref_worst, abs=1e-12)
    np.testing.assert_allclose(np.sort(got), np.sort(ref_viol), atol=1e-12)
    # each cycle: its first edge longer than the rest together by its violation
    for t in range(T):
        for c in range(ncyc[t]):
            ids = mem[t, off[t, c]:off[t, c + 1]]
            assert x[ids[0]] - x[ids[1:]].sum() == pytest.approx(viol[t, c], abs=1e-12)
    # the threaded driver writes exactly what the shares wrote
    for threads in (1, 2):
        out = [np.empty_like(a) for a in (mem, off, viol)]
        out[1][:] = 0
        p2, c2, m2, w2 = np.arange(T, dtype=np.int64), np.zeros(T, np.int64), \
            np.zeros(T, np.int64), np.zeros(T)
        Y.separate_edges(indptr, nbrs, eids, pairs, x, edges, p2, 1e-9, 0.0, *out, c2, m2, w2,
                         threads=threads)
        assert np.array_equal(c2, ncyc) and np.array_equal(m2, nmem)
        assert np.array_equal(w2, worst)
        for t in range(T):
            assert np.array_equal(out[0][t, :nmem[t]], mem[t, :nmem[t]])
            assert np.array_equal(out[2][t, :ncyc[t]], viol[t, :ncyc[t]])


def test_diagonal_share_matches_reference():
    import naive_dykstra as naive
    from metricopt.problems._pairs import n_pairs, pair_index
    from metricopt.solvers import _dykstra_parallel as P
    from metricopt.solvers._layouts import packed_row_offsets

    n, bsize = 19, 4
    rng = np.random.default_rng(4)
    x0 = rng.choice([0.0, 1.0, 0.5], n_pairs(n)) + rng.random(n_pairs(n)) * 0.1
    winv = 1.0 / rng.uniform(0.5, 2.0, n_pairs(n))
    blocks, start, work = P.schedule(n, bsize)
    r = packed_row_offsets(n)
    x = x0.copy()
    cap = 3 * int(work.sum()) + 8
    cur_pos, cur_val = np.zeros((2, 1), np.int64), np.zeros((2, 1))
    ncur = np.zeros(2, np.int64)
    nxt_pos, nxt_val = np.empty((2, cap), np.int64), np.empty((2, cap))
    st, acc = np.zeros((2, 3), np.int64), np.zeros((2, 2))
    for d in range(start.shape[0]):
        for w in (1, 0):  # shares of one anti-diagonal touch disjoint pairs: any order
            P.diagonal_share(x, winv, r, n, bsize, blocks, start, d, w, cur_pos, cur_val, ncur,
                             nxt_pos, nxt_val, st, acc)
    xr = list(x0)
    duals = {}
    naive.triangle_pass(xr, winv, n, "parallel", duals, lambda i, j: int(pair_index(i, j, n)),
                        bsize)
    np.testing.assert_allclose(x, xr, rtol=0, atol=1e-12)
    assert int(st[:, 1].sum()) == sum(1 for z in duals.values() if z > 0)
    # the threaded pass gives the same bits
    for threads in (1, 2):
        x2 = x0.copy()
        P.triangle_pass_parallel(x2, winv, n, bsize, np.zeros((2, 1), np.int64),
                                 np.zeros((2, 1)), np.zeros(2, np.int64),
                                 np.empty((2, 1), np.int64), np.empty((2, 1)), threads=threads)
        assert np.array_equal(x2, x)


def test_streamed_shares_match_reference():
    from metricopt.bounds import _streamed_kernels as K

    rng = np.random.default_rng(6)
    N, chunk = 1000, 64
    x, f, d = rng.random(N), rng.random(N), rng.random(N)
    w0 = rng.choice([0.0, 0.5, 2.0], N)
    wr = rng.uniform(0.5, 2.0, N)
    gamma, xl, xu, mu = 2.0, 0.0, 1.0, 0.3
    # reference: the pieces in plain Python, each chunk summed in order
    tot_ref = []
    best_ref = []
    for a in range(0, N, chunk):
        s, m = 0.0, 0.0
        for i in range(a, min(N, a + chunk)):
            pe = wr[i] * (x[i] - d[i]) / gamma
            pf = wr[i] * f[i] / gamma + (wr[i] - w0[i])
            lo_e, hi_e = xl - d[i], xu - d[i]
            room = hi_e if pe >= 0.0 else -lo_e
            pieces = ((pf + abs(pe), room), (pf, max(-lo_e, hi_e) - room))
            cost = mu * w0[i]
            s += sum((p - cost) * u for p, u in pieces if p - cost > 0.0)
            if w0[i] > 0.0:
                m = max([m] + [p / w0[i] for p, u in pieces if u > 0.0])
        tot_ref.append(s)
        best_ref.append(m)
    nch = len(tot_ref)
    for T in (1, 3):
        total, absolute, magnitude = np.zeros(nch), np.zeros(nch), np.zeros(nch)
        best = np.zeros(nch)
        for t in range(T):
            K.terms_share(x, f, w0, d, wr, gamma, xl, xu, mu, chunk, total, absolute, magnitude,
                          t, T)
            K.ratio_share(x, f, w0, d, wr, gamma, xl, xu, chunk, best, t, T)
        np.testing.assert_allclose(total, tot_ref, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(best, best_ref, rtol=1e-13)
        for threads in (1, 2):
            got = K.cc_lagrangian_terms(x, f, w0, d, wr, gamma, xl, xu, mu, chunk,
                                        threads=threads)
            assert all(np.array_equal(a, b) for a, b in zip(got, (total, absolute, magnitude)))
            assert np.array_equal(K.cc_largest_ratio(x, f, w0, d, wr, gamma, xl, xu, chunk,
                                                     threads=threads), best)


# ------------------------------------------------------------------ runs after the first
_COMPILED = r"""
import json, sys
from numba.core import event
import metricopt.pipeline as P

compiled = []


class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("metricopt"):
            compiled.append(f"{f.__module__}.{f.__qualname__}")

    def on_end(self, ev):
        pass


graph, method = sys.argv[1], sys.argv[2]
with event.install_listener("numba:compile", Listener()):
    P.run(graph, "cc", method=method, solver_options=dict(max_iter=3))
print(json.dumps(sorted(set(compiled))))
"""


@pytest.mark.slow
@pytest.mark.parametrize("method,signed", [("project-forget", False), ("project-forget", True),
                                           ("dykstra", False), ("lighttouch", False),
                                           ("highs-lazy", False)])
def test_second_run_compiles_nothing(tmp_path, method, signed):
    # numba caches every kernel on disk: a second process (a second run of the same
    # backend) loads them all and compiles none
    import json
    import os
    import subprocess
    import sys

    graph = "karate"
    if signed:
        graph = str(tmp_path / "signed.txt")
        Path(graph).write_text("1 2 1\n2 3 1\n1 3 -1\n3 4 1\n4 5 -1\n5 1 1\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", _COMPILED, graph, method], env=env,
                           capture_output=True, text=True, check=True) for _ in range(2)]
    first, second = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert first, "the first run should have compiled the kernels"
    assert second == []


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_run_workers_in_a_forked_child():
    import multiprocessing as mp

    assert _threads.run_workers(lambda t: t, 4, threads=2) == [0, 1, 2, 3]  # pool exists
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply_async(_forked_run).get(timeout=120) == [0, 1, 4, 9]


def _forked_run():
    return _threads.run_workers(lambda t: t * t, 4, threads=2)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_pair_pass_in_shares_is_the_serial_pass(monkeypatch, threads):
    """Each pair's rows involve that pair only: the pass in shares on threads leaves every
    pair where the serial kernel does, bit for bit, and reports its largest steps."""
    import types

    import numba

    from metricopt.solvers import _pf_passes
    from metricopt.solvers._constraint_kernels import pair_pass

    rng = np.random.default_rng(threads)
    n = 10_007
    x, f = rng.uniform(-0.2, 1.2, n), rng.uniform(-0.5, 0.5, n)
    winv, delta = rng.uniform(0.5, 3.0, n), (rng.random(n) < 0.5).astype(float)
    z = rng.uniform(0.0, 0.3, (4, n)) * (rng.random((4, n)) < 0.5)
    st = types.SimpleNamespace(x=x.copy(), f=f.copy(), winv=winv, w=1.0 / winv, delta=delta,
                               z_pair=z.copy(), lower=0.0, upper=1.0, has_lower=True,
                               has_upper=True, sum_value=None)
    want_x, want_f, want_z = x.copy(), f.copy(), z.copy()
    _, _, vmax, smax = pair_pass(want_x, winv, want_f, delta, want_z, 0.0, 1.0, True, True,
                                 True)
    monkeypatch.setattr(_pf_passes, "THREADED_PAIRS", 1000)
    old = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        got = _pf_passes.pair_pass(st)
    finally:
        numba.set_num_threads(old)
    for a, b in ((st.x, want_x), (st.f, want_f), (st.z_pair, want_z)):
        np.testing.assert_array_equal(a, b)
    assert got == (vmax, smax)
