"""Sparsest cut's LP from the path rows: a compact start and an exact repair.

The Leighton-Rao relaxation of sparsest cut [1]_ minimises ``sum_e c_e x_e`` over the
edges ``e`` (``c_e >= 0``, every other pair costs 0) subject to ``sum x = s`` and the
triangle inequalities on all ``n (n-1) (n-2) / 2`` triples. Only its **path rows**

    x_ij <= x_ik + x_kj        for every node i and every edge (k, j), i not in {k, j},

at most ``2 m n`` of them, are needed (a compact formulation in the spirit of the
multicommodity-flow form of [1]_):

*Lemma.* Let ``x >= 0`` satisfy ``sum x = s`` and the path rows, and let ``d`` be the
shortest-path metric of the graph with edge lengths ``x_e`` (connected graph). Then
``d_e = x_e`` on every edge and ``d >= x`` on every pair, so ``d' = d * s / sum d`` is
feasible for the full LP with objective ``(s / sum d) * sum_e c_e x_e <= sum_e c_e x_e``.

*Proof.* Along a path ``i = v_0, ..., v_t = j`` the path rows give, by induction on the
position, ``x_{i v_{r+1}} <= x_{i v_r} + x_{v_r v_{r+1}}``, so ``x_ij`` is at most the
path's length: ``x <= d``. On an edge the one-edge path gives ``d_e <= x_e``, hence
``d_e = x_e``. ``d`` is a semimetric, ``sum d >= sum x = s``, and a positive multiple of
a semimetric is one. QED.

So the LP on the path rows has the same optimum as the full LP (it is a relaxation, and
the repair of its optimum is feasible for the full LP and no more costly). ``highs-lazy``
starts from them (:func:`path_rows`) and repairs each round's point
(:func:`repair_by_paths`): one HiGHS solve gives the LP optimum, its dual certifies the
bound (:func:`metricopt.bounds.lp_dual_bound`, valid for any subset of rows), and the
repaired point violates nothing.

References
----------
.. [1] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and their
       use in designing approximation algorithms. J. ACM 46(6), 787-832.
"""

import numpy as np

from ..problems._pairs import n_pairs, pair_index

__all__ = ["applies", "count_path_rows", "path_rows", "polish_rows", "repair_by_paths",
           "start_rows", "MAX_ROWS_PER_PAIR", "MAX_POLISH_ROWS"]

#: ``highs-lazy`` starts sparsest cut from its path rows when they number at most this many
#: per pair (about twice the average degree): one solve then gives the LP optimum, which
#: the triangle rows separated round by round reach far more slowly. Denser graphs keep
#: the separation (jazz, 55 per pair: 1.07 million path rows, not solved in 300 s).
MAX_ROWS_PER_PAIR = 40
#: The projection methods' LP polish of sparsest cut (:func:`.core.polish.polish_paths`)
#: solves the path rows when there are at most this many: one interior-point solve with
#: crossover, seconds to a minute (highs-lazy's path start, 2 threads: dolphins 19k rows
#: 1.0 s, lesmis 38k 2.4 s, polbooks 91k 17 s, football 138k 32 s, Barabasi-Albert
#: n = 200, m = 396, 157k rows 46 s; G(200, 0.035), 285k rows: not in 120 s).
MAX_POLISH_ROWS = 200_000


def _edges(problem):
    """The pairs with a nonzero cost, as node arrays ``(u, v)`` with ``u < v``."""
    from ..problems._pairs import pair_arrays

    ids = np.flatnonzero(np.asarray(problem.cost) != 0.0)
    r, c = pair_arrays(problem.n)
    return r[ids], c[ids]


def applies(problem):
    """Whether the lemma holds for ``problem``: a dense linear problem with a sum row,
    ``lower == 0``, costs ``>= 0`` on a connected edge set spanning all nodes."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if problem.structure != "dense" or problem.sum_value is None or problem.cost is None \
            or problem.objective != "linear" or problem.lower != 0.0 \
            or np.isfinite(problem.upper) or problem.n < 3:
        return False
    cost = np.asarray(problem.cost)
    if cost.shape[0] != n_pairs(problem.n) or np.any(cost < 0.0):
        return False
    u, v = _edges(problem)
    n = int(problem.n)
    graph = coo_matrix((np.ones(u.size), (u, v)), shape=(n, n))
    return connected_components(graph, directed=False)[0] == 1


def count_path_rows(problem):
    """Number of path rows before removing repeats: ``2 m (n - 2)``."""
    m = int(np.count_nonzero(np.asarray(problem.cost)))
    return 2 * m * max(int(problem.n) - 2, 0)


def start_rows(problem):
    """How many path rows ``highs-lazy`` starts ``problem`` from (before removing repeats;
    0 when it does not: the lemma does not apply or they exceed
    :data:`MAX_ROWS_PER_PAIR` per pair)."""
    if not applies(problem):
        return 0
    k = count_path_rows(problem)
    return k if k <= MAX_ROWS_PER_PAIR * problem.n_variables else 0


def polish_rows(problem):
    """How many path rows the LP polish of ``problem`` solves (before removing repeats;
    0 when it does not: the lemma does not apply or they exceed :data:`MAX_POLISH_ROWS`)."""
    if not applies(problem):
        return 0
    k = count_path_rows(problem)
    return k if k <= MAX_POLISH_ROWS else 0


def path_rows(problem):
    """The distinct path rows as packed pair triples ``(long, short, short)``.

    Returns
    -------
    ndarray of shape (k, 3), int64
        Row ``(a, b, c)`` is ``x_a <= x_b + x_c`` with ``a = (i, j)``, ``b = (i, k)``,
        ``c = (k, j)`` for an edge ``(k, j)``; the rows of ``i`` over edge ``(k, j)``
        and of ``j`` over edge ``(k, i)`` are one inequality and appear once.
    """
    n = int(problem.n)
    u, v = _edges(problem)
    # directed edges k -> j
    k = np.concatenate([u, v])
    j = np.concatenate([v, u])
    i = np.repeat(np.arange(n, dtype=np.int64), k.size)
    k, j = np.tile(k, n), np.tile(j, n)
    keep = (i != k) & (i != j)
    i, k, j = i[keep], k[keep], j[keep]
    a = pair_index(i, j, n)
    # one inequality per (long pair, third node)
    key = a * n + k
    _, first = np.unique(key, return_index=True)
    first.sort()
    i, k, j, a = i[first], k[first], j[first], a[first]
    return np.stack([a, pair_index(i, k, n), pair_index(k, j, n)], axis=1).astype(np.int64)


def repair_by_paths(problem, x):
    """The lemma's feasible point from ``x``: the shortest-path metric of its edge values,
    rescaled to the sum row; None when it does not apply or the metric sums to 0.

    Exactly feasible up to round-off whatever ``x`` is; when ``x`` satisfies the path
    rows its objective is at most ``x``'s.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    n = int(problem.n)
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.shape[0] != n_pairs(n) or not np.all(np.isfinite(x)):
        return None
    u, v = _edges(problem)
    lengths = np.maximum(x[pair_index(u, v, n)], 0.0)
    # explicit zeros are edges of length 0 for scipy's shortest paths
    graph = coo_matrix((lengths, (u, v)), shape=(n, n)).tocsr()
    dist = shortest_path(graph, method="D", directed=False)
    d = dist[np.triu_indices(n, 1)]
    if not np.all(np.isfinite(d)):
        return None
    total = float(d.sum())
    if not total > 0.0:
        return None
    return d * (float(problem.sum_value) / total)
