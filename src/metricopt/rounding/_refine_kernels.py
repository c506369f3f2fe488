"""Numba kernels of the local-search refinement of clusterings and cuts.

A clustering is scored through the *pair gains* ``s_ij = w_ij (|1 - d_ij| - |d_ij|)``:
the correlation-clustering cost is ``const - sum_{i<j same cluster} s_ij``, so a node
``i`` in cluster ``a`` values a cluster ``c`` at ``sum_{j in c, j != i} s_ij`` and moving
it lowers the cost by the difference. Two layouts hold the gains:

* *sparse*: a CSR adjacency ``(indptr, indices, delta)`` of the pairs whose gain differs
  from a background value ``s0`` (every other pair has gain ``s0``), so that
  ``value(c) = s0 |c \\ {i}| + sum_{j in c, adjacent} delta_ij``. A sparse problem has
  ``s0 = 0``; a dense one whose gains are mostly equal (Jaccard or unit weights: every
  pair without a common neighbour looks alike) is reduced to this form;
* *dense*: the packed pair arrays ``w, d`` of a dense problem, read row by row.

Every kernel is sequential and pure apart from the state arrays it is handed (labels,
cluster sizes, scratch buffers), which it updates in place; node orders come from the
caller, so results depend only on the arguments. Decisions follow one rule, shared by the
plain-Python reference in the tests: candidates are scanned in a fixed order (the current
cluster first, then the clusters met along the node's adjacency in increasing node id,
then a new singleton) and a candidate replaces the best so far only when its value is
larger by more than ``tol``.
"""

import numba
import numpy as np

__all__ = [
    "deviation_counts",
    "deviation_fill",
    "move_sweep_sparse",
    "move_sweep_dense",
    "merge_pass_sparse",
    "merge_pass_dense",
    "fm_pass",
]


@numba.njit(cache=True, inline="always")
def _gain(w, d):
    """Pair gain ``w (|1 - d| - |d|)``: what joining the pair saves."""
    return w * (abs(1.0 - d) - abs(d))


# ----------------------------------------------------------------- dense -> sparse
@numba.njit(cache=True)
def deviation_counts(w, d, n, s0):
    """Per node, the number of pairs whose gain differs from ``s0`` (packed order)."""
    counts = np.zeros(n, dtype=np.int64)
    idx = 0
    for i in range(n):
        for j in range(i + 1, n):
            if _gain(w[idx], d[idx]) != s0:
                counts[i] += 1
                counts[j] += 1
            idx += 1
    return counts


@numba.njit(cache=True)
def deviation_fill(w, d, n, s0, indptr):
    """CSR ``(indices, delta)`` of the pairs whose gain differs from ``s0``.

    ``indptr`` comes from :func:`deviation_counts`; rows come out sorted by node id.
    ``delta`` holds ``s_ij - s0``.
    """
    nnz = indptr[n]
    indices = np.empty(nnz, dtype=np.int64)
    delta = np.empty(nnz, dtype=np.float64)
    fill = indptr[:n].copy()
    idx = 0
    for i in range(n):
        for j in range(i + 1, n):
            s = _gain(w[idx], d[idx])
            if s != s0:
                indices[fill[i]] = j
                delta[fill[i]] = s - s0
                fill[i] += 1
                indices[fill[j]] = i
                delta[fill[j]] = s - s0
                fill[j] += 1
            idx += 1
    return indices, delta


# ----------------------------------------------------------------------- node moves
@numba.njit(cache=True)
def _free_ids(sizes, free):
    """Stack of the empty cluster ids, the smallest on top; returns its height."""
    top = 0
    for c in range(sizes.size - 1, -1, -1):
        if sizes[c] == 0:
            free[top] = c
            top += 1
    return top


@numba.njit(cache=True)
def _decide(i, a, nt, touched, acc, cnt, sizes, s0, clique, big, tol):
    """Best cluster for node ``i`` (in ``a``): ``(target, value, stay value)``.

    ``target`` is -1 for a new singleton; see the module docstring for the order.
    """
    stay = s0 * (sizes[a] - 1) + acc[a]
    best = stay
    target = a
    for t in range(nt):
        c = touched[t]
        if c == a:
            continue
        if clique and cnt[c] != sizes[c]:
            continue
        v = s0 * sizes[c] + acc[c]
        if v > best + tol:
            best = v
            target = c
    if big >= 0 and big != a and sizes[big] > 0 and cnt[big] == 0 and not clique:
        v = s0 * sizes[big]  # the largest cluster, not adjacent: worth a look when s0 > 0
        if v > best + tol:
            best = v
            target = big
    if sizes[a] > 1 and 0.0 > best + tol:
        best = 0.0
        target = -1
    return target, best, stay


@numba.njit(cache=True)
def _apply_move(i, a, target, labels, sizes, free, top):
    """Move ``i`` from ``a`` to ``target`` (-1: a fresh id); returns the stack height."""
    if target < 0:
        top -= 1
        target = free[top]
    labels[i] = target
    sizes[a] -= 1
    sizes[target] += 1
    if sizes[a] == 0:
        free[top] = a
        top += 1
    return top


@numba.njit(cache=True)
def move_sweep_sparse(order, indptr, indices, delta, s0, clique, tol, labels, sizes,
                      acc, cnt, touched, free):
    """One sweep of single-node moves over ``order`` with sparse gains.

    Each node goes to the cluster of highest value among its own, the clusters of its
    adjacent nodes, a new singleton and (``s0 > 0`` only) the largest cluster. With
    ``clique`` (cluster deletion), a cluster is a candidate only if the node is adjacent
    to all of its members, so cliques stay cliques.

    Parameters
    ----------
    order : int64 array
        Visiting order of the nodes.
    indptr, indices, delta : CSR arrays
        Adjacency and gains minus ``s0`` (rows sorted by node id).
    s0 : float
        Background gain of the pairs not in the adjacency.
    clique : bool
    tol : float
        A move is made only when it lowers the cost by more than ``tol``.
    labels, sizes : int64 arrays of shape (n,)
        Cluster of each node and size of each cluster id; updated in place.
    acc, cnt, touched, free : scratch arrays of shape (n,)
        float64, int64, int64, int64; ``acc`` and ``cnt`` must be zero on entry and are
        zero on exit.

    Returns
    -------
    moves : int
    gain : float
        Decrease of the cost (sum of the move gains).
    """
    top = _free_ids(sizes, free)
    big = -1
    if s0 > 0.0:
        big = int(np.argmax(sizes))
    moves = 0
    gain = 0.0
    for i in order:
        a = labels[i]
        nt = 0
        for e in range(indptr[i], indptr[i + 1]):
            c = labels[indices[e]]
            if cnt[c] == 0:
                touched[nt] = c
                nt += 1
            acc[c] += delta[e]
            cnt[c] += 1
        target, best, stay = _decide(i, a, nt, touched, acc, cnt, sizes, s0, clique, big, tol)
        for t in range(nt):
            acc[touched[t]] = 0.0
            cnt[touched[t]] = 0
        if target != a:
            top = _apply_move(i, a, target, labels, sizes, free, top)
            moves += 1
            gain += best - stay
            if big >= 0 and sizes[labels[i]] > sizes[big]:
                big = labels[i]
    return moves, gain


@numba.njit(cache=True)
def _dense_row(i, n, w, d, labels, acc, cnt, touched, nt, skip):
    """Add the gains of node ``i`` to every other node to ``acc`` by cluster.

    Nodes in cluster ``skip`` are left out (-1: none). Returns the new count of touched
    clusters (first met in increasing node id).
    """
    for j in range(i):  # pairs (j, i), j < i: one entry per earlier row
        c = labels[j]
        if c == skip:
            continue
        idx = j * n - (j * (j + 1)) // 2 + (i - j - 1)
        if cnt[c] == 0:
            touched[nt] = c
            nt += 1
        acc[c] += _gain(w[idx], d[idx])
        cnt[c] += 1
    base = i * n - (i * (i + 1)) // 2 - i - 1
    for j in range(i + 1, n):
        c = labels[j]
        if c == skip:
            continue
        idx = base + j
        if cnt[c] == 0:
            touched[nt] = c
            nt += 1
        acc[c] += _gain(w[idx], d[idx])
        cnt[c] += 1
    return nt


@numba.njit(cache=True)
def move_sweep_dense(order, w, d, n, tol, labels, sizes, acc, cnt, touched, free):
    """As :func:`move_sweep_sparse`, reading the gains from packed dense ``w, d``.

    Every cluster is a candidate (O(n) per node).
    """
    top = _free_ids(sizes, free)
    moves = 0
    gain = 0.0
    for i in order:
        a = labels[i]
        nt = _dense_row(i, n, w, d, labels, acc, cnt, touched, 0, -1)
        target, best, stay = _decide(i, a, nt, touched, acc, cnt, sizes, 0.0, False, -1, tol)
        for t in range(nt):
            acc[touched[t]] = 0.0
            cnt[touched[t]] = 0
        if target != a:
            top = _apply_move(i, a, target, labels, sizes, free, top)
            moves += 1
            gain += best - stay
    return moves, gain


# -------------------------------------------------------------------------- merges
@numba.njit(cache=True)
def _member_lists(labels, head, nxt, tail):
    """Linked member lists per cluster id, members in increasing node id."""
    head[:] = -1
    tail[:] = -1
    for v in range(labels.size):
        c = labels[v]
        nxt[v] = -1
        if head[c] < 0:
            head[c] = v
        else:
            nxt[tail[c]] = v
        tail[c] = v


@numba.njit(cache=True)
def _pick_merge(A, nt, touched, acc, cnt, sizes, s0, clique, tol):
    """Best cluster to merge ``A`` into, ``(target or -1, gain)``; resets the scratch."""
    best = 0.0
    target = -1
    for t in range(nt):
        c = touched[t]
        ok = not clique or cnt[c] == sizes[A] * sizes[c]
        g = s0 * sizes[A] * sizes[c] + acc[c]
        if ok and g > best + tol:
            best = g
            target = c
        acc[c] = 0.0
        cnt[c] = 0
    return target, best


@numba.njit(cache=True)
def _merge_into(A, B, labels, sizes, head, nxt, tail):
    v = head[A]
    while v >= 0:
        labels[v] = B
        v = nxt[v]
    nxt[tail[B]] = head[A]
    tail[B] = tail[A]
    head[A] = -1
    tail[A] = -1
    sizes[B] += sizes[A]
    sizes[A] = 0


@numba.njit(cache=True)
def merge_pass_sparse(indptr, indices, delta, s0, clique, tol, labels, sizes, head, nxt,
                      tail, acc, cnt, touched):
    """One pass of cluster merges with sparse gains.

    Clusters are visited in increasing id; cluster ``A`` is merged into the adjacent
    cluster ``B`` of largest gain ``s0 |A| |B| + sum_{i in A, j in B} delta_ij`` when
    that gain exceeds ``tol`` (``clique``: only if every pair between them is adjacent).
    ``B`` keeps its id and its member list grows by ``A``'s, appended.

    Returns
    -------
    merges : int
    gain : float
    """
    _member_lists(labels, head, nxt, tail)
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
        target, best = _pick_merge(A, nt, touched, acc, cnt, sizes, s0, clique, tol)
        if target >= 0:
            _merge_into(A, target, labels, sizes, head, nxt, tail)
            merges += 1
            gain += best
    return merges, gain


@numba.njit(cache=True)
def merge_pass_dense(w, d, n, tol, labels, sizes, head, nxt, tail, acc, cnt, touched):
    """As :func:`merge_pass_sparse`, reading the gains from packed dense ``w, d``."""
    _member_lists(labels, head, nxt, tail)
    merges = 0
    gain = 0.0
    for A in range(n):
        if sizes[A] == 0:
            continue
        nt = 0
        v = head[A]
        while v >= 0:
            nt = _dense_row(v, n, w, d, labels, acc, cnt, touched, nt, A)
            v = nxt[v]
        target, best = _pick_merge(A, nt, touched, acc, cnt, sizes, 0.0, False, tol)
        if target >= 0:
            _merge_into(A, target, labels, sizes, head, nxt, tail)
            merges += 1
            gain += best
    return merges, gain


# ------------------------------------------------------------------ sparsest cut
@numba.njit(cache=True)
def fm_pass(indptr, indices, ew, side, tol):
    """One Fiduccia-Mattheyses pass on ``phi(S) = n cut(S) / (|S| |V \\ S|)``.

    Every node moves once to the other side, each time the unlocked node whose move
    gives the smallest ``phi`` (both sides kept non-empty; ties: the smaller node id),
    uphill moves included; then the moves after the best prefix are undone.

    Parameters
    ----------
    indptr, indices, ew : CSR adjacency with edge weights (both directions).
    side : uint8 array of shape (n,)
        1 for the nodes of ``S``; updated in place to the best prefix.
    tol : float
        A prefix counts as better only if its ``phi`` is lower by more than ``tol``.

    Returns
    -------
    phi : float
        ``phi`` of the returned side (accumulated; the caller recomputes it exactly).
    kept : int
        Moves kept (0: no improvement).
    """
    n = side.size
    gain = np.zeros(n, dtype=np.float64)  # cut decrease if the node switches side
    cut = 0.0
    size = 0
    for v in range(n):
        size += side[v]
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] != side[v]:
                gain[v] += ew[e]
                cut += 0.5 * ew[e]
            else:
                gain[v] -= ew[e]
    best_phi = n * cut / (size * (n - size))
    kept = 0
    locked = np.zeros(n, dtype=np.bool_)
    log = np.empty(n, dtype=np.int64)
    steps = 0
    for step in range(n):
        bv = -1
        bphi = np.inf
        for v in range(n):
            if locked[v]:
                continue
            ns = size - 1 if side[v] == 1 else size + 1
            if ns <= 0 or ns >= n:
                continue
            ph = n * (cut - gain[v]) / (ns * (n - ns))
            if ph < bphi:
                bphi = ph
                bv = v
        if bv < 0:
            break
        v = bv
        cut -= gain[v]
        size += -1 if side[v] == 1 else 1
        side[v] = 1 - side[v]
        gain[v] = -gain[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if side[u] == side[v]:
                gain[u] -= 2.0 * ew[e]
            else:
                gain[u] += 2.0 * ew[e]
        locked[v] = True
        log[step] = v
        steps = step + 1
        if bphi < best_phi - tol:
            best_phi = bphi
            kept = steps
    for s in range(steps - 1, kept - 1, -1):
        v = log[s]
        side[v] = 1 - side[v]
    return best_phi, kept
