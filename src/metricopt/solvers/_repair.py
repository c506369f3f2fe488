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


@numba.njit(cache=True, nogil=True)
def _short_paths_part(n, indptr, nbrs, eids, lengths, s_lo, s_hi, cap, dist, pred, done,
                      heap_d, heap_v, touched):
    """Pairs ``s < t``, ``s_lo <= s < s_hi``, at shortest-path distance below 1 over the
    edges ``lengths``: ``(count, s, t, distance)``, in the order of ``s`` then of the
    search; count -1 (nothing listed) once it exceeds ``cap``. The buffers
    (:func:`~metricopt.problems._cycles.search_buffers`) are left as they came."""
    size = 64
    out_i = np.empty(size, dtype=np.int64)
    out_j = np.empty(size, dtype=np.int64)
    out_d = np.empty(size)
    count = 0
    for s in range(s_lo, s_hi):
        if indptr[s + 1] == indptr[s]:
            continue
        nt = sssp(s, 1.0, indptr, nbrs, eids, lengths, dist, pred, heap_d, heap_v, done,
                  touched)
        for q in range(nt):
            t = touched[0, q]
            if t > s and done[0, t]:
                if count == size:
                    size *= 2
                    out_i = np.concatenate((out_i, np.empty(size - count, dtype=np.int64)))
                    out_j = np.concatenate((out_j, np.empty(size - count, dtype=np.int64)))
                    out_d = np.concatenate((out_d, np.empty(size - count)))
                out_i[count] = s
                out_j[count] = t
                out_d[count] = dist[0, t]
                count += 1
        for q in range(nt):
            t = touched[0, q]
            dist[0, t] = np.inf
            done[0, t] = False
        if count > cap:
            return -1, out_i[:0], out_j[:0], out_d[:0]
    return count, out_i[:count], out_j[:count], out_d[:count]


#: Shares of the sources per thread in :func:`repair_support` (a stop waits for the
#: shares under way only).
SHARES_PER_THREAD = 8


def repair_support(point, max_pairs=None, stop=None, threads=None):
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
    stop : callable or None
        Asked between shares of the sources (:func:`metricopt._threads.run_workers`):
        once true the closure gives up (None). On ca-AstroPh's 6 million run pairs it
        takes a minute or two.
    threads : int or None
        Threads of the searches (default :func:`metricopt._threads.thread_count`); the
        answer does not depend on them.

    Returns
    -------
    SupportPoint or None
        Entrywise at most the clipped point and a metric: ``min(1, d)`` with ``d`` the
        shortest paths over the listed pairs below 1 (pairs at 1 are dropped from the
        list). None when the bulk is not 1, too many pairs would be listed, or
        ``stop()`` turned true.
    """
    import threading

    from .._threads import run_workers, thread_count
    from ..problems._support_scan import work_ranges
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
    use = thread_count(threads)
    bounds = work_ranges(indptr, nbrs, SHARES_PER_THREAD * use)
    buffers = {}  # one set of search buffers per thread

    def share(t):
        buf = buffers.get(threading.get_ident())
        if buf is None:
            buf = buffers[threading.get_ident()] = search_buffers(n, nbrs.shape[0])
        return _short_paths_part(n, indptr, nbrs, eids, lengths, bounds[t], bounds[t + 1],
                                 cap, *buf)

    parts = run_workers(share, bounds.shape[0] - 1, use, stop)
    if parts is None or any(p[0] < 0 for p in parts) or sum(p[0] for p in parts) > cap:
        return None
    ij = np.stack([np.concatenate([p[1] for p in parts] + [np.empty(0, np.int64)]),
                   np.concatenate([p[2] for p in parts] + [np.empty(0, np.int64)])], axis=1)
    return SupportPoint(n, ij, np.concatenate([p[3] for p in parts] + [np.empty(0)]), 1.0)
