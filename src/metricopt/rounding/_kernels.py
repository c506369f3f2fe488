"""Numba kernels of the rounding algorithms.

Every kernel is pure: arrays and scalars in, arrays and scalars out; no globals, no
I/O. Randomness comes in as an integer ``seed`` that initialises a local SplitMix64
state (an array of shape (1,), uint64), so a kernel called twice with the same
arguments returns the same result. Inputs are assumed checked by the Python front
ends: contiguous arrays, int64 node ids, float64 pair values (the pivot kernels also
accept uint8 0/1 values for KwikCluster).

Dense pair values use the packed row-major order of :mod:`metricopt.problems._pairs`;
sparse ones are reached through a CSR adjacency ``(indptr, indices, var)`` where
``var[e]`` is the variable of the pair ``(row, indices[e])``.
"""

import numba
import numpy as np

__all__ = [
    "pivot_dense",
    "pivot_sparse",
    "cd_pivot",
    "region_grow_dense",
    "region_grow_sparse",
    "positive_volume_dense",
    "cc_dense_cost",
    "sweep_rows",
    "sweep_order",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@numba.njit(cache=True)
def _next_u64(state):
    """SplitMix64 step (Steele, Lea & Flood 2014); ``state`` is uint64[1]."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def _uniform(state):
    """Uniform double in [0, 1) with 53 random bits."""
    return np.float64(_next_u64(state) >> np.uint64(11)) * _TO_UNIT


@numba.njit(cache=True, inline="always")
def _packed(i, j, n):
    """Packed index of the pair {i, j}, i != j."""
    if i > j:
        i, j = j, i
    return i * n - (i * (i + 1)) // 2 + (j - i - 1)


@numba.njit(cache=True, inline="always")
def _clip01(v):
    if v < 0.0:
        return 0.0
    if v > 1.0:
        return 1.0
    return v


@numba.njit(cache=True, inline="always")
def _enter_ball(v, indptr, indices, var, labels, w, d, x, dist, inball, cut_w, cut_wx, inner):
    """Node ``v`` joins the growing ball: the similar pairs to unclustered nodes move from
    the cut to the inside (``v``'s neighbours already in it) or into the cut (the others).
    Returns the updated ``(cut_w, cut_wx, inner)``."""
    dv = dist[v]
    for e in range(indptr[v], indptr[v + 1]):
        z = indices[e]
        if labels[z] >= 0:
            continue
        wv = w[var[e]]
        if wv > 0.0 and d[var[e]] < 0.5:
            if inball[z]:
                cut_w -= wv
                cut_wx -= wv * dist[z]
                inner += wv * _clip01(x[var[e]])
            else:
                cut_w += wv
                cut_wx += wv * dv
    return cut_w, cut_wx, inner


# --------------------------------------------------------------------------- pivot
@numba.njit(cache=True)
def pivot_dense(x, n, order, threshold, seed):
    """Pivot rounding of packed pair values ``x`` on ``n`` nodes.

    Nodes are visited in ``order``; the first unclustered node is the pivot ``p`` and
    every unclustered ``j`` joins its cluster when ``x[pj] < threshold`` (threshold
    mode, ``threshold >= 0``) or with probability ``1 - clip(x[pj], 0, 1)`` (LP-pivot,
    ``threshold < 0``; one uniform draw per candidate, in visiting order).

    Returns
    -------
    labels : int64 array of shape (n,)
        Cluster ids in pivot order.
    """
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(seed)
    labels = np.full(n, -1, dtype=np.int64)
    alive = order.copy()
    n_alive = n
    k = 0
    while n_alive > 0:
        p = alive[0]
        labels[p] = k
        kept = 0
        for t in range(1, n_alive):
            j = alive[t]
            xv = x[_packed(p, j, n)]
            if threshold >= 0.0:
                join = xv < threshold
            else:
                join = _uniform(state) < 1.0 - xv
            if join:
                labels[j] = k
            else:
                alive[kept] = j  # keeps the visiting order
                kept += 1
        n_alive = kept
        k += 1
    return labels


@numba.njit(cache=True)
def pivot_sparse(x, indptr, indices, var, order, threshold, seed):
    """Pivot rounding when only the pairs of a graph carry values.

    As :func:`pivot_dense`, but the candidates of a pivot are its unclustered graph
    neighbours (adjacency order); a pair without a variable counts as ``x = 1`` and is
    never joined.
    """
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(seed)
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int64)
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        labels[p] = k
        for e in range(indptr[p], indptr[p + 1]):
            j = indices[e]
            if labels[j] >= 0:
                continue
            xv = x[var[e]]
            if threshold >= 0.0:
                join = xv < threshold
            else:
                join = _uniform(state) < 1.0 - xv
            if join:
                labels[j] = k
        k += 1
    return labels


@numba.njit(cache=True)
def cd_pivot(x, indptr, indices, var, order, threshold):
    """Cluster-deletion pivot rounding with a clique guard.

    The first unclustered node ``p`` of ``order`` is the pivot; its unclustered
    neighbours ``j`` with ``x[pj] < threshold`` are candidates, taken in increasing
    ``x[pj]`` (ties: adjacency order). A candidate joins only if it is adjacent to every
    node already in the cluster, so clusters are always cliques; for an LP-feasible
    ``x`` (wedge constraints) and ``threshold = 1/2`` every candidate joins.

    Returns
    -------
    labels : int64 array of shape (n,)
    n_skipped : int
        Candidates refused by the clique guard (0 for LP-feasible ``x``).
    """
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int64)
    hits = np.zeros(n, dtype=np.int64)  # members adjacent to each node
    members = np.empty(n, dtype=np.int64)
    cand = np.empty(n, dtype=np.int64)
    cval = np.empty(n, dtype=np.float64)
    k = 0
    n_skipped = 0
    for p in order:
        if labels[p] >= 0:
            continue
        labels[p] = k
        nc = 0
        for e in range(indptr[p], indptr[p + 1]):
            j = indices[e]
            if labels[j] < 0 and x[var[e]] < threshold:
                cand[nc] = j
                cval[nc] = x[var[e]]
                nc += 1
        if nc > 0:
            members[0] = p
            size = 1
            for e in range(indptr[p], indptr[p + 1]):
                hits[indices[e]] += 1
            rank = np.argsort(cval[:nc], kind="mergesort")
            for r in range(nc):
                j = cand[rank[r]]
                if hits[j] == size:
                    labels[j] = k
                    members[size] = j
                    size += 1
                    for e in range(indptr[j], indptr[j + 1]):
                        hits[indices[e]] += 1
                else:
                    n_skipped += 1
            for s in range(size):
                v = members[s]
                for e in range(indptr[v], indptr[v + 1]):
                    hits[indices[e]] = 0
        k += 1
    return labels, n_skipped


# ------------------------------------------------------------------ region growing
@numba.njit(cache=True)
def positive_volume_dense(x, w, d):
    """``sum w * clip(x, 0, 1)`` over the similar pairs (``d < 1/2``, ``w > 0``)."""
    total = 0.0
    for v in range(x.size):
        if w[v] > 0.0 and d[v] < 0.5:
            total += w[v] * _clip01(x[v])
    return total


@numba.njit(cache=True)
def _choose_ball(vol, cut, nsets, c_ln):
    """Index of the first ball with ``cut <= c_ln * vol``, else the one of least cut/vol."""
    best = 0
    best_ratio = np.inf
    for g in range(nsets):
        if cut[g] <= c_ln * vol[g]:
            return g
        ratio = cut[g] / vol[g] if vol[g] > 0.0 else np.inf
        if ratio < best_ratio:
            best_ratio = ratio
            best = g
    return best


@numba.njit(cache=True)
def region_grow_dense(x, w, d, n, order, radius, c_ln, seed_volume):
    """Charikar-Guruswami-Wirth region growing on packed pair values.

    For the first unclustered node ``u`` of ``order``, the balls
    ``B(u, r) = {v unclustered : clip(x[uv]) <= r}``, ``r < radius``, are scanned in
    increasing ``r``. With the similar pairs (``w > 0``, ``d < 1/2``) among the
    unclustered nodes as "positive edges", a ball's cut is the weight of the positive
    edges leaving it and its volume at radius ``r`` is ::

        seed_volume + sum_{inside} w x + sum_{leaving (v in ball)} w (r - x[uv]).

    The first ball with ``cut <= c_ln * volume`` (volume at the largest ``r`` that gives
    the same ball) becomes a cluster; if none qualifies (possible only when ``x`` is not
    a metric), the ball of least cut/volume does.

    Returns
    -------
    labels : int64 array of shape (n,)
    """
    labels = np.full(n, -1, dtype=np.int64)
    alive = order.copy()
    n_alive = n
    dist = np.zeros(n, dtype=np.float64)
    inball = np.zeros(n, dtype=np.bool_)
    cand = np.empty(n, dtype=np.int64)
    cval = np.empty(n, dtype=np.float64)
    members = np.empty(n, dtype=np.int64)
    vol = np.empty(n, dtype=np.float64)
    cut = np.empty(n, dtype=np.float64)
    ends = np.empty(n, dtype=np.int64)
    k = 0
    while n_alive > 0:
        u = alive[0]
        nc = 0
        for t in range(1, n_alive):
            v = alive[t]
            dv = _clip01(x[_packed(u, v, n)])
            dist[v] = dv
            if dv < radius:
                cand[nc] = v
                cval[nc] = dv
                nc += 1
        dist[u] = 0.0
        rank = np.argsort(cval[:nc], kind="mergesort")
        inner = 0.0  # sum w x over positive edges inside the ball
        cut_w = 0.0  # weight of positive edges leaving the ball
        cut_wx = 0.0  # sum of w * dist(inner endpoint) over those edges
        size = 0
        nsets = 0
        pos = -1  # -1: the centre, then indices into rank
        while True:
            r_now = 0.0 if pos < 0 else cval[rank[pos]]
            # add every node at distance r_now (the centre first)
            while True:
                if pos < 0:
                    v = u
                else:
                    if pos >= nc or cval[rank[pos]] > r_now:
                        break
                    v = cand[rank[pos]]
                pos += 1
                inball[v] = True
                members[size] = v
                size += 1
                dv = dist[v]
                for t in range(n_alive):
                    z = alive[t]
                    if z == v:
                        continue
                    idx = _packed(v, z, n)
                    wv = w[idx]
                    if wv > 0.0 and d[idx] < 0.5:
                        if inball[z]:
                            cut_w -= wv
                            cut_wx -= wv * dist[z]
                            inner += wv * _clip01(x[idx])
                        else:
                            cut_w += wv
                            cut_wx += wv * dv
            r_hi = cval[rank[pos]] if pos < nc else radius
            vol[nsets] = seed_volume + inner + r_hi * cut_w - cut_wx
            cut[nsets] = cut_w
            ends[nsets] = size
            nsets += 1
            if cut_w <= c_ln * vol[nsets - 1] or pos >= nc:
                break
        g = _choose_ball(vol, cut, nsets, c_ln)
        for s in range(size):
            v = members[s]
            inball[v] = False
            if s < ends[g]:
                labels[v] = k
        kept = 0
        for t in range(n_alive):
            v = alive[t]
            if labels[v] < 0:
                alive[kept] = v
                kept += 1
        n_alive = kept
        k += 1
    return labels


@numba.njit(cache=True)
def _heap_push(hkey, hnode, size, key, node):
    i = size
    hkey[i] = key
    hnode[i] = node
    while i > 0:
        parent = (i - 1) // 2
        if hkey[parent] <= hkey[i]:
            break
        hkey[parent], hkey[i] = hkey[i], hkey[parent]
        hnode[parent], hnode[i] = hnode[i], hnode[parent]
        i = parent
    return size + 1


@numba.njit(cache=True)
def _heap_pop(hkey, hnode, size):
    key = hkey[0]
    node = hnode[0]
    size -= 1
    hkey[0] = hkey[size]
    hnode[0] = hnode[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and hkey[left + 1] < hkey[left]:
            child = left + 1
        if hkey[i] <= hkey[child]:
            break
        hkey[child], hkey[i] = hkey[i], hkey[child]
        hnode[child], hnode[i] = hnode[i], hnode[child]
        i = child
    return key, node, size


@numba.njit(cache=True)
def region_grow_sparse(x, w, d, indptr, indices, var, order, radius, c_ln, seed_volume):
    """Region growing when only the pairs of a graph carry values.

    As :func:`region_grow_dense`, with the distance from the centre taken as the
    shortest-path distance through unclustered nodes, edge lengths ``clip(x, 0, 1)``
    (Dijkstra, stopped at ``radius``; zero lengths are kept). For ``x`` in MET(G) this
    distance is at least ``x`` on every pair, which is what the region-growing argument
    needs.
    """
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int64)
    dist = np.full(n, np.inf)
    done = np.zeros(n, dtype=np.bool_)
    inball = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    settled = np.empty(n, dtype=np.int64)
    cap = indices.size + 1
    hkey = np.empty(cap, dtype=np.float64)
    hnode = np.empty(cap, dtype=np.int64)
    vol = np.empty(n, dtype=np.float64)
    cut = np.empty(n, dtype=np.float64)
    ends = np.empty(n, dtype=np.int64)
    k = 0
    for u in order:
        if labels[u] >= 0:
            continue
        # Dijkstra from u over unclustered nodes, settling nodes closer than radius
        ntouch = 1
        touched[0] = u
        dist[u] = 0.0
        hsize = _heap_push(hkey, hnode, 0, 0.0, u)
        nset = 0
        while hsize > 0:
            key, v, hsize = _heap_pop(hkey, hnode, hsize)
            if done[v] or key > dist[v]:
                continue
            done[v] = True
            settled[nset] = v
            nset += 1
            for e in range(indptr[v], indptr[v + 1]):
                z = indices[e]
                if labels[z] >= 0 or done[z]:
                    continue
                nd = key + _clip01(x[var[e]])
                if nd < radius and nd < dist[z]:
                    if dist[z] == np.inf:
                        touched[ntouch] = z
                        ntouch += 1
                    dist[z] = nd
                    hsize = _heap_push(hkey, hnode, hsize, nd, z)
        # grow the ball through the settled nodes (nondecreasing distance)
        inner = 0.0
        cut_w = 0.0
        cut_wx = 0.0
        nsets = 0
        pos = 0
        while pos < nset:
            r_now = dist[settled[pos]]
            while pos < nset and dist[settled[pos]] <= r_now:
                v = settled[pos]
                pos += 1
                inball[v] = True
                cut_w, cut_wx, inner = _enter_ball(v, indptr, indices, var, labels, w, d, x,
                                                   dist, inball, cut_w, cut_wx, inner)
            r_hi = dist[settled[pos]] if pos < nset else radius
            vol[nsets] = seed_volume + inner + r_hi * cut_w - cut_wx
            cut[nsets] = cut_w
            ends[nsets] = pos
            nsets += 1
            if cut_w <= c_ln * vol[nsets - 1]:
                break
        g = _choose_ball(vol, cut, nsets, c_ln)
        for s in range(ends[g]):
            labels[settled[s]] = k
        for s in range(nset):
            inball[settled[s]] = False
        for s in range(ntouch):
            dist[touched[s]] = np.inf
            done[touched[s]] = False
        k += 1
    return labels


# ---------------------------------------------------------------------- objectives
@numba.njit(cache=True)
def cc_dense_cost(w, d, labels, n):
    """``sum_{i<j} w_ij |[i, j split] - d_ij|`` over packed pairs, without temporaries."""
    total = 0.0
    idx = 0
    for i in range(n):
        li = labels[i]
        row = 0.0
        for j in range(i + 1, n):
            if labels[j] == li:
                row += w[idx] * abs(d[idx])
            else:
                row += w[idx] * abs(1.0 - d[idx])
            idx += 1
        total += row
    return total


# --------------------------------------------------------------------------- sweep
@numba.njit(cache=True)
def _sweep(order, indptr, indices, ew, inside):
    """Best prefix of ``order`` for ``n * cut / (k (n - k))``; resets ``inside``.

    Returns ``(phi, k)``; prefixes with ``k = 1..n-1`` are all evaluated, the cut being
    updated in O(deg) per added node.
    """
    n = order.size
    cut = 0.0
    best = np.inf
    best_k = 0
    for k in range(1, n):
        v = order[k - 1]
        inside[v] = True
        for e in range(indptr[v], indptr[v + 1]):
            if inside[indices[e]]:
                cut -= ew[e]
            else:
                cut += ew[e]
        phi = n * cut / (k * (n - k))
        if phi < best:
            best = phi
            best_k = k
    for k in range(n - 1):
        inside[order[k]] = False
    return best, best_k


@numba.njit(cache=True)
def sweep_order(order, indptr, indices, ew):
    """Best prefix of one node ordering: ``(phi, k)``."""
    inside = np.zeros(order.size, dtype=np.bool_)
    return _sweep(order, indptr, indices, ew, inside)


@numba.njit(cache=True)
def sweep_rows(x, n, indptr, indices, ew):
    """Sweep cuts along every row of packed pair values ``x``.

    For every node ``u`` the nodes are ordered by ``x[uv]`` (``u`` first; ties by node
    id) and every prefix is evaluated.

    Returns
    -------
    phi : float
        The best ``n * cut / (k (n - k))``.
    u, k : int
        Its row and prefix length.
    """
    inside = np.zeros(n, dtype=np.bool_)
    row = np.empty(n, dtype=np.float64)
    best = np.inf
    best_u = 0
    best_k = 0
    for u in range(n):
        for v in range(n):
            row[v] = -np.inf if v == u else x[_packed(u, v, n)]
        order = np.argsort(row, kind="mergesort")
        phi, k = _sweep(order, indptr, indices, ew, inside)
        if phi < best:
            best = phi
            best_u = u
            best_k = k
    return best, best_u, best_k
