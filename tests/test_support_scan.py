"""The support scan of triangle inequalities equals the full scan, exactly.

:mod:`metricopt.problems._triangles` enumerates only the wedges of the graph of pairs
below the bulk value of ``x`` (plus every triangle of the few pairs above it) when that
is cheaper than all ``3 C(n, 3)`` inequalities. Its answers (largest violation, the most
violated inequality of every pair, the count) must be those of the full kernels and of
a pure-Python scan, on points shaped like LP and QP iterates (most pairs at 1) and on
adversarial ones (pairs above 1, negative entries).
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metricopt.problems import _triangles as tri


def naive_scan(x, n, tol):
    """Pure-Python reference: largest violation and every violated inequality."""
    pos = {}
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            pos[i, j] = pos[j, i] = p
            p += 1
    worst, total, best = 0.0, 0, {}
    for i, j, k in itertools.combinations(range(n), 3):
        for long, a, b in (((i, j), (i, k), (j, k)), ((i, k), (i, j), (j, k)),
                           ((j, k), (i, j), (i, k))):
            pl, pa, pb = pos[long], pos[a], pos[b]
            first, second = min(pa, pb), max(pa, pb)
            v = x[pl] - x[first] - x[second]
            worst = max(worst, v)
            if v > tol:
                total += 1
                best[pl] = max(best.get(pl, 0.0), v)
    return worst, total, best


def lp_like(rng, n, share_low, n_high, negative=False):
    """Most pairs at 1, a share in [0, 1), ``n_high`` above 1."""
    m = n * (n - 1) // 2
    x = np.ones(m)
    low = rng.choice(m, size=max(1, int(share_low * m)), replace=False)
    x[low] = rng.uniform(-0.03 if negative else 0.0, 1.0, low.size)
    if n_high:
        x[rng.choice(m, size=min(n_high, m), replace=False)] = rng.uniform(1.0, 2.5, min(n_high, m))
    return x


@pytest.mark.parametrize("n", [4, 9, 25, 60])
@pytest.mark.parametrize("n_high", [0, 2, "n", "2n"])
@pytest.mark.parametrize("negative", [False, True])
def test_support_scan_matches_full_and_naive(n, n_high, negative):
    rng = np.random.default_rng(n * 7 + (0 if n_high == 0 else 1) + 2 * negative)
    k = {"n": n, "2n": 2 * n}.get(n_high, n_high)
    for share in (0.02, 0.1, 0.4):
        x = lp_like(rng, n, share, k, negative)
        full_worst = tri._max_violation_kernel(x, n)
        assert tri.max_triangle_violation(x, n) == full_worst
        for tol in (0.0, 1e-3, 0.05):
            rows_f, viol_f, total_f = tri._violated_kernel(x, n, tol)
            rows, viol, total = tri.violated_triangles(x, n, tol)
            assert total == total_f
            assert np.array_equal(rows[:, 0], rows_f[:, 0])
            assert np.array_equal(viol, viol_f)
            # the returned inequality is violated by exactly the reported amount
            got = x[rows[:, 0]] - x[rows[:, 1]] - x[rows[:, 2]]
            assert np.array_equal(got, viol)
        if n <= 25:
            worst, total_n, best = naive_scan(x, n, 0.0)
            assert tri.max_triangle_violation(x, n) == pytest.approx(worst, abs=1e-15)
            rows, viol, total = tri.violated_triangles(x, n, 0.0)
            assert total == total_n
            assert dict(zip(rows[:, 0].tolist(), viol.tolist())) == pytest.approx(best)


def test_support_scan_is_chosen_on_sparse_support():
    rng = np.random.default_rng(3)
    n = 120
    sparse = lp_like(rng, n, 0.01, 5)
    assert tri.support_graph(sparse, n, 0.0) is not None
    dense = rng.uniform(0.0, 1.0, n * (n - 1) // 2)
    assert tri.support_graph(dense, n, 0.0) is None


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 14), st.integers(0, 2**31 - 1), st.floats(0.0, 0.6),
       st.integers(0, 20))
def test_support_scan_property(n, seed, share, n_high):
    x = lp_like(np.random.default_rng(seed), n, share, n_high)
    worst, total, best = naive_scan(x, n, 0.0)
    assert tri.max_triangle_violation(x, n) == pytest.approx(worst, abs=1e-15)
    rows, viol, count = tri.violated_triangles(x, n, 0.0)
    assert count == total
    assert dict(zip(rows[:, 0].tolist(), viol.tolist())) == pytest.approx(best)


@pytest.mark.parametrize("n", [12, 40, 90])
@pytest.mark.parametrize("add_tol", [0.0, 1e-3])
def test_project_forget_support_detect_matches_dense_detect(n, add_tol):
    """The diagonal-layout support scan of project-forget's dense oracle finds the same
    constraints, in the same (visiting) order, and the same largest violation as the
    full threaded scan."""
    from metricopt.solvers import _pf_list as pdL
    from metricopt.solvers import _pf_scan as pd
    from metricopt.solvers._layouts import diagonal_offsets

    rng = np.random.default_rng(n)
    m = n * (n - 1) // 2
    off = diagonal_offsets(n)
    block = 16
    for trial in range(6):
        x = np.ones(m)
        low = rng.choice(m, m // 8, replace=False)
        x[low] = rng.uniform(-0.01 if trial % 2 else 0.0, 1.0, low.size)
        x[rng.choice(m, [0, 3, n][trial % 3], replace=False)] = 1.7
        support = pdL.support_layout(x, off, n, share=10.0)
        assert support is not None
        none = np.empty(0, np.int32)
        k, worst = pdL.support_detect(x, off, n, add_tol, *support[:-1], none, none, none)
        outs = [np.empty(k, np.int32) for _ in range(3)]
        pdL.support_detect(x, off, n, add_tol, *support[:-1], *outs)
        order = np.argsort(pdL.visit_keys(*outs, off, n, block))
        got = [o[order] for o in outs]

        row_sb, row_s2, starts = pd.scan_rows(n, block, 1)
        cap = 3 * block * n * n
        pos = starts[:-1].copy()
        count, full_worst = np.zeros(1, np.int64), np.zeros(1)
        ref = [np.empty((1, cap), np.int32) for _ in range(3)]
        pd.dense_detect(x, off, n, block, add_tol, row_sb, row_s2, starts, pos, *ref, count,
                        full_worst, *pd.chunk_extremes(x, n, pd.CHUNK), pd.CHUNK)
        for a, b in zip(got, ref):
            assert np.array_equal(a, b[0, : count[0]])
        assert worst == pytest.approx(full_worst[0], abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_kth_largest_matches_partition(seed):
    from metricopt.problems._triangles import kth_largest

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 3000))
    x = rng.random(m)
    if seed % 2:  # a plateau at the top, as at a QP point
        x[rng.random(m) < 0.9] = 1.0
    if seed % 3 == 0:
        x = np.sort(x)[:: 1 if seed % 2 else -1].copy()
    for k in {1, min(5, m), (m + 1) // 2, m}:
        value, finite = kth_largest(x, k)
        assert finite and value == np.partition(x, m - k)[m - k]
    x[rng.integers(m)] = np.nan if seed % 2 else np.inf
    assert not kth_largest(x, 1)[1]
