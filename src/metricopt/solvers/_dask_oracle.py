"""Project and Forget's MET(G) oracle on a Dask cluster.

The shortest-path searches of one oracle call are independent per edge (PF §2.1), so
the edges are dealt into shares that Dask workers search in parallel: the graph goes to
every worker once (a broadcast ``scatter``), ``x`` once per call, and each share returns
its violated cycles and its largest violation. The client concatenates the shares and
puts the cycles in the canonical order of :func:`._cycle_search.canonical_cycles`, so
the answer is the one a local run finds. Projection and forgetting stay on the client:
they touch the active list after every cycle and would pay a round trip each.

Each task runs the kernel on its own thread
(:func:`metricopt.problems._cycles.separate_edges_serial`); the parallelism is the workers'
task threads, so a worker with several threads never runs two threaded scans at once.
"""

import numpy as np

from ._cycle_search import concat_cycles, search_cycles

__all__ = ["DaskCycleSearch", "search_share"]

#: Shares per worker thread: enough that a slow share (a hub's searches) does not leave
#: the other threads idle at the end of a call.
SHARES_PER_THREAD = 4


def search_share(graph, x, edges, add_tol, accept=0.0):
    """The violated cycles of one share of the edges (runs on a worker).

    Returns ``(off, mem, worst)``; see :func:`._cycle_search.search_cycles`.
    """
    cap = max(1024, 2 * edges.shape[0])
    off, mem, worst, _, _ = search_cycles(graph, x, edges, add_tol, 1, cap, accept=accept,
                                          parallel=False)
    return off, mem, worst


class DaskCycleSearch:
    """The cycle search of one run, on the cluster behind ``scheduler``.

    Parameters
    ----------
    graph : CycleGraph
    scheduler : str or distributed.Client
        A scheduler address or a connected client (left open when given).

    Notes
    -----
    Edges are dealt to the shares round robin (share ``k`` takes ``edges[k::K]``), which
    spreads the edges at high-degree nodes of a power-law graph; the number of shares
    only changes which worker finds a cycle, not the cycles.
    """

    def __init__(self, graph, scheduler):
        from .._dask import connect

        self.client, self._own = connect(scheduler)
        try:
            threads = max(1, sum(self.client.nthreads().values()))
            k = int(min(max(1, graph.edges.shape[0]), SHARES_PER_THREAD * threads))
            self.graph = self.client.scatter(graph, broadcast=True, hash=False)
            self.shares = [self.client.scatter(np.ascontiguousarray(graph.edges[i::k]),
                                               hash=False) for i in range(k)]
        except BaseException:
            self.close()
            raise
        self.n_shares = k
        self.last_bytes = 0

    def __call__(self, x, add_tol, accept=0.0, stop=None):
        """``(off, mem, worst)`` over all sources, shares in order (not yet canonical).

        ``stop`` (callable or None) is asked while the shares run
        (:func:`metricopt._dask.gather_unless_stopped`); when true the call's tasks are
        cancelled and None is returned.
        """
        from .._dask import gather_unless_stopped

        xf = self.client.scatter(np.ascontiguousarray(x, dtype=np.float64), broadcast=True,
                                 hash=False)
        futures = [self.client.submit(search_share, self.graph, xf, share, float(add_tol),
                                      float(accept), pure=False) for share in self.shares]
        try:
            parts = gather_unless_stopped(self.client, futures, stop)
        finally:
            self.client.cancel([xf])
        if parts is None:
            return None
        off, mem = concat_cycles((p[0], p[1]) for p in parts)
        self.last_bytes = int(off.nbytes + mem.nbytes)
        return off, mem, float(max((p[2] for p in parts), default=0.0))

    def close(self):
        """Close the client when it was opened here."""
        if self._own:
            self.client.close()
            self._own = False
