"""Slow reference of the triangle-inequality check (one triplet at a time, pure Python)."""

import itertools

__all__ = ["violated_triplets", "worst_detours"]


def violated_triplets(d, threshold):
    """Triplets ``{i, j, k}`` whose excess ``d_ab - d_ac - d_cb`` exceeds ``threshold``
    for some labelling, counted once each, and the largest excess over all triplets."""
    n = len(d)
    count, worst = 0, 0.0
    for i, j, k in itertools.combinations(range(n), 3):
        excesses = (d[i][j] - d[i][k] - d[k][j], d[i][k] - d[i][j] - d[j][k],
                    d[j][k] - d[j][i] - d[i][k])
        worst = max(worst, *excesses)
        if any(e > threshold for e in excesses):
            count += 1
    return count, worst


def worst_detours(d, threshold):
    """For each pair ``(i, j)``, ``i < j``, that is the long side of a violation: the
    largest excess over its detours ``k``."""
    n = len(d)
    best = {}
    for i, j in itertools.combinations(range(n), 2):
        for k in range(n):
            if k in (i, j):
                continue
            excess = d[i][j] - d[i][k] - d[k][j]
            if excess > threshold and excess > best.get((i, j), (0.0,))[0]:
                best[(i, j)] = (excess, k)
    return best
