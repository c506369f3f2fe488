"""Solver-free builders of the metric-constrained relaxations.

Nothing here imports a solver: a builder returns a :class:`MetricProblem` (arrays plus a
description of its constraint families) that any backend can solve.
"""

from ..exceptions import InvalidParameterError
from ._base import PROBLEM_KINDS, STRUCTURES, MetricProblem
from ._pairs import n_pairs, pair_index
from .cluster_deletion import cluster_deletion
from .correlation import correlation_clustering
from .metric_nearness import metric_nearness
from .sparsest_cut import sparsest_cut

__all__ = [
    "MetricProblem",
    "PROBLEM_KINDS",
    "STRUCTURES",
    "build_problem",
    "correlation_clustering",
    "sparsest_cut",
    "metric_nearness",
    "cluster_deletion",
    "n_pairs",
    "pair_index",
]

BUILDERS = {
    "cc": correlation_clustering,
    "sc": sparsest_cut,
    "mn": metric_nearness,
    "cd": cluster_deletion,
}


def build_problem(kind, data, **params):
    """Build the relaxation ``kind`` of a graph or dissimilarity matrix.

    Parameters
    ----------
    kind : {"cc", "sc", "mn", "cd"}
        Correlation clustering, sparsest cut, metric nearness, cluster deletion.
    data : Graph or Dissimilarity
    **params
        Passed to the builder (see :func:`correlation_clustering`, :func:`sparsest_cut`,
        :func:`metric_nearness`, :func:`cluster_deletion`).

    Returns
    -------
    MetricProblem
    """
    try:
        builder = BUILDERS[kind]
    except (KeyError, TypeError):
        raise InvalidParameterError(
            f"The 'kind' parameter of build_problem must be one of {', '.join(map(repr, BUILDERS))}. "
            f"Got {kind!r} instead."
        ) from None
    try:
        return builder(data, **params)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise InvalidParameterError(f"{kind}: {exc}") from None
        raise
