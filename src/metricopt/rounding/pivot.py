"""Pivot roundings for correlation clustering: LP-pivot, threshold pivot, KwikCluster.

All three repeat one step until every node is clustered: pick a uniformly random
unclustered node ``p`` (the first unclustered node of a random permutation), and give
it a cluster made of ``p`` and some unclustered nodes ``j``:

* LP-pivot: each ``j`` joins independently with probability ``1 - x_pj`` (``x``
  clipped to [0, 1]) [1]_;
* threshold pivot: ``j`` joins when ``x_pj < 1/3`` (deterministic given the order) [2]_;
* KwikCluster: ``j`` joins when the pair is similar (``d_pj = 0``, ``w_pj > 0``); no
  LP is needed [1]_. Its entry point, :func:`metricopt.rounding.kwikcluster`, is
  ``round_solution(method="kwikcluster")`` and sits with it.

For a sparse problem (variables on the graph's pairs only) a pair without a variable
counts as ``x = 1`` (and as dissimilar for KwikCluster), so the pivot only ever joins
its graph neighbours. A support-sized problem's point lists the pairs below 1 likewise;
its pivots give the dense problem's clusterings, LP-pivot's coins included
(:mod:`metricopt.rounding._support`).

References
----------
.. [1] Ailon, N., Charikar, M., & Newman, A. (2008). Aggregating inconsistent
       information: ranking and clustering. J. ACM 55(5), 23:1-23:27.
       https://doi.org/10.1145/1411509.1411513
.. [2] van Zuylen, A., & Williamson, D. P. (2009). Deterministic pivoting algorithms for
       constrained ranking and clustering problems. Math. Oper. Res. 34(3), 594-620.
       https://doi.org/10.1287/moor.1090.0385
"""

import numpy as np

from . import _kernels as _k
from ._checks import canonical_labels, check_x, csr_from_pairs, for_kinds, seed_entropy, try_seeds

__all__ = ["lp_pivot", "threshold_pivot", "THRESHOLD"]

#: Inclusion threshold of the threshold pivot.
THRESHOLD = 1.0 / 3.0


def pivot_runner(problem, values, threshold):
    """A function ``(order, seed) -> labels`` running one pivot pass.

    ``values`` holds one entry per variable (float64 ``x``, or uint8 0/1 for
    KwikCluster; for a support problem a checked SupportPoint, or the uint8 values of
    its explicit pairs); ``threshold < 0`` selects LP-pivot's random inclusion.
    """
    n = problem.n
    threshold = float(threshold)
    if problem.structure == "support":
        from . import _support

        if isinstance(values, np.ndarray):
            return _support.sign_runner(problem, values, threshold)
        return _support.support_pivot_runner(problem, values, threshold)
    if problem.structure == "dense":
        return lambda order, seed: _k.pivot_dense(values, n, order, threshold, seed)
    indptr, indices, var = csr_from_pairs(problem.pairs, n)
    return lambda order, seed: _k.pivot_sparse(values, indptr, indices, var, order, threshold, seed)


def sign_values(problem):
    """KwikCluster's 0/1 pair values: 0 on similar pairs (``d = 0``, ``w > 0``), else 1."""
    w = np.asarray(problem.weights)
    d = np.asarray(problem.target)
    return (~((d == 0) & (w > 0))).view(np.uint8)


def _one_try(problem, values, threshold, method, seed):
    run = pivot_runner(problem, values, threshold)
    order, kernel_seed = next(try_seeds(seed_entropy(seed), method, 1, problem.n))
    return canonical_labels(run(order, kernel_seed))


@for_kinds("cc")
def lp_pivot(problem, x, *, seed=None):
    """One LP-pivot rounding of a correlation-clustering relaxation.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"``.
    x : ndarray of shape (n_variables,)
        A solution of the relaxation.
    seed : int, SeedSequence, Generator or None
        Source of the pivot order and the coin flips.

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Canonical cluster ids.

    Notes
    -----
    In expectation a 2.5-approximation of the LP value on complete unweighted
    instances [1]_; :func:`metricopt.rounding.round_solution` keeps the best of many
    tries.
    """
    return _one_try(problem, check_x(problem, x), -1.0, "pivot", seed)


@for_kinds("cc")
def threshold_pivot(problem, x, *, seed=None):
    """One threshold-pivot rounding (``j`` joins the pivot ``p`` iff ``x_pj < 1/3``).

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"``.
    x : ndarray of shape (n_variables,)
    seed : int, SeedSequence, Generator or None
        Source of the pivot order.

    Returns
    -------
    labels : ndarray of shape (n,), int64
    """
    return _one_try(problem, check_x(problem, x), THRESHOLD, "threshold", seed)
