"""Iterated local search for cluster editing (unit-weight correlation clustering).

:func:`search_cluster_editing` improves a clustering of a graph for the cluster-editing
objective (edges between clusters plus non-edges inside them):

* components of the graph are solved on their own (an optimum never joins two);
  those with at most ``exact_nodes`` critical cliques get an optimal clustering by
  exhaustion (:func:`metricopt.bounds.editing_exact.exact_cluster_editing`);
* the larger ones get an iterated local search [1]_: from the given clustering (after
  the node-move and merge local search of :mod:`metricopt.rounding.refine`), each
  iteration perturbs the current clustering around a random node (moves it with part
  of its cluster to a neighbouring cluster, splits it off with part of its
  neighbourhood, or merges its cluster with a neighbouring one), re-optimises by local
  search and keeps the result when it is no worse (plateaus are walked). Several
  seeded starts run from the same clustering and the best is kept. The search is a
  numba kernel (:mod:`._editing_search_kernels`) that keeps cluster sizes and member
  lists, so a move costs its neighbourhood and the local search after a perturbation
  visits only the nodes it may improve (ca-HepTh, 9,877 nodes: seconds, where sweeping
  the whole component after every perturbation took minutes).

The budget is counted in iterations (``iterations_per_node`` times the component's
nodes per start), never in seconds: the same input and seed give the same answer.

References
----------
.. [1] Lourenço, H. R., Martin, O. C., & Stützle, T. (2003). Iterated local search. In
       Handbook of Metaheuristics, 320-353. https://doi.org/10.1007/0-306-48056-5_11
.. [2] Böcker, S., & Baumbach, J. (2013). Cluster editing. In The Nature of
       Computation (CiE 2013), LNCS 7921, 33-44.
       https://doi.org/10.1007/978-3-642-39053-1_5
"""

import time

import numpy as np

from ..bounds.editing_exact import (
    MAX_EXACT_NODES,
    canonical_ids,
    check_edges,
    components,
    critical_cliques,
    editing_cost,
    exact_cluster_editing,
)
from ..exceptions import InvalidParameterError
from ..result import RichResult
from .refine import REL_TOL, _local_search

__all__ = ["EditingSearch", "search_cluster_editing"]

#: Iterations per node of a component, per start.
ITERATIONS_PER_NODE = 20
#: Seeded starts per component.
N_STARTS = 4
#: Sweeps of the local search after each perturbation.
LOCAL_SWEEPS = 16
#: A perturbation that ends ``d`` worse is kept with probability ``WORSE_ACCEPT ** d``.
WORSE_ACCEPT = 0.1
#: Iterations without improvement after which the search returns to its best clustering.
RESTART_AFTER = 500


class EditingSearch(RichResult):
    """Outcome of :func:`search_cluster_editing`.

    Fields
    ------
    objective_before, objective : int
        Cost of the given clustering and of the returned one (never larger).
    labels : ndarray of shape (n,), int64
    exact_components, searched_components : int
        Components solved by exhaustion, and by the iterated local search.
    iterations, accepted, improved : int
        Perturbations tried, kept (no worse) and strictly improving, over all starts.
    seconds : float
    """


def _local(indptr, indices, labels, rng, sweeps):
    n = labels.size
    gains = dict(layout="sparse", indptr=indptr, indices=indices,
                 delta=np.full(indices.size, 2.0), s0=-1.0, clique=False, tol=REL_TOL)
    _local_search(gains, labels, rng, sweeps, np.inf)
    return labels if n == 0 else canonical_ids(labels)


def _cost(u, v, labels, m):
    sizes = np.bincount(labels).astype(np.int64)
    intra = int(np.count_nonzero(labels[u] == labels[v]))
    return m + int(np.sum(sizes * (sizes - 1) // 2)) - 2 * intra


def _perturb(labels, indptr, indices, rng):
    """A random change around one node (in place); returns the labels."""
    n = labels.size
    v = int(rng.integers(n))
    nbr = indices[indptr[v]:indptr[v + 1]]
    if nbr.size == 0:
        return labels
    own = labels[v]
    kind = rng.random()
    if kind < 0.4:  # move v and part of its cluster-mates to a neighbouring cluster
        others = np.unique(labels[nbr][labels[nbr] != own])
        if others.size == 0:
            kind = 0.5
        else:
            target = others[rng.integers(others.size)]
            mates = nbr[(labels[nbr] == own) & (rng.random(nbr.size) < 0.5)]
            labels[v] = target
            labels[mates] = target
            return labels
    if kind < 0.7:  # split v off with part of its neighbourhood
        used = np.zeros(n + 1, dtype=bool)
        used[labels] = True
        fresh = int(np.argmin(used))
        if fresh >= n:  # every id in use: all singletons, nothing to split
            return labels
        labels[v] = fresh
        labels[nbr[rng.random(nbr.size) < 0.5]] = fresh
        return labels
    u = nbr[rng.integers(nbr.size)]  # merge v's cluster with a neighbour's
    labels[labels == labels[u]] = own
    return labels


def _csr(n, edges):
    import scipy.sparse as sp

    m = edges.shape[0]
    u, v = edges[:, 0], edges[:, 1]
    a = sp.coo_matrix((np.ones(2 * m), (np.concatenate([u, v]), np.concatenate([v, u]))),
                      shape=(n, n)).tocsr()
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int64)


def _ils(n, edges, labels, seed, iterations):
    """Iterated local search on one component (the kernel
    :func:`._editing_search_kernels.iterated_local_search`); returns labels, cost and
    counters."""
    from ._editing_search_kernels import iterated_local_search

    indptr, indices = _csr(n, edges)
    best = np.empty(n, dtype=np.int64)
    cost, accepted, improved = iterated_local_search(
        indptr, indices, canonical_ids(labels).astype(np.int64), int(iterations), int(seed),
        WORSE_ACCEPT, RESTART_AFTER, best)
    return canonical_ids(best), int(cost), int(accepted), int(improved)


def _ils_reference(n, edges, labels, rng, iterations):
    """The former pure-sweep iterated local search (full local-search sweeps of the
    component after every perturbation): the tests' slower reference."""
    m = edges.shape[0]
    u, v = edges[:, 0], edges[:, 1]
    indptr, indices = _csr(n, edges)
    cur = _local(indptr, indices, canonical_ids(labels), rng, 64)
    cur_cost = _cost(u, v, cur, m)
    best, best_cost = cur.copy(), cur_cost
    accepted = improved = 0
    since = 0
    for _ in range(iterations):
        cand = _local(indptr, indices, _perturb(cur.copy(), indptr, indices, rng), rng, LOCAL_SWEEPS)
        c = _cost(u, v, cand, m)
        since += 1
        # no worse: kept; worse: kept with probability WORSE_ACCEPT ** (c - cur_cost)
        if c <= cur_cost or rng.random() < WORSE_ACCEPT ** (c - cur_cost):
            accepted += 1
            cur, cur_cost = cand, c
            if c < best_cost:
                improved += 1
                since = 0
                best, best_cost = cand.copy(), c
        if since >= RESTART_AFTER:  # back to the best clustering found
            cur, cur_cost, since = best.copy(), best_cost, 0
    return best, best_cost, accepted, improved


def search_cluster_editing(n, edges, labels=None, *, seed=0, n_starts=N_STARTS,
                           iterations_per_node=ITERATIONS_PER_NODE, exact_nodes=MAX_EXACT_NODES):
    """Improve a cluster editing of a graph by exact search and iterated local search.

    Parameters
    ----------
    n : int
    edges : array_like of shape (m, 2)
    labels : array_like of shape (n,) or None
        The clustering to start from (``None``: every node alone).
    seed : int, default=0
        Seeds the perturbations and the local search's node orders.
    n_starts : int, default=N_STARTS
        Independent searches per component (from the same clustering).
    iterations_per_node : int, default=ITERATIONS_PER_NODE
        Perturbations per node of a component, per start.
    exact_nodes : int, default=MAX_EXACT_NODES
        Components with at most this many critical cliques are solved exactly (0: none).

    Returns
    -------
    EditingSearch
        ``objective <= objective_before``.

    Examples
    --------
    >>> from metricopt.rounding.editing_search import search_cluster_editing
    >>> r = search_cluster_editing(4, [[0, 1], [1, 2], [2, 3], [0, 2]], seed=0)
    >>> r.objective, r.exact_components
    (1, 1)
    """
    t0 = time.perf_counter()
    n, e = check_edges(n, edges)
    for name, value, low in (("n_starts", n_starts, 1), ("iterations_per_node", iterations_per_node, 0),
                             ("exact_nodes", exact_nodes, 0), ("seed", seed, 0)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
            raise InvalidParameterError(
                f"The {name!r} parameter must be an int in the range [{low}, inf). Got {value!r} instead.")
    if exact_nodes > 22:
        raise InvalidParameterError(f"The 'exact_nodes' parameter must be at most 22. Got {exact_nodes}.")
    given = np.arange(n, dtype=np.int64) if labels is None else np.asarray(labels).reshape(-1)
    if given.shape != (n,):
        raise InvalidParameterError(f"'labels' must have shape ({n},). Got {given.shape} instead.")
    given = canonical_ids(given) if n else given.astype(np.int64)
    before = editing_cost(n, e, given)
    comp = components(n, e)
    crit = critical_cliques(n, e)
    out = np.empty(n, dtype=np.int64)
    next_id = 0
    n_exact = n_searched = iters = accepted = improved = 0
    n_comp = int(comp.max()) + 1 if n else 0
    order = np.argsort(comp, kind="stable")
    starts = np.searchsorted(comp[order], np.arange(n_comp + 1))
    ecomp = comp[e[:, 0]]
    eorder = np.argsort(ecomp, kind="stable")
    estarts = np.searchsorted(ecomp[eorder], np.arange(n_comp + 1))
    pos = np.empty(n, dtype=np.int64)
    for c in range(n_comp):
        nodes = order[starts[c]:starts[c + 1]]
        pos[nodes] = np.arange(nodes.size)
        ce = e[eorder[estarts[c]:estarts[c + 1]]]
        sub = np.column_stack([pos[ce[:, 0]], pos[ce[:, 1]]])
        k = np.unique(crit[nodes]).size
        if k <= max(exact_nodes, 1):
            lab = exact_cluster_editing(nodes.size, sub, max_nodes=max(k, 1)).labels
            n_exact += 1
        else:
            n_searched += 1
            start = canonical_ids(given[nodes])
            best, best_cost = start, editing_cost(nodes.size, sub, start)
            budget = iterations_per_node * nodes.size
            for s in range(n_starts):
                state = np.random.SeedSequence(seed, spawn_key=(c, s)).generate_state(2, np.uint64)
                lab, cost, acc, imp = _ils(nodes.size, sub, start, int(state[0] >> np.uint64(1)),
                                           budget)
                iters += budget
                accepted += acc
                improved += imp
                if cost < best_cost:
                    best, best_cost = lab, cost
            lab = best
        out[nodes] = lab + next_id
        next_id += int(lab.max()) + 1
    out = canonical_ids(out) if n else out
    after = editing_cost(n, e, out)
    if after > before:  # cannot happen: every step keeps the best, exact parts are optimal
        out, after = given, before
    return EditingSearch(objective_before=int(before), objective=int(after), labels=out,
                         exact_components=n_exact, searched_components=n_searched,
                         iterations=int(iters), accepted=int(accepted), improved=int(improved),
                         seconds=time.perf_counter() - t0)
