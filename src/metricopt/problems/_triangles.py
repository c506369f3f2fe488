"""Triangle-inequality measurements on packed pair vectors (numba kernels).

The full kernels scan all ``3 * C(n, 3)`` inequalities ``x_ij <= x_ik + x_kj`` in
O(n^3) time and O(1) extra memory; they never materialise the constraints.

Support scan. With ``U = max x`` and ``L = min(min x, 0)``, an inequality violated by
more than ``tol`` has ``x_ik + x_kj < x_ij - tol <= U - tol``, so both of its short
sides lie below ``cut = U - tol - L``: both are edges of the *support graph*
``S = {pairs with x < cut}``, and ``k`` is their common node. Enumerating, for every
node ``k``, the pairs of its ``S``-neighbours (the wedges of ``S`` centred at ``k``)
therefore meets every violated inequality exactly once, in
``O(n^2 + sum_k deg_S(k)^2)`` time. ``U`` is taken as the ``(n + 1)``-th largest
value rather than the maximum, so that a few pairs above the bulk (an LP vertex may put
some pair beyond 1 at no cost) do not make ``S`` dense; the pairs above it are checked
against every third node. LP and QP points of clustering problems leave
most pairs at their upper bound (correlation clustering: ``x = 1`` for every pair no
active constraint touches), so ``S`` is sparse and the scan costs a small part of the
full one (Jaccard cc on ca-GrQc, n = 4158: see ``benchmarks/README.md``). The public
functions pick the cheaper scan by counting the wedges first; both give the same
answer.

Inputs are assumed checked: contiguous float64 packed vectors of length n(n-1)/2.
"""

import numba
import numpy as np

__all__ = ["max_triangle_violation", "violated_triangles", "support_graph", "support_csr",
           "support_level", "kth_largest"]


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


@numba.njit(cache=True)
def support_csr(first, second, values, n):
    """Neighbour lists (CSR) of the pairs ``{first[t], second[t]}`` with their values,
    each list sorted by value, and the number of wedges (pairs of neighbours).

    Shared by the support scans of every pair layout (the caller finds the pairs below
    the cut and names their nodes).
    """
    deg = np.zeros(n, dtype=np.int64)
    for t in range(first.size):
        deg[first[t]] += 1
        deg[second[t]] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    wedges = 0
    for v in range(n):
        indptr[v + 1] = indptr[v] + deg[v]
        wedges += deg[v] * (deg[v] - 1) // 2
    indices = np.empty(indptr[n], dtype=np.int32)
    vals = np.empty(indptr[n], dtype=np.float64)
    fill = indptr[:n].copy()
    for t in range(first.size):
        a = first[t]
        b = second[t]
        indices[fill[a]] = b
        vals[fill[a]] = values[t]
        fill[a] += 1
        indices[fill[b]] = a
        vals[fill[b]] = values[t]
        fill[b] += 1
    for v in range(n):
        lo = indptr[v]
        hi = indptr[v + 1]
        order = np.argsort(vals[lo:hi], kind="mergesort")
        indices[lo:hi] = indices[lo:hi][order]
        vals[lo:hi] = vals[lo:hi][order]
    return indptr, indices, vals, wedges


@numba.njit(cache=True)
def kth_largest(x, k):
    """``(value, finite)``: the ``k``-th largest entry of ``x`` (``1 <= k <= x.size``)
    and whether every entry is finite, without a copy of ``x``.

    A min-heap holds the ``k`` largest entries met so far; an entry enters only when it
    exceeds the heap's least, so a plateau at the top (most pairs at 1) costs one
    comparison per entry, and ``O(x.size log k)`` time at worst.
    """
    heap = np.empty(k)
    size = 0
    finite = True
    for t in range(x.shape[0]):
        v = x[t]
        if not np.isfinite(v):
            finite = False
            continue
        if size < k:  # sift up
            c = size
            size += 1
            while c > 0 and heap[(c - 1) // 2] > v:
                heap[c] = heap[(c - 1) // 2]
                c = (c - 1) // 2
            heap[c] = v
        elif v > heap[0]:  # replace the least, sift down
            c = 0
            while True:
                child = 2 * c + 1
                if child >= k:
                    break
                if child + 1 < k and heap[child + 1] < heap[child]:
                    child += 1
                if heap[child] >= v:
                    break
                heap[c] = heap[child]
                c = child
            heap[c] = v
    return (heap[0] if size == k else np.nan), finite


def support_level(x, n, tol):
    """``(level, high, cut)`` of the support scan: the ``(n + 1)``-th largest value, the
    pairs above it, and the bound below which a pair can be a short side of an
    inequality violated by more than ``tol``; None when ``x`` is too short or not finite."""
    m = x.size
    if m <= n + 1:
        return None
    level, finite = kth_largest(x, n + 1)
    if not finite:
        return None
    level = float(level)
    high = np.flatnonzero(x > level).astype(np.int64)
    return level, high, level - float(tol) - min(float(x.min()), 0.0)


@numba.njit(cache=True)
def _pos(off, i, j):
    """Packed index of the pair {i, j}, i != j."""
    if i < j:
        return off[i] + j
    return off[j] + i


@numba.njit(inline="always")
def _test(x, p, b_pair, c_pair, tol, best, other1, other2, worst, total):
    """Test ``x_p <= x_b + x_c``; keep it as pair ``p``'s most violated when ``best``
    has entries. The full kernels' order of operations: the smaller index first."""
    first = min(b_pair, c_pair)
    second = max(b_pair, c_pair)
    v = x[p] - x[first] - x[second]
    if v > worst:
        worst = v
    if best.size > 0 and v > tol:
        total += 1
        if v > best[p]:
            best[p] = v
            other1[p] = first
            other2[p] = second
    return worst, total


@numba.njit(cache=True)
def _support_scan(x, n, tol, indptr, indices, values, high, level, best, other1, other2):
    """Every inequality violated by more than ``tol``: the wedges of the support graph
    (long sides at most ``level``) and, for each pair of ``high`` (long sides above
    ``level``), all ``k``. Keeps the most violated per long side when ``best`` has
    entries (else only the largest violation); returns ``(worst, total)``.

    The neighbours of each node come sorted by value: a wedge whose short sides sum to
    ``level`` or more has no violation above 0 on its (non-high) long side, and neither
    has any later one in the list."""
    off = _row_offsets(n)
    worst = 0.0
    total = 0
    for k in range(n):
        lo = indptr[k]
        hi = indptr[k + 1]
        for a in range(lo, hi):
            i = indices[a]
            xa = values[a]
            b_pair = _pos(off, i, k)
            for b in range(a + 1, hi):
                if xa + values[b] >= level:
                    break
                j = indices[b]
                p = _pos(off, i, j)
                if x[p] > level:  # a high pair: all of its triangles come below
                    continue
                worst, total = _test(x, p, b_pair, _pos(off, k, j), tol, best, other1,
                                     other2, worst, total)
    for h in range(high.size):
        p = high[h]
        i = 0
        while i + 1 < n and off[i + 1] + i + 2 <= p:  # the row of p (few high pairs)
            i += 1
        j = p - off[i]
        for k in range(n):
            if k == i or k == j:
                continue
            worst, total = _test(x, p, _pos(off, i, k), _pos(off, j, k), tol, best, other1,
                                 other2, worst, total)
    return worst, total


#: The support scan is used when its wedges number at most this share of the full
#: scan's triplets (a wedge costs about as much as a triplet's three checks).
SUPPORT_SHARE = 0.5


def support_graph(x, n, tol):
    """The support scan's data (module docstring), or None when the full scan is cheaper.

    The level is the ``(n + 1)``-th largest value of ``x``: the at most ``n`` pairs above
    it (``high``) are checked against every third node, O(n) each; the support graph
    holds the pairs below ``level - tol - min(min x, 0)``.

    Returns
    -------
    (indptr, indices, values, high, level) or None
    """
    found = support_level(x, n, tol)
    if found is None:
        return None
    level, high, cut = found
    pos = np.flatnonzero(x < cut)
    starts = _row_offsets(n) + np.arange(1, n + 1)  # packed index of the pair (i, i + 1)
    first = np.searchsorted(starts, pos, side="right") - 1
    second = pos - _row_offsets(n)[first]
    indptr, indices, values, wedges = support_csr(first, second, x[pos], n)
    if wedges + high.size * n > SUPPORT_SHARE * (n * (n - 1) * (n - 2) / 6):
        return None
    return indptr, indices, values, high, level


_NO_ROWS = (np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def max_triangle_violation(x, n):
    """Largest violation ``max(0, x_ij - x_ik - x_kj)`` over all triangles.

    By the support scan when it is cheaper (module docstring); the value is the same.

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
    x = np.ascontiguousarray(x, dtype=np.float64)
    support = support_graph(x, n, 0.0)
    if support is None:
        return float(_max_violation_kernel(x, n))
    worst, _ = _support_scan(x, n, 0.0, *support, *_NO_ROWS)
    return float(worst)


@numba.njit(cache=True)
def _collect(best, other1, other2):
    count = 0
    for p in range(best.size):
        if other1[p] >= 0:
            count += 1
    rows = np.empty((count, 3), dtype=np.int64)
    viol = np.empty(count, dtype=np.float64)
    t = 0
    for p in range(best.size):
        if other1[p] >= 0:
            rows[t, 0] = p
            rows[t, 1] = other1[p]
            rows[t, 2] = other2[p]
            viol[t] = best[p]
            t += 1
    return rows, viol


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
    rows, viol = _collect(best, other1, other2)
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
    support = support_graph(x, n, max(float(tol), 0.0))
    if support is None:
        rows, viol, total = _violated_kernel(x, n, float(tol))
        return rows, viol, int(total)
    npairs = x.size
    best = np.zeros(npairs, dtype=np.float64)
    other1 = np.full(npairs, -1, dtype=np.int64)
    other2 = np.full(npairs, -1, dtype=np.int64)
    _, total = _support_scan(x, n, float(tol), *support, best, other1, other2)
    rows, viol = _collect(best, other1, other2)
    return rows, viol, int(total)
