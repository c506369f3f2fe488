"""What every job of the pipeline shares: certified ratios, scores, parameters, sections.

``approximation_ratio = rounded_objective / lower_bound`` is certified: the optimum lies
between ``lower_bound`` and ``rounded_objective``. ``lp_approx_ratio = lp_value /
lower_bound`` says how far the returned relaxation value can be from the LP optimum (1.0
for an exact backend that reached optimality). Every objective is non-negative, so when
the numerator is 0 the ratio is 1.0 (the answer is optimal), unless the bound lies clearly
above it (then, as below, no ratio); when the lower bound is 0 or
negative and the numerator is positive, or either value is missing, the ratio is null. A
ratio below 1 by round-off (relative 1e-9) is 1.0; a numerator clearly below the bound
means the bound is not valid for it: the ratio is null and a warning says so (except
``lp_approx_ratio``, whose ``lp_value`` of a slightly infeasible ``x`` can lie below the
LP optimum: it keeps the measured value).

Objectives with a constant part (LambdaCC with degrees, modularity) are solved, bounded
and rounded in their non-negative correlation-clustering form (see
:mod:`metricopt.problems.resolution`), so the ratio keeps its meaning; ``scores`` maps
the values into the problem's other units, where a bound may be an upper bound (the
modularity of every clustering is at most ``modularity_upper_bound``).
"""

import inspect
from pathlib import Path

import numpy as np

__all__ = ["RATIO_ROUNDOFF", "WARN_ROUNDOFF", "bound_exceeds", "objective_scores", "problem_parameters"]


#: A ratio below 1 by at most this relative amount is round-off of an optimal answer
#: (objective and bound equal up to floating point) and is reported as 1.
RATIO_ROUNDOFF = 1e-9
#: ``lp_value`` below the bound by at most this much relative is not warned about (the
#: summary's LP value row still says so): ``x`` within ``tol`` of feasibility, or
#: round-off, can score that little below the LP optimum.
WARN_ROUNDOFF = 1e-7


def _ratio(numerator, lower_bound):
    """Certified ratio ``numerator / lower_bound``; see the module docstring.

    A ratio below 1 by round-off (:data:`RATIO_ROUNDOFF`) is 1. A numerator clearly below
    the bound means the bound is not a lower bound of this objective: no ratio is
    certified (``None``), and :func:`bound_exceeds` says so.
    """
    if numerator is None or lower_bound is None or bound_exceeds(numerator, lower_bound):
        return None
    numerator, lower_bound = float(numerator), float(lower_bound)
    if not (np.isfinite(numerator) and np.isfinite(lower_bound)):
        return None
    if numerator == 0.0:
        return 1.0
    if lower_bound > 0.0:
        ratio = numerator / lower_bound
        if ratio < 1.0:
            return 1.0 if ratio >= 1.0 - RATIO_ROUNDOFF else None
        return ratio
    return None


def bound_exceeds(numerator, lower_bound):
    """True when ``lower_bound`` lies clearly above ``numerator`` (it cannot be a bound)."""
    if numerator is None or lower_bound is None:
        return False
    numerator, lower_bound = float(numerator), float(lower_bound)
    if not (np.isfinite(numerator) and np.isfinite(lower_bound)):
        return False
    return numerator < lower_bound - RATIO_ROUNDOFF * abs(lower_bound)


def objective_scores(problem, objective=None, lower_bound=None):
    """An objective value and a lower bound in the problem's other units.

    Parameters
    ----------
    problem : MetricProblem
        Its ``units`` (``name -> (scale, offset)``) define the other units.
    objective : float or None
        The objective of a clustering.
    lower_bound : float or None
        A certified lower bound on the objective.

    Returns
    -------
    dict or None
        ``name`` (the clustering's value) and ``name_lower_bound`` or, for a negative
        scale, ``name_upper_bound`` (valid for every clustering), for each unit given a
        finite value; ``None`` when the problem has no other units.
    """
    units = getattr(problem, "units", None) or {}
    if not units:
        return None
    out = {}
    for name, (scale, offset) in units.items():
        if objective is not None and np.isfinite(float(objective)):
            out[name] = scale * float(objective) + offset
        if lower_bound is not None and np.isfinite(float(lower_bound)):
            side = "lower" if scale > 0 else "upper"
            out[f"{name}_{side}_bound"] = scale * float(lower_bound) + offset
    return out


def problem_parameters(kind):
    """Names of the keyword parameters the builder of ``kind`` accepts.

    Parameters
    ----------
    kind : {"cc", "sc", "mn", "cd"}

    Returns
    -------
    set of str
    """
    from ..problems import BUILDERS

    sig = inspect.signature(BUILDERS[kind])
    return {name for name, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


def _source_text(source, data):
    """How the report names the input: the path or dataset name, or for an object the
    kind the reader recorded (``"networkx graph"``)."""
    if isinstance(source, (str, Path)) or hasattr(source, "__fspath__"):
        return str(source)
    return str((data.summary or {}).get("path", type(source).__name__))


def _graph_section(data, source, read_options):
    return {
        "name": data.name,
        "source": _source_text(source, data),
        "n": int(data.n),
        "m": int(data.m) if hasattr(data, "m") else None,
        "read_options": read_options,
        "summary": dict(data.summary),
    }
