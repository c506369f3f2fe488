"""Exact cluster editing on small instances: data reduction and exhaustive search.

Cluster editing (correlation clustering with unit weights) asks for the fewest edge
insertions and deletions that turn a graph into a disjoint union of cliques. Two
reductions keep an optimum:

* **Connected components.** Splitting a cluster along the components of the graph
  removes only non-edges from it, so some optimum never joins two components: the
  optimum of a graph is the sum of its components' optima.
* **Critical cliques.** Nodes with the same closed neighbourhood form a clique, and
  some optimum keeps every such clique in one cluster (Guo 2009, Lemma 1 [1]_). The
  cliques become the nodes of a weighted instance: a pair of cliques ``(K, L)`` costs
  ``|K| |L|`` when split if they are adjacent, and when joined if they are not.

On at most :data:`MAX_EXACT_NODES` critical cliques the weighted instance is solved by
dynamic programming over subsets (:func:`exact_cluster_editing`): ``f(S)`` is the least
cost of clustering the set ``S``, and the cluster ``C`` holding the lowest node of ``S``
is tried in every way, ``f(S) = min_C B(C) + A(S) - A(C) - A(S \\ C) + f(S \\ C)``
(``A``: the adjacent weight inside a set, ``B``: the non-adjacent weight), in
``O(3^k)`` integer steps for ``k`` cliques. The value is the optimum by exhaustion.

References
----------
.. [1] Guo, J. (2009). A more effective linear kernelization for cluster editing.
       Theor. Comput. Sci. 410(8-10), 718-726. https://doi.org/10.1016/j.tcs.2008.10.021
.. [2] Böcker, S., & Baumbach, J. (2013). Cluster editing. In The Nature of
       Computation (CiE 2013), LNCS 7921, 33-44.
       https://doi.org/10.1007/978-3-642-39053-1_5
"""

import numba
import numpy as np

from ..exceptions import InvalidParameterError
from ..result import RichResult

__all__ = ["EditingSolution", "MAX_EXACT_NODES", "editing_cost", "components",
           "critical_cliques", "exact_cluster_editing", "check_edges", "canonical_ids"]

#: Largest number of critical cliques solved by :func:`exact_cluster_editing` by default
#: (``3^16`` = 43 million steps, well under a second).
MAX_EXACT_NODES = 16
#: Hard limit on the subset table (``2^22`` entries of 3 arrays).
_HARD_LIMIT = 22


class EditingSolution(RichResult):
    """An optimal cluster editing of a small graph.

    Fields
    ------
    cost : int
        The optimum (edges cut plus non-edges joined).
    labels : ndarray of shape (n,), int64
        An optimal clustering (canonical ids: first appearance order).
    n_cliques : int
        Critical cliques the search ran on.
    method : str
        ``"exhaustive"`` (dynamic programming over subsets of critical cliques).
    """


def check_edges(n, edges):
    """``(n, edges)`` checked: each undirected edge once as ``(u, v)``, ``u < v``, sorted."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidParameterError(f"The 'n' parameter must be a non-negative int. Got {n!r} instead.")
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if e.size and (e.min() < 0 or e.max() >= n):
        raise InvalidParameterError(f"Edge endpoints must lie in [0, {n}).")
    if np.any(e[:, 0] == e[:, 1]):
        raise InvalidParameterError("The graph must have no self-loops.")
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    key = np.unique(lo * max(n, 1) + hi)
    return int(n), np.column_stack([key // max(n, 1), key % max(n, 1)]).astype(np.int64)


def canonical_ids(labels):
    """Cluster ids renumbered 0, 1, ... in order of first appearance."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse].astype(np.int64)


def editing_cost(n, edges, labels):
    """Edges between clusters plus non-edges inside clusters (the unit ``cc`` objective).

    Parameters
    ----------
    n : int
    edges : array_like of shape (m, 2)
        Each undirected edge once (duplicates are merged).
    labels : array_like of shape (n,)
        A cluster id per node.

    Returns
    -------
    int
    """
    n, e = check_edges(n, edges)
    lab = np.asarray(labels).reshape(-1)
    if lab.shape != (n,):
        raise InvalidParameterError(f"'labels' must have shape ({n},). Got {lab.shape} instead.")
    lab = canonical_ids(lab)
    same = lab[e[:, 0]] == lab[e[:, 1]]
    sizes = np.bincount(lab).astype(np.int64)
    inside = int(np.sum(sizes * (sizes - 1) // 2))
    return int(np.count_nonzero(~same)) + inside - int(np.count_nonzero(same))


def components(n, edges):
    """Connected-component id of every node (canonical: first appearance order)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n, e = check_edges(n, edges)
    a = sp.coo_matrix((np.ones(e.shape[0]), (e[:, 0], e[:, 1])), shape=(n, n))
    _, lab = connected_components(a, directed=False)
    return canonical_ids(lab)


def critical_cliques(n, edges):
    """Critical-clique id of every node: nodes with equal closed neighbourhoods share one.

    Returns
    -------
    ndarray of shape (n,), int64
        Canonical ids (first appearance order).
    """
    n, e = check_edges(n, edges)
    nbrs = [[v] for v in range(n)]
    for u, v in e.tolist():
        nbrs[u].append(v)
        nbrs[v].append(u)
    ids = {}
    lab = np.empty(n, dtype=np.int64)
    for v in range(n):
        lab[v] = ids.setdefault(tuple(sorted(nbrs[v])), len(ids))
    return lab


@numba.njit(cache=True)
def _subset_dp(k, size, adjmask):
    """Optimal weighted clustering of ``k`` cliques by DP over subsets (see module doc).

    Returns the optimum and, per subset, the cluster holding its lowest clique.
    """
    full = (1 << k) - 1
    weight = np.zeros(full + 1, dtype=np.int64)  # summed sizes of a subset
    adj_in = np.zeros(full + 1, dtype=np.int64)  # A(S): adjacent weight inside S
    non_in = np.zeros(full + 1, dtype=np.int64)  # B(S): non-adjacent weight inside S
    for s in range(1, full + 1):
        low = s & -s
        v = 0
        while (1 << v) != low:
            v += 1
        rest = s ^ low
        weight[s] = weight[rest] + size[v]
        adj_in[s] = adj_in[rest] + size[v] * weight[rest & adjmask[v]]
        non_in[s] = non_in[rest] + size[v] * weight[rest & ~adjmask[v]]
    best = np.zeros(full + 1, dtype=np.int64)
    choice = np.zeros(full + 1, dtype=np.int64)
    for s in range(1, full + 1):
        low = s & -s
        rest = s ^ low
        top = np.int64(1) << 62
        pick = s
        sub = rest
        while True:
            c = low | sub
            other = s ^ c
            val = non_in[c] + adj_in[s] - adj_in[c] - adj_in[other] + best[other]
            if val < top:
                top = val
                pick = c
            if sub == 0:
                break
            sub = (sub - 1) & rest
        best[s] = top
        choice[s] = pick
    return best[full], choice


def exact_cluster_editing(n, edges, *, max_nodes=MAX_EXACT_NODES):
    """An optimal cluster editing of a graph with few critical cliques, by exhaustion.

    Each connected component is solved on its own (an optimum never joins two), on its
    critical cliques (some optimum keeps each in one cluster).

    Parameters
    ----------
    n : int
    edges : array_like of shape (m, 2)
    max_nodes : int, default=MAX_EXACT_NODES
        Largest number of critical cliques of one component (at most 22).

    Returns
    -------
    EditingSolution

    Raises
    ------
    InvalidParameterError
        A component has more than ``max_nodes`` critical cliques.

    Examples
    --------
    A path on three nodes needs one edit:

    >>> from metricopt.bounds.editing_exact import exact_cluster_editing
    >>> exact_cluster_editing(3, [[0, 1], [1, 2]]).cost
    1
    """
    n, e = check_edges(n, edges)
    if not isinstance(max_nodes, (int, np.integer)) or not 1 <= max_nodes <= _HARD_LIMIT:
        raise InvalidParameterError(
            f"The 'max_nodes' parameter must be an int in [1, {_HARD_LIMIT}]. Got {max_nodes!r} instead.")
    comp = components(n, e)
    crit = critical_cliques(n, e)
    labels = np.empty(n, dtype=np.int64)
    total = 0
    next_id = 0
    most = 0
    for c in range(int(comp.max()) + 1 if n else 0):
        nodes = np.flatnonzero(comp == c)
        cl, local = np.unique(crit[nodes], return_inverse=True)
        k = cl.size
        most = max(most, k)
        if k > max_nodes:
            raise InvalidParameterError(
                f"A component has {k} critical cliques, more than max_nodes={max_nodes}.")
        size = np.bincount(local, minlength=k).astype(np.int64)
        # cliques of a component are adjacent iff any of their nodes are
        pos = np.full(n, -1, dtype=np.int64)
        pos[nodes] = local
        inside = e[(comp[e[:, 0]] == c)]
        adjmask = np.zeros(k, dtype=np.int64)
        for u, v in zip(pos[inside[:, 0]].tolist(), pos[inside[:, 1]].tolist()):
            if u != v:
                adjmask[u] |= 1 << v
                adjmask[v] |= 1 << u
        cost, choice = _subset_dp(k, size, adjmask)
        total += int(cost)
        clique_label = np.empty(k, dtype=np.int64)
        s = (1 << k) - 1
        while s:
            pick = int(choice[s])
            for b in range(k):
                if pick >> b & 1:
                    clique_label[b] = next_id
            next_id += 1
            s ^= pick
        labels[nodes] = clique_label[local]
    return EditingSolution(cost=int(total), labels=canonical_ids(labels) if n else labels,
                           n_cliques=int(most), method="exhaustive")
