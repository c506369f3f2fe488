"""Ctrl-C, SIGTERM and SIGHUP answered alike: as a ``KeyboardInterrupt`` that knows its signal.

A run stopped from the keyboard (SIGINT), by ``kill`` or ``timeout`` (SIGTERM) or by a
closed terminal (SIGHUP) ends the same way: the iteration in progress finishes, a
checkpoint is written, the report is marked interrupted, the run directory is released,
and the command exits with ``128 + signal number`` (130, 143, 129), as shells report a
process killed by that signal. The command line installs :func:`signals_interrupt` once
around every command; everything below it (:func:`metricopt.solvers._core.
interrupt_deferred`, the iteration loop, the pipeline) handles one exception type.

The module imports nothing of the package, so any layer may use it.
"""

import contextlib
import signal
import threading

__all__ = ["Interrupted", "SIGNALS", "signals_interrupt", "last_signal", "signal_number",
           "exit_code", "signal_name", "interrupt_cause", "interrupted_by"]

#: The signals answered as an interruption (SIGHUP does not exist on Windows).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))

_last = [None]


class Interrupted(KeyboardInterrupt):
    """A ``KeyboardInterrupt`` raised for the signal ``signum`` (SIGINT, SIGTERM, SIGHUP).

    Every ``except KeyboardInterrupt`` catches it, so the code that answers Ctrl-C
    answers all three.
    """

    def __init__(self, signum=signal.SIGINT):
        super().__init__(signal_name(signum))
        self.signum = int(signum)


def signal_name(signum):
    """``"SIGTERM"`` for 15 (the number itself for an unknown signal)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def signal_number(exc=None):
    """The signal behind a ``KeyboardInterrupt`` (SIGINT for a plain one).

    Without ``exc``: the last signal :func:`signals_interrupt` answered, else SIGINT.
    """
    if exc is not None:
        return int(getattr(exc, "signum", signal.SIGINT))
    return int(_last[0]) if _last[0] is not None else int(signal.SIGINT)


def exit_code(exc=None):
    """``128 + signal number`` (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + signal_number(exc)


def by_signal(exc=None):
    """``""`` for SIGINT (a Ctrl-C), else ``" by SIGTERM"`` (or the signal's name), for
    "interrupted ... after N iterations" messages."""
    num = signal_number(exc)
    return "" if num == signal.SIGINT else f" by {signal_name(num)}"


def interrupted_by(exc=None):
    """``"the user"`` (SIGINT) or the signal's name, for messages."""
    num = signal_number(exc)
    return "the user" if num == signal.SIGINT else signal_name(num)


def interrupt_cause(exc):
    """The ``KeyboardInterrupt`` that ``exc`` is or wraps, or None.

    A Ctrl-C that lands while compiled (numba) code returns surfaces as a
    ``SystemError`` whose cause is the ``KeyboardInterrupt``.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def last_signal():
    """The number of the last signal :func:`signals_interrupt` answered, or None."""
    return _last[0]


def _raise(signum, frame):
    _last[0] = signum
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt():
    """Within the block, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted`.

    A signal the process ignores (``nohup`` ignores SIGHUP; a shell's background job
    ignores SIGINT) stays ignored. The previous handlers are restored on exit. Main
    thread only (elsewhere a no-op: Python runs handlers in the main thread).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _last[0] = None
    old = {}
    try:
        for signum in SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                old[signum] = signal.signal(signum, _raise)
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
