"""numba kernels that list the triangle constraints holding a positive dual.

The dykstra backend stores its triangle duals in the diagonal visiting order
(:func:`metricopt.solvers._layouts.diagonal_rows`): densely (three runs of
``length`` duals per row) or as a sparse list of positions ``3 t + c`` (constraint
``c`` of the ``t``-th triplet visited). Triplet ``g`` of row ``(s1, s2)`` is
``(g, g+s1, g+s1+s2)`` with pairs ``a = (g, g+s1)``, ``b = (g, g+s1+s2)`` and
``c = (g+s1, g+s1+s2)``; constraint 0 is ``x_a <= x_b + x_c``, 1 is
``x_b <= x_a + x_c``, 2 is ``x_c <= x_a + x_b``. Both kernels return packed pair indices
``(long, other, other)`` and the duals, the form of :func:`metricopt.solvers.core.lp_matrix.triangle_rows`.
Slow references: ``tests/naive_active.py``.
"""

import numba
import numpy as np

__all__ = ["dense_active_triangles", "sparse_active_triangles"]


@numba.njit(inline="always")
def _put(out, k, c, pa, pb, pc):
    if c == 0:
        out[k, 0], out[k, 1], out[k, 2] = pa, pb, pc
    elif c == 1:
        out[k, 0], out[k, 1], out[k, 2] = pb, pa, pc
    else:
        out[k, 0], out[k, 1], out[k, 2] = pc, pa, pb


@numba.njit(cache=True)
def dense_active_triangles(z, rows, off, to_packed):
    """Triangles whose dense dual ``z`` is positive.

    Parameters
    ----------
    z : ndarray of float64
        Dense duals in the layout of ``rows``.
    rows : ndarray of shape (R, 5), int64
        :func:`~metricopt.solvers._layouts.diagonal_rows`.
    off : ndarray of int64
        :func:`~metricopt.solvers._layouts.diagonal_offsets`.
    to_packed : ndarray of int64
        Packed index of each diagonal-layout position.

    Returns
    -------
    triangles : ndarray of shape (k, 3), int64
    duals : ndarray of shape (k,)
    """
    count = 0
    for i in range(z.shape[0]):
        count += z[i] > 0.0
    out = np.empty((count, 3), dtype=np.int64)
    dual = np.empty(count)
    k = 0
    for r in range(rows.shape[0]):
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        m = rows[r, 2]
        t3 = rows[r, 3]
        for c in range(3):
            for g in range(m):
                if z[t3 + c * m + g] > 0.0:
                    _put(out, k, c, to_packed[off[s1] + g], to_packed[off[s1 + s2] + g],
                         to_packed[off[s2] + s1 + g])
                    dual[k] = z[t3 + c * m + g]
                    k += 1
    return out, dual


@numba.njit(cache=True)
def sparse_active_triangles(pos, val, rows, off, to_packed):
    """Triangles of a sparse dual list ``(pos, val)`` (visiting order) with ``val > 0``.

    Parameters
    ----------
    pos : ndarray of int64
        Increasing positions ``3 t + c``.
    val : ndarray of float64
    rows, off, to_packed
        As in :func:`dense_active_triangles`.

    Returns
    -------
    triangles : ndarray of shape (k, 3), int64
    duals : ndarray of shape (k,)
    """
    count = 0
    for i in range(val.shape[0]):
        count += val[i] > 0.0
    out = np.empty((count, 3), dtype=np.int64)
    dual = np.empty(count)
    k = 0
    r = 0
    for q in range(pos.shape[0]):
        if not val[q] > 0.0:
            continue
        t = pos[q] // 3
        c = pos[q] - 3 * t
        while t >= rows[r, 4] + rows[r, 2]:
            r += 1
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        g = t - rows[r, 4]
        _put(out, k, c, to_packed[off[s1] + g], to_packed[off[s1 + s2] + g],
             to_packed[off[s2] + s1 + g])
        dual[k] = val[q]
        k += 1
    return out, dual
