"""Certified lower bounds on the LP optimum from a primal-dual pair (V Thm 5, Cor 6).

Setting (V §4, §7.2). The LP is ``min c'x`` s.t. ``A x <= b`` (equality rows allowed,
with free multipliers). A projection method solving the regularised QP
``min c_QP'x + (1/2 gamma) x'Wx`` keeps multipliers ``y`` (``>= 0`` on inequality rows)
and the primal point ``x = -gamma W^{-1}(A'y + c_QP)`` (V eq. 24, true of every Dykstra
iterate by construction). With

    p_hat = -(A'y + c) = W x / gamma + (c_QP - c)

the Lagrangian gives, for *any* LP-feasible ``x*``,
``c'x* >= c'x* + y'(A x* - b) = -b'y - p_hat'x*``. If ``x*`` is an LP optimum lying in a
set ``B`` (a box, and possibly ``c'x <= budget`` with ``budget >= LP*``, and an equality
it satisfies), then

    LP* >= -b'y - max {p_hat'x : x in B}                       (V Thm 5)

and the bound stays valid when the inner maximum is replaced by any *upper* bound of it,
which is how it is computed here (the Lagrangian dual value of the inner LP, see
:mod:`metricopt.bounds.inner`). Nothing requires ``y`` to be optimal or ``x`` feasible:
an early iterate gives a weaker but still valid bound. What *is* required:

1. ``p_hat`` and ``-b'y`` come from the same multipliers ``y`` (full precision; the
   identity ``A'y + c_QP = -W x/gamma`` must hold, which it does for Dykstra iterates up
   to the rounding accumulated in ``x``);
2. ``y >= 0`` on inequality rows;
3. ``B`` contains at least one LP optimum; in particular a ``budget`` in
   :func:`theorem5_bound` must be an upper bound on ``LP*``: the objective of any
   feasible point (a rounded clustering or cut). ``c'x`` of the iterate itself is such
   a bound only when the iterate is LP-feasible (the exact QP optimum).

The budget requirement can be dropped altogether: :func:`theorem5_fixed_point_bound`
returns the largest ``beta`` with ``f(beta) >= beta``, where ``f(beta)`` is the bound at
budget ``beta``; such a ``beta`` is ``<= LP*`` by the theorem itself, and it is at least
the bound at any valid budget. The problem wrappers (:func:`sparsest_cut_bound`,
:func:`correlation_clustering_bound`, :func:`cluster_deletion_bound`) use it; their
``budget`` argument is only a starting point, except ``budget="iterate"``, which
evaluates V's bound at ``c'x`` of the iterate and marks the result ``certified=False``.

If a driver tracks the dual value ``D(y) = -b'y - x'Wx/(2 gamma)`` (V eq. 15) rather
than ``-b'y``, :func:`minus_b_dot_y_from_dual` converts it.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
"""

import numpy as np

from ..exceptions import InvalidParameterError
from ..result import RichResult
from .inner import (
    box_maximum,
    box_upper,
    lagrangian_upper_bound,
    max_linear_box_equality,
    max_linear_box_knapsack,
    max_linear_box_two_constraints,
)

_EPS = np.finfo(np.float64).eps

__all__ = [
    "BoundResult",
    "cluster_deletion_bound",
    "correlation_clustering_bound",
    "minus_b_dot_y_from_dual",
    "sparsest_cut_bound",
    "theorem5_bound",
    "theorem5_fixed_point_bound",
]


class BoundResult(RichResult):
    """A lower bound with its provenance: a dict that also allows attribute access.

    Fields
    ------
    value : float
        The lower bound.
    of : str
        What it bounds: ``"lp"`` (the LP optimum ``LP*``).
    certified : bool
        True when every assumption is met by construction or by the caller's word
        (``budget`` a valid upper bound on ``LP*``); False when the budget came from the
        iterate (``budget="iterate"``).
    method : str
        ``"theorem5"``, ``"corollary6"`` (sparsest cut), ``"theorem5-cc"``,
        ``"theorem5-cd"``.
    minus_b_dot_y : float
    inner_upper : float
        The upper bound on ``max p_hat'x`` over ``B`` that was subtracted.
    inner_value : float
        ``p_hat @ x_tilde`` of the primal inner solution (``inner_upper - inner_value``
        is ``inner_gap``).
    inner_gap : float
    x_tilde : ndarray
        The inner maximiser (in the caller's variables; for cc the concatenation
        ``[e, f]``).
    multipliers : dict
        ``nu`` (equality) and ``mu`` (budget) of the inner LP.
    budget : float or None
    budget_source : str
        ``"caller"``, ``"trivial"``, ``"iterate"`` or ``"none"``.
    note : str
    """

    def __repr__(self):
        keys = ("value", "of", "certified", "method", "inner_gap", "budget", "budget_source")
        body = ", ".join(f"{k}={self[k]!r}" for k in keys if k in self)
        return f"BoundResult({body})"


def minus_b_dot_y_from_dual(dual_value, x_W_x, gamma):
    """``-b'y`` from the QP dual value: ``D(y) + x'Wx / (2 gamma)`` (V eq. 15).

    Exact when ``x = -gamma W^{-1}(A'y + c_QP)``, as for Dykstra iterates.

    Parameters
    ----------
    dual_value : float
        ``D(y)``.
    x_W_x : float
        ``x'Wx`` of the same iterate.
    gamma : float

    Returns
    -------
    float
    """
    return float(dual_value) + float(x_W_x) / (2.0 * float(gamma))


def _finite(v, name, caller):
    try:
        v = float(v)
    except (TypeError, ValueError):
        v = np.nan
    if not np.isfinite(v):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a finite float. Got {v!r} instead.")
    return v


def _array(v, name, caller, n=None):
    arr = np.asarray(v, dtype=np.float64)
    if n is not None and arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        want = f"({n},)" if n is not None else "1-d"
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must have shape {want}. Got {arr.shape} instead.")
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be finite.")
    return arr


def _gamma(gamma, caller):
    g = _finite(gamma, "gamma", caller)
    if g <= 0:
        raise InvalidParameterError(f"The 'gamma' parameter of {caller} must be > 0. Got {gamma!r} instead.")
    return g


def theorem5_bound(minus_b_dot_y, p_hat, lo, hi, c=None, budget=None, eq=None, *, rtol=1e-12):
    """V Thm 5: ``LP* >= -b'y - max {p_hat'x : c'x <= budget, a'x = s, lo <= x <= hi}``.

    Parameters
    ----------
    minus_b_dot_y : float
        ``-b'y`` for the multipliers ``y`` (``>= 0`` on inequality rows) that produced
        ``p_hat``; an equality row ``a'x = s`` with free multiplier ``nu`` contributes
        ``-nu s``.
    p_hat : array_like of shape (N,)
        ``-(A'y + c)`` with ``c`` the LP cost; for a Dykstra iterate
        ``W x_hat / gamma (+ c_QP - c)``. Must match ``minus_b_dot_y`` exactly (the
        same ``y``, full precision).
    lo, hi : float or array_like of shape (N,)
        A finite box containing an LP optimum ``x*``.
    c : array_like of shape (N,), optional
        LP cost for the budget constraint ``c'x <= budget``.
    budget : float, optional
        A valid upper bound on ``LP*`` (objective of a feasible point). Required with
        ``c``.
    eq : tuple (a, s), optional
        An equality ``a'x = s`` met by ``x*``.
    rtol : float, default=1e-12
        Relative gap target of the two-constraint inner solver.

    Returns
    -------
    BoundResult
        ``value`` is the bound; the inner maximum is replaced by a Lagrangian dual value
        (an upper bound of it), so the bound holds even if the inner solve stopped
        early.

    Notes
    -----
    Valid under the three conditions listed in :mod:`metricopt.bounds.certificates`;
    it is tight (``= LP*``) when ``x_hat`` is optimal for both the QP and the LP and
    the inner maximiser is ``x_hat``. Apart from rounding in the inputs and in the
    sums, the value is exact.

    Examples
    --------
    >>> from metricopt.bounds import theorem5_bound
    >>> r = theorem5_bound(3.0, [0.5, 0.25], 0.0, 1.0, c=[1.0, 1.0], budget=1.0)
    >>> round(r.value, 12), r.certified
    (2.5, True)
    """
    caller = "theorem5_bound"
    mby = _finite(minus_b_dot_y, "minus_b_dot_y", caller)
    p = _array(p_hat, "p_hat", caller)
    if (c is None) != (budget is None):
        raise InvalidParameterError(f"{caller} needs both 'c' and 'budget', or neither.")
    upper, x, nu, mu, value = _inner_upper(p, lo, hi, c, budget, eq, rtol)
    return BoundResult(
        value=float(mby - upper), of="lp", certified=True, method="theorem5",
        reference="Veldt et al. (2019), Theorem 5",
        minus_b_dot_y=mby, inner_upper=float(upper), inner_value=float(value),
        inner_gap=float(upper - value), x_tilde=x, multipliers={"nu": float(nu), "mu": float(mu)},
        budget=None if budget is None else float(budget),
        budget_source="none" if budget is None else "caller", note="",
    )


def _inner_upper(p, lo, hi, c, budget, eq, rtol, mu_hint=None):
    """``(upper, x, nu, mu, value)``: a safe upper bound on ``max p'x`` over ``B``, a
    maximiser, the multipliers and ``p'x``."""
    nu = mu = 0.0
    if c is None and eq is None:
        value, x, _ = box_maximum(p, lo, hi)
        return max(value, box_upper(p, lo, hi)), x, nu, mu, value
    if eq is not None:
        a, s = eq
    if eq is None:
        value, x, mu = max_linear_box_knapsack(p, c, budget, lo, hi)
        upper = lagrangian_upper_bound(p, lo, hi, c=c, budget=budget, mu=mu)
    elif c is None:
        value, x, nu = max_linear_box_equality(p, a, s, lo, hi)
        upper = lagrangian_upper_bound(p, lo, hi, a=a, s=s, nu=nu)
    else:
        sol = max_linear_box_two_constraints(p, a, s, c, budget, lo, hi, rtol=rtol,
                                             mu_hint=mu_hint)
        x, nu, mu, upper = sol.x, sol.nu, sol.mu, sol.upper
        value = float(p @ x)
    return max(upper, value), x, nu, mu, value


def theorem5_fixed_point_bound(minus_b_dot_y, p_hat, lo, hi, c, *, eq=None, start=None,
                               rtol=1e-12, max_iter=50):
    """V Thm 5 with a self-certified budget: no upper bound on ``LP*`` is needed.

    Write ``f(beta) = -b'y - max {p_hat'x : c'x <= beta, a'x = s, lo <= x <= hi}``.
    V Thm 5 says ``f(beta) <= LP*`` for every ``beta >= LP*``. Hence any ``beta`` with
    ``f(beta) >= beta`` satisfies ``beta <= LP*`` (were ``beta > LP*``, then
    ``f(beta) <= LP* < beta``). ``f`` is non-increasing, so the largest such ``beta`` is
    the fixed point ``beta* = f(beta*)``, and ``beta* >= f(beta)`` for every valid
    budget ``beta >= LP*``: the fixed point is the best bound of the whole family, and
    it needs only the box and equality to contain an LP optimum.

    ``beta*`` is found by Newton's method on the concave increasing
    ``g(beta) = beta - f(beta)``: the budget multiplier ``mu`` of the inner LP at any
    ``beta`` is a supergradient of the inner value, so the step
    ``beta + (f(beta) - beta) / (1 + mu)`` lands at or left of ``beta*`` from anywhere,
    and from the left it climbs to ``beta*`` in finitely many steps (``g`` is piecewise
    linear). The returned ``beta`` has been checked to satisfy ``f(beta) >= beta`` with
    ``f`` evaluated from a safe upper bound of the inner maximum, so it is certified
    whatever the convergence.

    Parameters
    ----------
    minus_b_dot_y, p_hat, lo, hi, eq, rtol
        As in :func:`theorem5_bound`.
    c : array_like of shape (N,)
        LP cost.
    start : float, optional
        A budget to start from, besides ``max c'x`` over ``B`` (any value is safe: an
        upper bound on ``LP*``, e.g. the cost of a rounded solution, maps to a point
        close to ``beta*``).
    max_iter : int, default=50
        Newton steps allowed (each one inner solve).

    Returns
    -------
    BoundResult
        ``value = beta`` (certified ``<= LP*``), ``budget = beta``, ``f_at_budget`` (the
        Thm 5 value at that budget, ``>= value``), ``fixed_point_gap`` (``f - beta``),
        ``nit`` (inner solves), ``method="theorem5-fixed-point"``.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.bounds import theorem5_fixed_point_bound
    >>> r = theorem5_fixed_point_bound(3.0, [0.5, 0.25], 0.0, 1.0, [1.0, 1.0])
    >>> round(r.value, 9)
    2.25
    """
    caller = "theorem5_fixed_point_bound"
    mby = _finite(minus_b_dot_y, "minus_b_dot_y", caller)
    p = _array(p_hat, "p_hat", caller)
    c = _array(c, "c", caller, p.shape[0])
    lo_a = _array(lo, "lo", caller, p.shape[0])
    hi_a = _array(hi, "hi", caller, p.shape[0])
    nit = 0
    last_mu = None

    def f(beta):
        nonlocal nit, last_mu
        nit += 1
        upper, x, nu, mu, value = _inner_upper(p, lo_a, hi_a, c, beta, eq, rtol, last_mu)
        last_mu = mu if mu > 0 else last_mu
        return mby - upper, mu, (x, nu, mu, upper, value)

    # least budget for which B is non-empty: c_min <= LP* holds outright
    if eq is None:
        c_min = float(np.minimum(c * lo_a, c * hi_a).sum())
        c_max = float(np.maximum(c * lo_a, c * hi_a).sum())
    else:
        c_min = -max_linear_box_equality(-c, eq[0], eq[1], lo_a, hi_a).value
        c_max = max_linear_box_equality(c, eq[0], eq[1], lo_a, hi_a).value
    c_min -= 4 * _EPS * (abs(c_min) + float(np.abs(c) @ np.maximum(np.abs(lo_a), np.abs(hi_a))))
    best = None  # the largest budget found with f(beta) >= beta: (beta, f, mu, info)
    budget_left = int(max_iter)

    def run(beta):
        # beta <- beta + (f(beta) - beta) / (1 + mu): the root of the supergradient line,
        # which lies left of the fixed point wherever beta is (the line bounds the inner
        # value from above), and reaches it from the left in finitely many steps
        nonlocal best, budget_left
        beta = max(float(beta), c_min)
        fb, mu, info = f(beta)
        while True:
            ok = fb >= beta
            if ok and (best is None or beta > best[0]):
                best = (beta, fb, mu, info)
            step = (fb - beta) / (1.0 + mu)
            if ok and step <= rtol * max(1.0, abs(beta)):
                return
            if not ok and -step <= 1e-9 * max(1.0, abs(beta)):
                # right of the fixed point by rounding only: step past it by that much
                step -= (beta - fb) + 16 * _EPS * max(1.0, abs(beta))
            cand = max(beta + step, c_min)
            if cand == beta or budget_left <= 0:
                return
            budget_left -= 1
            beta = cand
            fb, mu, info = f(beta)

    run(c_max)
    if start is not None:
        run(_finite(start, "start", caller))
    if best is None:  # every budget failed the test: c_min itself is <= LP* outright
        fb, _, info = f(c_min)
        return _fixed_point_result(mby, c_min, fb, info, nit, "c_min: no budget passes the test")
    beta, fb, _, info = best
    return _fixed_point_result(mby, beta, fb, info, nit, "")


def _fixed_point_result(mby, beta, fb, info, nit, note):
    x, nu, mu, upper, value = info
    return BoundResult(
        value=float(beta), of="lp", certified=True, method="theorem5-fixed-point",
        reference="Veldt et al. (2019), Theorem 5, at the self-certified budget f(beta) = beta",
        minus_b_dot_y=mby, inner_upper=float(upper), inner_value=float(value),
        inner_gap=float(upper - value), x_tilde=x, multipliers={"nu": float(nu), "mu": float(mu)},
        budget=float(beta), budget_source="fixed-point", f_at_budget=float(fb),
        fixed_point_gap=float(fb - beta), nit=int(nit), note=note,
    )


def _wrapped_bound(caller, mby, p, lo, hi, c, eq, budget, trivial, iterate, rtol):
    """Fixed-point Thm 5 bound started from ``budget`` (or ``trivial``), or V's plain
    bound at the iterate's own cost for ``budget="iterate"`` (not certified)."""
    if isinstance(budget, str):
        if budget != "iterate":
            raise InvalidParameterError(
                f"The 'budget' parameter of {caller} must be a float, None or 'iterate'. "
                f"Got {budget!r} instead.")
        res = theorem5_bound(mby, p, lo, hi, c=c, budget=float(iterate), eq=eq, rtol=rtol)
        res.update(certified=False, budget_source="iterate",
                   note="budget = c'x of the iterate (V's statement): valid only if the iterate "
                        "is LP-feasible; not certified")
        return res
    if budget is None:
        start, source = float(trivial), "trivial"
    else:
        start, source = _finite(budget, "budget", caller), "caller"
    res = theorem5_fixed_point_bound(mby, p, lo, hi, c, eq=eq, start=start, rtol=rtol)
    res["start"] = start
    res["start_source"] = source
    return res


def sparsest_cut_bound(x_hat, weights, cost, *, gamma, minus_b_dot_y, n, budget=None,
                       qp_cost=None, rtol=1e-12):
    """V Cor 6: certified lower bound on the Leighton-Rao sparsest-cut LP.

    ``LP* >= f(beta) = -b'y - max {p_hat'x : sum x = n, sum_E c x <= beta,
    0 <= x <= n/(n-1)}`` with ``p_hat = W x_hat / gamma`` for every ``beta >= LP*``.
    Every LP-feasible point lies in that box (proof of V Cor 6). The budget is chosen by
    :func:`theorem5_fixed_point_bound` (the largest ``beta`` with ``f(beta) >= beta``,
    itself ``<= LP*``), so no upper bound on ``LP*`` is needed.

    Parameters
    ----------
    x_hat : array_like of shape (n(n-1)/2,)
        The iterate, packed pairs ``i < j`` (``numpy.triu_indices`` order), full
        precision, with ``x_hat = -gamma W^{-1}(A'y + qp_cost)``.
    weights : array_like of shape (n(n-1)/2,)
        Diagonal of ``W`` (1 on edges, ``lam`` elsewhere in V §6.3).
    cost : array_like of shape (n(n-1)/2,)
        LP cost ``c`` (edge indicator, or edge weights).
    gamma : float
    minus_b_dot_y : float
        ``-b'y`` of the same multipliers. Triangle and ``x >= 0`` rows have ``b = 0``,
        so only the sum row counts: ``-n nu`` for the equality ``sum x = n`` with free
        multiplier ``nu`` in ``A'y`` (V Cor 6 writes it ``n y1 - n y2`` with a sign
        convention on the two half-spaces).
    n : int
        Number of nodes.
    budget : float, None or "iterate", default=None
        Where the fixed-point search starts (any value is safe; an upper bound on
        ``LP*`` such as ``phi`` of the best sweep cut lands closest). ``None``: the best
        single-node cut ``n min_v deg_c(v)/(n-1)``. ``"iterate"``: no search, V Cor 6
        as stated at ``beta = cost @ x_hat``, valid only for an LP-feasible ``x_hat``,
        so the result is marked ``certified=False``.
    qp_cost : array_like, optional
        The linear cost the QP used, if not ``cost``; ``p_hat`` gains ``qp_cost - cost``.
    rtol : float, default=1e-12

    Returns
    -------
    BoundResult
        ``method="corollary6"``, ``of="lp"``, ``budget`` the final ``beta``,
        ``f_at_budget``, ``nit`` (inner solves); see :func:`theorem5_fixed_point_bound`.

    Notes
    -----
    The result bounds ``LP*``, hence also ``phi*``. For the a-priori (Thm 4) bound on
    ``phi*`` use :func:`apriori_term` with ``of="opt"``.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.bounds import sparsest_cut_bound
    >>> n = 3
    >>> x = np.array([1.0, 1.0, 1.0])  # a triangle graph, all pairs cut
    >>> r = sparsest_cut_bound(x, np.ones(3), np.ones(3), gamma=5.0,
    ...                        minus_b_dot_y=3.0 + 3.0 / 5.0, n=n, budget=3.0)
    >>> round(r.value, 12)
    3.0
    """
    caller = "sparsest_cut_bound"
    if n is None or int(n) != n or int(n) < 2:
        raise InvalidParameterError(
            f"The 'n' parameter of {caller} must be an integer >= 2. Got {n!r} instead.")
    n = int(n)
    npairs = n * (n - 1) // 2
    x = _array(x_hat, "x_hat", caller, npairs)
    w = _array(weights, "weights", caller, npairs)
    c = _array(cost, "cost", caller, npairs)
    g = _gamma(gamma, caller)
    p = w * x / g
    if qp_cost is not None:
        p = p + (_array(qp_cost, "qp_cost", caller, npairs) - c)
    rows, cols = np.triu_indices(n, 1)
    deg = np.bincount(rows, weights=c, minlength=n) + np.bincount(cols, weights=c, minlength=n)
    trivial = n * float(deg.min()) / (n - 1)
    mby = _finite(minus_b_dot_y, "minus_b_dot_y", caller)
    res = _wrapped_bound(caller, mby, p, 0.0, n / (n - 1.0), c, (np.ones(npairs), float(n)),
                         budget, trivial, float(c @ x), rtol)
    res.update(method="corollary6", reference="Veldt et al. (2019), Corollary 6")
    return res


def correlation_clustering_bound(e_hat, f_hat, weights, target, *, gamma, minus_b_dot_y,
                                 budget=None, regularizer=None, qp_cost=None, x_lower=0.0,
                                 x_upper=1.0):
    """V Thm 5 for correlation clustering (and l1 metric nearness) in the e/f form.

    The LP (V eq. 16) in variables ``e = x - d`` and ``f``: ``min w'f`` s.t. the metric
    constraints on ``x = e + d``, ``e <= f``, ``-e <= f``. The set ``B`` is

        x_lower - d <= e <= x_upper - d,   |e| <= f <= F,   w'f <= budget,

    with ``F = max(d - x_lower, x_upper - d)``; ``budget`` is chosen by
    :func:`theorem5_fixed_point_bound`, so it needs no upper bound on ``LP*``. Without
    the budget, ``B`` contains an LP optimum: clipping an
    optimal ``x`` to ``[x_lower, x_upper]`` keeps it metric and does not raise the cost
    when the targets lie in that interval (V Thm 1, Lemma 7), and ``f = |e|`` at an
    optimum. For fixed ``f`` the best ``e`` is ``sign(p_e) min(r, f)`` (``r`` the room
    on that side), so the inner LP is a knapsack over two pieces of ``f`` per pair,
    solved exactly in linear time; the coupling ``|e| <= f`` makes it much tighter than
    the plain box.

    Parameters
    ----------
    e_hat, f_hat : array_like of shape (N,)
        The iterate in e/f form (``e_hat = x_hat - d``), full precision.
    weights : array_like of shape (N,)
        LP weights ``w >= 0`` (the cost of ``f``).
    target : array_like of shape (N,)
        ``d`` (0/1 for correlation clustering), ``x_lower <= d <= x_upper``.
    gamma : float
    minus_b_dot_y : float
        ``-b'y`` in the e-variables: triangle rows
        ``e_ij - e_ik - e_jk <= d_ik + d_jk - d_ij`` contribute
        ``-(d_ik + d_jk - d_ij) y_t``; the rows ``+-e - f <= 0`` contribute nothing.
    budget : float, None or "iterate", default=None
        Where the fixed-point search starts (any value is safe; the cost of a rounded
        clustering lands closest). ``None``: the better constant point,
        ``min(w'|x_lower - d|, w'|x_upper - d|)`` (one cluster / all singletons for cc).
        ``"iterate"``: no search, V Thm 5 at ``beta = w'f_hat`` (not certified).
    regularizer : array_like of shape (N,) or (2N,), optional
        Diagonal of ``W`` for ``e`` and ``f`` (shared, or ``[W_e, W_f]``); default
        ``weights`` (V eq. 17).
    qp_cost : array_like of shape (N,), optional
        The cost of ``f`` in the QP if it is not ``weights`` (e.g. raised to a floor);
        ``p_f`` gains ``qp_cost - weights``.
    x_lower, x_upper : float
        Box of ``x`` known to hold an optimum: ``[0, 1]`` for correlation clustering;
        ``[0, max d]`` for l1 metric nearness.

    Returns
    -------
    BoundResult
        ``method="theorem5-cc"``; ``x_tilde`` is ``[e_tilde, f_tilde]``.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.bounds import correlation_clustering_bound
    >>> # three nodes, all pairs similar (d = 0): the optimum x = 0, e = f = 0
    >>> r = correlation_clustering_bound(np.zeros(3), np.zeros(3), np.ones(3), np.zeros(3),
    ...                                  gamma=2.0, minus_b_dot_y=0.0)
    >>> r.value
    0.0
    """
    caller = "correlation_clustering_bound"
    e = _array(e_hat, "e_hat", caller)
    npairs = e.shape[0]
    f = _array(f_hat, "f_hat", caller, npairs)
    w = _array(weights, "weights", caller, npairs)
    d = _array(target, "target", caller, npairs)
    g = _gamma(gamma, caller)
    xl = _finite(x_lower, "x_lower", caller)
    xu = _finite(x_upper, "x_upper", caller)
    if np.any(w < 0):
        raise InvalidParameterError(f"The 'weights' parameter of {caller} must be >= 0.")
    if np.any(d < xl) or np.any(d > xu):
        raise InvalidParameterError(f"{caller} needs x_lower <= target <= x_upper.")
    if regularizer is None:
        we = wf = w
    else:
        reg = np.asarray(regularizer, dtype=np.float64)
        if reg.shape == (2 * npairs,):
            we, wf = _array(reg[:npairs], "regularizer", caller), _array(reg[npairs:], "regularizer", caller)
        else:
            we = wf = _array(reg, "regularizer", caller, npairs)
    pe = we * e / g
    pf = wf * f / g
    if qp_cost is not None:
        pf = pf + (_array(qp_cost, "qp_cost", caller, npairs) - w)
    lo_e = xl - d
    hi_e = xu - d
    big_f = np.maximum(-lo_e, hi_e)
    room = np.where(pe >= 0, hi_e, -lo_e)
    # two pieces of f per pair: [0, room] earns pf + |pe|, the rest earns pf
    profit = np.concatenate([pf + np.abs(pe), pf])
    upper_box = np.concatenate([room, big_f - room])
    cost2 = np.concatenate([w, w])
    trivial = min(float(w @ np.abs(xl - d)), float(w @ np.abs(xu - d)))
    mby = _finite(minus_b_dot_y, "minus_b_dot_y", caller)
    res = _wrapped_bound(caller, mby, profit, np.zeros(2 * npairs), upper_box, cost2, None,
                         budget, trivial, float(w @ f), 1e-12)
    f1 = res.x_tilde[:npairs]
    f_t = f1 + res.x_tilde[npairs:]
    e_t = np.where(pe >= 0, f1, -f1)
    res["x_tilde"] = np.concatenate([e_t, f_t])
    res.update(method="theorem5-cc", reference="Veldt et al. (2019), Theorem 5 (e/f form of §6.2)")
    return res


def cluster_deletion_bound(x_hat, *, gamma, minus_b_dot_y, cost=None, regularizer=None,
                           qp_cost=None, budget=None):
    """V Thm 5 for the cluster-deletion LP (V eq. 9) on edge variables.

    ``LP* >= -b'y - max {p_hat'x : c'x <= beta, 0 <= x <= 1}`` with
    ``p_hat = W x_hat / gamma``, at the self-certified budget ``beta`` of
    :func:`theorem5_fixed_point_bound`.

    Parameters
    ----------
    x_hat : array_like of shape (m,)
        The iterate (one entry per edge), full precision.
    gamma : float
    minus_b_dot_y : float
        ``-b'y``: triangle rows have ``b = 0``; each open-wedge row
        ``-x_a - x_b <= -1`` contributes ``+y_t``; box rows ``x <= 1`` contribute
        ``-y_t``.
    cost : array_like of shape (m,), optional
        LP cost (default all ones).
    regularizer : array_like of shape (m,), optional
        Diagonal of ``W`` (default ``cost``; ``I`` for the unweighted problem, V §6.1).
    qp_cost : array_like of shape (m,), optional
        The QP's linear cost if not ``cost``.
    budget : float, None or "iterate", default=None
        Where the fixed-point search starts (any value is safe; the cost of a rounded
        clustering, e.g. the 2-approximation of Veldt, Gleich & Wirth, lands closest).
        ``None``: ``sum(cost)`` (every edge deleted). ``"iterate"``: no search, V Thm 5
        at ``beta = cost @ x_hat`` (not certified).

    Returns
    -------
    BoundResult
        ``method="theorem5-cd"``.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.bounds import cluster_deletion_bound
    >>> cluster_deletion_bound(np.zeros(3), gamma=1.0, minus_b_dot_y=0.0).value
    0.0
    """
    caller = "cluster_deletion_bound"
    x = _array(x_hat, "x_hat", caller)
    m = x.shape[0]
    c = np.ones(m) if cost is None else _array(cost, "cost", caller, m)
    w = c if regularizer is None else _array(regularizer, "regularizer", caller, m)
    g = _gamma(gamma, caller)
    p = w * x / g
    if qp_cost is not None:
        p = p + (_array(qp_cost, "qp_cost", caller, m) - c)
    mby = _finite(minus_b_dot_y, "minus_b_dot_y", caller)
    res = _wrapped_bound(caller, mby, p, np.zeros(m), np.ones(m), c, None, budget,
                         float(np.maximum(c, 0.0).sum()), float(c @ x), 1e-12)
    res.update(method="theorem5-cd",
               reference="Veldt et al. (2019), Theorem 5 (cluster deletion, box [0, 1])")
    return res
