"""One certificate driver for every projection backend: :func:`certify`.

A backend hands over its regularised iterate as plain arrays in the problem's variable
order (:class:`RegularisedIterate`); :func:`certify` returns the best certified lower
bound on the LP optimum from the candidates of this subpackage, all computed from that
same full-precision pair ``(x, y)``:

* the dual bound ``(D(y) - offset) / (1 + A)`` (V §6; :func:`~.apriori.dual_bound`
  with :func:`~.apriori.apriori_term`);
* V Thm 5 (Cor 6 for sparsest cut) at its self-certified budget:
  :func:`~.streamed.correlation_clustering_bound_streamed` (``cc``, ``mn`` with p = 1;
  the bound of :func:`~.certificates.correlation_clustering_bound` in passes over the
  pairs, without its per-pair temporaries),
  :func:`~.certificates.sparsest_cut_bound`, :func:`~.certificates.cluster_deletion_bound`.

Weights raised to a floor so that ``W`` is invertible (``raised`` is their total
increase) enter as ``qp_cost`` / ``regularizer`` (Thm 5) and as ``cost_excess`` (dual
bound), so both bound the LP with the problem's own weights. Sparse (MET(G)) problems:
the Thm 5 inner problem is over the graph's pairs only, which are all the LP's
variables, and the box of :func:`~.boxes.optimum_box` holds an LP optimum of MET(G) by
the clipping argument given there.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355, §6-7.
"""

from typing import NamedTuple

import numpy as np

from .apriori import apriori_term, dual_bound
from .boxes import optimum_box
from .certificates import (
    cluster_deletion_bound,
    correlation_clustering_bound,
    sparsest_cut_bound,
)
from .streamed import correlation_clustering_bound_streamed

__all__ = ["RegularisedIterate", "certify"]


class RegularisedIterate(NamedTuple):
    """A primal-dual iterate of ``min c'x + (1/2 gamma) (x - delta)' W (x - delta)``.

    Attributes
    ----------
    x : ndarray of shape (N,)
        Problem order, full precision.
    f : ndarray of shape (N,) or None
        The l1 epigraph variables (``f >= |x - d|``), or None.
    w : ndarray of shape (N,)
        Diagonal of ``W`` (the weights after any floor).
    gamma : float
    dual : float
        ``D(y) = -b'y - x'Wx / (2 gamma)`` (V eq. 15).
    minus_b_dot_y : float
        ``-b'y`` in the shifted variables ``e = x - delta``.
    lam : float or None
        Sparsest cut: the non-edge weight of ``W``.
    raised : float, default=0.0
        ``sum(w - weights)``: how much the weights were raised.
    target : ndarray of shape (N,) or None
        l1 objectives only: the targets ``d`` in the order of ``x``. Given, the arrays
        may list the pairs in any common order (a backend's own layout, so that no
        problem-order copy is made); the Thm 5 bound then takes ``w`` as the LP weights
        (the problem's, in that order, are not at hand) and subtracts
        ``raised * emax``, which keeps it a bound of the LP with the problem's weights.
    """

    x: np.ndarray
    f: np.ndarray | None
    w: np.ndarray
    gamma: float
    dual: float
    minus_b_dot_y: float
    lam: float | None = None
    raised: float = 0.0
    target: np.ndarray | None = None


def certify(problem, it, deadline=None):
    """Best certified lower bound on the LP optimum of ``problem`` at iterate ``it``.

    Parameters
    ----------
    problem : MetricProblem
    it : RegularisedIterate
    deadline : float or None
        A ``time.perf_counter()`` value after which the streamed Thm 5 search stops
        with the best multiplier found (a weaker bound, still certified; ``details``
        then has ``theorem5_stopped``). The other candidates take one pass or less.

    Returns
    -------
    lower_bound : float or None
        The largest certified candidate; None when none could be computed.
    details : dict
        Every candidate value, or why it could not be computed, and ``method``.
    """
    kind = problem.kind
    g = it.gamma
    details = {}
    cands = []
    if not (np.isfinite(it.dual) and np.isfinite(it.minus_b_dot_y)):
        return None, dict(reason="non-finite dual value")
    box = None
    if problem.objective == "l1":
        lo, hi = optimum_box(problem)
        d0 = np.asarray(problem.target, dtype=np.float64)
        if np.isfinite(lo) and np.isfinite(hi) and (
                d0.size == 0 or (float(d0.min()) >= lo and float(d0.max()) <= hi)):
            box = (lo, hi)
    permuted = it.target is not None
    if permuted and problem.objective != "l1":
        raise ValueError("an iterate in its own pair order is certified for l1 objectives "
                         "only")
    d = it.target if permuted else (
        None if problem.target is None else np.asarray(problem.target, dtype=np.float64))
    emax = 0.0
    if box is not None and d.size:  # the largest |x - d| over the box
        emax = max(box[1] - float(d.min()), float(d.max()) - box[0], 0.0)
    try:
        if problem.objective == "l2":
            lower = float(problem.lower) if np.isfinite(problem.lower) else 0.0
            span = max(float(d.max(initial=0.0)) - min(lower, 0.0), 0.0)
            if np.isfinite(problem.upper):
                span = max(span, float(problem.upper) - min(lower, 0.0))
            term = apriori_term(kind, p=2, cost_excess=it.raised * span * span)
        elif problem.objective == "l1":
            if box is None:
                raise ValueError("no box [lo, hi] around the targets is known to hold an "
                                 "LP optimum")
            excess = it.raised * emax
            if kind == "mn":
                term = apriori_term(kind, gamma=g, p=1, max_target=max(emax, 1e-300),
                                    cost_excess=excess)
            else:
                term = apriori_term(kind, gamma=g, cost_excess=excess)
        elif kind == "sc":
            term = apriori_term(kind, gamma=g, lam=it.lam, n=problem.n)
        elif kind == "cd" and not np.array_equal(it.w, problem.cost):
            raise ValueError("the regularisation W = I is not diag(cost)")
        else:
            term = apriori_term(kind, gamma=g)
        details["dual_bound"] = float(dual_bound(it.dual, term))
        cands.append(details["dual_bound"])
    except Exception as exc:  # noqa: BLE001 - report, never fail the solve
        details["dual_bound_error"] = f"{type(exc).__name__}: {exc}"
    try:
        res = None
        if kind == "sc":
            if problem.sum_value is None or problem.lower != 0.0:
                raise ValueError("Cor 6 needs sum x = n and x >= 0")
            res = sparsest_cut_bound(it.x, it.w, problem.cost, gamma=g,
                                     minus_b_dot_y=it.minus_b_dot_y, n=problem.n)
        elif problem.objective == "l1":
            if box is None:
                raise ValueError("no box [lo, hi] around the targets is known to hold an "
                                 "LP optimum")
            if permuted:
                # the LP with weights w >= the problem's: its bound less raised * emax
                # bounds the problem's LP (sum (w - w0) |x - d| <= raised * emax on the box)
                res = correlation_clustering_bound_streamed(
                    it.x, it.f, it.w, d, gamma=g, minus_b_dot_y=it.minus_b_dot_y,
                    regularizer=it.w, x_lower=box[0], x_upper=box[1], deadline=deadline)
                if it.raised > 0.0:
                    res["value"] = float(res["value"]) - it.raised * emax
                    res["certified"] = bool(res.get("certified", True)) and bool(
                        np.isfinite(res["value"]))
            elif np.shape(it.w) == np.shape(it.x):
                w0 = np.ascontiguousarray(problem.weights, dtype=np.float64)
                # the same bound in passes, without per-pair temporaries
                res = correlation_clustering_bound_streamed(
                    it.x, it.f, w0, d, gamma=g, minus_b_dot_y=it.minus_b_dot_y,
                    regularizer=it.w, x_lower=box[0], x_upper=box[1], deadline=deadline)
            else:
                w0 = np.ascontiguousarray(problem.weights, dtype=np.float64)
                res = correlation_clustering_bound(
                    it.x - d, it.f, w0, d, gamma=g, minus_b_dot_y=it.minus_b_dot_y,
                    regularizer=it.w, qp_cost=it.w, x_lower=box[0], x_upper=box[1])
        elif kind == "cd":
            res = cluster_deletion_bound(it.x, gamma=g, minus_b_dot_y=it.minus_b_dot_y,
                                         cost=problem.cost, regularizer=it.w)
        if res is not None:
            details["theorem5"] = float(res["value"])
            details["theorem5_method"] = res.get("method")
            if res.get("stopped"):
                details["theorem5_stopped"] = "at the time limit's allowance"
            if res.get("certified", True):
                cands.append(float(res["value"]))
    except Exception as exc:  # noqa: BLE001
        details["theorem5_error"] = f"{type(exc).__name__}: {exc}"
    best = max(cands) if cands else None
    details["method"] = ("theorem5" if best is not None and best == details.get("theorem5")
                         else ("dual/apriori" if cands else "none"))
    return best, details
