"""Enumeration of the triangles and open wedges of a graph (numba kernels)."""

import numba
import numpy as np

__all__ = ["triangles_and_wedges", "csr_triangles", "csr_triangle_count", "open_wedge_count",
           "open_wedge_rows"]


@numba.njit(cache=True)
def _enumerate(indptr, nbrs, eids, n, fill, tri, wed, wedges=True):
    """Count (fill=False) or write (fill=True) triangles and open wedges.

    A triangle {i, j, k} is reported once, at its smallest node, as edge ids
    (e_ij, e_ik, e_jk); an open wedge a-k-b (a < b, (a, b) not an edge) is reported at
    its centre k as (e_ak, e_bk), unless ``wedges`` is False (then only triangles are
    counted and written).
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
                elif wedges:
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
    indptr, nbrs, eids = _adjacency(graph)
    empty3 = np.empty((0, 3), dtype=np.int64)
    empty2 = np.empty((0, 2), dtype=np.int64)
    nt, nw = _enumerate(indptr, nbrs, eids, graph.n, False, empty3, empty2)
    tri = np.empty((nt, 3), dtype=np.int64)
    wed = np.empty((nw, 2), dtype=np.int64)
    _enumerate(indptr, nbrs, eids, graph.n, True, tri, wed)
    return tri, wed


def csr_triangle_count(n, indptr, nbrs, eids):
    """Number of triangles of a graph given by its sorted edge-id CSR
    (:func:`._cycles.edge_csr`), counted without storing them."""
    empty3 = np.empty((0, 3), dtype=np.int64)
    empty2 = np.empty((0, 2), dtype=np.int64)
    return int(_enumerate(indptr, nbrs, eids, n, False, empty3, empty2, False)[0])


def csr_triangles(n, indptr, nbrs, eids, max_count=None):
    """The triangles of a graph given by its sorted edge-id CSR (:func:`._cycles.edge_csr`).

    Returns an ``(t, 3)`` int64 array of edge ids, each triangle once (as
    :func:`triangles_and_wedges`), without forming the open wedges; an empty one when
    there are more than ``max_count`` (counted before anything is allocated).
    """
    empty2 = np.empty((0, 2), dtype=np.int64)
    nt = csr_triangle_count(n, indptr, nbrs, eids)
    if max_count is not None and nt > max_count:
        return np.empty((0, 3), dtype=np.int64)
    tri = np.empty((nt, 3), dtype=np.int64)
    _enumerate(indptr, nbrs, eids, n, True, tri, empty2, False)
    return tri


def open_wedge_count(graph):
    """Number of open wedges of ``graph`` (counted without storing them)."""
    indptr, nbrs, eids = _adjacency(graph)
    empty3 = np.empty((0, 3), dtype=np.int64)
    empty2 = np.empty((0, 2), dtype=np.int64)
    return int(_enumerate(indptr, nbrs, eids, graph.n, False, empty3, empty2)[1])


def _adjacency(graph):
    """Sorted CSR adjacency ``(indptr, neighbours, edge ids)`` of ``graph``."""
    from ._cycles import edge_csr

    return edge_csr(graph.n, np.asarray(graph.edges, dtype=np.int64))


def open_wedge_rows(graph):
    """The triangle inequalities of the open wedges of ``graph``, in packed pair indices.

    For every path ``i - k - j`` whose ends are not adjacent, the row ``(a, b, c)``
    stands for ``x_a <= x_b + x_c`` with ``a = {i, j}`` (the non-edge) and ``b = {i, k}``,
    ``c = {j, k}`` (the edges). These are the constraints of the STC+ LP [1]_, and exactly
    the triangle inequalities that ``x = 1 - adjacency`` violates.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    ndarray of shape (w, 3), int64
        One row per open wedge, in the order of :func:`triangles_and_wedges`.

    References
    ----------
    .. [1] Veldt, N. (2022). Correlation clustering via strong triadic closure labeling:
           fast approximation algorithms and practical lower bounds. ICML 2022, PMLR 162,
           22060-22083.
    """
    from ._pairs import pair_index

    _, wed = triangles_and_wedges(graph)
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    e1, e2 = wed[:, 0], wed[:, 1]
    u1, v1, u2, v2 = u[e1], v[e1], u[e2], v[e2]
    # the centre is the endpoint the two edges share; the ends are the others
    centre = np.where((u1 == u2) | (u1 == v2), u1, v1)
    end1 = np.where(u1 == centre, v1, u1)
    end2 = np.where(u2 == centre, v2, u2)
    n = graph.n
    rows = np.empty((wed.shape[0], 3), dtype=np.int64)
    rows[:, 0] = pair_index(end1, end2, n)
    rows[:, 1] = pair_index(u1, v1, n)
    rows[:, 2] = pair_index(u2, v2, n)
    return rows
