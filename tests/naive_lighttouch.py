"""Slow plain-Python references for the lighttouch kernels (tests only).

Each function computes what its kernel in ``metricopt.solvers._lighttouch_kernels``
computes, from explicit constraint rows (every triangle inequality listed, the groups
as lists of them) rather than index arithmetic, so the two can be compared.
"""

import math

import numpy as np

MASK = (1 << 64) - 1


def rng_stream(state, count):
    """``count`` outputs of xoshiro256** from ``state`` (4 ints), and the new state."""
    s = [int(v) for v in state]

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK

    out = []
    for _ in range(count):
        out.append((rotl((s[1] * 5) & MASK, 7) * 9) & MASK)
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out, s


def pair_of(n):
    """``{(i, j): packed index}`` for ``i < j``."""
    idx = {}
    v = 0
    for i in range(n):
        for j in range(i + 1, n):
            idx[(i, j)] = v
            v += 1
    return idx


def dense_rows(n):
    """Every triangle inequality ``x_a <= x_b + x_c`` as ``(a, b, c)`` packed indices,
    grouped by the long side ``a``: ``rows[a]`` lists those of pair ``a``."""
    idx = pair_of(n)
    rows = {v: [] for v in idx.values()}
    for (i, j), v in idx.items():
        for k in range(n):
            if k in (i, j):
                continue
            rows[v].append((v, idx[tuple(sorted((i, k)))], idx[tuple(sorted((j, k)))]))
    return rows


def edge_rows(tri, wed):
    """The explicit family of an edge problem by id: ``(+1 var, -1 vars, rhs)`` as
    ``(a, (b, c), 0)`` for triangle rows and ``(None, (a, b), 1)`` for wedge rows
    (``1 - x_a - x_b <= 0``)."""
    rows = []
    for t in tri:
        for s in range(3):
            rows.append((t[s], (t[(s + 1) % 3], t[(s + 2) % 3]), 0.0))
    for a, b in wed:
        rows.append((None, (a, b), 1.0))
    return rows


def row_value(row, x):
    a, rest, rhs = row
    return (x[a] if a is not None else 0.0) - sum(x[r] for r in rest) + rhs


def group_violations_dense(x, n, gsz):
    """Largest ``x_a - x_b - x_c`` per group of ``gsz`` consecutive pairs."""
    rows = dense_rows(n)
    npairs = n * (n - 1) // 2
    out = []
    for lo in range(0, npairs, gsz):
        vals = [x[a] - x[b] - x[c] for v in range(lo, min(lo + gsz, npairs))
                for (a, b, c) in rows[v]]
        out.append(max(vals) if vals else -math.inf)
    return np.array(out)


def group_violations_edges(x, tri, wed, gsz):
    """Largest row value per group of ``gsz`` consecutive family ids."""
    rows = edge_rows(tri, wed)
    return np.array([max(row_value(r, x) for r in rows[lo:lo + gsz])
                     for lo in range(0, len(rows), gsz)])


def top_active_dense(x, n, floor, cap):
    """The ``cap`` largest values ``x_a - x_b - x_c >= floor`` with their rows."""
    rows = dense_rows(n)
    cand = sorted(((x[a] - x[b] - x[c], (a, b, c)) for v in rows for (a, b, c) in rows[v]
                   if x[a] - x[b] - x[c] >= floor), reverse=True)
    return cand[:cap]


def iterate_average(iterates):
    """The plain average of a list of iterates."""
    return np.mean(np.array(iterates), axis=0)
