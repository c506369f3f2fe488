"""Slow, plain-Python references for the refinement kernels.

Each follows the decision rule of :mod:`metricopt.rounding._refine_kernels` (candidates in
a fixed order, a candidate wins only when better by more than ``tol``), but recomputes
every value from scratch from the pair gains ``s(i, j)`` and the member sets, without the
kernels' incremental sums, sizes and linked lists.
"""


def members(labels, c):
    return [v for v, lab in enumerate(labels) if lab == c]


def move_sweep(n, adj, s, s0, clique, tol, labels, order):
    """One sweep of node moves; returns ``(labels, moves)``.

    ``adj[i]`` is the sorted list of nodes adjacent to ``i`` (every other node for dense
    gains), ``s(i, j)`` the full pair gain (``s0`` off the adjacency).
    """
    labels = list(labels)
    sizes = [labels.count(c) for c in range(n)]
    free = [c for c in range(n - 1, -1, -1) if sizes[c] == 0]
    big = max(range(n), key=lambda c: (sizes[c], -c)) if s0 > 0 else -1
    moves = 0
    for i in order:
        a = labels[i]

        def value(c):
            return sum(s(i, j) for j in members(labels, c) if j != i)

        seen = []
        for j in adj[i]:
            if labels[j] not in seen:
                seen.append(labels[j])
        best, target = value(a), a
        for c in seen:
            if c == a:
                continue
            if clique and not all(j in adj[i] for j in members(labels, c)):
                continue
            v = value(c)
            if v > best + tol:
                best, target = v, c
        if big >= 0 and big != a and sizes[big] > 0 and big not in seen and not clique:
            v = value(big)
            if v > best + tol:
                best, target = v, big
        if sizes[a] > 1 and 0.0 > best + tol:
            target = -1
        if target != a:
            if target == -1:
                target = free.pop()
            labels[i] = target
            sizes[a] -= 1
            sizes[target] += 1
            if sizes[a] == 0:
                free.append(a)
            moves += 1
            if big >= 0 and sizes[target] > sizes[big]:
                big = target
    return labels, moves


def merge_pass(n, adj, s, clique, tol, labels):
    """One pass of cluster merges in increasing cluster id; returns ``(labels, merges)``."""
    labels = list(labels)
    lists = {c: members(labels, c) for c in range(n)}
    merges = 0
    for A in range(n):
        if not lists[A]:
            continue
        seen = []
        for v in lists[A]:
            for j in adj[v]:
                c = labels[j]
                if c != A and c not in seen:
                    seen.append(c)
        best, target = 0.0, -1
        for c in seen:
            ok = not clique or all(j in adj[v] for v in lists[A] for j in lists[c])
            g = sum(s(v, j) for v in lists[A] for j in lists[c])
            if ok and g > best + tol:
                best, target = g, c
        if target >= 0:
            for v in lists[A]:
                labels[v] = target
            lists[target] = lists[target] + lists[A]
            lists[A] = []
            merges += 1
    return labels, merges


def phi(n, edges, weights, side):
    size = sum(side)
    cut = sum(w for (a, b), w in zip(edges, weights) if side[a] != side[b])
    return n * cut / (size * (n - size))


def fm_pass(n, edges, weights, side, tol):
    """One Fiduccia-Mattheyses pass; returns ``(side, kept)``."""
    side = list(side)
    best = phi(n, edges, weights, side)
    locked = [False] * n
    log = []
    kept = 0
    for _ in range(n):
        bv, bphi = -1, float("inf")
        for v in range(n):
            if locked[v]:
                continue
            trial = list(side)
            trial[v] = 1 - trial[v]
            if 0 < sum(trial) < n:
                ph = phi(n, edges, weights, trial)
                if ph < bphi:
                    bv, bphi = v, ph
        if bv < 0:
            break
        side[bv] = 1 - side[bv]
        locked[bv] = True
        log.append(bv)
        if bphi < best - tol:
            best, kept = bphi, len(log)
    for v in reversed(log[kept:]):
        side[v] = 1 - side[v]
    return side, kept


def best_single_move_gain(n, s, labels, clique_adj=None):
    """Largest cost decrease of any single node move (to any cluster or a new one)."""
    best = 0.0
    for i in range(n):
        a = labels[i]
        stay = sum(s(i, j) for j in members(labels, a) if j != i)
        options = [0.0] if labels.count(a) > 1 else []
        for c in set(labels) - {a}:
            mem = members(labels, c)
            if clique_adj is not None and not all(j in clique_adj[i] for j in mem):
                continue
            options.append(sum(s(i, j) for j in mem))
        for v in options:
            best = max(best, v - stay)
    return best
