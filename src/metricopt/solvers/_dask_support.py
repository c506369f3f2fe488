"""The support scan of the support-sized layout on a Dask cluster.

One oracle call of project-forget on the support-sized layout is the support scan
(:func:`metricopt.problems._support_scan.scan_support`): the wedges ``u - w - v`` of the
pairs below the bulk, per long side ``{u, v}``. The long sides' first nodes ``u`` are
dealt into contiguous ranges of about equal wedge work, which Dask workers scan in
parallel; the listed pairs above the bulk or below 0 are one more share. The run pairs,
their values, their key table and the support graph go to every worker once per call (a
broadcast ``scatter``); each share returns its violated inequalities in the local scan's
order, so the client's concatenation is what a local call finds, row for row.

A call runs in two rounds, as the local scan does: the shares count, the client checks
the rows against the memory allowance, then the shares fill their rows. Projection and
forgetting stay on the client.
"""

import numpy as np

from ..problems._support_scan import work_ranges

__all__ = ["DaskSupportScan", "scan_share", "work_ranges"]

#: Shares per worker thread (a share with a hub's wedges does not leave the others idle).
SHARES_PER_THREAD = 4


def scan_share(data, n, bulk, tol, lo, hi, listed, count):
    """One share of a support scan (runs on a worker): ``(count, worst)`` when ``count``
    is None, else the share's ``count`` rows ``(a, b, c, side)`` as an int32 array."""
    from ..problems._support_scan import scan_support_part

    pi, pj, x, tk, tv, indptr, nodes, values = data
    out = np.empty((0 if count is None else int(count), 4), dtype=np.int32)
    found, worst = scan_support_part(pi, pj, x, int(n), float(bulk), tk, tv, indptr, nodes,
                                     values, float(tol), out, int(lo), int(hi), bool(listed))
    return (int(found), float(worst)) if count is None else out


class DaskSupportScan:
    """The support scans of one run, on the cluster behind ``scheduler``.

    Parameters
    ----------
    scheduler : str or distributed.Client
        A scheduler address or a connected client (left open when given).
    """

    def __init__(self, scheduler):
        from .._dask import connect

        self.client, self._own = connect(scheduler)
        self.threads = max(1, sum(self.client.nthreads().values()))

    def _run(self, data, n, bulk, tol, shares, counts, stop):
        from .._dask import gather_unless_stopped

        futures = [self.client.submit(scan_share, data, n, bulk, tol, lo, hi, listed,
                                      None if counts is None else counts[s], pure=False)
                   for s, (lo, hi, listed) in enumerate(shares)]
        return gather_unless_stopped(self.client, futures, stop)

    def __call__(self, pi, pj, x, n, bulk, table, csr, tol, check=None, stop=None):
        """The rows and the largest violation of a support scan, as the local scan finds
        them; None when ``stop()`` turned true on the way.

        ``check(count)`` is called with the number of rows before they are made (the
        memory check of :class:`._support_strategy.SupportScanner`).
        """
        arrays = (pi, pj, x, *table, *csr)
        data = self.client.scatter(tuple(np.ascontiguousarray(a) for a in arrays),
                                   broadcast=True, hash=False)
        try:
            bounds = work_ranges(csr[0], csr[1], SHARES_PER_THREAD * self.threads)
            shares = [(int(lo), int(hi), False) for lo, hi in zip(bounds[:-1], bounds[1:])]
            shares.append((0, 0, True))
            parts = self._run(data, n, bulk, tol, shares, None, stop)
            if parts is None:
                return None
            counts = [c for c, _ in parts]
            worst = max((w for _, w in parts), default=0.0)
            if check is not None:
                check(sum(counts))
            rows = self._run(data, n, bulk, tol, shares, counts, stop)
            if rows is None:
                return None
        finally:
            self.client.cancel(list(data))
        return np.concatenate(rows) if rows else np.empty((0, 4), np.int32), float(worst)

    def close(self):
        """Close the client when it was opened here."""
        if self._own:
            self.client.close()
            self._own = False
