"""Boxes known to contain an LP optimum, for Lagrangian certificates.

A Lagrangian lower bound ``-b'y + min {(c + A'y)'x : x in B}`` (V Thm 5, and the LP-dual
certificate of :mod:`metricopt.bounds.lp_dual`) is valid when the set ``B`` contains
some LP optimum; the smaller the box, the tighter the bound for an inexact ``y``.
"""

import numpy as np

__all__ = ["optimum_box"]


def optimum_box(problem, *, with_reason=False):
    """An interval ``[lo, hi]`` of every variable that holds an optimum of the LP.

    A side is infinite when no argument below applies (a Lagrangian bound is then
    finite only where the reduced cost has the right sign).

    * The problem's own finite bounds: every feasible point satisfies them.
    * ``lo = 0`` for a dense problem without a lower bound: its triangle rows imply
      ``x >= 0`` (add ``x_ij <= x_ik + x_kj`` and ``x_ik <= x_ij + x_jk``).
    * A sum row ``sum x = S`` over all pairs of a dense problem (sparsest cut):
      ``x_ij <= S / (n - 1)`` for every feasible ``x >= 0``, since
      ``S >= x_ij + sum_{k != i, j} (x_ik + x_kj) >= (n - 1) x_ij`` by the triangle
      inequalities (the proof of V Cor 6).
    * l1 objectives with nonnegative weights (metric nearness, p = 1): replacing ``x``
      by ``min(x, M)`` with ``M >= max(d, lo, 0)`` keeps a metric, or a point of MET(G),
      one and raises no term ``w |x - d|`` (V Thm 1 for correlation clustering), so
      ``hi = max(max d, lo, 0)``.

    Parameters
    ----------
    problem : MetricProblem
    with_reason : bool, default=False
        Also return the arguments used, as text.

    Returns
    -------
    lo, hi : float
    reason : str
        Only with ``with_reason``.
    """
    lo, hi = float(problem.lower), float(problem.upper)
    reasons = []
    if np.isfinite(lo):
        reasons.append("lower bound of the problem")
    elif problem.structure == "dense" and problem.n >= 3:
        lo = 0.0
        reasons.append("x >= 0 implied by the triangle rows")
    if np.isfinite(hi):
        reasons.append("upper bound of the problem")
    elif problem.sum_value is not None and problem.structure == "dense" and lo >= 0:
        hi = float(problem.sum_value) / (problem.n - 1)
        reasons.append("x <= S/(n-1) from the sum row and the triangle rows (V Cor 6)")
    elif (problem.objective == "l1" and problem.structure in ("dense", "sparse") and lo >= 0
          and np.all(np.asarray(problem.weights) >= 0)):
        hi = max(float(np.max(problem.target, initial=0.0)), lo, 0.0)
        reasons.append("x <= max d by clipping (l1 objective)")
    return (lo, hi, "; ".join(reasons)) if with_reason else (lo, hi)
