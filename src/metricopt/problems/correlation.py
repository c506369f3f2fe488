"""Correlation-clustering LP relaxation (V eq. 3-5)."""

import numpy as np

from .._choices import LAYOUTS, LP_RELAXATIONS, WEDGE_WEIGHTS, WEIGHT_MODES
from .._memory import check_memory
from ..exceptions import InvalidParameterError
from ._base import MetricProblem
from ._checks import check_choice, check_graph, check_real
from ._pairs import n_pairs, pair_index
from .jaccard import DELTA_RANGE, EPSILON_MIN, jaccard_signed_weights
from .resolution import RESOLUTION_WEIGHTS, check_resolution, resolution_weights

__all__ = ["correlation_clustering"]

_CALLER = "correlation_clustering"


def correlation_clustering(graph, *, weights="auto", delta=0.05, epsilon=0.01, resolution=None,
                           relaxation="full", layout="auto", max_memory=None):
    """Build the correlation-clustering LP relaxation of a graph.

    ``min sum_ij w_ij |x_ij - d_ij|`` subject to ``x`` being a (semi)metric with
    ``0 <= x <= 1``, where ``d_ij = 1`` for dissimilar pairs and 0 for similar ones.

    Parameters
    ----------
    graph : Graph
    weights : {"auto", "jaccard", "unit", "signed", "lambda", "lambda-degree", \
"modularity"}, default="auto"
        ``"jaccard"``: every pair weighted by the Wang et al. Jaccard transform (dense;
        see :func:`jaccard_signed_weights`); ``"unit"``: +1 on edges, -1 on non-edges
        (cluster editing; dense); ``"signed"``: the graph's own signed edge weights,
        absent pairs weigh 0, so only the edges are variables and the constraints are
        the cycle inequalities of MET(G) (sparse). ``"auto"`` is ``"signed"`` when the
        graph has a negative weight, else ``"jaccard"``. The resolution-based modes
        (dense; see :func:`~metricopt.problems.resolution.resolution_weights`):
        ``"lambda"``, LambdaCC [2]_: edges weigh ``1 - R`` toward together, non-edges
        ``R`` toward apart; ``"lambda-degree"``, LambdaCC with degree node weights:
        signed pair weight ``A_ij - R d_i d_j``; ``"modularity"``: signed pair weight
        ``A_ij - gamma d_i d_j / (2m)``, its sign choosing the target.
    delta, epsilon : float
        Parameters of the Jaccard transform (defaults 0.05 and 0.01, as in V §8.4).
    resolution : float or None
        ``R`` of ``"lambda"`` (required, in (0, 1)) and ``"lambda-degree"`` (required,
        > 0); ``gamma`` of ``"modularity"`` (> 0, default 1). Not accepted by the other
        modes.
    relaxation : {"full", "wedges"}, default="full"
        ``"full"``: every triangle inequality (the LP above). ``"wedges"``: only the
        inequality ``x_ij <= x_ik + x_jk`` of each open wedge ``i - k - j`` (``ik``, ``jk``
        edges, ``ij`` not), the STC+ LP of Veldt [3]_; weights ``"unit"`` and
        ``"lambda"`` only (targets ``1 - adjacency``, so these are exactly the triangle
        inequalities the all-targets point violates). It keeps a subset of the rows, so
        its optimum is a lower bound on the full LP's and on every clustering; the
        problem's ``params`` record it (``relaxation="wedges"``) and reports say so.
    layout : {"auto", "dense", "support"}, default="auto"
        How the pairs are stored. ``"dense"``: every pair (``n (n - 1) / 2`` weights
        and targets). ``"support"``: only the edges (and, for Jaccard weights, the pairs
        with a common neighbour); every other pair is dissimilar with a weight in closed
        form, and solvers store only the pairs their iterate moves away from 1 (see
        :mod:`metricopt.problems.support`; weights ``"jaccard"``, ``"unit"``,
        ``"lambda"``, ``"lambda-degree"`` and ``"modularity"``, the full relaxation).
        ``"auto"``: ``"support"`` where it applies beyond :data:`AUTO_SUPPORT_NODES`
        nodes, or from :data:`AUTO_SUPPORT_MIN_NODES` nodes when the explicit pairs (the
        edges, for Jaccard also the pairs with a common neighbour: :func:`explicit_pairs`)
        are at most :data:`AUTO_SUPPORT_SHARE` of all pairs; else ``"dense"``.
    max_memory : int or None
        Bytes allowed for the dense weight vectors and the wedge rows (default: what
        the machine has).

    Returns
    -------
    MetricProblem
        For ``"modularity"`` its ``units`` map the objective to the modularity of a
        clustering; for ``"lambda-degree"`` to the unsigned LambdaCC form (see
        :func:`~metricopt.problems.resolution.resolution_weights`).

    References
    ----------
    .. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
           333-355. https://doi.org/10.1137/18M1217152
    .. [2] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering
           framework for community detection. WWW 2018, 439-448.
           https://doi.org/10.1145/3178876.3186110
    .. [3] Veldt, N. (2022). Correlation clustering via strong triadic closure labeling:
           fast approximation algorithms and practical lower bounds. ICML 2022, PMLR 162,
           22060-22083.
    """
    check_graph(graph, _CALLER)
    check_choice(weights, "weights", _CALLER, WEIGHT_MODES)
    delta = check_real(delta, "delta", _CALLER, low=DELTA_RANGE[0], high=DELTA_RANGE[1],
                       low_open=True, high_open=True)
    epsilon = check_real(epsilon, "epsilon", _CALLER, low=EPSILON_MIN)
    mode = weights
    if mode == "auto":
        mode = "signed" if graph.is_signed else "jaccard"
    resolution = check_resolution(mode, resolution, _CALLER)
    if relaxation == "editing":
        raise InvalidParameterError(
            "relaxation='editing' is the full LP plus the cluster-editing bound and search "
            "that a run adds (metricopt.run, 'metricopt solve --relaxation editing'); build "
            "the problem with relaxation='full'", parameter="relaxation", value="editing",
            requirement="given to metricopt.run, not to build_problem")
    check_choice(relaxation, "relaxation", _CALLER, LP_RELAXATIONS)
    check_choice(layout, "layout", _CALLER, LAYOUTS)
    wedges = relaxation == "wedges"
    if wedges and mode not in WEDGE_WEIGHTS:
        raise InvalidParameterError(
            f"relaxation='wedges' (the open-wedge LP) needs weights "
            f"{' or '.join(map(repr, WEDGE_WEIGHTS))}, whose targets are 1 - adjacency; "
            f"got weights={mode!r}")
    params = dict(weights=mode)
    layout = _pick_layout(layout, mode, relaxation, graph)
    if mode == "signed":
        if graph.weights is None:
            raise _unsigned_error()
        # a pair of weight 0 (listed so, or whose duplicates cancel) is no variable: it
        # changes no clustering's cost, and dropping it leaves the LP value as it is
        # (extend x by the shortest-path distance, capped at 1); kept, the QP's floored
        # weight on it slows the projections to a crawl
        keep = graph.weights != 0
        w = np.abs(graph.weights[keep])
        d = (graph.weights[keep] < 0).astype(np.float64)
        return MetricProblem(
            kind="cc", n=graph.n, labels=graph.labels, structure="sparse", objective="l1",
            weights=w, target=d, lower=0.0, upper=1.0, pairs=graph.edges[keep].copy(),
            graph=graph, params=params, name=graph.name,
        )

    if layout == "support":
        from .support import support_correlation_clustering

        pairs, w, d, bulk, units = support_correlation_clustering(
            graph, mode, delta=delta, epsilon=epsilon, resolution=resolution,
            max_memory=max_memory)
        if mode == "jaccard":
            params.update(delta=delta, epsilon=epsilon)
        elif mode in RESOLUTION_WEIGHTS:
            params.update(resolution=resolution)
        params.update(layout="support")
        return MetricProblem(
            kind="cc", n=graph.n, labels=graph.labels, structure="support", objective="l1",
            weights=w, target=d, lower=0.0, upper=1.0, pairs=pairs, bulk=bulk, graph=graph,
            params=params, name=graph.name, units=units,
        )
    npairs = n_pairs(graph.n)
    need = 3 * 8 * npairs
    if wedges:
        from ._wedges import open_wedge_count, open_wedge_rows

        # the wedge rows (3 int64 each) and their enumeration (2 int64 each)
        need += 40 * open_wedge_count(graph)
    check_memory(need, f"correlation clustering with {mode} weights on {graph.n} nodes "
                 f"({npairs} pair variables)", max_memory)
    units = {}
    if mode == "jaccard":
        w, d = jaccard_signed_weights(graph, delta=delta, epsilon=epsilon)
        params.update(delta=delta, epsilon=epsilon)
    elif mode in RESOLUTION_WEIGHTS:
        w, d, units = resolution_weights(graph, mode, resolution)
        params.update(resolution=resolution)
    else:
        w = np.ones(npairs)
        d = np.ones(npairs)
        d[pair_index(graph.edges[:, 0], graph.edges[:, 1], graph.n)] = 0.0
    rows = None
    if wedges:
        rows = open_wedge_rows(graph)
        params.update(relaxation="wedges")
    return MetricProblem(
        kind="cc", n=graph.n, labels=graph.labels, structure="dense", objective="l1",
        weights=w, target=d, lower=0.0, upper=1.0, rows=rows, graph=graph, params=params,
        name=graph.name, units=units,
    )


#: ``layout="auto"`` takes the support-sized layout beyond this many nodes (the dense one
#: needs about 20 GiB there) ...
AUTO_SUPPORT_NODES = 20_000
#: ... and from this many nodes when the explicit pairs are at most
#: :data:`AUTO_SUPPORT_SHARE` of all pairs (Jaccard cc at tolerance 1e-2 on ca-GrQc, 76,710
#: explicit pairs of 8.6 million: the same LP, bound and iterations as the dense layout in
#: 0.35 GiB instead of 1 GiB; ``benchmarks/README.md``, "Support-sized layout").
AUTO_SUPPORT_MIN_NODES = 2_000
AUTO_SUPPORT_SHARE = 0.05


def explicit_pairs(graph, mode):
    """The pairs the support-sized layout lists for ``mode``: the edges, and for Jaccard
    weights the pairs with a common neighbour (counted exactly: the wedges overcount them
    many times over on graphs of cliques, ca-HepPh 15.4 million wedges for 1.6 million
    pairs)."""
    if mode != "jaccard":
        return graph.m
    from ._support_scan import count_near_pairs

    return count_near_pairs(graph)


def _pick_layout(layout, mode, relaxation, graph):
    """The layout to build: ``layout`` checked against the weights and relaxation, or the
    choice of ``"auto"``."""
    from .support import MAX_SUPPORT_NODES, SUPPORT_WEIGHTS

    fits = mode in SUPPORT_WEIGHTS and relaxation == "full" and graph.n <= MAX_SUPPORT_NODES
    if layout == "auto":
        if not fits or graph.n < AUTO_SUPPORT_MIN_NODES:
            return "dense"
        if graph.n > AUTO_SUPPORT_NODES:
            return "support"
        return "support" if explicit_pairs(graph, mode) <= AUTO_SUPPORT_SHARE * n_pairs(graph.n) \
            else "dense"
    if layout == "support" and not fits:
        why = (f"weights {mode!r}" if mode not in SUPPORT_WEIGHTS else
               f"relaxation {relaxation!r}" if relaxation != "full" else
               f"{graph.n} nodes (at most {MAX_SUPPORT_NODES})")
        raise InvalidParameterError(
            f"layout='support' needs weights {', '.join(map(repr, SUPPORT_WEIGHTS))}, the "
            f"full relaxation and at most {MAX_SUPPORT_NODES} nodes; got {why}")
    return layout


def _unsigned_error():
    from ..exceptions import InputError

    return InputError("weights='signed' needs a signed edge list (u v weight), but the graph has no weights")
