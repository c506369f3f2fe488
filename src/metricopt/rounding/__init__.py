"""Rounding of metric-constrained relaxations into clusterings and cuts, and their scoring.

:func:`round_solution` turns an LP/QP solution ``x`` into an integral answer (best of
several seeded tries of each method); :func:`evaluate` scores any clustering or cut
from the problem data alone.

Methods per problem kind:

* ``cc``: ``pivot``, ``threshold`` and ``region-growing`` (``"auto"``: the best of the
  three), the LP-free baseline ``kwikcluster``, and ``leiden``, the Leiden clustering
  for the quality function that matches the problem's weights (optional packages; see
  :mod:`metricopt.rounding.leiden`);
* ``sc``: ``sweep`` and the LP-free ``spectral`` (``"auto"``: the better of both);
* ``cd``: ``pivot`` (also ``"auto"``).

A support-sized ``cc`` problem (:mod:`metricopt.problems.support`) is rounded, scored and
refined from its listed pairs only, never all ``n^2`` pairs; for the same ``x`` and seed
its roundings are the dense problem's (:mod:`metricopt.rounding._support`).

Every answer is then refined by local search (:mod:`metricopt.rounding.refine`): node
moves and cluster merges for ``cc`` and ``cd``, Fiduccia-Mattheyses moves for ``sc``; each
move is made only when it lowers the objective. ``refine="none"`` turns it off.

Metric nearness has no rounding: its answer is the metric itself.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._choices import ROUNDING_AUTO, ROUNDING_METHODS
from ..exceptions import InvalidParameterError, UnsupportedProblemError
from ._checks import (
    Rounding,
    canonical_labels,
    check_x,
    for_kinds,
    is_partition,
    seed_entropy,
    try_seeds,
)
from .cluster_deletion import cd_runner, cluster_deletion_pivot
from .objectives import (
    cc_cost,
    cd_cost,
    clustering_objective,
    cut_objective,
    cut_value,
    evaluate,
    find_non_clique,
    sc_edges,
)
from .pivot import THRESHOLD, lp_pivot, pivot_runner, sign_values, threshold_pivot
from .refine import (
    REFINE_CANDIDATES,
    Refinement,
    check_budget,
    check_refine_method,
    refine_clustering,
    refine_cut,
    refine_rounding,
)
from .region_growing import region_growing, region_runner
from .sweep import sc_adjacency, spectral_cut, sweep_cut, sweep_from_x

if TYPE_CHECKING:
    from ..problems import MetricProblem

__all__ = [
    "Rounding",
    "round_solution",
    "evaluate",
    "clustering_objective",
    "cut_objective",
    "is_partition",
    "canonical_labels",
    "kwikcluster",
    "lp_pivot",
    "threshold_pivot",
    "region_growing",
    "sweep_cut",
    "spectral_cut",
    "cluster_deletion_pivot",
    "refine_rounding",
    "refine_clustering",
    "refine_cut",
    "Refinement",
    "METHODS",
]

#: Methods per problem kind; ``"auto"`` runs the ones listed in :data:`AUTO`.
METHODS = ROUNDING_METHODS
_NO_X = ("kwikcluster", "spectral", "leiden")  # methods that do not read x
AUTO = ROUNDING_AUTO


def _check_method(method, kind):
    valid = ("auto",) + METHODS[kind]
    meth = method.lower() if isinstance(method, str) else method
    if meth not in valid:
        raise InvalidParameterError(
            f"The 'method' parameter of round_solution must be one of {', '.join(map(repr, valid))} "
            f"for this problem. Got {method!r} instead."
        )
    return AUTO[kind] if meth == "auto" else (meth,)


def _check_n_tries(n_tries):
    if isinstance(n_tries, (bool, np.bool_)) or not isinstance(n_tries, (int, np.integer)) or n_tries < 1:
        raise InvalidParameterError(
            f"The 'n_tries' parameter of round_solution must be an int in the range [1, inf). "
            f"Got {n_tries!r} instead."
        )
    return int(n_tries)


@for_kinds("cc", "sc", "cd")
def round_solution(problem: MetricProblem, x: np.ndarray | Mapping[str, Any] | None, *,
                   method: str = "auto", n_tries: int = 20,
                   seed: int | np.random.SeedSequence | np.random.Generator | None = None,
                   compare: str | None = None, refine: str = "auto",
                   refine_candidates: int = REFINE_CANDIDATES,
                   refine_time_limit: float | None = None,
                   time_limit: float | None = None) -> Rounding:
    """Round a relaxation's solution into a clustering (cc, cd) or a cut (sc).

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"`` (dense, sparse or support), ``"sc"`` (dense) or ``"cd"``.
    x : ndarray of shape (n_variables,), SupportPoint or SolveResult
        The relaxation's solution (a mapping with an ``"x"`` entry is accepted); a
        :class:`~metricopt.problems.support.SupportPoint` for a support-sized problem
        (every pair it does not list at 1: never joined). May be None for
        ``method="kwikcluster"`` and ``method="leiden"``.
    method : str, default="auto"
        ``cc``: ``"pivot"`` (LP-pivot [1]_), ``"threshold"`` (pivot with
        ``x < 1/3``), ``"region-growing"`` (Charikar-Guruswami-Wirth [2]_),
        ``"kwikcluster"`` (signs only [1]_), ``"leiden"`` (Leiden [5]_ on the quality
        function matching the weights, see :mod:`metricopt.rounding.leiden`; needs
        ``pip install 'metricopt[leiden]'``), ``"auto"`` (best of the first three).
        ``sc``: ``"sweep"`` (every row of ``x`` [3]_), ``"spectral"`` (Fiedler
        vector), ``"auto"`` (both, the better kept). ``cd``: ``"pivot"`` (``x < 1/2``
        [4]_) or ``"auto"``.
    n_tries : int, default=20
        Tries of every randomised method (Leiden: seeds); the cheapest answer is kept.
        The row sweep and the spectral sweep are deterministic and run once.
    seed : int, SeedSequence, Generator or None
        Seeds the tries. Each try of each method draws from its own
        ``SeedSequence(entropy, spawn_key=(method, try))``, so a method gives the same
        tries alone or inside ``"auto"``; ``None`` draws fresh entropy, reported in the
        result's ``seed`` field.
    compare : str or None
        Further methods (a method name, or ``"auto"`` for its set) run with the same
        seed only to compare with: their best objectives are added to ``per_method``,
        but the answer is always ``method``'s (e.g. ``method="leiden",
        compare="auto"``: how Leiden fares against the LP roundings). Methods that need
        ``x`` are skipped when it is None.
    refine : {"auto", "local", "none"}, default="auto"
        Local search on the answer (``"auto"`` is ``"local"``; see
        :func:`metricopt.rounding.refine_rounding`): node moves and merges (``cc``;
        ``cd`` keeping cliques), Fiduccia-Mattheyses moves (``sc``). Its budget is
        counted in sweeps over the problem, and its node orders come from ``seed``.
    refine_candidates : int, default=4
        ``cc``, ``cd``: how many of the cheapest distinct tries are refined (each with
        its own node orders; when fewer tries differ, the cheapest is refined again);
        the best refined answer is kept (a try's rank before refinement is a poor guide
        to where the local search ends).
    refine_time_limit : float or None
        Seconds after which the refinement stops early (between two sweeps).
    time_limit : float or None
        Seconds for the rounding and its refinement together. The tries get the first
        half, shared evenly by the methods in turn (each method makes at least one try;
        ``tries_run`` in the result says how many ran), the refinement what is left
        (unless ``refine_time_limit`` is given). Which tries fit depends on the machine,
        so a limited run's answer may too; without a limit all ``n_tries`` run.

    Returns
    -------
    Rounding
        Fields ``kind, method, objective, labels, n_clusters, n_tries, seed,
        per_method, refine, elapsed`` (and ``tries_run`` with a ``time_limit``); ``sc``
        adds ``in_cut, cut_edges, side_sizes`` and ``cd`` adds ``n_repaired``.
        ``objective`` equals :func:`evaluate` of the answer (after refinement);
        ``refine["objective_before"]`` is the rounding's and ``per_method`` holds the
        roundings' own objectives.

    Raises
    ------
    UnsupportedProblemError
        For metric nearness (no rounding) or an unsupported structure.
    InvalidParameterError
        For an unknown method or a bad ``n_tries`` / ``seed``.
    InputError
        If ``x`` has the wrong length or non-finite entries.

    Notes
    -----
    The guarantees hold in expectation for an optimal LP solution (a near-optimal QP
    solution multiplies them by its own factor); keeping the best of ``n_tries`` can
    only help. Ties between tries keep the earliest (method order above, then try
    order).

    References
    ----------
    .. [1] Ailon, N., Charikar, M., & Newman, A. (2008). Aggregating inconsistent
           information: ranking and clustering. J. ACM 55(5), 23.
           https://doi.org/10.1145/1411509.1411513
    .. [2] Charikar, M., Guruswami, V., & Wirth, A. (2005). Clustering with qualitative
           information. J. Comput. Syst. Sci. 71(3), 360-383.
           https://doi.org/10.1016/j.jcss.2004.10.012
    .. [3] Leighton, T., & Rao, S. (1999). Multicommodity max-flow min-cut theorems and
           their use in designing approximation algorithms. J. ACM 46(6), 787-832.
           https://doi.org/10.1145/331524.331526
    .. [4] Veldt, N., Gleich, D. F., & Wirth, A. (2018). A correlation clustering
           framework for community detection. WWW 2018.
           https://doi.org/10.1145/3178876.3186110
    .. [5] Traag, V. A., Waltman, L., & van Eck, N. J. (2019). From Louvain to Leiden:
           guaranteeing well-connected communities. Sci. Rep. 9, 5233.
           https://doi.org/10.1038/s41598-019-41695-z

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.problems import MetricProblem
    >>> p = MetricProblem(kind="cc", n=3, labels=np.arange(3), structure="dense",
    ...                   objective="l1", weights=np.ones(3), target=np.array([0., 1., 1.]),
    ...                   lower=0.0, upper=1.0)
    >>> r = round_solution(p, np.array([0., 1., 1.]), seed=0)
    >>> r.labels.tolist(), r.objective
    ([0, 0, 1], 0.0)
    """
    start = time.perf_counter()
    kind = problem.kind
    if kind == "cc" and problem.structure not in ("dense", "sparse", "support"):
        raise UnsupportedProblemError(f"correlation clustering with structure {problem.structure!r}")
    if kind == "sc" and problem.structure != "dense":
        raise UnsupportedProblemError("sparsest-cut rounding needs the dense (all pairs) relaxation")
    if kind == "cd" and problem.structure != "edges":
        raise UnsupportedProblemError("cluster-deletion rounding needs the edge-variable relaxation")
    methods = _check_method(method, kind)
    others = ()
    if compare is not None:
        others = tuple(m for m in _check_method(compare, kind)
                       if m not in methods and (x is not None or m in _NO_X))
    n_tries = _check_n_tries(n_tries)
    refine_method = check_refine_method(refine)
    refine_candidates = check_budget("refine_candidates", refine_candidates, REFINE_CANDIDATES,
                                     low=1)
    entropy = seed_entropy(seed)
    budget = _check_time_limit(time_limit)
    if "leiden" in methods + others:
        from .leiden import require_leiden

        require_leiden()
    if x is not None or any(m not in _NO_X for m in methods):
        x = check_x(problem, x)

    if kind == "sc":
        out = _round_cut(problem, x, methods, entropy)
        if others:
            out["per_method"].update(_round_cut(problem, x, others, entropy)["per_method"])
    else:
        keep = 1 if refine_method == "none" else refine_candidates
        ends = None if budget is None else _try_deadlines(start, budget, len(methods + others))
        out, candidates = _round_clustering(problem, x, methods, n_tries, entropy, keep,
                                            ends and ends[:len(methods)])
        if others:
            more = _round_clustering(problem, x, others, n_tries, entropy, 1,
                                     ends and ends[len(methods):])[0]
            out["per_method"].update(more["per_method"])
            if budget is not None:
                out["tries_run"] += more["tries_run"]
        # fewer distinct tries than candidates (an integral x): the cheapest one again,
        # refined with other node orders
        candidates += [candidates[0]] * (keep - len(candidates))
    out.update(n_tries=n_tries, seed=entropy)
    if budget is None:
        out.pop("tries_run", None)
    elif refine_time_limit is None:
        refine_time_limit = max(start + budget - time.perf_counter(), 0.0)
    out = refine_rounding(problem, out, method=refine_method, seed=entropy,
                          time_limit=refine_time_limit,
                          candidates=None if kind == "sc" else candidates)
    out["elapsed"] = time.perf_counter() - start
    return out


@for_kinds("cc")
def kwikcluster(problem, seed=None, *, n_tries=1):
    """KwikCluster: pivot on the signs of the pairs, without any relaxation.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"``.
    seed : int, SeedSequence, Generator or None
        Source of the pivot orders.
    n_tries : int, default=1
        Independent pivot orders; the cheapest clustering is kept.

    Returns
    -------
    Rounding
        With ``method="kwikcluster"``; see :func:`metricopt.rounding.round_solution`.

    Notes
    -----
    An expected 3-approximation on complete unweighted graphs (Ailon, Charikar & Newman
    2008; :mod:`.pivot`); a baseline for the LP roundings elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.problems import MetricProblem
    >>> p = MetricProblem(kind="cc", n=3, labels=np.arange(3), structure="dense",
    ...                   objective="l1", weights=np.ones(3), target=np.array([0., 1., 1.]),
    ...                   lower=0.0, upper=1.0)
    >>> kwikcluster(p, seed=0).labels.tolist()
    [0, 0, 1]
    """
    return round_solution(problem, None, method="kwikcluster", n_tries=n_tries, seed=seed,
                          refine="none")


def _runners(problem, x, method):
    if problem.kind == "cd":
        return "cd-pivot", cd_runner(problem, x)
    if method == "pivot":
        return method, pivot_runner(problem, x, -1.0)
    if method == "threshold":
        return method, pivot_runner(problem, x, THRESHOLD)
    if method == "kwikcluster":
        return method, pivot_runner(problem, sign_values(problem), THRESHOLD)
    if method == "leiden":
        from .leiden import leiden_runner

        run = leiden_runner(problem)
        return method, lambda order, kernel_seed: run(kernel_seed)
    return method, region_runner(problem, x)


def _keep_best(cands, keep, value, method, labels, repaired):
    """Insert a try into ``cands``: the ``keep`` cheapest distinct ones, ties in try order."""
    if len(cands) == keep and value >= cands[-1][0]:
        return
    labels = canonical_labels(labels)
    pos = len(cands)
    for t, (v, _, lab, _) in enumerate(cands):
        if v == value and np.array_equal(lab, labels):
            return
        if value < v and pos == len(cands):
            pos = t
    cands.insert(pos, (value, method, labels, int(repaired)))
    del cands[keep:]


def _check_time_limit(time_limit):
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.number)) \
            or not np.isfinite(time_limit) or time_limit < 0:
        raise InvalidParameterError(f"The 'time_limit' parameter of round_solution must be "
                                    f"a number >= 0 or None. Got {time_limit!r} instead.")
    return float(time_limit)


#: Share of a rounding ``time_limit`` for the tries; the refinement gets the rest.
TRIES_SHARE = 0.5


def _try_deadlines(start, budget, n_methods):
    """``time.perf_counter()`` values by which each method in turn ends its tries."""
    step = TRIES_SHARE * budget / max(n_methods, 1)
    return [start + step * (i + 1) for i in range(n_methods)]


def _round_clustering(problem, x, methods, n_tries, entropy, keep=1, deadlines=None):
    """Best try of ``methods``; also the ``keep`` cheapest distinct tries (for refinement).

    With ``deadlines`` (one per method), a method makes no further try after its own
    (at least one); ``tries_run`` counts the tries made.
    """
    n = problem.n
    score = cc_cost if problem.kind == "cc" else cd_cost
    cands = []
    per_method = {}
    tries_run = 0
    for i, method in enumerate(methods):
        stream, run = _runners(problem, x, method)
        for t, (order, kernel_seed) in enumerate(try_seeds(entropy, stream, n_tries, n)):
            if t and deadlines and time.perf_counter() >= deadlines[i]:
                break
            tries_run += 1
            out = run(order, kernel_seed)
            labels, repaired = out if problem.kind == "cd" else (out, 0)
            value = score(problem, labels)
            if method not in per_method or value < per_method[method]:
                per_method[method] = value
            _keep_best(cands, keep, value, method, labels, repaired)
    for value, method, labels, _ in cands:
        if not is_partition(labels, n):
            raise RuntimeError(f"rounding method {method!r} returned an invalid partition")
        if problem.kind == "cd" and find_non_clique(problem, labels) is not None:
            raise RuntimeError("cluster-deletion rounding returned a cluster that is not a clique")
    value, method, labels, repaired = cands[0]
    result = Rounding(kind=problem.kind, method=method, objective=value, labels=labels,
                      n_clusters=int(labels.max()) + 1 if n else 0)
    if problem.kind == "cd":
        result["n_repaired"] = repaired
    result["per_method"] = per_method
    result["tries_run"] = tries_run
    return result, cands


def _round_cut(problem, x, methods, entropy):
    n = problem.n
    edges, weights = sc_edges(problem)
    adjacency = sc_adjacency(problem)
    best = None
    per_method = {}
    for method in methods:
        if method == "sweep":
            side = sweep_from_x(problem, x, adjacency=adjacency)
        else:
            side = spectral_cut(problem, seed=entropy, adjacency=adjacency)
        phi, _, n_cut = cut_value(problem, side, edges, weights)
        per_method[method] = phi
        if best is None or phi < best[0]:
            best = (phi, method, side, n_cut)
    phi, method, side, n_cut = best
    size = int(side.sum())
    if 2 * size > n or (2 * size == n and side[0]):
        side = ~side
        size = n - size
    labels = canonical_labels(side.astype(np.int64))
    return Rounding(kind="sc", method=method, objective=phi, labels=labels, n_clusters=2,
                    in_cut=side, cut_edges=n_cut, side_sizes=(size, n - size), per_method=per_method)
