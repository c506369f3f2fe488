"""LP rounding for cluster deletion (Veldt, Gleich & Wirth).

Pick a uniformly random unclustered node ``p``; its cluster is ``p`` and every
unclustered neighbour ``j`` with ``x_pj < 1/2``. For an LP-feasible ``x`` the wedge
constraints ``x_pi + x_pj >= 1`` (``(i, j)`` not an edge) make every cluster a clique,
and the expected number of deleted edges is at most twice the LP value [1]_ (so a QP
solution within ``1 + 1/(2 gamma)`` of the LP gives ``2 + 1/gamma`` [2]_).

An ``x`` that violates wedge constraints (e.g. an early-stopped iterate) could put two
non-adjacent candidates in one cluster. Rather than fail, the rounding adds candidates
in increasing ``x_pj`` and refuses one that is not adjacent to every node already in the
cluster; refused nodes stay unclustered for later pivots. Outputs are therefore always
cliques, and equal the plain rule whenever ``x`` is feasible; the number of refusals is
reported as ``n_repaired``.

References
----------
.. [1] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering framework
       for community detection. In Proc. WWW 2018, 439-448.
       https://doi.org/10.1145/3178876.3186110
.. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
"""

from . import _kernels as _k
from ._checks import canonical_labels, check_x, csr_from_pairs, for_kinds, seed_entropy, try_seeds

__all__ = ["cluster_deletion_pivot", "CD_THRESHOLD"]

#: A neighbour joins the pivot when its LP distance is below this.
CD_THRESHOLD = 0.5


def cd_runner(problem, x, threshold=CD_THRESHOLD):
    """A function ``(order, seed) -> (labels, n_repaired)`` running one rounding pass."""
    indptr, indices, var = csr_from_pairs(problem.pairs, problem.n)
    threshold = float(threshold)
    return lambda order, seed: _k.cd_pivot(x, indptr, indices, var, order, threshold)


@for_kinds("cd")
def cluster_deletion_pivot(problem, x, *, seed=None):
    """One LP-pivot rounding of the cluster-deletion relaxation.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cd"`` (variables on the edges ``problem.pairs``).
    x : ndarray of shape (n_edges,)
        A solution of the relaxation.
    seed : int, SeedSequence, Generator or None
        Source of the pivot order.

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Canonical cluster ids; every cluster is a clique.
    n_repaired : int
        Candidates refused by the clique guard (0 for an LP-feasible ``x``).
    """
    x = check_x(problem, x)
    run = cd_runner(problem, x)
    order, kernel_seed = next(try_seeds(seed_entropy(seed), "cd-pivot", 1, problem.n))
    labels, n_repaired = run(order, kernel_seed)
    return canonical_labels(labels), int(n_repaired)
