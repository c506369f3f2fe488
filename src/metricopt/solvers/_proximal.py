"""The proximal recentring's options, shared by both projection backends.

Both ``dykstra`` and ``project-forget`` can reach the LP of a complete-graph l1 problem
(``cc`` with its dense or support-sized layout, ``mn`` with p = 1) by recentring their QP at
the iterate now and then, keeping the duals (:func:`._regularised.recentre`): the proximal
point method on the LP at a fixed ``gamma`` (Rockafellar 1976), instead of growing ``gamma``.
This module resolves the option (how many passes or oracle calls between two recentrings),
checks it, chooses ``gamma`` (dykstra's grows once, near the LP: :func:`next_gamma`), and
sets up a run's stages; :mod:`._pf_passes` recentres within project-forget's passes.
``benchmarks/README.md`` ("Proximal recentring") has the measurements behind the defaults.
"""

from ..exceptions import InvalidParameterError

__all__ = ["DYKSTRA_GAMMA", "DYKSTRA_LATE_GAMMA", "LATE_GAP", "PF_GAMMA", "POLISH_ROWS",
           "DYKSTRA_PASSES", "PF_CALLS", "PF_PASSES", "REPAIR_VIOLATION", "resolve",
           "resolve_project_forget", "start", "next_gamma", "centred_values", "repaired"]

#: ``gamma`` of a proximal dykstra run unless given. Jaccard cc adjnoun, recentred every 5
#: passes, reached the LP (1e-12) in 550 passes at 10, was at 1.8e-3 after 1,000 at 0.3 and
#: 3.1e-3 at 100; on the graphs of 300-500 nodes 3 certifies sooner than 10 (Erdos991
#: 1e-4 in 60 s against 2.5e-4 at 120 s; "Proximal recentring" in benchmarks/README.md).
DYKSTRA_GAMMA = 3.0
#: ... and once a certified gap of at most :data:`LATE_GAP` is measured, this one (when
#: ``gamma`` is not given): near the LP the longer proximal steps converge sooner
#: (gap_tol 1e-6, one thread: celegans_metabolic 37 s at 10 throughout, 74 s at 3; the
#: proximal point method with growing steps converges superlinearly, Rockafellar 1976).
DYKSTRA_LATE_GAMMA = 10.0
#: The certified gap from which a run takes its late gamma (:func:`next_gamma`).
LATE_GAP = 1e-4
#: ``gamma`` of a proximal project-forget run unless given (polblogs, ca-GrQc, ca-HepTh).
#: Unlike dykstra's, it stays: Jaccard cc at gap_tol 1e-6, gamma 3 then 10 took Erdos991
#: 20 -> 53 s and celegans_metabolic 48 -> 63 s (celegansneural 120 -> 94 s); 10 then 30
#: Erdos991 22 -> 42 s ("Proximal recentring" in benchmarks/README.md).
PF_GAMMA = 10.0
#: The largest restricted LP a proximal run polishes: the recentred QPs reach the LP
#: themselves, faster than the polish of celegansneural's and USAir97's 70,000-80,000 rows
#: (30-90 s a round); lesmis' few thousand rows give its exact LP in a second.
POLISH_ROWS = 20_000
#: dykstra's passes between two recentrings by default: Jaccard cc, one thread,
#: celegansneural certified 1e-4 after 990 passes at 5 and 1,110 at 10.
DYKSTRA_PASSES = 5
#: project-forget's oracle calls between two recentrings by default (each call's passes
#: solve the recentred QP roughly). Jaccard cc at the defaults: polblogs certified 3.5e-4
#: at 300 s against 1.1e-2 with gamma growth; ca-GrQc optimal in 83 s against 123-197 s.
PF_CALLS = 1
#: ... and within a call's passes, the passes between two recentrings (as dykstra's).
PF_PASSES = 5
#: project-forget offers its iterate repaired to exact feasibility as the stage's point
#: when its violation is at most this many times ``tol``.
REPAIR_VIOLATION = 100.0


def resolve(problem, proximal, default, structures, gamma, gamma_growth, default_gamma,
            late_gamma=0.0):
    """``(proximal, gamma, gamma_growth, late)`` of a run: ``proximal`` (None: ``default``
    for the l1 problems of ``structures``, else 0; 0: off) checked; when on, ``gamma``
    (``default_gamma`` unless given) without growth, and ``late``, the gamma taken near the
    LP (:func:`next_gamma`): ``late_gamma`` unless ``gamma`` was given (0: none)."""
    applies = problem.objective == "l1" and problem.structure in structures
    proximal = (default if applies else 0) if proximal is None else int(proximal)
    if not proximal:
        return 0, gamma, gamma_growth, 0.0
    if not applies:
        raise InvalidParameterError(
            f"proximal recentring is implemented for the complete-graph l1 problems (cc, "
            f"mn with p = 1; {' or '.join(structures)}); this one is {problem.kind} "
            f"({problem.objective}, {problem.structure})")
    if gamma is not None:
        return proximal, gamma, 1.0, 0.0
    return proximal, default_gamma, 1.0, float(late_gamma)


def resolve_project_forget(problem, proximal, gamma, gamma_growth):
    """:func:`resolve` with project-forget's defaults (dense and support-sized layouts;
    ``gamma`` stays): ``(proximal, gamma, gamma_growth)``."""
    return resolve(problem, proximal, PF_CALLS, ("dense", "support"), gamma, gamma_growth,
                   PF_GAMMA)[:3]


def start(lp_stage, counters, proximal, resume, saved=None):
    """Record ``proximal`` in ``counters`` (refusing a checkpoint written with another
    count: ``saved``, default 0) and cap the polish of a proximal run's stages."""
    saved = int(saved or 0)
    if resume is not None and saved != proximal:
        raise InvalidParameterError(
            f"checkpoint {resume!r} was written with proximal={saved}; resume with the same "
            f"options")
    counters["proximal"] = proximal
    if proximal:
        lp_stage.max_rows = POLISH_ROWS


def next_gamma(gamma, late, outcome):
    """The stage outcome's ``next_gamma``, or ``late`` once a certified gap of at most
    :data:`LATE_GAP` is measured at a smaller ``gamma`` (the duals are then rescaled
    exactly, as for the growth of the gamma-growth stages)."""
    if gamma < late and outcome.lp_gap <= LATE_GAP:
        return late
    return outcome.next_gamma


def centred_values(st, bz, floor):
    """QP primal, dual and relative gap of a recentred QP (:func:`._regularised.
    centred_objectives`, ``bz = b'z``); the gap adds the last proximal step, so that it
    vanishes only at an LP solution, not at each recentred QP's own optimum."""
    from ._regularised import centred_objectives

    primal, dual, prox = centred_objectives(st, bz)
    return primal, dual, (abs(primal - dual) + prox) / max(abs(primal), abs(dual), floor,
                                                            1e-300)


def repaired(problem, violation, point, violation_of, tol, dense, stop=None):
    """The iterate ``point()`` repaired to exact feasibility (clipped, metric closure:
    :func:`._repair.repair_dense`, or :func:`._repair.repair_support` of a support-sized
    point) when its ``violation`` is at most :data:`REPAIR_VIOLATION` times ``tol``, for the
    stage to certify; else None. Recentred iterates hover above ``tol`` (ca-HepTh,
    project-forget: 1e-3 to 5e-3 while the QP gap is below 1e-7), as dykstra's do, whose
    stages end at the same repair."""
    from . import _repair

    if not violation <= REPAIR_VIOLATION * tol:
        return None
    x = _repair.repair_dense(problem, point()) if dense \
        else _repair.repair_support(point(), stop=stop)
    return x if x is not None and violation_of(x) <= tol else None
