"""Certified lower bounds for cluster deletion above its LP.

Cluster deletion asks for the fewest edge deletions that turn a graph into a disjoint
union of cliques. Its LP relaxation (Veldt, Gleich & Wirth [1]_; ``build_problem("cd",
...)``) has a variable ``x_e`` in ``[0, 1]`` per edge (1: deleted), the triangle rows
``x_ab <= x_ac + x_bc`` and the open-wedge rows ``x_ja + x_jb >= 1`` (``a, b``
neighbours of ``j``, not adjacent). :func:`cluster_deletion_bound` adds the
*neighbourhood independent-set rows*: for a node ``j`` and a set ``I`` of its neighbours
no two of which are adjacent,

    sum_{a in I} x_ja >= |I| - 1.

They hold for every clustering into cliques: the cluster of ``j`` is a clique, so it
holds at most one member of ``I``, and every other edge ``(j, a)`` is deleted. With
``|I| = 2`` they are the wedge rows; larger sets are the clique inequalities of the
conflict graph of the kept edges (two edges ``(j, a)``, ``(j, b)`` with ``a, b`` not
adjacent cannot both be kept), which the wedge rows relax to ``x >= 1/2`` on average.
The LP with only the wedge rows keeps a star's leaves at ``x = 1/2`` (half its edges),
where every clustering deletes all but one.

The rows are separated greedily (:func:`._deletion_kernels.violated_independent_sets`)
together with the violated triangle rows, and added lazily to a HiGHS model whose
columns are the edges (the interior-point method, rows without weight deleted). The bound of
each round is weak duality with HiGHS's row multipliers
(:func:`~metricopt.bounds.lp_dual_bound`) over the box ``[0, 1]``, which holds every
clustering: a lower bound on the optimum whatever the rows, multipliers or stopping
point; it is rounded up to an integer (the optimum is one).

References
----------
.. [1] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering framework
       for community detection. In Proc. WWW 2018, 439-448.
       https://doi.org/10.1145/3178876.3186110
.. [2] Padberg, M. W. (1973). On the facial structure of set packing polyhedra.
       Math. Program. 5, 199-215 (clique inequalities of a conflict graph).
       https://doi.org/10.1007/BF01580121
"""

import math
import time

import numpy as np

from ..bounds.editing_exact import check_edges
from ..exceptions import InvalidParameterError
from ..result import RichResult
from . import _deletion_kernels as _dk
from ._highs_rows import LazyRowModel

__all__ = ["DeletionBound", "cluster_deletion_bound"]

#: Rows of each kind added per separation round (most violated first).
MAX_ROWS_PER_ROUND = 20000
#: Separation rounds.
MAX_ROUNDS = 200
#: Candidates per centre in the independent-set separation (largest ``1 - x`` first).
SET_CANDIDATES = 32
#: Greedy sets tried per centre (each starts from a different candidate).
SET_TRIES = 8
#: Violation below which a row is not added.
SEPARATION_TOL = 1e-6
#: Rows whose multiplier is below DROP_MULTIPLIER (the interior-point method leaves
#: about 1e-8 on rows without weight) and whose slack exceeds DROP_SLACK after
#: DROP_AFTER solves in a row leave the model (Vassar85: 97,954 after 98 s instead of
#: 98,809 after 218 s; dropped after one solve, jazz's rows cycled: 1712 instead of 1717).
DROP_MULTIPLIER = 1e-6
DROP_SLACK = 1e-6
DROP_AFTER = 3
#: Rounds without a bound gain of STALL_TOL (relative) after which the LP stops.
STALL_ROUNDS = 10
STALL_TOL = 1e-7


class DeletionBound(RichResult):
    """A certified lower bound on the cluster-deletion optimum of a graph.

    Fields
    ------
    bound : int
        Never above the optimum (the LP bound rounded up).
    lp_value : float
        The certified LP bound before rounding up (the best over the rounds).
    relaxation : str
        ``"independent-set-lp"`` when independent-set rows of three or more edges carry
        weight in the bound's multipliers, else ``"triangle-lp"`` (the plain LP's rows).
    rounds, rows, set_rows, triangle_rows : int
        Solves, and the rows in the model at the end (of each kind).
    stopped : str
        ``"converged"`` (the separation finds no violated row at a vertex: every triangle
        row holds, and no set row that the greedy finds is violated), ``"stalled"``,
        ``"rounds"`` or ``"time"``.
    x : ndarray of shape (m,)
        The LP solution of the round that gave the bound, one value per edge in the order
        given (1: deleted); a point to round (:func:`metricopt.rounding.cluster_deletion_pivot`).
    seconds : float
    """


class _EdgeModel(LazyRowModel):
    """HiGHS LP over the edges, with its rows (all ``<=``) kept for the certificate.

    Solved by HiGHS's interior-point method without crossover: on Vassar85 (119,161
    edges) its rounds reached the bound 98,809 in 218 s where the dual simplex method,
    warm-started, reached 83,036 in 299 s (with 4,000 rows a round: 86,868 in 41 s, then
    stuck in round 10); on jazz and USAir97 both take 10-26 s. Each row has a key (a
    triangle row's id, or the edge ids of a set), so that a row dropped may come back.
    """

    def __init__(self, m, threads):
        super().__init__(threads)
        self.m = m
        self.add_columns(np.ones(m))
        self.is_set = np.empty(0, dtype=bool)
        self.idle = np.empty(0, dtype=np.int64)  # solves in a row without weight
        self.keys = []

    def add_rows(self, offsets, index, value, upper, is_set, keys):
        n_new = super().add_rows(offsets, index, value, upper)
        self.is_set = np.concatenate([self.is_set, np.full(n_new, is_set)])
        self.idle = np.concatenate([self.idle, np.zeros(n_new, dtype=np.int64)])
        self.keys.extend(keys)

    def drop_idle(self, x, y, slack):
        """Delete the rows whose multiplier was below :data:`DROP_MULTIPLIER` and whose
        slack exceeded ``slack`` in the last :data:`DROP_AFTER` solves (``x``, ``y``: the
        last one's); returns their keys."""
        if self.n_rows == 0 or y is None:
            return []
        idle = (np.abs(y) < DROP_MULTIPLIER) & (self.matrix() @ x < self.r_upper - slack)
        self.idle = np.where(idle, self.idle + 1, 0)
        drop = self.idle >= DROP_AFTER
        if not drop.any():
            return []
        dropped = [self.keys[i] for i in np.flatnonzero(drop)]
        keep = self.delete_rows(drop)
        self.is_set, self.idle = self.is_set[keep], self.idle[keep]
        self.keys = [k for k, kept in zip(self.keys, keep) if kept]
        return dropped

    def certificate(self, y):
        """``(certified value, weight of the multipliers y on sets of 3 or more edges)``."""
        res = self.certified(y)
        if y is None:
            return float(res.value), 0.0
        big = self.is_set & (self.r_upper < -1.5)
        return float(res.value), float(np.abs(y[big]).sum())


def _triangle_rows(tri, x, in_model, tol, cap):
    """The violated triangle rows not in the model: ``(offsets, index, value, upper, ids)``,
    most violated first, at most ``cap``; row id ``3 t + r`` is orientation ``r`` of
    triangle ``t`` (its edge ``r`` is the long side)."""
    xt = x[tri]
    excess = np.column_stack([xt[:, 0] - xt[:, 1] - xt[:, 2], xt[:, 1] - xt[:, 0] - xt[:, 2],
                              xt[:, 2] - xt[:, 0] - xt[:, 1]]).ravel()
    ids = np.flatnonzero((excess > tol) & ~in_model)
    ids = ids[np.argsort(-excess[ids], kind="stable")[:cap]]
    t, r = ids // 3, ids % 3
    long_side = tri[t, r]
    short = np.column_stack([tri[t, (r + 1) % 3], tri[t, (r + 2) % 3]])
    index = np.column_stack([long_side, short]).ravel()
    value = np.tile([1.0, -1.0, -1.0], ids.size)
    return (np.arange(ids.size + 1, dtype=np.int64) * 3, index, value, np.zeros(ids.size), ids)


def _set_rows(csr, x, seen, cap):
    """The violated independent-set rows not yet in the model, most violated first."""
    n, indptr, nbrs, eids = csr
    max_rows = max(n * SET_TRIES, 1)
    offsets = np.zeros(max_rows + 1, dtype=np.int64)
    members = np.empty(max_rows * SET_CANDIDATES, dtype=np.int64)
    viol = np.empty(max_rows)
    count = _dk.violated_independent_sets(n, indptr, nbrs, eids, x, SET_CANDIDATES, SET_TRIES,
                                          SEPARATION_TOL, offsets, members, viol)
    rows, keys = [], []
    for i in np.argsort(-viol[:count], kind="stable"):
        mem = members[offsets[i]:offsets[i + 1]]
        key = ("s", tuple(sorted(mem.tolist())))
        if key not in seen:
            seen.add(key)
            rows.append(mem)
            keys.append(key)
            if len(rows) == cap:
                break
    sizes = np.array([r.size for r in rows], dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    index = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    # sum x >= |I| - 1, written as -sum x <= 1 - |I|
    return offs, index, -np.ones(index.size), 1.0 - sizes.astype(np.float64), keys


def cluster_deletion_bound(n, edges, *, cuts=True, max_rounds=MAX_ROUNDS,
                           max_rows=MAX_ROWS_PER_ROUND, threads=None, time_limit=None,
                           progress=None):
    """A certified lower bound on the cluster-deletion optimum of a graph.

    Parameters
    ----------
    n : int
    edges : array_like of shape (m, 2)
        Each edge once (no self-loops).
    cuts : bool, default=True
        Separate independent-set rows of any size (``False``: only the plain LP's rows,
        triangles and open wedges; its optimum is the cd LP value).
    max_rounds, max_rows : int
        Separation rounds, and rows of each kind added per round.
    threads : int or None
    time_limit : float or None
        Seconds; the bound of the rounds so far is certified whenever it stops.
    progress : callable or None
        Called after every solve with a dict (``round``, ``objective``, ``bound``,
        ``rows``, ``seconds``).

    Returns
    -------
    DeletionBound

    Examples
    --------
    >>> from metricopt.solvers.deletion_lp import cluster_deletion_bound
    >>> star = [[0, 1], [0, 2], [0, 3], [0, 4]]   # every clustering deletes 3 edges
    >>> r = cluster_deletion_bound(5, star)
    >>> r.bound, r.relaxation
    (3, 'independent-set-lp')
    >>> cluster_deletion_bound(5, star, cuts=False).bound   # the LP: 2 (x = 1/2)
    2
    """
    t0 = time.perf_counter()
    n, e = check_edges(n, edges)
    for name, value in (("max_rounds", max_rounds), ("max_rows", max_rows)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise InvalidParameterError(
                f"The {name!r} parameter must be an int >= 1. Got {value!r} instead.")
    deadline = None if time_limit is None else t0 + float(time_limit)
    csr, tri, wed = _structure(n, e)
    model = _EdgeModel(e.shape[0], threads)
    in_model = {"t": np.zeros(3 * tri.shape[0], dtype=bool), "w": np.zeros(wed.shape[0], dtype=bool)}
    seen = set()
    best, weight, stall, stopped, rounds = -np.inf, 0.0, 0, "rounds", 0
    x = best_x = np.zeros(e.shape[0])
    # with the set rows, the triangle rows wait until no set row is violated: they move
    # the bound little (jazz: 1715.09 without them, 1715.57 with) and slow each re-solve
    triangles = not cuts
    for rounds in range(1, max_rounds + 1):
        while True:
            if cuts:
                s_offs, s_index, s_value, s_upper, keys = _set_rows(csr, x, seen, max_rows)
            else:
                s_offs, s_index, s_value, s_upper, w_ids = _wedge_rows(wed, x, in_model["w"],
                                                                       SEPARATION_TOL, max_rows)
                in_model["w"][w_ids] = True
                keys = [("w", int(i)) for i in w_ids]
            model.add_rows(s_offs, s_index, s_value, s_upper, True, keys)
            ids = np.empty(0, dtype=np.int64)
            if triangles:
                t_offs, t_index, t_value, t_upper, ids = _triangle_rows(tri, x, in_model["t"],
                                                                        SEPARATION_TOL, max_rows)
                in_model["t"][ids] = True
                model.add_rows(t_offs, t_index, t_value, t_upper, False,
                               [("t", int(i)) for i in ids])
            if ids.size or s_upper.size or triangles:
                break
            triangles = True  # no set row violated: the triangle rows from now on
        if ids.size == 0 and s_upper.size == 0 and rounds > 1:
            if model.at_vertex or not cuts:
                stopped = "converged"
                break
            model.use_simplex()  # nothing violated at the interior point: look at a vertex
        x = model.solve(deadline)
        y = model.duals()
        value, big = model.certificate(y)
        gained = best == -np.inf or value > best + STALL_TOL * (1.0 + abs(best))
        stall = 0 if gained else stall + 1
        if value > best:
            best, weight, best_x = value, big, x
        if progress is not None:
            progress(dict(round=rounds, objective=float(model.h.getInfo().objective_function_value),
                          bound=value, rows=model.n_rows, seconds=time.perf_counter() - t0))
        if deadline is not None and time.perf_counter() > deadline:
            stopped = "time"
            break
        if stall >= STALL_ROUNDS:  # rows dropped and added again without progress
            stopped = "stalled"
            break
        # rows without weight and with slack only slow the next solves; one violated
        # again is separated again
        for key in model.drop_idle(x, y, DROP_SLACK):
            if key[0] == "s":
                seen.discard(key)
            else:
                in_model[key[0]][key[1]] = False
    best = max(best, 0.0)
    bound = int(math.ceil(best - 1e-9 * max(1.0, best)))
    is_set = model.is_set
    return DeletionBound(bound=bound, lp_value=float(best),
                         relaxation="independent-set-lp" if weight > 0 else "triangle-lp",
                         rounds=int(rounds), rows=int(model.n_rows), set_rows=int(is_set.sum()),
                         triangle_rows=int((~is_set).sum()), stopped=stopped,
                         x=np.clip(best_x, 0.0, 1.0), seconds=time.perf_counter() - t0)


def _structure(n, e):
    """``(n, indptr, nbrs, eids)`` (sorted neighbours, the edge id of each entry), the
    triangles ``(e_ab, e_ac, e_bc)`` and the open wedges ``(e_ja, e_jb)``, each once."""
    from ..problems._cycles import edge_csr
    from ..problems._wedges import _enumerate

    indptr, nbrs, eids = (np.ascontiguousarray(a, dtype=np.int64) for a in edge_csr(n, e))
    empty3, empty2 = np.empty((0, 3), dtype=np.int64), np.empty((0, 2), dtype=np.int64)
    nt, nw = _enumerate(indptr, nbrs, eids, n, False, empty3, empty2)
    tri, wed = np.empty((nt, 3), dtype=np.int64), np.empty((nw, 2), dtype=np.int64)
    _enumerate(indptr, nbrs, eids, n, True, tri, wed)
    return (n, indptr, nbrs, eids), tri, wed


def _wedge_rows(wed, x, in_model, tol, cap):
    """The violated open-wedge rows ``x_ja + x_jb >= 1`` (the plain LP's) not in the
    model, as :func:`_set_rows` with row ids."""
    excess = 1.0 - x[wed[:, 0]] - x[wed[:, 1]]
    ids = np.flatnonzero((excess > tol) & ~in_model)
    ids = ids[np.argsort(-excess[ids], kind="stable")[:cap]]
    return (np.arange(ids.size + 1, dtype=np.int64) * 2, wed[ids].ravel(), -np.ones(2 * ids.size),
            np.full(ids.size, -1.0), ids)
