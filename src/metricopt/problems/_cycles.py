"""Cycle inequalities of MET(G): exact violation and separation by shortest paths.

For edge variables ``x`` on a graph, ``x`` lies in MET(G) iff for every edge
``e = (u, v)``, ``x_e <= dist(u, v)`` where ``dist`` is the shortest-path distance with
the ``x`` values as lengths. Zero-length edges are real edges here (a CSR built from
``x`` would silently drop them), so the kernels carry edge ids, not lengths, in the
adjacency structure.
"""

import numba
import numpy as np

__all__ = ["edge_csr", "max_cycle_violation", "sssp", "violated_cycles"]


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
def sssp(s, bound, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done, touched):
    """Dijkstra from ``s`` with lengths ``max(x, 0)`` on edge ids, stopped at ``bound``.

    A binary heap with lazy deletion. ``dist`` must be +inf and ``done`` False on entry
    for every node. Nodes are settled while their distance is below ``bound`` (``inf``:
    all reachable ones); ``pred[w]`` is the edge id through which ``w`` was reached.
    Every node whose ``dist`` was written is listed in ``touched`` (returned count), so
    the caller can reset only those. Zero-length edges are ordinary edges. The one
    shortest-path kernel of the package: used here and by the Project and Forget oracle
    (:mod:`metricopt.solvers._pf_kernels`).
    """
    nt = 0
    dist[s] = 0.0
    pred[s] = -1
    touched[nt] = s
    nt += 1
    heap_d[0] = 0.0
    heap_v[0] = s
    size = 1
    while size > 0:
        d = heap_d[0]
        u = heap_v[0]
        size -= 1
        if size > 0:
            ld = heap_d[size]
            lv = heap_v[size]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and heap_d[c + 1] < heap_d[c]:
                    c += 1
                if heap_d[c] < ld:
                    heap_d[i] = heap_d[c]
                    heap_v[i] = heap_v[c]
                    i = c
                else:
                    break
            heap_d[i] = ld
            heap_v[i] = lv
        if done[u] or d > dist[u]:
            continue
        if d >= bound:
            break
        done[u] = True
        for p in range(indptr[u], indptr[u + 1]):
            w = nbrs[p]
            if done[w]:
                continue
            le = x[eids[p]]
            if le < 0.0:
                le = 0.0
            nd = d + le
            if nd < dist[w]:
                if dist[w] == np.inf:
                    touched[nt] = w
                    nt += 1
                dist[w] = nd
                pred[w] = eids[p]
                i = size
                size += 1
                while i > 0:
                    par = (i - 1) // 2
                    if heap_d[par] > nd:
                        heap_d[i] = heap_d[par]
                        heap_v[i] = heap_v[par]
                        i = par
                    else:
                        break
                heap_d[i] = nd
                heap_v[i] = w
    return nt



@numba.njit(cache=True)
def _max_violation_kernel(n, indptr, nbrs, eids, x):
    m2 = nbrs.shape[0]
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    heap_d = np.empty(m2 + 1)
    heap_v = np.empty(m2 + 1, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    worst = 0.0
    for s in range(n):
        # only edges (s, t) with t > s are checked from s
        has = False
        for p in range(indptr[s], indptr[s + 1]):
            if nbrs[p] > s:
                has = True
                break
        if not has:
            continue
        nt = sssp(s, np.inf, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done, touched)
        for p in range(indptr[s], indptr[s + 1]):
            t = nbrs[p]
            if t > s:
                v = x[eids[p]] - dist[t]
                if v > worst:
                    worst = v
        for q in range(nt):
            dist[touched[q]] = np.inf
            done[touched[q]] = False
    return worst


def max_cycle_violation(x, n, pairs):
    """Largest violation of a cycle inequality of MET(G) by edge values ``x``.

    Negative values count as length 0 in the paths (their own violation is a bound
    violation, measured elsewhere).
    """
    if pairs.shape[0] == 0:
        return 0.0
    indptr, nbrs, eids = edge_csr(n, pairs)
    return float(_max_violation_kernel(n, indptr, nbrs, eids, np.ascontiguousarray(x, dtype=np.float64)))


@numba.njit(cache=True)
def _separate_kernel(n, indptr, nbrs, eids, pairs, x, tol):
    m2 = nbrs.shape[0]
    m = pairs.shape[0]
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    heap_d = np.empty(m2 + 1)
    heap_v = np.empty(m2 + 1, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    offsets = [0]
    members = [0]  # list typed as int64; first element dropped below
    members.pop()
    viol = [0.0]
    viol.pop()
    for s in range(n):
        has = False
        for p in range(indptr[s], indptr[s + 1]):
            if nbrs[p] > s:
                has = True
                break
        if not has:
            continue
        nt = sssp(s, np.inf, indptr, nbrs, eids, x, dist, pred, heap_d, heap_v, done, touched)
        for p in range(indptr[s], indptr[s + 1]):
            t = nbrs[p]
            e = eids[p]
            if t > s and x[e] - dist[t] > tol:
                # cycle: e first, then the path edges from t back to s
                members.append(e)
                w = t
                while w != s:
                    f = pred[w]
                    members.append(f)
                    a = pairs[f, 0]
                    b = pairs[f, 1]
                    w = a if b == w else b
                offsets.append(len(members))
                viol.append(x[e] - dist[t])
        for q in range(nt):
            dist[touched[q]] = np.inf
            done[touched[q]] = False
    return np.array(offsets, dtype=np.int64), np.array(members, dtype=np.int64), np.array(viol)


def violated_cycles(x, n, pairs, tol=1e-9):
    """One violated cycle inequality per edge whose value exceeds its shortest path.

    For each edge ``e = (s, t)`` with ``x_e > dist(s, t) + tol`` the cycle made of ``e``
    and a shortest ``s``-``t`` path is returned (PF §2.1 separation oracle).

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
    indptr, nbrs, eids = edge_csr(n, pairs)
    return _separate_kernel(n, indptr, nbrs, eids, np.ascontiguousarray(pairs, dtype=np.int64),
                            np.ascontiguousarray(x, dtype=np.float64), float(tol))
