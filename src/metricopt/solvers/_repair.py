"""Metric repair: turn an approximately feasible dense iterate into an exactly feasible one.

The Dykstra iterates ``x`` satisfy the triangle inequalities only up to a tolerance.
:func:`repair_dense` clips ``x`` to the variable bounds, replaces it by its shortest-path
closure (the largest semimetric entrywise below it, computed by Floyd-Warshall) and, for
sparsest cut, rescales it so that ``sum(x) == n`` again. The result is feasible up to
rounding, so its objective is a valid upper bound on the LP/QP value; the solver can stop
as soon as that bound is within the gap tolerance of the dual bound (a stronger form of
the entrywise rounding test of Veldt et al. 2019, §5.4).

For the support-sized layout (:mod:`metricopt.problems.support`: listed pairs, every
other pair at the bulk value 1, which is also the upper bound) :func:`repair_support`
computes the same closure from the listed pairs alone: a path through a bulk pair is at
least 1 long, so the closure of the completed point is ``min(1, d)`` with ``d`` the
shortest-path distance over the listed pairs below 1, found by one Dijkstra search per
node stopped at distance 1. Pairs the closure brings below 1 join the list.

The dense closure runs in place on the packed vector (pair ``(i, j)``, ``i < j``, at
``r[i] + j``, the problems' own order): during pass ``k`` of Floyd-Warshall the distances
from ``k`` do not change (lengths are nonnegative and ``d_kk = 0``), so they are copied
into a length-``n`` buffer and every row ``i`` of the upper triangle is updated by one
contiguous, vectorisable loop ``x_ij <- min(x_ij, d_ik + d_kj)``, ``j > i``. This needs
O(n^3 / 2) time and O(n) memory beyond the vector, half the work and a quarter of the
memory of the textbook loop over a symmetric ``n x n`` matrix.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2), 333-355.
.. [2] Floyd, R. W. (1962). Algorithm 97: Shortest path. Commun. ACM 5(6), 345.
"""

import numba
import numpy as np

from .. import _config
from .._memory import available_memory
from ..exceptions import InputError
from ..problems._cycles import edge_csr, search_buffers, sssp
from ..problems._pairs import n_pairs
from ..problems._triangles import _row_offsets

__all__ = ["metric_closure", "repair_dense", "repair_support"]

_FM = set(_config.FASTMATH)


@numba.njit(cache=True, fastmath=_FM, boundscheck=False)
def _closure_inplace(x, n):
    """Floyd-Warshall on the packed upper triangle ``x`` (nonnegative), in place."""
    off = _row_offsets(n)
    dk = np.empty(n, dtype=np.float64)
    for k in range(n):
        # distances from k: fixed during pass k
        for i in range(k):
            dk[i] = x[off[i] + k]
        dk[k] = 0.0
        for j in range(k + 1, n):
            dk[j] = x[off[k] + j]
        for i in range(n - 1):
            if i == k:
                continue
            dik = dk[i]
            row = x[off[i] + i + 1:off[i] + n]
            col = dk[i + 1:]
            for q in range(row.shape[0]):
                t = dik + col[q]
                v = row[q]
                row[q] = t if t < v else v
    return x


def metric_closure(x, n):
    """Shortest-path closure of a packed vector of nonnegative pair lengths.

    ``out_ij = min over paths i = v0, v1, ..., vk = j of sum_t x_{v_t v_{t+1}}``: the
    largest semimetric that is entrywise at most ``x``. A vector that already is a
    semimetric comes back unchanged.

    Parameters
    ----------
    x : ndarray of shape (n*(n-1)/2,)
        Packed pair lengths (row-major upper triangle), all finite and ``>= 0``.
    n : int
        Number of nodes.

    Returns
    -------
    ndarray of shape (n*(n-1)/2,)
        A new float64 array.

    Raises
    ------
    InputError
        If ``x`` has the wrong length, or an entry that is negative or not finite.
    """
    n = int(n)
    out = np.array(x, dtype=np.float64, copy=True).ravel()
    if out.shape[0] != n_pairs(n):
        raise InputError(f"metric_closure: expected {n_pairs(n)} pair values for n={n}, "
                         f"got {out.shape[0]}")
    if out.size and not (np.all(np.isfinite(out)) and out.min() >= 0.0):
        raise InputError("metric_closure: pair lengths must be finite and nonnegative")
    if n >= 3:
        _closure_inplace(out, n)
    return out


def repair_dense(problem, x):
    """An exactly feasible point near ``x`` for a dense problem with ``lower == 0``.

    Clips ``x`` to the finite bounds, takes its :func:`metric_closure` (entrywise at most
    the clipped ``x``, so it stays within ``[0, upper]``; only pairs of violated triangles
    change) and, when the problem fixes ``sum(x) == sum_value`` (sparsest cut), rescales
    it to that sum (a positive multiple of a semimetric is a semimetric).

    Parameters
    ----------
    problem : MetricProblem
    x : ndarray of shape (problem.n_variables,)
        An iterate in packed order.

    Returns
    -------
    ndarray of shape (problem.n_variables,) or None
        A new array; ``None`` when the repair does not apply: a structure other than
        ``"dense"``, a lower bound other than 0, non-finite entries, a closure that sums to
        0 or whose rescaling would exceed ``upper``, or too little memory (more than half
        of what is available).

    Raises
    ------
    InputError
        If ``x`` does not have one value per pair.
    """
    if problem.structure != "dense" or problem.lower != 0.0:
        return None
    n = int(problem.n)
    npairs = n_pairs(n)
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.shape[0] != npairs:
        raise InputError(f"repair_dense: expected {npairs} pair values for n={n}, got {x.shape[0]}")
    # the clipped copy (closed in place) plus the kernel's offsets and row buffer
    if 8 * npairs + 16 * n > available_memory() // 2:
        return None
    if not np.all(np.isfinite(x)):
        return None
    upper = problem.upper
    y = np.clip(x, 0.0, upper if np.isfinite(upper) else None)
    if n >= 3:
        _closure_inplace(y, n)
    if problem.sum_value is not None:
        total = float(y.sum())
        if not total > 0.0:
            return None
        y *= problem.sum_value / total
        if np.isfinite(upper) and y.size and y.max() > upper:
            return None
    return y


@numba.njit(cache=True)
def _short_paths(n, indptr, nbrs, eids, lengths, cap, out_i, out_j, out_d):
    """Pairs ``s < t`` at shortest-path distance below 1 over the edges ``lengths``: their
    count (written to ``out_*`` when those hold at least ``cap`` entries), or -1 once it
    exceeds ``cap``."""
    dist, pred, done, heap_d, heap_v, touched = search_buffers(n, nbrs.shape[0])
    write = out_i.shape[0] >= cap
    count = 0
    for s in range(n):
        if indptr[s + 1] == indptr[s]:
            continue
        nt = sssp(s, 1.0, indptr, nbrs, eids, lengths, dist, pred, heap_d, heap_v, done,
                  touched)
        for q in range(nt):
            t = touched[0, q]
            if t > s and done[0, t]:
                if count >= cap:
                    return -1
                if write:
                    out_i[count] = s
                    out_j[count] = t
                    out_d[count] = dist[0, t]
                count += 1
        for q in range(nt):
            t = touched[0, q]
            dist[0, t] = np.inf
            done[0, t] = False
    return count


def repair_support(point, max_pairs=None):
    """The metric closure of a support-sized point whose bulk value is 1 (the upper bound).

    Parameters
    ----------
    point : SupportPoint
        With ``bulk == 1``; its values are clipped to ``[0, 1]``.
    max_pairs : int or None
        Give up (return None) when more pairs than this lie below 1 after the closure;
        default ``2 k + n`` for ``k`` listed pairs (at most twice the point's memory; a
        Jaccard cc polish round on ca-GrQc: 240k listed pairs, 43k of them below 1, and
        115k-173k below 1 after the closure).

    Returns
    -------
    SupportPoint or None
        Entrywise at most the clipped point and a metric: ``min(1, d)`` with ``d`` the
        shortest paths over the listed pairs below 1 (pairs at 1 are dropped from the
        list). None when the bulk is not 1 or too many pairs would be listed.
    """
    from ..problems.support import SupportPoint

    if float(point.bulk) != 1.0:
        return None
    n = int(point.n)
    values = np.clip(point.values, 0.0, 1.0)
    short = values < 1.0
    pairs = point.pairs[short]
    cap = int(2 * values.size + n if max_pairs is None else max_pairs)
    indptr, nbrs, eids = edge_csr(n, pairs)
    lengths = np.ascontiguousarray(values[short])
    empty_i, empty_d = np.empty(0, dtype=np.int64), np.empty(0)
    count = _short_paths(n, indptr, nbrs, eids, lengths, cap, empty_i, empty_i, empty_d)
    if count < 0:
        return None
    out_i = np.empty(max(cap, 1), dtype=np.int64)
    out_j, out_d = np.empty_like(out_i), np.empty(out_i.shape[0])
    count = _short_paths(n, indptr, nbrs, eids, lengths, max(cap, 1), out_i, out_j, out_d)
    return SupportPoint(n, np.stack([out_i[:count], out_j[:count]], axis=1),
                        out_d[:count], 1.0)
