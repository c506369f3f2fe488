"""Run the shares of a threaded kernel on a pool of threads.

numba's ``parallel=True`` kernels cannot be cached reliably (each run compiles them
again, seconds per kernel), so the package has none: a threaded scan is a serial kernel
compiled with ``cache=True, nogil=True`` whose one call does one worker's share into
that worker's own output slot, and :func:`run_workers` calls it for every share on up
to ``threads`` threads. Which thread runs a share never changes what it writes, so the
results do not depend on the number of threads.

The shares are handed out in order from a shared counter; the calling thread runs
shares too. Threads come from one process-wide pool, created on first use (and
forgotten in a forked child, where its threads do not exist).
"""

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["thread_count", "run_workers"]

_LOCK = threading.Lock()
_POOL = None
_POOL_SIZE = 0
_LOCAL = threading.local()


def _forget_pool():
    """In a forked child: the parent's pool threads do not exist there."""
    global _LOCK, _POOL, _POOL_SIZE
    _LOCK, _POOL, _POOL_SIZE = threading.Lock(), None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def thread_count(threads=None):
    """Threads a threaded kernel uses: ``threads``, or numba's thread count of the
    calling thread (:func:`numba.get_num_threads`, set by the ``threads`` option of the
    backends) when None."""
    if threads is None:
        import numba

        return int(numba.get_num_threads())
    return max(1, int(threads))


def _pool(size):
    """The process-wide pool, grown to at least ``size`` threads."""
    global _POOL, _POOL_SIZE
    with _LOCK:
        if _POOL is None or _POOL_SIZE < size:
            old = _POOL
            _POOL = ThreadPoolExecutor(max_workers=size, thread_name_prefix="metricopt")
            _POOL_SIZE = size
            if old is not None:
                old.shutdown(wait=False)
        return _POOL


def run_workers(work, shares, threads=None, stop=None):
    """Call ``work(t)`` for ``t = 0 .. shares - 1`` on up to ``threads`` threads.

    Parameters
    ----------
    work : callable
        ``work(t)`` does share ``t`` (a ``nogil`` kernel call, so that shares run at the
        same time) and returns its result.
    shares : int
    threads : int or None
        Most threads used, the calling one included (default: :func:`thread_count`).
        Calls from a thread of the pool run their shares in that thread.
    stop : callable or None
        Asked before each share starts: once true, no further share starts (a time limit
        or a Ctrl-C waits for the shares under way only).

    Returns
    -------
    list or None
        ``work(t)`` for each ``t``, in order; None when ``stop()`` turned true first.

    Notes
    -----
    Every share started is finished before this returns or raises (a share cannot be
    cut short), so the outputs are never written after the call; an exception of a
    share, or a ``KeyboardInterrupt`` in the calling thread, is raised after that, and
    the shares not started are skipped.
    """
    shares = int(shares)
    results = [None] * shares
    nested = getattr(_LOCAL, "in_pool", False)
    use = 1 if nested else min(shares, thread_count(threads))
    if use <= 1:
        for t in range(shares):
            if stop is not None and stop():
                return None
            results[t] = work(t)
        return results
    counter = itertools.count()
    failed, halted = [], []

    def runner(in_pool):
        if in_pool:
            _LOCAL.in_pool = True
        try:
            while not failed and not halted:
                if stop is not None and stop():
                    halted.append(True)
                    return
                t = next(counter)
                if t >= shares:
                    return
                results[t] = work(t)
        except BaseException as exc:
            failed.append(exc)
            raise

    pool = _pool(use - 1)
    futures = [pool.submit(runner, True) for _ in range(use - 1)]
    try:
        runner(False)
    finally:
        for f in futures:  # the other threads' shares end before the outputs are read
            while True:
                try:
                    f.exception()
                    break
                except BaseException as exc:  # noqa: BLE001 - wait them out, then raise
                    failed.append(exc)
    if failed:
        raise failed[0]
    return None if halted else results
