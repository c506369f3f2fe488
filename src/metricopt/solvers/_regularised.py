"""The gamma-regularised QP that the projection backends solve, set up once for both.

For an LP ``min c'x`` over metric constraints the backends minimise (V §4-7)

    c_QP'v + (1/2 gamma) (v - delta)' W (v - delta)

by Hildreth steps, keeping the iterate ``v = v0 - W^{-1} A'z`` with duals ``z >= 0``
(``z = gamma y``). The state is a :class:`QPState` (each backend's subclass adds its own
duals):

``cc`` and ``mn`` with ``p = 1`` (V §6.2)
    Variables ``x`` and ``f >= |x - d|``, ``W = diag(w, w)``, start ``x = d`` and
    ``f = -gamma``.
``sc`` (V §6.3, eq. 14)
    ``W = 1`` on edges and ``lam`` elsewhere (defaults ``gamma = 5``, ``lam = 1/n``),
    start ``x = -gamma`` on edges.
``mn`` with ``p = 2``
    Already a QP: ``sum w (x - d)^2`` (``gamma = 1/2``, no regularisation).
``cd`` and other linear problems (V §6.1)
    ``W = I``, start ``x = -gamma c``.

Weights below ``_config.DYKSTRA_MIN_WEIGHT`` times the largest are raised to it so that
``W`` is invertible; ``raised`` records by how much (the certificate accounts for it).

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355.
.. [2] Rockafellar, R. T. (1976). Monotone operators and the proximal point algorithm.
       SIAM J. Control Optim. 14(5), 877-898.
"""

import dataclasses

import numpy as np

from .. import _config

__all__ = ["QPState", "setup", "pair_bz", "objectives", "rel_gap", "wdot", "default_gamma",
           "recentre", "implied_iterate", "implied_state", "centre", "centred_objectives"]


@dataclasses.dataclass(eq=False)
class QPState:
    """The arrays of the regularised QP that every projection backend keeps.

    Attributes
    ----------
    gamma : float
        The regularisation.
    x : ndarray
        The iterate (in the backend's layout).
    f : ndarray or None
        ``f >= |x - d|`` of l1 objectives.
    delta : ndarray or None
        The targets ``d`` of l1 / l2 objectives.
    w, winv : ndarray
        The QP's weights and their inverses (``winv`` may be None where a backend forms
        ``1 / w`` a chunk at a time).
    cost : ndarray or None
        The LP's costs of linear objectives.
    raised : float
        How much the weights below the floor were raised (for the certificate).
    lam : float or None
        Sparsest cut: the weight of the non-edges.
    has_lower, has_upper : bool
    lower, upper : float
        The variables' bounds.
    z_pair : ndarray
        4 x N duals of the per-variable rows (``f >= x - d``, ``f >= d - x``,
        ``x >= lower``, ``x <= upper``).
    z_sum : float
        The dual of ``sum(x) = sum_value``.
    sum_value : float or None
    shift_x, shift_f : ndarray or None
        The proximal centre's offsets (:func:`recentre`): the QP is centred at
        ``(delta + shift_x, shift_f)`` instead of ``(delta, 0)``; None before the first
        recentring.
    """

    gamma: float = None
    x: np.ndarray = None
    f: np.ndarray = None
    delta: np.ndarray = None
    w: np.ndarray = None
    winv: np.ndarray = None
    cost: np.ndarray = None
    raised: float = 0.0
    lam: float = None
    has_lower: bool = False
    lower: float = 0.0
    has_upper: bool = False
    upper: float = 0.0
    z_pair: np.ndarray = None
    z_sum: float = 0.0
    sum_value: float = None
    shift_x: np.ndarray = None
    shift_f: np.ndarray = None


def default_gamma(problem):
    """The default regularisation: 5 for sparsest cut (V Table 1), 1 otherwise, and 1/2
    (no regularisation) for an l2 objective."""
    if problem.objective == "l2":
        return 0.5
    return 5.0 if problem.kind == "sc" and problem.objective == "linear" else 1.0


def setup(problem, gamma=None, lam=None, lay=None, state=QPState, **fields):
    """State of the regularised QP of ``problem``, in the layout ``lay`` gives.

    Parameters
    ----------
    problem : MetricProblem
    gamma, lam : float or None
        Defaults: :func:`default_gamma`; ``lam = 1/n``.
    lay : callable or None
        Maps a per-variable array in problem order to the backend's layout (a new
        float64 array); default: a contiguous copy.
    state : type, default=QPState
        The backend's subclass of :class:`QPState` to make.
    **fields
        Its own fields.

    Returns
    -------
    QPState
    """
    if lay is None:
        def lay(a):
            return np.ascontiguousarray(a, dtype=np.float64).copy()
    n = problem.n
    nvar = problem.n_variables
    f = delta = cost = lm = None
    raised = 0.0
    g = default_gamma(problem) if gamma is None or problem.objective == "l2" else float(gamma)
    if problem.objective in ("l1", "l2"):
        w0 = lay(problem.weights)
        w = np.maximum(w0, _config.DYKSTRA_MIN_WEIGHT * max(float(w0.max(initial=0.0)), 1.0))
        raised = float(np.sum(w - w0))
        delta = lay(problem.target)
        x = delta.copy()
        if problem.objective == "l1":
            f = np.full(nvar, -g)
    elif problem.kind == "sc":
        lm = 1.0 / n if lam is None else float(lam)
        cost = lay(problem.cost)
        w = np.where(cost > 0, 1.0, lm)
        x = -g * cost / w
    else:
        cost = lay(problem.cost)
        w = np.ones(nvar)
        x = -g * cost
    has_lower = bool(np.isfinite(problem.lower))
    has_upper = bool(np.isfinite(problem.upper))
    return state(gamma=g, x=x, f=f, delta=delta, w=w, winv=1.0 / w, cost=cost, raised=raised,
                 lam=lm, has_lower=has_lower, lower=float(problem.lower) if has_lower else 0.0,
                 has_upper=has_upper, upper=float(problem.upper) if has_upper else 0.0,
                 z_pair=np.zeros((4, nvar)), z_sum=0.0, sum_value=problem.sum_value,
                 **fields)


def wdot(w, a, b):
    """``sum(w * a * b)`` (``sum(w * a)`` when ``b`` is None) without BLAS: threaded
    ``np.dot`` leaves spinning BLAS threads that slow the serial kernels down on a
    machine with few cores."""
    return float(np.sum(w * a) if b is None else np.sum(w * a * b))


def pair_bz(st):
    """``b'z`` over the per-variable and sum rows (triangle and cycle rows have
    ``b = 0``; covering rows are the backend's to add)."""
    from ._constraint_kernels import diff_dot

    zp = st.z_pair
    bz = 0.0
    if st.f is not None:
        bz += float(diff_dot(st.delta, zp[0], zp[1]))
    if st.has_lower:
        bz -= st.lower * float(np.sum(zp[2]))
    if st.has_upper:
        bz += st.upper * float(np.sum(zp[3]))
    if st.sum_value is not None:
        bz += float(st.sum_value) * st.z_sum
    return bz


def objectives(st, bz, x=None, f=None):
    """QP primal ``P``, dual ``D`` and ``-b'y`` (V eq. 15) of the iterate (or ``x, f``).

    Uses ``A'y = -(W e / gamma) - c`` (exact for Hildreth iterates), so only the duals
    of rows with ``b != 0`` in the shifted variables are summed: ``bz = b'z``.
    """
    from ._constraint_kernels import objective_sums

    g = st.gamma
    x = st.x if x is None else x
    f = st.f if f is None else f
    delta, cost = st.delta, st.cost
    # one pass, no per-pair temporaries (at the dense scale those set the peak memory)
    quad, lin, cross = objective_sums(
        x, st.w, x if delta is None else delta, x if f is None else f,
        x if cost is None else cost, delta is not None, f is not None,
        f is None and cost is not None)
    neg_bty = -bz / g
    if delta is not None:
        neg_bty -= cross / g
    primal = lin + quad / (2 * g)
    dual = neg_bty - quad / (2 * g)
    return primal, dual, neg_bty


def recentre(st):
    """Centre the QP's proximal term at the current iterate (a proximal-point step on the
    LP [2]_), keeping every dual; l1 objectives only.

    The QP ``q'v + (1/2 gamma) (v - c)' W (v - c)`` (``v = (x, f)``, ``q = (0, w)``) keeps
    the Hildreth iterate ``v = c - gamma W^{-1} q - W^{-1} A' z``; moving the centre from
    ``c`` to the current ``v`` with the same duals moves the iterate by ``v - c``. A
    sequence of such QPs converges to an LP solution at a fixed ``gamma`` (the proximal
    point method converges finitely on an LP [2]_), and the duals ``z / gamma`` to LP duals.
    """
    if st.f is None or st.delta is None:
        raise ValueError("recentring is implemented for l1 objectives (x, f) only")
    new_x = st.x - st.delta
    step_x = new_x if st.shift_x is None else new_x - st.shift_x
    step_f = st.f if st.shift_f is None else st.f - st.shift_f
    new_f = st.f.copy()
    st.x += step_x
    st.f += step_f
    st.shift_x, st.shift_f = new_x, new_f


def centre(st):
    """``(c_x, c_f)``: the QP's proximal centre (``(delta, 0)`` before :func:`recentre`)."""
    if st.shift_x is None:
        return st.delta, None
    return st.delta + st.shift_x, st.shift_f


def implied_iterate(st):
    """``(x, f)`` of the QP centred at ``(delta, 0)`` with the same duals as ``st``.

    With a moved centre (:func:`recentre`) the duals ``z`` are those of the recentred QP;
    the same ``z`` give the iterate ``v - (c - (delta, 0))`` of the QP the certificate
    (:func:`metricopt.bounds.certify`) and :func:`objectives` speak of, so both apply to
    it unchanged: ``A' z`` and ``b' z``, all they use of the duals, are the same.
    """
    if st.shift_x is None:
        return st.x, st.f
    return st.x - st.shift_x, st.f - st.shift_f


def implied_state(st):
    """A view of ``st`` at its :func:`implied_iterate` (new ``x``, ``f``; no centre),
    sharing every other array."""
    x, f = implied_iterate(st)
    return dataclasses.replace(st, x=x, f=f, shift_x=None, shift_f=None)


def centred_objectives(st, bz):
    """QP primal ``P`` and dual ``D`` of the recentred QP (:func:`recentre`) at the
    iterate, and its proximal term ``(1/2 gamma) |v - c|_W^2``.

    As :func:`objectives` with the centre ``c = (c_x, c_f)``: ``D = -b'z / gamma - (v - c)'
    W c / gamma - |v - c|_W^2 / (2 gamma)``, from ``A'y = -W (v - c) / gamma - q``.
    """
    from ._constraint_kernels import centred_sums

    g = st.gamma
    quad, lin, cross = centred_sums(st.x, st.f, st.w, st.delta, st.shift_x, st.shift_f)
    primal = lin + quad / (2 * g)
    dual = -bz / g - cross / g - quad / (2 * g)
    return primal, dual, quad / (2 * g)


def rel_gap(primal, dual, floor=0.0):
    """``|P - D| / max(|P|, |D|, floor)``: the QP's relative gap (V §5.3).

    ``floor`` (the LP gap's, :data:`.core.stage.GAP_FLOOR` times the objective's scale) keeps
    a QP whose values are round-off next to that scale (an LP optimum of 0: ``P`` and
    ``D`` about 1e-12, apart by 1e-16) from never counting as converged.
    """
    return abs(primal - dual) / max(abs(primal), abs(dual), floor, 1e-300)
