"""numba kernel of the streamed V Thm 5 bound (:mod:`metricopt.bounds.streamed`).

One pass over the pairs evaluates the Lagrangian term ``G(mu)`` of the correlation
clustering inner problem (:func:`metricopt.bounds.correlation_clustering_bound`, e/f
form, two pieces of ``f`` per pair) from the iterate itself, without forming the
per-piece profit, box and cost vectors of the exact solver. Compiled without fast-math:
the caller bounds the rounding of these sums.
"""

import numba
import numpy as np

__all__ = ["cc_lagrangian_terms", "cc_largest_ratio", "terms_share", "ratio_share"]


@numba.njit(inline="always")
def _pieces(xi, fi, w0, di, wr, gamma, xl, xu):
    """Profits and upper bounds of the two pieces of ``f`` of one pair (cost ``w0``)."""
    pe = wr * (xi - di) / gamma
    pf = wr * fi / gamma + (wr - w0)
    lo_e = xl - di
    hi_e = xu - di
    big = max(-lo_e, hi_e)
    room = hi_e if pe >= 0.0 else -lo_e
    return pf + abs(pe), room, pf, big - room


def cc_lagrangian_terms(x, f, w0, d, wr, gamma, xl, xu, mu, chunk, threads=None):
    """Per-chunk sums of ``max(0, p - mu c) u`` over both pieces of every pair.

    Parameters
    ----------
    x, f, w0, d, wr : ndarray of shape (N,), float64
        Iterate, LP weights (``c`` of both pieces), targets, diagonal of ``W``.
    gamma, xl, xu, mu : float
    chunk : int
        Pairs per chunk (each chunk summed in order, the chunks dealt round robin to
        ``threads`` threads, default numba's thread count).

    Returns
    -------
    total, absolute, magnitude : ndarray of shape (ceil(N / chunk),)
        Per chunk: the sum of the terms, the sum of their absolute values, and
        ``sum (|p| + mu c) u`` (the size of the products the terms are made of).
    """
    from .._threads import run_workers, thread_count

    nch = (x.shape[0] + chunk - 1) // chunk
    total = np.zeros(nch)
    absolute = np.zeros(nch)
    magnitude = np.zeros(nch)
    T = max(1, min(thread_count(threads), nch))
    run_workers(lambda t: terms_share(x, f, w0, d, wr, float(gamma), float(xl), float(xu),
                                      float(mu), int(chunk), total, absolute, magnitude, t, T),
                T, threads)
    return total, absolute, magnitude


@numba.njit(cache=True, nogil=True)
def terms_share(x, f, w0, d, wr, gamma, xl, xu, mu, chunk, total, absolute, magnitude, t, T):
    """Chunks ``t, t + T, ...`` of :func:`cc_lagrangian_terms`, written to the outputs."""
    n = x.shape[0]
    nch = (n + chunk - 1) // chunk
    for c in range(t, nch, T):
        a = c * chunk
        b = min(n, a + chunk)
        s = 0.0
        sa = 0.0
        sm = 0.0
        for i in range(a, b):
            p1, u1, p2, u2 = _pieces(x[i], f[i], w0[i], d[i], wr[i], gamma, xl, xu)
            cost = mu * w0[i]
            t3 = 0.0
            r = p1 - cost
            if r > 0.0:
                t3 += r * u1
            r = p2 - cost
            if r > 0.0:
                t3 += r * u2
            s += t3
            sa += abs(t3)
            sm += (abs(p1) + cost) * u1 + (abs(p2) + cost) * u2
        total[c] = s
        absolute[c] = sa
        magnitude[c] = sm


def cc_largest_ratio(x, f, w0, d, wr, gamma, xl, xu, chunk, threads=None):
    """Largest ``p / c`` over the pieces with ``c > 0`` per chunk (0 when none is
    positive): beyond it ``G(mu)`` no longer changes."""
    from .._threads import run_workers, thread_count

    nch = (x.shape[0] + chunk - 1) // chunk
    best = np.zeros(nch)
    T = max(1, min(thread_count(threads), nch))
    run_workers(lambda t: ratio_share(x, f, w0, d, wr, float(gamma), float(xl), float(xu),
                                      int(chunk), best, t, T), T, threads)
    return best


@numba.njit(cache=True, nogil=True)
def ratio_share(x, f, w0, d, wr, gamma, xl, xu, chunk, best, t, T):
    """Chunks ``t, t + T, ...`` of :func:`cc_largest_ratio`, written to ``best``."""
    n = x.shape[0]
    nch = (n + chunk - 1) // chunk
    for c in range(t, nch, T):
        a = c * chunk
        b = min(n, a + chunk)
        m = 0.0
        for i in range(a, b):
            if w0[i] > 0.0:
                p1, u1, p2, u2 = _pieces(x[i], f[i], w0[i], d[i], wr[i], gamma, xl, xu)
                if u1 > 0.0 and p1 / w0[i] > m:
                    m = p1 / w0[i]
                if u2 > 0.0 and p2 / w0[i] > m:
                    m = p2 / w0[i]
        best[c] = m
