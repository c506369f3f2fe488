"""Slow references of :mod:`metricopt.solvers._active_kernels` (one triplet at a time)."""

import numpy as np


def _packed(i, j, n):
    return i * n - i * (i + 1) // 2 + (j - i - 1)


def _triangles_of_rows(rows, n):
    """Every (triplet visit index, constraint, long, other, other) of the diagonal rows."""
    out = []
    for s1, s2, m, _t3, t in rows:
        for g in range(m):
            a = _packed(g, g + s1, n)
            b = _packed(g, g + s1 + s2, n)
            c = _packed(g + s1, g + s1 + s2, n)
            for k, tri in enumerate(((a, b, c), (b, a, c), (c, a, b))):
                out.append((t + g, k, tri))
    return out


def dense_active_triangles(z, rows, n):
    res, dual = [], []
    for s1, s2, m, t3, t in rows:
        for k in range(3):
            for g in range(m):
                if z[t3 + k * m + g] > 0:
                    a = _packed(g, g + s1, n)
                    b = _packed(g, g + s1 + s2, n)
                    c = _packed(g + s1, g + s1 + s2, n)
                    res.append(((a, b, c), (b, a, c), (c, a, b))[k])
                    dual.append(z[t3 + k * m + g])
    return np.array(res, dtype=np.int64).reshape(-1, 3), np.array(dual)


def sparse_active_triangles(pos, val, rows, n):
    where = {(t, k): tri for t, k, tri in _triangles_of_rows(rows, n)}
    res = [where[(p // 3, p % 3)] for p, v in zip(pos, val) if v > 0]
    dual = [v for v in val if v > 0]
    return np.array(res, dtype=np.int64).reshape(-1, 3), np.array(dual)
