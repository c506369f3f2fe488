"""Region-growing rounding for weighted correlation clustering (Charikar, Guruswami, Wirth).

Balls are grown in the LP metric around unclustered centres; a ball is cut off as a
cluster at the first radius ``r < 1/3`` where the weight of the similar pairs leaving it
is at most ``3 ln(n + 1)`` times its volume (the LP weight of the similar pairs inside,
the fraction of those leaving that lies inside, and a seed ``F / n`` with ``F`` the LP
weight of all similar pairs). Such a radius exists whenever ``x`` is a metric (the
region-growing lemma of Garg, Vazirani & Yannakakis [2]_), which gives an
``O(log n)``-approximation of the LP value for arbitrary non-negative weights [1]_:
cut similar pairs are paid for by the volume, and dissimilar pairs inside a ball have
``x <= 2/3``, so their LP cost is at least a third of their weight.

Centres are taken in a random order (``CGW`` allow any order), which gives
:func:`metricopt.rounding.round_solution` different tries to choose from.

For a sparse problem the distance from a centre is the shortest-path distance with
edge lengths ``x`` through unclustered nodes, which dominates ``x`` on every pair of
MET(G). For a support-sized problem the balls are those of the dense problem, found
from the point's listed pairs (a pair at 1 is in no ball, a bulk pair is dissimilar).

References
----------
.. [1] Charikar, M., Guruswami, V., & Wirth, A. (2005). Clustering with qualitative
       information. J. Comput. Syst. Sci. 71(3), 360-383.
       https://doi.org/10.1016/j.jcss.2004.10.012
.. [2] Garg, N., Vazirani, V. V., & Yannakakis, M. (1996). Approximate max-flow min-(multi)cut
       theorems and their applications. SIAM J. Comput. 25(2), 235-251.
       https://doi.org/10.1137/S0097539793243016
"""

import math

import numpy as np

from . import _kernels as _k
from ._checks import canonical_labels, check_x, csr_from_pairs, for_kinds, seed_entropy, try_seeds

__all__ = ["region_growing", "RADIUS", "GROWTH"]

#: Largest ball radius.
RADIUS = 1.0 / 3.0
#: The constant ``c`` of the stopping rule ``cut <= c ln(n + 1) vol``.
GROWTH = 3.0


def region_runner(problem, x, radius=RADIUS, growth=GROWTH):
    """A function ``(order, seed) -> labels`` running one region-growing pass."""
    n = problem.n
    c_ln = growth * math.log(n + 1)
    if problem.structure == "support":
        from ._support import support_region_runner

        return support_region_runner(problem, x, radius, c_ln)
    w = np.ascontiguousarray(problem.weights, dtype=np.float64)
    d = np.ascontiguousarray(problem.target, dtype=np.float64)
    if problem.structure == "dense":
        seed_volume = _k.positive_volume_dense(x, w, d) / n
        return lambda order, seed: _k.region_grow_dense(x, w, d, n, order, radius, c_ln, seed_volume)
    similar = (w > 0) & (d < 0.5)
    seed_volume = float(w[similar] @ np.clip(x[similar], 0.0, 1.0)) / n
    indptr, indices, var = csr_from_pairs(problem.pairs, n)
    return lambda order, seed: _k.region_grow_sparse(
        x, w, d, indptr, indices, var, order, radius, c_ln, seed_volume
    )


@for_kinds("cc")
def region_growing(problem, x, *, seed=None):
    """One region-growing rounding of a correlation-clustering relaxation.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"`` (dense or sparse).
    x : ndarray of shape (n_variables,)
        A solution of the relaxation (values are clipped to [0, 1]).
    seed : int, SeedSequence, Generator or None
        Source of the order in which centres are chosen.

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Canonical cluster ids.

    Notes
    -----
    If ``x`` is not a metric no radius may satisfy the stopping rule; the ball with the
    least cut-to-volume ratio is then cut off, so the output is always a partition
    (without the guarantee). Cost per centre: dense O(n + b n), sparse
    O(b deg log m) for the b nodes within distance 1/3.
    """
    x = check_x(problem, x)
    run = region_runner(problem, x)
    order, kernel_seed = next(try_seeds(seed_entropy(seed), "region-growing", 1, problem.n))
    return canonical_labels(run(order, kernel_seed))
