"""numba kernels of the linear-time breakpoint search behind :mod:`metricopt.bounds.inner`.

The problem they serve is ``max p'x`` over a box ``lo <= x <= hi`` with one linear
constraint ``c'x (<= or =) t``. Negative coefficients are handled by flipping the
variable and entries with ``c = 0`` are set apart, so below ``c > 0``. For a multiplier
``mu`` the Lagrangian
maximiser puts ``x_i`` at ``hi_i`` when its breakpoint ``b_i = p_i / c_i`` exceeds
``mu`` and at ``lo_i`` when it is below, so

    G(mu+) = sum_{b_i > mu} c_i hi_i + sum_{b_i <= mu} c_i lo_i
    G(mu-) = sum_{b_i >= mu} c_i hi_i + sum_{b_i < mu} c_i lo_i

are non-increasing step functions and the optimal multiplier is a breakpoint with
``G(mu+) <= t <= G(mu-)``. It is found as in Algorithm 2 of Teo et al. (BMRM, appendix
B): split the candidate set around its median each round and keep the side holding the
root, carrying the sums of the entries already decided, so a round costs O(|S|) and the
whole search O(n). The median is exact (randomised quickselect) on small sets and the
median of a random sample of about ``2 sqrt(|S|)`` breakpoints on large ones, which
splits nearly evenly with high probability and spares a selection pass (Floyd and
Rivest); the linear bound is on the expected time. Nothing is sorted. The loops over the
data are written without data-dependent branches (0/1 weights and selects), so they run
at memory speed.

Kernels assume checked, contiguous float64 input of matching lengths; no fast-math, so
that comparisons and sums are the IEEE ones.

References
----------
.. [1] Teo, C. H., Vishwanathan, S. V. N., Smola, A., & Le, Q. V. (2010). Bundle methods
       for regularized risk minimization. JMLR 11, 311-365 (appendix B, Algorithm 2).
.. [2] Floyd, R. W., & Rivest, R. L. (1975). Expected time bounds for selection.
       Commun. ACM 18(3), 165-172. https://doi.org/10.1145/360680.360691
"""

import numba
import numpy as np

__all__ = ["breakpoint_root", "coefficient_range", "root_rows", "select_kth", "solve_single"]

_SEED = 0x2545F491
_EPS = np.finfo(np.float64).eps
_EXACT = 64  # segments up to this size use the exact median
_SAMPLE_MAX = 511  # half-size cap of the pivot sample


@numba.njit(cache=True)
def select_kth(a, n, k, state):
    """``k``-th smallest (0-based) of ``a[:n]`` by randomised three-way quickselect.

    Reorders ``a[:n]`` in place. ``state`` is the state of a 31-bit linear congruential
    generator that picks the pivots (passed in and returned, so runs are reproducible).

    Returns
    -------
    value : float
    state : int
    work : int
        Entries scanned (expected O(n)).
    """
    lo = 0
    hi = n
    work = 0
    while hi - lo > 1:
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        piv = a[lo + state % (hi - lo)]
        lt = lo
        i = lo
        gt = hi
        while i < gt:
            v = a[i]
            if v < piv:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif v > piv:
                gt -= 1
                a[i] = a[gt]
                a[gt] = v
            else:
                i += 1
        work += hi - lo
        if k < lt:
            hi = lt
        elif k >= gt:
            lo = gt
        else:
            return piv, state, work
    return a[lo], state, work


@numba.njit(cache=True)
def breakpoint_root(bp, clo, chi, target, floor):
    """Optimal multiplier ``mu > floor`` of the single-constraint box LP.

    Parameters
    ----------
    bp : ndarray of shape (n,)
        Breakpoints ``p_i / c_i``.
    clo, chi : ndarray of shape (n,)
        ``c_i lo_i`` and ``c_i hi_i``.
    target : float
        Right-hand side ``t``; the caller guarantees ``G(floor+) > t >= sum(clo)``.
    floor : float
        ``-inf`` for an equality constraint, ``0`` for ``<=`` (``mu >= 0``).

    Returns
    -------
    mu : float
        A breakpoint with ``G(mu+) <= t <= G(mu-)``. When rounding in the sums leaves no
        breakpoint satisfying it, the nearest pivot bracketing the root is returned
        (``G`` is constant between them, so the caller's tie filling stays correct to
        rounding).
    work : int
        Rows scanned (copy, summing, compaction and selection); about ``5 n`` in
        expectation, since the candidate set roughly halves every round.

    Notes
    -----
    The candidates are rows ``(b_i, c_i lo_i, c_i hi_i)`` of one contiguous array. Each
    round sums the rows below, at and above a median, decides on which side the root
    lies, and compacts that side to the front: the exact median (by quickselect) for
    segments of at most ``_EXACT`` rows, and for larger ones the median of a random
    sample of about ``2 sqrt(m)`` rows, which splits the segment close to evenly with
    high probability (the Floyd-Rivest refinement of the median step of BMRM
    Algorithm 2). Expected time O(n); nothing is sorted.
    """
    n = bp.shape[0]
    rows = np.empty((n, 3))
    acc = 0.0
    k = 0
    for i in range(n):
        if bp[i] > floor:
            rows[k, 0] = bp[i]
            rows[k, 1] = clo[i]
            rows[k, 2] = chi[i]
            k += 1
        else:
            acc += clo[i]
    mu, work = root_rows(rows, k, acc, target, floor)
    return mu, work + n


@numba.njit(cache=True)
def root_rows(rows, k, acc, target, floor):
    """Core of :func:`breakpoint_root` on candidate rows ``(b_i, c_i lo_i, c_i hi_i)``.

    ``rows[:k]`` hold the candidates (breakpoints above ``floor``; overwritten) and
    ``acc`` the sum of ``c_i lo_i`` over the entries left out (at or below ``floor``).
    Each round sums the three groups around the pivot in one pass, decides the side,
    and compacts the kept side to the front in place; both loops are branch-free in
    the data, so they run at memory speed. Returns ``(mu, work)``.
    """
    scratch = np.empty(min(k, 2 * _SAMPLE_MAX + 1))
    m = k
    below = floor
    above = np.inf
    state = _SEED
    work = 0
    while m > 0:
        if m <= _EXACT:
            for t in range(m):
                scratch[t] = rows[t, 0]
            med, state, w = select_kth(scratch, m, m // 2, state)
        else:
            size = min(2 * int(np.sqrt(m)) + 1, 2 * _SAMPLE_MAX + 1)
            for t in range(size):
                state = (state * 1103515245 + 12345) & 0x7FFFFFFF
                scratch[t] = rows[state % m, 0]
            med, state, w = select_kth(scratch, size, size // 2, state)
        l_lo = 0.0
        e_lo = 0.0
        e_hi = 0.0
        u_hi = 0.0
        for i in range(m):
            v = rows[i, 0]
            cl = rows[i, 1]
            ch = rows[i, 2]
            l_lo += cl if v < med else 0.0  # compiled to selects: no data branches
            u_hi += ch if v > med else 0.0
            eq = v == med
            e_lo += cl if eq else 0.0
            e_hi += ch if eq else 0.0
        work += w + 2 * m
        g_plus = acc + l_lo + e_lo + u_hi
        g_minus = acc + l_lo + e_hi + u_hi
        if target < g_plus:  # mu > med: the lower and equal entries sit at lo
            acc += l_lo + e_lo
            below = med
            up = True
        elif target > g_minus:  # mu < med: the equal and upper entries sit at hi
            acc += e_hi + u_hi
            above = med
            up = False
        else:
            return med, work
        j = 0
        for i in range(m):  # in-place compaction (j <= i), branch-free
            v = rows[i, 0]
            rows[j, 0] = v
            rows[j, 1] = rows[i, 1]
            rows[j, 2] = rows[i, 2]
            j += (v > med) if up else (v < med)
        m = j
    if below > floor or above == np.inf:
        return below, work
    return above, work


@numba.njit(cache=True)
def solve_single(p, coef, lo, hi, target, floor, x, rows):
    """Exact ``max p'x`` over ``lo <= x <= hi`` with ``coef'x = target`` or ``<= target``.

    ``floor = -inf`` selects the equality, ``floor = 0`` the inequality (multiplier
    ``mu >= 0``). Negative coefficients are handled by flipping the variable; entries
    with ``coef = 0`` are set by the sign of ``p`` (``lo`` on a tie). Feasibility is the
    caller's job.

    Parameters
    ----------
    p, coef, lo, hi : ndarray of shape (n,)
    target : float
    floor : float
    x : ndarray of shape (n,)
        Output: the maximiser.
    rows : ndarray of shape (n, 3)
        Workspace (reused across calls to spare allocations).

    Returns
    -------
    mu : float
        Optimal multiplier.
    value : float
        ``p @ x``.
    dual : float
        Lagrangian dual value ``mu target + sum max(r lo, r hi)``, ``r = p - mu coef``
        (``mu target`` left out when ``mu = 0``), summed with compensation and raised by
        an allowance for rounding: an upper bound on the maximum for any ``mu``
        (``mu >= 0`` for the inequality) even in floating point, and equal to
        ``value`` to within about ``1e-15`` relative at the optimal ``mu``.
    """
    n = p.shape[0]
    k = 0
    acc = 0.0  # c lo summed over the entries at or below the floor
    g0 = 0.0  # G(0+) for the inequality
    # In the loops below, selections are written as products with 0/1 weights, which
    # are exact and keep the loops free of data-dependent branches.
    for i in range(n):
        ci = coef[i]
        if ci == 0.0:
            continue
        b = p[i] / ci  # breakpoint; for ci < 0 it is that of the flipped variable -x_i
        if ci > 0:
            cl = ci * lo[i]
            ch = ci * hi[i]
        else:
            cl = ci * hi[i]
            ch = ci * lo[i]
        pos = np.float64(b > 0)
        g0 += ch * pos + cl * (1.0 - pos)
        rows[k, 0] = b  # kept only if above the floor (k <= i)
        rows[k, 1] = cl
        rows[k, 2] = ch
        keep = b > floor
        k += keep
        acc += cl * (1.0 - np.float64(keep))
    if k == 0 or (floor == 0.0 and g0 <= target):
        mu = 0.0
    else:
        mu, _ = root_rows(rows, k, acc, target, floor)
    # entries strictly above / below mu sit at a bound; the ties share one fraction
    fixed = 0.0
    tie_lo = 0.0
    tie_hi = 0.0
    for i in range(n):
        ci = coef[i]
        if ci == 0.0:
            continue
        b = p[i] / ci
        if ci > 0:
            cl = ci * lo[i]
            ch = ci * hi[i]
        else:
            cl = ci * hi[i]
            ch = ci * lo[i]
        ga = np.float64(b > mu)
        gb = np.float64(b < mu)
        tie = 1.0 - ga - gb
        fixed += ch * ga + cl * gb
        tie_lo += cl * tie
        tie_hi += ch * tie
    theta = 0.0
    if tie_hi > tie_lo:
        theta = (target - fixed - tie_lo) / (tie_hi - tie_lo)
        theta = min(max(theta, 0.0), 1.0)
    value = 0.0
    dual = 0.0
    comp = 0.0  # Neumaier compensation of the dual sum
    mag = 0.0  # magnitude of the dual terms, for the rounding allowance
    for i in range(n):
        ci = coef[i]
        pi = p[i]
        lo_i = lo[i]
        hi_i = hi[i]
        if ci == 0.0:
            frac = np.float64(pi > 0)
        else:
            b = pi / ci
            ga = np.float64(b > mu)
            gb = np.float64(b < mu)
            frac = ga + (1.0 - ga - gb) * theta  # share of the way to the top of c_i x_i
            if ci < 0:
                frac = 1.0 - frac
        xi = lo_i * (1.0 - frac) + hi_i * frac  # exactly lo_i or hi_i when frac is 0 or 1
        x[i] = xi
        value += pi * xi
        r = pi - mu * ci
        term = max(r * lo_i, r * hi_i)
        t = dual + term
        comp += ((dual - t) + term) if abs(dual) >= abs(term) else ((term - t) + dual)
        dual = t
        mag += (abs(pi) + abs(mu * ci)) * max(abs(lo_i), abs(hi_i))
    dual += comp
    if mu != 0.0:
        dual += mu * target
        mag += abs(mu * target)
    # each term carries at most ~3 roundings and the compensated sum ~2 more
    dual += (8.0 + n * _EPS) * _EPS * mag
    return mu, value, dual


@numba.njit(cache=True)
def coefficient_range(coef, lo, hi):
    """``(min coef'x, max coef'x, sum |coef_i| max(|lo_i|, |hi_i|))`` over the box."""
    smin = 0.0
    smax = 0.0
    mag = 0.0
    for i in range(coef.shape[0]):
        a = coef[i] * lo[i]
        b = coef[i] * hi[i]
        smin += min(a, b)
        smax += max(a, b)
        mag += max(abs(a), abs(b))
    return smin, smax, mag
