"""V Thm 5 for correlation clustering in streamed passes: no per-pair temporaries.

:func:`~.certificates.correlation_clustering_bound` solves the inner LP exactly, which
forms a dozen vectors of one or two entries per pair (profits, boxes, costs, the
maximiser); at the scale of ca-HepTh that is the run's peak memory. The same bound
family needs only sums over the pairs:

For a budget ``beta`` the certified value is ``f(beta) = -b'y - max {p'x : c'x <= beta,
0 <= x <= u}`` (V Thm 5, two pieces of ``f`` per pair), and any ``beta`` with
``f(beta) >= beta`` is at most the LP optimum (:func:`~.certificates.
theorem5_fixed_point_bound`). Weak duality bounds the inner maximum at any ``mu >= 0``
by ``mu beta + G(mu)`` with ``G(mu) = sum max(0, p - mu c) u``, so

    beta(mu) = (-b'y - G(mu)) / (1 + mu)

passes the test for *every* ``mu >= 0``: each evaluation is a certified bound, and the
fixed point of the exact method is ``max_mu beta(mu)`` (strong duality of the inner
LP). ``beta(mu)`` is quasi-concave (``-b'y - G`` is concave, ``1 + mu`` positive and
affine), so a golden-section search in ``log(1 + mu)`` finds its maximum; one pass per
evaluation, each computing ``p`` and ``u`` of a pair from the iterate on the fly
(:mod:`._streamed_kernels`). The sums carry a bound on their own rounding, so the
value stays certified in floating point.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355, Theorem 5.
"""

import math
import time

import numpy as np

from ..result import RichResult
from . import _streamed_kernels as K

__all__ = ["correlation_clustering_bound_streamed"]

_EPS = np.finfo(np.float64).eps
#: Pairs per chunk of the kernels: each chunk is summed in order, so the rounding bound
#: of a sum grows with it.
CHUNK = 4096
#: Golden-section steps at most; the bracket in ``log(1 + mu)`` shrinks by 0.618 per step.
MAX_EVALUATIONS = 120


def _contiguous(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def correlation_clustering_bound_streamed(x, f, weights, target, *, gamma, minus_b_dot_y,
                                          regularizer, x_lower=0.0, x_upper=1.0,
                                          deadline=None):
    """Certified V Thm 5 bound for correlation clustering, memory O(N / CHUNK).

    The bound of :func:`~.certificates.correlation_clustering_bound` with
    ``regularizer = qp_cost`` (the way :func:`~.driver.certify` calls it), computed
    from the iterate in passes (module docstring).

    Parameters
    ----------
    x, f : ndarray of shape (N,)
        The iterate (``x``, not ``x - d``), full precision.
    weights : ndarray of shape (N,)
        LP weights ``>= 0``.
    target : ndarray of shape (N,)
        ``d``, ``x_lower <= d <= x_upper``.
    gamma : float
    minus_b_dot_y : float
        ``-b'y`` in the shifted variables ``e = x - d``.
    regularizer : ndarray of shape (N,)
        Diagonal of ``W`` for ``e`` and ``f``, also the QP cost of ``f``.
    x_lower, x_upper : float
        A box of ``x`` that holds an LP optimum.
    deadline : float or None
        A ``time.perf_counter()`` value: the search for the best multiplier stops there
        (after the pass at ``mu = 0``, or, once begun, the bracket's first four). Every
        evaluation is certified, so the value is still a bound, only a weaker one.

    Returns
    -------
    RichResult
        ``value`` (certified), ``mu`` (the multiplier that gives it), ``nit`` (passes),
        ``method="theorem5-cc-streamed"``, ``stopped`` (True when ``deadline`` ended the
        search).
    """
    x, f, w0, d, wr = map(_contiguous, (x, f, weights, target, regularizer))
    g, xl, xu, mby = float(gamma), float(x_lower), float(x_upper), float(minus_b_dot_y)
    n = x.shape[0]
    nit = 0
    chunks = max(1, -(-n // CHUNK))
    rel = (CHUNK + 16.0 + math.log2(chunks)) * _EPS

    def beta(mu):
        nonlocal nit
        nit += 1
        tot, absolute, magnitude = K.cc_lagrangian_terms(x, f, w0, d, wr, g, xl, xu, mu, CHUNK)
        upper = float(tot.sum())
        upper += rel * (float(absolute.sum()) + float(magnitude.sum()))
        numer = mby - upper
        numer -= 4 * _EPS * (abs(mby) + abs(upper))
        value = numer / (1.0 + mu)
        return value - 4 * _EPS * abs(value)

    def late():
        return deadline is not None and time.perf_counter() >= deadline

    best_mu, best = 0.0, beta(0.0)
    stopped = late()
    mu_max = 0.0 if stopped else float(
        K.cc_largest_ratio(x, f, w0, d, wr, g, xl, xu, CHUNK).max(initial=0.0))
    lo, hi = 0.0, math.log1p(mu_max)
    if hi > 0.0:
        at_hi = beta(mu_max)
        if at_hi > best:
            best_mu, best = mu_max, at_hi
        ratio = (math.sqrt(5.0) - 1.0) / 2.0
        a = hi - ratio * (hi - lo)
        b = lo + ratio * (hi - lo)
        fa, fb = beta(math.expm1(a)), beta(math.expm1(b))
        while nit < MAX_EVALUATIONS and hi - lo > 4 * _EPS * (1.0 + hi):
            if late():
                stopped = True
                break
            if fa >= fb:  # the maximum is in [lo, b]
                hi, b, fb = b, a, fa
                a = hi - ratio * (hi - lo)
                fa = beta(math.expm1(a))
            else:
                lo, a, fa = a, b, fb
                b = lo + ratio * (hi - lo)
                fb = beta(math.expm1(b))
            for t, v in ((a, fa), (b, fb)):
                if v > best:
                    best_mu, best = math.expm1(t), v
    # LP* >= min over the box of w'f = 0 outright (w >= 0, f >= 0)
    value = max(best, 0.0)
    return RichResult(value=float(value), of="lp", certified=True, mu=float(best_mu),
                      nit=int(nit), method="theorem5-cc-streamed", stopped=stopped,
                      reference="Veldt et al. (2019), Theorem 5 (e/f form of §6.2), "
                                "maximised over the budget multiplier in passes")
