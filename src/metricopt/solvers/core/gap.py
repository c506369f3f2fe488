"""The certified LP gap: ``(lp_value - lower_bound) / |lower_bound|``, with a floor.

Used by the stages (:mod:`.stage`), the polish (:mod:`.polish`) and the one result path
(:mod:`.result`).
"""

import numpy as np

__all__ = ["GAP_FLOOR", "objective_scale", "lp_gap"]

#: The gap's denominator is at least this times the objective's scale (the cost of the
#: trivial point, :func:`objective_scale`), so that an LP optimum of 0 certified by a
#: bound of -1e-13 counts as closed.
GAP_FLOOR = 1e-7


def objective_scale(problem):
    """``sum |w|`` (l1, l2) or ``sum |c|`` (linear): the objective's natural size."""
    coef = problem.weights if problem.objective in ("l1", "l2") else problem.cost
    total = float(np.sum(np.abs(coef))) if coef is not None else 0.0
    if getattr(problem, "bulk", None) is not None:  # the pairs a support problem does not list
        pairs = problem.pairs
        total += problem.bulk.total_weight(problem.n) - float(
            np.sum(problem.bulk.pair_weights(pairs[:, 0], pairs[:, 1])))
    return total


def lp_gap(lp_value, lower_bound, floor=0.0):
    """Certified relative LP gap ``(lp_value - lower_bound) / max(|lower_bound|, tiny)``,
    with ``tiny = max(floor, 1e-300)`` (``floor``: :data:`GAP_FLOOR` times
    :func:`objective_scale`).

    ``inf`` when there is no bound; may be negative when ``x`` is slightly infeasible.
    """
    if lower_bound is None or not np.isfinite(lower_bound) or not np.isfinite(lp_value):
        return float("inf")
    if lp_value == lower_bound:
        return 0.0
    return float((lp_value - lower_bound) / max(abs(lower_bound), floor, 1e-300))
