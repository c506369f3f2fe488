"""Triangle-inequality measurements on packed pair vectors (numba kernels).

These kernels scan all ``3 * C(n, 3)`` inequalities ``x_ij <= x_ik + x_kj`` in
O(n^3) time and O(1) extra memory; they never materialise the constraints.
Inputs are assumed checked: contiguous float64 packed vectors of length n(n-1)/2.
"""

import numba
import numpy as np

__all__ = ["max_triangle_violation", "violated_triangles"]


@numba.njit(cache=True)
def _row_offsets(n):
    off = np.empty(n, dtype=np.int64)
    for i in range(n):
        off[i] = i * n - i * (i + 1) // 2 - i - 1
    return off


@numba.njit(cache=True)
def _max_violation_kernel(x, n):
    off = _row_offsets(n)
    worst = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            xij = x[off[i] + j]
            for k in range(j + 1, n):
                xik = x[off[i] + k]
                xjk = x[off[j] + k]
                v = xij - xik - xjk
                if v > worst:
                    worst = v
                v = xik - xij - xjk
                if v > worst:
                    worst = v
                v = xjk - xij - xik
                if v > worst:
                    worst = v
    return worst


def max_triangle_violation(x, n):
    """Largest violation ``max(0, x_ij - x_ik - x_kj)`` over all triangles.

    Parameters
    ----------
    x : ndarray of shape (n*(n-1)/2,)
        Packed pair values.
    n : int

    Returns
    -------
    float
    """
    if n < 3:
        return 0.0
    return float(_max_violation_kernel(np.ascontiguousarray(x, dtype=np.float64), n))


@numba.njit(cache=True)
def _violated_kernel(x, n, tol):
    off = _row_offsets(n)
    npairs = n * (n - 1) // 2
    best = np.zeros(npairs, dtype=np.float64)
    other1 = np.full(npairs, -1, dtype=np.int64)
    other2 = np.full(npairs, -1, dtype=np.int64)
    total = 0
    for i in range(n):
        for j in range(i + 1, n):
            a = off[i] + j
            for k in range(j + 1, n):
                b = off[i] + k
                c = off[j] + k
                xa = x[a]
                xb = x[b]
                xc = x[c]
                v = xa - xb - xc
                if v > tol:
                    total += 1
                    if v > best[a]:
                        best[a] = v
                        other1[a] = b
                        other2[a] = c
                v = xb - xa - xc
                if v > tol:
                    total += 1
                    if v > best[b]:
                        best[b] = v
                        other1[b] = a
                        other2[b] = c
                v = xc - xa - xb
                if v > tol:
                    total += 1
                    if v > best[c]:
                        best[c] = v
                        other1[c] = a
                        other2[c] = b
    count = 0
    for p in range(npairs):
        if other1[p] >= 0:
            count += 1
    rows = np.empty((count, 3), dtype=np.int64)
    viol = np.empty(count, dtype=np.float64)
    t = 0
    for p in range(npairs):
        if other1[p] >= 0:
            rows[t, 0] = p
            rows[t, 1] = other1[p]
            rows[t, 2] = other2[p]
            viol[t] = best[p]
            t += 1
    return rows, viol, total


def violated_triangles(x, n, tol=1e-9):
    """The most violated triangle inequality of each pair, where one exceeds ``tol``.

    For every pair ``a`` that is the long side of a violated inequality
    ``x_a <= x_b + x_c``, the most violated one is returned, so at most
    ``n(n-1)/2`` rows come back (the usual separation rule of lazy LP solvers).

    Parameters
    ----------
    x : ndarray of shape (n*(n-1)/2,)
    n : int
    tol : float

    Returns
    -------
    rows : ndarray of shape (k, 3), int64
        Packed indices ``(a, b, c)`` of the inequality ``x_a <= x_b + x_c``.
    violation : ndarray of shape (k,)
    total : int
        How many inequalities were violated in all (usually more than ``k``).
    """
    if n < 3:
        return np.empty((0, 3), np.int64), np.empty(0), 0
    x = np.ascontiguousarray(x, dtype=np.float64)
    rows, viol, total = _violated_kernel(x, n, float(tol))
    return rows, viol, int(total)
