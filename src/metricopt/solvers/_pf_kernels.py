"""numba kernels of the Project and Forget backend (:mod:`metricopt.solvers.project_forget`).

Every kernel is pure: arrays and scalars in, arrays and scalars out. Inputs are assumed
checked by the driver: contiguous float64 / int64 arrays of matching lengths.

Conventions (the same as :mod:`metricopt.solvers._constraint_kernels`):

* the QP is ``min c'v + (1/2 gamma) (v - delta)' W (v - delta)`` over ``a_t' v <= b_t``;
  ``winv`` is the diagonal of ``W^{-1}``;
* a dual is kept as ``z_t = gamma * y_t``, so ``v = v0 - W^{-1} A' z`` and a visit of
  constraint ``t`` is the Hildreth step (PF §1.3 with the quadratic Bregman divergence)
  ``z_t <- max(0, z_t + (a_t' v - b_t) / (a_t' W^{-1} a_t))``,
  ``v <- v - (z_t(new) - z_t(old)) W^{-1} a_t``;
* the active list is flat: constraint ``c`` has the variable ids
  ``mem[off[c]:off[c+1]]``, its dual ``z[c]`` and its type ``kind[c]``:
  ``0`` a cycle inequality ``x_first - sum(x_rest) <= 0`` (the first id is the edge,
  the rest its path), ``1`` a covering inequality ``-sum(x) <= -1`` (the open wedges
  of cluster deletion).

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
.. [2] Hildreth, C. (1957). A quadratic programming procedure. Naval Res. Logist. Q.
       4(1), 79-85.
"""

import numba
import numpy as np

from .. import _config

__all__ = [
    "gather_cycles",
    "project_active",
    "forget_inactive",
    "edge_oracle",
]

_FM = set(_config.FASTMATH)


# ------------------------------------------------------------------- cycle lists
@numba.njit(cache=True)
def gather_cycles(off, mem, order):
    """Reorder a flat cycle list: cycle ``k`` of the result is cycle ``order[k]``.

    Returns ``(new_off, new_mem)``.
    """
    k = order.shape[0]
    new_off = np.empty(k + 1, dtype=np.int64)
    new_off[0] = 0
    for c in range(k):
        o = order[c]
        new_off[c + 1] = new_off[c] + off[o + 1] - off[o]
    new_mem = np.empty(new_off[k], dtype=np.int64)
    for c in range(k):
        o = order[c]
        a = off[o]
        b = new_off[c]
        for p in range(off[o + 1] - a):
            new_mem[b + p] = mem[a + p]
    return new_off, new_mem


# ------------------------------------------------------------------- projections
@numba.njit(fastmath=_FM, cache=True)
def project_active(x, winv, off, mem, kind, z, nc):
    """One Hildreth pass over the first ``nc`` constraints of the active list.

    Parameters
    ----------
    x, winv : ndarray of shape (N,)
        ``x`` is updated in place.
    off, mem, kind, z : ndarray
        The flat active list (see the module docstring); ``z`` is updated in place.
    nc : int

    Returns
    -------
    vmax : float
        Largest violation met at a visit.
    smax : float
        Largest ``|dz|``.
    nnz : int
        Constraints left with a nonzero dual.
    """
    vmax = 0.0
    smax = 0.0
    nnz = 0
    for c in range(nc):
        a = off[c]
        b = off[c + 1]
        if kind[c] == 0:
            e0 = mem[a]
            v = x[e0]
            q = winv[e0]
            for p in range(a + 1, b):
                v -= x[mem[p]]
                q += winv[mem[p]]
        else:
            e0 = -1
            v = 1.0
            q = 0.0
            for p in range(a, b):
                v -= x[mem[p]]
                q += winv[mem[p]]
        if v > vmax:
            vmax = v
        zo = z[c]
        zn = zo + v / q
        if zn < 0.0:
            zn = 0.0
        dz = zn - zo
        if dz != 0.0:
            if e0 >= 0:
                x[e0] -= dz * winv[e0]
                for p in range(a + 1, b):
                    x[mem[p]] += dz * winv[mem[p]]
            else:
                for p in range(a, b):
                    x[mem[p]] += dz * winv[mem[p]]
            if abs(dz) > smax:
                smax = abs(dz)
        z[c] = zn
        nnz += zn > 0.0
    return vmax, smax, nnz


@numba.njit(cache=True)
def forget_inactive(off, mem, kind, z, nc):
    """Drop the constraints whose dual is zero (PF Alg. 3, forget step), in place.

    The order of the kept constraints is preserved. Returns the new number of
    constraints and of ids.
    """
    w = 0
    wm = 0
    a = off[0]
    for c in range(nc):
        b = off[c + 1]
        if z[c] > 0.0:
            for p in range(a, b):
                mem[wm] = mem[p]
                wm += 1
            z[w] = z[c]
            kind[w] = kind[c]
            w += 1
            off[w] = wm
        a = b
    off[0] = 0
    return w, wm


# ------------------------------------------------------------- explicit families
@numba.njit(cache=True)
def edge_oracle(x, tri, wed, add_tol):
    """Violated constraints of the explicit triangle and wedge lists (cluster deletion).

    Parameters
    ----------
    x : ndarray of shape (m,)
    tri : ndarray of shape (t, 3), int64
        Variable ids ``(a, b, c)`` of the graph's triangles (three inequalities each).
    wed : ndarray of shape (w, 2), int64
        Open wedges ``(a, b)``: ``x_a + x_b >= 1``.
    add_tol : float

    Returns
    -------
    off, mem, kind : ndarray
        The violated constraints (violated triangle side first), as a flat list.
    worst : float
        Largest violation over all of them (exact).
    """
    cnt = 0
    for r in range(tri.shape[0]):
        xa = x[tri[r, 0]]
        xb = x[tri[r, 1]]
        xc = x[tri[r, 2]]
        cnt += (xa - xb - xc > add_tol) + (xb - xa - xc > add_tol) + (xc - xa - xb > add_tol)
    cw = 0
    for r in range(wed.shape[0]):
        cw += 1.0 - x[wed[r, 0]] - x[wed[r, 1]] > add_tol
    k = cnt + cw
    off = np.empty(k + 1, dtype=np.int64)
    mem = np.empty(3 * cnt + 2 * cw, dtype=np.int64)
    kind = np.empty(k, dtype=np.uint8)
    off[0] = 0
    c = 0
    nm = 0
    worst = 0.0
    for r in range(tri.shape[0]):
        for s in range(3):
            i0 = tri[r, s]
            i1 = tri[r, (s + 1) % 3]
            i2 = tri[r, (s + 2) % 3]
            v = x[i0] - x[i1] - x[i2]
            if v > worst:
                worst = v
            if v > add_tol:
                mem[nm] = i0
                mem[nm + 1] = i1
                mem[nm + 2] = i2
                nm += 3
                kind[c] = 0
                c += 1
                off[c] = nm
    for r in range(wed.shape[0]):
        v = 1.0 - x[wed[r, 0]] - x[wed[r, 1]]
        if v > worst:
            worst = v
        if v > add_tol:
            mem[nm] = wed[r, 0]
            mem[nm + 1] = wed[r, 1]
            nm += 2
            kind[c] = 1
            c += 1
            off[c] = nm
    return off, mem, kind, worst
