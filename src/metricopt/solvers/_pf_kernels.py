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
from ..problems._cycles import sssp as _sssp

__all__ = [
    "cycle_oracle",
    "cycle_oracle_serial",
    "gather_cycles",
    "project_active",
    "forget_inactive",
    "edge_oracle",
]

_FM = set(_config.FASTMATH)


# --------------------------------------------------------------- shortest paths
@numba.njit(parallel=True)
def cycle_oracle(indptr, nbrs, eids, pairs, x, srcs, pos, add_tol, out_mem, out_off, out_viol,
                 ncyc, nmem, worst):
    """Separation oracle of MET(G): one shortest-path cycle per violated edge.

    Sources ``srcs`` are dealt to the ``T = pos.shape[0]`` workers round robin (worker
    ``t`` takes ``srcs[t], srcs[t + T], ...``), each with its own Dijkstra buffers and
    its own output row, so no n x n distance matrix is ever formed. From source ``s``
    the edges ``(s, u)`` with ``u > s`` are checked: when
    ``x_e - dist(s, u) > add_tol`` the cycle ``e`` + shortest ``s``-``u`` path is
    written (edge ``e`` first, then the path from ``u`` back to ``s``).

    Parameters
    ----------
    indptr, nbrs, eids : ndarray of int64
        CSR adjacency whose entries carry edge ids (see ``problems._cycles.edge_csr``).
    pairs : ndarray of shape (m, 2), int64
    x : ndarray of shape (m,)
    srcs : ndarray of int64
        Sources to scan (nodes with a larger neighbour).
    pos : ndarray of shape (T,), int64
        Next index into ``srcs`` of each worker (start with ``arange(T)``); on return
        ``>= len(srcs)`` for a finished worker, else the source where its output row
        ran full (call again with larger rows; finished work is kept).
    add_tol : float
    out_mem : ndarray of shape (T, cap), int64
    out_off : ndarray of shape (T, cap + 1), int64
        Offsets of each worker's cycles in its row of ``out_mem`` (``out_off[t, 0] = 0``).
    out_viol : ndarray of shape (T, cap)
    ncyc, nmem : ndarray of shape (T,), int64
        Cycles and ids written per worker so far (updated).
    worst : ndarray of shape (T,)
        Largest ``x_e - dist(s, u)`` per worker over the finished sources (updated):
        together, the exact largest cycle-inequality violation.
    """
    T = pos.shape[0]
    n = indptr.shape[0] - 1
    m2 = nbrs.shape[0]
    cap = out_mem.shape[1]
    ns = srcs.shape[0]
    for t in numba.prange(T):
        dist = np.full(n, np.inf)
        pred = np.empty(n, dtype=np.int64)
        done = np.zeros(n, dtype=np.bool_)
        heap_d = np.empty(m2 + 1)
        heap_v = np.empty(m2 + 1, dtype=np.int64)
        touched = np.empty(n, dtype=np.int64)
        i = pos[t]
        nc = ncyc[t]
        nm = nmem[t]
        wmax = worst[t]
        while i < ns:
            s = srcs[i]
            bound = 0.0
            for p in range(indptr[s], indptr[s + 1]):
                if nbrs[p] > s and x[eids[p]] > bound:
                    bound = x[eids[p]]
            if bound <= 0.0:
                i += T
                continue
            nt = _sssp(s, bound, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done,
                       touched)
            # room needed for this source's cycles
            need_c = 0
            need_m = 0
            for p in range(indptr[s], indptr[s + 1]):
                u = nbrs[p]
                if u > s and done[u] and x[eids[p]] - dist[u] > add_tol:
                    need_c += 1
                    need_m += 1
                    w = u
                    while w != s:
                        f = pred[w]
                        need_m += 1
                        w = pairs[f, 0] if pairs[f, 1] == w else pairs[f, 1]
            fits = nc + need_c <= cap and nm + need_m <= cap
            if fits:
                for p in range(indptr[s], indptr[s + 1]):
                    u = nbrs[p]
                    if u > s and done[u]:
                        e = eids[p]
                        v = x[e] - dist[u]
                        if v > wmax:
                            wmax = v
                        if v > add_tol:
                            out_mem[t, nm] = e
                            nm += 1
                            w = u
                            while w != s:
                                f = pred[w]
                                out_mem[t, nm] = f
                                nm += 1
                                w = pairs[f, 0] if pairs[f, 1] == w else pairs[f, 1]
                            out_viol[t, nc] = v
                            nc += 1
                            out_off[t, nc] = nm
            for q in range(nt):
                dist[touched[q]] = np.inf
                done[touched[q]] = False
            if not fits:
                break
            i += T
        pos[t] = i
        ncyc[t] = nc
        nmem[t] = nm
        worst[t] = wmax


#: :func:`cycle_oracle` compiled without threads (``prange`` runs as ``range``): the same
#: cycles, for callers that are threads themselves (a Dask worker's task pool).
cycle_oracle_serial = numba.njit(cache=True)(cycle_oracle.py_func)


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
