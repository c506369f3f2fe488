"""Metric-nearness problems (V eq. 1-2; PF §4.1)."""

import numpy as np

from .._choices import MN_SOURCES
from .._memory import check_memory
from ..exceptions import InputError, InvalidParameterError, type_name
from ..graph import Dissimilarity, Graph
from ._base import MetricProblem
from ._checks import check_choice, check_real
from ._pairs import n_pairs, square_to_packed
from .jaccard import DELTA_RANGE, EPSILON_MIN, jaccard_signed_weights

__all__ = ["metric_nearness"]

_CALLER = "metric_nearness"
SOURCES = MN_SOURCES


def metric_nearness(data, *, p=2, source="auto", delta=0.05, epsilon=0.01, max_memory=None):
    """Build a metric-nearness problem ``min sum w_ij |x_ij - d_ij|^p``, ``x`` a metric.

    Parameters
    ----------
    data : Dissimilarity or Graph
        A dense dissimilarity matrix, a weighted edge list (the weights are the
        dissimilarities; only the graph's pairs are variables and the constraints are
        the cycle inequalities of MET(G)), or an unweighted graph, turned into ``d`` and
        ``w`` by the Jaccard transform of correlation clustering (for ``p = 1`` the
        problem then has exactly the correlation-clustering LP value, V Thm 1).
    p : {1, 2}, default=2
    source : {"auto", "matrix", "weighted", "jaccard"}, default="auto"
        ``"auto"`` picks ``"matrix"`` for a Dissimilarity, ``"weighted"`` for a graph
        with weights and ``"jaccard"`` otherwise.
    delta, epsilon : float
        Jaccard-transform parameters.
    max_memory : int or None

    Returns
    -------
    MetricProblem

    References
    ----------
    .. [1] Brickell, J., Dhillon, I. S., Sra, S., & Tropp, J. A. (2008). The metric nearness
           problem. SIAM J. Matrix Anal. Appl. 30(1). https://doi.org/10.1137/060653391
    .. [2] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
           metric constrained problems. arXiv:2005.03853.
    """
    if p not in (1, 2) or isinstance(p, bool):
        raise InvalidParameterError(
            f"The 'p' parameter of {_CALLER} must be one of 1, 2. Got {p!r} instead."
        )
    check_choice(source, "source", _CALLER, SOURCES)
    if not isinstance(data, (Dissimilarity, Graph)):
        raise InvalidParameterError(
            f"The 'data' parameter of {_CALLER} must be a metricopt.Dissimilarity or "
            f"metricopt.Graph (metricopt.build_problem('mn', ...) also reads numpy distance "
            f"matrices and graph objects). Got {type_name(data)} instead.")
    objective = "l1" if p == 1 else "l2"
    if source == "auto":
        if isinstance(data, Dissimilarity):
            source = "matrix"
        elif isinstance(data, Graph) and data.weights is not None:
            source = "weighted"
        else:
            source = "jaccard"
    params = dict(p=p, source=source)

    if source == "matrix":
        if not isinstance(data, Dissimilarity):
            raise InputError("source='matrix' needs a dissimilarity matrix (.npy or matrix CSV)")
        n = data.n
        check_memory(3 * 8 * n_pairs(n), f"metric nearness on {n} points", max_memory)
        target = square_to_packed(data.values)
        if np.any(target < 0):
            raise InputError(f"{data.name}: dissimilarities must be non-negative")
        weights = np.ones_like(target) if data.weights is None else square_to_packed(data.weights)
        if np.any(weights <= 0) or not np.all(np.isfinite(weights)):
            raise InputError(f"{data.name}: metric-nearness weights must be positive and finite")
        return MetricProblem(
            kind="mn", n=n, labels=data.labels, structure="dense", objective=objective,
            weights=weights, target=target, lower=0.0, upper=np.inf, params=params, name=data.name,
        )

    if not isinstance(data, Graph):
        raise InputError(f"source={source!r} needs a graph, not a dissimilarity matrix")
    if data.n < 2 or data.m < 1:
        raise InputError(f"{_CALLER} needs a graph with at least two nodes and one edge")
    if source == "weighted":
        if data.weights is None:
            raise InputError("source='weighted' needs a weighted edge list (u v weight)")
        if np.any(data.weights < 0):
            raise InputError(
                f"{data.name}: metric nearness needs non-negative edge weights (dissimilarities)")
        return MetricProblem(
            kind="mn", n=data.n, labels=data.labels, structure="sparse", objective=objective,
            weights=np.ones(data.m), target=data.weights.copy(), lower=0.0, upper=np.inf,
            pairs=data.edges.copy(), graph=data, params=params, name=data.name,
        )

    delta = check_real(delta, "delta", _CALLER, low=DELTA_RANGE[0], high=DELTA_RANGE[1],
                       low_open=True, high_open=True)
    epsilon = check_real(epsilon, "epsilon", _CALLER, low=EPSILON_MIN)
    check_memory(3 * 8 * n_pairs(data.n), f"metric nearness on {data.n} nodes", max_memory)
    weights, target = jaccard_signed_weights(data, delta=delta, epsilon=epsilon)
    params.update(delta=delta, epsilon=epsilon)
    return MetricProblem(
        kind="mn", n=data.n, labels=data.labels, structure="dense", objective=objective,
        weights=weights, target=target, lower=0.0, upper=np.inf, graph=data, params=params,
        name=data.name,
    )
