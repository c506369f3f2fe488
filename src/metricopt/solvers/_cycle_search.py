"""The cycle search of Project and Forget's MET(G) oracle, shared by local and cluster runs.

:func:`search_cycles` runs the shortest-path kernel (:func:`._pf_kernels.cycle_oracle`)
over a set of sources, growing its output rows until everything fits;
:func:`canonical_cycles` puts the cycles found in the order of their violated edge, so
the oracle's answer depends on ``x`` only, not on how the sources were split between
threads or cluster workers.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["CycleGraph", "search_cycles", "canonical_cycles"]


@dataclass(frozen=True)
class CycleGraph:
    """The graph of a MET(G) problem as the cycle kernels read it.

    Attributes
    ----------
    indptr, nbrs, eids : ndarray of int64
        CSR adjacency whose entries carry edge ids (``problems._cycles.edge_csr``).
    pairs : ndarray of shape (m, 2), int64
    srcs : ndarray of int64
        Sources worth a search: nodes with a larger neighbour (an edge is checked from
        its smaller end only).
    """

    indptr: np.ndarray
    nbrs: np.ndarray
    eids: np.ndarray
    pairs: np.ndarray
    srcs: np.ndarray

    @classmethod
    def from_problem(cls, problem):
        """The graph of a sparse :class:`~metricopt.problems.MetricProblem`."""
        from ..problems._cycles import edge_csr

        pairs = np.ascontiguousarray(problem.pairs, dtype=np.int64)
        indptr, nbrs, eids = edge_csr(problem.n, pairs)
        hi = np.maximum(pairs[:, 0], pairs[:, 1])
        lo = np.minimum(pairs[:, 0], pairs[:, 1])
        has_upper = np.zeros(problem.n, dtype=bool)
        has_upper[lo[hi > lo]] = True
        return cls(indptr, nbrs, eids, pairs, np.flatnonzero(has_upper).astype(np.int64))

    @property
    def nbytes(self):
        """Bytes of the arrays."""
        return int(sum(a.nbytes for a in (self.indptr, self.nbrs, self.eids, self.pairs,
                                          self.srcs)))


def search_cycles(graph, x, srcs, add_tol, threads, cap, *, parallel=True):
    """Violated cycles from the sources ``srcs``, in the kernel's (thread) order.

    Parameters
    ----------
    graph : CycleGraph
    x : ndarray of shape (m,)
    srcs : ndarray of int64
        The sources to search (all of ``graph.srcs`` or a share of them).
    add_tol : float
        Smallest violation of a cycle returned.
    threads : int
        Workers of the kernel; with ``parallel=False`` the serial kernel runs them one
        after the other (the same cycles), for callers that are threads themselves.
    cap : int
        Initial length of each worker's output row (doubled while a row runs full).

    Returns
    -------
    off, mem : ndarray of int64
        Flat cycle list (see :func:`._pf_kernels.gather_cycles`).
    worst : float
        Exact largest violation over the edges checked from ``srcs``.
    cap : int
        The row length that sufficed (a good start for the next call).
    nbytes : int
        Bytes of the buffers used (rows and per-worker Dijkstra state).
    """
    from . import _pf_kernels as K

    kernel = K.cycle_oracle if parallel else K.cycle_oracle_serial
    x = np.ascontiguousarray(x, dtype=np.float64)
    T = max(1, int(threads))
    pos = np.arange(T, dtype=np.int64)
    ncyc = np.zeros(T, dtype=np.int64)
    nmem = np.zeros(T, dtype=np.int64)
    worst = np.zeros(T)
    mem = np.empty((T, cap), dtype=np.int64)
    off = np.zeros((T, cap + 1), dtype=np.int64)
    viol = np.empty((T, cap))
    ns = srcs.shape[0]
    while True:
        kernel(graph.indptr, graph.nbrs, graph.eids, graph.pairs, x, srcs, pos, add_tol,
               mem, off, viol, ncyc, nmem, worst)
        if np.all(pos >= ns):
            break
        cap *= 2  # a worker ran full: larger rows, keep what was found
        mem2 = np.empty((T, cap), dtype=np.int64)
        off2 = np.zeros((T, cap + 1), dtype=np.int64)
        viol2 = np.empty((T, cap))
        for t in range(T):
            mem2[t, : nmem[t]] = mem[t, : nmem[t]]
            off2[t, : ncyc[t] + 1] = off[t, : ncyc[t] + 1]
            viol2[t, : ncyc[t]] = viol[t, : ncyc[t]]
        mem, off, viol = mem2, off2, viol2
    flat_off, flat_mem = concat_cycles(
        (off[t, : ncyc[t] + 1], mem[t, : nmem[t]]) for t in range(T))
    nbytes = int(mem.nbytes + off.nbytes + viol.nbytes
                 + T * (graph.indptr.shape[0] * 33 + graph.nbrs.shape[0] * 16))
    return flat_off, flat_mem, float(worst.max(initial=0.0)), cap, nbytes


def concat_cycles(parts):
    """One flat cycle list from several ``(off, mem)`` lists, in the order given."""
    offs = [np.zeros(1, dtype=np.int64)]
    mems = []
    base = 0
    for off, mem in parts:
        offs.append(off[1:] + base)
        mems.append(mem)
        base += int(mem.shape[0])
    return (np.concatenate(offs),
            np.concatenate(mems) if mems else np.empty(0, dtype=np.int64))


def canonical_cycles(off, mem):
    """The cycles ordered by their violated (first) edge id.

    Each edge is checked from one source only, so at most one cycle starts with a given
    edge and the order is a function of the set of cycles.
    """
    from . import _pf_kernels as K

    order = np.argsort(mem[off[:-1]], kind="stable").astype(np.int64)
    return K.gather_cycles(off, mem, order)
