"""A-priori factors of the QP regularisations and the bounds they give (V §6, §7.1).

The projection methods solve ``QP = min c'x + (1/2 gamma) x'Wx`` over the LP's
constraints. For each problem V proves an inequality ``QP* <= (1 + A) Z + offset`` where
``Z`` is either the LP optimum ``LP*`` or the NP-hard optimum (for sparsest cut,
``phi*``). Any dual value ``D(y) <= QP*`` (weak duality: ``y >= 0`` and ``x`` the
Lagrangian minimiser, true of every Dykstra iterate) then gives the certified bound

    Z >= (D(y) - offset) / (1 + A).

:func:`apriori_term` returns ``(A, offset, of)`` and says which ``Z`` it is about;
:func:`dual_bound` applies it; :func:`posterior_ratio` is V §7.1's a-posteriori ratio,
which is *not* certified for an approximate iterate.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
"""

from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["AprioriTerm", "PosteriorRatio", "apriori_term", "dual_bound", "posterior_ratio"]

KINDS = ("cc", "sc", "mn", "cd")
TARGETS = ("lp", "opt")


class AprioriTerm(NamedTuple):
    """``QP* <= (1 + A) Z + offset``, with ``Z`` named by ``of``.

    Attributes
    ----------
    A : float
    offset : float
    of : {"lp", "opt"}
        ``"lp"``: ``Z`` is the LP optimum ``LP*``; ``"opt"``: ``Z`` is the optimum of the
        NP-hard problem (sparsest cut: ``phi* = min_S n cut(S) / (|S| |V \\ S|)``), which
        is at least ``LP*``, so a bound on it is *not* a bound on ``LP*``.
    reference : str
        Where the inequality comes from.
    """

    A: float
    offset: float
    of: str
    reference: str


class PosteriorRatio(NamedTuple):
    """V §7.1 a-posteriori quantities; valid only when ``x_hat`` is the exact QP optimum.

    Attributes
    ----------
    R : float
        ``x'Wx / (2 gamma c'x)``.
    ratio_if_exact_qp : float
        ``c'x / ((c'x (1 + R) - offset) / (1 + A))``, which is ``(1 + A) / (1 + R)``
        when ``offset = 0``: the approximation ratio of ``c'x`` to ``Z`` *if* ``x`` is
        the exact QP optimum. Not certified for an approximate iterate.
    lower_bound_if_exact_qp : float
        ``(Q(x) - offset) / (1 + A)`` with ``Q(x) = c'x (1 + R)``: a lower bound on ``Z``
        *if* ``x`` is the exact QP optimum. Not certified for an approximate iterate
        (use :func:`dual_bound` with ``D(y)`` instead).
    of : {"lp", "opt"}
    """

    R: float
    ratio_if_exact_qp: float
    lower_bound_if_exact_qp: float
    of: str


def _positive(value, name, caller):
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = np.nan
    if not (np.isfinite(v) and v > 0):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a float in the range (0, inf). "
            f"Got {value!r} instead.")
    return v


def apriori_term(kind, *, gamma=None, lam=None, n=None, p=1, max_target=1.0, of="lp",
                 cost_excess=0.0):
    """The a-priori term ``A`` (and offset) of V §6-7 for a QP regularisation.

    Parameters
    ----------
    kind : {"cc", "sc", "mn", "cd"}
    gamma : float
        Regularisation parameter ``gamma > 0`` (ignored for ``mn`` with ``p = 2``).
    lam : float, optional
        Sparsest cut only: the weight of non-edges in ``W`` (edges weigh 1), ``lam > 0``.
    n : int, optional
        Sparsest cut only: number of nodes.
    p : {1, 2}, default=1
        Metric nearness only: the exponent.
    max_target : float, default=1.0
        Metric nearness with ``p = 1`` only: an upper bound ``M >= max d_ij`` of the
        targets (1 for 0/1 targets).
    of : {"lp", "opt"}, default="lp"
        Which optimum the inequality bounds. ``"lp"`` is always a bound on ``LP*``.
        ``"opt"`` differs only for sparsest cut, where it is V Thm 4 and bounds
        ``phi*`` (not ``LP*``); for the other kinds it returns the LP term, since
        ``LP* <= OPT``.
    cost_excess : float, default=0.0
        When the QP's linear cost ``c_QP`` is not the LP's ``c`` (e.g. weights raised to
        a floor so that ``W`` is invertible, with ``W = diag(c_QP)``), an upper bound
        ``E >= c_QP'x* - c'x*`` at an LP optimum, such as
        ``sum_i max(c_QP,i - c_i, 0) * max x*_i``. The theorems bound the QP by the LP
        with cost ``c_QP``, whose optimum is at most ``LP* + E``, so ``(1 + A) E`` is
        added to the offset. For ``mn`` with ``p = 2`` and raised weights, ``E`` bounds
        ``sum (w_QP - w) (x* - d)^2``.

    Returns
    -------
    AprioriTerm
        ``(A, offset, of, reference)`` with ``QP* <= (1 + A) Z + offset``:

        ============  ===========================================  ====================
        kind          ``A``, ``offset``                             ``Z``, assumptions
        ============  ===========================================  ====================
        cc            ``1/gamma``, 0                                ``LP*``; e/f form
                                                                    (V §6.2, eq. 16-19),
                                                                    ``W = diag(w, w)``
                                                                    with ``w`` the LP
                                                                    weights (V Thm 3)
        mn, p=1       ``M/gamma``, 0                                ``LP*``; as cc, with
                                                                    ``0 <= d <= M``
        mn, p=2       0, 0                                          the QP itself
        cd            ``1/(2 gamma)``, 0                            ``LP*``; ``W = diag(c)``
                                                                    (``I`` unweighted),
                                                                    box [0, 1] (V §6.1,
                                                                    Thm 2 with B = 1)
        sc, "lp"      ``B max(1-lam, 0)/(2 gamma)``,                ``LP*``; ``W`` = 1 on
                      ``lam B n/(2 gamma)``, ``B = n/(n-1)``        edges, ``lam`` else
        sc, "opt"     ``(1 + lam n)/(2 gamma)``, 0                  ``phi*`` (V Thm 4):
                                                                    G connected, n > 4,
                                                                    both sides of the
                                                                    best cut >= 2 nodes,
                                                                    ``0 < lam < 1``
        ============  ===========================================  ====================

    Notes
    -----
    The sparsest-cut LP term follows the proof of V Thm 2: every LP-feasible ``x`` has
    ``0 <= x <= B = n/(n-1)`` (proof of V Cor 6) and ``sum x = n``, so
    ``x*'Wx* <= B (sum_E x*) + lam B (n - sum_E x*)``, i.e.
    ``QP* <= LP* (1 + B (1 - lam)/(2 gamma)) + lam B n/(2 gamma)`` (for ``lam >= 1`` the
    negative part is dropped). The cc / mn term is V Thm 3 (``m* <= M`` gives
    ``m*^2 <= M m*``); it needs the QP to use ``W = diag(w, w)`` with the *same*
    ``w`` as the LP cost and the start ``f = -gamma``.

    Examples
    --------
    >>> from metricopt.bounds import apriori_term
    >>> apriori_term("cc", gamma=5.0).A
    0.2
    >>> t = apriori_term("sc", gamma=5.0, lam=0.1, n=10, of="opt")
    >>> round(t.A, 12), t.of
    (0.2, 'opt')
    """
    caller = "apriori_term"
    if kind not in KINDS:
        raise InvalidParameterError(
            f"The 'kind' parameter of {caller} must be one of {', '.join(map(repr, KINDS))}. "
            f"Got {kind!r} instead.")
    if of not in TARGETS:
        raise InvalidParameterError(
            f"The 'of' parameter of {caller} must be one of 'lp', 'opt'. Got {of!r} instead.")
    if kind == "mn" and p not in (1, 2):
        raise InvalidParameterError(f"The 'p' parameter of {caller} must be 1 or 2. Got {p!r} instead.")
    excess = float(cost_excess)
    if not (np.isfinite(excess) and excess >= 0):
        raise InvalidParameterError(
            f"The 'cost_excess' parameter of {caller} must be a float in the range [0, inf). "
            f"Got {cost_excess!r} instead.")
    if kind == "mn" and p == 2:
        term = AprioriTerm(0.0, 0.0, of, "metric nearness p=2 is already a QP (V eq. 1)")
    else:
        term = _apriori(kind, caller, gamma, lam, n, max_target, of)
    if excess:
        term = term._replace(offset=term.offset + (1.0 + term.A) * excess,
                             reference=term.reference + "; plus the QP/LP cost excess")
    return term


def _apriori(kind, caller, gamma, lam, n, max_target, of):
    gamma = _positive(gamma, "gamma", caller)
    if kind == "cc":
        return AprioriTerm(1.0 / gamma, 0.0, of, "V Thm 3 (e/f form, W = diag(w, w))")
    if kind == "mn":
        m = _positive(max_target, "max_target", caller)
        return AprioriTerm(m / gamma, 0.0, of,
                           "V Thm 3 with |x* - d| <= max_target (e/f form, W = diag(w, w))")
    if kind == "cd":
        return AprioriTerm(1.0 / (2.0 * gamma), 0.0, of, "V §6.1 (Thm 2 with B = 1, W = diag(c))")
    lam = _positive(lam, "lam", caller)
    if n is None or int(n) != n or int(n) < 2:
        raise InvalidParameterError(
            f"The 'n' parameter of {caller} must be an integer >= 2. Got {n!r} instead.")
    n = int(n)
    if of == "opt":
        return AprioriTerm((1.0 + lam * n) / (2.0 * gamma), 0.0, "opt",
                           "V Thm 4 (bounds phi*, not LP*; G connected, n > 4, "
                           "both sides of the optimal cut >= 2 nodes, 0 < lam < 1)")
    b = n / (n - 1.0)
    return AprioriTerm(b * max(1.0 - lam, 0.0) / (2.0 * gamma), lam * b * n / (2.0 * gamma), "lp",
                       "V Thm 2 argument with 0 <= x* <= n/(n-1) (V Cor 6 proof) and sum x* = n")


def _term(A, offset):
    if isinstance(A, AprioriTerm):
        return A.A, A.offset
    return float(A), float(offset)


def dual_bound(dual_value, A, offset=0.0):
    """Certified lower bound ``(D(y) - offset) / (1 + A)`` from a QP dual value.

    Valid whenever ``D(y) <= QP* <= (1 + A) Z + offset`` and ``1 + A > 0``; it is then a
    lower bound on ``Z`` (the quantity named by the :class:`AprioriTerm`: ``LP*`` for
    ``of="lp"``, ``phi*`` for sparsest cut with ``of="opt"``). ``D(y) <= QP*`` holds for
    every ``y >= 0`` when ``D`` is evaluated exactly at ``y`` (V eq. 13, 15): for a
    Dykstra iterate, ``D(y) = -b'y - x'Wx/(2 gamma)`` with ``x = -gamma W^{-1}(A'y + c)``.

    Parameters
    ----------
    dual_value : float
        ``D(y)``.
    A : float or AprioriTerm
        The a-priori term (an :class:`AprioriTerm` also supplies ``offset``).
    offset : float, default=0.0

    Returns
    -------
    float

    Examples
    --------
    >>> from metricopt.bounds import apriori_term, dual_bound
    >>> dual_bound(12.0, apriori_term("cc", gamma=5.0))
    10.0
    """
    a, off = _term(A, offset)
    if not 1.0 + a > 0:
        raise InvalidParameterError(f"dual_bound needs 1 + A > 0. Got A = {a!r}.")
    return (float(dual_value) - off) / (1.0 + a)


def posterior_ratio(c_dot_x, x_W_x, *, gamma, A, offset=0.0):
    """V §7.1 a-posteriori ratio ``(1 + A)/(1 + R)``: *not certified for an approximate iterate*.

    With ``R = x'Wx / (2 gamma c'x)``, the exact QP optimum ``x_hat`` has
    ``Q(x_hat) = (1 + R) c'x_hat = QP* <= (1 + A) Z + offset``, hence
    ``c'x_hat <= (1 + A)/(1 + R) Z`` (``offset = 0``). For an iterate that is not the
    exact optimum ``Q(x) >= QP*`` may fail (``x`` may be infeasible), so the numbers
    below are labelled ``*_if_exact_qp``; the certified counterpart is
    :func:`dual_bound` applied to ``D(y)``.

    Parameters
    ----------
    c_dot_x : float
        ``c'x`` (> 0).
    x_W_x : float
        ``x'Wx`` (for the e/f form: ``sum w (e^2 + f^2)``).
    gamma : float
    A : float or AprioriTerm
    offset : float, default=0.0

    Returns
    -------
    PosteriorRatio
    """
    a, off = _term(A, offset)
    of = A.of if isinstance(A, AprioriTerm) else "lp"
    cx = float(c_dot_x)
    gamma = _positive(gamma, "gamma", "posterior_ratio")
    if not cx > 0:
        raise InvalidParameterError(f"posterior_ratio needs c'x > 0. Got {c_dot_x!r}.")
    r = float(x_W_x) / (2.0 * gamma * cx)
    lb = (cx * (1.0 + r) - off) / (1.0 + a)
    ratio = cx / lb if lb > 0 else np.inf
    return PosteriorRatio(r, ratio, lb, of)
