"""Solver-free builders of the metric-constrained relaxations.

Nothing here imports a solver: a builder returns a :class:`MetricProblem` (arrays plus a
description of its constraint families) that any backend can solve.
"""

import warnings
from typing import Any

from .._choices import PROBLEM_KINDS, STRUCTURES
from ..exceptions import InvalidParameterError, MetricOptWarning
from ..graph import Dissimilarity, Graph, GraphSource
from ._base import MetricProblem
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

#: The builders import numpy only; their numba and scipy parts load when they run.
BUILDERS = {
    "cc": correlation_clustering,
    "sc": sparsest_cut,
    "mn": metric_nearness,
    "cd": cluster_deletion,
}


def build_problem(kind: str, data: GraphSource, **params: Any) -> MetricProblem:
    """Build the relaxation ``kind`` of a graph or dissimilarity matrix.

    Parameters
    ----------
    kind : {"cc", "sc", "mn", "cd"}
        Correlation clustering, sparsest cut, metric nearness, cluster deletion.
    data : Graph, Dissimilarity, path or graph object
        Anything else than a Graph or Dissimilarity is read first, with the default
        options, by :func:`metricopt.io.read_input`: a file or dataset name, a
        networkx or igraph graph, a scipy.sparse or numpy adjacency matrix, a pandas
        edge table; for ``"mn"`` a numpy array is a distance matrix (square or
        condensed). Call :func:`metricopt.read_graph` first for other read options.
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
    if not isinstance(data, (Graph, Dissimilarity)):
        from ..io import read_input

        data = read_input(data, kind)
    try:
        problem = builder(data, **params)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise InvalidParameterError(f"{kind}: {exc}") from None
        raise
    _announce_weight_use(kind, data, problem, params)
    return problem


def _announce_weight_use(kind, data, problem, params):
    """Say in one line how the input's weight column is used, when that is not obvious.

    A weighted or signed input whose weights the problem does not use (sparsest cut and
    cluster deletion use the unweighted graph; correlation clustering with Jaccard or
    unit weights), and correlation clustering that chose the signed problem because the
    file has negative weights, each give a :class:`~metricopt.exceptions.MetricOptWarning`.
    """
    import numpy as np

    weights = getattr(data, "weights", None)
    if not isinstance(data, Graph) or weights is None:
        return
    negative = int(np.count_nonzero(weights < 0))
    name = data.name
    if kind in ("sc", "cd"):
        what = PROBLEM_KINDS[kind].split(" (")[0]
        neg = f", {negative} of them negative," if negative else ""
        warnings.warn(f"{kind} ignores the weight column of {name} ({data.m} weights{neg} not "
                      f"used: {what} is defined on the unweighted graph)", MetricOptWarning,
                      stacklevel=3)
    elif kind == "cc":
        mode = problem.params.get("weights")
        if mode == "signed" and params.get("weights", "auto") == "auto":
            warnings.warn(f"{name} has {negative} negative weights: solving signed correlation "
                          f"clustering on its edges (--weights signed); --weights jaccard or "
                          f"unit ignore the weights", MetricOptWarning, stacklevel=3)
        elif mode != "signed":
            why = ("it has no negative weight, so it is not read as signed; "
                   if params.get("weights", "auto") == "auto" else "")
            warnings.warn(f"cc ignores the weight column of {name} ({why}{mode} weights of the "
                          f"unweighted graph; --weights signed uses the file's weights)",
                          MetricOptWarning, stacklevel=3)
