"""Boxes known to contain an LP optimum, for Lagrangian certificates.

A Lagrangian lower bound ``-b'y + min {(c + A'y)'x : x in B}`` (V Thm 5, and the LP-dual
certificate of :mod:`metricopt.bounds.lp_dual`) is valid when the set ``B`` contains
some LP optimum; the smaller the box, the tighter the bound for an inexact ``y``.
"""

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["optimum_box"]


def optimum_box(problem):
    """A box ``[lo, hi]`` of the variables that contains an optimum of ``problem``'s LP.

    * correlation clustering and cluster deletion: ``[0, 1]`` (the problem's bounds;
      for correlation clustering V Thm 1 shows they are implied);
    * sparsest cut: ``[0, n/(n-1)]``, which holds every LP-feasible point (proof of
      V Cor 6);
    * l1 metric nearness: ``[lower, max(d)]`` (capped by a finite upper bound):
      clipping a metric (or a point of MET(G)) to an interval keeps it one, and when
      the targets lie in the interval it does not raise ``sum w |x - d|``.

    Parameters
    ----------
    problem : MetricProblem
        An LP (linear or l1 objective).

    Returns
    -------
    lo, hi : float
    """
    lower = float(problem.lower) if np.isfinite(problem.lower) else None
    upper = float(problem.upper) if np.isfinite(problem.upper) else None
    if problem.objective == "l2":
        raise InvalidParameterError("optimum_box is for LPs; metric nearness with p = 2 is a QP")
    if problem.kind == "sc":
        n = problem.n
        return 0.0, n / (n - 1.0)
    if problem.objective == "l1":
        d = np.asarray(problem.target, dtype=np.float64)
        lo = lower if lower is not None else float(d.min(initial=0.0))
        hi = upper if upper is not None else max(float(d.max(initial=0.0)), lo)
        if problem.kind == "cc" and upper is None:
            hi = max(hi, 1.0)
        if d.size and (float(d.min()) < lo or float(d.max()) > hi):
            raise InvalidParameterError("the targets lie outside the problem's bounds")
        return lo, hi
    if lower is None or upper is None:
        raise InvalidParameterError(
            f"no box is known to hold an optimum of this {problem.kind} problem")
    return lower, upper
