"""Rounding and refinement of support-sized correlation clustering, in O(listed pairs + n).

A support-sized problem (:mod:`metricopt.problems.support`) lists its explicit pairs;
every other pair is a *bulk pair* (target 1, the bulk weight). A point of it
(:class:`~metricopt.problems.support.SupportPoint`) lists the pairs it moved; every other
pair is at 1. The roundings read only what is listed:

* pivot and threshold pivot: a pair at 1 never joins (``1 - x = 0``, ``1 >= 1/3``), so
  the candidates of a pivot are its listed neighbours; LP-pivot's coins are those the
  dense kernel would draw (:func:`~metricopt.rounding._support_kernels.pivot_support`);
* KwikCluster: the similar pairs (target 0, weight > 0) are explicit pairs;
* region growing: a pair at 1 is outside every ball (radius 1/3) and a bulk pair is
  dissimilar, so balls and their cut and volume come from the point's listed pairs and
  the problem's explicit pairs;
* Leiden: the graph's quality function (as for the dense problem) or, for Jaccard
  weights, CPM at the bulk weight on the explicit pairs (:func:`leiden_layers`).

Given the same ``x`` and seed these give the dense problem's clusterings exactly. The
refinement makes the dense problem's moves: with the sparse kernels as they are where the
dense problem's gains take the sparse layout (the bulk gain ``-c`` as background), else
with :func:`~metricopt.rounding._support_kernels.move_sweep_bulk`, which keeps a bulk
term per cluster (``-c d_i sum_C d`` for node weights ``d``) and visits the clusters in
the dense kernels' order.
"""

import numpy as np

from ..problems._support_scan import pair_keys
from . import _support_kernels as _sk
from ._checks import csr_from_pairs

__all__ = ["merged_pairs", "support_pivot_runner", "sign_runner",
           "support_region_runner", "support_gain_layout", "dense_layout_choice", "leiden_layers"]


def _explicit_keys(problem):
    return pair_keys(problem.pairs[:, 0], problem.pairs[:, 1], problem.n)


def _sorted_union(a, b):
    """Union of two sorted arrays of distinct int64 keys, sorted (O(len(a) + len(b)) for
    the merge, plus the look-up of ``b`` in ``a``)."""
    if a.size:
        at = np.minimum(np.searchsorted(a, b), a.size - 1)
        b = b[a[at] != b]
    # two sorted runs: the stable sort (timsort) merges them in linear time
    return np.sort(np.concatenate([a, b]), kind="stable")


def merged_pairs(problem, point, similar_only=False):
    """The point's listed pairs and the problem's explicit pairs, in key order.

    Parameters
    ----------
    problem : MetricProblem
    point : SupportPoint
        Compact, pairs in key order (:func:`~metricopt.rounding._checks.check_support_x`).
    similar_only : bool, default=False
        Only the explicit pairs that are similar (``w > 0``, ``d < 1/2``): a pair that is
        neither listed by the point (so at 1) nor similar plays no part in region growing.

    Returns
    -------
    pairs : ndarray of shape (m, 2), int64
    x, w, d : ndarray of shape (m,)
        The point's value (1 where it lists none), the weight and the target (those of a
        bulk pair where the problem lists none).
    """
    n = problem.n
    pk, ek = point.keys, _explicit_keys(problem)
    ew, ed = problem.weights, problem.target
    if similar_only:
        keep = (ew > 0) & (ed < 0.5)
        ek, ew, ed = ek[keep], ew[keep], ed[keep]
    keys = _sorted_union(ek, pk)
    pairs = np.column_stack([keys // n, keys % n]).astype(np.int64)
    x = np.full(keys.size, float(point.bulk))
    x[np.searchsorted(keys, pk)] = point.values
    w = problem.bulk.pair_weights(pairs[:, 0], pairs[:, 1])
    d = np.full(keys.size, float(problem.bulk.value))
    at = np.searchsorted(keys, ek)
    w[at] = ew
    d[at] = ed
    return pairs, x, np.ascontiguousarray(w, dtype=np.float64), d


def support_pivot_runner(problem, point, threshold):
    """``(order, seed) -> labels``: one pivot pass over the point's listed pairs."""
    indptr, indices, var = csr_from_pairs(point.pairs, problem.n)
    x = np.ascontiguousarray(point.values)
    threshold = float(threshold)
    return lambda order, seed: _sk.pivot_support(x, indptr, indices, var, order, threshold,
                                                 seed)


def sign_runner(problem, values, threshold):
    """KwikCluster's pass over the similar explicit pairs (``values`` 0, from
    ``pivot.sign_values``; every other pair is at 1 and never joins)."""
    similar = values == 0
    indptr, indices, var = csr_from_pairs(problem.pairs[similar], problem.n)
    values = np.zeros(int(similar.sum()), dtype=np.uint8)
    threshold = float(threshold)
    return lambda order, seed: _sk.pivot_support(values, indptr, indices, var, order,
                                                 threshold, seed)


def support_region_runner(problem, point, radius, c_ln):
    """``(order, seed) -> labels``: one region-growing pass over the listed pairs."""
    from . import _kernels as _k

    n = problem.n
    pairs, x, w, d = merged_pairs(problem, point, similar_only=True)
    # the dense kernel's seed volume: the same terms, in packed (= key) order
    seed_volume = _k.positive_volume_dense(x, w, d) / n if n else 0.0
    indptr, indices, var = csr_from_pairs(pairs, n)

    def run(order, seed):
        rows, rvar = _sk.rows_in_order(indptr, indices, var, order)
        return _sk.region_grow_support(x, w, d, indptr, rows, rvar, order, radius, c_ln,
                                       seed_volume)

    return run


# ------------------------------------------------------------------------ refinement
def support_gain_layout(problem, rel_tol, sparse_share, sample):
    """The pair gains of a support problem for the local search (see ``refine.gain_layout``),
    in the form the dense problem's search takes.

    With a constant bulk weight ``c`` the dense problem's choice is made again from the
    same sampled pairs (:func:`dense_layout_choice`). Where it takes the sparse layout
    with the bulk gain ``s0 = -c`` as background, the adjacency is the explicit pairs
    whose gain differs from it, ``delta = s - s0``, for the sparse kernels. Otherwise
    (and always for node weights ``d``: a bulk pair's gain is ``-c d_i d_j``, and the dense
    problem's gains are read in place unless nearly all pairs share one gain) the gains
    are for
    :func:`~metricopt.rounding._support_kernels.move_sweep_bulk`, which makes the dense
    kernels' moves: ``node_weights`` (``d``, or ones), ``bulk_weight`` and
    ``delta = s + c d_i d_j`` on the explicit pairs whose gain is not the bulk gain, and
    ``dense_order`` (the dense search's visiting order).

    Returns
    -------
    dict
        As ``refine.gain_layout``, with ``layout="support"``.
    """
    n = problem.n
    bulk = problem.bulk
    w = np.asarray(problem.weights, dtype=np.float64)
    d = np.asarray(problem.target, dtype=np.float64)
    gains = w * (np.abs(1.0 - d) - np.abs(d))
    pairs = problem.pairs
    k = pairs.shape[0]
    has_bulk = k < n * (n - 1) // 2
    cw = float(bulk.weight)
    if bulk.node_weights is None:
        nw = np.ones(n)
        bulk_gain = np.full(k, _bulk_gain(bulk))
        # tol from the largest weight of any pair, as the dense problem's
        scale = max(float(w.max(initial=0.0)), abs(cw) if has_bulk else 0.0)
    else:
        nw = np.ascontiguousarray(bulk.node_weights, dtype=np.float64)
        bulk_gain = -bulk.pair_weights(pairs[:, 0], pairs[:, 1])
        scale = max(float(w.max(initial=0.0)), _largest_bulk_weight(problem) if has_bulk else 0.0)
    tol = rel_tol * (scale if k or has_bulk else 1.0)
    keep = gains != bulk_gain
    indptr, indices, var = csr_from_pairs(pairs[keep], n)
    delta = np.ascontiguousarray((gains[keep] - bulk_gain[keep])[var])
    out = dict(layout="support", indptr=indptr, indices=indices, delta=delta, clique=False,
               tol=tol)
    if bulk.node_weights is None and k + has_bulk:
        s0 = _bulk_gain(bulk)
        if dense_layout_choice(problem, gains, s0, sparse_share, sample) == "sparse":
            out.update(s0=s0)
            return out
    out.update(s0=0.0, node_weights=nw, bulk_weight=cw, dense_order=True)
    return out


def _largest_bulk_weight(problem):
    """Largest ``c d_i d_j`` over the bulk pairs (node weights ``d >= 0``): pairs taken in
    decreasing product (best-first over the nodes sorted by weight) until one is not
    explicit."""
    import heapq

    n = problem.n
    nw = np.asarray(problem.bulk.node_weights, dtype=np.float64)
    by = np.argsort(-nw, kind="stable")
    ek = _explicit_keys(problem)
    heap = [(-nw[by[0]] * nw[by[1]], 0, 1)]
    seen = {(0, 1)}
    while heap:
        _, a, b = heapq.heappop(heap)
        u, v = int(by[a]), int(by[b])
        key = min(u, v) * n + max(u, v)
        at = min(int(np.searchsorted(ek, key)), ek.size - 1)
        if ek.size == 0 or ek[at] != key:
            return float(problem.bulk.pair_weights(np.array([u]), np.array([v]))[0])
        for a2, b2 in ((a, b + 1), (a + 1, b)):
            if b2 < n and a2 < b2 and (a2, b2) not in seen:
                seen.add((a2, b2))
                heapq.heappush(heap, (-nw[by[a2]] * nw[by[b2]], a2, b2))
    return 0.0


def dense_layout_choice(problem, gains, bulk_gain, sparse_share, sample):
    """``refine.gain_layout``'s choice for the dense problem of constant bulk gain.

    The background is the most frequent gain among the same ``sample`` packed pairs.
    Returns ``"sparse"`` (the background is the bulk gain and the pairs whose gain differs
    from it are at most ``sparse_share`` of all pairs), ``"dense"`` (too many differ), or
    ``"other"`` (the sparse layout around another background, which lists bulk pairs: the
    support search does not reproduce it).
    """
    n = problem.n
    size = n * (n - 1) // 2
    idx = np.unique(np.linspace(0, size - 1, min(size, sample)).astype(np.int64))
    rows = np.arange(n, dtype=np.int64)
    starts = rows * n - rows * (rows + 1) // 2
    i = np.searchsorted(starts, idx, side="right") - 1
    j = idx - starts[i] + i + 1
    ek = _explicit_keys(problem)
    at = np.minimum(np.searchsorted(ek, i * n + j), max(ek.size - 1, 0))
    found = ek[at] == i * n + j if ek.size else np.zeros(idx.size, dtype=bool)
    sampled = np.where(found, gains[at] if ek.size else 0.0, bulk_gain)
    values, counts = np.unique(sampled, return_counts=True)
    s0 = values[np.argmax(counts)]
    deviating = int(np.count_nonzero(gains != s0))
    if s0 != bulk_gain:
        deviating += size - gains.size  # every bulk pair
    if 2 * deviating > 2 * sparse_share * size:
        return "dense"
    return "sparse" if s0 == bulk_gain else "other"


def _bulk_gain(bulk):
    """Gain ``w (|1 - d| - |d|)`` of a bulk pair of constant weight."""
    value = float(bulk.value)
    return float(bulk.weight) * (abs(1.0 - value) - abs(value))


# ----------------------------------------------------------------------------- leiden
def leiden_layers(problem, igraph):
    """Leiden's partitions' graphs for Jaccard weights in the support layout.

    The signed weight of a joined pair is ``s = w (1 - 2 d)``; a bulk pair's is ``-c``.
    So ``sum_{joined} s = sum_{joined explicit} (s + c) - c sum_C C(|C|, 2)``: CPM at
    ``gamma = c`` on the explicit pairs of positive ``s + c``, minus CPM at 0 on those of
    negative ``s + c`` (layer weight -1).

    Returns
    -------
    list of (igraph.Graph, list of float, float)
        Graph, edge weights and CPM resolution of each layer.
    """
    c = float(problem.bulk.weight)
    gains = problem.weights * (1.0 - 2.0 * problem.target) + c
    pairs = problem.pairs
    layers = []
    for mask, gamma in ((gains > 0, c), (gains < 0, 0.0)):
        g = igraph.Graph(n=problem.n, edges=pairs[mask].tolist())
        layers.append((g, np.abs(gains[mask]).tolist(), gamma))
    return layers
