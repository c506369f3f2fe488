"""Numba kernels of the rounding and refinement of support-sized problems.

A support-sized problem (:mod:`metricopt.problems.support`) lists some pairs; every
other pair sits at ``x = 1``, is dissimilar and has the bulk weight. The kernels here
visit the listed pairs only, through a CSR adjacency ``(indptr, indices, var)`` as in
:mod:`metricopt.rounding._kernels`, and reproduce the decisions of the dense kernels:

* :func:`pivot_support` draws LP-pivot's coins from the same SplitMix64 stream as
  :func:`~metricopt.rounding._kernels.pivot_dense`. That stream is a counter (draw ``c``
  mixes ``seed + (c + 1) * golden``), so the draw the dense kernel gives an unclustered
  node is found from the node's rank among the unclustered nodes (a Fenwick tree over
  the visiting order) without drawing for the pairs at 1, which never join.
* :func:`region_grow_support` is :func:`~metricopt.rounding._kernels.region_grow_dense`
  over the listed pairs; given adjacency rows sorted by visiting order, it adds the same
  terms in the same order.
* :func:`move_sweep_bulk` and :func:`merge_pass_bulk` make the moves and merges of
  :mod:`metricopt.rounding._refine_kernels`' dense kernels (every cluster a candidate,
  by smallest member id) when the bulk gain of a pair is ``-c d_i d_j`` (node weights
  ``d``, or ``d = 1``): a cluster's bulk term is ``-c d_i D`` with ``D`` the sum of
  ``d`` over its members, kept up to date. (Where the dense problem takes the sparse
  layout with the bulk gain as background, its sparse kernels serve as they are.)
"""

import numba
import numpy as np

from ._kernels import _GOLDEN, _MIX1, _MIX2, _TO_UNIT, _choose_ball, _clip01, _enter_ball
from ._refine_kernels import _apply_move, _free_ids, _member_lists, _merge_into

__all__ = ["pivot_support", "rows_in_order", "region_grow_support", "move_sweep_bulk",
           "merge_pass_bulk"]


@numba.njit(cache=True, inline="always")
def _uniform_at(seed, c):
    """Draw ``c`` (0-based) of the stream that ``_kernels._uniform`` gives from ``seed``."""
    z = np.uint64(seed) + np.uint64(c + 1) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * _TO_UNIT


@numba.njit(cache=True, inline="always")
def _fenwick_prefix(tree, q):
    """Sum of the entries at positions ``< q``."""
    s = 0
    while q > 0:
        s += tree[q]
        q -= q & -q
    return s


@numba.njit(cache=True, inline="always")
def _fenwick_clear(tree, q):
    """Set the entry at position ``q`` (1 before) to 0."""
    q += 1
    while q < tree.size:
        tree[q] -= 1
        q += q & -q


@numba.njit(cache=True)
def pivot_support(x, indptr, indices, var, order, threshold, seed):
    """Pivot rounding of a support point: as ``_kernels.pivot_dense`` on the full point.

    The candidates of a pivot are its unclustered listed neighbours; a pair not listed
    is at 1 and never joins, in either mode. LP-pivot (``threshold < 0``) gives the
    ``t``-th unclustered node after the pivot the draw the dense kernel would give it.
    O(listed pairs log n + n log n).
    """
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int64)
    random = threshold < 0.0
    pos = np.empty(n, dtype=np.int64)
    tree = np.zeros(n + 1, dtype=np.int64)
    if random:
        for t in range(n):
            pos[order[t]] = t
        for q in range(1, n + 1):  # all ones, built in O(n)
            tree[q] += 1
            up = q + (q & -q)
            if up <= n:
                tree[up] += tree[q]
    joined = np.empty(n, dtype=np.int64)
    drawn = 0  # draws the dense kernel has made before this pivot
    n_alive = n
    k = 0
    for p in order:
        if labels[p] >= 0:
            continue
        labels[p] = k
        nj = 0
        for e in range(indptr[p], indptr[p + 1]):
            j = indices[e]
            if labels[j] >= 0:
                continue
            xv = x[var[e]]
            if random:
                if xv >= 1.0:  # 1 - x <= 0: no draw joins it
                    continue
                # the pivot is the first unclustered node, so j's place after it is the
                # number of unclustered nodes before j in the order, less one
                t = _fenwick_prefix(tree, pos[j]) - 1
                join = _uniform_at(seed, drawn + t) < 1.0 - xv
            else:
                join = xv < threshold
            if join:
                labels[j] = k
                joined[nj] = j
                nj += 1
        if random:
            drawn += n_alive - 1
            _fenwick_clear(tree, pos[p])
            for s in range(nj):
                _fenwick_clear(tree, pos[joined[s]])
        n_alive -= 1 + nj
        k += 1
    return labels


@numba.njit(cache=True)
def rows_in_order(indptr, indices, var, order):
    """The symmetric CSR ``(indptr, indices, var)`` with each row sorted by position in
    ``order`` (a counting pass: O(n + entries)).

    Returns
    -------
    indices, var : int64 arrays
        For the same ``indptr``.
    """
    n = indptr.size - 1
    out = np.empty(indices.size, dtype=np.int64)
    out_var = np.empty(indices.size, dtype=np.int64)
    fill = indptr[:n].copy()
    for v in order:  # v enters the row of each neighbour, in visiting order
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            out[fill[u]] = v
            out_var[fill[u]] = var[e]
            fill[u] += 1
    return out, out_var


@numba.njit(cache=True)
def region_grow_support(x, w, d, indptr, indices, var, order, radius, c_ln, seed_volume):
    """Region growing over the listed pairs: ``_kernels.region_grow_dense`` on the full
    point, whose pairs not listed (at 1, dissimilar) are never in a ball nor positive.

    ``indptr, indices, var`` hold the point's listed pairs and the problem's explicit
    pairs; rows must be sorted by position in ``order`` for the sums to be added in the
    dense kernel's order. Cost per centre: its listed degree plus the listed degrees of
    the nodes within distance ``radius``.
    """
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int64)
    dist = np.zeros(n, dtype=np.float64)
    inball = np.zeros(n, dtype=np.bool_)
    cand = np.empty(n, dtype=np.int64)
    cval = np.empty(n, dtype=np.float64)
    members = np.empty(n, dtype=np.int64)
    vol = np.empty(n, dtype=np.float64)
    cut = np.empty(n, dtype=np.float64)
    ends = np.empty(n, dtype=np.int64)
    k = 0
    for u in order:
        if labels[u] >= 0:
            continue
        nc = 0
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if labels[v] >= 0:
                continue
            dv = _clip01(x[var[e]])
            if dv < radius:
                dist[v] = dv
                cand[nc] = v
                cval[nc] = dv
                nc += 1
        dist[u] = 0.0
        rank = np.argsort(cval[:nc], kind="mergesort")
        inner = 0.0
        cut_w = 0.0
        cut_wx = 0.0
        size = 0
        nsets = 0
        pos = -1
        while True:
            r_now = 0.0 if pos < 0 else cval[rank[pos]]
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
                cut_w, cut_wx, inner = _enter_ball(v, indptr, indices, var, labels, w, d, x,
                                                   dist, inball, cut_w, cut_wx, inner)
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
        k += 1
    return labels


# ------------------------------------------------------------------ bulk refinement
@numba.njit(cache=True)
def _cluster_min(c, minid, head, nxt):
    """Smallest member id of cluster ``c``; ``minid[c] < 0`` marks it stale (recomputed
    from the member list)."""
    if minid[c] < 0:
        best = head.size
        v = head[c]
        while v >= 0:
            if v < best:
                best = v
            v = nxt[v]
        minid[c] = best
    return minid[c]


@numba.njit(cache=True)
def _pick(base, ns, cand, cval, tol, minid, head, nxt, rank):
    """The dense kernels' choice among ``cand[:ns]`` (values ``cval``, all better than
    ``base`` by more than ``tol``): scanned by smallest member id, a candidate replaces
    the best so far when better by more than ``tol``. Returns ``(position, value)``.

    The largest value wins unless another is within ``tol`` of it; only then are the
    member ids looked up.
    """
    top = 0
    for s in range(1, ns):
        if cval[s] > cval[top]:
            top = s
    near = False
    for s in range(ns):
        if s != top and cval[s] >= cval[top] - tol:
            near = True
            break
    if not near:
        return top, cval[top]
    for s in range(ns):
        rank[s] = _cluster_min(cand[s], minid, head, nxt)
    order = np.argsort(rank[:ns])
    best = base
    pos = -1
    for r in range(ns):
        s = order[r]
        if cval[s] > best + tol:
            best = cval[s]
            pos = s
    return pos, best


@numba.njit(cache=True)
def _link_members(labels, head, nxt, prv, minid):
    """Doubly linked member lists per cluster id and each cluster's smallest id."""
    head[:] = -1
    minid[:] = -1
    for v in range(labels.size - 1, -1, -1):  # pushed in front: lists in increasing id
        c = labels[v]
        prv[v] = -1
        nxt[v] = head[c]
        if head[c] >= 0:
            prv[head[c]] = v
        head[c] = v
        minid[c] = v


@numba.njit(cache=True)
def move_sweep_bulk(order, indptr, indices, delta, cw, nw, tol, labels, sizes, dsum, acc, cnt,
                    touched, free, head, nxt, prv, minid, cand, cval, rank):
    """One sweep of node moves, as ``_refine_kernels.move_sweep_dense`` on the full problem,
    when a bulk pair's gain is ``-cw nw_i nw_j`` (``nw = 1``: a constant gain ``-cw``).

    The value of cluster ``c`` for node ``i`` is ``-cw nw_i (dsum_c - [i in c] nw_i)``
    plus the ``delta_ij = s_ij + cw nw_i nw_j`` of its adjacent members (``dsum``: the sum
    of ``nw`` per cluster id, updated in place). Candidates and decisions are the dense
    kernel's: the node's own cluster, the others by smallest member id, each taken when
    better than the best so far by more than ``tol``, then a new singleton. A cluster
    without an adjacent member is worth ``-cw nw_i dsum_c <= 0``, never more than a
    singleton (or than staying alone), and is not visited; near-ties are ordered through
    member lists (``head, nxt, prv``, smallest ids ``minid``) kept with the moves.

    Returns
    -------
    moves : int
    gain : float
    """
    top = _free_ids(sizes, free)
    _link_members(labels, head, nxt, prv, minid)
    moves = 0
    gain = 0.0
    for i in order:
        a = labels[i]
        di = nw[i]
        nt = 0
        for e in range(indptr[i], indptr[i + 1]):
            c = labels[indices[e]]
            if cnt[c] == 0:
                touched[nt] = c
                nt += 1
            acc[c] += delta[e]
            cnt[c] += 1
        stay = -cw * di * (dsum[a] - di) + acc[a]
        ns = 0
        for t in range(nt):
            c = touched[t]
            if c == a:
                continue
            v = -cw * di * dsum[c] + acc[c]
            if v > stay + tol:
                cand[ns] = c
                cval[ns] = v
                ns += 1
        for t in range(nt):
            acc[touched[t]] = 0.0
            cnt[touched[t]] = 0
        best = stay
        target = a
        if ns > 0:
            pos, best = _pick(stay, ns, cand, cval, tol, minid, head, nxt, rank)
            target = cand[pos]
        if sizes[a] > 1 and 0.0 > best + tol:
            best = 0.0
            target = -1
        if target != a:
            top = _apply_move(i, a, target, labels, sizes, free, top)
            b = labels[i]
            dsum[a] -= di
            dsum[b] += di
            # member lists: out of a, in front of b
            if prv[i] >= 0:
                nxt[prv[i]] = nxt[i]
            else:
                head[a] = nxt[i]
            if nxt[i] >= 0:
                prv[nxt[i]] = prv[i]
            if minid[a] == i:
                minid[a] = -1
            prv[i] = -1
            nxt[i] = head[b]
            if head[b] >= 0:
                prv[head[b]] = i
            head[b] = i
            if sizes[b] == 1:
                minid[b] = i
            elif minid[b] >= 0 and i < minid[b]:
                minid[b] = i
            moves += 1
            gain += best - stay
    return moves, gain


@numba.njit(cache=True)
def merge_pass_bulk(indptr, indices, delta, cw, tol, labels, sizes, dsum, head, nxt, tail, acc,
                    cnt, touched, minid, cand, cval, rank):
    """One pass of cluster merges, as ``_refine_kernels.merge_pass_dense`` on the full
    problem, the gain of merging ``A`` into ``B`` being
    ``-cw dsum_A dsum_B + sum_{i in A, j in B} delta_ij`` (clusters in increasing id;
    targets by smallest member id, as :func:`move_sweep_bulk`).
    """
    _member_lists(labels, head, nxt, tail)
    for c in range(labels.size):
        minid[c] = head[c]  # lists in increasing id
    merges = 0
    gain = 0.0
    for A in range(labels.size):
        if sizes[A] == 0:
            continue
        nt = 0
        v = head[A]
        while v >= 0:
            for e in range(indptr[v], indptr[v + 1]):
                c = labels[indices[e]]
                if c == A:
                    continue
                if cnt[c] == 0:
                    touched[nt] = c
                    nt += 1
                acc[c] += delta[e]
                cnt[c] += 1
            v = nxt[v]
        ns = 0
        for t in range(nt):
            c = touched[t]
            g = -cw * dsum[A] * dsum[c] + acc[c]
            if g > tol:
                cand[ns] = c
                cval[ns] = g
                ns += 1
            acc[c] = 0.0
            cnt[c] = 0
        if ns > 0:
            pos, best = _pick(0.0, ns, cand, cval, tol, minid, head, nxt, rank)
            target = cand[pos]
            dsum[target] += dsum[A]
            dsum[A] = 0.0
            minid[target] = min(minid[target], minid[A])
            minid[A] = -1
            _merge_into(A, target, labels, sizes, head, nxt, tail)
            merges += 1
            gain += best
    return merges, gain
