"""Separation kernel of the cluster-deletion cutting-plane LP (see :mod:`.deletion_lp`).

The graph is a CSR with sorted neighbours (``indptr, nbrs``) and the edge id of each
entry (``eids``); ``x`` holds one value per edge (1: deleted). :func:`independent_set_rows_reference`
is the slow reference the tests compare the kernel with.
"""

import numba
import numpy as np

__all__ = ["violated_independent_sets", "independent_set_rows_reference"]


@numba.njit(cache=True)
def violated_independent_sets(n, indptr, nbrs, eids, x, max_cand, tries, tol, offsets, members,
                              viol):
    """Greedy separation of the neighbourhood independent-set rows, ``tries`` per centre.

    For a centre ``j`` and an independent set ``I`` of its neighbours (no two adjacent),
    a clustering into cliques keeps at most one edge ``(j, a)``, ``a`` in ``I``::

        sum_{a in I} x_ja >= |I| - 1.

    With ``y = 1 - x`` the row is violated when ``sum_{a in I} y_ja > 1``. The
    candidates of ``j`` are its neighbours with ``y_ja > tol``, at most ``max_cand`` of
    them, largest ``y`` first (ties: smaller neighbour first); try ``t`` starts from the
    ``t``-th candidate and adds every later candidate in that order that is adjacent to
    no member so far. A set of at least two members whose ``sum y`` exceeds 1 by more
    than ``tol`` is written: ``members`` gets the edge ids ``e_ja`` (in the order added),
    ``offsets`` the row boundaries, ``viol`` the excess. Returns the number of rows; it
    stops when ``offsets`` or ``members`` is full.
    """
    cap_rows = offsets.size - 1
    cap_members = members.size
    blocked = np.full(n, -1, dtype=np.int64)
    cand = np.empty(max_cand, dtype=np.int64)  # positions in nbrs
    cy = np.empty(max_cand)
    rows = 0
    offsets[0] = 0
    stamp = 0
    for j in range(n):
        # the candidates: insertion into a list kept sorted by decreasing y
        k = 0
        for p in range(indptr[j], indptr[j + 1]):
            y = 1.0 - x[eids[p]]
            if y <= tol:
                continue
            if k == max_cand and y <= cy[k - 1]:
                continue
            q = k if k < max_cand else k - 1
            while q > 0 and cy[q - 1] < y:
                if q < max_cand:
                    cand[q] = cand[q - 1]
                    cy[q] = cy[q - 1]
                q -= 1
            cand[q] = p
            cy[q] = y
            if k < max_cand:
                k += 1
        for t in range(min(tries, k)):
            stamp += 1
            total = 0.0
            start = offsets[rows]
            size = 0
            for step in range(k):
                i = t if step == 0 else (step - 1 if step <= t else step)
                a = nbrs[cand[i]]
                if blocked[a] == stamp:
                    continue
                if start + size >= cap_members:
                    return rows
                members[start + size] = eids[cand[i]]
                size += 1
                total += cy[i]
                for q in range(indptr[a], indptr[a + 1]):
                    blocked[nbrs[q]] = stamp
            if size >= 2 and total - 1.0 > tol:
                if rows == cap_rows:
                    return rows
                viol[rows] = total - 1.0
                offsets[rows + 1] = start + size
                rows += 1
    return rows


def independent_set_rows_reference(n, indptr, nbrs, eids, x, max_cand, tries, tol):
    """Pure-Python :func:`violated_independent_sets`: a list of ``(edge ids, excess)``."""
    out = []
    for j in range(n):
        entries = [(1.0 - float(x[eids[p]]), int(nbrs[p]), p)
                   for p in range(indptr[j], indptr[j + 1]) if 1.0 - x[eids[p]] > tol]
        entries.sort(key=lambda e: (-e[0], e[1]))
        entries = entries[:max_cand]
        for t in range(min(tries, len(entries))):
            order = [entries[t]] + entries[:t] + entries[t + 1:]
            chosen, total, edges = [], 0.0, []
            for y, a, p in order:
                if any(a in set(nbrs[indptr[b]:indptr[b + 1]].tolist()) for b in chosen):
                    continue
                chosen.append(a)
                edges.append(int(eids[p]))
                total += y
            if len(chosen) >= 2 and total - 1.0 > tol:
                out.append((edges, total - 1.0))
    return out
