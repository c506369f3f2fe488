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

__all__ = ["row_keys", "list_keys", "keyed_merge", "reference_merge"]

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
