"""Objective values of clusterings and cuts, computed from the problem data alone.

Nothing here looks at a relaxation's solution ``x``: these functions score any
clustering or cut, e.g. one produced by another algorithm, so that its ratio to a
certified lower bound can be reported.
"""

import numpy as np

from ..exceptions import InputError
from ..problems._pairs import pair_index
from . import _kernels as _k
from ._checks import check_in_cut, check_labels, for_kinds

__all__ = ["evaluate", "clustering_objective", "cut_objective", "find_non_clique"]


# ----------------------------------------------------------------- internal costs
def cc_cost(problem, labels):
    """Correlation-clustering cost of checked int64 ``labels`` (no validation)."""
    if problem.structure == "support":
        from ..problems.support import clustering_cost

        return clustering_cost(problem, labels)
    w = np.ascontiguousarray(problem.weights, dtype=np.float64)
    d = np.ascontiguousarray(problem.target, dtype=np.float64)
    if problem.structure == "dense":
        total = _k.cc_dense_cost(w, d, labels, problem.n)
    else:
        pairs = problem.pairs
        split = (labels[pairs[:, 0]] != labels[pairs[:, 1]]).astype(np.float64)
        total = float(w @ np.abs(split - d))
    return float(total + problem.constant)


def cd_cost(problem, labels):
    """Cluster-deletion cost (weight of the edges between clusters), no validation."""
    pairs = problem.pairs
    split = labels[pairs[:, 0]] != labels[pairs[:, 1]]
    if problem.cost is None:
        total = float(np.count_nonzero(split))
    else:
        total = float(np.asarray(problem.cost, dtype=np.float64) @ split.astype(np.float64))
    return float(total + problem.constant)


def sc_edges(problem):
    """Edges ``(m, 2)`` and their weights (the LP cost) of a sparsest-cut problem."""
    cost = np.asarray(problem.cost, dtype=np.float64)
    graph = problem.graph
    if graph is not None and getattr(graph, "edges", None) is not None:
        edges = np.asarray(graph.edges, dtype=np.int64).reshape(-1, 2)
        weights = cost[pair_index(edges[:, 0], edges[:, 1], problem.n)]
        keep = weights != 0
        return edges[keep], weights[keep]
    idx = np.flatnonzero(cost)
    n = problem.n
    rows = np.arange(n, dtype=np.int64)
    starts = rows * n - rows * (rows + 1) // 2
    i = np.searchsorted(starts, idx, side="right") - 1
    j = idx - starts[i] + i + 1
    return np.column_stack([i, j]).astype(np.int64), cost[idx]


def cut_value(problem, in_cut, edges=None, weights=None):
    """``(phi, cut weight, number of cut edges)`` of a checked boolean side."""
    if edges is None:
        edges, weights = sc_edges(problem)
    crossing = in_cut[edges[:, 0]] != in_cut[edges[:, 1]]
    cut = float(weights @ crossing.astype(np.float64))
    size = int(np.count_nonzero(in_cut))
    n = problem.n
    return n * cut / (size * (n - size)), cut, int(np.count_nonzero(crossing))


def find_non_clique(problem, labels):
    """A pair ``(a, b)`` of non-adjacent nodes in one cluster, or None.

    Parameters
    ----------
    problem : MetricProblem
        Adjacency is its edge list (``problem.pairs``, else the graph's edges).
    labels : ndarray of shape (n,), int64
        Checked, non-negative cluster ids.

    Returns
    -------
    tuple of int or None
        ``(a, b)`` with ``a < b`` from the first cluster (by id) that is not a clique.

    Notes
    -----
    O(n + m) time.
    """
    pairs = problem.pairs if problem.pairs is not None else problem.graph.edges
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    u, v = pairs[:, 0], pairs[:, 1]
    same = labels[u] == labels[v]
    sizes = np.bincount(labels)
    inside = np.bincount(labels[u[same]], minlength=sizes.size)
    bad = np.flatnonzero(inside != sizes * (sizes - 1) // 2)
    if bad.size == 0:
        return None
    c = bad[0]
    members = np.flatnonzero(labels == c)
    in_c = same & (labels[u] == c)
    deg = np.bincount(np.concatenate([u[in_c], v[in_c]]), minlength=problem.n)
    a = int(members[np.flatnonzero(deg[members] < members.size - 1)[0]])
    nbrs = set(v[in_c & (u == a)].tolist()) | set(u[in_c & (v == a)].tolist())
    for b in members.tolist():
        if b != a and b not in nbrs:
            return (min(a, b), max(a, b))
    return None  # unreachable for a simple graph


def _node_name(problem, v):
    labels = getattr(problem, "labels", None)
    if labels is not None and len(labels) == problem.n and str(labels[v]) != str(v):
        return f"{v} ({labels[v]!r})"
    return str(v)


# ------------------------------------------------------------------ public API
@for_kinds("cc", "cd")
def clustering_objective(problem, labels):
    """Cost of a clustering for correlation clustering or cluster deletion.

    ``cc``: ``sum w_ij |x_ij - d_ij|`` over the problem's variables (all pairs, or the
    graph's pairs for a sparse problem), with ``x_ij = 0`` inside a cluster and 1
    between clusters, plus ``problem.constant``; for a support-sized problem over all
    pairs, the bulk pairs in closed form
    (:func:`metricopt.problems.support.clustering_cost`, O(n + listed pairs)). ``cd``:
    the weight (by default the number) of edges between clusters, plus
    ``problem.constant``; every cluster must be a clique.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"`` or ``"cd"``.
    labels : array-like of shape (n,), integer
        A non-negative cluster id per node.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If ``labels`` is not a length-``n`` non-negative integer array, or (``cd``) a
        cluster is not a clique; the message names one offending pair.
    UnsupportedProblemError
        For other problem kinds.

    Notes
    -----
    A dense problem is scored by one pass over the packed pairs (numba, no temporary
    arrays): about a second for n = 10,000 (50 million pairs).
    """
    labels = check_labels(labels, problem.n)
    if problem.kind == "cc":
        return cc_cost(problem, labels)
    pair = find_non_clique(problem, labels)
    if pair is not None:
        a, b = pair
        raise InputError(
            f"cluster deletion needs every cluster to be a clique, but nodes {_node_name(problem, a)} and "
            f"{_node_name(problem, b)} share cluster {int(labels[a])} without an edge between them"
        )
    return cd_cost(problem, labels)


@for_kinds("sc")
def cut_objective(problem, in_cut):
    """Sparsity ``phi(S) = n * cut(S) / (|S| |V \\ S|)`` of a cut.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"sc"``; edge weights are the LP costs (1 on every edge).
    in_cut : array-like of shape (n,), bool
        Membership of ``S``; both sides must be non-empty.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If ``in_cut`` has the wrong shape or type, or leaves a side empty.

    References
    ----------
    .. [1] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and
           their use in designing approximation algorithms. J. ACM 46(6), 787-832.
           https://doi.org/10.1145/331524.331526
    """
    in_cut = check_in_cut(in_cut, problem.n)
    return cut_value(problem, in_cut)[0]


@for_kinds("cc", "sc", "cd")
def evaluate(problem, labels=None, in_cut=None):
    """Objective of a clustering (``cc``, ``cd``) or a cut (``sc``), independent of any LP.

    Parameters
    ----------
    problem : MetricProblem
    labels : array-like of shape (n,), integer, optional
        Cluster ids (``cc``, ``cd``). For ``sc`` a two-cluster labelling may be given
        instead of ``in_cut``.
    in_cut : array-like of shape (n,), bool, optional
        The side ``S`` of a cut (``sc``).

    Returns
    -------
    float
        The clustering cost (see :func:`clustering_objective`) or ``phi(S)`` (see
        :func:`cut_objective`).

    Raises
    ------
    InputError
        Bad or missing ``labels`` / ``in_cut``; a non-clique cluster for ``cd``.
    UnsupportedProblemError
        For metric nearness, which has no clusterings to score.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.problems import MetricProblem
    >>> p = MetricProblem(kind="cc", n=3, labels=np.arange(3), structure="dense",
    ...                   objective="l1", weights=np.ones(3), target=np.array([0., 1., 1.]),
    ...                   lower=0.0, upper=1.0)
    >>> evaluate(p, labels=[0, 0, 1])
    0.0
    """
    if problem.kind == "sc":
        if in_cut is None:
            if labels is None:
                raise InputError("evaluate needs in_cut (or a two-cluster labels array) for sparsest cut")
            labels = check_labels(labels, problem.n)
            if np.unique(labels).size != 2:
                raise InputError("a sparsest-cut labelling must have exactly two clusters")
            in_cut = labels != labels[0]
        return cut_objective(problem, in_cut)
    if labels is None:
        raise InputError("evaluate needs labels (one cluster id per node) for a clustering problem")
    return clustering_objective(problem, labels)
