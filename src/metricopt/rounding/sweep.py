"""Sweep cuts for sparsest cut: along the rows of the LP metric, and along a Fiedler vector.

``phi(S) = n cut(S) / (|S| |V \\ S|)``. The LP rounding [1]_ orders the nodes by their
LP distance ``x_uv`` from a node ``u`` and takes the best prefix (the sets
``{v : x_uv <= t}`` and, for ties, every prefix in between); doing this for every ``u``
costs O(n (n log n + m)). The spectral baseline sweeps the order of a Fiedler vector of
the graph Laplacian [2]_ (Cheeger-type guarantee).

References
----------
.. [1] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and
       their use in designing approximation algorithms. J. ACM 46(6), 787-832.
       https://doi.org/10.1145/331524.331526
.. [2] Fiedler, M. (1973). Algebraic connectivity of graphs. Czechoslovak Math. J.
       23(2), 298-305. https://doi.org/10.21136/CMJ.1973.101168
"""

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..problems._pairs import pair_index
from . import _kernels as _k
from ._checks import check_x, csr_from_pairs, for_kinds, seed_entropy
from .objectives import sc_edges

__all__ = ["sweep_cut", "spectral_cut", "fiedler_vector", "DENSE_EIGH_MAX", "LOBPCG_MAXITER"]

#: Graphs up to this many nodes use a dense eigensolver for the Fiedler vector.
DENSE_EIGH_MAX = 400
#: Iteration cap of the sparse eigensolver (the sweep only needs a rough ordering).
LOBPCG_MAXITER = 1000


def sc_adjacency(problem):
    """CSR adjacency ``(indptr, indices, edge weights)`` of a sparsest-cut problem."""
    edges, weights = sc_edges(problem)
    indptr, indices, var = csr_from_pairs(edges, problem.n)
    return indptr, indices, np.ascontiguousarray(weights[var])


def _side(order, k, n):
    in_cut = np.zeros(n, dtype=bool)
    in_cut[order[:k]] = True
    return in_cut


def sweep_from_x(problem, x, adjacency=None):
    """Best row sweep of checked ``x``: boolean side (uncanonicalised)."""
    n = problem.n
    indptr, indices, ew = adjacency if adjacency is not None else sc_adjacency(problem)
    _, u, k = _k.sweep_rows(x, n, indptr, indices, ew)
    others = np.delete(np.arange(n, dtype=np.int64), u)
    row = np.empty(n)
    row[others] = x[pair_index(u, others, n)]
    row[u] = -np.inf
    return _side(np.argsort(row, kind="stable"), k, n)


@for_kinds("sc")
def sweep_cut(problem, x):
    """Best sweep cut along the rows of an LP solution of sparsest cut.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"sc"`` (dense).
    x : ndarray of shape (n_variables,)
        A solution of the Leighton-Rao relaxation (any scale: only the order of each
        row matters).

    Returns
    -------
    in_cut : ndarray of shape (n,), bool
        The best prefix set found (deterministic; ties go to the smallest ``u``, then
        the shortest prefix).
    """
    return sweep_from_x(problem, check_x(problem, x))


def fiedler_vector(indptr, indices, weights, n, seed=None):
    """An eigenvector of the second-smallest eigenvalue of ``L = D - A``.

    Parameters
    ----------
    indptr, indices, weights : ndarray
        Symmetric CSR adjacency.
    n : int
    seed : int, SeedSequence, Generator or None
        Start vector of the sparse eigensolver (LOBPCG, for graphs above
        :data:`DENSE_EIGH_MAX` nodes; an iterate that has not converged after
        :data:`LOBPCG_MAXITER` iterations is used as it is).

    Returns
    -------
    ndarray of shape (n,)
        Sign fixed so that its first non-zero entry is positive.
    """
    adj = sp.csr_matrix((weights, indices, indptr), shape=(n, n))
    lap = sp.diags(np.asarray(adj.sum(axis=1)).ravel()) - adj
    if n <= DENSE_EIGH_MAX:
        _, vecs = scipy.linalg.eigh(lap.toarray(), subset_by_index=[0, 1])
        vec = vecs[:, 1]
    else:
        # LOBPCG orthogonal to the constant vector, Jacobi-preconditioned: robust where a
        # shift-invert factorisation of L fills in (expander-like graphs)
        rng = np.random.default_rng(np.random.SeedSequence(seed_entropy(seed), spawn_key=(6, 0)))
        deg = lap.diagonal()
        precond = sp.diags(1.0 / np.where(deg > 0, deg, 1.0)).tocsr()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # an unconverged iterate still orders nodes
            _, vecs = spla.lobpcg(lap, rng.standard_normal((n, 1)), Y=np.full((n, 1), n**-0.5),
                                  M=precond, largest=False, tol=1e-6, maxiter=LOBPCG_MAXITER)
        vec = vecs[:, 0]
    nz = np.flatnonzero(np.abs(vec) > 1e-12 * np.abs(vec).max())
    if nz.size and vec[nz[0]] < 0:
        vec = -vec
    return vec


@for_kinds("sc")
def spectral_cut(problem, *, seed=None, adjacency=None):
    """Spectral baseline: best prefix of the nodes ordered by a Fiedler vector.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"sc"``.
    seed : int, SeedSequence, Generator or None
        Start vector of the sparse eigensolver (large graphs only).
    adjacency : tuple, optional
        Precomputed ``(indptr, indices, weights)``.

    Returns
    -------
    in_cut : ndarray of shape (n,), bool
    """
    n = problem.n
    indptr, indices, ew = adjacency if adjacency is not None else sc_adjacency(problem)
    vec = fiedler_vector(indptr, indices, ew, n, seed=seed)
    order = np.argsort(vec, kind="stable").astype(np.int64)
    _, k = _k.sweep_order(order, indptr, indices, ew)
    return _side(order, k, n)
