"""The support-sized correlation-clustering LP: listed pairs, and a bulk in closed form.

Correlation clustering asks for ``min sum_ij w_ij |x_ij - d_ij|`` over metrics
``0 <= x <= 1`` (V eq. 3-5). With Jaccard, unit, LambdaCC and modularity weights nearly
every pair is dissimilar (``d = 1``) with a weight that follows a closed form: a constant
(Jaccard pairs without a common neighbour, unit and LambdaCC non-edges) or a product of
node weights (``c d_i d_j``: LambdaCC with degrees, modularity). The *support-sized*
problem lists only the other pairs (edges, and for Jaccard the pairs with a common
neighbour) with their weights and targets; every pair not listed is a *bulk pair*:
target 1 and the weight of its class (:class:`SupportBulk`). An iterate lists the pairs
it moved (a :class:`SupportPoint`); every pair it does not list sits at the bulk value 1.

Closed forms (each tested against the dense sums in ``tests/test_support.py``):

* **LP objective.** A bulk pair at ``x = 1 = d`` costs ``w |x - d| = 0``, so a point's
  objective is the sum over its listed pairs and the explicit pairs it does not list
  (those at 1: ``w |1 - d|``), never over the bulk.
* **QP terms and the certificate.** A bulk pair that no remembered constraint touches
  sits at ``x = d``, ``f = 0`` after the first pass over its own rows ``f >= |x - d|``,
  whose two duals are then equal (``gamma w / 2`` each). Its terms in the QP primal
  ``sum w f + (w e^2 + w f^2) / (2 gamma)`` and in the dual's ``b'y`` (``d (z+ - z-)``)
  are 0, and so are its profits ``w e / gamma`` and ``w f / gamma`` in the inner problem
  of V Thm 5 (the certificate, :func:`metricopt.bounds.correlation_clustering_bound`):
  a zero-profit item adds nothing to the inner maximum. The bound computed over the
  listed pairs is therefore the bound of the whole LP, for the same multipliers.
* **Cost of a clustering.** The bulk pairs joined in one cluster cost their weights:
  ``c C(s, 2)`` for a cluster of ``s`` nodes with a constant weight ``c``, and
  ``c ((sum_C d)^2 - sum_C d^2) / 2`` with node weights ``d``; the explicit pairs inside
  the cluster are taken out of that sum and counted with their own weights.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355 (Thm 1: the box; Thm 5: the certificate).
"""

import dataclasses

import numpy as np

from .._memory import check_memory
from ._support_scan import pair_keys, support_max_violation

__all__ = ["SupportBulk", "SupportPoint", "support_correlation_clustering", "support_memory",
           "SUPPORT_WEIGHTS", "MAX_SUPPORT_NODES"]

#: Weight modes with a support-sized layout.
SUPPORT_WEIGHTS = ("jaccard", "unit", "lambda", "lambda-degree", "modularity")
#: Nodes at most: the constraint keys ``((a n + b) n + c) * 3 + side`` fit in int64.
MAX_SUPPORT_NODES = 1 << 20


@dataclasses.dataclass(eq=False)
class SupportBulk:
    """The pairs not listed by a support-sized problem: target ``value`` and weight
    ``weight`` (times ``node_weights[i] * node_weights[j]`` when given).

    Attributes
    ----------
    value : float
        Their target, and the value every point gives them (1 for correlation
        clustering).
    weight : float
    node_weights : ndarray of shape (n,) or None
    """

    value: float = 1.0
    weight: float = 1.0
    node_weights: np.ndarray | None = None

    def pair_weights(self, i, j):
        """Weights of the pairs ``(i, j)`` were they bulk pairs (vectorised)."""
        i = np.asarray(i, dtype=np.int64)
        if self.node_weights is None:
            return np.full(i.shape, float(self.weight))
        nw = self.node_weights
        return float(self.weight) * nw[i] * nw[np.asarray(j, dtype=np.int64)]

    def joined_weight(self, labels):
        """Total weight of all pairs inside the clusters of ``labels``, as bulk pairs."""
        labels = np.asarray(labels, dtype=np.int64)
        if labels.size == 0:
            return 0.0
        if self.node_weights is None:
            size = np.bincount(labels).astype(np.float64)
            return float(self.weight) * float(np.sum(size * (size - 1.0)) / 2.0)
        nw = np.asarray(self.node_weights, dtype=np.float64)
        s1 = np.bincount(labels, weights=nw)
        s2 = np.bincount(labels, weights=nw * nw)
        return float(self.weight) * float(np.sum(s1 * s1 - s2) / 2.0)

    def total_weight(self, n):
        """Total weight of all ``n (n - 1) / 2`` pairs, as bulk pairs."""
        return self.joined_weight(np.zeros(n, dtype=np.int64))


@dataclasses.dataclass(eq=False)
class SupportPoint:
    """A point of a support-sized problem: the listed pairs' values; every other pair is
    at ``bulk``.

    Attributes
    ----------
    n : int
    pairs : ndarray of shape (k, 2), dtype int64
        ``pairs[:, 0] < pairs[:, 1]``, each pair once.
    values : ndarray of shape (k,)
    bulk : float
    """

    n: int
    pairs: np.ndarray
    values: np.ndarray
    bulk: float = 1.0

    def __post_init__(self):
        self.pairs = np.ascontiguousarray(self.pairs, dtype=np.int64).reshape(-1, 2)
        self.values = np.ascontiguousarray(self.values, dtype=np.float64)

    @property
    def keys(self):
        """int64 key ``i n + j`` of each listed pair."""
        return pair_keys(self.pairs[:, 0], self.pairs[:, 1], self.n)

    @property
    def nbytes(self):
        return int(self.pairs.nbytes + self.values.nbytes)

    def compact(self):
        """The same point listing only the pairs away from the bulk, in key order."""
        keep = self.values != self.bulk
        order = np.argsort(self.keys[keep], kind="stable")
        return SupportPoint(self.n, self.pairs[keep][order], self.values[keep][order],
                            self.bulk)

    def to_packed(self):
        """The dense packed vector (``n (n - 1) / 2`` values; small ``n`` only)."""
        from ._pairs import n_pairs, pair_index

        x = np.full(n_pairs(self.n), float(self.bulk))
        x[pair_index(self.pairs[:, 0], self.pairs[:, 1], self.n)] = self.values
        return x

    def min_max(self):
        """Smallest and largest value over all pairs (the bulk included when some pair
        is not listed)."""
        full = self.values.size >= self.n * (self.n - 1) // 2
        lo = float(self.values.min(initial=np.inf))
        hi = float(self.values.max(initial=-np.inf))
        if not full:
            lo, hi = min(lo, self.bulk), max(hi, self.bulk)
        return lo, hi

    def __repr__(self):
        return f"SupportPoint(n={self.n}, {self.values.size} pairs listed, bulk={self.bulk:g})"


# --------------------------------------------------------------------- measurements
def _explicit_lookup(problem, keys):
    """Position of each key among the problem's explicit pairs, or -1."""
    ek = problem.params["_keys"] if "_keys" in problem.params else None
    if ek is None:
        ek = pair_keys(problem.pairs[:, 0], problem.pairs[:, 1], problem.n)
    pos = np.searchsorted(ek, keys)
    pos = np.minimum(pos, max(ek.size - 1, 0))
    hit = ek.size > 0
    found = np.zeros(keys.shape, dtype=bool) if not hit else ek[pos] == keys
    return np.where(found, pos, -1)


def point_objective(problem, point):
    """``sum w |x - d|`` over all pairs of the support point (module docstring)."""
    w, d = problem.weights, problem.target
    bulk = problem.bulk
    pos = _explicit_lookup(problem, point.keys)
    listed = pos >= 0
    total = float(w @ np.abs(bulk.value - d))  # every explicit pair at the bulk value
    p = pos[listed]
    total += float(w[p] @ (np.abs(point.values[listed] - d[p]) - np.abs(bulk.value - d[p])))
    other = ~listed
    if other.any():
        pr = point.pairs[other]
        bw = bulk.pair_weights(pr[:, 0], pr[:, 1])
        total += float(bw @ np.abs(point.values[other] - bulk.value))
    return total + float(problem.constant)


def point_violation(problem, point):
    """Largest violation of any triangle inequality and of ``0 <= x <= 1``."""
    pr = point.pairs
    worst = support_max_violation(pr[:, 0], pr[:, 1], point.values, point.n, point.bulk)
    return max(worst, point_bound_violation(problem, point))


def point_bound_violation(problem, point):
    """Largest violation of the variable bounds by the support point (or by the values
    of its listed pairs, the bulk value taken with them)."""
    if isinstance(point, SupportPoint):
        lo, hi = point.min_max()
    else:
        b = float(problem.bulk.value)
        lo, hi = min(float(np.min(point, initial=b)), b), max(float(np.max(point, initial=b)), b)
    worst = 0.0
    if np.isfinite(problem.lower):
        worst = max(worst, float(problem.lower) - lo)
    if np.isfinite(problem.upper):
        worst = max(worst, hi - float(problem.upper))
    return worst


def clustering_cost(problem, labels):
    """Correlation-clustering cost of ``labels`` (int64, checked) in closed form."""
    labels = np.asarray(labels, dtype=np.int64)
    pairs = problem.pairs
    same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
    split = (~same).astype(np.float64)
    total = float(problem.weights @ np.abs(split - problem.target))
    bulk = problem.bulk
    joined = bulk.joined_weight(labels)
    if same.any():
        joined -= float(np.sum(bulk.pair_weights(pairs[same, 0], pairs[same, 1])))
    return total + joined + float(problem.constant)


# ------------------------------------------------------------------------- builder
def support_memory(graph, weights):
    """Bytes the support-sized problem takes to build: the explicit pairs (edges, and for
    Jaccard the pairs with a common neighbour, bounded by the wedges)."""
    deg = graph.degrees().astype(np.float64)
    wedges = float(np.sum(deg * (deg - 1.0)) / 2.0)
    listed = graph.m + (wedges if weights == "jaccard" else 0.0)
    # the product A A (12 bytes per entry, twice the wedges) while building Jaccard,
    # then pairs, weights, targets and keys (40 bytes per pair)
    build = 24.0 * wedges if weights == "jaccard" else 0.0
    return int(build + 40.0 * listed)


def support_correlation_clustering(graph, mode, *, delta, epsilon, resolution, max_memory=None):
    """The support-sized LP of correlation clustering (module docstring).

    Parameters
    ----------
    graph : Graph
    mode : {"jaccard", "unit", "lambda", "lambda-degree", "modularity"}
    delta, epsilon : float
        The Jaccard transform's (checked by the caller).
    resolution : float or None
        As :func:`metricopt.problems.correlation_clustering` (checked).
    max_memory : int or None

    Returns
    -------
    (pairs, weights, target, bulk, units)
        The explicit pairs in key order, their weights and targets, the
        :class:`SupportBulk` of every other pair and the objective's other units.
    """
    n = graph.n
    check_memory(support_memory(graph, mode), f"the support-sized correlation-clustering "
                 f"problem with {mode} weights on {n} nodes", max_memory)
    deg = graph.degrees().astype(np.float64)
    edges = graph.edges
    units = {}
    if mode == "jaccard":
        pairs, w, d, bulk = _jaccard(graph, deg, delta, epsilon)
    elif mode == "unit":
        pairs, w, d = edges.copy(), np.ones(graph.m), np.zeros(graph.m)
        bulk = SupportBulk(1.0, 1.0)
    elif mode == "lambda":
        r = float(resolution)
        s = np.full(graph.m, 1.0 - r)
        pairs, w, d = edges.copy(), np.abs(s), (s < 0).astype(np.float64)
        bulk = SupportBulk(1.0, r)
    else:
        m = graph.m
        scale = float(resolution) if mode == "lambda-degree" else float(resolution) / (2.0 * m)
        s = 1.0 - scale * deg[edges[:, 0]] * deg[edges[:, 1]]
        pairs, w, d = edges.copy(), np.abs(s), (s < 0).astype(np.float64)
        bulk = SupportBulk(1.0, scale, deg)
        positive = float(s[s > 0].sum())
        if mode == "lambda-degree":
            units["lambdacc_linear"] = (1.0, float(s[s < 0].sum()))
        else:
            units["modularity"] = (-1.0 / m, (positive - resolution * float(deg @ deg)
                                              / (4.0 * m)) / m)
    return pairs, w, d, bulk, units


def _jaccard(graph, deg, delta, epsilon):
    """Explicit pairs of the Jaccard transform: the edges and the pairs with a common
    neighbour; every other pair has ``J = 0``, the same weight and target 1. The same
    arithmetic as :func:`metricopt.problems.jaccard.jaccard_signed_weights`."""
    import scipy.sparse as sp

    adj = graph.adjacency().astype(np.float64)
    common = sp.triu(adj @ adj, k=1).tocoo()
    edge_pat = sp.triu(adj, k=1).tocoo()
    # the union of both patterns; the edge entries carry 0 common neighbours
    both = sp.coo_matrix((np.concatenate([common.data, np.zeros(edge_pat.nnz)]),
                          (np.concatenate([common.row, edge_pat.row]),
                           np.concatenate([common.col, edge_pat.col]))),
                         shape=adj.shape).tocsr()
    both.sum_duplicates()
    both.sort_indices()
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(both.indptr))
    cols = both.indices.astype(np.int64)
    cnt = both.data
    union = deg[rows] + deg[cols] - cnt
    jac = np.where(union > 0, cnt / np.where(union > 0, union, 1.0), 0.0)

    def score(j_coef):
        t = j_coef - delta
        return np.log((1.0 + t) / (1.0 - t))

    s_zero = score(0.0)
    s = np.full(rows.size, s_zero)
    nz = jac != 0.0
    s[nz] = score(jac[nz])
    ek = pair_keys(graph.edges[:, 0], graph.edges[:, 1], graph.n)
    pk = rows * graph.n + cols
    is_edge = np.isin(pk, ek, assume_unique=True)
    z = np.where(s > 0, s + epsilon, np.where(s < 0, s - epsilon,
                                              np.where(is_edge, epsilon, -epsilon)))
    pairs = np.stack([rows, cols], axis=1)
    z0 = s_zero + epsilon if s_zero > 0 else (s_zero - epsilon if s_zero < 0 else -epsilon)
    return pairs, np.abs(z), (z < 0).astype(np.float64), SupportBulk(1.0, float(abs(z0)))
