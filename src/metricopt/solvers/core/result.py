"""The one result path: a backend's answer made into the numbers a user reads.

Every backend returns its point and its certified bound (:func:`.driver.iterate` for the
iterative ones); :func:`complete` alone adds the objective, settles the bound
(:mod:`.settle`), computes the certified LP gap and ratio, decides whether the answer is
``optimal`` (violation within ``tol`` and certified gap within ``gap_tol``, nothing
else) and says what a run that stopped early missed, with its warning.
"""

import warnings

import numpy as np

from ...exceptions import ConvergenceWarning
from ...result import Status
from .settle import settle_bound
from .stage import GAP_FLOOR, lp_gap, objective_scale

__all__ = ["complete", "missed"]


def missed(violation, gap, tol, gap_tol):
    """What a run that stopped early missed, with figures (``""`` when nothing)."""
    parts = []
    if tol is not None and violation is not None and not violation <= tol:
        parts.append(f"violation {violation:.2e} > tol {tol:g}")
    if gap_tol is not None and gap is not None and gap != gap:
        parts.append("certified LP gap unknown (x is not feasible to tol)")
    elif gap_tol is not None and gap is not None and not gap <= gap_tol:
        parts.append(f"certified LP gap {gap:.2e} > gap_tol {gap_tol:g}")
    return f"; missed: {', '.join(parts)}" if parts else ""


def complete(problem, out, *, backend, tol=None, gap_tol=None, stacklevel=4):
    """Complete a backend's answer ``out`` (a dict, changed in place and returned).

    Parameters
    ----------
    problem : MetricProblem
    out : dict
        At least ``x`` (or ``fun``), ``status`` and ``message``; ``lower_bound`` and
        ``bound_details`` when the backend certified one, ``max_violation`` when it
        measured it.
    backend : str
        Its name, in the warning.
    tol, gap_tol : float or None
        The contract of an ``optimal`` answer (None: the backend has no such option).

    Returns
    -------
    dict
        ``out`` with ``fun`` (LP objective of ``x``; for ``mn`` with p = 2 the QP
        objective), ``lower_bound`` settled (:func:`.settle.settle_bound`; the change, if
        any, in ``bound_settled`` and ``bound_details["settled"]``), ``gap`` (certified
        LP gap, ``inf`` without a bound), ``lp_approx_ratio`` (``fun / lower_bound``, None
        unless the bound is positive), ``certificate_stopped`` when the certificate ended
        at the time limit's allowance, and the status held to the contract: an
        ``optimal`` that misses it becomes ``numerical`` with the figures; every other
        status but ``interrupted`` names what it missed and warns
        (:class:`~metricopt.exceptions.ConvergenceWarning`).
    """
    x = out.get("x")
    if x is not None:
        if out.get("max_violation") is None:
            out["max_violation"] = float(problem.max_violation(x))
        if out.get("fun") is None:
            out["fun"] = problem.objective_value(x)
    _settle(problem, out)
    if _repair_below_bound(problem, out, tol, gap_tol):
        _settle(problem, out)
    _hold_to_contract(out, tol, gap_tol)
    _meet_contract(out, tol, gap_tol)
    _unmeasured_gap(out, tol)
    status = out.get("status", Status.OPTIMAL)
    if status not in (Status.OPTIMAL, Status.INTERRUPTED):
        out["message"] = out.get("message", "") + missed(
            out.get("max_violation"), out.get("gap"), tol, gap_tol)
        warnings.warn(f"{backend}: {out['message']}", ConvergenceWarning,
                      stacklevel=stacklevel)
    return out


def _settle(problem, out):
    """The reported bound, gap and LP ratio: the bound settled by
    :func:`.settle.settle_bound` (raised to the objective's floor, lowered to ``fun``
    within round-off), then the certified gap and ``lp_approx_ratio`` of that bound."""
    fun, bound = out.get("fun"), out.get("lower_bound")
    details = out.get("bound_details")
    details = details if isinstance(details, dict) else {}
    if details.get("theorem5_stopped"):
        out["certificate_stopped"] = True  # at the time limit's allowance
    scale = objective_scale(problem)
    if bound is not None:
        settled, note = settle_bound(problem, fun, bound, scale)
        if note is not None:
            out["lower_bound"] = bound = settled
            out["bound_details"] = {**details, "settled": note}
            out["bound_settled"] = note
    if fun is None:
        return
    if "gap" not in out or bound is not None:
        out["gap"] = lp_gap(fun, bound, GAP_FLOOR * scale)
    out["lp_approx_ratio"] = (float(fun) / bound
                              if bound is not None and np.isfinite(bound) and bound > 0
                              else None)


#: A dense answer is repaired (:func:`.._repair.repair_dense`, O(n^3)) only up to this many
#: nodes: about a second.
REPAIR_MAX_NODES = 2000


def _repair_below_bound(problem, out, tol, gap_tol):
    """An ``optimal`` answer whose objective is below its certified bound by more than
    round-off (1e-9 relative) violates constraints by up to ``tol`` (sparsest cut's
    rescaled iterates, mostly): replace it by its metric repair (clipped to the bounds,
    shortest-path closure, sum rescaled), which is exactly feasible, so that its value is
    at least the bound, when the repaired point still meets the contract. True when
    ``out`` changed (``repaired_below_bound`` records the old value)."""
    x, fun, bound = out.get("x"), out.get("fun"), out.get("lower_bound")
    if out.get("status") != Status.OPTIMAL or x is None or fun is None or bound is None \
            or not np.isfinite(bound) or problem.structure != "dense" \
            or problem.n > REPAIR_MAX_NODES or problem.objective == "l2":
        return False
    if not fun < bound - 1e-9 * max(abs(bound), abs(fun)):
        return False
    from .._repair import repair_dense

    xr = repair_dense(problem, x)
    if xr is None:
        return False
    viol = float(problem.max_violation(xr))
    value = problem.objective_value(xr)
    if tol is not None and not viol <= tol:
        return False
    gap = lp_gap(value, bound, GAP_FLOOR * objective_scale(problem))
    if gap_tol is not None and not gap <= gap_tol:
        return False
    out["repaired_below_bound"] = float(fun)
    out.update(x=xr, fun=value, max_violation=viol)
    out["message"] = (f"{out.get('message', '')} (x repaired to exact feasibility: its value "
                      f"{fun:.10g} was below the certified bound {bound:.10g}; the repaired "
                      f"x's certified LP gap is {gap:.2e})")
    return True


def _unmeasured_gap(out, tol):
    """The certified LP gap compares the LP value of a point feasible to ``tol`` with a
    bound; for a point that violates more (a run stopped early, e.g. a lazy method's first
    rounds, whose value 0 may equal its bound 0) it was never measured: NaN (unknown),
    never a number that reads as closed. ``lp_gap_of_infeasible_x`` keeps the figure."""
    viol, gap = out.get("max_violation"), out.get("gap")
    if tol is None or viol is None or gap is None or gap != gap or viol <= tol * (1 + 1e-9) \
            or out.get("status") == Status.OPTIMAL:
        return
    out["lp_gap_of_infeasible_x"] = float(gap)
    out["gap"] = float("nan")


def _meets(out, tol, gap_tol):
    """Whether the answer's measured violation and certified gap are within the
    contract (False when either was not measured)."""
    viol, gap = out.get("max_violation"), out.get("gap")
    return (tol is not None and gap_tol is not None and viol is not None and gap is not None
            and viol <= tol * (1 + 1e-9) and gap <= gap_tol * (1 + 1e-9))


def _meet_contract(out, tol, gap_tol):
    """A run that stopped for another reason (a limit, a stall) with an answer that meets
    the contract is ``optimal``: the status is decided from the final numbers. An
    interrupted run keeps its status (the caller stops on it)."""
    status = out.get("status", Status.OPTIMAL)
    if status in (Status.OPTIMAL, Status.INTERRUPTED) or not _meets(out, tol, gap_tol):
        return
    out["status"] = Status.OPTIMAL
    out["message"] = (f"{out.get('message', '')}; the answer meets the contract: violation "
                      f"{out['max_violation']:.2e} <= tol {tol:g}, certified LP gap "
                      f"{max(out['gap'], 0.0):.2e} <= gap_tol {gap_tol:g}")


def _hold_to_contract(out, tol, gap_tol):
    """``optimal`` means ``max_violation <= tol`` and certified LP gap ``<= gap_tol``; an
    answer that says optimal without meeting them is reported as numerical trouble."""
    if out.get("status", Status.OPTIMAL) != Status.OPTIMAL:
        return
    viol, gap = out.get("max_violation"), out.get("gap")
    parts = []
    if tol is not None and viol is not None and not viol <= tol * (1 + 1e-9):
        parts.append(f"violation {viol:.3g} > tol {tol:g}")
    if gap_tol is not None and gap is not None and not gap <= gap_tol * (1 + 1e-9):
        parts.append(f"certified LP gap {gap:.3g} > gap_tol {gap_tol:g}")
    if parts:
        out["status"] = Status.NUMERICAL
        out["message"] = f"{out.get('message', '')} (not optimal: {', '.join(parts)})"
