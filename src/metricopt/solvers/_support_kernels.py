"""numba kernels of project-forget on the support-sized layout: constraint keys and merge.

Remembered constraints use the dense mode's list (:mod:`._pf_list`, 20 bytes each) with
positions in the run's pair list instead of the diagonal layout: for the triangle
``a < b < c``, ``ta`` is the position of ``(a, b)``, ``tb`` of ``(a, c)``, ``tc`` of
``(b, c)`` plus ``side << 29`` (the long side: 0 ``(a, b)``, 1 ``(a, c)``, 2 ``(b, c)``).
The list is kept in the order of the key ``((a n + b) n + c) 3 + side``, so that a run
makes the same passes whatever order the scan met the constraints in.

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
"""

import numba
import numpy as np

from ..problems._support_scan import table_find

__all__ = ["row_keys", "list_keys", "keyed_merge", "reference_merge", "missing_pairs",
           "row_positions", "distinct_sorted", "positions_part", "missing_keys",
           "complete_part"]

_SHIFT = 29
_MASK = (1 << _SHIFT) - 1


@numba.njit(cache=True)
def row_keys(rows, n):
    """Key of each ``(a, b, c, side)`` row (module docstring)."""
    out = np.empty(rows.shape[0], dtype=np.int64)
    for t in range(rows.shape[0]):
        out[t] = ((rows[t, 0] * n + rows[t, 1]) * n + rows[t, 2]) * 3 + rows[t, 3]
    return out


@numba.njit(cache=True)
def missing_pairs(rows, n, tk, tv):
    """Keys of the pairs of ``(a, b, c, side)`` rows that the table lacks (with repeats).
    The slow reference of :func:`positions_part` and :func:`missing_keys` (which work on
    the rows' sorted distinct keys)."""
    count = 0
    for t in range(rows.shape[0]):
        a = np.int64(rows[t, 0])
        b = np.int64(rows[t, 1])
        c = np.int64(rows[t, 2])
        count += ((table_find(tk, tv, a * n + b) < 0) + (table_find(tk, tv, a * n + c) < 0)
                  + (table_find(tk, tv, b * n + c) < 0))
    out = np.empty(count, dtype=np.int64)
    k = 0
    for t in range(rows.shape[0]):
        a = np.int64(rows[t, 0])
        b = np.int64(rows[t, 1])
        c = np.int64(rows[t, 2])
        for key in (a * n + b, a * n + c, b * n + c):
            if table_find(tk, tv, key) < 0:
                out[k] = key
                k += 1
    return out


@numba.njit(cache=True)
def row_positions(rows, n, tk, tv):
    """The list's ``ta, tb, tc`` (int32) and the key of each row, every pair in the table.
    The slow reference of :func:`positions_part` and :func:`complete_part`."""
    r = rows.shape[0]
    ta = np.empty(r, dtype=np.int32)
    tb = np.empty(r, dtype=np.int32)
    tc = np.empty(r, dtype=np.int32)
    key = np.empty(r, dtype=np.int64)
    for t in range(r):
        a = np.int64(rows[t, 0])
        b = np.int64(rows[t, 1])
        c = np.int64(rows[t, 2])
        s = np.int64(rows[t, 3])
        ta[t] = table_find(tk, tv, a * n + b)
        tb[t] = table_find(tk, tv, a * n + c)
        tc[t] = table_find(tk, tv, b * n + c) | (s << _SHIFT)
        key[t] = ((a * n + b) * n + c) * 3 + s
    return ta, tb, tc, key


@numba.njit(inline="always")
def _key_nodes(key, n):
    """``(a, b, c, side)`` of a row's key (:func:`row_keys`)."""
    rest = key // 3
    c = rest % n
    rest //= n
    return rest // n, rest % n, c, key % 3


@numba.njit(cache=True)
def distinct_sorted(keys):
    """Drop the repeats of the sorted ``keys`` in place; returns how many are left."""
    m = 0
    for t in range(keys.shape[0]):
        if m == 0 or keys[t] != keys[m - 1]:
            keys[m] = keys[t]
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def positions_part(keys, n, tk, tv, lo, hi, ta, tb, tc):
    """Rows ``lo .. hi - 1`` of the rows ``keys`` (:func:`row_keys`): ``ta, tb, tc`` their
    pairs' positions in one table lookup each, -1 for a pair the table lacks (``tc``
    without the side yet: :func:`complete_part`). Returns the count of pairs lacking."""
    lacking = 0
    for t in range(lo, hi):
        a, b, c, _ = _key_nodes(keys[t], n)
        pa = table_find(tk, tv, a * n + b)
        pb = table_find(tk, tv, a * n + c)
        pc = table_find(tk, tv, b * n + c)
        ta[t] = pa
        tb[t] = pb
        tc[t] = pc
        lacking += (pa < 0) + (pb < 0) + (pc < 0)
    return lacking


@numba.njit(cache=True)
def missing_keys(keys, n, ta, tb, tc, count):
    """The ``count`` pair keys that :func:`positions_part` found lacking (with repeats)."""
    out = np.empty(count, dtype=np.int64)
    k = 0
    for t in range(keys.shape[0]):
        if ta[t] < 0 or tb[t] < 0 or tc[t] < 0:
            a, b, c, _ = _key_nodes(keys[t], n)
            if ta[t] < 0:
                out[k] = a * n + b
                k += 1
            if tb[t] < 0:
                out[k] = a * n + c
                k += 1
            if tc[t] < 0:
                out[k] = b * n + c
                k += 1
    return out


@numba.njit(cache=True, nogil=True)
def complete_part(keys, n, tk, tv, lo, hi, ta, tb, tc):
    """Rows ``lo .. hi - 1`` after the lacking pairs joined the table: their positions
    looked up, and the side set in ``tc`` (:func:`row_positions`' arrays)."""
    for t in range(lo, hi):
        a, b, c, side = _key_nodes(keys[t], n)
        if ta[t] < 0:
            ta[t] = table_find(tk, tv, a * n + b)
        if tb[t] < 0:
            tb[t] = table_find(tk, tv, a * n + c)
        if tc[t] < 0:
            tc[t] = table_find(tk, tv, b * n + c)
        tc[t] |= np.int32(side) << _SHIFT


@numba.njit(cache=True)
def list_keys(ta, tb, tc, nc, pi, pj, n):
    """Keys of the first ``nc`` remembered constraints, from their pairs' nodes."""
    out = np.empty(nc, dtype=np.int64)
    for t in range(nc):
        a = pi[ta[t]]
        b = pj[ta[t]]
        c = pj[tb[t]]
        out[t] = ((a * n + b) * n + c) * 3 + (np.int64(tc[t]) >> _SHIFT)
    return out


@numba.njit(cache=True)
def keyed_merge(ca, cb, cc, cz, ck, nc, na, nb, ncc, nk, k):
    """Merge ``k`` new constraints (keys ``nk``, sorted, distinct) into the first ``nc``
    remembered ones (keys ``ck``, sorted): a new constraint already remembered is dropped
    (its dual kept), the others start at zero. Returns ``(ta, tb, tc, tz, count)``."""
    m = nc + k
    ta = np.empty(m, dtype=np.int32)
    tb = np.empty(m, dtype=np.int32)
    tc = np.empty(m, dtype=np.int32)
    tz = np.empty(m)
    i = 0
    j = 0
    w = 0
    while i < nc or j < k:
        if j >= k or (i < nc and ck[i] <= nk[j]):
            if j < k and ck[i] == nk[j]:
                j += 1
            ta[w] = ca[i]
            tb[w] = cb[i]
            tc[w] = cc[i]
            tz[w] = cz[i]
            i += 1
        else:
            ta[w] = na[j]
            tb[w] = nb[j]
            tc[w] = ncc[j]
            tz[w] = 0.0
            j += 1
        w += 1
    return ta, tb, tc, tz, w


def reference_merge(old, new):
    """Slow reference of :func:`keyed_merge` on lists of ``(key, row, dual)``."""
    have = {key for key, _, _ in old}
    merged = list(old) + [(key, row, 0.0) for key, row, _ in new if key not in have]
    return sorted(merged, key=lambda t: t[0])
