"""Separation kernels of the cluster-editing cutting-plane LP (see :mod:`.editing_lp`).

Every kernel takes the model's pairs as a symmetric CSR (``indptr, indices``) with the
current value ``x`` of each entry, and the "close" pairs (``x < 1``) as a second CSR;
a pair outside the model is at its target, 1 (separated): the model holds every
adjacent pair. All inputs are contiguous, checked by the caller.
"""

import numba
import numpy as np


@numba.njit(cache=True)
def violated_triangles(k, indptr, indices, xval, cptr, cidx, cx, tol, fill, out, viol):
    """Count (``fill=False``) or write triangles ``x_ab > x_ac + x_bc + tol``.

    ``out[t] = (a, b, c)`` with ``a < b`` and ``c`` the apex; ``viol[t]`` the violation.
    """
    mark = np.full(k, 1.0)
    t = 0
    for c in range(k):
        for p in range(cptr[c], cptr[c + 1]):
            a = cidx[p]
            for q in range(indptr[a], indptr[a + 1]):
                mark[indices[q]] = xval[q]
            for r in range(cptr[c], cptr[c + 1]):
                b = cidx[r]
                if b <= a:
                    continue
                v = mark[b] - cx[p] - cx[r]
                if v > tol:
                    if fill:
                        out[t, 0] = a
                        out[t, 1] = b
                        out[t, 2] = c
                        viol[t] = v
                    t += 1
            for q in range(indptr[a], indptr[a + 1]):
                mark[indices[q]] = 1.0
    return t


@numba.njit(cache=True)
def violated_stars(k, indptr, indices, xval, cptr, cidx, cx, weight_cap, shift, tol, offsets, members,
                   viol):
    """Greedy separation of the star 2-partition inequalities, one try per centre.

    For a centre ``s`` and a set ``T`` of other nodes (``y = 1 - x``, "together")::

        sum_{t in T} y_st - sum_{t < t' in T} y_tt' <= 1,

    the Grötschel-Wakabayashi 2-partition inequality with ``S = {s}``; in ``x``:
    ``sum_{t<t'} x_tt' - sum_t x_st <= (|T| - 1)(|T| - 2) / 2``. ``T`` grows from the
    close pairs of ``s`` (at most ``weight_cap`` of them, smallest ``x_st`` first, the
    ``shift``-th one moved to the front) while a node adds a positive amount to the
    left-hand side. A set with ``|T| >= 3`` whose
    left-hand side exceeds 1 by more than ``tol`` is written: ``members`` gets
    ``s`` then ``T``; returns the number of rows and of members written.
    """
    mark = np.full(k, 1.0)
    row = 0
    pos = 0
    for s in range(k):
        lo, hi = cptr[s], cptr[s + 1]
        deg = hi - lo
        if deg < 3:
            continue
        if shift >= deg:
            continue
        order = np.argsort(cx[lo:hi])[:weight_cap]
        if shift > 0 and shift < order.size:
            first = order[shift]
            order[1:shift + 1] = order[:shift].copy()
            order[0] = first
        tset = np.empty(order.size, dtype=np.int64)
        nt = 0
        lhs = 0.0
        for o in order:
            t = cidx[lo + o]
            gain = 1.0 - cx[lo + o]
            for q in range(indptr[t], indptr[t + 1]):
                mark[indices[q]] = xval[q]
            for i in range(nt):
                gain -= 1.0 - mark[tset[i]]
            for q in range(indptr[t], indptr[t + 1]):
                mark[indices[q]] = 1.0
            if gain > tol:
                tset[nt] = t
                nt += 1
                lhs += gain
        if nt >= 3 and lhs > 1.0 + tol:
            if row + 1 >= offsets.size or pos + nt + 1 > members.size:
                break
            members[pos] = s
            for i in range(nt):
                members[pos + 1 + i] = tset[i]
            pos += nt + 1
            viol[row] = lhs - 1.0
            row += 1
            offsets[row] = pos
    return row, pos
