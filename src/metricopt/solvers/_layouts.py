"""Pair layouts and visiting-order tables of the triangle kernels (numba).

Dense (``K_n``) pair variables are stored in one of two layouts (:data:`LAYOUTS` names
the one each visiting order works on):

* the *diagonal layout*: pair ``(a, a + s)`` at ``off[s] + a`` (:func:`diagonal_offsets`;
  :func:`packed_to_diagonal_index` maps the packed order onto it;
  :func:`packed_to_diagonal` and :func:`diagonal_to_packed` move arrays between the two
  without an index array), used by the diagonal
  order, which streams the three pairs of consecutive triplets;
* the *packed* row-major layout: pair ``(i, j)``, ``i < j``, at ``r[i] + j``
  (:func:`packed_row_offsets`, the problems' own order), used by the lexicographic and
  parallel orders.

The diagonal order visits the triplets ``(i, i+s1, i+s1+s2)`` row by row, one row per
shape ``(s1, s2)``; :func:`diagonal_rows` tabulates the rows and where their duals start.
Triangle duals are held either densely (every dual, row by row: the ``z0``, ``z1``,
``z2`` of a row's triplets as three contiguous runs) or sparsely (the nonzero ones as
``(pos, val)`` in visiting order, position ``3 t + c`` for constraint ``c`` of the
``t``-th visited triplet); :func:`dense_to_sparse_duals` and
:func:`sparse_to_dense_duals` convert between the two.

Every kernel is pure: arrays and scalars in, arrays and scalars out.
"""

import numba
import numpy as np

__all__ = [
    "diagonal_offsets",
    "packed_to_diagonal_index",
    "packed_to_diagonal",
    "diagonal_to_packed",
    "diagonal_positions_to_packed",
    "packed_row_offsets",
    "diagonal_rows",
    "dense_to_sparse_duals",
    "sparse_to_dense_duals",
    "LAYOUTS",
]


@numba.njit(cache=True)
def diagonal_offsets(n):
    """``off[s]`` such that pair ``(a, a+s)`` is stored at ``off[s] + a`` (``off[0]`` unused)."""
    off = np.zeros(max(n, 1), dtype=np.int64)
    acc = 0
    for s in range(1, n):
        off[s] = acc
        acc += n - s
    return off


@numba.njit(cache=True)
def packed_to_diagonal_index(n):
    """``idx[p]``: diagonal-layout position of the ``p``-th pair in packed (row-major) order."""
    off = diagonal_offsets(n)
    idx = np.empty(n * (n - 1) // 2, dtype=np.int64)
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            idx[p] = off[j - i] + i
            p += 1
    return idx


@numba.njit(cache=True)
def _move_pairs(src, n, out, to_diagonal):
    """Copy the last axis of ``src`` into ``out`` between the packed and the diagonal
    layout (``to_diagonal``: packed -> diagonal), the positions computed on the fly."""
    off = diagonal_offsets(n)
    s2 = src.reshape(-1, src.shape[-1])
    o2 = out.reshape(-1, out.shape[-1])
    for r in range(s2.shape[0]):
        p = 0
        for i in range(n):
            for j in range(i + 1, n):
                if to_diagonal:
                    o2[r, off[j - i] + i] = s2[r, p]
                else:
                    o2[r, p] = s2[r, off[j - i] + i]
                p += 1
    return out


def packed_to_diagonal(src, n, out):
    """``out[idx[p]] = src[..., p]`` for ``idx = packed_to_diagonal_index(n)``, on the
    last axis of 1- or 2-d arrays, without the 8 bytes per pair of ``idx``."""
    return _move_pairs(src, n, out, True)


def diagonal_to_packed(src, n, out):
    """Inverse of :func:`packed_to_diagonal`: ``out[..., p] = src[..., idx[p]]``."""
    return _move_pairs(src, n, out, False)


@numba.njit(cache=True)
def diagonal_positions_to_packed(pos, n):
    """Packed indices of the pairs at diagonal-layout positions ``pos`` (int64)."""
    off = diagonal_offsets(n)
    out = np.empty(pos.shape[0], dtype=np.int64)
    for t in range(pos.shape[0]):
        p = np.int64(pos[t])
        lo = 1
        hi = n - 1
        while lo < hi:  # the diagonal s with off[s] <= p < off[s + 1]
            mid = (lo + hi + 1) // 2
            if off[mid] <= p:
                lo = mid
            else:
                hi = mid - 1
        i = p - off[lo]
        out[t] = i * n - i * (i + 1) // 2 + (i + lo) - i - 1
    return out


@numba.njit(cache=True)
def packed_row_offsets(n):
    """``r[i]`` such that pair ``(i, j)``, ``i < j``, is at ``r[i] + j`` in packed order."""
    r = np.zeros(max(n, 1), dtype=np.int64)
    for i in range(n):
        r[i] = i * n - i * (i + 1) // 2 - i - 1
    return r


@numba.njit(cache=True)
def diagonal_rows(n, block):
    """The rows of the diagonal order, in visiting order, as an int64 array of shape
    ``(R, 5)``: ``s1, s2, length, start, first_triplet``. Row ``(s1, s2)`` holds the
    ``length = n - s1 - s2`` triplets ``(i, i+s1, i+s1+s2)``; its dense duals start at
    ``start`` (``z0`` run, then ``z1``, then ``z2``) and its first triplet is the
    ``first_triplet``-th one visited. O(n^2); computed once per solve."""
    nrows = (n - 1) * (n - 2) // 2 if n >= 3 else 0
    rows = np.empty((nrows, 5), dtype=np.int64)
    r = 0
    t = 0
    sb = 1
    while sb < n - 1:
        for s2 in range(1, n - 1):
            for s1 in range(sb, min(sb + block, n - s2)):
                m = n - s1 - s2
                rows[r, 0] = s1
                rows[r, 1] = s2
                rows[r, 2] = m
                rows[r, 3] = 3 * t
                rows[r, 4] = t
                r += 1
                t += m
        sb += block
    return rows


@numba.njit(cache=True)
def dense_to_sparse_duals(z, rows):
    """The nonzero entries of dense duals ``z`` (layout of :func:`diagonal_rows`) as
    ``(pos, val)`` in the sparse kernels' convention (position ``3 t + c`` for
    constraint ``c`` of the ``t``-th triplet visited)."""
    count = 0
    for i in range(z.shape[0]):
        count += z[i] != 0.0
    pos = np.empty(count, dtype=np.int64)
    val = np.empty(count)
    k = 0
    for r in range(rows.shape[0]):
        m = rows[r, 2]
        t3 = rows[r, 3]
        t = rows[r, 4]
        for g in range(m):
            for c in range(3):
                v = z[t3 + c * m + g]
                if v != 0.0:
                    pos[k] = 3 * (t + g) + c
                    val[k] = v
                    k += 1
    return pos, val


@numba.njit(cache=True)
def sparse_to_dense_duals(pos, val, rows):
    """Inverse of :func:`dense_to_sparse_duals`."""
    total = 0
    if rows.shape[0]:
        total = rows[-1, 3] + 3 * rows[-1, 2]
    z = np.zeros(total)
    k = 0
    for r in range(rows.shape[0]):
        m = rows[r, 2]
        t3 = rows[r, 3]
        t = rows[r, 4]
        while k < pos.shape[0] and pos[k] < 3 * (t + m):
            z[t3 + (pos[k] % 3) * m + pos[k] // 3 - t] = val[k]
            k += 1
    return z


#: pair layout each order works on: "diagonal" (:func:`diagonal_offsets`) or "packed"
LAYOUTS = {"diagonal": "diagonal", "lexicographic": "packed", "parallel": "packed"}
