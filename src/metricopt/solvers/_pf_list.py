"""numba kernels of the dense (``K_n``) mode of Project and Forget: the remembered list.

Between two full scans (:mod:`._pf_scan`) only the remembered constraints (those whose
dual is positive) are projected. These kernels keep that list compact and in the
visiting order of the scans (the diagonal order of :mod:`metricopt.solvers._layouts`):
the support scan that finds violated constraints when most pairs sit at their bulk
value, the visiting order and the merge of new constraints into the list, the local
numbering of the pairs it uses, and the projecting and forgetting passes over it.

Remembered constraint layout (20 bytes each, four parallel arrays in visiting order):

* ``ta``, ``tb`` (int32): diagonal positions of the pairs ``(i, i+s1)`` and
  ``(i, i+s1+s2)`` of its triplet;
* ``tc`` (int32): position of ``(i+s1, i+s1+s2)`` plus ``side << 29``, where ``side``
  names the left-hand pair: ``0``: ``x_a <= x_b + x_c``, ``1``: ``x_b <= x_a + x_c``,
  ``2``: ``x_c <= x_a + x_b`` (the Dykstra kernels' constraint numbering);
* ``tz`` (float64): its dual ``z = gamma y``.

Positions must be below ``2**29`` (``n <= 32768``). Conventions of the Hildreth steps are
those of :mod:`metricopt.solvers._pf_kernels`.

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
.. [2] Ruggles, C., Veldt, N., & Gleich, D. F. (2020). A parallel projection method for
       metric constrained optimization. SIAM CSC 2020. arXiv:1901.10084
"""

import numba
import numpy as np

from .. import _config

__all__ = ["MAX_POSITION", "BYTES_PER_CONSTRAINT", "support_layout", "support_detect",
           "visit_keys", "dense_merge", "dense_project", "dense_forget", "localise",
           "globalise", "warm_up"]

_FM = set(_config.FASTMATH)
#: positions (diagonal layout) must stay below this bound (two bits hold the side)
MAX_POSITION = 1 << 29
_MASK = MAX_POSITION - 1
#: bytes of one remembered constraint (three int32 ids and a float64 dual)
BYTES_PER_CONSTRAINT = 20


@numba.njit(inline="always", fastmath=_FM)
def _step(xl, xr1, xr2, wl, wr1, wr2, zo):
    """Hildreth step on ``x_l <= x_r1 + x_r2`` from the dual ``zo``."""
    v = xl - xr1 - xr2
    zn = zo + v / (wl + wr1 + wr2)
    if zn < 0.0:
        zn = 0.0
    dz = zn - zo
    return xl - dz * wl, xr1 + dz * wr1, xr2 + dz * wr2, zn, v, dz


@numba.njit(inline="always")
def _diag_of(p, off):
    """Diagonal ``s`` holding position ``p`` (``off[s] <= p < off[s+1]``)."""
    lo = 1
    hi = off.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if off[mid] <= p:
            lo = mid
        else:
            hi = mid - 1
    return lo


@numba.njit(inline="always")
def _visit_key(a, b, c, off, n, block):
    """Rank of a constraint in the visiting order: ``(sb, s2, s1, q, side)`` packed."""
    a = np.int64(a)
    b = np.int64(b)
    c = np.int64(c)
    s1 = _diag_of(a, off)
    s2 = _diag_of(b, off) - s1
    q = a - off[s1]
    sb = (s1 - 1) // block
    return (((sb * n + s2) * n + s1) * n + q) * 3 + (c >> 29)


# ----------------------------------------------------------- support detection
# The support scan of :mod:`metricopt.problems._triangles` in the diagonal layout: a
# violated inequality has both short sides below the bulk value of x, so the wedges of
# the graph of those pairs (plus every triangle of the at most n pairs above the bulk)
# hold all of them. Exact, read only, and far cheaper than the full scan when most pairs
# sit at their upper value (Jaccard cc on ca-GrQc: see benchmarks/README.md).


#: The support scan replaces the full one when its wedges number at most this share of
#: the triplets of ``K_n``: a wedge costs far more than a triplet of the threaded,
#: vectorised full scan (serial, random access, counted then filled, then sorted into
#: the visiting order). Jaccard cc on polblogs (n = 1222) at share 0.41: support scan
#: 19.7 s, full scan 3.3 s on 2 threads, the same 7.6 million rows.
SUPPORT_SHARE = 0.05


def support_layout(x, off, n, share=SUPPORT_SHARE):
    """Data of the support scan of ``x`` (diagonal layout), or None when the full scan
    is cheaper (more than ``share`` of its triplets).

    Returns
    -------
    (indptr, indices, values, high, level, work) or None
        ``work``: wedges plus ``n`` per high pair (the triplets the scan may visit).
    """
    from ..problems._triangles import support_csr, support_level

    found = support_level(x, n, 0.0)
    if found is None:
        return None
    level, high, cut = found
    pos = np.flatnonzero(x < cut)
    diag = np.searchsorted(off[1:n], pos, side="right")  # off[diag] <= pos < off[diag + 1]
    first = pos - off[diag]
    indptr, indices, values, wedges = support_csr(first, first + diag, x[pos], n)
    work = int(wedges + high.size * n)
    if work > share * (n * (n - 1) * (n - 2) / 6):
        return None
    return indptr, indices, values, high, level, work


@numba.njit(inline="always")
def _emit(x, off, u, v, w, add_tol, out_a, out_b, out_c, k, worst):
    """Test ``x_uv <= x_uw + x_vw`` (long side ``{u, v}``); append it when violated by
    more than ``add_tol`` (in the list layout, while ``out_a`` has room)."""
    i = min(u, min(v, w))
    k3 = max(u, max(v, w))
    j = u + v + w - i - k3
    a = off[j - i] + i
    b = off[k3 - i] + i
    c = off[k3 - j] + j
    xa = x[a]
    xb = x[b]
    xc = x[c]
    lo = min(u, v)
    hi = max(u, v)
    if lo == i and hi == j:
        side = 0
        val = xa - xb - xc
    elif lo == i:
        side = 1
        val = xb - xa - xc
    else:
        side = 2
        val = xc - xa - xb
    if val > worst:
        worst = val
    if val > add_tol:
        if k < out_a.shape[0]:
            out_a[k] = a
            out_b[k] = b
            out_c[k] = c | (side << 29)
        k += 1
    return k, worst


@numba.njit(cache=True)
def support_detect(x, off, n, add_tol, indptr, indices, values, high, level, out_a, out_b,
                   out_c):
    """Every triangle inequality violated by more than ``add_tol`` and the exact largest
    violation, by the support scan (read only).

    At each node ``w`` the neighbours come sorted by ``x``: the wedge ``u - w - v`` can
    be violated on its long side ``{u, v}`` (at most ``level`` unless high) only if
    ``x_uw + x_vw < level - min(add_tol, 0)``, so the inner loop stops at the first
    ``v`` past that (the largest violation is exact: a wedge cut off has none above 0
    on that side). Call with empty outputs to count, then with outputs of that length
    to fill (scan order; sort them with :func:`visit_keys`). Returns ``(count, worst)``.
    """
    k = 0
    worst = 0.0
    for w in range(n):
        lo = indptr[w]
        hi = indptr[w + 1]
        for ia in range(lo, hi):
            u = indices[ia]
            xu = values[ia]
            for ib in range(ia + 1, hi):
                if xu + values[ib] >= level:  # sorted: no later v can violate
                    break
                v = indices[ib]
                p = off[abs(u - v)] + min(u, v)
                if x[p] > level:  # a high pair: all of its triangles come below
                    continue
                k, worst = _emit(x, off, u, v, w, add_tol, out_a, out_b, out_c, k, worst)
    for h in range(high.size):
        p = high[h]
        s = _diag_of(p, off)
        i = p - off[s]
        for w in range(n):
            if w != i and w != i + s:
                k, worst = _emit(x, off, i, i + s, w, add_tol, out_a, out_b, out_c, k, worst)
    return k, worst


@numba.njit(cache=True)
def visit_keys(a, b, c, off, n, block):
    """Rank of each constraint in the visiting order (:func:`dense_merge`'s order)."""
    keys = np.empty(a.shape[0], dtype=np.int64)
    for t in range(a.shape[0]):
        keys[t] = _visit_key(a[t], b[t], c[t], off, n, block)
    return keys


@numba.njit(cache=True)
def dense_merge(ca, cb, cc, cz, nc, na, nb, ncc, k, off, n, block):
    """Merge newly found constraints into the remembered list (both in visiting order).

    A new constraint that is already remembered is dropped (the remembered dual is
    kept); the others start with a zero dual. Returns ``(ta, tb, tc, tz, count)``.
    """
    m = nc + k
    ta = np.empty(m, dtype=np.int32)
    tb = np.empty(m, dtype=np.int32)
    tc = np.empty(m, dtype=np.int32)
    tz = np.empty(m)
    i = 0
    j = 0
    w = 0
    ki = _visit_key(ca[0], cb[0], cc[0], off, n, block) if nc > 0 else -1
    kj = _visit_key(na[0], nb[0], ncc[0], off, n, block) if k > 0 else -1
    while i < nc or j < k:
        if j >= k or (i < nc and ki <= kj):
            ta[w] = ca[i]
            tb[w] = cb[i]
            tc[w] = cc[i]
            tz[w] = cz[i]
            if j < k and ki == kj:
                j += 1
                if j < k:
                    kj = _visit_key(na[j], nb[j], ncc[j], off, n, block)
            i += 1
            if i < nc:
                ki = _visit_key(ca[i], cb[i], cc[i], off, n, block)
        else:
            ta[w] = na[j]
            tb[w] = nb[j]
            tc[w] = ncc[j]
            tz[w] = 0.0
            j += 1
            if j < k:
                kj = _visit_key(na[j], nb[j], ncc[j], off, n, block)
        w += 1
    return ta, tb, tc, tz, w


@numba.njit(cache=True)
def localise(ta, tb, tc, nc, nvar):
    """Compress the pairs the list uses, in place.

    Returns ``used``: the sorted global positions of the pairs that occur in the first
    ``nc`` constraints, whose ``ta, tb, tc`` are overwritten with their local positions
    (side bits kept; :func:`globalise` restores them).
    """
    mark = np.zeros(nvar, dtype=np.int32)
    for t in range(nc):
        mark[ta[t]] = 1
        mark[tb[t]] = 1
        mark[tc[t] & _MASK] = 1
    m = 0
    for p in range(nvar):
        if mark[p]:
            mark[p] = m
            m += 1
        else:
            mark[p] = -1
    used = np.empty(m, dtype=np.int64)
    for p in range(nvar):
        if mark[p] >= 0:
            used[mark[p]] = p
    for t in range(nc):
        ta[t] = mark[ta[t]]
        tb[t] = mark[tb[t]]
        tc[t] = mark[tc[t] & _MASK] | (tc[t] & ~_MASK)
    return used


@numba.njit(cache=True)
def globalise(used, ta, tb, tc, nc):
    """Inverse of :func:`localise` for the first ``nc`` constraints, in place."""
    for t in range(nc):
        ta[t] = used[ta[t]]
        tb[t] = used[tb[t]]
        tc[t] = used[tc[t] & _MASK] | (tc[t] & ~_MASK)


@numba.njit(fastmath=_FM, cache=True, boundscheck=False)
def dense_project(x, winv, ta, tb, tc, tz, nc):
    """One Hildreth pass over the first ``nc`` remembered triangle constraints.

    Returns ``(vmax, smax)``: the largest violation met and the largest ``|dz|``.
    """
    vmax = 0.0
    smax = 0.0
    for t in range(nc):
        ia = np.int64(ta[t])
        ib = np.int64(tb[t])
        cw = np.int64(tc[t])
        ic = cw & _MASK
        sd = cw >> 29
        if sd == 0:
            il, i1, i2 = ia, ib, ic
        elif sd == 1:
            il, i1, i2 = ib, ia, ic
        else:
            il, i1, i2 = ic, ia, ib
        xl, x1, x2, zn, v, dz = _step(x[il], x[i1], x[i2], winv[il], winv[i1], winv[i2],
                                      tz[t])
        if v > vmax:
            vmax = v
        if dz != 0.0:
            x[il] = xl
            x[i1] = x1
            x[i2] = x2
            if abs(dz) > smax:
                smax = abs(dz)
        tz[t] = zn
    return vmax, smax


@numba.njit(cache=True)
def dense_forget(ta, tb, tc, tz, nc):
    """Drop the constraints whose dual is zero, in place, keeping the order; returns
    the new count."""
    w = 0
    for t in range(nc):
        if tz[t] > 0.0:
            ta[w] = ta[t]
            tb[w] = tb[t]
            tc[w] = tc[t]
            tz[w] = tz[t]
            w += 1
    return w


def warm_up(n=4):
    """Load the kernels a dense run may call that a six-node warm-up solve does not pick:
    the support scan (:func:`support_detect`, :func:`visit_keys`), the exact violation of
    a stopped run's answer (:func:`._pf_scan.dense_max_violation`) and the conversion of
    the active rows handed to the polish to problem order."""
    from ..problems._triangles import support_csr
    from ._layouts import diagonal_offsets, diagonal_positions_to_packed
    from ._pf_scan import dense_max_violation

    x = np.ones(n * (n - 1) // 2)
    x[0] = 0.0
    indptr, indices, values, _ = support_csr(np.array([0]), np.array([1]), x[:1], n)
    empty_i = np.empty(0, dtype=np.int64)
    off = diagonal_offsets(n)
    none = np.empty(0, dtype=np.int32)
    support_detect(x, off, n, 0.0, indptr, indices, values, empty_i, 1.0, none, none, none)
    visit_keys(none, none, none, off, n, 16)
    dense_max_violation(x, n)
    diagonal_positions_to_packed(np.zeros(1, dtype=np.int64), n)
