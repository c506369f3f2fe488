"""Slow, plain-Python references for the rounding kernels and objectives.

Each function follows the textbook description directly (sets and loops, quantities
recomputed from scratch) so that the numba kernels can be compared against it on tiny
inputs.
"""

import heapq
import itertools
import math

import numpy as np

_MASK = (1 << 64) - 1


def splitmix_uniforms(seed):
    """Generator of the uniforms the kernels draw from ``seed`` (SplitMix64, 53 bits)."""
    state = seed & _MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        yield (z >> 11) * 2.0**-53


def pair_value(problem, x, i, j):
    """``x`` of the pair {i, j}; None when a sparse problem has no such variable."""
    if problem.structure == "dense":
        a, b = min(i, j), max(i, j)
        return x[a * problem.n - a * (a + 1) // 2 + b - a - 1]
    for v, (a, b) in enumerate(problem.pairs.tolist()):
        if {a, b} == {i, j}:
            return x[v]
    return None


def neighbours(problem, i):
    """Nodes paired with ``i`` (all others for a dense problem), in increasing order."""
    if problem.structure == "dense":
        return [j for j in range(problem.n) if j != i]
    out = [b for a, b in problem.pairs.tolist() if a == i] + [a for a, b in problem.pairs.tolist() if b == i]
    return sorted(out)


def pivot(problem, x, order, threshold, seed):
    """Pivot rounding; candidates drawn in the kernels' order (see the kernels' docs)."""
    rand = splitmix_uniforms(seed)
    n = problem.n
    labels = [-1] * n
    alive = list(order)
    k = 0
    while alive:
        p = alive[0]
        labels[p] = k
        if problem.structure == "dense":
            cands = alive[1:]
        else:
            cands = [j for j in neighbours(problem, p) if labels[j] < 0]
        for j in cands:
            xv = pair_value(problem, x, p, j)
            join = xv < threshold if threshold >= 0 else next(rand) < 1.0 - xv
            if join:
                labels[j] = k
        alive = [v for v in alive if labels[v] < 0]
        k += 1
    return np.array(labels)


def cd_pivot(problem, x, order, threshold=0.5):
    """Cluster-deletion pivot with the greedy clique guard."""
    n = problem.n
    edges = {tuple(e) for e in problem.pairs.tolist()}
    adjacent = lambda a, b: (min(a, b), max(a, b)) in edges  # noqa: E731
    labels = [-1] * n
    k = 0
    skipped = 0
    for p in order:
        if labels[p] >= 0:
            continue
        labels[p] = k
        cands = [(pair_value(problem, x, p, j), j) for j in neighbours(problem, p) if labels[j] < 0]
        cands = sorted([c for c in cands if c[0] < threshold], key=lambda c: c[0])
        members = [p]
        for _, j in cands:
            if all(adjacent(j, m) for m in members):
                labels[j] = k
                members.append(j)
            else:
                skipped += 1
        k += 1
    return np.array(labels), skipped


def _dijkstra(problem, x, source, alive, radius):
    dist = {source: 0.0}
    heap = [(0.0, source)]
    done = set()
    while heap:
        dv, v = heapq.heappop(heap)
        if v in done:
            continue
        done.add(v)
        for z in neighbours(problem, v):
            if z not in alive or z in done:
                continue
            nd = dv + min(max(pair_value(problem, x, v, z), 0.0), 1.0)
            if nd < radius and nd < dist.get(z, math.inf):
                dist[z] = nd
                heapq.heappush(heap, (nd, z))
    return dist


def region_growing(problem, x, order, radius=1 / 3, growth=3.0):
    """CGW region growing with every ball's cut and volume recomputed from scratch."""
    n = problem.n
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    w, d = problem.weights, problem.target
    if problem.structure == "dense":
        pairs = list(itertools.combinations(range(n), 2))
    else:
        pairs = [tuple(p) for p in problem.pairs.tolist()]
    similar = {}
    for v, (a, b) in enumerate(pairs):
        if w[v] > 0 and d[v] < 0.5:
            similar[(a, b)] = (w[v], clip(x[v]))
    seed_volume = sum(wx[0] * wx[1] for wx in similar.values()) / n
    c_ln = growth * math.log(n + 1)
    labels = [-1] * n
    k = 0
    for u in order:
        if labels[u] >= 0:
            continue
        alive = {v for v in range(n) if labels[v] < 0}
        if problem.structure == "dense":
            dist = {v: (0.0 if v == u else clip(pair_value(problem, x, u, v))) for v in alive}
            dist = {v: dv for v, dv in dist.items() if dv < radius}
        else:
            dist = _dijkstra(problem, x, u, alive, radius)
        levels = sorted(set(dist.values()))
        balls = []
        for g, r in enumerate(levels):
            ball = {v for v, dv in dist.items() if dv <= r}
            r_hi = levels[g + 1] if g + 1 < len(levels) else radius
            cut = 0.0
            vol = seed_volume
            for (a, b), (wv, xv) in similar.items():
                if a not in alive or b not in alive:
                    continue
                if a in ball and b in ball:
                    vol += wv * xv
                elif a in ball or b in ball:
                    inner = a if a in ball else b
                    cut += wv
                    vol += wv * (r_hi - dist[inner])
            balls.append((ball, cut, vol))
            if cut <= c_ln * vol:
                break
        chosen = None
        for ball, cut, vol in balls:
            if cut <= c_ln * vol:
                chosen = ball
                break
        if chosen is None:
            chosen = min(balls, key=lambda b: b[1] / b[2] if b[2] > 0 else math.inf)[0]
        for v in chosen:
            labels[v] = k
        k += 1
    return np.array(labels)


def cc_cost(problem, labels):
    """Correlation-clustering cost by a double loop over the variables."""
    total = problem.constant
    if problem.structure == "dense":
        pairs = itertools.combinations(range(problem.n), 2)
    else:
        pairs = (tuple(p) for p in problem.pairs.tolist())
    for v, (a, b) in enumerate(pairs):
        xv = 0.0 if labels[a] == labels[b] else 1.0
        total += problem.weights[v] * abs(xv - problem.target[v])
    return total


def cd_cost(problem, labels):
    """Number (cost) of edges between clusters; None if a cluster is not a clique."""
    edges = {tuple(e) for e in problem.pairs.tolist()}
    for a, b in itertools.combinations(range(problem.n), 2):
        if labels[a] == labels[b] and (a, b) not in edges:
            return None
    return problem.constant + sum(
        problem.cost[v] for v, (a, b) in enumerate(problem.pairs.tolist()) if labels[a] != labels[b]
    )


def phi(n, edges, side):
    """``n cut(S) / (|S| |V \\ S|)`` with unit edge weights."""
    side = set(int(v) for v in side)
    cut = sum(1 for a, b in edges if (a in side) != (b in side))
    return n * cut / (len(side) * (n - len(side)))


def best_row_sweep(problem, x, edges):
    """Smallest phi over all prefixes of every row's (stable) order."""
    n = problem.n
    best = math.inf
    for u in range(n):
        others = sorted((pair_value(problem, x, u, v), v) for v in range(n) if v != u)
        order = [u] + [v for _, v in others]
        for k in range(1, n):
            best = min(best, phi(n, edges, order[:k]))
    return best


def sparsest_cut_brute_force(n, edges):
    """Exact ``min_S phi(S)`` over all 2^(n-1) - 1 cuts."""
    best = math.inf
    for mask in range(1, 2 ** (n - 1)):
        side = [v for v in range(n) if mask >> v & 1]
        best = min(best, phi(n, edges, side))
    return best
