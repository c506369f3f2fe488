"""Keep native libraries' console output off standard output.

metricopt's standard output carries only what the user asked for (``--json``). Some
native libraries write to file descriptor 1 on their own: highspy 1.16 prints its banner
("Running HiGHS ...") when a ``Highs`` object is created, before any option can switch
logging off, and a verbose HiGHS run logs there too. :func:`native_stdout_to_stderr`
points descriptor 1 at standard error (or discards what is written) for the duration
of such a call.
"""

import contextlib
import ctypes
import os
import sys
import threading

__all__ = ["native_stdout_to_stderr"]

_LOCK = threading.RLock()


def _flush_c_stdio():
    """Flush the C library's buffered ``stdout`` (what ``printf`` wrote)."""
    try:
        libc = ctypes.CDLL(None)
        libc.fflush(None)
    except (OSError, AttributeError, TypeError):  # no C runtime reachable this way
        pass


@contextlib.contextmanager
def native_stdout_to_stderr(discard=False):
    """Redirect file descriptor 1 to descriptor 2 inside the block.

    Parameters
    ----------
    discard : bool, default=False
        Send what is written to the null device instead of standard error.

    Python's ``sys.stdout`` is flushed first and the C library's buffers before the
    descriptor is restored, so nothing written inside the block reaches standard
    output later. Where descriptors 1 or 2 are not usable (a closed stream, an
    embedding without them), the block runs unchanged.

    Examples
    --------
    >>> with native_stdout_to_stderr():
    ...     pass
    """
    with _LOCK:
        try:
            sys.stdout.flush()
        except (AttributeError, OSError, ValueError):
            pass
        try:
            saved = os.dup(1)
        except OSError:
            yield
            return
        try:
            if discard:
                sink = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(sink, 1)
                finally:
                    os.close(sink)
            else:
                os.dup2(2, 1)
        except OSError:
            os.close(saved)
            yield
            return
        try:
            yield
        finally:
            _flush_c_stdio()
            os.dup2(saved, 1)
            os.close(saved)
