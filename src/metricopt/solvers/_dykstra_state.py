"""The state of a dykstra run: its arrays, one pass, and the moves between passes.

The regularised QP's arrays (:func:`setup`, in the layout the visiting order needs), one
cyclic pass over every constraint (:func:`one_pass`), the safeguarded extrapolation of
the duals (:func:`extrapolate`), the exact rescaling to another ``gamma``
(:func:`rescale`), the dual storage's size and the checkpoint's arrays. The kernels are
in :mod:`._triangle_dense`, :mod:`._triangle_sparse`, :mod:`._dykstra_parallel` and
:mod:`._constraint_kernels`.
"""

import dataclasses

import numpy as np

from .. import _config
from ..exceptions import InputError, InvalidParameterError
from . import _checkpoint, _regularised
from .core.options import check_choice

__all__ = ["DykstraState", "ORDERS", "DUALS", "ALIASES", "setup", "packed", "dense_duals",
           "dense_duals_fit", "work_buffers", "one_pass", "extrapolate", "continuation_gammas", "rescale",
           "dual_bytes", "write_checkpoint", "read_checkpoint"]

#: visiting orders of the triangle constraints ("blocked" is accepted for "parallel")
ORDERS = ("diagonal", "lexicographic", "parallel")
#: Storage of the triangle duals (``duals`` of :func:`.dykstra.solve_dykstra`).
DUALS = ("auto", "dense", "sparse")
ALIASES = {"blocked": "parallel"}


@dataclasses.dataclass(eq=False)
class DykstraState(_regularised.QPState):
    """A dykstra run's arrays: the QP's (:class:`._regularised.QPState`) and the duals.

    Attributes
    ----------
    kind : str
    n : int
    dense : bool
        All pairs (triangle duals), else the explicit triangle and wedge lists of ``cd``.
    idx : ndarray or None
        Packed to diagonal positions of the diagonal layout (None: packed layout).
    tri_pos, tri_val, tri_start : ndarray
        Sparse triangle duals: positions and values in visiting order (the parallel
        order's per-worker lists concatenated, ``tri_start`` delimiting them).
    tri, wed, z_tri, z_wed : ndarray
        Explicit rows of ``cd`` and their duals.
    rows : ndarray
        The diagonal layout's rows (dense duals).
    z_dense : ndarray
        Dense triangle duals, one per constraint in the diagonal order.
    z_dense_ref, x_ref, f_ref, z_pair_ref, z_sum_ref, bz_ref, ext_beta
        The extrapolation's reference point and trust region (:func:`extrapolate`).
    par_sched, par_pos, par_val, par_cnt
        The parallel order's schedule and per-worker dual lists.
    """

    kind: str = None
    n: int = 0
    dense: bool = True
    idx: np.ndarray = None
    tri_pos: np.ndarray = None
    tri_val: np.ndarray = None
    tri_start: np.ndarray = None
    tri: np.ndarray = None
    wed: np.ndarray = None
    z_tri: np.ndarray = None
    z_wed: np.ndarray = None
    rows: np.ndarray = None
    z_dense: np.ndarray = None
    z_dense_ref: np.ndarray = None
    x_ref: np.ndarray = None
    f_ref: np.ndarray = None
    z_pair_ref: np.ndarray = None
    z_sum_ref: float = None
    bz_ref: float = None
    ext_beta: float = None
    par_sched: np.ndarray = None
    par_pos: np.ndarray = None
    par_val: np.ndarray = None
    par_cnt: np.ndarray = None


# ----------------------------------------------------------------------------- setup
def setup(problem, gamma, lam, order="diagonal"):
    """Work arrays of the regularised QP of ``problem`` (see the module docstring).

    Dense problems are laid out as ``order`` needs (``L.LAYOUTS``): the diagonal layout
    (``st.idx`` maps packed to diagonal positions) or the packed one (``idx`` None).
    """
    from . import _layouts as L

    n = problem.n
    dense = problem.structure == "dense"
    idx = None
    if dense and L.LAYOUTS[order] == "diagonal":
        idx = L.packed_to_diagonal_index(n)

        def lay(a):
            out = np.empty(a.shape[0], dtype=np.float64)
            out[idx] = a
            return out
    else:
        def lay(a):
            return np.ascontiguousarray(a, dtype=np.float64).copy()

    st = _regularised.setup(problem, gamma, lam, lay, state=DykstraState, kind=problem.kind,
                            n=n, dense=dense, idx=idx)
    if dense:
        st.tri_pos = np.empty(0, dtype=np.int64)
        st.tri_val = np.empty(0, dtype=np.float64)
        st.tri_start = np.zeros(1, dtype=np.int64)
    else:
        st.tri = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
        st.wed = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
        st.z_tri = np.zeros(3 * st.tri.shape[0])
        st.z_wed = np.zeros(st.wed.shape[0])
    return st


def packed(st, x=None):
    x = st.x if x is None else x
    return x[st.idx] if st.idx is not None else x.copy()


def dense_dual_bytes(n, with_reference=True):
    """Bytes of dense triangle duals on ``n`` nodes (24 per triplet, twice that with the
    extrapolation's reference copy)."""
    return (48 if with_reference else 24) * (n * (n - 1) * (n - 2) // 6)


def auto_dense_fits(need, max_memory=None):
    """Whether ``duals="auto"`` takes ``need`` bytes of dense duals."""
    from .._memory import available_memory

    if need > _config.DYKSTRA_DENSE_DUAL_BYTES or (max_memory is not None and need > max_memory):
        return False
    avail = available_memory()
    return avail is None or need <= avail / 4


def dense_duals_fit(n, max_memory=None):
    """Whether ``duals="auto"`` keeps dense triangle duals (with the extrapolation's
    reference) on ``n`` nodes: the fast path of this backend."""
    return auto_dense_fits(dense_dual_bytes(n), max_memory)




def dense_duals(duals, order, dense, n, with_reference=True, max_memory=None):
    """Whether the triangle duals are stored densely (see ``duals`` of solve_dykstra);
    ``with_reference``: a second copy is kept for the extrapolation."""
    check_choice("solve_dykstra", "duals", duals, DUALS)
    if not dense or duals == "sparse":
        return False
    need = dense_dual_bytes(n, with_reference)
    if duals == "dense":
        if order != "diagonal":
            raise InvalidParameterError(
                f"duals='dense' needs order='diagonal', not {order!r}")
        from .._memory import check_memory

        check_memory(need, what="the dense triangle duals", max_memory=max_memory)
        return True
    return order == "diagonal" and auto_dense_fits(need, max_memory)


def work_buffers(st, order, block, use_dense, extrapolate):
    """Lay out the triangle duals as the run stores them and return the pass's work
    buffers ``[next positions, next values, current positions, current values]``.

    Dense duals (``use_dense``) replace a fresh or checkpointed sparse list (with the
    extrapolation's reference point when ``extrapolate``); a checkpoint of a dense-dual
    run resumed with sparse duals is converted back; the parallel order keeps one list
    per worker.
    """
    from . import _layouts as L

    n = st.n
    bufs = [np.empty(1024, dtype=np.int64), np.empty(1024), np.empty(0, dtype=np.int64),
            np.empty(0)]
    if st.dense and order == "parallel":
        from ._dykstra_parallel import NWORKERS, schedule

        st.par_sched = schedule(n, block)
        start = st.tri_start
        if start.shape[0] != NWORKERS + 1:
            start = np.zeros(NWORKERS + 1, dtype=np.int64)
        cnt = np.diff(start).astype(np.int64)
        cap = max(1024, int(cnt.max(initial=0)))
        st.par_pos = np.zeros((NWORKERS, cap), dtype=np.int64)
        st.par_val = np.zeros((NWORKERS, cap))
        for w in range(NWORKERS):
            st.par_pos[w, :cnt[w]] = st.tri_pos[start[w]:start[w + 1]]
            st.par_val[w, :cnt[w]] = st.tri_val[start[w]:start[w + 1]]
        st.par_cnt = cnt
        bufs[0] = np.empty((NWORKERS, cap), dtype=np.int64)
        bufs[1] = np.empty((NWORKERS, cap))
    if use_dense:
        st.rows = L.diagonal_rows(n, block)
        if st.z_dense is None:  # fresh, or a checkpoint of a sparse-dual run
            st.z_dense = L.sparse_to_dense_duals(st.tri_pos, st.tri_val, st.rows)
        st.tri_pos, st.tri_val = np.empty(0, dtype=np.int64), np.empty(0)
        if not extrapolate:
            st.z_dense_ref = None
        elif st.z_dense_ref is None or st.ext_beta is None:
            st.z_dense_ref = st.z_dense.copy()
            set_reference(st, _regularised.pair_bz(st))
            st.ext_beta = _config.DYKSTRA_EXTRAPOLATE_START
    elif st.z_dense is not None:  # checkpoint of a dense-dual run
        st.tri_pos, st.tri_val = L.dense_to_sparse_duals(st.z_dense,
                                                               L.diagonal_rows(n, block))
        st.z_dense = st.z_dense_ref = st.z_pair_ref = st.x_ref = st.f_ref = None
    if st.dense and order != "parallel" and not use_dense:
        # current list lives in bufs[2:4] (views), the next one is written to bufs[0:2]
        bufs[2], bufs[3] = st.tri_pos.copy(), st.tri_val.copy()
        st.tri_pos, st.tri_val = bufs[2], bufs[3]
        bufs[0] = np.empty(max(1024, st.tri_pos.shape[0]), dtype=np.int64)
        bufs[1] = np.empty(max(1024, st.tri_pos.shape[0]))
    return bufs


# ------------------------------------------------------------------------- one pass
def one_pass(st, order, block, bufs, interleave=1):
    """One cyclic pass over every constraint; returns (bz, nnz, vmax, smax).

    With ``interleave > 1`` (diagonal order only) the triangle pass is cut into that many
    parts of about equal row counts and the sum constraint is revisited after each part.
    """
    from . import _constraint_kernels as C
    from . import _triangle_dense as D
    from . import _triangle_sparse as S

    x, winv = st.x, st.winv
    vmax = smax = 0.0
    nnz = 0
    bz = 0.0
    has_sum = st.sum_value is not None
    total = float(st.sum_value) if has_sum else 0.0
    n = st.n
    part = max(1, -(-((n - 1) * (n - 2) // 2) // max(1, int(interleave))))
    if st.dense and st.z_dense is not None:
        state = np.zeros(1, dtype=np.int64)
        acc = np.zeros(3)
        while not D.triangle_rows_dense(x, winv, n, st.rows, st.z_dense, state, acc,
                                        part):
            if has_sum:
                st.z_sum, _, _ = C.sum_step(x, winv, st.z_sum, total)
        c = int(acc[2])
        a, m = acc[0], acc[1]
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    elif st.dense:
        if order == "parallel":
            from ._dykstra_parallel import triangle_pass_parallel

            p, v, cnt, a, m = triangle_pass_parallel(
                x, winv, n, block, st.par_pos, st.par_val, st.par_cnt, bufs[0],
                bufs[1], st.par_sched)
            bufs[0], bufs[1] = st.par_pos, st.par_val
            st.par_pos, st.par_val, st.par_cnt = p, v, cnt
            c = int(cnt.sum())
        elif order == "diagonal":
            state = np.zeros(6, dtype=np.int64)
            acc = np.zeros(2)
            p, v = bufs[0], bufs[1]
            while True:
                p, v, done = S.triangle_rows_diagonal(x, winv, n, block, st.tri_pos,
                                                      st.tri_val, p, v, state, acc, part)
                if done:
                    break
                if has_sum:
                    st.z_sum, _, _ = C.sum_step(x, winv, st.z_sum, total)
            c, a, m = int(state[5]), acc[0], acc[1]
        else:
            p, v, c, a, m = S.TRIANGLE_KERNELS[order](x, winv, n, block, st.tri_pos,
                                                      st.tri_val, bufs[0], bufs[1])
        if order != "parallel":
            # this pass's list becomes current; the old current buffer is next scratch
            old_p, old_v = bufs[2], bufs[3]
            bufs[0], bufs[1] = old_p, old_v
            bufs[2], bufs[3] = p, v
            st.tri_pos, st.tri_val = p[:c], v[:c]
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    else:
        c, a, m = C.edge_triangle_pass(x, winv, st.tri, st.z_tri)
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
        b, c, a, m = C.wedge_pass(x, winv, st.wed, st.z_wed)
        bz += b
        nnz += c
        vmax, smax = max(vmax, a), max(smax, m)
    f = st.f
    b, c, a, m = C.pair_pass(
        x, winv, f if f is not None else x, st.delta if st.delta is not None else x,
        st.z_pair, st.lower, st.upper, f is not None, st.has_lower, st.has_upper)
    bz += b
    nnz += c
    vmax, smax = max(vmax, a), max(smax, m)
    if has_sum:
        st.z_sum, a, m = C.sum_step(x, winv, st.z_sum, total)
        bz += total * st.z_sum
        nnz += st.z_sum != 0.0
        vmax, smax = max(vmax, a), max(smax, m)
    return bz, int(nnz), float(vmax), float(smax)


def extrapolate(st, dual):
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

    x, winv, f = st.x, st.winv, st.f
    bz = _regularised.pair_bz(st)
    dx = x - st.x_ref
    df = None if f is None else f - st.f_ref
    dbz = bz - st.bz_ref
    samples = [dual]
    for t in (1.0, 2.0):
        samples.append(_regularised.objectives(st, bz + t * dbz, x + t * dx,
                                   None if f is None else f + t * df)[1])
    curv = (samples[2] - 2.0 * samples[1] + samples[0]) / 2.0
    slope = samples[1] - samples[0] - curv
    beta = _config.DYKSTRA_EXTRAPOLATE_MAX if curv >= 0 else -slope / (2.0 * curv)
    if not np.isfinite(beta) or beta <= 0.0:
        beta = _config.DYKSTRA_EXTRAPOLATE_MIN
    cap = st.ext_beta  # a trust region: doubled after a kept move, quartered otherwise
    beta = float(min(max(beta, _config.DYKSTRA_EXTRAPOLATE_MIN), cap))
    x_old = x.copy()
    f_old = None if f is None else f.copy()
    zp_old = st.z_pair.copy()
    zs_old = st.z_sum
    D.extrapolate_dense_duals(x, winv, st.n, st.rows, st.z_dense, st.z_dense_ref,
                              beta)
    zp = np.maximum(zp_old + beta * (zp_old - st.z_pair_ref), 0.0)
    d = zp - zp_old
    x -= winv * (d[0] - d[1] - d[2] + d[3])
    if f is not None:
        f += winv * (d[0] + d[1])
    st.z_pair[:] = zp
    if st.sum_value is not None:
        zs = zs_old + beta * (zs_old - st.z_sum_ref)
        x -= winv * (zs - zs_old)
        st.z_sum = zs
    new_bz = _regularised.pair_bz(st)
    _, new_dual, _ = _regularised.objectives(st, new_bz)
    if np.isfinite(new_dual) and new_dual > dual:
        # the reference stays at the point before the move (the kernel left its duals in
        # z_dense_ref), so the next direction includes this move: a momentum term, and
        # no copy of the dense duals (USAir97 sc: 970 -> 810 passes)
        st.x_ref, st.f_ref, st.z_pair_ref = x_old, f_old, zp_old
        st.z_sum_ref, st.bz_ref = zs_old, bz
        st.ext_beta = min(2.0 * cap, _config.DYKSTRA_EXTRAPOLATE_MAX)
        return True
    st.z_dense[:] = st.z_dense_ref  # the kernel left the old duals there
    x[:] = x_old
    if f is not None:
        f[:] = f_old
    st.z_pair[:] = zp_old
    st.z_sum = zs_old
    set_reference(st, bz)
    st.ext_beta = max(cap / 4.0, _config.DYKSTRA_EXTRAPOLATE_MIN)
    return False


def current_objectives(st):
    """QP primal, dual and ``-b'y`` of the iterate as it is now (:func:`._regularised.
    objectives` with ``b'z`` summed from the state: the pair and sum rows, and the
    wedge rows ``x_a + x_b >= 1``, ``b = -1``, of the sparse layout).

    The values a pass measured go stale when the iterate moves after it (a ``gamma``
    growth or continuation stage rescales it, an extrapolation moves it); a certificate
    of the moved iterate needs these.
    """
    bz = _regularised.pair_bz(st)
    if not st.dense and st.z_wed is not None:
        bz -= float(np.sum(st.z_wed))
    return _regularised.objectives(st, bz)


def set_reference(st, bz):
    """Remember the current iterate as the base of the next extrapolation (the dense
    triangle duals are handled by the caller)."""
    st.x_ref = st.x.copy()
    st.f_ref = None if st.f is None else st.f.copy()
    st.z_pair_ref = st.z_pair.copy()
    st.z_sum_ref = st.z_sum
    st.bz_ref = bz


def continuation_gammas(continuation, st):
    """The gammas of the warm-up stages followed by the final one (see ``continuation``
    of :func:`solve_dykstra`)."""
    bad = InvalidParameterError(
        "The 'continuation' parameter of solve_dykstra must be a bool, None or a sequence "
        f"of increasing fractions in (0, 1). Got {continuation!r} instead.")
    g = st.gamma
    if continuation is None:
        continuation = st.sum_value is not None  # measured to help on sparsest cut
    if continuation is False:
        return [g]
    if st.delta is not None and st.f is None:  # mn with p = 2: gamma is fixed
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


def rescale(st, gamma):
    """Move the iterate to the QP with regularisation ``gamma``.

    ``x0 = delta + gamma u`` and ``f0 = -gamma`` are affine in ``gamma``, so scaling every
    dual by ``ratio = gamma / gamma_old`` and ``x - delta`` and ``f`` with them keeps the
    Dykstra invariant ``x = x0 - W^{-1} A' z`` exactly for the new ``gamma``: a warm
    start from the solution of a better-conditioned problem (the duals ``z = gamma y`` of
    a metric LP's regularisation change little along the path). The extrapolation's
    reference point moves the same way.
    """
    ratio = gamma / st.gamma
    delta, f_centre = _regularised.centre(st)  # (delta, None) unless recentred
    for a in (st.x, st.x_ref):
        if a is None:
            continue
        if delta is None:
            a *= ratio
        else:
            a[:] = delta + ratio * (a - delta)
    if f_centre is not None:  # f - c_f = -gamma - (W^{-1} A'z)_f scales too
        st.f[:] = f_centre + ratio * (st.f - f_centre)
    for a in ((st.f_ref,) if f_centre is not None else (st.f, st.f_ref)) + (
            st.z_pair, st.z_pair_ref, st.z_dense, st.z_dense_ref, st.tri_val, st.par_val,
            st.z_tri, st.z_wed):
        if a is not None:
            a *= ratio
    st.z_sum *= ratio
    if st.z_sum_ref is not None:
        st.z_sum_ref *= ratio
    if st.bz_ref is not None:
        st.bz_ref *= ratio
    if st.ext_beta is not None:
        st.ext_beta = _config.DYKSTRA_EXTRAPOLATE_START
    st.gamma = gamma


def dual_bytes(st, bufs):
    total = st.z_pair.nbytes
    if st.z_dense is not None:
        total += st.z_dense.nbytes
        if st.z_dense_ref is not None:
            total += st.z_dense_ref.nbytes
    elif st.dense and st.par_pos is not None:
        total += st.par_pos.nbytes + st.par_val.nbytes
        total += sum(b.nbytes for b in bufs[:2])
    elif st.dense:
        total += st.tri_pos.nbytes + st.tri_val.nbytes
        total += sum(b.nbytes for b in bufs[:2])
    else:
        total += st.z_tri.nbytes + st.z_wed.nbytes
    return int(total)


# ---------------------------------------------------------------- checkpoint / resume
_STATE_ARRAYS = ("x", "f", "z_pair", "tri_pos", "tri_val", "tri_start", "z_tri", "z_wed",
                 "z_dense", "z_dense_ref", "z_pair_ref", "x_ref", "f_ref", "shift_x", "shift_f")


def write_checkpoint(path, st, counters, options, problem, digest):
    """Write the complete iteration state (:mod:`metricopt.solvers._checkpoint`)."""
    if st.par_pos is not None:  # per-worker dual lists, stored concatenated with offsets
        cnt = st.par_cnt
        st.tri_pos = np.concatenate([st.par_pos[w, :c] for w, c in enumerate(cnt)])
        st.tri_val = np.concatenate([st.par_val[w, :c] for w, c in enumerate(cnt)])
        st.tri_start = np.r_[0, np.cumsum(cnt)].astype(np.int64)
    arrays = {k: getattr(st, k) for k in _STATE_ARRAYS if getattr(st, k) is not None}
    arrays["z_sum"] = np.array(st.z_sum)
    if st.z_dense_ref is not None:
        arrays["z_sum_ref"] = np.array(st.z_sum_ref)
        arrays["bz_ref"] = np.array(st.bz_ref)
        arrays["ext_beta"] = np.array(st.ext_beta)
    meta = dict(counters)
    meta.update({f"opt_{k}": v for k, v in options.items()})
    return _checkpoint.write_checkpoint(path, backend="dykstra", problem=problem,
                                        digest=digest, meta=meta, arrays=arrays)


def read_checkpoint(path, st, problem, digest):
    """Restore ``st`` from a checkpoint; every array is checked against this problem
    (:func:`._checkpoint.state_array`), so a damaged or partial file is refused."""
    meta, data = _checkpoint.read_checkpoint(path, backend="dykstra", problem=problem,
                                             digest=digest)

    def load(name, shape=None, dtype=np.float64, **bounds):
        return _checkpoint.state_array(path, data, name, dtype=dtype, shape=shape,
                                       **bounds).copy()

    for k in ("x", "f", "z_pair"):
        if getattr(st, k) is not None:
            setattr(st, k, load(k, getattr(st, k).shape))
    if "shift_x" in data:  # a proximal run's centre
        st.shift_x, st.shift_f = load("shift_x", st.x.shape), load("shift_f", st.x.shape)
    st.z_sum = float(load("z_sum", ()))
    if st.dense:
        n = problem.n
        positions = n * (n - 1) * (n - 2) // 2  # 3 constraints per triplet
        st.tri_pos = load("tri_pos", dtype=np.int64, low=0, high=positions)
        st.tri_val = load("tri_val", st.tri_pos.shape)
        start = load("tri_start", dtype=np.int64, low=0, high=st.tri_pos.shape[0] + 1)
        if start.shape[0] == 0 or start[0] != 0 or np.any(np.diff(start) < 0):
            raise InputError(f"cannot resume from {path}: its array 'tri_start' does not "
                             f"delimit the dual lists")
        st.tri_start = start
        if "z_dense" in data:
            st.z_dense = load("z_dense", (positions,))
        if "z_dense_ref" in data:  # the extrapolation's reference point
            st.z_dense_ref = load("z_dense_ref", (positions,))
            for k, like in (("z_pair_ref", st.z_pair), ("x_ref", st.x), ("f_ref", st.f)):
                if like is not None:
                    setattr(st, k, load(k, like.shape))
            for k in ("z_sum_ref", "bz_ref", "ext_beta"):
                setattr(st, k, float(load(k, ())))
    else:
        for k in ("z_tri", "z_wed"):
            setattr(st, k, load(k, getattr(st, k).shape))
    return meta
