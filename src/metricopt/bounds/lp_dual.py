"""A solver-free lower bound on an LP optimum from any row multipliers (weak duality).

The LP is ``min c'x + offset`` subject to ``L <= A x <= U`` (rows; a side may be
infinite) and ``x`` in its column bounds. :func:`lp_dual_bound` takes multipliers ``y``
from anywhere (an LP solver's row duals, a first-order method's iterate, garbage) and
returns a number that never exceeds the optimum, computed from ``c``, ``A`` and the
bounds alone: the solver's own reduced costs and dual objective are never used.

References
----------
.. [1] Bertsimas, D., & Tsitsiklis, J. N. (1997). Introduction to Linear Optimization,
       §4.3 (weak duality). Athena Scientific.
.. [2] Neumaier, A., & Shcherbina, O. (2004). Safe bounds in linear and mixed-integer
       linear programming. Math. Program. 99, 283-296.
       https://doi.org/10.1007/s10107-003-0433-3
.. [3] Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed.,
       ch. 3-4. SIAM. https://doi.org/10.1137/1.9780898718027
"""

import math

import numpy as np

from ..exceptions import InvalidParameterError
from .certificates import BoundResult

__all__ = ["lp_dual_bound"]

#: Unit roundoff of float64.
_U = np.finfo(np.float64).eps / 2


def _vector(v, name, size, caller):
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    if arr.shape != (size,):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must have shape ({size},). Got {arr.shape} instead.")
    if np.isnan(arr).any():
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must not contain NaN.")
    return arr


def lp_dual_bound(cost, matrix, row_lower, row_upper, row_dual, col_lower, col_upper, *,
                  offset=0.0):
    """Lower bound on ``min {c'x + offset : L <= A x <= U, lo <= x <= hi}`` from multipliers ``y``.

    For any ``y`` whose signs suit the rows (``y_i >= 0`` only where ``L_i`` is finite,
    ``y_i <= 0`` only where ``U_i`` is finite) and any ``x`` in the LP's feasible set,
    ``y_i (A x)_i >= max(y_i, 0) L_i + min(y_i, 0) U_i`` row by row, so with the reduced
    costs ``r = c - A'y`` (Lagrangian weak duality)::

        c'x = r'x + y'(A x) >= sum_j min(r_j lo_j, r_j hi_j)
                               + sum_i (max(y_i, 0) L_i + min(y_i, 0) U_i).

    Taking ``x`` an LP optimum that lies in the box ``[lo, hi]`` makes the right-hand
    side (plus ``offset``) a lower bound on the optimum. The box need not be the LP's
    own column bounds: any box *known* to contain an optimum works (one implied by the
    rows, or by an argument about the problem), and the bound is usually much tighter
    than the one from infinite column bounds.

    The multipliers are first clipped to the signs their rows allow (a negative
    multiplier of a ``>=`` row is set to 0, and so on; non-finite entries become 0), so
    *every* ``y`` gives a valid bound; the solver's optimal duals give the optimum
    itself, up to their accuracy. ``r`` is recomputed here in float64 from the clipped
    ``y``.

    Parameters
    ----------
    cost : array_like of shape (n_cols,)
        ``c``.
    matrix : scipy.sparse matrix or ndarray of shape (n_rows, n_cols)
        ``A``.
    row_lower, row_upper : array_like of shape (n_rows,)
        ``L`` and ``U`` (``-inf`` / ``inf`` where absent).
    row_dual : array_like of shape (n_rows,)
        ``y`` (HiGHS's convention: ``r = c - A'y``; ``y >= 0`` on rows at their lower
        side).
    col_lower, col_upper : array_like of shape (n_cols,), or float
        A box ``[lo, hi]`` containing an optimum (sides may be infinite).
    offset : float, default=0.0
        Constant added to the objective.

    Returns
    -------
    BoundResult
        ``value`` the bound (``-inf`` when a nonzero reduced cost meets an infinite side
        of the box; then ``certified=False`` and ``note`` says how many columns did),
        ``method="lp-dual"``, ``row_term`` and ``column_term`` (the two sums),
        ``rounding`` (the allowance subtracted for floating-point error, see Notes),
        ``clipped`` (multipliers set to 0 by the sign rule) and ``clipped_norm`` (the
        largest of them in absolute value).

    Notes
    -----
    Floating point. The two sums are computed with numpy's pairwise summation and
    ``A'y`` by scipy's sparse product (sequential per column). Their rounding errors
    are bounded a posteriori in the standard way [3]_ (a sum of ``k`` terms computed
    in any order is off by at most ``gamma_k sum |terms|``, ``gamma_k = k u / (1 - k u)``,
    ``u`` the unit roundoff; numpy's blocked pairwise order has ``k <= log2(n) + 24``):
    with ``k`` the largest column count of ``A`` plus one, ``r_j`` is off by at most
    ``gamma_k (|c_j| + (|A|'|y|)_j)``, which moves ``min(r_j lo_j, r_j hi_j)`` by at
    most that times ``max(|lo_j|, |hi_j|)``. The sum of these allowances and of the
    summation errors of the row and column terms, doubled, is subtracted from
    ``value`` (it is ``rounding``), so the returned number bounds the exact optimum of
    the LP with the given float64 data, not only a rounded evaluation of the dual
    function (the approach of [2]_, with a box instead of interval arithmetic). That
    needs a finite box: a column with an infinite side and a computed ``r_j == 0``
    contributes 0 as computed, and ``note`` says that the allowance does not cover it.
    The allowance is about ``1e-12`` relative on the metric LPs of this package.

    References
    ----------
    .. [1] Bertsimas, D., & Tsitsiklis, J. N. (1997). Introduction to Linear
           Optimization, §4.3. Athena Scientific.
    .. [2] Neumaier, A., & Shcherbina, O. (2004). Safe bounds in linear and
           mixed-integer linear programming. Math. Program. 99, 283-296.
           https://doi.org/10.1007/s10107-003-0433-3
    .. [3] Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms,
           2nd ed., ch. 3-4. SIAM. https://doi.org/10.1137/1.9780898718027

    Examples
    --------
    ``min x1 + x2`` subject to ``x1 + x2 >= 1``, ``0 <= x <= 1``: the optimum is 1,
    reached with the row multiplier 1; a multiplier of the wrong sign is clipped to 0
    and gives the trivial bound 0.

    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> from metricopt.bounds import lp_dual_bound
    >>> A = csr_matrix(np.array([[1.0, 1.0]]))
    >>> args = ([1.0, 1.0], A, [1.0], [np.inf])
    >>> r = lp_dual_bound(*args, [1.0], [0.0, 0.0], [1.0, 1.0])
    >>> round(r.value, 12), r.certified
    (1.0, True)
    >>> lp_dual_bound(*args, [-3.0], 0.0, 1.0).value
    0.0
    """
    import scipy.sparse as sp

    caller = "lp_dual_bound"
    a = sp.csr_matrix(matrix, dtype=np.float64) if not sp.issparse(matrix) else matrix
    if a.ndim != 2:
        raise InvalidParameterError(f"The 'matrix' parameter of {caller} must be 2-d.")
    n_rows, n_cols = a.shape
    c = _vector(cost, "cost", n_cols, caller)
    row_lo = _vector(row_lower, "row_lower", n_rows, caller)
    row_hi = _vector(row_upper, "row_upper", n_rows, caller)
    lo = _vector(col_lower, "col_lower", n_cols, caller)
    hi = _vector(col_upper, "col_upper", n_cols, caller)
    if not np.all(np.isfinite(c)):
        raise InvalidParameterError(f"The 'cost' parameter of {caller} must be finite.")
    if np.any(lo > hi) or np.any(row_lo > row_hi):
        raise InvalidParameterError(f"{caller} needs lower <= upper for every row and column.")
    if np.any(lo == np.inf) or np.any(hi == -np.inf):
        raise InvalidParameterError(f"{caller} needs col_lower < inf and col_upper > -inf.")
    off = float(offset)
    if not math.isfinite(off):
        raise InvalidParameterError(f"The 'offset' parameter of {caller} must be finite.")
    data = a.data if sp.issparse(a) else np.asarray(a)
    if not np.all(np.isfinite(np.asarray(data, dtype=np.float64))):
        raise InvalidParameterError(f"The 'matrix' parameter of {caller} must be finite.")

    y_raw = np.asarray(row_dual, dtype=np.float64)
    if y_raw.shape != (n_rows,):
        raise InvalidParameterError(
            f"The 'row_dual' parameter of {caller} must have shape ({n_rows},). Got {y_raw.shape} instead.")
    y = np.where(np.isfinite(y_raw), y_raw, 0.0)
    y = np.where(np.isfinite(row_lo), y, np.minimum(y, 0.0))
    y = np.where(np.isfinite(row_hi), y, np.maximum(y, 0.0))
    changed = ~(y == y_raw)  # clipped, or not finite
    clipped = int(np.count_nonzero(changed))
    clipped_norm = float(np.abs(y_raw[changed & np.isfinite(y_raw)]).max(initial=0.0))

    # row term: y_i L_i for y_i > 0, y_i U_i for y_i < 0 (0 * inf never formed)
    row_terms = np.where(y > 0, y * np.where(y > 0, row_lo, 0.0), 0.0)
    row_terms += np.where(y < 0, y * np.where(y < 0, row_hi, 0.0), 0.0)

    aty = np.asarray(a.T @ y, dtype=np.float64).ravel()
    r = c - aty
    col_terms = np.zeros(n_cols)
    pos, neg = r > 0, r < 0
    col_terms[pos] = r[pos] * lo[pos]
    col_terms[neg] = r[neg] * hi[neg]
    unbounded = int(np.count_nonzero(np.isinf(col_terms)))

    row_sum = float(np.sum(row_terms))
    col_sum = float(np.sum(col_terms))
    note = ""
    certified = True
    if unbounded:
        value = -np.inf
        certified = False
        note = (f"{unbounded} column(s) have a nonzero reduced cost against an infinite side "
                f"of the box: no finite bound from these multipliers")
        rounding = 0.0
    elif not (math.isfinite(row_sum) and math.isfinite(col_sum)):
        value = -np.inf
        certified = False
        note = "overflow in the dual terms: no finite bound from these multipliers"
        rounding = 0.0
    else:
        abs_a = abs(a) if sp.issparse(a) else np.abs(a)
        abs_aty = np.asarray(abs_a.T @ np.abs(y), dtype=np.float64).ravel()
        if sp.issparse(a) and a.format == "csc":
            col_count = int(np.max(np.diff(a.indptr), initial=0))
        elif sp.issparse(a):
            col_count = int(np.max(np.bincount(a.tocoo().col, minlength=1), initial=0))
        else:
            col_count = n_rows
        box = np.maximum(np.abs(np.where(np.isfinite(lo), lo, 0.0)),
                         np.abs(np.where(np.isfinite(hi), hi, 0.0)))
        # r_j is zero-tested in float: where r_j == 0 but the box side is infinite the
        # term is exactly 0, and the allowance below bounds the error of r_j elsewhere
        finite_box = np.isfinite(lo) & np.isfinite(hi)
        gamma = lambda k: k * _U / (1.0 - k * _U)  # noqa: E731
        # r_j = c_j exactly where no multiplier touches column j
        r_err = np.where(abs_aty > 0, gamma(col_count + 1) * (np.abs(c) + abs_aty), 0.0)
        if not np.all(finite_box | (r_err == 0)):
            # an error in r_j against an infinite side cannot be bounded: count only the
            # finite part and say so
            note = "rounding allowance taken over the finite sides of the box only"
        rounding = float(np.sum(np.where(finite_box, r_err * box, 0.0)))
        # one rounding per product, then the summation (numpy's blocked pairwise order)
        rounding += gamma(math.ceil(math.log2(max(n_cols, 2))) + 25) * float(np.sum(np.abs(col_terms)))
        rounding += gamma(math.ceil(math.log2(max(n_rows, 2))) + 25) * float(np.sum(np.abs(row_terms)))
        rounding += gamma(4) * (abs(off) + abs(row_sum) + abs(col_sum))
        rounding *= 2.0
        value = off + row_sum + col_sum - rounding
    return BoundResult(
        value=float(value), of="lp", certified=certified, method="lp-dual",
        reference="Lagrangian weak duality over a box containing an optimum",
        row_term=row_sum, column_term=col_sum, rounding=float(rounding),
        clipped=clipped, clipped_norm=clipped_norm, note=note,
    )
