"""Triangle scans of a support-sized point: pairs listed with values, every other at the bulk.

A *support point* on ``n`` nodes lists some pairs with their values; every pair not listed
has the bulk value ``b > 0`` (correlation clustering: ``b = 1``, the target of every
dissimilar pair). Its triangle inequalities ``x_ij <= x_ik + x_kj`` are scanned without
visiting the ``n^2`` pairs, from three facts (``tol >= 0`` the violation sought):

* If the long side is at most ``b`` and both short sides are ``>= 0``, a violation above
  ``tol`` needs ``x_ik + x_kj < b - tol``: both short sides are listed pairs below ``b``,
  edges of the *support graph*, and ``k`` is their common node. The wedges of the
  support graph, each node's neighbours sorted by value and the inner loop stopped at the
  first pair whose sum reaches ``b``, meet all of them (as in
  :mod:`metricopt.problems._triangles`, whose level is here the bulk). They are walked
  from one end ``u`` of the long side at a time, with ``u``'s listed values spread over a
  row of ``n`` values, so that the long side is read from that row rather than looked up.
* A long side ``x_ij > b`` (a *high* pair) with both short sides ``>= b`` is violated only
  when ``x_ij > 2 b``; otherwise a short side below ``b`` makes ``k`` a support-graph
  neighbour of ``i`` or ``j``. High pairs are checked against those neighbours, or against
  every ``k`` when ``x_ij > 2 b``.
* A short side below 0 (a *negative* pair) is checked against every third node.

So a scan costs ``O(wedges of the support graph + sum over high pairs of their support
degree + n * (pairs above 2 b or below 0))``; QP and LP iterates of correlation
clustering keep ``0 <= x <= 1``, which leaves the wedges only. Pair values are found by
an open-addressing hash of the listed pairs (:func:`pair_table`); a pair not in it is at
the bulk.

Every kernel is pure; :func:`reference_violations` is the slow check used by the tests.
"""

import numba
import numpy as np

__all__ = ["pair_keys", "pair_table", "table_find", "table_lookup", "table_insert", "table_grow",
           "support_neighbours", "scan_support", "scan_support_part", "support_max_violation",
           "reference_violations", "count_near_pairs", "work_ranges"]

_EMPTY = -1


def pair_keys(i, j, n):
    """``min(i, j) * n + max(i, j)``: the int64 key of each pair (vectorised)."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    return np.minimum(i, j) * np.int64(n) + np.maximum(i, j)


@numba.njit(inline="always")
def _slot(key, mask):
    """Home slot of ``key`` (a multiplicative hash; the table size is a power of two)."""
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(h >> np.uint64(20)) & mask


@numba.njit(cache=True)
def table_insert(keys, vals, key, value):
    """Insert ``key -> value`` (overwriting); the table must have a free slot."""
    mask = keys.shape[0] - 1
    s = _slot(key, mask)
    while keys[s] != _EMPTY and keys[s] != key:
        s = (s + 1) & mask
    keys[s] = key
    vals[s] = value


@numba.njit(cache=True)
def table_find(keys, vals, key):
    """The value stored for ``key``, or -1."""
    mask = keys.shape[0] - 1
    s = _slot(key, mask)
    while keys[s] != _EMPTY:
        if keys[s] == key:
            return vals[s]
        s = (s + 1) & mask
    return -1


@numba.njit(cache=True)
def table_lookup(keys, vals, query):
    """:func:`table_find` of each key of ``query`` (int64 array; -1 where absent)."""
    out = np.empty(query.shape[0], dtype=np.int64)
    for t in range(query.shape[0]):
        out[t] = table_find(keys, vals, query[t])
    return out


@numba.njit(cache=True)
def _fill(keys, vals, pair_key, start):
    for t in range(pair_key.shape[0]):
        table_insert(keys, vals, pair_key[t], start + t)


def pair_table(pair_key, capacity=None):
    """Open-addressing table ``key -> position`` of the keys ``pair_key`` (positions
    ``0 .. len - 1``), at most half full: ``(keys, vals)``, 16 bytes per slot."""
    size = max(int(capacity or 0), 2 * int(pair_key.shape[0]), 16)
    slots = 1 << int(np.ceil(np.log2(size)))
    keys = np.full(slots, _EMPTY, dtype=np.int64)
    vals = np.empty(slots, dtype=np.int64)
    _fill(keys, vals, np.ascontiguousarray(pair_key, dtype=np.int64), 0)
    return keys, vals


def table_grow(table, pair_key, start):
    """``table`` with the keys ``pair_key`` added at positions ``start, start + 1, ...``
    (rebuilt at most half full when it would be more than half full: 32 to 64 bytes per
    key)."""
    keys, vals = table
    used = int(start) + int(pair_key.shape[0])
    if 2 * used > keys.shape[0]:
        old = keys != _EMPTY
        all_keys = np.empty(used, dtype=np.int64)
        all_keys[vals[old]] = keys[old]
        all_keys[start:] = pair_key
        return pair_table(all_keys)
    _fill(keys, vals, np.ascontiguousarray(pair_key, dtype=np.int64), start)
    return keys, vals


def support_neighbours(pi, pj, x, n, bulk):
    """CSR of the support graph: the listed pairs with ``0 <= x < bulk``, each node's
    neighbours sorted by value (:func:`metricopt.problems._triangles.support_csr`).
    Returns ``(indptr, nodes, values)``."""
    from ._triangles import support_csr

    keep = (x >= 0.0) & (x < bulk)
    indptr, nodes, values, _ = support_csr(pi[keep], pj[keep], x[keep], n)
    return indptr, nodes, values


@numba.njit(inline="always")
def _value(tk, tv, x, bulk, n, u, v):
    """Value of the pair ``{u, v}``: listed, or the bulk."""
    p = table_find(tk, tv, min(u, v) * n + max(u, v))
    return bulk if p < 0 else x[p]


@numba.njit(inline="always")
def _record(u, v, k, val, tol, out, cnt, worst):
    """Note the violation ``val`` of the inequality with long side ``{u, v}`` and third
    node ``k``; store it as (sorted nodes, side) when above ``tol`` and ``out`` has room.
    Side 0, 1, 2: the long side is ``(a, b)``, ``(a, c)``, ``(b, c)`` of ``a < b < c``."""
    if val > worst:
        worst = val
    if val > tol:
        if cnt < out.shape[0]:
            a = min(u, min(v, k))
            c = max(u, max(v, k))
            b = u + v + k - a - c
            lo = min(u, v)
            hi = max(u, v)
            side = 0 if (lo == a and hi == b) else (1 if lo == a else 2)
            out[cnt, 0] = a
            out[cnt, 1] = b
            out[cnt, 2] = c
            out[cnt, 3] = side
        cnt += 1
    return cnt, worst


@numba.njit(cache=True)
def scan_support(pi, pj, x, n, bulk, tk, tv, indptr, nodes, values, tol, out):
    """Every triangle inequality of the support point violated by more than ``tol``,
    and the largest violation over all of them (module docstring).

    Parameters
    ----------
    pi, pj : int64 arrays
        Nodes of the listed pairs (``pi < pj``).
    x : float64 array
        Their values.
    n : int
    bulk : float
        The value of every other pair (``> 0``).
    tk, tv : int64 arrays
        :func:`pair_table` of the listed pairs.
    indptr, nodes, values : arrays
        :func:`support_neighbours`.
    tol : float
    out : int32 array of shape (k, 4)
        Filled with ``(a, b, c, side)`` of the violated inequalities while it has room
        (``k = 0``: count only).

    Returns
    -------
    (count, worst)
        ``worst`` is 0 when nothing is violated. An inequality met twice (a high or
        negative pair is also a wedge) is counted and stored twice.
    """
    return scan_support_part(pi, pj, x, n, bulk, tk, tv, indptr, nodes, values, tol, out, 0, n,
                             True)


@numba.njit(cache=True, nogil=True)
def scan_support_part(pi, pj, x, n, bulk, tk, tv, indptr, nodes, values, tol, out, u_lo, u_hi,
                      listed):
    """:func:`scan_support` over a share of the work: the wedges of the long sides ``{u, v}``
    with ``u_lo <= u < u_hi`` (``u < v``), then, when ``listed``, the listed pairs above the
    bulk or below 0. The shares ``[0, a), [a, b), ..., [z, n)`` and one with ``listed``,
    concatenated in that order, find what :func:`scan_support` finds, in its order.
    """
    cnt = 0
    worst = 0.0
    # the listed pairs outside the support graph (above the bulk or below 0), per node
    oindptr = np.zeros(n + 1, dtype=np.int64)
    for t in range(x.shape[0]):
        if not 0.0 <= x[t] <= bulk:
            oindptr[pi[t] + 1] += 1
            oindptr[pj[t] + 1] += 1
    for v in range(n):
        oindptr[v + 1] += oindptr[v]
    onodes = np.empty(oindptr[n], dtype=np.int64)
    ovalues = np.empty(oindptr[n])
    ofill = oindptr[:n].copy()
    for t in range(x.shape[0]):
        if not 0.0 <= x[t] <= bulk:
            for a, b in ((pi[t], pj[t]), (pj[t], pi[t])):
                onodes[ofill[a]] = b
                ovalues[ofill[a]] = x[t]
                ofill[a] += 1
    # long side {u, v}, u < v: the values of u's pairs in a row of n (the bulk elsewhere),
    # then every w of u's support neighbours and v of w's, sorted: the wedges u - w - v
    row = np.full(n, bulk)
    for u in range(u_lo, u_hi):
        lo = indptr[u]
        hi = indptr[u + 1]
        if lo == hi:
            continue
        for q in range(lo, hi):
            row[nodes[q]] = values[q]
        for q in range(oindptr[u], oindptr[u + 1]):
            row[onodes[q]] = ovalues[q]
        for ia in range(lo, hi):
            w = nodes[ia]
            xuw = values[ia]
            for ib in range(indptr[w], indptr[w + 1]):
                xwv = values[ib]
                if xuw + xwv >= bulk:  # sorted: no later pair can violate
                    break
                v = nodes[ib]
                if v <= u:
                    continue
                xl = row[v]
                if xl > bulk:  # a high long side: checked below
                    continue
                cnt, worst = _record(u, v, w, xl - xuw - xwv, tol, out, cnt, worst)
        for q in range(lo, hi):
            row[nodes[q]] = bulk
        for q in range(oindptr[u], oindptr[u + 1]):
            row[onodes[q]] = bulk
    for t in range(x.shape[0] if listed else 0):
        i = pi[t]
        j = pj[t]
        xt = x[t]
        if xt > 2.0 * bulk or xt < 0.0:
            # every third node (a negative pair as a short side, or a long side beyond
            # any two bulk sides)
            for k in range(n):
                if k == i or k == j:
                    continue
                xik = _value(tk, tv, x, bulk, n, i, k)
                xjk = _value(tk, tv, x, bulk, n, j, k)
                cnt, worst = _record(i, j, k, xt - xik - xjk, tol, out, cnt, worst)
                if xt < 0.0:
                    cnt, worst = _record(i, k, j, xik - xt - xjk, tol, out, cnt, worst)
                    cnt, worst = _record(j, k, i, xjk - xt - xik, tol, out, cnt, worst)
        elif xt > bulk:
            # a short side below the bulk: k is a support neighbour of i or of j
            for end in range(2):
                c = i if end == 0 else j
                for q in range(indptr[c], indptr[c + 1]):
                    k = nodes[q]
                    if k == i or k == j:
                        continue
                    xik = _value(tk, tv, x, bulk, n, i, k)
                    xjk = _value(tk, tv, x, bulk, n, j, k)
                    if end == 1 and 0.0 <= xik < bulk:
                        continue  # met from i already
                    cnt, worst = _record(i, j, k, xt - xik - xjk, tol, out, cnt, worst)
    return cnt, worst


def support_max_violation(pi, pj, x, n, bulk, table=None):
    """Largest violation of any triangle inequality of the support point (0 if none)."""
    pi = np.ascontiguousarray(pi, dtype=np.int64)
    pj = np.ascontiguousarray(pj, dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=np.float64)
    if table is None:
        table = pair_table(pair_keys(pi, pj, n))
    indptr, nodes, values = support_neighbours(pi, pj, x, n, float(bulk))
    _, worst = scan_support(pi, pj, x, n, float(bulk), *table, indptr, nodes, values, np.inf,
                            np.empty((0, 4), dtype=np.int32))
    return max(float(worst), 0.0)


def reference_violations(pi, pj, x, n, bulk, tol):
    """Slow reference (O(n^3), small ``n`` only): the set of ``(a, b, c, side)`` violated by
    more than ``tol`` and the largest violation, from the full pair matrix."""
    full = np.full((n, n), float(bulk))
    full[pi, pj] = x
    full[pj, pi] = x
    found = set()
    worst = 0.0
    for a in range(n):
        for b in range(a + 1, n):
            for c in range(b + 1, n):
                sides = ((full[a, b], full[a, c], full[b, c]),
                         (full[a, c], full[a, b], full[b, c]),
                         (full[b, c], full[a, b], full[a, c]))
                for side, (long, s1, s2) in enumerate(sides):
                    v = long - s1 - s2
                    worst = max(worst, v)
                    if v > tol:
                        found.add((a, b, c, side))
    return found, worst


@numba.njit(cache=True)
def _count_near_pairs(indptr, nbrs, n):
    mark = np.full(n, -1, dtype=np.int64)
    count = 0
    for u in range(n):
        for a in range(indptr[u], indptr[u + 1]):
            v = nbrs[a]
            if v > u and mark[v] != u:
                mark[v] = u
                count += 1
            w = v
            for b in range(indptr[w], indptr[w + 1]):
                v = nbrs[b]
                if v > u and mark[v] != u:
                    mark[v] = u
                    count += 1
    return count


def count_near_pairs(graph):
    """The number of node pairs at distance 1 or 2 in ``graph``: the explicit pairs of the
    Jaccard transform (edges and pairs with a common neighbour), in ``O(wedges)`` time
    and ``O(n)`` memory, without the product ``A A`` of the build.

    The slow reference is the pattern of ``triu(A + A A, 1)`` (used by the tests).
    """
    adj = graph.adjacency()
    return int(_count_near_pairs(adj.indptr.astype(np.int64), adj.indices.astype(np.int64),
                                 graph.n))


def work_ranges(indptr, nodes, k):
    """``k`` or fewer contiguous ranges ``[lo, hi)`` of the nodes with about equal wedge
    work (the degrees in the support graph of each node's support neighbours).

    Parameters
    ----------
    indptr, nodes : arrays
        The support graph (:func:`metricopt.problems._support_scan.support_neighbours`).
    k : int

    Returns
    -------
    ndarray of shape (m + 1,)
        Range bounds ``0 = b_0 < b_1 < ... < b_m = n``.
    """
    n = indptr.shape[0] - 1
    deg = np.diff(indptr).astype(np.float64)
    owner = np.repeat(np.arange(n), np.diff(indptr))
    work = deg + np.bincount(owner, weights=deg[nodes], minlength=n)
    total = float(work.sum())
    if n == 0 or total == 0.0 or k <= 1:
        return np.array([0, n], dtype=np.int64)
    cuts = np.searchsorted(np.cumsum(work), total * np.arange(1, k) / k, side="right")
    return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)
