"""Enumeration of the triangles and open wedges of a graph (numba kernels)."""

import numba
import numpy as np

__all__ = ["triangles_and_wedges"]


@numba.njit(cache=True)
def _enumerate(indptr, nbrs, eids, n, fill, tri, wed):
    """Count (fill=False) or write (fill=True) triangles and open wedges.

    A triangle {i, j, k} is reported once, at its smallest node, as edge ids
    (e_ij, e_ik, e_jk); an open wedge a-k-b (a < b, (a, b) not an edge) is reported at
    its centre k as (e_ak, e_bk).
    """
    mark = np.full(n, -1, dtype=np.int64)
    nt = 0
    nw = 0
    for k in range(n):
        for p in range(indptr[k], indptr[k + 1]):
            a = nbrs[p]
            # mark the neighbours of a (with the edge id of (a, .))
            for q in range(indptr[a], indptr[a + 1]):
                mark[nbrs[q]] = eids[q]
            for r in range(p + 1, indptr[k + 1]):
                b = nbrs[r]
                e_ab = mark[b]
                if e_ab >= 0:
                    if k < a:  # a < b by sorted order, so k is the smallest node
                        if fill:
                            tri[nt, 0] = eids[p]  # (k, a)
                            tri[nt, 1] = eids[r]  # (k, b)
                            tri[nt, 2] = e_ab  # (a, b)
                        nt += 1
                else:
                    if fill:
                        wed[nw, 0] = eids[p]
                        wed[nw, 1] = eids[r]
                    nw += 1
            for q in range(indptr[a], indptr[a + 1]):
                mark[nbrs[q]] = -1
    return nt, nw


def triangles_and_wedges(graph):
    """All triangles and open wedges of ``graph`` as rows of edge indices.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    triangles : ndarray of shape (t, 3), int64
        Edge indices ``(e_ij, e_ik, e_jk)`` of each triangle, once.
    wedges : ndarray of shape (w, 2), int64
        Edge indices ``(e_ik, e_jk)`` of each path i-k-j whose ends are not adjacent.
    """
    n, m = graph.n, graph.m
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    eid = np.concatenate([np.arange(m), np.arange(m)])
    order = np.lexsort((dst, src))
    src, dst, eid = src[order], dst[order], eid[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    nbrs = np.ascontiguousarray(dst, dtype=np.int64)
    eids = np.ascontiguousarray(eid, dtype=np.int64)
    empty3 = np.empty((0, 3), dtype=np.int64)
    empty2 = np.empty((0, 2), dtype=np.int64)
    nt, nw = _enumerate(indptr, nbrs, eids, n, False, empty3, empty2)
    tri = np.empty((nt, 3), dtype=np.int64)
    wed = np.empty((nw, 2), dtype=np.int64)
    _enumerate(indptr, nbrs, eids, n, True, tri, wed)
    return tri, wed
