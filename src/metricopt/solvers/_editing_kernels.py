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


#: Largest ``weight_cap`` of :func:`violated_stars`: a set of candidates is one uint64 mask.
MAX_STAR_CANDIDATES = 64


@numba.njit(cache=True)
def _star_candidates(s, indptr, indices, xval, cptr, cidx, cx, weight_cap, mark, cand, a, y):
    """The close nodes of ``s`` (smallest ``x_st`` first, at most ``weight_cap``) into
    ``cand``; ``a[i] = 1 - x_s,cand_i`` and ``y[i, j] = 1 - x`` between candidates."""
    lo, hi = cptr[s], cptr[s + 1]
    order = np.argsort(cx[lo:hi], kind="mergesort")[:weight_cap]
    m = order.size
    for i in range(m):
        cand[i] = cidx[lo + order[i]]
        a[i] = 1.0 - cx[lo + order[i]]
    for i in range(m):
        t = cand[i]
        for q in range(indptr[t], indptr[t + 1]):
            mark[indices[q]] = xval[q]
        for j in range(m):
            y[i, j] = 1.0 - mark[cand[j]] if j != i else 0.0
        for q in range(indptr[t], indptr[t + 1]):
            mark[indices[q]] = 1.0
    return m


@numba.njit(cache=True)
def _mix(h):
    """A 32-bit integer hash (murmur-style finaliser) of ``h`` (``0 <= h < 2**32``)."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


@numba.njit(cache=True)
def star_order(m, s, r):
    """The order in which try ``r`` of centre ``s`` offers its ``m`` candidates.

    Tries ``r < m``: candidate ``r`` first, then the others from the closest. Later
    tries: a permutation drawn from a hash of ``(s, r, i)``, the same on every run and
    machine (small neighbourhoods get as many tries as large ones).
    """
    perm = np.empty(m, dtype=np.int64)
    if r < m:
        perm[0] = r
        for i in range(r):
            perm[i + 1] = i
        for i in range(r + 1, m):
            perm[i] = i
        return perm
    key = np.empty(m, dtype=np.int64)
    for i in range(m):
        key[i] = _mix((s * 0x9E3779B1 + r * 0x7FEB352D + i * 0x846CA68B) & 0xFFFFFFFF)
    return np.argsort(key, kind="mergesort")


@numba.njit(cache=True)
def _best_star(m, a, y, perm, tol, together):
    """Greedy then local search for a large ``sum_{T} a - sum_{pairs of T} y``.

    The greedy adds candidates in the order ``perm`` (:func:`star_order`) while each adds more than
    ``tol``; the local search then removes the member whose removal gains most, or adds
    the outsider that gains most, while one gains more than ``tol`` (each step raises the
    left-hand side, so it ends). ``together[i]`` is the sum of ``y[i, T]``. Returns
    ``(greedy mask, its left-hand side, final mask, its left-hand side)``.
    """
    mask = np.uint64(0)
    lhs = 0.0
    together[:m] = 0.0
    for step in range(m):
        i = perm[step]
        gain = a[i] - together[i]
        if gain > tol:
            mask |= np.uint64(1) << np.uint64(i)
            lhs += gain
            for u in range(m):
                together[u] += y[u, i]
    greedy, greedy_lhs = mask, lhs
    for _ in range(4 * m):
        best, best_i = tol, -1
        for i in range(m):
            inside = (mask >> np.uint64(i)) & np.uint64(1)
            gain = together[i] - a[i] if inside else a[i] - together[i]
            if gain > best:
                best, best_i = gain, i
        if best_i < 0:
            break
        bit = np.uint64(1) << np.uint64(best_i)
        sign = -1.0 if mask & bit else 1.0
        mask ^= bit
        lhs += best
        for u in range(m):
            together[u] += sign * y[u, best_i]
    return greedy, greedy_lhs, mask, lhs


@numba.njit(cache=True)
def violated_stars(k, indptr, indices, xval, cptr, cidx, cx, weight_cap, n_tries, tol, cand,
                   row_centre, row_mask, row_viol):
    """Separation of the star 2-partition inequalities: greedy and local search.

    For a centre ``s`` and a set ``T`` of other nodes (``y = 1 - x``, "together")::

        sum_{t in T} y_st - sum_{t < t' in T} y_tt' <= 1,

    the Grötschel-Wakabayashi 2-partition inequality with ``S = {s}``; in ``x``:
    ``sum_{t<t'} x_tt' - sum_t x_st <= (|T| - 1)(|T| - 2) / 2``. ``T`` is drawn from the
    close pairs of ``s`` (at most ``weight_cap`` of them, at most
    :data:`MAX_STAR_CANDIDATES`, smallest ``x_st`` first, written to ``cand[s]``, padded
    with -1). Try ``r`` (``r < n_tries``) offers the candidates in the order
    :func:`star_order` to a greedy and a local search (:func:`_best_star`). Every
    distinct set of a centre with ``|T| >= 3`` whose left-hand side exceeds 1 by more
    than ``tol`` is a row: its centre, its mask over ``cand[s]`` and its violation, for
    the greedy set of a try and for its local optimum. Returns the number of rows (at
    most ``2 k n_tries``, the size the row arrays need).
    """
    mark = np.full(k, 1.0)
    cap = min(weight_cap, MAX_STAR_CANDIDATES)
    a = np.empty(cap)
    y = np.empty((cap, cap))
    together = np.empty(cap)
    row = 0
    for s in range(k):
        cand[s, :] = -1
        if cptr[s + 1] - cptr[s] < 3:
            continue
        m = _star_candidates(s, indptr, indices, xval, cptr, cidx, cx, cap, mark, cand[s], a, y)
        first_row = row
        for r in range(n_tries):
            perm = star_order(m, s, r)
            greedy, greedy_lhs, best, best_lhs = _best_star(m, a, y, perm, tol, together)
            for mask, lhs in ((greedy, greedy_lhs), (best, best_lhs)):
                size = 0
                rest = mask
                while rest:
                    size += 1
                    rest &= rest - np.uint64(1)
                if size < 3 or lhs <= 1.0 + tol:
                    continue
                duplicate = False
                for q in range(first_row, row):
                    if row_mask[q] == mask:
                        duplicate = True
                        break
                if duplicate:
                    continue
                row_centre[row] = s
                row_mask[row] = mask
                row_viol[row] = lhs - 1.0
                row += 1
    return row


def _star_order_reference(m, s, r):
    """Pure-Python :func:`star_order`."""
    if r < m:
        return [r] + [i for i in range(m) if i != r]

    def mix(h):
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & 0xFFFFFFFF
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & 0xFFFFFFFF
        return h ^ (h >> 16)

    key = [mix((s * 0x9E3779B1 + r * 0x7FEB352D + i * 0x846CA68B) & 0xFFFFFFFF) for i in range(m)]
    return sorted(range(m), key=lambda i: key[i])


def violated_stars_reference(k, indptr, indices, xval, cptr, cidx, cx, weight_cap, n_tries, tol):
    """Pure-Python :func:`violated_stars` (for the tests): ``(cand, rows)`` with ``rows`` a
    list of ``(centre, frozenset of members, violation)``."""
    cap = min(weight_cap, MAX_STAR_CANDIDATES)
    value = {}
    for u in range(k):
        for q in range(indptr[u], indptr[u + 1]):
            value[(u, int(indices[q]))] = float(xval[q])
    cand = np.full((k, cap), -1, dtype=np.int64)
    rows = []
    for s in range(k):
        lo, hi = cptr[s], cptr[s + 1]
        if hi - lo < 3:
            continue
        order = np.argsort(cx[lo:hi], kind="mergesort")[:cap]
        c = [int(cidx[lo + o]) for o in order]
        cand[s, :len(c)] = c
        a = [1.0 - float(cx[lo + o]) for o in order]

        def lhs_of(members, a=a, c=c):
            pairs = sum(1.0 - value.get((c[i], c[j]), 1.0) for i in members for j in members if i < j)
            return sum(a[i] for i in members) - pairs

        found = []
        for r in range(n_tries):
            members = set()
            for i in _star_order_reference(len(c), s, r):
                if lhs_of(members | {i}) - lhs_of(members) > tol:
                    members.add(i)
            greedy = set(members)
            for _ in range(4 * len(c)):
                base = lhs_of(members)
                gains = [(lhs_of(members ^ {i}) - base, i) for i in range(len(c))]
                best, best_i = tol, -1
                for g, i in gains:  # the first largest, as the kernel
                    if g > best:
                        best, best_i = g, i
                if best_i < 0:
                    break
                members ^= {best_i}
            for chosen in (greedy, members):
                total = lhs_of(chosen)
                key = frozenset(c[i] for i in chosen)
                if len(chosen) >= 3 and total > 1.0 + tol and key not in found:
                    found.append(key)
                    rows.append((s, key, total - 1.0))
    return cand, rows
