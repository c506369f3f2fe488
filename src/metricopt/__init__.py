"""metricopt: metric-constrained LP/QP relaxations for graph clustering, at scale.

Read a graph, build a relaxation, solve it with one of several backends, round it into a
clustering or cut, and report a certified approximation ratio::

    >>> import metricopt
    >>> g = metricopt.read_graph("karate")
    >>> problem = metricopt.build_problem("cc", g)
    >>> result = metricopt.solve(problem, method="highs")
    >>> rounding = metricopt.round_solution(problem, result.x, seed=0)
    >>> bool(rounding.objective >= result.lower_bound)
    True

Public names are imported on first use, so ``import metricopt`` stays fast and does not
compile numba kernels or load native solver libraries until they are needed.
"""

import importlib

from . import datasets as _datasets  # noqa: F401  (registers dataset names with the readers)
from ._version import __version__

_LAZY = {
    "read_graph": "metricopt.io",
    "read_dissimilarity": "metricopt.io",
    "clusters_by_label": "metricopt.io",
    "to_networkx": "metricopt.io",
    "check_metric": "metricopt.metric_check",
    "repair_metric": "metricopt.metric_check",
    "build_problem": "metricopt.problems",
    "MetricProblem": "metricopt.problems",
    "solve": "metricopt.solvers",
    "available_solvers": "metricopt.solvers",
    "registered_solvers": "metricopt.solvers",
    "round_solution": "metricopt.rounding",
    "evaluate": "metricopt.rounding",
    "Graph": "metricopt.graph",
    "Dissimilarity": "metricopt.graph",
    "SolveResult": "metricopt.result",
    "Status": "metricopt.result",
    "CorrelationClustering": "metricopt.estimators",
    "ClusterDeletion": "metricopt.estimators",
    "SparsestCut": "metricopt.estimators",
    "plot_clusters": "metricopt.pictures",
}

__all__ = ["__version__", *_LAZY]


#: Subpackages reachable as attributes (``metricopt.pipeline.run``), imported on first use.
_SUBPACKAGES = ("pipeline", "io", "problems", "solvers", "rounding", "bounds", "datasets",
                "reporting", "batch", "plotting", "metric_check")


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"metricopt.{name}")
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'metricopt' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*__all__, *_SUBPACKAGES})
