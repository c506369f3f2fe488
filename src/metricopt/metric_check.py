"""Does a dissimilarity matrix satisfy the triangle inequality, and what is the nearest
metric when it does not?

:func:`check_metric` counts the violated triplets in O(n^3) time and O(n^2) memory (the
numba scan of :func:`metricopt.problems._triangles.violated_triangles`, which never stores
the triplets) and names the largest violations. :func:`repair_metric` solves the metric
nearness problem (``build_problem("mn", ...)`` and :func:`metricopt.solve`) and returns
the nearest metric with its distance to the input.

``scipy.spatial.distance.is_valid_dm`` checks symmetry and the zero diagonal only; this
module checks the triangle inequality ``d_ij <= d_ik + d_kj`` for every triplet.
"""

import math
import numbers

import numpy as np

from .exceptions import InvalidParameterError, MetricOptError
from .result import RichResult

__all__ = ["MetricCheck", "check_metric", "repair_metric", "DEFAULT_TOL"]

#: Default tolerance, relative to the largest dissimilarity.
DEFAULT_TOL = 1e-9


class MetricCheck(RichResult):
    """Outcome of :func:`check_metric`: a dict that also allows attribute access.

    Fields
    ------
    name : str
    n : int
        Number of points.
    n_triplets : int
        ``C(n, 3)``.
    is_metric : bool
        No triplet violates the triangle inequality by more than ``threshold``.
    violated_triplets : int
        Number of triplets ``{i, j, k}`` with ``d_ij - d_ik - d_kj > threshold`` for
        some labelling; with non-negative dissimilarities at most one of a triplet's
        three inequalities can be violated, so this also counts the violated
        inequalities.
    max_violation : float
        Largest ``d_ij - d_ik - d_kj`` over all triplets, 0 when none is positive.
    tol, threshold : float
        The relative tolerance and the absolute one it gives, ``tol * max(d)``.
    violations : list of dict
        The largest violations, one per long side ``(i, j)`` (its most violated
        detour ``k``), largest first: ``i, j, k`` (labels), ``d_ij``, ``d_ik``,
        ``d_kj`` and ``excess = d_ij - d_ik - d_kj``.
    """


def _check_tol(tol, caller):
    ok = isinstance(tol, numbers.Real) and not isinstance(tol, bool) and math.isfinite(tol)
    if not ok or tol < 0:
        raise InvalidParameterError(
            f"The 'tol' parameter of {caller} must be a float in the range [0, inf). "
            f"Got {tol!r} instead.")
    return float(tol)


def _check_top(top):
    if isinstance(top, bool) or not isinstance(top, numbers.Integral) or top < 0:
        raise InvalidParameterError(
            f"The 'top' parameter of check_metric must be an int in the range [0, inf). "
            f"Got {top!r} instead.")
    return int(top)


def _pairs_of(index, n):
    """Nodes ``(i, j)`` of packed pair indices (the order of ``triu_indices(n, 1)``)."""
    rows = np.arange(n, dtype=np.int64)
    starts = rows * n - rows * (rows + 1) // 2
    i = np.searchsorted(starts, index, side="right") - 1
    j = index - starts[i] + i + 1
    return i, j


def _as_dissimilarity(data):
    from .graph import Dissimilarity
    from .io import read_dissimilarity

    return data if isinstance(data, Dissimilarity) else read_dissimilarity(data)


def check_metric(data, *, tol=DEFAULT_TOL, top=10):
    """Check the triangle inequality ``d_ij <= d_ik + d_kj`` on every triplet.

    Parameters
    ----------
    data : Dissimilarity, str, os.PathLike or ndarray
        A dissimilarity matrix: as read by :func:`metricopt.io.read_dissimilarity`
        (``.npy`` or CSV file, square or condensed numpy array), which checks that it
        is square, finite, symmetric and non-negative.
    tol : float, default=1e-9
        Relative tolerance: a triplet counts as violated when its excess exceeds
        ``tol`` times the largest dissimilarity (round-off of computed distances is
        not a violation). 0 counts every positive excess.
    top : int, default=10
        How many of the largest violations to list.

    Returns
    -------
    MetricCheck

    Examples
    --------
    >>> import numpy as np
    >>> d = np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]])
    >>> result = check_metric(d)
    >>> result.is_metric, result.violated_triplets, result.violations[0]["excess"]
    (False, 1, 3.0)
    """
    from .problems._pairs import square_to_packed
    from .problems._triangles import violated_triangles

    tol = _check_tol(tol, "check_metric")
    top = _check_top(top)
    matrix = _as_dissimilarity(data)
    n = matrix.n
    x = square_to_packed(matrix.values)
    scale = float(x.max()) if x.size else 0.0
    threshold = tol * scale
    rows, excess, total = violated_triangles(x, n, threshold)
    order = np.argsort(-excess, kind="stable")[:top]
    listed = []
    if len(order):
        a, b = rows[order, 0], rows[order, 1]
        i, j = _pairs_of(a, n)
        bi, bj = _pairs_of(b, n)
        k = np.where((bi == i) | (bi == j), bj, bi)
        labels, values = matrix.labels, matrix.values
        for t in range(len(order)):
            it, jt, kt = int(i[t]), int(j[t]), int(k[t])
            listed.append({
                "i": labels[it], "j": labels[jt], "k": labels[kt],
                "d_ij": float(values[it, jt]), "d_ik": float(values[it, kt]),
                "d_kj": float(values[kt, jt]), "excess": float(excess[order[t]]),
            })
    worst = float(excess.max()) if excess.size else _largest_excess(x, n)
    return MetricCheck(
        name=matrix.name, n=n, n_triplets=n * (n - 1) * (n - 2) // 6,
        is_metric=total == 0, violated_triplets=int(total), max_violation=max(worst, 0.0),
        tol=tol, threshold=threshold, violations=listed,
    )


def _largest_excess(x, n):
    from .problems._triangles import max_triangle_violation

    return max_triangle_violation(x, n)


def repair_metric(data, *, p=2, method="auto", tol=DEFAULT_TOL, **solver_options):
    """The nearest metric to a dissimilarity matrix, by metric nearness.

    Solves ``min sum_{i<j} |x_ij - d_ij|^p`` over metrics ``x``
    (``build_problem("mn", data, p=p)`` and :func:`metricopt.solve`), then closes the
    solution under shortest paths (:func:`metricopt.solvers._repair.metric_closure`):
    the solver's ``x`` satisfies the triangle inequality up to its tolerance, its
    closure up to round-off, and the closure moves no entry by more than that
    tolerance allows. The distance is measured on the closed matrix.

    Parameters
    ----------
    data : Dissimilarity, str, os.PathLike or ndarray
        As for :func:`check_metric`.
    p : {1, 2}, default=2
        The norm of the distance: 1 (sum of absolute changes) or 2 (Euclidean).
    method : str, default="auto"
        The backend (:func:`metricopt.solve`).
    tol : float, default=1e-9
        Relative tolerance of the check of the result (as for :func:`check_metric`).
    **solver_options
        Passed to :func:`metricopt.solve`.

    Returns
    -------
    RichResult
        ``matrix`` (the repaired symmetric matrix, zero diagonal), ``labels``, ``p``,
        ``distance`` (``(sum_{i<j} |x_ij - d_ij|^p)^(1/p)``), ``objective`` (the sum
        itself), ``lower_bound`` (a certified lower bound on the optimal sum, when the
        backend gives one), ``method``, ``status_name``, ``message``, ``closure_change``
        (largest change made by the closure) and ``check`` (:func:`check_metric` of
        ``matrix``).

    Raises
    ------
    MetricOptError
        When the backend returns no solution (a limit reached before any iterate).
    """
    from .problems import build_problem
    from .problems._pairs import packed_to_square
    from .solvers import solve
    from .solvers._repair import metric_closure

    tol = _check_tol(tol, "repair_metric")
    matrix = _as_dissimilarity(data)
    problem = build_problem("mn", matrix, p=p)
    result = solve(problem, method, **solver_options)
    if result.get("x") is None:
        raise MetricOptError(f"{result['method']} returned no solution "
                                    f"({result['status_name']}): {result['message']}")
    x = np.maximum(np.asarray(result["x"], dtype=np.float64), 0.0)
    closed = metric_closure(x, matrix.n)
    objective = problem.objective_value(closed)
    repaired = packed_to_square(closed, matrix.n)
    return RichResult(
        matrix=repaired, labels=matrix.labels, p=p,
        distance=objective ** (1.0 / p), objective=objective,
        lower_bound=result.get("lower_bound"), method=result["method"],
        status_name=result["status_name"], message=result["message"],
        closure_change=float(np.max(x - closed)) if x.size else 0.0,
        check=check_metric(repaired, tol=tol, top=0),
    )
