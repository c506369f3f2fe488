"""The lower bound a result reports: every backend's certified bound, settled once.

A backend's bound ``LB`` is certified (``LB <= LP*``) but computed in floating point,
like the objective ``lp_value`` of its ``x``. Two adjustments keep the reported numbers
from contradicting each other, and each keeps the bound certified:

* **Raised to the objective's floor.** Where every feasible point provably scores at
  least ``floor`` (:func:`objective_floor`: non-negative weights, or non-negative costs
  over ``x >= lower``), ``max(LB, floor)`` is a lower bound too (the sparsest cut of a
  graph with several components: LP* = 0, certified as -7e-14).
* **Lowered to ``lp_value`` within round-off.** A bound above ``lp_value`` by at most
  :data:`BOUND_ROUNDOFF` relative (or a few units in the last place of the objective's
  scale, :data:`ULPS`) is that same number computed twice; it is reported equal to
  ``lp_value`` (gap 0). Lowering a lower bound keeps it one; it is never raised to
  ``lp_value``, and a bound clearly above it (an ``x`` that violates constraints) stays.
"""

import numpy as np

__all__ = ["BOUND_ROUNDOFF", "ULPS", "objective_floor", "settle_bound"]

#: A bound above ``lp_value`` by at most this much relative is round-off.
BOUND_ROUNDOFF = 1e-9
#: ... or by at most this many units in the last place of the objective's scale
#: (``sum |w|``): the absolute round-off of sums over the pairs near an optimum of 0.
ULPS = 64


def objective_floor(problem):
    """A value every feasible point's objective provably reaches, or None.

    ``constant`` for l1 / l2 objectives with non-negative weights; for a linear one with
    non-negative costs, ``constant + lower * sum(cost)`` (``x >= lower``).
    """
    constant = float(getattr(problem, "constant", 0.0) or 0.0)
    if problem.objective in ("l1", "l2"):
        w = problem.weights
        if w is not None and (np.size(w) == 0 or float(np.min(w)) >= 0.0):
            return constant
        return None
    cost = problem.cost
    if cost is None or not np.isfinite(problem.lower):
        return None
    if np.size(cost) and float(np.min(cost)) < 0.0:
        return None
    return constant + float(problem.lower) * float(np.sum(cost))


def settle_bound(problem, lp_value, lower_bound, scale):
    """The bound to report, and a note on what was changed (None when nothing was).

    Parameters
    ----------
    problem : MetricProblem
    lp_value : float or None
        The objective of the returned ``x``.
    lower_bound : float or None
        The backend's certified bound.
    scale : float
        The objective's scale (:func:`.stage.objective_scale`).

    Returns
    -------
    lower_bound : float or None
    note : str or None
    """
    if lower_bound is None or not np.isfinite(lower_bound):
        return lower_bound, None
    bound, notes = float(lower_bound), []
    floor = objective_floor(problem)
    if floor is not None and bound < floor:
        bound = floor
        notes.append(f"raised to {floor:g}, below which no feasible point scores")
    if lp_value is not None and np.isfinite(lp_value) and bound > lp_value:
        slack = BOUND_ROUNDOFF * max(abs(bound), abs(float(lp_value))) \
            + ULPS * np.finfo(np.float64).eps * scale
        if bound - float(lp_value) <= slack:
            bound = float(lp_value)
            notes.append("lowered to lp_value: above it by round-off")
    if not notes:
        return float(lower_bound), None
    return bound, f"certified {float(lower_bound):.17g}; " + "; ".join(notes)
