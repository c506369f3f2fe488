"""The support scan of the support-sized layout on this machine's threads, stoppable.

One oracle call of project-forget on the support-sized layout is the support scan
(:func:`metricopt.problems._support_scan.scan_support`). Here its work is dealt into
shares as on a Dask cluster (:func:`metricopt.problems._support_scan.work_ranges`:
contiguous ranges of the long sides' first nodes with about equal wedge work, then the
listed pairs above the bulk or below 0), which ``threads`` threads scan at once (the
kernel releases the GIL). The
rows of the shares, concatenated in share order, are those of one serial scan, row for
row, so the answer does not depend on the number of threads.

A call asks ``stop()`` between shares (a share is about a ``1 / (SHARES_PER_THREAD *
threads)`` of the call's work): a time limit or a Ctrl-C during a scan is answered when
the shares under way end.
"""

import numpy as np

from ..problems._support_scan import work_ranges

__all__ = ["LocalSupportScan", "SHARES_PER_THREAD"]

#: Shares per thread: a share with a hub's wedges does not leave the others idle, and a
#: stop waits for at most the shares under way.
SHARES_PER_THREAD = 8


def _share(args, lo, hi, listed, out):
    from ..problems._support_scan import scan_support_part

    pi, pj, x, n, bulk, tk, tv, indptr, nodes, values, tol = args
    return scan_support_part(pi, pj, x, n, bulk, tk, tv, indptr, nodes, values, tol, out,
                             lo, hi, listed)


class LocalSupportScan:
    """The support scans of one run on ``threads`` threads
    (:func:`metricopt._threads.run_workers`).

    Parameters
    ----------
    threads : int
    """

    def __init__(self, threads):
        self.threads = max(1, int(threads))

    def __call__(self, pi, pj, x, n, bulk, table, csr, tol, check=None, stop=None):
        """The rows ``(a, b, c, side)`` and the largest violation of a support scan, those
        of :func:`~metricopt.problems._support_scan.scan_support`; None when ``stop()``
        turned true on the way.

        ``check(count)`` is called with the number of rows before they are made (the
        memory check of :class:`._support_strategy.SupportScanner`).
        """
        from .._threads import run_workers

        indptr, nodes, values = csr
        args = (pi, pj, x, int(n), float(bulk), *table, indptr, nodes, values, float(tol))
        bounds = work_ranges(indptr, nodes, SHARES_PER_THREAD * self.threads)
        shares = [(int(lo), int(hi), False) for lo, hi in zip(bounds[:-1], bounds[1:])]
        shares.append((0, 0, True))
        none = np.empty((0, 4), dtype=np.int32)
        parts = run_workers(lambda t: _share(args, *shares[t], none), len(shares),
                            self.threads, stop)
        if parts is None:
            return None
        counts = np.array([c for c, _ in parts], dtype=np.int64)
        worst = max((w for _, w in parts), default=0.0)
        if check is not None:
            check(int(counts.sum()))
        rows = np.empty((int(counts.sum()), 4), dtype=np.int32)
        starts = np.concatenate([[0], np.cumsum(counts)])
        if run_workers(lambda t: _share(args, *shares[t], rows[starts[t]:starts[t + 1]]),
                       len(shares), self.threads, stop) is None:
            return None
        return rows, float(worst)

    def close(self):
        """Nothing to release (the threads are the process-wide pool's)."""
