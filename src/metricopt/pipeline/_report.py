"""The ``report.json`` of one run, built from what the run produced.

The fields and their order are the schema of :mod:`metricopt.io.reports`
(:data:`~metricopt.io.reports.REPORT_FIELDS`), next to the code that writes and reads
the file; the ratios follow :mod:`metricopt.pipeline._common`.
"""

import importlib.metadata
import platform
import warnings
from datetime import datetime, timezone

import numpy as np

from ..exceptions import MetricOptWarning
from ..result import COMMON_FIELDS
from ._common import RATIO_ROUNDOFF, WARN_ROUNDOFF, _graph_section, _ratio, bound_exceeds, objective_scores

_VERSIONED = ("numpy", "scipy", "numba", "highspy", "click")


def _build_report(outcome, source, read_options, solver, caught, command, round_opts):
    result, rounded = outcome.result, outcome.rounding
    lp_value = result.get("fun")
    lower_bound = result.get("lower_bound")
    if lower_bound is None and solver.exact and result.get("success"):
        lower_bound = lp_value
    lp_ratio = result.get("lp_approx_ratio")
    if lp_ratio is None:
        exact_opt = solver.exact and result.get("success") and lower_bound == lp_value
        lp_ratio = 1.0 if exact_opt else _ratio(lp_value, lower_bound)
        if lp_ratio is None and bound_exceeds(lp_value, lower_bound):
            # an x that violates constraints can have a value below the LP optimum
            lp_ratio = float(lp_value) / float(lower_bound)
    elif 1.0 - RATIO_ROUNDOFF <= lp_ratio < 1.0:
        lp_ratio = 1.0
    below = _lp_value_below_bound(lp_value, lower_bound, result.get("max_violation"))
    if below is not None:
        warnings.warn(below, MetricOptWarning, stacklevel=2)
    rounded_objective = None if rounded is None else rounded.get("objective")
    editing = _editing_section(outcome.editing, lower_bound)
    ratio_bound = lower_bound if editing is None or editing["bound_source"] == "lp" \
        else editing["bound"]
    if bound_exceeds(rounded_objective, ratio_bound):
        warnings.warn(f"the rounded objective {rounded_objective:.10g} lies below the lower "
                      f"bound {ratio_bound:.10g}; no ratio is certified", MetricOptWarning,
                      stacklevel=2)
    return {
        "metricopt_version": _package_version(),
        "versions": _versions(),
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": list(command) if command is not None else None,
        "graph": _graph_section(outcome.data, source, read_options),
        "problem": _problem_section(outcome.problem),
        "method": result.get("method"),
        "options": result.get("options", {}),
        "auto_reason": result.get("auto_reason"),
        "status": result.get("status"),
        "status_name": result.get("status_name"),
        "success": bool(result.get("success")),
        "message": result.get("message"),
        "lp_value": lp_value,
        "lower_bound": lower_bound,
        "rounded_objective": rounded_objective,
        "approximation_ratio": _ratio(rounded_objective, ratio_bound),
        "lp_approx_ratio": lp_ratio,
        "scores": objective_scores(outcome.problem, rounded_objective, ratio_bound),
        "editing": editing,
        "gap": result.get("gap"),
        "max_violation": result.get("max_violation"),
        "iterations": result.get("nit"),
        "solve_seconds": result.get("elapsed"),
        "compile_seconds": result.get("compile_seconds"),
        "total_seconds": None,
        "peak_memory_bytes": _peak_memory_bytes(),
        "rounding": _rounding_section(rounded, round_opts, ratio_bound, editing),
        "solver_extras": _solver_extras(result),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]
        + ([] if below is None else [f"{MetricOptWarning.__name__}: {below}"]),
        "files": {},
    }


def _editing_section(editing, lower_bound):
    """The report's ``editing`` field: the step's numbers and ``bound_source``, the bound
    the certified ratio uses (``"editing"`` when it is the larger, else ``"lp"``); None for
    a run without ``relaxation="editing"``."""
    if editing is None:
        return None
    better = lower_bound is None or not np.isfinite(float(lower_bound)) \
        or editing["bound"] > float(lower_bound)
    return {**editing, "bound_source": "editing" if better else "lp"}


def _lp_value_below_bound(lp_value, lower_bound, max_violation):
    """Why ``lp_value`` lies below ``lower_bound`` by more than :data:`WARN_ROUNDOFF`
    relative, or None when it does not.

    The bound holds for every feasible point; ``x`` may violate constraints by up to the
    tolerance, and then its value can be slightly below the LP optimum (or, with no
    violation, below by round-off). The report says so next to the numbers.
    """
    if lp_value is None or lower_bound is None:
        return None
    lp_value, lower_bound = float(lp_value), float(lower_bound)
    if not (np.isfinite(lp_value) and np.isfinite(lower_bound)) or lp_value >= lower_bound:
        return None
    relative = (lower_bound - lp_value) / max(abs(lower_bound), 1e-300)
    if relative <= WARN_ROUNDOFF:
        return None
    viol = None if max_violation is None else float(max_violation)
    why = (f"the returned x violates constraints by up to {viol:.3g}, and such a point can "
           f"score below the LP optimum; every feasible point scores at least the bound"
           if viol is not None and viol > 0.0 else "round-off in the objective's sum")
    return (f"lp_value {lp_value:.10g} lies below the certified lower bound "
            f"{lower_bound:.10g} (relative {relative:.2g}): {why}")


def _rounding_section(rounded, requested, lower_bound, editing=None):
    from ..rounding.refine import refine_section

    if rounded is None:
        return None
    per_method = rounded.get("per_method")
    refined = refine_section(rounded)
    if editing is not None and editing.get("search") is not None:
        # the local search's answer; the editing search's, when cheaper, is the run's
        refined["refined_objective"] = editing["search"]["objective_before"]
    return {
        "method": rounded.get("method"),
        "requested_method": requested["method"],
        "n_tries": rounded.get("n_tries", requested["n_tries"]),
        "seed": rounded.get("seed", requested["seed"]),
        "n_clusters": rounded.get("n_clusters"),
        "time_limit": requested.get("time_limit"),
        "tries_run": rounded.get("tries_run"),
        "seconds": rounded.get("elapsed"),
        "per_method": per_method,
        "per_method_ratio": None if per_method is None else {
            name: _ratio(value, lower_bound) for name, value in per_method.items()},
        **refined,
    }


def _problem_section(problem):
    return {
        "kind": problem.kind,
        "structure": problem.structure,
        "objective": problem.objective,
        "n_variables": problem.n_variables,
        "n_constraints": problem.n_constraints,
        "params": dict(problem.params),
    }


def _solver_extras(result):
    scalar = (str, bool, int, float, np.integer, np.floating, np.bool_, type(None))
    return {k: v for k, v in result.items() if k not in COMMON_FIELDS and isinstance(v, scalar)}


def _versions():
    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _package_version():
    try:
        return importlib.metadata.version("metricopt")
    except importlib.metadata.PackageNotFoundError:
        from .._version import __version__

        return __version__


def _peak_memory_bytes():
    """Peak resident memory of this process (``ru_maxrss``), or None where unknown."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if platform.system() == "Darwin" else int(peak) * 1024
