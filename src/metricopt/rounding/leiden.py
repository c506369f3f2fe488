"""Leiden clusterings of correlation-clustering problems, to be certified like any rounding.

The Leiden algorithm (through the optional ``leidenalg`` and ``igraph`` packages:
``pip install 'metricopt[leiden]'``) does not read the relaxation's solution. It
maximises a quality function; for every weight mode of correlation clustering there is
one whose maximisers are exactly the minimisers of the problem's objective, because the
quality is a positive multiple of ``sum_{i < j together} s_ij`` plus a constant, where
``s_ij = w_ij (1 - 2 d_ij)`` is the problem's signed pair weight and the objective is
``sum_{s > 0} s - sum_{i < j together} s_ij``:

=================  ==========================================================
weights            quality function (leidenalg)
=================  ==========================================================
``lambda``         CPM at ``gamma = R`` on the graph (``sum_c m_c - R C(n_c, 2)``)
``unit``           CPM at ``gamma = 1/2`` (cluster editing is LambdaCC at 1/2)
``lambda-degree``  RBConfiguration at ``gamma = 2 m R``
``modularity``     RBConfiguration at the problem's ``gamma`` (modularity at 1)
``signed``,        two layers, the positive and the negative pair weights, each
``jaccard``        CPM at ``gamma = 0``, layer weights ``+1`` and ``-1``
                   (the two-layer treatment of negative links that leidenalg
                   documents, with CPM at 0 in place of its example's
                   modularity layers: that is the correlation-clustering
                   objective itself)
=================  ==========================================================

For Jaccard weights every pair has a weight, so the two layers hold all ``n(n-1)/2``
pairs (memory-checked); a support-sized problem lists only the pairs whose weight is not
the bulk weight ``c``, and its layers are CPM at ``gamma = c`` on the explicit pairs'
``s + c`` where positive, and CPM at 0 on it where negative (layer weight -1; see
:func:`metricopt.rounding._support.leiden_layers`). The clustering Leiden returns is
scored by the problem's own objective (:func:`metricopt.rounding.evaluate`), never by
Leiden's quality.
"""

import numpy as np

from ..exceptions import SolverNotAvailableError

__all__ = ["require_leiden", "leiden_quality", "leiden_runner", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'metricopt[leiden]'"

#: Weight modes whose quality function is evaluated on the graph itself (sparse).
_ON_GRAPH = ("lambda", "unit", "lambda-degree", "modularity")


def require_leiden():
    """Import and return ``(leidenalg, igraph)``, or raise a one-line install hint.

    Raises
    ------
    SolverNotAvailableError
        When either package is missing.
    """
    try:
        import igraph
        import leidenalg
    except ImportError as exc:
        raise SolverNotAvailableError(
            f"rounding method 'leiden' needs the leidenalg and igraph packages ({exc.name} is "
            f"not installed): {INSTALL_HINT}") from None
    return leidenalg, igraph


def leiden_quality(problem):
    """Name and parameter of the quality function Leiden optimises for ``problem``.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"``.

    Returns
    -------
    tuple of (str, float)
        ``("cpm", gamma)``, ``("rb-configuration", gamma)``, ``("signed-cpm", 0.0)`` or,
        for Jaccard weights in the support layout, ``("support-cpm", c)``.
    """
    mode = problem.params.get("weights")
    if mode not in _ON_GRAPH or problem.graph is None or problem.structure not in ("dense",
                                                                                   "support"):
        if problem.structure == "support":
            return "support-cpm", float(problem.bulk.weight)
        return "signed-cpm", 0.0
    resolution = problem.params.get("resolution")
    if mode == "lambda":
        return "cpm", float(resolution)
    if mode == "unit":
        return "cpm", 0.5
    if mode == "lambda-degree":
        return "rb-configuration", 2.0 * problem.graph.m * float(resolution)
    return "rb-configuration", float(resolution)


def _signed_layers(problem, igraph):
    """The positive and negative pair-weight graphs of a correlation-clustering problem."""
    from .._memory import check_memory

    w = np.asarray(problem.weights, dtype=np.float64)
    d = np.asarray(problem.target, dtype=np.float64)
    keep = np.flatnonzero(w > 0)
    if problem.structure == "dense":
        check_memory(200 * keep.size, f"the Leiden layers of {keep.size} weighted pairs", None)
        from ..problems._pairs import pair_arrays

        rows, cols = pair_arrays(problem.n)
        pairs = np.column_stack([rows[keep], cols[keep]])
    else:
        pairs = np.asarray(problem.pairs, dtype=np.int64)[keep]
    w, apart = w[keep], d[keep] >= 0.5
    layers = []
    for mask in (~apart, apart):
        g = igraph.Graph(n=problem.n, edges=pairs[mask].tolist())
        layers.append((g, w[mask].tolist()))
    return layers


def leiden_runner(problem):
    """A function ``run(seed) -> labels`` that runs Leiden once on ``problem``.

    The graphs are built once; every call optimises a fresh singleton partition with
    the given seed until an iteration brings no improvement (``n_iterations=-1``).

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"``, dense, sparse or support.

    Returns
    -------
    callable
        ``run(seed)`` with ``seed`` a non-negative int; returns int64 labels of shape (n,).

    Raises
    ------
    SolverNotAvailableError
        When leidenalg or igraph is not installed.

    References
    ----------
    .. [1] Traag, V. A., Waltman, L., & van Eck, N. J. (2019). From Louvain to Leiden:
           guaranteeing well-connected communities. Sci. Rep. 9, 5233.
           https://doi.org/10.1038/s41598-019-41695-z
    .. [2] Traag, V. A., Van Dooren, P., & Nesterov, Y. (2011). Narrow scope for
           resolution-limit-free community detection. Phys. Rev. E 84, 016114.
           https://doi.org/10.1103/PhysRevE.84.016114
    .. [3] Reichardt, J., & Bornholdt, S. (2006). Statistical mechanics of community
           detection. Phys. Rev. E 74, 016110. https://doi.org/10.1103/PhysRevE.74.016110
    """
    la, ig = require_leiden()
    quality, gamma = leiden_quality(problem)
    if quality == "support-cpm":
        from ._support import leiden_layers

        layers = leiden_layers(problem, ig)

        def partitions():
            return [la.CPMVertexPartition(g, weights=w, resolution_parameter=r)
                    for g, w, r in layers]
    elif quality == "signed-cpm":
        layers = _signed_layers(problem, ig)

        def partitions():
            return [la.CPMVertexPartition(g, weights=w, resolution_parameter=0.0)
                    for g, w in layers]
    else:
        graph = ig.Graph(n=problem.n, edges=np.asarray(problem.graph.edges).tolist())
        kind = la.CPMVertexPartition if quality == "cpm" else la.RBConfigurationVertexPartition

        def partitions():
            return [kind(graph, resolution_parameter=gamma)]

    def run(seed):
        parts = partitions()
        optimiser = la.Optimiser()
        optimiser.set_rng_seed(int(seed) % 2**31)
        if len(parts) == 1:
            optimiser.optimise_partition(parts[0], n_iterations=-1)
        else:
            optimiser.optimise_partition_multiplex(parts, layer_weights=[1.0, -1.0],
                                                   n_iterations=-1)
        return np.asarray(parts[0].membership, dtype=np.int64)

    return run
