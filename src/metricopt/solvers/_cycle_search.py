"""The cycle search of Project and Forget's MET(G) oracle, shared by local and cluster runs.

:func:`search_cycles` runs the shortest-path separation
(:func:`metricopt.problems._cycles.separate_edges`) over a set of edges;
:func:`canonical_cycles` puts the cycles found in the order of their violated edge, so
the oracle's answer depends on ``x`` only, not on how the edges were split between
threads or cluster workers. :func:`search_cycles_until` runs the search in parts and
asks between them whether to stop (time limit, Ctrl-C).
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["CycleGraph", "search_cycles", "search_cycles_until", "canonical_cycles"]

#: :func:`search_cycles_until` runs the search in about this many parts of the edges
#: (each a kernel launch with fresh search buffers, about 50 n bytes set per worker) ...
SEARCH_PARTS = 256
#: ... of at least this many edges each.
MIN_PART_EDGES = 4096


@dataclass(frozen=True)
class CycleGraph:
    """The graph of a MET(G) problem as the cycle kernels read it.

    Attributes
    ----------
    indptr, nbrs, eids : ndarray of int64
        CSR adjacency whose entries carry edge ids (``problems._cycles.edge_csr``).
    pairs : ndarray of shape (m, 2), int64
    edges : ndarray of int64
        The edge ids ``0 .. m - 1``, the units of work the searches are dealt in.
    """

    indptr: np.ndarray
    nbrs: np.ndarray
    eids: np.ndarray
    pairs: np.ndarray
    edges: np.ndarray

    @classmethod
    def from_problem(cls, problem):
        """The graph of a sparse :class:`~metricopt.problems.MetricProblem`."""
        from ..problems._cycles import edge_csr

        pairs = np.ascontiguousarray(problem.pairs, dtype=np.int64)
        indptr, nbrs, eids = edge_csr(problem.n, pairs)
        return cls(indptr, nbrs, eids, pairs, np.arange(pairs.shape[0], dtype=np.int64))

    @property
    def nbytes(self):
        """Bytes of the arrays."""
        return int(sum(a.nbytes for a in (self.indptr, self.nbrs, self.eids, self.pairs,
                                          self.edges)))


def search_cycles(graph, x, edges, add_tol, threads, cap, *, accept=0.0, parallel=True):
    """Violated cycles of the edges ``edges``, in the kernel's (worker) order.

    Parameters
    ----------
    graph : CycleGraph
    x : ndarray of shape (m,)
    edges : ndarray of int64
        The edges to check (all of ``graph.edges`` or a share of them).
    add_tol : float
        Smallest violation of a cycle returned.
    threads : int
        Workers of the kernel; with ``parallel=False`` the serial kernel runs them one
        after the other (the same cycles), for callers that are threads themselves.
    cap : int
        Initial length of each worker's output row (doubled while a row runs full).
    accept : float
        0 for the exact separation, else a search takes the first path of length at
        most ``accept * x_e`` (:func:`metricopt.problems._cycles.separate_edges`).

    Returns
    -------
    off, mem : ndarray of int64
        Flat cycle list (see :func:`._pf_kernels.gather_cycles`).
    worst : float
        Exact largest violation over ``edges`` (a lower bound when ``accept > 0``).
    cap : int
        The row length that sufficed (a good start for the next call).
    nbytes : int
        Bytes of the buffers used (rows and per-worker search buffers).
    """
    from ..problems._cycles import collect_cycles

    off, mem, _, worst, cap, nbytes = collect_cycles(
        graph.indptr, graph.nbrs, graph.eids, graph.pairs, x, edges, add_tol, threads, cap,
        accept=accept, parallel=parallel)
    return off, mem, worst, cap, nbytes


def search_cycles_until(graph, x, add_tol, threads, cap, *, accept=0.0, stop=None):
    """:func:`search_cycles` over all edges, in parts, until ``stop()`` is true.

    The edges are searched in consecutive parts of ``max(MIN_PART_EDGES, m /
    SEARCH_PARTS)``; ``stop`` (a callable, or None) is asked after each part but the
    last. The cycles of a complete search are those of one :func:`search_cycles` call
    (in another order: each edge's cycle depends on ``x`` only), so the parts change
    only how soon a time limit or Ctrl-C is answered: within about 1/256 of a call.

    Returns
    -------
    off, mem : ndarray of int64
        Flat cycle list of the edges searched.
    worst : float
        As :func:`search_cycles`, over the edges searched.
    cap, nbytes : int
        As :func:`search_cycles` (``nbytes``: the largest part's buffers and the list).
    complete : bool
        False when ``stop()`` ended the search early.
    """
    edges = graph.edges
    ne = edges.shape[0]
    step = max(MIN_PART_EDGES, -(-ne // SEARCH_PARTS))
    found = []
    worst, nbytes = 0.0, 0
    complete = True
    for start in range(0, ne, step):
        off, mem, w, cap, nb = search_cycles(graph, x, edges[start: start + step], add_tol,
                                             threads, cap, accept=accept)
        found.append((off, mem))
        worst, nbytes = max(worst, w), max(nbytes, nb)
        if stop is not None and start + step < ne and stop():
            complete = False
            break
    off, mem = concat_cycles(found)
    return off, mem, worst, cap, nbytes + int(off.nbytes + mem.nbytes), complete


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
