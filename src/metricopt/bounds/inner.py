"""Exact maximisation of a linear function over a box cut by one or two hyperplanes.

These are the "small LPs" of the a-posteriori bounds (V Thm 5, Cor 6):

* :func:`max_linear_box_knapsack`: ``max p'x`` s.t. ``c'x <= budget``, ``lo <= x <= hi``;
* :func:`max_linear_box_equality`: ``max p'x`` s.t. ``a'x = s``, ``lo <= x <= hi``;
* :func:`max_linear_box_two_constraints`: both constraints at once;
* :func:`lagrangian_upper_bound`: the Lagrangian dual function of these problems, an
  upper bound on their maximum at *any* multipliers (``mu >= 0``, ``nu`` free).

The one-constraint problems are solved exactly in expected linear time by median-based
root finding on the multiplier (Teo et al. [1]_, appendix B, Algorithm 2; kernels in
:mod:`metricopt.bounds._inner_kernels`). The two-constraint problem is solved through
its Lagrangian dual in the knapsack multiplier ``mu``: for fixed ``mu`` the equality
problem is solved exactly, which gives the convex piecewise-linear function
``h(mu) = min_nu L(nu, mu)`` and a subgradient; ``h`` is minimised by one-dimensional
cutting planes (the intersection of the two supporting lines at the ends of the
bracket) safeguarded by bisection, the one-dimensional instance of the dual
cutting-plane / bisection scheme of Usmanova et al. [2]_. The value it returns is the
dual function at the final multipliers, so it is a valid upper bound whatever the
convergence.

References
----------
.. [1] Teo, C. H., Vishwanathan, S. V. N., Smola, A., & Le, Q. V. (2010). Bundle methods
       for regularized risk minimization. JMLR 11, 311-365.
.. [2] Usmanova, I., Kamgarpour, M., Krause, A., & Levy, K. (2021). Fast projection onto
       convex smooth constraints. ICML 2021.
"""

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError, MetricOptError
from . import _inner_kernels as K

__all__ = [
    "InfeasibleInnerProblemError",
    "InnerSolution",
    "TwoConstraintSolution",
    "box_maximum",
    "box_upper",
    "lagrangian_upper_bound",
    "max_linear_box_equality",
    "max_linear_box_knapsack",
    "max_linear_box_two_constraints",
]

_EPS = np.finfo(np.float64).eps


class InfeasibleInnerProblemError(MetricOptError, ValueError):
    """The box and the linear constraint(s) have no common point."""


class InnerSolution(NamedTuple):
    """Exact solution of a one-constraint box LP (unpacks as ``value, x, multiplier``).

    Attributes
    ----------
    value : float
        ``p @ x``, the maximum (exact up to rounding).
    x : ndarray
        A maximiser.
    multiplier : float
        Optimal multiplier of the linear constraint (``mu >= 0`` for ``<=``, free for
        ``=``); :func:`lagrangian_upper_bound` at it equals ``value`` up to rounding.
    """

    value: float
    x: np.ndarray
    multiplier: float


class TwoConstraintSolution(NamedTuple):
    """Result of :func:`max_linear_box_two_constraints`.

    Attributes
    ----------
    upper : float
        Lagrangian dual value at ``(nu, mu)``: a safe upper bound on the maximum, valid
        whether or not the iteration converged.
    x : ndarray
        The best primal point found (feasible up to rounding).
    gap : float
        ``upper - p @ x`` (an upper bound on the suboptimality of both).
    nu, mu : float
        Multipliers of ``a'x = s`` (free) and ``c'x <= budget`` (``mu >= 0``).
    converged : bool
        Whether ``gap`` met the requested relative tolerance.
    nit : int
        Evaluations of the dual function.
    """

    upper: float
    x: np.ndarray
    gap: float
    nu: float
    mu: float
    converged: bool
    nit: int


# ------------------------------------------------------------------- validation
def _vector(v, name, caller, n=None):
    arr = np.asarray(v, dtype=np.float64)
    if n is not None:
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        elif arr.shape != (n,):
            raise InvalidParameterError(
                f"The {name!r} parameter of {caller} must have shape ({n},). Got {arr.shape} instead.")
    elif arr.ndim != 1:
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a 1-d array. Got shape {arr.shape} instead.")
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be finite.")
    return np.ascontiguousarray(arr)


def _box(p, lo, hi, caller):
    p = _vector(p, "p", caller)
    n = p.shape[0]
    lo = _vector(lo, "lo", caller, n)
    hi = _vector(hi, "hi", caller, n)
    if np.any(lo > hi):
        raise InvalidParameterError(f"{caller} needs lo <= hi entrywise.")
    return p, lo, hi


def _scalar(v, name, caller, *, allow_inf=False):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a real number. Got {v!r} instead.") from None
    if np.isnan(v) or (np.isinf(v) and not (allow_inf and v > 0)):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be finite. Got {v!r} instead.")
    return v


def _tolerance(*magnitudes):
    """Rounding allowance for feasibility tests of sums of the given magnitudes."""
    return 64 * _EPS * max(1.0, *magnitudes)


# ------------------------------------------------------------- one constraint
class _Prepared:
    """Validated one-constraint data: coefficients, box, and the range of ``coef'x``."""

    def __init__(self, coef, lo, hi):
        self.coef = coef
        self.lo = lo
        self.hi = hi
        self.n = coef.shape[0]
        self.sum_lo, self.sum_hi, self.magnitude = K.coefficient_range(coef, lo, hi)
        self.rows = None

    def solve(self, p, target, floor):
        """``(value, x, multiplier, dual)`` for profits ``p`` (kernel ``solve_single``)."""
        if self.rows is None:
            self.rows = np.empty((self.n, 3))
        x = np.empty(self.n)
        mu, value, dual = K.solve_single(p, self.coef, self.lo, self.hi, float(target), floor, x,
                                         self.rows)
        return float(value), x, float(mu), float(dual)


def max_linear_box_knapsack(p, c, budget, lo, hi):
    """Exact ``max p'x`` subject to ``c'x <= budget`` and ``lo <= x <= hi``.

    Solved by median-based root finding on the multiplier ``mu >= 0`` of the budget
    (BMRM appendix B, Algorithm 2 [1]_): the candidate breakpoints ``p_i / c_i`` are
    halved around their median every round, never sorted, so the expected time is
    linear.

    Parameters
    ----------
    p : array_like of shape (n,)
        Profits.
    c : array_like of shape (n,)
        Costs. Usually ``c >= 0``; entries with ``c_i = 0`` are set by the sign of
        ``p_i`` alone (``lo_i`` on a tie), and negative entries are handled by flipping
        the variable.
    budget : float
        Right-hand side; ``inf`` drops the constraint.
    lo, hi : float or array_like of shape (n,)
        Finite bounds, ``lo <= hi``.

    Returns
    -------
    InnerSolution
        ``(value, x, multiplier)``: the maximum ``p @ x``, a maximiser, and the optimal
        ``mu >= 0`` (0 when the budget is slack).

    Raises
    ------
    InfeasibleInnerProblemError
        When ``min_{lo <= x <= hi} c'x > budget`` (beyond rounding). It is a
        ``ValueError``.

    Notes
    -----
    Ties (equal breakpoints, including the one at the optimal multiplier) share one
    fraction of their ranges, so the returned ``x`` meets the budget with equality
    whenever the budget binds. Expected O(n) time, O(n) extra memory.

    References
    ----------
    .. [1] Teo, C. H., Vishwanathan, S. V. N., Smola, A., & Le, Q. V. (2010). Bundle
           methods for regularized risk minimization. JMLR 11, 311-365.

    Examples
    --------
    >>> from metricopt.bounds import max_linear_box_knapsack
    >>> value, x, mu = max_linear_box_knapsack([3.0, 2.0, 1.0], [1.0, 1.0, 1.0], 1.5, 0.0, 1.0)
    >>> round(value, 12), x.tolist(), mu
    (4.0, [1.0, 0.5, 0.0], 2.0)
    """
    caller = "max_linear_box_knapsack"
    p, lo, hi = _box(p, lo, hi, caller)
    c = _vector(c, "c", caller, p.shape[0])
    budget = _scalar(budget, "budget", caller, allow_inf=True)
    prep = _Prepared(c, lo, hi)
    if prep.sum_lo > budget + _tolerance(abs(budget), prep.magnitude):
        raise InfeasibleInnerProblemError(
            f"{caller}: the budget {budget!r} is below min c'x = {prep.sum_lo!r} over the box")
    return InnerSolution(*prep.solve(p, budget, 0.0)[:3])


def max_linear_box_equality(p, a, s, lo, hi):
    """Exact ``max p'x`` subject to ``a'x = s`` and ``lo <= x <= hi``.

    The equality variant of :func:`max_linear_box_knapsack` (free multiplier), used by
    the sparsest-cut bound (``a`` all ones, ``s = n``; V Cor 6).

    Parameters
    ----------
    p : array_like of shape (n,)
    a : array_like of shape (n,)
        Coefficients of any sign; entries with ``a_i = 0`` are set by the sign of ``p_i``.
    s : float
    lo, hi : float or array_like of shape (n,)
        Finite bounds, ``lo <= hi``.

    Returns
    -------
    InnerSolution
        ``(value, x, multiplier)`` with the free multiplier ``nu`` of ``a'x = s``.

    Raises
    ------
    InfeasibleInnerProblemError
        When ``s`` is outside ``[min a'x, max a'x]`` over the box (beyond rounding).

    Examples
    --------
    >>> from metricopt.bounds import max_linear_box_equality
    >>> value, x, nu = max_linear_box_equality([1.0, -1.0, 0.5], [1.0, 1.0, 1.0], 2.0, 0.0, 1.0)
    >>> round(value, 12), x.tolist()
    (1.5, [1.0, 0.0, 1.0])
    """
    caller = "max_linear_box_equality"
    p, lo, hi = _box(p, lo, hi, caller)
    a = _vector(a, "a", caller, p.shape[0])
    s = _scalar(s, "s", caller)
    prep = _Prepared(a, lo, hi)
    _check_equality(prep, s, caller)
    return InnerSolution(*prep.solve(p, s, -np.inf)[:3])


def _check_equality(prep, s, caller):
    tol = _tolerance(abs(s), prep.magnitude)
    if not (prep.sum_lo - tol <= s <= prep.sum_hi + tol):
        raise InfeasibleInnerProblemError(
            f"{caller}: a'x = {s!r} is outside [{prep.sum_lo!r}, {prep.sum_hi!r}] over the box")


def box_maximum(p, lo, hi):
    """``max p'x`` over the box ``lo <= x <= hi`` and a maximiser (``lo`` on ties).

    Parameters
    ----------
    p : array_like of shape (n,)
    lo, hi : float or array_like of shape (n,)

    Returns
    -------
    InnerSolution
        ``(value, x, multiplier)`` with ``multiplier = 0.0``.
    """
    p, lo, hi = _box(p, lo, hi, "box_maximum")
    x = np.where(p > 0, hi, lo)
    return InnerSolution(float(p @ x), x, 0.0)


def box_upper(p, lo, hi):
    """:func:`box_maximum`'s value raised by a bound on its floating-point error."""
    p, lo, hi = _box(p, lo, hi, "box_upper")
    return _safe_sum(np.maximum(p * lo, p * hi), 0.0, 0.0)


def lagrangian_upper_bound(p, lo, hi, *, a=None, s=None, nu=0.0, c=None, budget=None, mu=0.0):
    """Lagrangian dual function of the box LP: an upper bound at any multipliers.

    ``L(nu, mu) = nu s + mu budget + sum_i max(r_i lo_i, r_i hi_i)`` with
    ``r = p - nu a - mu c``. By weak duality, for every ``nu`` and every ``mu >= 0``,
    ``L(nu, mu) >= max {p'x : a'x = s, c'x <= budget, lo <= x <= hi}`` (the maximum of
    an infeasible problem being ``-inf``). Either constraint may be left out. The value
    returned is raised by a bound on the floating-point error of its own evaluation,
    so it stays an upper bound in floating point.

    Parameters
    ----------
    p : array_like of shape (n,)
    lo, hi : float or array_like of shape (n,)
        Finite bounds.
    a, s : array_like of shape (n,) and float, optional
        The equality ``a'x = s``.
    nu : float
        Its multiplier (any sign).
    c, budget : array_like of shape (n,) and float, optional
        The inequality ``c'x <= budget``.
    mu : float
        Its multiplier, ``mu >= 0``.

    Returns
    -------
    float
    """
    caller = "lagrangian_upper_bound"
    p, lo, hi = _box(p, lo, hi, caller)
    r = p.copy()
    total = 0.0
    if a is not None:
        nu = _scalar(nu, "nu", caller)
        r -= nu * _vector(a, "a", caller, p.shape[0])
        total += nu * _scalar(s, "s", caller)
    if c is not None:
        mu = _scalar(mu, "mu", caller)
        if mu < 0:
            raise InvalidParameterError(f"The 'mu' parameter of {caller} must be >= 0. Got {mu!r} instead.")
        budget = _scalar(budget, "budget", caller, allow_inf=True)
        r -= mu * _vector(c, "c", caller, p.shape[0])
        if mu > 0:
            total += mu * budget
    bound = np.maximum(np.abs(lo), np.abs(hi))
    return _safe_sum(np.maximum(r * lo, r * hi), total, float((np.abs(p) + np.abs(p - r)) @ bound))


def _safe_sum(terms, extra, magnitude):
    """``sum(terms) + extra`` raised by a bound on its rounding error.

    numpy sums pairwise (error below ``(log2 n + 8) eps sum|terms|``); every term and
    ``extra`` carry a few roundings of products whose sizes ``magnitude`` bounds.
    """
    n = terms.shape[0]
    slack = (16.0 + np.log2(max(n, 1))) * _EPS * (float(np.abs(terms).sum()) + abs(extra) + magnitude)
    return float(terms.sum()) + extra + slack


# ------------------------------------------------------------ two constraints
def max_linear_box_two_constraints(p, a, s, c, budget, lo, hi, *, rtol=1e-12, max_iter=200,
                                   mu_hint=None):
    """``max p'x`` s.t. ``a'x = s``, ``c'x <= budget``, ``lo <= x <= hi``, with a safe bound.

    This is the inner LP of V Cor 6 (sparsest cut: ``a`` all ones, ``s = n``, ``c`` the
    edge indicator, ``budget`` an upper bound on the LP optimum, box
    ``[0, n/(n-1)]``).

    The problem is solved through its Lagrangian dual. For a fixed ``mu >= 0`` the
    equality problem with profits ``p - mu c`` is solved exactly
    (:func:`max_linear_box_equality`), which evaluates the convex piecewise-linear
    ``h(mu) = min_nu L(nu, mu)`` together with the subgradient ``budget - c'x(mu)``.
    ``h`` is minimised over ``mu >= 0`` by one-dimensional cutting planes (the
    intersection of the supporting lines at the two ends of a bracket) with bisection
    as a safeguard, as in the dual approach to projections onto few constraints of
    Usmanova et al. [1]_. The primal point is the convex combination of the maximisers
    at the two ends of the bracket that meets the budget with equality; once the
    bracket isolates the optimal kink of ``h`` it is optimal.

    Parameters
    ----------
    p, a, c : array_like of shape (n,)
        Any signs.
    s : float
    budget : float
        ``inf`` drops the inequality.
    lo, hi : float or array_like of shape (n,)
        Finite bounds.
    rtol : float, default=1e-12
        Stop when ``upper - p'x <= rtol * max(|upper|, |p'x|)`` (or at rounding level).
    max_iter : int, default=200
        Dual evaluations allowed after the bracket is found.
    mu_hint : float, optional
        A guess of the optimal ``mu`` (e.g. from a nearby budget): the bracket is then
        searched outwards from it, which saves evaluations when it is close.

    Returns
    -------
    TwoConstraintSolution
        ``upper`` is the dual function ``L(nu, mu)`` at the returned multipliers, raised
        by a bound on its own rounding error, hence ``>=`` the maximum even when
        ``converged`` is False; ``x`` is the best primal point, ``gap = upper - p'x``
        (of the order of ``1e-15`` relative at convergence, from that allowance).

    Raises
    ------
    InfeasibleInnerProblemError
        When no point of the box meets both constraints (beyond rounding).

    References
    ----------
    .. [1] Usmanova, I., Kamgarpour, M., Krause, A., & Levy, K. (2021). Fast projection
           onto convex smooth constraints. ICML 2021, PMLR 139.

    Examples
    --------
    >>> import numpy as np
    >>> from metricopt.bounds import max_linear_box_two_constraints
    >>> r = max_linear_box_two_constraints([3.0, 2.0, 1.0], np.ones(3), 2.0,
    ...                                    [1.0, 1.0, 0.0], 1.0, 0.0, 1.0)
    >>> round(r.upper, 12), r.x.tolist(), r.converged
    (4.0, [1.0, 0.0, 1.0], True)
    """
    caller = "max_linear_box_two_constraints"
    p, lo, hi = _box(p, lo, hi, caller)
    n = p.shape[0]
    a = _vector(a, "a", caller, n)
    c = _vector(c, "c", caller, n)
    s = _scalar(s, "s", caller)
    budget = _scalar(budget, "budget", caller, allow_inf=True)
    rtol = _scalar(rtol, "rtol", caller)
    max_iter = int(max_iter)
    prep = _Prepared(a, lo, hi)
    _check_equality(prep, s, caller)
    pmag = K.coefficient_range(p, lo, hi)[2]
    cmag = K.coefficient_range(c, lo, hi)[2]

    def evaluate(mu):
        # h(mu) = mu budget + max {(p - mu c)'x : a'x = s, box}, computed as the dual
        # function at (nu(mu), mu), so it is an upper bound whatever the rounding in x;
        # the kernel's value carries its own rounding allowance, and the terms below
        # cover the rounding of p - mu c and of the last product and sum
        r = p - mu * c if mu > 0 else p
        _, x, nu, dual = prep.solve(r, s, -np.inf)
        upper = dual
        if mu > 0:
            upper = (dual + mu * budget
                     + 4 * _EPS * (abs(dual) + abs(mu * budget) + pmag + mu * cmag))
        return upper, x, nu, float(c @ x)

    # feasibility: min c'x over the box and the equality
    _, x_min, _, _ = prep.solve(-c, s, -np.inf)
    c_min = float(c @ x_min)
    ctol = _tolerance(abs(budget) if np.isfinite(budget) else 0.0, cmag)
    if c_min > budget + ctol:
        raise InfeasibleInnerProblemError(
            f"{caller}: min c'x = {c_min!r} over the box and a'x = s exceeds the budget {budget!r}")

    best = None  # (upper, nu, mu)

    def keep(upper, nu, mu):
        nonlocal best
        if best is None or upper < best[0]:
            best = (upper, nu, mu)

    def finish(x, converged, nit):
        upper, nu, mu = best
        return TwoConstraintSolution(float(upper), x, float(upper - p @ x), float(nu), float(mu),
                                     bool(converged), int(nit))

    def small(gap, upper, value, x):
        # relative tolerance, or the rounding level of the sums behind upper and value
        _, nu, mu = best
        floor = 64 * _EPS * (pmag + abs(nu) * (prep.magnitude + abs(s))
                             + mu * (cmag + (abs(budget) if mu > 0 else 0.0)))
        return gap <= rtol * max(abs(upper), abs(value)) or gap <= floor

    u0, x0, nu0, cx0 = evaluate(0.0)
    keep(u0, nu0, 0.0)
    nit = 1
    if cx0 <= budget + ctol:
        return finish(x0, small(u0 - p @ x0, u0, p @ x0, x0), nit)

    # bracket: mu_lo with c'x > budget (slope < 0), mu_hi with c'x <= budget
    lo_side = (0.0, u0, budget - cx0, x0, cx0)
    hi_side = None
    grow = 2.0
    if mu_hint is not None and np.isfinite(mu_hint) and mu_hint > 0:
        mu = float(mu_hint)
        grow = 1.0 + 1e-3  # search outwards from the hint, the factor growing fast
    else:
        mu = max(float(np.abs(p).max()) / max(float(np.abs(c).max()), 1e-300), 1e-300)
    down = None
    for _ in range(2100):
        u, x, nu, cx = evaluate(mu)
        keep(u, nu, mu)
        nit += 1
        if cx <= budget + ctol:
            hi_side = (mu, u, budget - cx, x, cx)
            if down is False or grow == 2.0:
                break
            down = True  # from a hint: look below it for the other end
            mu /= grow
        else:
            lo_side = (mu, u, budget - cx, x, cx)
            if down is True:
                break
            down = False
            mu *= grow
        grow = min(grow**4, 2.0)
        if not np.isfinite(mu) or mu <= 0:
            break
    if hi_side is None:  # budget equals min c'x to rounding: only the min-cost face is feasible
        return finish(x_min, False, nit)

    width = np.inf
    x_best = hi_side[3]
    for _ in range(max_iter):
        m_lo, u_lo, g_lo, x_lo, cx_lo = lo_side
        m_hi, u_hi, g_hi, x_hi, cx_hi = hi_side
        # primal: combination of the two end maximisers with c'x = budget
        denom = cx_lo - cx_hi
        theta = (budget - cx_hi) / denom if denom > 0 else 0.0
        theta = min(max(theta, 0.0), 1.0)
        x_comb = theta * x_lo + (1.0 - theta) * x_hi
        value = float(p @ x_comb)
        x_best = x_comb if value >= float(p @ x_best) else x_best
        upper = best[0]
        if small(upper - value, upper, value, x_comb):
            return finish(x_best, True, nit)
        # next query: intersection of the supporting lines, or the midpoint
        if g_hi - g_lo > 0:
            mu = (u_hi - u_lo + g_lo * m_lo - g_hi * m_hi) / (g_lo - g_hi)
        else:
            mu = np.nan
        if not (m_lo < mu < m_hi) or (m_hi - m_lo) > 0.5 * width:
            mu = 0.5 * (m_lo + m_hi)
        width = m_hi - m_lo
        if not (m_lo < mu < m_hi):
            break  # the bracket cannot shrink any further in floating point
        u, x, nu, cx = evaluate(mu)
        keep(u, nu, mu)
        nit += 1
        g = budget - cx
        if g < 0:
            lo_side = (mu, u, g, x, cx)
        else:
            hi_side = (mu, u, g, x, cx)
            if float(p @ x) > float(p @ x_best):
                x_best = x
    upper = best[0]
    return finish(x_best, small(upper - float(p @ x_best), upper, float(p @ x_best), x_best), nit)
