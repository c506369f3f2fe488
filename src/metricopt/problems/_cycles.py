"""Cycle inequalities of MET(G): exact violation and separation by shortest paths.

For edge variables ``x`` on a graph, ``x`` lies in MET(G) iff for every edge
``e = (u, v)``, ``x_e <= dist(u, v)`` where ``dist`` is the shortest-path distance with
the ``x`` values as lengths. Zero-length edges are real edges here (a CSR built from
``x`` would silently drop them), so the kernels carry edge ids, not lengths, in the
adjacency structure.

Separation (:func:`separate_edges`) runs one bidirectional search per edge, bounded by
the edge's own value; :func:`violated_cycles_reference` (a full Dijkstra from every
node) is its slow reference.

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853 (section 2.1, the MET(G) oracle).
.. [2] Pohl, I. (1971). Bi-directional search. Machine Intelligence 6, 127-140.
.. [3] Goldberg, A. V., & Harrelson, C. (2005). Computing the shortest path: A* search
       meets graph theory. SODA 2005, 156-165.
"""

import numba
import numpy as np

__all__ = ["edge_csr", "max_cycle_violation", "violated_cycles", "separate_edges",
           "separate_share", "collect_cycles", "shortest_path_below", "sssp",
           "violated_cycles_reference"]


def edge_csr(n, pairs):
    """CSR adjacency whose entries are edge ids: ``(indptr, nbrs, eids)``."""
    m = pairs.shape[0]
    u, v = pairs[:, 0], pairs[:, 1]
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    eid = np.concatenate([np.arange(m), np.arange(m)])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return (indptr, np.ascontiguousarray(dst[order], dtype=np.int64),
            np.ascontiguousarray(eid[order], dtype=np.int64))


@numba.njit(inline="always")
def _heap_push(heap_d, heap_v, row, size, d, v):
    """Push ``(d, v)`` on row ``row`` of a binary min-heap pair; returns the new size."""
    i = size
    while i > 0:
        par = (i - 1) // 2
        if heap_d[row, par] > d:
            heap_d[row, i] = heap_d[row, par]
            heap_v[row, i] = heap_v[row, par]
            i = par
        else:
            break
    heap_d[row, i] = d
    heap_v[row, i] = v
    return size + 1


@numba.njit(inline="always")
def _heap_pop(heap_d, heap_v, row, size):
    """Drop the top of row ``row`` of a binary min-heap pair; returns the new size."""
    size -= 1
    if size > 0:
        ld = heap_d[row, size]
        lv = heap_v[row, size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and heap_d[row, c + 1] < heap_d[row, c]:
                c += 1
            if heap_d[row, c] < ld:
                heap_d[row, i] = heap_d[row, c]
                heap_v[row, i] = heap_v[row, c]
                i = c
            else:
                break
        heap_d[row, i] = ld
        heap_v[row, i] = lv
    return size


@numba.njit(inline="always")
def search_buffers(n, m2):
    """Per-worker buffers of :func:`sssp` and :func:`shortest_path_below`.

    ``(dist, pred, done, heap_d, heap_v, touched)``, two rows each (forward and
    backward search), ``dist`` +inf and ``done`` False: about ``50 n + 32 m2`` bytes
    for ``m2`` adjacency entries.
    """
    return (np.full((2, n), np.inf), np.empty((2, n), dtype=np.int64),
            np.zeros((2, n), dtype=np.bool_), np.empty((2, m2 + 1)),
            np.empty((2, m2 + 1), dtype=np.int64), np.empty((2, n), dtype=np.int64))


@numba.njit(inline="always")
def sssp(s, bound, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done, touched):
    """Dijkstra from ``s`` with lengths ``max(x, 0)`` on edge ids, stopped at ``bound``.

    A binary heap with lazy deletion, on row 0 of the buffers of :func:`search_buffers`
    (``dist`` must be +inf and ``done`` False there for every node). Nodes are settled
    while their distance is below ``bound`` (``inf``: all reachable ones);
    ``pred[0, w]`` is the edge id through which ``w`` was reached. Every node whose
    ``dist`` was written is listed in ``touched[0]`` (returned count), so the caller can
    reset only those. Zero-length edges are ordinary edges. The slow reference of
    :func:`shortest_path_below`.
    """
    nt = 0
    dist[0, s] = 0.0
    pred[0, s] = -1
    touched[0, nt] = s
    nt += 1
    heap_d[0, 0] = 0.0
    heap_v[0, 0] = s
    size = 1
    while size > 0:
        d = heap_d[0, 0]
        u = heap_v[0, 0]
        size = _heap_pop(heap_d, heap_v, 0, size)
        if done[0, u] or d > dist[0, u]:
            continue
        if d >= bound:
            break
        done[0, u] = True
        for p in range(indptr[u], indptr[u + 1]):
            w = nbrs[p]
            if done[0, w]:
                continue
            le = x[eids[p]]
            if le < 0.0:
                le = 0.0
            nd = d + le
            if nd < dist[0, w]:
                if dist[0, w] == np.inf:
                    touched[0, nt] = w
                    nt += 1
                dist[0, w] = nd
                pred[0, w] = eids[p]
                size = _heap_push(heap_d, heap_v, 0, size, nd, w)
    return nt


@numba.njit(inline="always")
def shortest_path_below(a, b, bound, accept, indptr, nbrs, eids, x, dist, pred, done, heap_d,
                        heap_v, touched):
    """Length of a shortest ``a``-``b`` path (lengths ``max(x, 0)``) when it is below ``bound``.

    Bidirectional Dijkstra: a forward search from ``a`` (row 0 of the buffers of
    :func:`search_buffers`) and a backward one from ``b`` (row 1), the side with the
    smaller heap settled next (Pohl's cardinality rule: on plateaus of zero lengths the
    two sides then grow alike; choosing by frontier distance let one side flood the
    plateau, 5x slower on a 20,000-node signed graph), stopped as soon as the two
    frontier distances add up to ``min(mu, bound)``, ``mu`` the shortest path met so far
    (an edge from a settled node to a node labelled by the other side). Correct for
    lengths ``>= 0`` and any alternation of the sides (Goldberg & Harrelson 2005,
    section 3). The search also stops as soon as a path of length ``<= accept`` is met:
    with ``accept = 0`` (no shorter path exists) the answer is still the shortest path;
    with ``accept > 0`` it is a path below ``bound``, not necessarily the shortest.

    For a path of length ``L`` the two searches reach about ``L / 2`` each. In a
    small-world graph whose lengths are near 0 inside clusters, the ball of radius ``L``
    around a node is most of the graph, and two balls of radius ``L / 2`` a small part
    of it: this is what makes the cycle oracle of MET(G) scale (see
    :func:`separate_edges`).

    Returns
    -------
    mu : float
        The distance when below ``bound`` (the length of the path found when it is
        ``<= accept``), else ``bound``.
    via : int
        Edge id joining the two search trees on a shortest path (-1 when ``mu`` is
        ``bound``): the path is the forward tree's path to ``u``, the edge ``via = (u,
        v)``, the backward tree's path from ``v``; see :func:`path_edges`.
    u, v : int
        The ends of ``via`` (forward side, backward side).
    nt0, nt1 : int
        Nodes labelled by each side (listed in ``touched[0]``, ``touched[1]``); reset
        them with :func:`reset_search`.
    """
    mu = bound
    via = -1
    mu_u = -1
    mu_v = -1
    dist[0, a] = 0.0
    dist[1, b] = 0.0
    pred[0, a] = -1
    pred[1, b] = -1
    touched[0, 0] = a
    touched[1, 0] = b
    nt0 = 1
    nt1 = 1
    heap_d[0, 0] = 0.0
    heap_v[0, 0] = a
    heap_d[1, 0] = 0.0
    heap_v[1, 0] = b
    size0 = 1
    size1 = 1
    while size0 > 0 and size1 > 0:
        if heap_d[0, 0] + heap_d[1, 0] >= mu or mu <= accept:
            break
        side = 0 if size0 <= size1 else 1
        other = 1 - side
        d = heap_d[side, 0]
        u = heap_v[side, 0]
        if side == 0:
            size0 = _heap_pop(heap_d, heap_v, 0, size0)
        else:
            size1 = _heap_pop(heap_d, heap_v, 1, size1)
        if done[side, u] or d > dist[side, u]:
            continue
        done[side, u] = True
        for p in range(indptr[u], indptr[u + 1]):
            w = nbrs[p]
            le = x[eids[p]]
            if le < 0.0:
                le = 0.0
            nd = d + le
            dw = dist[other, w]
            if dw < np.inf and nd + dw < mu:
                mu = nd + dw
                via = eids[p]
                mu_u = u if side == 0 else w
                mu_v = w if side == 0 else u
                if mu <= accept:
                    break
            if done[side, w] or nd >= dist[side, w]:
                continue
            if dist[side, w] == np.inf:
                if side == 0:
                    touched[0, nt0] = w
                    nt0 += 1
                else:
                    touched[1, nt1] = w
                    nt1 += 1
            dist[side, w] = nd
            pred[side, w] = eids[p]
            if side == 0:
                size0 = _heap_push(heap_d, heap_v, 0, size0, nd, w)
            else:
                size1 = _heap_push(heap_d, heap_v, 1, size1, nd, w)
    return mu, via, mu_u, mu_v, nt0, nt1


@numba.njit(inline="always")
def reset_search(dist, done, touched, nt0, nt1):
    """Put back +inf and False where a search wrote (rows 0 and 1)."""
    for q in range(nt0):
        dist[0, touched[0, q]] = np.inf
        done[0, touched[0, q]] = False
    for q in range(nt1):
        dist[1, touched[1, q]] = np.inf
        done[1, touched[1, q]] = False


@numba.njit(inline="always")
def path_edges(pred, pairs, via, u, v, out, k):
    """Write the edges of the path found by :func:`shortest_path_below` to ``out[k:]``.

    The backward tree's edges from ``v`` to the target, ``via``, then the forward
    tree's edges from ``u`` to the source. Returns the next free index; with
    ``out`` of length 0 only counts (returns ``k`` plus the number of edges).
    """
    write = out.shape[0] > 0
    w = v
    while pred[1, w] >= 0:
        f = pred[1, w]
        if write:
            out[k] = f
        k += 1
        w = pairs[f, 0] if pairs[f, 1] == w else pairs[f, 1]
    if write:
        out[k] = via
    k += 1
    w = u
    while pred[0, w] >= 0:
        f = pred[0, w]
        if write:
            out[k] = f
        k += 1
        w = pairs[f, 0] if pairs[f, 1] == w else pairs[f, 1]
    return k


# ------------------------------------------------------------------ separation
def separate_edges(indptr, nbrs, eids, pairs, x, edges, pos, add_tol, accept, out_mem, out_off,
                   out_viol, ncyc, nmem, worst, threads=None):
    """Separation of MET(G) over a set of edges: one shortest-path cycle per violated edge.

    The edges ``edges`` are dealt to the ``T = pos.shape[0]`` workers round robin (worker
    ``t`` takes ``edges[t], edges[t + T], ...``), each with its own search buffers
    (:func:`search_buffers`) and its own output row, so no n x n distance matrix is ever
    formed. For edge ``e = (a, b)`` a bidirectional search (:func:`shortest_path_below`)
    looks for an ``a``-``b`` path shorter than ``x_e - min(add_tol, worst)``: lengths are
    at most 1, so the search is bounded by the edge's own value, and an edge whose value
    is below that threshold is skipped. When ``x_e - dist(a, b) > add_tol`` the cycle
    ``e`` + shortest path is written (edge ``e`` first, then the path; see
    :func:`path_edges`).

    Parameters
    ----------
    indptr, nbrs, eids : ndarray of int64
        CSR adjacency whose entries carry edge ids (see :func:`edge_csr`).
    pairs : ndarray of shape (m, 2), int64
    x : ndarray of shape (m,)
    edges : ndarray of int64
        Edge ids to check.
    pos : ndarray of shape (T,), int64
        Next index into ``edges`` of each worker (start with ``arange(T)``); on return
        ``>= len(edges)`` for a finished worker, else the edge where its output row ran
        full (call again with larger rows; finished work is kept).
    add_tol : float
        Smallest violation of a cycle written (``inf``: none, only ``worst``).
    accept : float
        0: the exact separation. In ``[0, 1)``: the search of edge ``e`` takes the first
        path of length at most ``accept * x_e`` it meets (a cycle violated by at least
        ``(1 - accept) x_e``) instead of proving a shortest one; ``worst`` is then only
        a lower bound on the largest violation. Far from feasibility the proof is most
        of a search's work (a 20,000-node signed graph: ``accept = 0.25`` 3.8x fewer
        edge relaxations, the cycles' violations 86% of the shortest paths').
    out_mem : ndarray of shape (T, cap), int64
    out_off : ndarray of shape (T, cap + 1), int64
        Offsets of each worker's cycles in its row of ``out_mem`` (``out_off[t, 0] = 0``).
    out_viol : ndarray of shape (T, cap)
    ncyc, nmem : ndarray of shape (T,), int64
        Cycles and ids written per worker so far (updated).
    worst : ndarray of shape (T,)
        Largest ``x_e - dist(a, b)`` (at least 0) per worker over its finished edges
        (updated): together, the exact largest cycle-inequality violation.
    threads : int or None
        Threads that run the workers (default: numba's thread count,
        :func:`metricopt._threads.run_workers`); the outputs do not depend on it.

    Notes
    -----
    The search of an edge stops at the first shortest path found whatever the
    threshold, so the cycles written do not depend on ``worst`` (nor on ``T``): only
    which edges are searched to the end does.
    """
    from .._threads import run_workers

    run_workers(lambda t: separate_share(indptr, nbrs, eids, pairs, x, edges, pos, add_tol,
                                         accept, out_mem, out_off, out_viol, ncyc, nmem, worst,
                                         t), pos.shape[0], threads)


@numba.njit(cache=True, nogil=True)
def separate_share(indptr, nbrs, eids, pairs, x, edges, pos, add_tol, accept, out_mem, out_off,
                   out_viol, ncyc, nmem, worst, t):
    """Worker ``t``'s share of :func:`separate_edges`: its edges from ``pos[t]`` (every
    ``T``-th, ``T = pos.shape[0]``) with its own search buffers, its output row and
    ``pos[t]``, ``ncyc[t]``, ``nmem[t]``, ``worst[t]`` updated."""
    T = pos.shape[0]
    n = indptr.shape[0] - 1
    m2 = nbrs.shape[0]
    cap = out_mem.shape[1]
    ne = edges.shape[0]
    dist, pred, done, heap_d, heap_v, touched = search_buffers(n, m2)
    count = np.empty(0, dtype=np.int64)
    i = pos[t]
    nc = ncyc[t]
    nm = nmem[t]
    wmax = worst[t]
    while i < ne:
        e = edges[i]
        xe = x[e]
        thr = add_tol if add_tol < wmax else wmax
        if xe - thr <= 0.0:
            i += T
            continue
        mu, via, u, v, nt0, nt1 = shortest_path_below(
            pairs[e, 0], pairs[e, 1], xe - thr, accept * xe, indptr, nbrs, eids, x, dist,
            pred, done, heap_d, heap_v, touched)
        fits = True
        if via >= 0:
            viol = xe - mu
            if viol > wmax:
                wmax = viol
            if viol > add_tol:
                need = path_edges(pred, pairs, via, u, v, count, 1)
                fits = nc + 1 <= cap and nm + need <= cap
                if fits:
                    out_mem[t, nm] = e
                    nm = path_edges(pred, pairs, via, u, v, out_mem[t], nm + 1)
                    out_viol[t, nc] = viol
                    nc += 1
                    out_off[t, nc] = nm
        reset_search(dist, done, touched, nt0, nt1)
        if not fits:
            break
        i += T
    pos[t] = i
    ncyc[t] = nc
    nmem[t] = nm
    worst[t] = wmax


def separate_edges_serial(indptr, nbrs, eids, pairs, x, edges, pos, add_tol, accept, out_mem,
                          out_off, out_viol, ncyc, nmem, worst):
    """:func:`separate_edges` on the calling thread only: the same cycles, for callers
    that are threads themselves (a Dask worker's task pool)."""
    separate_edges(indptr, nbrs, eids, pairs, x, edges, pos, add_tol, accept, out_mem, out_off,
                   out_viol, ncyc, nmem, worst, threads=1)


def collect_cycles(indptr, nbrs, eids, pairs, x, edges, add_tol, threads, cap, *,
                   accept=0.0, parallel=True):
    """Run :func:`separate_edges` over ``edges``, growing its output rows until all fit.

    Returns
    -------
    off, mem, viol : ndarray
        Flat cycle list in the workers' order (worker 0's cycles first, each worker's in
        the order of ``edges``) and the cycles' violations.
    worst : float
        Exact largest violation over ``edges`` (with ``accept > 0``: the largest
        violation of the cycles found, a lower bound).
    cap : int
        The row length that sufficed (a good start for the next call).
    nbytes : int
        Bytes of the buffers used (rows and per-worker search buffers).
    """
    kernel = separate_edges if parallel else separate_edges_serial
    x = np.ascontiguousarray(x, dtype=np.float64)
    T = max(1, int(threads))
    pos = np.arange(T, dtype=np.int64)
    ncyc = np.zeros(T, dtype=np.int64)
    nmem = np.zeros(T, dtype=np.int64)
    worst = np.zeros(T)
    cap = max(1, int(cap)) if np.isfinite(add_tol) else 1
    mem = np.empty((T, cap), dtype=np.int64)
    off = np.zeros((T, cap + 1), dtype=np.int64)
    viol = np.empty((T, cap))
    ne = edges.shape[0]
    while True:
        kernel(indptr, nbrs, eids, pairs, x, edges, pos, float(add_tol), float(accept), mem, off,
               viol, ncyc, nmem, worst)
        if np.all(pos >= ne):
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
    offs = [np.zeros(1, dtype=np.int64)]
    base = 0
    for t in range(T):
        offs.append(off[t, 1: ncyc[t] + 1] + base)
        base += int(nmem[t])
    flat_off = np.concatenate(offs)
    flat_mem = np.concatenate([mem[t, : nmem[t]] for t in range(T)])
    flat_viol = np.concatenate([viol[t, : ncyc[t]] for t in range(T)])
    n = indptr.shape[0] - 1
    nbytes = int(mem.nbytes + off.nbytes + viol.nbytes + T * (50 * n + 32 * nbrs.shape[0]))
    return flat_off, flat_mem, flat_viol, float(worst.max(initial=0.0)), cap, nbytes


def max_cycle_violation(x, n, pairs, threads=None):
    """Largest violation of a cycle inequality of MET(G) by edge values ``x``.

    Negative values count as length 0 in the paths (their own violation is a bound
    violation, measured elsewhere). One bidirectional search per edge, bounded by its
    value less the largest violation found so far (:func:`separate_edges`); ``threads``
    workers (default: numba's thread count).
    """
    if pairs.shape[0] == 0:
        return 0.0
    pairs = np.ascontiguousarray(pairs, dtype=np.int64)
    indptr, nbrs, eids = edge_csr(n, pairs)
    T = numba.get_num_threads() if threads is None else int(threads)
    edges = np.arange(pairs.shape[0], dtype=np.int64)
    return collect_cycles(indptr, nbrs, eids, pairs, x, edges, np.inf, T, 1)[3]


def violated_cycles(x, n, pairs, tol=1e-9):
    """One violated cycle inequality per edge whose value exceeds its shortest path.

    For each edge ``e = (s, t)`` with ``x_e > dist(s, t) + tol`` the cycle made of ``e``
    and a shortest ``s``-``t`` path is returned (PF §2.1 separation oracle), in the
    order of the edges (:func:`separate_edges` on one worker).

    Returns
    -------
    offsets : ndarray of shape (k + 1,)
    members : ndarray
        ``members[offsets[c]:offsets[c+1]]`` are the edge ids of cycle ``c``; the first
        is the edge whose inequality ``x_e <= sum(rest)`` is violated.
    violation : ndarray of shape (k,)
    """
    if pairs.shape[0] == 0:
        return np.zeros(1, np.int64), np.empty(0, np.int64), np.empty(0)
    pairs = np.ascontiguousarray(pairs, dtype=np.int64)
    indptr, nbrs, eids = edge_csr(n, pairs)
    edges = np.arange(pairs.shape[0], dtype=np.int64)
    off, mem, viol, _, _, _ = collect_cycles(indptr, nbrs, eids, pairs, x, edges, float(tol), 1,
                                             max(1024, 4 * pairs.shape[0]), parallel=False)
    return off, mem, viol


# ------------------------------------------------------------ slow references
@numba.njit(cache=True)
def _reference_kernel(n, indptr, nbrs, eids, pairs, x, tol):
    dist, pred, done, heap_d, heap_v, touched = search_buffers(n, nbrs.shape[0])
    offsets = [0]
    members = [0]  # list typed as int64; first element dropped below
    members.pop()
    viol = [0.0]
    viol.pop()
    worst = 0.0
    for s in range(n):
        nt = sssp(s, np.inf, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done, touched)
        for p in range(indptr[s], indptr[s + 1]):
            t = nbrs[p]
            e = eids[p]
            if t <= s:  # each edge is checked from its smaller end
                continue
            v = x[e] - dist[0, t]
            worst = max(worst, v)
            if v > tol:
                # cycle: e first, then the path edges from t back to s
                members.append(e)
                w = t
                while w != s:
                    f = pred[0, w]
                    members.append(f)
                    w = pairs[f, 0] if pairs[f, 1] == w else pairs[f, 1]
                offsets.append(len(members))
                viol.append(v)
        for q in range(nt):
            dist[0, touched[0, q]] = np.inf
            done[0, touched[0, q]] = False
    return (np.array(offsets, dtype=np.int64), np.array(members, dtype=np.int64),
            np.array(viol), worst)


def violated_cycles_reference(x, n, pairs, tol=1e-9):
    """Slow reference of :func:`violated_cycles` and :func:`max_cycle_violation`.

    A full single-source Dijkstra (:func:`sssp`) from every node, each edge checked from
    its smaller end, cycles in the order of their source. Returns ``(offsets, members,
    violation, worst)``.
    """
    pairs = np.ascontiguousarray(pairs, dtype=np.int64)
    if pairs.shape[0] == 0:
        return np.zeros(1, np.int64), np.empty(0, np.int64), np.empty(0), 0.0
    indptr, nbrs, eids = edge_csr(n, pairs)
    off, mem, viol, worst = _reference_kernel(n, indptr, nbrs, eids, pairs,
                                              np.ascontiguousarray(x, dtype=np.float64),
                                              float(tol))
    return off, mem, viol, max(float(worst), 0.0)
