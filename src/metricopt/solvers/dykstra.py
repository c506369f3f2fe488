"""Dykstra's projection method for the quadratic regularisations of metric LPs.

The backend ``"dykstra"`` (Veldt, Gleich, Wirth & Saunderson 2019, Alg. 1-2, §4-7)
minimises ``c'v + (1/2 gamma) (v - delta)' W (v - delta)`` over the LP's constraints by
cyclic Hildreth steps, one constraint at a time, keeping the triangle duals sparsely.
Problems and their regularisations:

``cc`` and ``mn`` with ``p = 1`` (V §6.2)
    Variables ``x`` and ``f >= |x - d|`` (as two half-spaces), ``W = diag(w, w)``,
    start ``x = d`` (``e = x - d = 0``) and ``f = -gamma``; the LP value is
    ``sum w |x - d|``; a priori ``LP* <= c'x_hat <= (1 + 1/gamma) LP*``.
``sc`` (V §6.3, eq. 14)
    ``W = 1`` on edges and ``lambda`` elsewhere (defaults ``gamma = 5``,
    ``lambda = 1/n``), ``sum x = n``, ``x >= 0``; start ``x = -gamma`` on edges.
``mn`` with ``p = 2``
    Already a QP: ``sum w (x - d)^2`` (internally ``gamma = 1/2``, no regularisation).
``cd`` (V §6.1)
    Edge variables, the explicit triangle and wedge lists of the problem, ``0 <= x <= 1``,
    ``W = I``.

Sparse-structure problems (cycle inequalities of MET(G)) belong to an active-set method
and are refused by :meth:`DykstraSolver.supports`.

Visiting orders (option ``order``): ``"diagonal"`` (serial, default), ``"lexicographic"``
(serial, the papers' order) and ``"parallel"`` (the anti-diagonal block schedule with two
logical workers; its iterates are exactly those of ``"lexicographic"``, because every two
triplets sharing a pair keep their lexicographic order). Passes to the default stopping
rule are listed in ``benchmarks/README.md``.

Beyond the papers' method, five things make the diagonal order fast on the problems that
fit in memory (each can be switched off, and each leaves the result certified):

* dense dual storage (``duals``): every triangle dual kept, so that a row of triplets is
  a branch-free vectorised loop (same iterates as the sparse lists of V §5.2);
* the sum constraint of sparsest cut revisited within a pass (``interleave``);
* a safeguarded extrapolation of all duals every few passes (``extrapolate``), kept
  only when it increases the dual objective;
* a metric repair test (``repair``): the shortest-path closure of the iterate is exactly
  feasible and ends the run as soon as its objective is within the gap of ``D(y)``.
* continuation in ``gamma`` (``continuation``, sparsest cut by default): the QP is first
  solved loosely with a smaller, better-conditioned ``gamma``, and its duals, scaled
  exactly, start the next stage.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
.. [2] Ruggles, C., Veldt, N., & Gleich, D. F. (2020). A parallel projection method for
       metric constrained optimization. SIAM CSC 2020. arXiv:1901.10084
.. [3] Dax, A. (2003). On theory and practice of row relaxation methods. (dual bound of
       Hildreth iterates)
"""

import time
import warnings

import numpy as np

from .. import _config
from ..exceptions import ConvergenceWarning, InputError, InvalidParameterError
from ..result import Status
from ._base import Solver
from ._checkpoint import (header_field, header_history, problem_digest, read_checkpoint,
                          state_array, write_checkpoint)
from . import _regularised
from ._core import (
    POLISH_QP_GAP,
    IterationLoop,
    LPStage,
    bad_value,
    check_choice,
    check_options,
)
from .core.memory import auto_dense_fits as _auto_dense_fits
from .core.memory import dense_dual_bytes as _dense_dual_bytes

__all__ = ["DykstraSolver", "solve_dykstra", "ORDERS"]

#: visiting orders of the triangle constraints ("blocked" is accepted for "parallel")
ORDERS = ("diagonal", "lexicographic", "parallel")
#: Storage of the triangle duals (``duals`` of :func:`solve_dykstra`).
DUALS = ("auto", "dense", "sparse")
_ALIASES = {"blocked": "parallel"}

_DEFAULT_ROUND = tuple(range(1, 13))


# ----------------------------------------------------------------------------- setup
def _setup(problem, gamma, lam, order="diagonal"):
    """Work arrays of the regularised QP of ``problem`` (see the module docstring).

    Dense problems are laid out as ``order`` needs (``L.LAYOUTS``): the diagonal layout
    (``st["idx"]`` maps packed to diagonal positions) or the packed one (``idx`` None).
    """
    from . import _layouts as L

    kind = problem.kind
    n = problem.n
    dense = problem.structure == "dense"
    st = dict(kind=kind, n=n, dense=dense, idx=None)
    if dense and L.LAYOUTS[order] == "diagonal":
        idx = L.packed_to_diagonal_index(n)
        st["idx"] = idx

        def lay(a):
            out = np.empty(a.shape[0], dtype=np.float64)
            out[idx] = a
            return out
    else:
        def lay(a):
            return np.ascontiguousarray(a, dtype=np.float64).copy()

    st.update(_regularised.setup(problem, gamma, lam, lay))
    if dense:
        st["tri_pos"] = np.empty(0, dtype=np.int64)
        st["tri_val"] = np.empty(0, dtype=np.float64)
        st["tri_start"] = np.zeros(1, dtype=np.int64)
    else:
        st["tri"] = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
        st["wed"] = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
        st["z_tri"] = np.zeros(3 * st["tri"].shape[0])
        st["z_wed"] = np.zeros(st["wed"].shape[0])
    return st


def _packed(st, x=None):
    x = st["x"] if x is None else x
    return x[st["idx"]] if st["idx"] is not None else x.copy()


def _check_option_values(*, tol, gap_tol, max_iter, time_limit, check_every, threads, gamma,
                         lam, checkpoint_every, polish, gamma_growth, order, duals, extrapolate,
                         interleave):
    """The checks of :func:`solve_dykstra`'s options that need no problem."""
    caller = "solve_dykstra"
    check_options(caller, tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                  check_every=check_every, threads=threads, gamma=gamma, lam=lam,
                  checkpoint_every=checkpoint_every, polish=polish, gamma_growth=gamma_growth)
    if not (isinstance(order, str) and order in _ALIASES):
        check_choice(caller, "order", order, ORDERS)
    check_choice(caller, "duals", duals, DUALS)
    if extrapolate not in (None, True, False):
        raise bad_value(caller, "extrapolate", extrapolate, "a bool or None")
    if interleave is not None and (not isinstance(interleave, (int, np.integer))
                                   or isinstance(interleave, bool) or interleave < 1):
        raise bad_value(caller, "interleave", interleave, "an int >= 1")


def _dense_duals(duals, order, st, with_reference=True, max_memory=None):
    """Whether the triangle duals are stored densely (see ``duals`` of solve_dykstra);
    ``with_reference``: a second copy is kept for the extrapolation."""
    check_choice("solve_dykstra", "duals", duals, DUALS)
    if not st["dense"] or duals == "sparse":
        return False
    n = st["n"]
    need = _dense_dual_bytes(n, with_reference)
    if duals == "dense":
        if order != "diagonal":
            raise InvalidParameterError(
                f"duals='dense' needs order='diagonal', not {order!r}")
        from .._memory import check_memory

        check_memory(need, what="the dense triangle duals", max_memory=max_memory)
        return True
    return order == "diagonal" and _auto_dense_fits(need, max_memory)


# ------------------------------------------------------------------------- one pass
def _one_pass(st, order, block, bufs, interleave=1):
    """One cyclic pass over every constraint; returns (bz, nnz, vmax, smax).

    With ``interleave > 1`` (diagonal order only) the triangle pass is cut into that many
    parts of about equal row counts and the sum constraint is revisited after each part.
    """
    from . import _constraint_kernels as C
    from . import _triangle_dense as D
    from . import _triangle_sparse as S

    x, winv = st["x"], st["winv"]
    vmax = smax = 0.0
    nnz = 0
    bz = 0.0
    has_sum = st["sum_value"] is not None
    total = float(st["sum_value"]) if has_sum else 0.0
    n = st["n"]
    part = max(1, -(-((n - 1) * (n - 2) // 2) // max(1, int(interleave))))
    if st["dense"] and st.get("z_dense") is not None:
        state = np.zeros(1, dtype=np.int64)
        acc = np.zeros(3)
        while not D.triangle_rows_dense(x, winv, n, st["rows"], st["z_dense"], state, acc,
                                        part):
            if has_sum:
                st["z_sum"], _, _ = C.sum_step(x, winv, st["z_sum"], total)
        c = int(acc[2])
        a, m = acc[0], acc[1]
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    elif st["dense"]:
        if order == "parallel":
            from ._dykstra_parallel import triangle_pass_parallel

            p, v, cnt, a, m = triangle_pass_parallel(
                x, winv, n, block, st["par_pos"], st["par_val"], st["par_cnt"], bufs[0],
                bufs[1], st["par_sched"])
            bufs[0], bufs[1] = st["par_pos"], st["par_val"]
            st["par_pos"], st["par_val"], st["par_cnt"] = p, v, cnt
            c = int(cnt.sum())
        elif order == "diagonal":
            state = np.zeros(6, dtype=np.int64)
            acc = np.zeros(2)
            p, v = bufs[0], bufs[1]
            while True:
                p, v, done = S.triangle_rows_diagonal(x, winv, n, block, st["tri_pos"],
                                                      st["tri_val"], p, v, state, acc, part)
                if done:
                    break
                if has_sum:
                    st["z_sum"], _, _ = C.sum_step(x, winv, st["z_sum"], total)
            c, a, m = int(state[5]), acc[0], acc[1]
        else:
            p, v, c, a, m = S.TRIANGLE_KERNELS[order](x, winv, n, block, st["tri_pos"],
                                                      st["tri_val"], bufs[0], bufs[1])
        if order != "parallel":
            # this pass's list becomes current; the old current buffer is next scratch
            old_p, old_v = bufs[2], bufs[3]
            bufs[0], bufs[1] = old_p, old_v
            bufs[2], bufs[3] = p, v
            st["tri_pos"], st["tri_val"] = p[:c], v[:c]
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    else:
        c, a, m = C.edge_triangle_pass(x, winv, st["tri"], st["z_tri"])
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
        b, c, a, m = C.wedge_pass(x, winv, st["wed"], st["z_wed"])
        bz += b
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    f = st["f"]
    b, c, a, m = C.pair_pass(
        x, winv, f if f is not None else x, st["delta"] if st["delta"] is not None else x,
        st["z_pair"], st["lower"], st["upper"], f is not None, st["has_lower"], st["has_upper"])
    bz += b
    nnz += c
    vmax, smax = max(vmax, a), max(smax, m)
    if has_sum:
        st["z_sum"], a, m = C.sum_step(x, winv, st["z_sum"], total)
        bz += total * st["z_sum"]
        nnz += st["z_sum"] != 0.0
        vmax, smax = max(vmax, a), max(smax, m)
    return bz, int(nnz), float(vmax), float(smax)


def _extrapolate(st, dual):
    """Safeguarded extrapolation of all duals along their direction since the last call.

    Hildreth's method is coordinate ascent on the dual ``D`` of the QP; on sparsest cut
    it spends most passes in a phase where the duals drift steadily. Every few passes
    the duals move to ``z + beta (z - z_ref)`` (clipped at 0 where they must be
    nonnegative) and ``x`` with them, so the invariant ``x = x0 - W^{-1} A' z`` of the
    iterates still holds; ``z_ref`` is the point before the last kept move (a momentum
    term), or the current one after a rejected move. As ``x`` is affine in ``z``, ``D``
    along the unclipped ray is a concave quadratic known from ``x - x_ref``: ``beta`` is
    its maximiser, limited by a trust region that doubles after a kept move and shrinks
    fourfold otherwise (within ``_config.DYKSTRA_EXTRAPOLATE_MIN/MAX``), since clipping
    makes long moves fail. The move is kept only if the true ``D`` after clipping
    increases, so every reported iterate is a genuine Dykstra iterate with an exact dual
    value and the stopping rule is unchanged.

    Returns True when the move was kept.
    """
    from . import _triangle_dense as D

    x, winv, f = st["x"], st["winv"], st["f"]
    bz = _regularised.pair_bz(st)
    dx = x - st["x_ref"]
    df = None if f is None else f - st["f_ref"]
    dbz = bz - st["bz_ref"]
    samples = [dual]
    for t in (1.0, 2.0):
        samples.append(_regularised.objectives(st, bz + t * dbz, x + t * dx,
                                   None if f is None else f + t * df)[1])
    curv = (samples[2] - 2.0 * samples[1] + samples[0]) / 2.0
    slope = samples[1] - samples[0] - curv
    beta = _config.DYKSTRA_EXTRAPOLATE_MAX if curv >= 0 else -slope / (2.0 * curv)
    if not np.isfinite(beta) or beta <= 0.0:
        beta = _config.DYKSTRA_EXTRAPOLATE_MIN
    cap = st["ext_beta"]  # a trust region: doubled after a kept move, quartered otherwise
    beta = float(min(max(beta, _config.DYKSTRA_EXTRAPOLATE_MIN), cap))
    x_old = x.copy()
    f_old = None if f is None else f.copy()
    zp_old = st["z_pair"].copy()
    zs_old = st["z_sum"]
    D.extrapolate_dense_duals(x, winv, st["n"], st["rows"], st["z_dense"], st["z_dense_ref"],
                              beta)
    zp = np.maximum(zp_old + beta * (zp_old - st["z_pair_ref"]), 0.0)
    d = zp - zp_old
    x -= winv * (d[0] - d[1] - d[2] + d[3])
    if f is not None:
        f += winv * (d[0] + d[1])
    st["z_pair"][:] = zp
    if st["sum_value"] is not None:
        zs = zs_old + beta * (zs_old - st["z_sum_ref"])
        x -= winv * (zs - zs_old)
        st["z_sum"] = zs
    new_bz = _regularised.pair_bz(st)
    _, new_dual, _ = _regularised.objectives(st, new_bz)
    if np.isfinite(new_dual) and new_dual > dual:
        # the reference stays at the point before the move (the kernel left its duals in
        # z_dense_ref), so the next direction includes this move: a momentum term, and
        # no copy of the dense duals (USAir97 sc: 970 -> 810 passes)
        st["x_ref"], st["f_ref"], st["z_pair_ref"] = x_old, f_old, zp_old
        st["z_sum_ref"], st["bz_ref"] = zs_old, bz
        st["ext_beta"] = min(2.0 * cap, _config.DYKSTRA_EXTRAPOLATE_MAX)
        return True
    st["z_dense"][:] = st["z_dense_ref"]  # the kernel left the old duals there
    x[:] = x_old
    if f is not None:
        f[:] = f_old
    st["z_pair"][:] = zp_old
    st["z_sum"] = zs_old
    _set_reference(st, bz)
    st["ext_beta"] = max(cap / 4.0, _config.DYKSTRA_EXTRAPOLATE_MIN)
    return False


def _set_reference(st, bz):
    """Remember the current iterate as the base of the next extrapolation (the dense
    triangle duals are handled by the caller)."""
    st["x_ref"] = st["x"].copy()
    st["f_ref"] = None if st["f"] is None else st["f"].copy()
    st["z_pair_ref"] = st["z_pair"].copy()
    st["z_sum_ref"] = st["z_sum"]
    st["bz_ref"] = bz


def _continuation_gammas(continuation, st):
    """The gammas of the warm-up stages followed by the final one (see ``continuation``
    of :func:`solve_dykstra`)."""
    bad = InvalidParameterError(
        "The 'continuation' parameter of solve_dykstra must be a bool, None or a sequence "
        f"of increasing fractions in (0, 1). Got {continuation!r} instead.")
    g = st["gamma"]
    if continuation is None:
        continuation = st["sum_value"] is not None  # measured to help on sparsest cut
    if continuation is False:
        return [g]
    if st["delta"] is not None and st["f"] is None:  # mn with p = 2: gamma is fixed
        raise InvalidParameterError(
            "continuation needs a regularised LP; metric nearness with p = 2 is a QP")
    if isinstance(continuation, (str, bytes)):
        raise bad
    fractions = _config.DYKSTRA_CONTINUATION if continuation is True else continuation
    try:
        fractions = [float(v) for v in fractions]
    except (TypeError, ValueError):
        raise bad from None
    if any(not 0.0 < v < 1.0 for v in fractions) or any(
            b <= a for a, b in zip(fractions, fractions[1:])):
        raise bad
    return [g * v for v in fractions] + [g]


def _rescale(st, gamma):
    """Move the iterate to the QP with regularisation ``gamma``.

    ``x0 = delta + gamma u`` and ``f0 = -gamma`` are affine in ``gamma``, so scaling every
    dual by ``ratio = gamma / gamma_old`` and ``x - delta`` and ``f`` with them keeps the
    Dykstra invariant ``x = x0 - W^{-1} A' z`` exactly for the new ``gamma``: a warm
    start from the solution of a better-conditioned problem (the duals ``z = gamma y`` of
    a metric LP's regularisation change little along the path). The extrapolation's
    reference point moves the same way.
    """
    ratio = gamma / st["gamma"]
    delta = st["delta"]
    for key in ("x", "x_ref"):
        a = st.get(key)
        if a is None:
            continue
        if delta is None:
            a *= ratio
        else:
            a[:] = delta + ratio * (a - delta)
    for key in ("f", "f_ref", "z_pair", "z_pair_ref", "z_dense", "z_dense_ref", "tri_val",
                "par_val", "z_tri", "z_wed"):
        if st.get(key) is not None:
            st[key] *= ratio
    st["z_sum"] *= ratio
    for key in ("z_sum_ref", "bz_ref"):
        if key in st:
            st[key] *= ratio
    if "ext_beta" in st:
        st["ext_beta"] = _config.DYKSTRA_EXTRAPOLATE_START
    st["gamma"] = gamma


def _dual_bytes(st, bufs):
    total = st["z_pair"].nbytes
    if st.get("z_dense") is not None:
        total += st["z_dense"].nbytes
        if st.get("z_dense_ref") is not None:
            total += st["z_dense_ref"].nbytes
    elif st["dense"] and "par_pos" in st:
        total += st["par_pos"].nbytes + st["par_val"].nbytes
        total += sum(b.nbytes for b in bufs[:2])
    elif st["dense"]:
        total += st["tri_pos"].nbytes + st["tri_val"].nbytes
        total += sum(b.nbytes for b in bufs[:2])
    else:
        total += st["z_tri"].nbytes + st["z_wed"].nbytes
    return int(total)


# ---------------------------------------------------------------- checkpoint / resume
_STATE_ARRAYS = ("x", "f", "z_pair", "tri_pos", "tri_val", "tri_start", "z_tri", "z_wed",
                 "z_dense", "z_dense_ref", "z_pair_ref", "x_ref", "f_ref")


def _write_checkpoint(path, st, counters, options, problem, digest):
    """Write the complete iteration state (:mod:`metricopt.solvers._checkpoint`)."""
    if "par_pos" in st:  # per-worker dual lists, stored concatenated with offsets
        cnt = st["par_cnt"]
        st["tri_pos"] = np.concatenate([st["par_pos"][w, :c] for w, c in enumerate(cnt)])
        st["tri_val"] = np.concatenate([st["par_val"][w, :c] for w, c in enumerate(cnt)])
        st["tri_start"] = np.r_[0, np.cumsum(cnt)].astype(np.int64)
    arrays = {k: st[k] for k in _STATE_ARRAYS if st.get(k) is not None}
    arrays["z_sum"] = np.array(st["z_sum"])
    if st.get("z_dense_ref") is not None:
        arrays["z_sum_ref"] = np.array(st["z_sum_ref"])
        arrays["bz_ref"] = np.array(st["bz_ref"])
        arrays["ext_beta"] = np.array(st["ext_beta"])
    meta = dict(counters)
    meta.update({f"opt_{k}": v for k, v in options.items()})
    return write_checkpoint(path, backend="dykstra", problem=problem, digest=digest,
                            meta=meta, arrays=arrays)


def _read_checkpoint(path, st, problem, digest):
    """Restore ``st`` from a checkpoint; every array is checked against this problem
    (:func:`._checkpoint.state_array`), so a damaged or partial file is refused."""
    meta, data = read_checkpoint(path, backend="dykstra", problem=problem, digest=digest)

    def load(name, shape=None, dtype=np.float64, **bounds):
        return state_array(path, data, name, dtype=dtype, shape=shape, **bounds).copy()

    for k in ("x", "f", "z_pair"):
        if st.get(k) is not None:
            st[k] = load(k, st[k].shape)
    st["z_sum"] = float(load("z_sum", ()))
    if st["dense"]:
        n = problem.n
        positions = n * (n - 1) * (n - 2) // 2  # 3 constraints per triplet
        st["tri_pos"] = load("tri_pos", dtype=np.int64, low=0, high=positions)
        st["tri_val"] = load("tri_val", st["tri_pos"].shape)
        start = load("tri_start", dtype=np.int64, low=0, high=st["tri_pos"].shape[0] + 1)
        if start.shape[0] == 0 or start[0] != 0 or np.any(np.diff(start) < 0):
            raise InputError(f"cannot resume from {path}: its array 'tri_start' does not "
                             f"delimit the dual lists")
        st["tri_start"] = start
        if "z_dense" in data:
            st["z_dense"] = load("z_dense", (positions,))
        if "z_dense_ref" in data:  # the extrapolation's reference point
            st["z_dense_ref"] = load("z_dense_ref", (positions,))
            for k, like in (("z_pair_ref", "z_pair"), ("x_ref", "x"), ("f_ref", "f")):
                if st.get(like) is not None:
                    st[k] = load(k, st[like].shape)
            for k in ("z_sum_ref", "bz_ref", "ext_beta"):
                st[k] = float(load(k, ()))
    else:
        for k in ("z_tri", "z_wed"):
            st[k] = load(k, st[k].shape)
    return meta


# -------------------------------------------------------------------------- driver
def solve_dykstra(problem, *, gamma=None, lam=None, tol=1e-6, gap_tol=1e-4, max_iter=10000,
                  time_limit=None, order="diagonal", block=None, check_every=10,
                  round_digits=_DEFAULT_ROUND, threads=None, seed=None, max_memory=None,
                  callback=None, verbose=False, checkpoint=None, checkpoint_every=60.0,
                  resume=None, duals="auto", interleave=None, extrapolate=None, repair=True,
                  continuation=None, polish="auto", gamma_growth=10.0):
    """Solve the quadratic regularisation of a metric LP by Dykstra's method.

    Parameters
    ----------
    problem : MetricProblem
        A dense (``cc``, ``sc``, ``mn``) or edge-structured (``cd``) problem.
    gamma : float or None
        Regularisation: the QP is ``c'x + (1/2 gamma) x'Wx``. Default 1 for ``cc``,
        ``mn`` (p = 1) and ``cd``, 5 for ``sc``; ignored for ``mn`` with p = 2.
    lam : float or None
        Sparsest cut only: weight of the non-edges in ``W`` (default ``1/n``).
    tol : float, default=1e-6
        Largest allowed constraint violation of the returned ``x`` (a full O(n^3) check).
    gap_tol : float, default=1e-4
        Largest allowed certified LP gap ``(c'x - lower_bound) / |lower_bound|`` of an
        ``optimal`` answer, at an ``x`` violating nothing by more than ``tol``. A QP
        stage ends when its own relative gap ``|P - D| / max(|P|, |D|)`` (V §5.3) is
        within ``gap_tol`` too; then the point is certified (:mod:`._core`), and if
        the LP gap is missed the run polishes and/or raises ``gamma`` (see ``polish``
        and ``gamma_growth``). The QP gap is reported as ``qp_gap``.
    max_iter : int, default=10000
        Passes through all constraints.
    time_limit : float or None
        Seconds; checked after every pass.
    order : {"diagonal", "lexicographic", "parallel"}, default="diagonal"
        Visiting order of the triangle constraints. ``"diagonal"``: triplets
        ``(i, i+s1, i+s1+s2)`` grouped by shape (serial, diagonal layout);
        ``"lexicographic"``: ``i < j < k``, the papers' order (serial, packed layout);
        ``"parallel"`` (alias ``"blocked"``): the conflict-free anti-diagonal block
        schedule with two logical workers, run on ``threads`` threads (the result does
        not depend on the thread count).
    block : int or None
        Block width: s1-block of the diagonal order (default 16), node block of the
        parallel order (default ``min(64, max(8, n // 8))``).
    check_every : int, default=10
        Passes between full O(n^3) violation checks; a full check also runs whenever
        the cheap per-pass estimate and the gap both meet their tolerances.
    round_digits : sequence of int
        Decimals tried by the entrywise rounding test (V §5.4) at full checks where the
        gap holds but the violation does not; empty to disable.
    threads : int or None
        Threads of the ``"parallel"`` order (default: all cores); other orders are serial.
    seed : None
        Accepted for interface compatibility; the method is deterministic.
    max_memory : int or None
        Bytes allowed for the duals: dense duals are not chosen beyond it (refused for
        ``duals="dense"``), and a run whose sparse lists grow beyond it stops with
        status ``limit``.
    callback : callable or None
        Called once per pass with the pass record (see ``history``).
    verbose : bool
        Accepted for interface compatibility (the library does not print).
    checkpoint : str or None
        Path of a checkpoint (:mod:`metricopt.solvers._checkpoint`: an ``.npz`` of numbers
        with a JSON header, bound to this problem instance by a digest, never pickled)
        written every ``checkpoint_every`` seconds, at the end, and on
        ``KeyboardInterrupt``. It holds x, the pair and sum duals and the triangle duals
        (dense ones stored as positions and values when mostly zero), twice with
        extrapolation (its reference point): at most about 50 bytes per pair plus
        24 bytes per triplet that holds a dual.
    checkpoint_every : float, default=60.0
        Seconds between two checkpoints (the clock decides only when one is written).
    resume : str or None
        Path of a checkpoint to continue from (same problem, backend and options; the
        dual storage may differ). A file that is not such a checkpoint raises
        :class:`~metricopt.exceptions.InputError`.
    duals : {"auto", "dense", "sparse"}, default="auto"
        Storage of the triangle duals of dense problems in the diagonal order.
        ``"sparse"``: the nonzero ones in visiting order (V §5.2), memory proportional
        to the active constraints. ``"dense"``: all ``3 C(n,3)`` of them (24 bytes per
        triplet), which makes every row a branch-free vectorised loop, about 2.6x faster
        per pass when many triplets hold a dual (sparsest cut). ``"auto"``: dense when it
        takes at most ``_config.DYKSTRA_DENSE_DUAL_BYTES`` and a quarter of the available
        memory. Both give the same iterates.
    interleave : int or None
        Parts of the triangle pass between which the equality ``sum(x) = n`` of sparsest
        cut is revisited (diagonal order only). Default 16 for problems with that
        constraint (it shortens the slow first phase: jazz 1360 -> 900 passes),
        else 1. Other orders always use 1.
    extrapolate : bool or None
        Every ``_config.DYKSTRA_EXTRAPOLATE_EVERY`` passes, move all duals along their
        recent direction and keep the move only if the dual objective increases (see
        :func:`_extrapolate`). Needs dense duals (and twice their memory); default: on
        whenever the duals are dense. Sparsest cut on jazz: 900 -> 380 passes.
    repair : bool, default=True
        Dense problems: at full checks where the gap holds, also try the metric repair
        of the iterate (clip to the bounds, shortest-path closure, rescale to
        ``sum(x) = n``); stop with the repaired, exactly feasible ``x`` when its QP
        objective is within ``gap_tol`` of ``D(y)`` (see :func:`_repair_test`).
    polish : bool or "auto", default="auto"
        Solve the LP restricted to the constraints holding the largest duals exactly
        (HiGHS; violated rows are separated and added until none is left) and certify
        it from its LP dual (:mod:`._polish`): for l1 objectives as soon as the QP gap
        is below 1e-2 at a full check, otherwise at the end of a converged QP stage that
        misses ``gap_tol``; once per ``gamma``. ``"auto"``: when the restricted LP fits in memory, except
        for sparsest cut (its restricted LP needed over 30 separation rounds on jazz and
        USAir97, where gamma growth certifies a gap of 1e-5 in 1.5 s and 9 s). Jaccard
        ``cc``, 2 threads: lesmis and football reach the LP optimum (relative error
        below 1e-12) in about 0.15 s (30 passes and 4 polish rounds), the QP at
        ``gamma = 1`` being 9.5% and 6.3% above it. Once a polish has reached the LP
        optimum it is not repeated.
    gamma_growth : float, default=10.0
        Factor by which ``gamma`` grows when a converged QP stage misses ``gap_tol``
        and the polish did not close it; the duals (and ``x - delta``, ``f``) are scaled
        exactly (:func:`_rescale`), so the next stage starts where this one ended
        (exact regularisation: beyond some ``gamma`` the QP solution is an LP
        solution). ``gamma`` stops growing at ``1e8``.
    continuation : bool, sequence of float, or None
        Warm start along the regularisation path: first solve the QP with ``gamma``
        times each fraction (increasing, in (0, 1); ``True``: the fractions
        ``_config.DYKSTRA_CONTINUATION``, 0.02 and 0.2), each stage until its relative
        gap is below ``_config.DYKSTRA_CONTINUATION_GAP`` (1e-2), then scale the duals to
        the next ``gamma`` (:func:`_rescale`, exact) and go on; only the last stage, with
        the requested ``gamma``, is tested against ``tol`` and ``gap_tol``. Smaller
        ``gamma`` is better conditioned and its duals are close to the final ones:
        sparsest cut on USAir97 810 -> 120 passes, netscience 2520 -> 340, Harvard500
        1280 -> 160 (``benchmarks/README.md``). Default: on
        for problems with the constraint ``sum(x) = n`` (sparsest cut), off otherwise;
        not available for ``mn`` with ``p = 2``.

    Returns
    -------
    dict
        ``x`` (packed problem order), ``fun`` (LP objective ``c'x`` of the returned x; for
        ``mn`` with p = 2 the QP objective), ``lower_bound`` (the best certified bound on
        the LP optimum met in the run, from :func:`metricopt.bounds.certify` or the
        polish's LP dual, ``None`` when unavailable), ``gap`` (certified LP gap),
        ``qp_gap``, ``polish`` (one record per polish tried), ``certificates``,
        ``certify_seconds``,
        ``lp_approx_ratio`` (``fun / lower_bound``), ``qp_primal``, ``qp_dual``, ``gap``,
        ``max_violation``, ``status``, ``nit``, ``history`` (per pass: iteration, seconds,
        primal, dual, gap, max_violation, full_check, active_constraints, memory_bytes),
        ``gamma`` (of the returned iterate: a warm-up stage's when stopped there),
        ``gammas`` (the stages), ``lam``, ``rounded_digits``, ``repaired`` (True when
        ``x`` is the repaired point), ``dual_memory_bytes``.

    References
    ----------
    .. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
           333-355. https://doi.org/10.1137/18M1217152
    """
    entered = time.perf_counter()
    _check_option_values(tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                         check_every=check_every, threads=threads, gamma=gamma, lam=lam,
                         checkpoint_every=checkpoint_every, polish=polish,
                         gamma_growth=gamma_growth, order=order, duals=duals,
                         extrapolate=extrapolate, interleave=interleave)
    import numba

    order = _ALIASES.get(order, order)
    st = _setup(problem, gamma, lam, order)
    gammas = _continuation_gammas(continuation, st)
    n = problem.n
    if block is None:
        block = _config.DYKSTRA_BLOCK if order != "parallel" else min(64, max(8, n // 8))
    block = int(block)
    use_dense = _dense_duals(duals, order, st, extrapolate is not False, max_memory)
    if extrapolate and not use_dense:
        raise InvalidParameterError(
            "extrapolate=True needs dense triangle duals (duals='dense' or 'auto' on a "
            "problem small enough for them)")
    extrapolate = use_dense and extrapolate is not False
    if interleave is None:
        interleave = 16 if st["sum_value"] is not None else 1
    interleave = int(interleave) if order == "diagonal" else 1
    options = dict(order=order, block=block, tol=float(tol), gap_tol=float(gap_tol),
                   gamma=st["gamma"], lam=st.get("lam"), interleave=interleave,
                   gammas=[float(g) for g in gammas])
    counters = dict(kind=st["kind"], n=n, iteration=0, seconds=0.0, stage=0)
    digest = problem_digest(problem) if (checkpoint or resume) is not None else None
    if resume is not None:
        meta = _read_checkpoint(resume, st, problem, digest)
        if meta.get("opt_order") != order or meta.get("opt_block") != block:
            raise InvalidParameterError(
                f"checkpoint {resume!r} was written with order={meta.get('opt_order')!r}, "
                f"block={meta.get('opt_block')}; resume with the same options")
        if meta.get("opt_interleave", interleave) != interleave:
            raise InvalidParameterError(
                f"checkpoint {resume!r} was written with interleave="
                f"{meta.get('opt_interleave')}; resume with the same options")
        if "opt_gammas" in meta and meta["opt_gammas"] != options["gammas"]:
            raise InvalidParameterError(
                f"checkpoint {resume!r} was written with the continuation stages "
                f"gamma={meta['opt_gammas']}; resume with the same options")
        counters["iteration"] = int(meta["iteration"])
        counters["seconds"] = float(meta["seconds"])
        counters["history"] = header_history(resume, meta)
        # a checkpoint without stages holds an iterate of the final gamma
        counters["stage"] = header_field(resume, meta, "stage", "count", len(gammas) - 1)
        if counters["stage"] >= len(gammas):
            raise InputError(f"cannot resume from {resume}: its header field 'stage' is "
                             f"{counters['stage']}, beyond the {len(gammas)} stages")
        if "gamma_now" in meta:  # an LP stage with a grown gamma (arrays at its scale)
            counters["gamma_now"] = header_field(resume, meta, "gamma_now", "positive")
    stage = counters["stage"]
    if resume is None and len(gammas) > 1:
        _rescale(st, gammas[0])  # all duals are still 0
    st["gamma"] = counters.get("gamma_now", gammas[stage])
    bufs = [np.empty(1024, dtype=np.int64), np.empty(1024), np.empty(0, dtype=np.int64),
            np.empty(0)]
    if st["dense"] and order == "parallel":
        from ._dykstra_parallel import NWORKERS, schedule

        st["par_sched"] = schedule(n, block)
        start = st["tri_start"]
        if start.shape[0] != NWORKERS + 1:
            start = np.zeros(NWORKERS + 1, dtype=np.int64)
        cnt = np.diff(start).astype(np.int64)
        cap = max(1024, int(cnt.max(initial=0)))
        st["par_pos"] = np.zeros((NWORKERS, cap), dtype=np.int64)
        st["par_val"] = np.zeros((NWORKERS, cap))
        for w in range(NWORKERS):
            st["par_pos"][w, :cnt[w]] = st["tri_pos"][start[w]:start[w + 1]]
            st["par_val"][w, :cnt[w]] = st["tri_val"][start[w]:start[w + 1]]
        st["par_cnt"] = cnt
        bufs[0] = np.empty((NWORKERS, cap), dtype=np.int64)
        bufs[1] = np.empty((NWORKERS, cap))
    if use_dense:
        from . import _layouts as L

        st["rows"] = L.diagonal_rows(n, block)
        if st.get("z_dense") is None:  # fresh, or a checkpoint of a sparse-dual run
            st["z_dense"] = L.sparse_to_dense_duals(st["tri_pos"], st["tri_val"], st["rows"])
        st["tri_pos"], st["tri_val"] = np.empty(0, dtype=np.int64), np.empty(0)
        if not extrapolate:
            st["z_dense_ref"] = None
        elif st.get("z_dense_ref") is None or "ext_beta" not in st:
            st["z_dense_ref"] = st["z_dense"].copy()
            _set_reference(st, _regularised.pair_bz(st))
            st["ext_beta"] = _config.DYKSTRA_EXTRAPOLATE_START
    elif st.get("z_dense") is not None:  # checkpoint of a dense-dual run
        from . import _layouts as L

        st["tri_pos"], st["tri_val"] = L.dense_to_sparse_duals(st["z_dense"],
                                                               L.diagonal_rows(n, block))
        st["z_dense"] = st["z_dense_ref"] = st["z_pair_ref"] = st["x_ref"] = st["f_ref"] = None
    if st["dense"] and order != "parallel" and not use_dense:
        # current list lives in bufs[2:4] (views), the next one is written to bufs[0:2]
        bufs[2], bufs[3] = st["tri_pos"].copy(), st["tri_val"].copy()
        st["tri_pos"], st["tri_val"] = bufs[2], bufs[3]
        bufs[0] = np.empty(max(1024, st["tri_pos"].shape[0]), dtype=np.int64)
        bufs[1] = np.empty(max(1024, st["tri_pos"].shape[0]))

    want = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    rounded = None
    repaired = False
    x_out = None
    primal = dual = gap = neg_bty = np.nan
    viol = np.inf
    loop = IterationLoop(
        "passes", counters, max_iter=max_iter, time_limit=time_limit, callback=callback,
        threads=want, checkpoint_every=checkpoint_every,
        save=None if checkpoint is None else
        (lambda: _write_checkpoint(checkpoint, st, counters, options, problem, digest)))
    stage_start = loop.it
    final = None  # the certificates end by the time limit's allowance
    # the time limit counts the setup too
    counters["seconds"] = float(counters["seconds"]) + (time.perf_counter() - entered)
    # l1 objectives (cc, mn with p = 1): the QP at gamma = 1 is far from the LP (lesmis 9.5%
    # above it), so the polish is tried early; linear ones (cd: 3.8e-6 certified at the
    # end of the stage on Vassar85, where an early polish took 90 s) wait for the stage
    early_polish = problem.objective == "l1"
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish,
                       gamma_growth=gamma_growth, threads=want, max_memory=max_memory)
    with loop:
        if time_limit is not None:
            from . import finish_allowance

            final = loop.deadline + 0.75 * finish_allowance(time_limit)  # as project-forget
        while loop.next():
            it = loop.it
            # a Ctrl-C takes effect between two iterations, so that x, the duals and the
            # counters of a checkpoint always belong together
            with loop.iteration():
                bz, nnz, vest, smax = _one_pass(st, order, block, bufs, interleave)
                primal, dual, neg_bty = _regularised.objectives(st, bz)
                gap = _regularised.rel_gap(primal, dual, lp_stage.floor)
                mem = _dual_bytes(st, bufs)
                if not np.isfinite(primal) or not np.isfinite(dual):
                    loop.stop(Status.NUMERICAL, "non-finite objective")
                    break
                warm = stage < len(gammas) - 1  # a continuation warm-up stage: no stopping test
                full = not warm and ((it % check_every == 0) or (vest <= tol and gap <= gap_tol))
                if full:
                    viol = problem.max_violation(_packed(st))
                else:
                    viol = vest
                # the QP stage has converged: its iterate (or the repaired or rounded
                # point) is feasible within tol and the QP gap within gap_tol
                stage_done = full and viol <= tol and gap <= gap_tol
                x_out, rounded, repaired = None, None, False
                if full and not stage_done and gap <= gap_tol and repair and st["dense"]:
                    x_out = _repair_test(problem, st, dual, tol, gap_tol)
                    repaired = stage_done = x_out is not None
                if full and not stage_done and gap <= gap_tol and round_digits:
                    rounded, x_out = _rounding_test(problem, st, dual, tol, gap_tol,
                                                    round_digits)
                    stage_done = rounded is not None
                done = False
                next_gamma = None
                lp_gap_now = np.nan
                if full and not stage_done and gap <= POLISH_QP_GAP and early_polish \
                        and lp_stage.may_polish(st["gamma"]):
                    # the active rows are known long before the QP converges
                    done = lp_stage.try_polish(lambda: _active_rows(problem, st, order, block),
                                               loop.deadline, st["gamma"])
                    if done:
                        x_out = lp_stage.x
                        viol = float(problem.max_violation(x_out))
                        lp_gap_now = lp_stage.gap(problem.objective_value(x_out))
                elif stage_done:
                    x_cand = _packed(st) if x_out is None else x_out
                    done, next_gamma = lp_stage.finish(
                        x_cand, lambda: _certify(problem, st, _packed(st), dual, neg_bty,
                                                 final),
                        lambda: _active_rows(problem, st, order, block), loop.deadline,
                        st["gamma"])
                    lp_gap_now = lp_stage.gap(problem.objective_value(lp_stage.x))
                    if done:
                        x_out = lp_stage.x
                        viol = float(problem.max_violation(x_out))
                loop.record(dict(iteration=it, seconds=loop.elapsed(), primal=primal, dual=dual,
                                 gap=lp_gap_now, qp_gap=gap, max_violation=viol,
                                 full_check=bool(full), active_constraints=nnz,
                                 memory_bytes=mem, gamma=st["gamma"]))
                if done:
                    how = ""
                    if lp_stage.polished and x_out is not None and lp_stage.polishes:
                        how = " (x from the LP on the active constraints)"
                    elif rounded is not None:
                        how = f" (x rounded to {rounded} decimals)"
                    elif repaired:
                        how = " (x repaired to exact feasibility)"
                    loop.stop(Status.OPTIMAL, f"certified LP gap {max(lp_gap_now, 0.0):.2e} "
                                              f"<= gap_tol in {it} passes{how}")
                    break
                x_out = None
                if next_gamma is not None:
                    _rescale(st, next_gamma)
                    counters["gamma_now"] = next_gamma
                    stage_start = it
                scale = max(1.0, float(np.max(np.abs(st["x"]))))
                stalled = smax <= _config.DYKSTRA_STALL_STEP * scale
                if warm and (stalled or gap <= _config.DYKSTRA_CONTINUATION_GAP
                             or it - stage_start >= _config.DYKSTRA_CONTINUATION_PASSES):
                    stage += 1
                    _rescale(st, gammas[stage])
                    counters["stage"] = stage
                    stage_start = it
                elif stalled:
                    loop.stop(Status.STALLED, f"no change in pass {it}")
                    break
                if loop.out_of_time():
                    break
                if max_memory is not None and mem > max_memory:
                    loop.stop(Status.LIMIT, f"dual storage exceeds max_memory ({mem} bytes)")
                    break
                if extrapolate and it % _config.DYKSTRA_EXTRAPOLATE_EVERY == 0:
                    _extrapolate(st, dual)
                loop.checkpoint_if_due()
    status, message, history, it = loop.status, loop.message, loop.history, loop.it

    x_full = _packed(st)
    x = x_full if x_out is None else x_out
    if status == Status.INTERRUPTED or not history or not history[-1]["full_check"] \
            or x_out is not None:
        viol = problem.max_violation(x)
    if status != Status.OPTIMAL:
        x, viol = lp_stage.answer_at_limit(x, viol)
    if stage < len(gammas) - 1:
        message += f" (in the continuation stage gamma = {st['gamma']:.6g})"
    fun = problem.objective_value(x)
    out = dict(x=x, fun=fun, status=status, message=message, nit=it,
               max_violation=float(viol), qp_primal=float(primal), qp_dual=float(dual),
               qp_gap=float(gap), history=history, gamma=st["gamma"], gammas=list(gammas),
               lam=st.get("lam"),
               rounded_digits=rounded, repaired=repaired,
               dual_memory_bytes=_dual_bytes(st, bufs), elapsed=loop.elapsed())
    if status != Status.OPTIMAL and np.isfinite(dual):
        # an interrupted run ends at once: its certificate takes one pass over the pairs
        # (the multiplier search stops at its first value, still certified)
        until = time.perf_counter() if status == Status.INTERRUPTED else final
        lp_stage.offer_bound(*_certify(problem, st, x_full, dual, neg_bty, until))
    lb = lp_stage.best_bound
    out.update(lp_stage.summary())
    out.update(lower_bound=lb, bound_details=lp_stage.best_details, polish=lp_stage.polishes,
               gap=lp_stage.gap(fun), certificates=lp_stage.certificates,
               certify_seconds=lp_stage.certify_seconds)
    if status not in (Status.OPTIMAL, Status.INTERRUPTED):
        out["message"] = message + _missed(out, tol, gap_tol)
        warnings.warn(f"dykstra: {out['message']}", ConvergenceWarning, stacklevel=3)
    out["lp_approx_ratio"] = (fun / lb) if (lb is not None and lb > 0) else None
    return out


def _missed(out, tol, gap_tol):
    """What a run that stopped early missed, with figures."""
    parts = []
    if not out["max_violation"] <= tol:
        parts.append(f"violation {out['max_violation']:.2e} > tol {tol:g}")
    if not out["gap"] <= gap_tol:
        parts.append(f"certified LP gap {out['gap']:.2e} > gap_tol {gap_tol:g}")
    return f"; missed: {', '.join(parts)}" if parts else ""


def _active_rows(problem, st, order, block):
    """The constraints holding a positive dual (:class:`._polish.ActiveRows`).

    Packed layouts (lexicographic and parallel orders) give none: the polish then
    starts from the separated rows of the iterate.
    """
    from .core.polish import ActiveRows

    if not st["dense"]:
        z = np.concatenate([st["z_tri"], st["z_wed"]])
        ids = np.flatnonzero(z > 0.0)
        return ActiveRows(family=ids, duals=dict(family=z[ids]))
    if st["idx"] is None or order != "diagonal":
        return ActiveRows(triangles=np.empty((0, 3), dtype=np.int64))
    from . import _active_kernels as A
    from . import _layouts as L

    n = st["n"]
    to_packed = np.empty_like(st["idx"])
    to_packed[st["idx"]] = np.arange(st["idx"].shape[0])
    off = L.diagonal_offsets(n)
    if st.get("z_dense") is not None:
        tri, z = A.dense_active_triangles(st["z_dense"], st["rows"], off, to_packed)
    else:
        tri, z = A.sparse_active_triangles(st["tri_pos"], st["tri_val"],
                                           L.diagonal_rows(n, block), off, to_packed)
    return ActiveRows(triangles=tri, duals=dict(triangles=z))


def _rounding_test(problem, st, dual, tol, gap_tol, digits):
    """Entrywise rounding test (V §5.4): the first ``r`` whose rounded ``x`` is feasible
    within ``tol`` and has QP objective within ``gap_tol`` of ``D(y)``."""
    xp = _packed(st)
    from . import _triangle_sparse as S

    for r in digits:
        xr = np.round(xp, int(r))
        if st["dense"] and S.triangle_violation_exceeds(xr, st["n"], tol):
            continue  # early exit: most candidates fail on the first rows
        if problem.max_violation(xr) > tol:
            continue
        if _regularised.rel_gap(_qp_primal_of_packed(st, xr), dual) <= gap_tol:
            return int(r), xr
    return None, None


def _repair_test(problem, st, dual, tol, gap_tol):
    """Metric repair test: the exactly feasible point of :func:`._repair.repair_dense`
    (bounds, shortest-path closure, sum rescaled) if its QP objective is within
    ``gap_tol`` of ``D(y)``, else None.

    A stronger form of V §5.4: the Dykstra iterate reaches the gap long before its
    largest violation reaches ``tol`` (cc Jaccard jazz: gap 1e-4 near pass 125, violation
    1e-6 only at pass 1190), and the closure moves only the entries of violated
    triangles, by about the violation.
    """
    from ._repair import repair_dense

    xr = repair_dense(problem, _packed(st))
    if xr is None or problem.max_violation(xr) > tol:
        return None
    if _regularised.rel_gap(_qp_primal_of_packed(st, xr), dual) > gap_tol:
        return None
    return xr


def _qp_primal_of_packed(st, xr):
    """QP objective of a packed point ``xr`` (with the best ``f = |x - d|`` for l1)."""
    g = st["gamma"]
    xl = np.empty_like(xr)
    if st["idx"] is not None:
        xl[st["idx"]] = xr
    else:
        xl[:] = xr
    e = xl if st["delta"] is None else xl - st["delta"]
    quad = _regularised.wdot(st["w"], e, e)
    if st["f"] is not None:
        quad *= 2.0
        lin = _regularised.wdot(st["w"], np.abs(e), None)
    elif st["cost"] is not None:
        lin = _regularised.wdot(st["cost"], xl, None)
    else:
        lin = 0.0
    return lin + quad / (2 * g)


def _certify(problem, st, x_full, dual, neg_bty, deadline=None):
    """Certified lower bound on the LP optimum at the current iterate
    (:func:`metricopt.bounds.certify`, from the same full-precision pair ``(x, y)``).

    Returns
    -------
    lower_bound : float or None
    details : dict
    """
    from ..bounds import RegularisedIterate, certify

    f = None if st["f"] is None else _packed(st, st["f"])
    return certify(problem, RegularisedIterate(
        x_full, f, _packed(st, st["w"]), st["gamma"], dual, neg_bty, st.get("lam"),
        st["raised"]), deadline=deadline)


class DykstraSolver(Solver):
    """Dykstra / Hildreth cyclic projections with sparse duals (V Alg. 1-2)."""

    name = "dykstra"
    description = "Dykstra projections on the QP regularisation (dense triangle or edge lists)"
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "edges")
    objectives = ("linear", "l1", "l2")
    check_values = staticmethod(_check_option_values)

    def supports(self, problem):
        """Dense and edge-list problems; not the cycle inequalities of MET(G)."""
        if problem.structure == "sparse":
            return False, ("dykstra solves dense (all-pairs) and edge-list problems; "
                           "sparse MET(G) problems need an active-set method (project-forget)")
        return super().supports(problem)

    def warm_up_options(self, problem, options):
        """The dual storage the real solve will use, so that its kernels are the ones
        warmed up (a small instance would otherwise always get dense duals)."""
        opts = dict(options)
        if problem.structure == "dense":
            order = _ALIASES.get(opts.get("order", "diagonal"), opts.get("order", "diagonal"))
            try:
                dense = _dense_duals(opts.get("duals", "auto"), order,
                                     {"dense": True, "n": problem.n},
                                     opts.get("extrapolate") is not False,
                                     opts.get("max_memory"))
            except Exception:  # the real solve reports a bad option
                return opts
            opts["duals"] = "dense" if dense else "sparse"
        return opts

    def estimate_memory(self, problem):
        """Bytes of the pair arrays plus the triangle duals: dense ones and their
        extrapolation reference (48 B per triplet) when ``duals="auto"`` would pick them,
        else a typical sparse list (2% of 3 C(n,3), 16 B each, two lists)."""
        nvar = problem.n_variables
        base = 8 * 10 * nvar
        if problem.structure == "dense":
            n = problem.n
            need = _dense_dual_bytes(n)
            if _auto_dense_fits(need):
                return int(base + need)
            return int(base + 2 * 16 * 0.02 * 3 * (n * (n - 1) * (n - 2) // 6))
        return int(base + 8 * (3 * len(problem.triangles) + len(problem.wedges)))

    def run(self, problem, *, gamma=None, lam=None, tol=1e-6, gap_tol=1e-4, max_iter=10000,
            time_limit=None, order="diagonal", block=None, check_every=10,
            round_digits=_DEFAULT_ROUND, threads=None, seed=None, max_memory=None,
            callback=None, verbose=False, checkpoint=None, checkpoint_every=60.0, resume=None,
            duals="auto", interleave=None, extrapolate=None, repair=True, continuation=None,
            polish="auto", gamma_growth=10.0):
        """Solve ``problem``; see :func:`solve_dykstra` for the options."""
        return solve_dykstra(
            problem, gamma=gamma, lam=lam, tol=tol, gap_tol=gap_tol, max_iter=max_iter,
            time_limit=time_limit, order=order, block=block, check_every=check_every,
            round_digits=round_digits, threads=threads, seed=seed, max_memory=max_memory,
            callback=callback, verbose=verbose, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, resume=resume, duals=duals,
            interleave=interleave, extrapolate=extrapolate, repair=repair,
            continuation=continuation, polish=polish, gamma_growth=gamma_growth)

    def cite(self):
        """Reference of the method."""
        return ("Veldt, Gleich, Wirth & Saunderson (2019), Metric-constrained optimization for "
                "graph clustering algorithms, SIAM J. Math. Data Sci. 1(2)")
