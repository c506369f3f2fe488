"""Cluster-deletion LP relaxation on the edges only (V eq. 9)."""

import numpy as np

from .._memory import check_memory
from ..exceptions import InvalidParameterError
from ._base import MetricProblem
from ._checks import check_choice, check_graph

__all__ = ["cluster_deletion"]


def cluster_deletion(graph, *, relaxation="full", max_memory=None):
    """Build the cluster-deletion LP relaxation.

    ``min sum_{ij in E} x_ij`` over edge variables with ``0 <= x <= 1``,
    ``x_ij <= x_ik + x_jk`` on every triangle (all three orientations) and
    ``x_ik + x_jk >= 1`` on every open wedge centred at ``k`` (``(i, j)`` not an edge).
    Only O(m + #triangles + #wedges) constraints: never n^3.

    Parameters
    ----------
    graph : Graph
        Weights, if any, are ignored.
    relaxation : {"full"}, default="full"
        The one relaxation of cd (the keyword exists for the common interface;
        ``"editing"``, the stronger cluster-deletion bound, is what a run adds:
        :func:`metricopt.run` with ``relaxation="editing"``).
    max_memory : int or None

    Returns
    -------
    MetricProblem

    References
    ----------
    .. [1] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering
           framework for community detection. WWW 2018.
           https://doi.org/10.1145/3178876.3186110
    .. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2).
           https://doi.org/10.1137/18M1217152
    """
    check_graph(graph, "cluster_deletion")
    if relaxation == "editing":
        raise InvalidParameterError(
            "relaxation='editing' is the cd LP plus the cluster-deletion bound and search that "
            "a run adds (metricopt.run, 'metricopt solve cd --relaxation editing'); build the "
            "problem with relaxation='full'", parameter="relaxation", value="editing",
            requirement="given to metricopt.run, not to build_problem")
    check_choice(relaxation, "relaxation", "cluster_deletion", ("full",))
    deg = graph.degrees().astype(np.int64)
    upper_rows = int(np.sum(deg * (deg - 1) // 2))  # triangles*3 + wedges
    check_memory(8 * 3 * upper_rows + 64 * graph.m,
                 f"cluster deletion on {graph.n} nodes and {graph.m} edges", max_memory)
    from ._wedges import triangles_and_wedges  # numba kernels, loaded when needed

    tri, wed = triangles_and_wedges(graph)
    return MetricProblem(
        kind="cd", n=graph.n, labels=graph.labels, structure="edges", objective="linear",
        cost=np.ones(graph.m), lower=0.0, upper=1.0, pairs=graph.edges.copy(),
        triangles=tri, wedges=wed, graph=graph, params={}, name=graph.name,
    )
