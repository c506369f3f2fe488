"""numba Hildreth kernels of the per-variable and explicit-list constraints.

Shared by the dykstra and project-forget backends: the per-pair constraints
(:func:`pair_pass`: the ``f >= |x - d|`` split, lower and upper bounds), the equality
``sum(x) == total`` (:func:`sum_step`), and, for sparse problems, the triangle
constraints of explicit triangles (:func:`edge_triangle_pass`) and the covering
constraints of open wedges (:func:`wedge_pass`), all with dense duals.

Every kernel is pure: arrays and scalars in, arrays and scalars out. Inputs are assumed
checked by the driver: contiguous float64 / int64 arrays of matching lengths.

Conventions (see Veldt et al. 2019, Alg. 1-2 and §5), shared by every Hildreth kernel
of the package (:mod:`metricopt.solvers._triangle_dense`,
:mod:`metricopt.solvers._triangle_sparse`, :mod:`metricopt.solvers._pf_kernels`):

* The QP is ``min c'v + (1/2 gamma) (v - delta)' W (v - delta)`` over constraints
  ``a_t' v <= b_t``; ``winv`` holds the diagonal of ``W^{-1}``.
* A dual is kept as ``z_t = gamma * y_t`` so that ``v = v0 - W^{-1} A' z`` and a visit
  of constraint ``t`` is the Hildreth step
  ``z_t <- max(0, z_t + (a_t' v - b_t) / (a_t' W^{-1} a_t))``,
  ``v <- v - (z_t(new) - z_t(old)) W^{-1} a_t``.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2), 333-355.
.. [2] Dykstra, R. L. (1983). An algorithm for restricted least squares regression.
       J. Amer. Statist. Assoc. 78(384), 837-842.
"""

import numba
import numpy as np

from .. import _config

__all__ = ["pair_pass", "pair_pass_weights", "objective_sums", "centred_sums", "diff_dot", "sum_step",
           "edge_triangle_pass", "wedge_pass"]

_FM = set(_config.FASTMATH)


@numba.njit(fastmath=_FM, cache=True, nogil=True)
def pair_pass(x, winv, f, target, z, lower, upper, has_f, has_lower, has_upper):
    """One pass over the per-pair constraints, dense duals.

    For every pair ``p`` (in array order) the constraints, in this order:
    ``x - f <= d`` and ``-x - f <= -d`` (when ``has_f``: the ``f >= |x - d|`` split of
    V §6.2, ``d = target``, ``f`` weighted like ``x``), ``-x <= -lower`` and
    ``x <= upper``.

    Parameters
    ----------
    x, winv, f, target : ndarray of shape (N,)
        ``f`` and ``target`` are ignored unless ``has_f``.
    z : ndarray of shape (4, N)
        Duals (``gamma * y``), updated in place; rows: f-plus, f-minus, lower, upper.
    lower, upper : float
    has_f, has_lower, has_upper : bool

    Returns
    -------
    bz : float
        ``sum_t b_t z_t`` over these constraints after the pass.
    nnz : int
        Nonzero duals after the pass.
    vmax : float
        Largest violation met at a visit.
    smax : float
        Largest ``|dz|``.
    """
    npair = x.shape[0]
    bz = 0.0
    nnz = 0
    vmax = 0.0
    smax = 0.0
    for p in range(npair):
        xp = x[p]
        wp = winv[p]
        if has_f:
            fp = f[p]
            dp = target[p]
            q = 0.5 / wp
            # x - f <= d
            zo = z[0, p]
            v = xp - fp - dp
            if v > vmax:
                vmax = v
            zn = zo + v * q
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp -= dz * wp
            fp += dz * wp
            z[0, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            # -x - f <= -d
            zo = z[1, p]
            v = dp - xp - fp
            if v > vmax:
                vmax = v
            zn = zo + v * q
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp += dz * wp
            fp += dz * wp
            z[1, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            f[p] = fp
            bz += dp * (z[0, p] - z[1, p])
            nnz += (z[0, p] > 0.0) + (z[1, p] > 0.0)
        if has_lower:
            zo = z[2, p]
            v = lower - xp
            if v > vmax:
                vmax = v
            zn = zo + v / wp
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            # an active bound holds x exactly (the step's value in exact arithmetic):
            # x - dz w drifts by rounding from the bound, which would spread the
            # plateaus the support scans rely on
            xp = lower if zn > 0.0 else xp + dz * wp
            z[2, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            bz -= lower * zn
            nnz += zn > 0.0
        if has_upper:
            zo = z[3, p]
            v = xp - upper
            if v > vmax:
                vmax = v
            zn = zo + v / wp
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp = upper if zn > 0.0 else xp - dz * wp
            z[3, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            bz += upper * zn
            nnz += zn > 0.0
        x[p] = xp
    return bz, nnz, vmax, smax


#: Pairs per chunk of :func:`pair_pass_weights` (its ``1 / w`` buffer).
_CHUNK = 4096


@numba.njit(fastmath=_FM, cache=True)
def pair_pass_weights(x, w, f, target, z, lower, upper, has_f, has_lower, has_upper):
    """:func:`pair_pass` from the weights ``w`` instead of ``winv = 1 / w``: the
    reciprocals are formed a chunk at a time (the same values, so the same steps), which
    spares the dense backends a per-pair array of 8 bytes. Same returns."""
    npair = x.shape[0]
    buf = np.empty(min(_CHUNK, max(npair, 1)))
    bz = 0.0
    nnz = 0
    vmax = 0.0
    smax = 0.0
    for lo in range(0, npair, _CHUNK):
        hi = min(lo + _CHUNK, npair)
        winv = buf[: hi - lo]
        for p in range(lo, hi):
            winv[p - lo] = 1.0 / w[p]
        fs = f[lo:hi] if has_f else f
        ts = target[lo:hi] if has_f else target
        b, m, v, sm = pair_pass(x[lo:hi], winv, fs, ts, z[:, lo:hi], lower, upper, has_f,
                                has_lower, has_upper)
        bz += b
        nnz += m
        vmax = max(vmax, v)
        smax = max(smax, sm)
    return bz, nnz, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def objective_sums(x, w, delta, f, cost, has_delta, has_f, has_cost):
    """The sums over the pairs behind the QP's primal and dual values, in one pass and
    without temporaries (chunks of :data:`_CHUNK` summed apart, then added, which
    bounds the rounding like a pairwise sum).

    With ``e = x - delta`` (``e = x`` unless ``has_delta``) returns
    ``quad = sum w e^2 (+ sum w f^2)``, ``lin = sum w f`` (``has_f``) or ``sum cost x``
    (``has_cost``), and ``cross = sum w delta e`` (``has_delta``). Arrays not used may
    be any float64 array (``x``, say).
    """
    quad = 0.0
    lin = 0.0
    cross = 0.0
    npair = x.shape[0]
    for lo in range(0, npair, _CHUNK):
        hi = min(lo + _CHUNK, npair)
        q = 0.0
        li = 0.0
        c = 0.0
        for p in range(lo, hi):
            e = x[p] - delta[p] if has_delta else x[p]
            q += w[p] * e * e
            if has_f:
                q += w[p] * f[p] * f[p]
                li += w[p] * f[p]
            elif has_cost:
                li += cost[p] * x[p]
            if has_delta:
                c += w[p] * delta[p] * e
        quad += q
        lin += li
        cross += c
    return quad, lin, cross


@numba.njit(fastmath=_FM, cache=True)
def centred_sums(x, f, w, delta, shift_x, shift_f):
    """The sums of :func:`objective_sums` for an l1 QP centred at ``(delta + shift_x,
    shift_f)`` (:func:`._regularised.recentre`): with ``e = x - delta - shift_x`` and
    ``g = f - shift_f``, ``quad = sum w (e^2 + g^2)``, ``lin = sum w f`` and
    ``cross = sum w (e (delta + shift_x) + g shift_f)``; chunked as there."""
    quad = 0.0
    lin = 0.0
    cross = 0.0
    npair = x.shape[0]
    for lo in range(0, npair, _CHUNK):
        hi = min(lo + _CHUNK, npair)
        q = 0.0
        li = 0.0
        c = 0.0
        for p in range(lo, hi):
            cx = delta[p] + shift_x[p]
            e = x[p] - cx
            g = f[p] - shift_f[p]
            q += w[p] * (e * e + g * g)
            li += w[p] * f[p]
            c += w[p] * (e * cx + g * shift_f[p])
        quad += q
        lin += li
        cross += c
    return quad, lin, cross


def centred_sums_reference(x, f, w, delta, shift_x, shift_f):
    """Plain NumPy :func:`centred_sums` (for the tests)."""
    cx = delta + shift_x
    e, g = x - cx, f - shift_f
    return (float(np.sum(w * (e * e + g * g))), float(np.sum(w * f)),
            float(np.sum(w * (e * cx + g * shift_f))))


@numba.njit(fastmath=_FM, cache=True)
def diff_dot(d, a, b):
    """``sum d (a - b)`` in one pass, summed by chunks like :func:`objective_sums`."""
    total = 0.0
    for lo in range(0, d.shape[0], _CHUNK):
        hi = min(lo + _CHUNK, d.shape[0])
        t = 0.0
        for p in range(lo, hi):
            t += d[p] * (a[p] - b[p])
        total += t
    return total


@numba.njit(fastmath=_FM, cache=True)
def sum_step(x, winv, z, total):
    """Project on the equality ``sum(x) == total`` (dual unrestricted in sign).

    Returns the new dual ``z``, the violation ``|sum(x) - total|`` before the step, and
    ``|dz|``.
    """
    s = 0.0
    q = 0.0
    for p in range(x.shape[0]):
        s += x[p]
        q += winv[p]
    v = s - total
    dz = v / q
    for p in range(x.shape[0]):
        x[p] -= dz * winv[p]
    return z + dz, abs(v), abs(dz)


@numba.njit(fastmath=_FM, cache=True)
def edge_triangle_pass(x, winv, tri, z):
    """One pass over the triangle constraints of explicit triangles (dense duals).

    Parameters
    ----------
    x, winv : ndarray of shape (m,)
    tri : ndarray of shape (t, 3), int64
        Variable indices ``(a, b, c)``; the constraints are ``x_a <= x_b + x_c``,
        ``x_b <= x_a + x_c``, ``x_c <= x_a + x_b`` (in this order).
    z : ndarray of shape (3 t,)
        Duals, updated in place.

    Returns
    -------
    nnz : int
    vmax, smax : float
    """
    nnz = 0
    vmax = 0.0
    smax = 0.0
    for r in range(tri.shape[0]):
        ia = tri[r, 0]
        ib = tri[r, 1]
        ic = tri[r, 2]
        xa = x[ia]
        xb = x[ib]
        xc = x[ic]
        wa = winv[ia]
        wb = winv[ib]
        wc = winv[ic]
        qinv = 1.0 / (wa + wb + wc)
        for c in range(3):
            zo = z[3 * r + c]
            if c == 0:
                v = xa - xb - xc
            elif c == 1:
                v = xb - xa - xc
            else:
                v = xc - xa - xb
            if v > vmax:
                vmax = v
            zn = zo + v * qinv
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            if dz != 0.0:
                sa = 1.0 if c == 0 else -1.0
                sb = 1.0 if c == 1 else -1.0
                sc = 1.0 if c == 2 else -1.0
                xa -= dz * sa * wa
                xb -= dz * sb * wb
                xc -= dz * sc * wc
                if abs(dz) > smax:
                    smax = abs(dz)
            z[3 * r + c] = zn
            nnz += zn > 0.0
        x[ia] = xa
        x[ib] = xb
        x[ic] = xc
    return nnz, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def wedge_pass(x, winv, wed, z):
    """One pass over ``x_a + x_b >= 1`` for the wedge rows ``(a, b)`` (dense duals).

    Returns ``bz = sum b_t z_t`` (``b_t = -1``), the nonzero count, ``vmax`` and ``smax``.
    """
    nnz = 0
    bz = 0.0
    vmax = 0.0
    smax = 0.0
    for r in range(wed.shape[0]):
        ia = wed[r, 0]
        ib = wed[r, 1]
        wa = winv[ia]
        wb = winv[ib]
        zo = z[r]
        v = 1.0 - x[ia] - x[ib]
        if v > vmax:
            vmax = v
        zn = zo + v / (wa + wb)
        if zn < 0.0:
            zn = 0.0
        dz = zn - zo
        if dz != 0.0:
            x[ia] += dz * wa
            x[ib] += dz * wb
            if abs(dz) > smax:
                smax = abs(dz)
        z[r] = zn
        bz -= zn
        nnz += zn > 0.0
    return bz, nnz, vmax, smax
