"""Leighton-Rao sparsest-cut LP relaxation (V eq. 6)."""

import numpy as np

from .._memory import check_memory
from ._base import MetricProblem
from ._checks import check_graph
from ._pairs import n_pairs, pair_index

__all__ = ["sparsest_cut"]


def sparsest_cut(graph, *, max_memory=None):
    """Build the Leighton-Rao LP relaxation of sparsest cut.

    ``min sum_{ij in E} x_ij`` subject to ``sum_{i<j} x_ij = n``, ``x >= 0`` and ``x``
    a semimetric on all pairs. Its value lower-bounds
    ``phi* = min_S n * cut(S) / (|S| |V \\ S|)``.

    Parameters
    ----------
    graph : Graph
        Edge weights, if any, are ignored (the papers use unweighted graphs).
    max_memory : int or None

    Returns
    -------
    MetricProblem

    References
    ----------
    .. [1] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and
           their use in designing approximation algorithms. J. ACM 46(6), 787-832.
           https://doi.org/10.1145/331524.331526
    .. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2).
           https://doi.org/10.1137/18M1217152
    """
    check_graph(graph, "sparsest_cut")
    npairs = n_pairs(graph.n)
    check_memory(2 * 8 * npairs, f"sparsest cut on {graph.n} nodes ({npairs} pair variables)", max_memory)
    cost = np.zeros(npairs)
    cost[pair_index(graph.edges[:, 0], graph.edges[:, 1], graph.n)] = 1.0
    return MetricProblem(
        kind="sc", n=graph.n, labels=graph.labels, structure="dense", objective="linear",
        cost=cost, lower=0.0, upper=np.inf, sum_value=float(graph.n), graph=graph,
        params={}, name=graph.name,
    )
