"""Local-search refinement of clusterings and cuts, run after every rounding.

A rounding of the LP is within a constant (or logarithmic) factor of the optimum in
expectation, but rarely a local optimum: moving one node, or joining two clusters, often
lowers the objective. The refinement makes such moves until none helps or its budget is
spent, so the certified ratio ``objective / lower_bound`` that users read is as small as
local search can make it.

* ``cc`` (any weights, dense or sparse): sweeps of single-node moves to the best
  neighbouring cluster or to a new singleton (the local-moving phase of Louvain [1]_ and
  Leiden [2]_, scored by the correlation-clustering cost as in the local search of
  cluster editing [3]_), and passes of cluster merges; a move is made only when it lowers
  the cost. Per node the gains to the adjacent clusters are accumulated from its
  adjacency and the cluster sizes, which are kept up to date, so a sweep costs
  O(n + number of pairs that differ from the background gain); dense problems whose gains
  are mostly alike (Jaccard and unit weights) are reduced to that sparse form, others are
  read in place (O(n^2) per sweep, no new n x n array). A support-sized problem makes the
  dense problem's moves from its explicit pairs, each cluster's bulk term (``-c |C|``, or
  ``-c d_i sum_C d`` with node weights ``d``) kept with the cluster sizes (O(n + explicit
  pairs) per sweep; :mod:`metricopt.rounding._support`).
* ``cd``: the same moves and merges restricted so that every cluster stays a clique.
* ``sc``: Fiduccia-Mattheyses passes [4]_ of single-node moves across the cut, scored by
  ``phi(S) = n cut(S) / (|S| |V \\ S|)``, the best prefix of each pass kept.

After a rounding, the :data:`REFINE_CANDIDATES` cheapest distinct tries are refined, each
with its own seeded node orders, and the best result is kept: where local search ends up
depends more on the start than the start's own cost says. The budget is counted in sweeps
and passes, a fixed multiple of the problem's size, never in seconds: the same input and
seed give the same answer. A ``time_limit`` may only stop the search early (between
sweeps), and the result says so.

References
----------
.. [1] Blondel, V. D., Guillaume, J.-L., Lambiotte, R., & Lefebvre, E. (2008). Fast
       unfolding of communities in large networks. J. Stat. Mech. P10008.
       https://doi.org/10.1088/1742-5468/2008/10/P10008
.. [2] Traag, V. A., Waltman, L., & van Eck, N. J. (2019). From Louvain to Leiden:
       guaranteeing well-connected communities. Sci. Rep. 9, 5233.
       https://doi.org/10.1038/s41598-019-41695-z
.. [3] Böcker, S., & Baumbach, J. (2013). Cluster editing. In The Nature of
       Computation (CiE 2013), LNCS 7921, 33-44.
       https://doi.org/10.1007/978-3-642-39053-1_5
.. [4] Fiduccia, C. M., & Mattheyses, R. M. (1982). A linear-time heuristic for
       improving network partitions. In Proc. 19th Design Automation Conference, 175-181.
       https://doi.org/10.1109/DAC.1982.1585498
"""

import time

import numpy as np

from .._choices import REFINE_METHODS
from ..exceptions import InvalidParameterError, UnsupportedProblemError
from ..result import RichResult
from . import _refine_kernels as _rk
from . import _support_kernels as _sk
from ._checks import canonical_labels, check_in_cut, check_labels, for_kinds, seed_entropy
from .objectives import cc_cost, cd_cost, cut_value, find_non_clique, sc_edges
from .sweep import sc_adjacency

__all__ = ["Refinement", "refine_clustering", "refine_cut", "refine_rounding", "refine_section",
           "REFINE_METHODS", "REFINE_CANDIDATES", "MAX_SWEEPS", "MAX_FM_PASSES"]

#: Sweeps of node moves plus passes of merges allowed to one refinement of a clustering.
#: Each costs O(n + pairs that differ from the background gain), O(n^2) for dense gains.
MAX_SWEEPS = 64
#: Cheapest distinct tries of a rounding that are refined (the best refined one is kept).
REFINE_CANDIDATES = 4
#: Fiduccia-Mattheyses passes allowed to one refinement of a cut (O(n^2 + m) each).
MAX_FM_PASSES = 16
#: A dense problem is reduced to sparse gains when at most this share of its pairs
#: differs from the background gain.
SPARSE_SHARE = 0.125
#: Moves must lower the cost by more than this times the largest pair gain (round-off).
REL_TOL = 1e-10
#: Dense gains: nodes are visited in runs of this many consecutive ids (see _visit_order).
DENSE_BLOCK = 8
_SAMPLE = 8192  # pairs sampled to find the background gain
_REFINE_KEY = 8  # spawn key of the refinement's seed stream (see _checks.try_seeds)


class Refinement(RichResult):
    """Outcome of a refinement: a dict that also allows attribute access.

    Fields
    ------
    method : str
        ``"local"``.
    objective_before, objective : float
        Objective of the given answer and of the refined one (recomputed from the
        labels, as :func:`metricopt.rounding.evaluate` does); never larger.
    labels : ndarray of shape (n,), int64
        Canonical cluster ids of the refined answer (``sc``: the two sides).
    in_cut : ndarray of shape (n,), bool
        ``sc`` only: the side ``S`` (the smaller side; on a tie, the side without node 0).
    n_clusters : int
    moves, merges : int
        Node moves and cluster merges made (``sc``: nodes moved across, net).
    sweeps : int
        Sweeps of node moves and passes of merges (``sc``: Fiduccia-Mattheyses passes).
    layout : str
        ``"sparse"``, ``"dense"`` or ``"support"`` gains (``cc``, ``cd``); ``"fm"`` for
        ``sc``.
    stopped : str
        ``"converged"`` (no move helps), ``"budget"`` or ``"time"``.
    elapsed : float
        Wall-clock seconds.
    """


def check_refine_method(method):
    """Normalise a refinement method name (``"auto"`` is ``"local"``)."""
    meth = method.lower() if isinstance(method, str) else method
    if meth not in REFINE_METHODS:
        raise InvalidParameterError(
            f"The 'refine' parameter must be one of {', '.join(map(repr, REFINE_METHODS))}. "
            f"Got {method!r} instead."
        )
    return "local" if meth == "auto" else meth


def check_budget(name, value, default, low=0):
    """``value`` as an int of at least ``low`` (``None``: ``default``)."""
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
        raise InvalidParameterError(
            f"The {name!r} parameter must be an int in the range [{low}, inf). Got {value!r} instead.")
    return int(value)


def _check_time_limit(time_limit):
    if time_limit is None:
        return np.inf
    try:
        value = float(time_limit)
    except (TypeError, ValueError):
        value = np.nan
    if not value >= 0.0:
        raise InvalidParameterError(
            f"The 'time_limit' parameter must be a non-negative number or None. Got {time_limit!r} instead.")
    return value


# --------------------------------------------------------------------- structures
def _gains(w, d):
    return w * (np.abs(1.0 - d) - np.abs(d))


def _background(w, d):
    """The most frequent pair gain among a fixed stride sample (ties: the smallest)."""
    size = w.size
    idx = np.unique(np.linspace(0, size - 1, min(size, _SAMPLE)).astype(np.int64))
    values, counts = np.unique(_gains(w[idx], d[idx]), return_counts=True)
    return float(values[np.argmax(counts)])


def gain_layout(problem, sparse_share=SPARSE_SHARE):
    """The pair gains of a ``cc`` or ``cd`` problem in the kernels' layout.

    A dense problem takes the sparse layout when at most ``sparse_share`` of its pairs
    have a gain other than the most common one.

    Returns
    -------
    dict
        ``layout`` (``"sparse"``, ``"dense"`` or ``"support"``), ``tol`` and, for
        ``"sparse"`` and ``"support"``, ``indptr, indices, delta, s0, clique``; for
        ``"dense"``, ``w, d``; for ``"support"`` where the dense problem's gains are read
        in place or the bulk pairs are node-weighted, also ``node_weights``,
        ``bulk_weight`` and ``dense_order``.
    """
    from ._checks import csr_from_pairs

    n = problem.n
    if problem.structure == "support":
        from ._support import support_gain_layout

        return support_gain_layout(problem, REL_TOL, sparse_share, _SAMPLE)
    if problem.kind == "cd":
        indptr, indices, var = csr_from_pairs(problem.pairs, n)
        cost = np.ones(problem.pairs.shape[0]) if problem.cost is None else np.asarray(problem.cost, float)
        delta = np.ascontiguousarray(cost[var])
        scale = float(np.abs(cost).max()) if cost.size else 1.0
        return dict(layout="sparse", indptr=indptr, indices=indices, delta=delta, s0=0.0,
                    clique=True, tol=REL_TOL * scale)
    w = np.ascontiguousarray(problem.weights, dtype=np.float64)
    d = np.ascontiguousarray(problem.target, dtype=np.float64)
    if problem.structure == "sparse":
        indptr, indices, var = csr_from_pairs(problem.pairs, n)
        gains = _gains(w, d)
        scale = float(np.abs(gains).max()) if gains.size else 1.0
        return dict(layout="sparse", indptr=indptr, indices=indices,
                    delta=np.ascontiguousarray(gains[var]), s0=0.0, clique=False,
                    tol=REL_TOL * scale)
    scale = float(np.abs(w).max()) if w.size else 1.0  # |gain| <= w
    tol = REL_TOL * scale
    if w.size == 0:
        return dict(layout="dense", w=w, d=d, tol=tol)
    s0 = _background(w, d)
    counts = _rk.deviation_counts(w, d, n, s0)
    if counts.sum() > 2 * sparse_share * w.size:
        return dict(layout="dense", w=w, d=d, tol=tol)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices, delta = _rk.deviation_fill(w, d, n, s0, indptr)
    return dict(layout="sparse", indptr=indptr, indices=indices, delta=delta, s0=s0,
                clique=False, tol=tol)


# ------------------------------------------------------------------- clusterings
def _refine_rng(entropy, candidate):
    """The node-order stream of one refined candidate."""
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(_REFINE_KEY, candidate)))


def _visit_order(rng, n, block):
    """A seeded node order: blocks of ``block`` consecutive ids in random order.

    With dense gains node ``i`` reads the pairs ``(j, i)``, ``j < i``, one per packed row;
    consecutive ``i`` share those cache lines, so short ascending runs read the packed
    arrays several times faster than a fully random order.
    """
    if block <= 1:
        return rng.permutation(n).astype(np.int64)
    starts = rng.permutation(-(-n // block)) * block
    order = (starts[:, None] + np.arange(block)).ravel()
    return np.ascontiguousarray(order[order < n], dtype=np.int64)


def _local_search(gains, labels, rng, max_sweeps, deadline):
    """Alternate node sweeps and merge passes.

    Returns the moves, merges and sweeps made, why it stopped, and the summed gains (the
    cost decrease, up to round-off).
    """
    n = labels.size
    sizes = np.bincount(labels, minlength=n).astype(np.int64)
    acc = np.zeros(n, dtype=np.float64)
    cnt = np.zeros(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    free = np.empty(n, dtype=np.int64)
    head, nxt, tail = (np.empty(n, dtype=np.int64) for _ in range(3))
    sparse = gains["layout"] in ("sparse", "support")
    bulk = gains.get("node_weights") is not None
    if bulk:  # support problem, dense kernels' moves: a bulk term per cluster
        nw, cw = gains["node_weights"], gains["bulk_weight"]
        dsum = np.bincount(labels, weights=nw, minlength=n)
        prv, minid, cand, rank = (np.empty(n, dtype=np.int64) for _ in range(4))
        cval = np.empty(n, dtype=np.float64)
    block = DENSE_BLOCK if not sparse or gains.get("dense_order") else 1
    tol = gains["tol"]
    moves = merges = sweeps = 0
    total = 0.0
    stopped = "budget"
    merge_next = False
    while sweeps < max_sweeps:
        if time.perf_counter() > deadline:
            stopped = "time"
            break
        sweeps += 1
        if merge_next:
            if bulk:
                made, gain = _sk.merge_pass_bulk(gains["indptr"], gains["indices"],
                                                 gains["delta"], cw, tol, labels, sizes, dsum,
                                                 head, nxt, tail, acc, cnt, touched, minid,
                                                 cand, cval, rank)
            elif sparse:
                made, gain = _rk.merge_pass_sparse(gains["indptr"], gains["indices"], gains["delta"],
                                                gains["s0"], gains["clique"], tol, labels, sizes,
                                                head, nxt, tail, acc, cnt, touched)
            else:
                made, gain = _rk.merge_pass_dense(gains["w"], gains["d"], n, tol, labels, sizes,
                                               head, nxt, tail, acc, cnt, touched)
            merges += made
            total += gain
            if made == 0:
                stopped = "converged"
                break
            merge_next = False
            continue
        order = _visit_order(rng, n, block)
        if bulk:
            made, gain = _sk.move_sweep_bulk(order, gains["indptr"], gains["indices"],
                                             gains["delta"], cw, nw, tol, labels, sizes, dsum,
                                             acc, cnt, touched, free, head, nxt, prv, minid,
                                             cand, cval, rank)
        elif sparse:
            made, gain = _rk.move_sweep_sparse(order, gains["indptr"], gains["indices"], gains["delta"],
                                            gains["s0"], gains["clique"], tol, labels, sizes,
                                            acc, cnt, touched, free)
        else:
            made, gain = _rk.move_sweep_dense(order, gains["w"], gains["d"], n, tol, labels, sizes,
                                           acc, cnt, touched, free)
        moves += made
        total += gain
        merge_next = made == 0
    return moves, merges, sweeps, stopped, total


@for_kinds("cc", "cd")
def refine_clustering(problem, labels, *, seed=None, max_sweeps=None, time_limit=None):
    """Improve a clustering by single-node moves and cluster merges.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"cc"`` (dense, sparse or support structure) or ``"cd"``.
    labels : array-like of shape (n,), integer
        A non-negative cluster id per node (``cd``: every cluster a clique).
    seed : int, SeedSequence, Generator or None
        Seeds the node order of every sweep (one permutation per sweep).
    max_sweeps : int or None
        Sweeps of node moves plus passes of merges (default :data:`MAX_SWEEPS`). A
        sweep that moves no node is followed by a merge pass; the search stops when that
        merges nothing (a local optimum for both kinds of move) or the budget is spent.
    time_limit : float or None
        Seconds after which the search stops between two sweeps (it never extends it).

    Returns
    -------
    Refinement
        ``objective <= objective_before`` always: the answer is recomputed from the
        labels, and the given clustering is returned if round-off made it no better.

    Raises
    ------
    InputError
        Bad ``labels``, or (``cd``) a cluster that is not a clique.
    UnsupportedProblemError
        For sparsest cut (see :func:`refine_cut`) or metric nearness.

    Notes
    -----
    The gain of moving node ``i`` from cluster ``a`` to ``c`` is
    ``sum_{j in c} s_ij - sum_{j in a, j != i} s_ij`` with
    ``s_ij = w_ij (|1 - d_ij| - |d_ij|)``; merging ``A`` and ``B`` gains
    ``sum_{i in A, j in B} s_ij``. A move is made only when its gain exceeds
    :data:`REL_TOL` times the largest ``|s_ij|``, so the search terminates. Memory is
    O(n + pairs that differ from the background gain): the adjacency of a sparse
    problem, or, for a dense one, the pairs whose gain differs from the most common
    one if they are at most :data:`SPARSE_SHARE` of all pairs (else the packed arrays
    are read in place).

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.problems import MetricProblem
    >>> p = MetricProblem(kind="cc", n=4, labels=np.arange(4), structure="dense",
    ...                   objective="l1", weights=np.ones(6),
    ...                   target=np.array([0., 1., 1., 1., 1., 0.]), lower=0.0, upper=1.0)
    >>> r = refine_clustering(p, [0, 1, 2, 3], seed=0)
    >>> r.labels.tolist(), r.objective_before, r.objective
    ([0, 0, 1, 1], 2.0, 0.0)
    """
    from .objectives import clustering_objective

    start = time.perf_counter()
    if problem.kind == "cc" and problem.structure not in ("dense", "sparse", "support"):
        raise UnsupportedProblemError(f"correlation clustering with structure {problem.structure!r}")
    labels = check_labels(labels, problem.n)
    before = clustering_objective(problem, labels)  # also checks the cliques of cd
    max_sweeps = check_budget("max_sweeps", max_sweeps, MAX_SWEEPS)
    deadline = start + _check_time_limit(time_limit)
    rng = _refine_rng(seed_entropy(seed), 0)
    return _refine_labels(problem, labels, before, rng, max_sweeps, deadline, start)


def _refine_labels(problem, labels, before, rng, max_sweeps, deadline, start, gains=None,
                   exact=True):
    """Local search from ``labels`` (cost ``before``).

    With ``exact`` the refined cost is recomputed from the labels (and the given labels
    kept if round-off made them no better); otherwise it is ``before`` minus the summed
    gains, for ranking candidates, and the caller recomputes the one it keeps.
    """
    if gains is None:
        gains = gain_layout(problem)
    work = canonical_labels(labels)
    moves, merges, sweeps, stopped, total = _local_search(gains, work, rng, max_sweeps, deadline)
    work = canonical_labels(work)
    after = before - total
    if exact:
        work, after = _exact(problem, work, labels, before)
    n = problem.n
    return Refinement(method="local", objective_before=float(before), objective=float(after),
                      labels=work, n_clusters=int(work.max()) + 1 if n else 0, moves=int(moves),
                      merges=int(merges), sweeps=int(sweeps), layout=gains["layout"],
                      stopped=stopped, elapsed=time.perf_counter() - start)


def _exact(problem, refined, given, before):
    """``(labels, cost)`` of the refined clustering, or of the given one if no better."""
    score = cc_cost if problem.kind == "cc" else cd_cost
    after = score(problem, refined)
    if after > before:  # only round-off can do this; keep the given answer
        refined, after = canonical_labels(given), before
    if problem.kind == "cd" and find_non_clique(problem, refined) is not None:
        raise RuntimeError("cluster-deletion refinement produced a cluster that is not a clique")
    return refined, float(after)


# -------------------------------------------------------------------------- cuts
def _smaller_side(side):
    n = side.size
    size = int(side.sum())
    if 2 * size > n or (2 * size == n and side[0]):
        side = ~side
    return side


@for_kinds("sc")
def refine_cut(problem, in_cut, *, max_passes=None, time_limit=None):
    """Improve a cut by Fiduccia-Mattheyses passes scored by ``phi(S)``.

    Parameters
    ----------
    problem : MetricProblem
        Of kind ``"sc"``.
    in_cut : array-like of shape (n,), bool
        The side ``S``; both sides non-empty.
    max_passes : int or None
        Passes (default :data:`MAX_FM_PASSES`); the search stops earlier after a pass
        that keeps no move.
    time_limit : float or None
        Seconds after which the search stops between two passes.

    Returns
    -------
    Refinement
        With ``in_cut`` (the smaller side), ``objective <= objective_before``.

    Notes
    -----
    A pass moves every node once, each time the one whose move gives the smallest
    ``phi`` (uphill moves included, so a pass can leave a local minimum), and keeps the
    best prefix: O(n^2 + m) per pass. Deterministic.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.graph import Graph
    >>> from metricopt.problems import build_problem
    >>> edges = np.array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [4, 5], [3, 5]])
    >>> p = build_problem("sc", Graph(n=6, edges=edges, labels=np.arange(6).astype(object)))
    >>> r = refine_cut(p, [True, True, False, False, False, False])
    >>> r.in_cut.astype(int).tolist(), round(r.objective, 4)
    ([0, 0, 0, 1, 1, 1], 0.6667)
    """
    start = time.perf_counter()
    in_cut = check_in_cut(in_cut, problem.n)
    max_passes = check_budget("max_passes", max_passes, MAX_FM_PASSES)
    deadline = start + _check_time_limit(time_limit)
    return _refine_side(problem, in_cut, max_passes, deadline, start)


def _refine_side(problem, in_cut, max_passes, deadline, start):
    edges, weights = sc_edges(problem)
    indptr, indices, ew = sc_adjacency(problem)
    before = cut_value(problem, in_cut, edges, weights)[0]
    side = in_cut.astype(np.uint8)
    tol = REL_TOL * before
    passes = 0
    stopped = "budget"
    while passes < max_passes:
        if time.perf_counter() > deadline:
            stopped = "time"
            break
        passes += 1
        _, kept = _rk.fm_pass(indptr, indices, ew, side, tol)
        if kept == 0:
            stopped = "converged"
            break
    refined = side.astype(bool)
    after, _, n_cut = cut_value(problem, refined, edges, weights)
    if after > before:
        refined, after = in_cut.copy(), before
        n_cut = cut_value(problem, refined, edges, weights)[2]
    refined = _smaller_side(refined)
    moved = int(np.count_nonzero(refined != _smaller_side(in_cut)))
    size = int(refined.sum())
    return Refinement(method="local", objective_before=float(before), objective=float(after),
                      labels=canonical_labels(refined.astype(np.int64)), in_cut=refined,
                      n_clusters=2, cut_edges=n_cut, side_sizes=(size, problem.n - size),
                      moves=moved, merges=0, sweeps=passes, layout="fm", stopped=stopped,
                      elapsed=time.perf_counter() - start)


# ------------------------------------------------------------------------ driver
def refine_rounding(problem, rounding, *, method="local", seed=None, time_limit=None,
                    candidates=None):
    """Refine the answer of a :class:`~metricopt.rounding.Rounding`.

    Parameters
    ----------
    problem : MetricProblem
    rounding : Rounding
        As :func:`metricopt.rounding.round_solution` returns it.
    method : {"local", "auto", "none"}
        ``"none"`` leaves the answer as it is (``refine`` records that).
    seed : int, SeedSequence, Generator or None
        Seeds the node orders (``cc``, ``cd``): candidate ``c`` draws from
        ``SeedSequence(entropy, spawn_key=(8, c))``.
    time_limit : float or None
        Seconds after which the search stops between two sweeps (for all candidates).
    candidates : list of tuple or None
        ``cc``, ``cd``: tries ``(objective, method, labels, n_repaired)`` of the rounding,
        cheapest first; each is refined and the best refined answer kept (ties: the
        earlier candidate). ``None``: the rounding's own answer only.

    Returns
    -------
    Rounding
        A copy whose ``objective``, ``labels``, ``n_clusters`` (``sc``: also ``in_cut``,
        ``cut_edges``, ``side_sizes``; ``cc``, ``cd``: ``method`` and ``n_repaired`` of the
        winning candidate) are the refined answer's, with a ``refine`` entry ``{method,
        objective_before, candidates, moves, merges, sweeps, layout, stopped,
        elapsed}``; ``objective_before`` is the rounding's objective.
    """
    method = check_refine_method(method)
    out = type(rounding)(rounding)
    before = float(rounding["objective"])
    if method == "none":
        out["refine"] = dict(method="none", objective_before=before, candidates=0, moves=0,
                             merges=0, sweeps=0, layout=None, stopped=None, elapsed=0.0)
        return out
    start = time.perf_counter()
    deadline = start + _check_time_limit(time_limit)
    if problem.kind == "sc":
        res = _refine_side(problem, np.asarray(rounding["in_cut"], dtype=bool), MAX_FM_PASSES,
                           deadline, start)
        out.update(in_cut=res.in_cut, cut_edges=res.cut_edges, side_sizes=res.side_sizes)
        n_cands = 1
    else:
        if candidates is None:
            candidates = [(before, rounding.get("method"), rounding["labels"],
                           rounding.get("n_repaired", 0))]
        entropy = seed_entropy(seed)
        gains = gain_layout(problem)  # shared by the candidates
        res = None
        for c, (value, meth, labels, repaired) in enumerate(candidates):
            if c > 0 and time.perf_counter() > deadline:
                break
            got = _refine_labels(problem, np.asarray(labels, dtype=np.int64), float(value),
                                 _refine_rng(entropy, c), MAX_SWEEPS, deadline, start, gains,
                                 exact=False)
            if res is None or got.objective < res.objective:
                res, winner = got, (meth, repaired, labels, float(value))
        n_cands = c + 1
        res["labels"], res["objective"] = _exact(problem, res.labels, winner[2], winner[3])
        if res.objective > before:  # round-off between candidates: keep the rounding's answer
            res["labels"], res["objective"] = canonical_labels(rounding["labels"]), before
            winner = (rounding.get("method"), rounding.get("n_repaired", 0))
        res["n_clusters"] = int(res.labels.max()) + 1 if problem.n else 0
        out["method"] = winner[0]
        if problem.kind == "cd":
            out["n_repaired"] = winner[1]
    out.update(objective=res.objective, labels=res.labels, n_clusters=res.n_clusters)
    out["refine"] = {k: res[k] for k in ("method", "moves", "merges", "sweeps", "layout", "stopped")}
    out["refine"].update(objective_before=before, candidates=n_cands,
                         elapsed=time.perf_counter() - start)
    return out


def refine_section(rounding):
    """The report's view of a rounding's refinement.

    Returns
    -------
    dict
        ``objective`` (the rounding's, before refinement), ``refined_objective`` (the
        answer's) and ``refine`` ``{method, moves, merges, sweeps, layout, stopped,
        seconds}`` (``None`` when the rounding was not refined).
    """
    info = rounding.get("refine")
    if info is None:
        return {"objective": rounding.get("objective"), "refined_objective": rounding.get("objective"),
                "refine": None}
    return {
        "objective": info["objective_before"],
        "refined_objective": rounding.get("objective"),
        "refine": {"method": info["method"], "candidates": info.get("candidates"),
                   "moves": info["moves"], "merges": info["merges"],
                   "sweeps": info["sweeps"], "layout": info["layout"], "stopped": info["stopped"],
                   "seconds": info["elapsed"]},
    }
