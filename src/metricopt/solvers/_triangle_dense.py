"""numba kernels of the triangle constraints of ``K_n`` with dense dual storage.

The Hildreth steps on the three triangle constraints of one triplet
(:func:`_step3_sums`) and the branch-free row of triplets (:func:`_row_dense`, also run
by the sparse-dual kernels of :mod:`metricopt.solvers._triangle_sparse` on a scratch),
the diagonal-order pass over all triangle duals stored densely
(:func:`triangle_rows_dense`, :func:`triangle_pass_dense`) and the extrapolation of
those duals (:func:`extrapolate_dense_duals`). Hildreth conventions: those of
:mod:`metricopt.solvers._constraint_kernels`; layouts and the dense dual layout:
:mod:`metricopt.solvers._layouts`. Constraint ``c`` of triplet ``(i, j, k)``:
``c = 0: x_ij <= x_ik + x_jk``, ``c = 1: x_ik <= x_ij + x_jk``,
``c = 2: x_jk <= x_ij + x_ik``.

With every triangle dual stored (3 C(n,3) float64, row by row in the diagonal order:
the z0, z1, z2 of a row's triplets as three contiguous runs), a row is a branch-free
loop over three contiguous pair streams that LLVM vectorises. Two conditions keep it
vectorisable: no Python-style division check (``error_model="numpy"``; the divisor
``wa + wb + wc`` is positive) and sum reductions instead of max reductions (the largest
violation is reduced per row afterwards). Streams that overlap (shapes with s1 = s2 <
vector width) take LLVM's scalar fallback after its run-time alias check, so the
iterates equal those of the sparse kernel exactly.

Kernels are pure and trust their inputs, as those of
:mod:`metricopt.solvers._constraint_kernels` (which also lists the references).

numba's on-disk cache checks only a kernel's own file: after a change to
:func:`_step3_sums` or :func:`_row_dense`, touch :mod:`metricopt.solvers._triangle_sparse`
(and :mod:`metricopt.solvers._dykstra_parallel`, which inlines its :func:`_row`) or clear
``__pycache__``, or their cached kernels keep the old code.
"""

import numba
import numpy as np

from .. import _config
from ._layouts import diagonal_offsets, diagonal_rows

__all__ = ["triangle_rows_dense", "triangle_pass_dense", "extrapolate_dense_duals"]

_FM = set(_config.FASTMATH)
_BIG = np.iinfo(np.int64).max


@numba.njit(inline="always", fastmath=_FM, error_model="numpy")
def _step3_sums(xa, xb, xc, wa, wb, wc, z0, z1, z2):
    """Hildreth steps on the three triangle constraints of one triplet (Alg. 2).

    Returns the new values and duals, the largest violation met before a step, the sum
    of the three ``|dz|`` and the number of nonzero duals. Branch-free (selects only),
    so that the dense rows vectorise.
    """
    qinv = 1.0 / (wa + wb + wc)
    v0 = xa - xb - xc
    zn = z0 + v0 * qinv
    zn = zn if zn > 0.0 else 0.0
    d0 = zn - z0
    xa -= d0 * wa
    xb += d0 * wb
    xc += d0 * wc
    z0 = zn
    v1 = xb - xa - xc
    zn = z1 + v1 * qinv
    zn = zn if zn > 0.0 else 0.0
    d1 = zn - z1
    xb -= d1 * wb
    xa += d1 * wa
    xc += d1 * wc
    z1 = zn
    v2 = xc - xa - xb
    zn = z2 + v2 * qinv
    zn = zn if zn > 0.0 else 0.0
    d2 = zn - z2
    xc -= d2 * wc
    xa += d2 * wa
    xb += d2 * wb
    z2 = zn
    v = v0 if v0 > v1 else v1
    v = v if v > v2 else v2
    nz = (1.0 if z0 > 0.0 else 0.0) + (1.0 if z1 > 0.0 else 0.0) + (1.0 if z2 > 0.0 else 0.0)
    return xa, xb, xc, z0, z1, z2, v, abs(d0) + abs(d1) + abs(d2), nz


@numba.njit(inline="always", fastmath=_FM, boundscheck=False, error_model="numpy")
def _row_dense(xa_, xb_, xc_, wa_, wb_, wc_, z0_, z1_, z2_, length, scratch):
    """One row with stored duals; each argument is a view of one contiguous stream.

    The violations met go to ``scratch`` and are reduced afterwards by
    :func:`_lane_max` (a max reduction inside the loop would stop LLVM vectorising it).
    """
    dsum = 0.0
    nzs = 0.0
    for g in range(length):
        xa, xb, xc, z0, z1, z2, v, d, nz = _step3_sums(
            xa_[g], xb_[g], xc_[g], wa_[g], wb_[g], wc_[g], z0_[g], z1_[g], z2_[g])
        xa_[g] = xa
        xb_[g] = xb
        xc_[g] = xc
        z0_[g] = z0
        z1_[g] = z1
        z2_[g] = z2
        scratch[g] = v
        dsum += d
        nzs += nz
    return _lane_max(scratch, length), dsum, nzs


@numba.njit(inline="always", fastmath=_FM, boundscheck=False)
def _lane_max(s, length):
    """``max(0, s[:length])`` with eight independent chains."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = 0.0
    g = 0
    while g + 8 <= length:
        m0 = s[g] if s[g] > m0 else m0
        m1 = s[g + 1] if s[g + 1] > m1 else m1
        m2 = s[g + 2] if s[g + 2] > m2 else m2
        m3 = s[g + 3] if s[g + 3] > m3 else m3
        m4 = s[g + 4] if s[g + 4] > m4 else m4
        m5 = s[g + 5] if s[g + 5] > m5 else m5
        m6 = s[g + 6] if s[g + 6] > m6 else m6
        m7 = s[g + 7] if s[g + 7] > m7 else m7
        g += 8
    while g < length:
        m0 = s[g] if s[g] > m0 else m0
        g += 1
    return max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, error_model="numpy")
def triangle_rows_dense(x, winv, n, rows, z, state, acc, max_rows):
    """Up to ``max_rows`` rows of a diagonal-order pass with dense dual storage.

    Same order and iterates as :func:`triangle_rows_diagonal`; the duals of all
    ``3 C(n,3)`` triangle constraints live in ``z`` in the layout of ``rows``
    (:func:`diagonal_rows`). ``state[0]`` is the next row (0 at the start of a pass),
    ``acc`` = (largest violation met, sum of ``|dz|``, number of nonzero duals); both
    are carried between calls. The sum bounds the largest dual change from above.

    Returns
    -------
    done : bool
        True when the pass is complete.
    """
    off = diagonal_offsets(n)
    scratch = np.empty(max(n, 1))
    vmax = acc[0]
    dsum = acc[1]
    nzs = acc[2]
    r = state[0]
    stop = min(rows.shape[0], r + max_rows)
    while r < stop:
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        m = rows[r, 2]
        t3 = rows[r, 3]
        a0 = off[s1]
        b0 = off[s1 + s2]
        c0 = off[s2] + s1
        v, d, nz = _row_dense(x[a0:a0 + m], x[b0:b0 + m], x[c0:c0 + m], winv[a0:a0 + m],
                              winv[b0:b0 + m], winv[c0:c0 + m], z[t3:t3 + m],
                              z[t3 + m:t3 + 2 * m], z[t3 + 2 * m:t3 + 3 * m], m, scratch)
        vmax = max(vmax, v)
        dsum += d
        nzs += nz
        r += 1
    state[0] = r
    acc[0] = vmax
    acc[1] = dsum
    acc[2] = nzs
    return r >= rows.shape[0]


@numba.njit(cache=True)
def triangle_pass_dense(x, winv, n, block, z):
    """One diagonal-order pass with dense dual storage; returns ``(vmax, dsum, nnz)``
    (see :func:`triangle_rows_dense`)."""
    state = np.zeros(1, dtype=np.int64)
    acc = np.zeros(3)
    triangle_rows_dense(x, winv, n, diagonal_rows(n, block), z, state, acc, _BIG)
    return acc[0], acc[1], int(acc[2])


@numba.njit(inline="always", fastmath=_FM, boundscheck=False, error_model="numpy")
def _extrapolate_row(xa_, xb_, xc_, wa_, wb_, wc_, z0_, z1_, z2_, r0_, r1_, r2_, beta,
                     length):
    for g in range(length):
        o0 = z0_[g]
        o1 = z1_[g]
        o2 = z2_[g]
        n0 = o0 + beta * (o0 - r0_[g])
        n1 = o1 + beta * (o1 - r1_[g])
        n2 = o2 + beta * (o2 - r2_[g])
        n0 = n0 if n0 > 0.0 else 0.0
        n1 = n1 if n1 > 0.0 else 0.0
        n2 = n2 if n2 > 0.0 else 0.0
        d0 = n0 - o0
        d1 = n1 - o1
        d2 = n2 - o2
        xa_[g] -= wa_[g] * (d0 - d1 - d2)
        xb_[g] -= wb_[g] * (d1 - d0 - d2)
        xc_[g] -= wc_[g] * (d2 - d0 - d1)
        r0_[g] = o0
        r1_[g] = o1
        r2_[g] = o2
        z0_[g] = n0
        z1_[g] = n1
        z2_[g] = n2


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, error_model="numpy")
def extrapolate_dense_duals(x, winv, n, rows, z, zref, beta):
    """Move dense triangle duals along their recent direction and keep ``x`` consistent.

    ``z <- max(0, z + beta (z - zref))`` entrywise, ``zref <- z`` (the duals before the
    move), and ``x <- x - W^{-1} A' (z_new - z_old)``, so that ``x = x0 - W^{-1} A' z``
    still holds exactly for the moved duals (the Dykstra invariant). Layout of
    :func:`diagonal_rows`.
    """
    off = diagonal_offsets(n)
    for r in range(rows.shape[0]):
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        m = rows[r, 2]
        t3 = rows[r, 3]
        a0 = off[s1]
        b0 = off[s1 + s2]
        c0 = off[s2] + s1
        _extrapolate_row(x[a0:a0 + m], x[b0:b0 + m], x[c0:c0 + m], winv[a0:a0 + m],
                         winv[b0:b0 + m], winv[c0:c0 + m], z[t3:t3 + m], z[t3 + m:t3 + 2 * m],
                         z[t3 + 2 * m:t3 + 3 * m], zref[t3:t3 + m], zref[t3 + m:t3 + 2 * m],
                         zref[t3 + 2 * m:t3 + 3 * m], beta, m)
