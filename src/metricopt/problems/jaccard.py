"""The Jaccard-based signed weights of Wang et al., as used by Veldt et al. (V §8.4)."""

import numpy as np

from .._choices import DELTA_RANGE, EPSILON_MIN
from ._pairs import n_pairs

__all__ = ["jaccard_signed_weights", "DELTA_RANGE", "EPSILON_MIN"]



def jaccard_signed_weights(graph, *, delta=0.05, epsilon=0.01, chunk_rows=None):
    """Signed correlation-clustering weights of every pair from Jaccard similarities.

    For every pair ``i < j``: ``J = |N(i) & N(j)| / |N(i) | N(j)|`` (open neighbourhoods),
    ``S = log((1 + (J - delta)) / (1 - (J - delta)))`` and ``Z = S + epsilon`` if
    ``S > 0``, ``S - epsilon`` if ``S < 0``, and ``+epsilon`` / ``-epsilon`` for
    ``S == 0`` on an edge / non-edge. The correlation-clustering weight is ``|Z|`` and the
    pair is dissimilar (target 1) when ``Z < 0``. This is the rule of the paper, applied
    to ALL pairs (the published Julia code skips the offset for pairs with no common
    neighbour).

    Parameters
    ----------
    graph : Graph
    delta : float, default=0.05
    epsilon : float, default=0.01
    chunk_rows : int or None
        Rows of the packed pair vector computed at a time (bounds temporary memory).

    Returns
    -------
    weights : ndarray of shape (n*(n-1)/2,)
    target : ndarray of shape (n*(n-1)/2,)
        1.0 for dissimilar pairs, 0.0 for similar ones.

    References
    ----------
    .. [1] Wang, Y., Xu, L., Chen, Y., & Wang, H. (2013). A scalable approach for general
           correlation clustering. ADMA 2013. https://doi.org/10.1007/978-3-642-53917-6_2
    .. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2).
           https://doi.org/10.1137/18M1217152
    """
    n = graph.n
    adj = graph.adjacency().astype(np.float64)
    common = (adj @ adj).tocsr()  # |N(i) & N(j)| on pairs with a common neighbour
    deg = graph.degrees().astype(np.float64)
    weights = np.empty(n_pairs(n), dtype=np.float64)
    target = np.empty(n_pairs(n), dtype=np.float64)

    def score(j_coef):
        t = j_coef - delta
        return np.log((1.0 + t) / (1.0 - t))

    s_zero = score(0.0)  # pairs with no common neighbour (the common case)
    start = 0
    for i in range(n - 1):
        cols = np.arange(i + 1, n)
        jac = np.zeros(n - 1 - i)
        lo, hi = common.indptr[i], common.indptr[i + 1]
        nb, cnt = common.indices[lo:hi], common.data[lo:hi]
        keep = nb > i
        nb, cnt = nb[keep], cnt[keep]
        union = deg[i] + deg[nb] - cnt
        jac[nb - i - 1] = np.where(union > 0, cnt / np.where(union > 0, union, 1.0), 0.0)
        s = np.full(n - 1 - i, s_zero)
        nz = jac != 0.0
        s[nz] = score(jac[nz])
        alo, ahi = adj.indptr[i], adj.indptr[i + 1]
        is_edge = np.zeros(n - 1 - i, dtype=bool)
        nbrs = adj.indices[alo:ahi]
        is_edge[nbrs[nbrs > i] - i - 1] = True
        z = np.where(s > 0, s + epsilon, np.where(s < 0, s - epsilon, np.where(is_edge, epsilon, -epsilon)))
        stop = start + cols.size
        weights[start:stop] = np.abs(z)
        target[start:stop] = (z < 0).astype(np.float64)
        start = stop
    return weights, target
