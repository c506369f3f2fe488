"""Parameter checks shared by the problem builders."""

import numbers

import numpy as np

from ..exceptions import InputError, InvalidParameterError, type_name
from ..graph import Dissimilarity, Graph

__all__ = ["check_graph", "check_problem", "check_real", "check_choice"]


def check_graph(graph, what):
    """Raise unless ``graph`` is a :class:`Graph` with at least two nodes and one edge."""
    if isinstance(graph, Dissimilarity):
        raise InputError(f"{what} needs a graph, not a dissimilarity matrix")
    if not isinstance(graph, Graph):
        raise InvalidParameterError(
            f"The 'graph' parameter of {what} must be a metricopt.Graph (metricopt.read_graph "
            f"and metricopt.build_problem read networkx, igraph, scipy.sparse, numpy and "
            f"pandas inputs). Got {type_name(graph)} instead."
        )
    if graph.n < 2 or graph.m < 1:
        raise InputError(f"{what} needs a graph with at least two nodes and one edge")
    return graph


def check_problem(problem, caller):
    """Raise unless ``problem`` is a :class:`~metricopt.problems.MetricProblem`.

    A graph, a matrix or a file name given in its place is named in the message, with
    the call that turns it into a problem.
    """
    from ._base import MetricProblem

    if isinstance(problem, MetricProblem):
        return problem
    hint = ""
    if isinstance(problem, (Graph, Dissimilarity, str)) or hasattr(problem, "__fspath__") \
            or type(problem).__module__.split(".")[0] in ("networkx", "igraph", "scipy",
                                                           "numpy", "pandas"):
        hint = "; build one first: metricopt.build_problem(kind, data)"
    raise InvalidParameterError(
        f"The 'problem' parameter of {caller} must be a metricopt MetricProblem (from "
        f"metricopt.build_problem){hint}. Got {type_name(problem)} instead.")


def check_real(value, name, caller, *, low=None, high=None, low_open=False, high_open=False):
    """Check a real parameter against an interval; sklearn-style message."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        interval = f"{left}{lo}, {hi}{right}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a float in the range {interval}. "
            f"Got {value!r} instead."
        )
    return float(value)


def check_choice(value, name, caller, choices):
    """Check a string option against a closed set."""
    if value not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be one of {opts}. Got {value!r} instead."
        )
    return value
