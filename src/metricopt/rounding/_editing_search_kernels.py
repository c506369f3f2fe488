"""Kernel of the iterated local search for cluster editing (see :mod:`.editing_search`).

One component's clustering is kept with its cluster sizes and member lists, so that a
node's move costs the work of its neighbourhood, not of the component:

* moving ``v`` from cluster ``a`` to cluster ``b`` changes the cost (edges between
  clusters plus non-edges inside them) by
  ``2 d_a - |a| + 1 - 2 d_b + |b|``, with ``d_c`` the neighbours of ``v`` in ``c`` and
  the sizes before the move (``b`` empty: a new singleton);
* the local search is a work list: a node whose best move gains is moved, and its
  neighbours and the members of both clusters are checked again; the search returned
  ends with full sweeps until no node moves, so it is a local optimum for single-node
  moves;
* a perturbation is a sequence of such moves, undone from a log when it is rejected.

The graph is a symmetric CSR without self-loops (``indptr, indices``). The state:
``labels[v]`` (cluster ids in ``[0, n)``), ``size[c]``, the member lists ``head[c]``,
``nxt[v]``, ``prv[v]`` (-1 ends), the empty ids ``free[:n_free[0]]`` with ``free_pos[c]``
(-1 when ``c`` is in use), and the scratch ``cnt`` (zero between calls).
"""

import numba
import numpy as np

__all__ = ["iterated_local_search"]


@numba.njit(cache=True)
def _next(state):
    """splitmix64: the next 64-bit value of the generator ``state`` (a uint64 array of 1)."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def _uniform(state):
    """A float in ``[0, 1)`` (53 random bits)."""
    return float(_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def _below(state, k):
    """An int in ``[0, k)``."""
    return np.int64(_next(state) % np.uint64(k))


@numba.njit(cache=True)
def _cost(indptr, indices, labels, size):
    """Edges between clusters plus non-edges inside them."""
    n = labels.size
    between = 0
    inside_edges = 0
    for v in range(n):
        for q in range(indptr[v], indptr[v + 1]):
            w = indices[q]
            if w > v:
                if labels[w] == labels[v]:
                    inside_edges += 1
                else:
                    between += 1
    pairs = 0
    for c in range(n):
        pairs += size[c] * (size[c] - 1) // 2
    return between + pairs - inside_edges


@numba.njit(cache=True)
def _link(v, c, labels, size, head, nxt, prv):
    """Put ``v`` at the front of cluster ``c``'s member list."""
    prv[v] = -1
    nxt[v] = head[c]
    if head[c] >= 0:
        prv[head[c]] = v
    head[c] = v
    size[c] += 1
    labels[v] = c


@numba.njit(cache=True)
def _relabel(v, c, labels, size, head, nxt, prv, free, free_pos, n_free):
    """Move ``v`` into cluster ``c`` (empty or not), keeping the lists and the free ids."""
    a = labels[v]
    # out of a's list
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[a] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]
    size[a] -= 1
    if size[a] == 0:
        free_pos[a] = n_free[0]
        free[n_free[0]] = a
        n_free[0] += 1
    if size[c] == 0:  # take c out of the free ids (swap with the last)
        p = free_pos[c]
        last = free[n_free[0] - 1]
        free[p] = last
        free_pos[last] = p
        free_pos[c] = -1
        n_free[0] -= 1
    _link(v, c, labels, size, head, nxt, prv)


@numba.njit(cache=True)
def _best_move(v, indptr, indices, labels, size, free, n_free, cnt):
    """``(gain, target)`` of the best single move of ``v`` (gain < 0 improves; target
    -1: stay). Ties go to the first cluster met among the neighbours, then a new one."""
    a = labels[v]
    for q in range(indptr[v], indptr[v + 1]):
        cnt[labels[indices[q]]] += 1
    stay = 2 * cnt[a] - size[a] + 1  # the cost of leaving a, before joining anything
    best, target = 0, -1
    if size[a] > 1 and n_free[0] > 0 and stay < best:
        best, target = stay, free[n_free[0] - 1]
    for q in range(indptr[v], indptr[v + 1]):
        b = labels[indices[q]]
        if b != a:
            delta = stay - 2 * cnt[b] + size[b]
            if delta < best:
                best, target = delta, b
    for q in range(indptr[v], indptr[v + 1]):
        cnt[labels[indices[q]]] = 0
    return best, target


@numba.njit(cache=True)
def _move_delta(v, c, indptr, indices, labels, size):
    """The cost change of moving ``v`` into ``c``."""
    a = labels[v]
    if c == a:
        return 0
    d_a = 0
    d_c = 0
    for q in range(indptr[v], indptr[v + 1]):
        lw = labels[indices[q]]
        if lw == a:
            d_a += 1
        elif lw == c:
            d_c += 1
    return 2 * d_a - size[a] + 1 - 2 * d_c + size[c]


@numba.njit(cache=True)
def _logged_move(w, c, indptr, indices, labels, size, head, nxt, prv, free, free_pos, n_free,
                 log_v, log_c, n_log):
    """Move ``w`` into ``c``, appended to the log; returns the cost change."""
    delta = _move_delta(w, c, indptr, indices, labels, size)
    log_v[n_log[0]] = w
    log_c[n_log[0]] = labels[w]
    n_log[0] += 1
    _relabel(w, c, labels, size, head, nxt, prv, free, free_pos, n_free)
    return delta


@numba.njit(cache=True)
def _push(v, queue, queued, tail, n):
    if not queued[v]:
        queued[v] = True
        queue[tail[0] % n] = v
        tail[0] += 1


@numba.njit(cache=True)
def _local_search(indptr, indices, labels, size, head, nxt, prv, free, free_pos, n_free, cnt,
                  queue, queued, tail, headq, log_v, log_c, n_log):
    """Move nodes from the work list while a move gains; returns the cost change.

    Every move is appended to the log (``log_v``, ``log_c``: node and former cluster);
    past its end it is only counted (``n_log[0]`` then exceeds the log: no undo).
    """
    n = labels.size
    total = 0
    while headq[0] < tail[0]:
        v = queue[headq[0] % n]
        headq[0] += 1
        queued[v] = False
        gain, target = _best_move(v, indptr, indices, labels, size, free, n_free, cnt)
        if target < 0:
            continue
        a = labels[v]
        if n_log[0] < log_v.size:
            log_v[n_log[0]] = v
            log_c[n_log[0]] = a
        n_log[0] += 1
        _relabel(v, target, labels, size, head, nxt, prv, free, free_pos, n_free)
        total += gain
        for q in range(indptr[v], indptr[v + 1]):
            _push(indices[q], queue, queued, tail, n)
        for c in (a, target):
            w = head[c]
            while w >= 0:
                _push(w, queue, queued, tail, n)
                w = nxt[w]
    return total


@numba.njit(cache=True)
def _rebuild(labels, size, head, nxt, prv, free, free_pos, n_free):
    """Sizes, member lists and free ids from ``labels`` alone."""
    n = labels.size
    size[:] = 0
    head[:] = -1
    for v in range(n - 1, -1, -1):
        _link(v, labels[v], labels, size, head, nxt, prv)
    n_free[0] = 0
    for c in range(n - 1, -1, -1):
        if size[c] == 0:
            free_pos[c] = n_free[0]
            free[n_free[0]] = c
            n_free[0] += 1
        else:
            free_pos[c] = -1


@numba.njit(cache=True)
def iterated_local_search(indptr, indices, start, iterations, seed, worse_accept, restart_after,
                          best_out):
    """Iterated local search from the clustering ``start`` (ids in ``[0, n)``).

    Each iteration perturbs the current clustering around a random node ``v`` (with
    probability 0.4 moves ``v`` and each of its cluster-mates among its neighbours with
    probability 1/2 into a neighbouring cluster; 0.3 splits ``v`` off into a new cluster
    with each neighbour with probability 1/2; 0.3 merges a neighbour's cluster into
    ``v``'s), re-optimises by the work-list local search from the nodes it moved, and
    keeps the result when it is no worse, or ``d`` worse with probability
    ``worse_accept ** d``; after ``restart_after`` iterations without a new best it
    returns to the best. The best clustering, after full local-search sweeps, is
    written to ``best_out``. Returns ``(best cost, accepted, improved)``. ``seed`` (an
    int in ``[0, 2**63)``) seeds a splitmix64 generator: the same input and seed give the
    same answer on every machine.
    """
    rng = np.full(1, np.uint64(seed))
    n = start.size
    labels = start.copy()
    size = np.zeros(n, dtype=np.int64)
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    free = np.empty(n, dtype=np.int64)
    free_pos = np.full(n, -1, dtype=np.int64)
    n_free = np.zeros(1, dtype=np.int64)
    cnt = np.zeros(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    queued = np.zeros(n, dtype=np.bool_)
    tail = np.zeros(1, dtype=np.int64)
    headq = np.zeros(1, dtype=np.int64)
    cap_log = 4 * n + 16
    log_v = np.empty(cap_log, dtype=np.int64)
    log_c = np.empty(cap_log, dtype=np.int64)
    n_log = np.zeros(1, dtype=np.int64)
    _rebuild(labels, size, head, nxt, prv, free, free_pos, n_free)
    cur = _cost(indptr, indices, labels, size)
    for v in range(n):
        _push(v, queue, queued, tail, n)
    cur += _local_search(indptr, indices, labels, size, head, nxt, prv, free, free_pos, n_free,
                         cnt, queue, queued, tail, headq, log_v, log_c, n_log)
    n_log[0] = 0
    best = cur
    best_out[:] = labels
    accepted = 0
    improved = 0
    since = 0
    for _ in range(iterations):
        if n == 0:
            break
        v = _below(rng, n)
        lo, hi = indptr[v], indptr[v + 1]
        if hi == lo:
            continue
        n_log[0] = 0
        delta = 0
        own = labels[v]
        kind = _uniform(rng)
        moved_any = False
        if kind < 0.4:
            # a neighbouring cluster, drawn among the neighbours in other clusters
            n_other = 0
            for q in range(lo, hi):
                if labels[indices[q]] != own:
                    n_other += 1
            if n_other == 0:
                kind = 0.5
            else:
                pick = _below(rng, n_other)
                target = -1
                for q in range(lo, hi):
                    if labels[indices[q]] != own:
                        if pick == 0:
                            target = labels[indices[q]]
                            break
                        pick -= 1
                for q in range(lo, hi + 1):
                    w = v if q == hi else indices[q]
                    if w != v and (labels[w] != own or _uniform(rng) >= 0.5):
                        continue
                    if n_log[0] + 1 >= cap_log or labels[w] == target:
                        continue
                    delta += _logged_move(w, target, indptr, indices, labels, size, head, nxt, prv,
                                          free, free_pos, n_free, log_v, log_c, n_log)
                    moved_any = True
        if 0.4 <= kind < 0.7:
            if n_free[0] > 0 or size[own] > 1:
                if size[own] == 1:
                    fresh = own  # v alone already: its neighbours join it
                else:
                    fresh = free[n_free[0] - 1]
                for q in range(lo - 1, hi):
                    w = v if q < lo else indices[q]
                    if q >= lo and _uniform(rng) >= 0.5:
                        continue
                    if labels[w] == fresh or n_log[0] + 1 >= cap_log:
                        continue
                    delta += _logged_move(w, fresh, indptr, indices, labels, size, head, nxt, prv,
                                          free, free_pos, n_free, log_v, log_c, n_log)
                    moved_any = True
        elif kind >= 0.7:
            u = indices[lo + _below(rng, hi - lo)]
            other = labels[u]
            while other != own and head[other] >= 0 and n_log[0] + 1 < cap_log:
                delta += _logged_move(head[other], own, indptr, indices, labels, size, head, nxt,
                                      prv, free, free_pos, n_free, log_v, log_c, n_log)
                moved_any = True
        if not moved_any:
            continue
        moved = n_log[0]
        for i in range(moved):
            w = log_v[i]
            _push(w, queue, queued, tail, n)
            for q in range(indptr[w], indptr[w + 1]):
                _push(indices[q], queue, queued, tail, n)
        delta += _local_search(indptr, indices, labels, size, head, nxt, prv, free, free_pos,
                               n_free, cnt, queue, queued, tail, headq, log_v, log_c, n_log)
        since += 1
        # a local search longer than the log cannot be undone: kept
        if delta <= 0 or n_log[0] > cap_log or _uniform(rng) < worse_accept ** delta:
            accepted += 1
            cur += delta
            if cur < best:
                best = cur
                best_out[:] = labels
                improved += 1
                since = 0
        else:  # undo, last move first
            for i in range(n_log[0] - 1, -1, -1):
                _relabel(log_v[i], log_c[i], labels, size, head, nxt, prv, free, free_pos, n_free)
        if since >= restart_after:
            labels[:] = best_out
            _rebuild(labels, size, head, nxt, prv, free, free_pos, n_free)
            cur = best
            since = 0
    # the best, polished by full sweeps until no node moves
    labels[:] = best_out
    _rebuild(labels, size, head, nxt, prv, free, free_pos, n_free)
    while True:
        n_log[0] = 0
        for v in range(n):
            _push(v, queue, queued, tail, n)
        gain = _local_search(indptr, indices, labels, size, head, nxt, prv, free, free_pos,
                             n_free, cnt, queue, queued, tail, headq, log_v, log_c, n_log)
        best += gain
        if gain == 0:
            break
    best_out[:] = labels
    return best, accepted, improved
