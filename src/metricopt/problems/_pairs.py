"""Packed indexing of the pairs i < j of ``n`` nodes (row-major upper triangle).

Variable ``v`` of a dense problem is the pair ``(i, j)``, ``i < j``, with
``v = i*n - i*(i+1)/2 + (j - i - 1)``; i.e. the order of ``numpy.triu_indices(n, 1)``.
"""

import numpy as np

__all__ = ["n_pairs", "pair_index", "pair_arrays", "packed_to_square", "square_to_packed"]


def n_pairs(n):
    """Number of unordered pairs of ``n`` nodes."""
    return n * (n - 1) // 2


def pair_index(i, j, n):
    """Packed index of the pair ``{i, j}`` (works elementwise on integer arrays)."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    lo = np.minimum(i, j)
    hi = np.maximum(i, j)
    return lo * n - lo * (lo + 1) // 2 + (hi - lo - 1)


def pair_arrays(n):
    """Arrays ``(rows, cols)`` of all pairs in packed order."""
    r, c = np.triu_indices(n, 1)
    return r.astype(np.int64), c.astype(np.int64)


def packed_to_square(x, n, diagonal=0.0):
    """Symmetric ``(n, n)`` array from a packed vector."""
    out = np.full((n, n), diagonal, dtype=np.float64)
    r, c = np.triu_indices(n, 1)
    out[r, c] = x
    out[c, r] = x
    return out


def square_to_packed(a):
    """Packed vector of the strict upper triangle of a square array."""
    n = a.shape[0]
    return np.ascontiguousarray(a[np.triu_indices(n, 1)], dtype=np.float64)
