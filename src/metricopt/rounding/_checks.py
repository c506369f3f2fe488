"""Partition checks, label canonicalisation, argument checks and the result type."""

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..exceptions import InputError, InvalidParameterError, UnsupportedProblemError
from ..result import RichResult

__all__ = [
    "Rounding",
    "is_partition",
    "canonical_labels",
    "check_labels",
    "check_in_cut",
    "check_x",
    "check_support_x",
    "for_kinds",
    "seed_entropy",
    "try_seeds",
    "csr_from_pairs",
]

_KIND_NAMES = {
    "cc": "correlation clustering",
    "sc": "sparsest cut",
    "mn": "metric nearness",
    "cd": "cluster deletion",
}


class Rounding(RichResult):
    """Outcome of a rounding: a dict that also allows attribute access.

    Fields
    ------
    kind : {"cc", "sc", "cd"}
    method : str
        The method that produced the kept answer.
    objective : float
        Its objective: the clustering cost (``cc``, ``cd``) or ``phi`` of the cut
        (``sc``), as :func:`metricopt.rounding.evaluate` computes it; after the
        refinement when there was one.
    labels : ndarray of shape (n,), int64
        Cluster ids ``0..k-1`` in order of first appearance (node 0 is in cluster 0).
        For ``sc`` the two sides of the cut.
    n_clusters : int
    in_cut : ndarray of shape (n,), bool
        ``sc`` only: the side ``S`` (the smaller side; on a tie, the side without node 0).
    cut_edges : int
        ``sc`` only: number of graph edges between the sides.
    side_sizes : tuple of int
        ``sc`` only: ``(|S|, n - |S|)``.
    n_tries : int
        Tries per randomised method.
    tries_run : int
        With a ``time_limit`` only: the tries made.
    seed : int
        Entropy of the :class:`numpy.random.SeedSequence` the tries were drawn from;
        passing it back as ``seed`` reproduces the rounding exactly.
    per_method : dict
        Best objective of every method tried.
    refine : dict
        The local search run on the kept answer (:mod:`metricopt.rounding.refine`):
        ``method`` (``"local"`` or ``"none"``), ``objective_before`` (the rounding's
        objective), ``moves``, ``merges``, ``sweeps``, ``layout``, ``stopped``, ``elapsed``.
    n_repaired : int
        ``cd`` only: candidates the clique guard refused in the kept try (0 whenever
        ``x`` satisfies the wedge constraints).
    elapsed : float
        Wall-clock seconds.
    """

    kind: str
    method: str
    objective: float
    labels: np.ndarray
    n_clusters: int
    in_cut: np.ndarray
    cut_edges: int
    side_sizes: tuple[int, int]
    n_tries: int
    tries_run: int
    seed: int
    per_method: dict[str, float]
    refine: dict[str, Any]
    n_repaired: int
    elapsed: float


# ---------------------------------------------------------------------- partitions
def is_partition(labels, n):
    """Whether ``labels`` assigns each of the nodes ``0..n-1`` to exactly one cluster.

    Parameters
    ----------
    labels : array-like of shape (n,) or iterable of iterables
        Either one non-negative integer cluster id per node, or a collection of
        communities (iterables of node ids), as in networkx.
    n : int
        Number of nodes.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_partition([0, 0, 1], 3)
    True
    >>> is_partition([{0, 1}, {1, 2}], 3)
    False
    """
    if isinstance(labels, np.ndarray) or not _is_communities(labels):
        arr = np.asarray(labels)
        if arr.ndim != 1 or arr.shape[0] != n:
            return False
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            return False
        return bool(n == 0 or arr.min() >= 0)
    seen = set()
    total = 0
    for community in labels:
        for v in community:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                return False
            seen.add(int(v))
            total += 1
    return total == n == len(seen) and (n == 0 or (min(seen) == 0 and max(seen) == n - 1))


def _is_communities(obj):
    try:
        first = next(iter(obj))
    except (TypeError, StopIteration):
        return False
    return not isinstance(first, (str, bytes)) and hasattr(first, "__iter__")


def canonical_labels(labels):
    """Relabel clusters ``0..k-1`` in order of first appearance.

    Parameters
    ----------
    labels : ndarray of shape (n,), integer

    Returns
    -------
    ndarray of shape (n,), int64

    Examples
    --------
    >>> canonical_labels(np.array([5, 2, 5, 7])).tolist()
    [0, 1, 0, 2]
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()]


def check_labels(labels, n):
    """Return ``labels`` as int64, or raise :class:`InputError` if it is not a partition."""
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"labels must be a 1-D array with one entry per node ({n}); got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"labels must be integers; got dtype {arr.dtype}")
    if n and arr.min() < 0:
        bad = int(np.flatnonzero(arr < 0)[0])
        raise InputError(f"labels must be non-negative; node {bad} has label {int(arr[bad])}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_in_cut(in_cut, n):
    """Return ``in_cut`` as bool, or raise :class:`InputError` unless it is a proper cut."""
    arr = np.asarray(in_cut)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"in_cut must be a 1-D array with one entry per node ({n}); got shape {arr.shape}")
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.integer) or not np.isin(arr, (0, 1)).all():
            raise InputError(f"in_cut must be boolean (or 0/1); got dtype {arr.dtype}")
        arr = arr.astype(bool)
    size = int(arr.sum())
    if size == 0 or size == n:
        raise InputError("in_cut must leave nodes on both sides of the cut")
    return arr


def check_x(problem, x):
    """Return the relaxation solution as a float64 vector of the problem's length.

    ``x`` may also be a solve result (a mapping with an ``"x"`` entry). For a
    support-sized problem it is a :class:`~metricopt.problems.support.SupportPoint`,
    returned compact (see :func:`check_support_x`).
    """
    if isinstance(x, Mapping) and "x" in x:
        x = x["x"]
    if getattr(problem, "structure", None) == "support":
        return check_support_x(problem, x)
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] != problem.n_variables:
        raise InputError(
            f"x must have one value per variable ({problem.n_variables}); got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise InputError("x contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def check_support_x(problem, x):
    """Return ``x`` as a compact :class:`~metricopt.problems.support.SupportPoint` of
    ``problem`` (pairs in key order).

    Raises
    ------
    InputError
        If ``x`` is not a support point of ``problem`` (node count, bulk value, pairs out
        of range or repeated, non-finite values).
    """
    from ..problems._support_scan import pair_keys
    from ..problems.support import SupportPoint

    if not isinstance(x, SupportPoint):
        raise InputError(
            f"x of a support-sized problem must be a SupportPoint (listed pairs, every other "
            f"pair at 1), as its solvers return; got {type(x).__name__}. Build one with "
            f"metricopt.problems.support.SupportPoint(n, pairs, values)")
    n = problem.n
    if int(x.n) != n:
        raise InputError(f"x is a point on {x.n} nodes; the problem has {n}")
    bulk_value = float(problem.bulk.value) if problem.bulk is not None else 1.0
    if float(x.bulk) != bulk_value:
        raise InputError(f"x puts the pairs it does not list at {x.bulk:g}; the rounding needs "
                         f"them at {bulk_value:g}, the target of the bulk pairs")
    pairs, values = x.pairs, x.values
    if values.shape[0] != pairs.shape[0]:
        raise InputError(f"x lists {pairs.shape[0]} pairs but {values.shape[0]} values")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n or (pairs[:, 0] == pairs[:, 1]).any()):
        raise InputError(f"x lists a pair that is not two distinct nodes in 0..{n - 1}")
    if not np.isfinite(values).all():
        raise InputError("x contains NaN or infinite values")
    i, j = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    keys = np.sort(pair_keys(i, j, n))
    if keys.size > 1 and (np.diff(keys) == 0).any():
        a = int(keys[np.flatnonzero(np.diff(keys) == 0)[0]])
        raise InputError(f"x lists the pair {(a // n, a % n)} more than once")
    return SupportPoint(n, np.column_stack([i, j]), values, bulk_value).compact()


def for_kinds(*kinds):
    """Decorator: the function's first argument must be a problem of one of ``kinds``."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(problem, *args, **kwargs):
            kind = getattr(problem, "kind", None)
            if kind is None:
                raise InvalidParameterError(
                    f"{func.__name__} needs a MetricProblem as its first argument. "
                    f"Got {type(problem).__name__} instead."
                )
            if kind not in kinds:
                allowed = ", ".join(_KIND_NAMES.get(k, k) for k in kinds)
                if kind == "mn":
                    raise UnsupportedProblemError(
                        f"rounding is not defined for metric nearness (its solution is the metric "
                        f"itself); {func.__name__} handles {allowed}"
                    )
                raise UnsupportedProblemError(
                    f"{func.__name__} handles {allowed} problems, not {_KIND_NAMES.get(kind, repr(kind))}"
                )
            return func(problem, *args, **kwargs)

        return wrapper

    return decorate


# --------------------------------------------------------------------------- seeds
_METHOD_KEYS = {
    "pivot": 1,
    "threshold": 2,
    "region-growing": 3,
    "kwikcluster": 4,
    "cd-pivot": 5,
    "spectral": 6,
    "leiden": 7,
}


def seed_entropy(seed):
    """Entropy (an int) of the seed sequence behind ``seed``.

    ``seed`` may be None (fresh entropy from the OS), a non-negative int, a
    :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator` (one draw).
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(seed, np.random.SeedSequence):
        if seed.spawn_key:
            raise InvalidParameterError("seed: pass a root SeedSequence (without spawn_key) or an int")
        return int(seed.entropy)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0:
        return int(seed)
    raise InvalidParameterError(
        f"The 'seed' parameter must be None, a non-negative int, a SeedSequence or a Generator. "
        f"Got {seed!r} instead."
    )


def try_seeds(entropy, method, n_tries, n):
    """Per-try ``(order, kernel_seed)``: a random node order and a 63-bit kernel seed.

    Streams depend only on ``(entropy, method, try)``, so a method gives the same tries
    whether it runs alone or inside ``method="auto"``.
    """
    key = _METHOD_KEYS[method]
    for t in range(n_tries):
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(key, t)))
        order = rng.permutation(n).astype(np.int64)
        yield order, int(rng.integers(0, 2**63))


# ------------------------------------------------------------------------- graphs
def csr_from_pairs(pairs, n):
    """CSR adjacency of the pairs ``(i, j)``: ``indptr, indices, var`` (rows sorted).

    ``var[e]`` is the row of ``pairs`` that the adjacency entry ``e`` comes from.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    m = pairs.shape[0]
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    var = np.concatenate([np.arange(m, dtype=np.int64)] * 2)
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(dst[order]), np.ascontiguousarray(var[order])
