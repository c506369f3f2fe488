"""The iteration loop every iterative backend runs in, and how it answers Ctrl-C.

* :func:`interrupt_deferred` and :class:`IterationLoop`: a Ctrl-C (SIGTERM, SIGHUP)
  waits for the end of the iteration, so the iterate, its duals and the counters of a
  checkpoint belong together; the iteration's long steps end early when it is held
  (:meth:`IterationLoop.stopping`);
* :func:`interrupt_immediate`: the warm-up's mode, where a signal stops at once.

The clock only stops a run (time limit) and spaces checkpoints; it never changes an
iterate.
"""

import contextlib
import signal
import threading
import time
import warnings

from ..._signals import SIGNALS, by_signal
from ...exceptions import MetricOptWarning
from ...result import Status

__all__ = ["interrupt_deferred", "interrupt_immediate", "IterationLoop",
           "CheckpointNotWritten", "finish_allowance", "OVERRUN_ALLOWANCE"]

OVERRUN_ALLOWANCE = 1.0
"""Seconds a run may end past its ``time_limit`` without a note, at least (10 % of the
limit for longer ones, :func:`finish_allowance`): limits are checked between passes,
and the final certificate and measurement are done within it."""


def finish_allowance(time_limit):
    """Seconds after ``time_limit`` by which a run has certified its answer:
    ``max(OVERRUN_ALLOWANCE, 0.1 * time_limit)``. The iterative backends end their
    certificate's search there (a weaker bound, still certified)."""
    return max(OVERRUN_ALLOWANCE, 0.1 * float(time_limit))



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
    library user's process still dies of them as before, and an ignored SIGINT (a process
    started in the background) stays ignored: nothing it would not stop ends early. Within
    :func:`interrupt_immediate` nothing is held.
    """
    if not signals_held_here():
        yield []
        return
    caught = []
    old = {}
    for signum in SIGNALS:
        handler = signal.getsignal(signum)
        if (signum == signal.SIGINT and handler is not signal.SIG_IGN) or callable(handler):
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


def signals_held_here():
    """Whether :func:`interrupt_deferred` holds signals here (the main thread, outside
    :func:`interrupt_immediate`); native code may then poll its list safely."""
    return threading.current_thread() is threading.main_thread() and not _IMMEDIATE


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


class StepAbandoned(Exception):
    """A read-only measurement of an iteration gave up because the loop is stopping
    (:meth:`IterationLoop.stopping`); the iteration is dropped, as when an oracle's
    search gives up, and a checkpoint then written resumes to the uninterrupted run."""


def check_stopping(stopping):
    """Raise :class:`StepAbandoned` when ``stopping`` (a callable, or None) says so."""
    if stopping is not None and stopping():
        raise StepAbandoned


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
            self.message = f"interrupted{by_signal(exc)} after {self.it} {self.unit}"
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
