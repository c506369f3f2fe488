"""The one iterative driver: a backend's steps inside the shared loop and stages.

An iterative backend is a :class:`Strategy`: it owns its state arrays and kernels and
knows how to take one iteration's measurement (:meth:`Strategy.measure`), move on
(:meth:`Strategy.advance`, :meth:`Strategy.after`), certify its iterate and name its
active constraints. :func:`iterate` runs it: the iteration and time limits, Ctrl-C,
records, progress, checkpoints (:class:`.loop.IterationLoop`), and the stages of
:mod:`.stage` (QP stage, certificate, LP polish, ``gamma`` growth) decided here once,
so that every backend reaches the LP by the same rules.

One iteration::

    m = strategy.measure(loop)        # a pass (dykstra), an oracle call (project-forget)
    outcome = step_stage(...)         # certify / polish / grow gamma when the stage is done
    strategy.advance(m, outcome)      # the projections that follow the measurement
    loop.record(strategy.record(...))
    stop when optimal, or when strategy.after(...) says so, or at a limit

The run's answer (:meth:`Strategy.answer`) is a plain dict of the iterate's numbers; the
objective, the certified gap and ratio, the status's wording and the warnings are added
once, by :func:`.result.complete`.
"""

import dataclasses
import time

import numpy as np

from ...result import Status
from .loop import IterationLoop, StepAbandoned, finish_allowance
from .stage import FLOOR_GROWTH_STAGES, POLISH_QP_GAP

__all__ = ["Measure", "Candidate", "Outcome", "Answer", "Strategy", "ProgressWatch",
           "iterate", "STALL_CHECKS", "STALL_FACTOR"]

#: A QP stage has stalled when this many full checks in a row improved neither its
#: violation nor its QP gap by :data:`STALL_FACTOR` (counted in checks, never in seconds).
STALL_CHECKS = 8
#: The improvement that counts as progress: a violation or QP gap at most this fraction
#: of the value at the last progress.
STALL_FACTOR = 0.5


@dataclasses.dataclass
class Measure:
    """What an iteration's first step measured.

    Attributes
    ----------
    primal, dual, qp_gap : float
        The QP's objectives at the iterate and its relative gap.
    violation : float
        The largest violation: exact when ``full``, else an estimate.
    full : bool
        ``violation`` was measured exactly (a full check): the stage may end here.
    warm : bool
        A warm-up stage of a continuation: no stopping test.
    numerical : str or None
        Set when the iterate is no longer finite (the run stops with it).
    """

    primal: float = np.nan
    dual: float = np.nan
    qp_gap: float = np.nan
    violation: float = np.inf
    full: bool = False
    warm: bool = False
    numerical: str = None


@dataclasses.dataclass
class Candidate:
    """A point derived from the iterate that ends the QP stage (repaired, rounded); ``how``
    for the message, ``fields`` for the result."""

    x: np.ndarray
    how: str
    fields: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Outcome:
    """What the stages decided in an iteration.

    ``done``: the LP is reached at ``x``; ``next_gamma``: the QP stage ended short of the
    LP gap and the next one has this regularisation; ``lp_gap``: the certified gap of
    the stage's point, or of the point a stall or a floor check made feasible from the
    iterate (nan when none was measured); ``violation``: of the iteration's
    record (of ``x`` when done); ``how``: how ``x`` was obtained, for the message.
    """

    violation: float
    done: bool = False
    next_gamma: float = None
    lp_gap: float = np.nan
    x: np.ndarray = None
    how: str = ""
    candidate: Candidate = None


@dataclasses.dataclass
class Answer:
    """A finished run's point and the backend's own result fields.

    ``certify(until)``: the final certificate of a run that did not end optimal (None:
    none can be computed); ``suffix``: said after the loop's message; ``status`` and
    ``message``: a finishing stage's, which replace the loop's (None: the loop's).
    """

    x: np.ndarray
    violation: float
    fields: dict
    certify: object = None
    suffix: str = ""
    status: int = None
    message: str = None


class Strategy:
    """One iterative backend inside :func:`iterate` (every method is a hook).

    Attributes
    ----------
    name : str
        The backend, for messages and warnings.
    unit : str
        What one iteration is ("passes", "oracle calls", "rounds").
    stages : bool
        Whether the LP stages run inside the loop (False: the backend finishes after it).
    early_polish : bool
        Try the polish as soon as the QP gap is below :data:`.stage.POLISH_QP_GAP` at a
        full check, before the stage converges.
    floor_checks : int or None
        Full checks between two measurements of a stage's certified gap
        (:meth:`.stage.LPStage.at_floor`; None: never).
    problem : MetricProblem
        Set by every strategy.
    """

    name = "?"
    unit = "iterations"
    stages = True
    early_polish = False
    floor_checks = None

    @property
    def gamma(self):
        """The current regularisation."""
        raise NotImplementedError

    def measure(self, loop):  # pragma: no cover - interface
        """Take the iteration's first step; a :class:`Measure`, or None when a read-only
        step gave up (time limit, Ctrl-C): the iteration is then dropped."""
        raise NotImplementedError

    def candidate(self, m):
        """A :class:`Candidate` ending the stage when the QP gap holds but the iterate
        still violates by more than ``tol``, or None."""
        return None

    def stage_x(self):
        """The iterate's ``x`` in problem order (a copy), offered to the stage."""
        raise NotImplementedError

    def certify(self, m, deadline):
        """``(lower_bound, details)`` of the current iterate (:func:`metricopt.bounds.certify`)."""
        raise NotImplementedError

    def active_rows(self):
        """The constraints holding a dual (:class:`..core.polish.ActiveRows`)."""
        raise NotImplementedError

    def violation(self, x):
        """The exact largest violation of a point in problem order (a strategy with a
        faster exact scan of its own overrides it)."""
        return float(self.problem.max_violation(x))

    def rescale(self, gamma):
        """Move the iterate to the QP with regularisation ``gamma`` (exactly)."""
        raise NotImplementedError

    def advance(self, m, outcome, loop):
        """The rest of the iteration after the stage decision; False when the iteration
        changed nothing and is dropped (the run then ends at the time limit)."""
        return True

    def record(self, m, outcome, loop):
        """The iteration's record (a dict; iteration and seconds first)."""
        raise NotImplementedError

    def after(self, m, outcome, loop):
        """Between the record and the limits: ``(status, message)`` to stop, or None."""
        return None

    def memory_stop(self, max_memory):
        """A message when the state outgrew ``max_memory``, else None."""
        return None

    def between(self, m, loop):
        """The last step of an iteration that goes on (an extrapolation)."""

    def save(self):
        """Write the checkpoint."""
        raise NotImplementedError

    def answer(self, status, loop, lp_stage, final):
        """The run's :class:`Answer`."""
        raise NotImplementedError

    def late_fields(self):
        """Result fields read after the final certificate (the peak memory)."""
        return {}

    def close(self):
        """Release what the strategy holds open (a cluster's client)."""


class ProgressWatch:
    """Whether a QP stage's measured progress has stalled.

    At every full check the violation and the QP gap are compared with their values at
    the last progress; a check where either is at most :data:`STALL_FACTOR` of it is
    progress, unless that value already met its target (``tol`` for the violation,
    ``gap_tol`` for the QP gap): a QP gap that keeps halving far below ``gap_tol`` does
    not bring the stage's end nearer while its violation hovers. After
    :data:`STALL_CHECKS` checks in a row without progress the stage has stalled: the QP
    will not reach ``tol`` and ``gap_tol`` soon (a violation that hovers at ``tol`` after
    a ``gamma`` growth, or stops at 2e-7 when ``tol`` is 1e-8), and the polish, which
    needs only the active rows, is tried. A new ``gamma`` starts afresh. Same iterates,
    same decision: the watch counts checks, never seconds.

    Jaccard cc on ca-GrQc (the support-sized layout, default tolerances): the gamma = 1
    stage's violation hovers at 4e-4 to 8e-4 from oracle call 18 while its QP gap falls
    from 1.6e-7 to 1.1e-8, halving every few calls; counted as progress, it held the
    stage until call 45 (``benchmarks/README.md``, "A QP gap below gap_tol is not
    progress").
    """

    def __init__(self, checks=STALL_CHECKS, factor=STALL_FACTOR, tol=0.0, gap_tol=0.0):
        self.checks, self.factor = int(checks), float(factor)
        self.tol, self.gap_tol = float(tol), float(gap_tol)
        self.gamma = None
        self.count = 0
        self.violation = self.qp_gap = np.inf
        #: full checks of the stage, and its last certified gap measured by
        #: :meth:`.stage.LPStage.at_floor` (None: none yet)
        self.full_checks, self.floor_gap = 0, None

    def state(self):
        """The watch's state for a checkpoint's header (JSON numbers; None for inf)."""
        def num(v):
            return None if v is None or not np.isfinite(v) else float(v)
        return dict(gamma=num(self.gamma), count=int(self.count),
                    violation=num(self.violation), qp_gap=num(self.qp_gap),
                    full_checks=int(self.full_checks), floor_gap=num(self.floor_gap))

    def restore(self, state, where="the checkpoint"):
        """Continue from :meth:`state` (None: a fresh watch), so that a resumed run stalls
        where the uninterrupted one does; refuse a malformed one."""
        if state is None:
            return
        from ...exceptions import InputError

        def num(key, count=False):
            v = state.get(key) if isinstance(state, dict) else "missing"
            ok = v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)
                               and v == v and (not count or (int(v) == v and v >= 0)))
            if not ok:
                raise InputError(f"cannot resume from {where}: its header field "
                                 f"'stall_watch' has {key}={v!r}")
            return v
        gamma, count = num("gamma"), num("count", count=True)
        violation, qp_gap = num("violation"), num("qp_gap")
        # absent from the checkpoints of earlier versions: counted afresh
        full_checks = num("full_checks", count=True) if "full_checks" in state else 0
        floor_gap = num("floor_gap") if "floor_gap" in state else None
        self.gamma = gamma
        self.count = int(count or 0)
        self.full_checks, self.floor_gap = int(full_checks or 0), floor_gap
        self.violation = np.inf if violation is None else float(violation)
        self.qp_gap = np.inf if qp_gap is None else float(qp_gap)

    def floor_due(self, every):
        """Whether the stage's certified gap is to be measured at this full check (every
        ``every`` full checks of a stage; None: never)."""
        return every is not None and self.full_checks > 0 and self.full_checks % every == 0

    def go_on(self, m):
        """Count the stage's progress afresh from the measure ``m`` (a stall whose
        certified gap still shrinks: :meth:`.stage.LPStage.after_stall`)."""
        self.violation, self.qp_gap, self.count = m.violation, m.qp_gap, 0

    def stalled(self, gamma, m):
        """Take the measure ``m`` of a stage with regularisation ``gamma``; True once it
        has stalled."""
        if gamma != self.gamma:
            self.gamma, self.count = gamma, 0
            self.violation = self.qp_gap = np.inf
            self.full_checks, self.floor_gap = 0, None
        if not m.full:
            return False
        self.full_checks += 1
        if (self.violation > self.tol and m.violation <= self.factor * self.violation) or \
                (self.qp_gap > self.gap_tol and m.qp_gap <= self.factor * self.qp_gap):
            self.violation, self.qp_gap, self.count = m.violation, m.qp_gap, 0
            return False
        self.count += 1
        return self.count >= self.checks


def step_stage(strategy, lp_stage, problem, m, *, tol, gap_tol, deadline, final, watch=None):
    """The stage decision of one iteration (see the module docstring of :mod:`.stage`).

    The QP stage has converged when a full check finds the iterate within ``tol`` and
    the QP gap within ``gap_tol``, or when the strategy derives a point that is
    (:meth:`Strategy.candidate`); then :meth:`.stage.LPStage.finish` certifies it, polishes
    or grows ``gamma``. The polish is tried before that when the stage's progress has
    stalled (``watch``, :class:`ProgressWatch`), whatever ``tol`` and ``gap_tol`` are (a
    stage below :data:`.stage.POLISH_GAMMA` first grows ``gamma``), and,
    for strategies with ``early_polish``, as soon as the QP gap is below
    :data:`.stage.POLISH_QP_GAP` when its restricted LP is small
    (:meth:`.stage.LPStage.wants_early_polish`).
    """
    out = Outcome(violation=m.violation)
    lp_stage.measured_gap = None
    stage_done = m.full and m.violation <= tol and m.qp_gap <= gap_tol
    if m.full and not stage_done and m.qp_gap <= gap_tol:
        out.candidate = strategy.candidate(m)
        stage_done = out.candidate is not None
    gamma = strategy.gamma
    x_stage = None
    stalled = watch is not None and watch.stalled(gamma, m)
    if m.full and not stage_done and lp_stage.may_polish(gamma) and (
            stalled or (m.qp_gap <= POLISH_QP_GAP and strategy.early_polish
                        and lp_stage.wants_early_polish(gamma))):
        # the active rows are known long before the QP converges; a stalled stage of a
        # small gamma first grows it (its active rows are far from the LP's), a larger
        # one when its measured gap predicts that growth closes the gap
        measure = (strategy.stage_x, m.violation, lambda: strategy.certify(m, final),
                   strategy.active_rows)
        out.next_gamma = lp_stage.grow_before_polish(gamma, *measure) if stalled else None
        after = None
        if stalled and out.next_gamma is None:
            after = lp_stage.after_stall(gamma, *measure)
            if after == "continue":
                watch.go_on(m)
            elif after == "met":
                out.done = True
            elif after is not None:
                out.next_gamma = after
        if out.next_gamma is None and after is None:
            out.done = lp_stage.try_polish(strategy.active_rows, deadline, gamma,
                                           early=not stalled)
    elif stage_done:
        x_stage = strategy.stage_x() if out.candidate is None else out.candidate.x
        out.done, out.next_gamma = lp_stage.finish(
            x_stage, lambda: strategy.certify(m, final), strategy.active_rows, deadline,
            gamma)
        out.lp_gap = lp_stage.gap(problem.objective_value(lp_stage.x))
    elif m.full and watch is not None and watch.floor_due(strategy.floor_checks):
        # the certified gap, measured now and then, says when the stage has done all
        # that its gamma allows
        floor, watch.floor_gap = lp_stage.at_floor(
            gamma, watch.floor_gap, strategy.stage_x, m.violation,
            lambda: strategy.certify(m, final), strategy.active_rows)
        if floor == "met":
            out.done = True
        elif floor == "floor":
            # as after a stall, a small gamma grows before the polish
            out.next_gamma = lp_stage.grow_before_polish(gamma, how="reached its floor")
            if out.next_gamma is None:
                out.done, out.next_gamma = lp_stage.next_stage(
                    watch.floor_gap, gamma, strategy.active_rows, deadline,
                    stages=FLOOR_GROWTH_STAGES)
    if lp_stage.measured_gap is not None and np.isnan(out.lp_gap):  # a stall, a floor
        out.lp_gap = lp_stage.measured_gap
    if out.done:
        out.x = lp_stage.x
        if out.x is not x_stage or out.candidate is not None:
            out.violation = strategy.violation(out.x)
        if x_stage is None:
            out.lp_gap = lp_stage.gap(problem.objective_value(out.x))
        if lp_stage.polished or lp_stage.integral is not None \
                or lp_stage.stall_point is not None:
            out.how = lp_stage.polish_how()
        elif out.candidate is not None:
            out.how = out.candidate.how
    return out


def iterate(strategy, problem, lp_stage, counters, *, tol, gap_tol, max_iter, time_limit,
            callback, threads, checkpoint=None, checkpoint_every=60.0, max_memory=None,
            entered=None):
    """Run ``strategy`` to the end: the loop, the stages and the answer.

    Parameters
    ----------
    strategy : Strategy
    problem : MetricProblem
    lp_stage : LPStage
        The stages' state (best bound, polishes), kept by the caller.
    counters : dict
        ``iteration`` and ``seconds`` so far (a resumed run continues them) and the
        strategy's schedule; saved with every checkpoint.
    tol, gap_tol, max_iter, time_limit, callback, threads, checkpoint_every, max_memory
        The common options (see :func:`metricopt.solvers.dykstra.solve_dykstra`).
    checkpoint : str or None
        When given, :meth:`Strategy.save` is called every ``checkpoint_every`` seconds,
        at the end and on Ctrl-C.
    entered : float or None
        ``time.perf_counter()`` when the backend was entered: the time limit counts the
        setup too.

    Returns
    -------
    dict
        The backend's fields, ``x``, ``max_violation``, ``status``, ``message``, ``nit``,
        ``history``, ``elapsed`` and the stages' fields (``lower_bound``,
        ``bound_details``, ``polish``, ``certificates``, ...), for
        :func:`.result.complete`.
    """
    if entered is not None:
        counters["seconds"] = float(counters["seconds"]) + (time.perf_counter() - entered)
    loop = IterationLoop(strategy.unit, counters, max_iter=max_iter, time_limit=time_limit,
                         callback=callback, threads=threads, checkpoint_every=checkpoint_every,
                         save=None if checkpoint is None else strategy.save)
    final = None  # the certificates end by the time limit's allowance
    # the watch's state travels with the counters: a resumed run stalls where the
    # uninterrupted one does
    watch = ProgressWatch(tol=tol, gap_tol=gap_tol)
    lp_stage.violation_of = strategy.violation
    watch.restore(counters.get("stall_watch"))
    lp_stage.restore_gaps(counters.get("stage_gaps"))
    if callback is not None:
        # a polish takes minutes on large graphs: its rounds are reported as they end
        lp_stage.progress = lambda rec: callback(dict(rec, iteration=loop.it,
                                                      seconds=loop.elapsed()))
    try:
        with loop:
            if time_limit is not None:
                # the certificate's search ends at 3/4 of the allowance: the rest is for
                # the answer's measurement and objective
                final = loop.deadline + 0.75 * finish_allowance(time_limit)
            while loop.next():
                # a Ctrl-C takes effect between two iterations, so that x, the duals and
                # the counters of a checkpoint always belong together
                with loop.iteration():
                    if not _one_iteration(strategy, problem, lp_stage, loop, tol=tol,
                                          gap_tol=gap_tol, final=final,
                                          max_memory=max_memory, watch=watch):
                        break
        ans = strategy.answer(loop.status, loop, lp_stage, final)
    finally:
        strategy.close()
    status = loop.status if ans.status is None else ans.status
    message = (loop.message if ans.message is None else ans.message) + ans.suffix
    x, viol = ans.x, ans.violation
    if status != Status.OPTIMAL:
        x, viol = lp_stage.answer_at_limit(x, viol)
        if ans.certify is not None:
            # an interrupted run ends at once: its certificate takes one pass over the
            # pairs (the multiplier search stops at its first value, still certified)
            until = time.perf_counter() if status == Status.INTERRUPTED else final
            lp_stage.offer_bound(*ans.certify(until))
        if status == Status.LIMIT and _integral_at_limit(lp_stage, x, loop, time_limit):
            x, viol, status = lp_stage.x, lp_stage.integral["max_violation"], Status.OPTIMAL
            message = (f"certified LP gap {max(lp_stage.integral['gap'], 0.0):.2e} <= "
                       f"gap_tol (the run stopped: {message}){lp_stage.polish_how()}")
    out = dict(x=x, status=status, message=message, nit=loop.it, max_violation=float(viol),
               history=loop.history)
    out.update(ans.fields)
    out.update(lp_stage.summary())
    out.update(lower_bound=lp_stage.best_bound, bound_details=lp_stage.best_details,
               polish=lp_stage.polishes, certificates=lp_stage.certificates,
               certify_seconds=lp_stage.certify_seconds)
    out.update(strategy.late_fields())
    out["elapsed"] = loop.elapsed()
    return out


def _integral_at_limit(lp_stage, x, loop, time_limit):
    """Whether the rounding of a run stopped by a limit meets the contract
    (:meth:`.stage.LPStage.try_integral`): a stopped QP stage's point is often
    infeasible, but its rounding is not. After a time limit the rounding has what is
    left of the limit's allowance (:func:`finish_allowance`)."""
    left = None
    if time_limit is not None and loop.elapsed() >= time_limit:
        left = max(loop.deadline + finish_allowance(time_limit) - time.perf_counter(), 0.1)
    return lp_stage.try_integral(x, time_limit=left)


def _one_iteration(strategy, problem, lp_stage, loop, *, tol, gap_tol, final, max_memory,
                   watch):
    """One iteration inside the loop; False when the loop ends (its status set)."""
    m = strategy.measure(loop)
    if m is None:  # time limit or Ctrl-C during a read-only step
        loop.drop()
        loop.out_of_time()
        return False
    if m.numerical is not None:
        loop.stop(Status.NUMERICAL, m.numerical)
        return False
    if strategy.stages and not m.warm:
        # a Ctrl-C or the time limit during the stage's measurements (seconds on large
        # graphs) drops the iteration, which has changed nothing that a checkpoint keeps
        lp_stage.stopping = loop.stopping
        try:
            outcome = step_stage(strategy, lp_stage, problem, m, tol=tol, gap_tol=gap_tol,
                                 deadline=loop.deadline, final=final, watch=watch)
        except StepAbandoned:
            loop.drop()
            loop.out_of_time()
            return False
        finally:
            lp_stage.stopping = None
    else:
        outcome = Outcome(violation=m.violation)
    if not strategy.advance(m, outcome, loop):
        loop.drop()
        loop.out_of_time()
        return False
    loop.counters["stall_watch"] = watch.state()  # of the iterations that count
    loop.counters["stage_gaps"] = [list(p) for p in lp_stage.stage_gaps]
    loop.record(strategy.record(m, outcome, loop))
    if outcome.done:
        loop.stop(Status.OPTIMAL, f"certified LP gap {max(outcome.lp_gap, 0.0):.2e} "
                                  f"<= gap_tol in {loop.it} {strategy.unit}{outcome.how}")
        return False
    stop = strategy.after(m, outcome, loop)
    if stop is not None:
        loop.stop(*stop)
        return False
    if loop.out_of_time():
        return False
    if max_memory is not None:
        why = strategy.memory_stop(max_memory)
        if why is not None:
            loop.stop(Status.LIMIT, why)
            return False
    strategy.between(m, loop)
    loop.checkpoint_if_due()
    return True
