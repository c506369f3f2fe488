"""Seeded community graphs with the shape of SNAP's co-purchase and co-authorship networks.

:func:`community_graph` plants overlapping communities and joins them with a few random
edges. Every node joins one community, and ``overlap * n`` further memberships go to nodes
drawn in proportion to heavy-tailed activities (Pareto, shape ``activity_exponent``), so a
few nodes belong to many communities and have high degree. Community sizes follow a
power law ``P(s) ~ s^(-size_exponent)`` on ``min_size..max_size``; each pair inside a
community is an edge with probability ``p_in``, chosen so that the expected edge count is
``avg_degree * n / 2``, of which a share ``mixing`` are random edges between nodes drawn in
proportion to their activities. Self-loops and repeats are dropped and the largest
connected component is kept, as :func:`metricopt.read_graph` does for a file.

The size exponent sets the clustering: steeper size laws mean smaller communities, a
larger ``p_in`` and more closed wedges. The defaults give com-Amazon's shape at 10^5
nodes (measured, seed 0; com-Amazon itself [1]_: 334,863 nodes, 2.76 edges per node,
average clustering 0.397, 667,129 triangles):

=========  ========  ==========  ==========  =========  ===========  ==========
n          nodes     edges/node  clustering  triangles  open wedges  max degree
=========  ========  ==========  ==========  =========  ===========  ==========
2,000      1,844     2.75        0.46        8,084      24,722       65
10,000     9,140     2.78        0.42        35,282     133,122      83
100,000    91,319    2.78        0.43        375,799    1,651,379    459
=========  ========  ==========  ==========  =========  ===========  ==========

Its degrees are less skewed than com-Amazon's: about 6.5 open wedges per edge, where
com-Amazon has about 25 (some 23 million, from SNAP's triangle count and closed-triple
fraction), so the wedge rows of cluster deletion are fewer per edge than on the real
network.

Time and memory are O(m) (numpy, no Python loop over nodes or edges), and a seed gives
the same graph on the same numpy version.

References
----------
.. [1] Yang, J., & Leskovec, J. (2012). Defining and evaluating network communities based
       on ground-truth. ICDM 2012. https://snap.stanford.edu/data/com-Amazon.html
"""

import numpy as np

__all__ = ["community_graph", "graph_statistics"]


def community_graph(n, *, avg_degree=5.2, size_exponent=3.5, min_size=3, max_size=40,
                    overlap=0.25, mixing=0.1, activity_exponent=1.8, seed=0):
    """A seeded graph of overlapping dense communities (largest component).

    Parameters
    ----------
    n : int
        Nodes before the largest component is taken (about 9% fewer remain at the
        defaults).
    avg_degree : float, default=5.2
        Expected mean degree before duplicates are merged and the largest component is
        taken (the result has about 5.55 at the defaults).
    size_exponent : float, default=3.5
        Exponent of the power law of community sizes; larger gives smaller communities
        and higher clustering.
    min_size, max_size : int, default=3, 40
        Range of community sizes.
    overlap : float, default=0.25
        Memberships beyond the first, per node.
    mixing : float, default=0.1
        Share of the edges that are random edges between communities.
    activity_exponent : float, default=1.8
        Pareto shape of the activities that draw extra memberships and the ends of random
        edges (smaller: heavier-tailed degrees).
    seed : int, default=0

    Returns
    -------
    Graph
        Labels ``0..n'-1`` (``n'`` nodes in the largest component), named
        ``"community-N-sSEED"``; ``summary`` as for a file, plus ``p_in``.

    Examples
    --------
    >>> g = community_graph(2000, seed=1)
    >>> g.n > 1500 and g.m > 2.5 * g.n
    True
    """
    import scipy.sparse as sp

    from metricopt.io import read_graph

    n = int(n)
    if n < max(min_size, 2) or not 2 <= min_size <= max_size:
        raise ValueError(f"need n >= min_size >= 2 and min_size <= max_size; got n={n}, "
                         f"min_size={min_size}, max_size={max_size}")
    rng = np.random.default_rng(seed)
    sizes = _community_sizes(rng, int(round(n * (1.0 + overlap))), size_exponent,
                             int(min_size), int(max_size))
    activity = rng.pareto(activity_exponent, n) + 1.0
    activity /= activity.sum()
    extra = rng.choice(n, size=int(sizes.sum()) - n, p=activity)
    members = rng.permutation(np.concatenate([np.arange(n), extra]))
    m_target = avg_degree * n / 2.0
    p_in = min(1.0, (1.0 - mixing) * m_target / float(np.sum(sizes * (sizes - 1) // 2)))
    us, vs = _community_edges(rng, members, sizes, p_in)
    n_random = int(round(mixing * m_target))
    us.append(rng.choice(n, size=n_random, p=activity))
    vs.append(rng.choice(n, size=n_random, p=activity))
    u, v = np.concatenate(us), np.concatenate(vs)
    keep = u != v
    lo, hi = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    keys = np.unique(lo * np.int64(n) + hi)
    coo = sp.coo_matrix((np.ones(keys.size), (keys // n, keys % n)), shape=(n, n))
    graph = read_graph(coo, weighted=False, name=f"community-{n}-s{seed}")
    graph.labels = np.arange(graph.n, dtype=np.int64).astype(object)
    graph.summary["p_in"] = p_in
    return graph


def _community_sizes(rng, total, exponent, lo, hi):
    """Power-law sizes on ``lo..hi`` summing to ``total`` (the last one cut to fit)."""
    sizes = np.empty(0, dtype=np.int64)
    while sizes.sum() < total:
        draw = np.floor(lo * rng.random(total // lo + 16) ** (-1.0 / (exponent - 1.0)))
        sizes = np.concatenate([sizes, draw[draw <= hi].astype(np.int64)])
    k = int(np.searchsorted(np.cumsum(sizes), total))
    sizes = sizes[:k + 1]
    sizes[-1] -= int(sizes.sum()) - total
    return sizes[sizes >= 2]


def _community_edges(rng, members, sizes, p_in):
    """The pairs inside each community kept with probability ``p_in``, grouped by size."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    us, vs = [], []
    for s in np.unique(sizes):
        block = members[starts[sizes == s][:, None] + np.arange(s)]
        a, b = np.triu_indices(s, 1)
        u, v = block[:, a].ravel(), block[:, b].ravel()
        kept = rng.random(u.size) < p_in
        us.append(u[kept])
        vs.append(v[kept])
    return us, vs


def graph_statistics(graph):
    """Sizes, triangles, open wedges, degrees and average clustering of a graph.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    dict
        ``nodes``, ``edges``, ``edges_per_node``, ``triangles``, ``open_wedges``,
        ``max_degree`` and ``average_clustering`` (the mean of the local clustering
        coefficients, 0 for nodes of degree below 2, as networkx and SNAP count it).
    """
    a = graph.adjacency()
    deg = np.asarray(a.sum(axis=1)).ravel()
    # triangles at each node: half the closed walks of length 3 through it, row by row
    tri = np.asarray((a @ a).multiply(a).sum(axis=1)).ravel() / 2.0
    wedges = deg * (deg - 1) / 2.0
    local = np.divide(tri, wedges, out=np.zeros_like(tri), where=wedges > 0)
    return {
        "nodes": int(graph.n),
        "edges": int(graph.m),
        "edges_per_node": graph.m / graph.n,
        "triangles": int(round(tri.sum() / 3.0)),
        "open_wedges": int(round(wedges.sum() - tri.sum())),
        "max_degree": int(deg.max()) if graph.n else 0,
        "average_clustering": float(local.mean()) if graph.n else 0.0,
    }
