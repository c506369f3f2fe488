"""Resolution-based correlation-clustering weights: LambdaCC and modularity.

Every pair ``i < j`` of the graph gets a *signed* weight ``s_ij``; a clustering that
keeps ``i`` and ``j`` together earns ``s_ij``. The correlation-clustering instance is
``w_ij = |s_ij|`` with target ``d_ij = 1`` (apart) where ``s_ij < 0`` and ``0``
(together) otherwise, so that its disagreement cost

    D(C) = sum_{s_ij > 0, i, j split} s_ij + sum_{s_ij < 0, i, j together} |s_ij|
         = P - sum_{i < j together} s_ij,        P = sum_{s_ij > 0} s_ij,

is non-negative and minimising it maximises the total signed weight kept inside
clusters. The three weightings differ in ``s``:

``lambda`` (LambdaCC, standard form [1]_)
    ``s_ij = 1 - R`` on edges, ``-R`` on non-edges, ``0 < R < 1``.
``lambda-degree`` (LambdaCC with node weights ``d_i``, the degrees [1]_)
    ``s_ij = A_ij - R d_i d_j``.
``modularity`` (generalised modularity as correlation clustering [2]_, [3]_)
    ``s_ij = B_ij = A_ij - gamma d_i d_j / (2m)``; ``gamma = 1`` is Newman's modularity.
    This is ``lambda-degree`` at ``R = gamma / (2m)``.

The sign of ``s_ij`` decides the target, not adjacency: in the degree-weighted forms an
edge between two high-degree nodes has ``s_ij < 0`` and wants its ends *apart*.
"""

import numpy as np

from ._pairs import n_pairs

__all__ = ["RESOLUTION_WEIGHTS", "resolution_weights", "check_resolution"]

#: Weight modes that take a resolution, with the allowed range (open interval) and the
#: default (``None``: the resolution must be given).
RESOLUTION_WEIGHTS = {
    "lambda": ((0.0, 1.0), None),
    "lambda-degree": ((0.0, np.inf), None),
    "modularity": ((0.0, np.inf), 1.0),
}


def check_resolution(mode, resolution, caller):
    """Check ``resolution`` for weight mode ``mode``; return it as a float (or None).

    Parameters
    ----------
    mode : str
        The resolved weight mode.
    resolution : float or None
    caller : str
        Named in error messages.

    Returns
    -------
    float or None
        ``None`` for modes without a resolution.

    Raises
    ------
    InvalidParameterError
        A resolution given to a mode without one, a missing required resolution, or a
        value outside the mode's open interval.
    """
    from ..exceptions import InvalidParameterError
    from ._checks import check_real

    if mode not in RESOLUTION_WEIGHTS:
        if resolution is not None:
            names = ", ".join(repr(m) for m in RESOLUTION_WEIGHTS)
            raise InvalidParameterError(
                f"The 'resolution' parameter of {caller} applies to weights {names} only, "
                f"not to {mode!r}")
        return None
    (low, high), default = RESOLUTION_WEIGHTS[mode]
    if resolution is None:
        if default is None:
            raise InvalidParameterError(
                f"weights={mode!r} needs a resolution (the 'resolution' parameter of "
                f"{caller}; --resolution on the command line)")
        return default
    return check_real(resolution, "resolution", caller, low=low,
                      high=None if np.isinf(high) else high, low_open=True, high_open=True)


def resolution_weights(graph, mode, resolution):
    """Pair weights and targets of LambdaCC or modularity (see the module docstring).

    Parameters
    ----------
    graph : Graph
        Used unweighted: ``A`` is its adjacency, ``d`` its degrees, ``m`` its edges.
    mode : {"lambda", "lambda-degree", "modularity"}
    resolution : float
        ``R`` for the LambdaCC forms, ``gamma`` for modularity (already checked).

    Returns
    -------
    weights : ndarray of shape (n*(n-1)/2,)
        ``|s_ij|`` in packed pair order.
    target : ndarray of shape (n*(n-1)/2,)
        1.0 where ``s_ij < 0`` (apart), else 0.0.
    units : dict
        Other units of the objective ``D``, as ``name -> (scale, offset)`` with
        ``value = scale * D + offset``: ``"modularity"`` for modularity (``Q`` of a
        clustering, as :func:`networkx.algorithms.community.modularity` with the same
        resolution computes it, self-pairs included), ``"lambdacc_linear"`` for
        ``lambda-degree`` (the unsigned linear form of [1]_, see Notes). Empty for
        ``lambda``, whose objective is the LambdaCC objective itself.

    Notes
    -----
    *LambdaCC with degrees.* Veldt, Gleich and Wirth write the objective as
    ``F(x) = sum_E (1 - R d_i d_j) x_ij + sum_{non-E} R d_i d_j (1 - x_ij)``. When
    ``R d_i d_j > 1`` the coefficient of an edge is negative and ``F`` can be negative,
    which leaves no meaningful ratio to a lower bound. This builder uses the signed form
    instead: the same pair coefficients, each written as ``|s_ij| |x_ij - d_ij|``, which
    differs from ``F`` by the constant ``K = sum_{E, R d_i d_j > 1} (1 - R d_i d_j)``
    (``F = D + K``, ``K <= 0``). Both have the same optimal clusterings and the same LP
    solutions, and ``D >= 0`` keeps ``rounded / lower_bound`` a certified ratio; ``F``
    is reported as ``lambdacc_linear``. For ``R d_i d_j <= 1`` on every edge, ``K = 0``.

    *Modularity.* With ``S(C) = sum_{i < j together} B_ij`` and no self-loops,
    ``Q = (2 S - gamma sum_i d_i^2 / (2m)) / (2m)`` and ``D = P - S``, so
    ``Q = (P - gamma sum_i d_i^2 / (4m) - D) / m``: minimising ``D`` maximises ``Q``,
    and a lower bound ``L`` on ``D`` gives the upper bound ``(P - gamma sum d^2/(4m) -
    L) / m`` on the modularity of every clustering (the LP of Agarwal and Kempe [3]_).

    Examples
    --------
    Two triangles joined by one edge; modularity of the two-triangle clustering:

    >>> import numpy as np
    >>> from metricopt.graph import Graph
    >>> from metricopt.problems import build_problem
    >>> from metricopt.rounding import evaluate
    >>> g = Graph(n=6, edges=[(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5)],
    ...           labels=np.arange(6))
    >>> p = build_problem("cc", g, weights="modularity")
    >>> scale, offset = p.units["modularity"]
    >>> round(scale * evaluate(p, labels=[0, 0, 0, 1, 1, 1]) + offset, 6)
    0.357143

    References
    ----------
    .. [1] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering
           framework for community detection. WWW 2018, 439-448.
           https://doi.org/10.1145/3178876.3186110
    .. [2] Newman, M. E. J., & Girvan, M. (2004). Finding and evaluating community
           structure in networks. Phys. Rev. E 69, 026113.
           https://doi.org/10.1103/PhysRevE.69.026113
    .. [3] Agarwal, G., & Kempe, D. (2008). Modularity-maximizing graph communities via
           mathematical programming. Eur. Phys. J. B 66(3), 409-418.
           https://doi.org/10.1140/epjb/e2008-00425-1
    """
    n, m = graph.n, graph.m
    deg = graph.degrees().astype(np.float64)
    if mode == "lambda":
        scale = 0.0
    elif mode == "lambda-degree":
        scale = float(resolution)
    else:
        scale = float(resolution) / (2.0 * m)
    adj = graph.adjacency()
    weights = np.empty(n_pairs(n), dtype=np.float64)
    target = np.empty(n_pairs(n), dtype=np.float64)
    positive = 0.0  # P: total positive signed weight
    edge_negative = 0.0  # K: total of the negative edge coefficients (lambda-degree)
    start = 0
    for i in range(n - 1):
        stop = start + n - 1 - i
        nbrs = adj.indices[adj.indptr[i]:adj.indptr[i + 1]]
        nbrs = nbrs[nbrs > i] - (i + 1)
        if mode == "lambda":
            s = np.full(n - 1 - i, -float(resolution))
            s[nbrs] = 1.0 - float(resolution)
        else:
            s = -scale * deg[i] * deg[i + 1:]
            s[nbrs] += 1.0
            edge_s = s[nbrs]
            edge_negative += float(edge_s[edge_s < 0].sum())
        weights[start:stop] = np.abs(s)
        target[start:stop] = (s < 0).astype(np.float64)
        positive += float(s[s > 0].sum())
        start = stop
    units = {}
    if mode == "lambda-degree":
        units["lambdacc_linear"] = (1.0, edge_negative)
    elif mode == "modularity":
        sum_sq = float(deg @ deg)
        units["modularity"] = (-1.0 / m, (positive - resolution * sum_sq / (4.0 * m)) / m)
    return weights, target, units
