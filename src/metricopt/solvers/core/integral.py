"""A rounded clustering (or cut) as an answer of the LP: an integral feasible point.

The metric of any clustering, ``x_ij = 0`` inside a cluster and ``1`` across, satisfies
every metric row (it is a cut metric, a sum of them), the bounds ``0 <= x <= 1``, and,
when the clusters are cliques, the wedge rows of cluster deletion (an open wedge's
two ends are in different clusters, so one of its sides is cut); its LP objective is
the clustering's cost (V §3, [1]_). For sparsest cut the metric of a cut ``S``, scaled
to the sum row ``sum x = n``, is feasible and costs ``n cut(S) / (|S| |S'|)`` (Leighton
and Rao [2]_). So when a rounding of the current point costs no more than ``gap_tol``
above the certified bound, the LP's optimum is within ``gap_tol`` of that bound too, and
the rounded point *is* an answer that meets the contract: it violates nothing and its
certified gap is within ``gap_tol``.

That happens where the LP's integrality gap at the instance is below ``gap_tol``: Jaccard
cc on celegansneural with gap_tol 1e-2, where the LP (720.43) and a refined rounding
(722.07) are 0.2 % apart, while the polish's rounds chase triangle violations of 0.5-1
for minutes before the restricted LP's optimum is feasible. Nothing is assumed: the
point's violation is measured (:meth:`MetricProblem.max_violation`) and its cost is
the problem's own objective.

The rounding is :func:`metricopt.rounding.round_solution` with a fixed seed and
:data:`TRIES` tries per method (the same command, the same answer), and its local
refinement.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355.
.. [2] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and their
       use in designing approximation algorithms. J. ACM 46(6), 787-832.
"""

import numpy as np

__all__ = ["TRIES", "MAX_SUPPORT_PAIRS_FACTOR", "integral_point", "integral_candidate",
           "integral_words", "roundable"]

#: Tries per randomised rounding method (the final rounding of a run makes 20; this one
#: runs at every stage end and polish round, so it is kept cheaper).
TRIES = 5
#: A support-sized problem's clustering lists its joined pairs; it is not tried when
#: they would exceed this many times the problem's explicit pairs.
MAX_SUPPORT_PAIRS_FACTOR = 4


def roundable(problem):
    """Whether the problem's LP points can be rounded to an integral feasible point:
    ``cc`` (not the l2 metric nearness), ``cd`` and sparsest cut on all pairs."""
    if problem.objective == "l2":
        return False
    if problem.kind == "cc":
        return problem.structure in ("dense", "sparse", "support")
    if problem.kind == "cd":
        return problem.structure == "edges"
    if problem.kind == "sc":
        return problem.structure == "dense" and problem.sum_value is not None
    return False


def integral_point(problem, rounding):
    """The LP point of a rounding: the clustering's (or the scaled cut's) metric.

    Parameters
    ----------
    problem : MetricProblem
        One that :func:`roundable` accepts.
    rounding : Rounding
        From :func:`metricopt.rounding.round_solution` on ``problem``.

    Returns
    -------
    ndarray, SupportPoint or None
        In the problem's layout; None for a support-sized problem whose joined pairs
        are too many (:data:`MAX_SUPPORT_PAIRS_FACTOR`) or a cut with an empty side.
    """
    from ...problems._pairs import pair_arrays

    if problem.kind == "sc":
        in_cut = np.asarray(rounding["in_cut"], dtype=bool)
        k = int(in_cut.sum())
        if k == 0 or k == problem.n:
            return None
        i, j = pair_arrays(problem.n)
        split = (in_cut[i] != in_cut[j]).astype(np.float64)
        return split * (float(problem.sum_value) / (k * (problem.n - k)))
    labels = np.asarray(rounding["labels"], dtype=np.int64)
    if problem.structure == "support":
        return _support_point(problem, labels)
    i, j = problem.pair_nodes()
    return (labels[i] != labels[j]).astype(np.float64)


def _support_point(problem, labels):
    """A support point with every joined pair at 0 and the rest at the bulk value 1."""
    from ...problems.support import SupportPoint

    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    if float(np.sum(sizes * (sizes - 1) // 2)) > MAX_SUPPORT_PAIRS_FACTOR * max(
            len(problem.pairs), problem.n):
        return None
    starts = np.r_[0, np.cumsum(sizes)]
    blocks = []
    for c in np.flatnonzero(sizes > 1):
        members = np.sort(order[starts[c]:starts[c + 1]])
        a, b = np.triu_indices(members.size, 1)
        blocks.append(np.stack([members[a], members[b]], 1))
    pairs = np.concatenate(blocks) if blocks else np.empty((0, 2), dtype=np.int64)
    return SupportPoint(problem.n, pairs, np.zeros(len(pairs)), 1.0)


def integral_candidate(problem, x, lower_bound, *, tol, gap_tol, floor=0.0, time_limit=None):
    """The rounding of ``x`` as an answer, if it meets ``gap_tol`` against the bound.

    Parameters
    ----------
    problem : MetricProblem
    x : ndarray or SupportPoint
        A point of the LP's variables (a QP iterate, a restricted LP's optimum: it need
        not be feasible; values are clipped by the rounding's checks).
    lower_bound : float or None
        A certified lower bound on the LP optimum.
    tol, gap_tol : float
        The contract: violation and certified LP gap.
    floor : float
        The gap's denominator floor (:func:`.gap.lp_gap`).
    time_limit : float or None
        Seconds for the rounding (a run stopped by its time limit); None: all tries.

    Returns
    -------
    dict or None
        ``x`` (the integral point), ``value``, ``max_violation``, ``gap`` and
        ``rounding`` (the method and its number of clusters or cut size); None when the
        problem cannot be rounded, no bound is known, the rounding fails, or its point
        misses ``gap_tol`` or ``tol``.
    """
    from ...exceptions import MetricOptError
    from ...rounding import round_solution
    from .gap import lp_gap

    if lower_bound is None or not np.isfinite(lower_bound) or not roundable(problem):
        return None
    try:
        rounding = round_solution(problem, x, n_tries=TRIES, seed=0, time_limit=time_limit)
    except (MetricOptError, ValueError):  # a point the rounding's checks refuse
        return None
    point = integral_point(problem, rounding)
    if point is None:
        return None
    value = problem.objective_value(point)
    gap = lp_gap(value, lower_bound, floor)
    if not gap <= gap_tol:
        return None
    worst = float(problem.max_violation(point))
    if worst > tol:
        return None
    what = (f"{int(np.sum(rounding['in_cut']))} nodes cut off" if problem.kind == "sc"
            else f"{rounding['n_clusters']} clusters")
    return dict(x=point, value=float(value), max_violation=worst, gap=float(gap),
                rounding=dict(method=rounding["method"], what=what,
                              objective=float(rounding["objective"])))


def integral_words(candidate):
    """How the answer was made, for the run's message."""
    return (f" (x: a rounded {'cut' if 'cut off' in candidate['rounding']['what'] else 'clustering'}"
            f", {candidate['rounding']['what']}: an integral point of the LP)")
