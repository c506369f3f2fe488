"""The shared core of the iterative backends: options, Ctrl-C, and what "optimal" means.

Every iterative backend (``dykstra``, ``project-forget``) solves a ``gamma``-regularised
QP of the LP (:mod:`metricopt.bounds`, V §4-7) as a means to the LP. This module holds
what they share:

* :func:`check_options`: one validation of the common options, one message format;
* :func:`interrupt_deferred` and :class:`IterationLoop`: a Ctrl-C (SIGTERM, SIGHUP)
  waits for the end of the iteration, so the iterate, its duals and the counters of a checkpoint belong
  together; the iteration's long steps end early when it is held
  (:meth:`IterationLoop.stopping`);
* :func:`lp_gap` and :class:`LPStage`: the stopping rule on the *certified LP gap*.
  When a backend's QP stage has converged (its own QP gap and violation within
  tolerance), :meth:`LPStage.finish` certifies the point; the run is ``optimal`` only if
  ``(lp_value - lower_bound) / |lower_bound| <= gap_tol`` at a point violating nothing
  by more than ``tol``. Otherwise the active constraints go to the LP polish
  (:mod:`._polish`: the LP restricted to them, solved exactly, separated, and certified
  from its dual) and, if that does not close the gap, ``gamma`` grows by ``growth``
  (exact regularisation: beyond some ``gamma`` the QP solution is an LP solution) and the
  backend goes on from its duals, scaled exactly.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355.
.. [2] Mangasarian, O. L., & Meyer, R. R. (1979). Nonlinear perturbation of linear
       programs. SIAM J. Control Optim. 17(6), 745-752 (exact regularisation).
"""

import contextlib
import numbers
import signal
import threading
import time
import warnings

import numpy as np

from .._signals import SIGNALS, signal_name, signal_number
from ..exceptions import InvalidParameterError, MetricOptWarning
from ..result import Status

__all__ = ["check_options", "check_choice", "bad_value", "interrupt_deferred",
           "interrupt_immediate", "lp_gap", "objective_scale", "LPStage", "IterationLoop",
           "GAMMA_GROWTH", "GAP_FLOOR"]

#: Factor by which ``gamma`` grows when a converged QP stage misses the LP gap.
GAMMA_GROWTH = 10.0
#: ``gamma`` is not raised beyond this (the QP's conditioning degrades as ``gamma``).
MAX_GAMMA = 1e8
#: The polish is tried as soon as the QP's relative gap is below this at a full check:
#: it needs the active rows, not the QP optimum.
POLISH_QP_GAP = 1e-2
#: The gap's denominator is at least this times the objective's scale (the cost of the
#: trivial point, :func:`objective_scale`), so that an LP optimum of 0 certified by a
#: bound of -1e-13 counts as closed.
GAP_FLOOR = 1e-7


def objective_scale(problem):
    """``sum |w|`` (l1, l2) or ``sum |c|`` (linear): the objective's natural size."""
    coef = problem.weights if problem.objective in ("l1", "l2") else problem.cost
    return float(np.sum(np.abs(coef))) if coef is not None else 0.0


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


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


def bad_value(caller, name, value, requirement):
    """The :class:`~metricopt.exceptions.InvalidParameterError` for option ``name`` of
    ``caller``, which must be ``requirement`` (``"an int >= 1"``) and is ``value``."""
    return InvalidParameterError(
        f"The {name!r} parameter of {caller} must be {requirement}. Got {value!r} instead.",
        parameter=name, value=value, requirement=requirement)


def check_choice(caller, name, value, choices):
    """Raise :func:`bad_value` unless ``value`` is one of ``choices``."""
    if isinstance(value, str) and value in choices:
        return
    raise bad_value(caller, name, value, f"one of {', '.join(map(repr, choices))}")


def check_options(caller, **values):
    """Validate the options the iterative backends share; raise
    :class:`~metricopt.exceptions.InvalidParameterError` naming the first bad one.

    Known names: ``tol``, ``gap_tol``, ``checkpoint_every``, ``gamma_growth`` (floats
    > 0; growth > 1), ``gamma``, ``lam``, ``time_limit`` (float > 0 or None),
    ``max_iter`` (int >= 1), ``threads``, ``passes``, ``check_every`` (int >= 1 or None),
    ``polish`` (bool or "auto").
    """
    def bad(name, value, what):
        raise bad_value(caller, name, value, what)

    for name, val in values.items():
        if name in ("tol", "gap_tol", "checkpoint_every"):
            if not _real(val) or not val > 0:
                bad(name, val, "a float > 0")
        elif name == "gamma_growth":
            if not _real(val) or not val > 1:
                bad(name, val, "a float > 1")
        elif name in ("gamma", "lam", "time_limit"):
            if val is not None and (not _real(val) or not val > 0):
                bad(name, val, "a float > 0 or None")
        elif name == "max_iter":
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < 1:
                bad(name, val, "an int >= 1")
        elif name in ("threads", "passes", "check_every"):
            if val is not None and (not isinstance(val, (int, np.integer))
                                    or isinstance(val, bool) or val < 1):
                bad(name, val, "an int >= 1" + (" or None" if name != "check_every" else ""))
        elif name == "polish":
            if val not in (True, False, "auto"):
                bad(name, val, "True, False or 'auto'")
        else:  # pragma: no cover - programming error
            raise TypeError(f"check_options: unknown option {name!r}")


_IMMEDIATE = []  # non-empty within interrupt_immediate()


@contextlib.contextmanager
def interrupt_deferred():
    """Hold a Ctrl-C, SIGTERM or SIGHUP until the block is done, then raise it.

    An iteration updates ``x`` and the duals together; cut short, it would leave a
    checkpoint whose ``x`` is not ``x0 - W^{-1} A' z`` of its duals, or whose counters
    are an iteration behind. Main thread only (elsewhere a no-op). The block gets a
    list that is non-empty once a signal is held, so that long steps inside it can end
    early (:meth:`IterationLoop.stopping`). At the end the held signal's own handler
    runs: ``KeyboardInterrupt`` for SIGINT, :class:`metricopt._signals.Interrupted` for
    the signals the command line answers (:func:`metricopt._signals.signals_interrupt`);
    SIGTERM and SIGHUP are held only when a Python handler is installed for them, so a
    library user's process still dies of them as before. Within
    :func:`interrupt_immediate` nothing is held.
    """
    if threading.current_thread() is not threading.main_thread() or _IMMEDIATE:
        yield []
        return
    caught = []
    old = {}
    for signum in SIGNALS:
        handler = signal.getsignal(signum)
        if signum == signal.SIGINT or callable(handler):
            old[signum] = signal.signal(signum, lambda num, frame: caught.append(num))
    try:
        yield caught
    finally:
        for signum, handler in old.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    if caught:
        handler = old[caught[0]]
        if callable(handler):
            handler(caught[0], None)
        elif handler is not signal.SIG_IGN:
            raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_immediate():
    """Within the block, :func:`interrupt_deferred` holds nothing and
    :class:`IterationLoop` passes a ``KeyboardInterrupt`` on instead of ending with
    status ``INTERRUPTED``: for the warm-up (:mod:`._warmup`), whose state nobody keeps,
    so that a signal during the compilation of the kernels stops the run at once.
    """
    _IMMEDIATE.append(True)
    try:
        yield
    finally:
        _IMMEDIATE.pop()


class LPStage:
    """Decides, at the end of a converged QP stage, whether the LP is reached.

    Parameters
    ----------
    problem : MetricProblem
    tol, gap_tol : float
        Largest violation and certified LP gap of an ``optimal`` answer.
    polish : bool or "auto"
        Try the active-set LP polish (:mod:`._polish`) when the certificate misses
        ``gap_tol``; ``"auto"``: when the restricted LP fits in memory, except for
        problems with a sum row (sparsest cut), where gamma growth is faster.
    gamma_growth : float
        Factor of the next stage's ``gamma`` when neither closes the gap.
    threads, max_memory : int or None
    """

    def __init__(self, problem, *, tol, gap_tol, polish="auto", gamma_growth=GAMMA_GROWTH,
                 threads=None, max_memory=None):
        self.problem = problem
        self.tol, self.gap_tol = float(tol), float(gap_tol)
        # "auto" leaves out problems with the row sum(x) = n (sparsest cut): there the
        # restricted LP needed more than 30 separation rounds (jazz, USAir97) while
        # gamma growth reaches a certified gap of 1e-5 in a few hundred passes
        self.polish = polish if problem.objective != "l2" else False
        if polish == "auto" and problem.sum_value is not None:
            self.polish = False
        self.growth = float(gamma_growth)
        self.threads, self.max_memory = threads, max_memory
        self.best_bound = None
        self.best_details = {}
        self.polishes = []
        self.polished = False  # a polish reached the LP optimum (no second try)
        self._tried = set()  # gammas at which the polish ran
        self.x = self.feasible_x = None
        self.feasible_value = np.inf
        self.certificates = 0
        self.certify_seconds = 0.0
        self.floor = GAP_FLOOR * objective_scale(problem)

    def answer_at_limit(self, x, violation):
        """``(x, violation)`` to return from a run stopped by a limit: the iterate, unless
        it violates a constraint by more than ``tol`` and a stage ended at a point that
        does not (after a gamma change the iterate moves away from feasibility)."""
        if violation > self.tol and self.feasible_x is not None:
            return self.feasible_x, float(self.problem.max_violation(self.feasible_x))
        return x, violation

    def summary(self):
        """Scalars for the report: polish seconds, rounds and rows (0 when none ran)."""
        ran = [p for p in self.polishes if "seconds" in p]
        return dict(polish_seconds=float(sum(p["seconds"] for p in ran)),
                    polish_rounds=int(sum(p["rounds"] for p in ran)),
                    polish_rows=int(max((p["rows"] for p in ran), default=0)))

    def gap(self, value):
        """Certified LP gap of an LP value against the best bound so far."""
        return lp_gap(value, self.best_bound, self.floor)

    def offer_bound(self, value, details, name=None):
        """Keep the best certified bound seen (every one is valid for the LP).

        ``best_details`` holds the latest certificate's candidates, the polish's bound
        under ``"lp_polish"``, and in ``method`` the source of ``best_bound``.
        """
        if name is None:
            self.best_details.update(details)
        else:
            self.best_details[name] = value
            self.best_details[f"{name}_details"] = {
                k: v for k, v in details.items() if k in ("value", "certified", "note")}
        if value is not None and np.isfinite(value) and (
                self.best_bound is None or value > self.best_bound):
            self.best_bound = float(value)
            self.best_method = name or details.get("method", "certificate")
        if self.best_bound is not None:
            self.best_details["method"] = self.best_method

    def may_polish(self, gamma):
        """Whether a polish is still to be tried at this ``gamma``."""
        return bool(self.polish) and not self.polished and gamma not in self._tried

    def try_polish(self, active, deadline, gamma):
        """Run the polish once per ``gamma`` (:mod:`._polish`); True when its answer
        meets the LP gap (then ``self.x`` is it).

        It needs only the active rows, not a converged QP: ``dykstra`` calls it, for l1
        objectives, as soon as its QP gap is below :data:`POLISH_QP_GAP` at a full
        check; otherwise :meth:`finish` does at the end of the stage, when the
        certificate misses the gap. At most once per ``gamma``.
        """
        if not self.may_polish(gamma):
            return False
        from .core.polish import polish, polish_rows

        self._tried.add(gamma)
        every = active()
        rows, why = polish_rows(self.problem, every, self.max_memory)
        if rows is None:
            self.polishes.append(dict(skipped=why, gamma=gamma))
            return False
        res = polish(self.problem, rows, tol=self.tol, gap_tol=self.gap_tol,
                     deadline=deadline, threads=self.threads)
        res["gamma"] = gamma
        res["active_rows"] = every.n_rows
        res["start_rows"] = rows.n_rows
        self.polishes.append({k: v for k, v in res.items() if k not in ("x",)})
        self.offer_bound(res["lower_bound"], res["bound_details"], "lp_polish")
        if res["status"] != Status.OPTIMAL:
            return False
        self.polished = True
        if self.gap(self.problem.objective_value(res["x"])) <= self.gap_tol:
            self.x = res["x"]
            return True
        return False

    def finish(self, x, certify, active, deadline, gamma):
        """Certify a converged stage's point ``x``; polish if needed.

        Parameters
        ----------
        x : ndarray
            The stage's answer (problem order), violating nothing by more than ``tol``.
        certify : callable
            ``certify() -> (lower_bound, details)`` for the backend's current iterate.
        active : callable
            ``active() -> ActiveRows`` of the current duals (for the polish).
        deadline : float or None
        gamma : float
            The stage's regularisation (to decide whether it may grow).

        Returns
        -------
        done : bool
            The LP gap is met: the run is optimal with ``self.x``.
        next_gamma : float or None
            When not done: the next stage's ``gamma`` (None: no further stage).
        """
        # the best point met so far that violates nothing by more than tol: what a run
        # stopped later by a limit returns when its iterate is worse (replaced before
        # the certificate runs, so that two stages' points are not held through it)
        self.x = x
        value = self.problem.objective_value(x)
        if self.feasible_x is None or value < self.feasible_value:
            self.feasible_x, self.feasible_value = x, value
        t0 = time.perf_counter()
        lb, details = certify()
        self.certificates += 1
        self.certify_seconds += time.perf_counter() - t0
        self.offer_bound(lb, details)
        gap = self.gap(value)
        if gap <= self.gap_tol:
            return True, None
        grow = None if (self.problem.objective == "l2" or gamma * self.growth > MAX_GAMMA) \
            else gamma * self.growth
        if grow is not None and gap / self.growth ** 2 <= self.gap_tol \
                and self.may_polish(gamma):
            # the certified gap of a converged stage shrinks at least like 1/gamma (the
            # QP's point and its Lagrangian bound are both O(1/gamma) from the LP, V Thm.
            # 5): when one or two more stages are predicted to close it, which costs a
            # few scans each, gamma grows first, while the restricted LP's cost grows
            # with its rows (ca-GrQc, gap_tol 2e-2: 150 s of gamma growth against 370 s
            # of polish; a 5,000-node signed graph, gap_tol 1e-2: gap 0.138, two stages
            # in 10 s against 79 s of polish that ended without a certificate;
            # benchmarks/README.md)
            self.polishes.append(dict(skipped=f"gamma {grow:g} is predicted to close the "
                                              f"gap ({gap:.2e} / {self.growth:g} per stage)",
                                      gamma=gamma))
            return False, grow
        if self.try_polish(active, deadline, gamma):
            return True, None
        return False, grow


class CheckpointNotWritten(MetricOptWarning):
    """The final checkpoint of a run could not be written; ``error`` is the ``OSError``
    (its ``filename`` the checkpoint's path)."""

    def __init__(self, error):
        self.error = error
        super().__init__(f"the checkpoint {error.filename} could not be written: "
                         f"{error.strerror or error}")


class IterationLoop:
    """The bookkeeping every iterative backend's main loop shares.

    Threads (set on entry, restored on exit), the iteration and time limits, the
    per-iteration record (history, progress callback, counters), the checkpoint cadence
    and Ctrl-C: a ``KeyboardInterrupt`` ends the loop with status ``INTERRUPTED`` and a
    checkpoint (each iteration runs under :func:`interrupt_deferred`, so the state
    saved is that of a whole iteration; :meth:`stopping` and :meth:`drop` let a long
    read-only step give the iteration up, so a Ctrl-C or the time limit is answered
    within a part of it). A backend writes only its iteration::

        loop = IterationLoop("passes", counters, max_iter=..., time_limit=..., ...)
        with loop:
            while loop.next():
                with loop.iteration():
                    if not search(stop=loop.stopping):  # a read-only step, given up
                        loop.drop()
                        loop.out_of_time()
                        break
                    ...                      # the rest of one iteration
                    loop.record(rec)
                    if converged:
                        loop.stop(Status.OPTIMAL, "...")
                        break
                    if loop.out_of_time():
                        break
                    loop.checkpoint_if_due()

    The clock only stops a run (time limit) and spaces checkpoints; it never changes
    an iterate.

    Parameters
    ----------
    unit : str
        What one iteration is, for messages ("passes", "oracle calls").
    counters : dict
        ``iteration`` and ``seconds`` so far (a resumed run continues them); kept up to
        date, and saved in checkpoints, with ``history``: every iteration record, the
        runs' before a resume (restored from the checkpoint) and this one's, so that a
        resumed run's records continue the interrupted one's.
    max_iter : int
    time_limit : float or None
    callback : callable or None
    threads : int
        numba threads during the loop.
    checkpoint_every : float
    save : callable or None
        ``save()`` writes a checkpoint (None: no checkpoints).
    """

    def __init__(self, unit, counters, *, max_iter, time_limit=None, callback=None,
                 threads=1, checkpoint_every=60.0, save=None):
        self.unit, self.counters = unit, counters
        self.max_iter, self.time_limit = max_iter, time_limit
        self.callback, self.threads = callback, threads
        self.checkpoint_every, self.save = checkpoint_every, save
        self.history = []  # this run's records
        self._records = list(counters.get("history") or [])
        counters["history"] = self._records  # all records, for the checkpoints
        self.status, self.message = Status.LIMIT, ""
        self.it = int(counters["iteration"])
        self._held = []

    def __enter__(self):
        import numba

        self._old_threads = numba.get_num_threads()
        numba.set_num_threads(self.threads)
        self.start = time.perf_counter() - float(self.counters["seconds"])
        self._last_save = time.perf_counter()
        return self

    def __exit__(self, kind, exc, tb):
        import numba

        numba.set_num_threads(self._old_threads)
        interrupted = kind is not None and issubclass(kind, KeyboardInterrupt)
        if interrupted and _IMMEDIATE:  # the warm-up: nothing to keep, stop at once
            return False
        if interrupted:
            self.status = Status.INTERRUPTED
            num = signal_number(exc)
            by = "" if num == signal.SIGINT else f" by {signal_name(num)}"
            self.message = f"interrupted{by} after {self.it} {self.unit}"
            self.counters.update(iteration=self.it, seconds=self.elapsed())
        if self.save is not None and (kind is None or interrupted):
            error = self._save()
            if error is not None:  # the run's answer is kept; the caller is told
                warnings.warn(CheckpointNotWritten(error), stacklevel=2)
        return interrupted

    def _save(self):
        """Write a checkpoint; the ``OSError`` of one that cannot be written (a full
        disk), or None. A failed periodic checkpoint does not stop the run."""
        try:
            self.save()
        except OSError as exc:
            return exc
        return None

    def elapsed(self):
        """Seconds of the run so far (a resumed run's earlier seconds included)."""
        return time.perf_counter() - self.start

    @property
    def deadline(self):
        """``time.perf_counter()`` value of the time limit, or None."""
        return None if self.time_limit is None else self.start + self.time_limit

    @contextlib.contextmanager
    def iteration(self):
        """The block of one iteration: :func:`interrupt_deferred`, watched by
        :meth:`stopping`."""
        with interrupt_deferred() as held:
            self._held = held
            try:
                yield
            finally:
                self._held = []

    def stopping(self):
        """True once the time limit has passed or a Ctrl-C is held in this iteration.

        A long read-only step at the start of an iteration (an oracle's search) asks
        between its parts; when true it gives up, the backend calls :meth:`drop` and
        leaves the loop, and the run ends with the state of the iteration before (so a
        checkpoint then written resumes to the uninterrupted answer).
        """
        return bool(self._held) or (self.time_limit is not None
                                     and self.elapsed() >= self.time_limit)

    def drop(self):
        """Undo :meth:`next`: the iteration begun changed nothing and does not count."""
        self.it -= 1

    def next(self):
        """Start the next iteration; False (status set) at the iteration limit."""
        if self.it >= self.max_iter:
            self.stop(Status.LIMIT, f"iteration limit ({self.max_iter} {self.unit}) reached")
            return False
        self.it += 1
        return True

    def stop(self, status, message):
        self.status, self.message = status, message

    def record(self, rec):
        """Keep an iteration's record, pass it to the callback, update the counters."""
        self.history.append(rec)
        self._records.append(rec)
        if self.callback is not None:
            self.callback(dict(rec))
        self.counters.update(iteration=self.it, seconds=rec.get("seconds", self.elapsed()))

    def out_of_time(self):
        """True (status set) once the time limit is reached."""
        if self.time_limit is not None and self.elapsed() >= self.time_limit:
            self.stop(Status.LIMIT, f"time limit ({self.time_limit} s) reached")
            return True
        return False

    def checkpoint_if_due(self):
        """Write a checkpoint when ``checkpoint_every`` seconds have passed."""
        if self.save is not None and time.perf_counter() - self._last_save >= \
                self.checkpoint_every:
            self._save()
            self._last_save = time.perf_counter()
