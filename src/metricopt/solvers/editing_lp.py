"""Certified lower bounds for cluster editing above the triangle LP.

:func:`cluster_editing_bound` bounds the optimum of unit-weight correlation clustering
(cluster editing) of a graph from below, component by component (an optimum never joins
two components, so the optimum is the sum of theirs):

1. each component is reduced to its critical cliques (nodes with equal closed
   neighbourhoods; some optimum keeps each in one cluster, Guo 2009), a weighted
   instance with the same optimum (:mod:`metricopt.bounds.editing_exact`);
2. a component of at most ``exact_nodes`` cliques is solved exactly by exhaustion, its
   optimum is its bound ("exhaustive");
3. a larger one gets the LP relaxation of its weighted instance with the triangle
   inequalities and, once none is violated, the star 2-partition inequalities of
   Grötschel and Wakabayashi [1]_, both separated and added lazily to a HiGHS model
   whose columns are only the pairs its rows touch (a pair outside the model sits at
   its target: adjacent pairs are all in the model, the others at "separated").
   The bound is weak duality with HiGHS's row multipliers (:func:`~metricopt.bounds.lp_dual_bound`)
   over the box ``[0, 1]``, which holds every clustering: it is a lower bound on the
   optimum whatever the rows, multipliers or stopping point, rounded up to an integer
   (the optimum is one).

Every component says which relaxation gave its bound (``"exhaustive"``,
``"triangle-lp"`` when no 2-partition row carries weight, ``"2-partition-lp"``).

References
----------
.. [1] Grötschel, M., & Wakabayashi, Y. (1990). Facets of the clique partitioning
       polytope. Math. Program. 47, 367-387. https://doi.org/10.1007/BF01580870
.. [2] Guo, J. (2009). A more effective linear kernelization for cluster editing.
       Theor. Comput. Sci. 410(8-10), 718-726. https://doi.org/10.1016/j.tcs.2008.10.021
.. [3] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355 (§8.1.1, the lazy triangle LP). https://doi.org/10.1137/18M1217152
"""

import math
import time

import numpy as np

from ..bounds.editing_exact import (
    MAX_EXACT_NODES,
    check_edges,
    components,
    critical_cliques,
    exact_cluster_editing,
)
from ..exceptions import InvalidParameterError
from ..result import RichResult
from . import _editing_kernels as _ek
from ._highs_rows import LazyRowModel

__all__ = ["EditingBound", "cluster_editing_bound", "editing_lp_bound"]

#: Rows added per separation round (most violated first).
MAX_ROWS_PER_ROUND = 20000
#: Separation rounds of one component's LP.
MAX_ROUNDS = 200
#: Candidates per centre in the star separation.
STAR_CANDIDATES = 64
#: Star sets tried per centre (:func:`._editing_kernels.star_order`: each candidate first
#: once, then orders drawn from a hash; a greedy and a local search each). One thread,
#: 240 s, with greedy tries from each candidate only: the LP of jazz reached 1583.8 with
#: 10 tries a centre, 1596.8 with 30, 1601.5 with 64 (3 tries: 1581.0 in 540 s);
#: USAir97 1369.5, 1373.8, 1372.3. More distinct stars a round, fewer rounds.
STAR_TRIES = 64
#: Star rows of one centre added per round: at least this many, more when the round's
#: cap spread over the centres allows (``2 max_rows / k``). ca-HepTh's largest component
#: (7,904 cliques), first round of stars: LP 14,174.6 with the 20,000 most violated
#: (136 s), 14,601.5 with at most 8 per centre (16,115 rows, 104 s).
STAR_ROWS_PER_CENTRE = 8
#: Triangle rows with zero multiplier and more slack than this are deleted from the model
#: once the triangle LP is solved (-inf: every one with zero multiplier; measured on jazz,
#: 240 s on a loaded machine: 1514 with 1e-3, 1536 with -inf).
DROP_SLACK = -np.inf
#: Rounds without a bound gain of STALL_TOL (relative) after which the LP stops.
STALL_ROUNDS = 10
STALL_TOL = 1e-7
#: Violation below which a row is not added.
SEPARATION_TOL = 1e-6


class EditingBound(RichResult):
    """A certified lower bound on the cluster-editing optimum of a graph.

    Fields
    ------
    bound : int
        Sum of the components' bounds; never above the optimum.
    lp_value : float
        Sum of the components' bounds before rounding up (exact optima included).
    exact : bool
        True when every component was solved exactly (``bound`` is the optimum).
    labels : ndarray of shape (n,), int64, or None
        An optimal clustering when ``exact``.
    relaxations : dict
        Components per relaxation that gave their bound.
    components : list of dict
        Per component with more than one critical clique: ``nodes``, ``cliques``,
        ``relaxation``, ``bound`` (int), ``value`` (float), and for LPs ``rounds``,
        ``rows``, ``star_rows``, ``columns``, ``stopped``, ``seconds``.
    optimal_labels : dict
        Component index -> optimal labels of its nodes (exhaustive components only).
    seconds : float
    """


def _integer_bound(value):
    """The certified LP bound rounded up to an integer (the optimum is one), less a
    relative 1e-9 so that round-off above an integer optimum is not rounded past it."""
    if not math.isfinite(value):
        return 0
    return max(int(math.ceil(value - 1e-9 * max(1.0, abs(value)))), 0)


def _keys(a, b, k):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return lo.astype(np.int64) * k + hi


class _PairModel(LazyRowModel):
    """HiGHS LP over the pairs its rows touch, with its rows kept for the certificate.

    The interior-point method without crossover: at 150 s its rounds reached 1559 on jazz
    and 1330 on USAir97 where the dual simplex method, warm-started, reached 1509 and
    1270 (its multipliers are never exactly 0, so the triangle rows stay).
    """

    def __init__(self, k, size, adj_u, adj_v, threads):
        super().__init__(threads)
        self.k = k
        self.size = np.asarray(size, dtype=np.float64)
        self.keys = np.empty(0, dtype=np.int64)  # sorted pair keys of the columns
        self.cols = np.empty(0, dtype=np.int64)  # column of each sorted key
        self.col_u = np.empty(0, dtype=np.int64)
        self.col_v = np.empty(0, dtype=np.int64)
        self.adj_keys = np.sort(_keys(adj_u, adj_v, k))
        # each row's kind and triangle key
        self.r_key = np.empty(0, dtype=np.int64)  # -1 on star rows
        self.star_rows = np.empty(0, dtype=bool)
        self.columns(adj_u, adj_v)

    def columns(self, u, v):
        """Column ids of the pairs ``(u, v)``, adding the missing ones."""
        key = _keys(u, v, self.k)
        pos = np.searchsorted(self.keys, key)
        found = pos < self.keys.size
        found[found] = self.keys[pos[found]] == key[found]
        new = np.unique(key[~found])
        if new.size:
            first = self.cost.size
            nu, nv = new // self.k, new % self.k
            w = self.size[nu] * self.size[nv]
            pos_a = np.searchsorted(self.adj_keys, new)
            adj = pos_a < self.adj_keys.size
            adj[adj] = self.adj_keys[pos_a[adj]] == new[adj]
            # w x on adjacent pairs, w (1 - x) on the others
            self.add_columns(np.where(adj, w, -w), offset=float(w[~adj].sum()))
            self.col_u = np.concatenate([self.col_u, nu])
            self.col_v = np.concatenate([self.col_v, nv])
            keys = np.concatenate([self.keys, new])
            cols = np.concatenate([self.cols, first + np.arange(new.size)])
            order = np.argsort(keys, kind="stable")
            self.keys, self.cols = keys[order], cols[order]
            pos = np.searchsorted(self.keys, key)
        return self.cols[pos]

    def add_rows(self, offsets, index, value, upper, star, keys=None):
        n_new = super().add_rows(offsets, index, value, upper)
        fresh = np.full(n_new, -1, dtype=np.int64) if keys is None else keys
        self.r_key = np.concatenate([self.r_key, fresh])
        self.star_rows = np.concatenate([self.star_rows, np.full(n_new, star)])

    def drop_slack_triangles(self, x, slack):
        """Delete the triangle rows with zero multiplier and slack above ``slack``.

        Returns the keys of the deleted rows (they may be separated again).
        """
        y = self.duals()
        if y is None:
            return np.empty(0, dtype=np.int64)
        activity = self.matrix() @ x
        drop = (~self.star_rows) & (y == 0.0) & (activity < self.r_upper - slack)
        if not drop.any():
            return np.empty(0, dtype=np.int64)
        keys = self.r_key[drop]
        keep = self.delete_rows(drop)
        self.r_key, self.star_rows = self.r_key[keep], self.star_rows[keep]
        return keys

    def certificate(self):
        """``(BoundResult, weight on star rows)`` from the last solve's row duals."""
        y = self.duals()
        res = self.certified(y)
        star_weight = float(np.abs(y[self.star_rows]).sum()) if y is not None else 0.0
        return res, star_weight

    def x_csr(self, x):
        """Symmetric CSR of the model's pairs with their values, and of the close ones."""
        u = np.concatenate([self.col_u, self.col_v])
        v = np.concatenate([self.col_v, self.col_u])
        xv = np.clip(np.concatenate([x, x]), 0.0, 1.0)
        order = np.lexsort((v, u))
        u, v, xv = u[order], v[order], xv[order]
        indptr = np.zeros(self.k + 1, dtype=np.int64)
        np.cumsum(np.bincount(u, minlength=self.k), out=indptr[1:])
        close = xv < 1.0 - 1e-9
        cptr = np.zeros(self.k + 1, dtype=np.int64)
        np.cumsum(np.bincount(u[close], minlength=self.k), out=cptr[1:])
        return (indptr, np.ascontiguousarray(v), np.ascontiguousarray(xv), cptr,
                np.ascontiguousarray(v[close]), np.ascontiguousarray(xv[close]))


def _add_stars(model, k, csr, max_rows, seen):
    """Separate star 2-partition rows at the point ``csr`` and add the new ones, the most
    violated first (at most ``max_rows``)."""
    cap = max(max_rows, 1)
    n_tries = STAR_TRIES
    cand = np.empty((k, min(STAR_CANDIDATES, _ek.MAX_STAR_CANDIDATES)), dtype=np.int64)
    centre = np.empty(2 * k * n_tries, dtype=np.int64)
    mask = np.empty(2 * k * n_tries, dtype=np.uint64)
    viol = np.empty(2 * k * n_tries)
    count = _ek.violated_stars(k, *csr, STAR_CANDIDATES, n_tries, SEPARATION_TOL, cand, centre,
                               mask, viol)
    rows = []
    bits = np.uint64(1) << np.arange(cand.shape[1], dtype=np.uint64)
    # the rows spread over the centres: at most this many of one centre a round
    per_centre = max(STAR_ROWS_PER_CENTRE, -(-2 * cap // max(k, 1)))
    taken = np.zeros(k, dtype=np.int64)
    for r in np.argsort(-viol[:count], kind="stable"):
        s = int(centre[r])
        if taken[s] >= per_centre:
            continue
        members = cand[s][(mask[r] & bits) != 0]
        key = (s, tuple(sorted(members.tolist())))
        if key in seen:
            continue
        seen.add(key)
        taken[s] += 1
        rows.append(np.concatenate([[s], members]))
        if len(rows) == cap:
            break
    if not rows:
        return 0
    offs, index, value, upper = [0], [], [], []
    for mem in rows:
        s, t = mem[0], mem[1:]
        iu, ju = np.triu_indices(t.size, 1)
        index.append(model.columns(t[iu], t[ju]))
        value.append(np.ones(iu.size))
        index.append(model.columns(np.full(t.size, s), t))
        value.append(-np.ones(t.size))
        offs.append(offs[-1] + iu.size + t.size)
        upper.append((t.size - 1) * (t.size - 2) / 2.0)
    model.add_rows(np.array(offs, dtype=np.int64), np.concatenate(index), np.concatenate(value),
                   np.array(upper), True)
    return len(rows)


def editing_lp_bound(k, size, adj, *, cuts=True, max_rounds=MAX_ROUNDS,
                     max_rows=MAX_ROWS_PER_ROUND, threads=None, time_limit=None, progress=None,
                     stop_at=None):
    """Certified lower bound on a weighted cluster-editing instance from its cutting-plane LP.

    Parameters
    ----------
    k : int
        Nodes (critical cliques).
    size : array_like of shape (k,)
        Node weights: a pair ``(u, v)`` costs ``size[u] * size[v]``.
    adj : array_like of shape (m, 2)
        Adjacent pairs (each once).
    cuts : bool, default=True
        Separate the star 2-partition inequalities once no triangle is violated
        (``False``: the triangle LP only).
    max_rounds, max_rows : int
        Separation rounds, and rows added per round.
    threads : int or None
    time_limit : float or None
        Seconds; the bound from the last solve is certified whenever it stops.
    progress : callable or None
        Called after every solve with a dict (``round``, ``objective``, ``bound``, ``rows``,
        ``columns``, ``seconds``).
    stop_at : int or None
        The cost of a known clustering: the LP stops once its bound, rounded up, reaches
        it (the clustering is then optimal; ``stopped="reached"``).

    Returns
    -------
    dict
        ``value`` (certified, before rounding up; the best over the rounds), ``relaxation``,
        ``rounds``, ``rows``, ``star_rows``, ``columns``, ``stopped`` (``"converged"``: nothing
        violated at a vertex; ``"reached"``: the bound reached ``stop_at``;
        ``"stalled"``: :data:`STALL_ROUNDS` rounds without gain; ``"rounds"``; ``"time"``),
        ``seconds``, ``certificate`` (the
        :class:`~metricopt.bounds.BoundResult`).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    adj = np.asarray(adj, dtype=np.int64).reshape(-1, 2)
    model = _PairModel(k, size, adj[:, 0], adj[:, 1], threads)
    added = np.empty(0, dtype=np.int64)  # keys of the triangle rows in the model
    star_seen = set()
    stopped = "rounds"
    rounds = 0
    star_phase = False
    best = None
    stall = 0
    kk = np.int64(k)
    for rounds in range(1, max_rounds + 1):
        x = model.solve(deadline)
        cert, star_weight = model.certificate()
        if best is None or cert.value > best[0].value + STALL_TOL * (1.0 + abs(best[0].value)):
            stall = 0
        else:
            stall += 1
        if best is None or cert.value > best[0].value:
            best = (cert, star_weight)
        if progress is not None:
            progress(dict(round=rounds, objective=float(model.h.getInfo().objective_function_value),
                          bound=float(cert.value), rows=model.n_rows, columns=int(model.cost.size),
                          seconds=time.perf_counter() - t0))
        if stop_at is not None and _integer_bound(best[0].value) >= stop_at:
            stopped = "reached"
            break
        if deadline is not None and time.perf_counter() > deadline:
            stopped = "time"
            break
        if stall >= STALL_ROUNDS:  # rows dropped and added again without progress
            stopped = "stalled"
            break
        indptr, indices, xval, cptr, cidx, cx = model.x_csr(x)
        count = _ek.violated_triangles(k, indptr, indices, xval, cptr, cidx, cx, SEPARATION_TOL,
                                       False, np.empty((0, 3), np.int64), np.empty(0))
        tri = np.empty((count, 3), dtype=np.int64)
        viol = np.empty(count)
        _ek.violated_triangles(k, indptr, indices, xval, cptr, cidx, cx, SEPARATION_TOL, True, tri, viol)
        if count:
            tkey = (tri[:, 0] * kk + tri[:, 1]) * kk + tri[:, 2]
            fresh = ~np.isin(tkey, added)
            tri, viol, tkey = tri[fresh], viol[fresh], tkey[fresh]
        if cuts and (star_phase or tri.shape[0] == 0):
            # the triangle LP is solved: slack triangles only slow the re-solves from now
            # on (one violated again is added again); deleted before any row is added, so
            # the multipliers read are those of the rows in the model
            added = np.setdiff1d(added, model.drop_slack_triangles(x, DROP_SLACK))
        if tri.shape[0]:
            sel = np.argsort(-viol, kind="stable")[:max_rows]
            tri, tkey = tri[sel], tkey[sel]
            added = np.union1d(added, tkey)
            c_ab = model.columns(tri[:, 0], tri[:, 1])
            c_ac = model.columns(tri[:, 0], tri[:, 2])
            c_bc = model.columns(tri[:, 1], tri[:, 2])
            r = tri.shape[0]
            index = np.column_stack([c_ab, c_ac, c_bc]).ravel()
            value = np.tile([1.0, -1.0, -1.0], r)
            model.add_rows(np.arange(r + 1, dtype=np.int64) * 3, index, value, np.zeros(r), False, tkey)
        else:
            star_phase = cuts  # the triangle LP is solved: stars from now on
        n_stars = 0
        if star_phase:
            n_stars = _add_stars(model, k, (indptr, indices, xval, cptr, cidx, cx), max_rows, star_seen)
        if tri.shape[0] == 0 and n_stars == 0:
            if model.at_vertex or not cuts:
                stopped = "converged"
                break
            model.use_simplex()  # nothing violated at the interior point: look at a vertex
    cert, star_weight = best
    relaxation = "2-partition-lp" if star_weight > 0 else "triangle-lp"
    return dict(value=float(cert.value), relaxation=relaxation, rounds=int(rounds),
                rows=int(model.n_rows), star_rows=int(model.star_rows.sum()),
                columns=int(model.cost.size), stopped=stopped,
                seconds=time.perf_counter() - t0, certificate=cert)


def cluster_editing_bound(n, edges, *, exact_nodes=MAX_EXACT_NODES, cuts=True, reduce=True,
                          max_rounds=MAX_ROUNDS, threads=None, time_limit=None, clustering=None):
    """A certified lower bound on the cluster-editing optimum of a graph.

    Parameters
    ----------
    n : int
    edges : array_like of shape (m, 2)
    exact_nodes : int, default=MAX_EXACT_NODES
        Components with at most this many critical cliques are solved by exhaustion
        (0: none).
    cuts : bool, default=True
        Add the star 2-partition inequalities to the LP of larger components.
    reduce : bool, default=True
        Run the LP on the critical cliques (``False``: on the nodes; the bound of the
        plain triangle LP with ``cuts=False``).
    max_rounds : int
    threads : int or None
    time_limit : float or None
        Seconds for each component's LP.
    clustering : array_like of shape (n,) or None
        Labels of a known clustering: a component's LP stops once its bound reaches the
        clustering's cost on that component (which is then optimal there).

    Returns
    -------
    EditingBound

    Examples
    --------
    >>> from metricopt.solvers.editing_lp import cluster_editing_bound
    >>> r = cluster_editing_bound(4, [[0, 1], [1, 2], [2, 3]])
    >>> r.bound, r.exact, r.relaxations
    (1, True, {'exhaustive': 1})
    """
    t0 = time.perf_counter()
    n, e = check_edges(n, edges)
    if clustering is not None:
        clustering = np.asarray(clustering).reshape(-1)
        if clustering.shape != (n,):
            raise InvalidParameterError(f"The 'clustering' parameter must have one label per node "
                                        f"({n}). Got {clustering.shape[0]}.")
    if not isinstance(exact_nodes, (int, np.integer)) or not 0 <= exact_nodes <= 22:
        raise InvalidParameterError(
            f"The 'exact_nodes' parameter must be an int in [0, 22]. Got {exact_nodes!r} instead.")
    comp = components(n, e)
    crit = critical_cliques(n, e) if reduce else np.arange(n, dtype=np.int64)
    n_comp = int(comp.max()) + 1 if n else 0
    order = np.argsort(comp, kind="stable")
    starts = np.searchsorted(comp[order], np.arange(n_comp + 1))
    ecomp = comp[e[:, 0]]
    eorder = np.argsort(ecomp, kind="stable")
    estarts = np.searchsorted(ecomp[eorder], np.arange(n_comp + 1))
    total, value = 0, 0.0
    relaxations = {}
    details = []
    optimal = {}
    labels = np.empty(n, dtype=np.int64)
    all_exact = True
    next_id = 0
    for c in range(n_comp):
        nodes = order[starts[c]:starts[c + 1]]
        cl, local = np.unique(crit[nodes], return_inverse=True)
        kc = cl.size
        if kc == 1:
            labels[nodes] = next_id
            next_id += 1
            relaxations["exhaustive"] = relaxations.get("exhaustive", 0) + 1
            continue
        ce = e[eorder[estarts[c]:estarts[c + 1]]]
        pos = np.empty(n, dtype=np.int64)
        pos[nodes] = np.arange(nodes.size)
        sub = np.column_stack([pos[ce[:, 0]], pos[ce[:, 1]]])
        if kc <= exact_nodes:
            sol = exact_cluster_editing(nodes.size, sub, max_nodes=max(exact_nodes, 1))
            bound, val, rel = sol.cost, float(sol.cost), "exhaustive"
            labels[nodes] = sol.labels + next_id
            next_id += int(sol.labels.max()) + 1
            optimal[c] = sol.labels
            info = {}
        else:
            all_exact = False
            cu, cv = local[sub[:, 0]], local[sub[:, 1]]
            keep = cu != cv
            pairs = np.unique(_keys(cu[keep], cv[keep], kc))
            adj = np.column_stack([pairs // kc, pairs % kc])
            size = np.bincount(local, minlength=kc)
            stop_at = None if clustering is None else _component_cost(nodes, ce, clustering)
            info = editing_lp_bound(kc, size, adj, cuts=cuts, max_rounds=max_rounds,
                                    threads=threads, time_limit=time_limit, stop_at=stop_at)
            val = info.pop("value")
            info.pop("certificate")
            rel = info.pop("relaxation")
            bound = _integer_bound(val)
        total += bound
        value += val
        relaxations[rel] = relaxations.get(rel, 0) + 1
        details.append(dict(component=c, nodes=int(nodes.size), cliques=int(kc), relaxation=rel,
                            bound=int(bound), value=float(val), **info))
    return EditingBound(bound=int(total), lp_value=float(value), exact=all_exact,
                        labels=labels if all_exact else None, relaxations=relaxations,
                        components=details, optimal_labels=optimal,
                        seconds=time.perf_counter() - t0)


def _component_cost(nodes, edges, labels):
    """Edits of the clustering ``labels`` inside one component (``nodes``, its ``edges``):
    its edges cut, and its non-adjacent pairs put together."""
    lab = np.asarray(labels)
    cut = int(np.count_nonzero(lab[edges[:, 0]] != lab[edges[:, 1]]))
    _, sizes = np.unique(lab[nodes], return_counts=True)
    together = int((sizes * (sizes - 1) // 2).sum())
    return cut + together - (edges.shape[0] - cut)
