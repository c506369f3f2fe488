"""Dykstra's method as a strategy of the iterative driver (:mod:`.core.driver`).

One iteration is one cyclic pass over every constraint (:func:`._dykstra_state.one_pass`);
a full check measures the exact violation every ``check_every`` passes (or when the
estimate and the QP gap both hold). Beyond the shared stages, the strategy offers two
candidates that end a QP stage early (the metric repair and the entrywise rounding, V
§5.4), tries the LP polish early for l1 objectives, runs the continuation's warm-up
stages and the safeguarded extrapolation of the duals.
"""

import time

import numpy as np

from .. import _config
from ..exceptions import InputError, InvalidParameterError
from ..result import Status
from . import _dykstra_state as S
from . import _proximal as P
from . import _regularised
from ._checkpoint import header_field, header_history, problem_digest
from .core.driver import Answer, Candidate, Measure, Strategy, iterate
from .core.stage import LPStage

__all__ = ["DykstraStrategy", "drive"]

class DykstraStrategy(Strategy):
    """The state and steps of one dykstra run (see :func:`.dykstra.solve_dykstra`)."""

    name = "dykstra"
    unit = "passes"
    floor_checks = 5  # 50 passes at the default check_every; 0.5 s on celegans_metabolic

    def __init__(self, problem, st, *, order, block, bufs, interleave, gammas, stage,
                 counters, options, check_every, tol, gap_tol, repair, round_digits,
                 extrapolate, checkpoint, digest, proximal=0, late_gamma=0.0):
        self.problem, self.st = problem, st
        self.order, self.block, self.bufs, self.interleave = order, block, bufs, interleave
        self.gammas, self.stage, self.counters = gammas, stage, counters
        self.options, self.check_every = options, check_every
        self.tol, self.gap_tol = tol, gap_tol
        self.repair, self.round_digits, self.extrapolate = repair, round_digits, extrapolate
        self.checkpoint, self.digest = checkpoint, digest
        # l1 objectives (cc, mn with p = 1): the QP at gamma = 1 is far from the LP
        # (lesmis 9.5% above it), so the polish is tried early; linear ones (cd: 3.8e-6
        # certified at the end of the stage on Vassar85, where an early polish took 90 s)
        # wait for the stage
        self.early_polish = problem.objective == "l1"
        self.proximal = int(proximal or 0)  # passes between two recentrings (0: never)
        self.late_gamma = late_gamma  # a proximal run's gamma from a gap of P.LATE_GAP
        self.stage_start = 0
        self.floor = 0.0
        self.primal = self.dual = self.qp_gap = self.neg_bty = np.nan
        self.moved = False  # the iterate changed after the last pass measured it
        self.viol = np.inf
        self.smax = 0.0
        self.last_full = False
        self.last_candidate = None

    @property
    def gamma(self):
        return self.st.gamma

    # -- one iteration
    def measure(self, loop):
        st, problem = self.st, self.problem
        if self.proximal and loop.it > 1 and (loop.it - 1) % self.proximal == 0:
            # after every proximal-th pass, at the start of the next one: a checkpoint
            # holds the state between two iterations, whatever stopped the run
            _regularised.recentre(st)
        bz, self.nnz, vest, self.smax = S.one_pass(st, self.order, self.block, self.bufs,
                                                   self.interleave)
        if st.shift_x is None:
            primal, dual, neg_bty = _regularised.objectives(st, bz)
            gap = _regularised.rel_gap(primal, dual, self.floor)
        else:
            # the recentred QP: its own gap and the last proximal step (both vanish only
            # at an LP solution); the certificate speaks of the implied iterate instead
            primal, dual, gap = P.centred_values(st, bz, self.floor)
            neg_bty = np.nan
        self.primal, self.dual, self.qp_gap, self.neg_bty = primal, dual, gap, neg_bty
        self.moved = False
        self.mem = S.dual_bytes(st, self.bufs)
        if not np.isfinite(primal) or not np.isfinite(dual):
            return Measure(numerical="non-finite objective")
        warm = self.stage < len(self.gammas) - 1  # a continuation warm-up: no stopping test
        full = not warm and ((loop.it % self.check_every == 0)
                             or (vest <= self.tol and gap <= self.gap_tol))
        viol = problem.max_violation(S.packed(st)) if full else vest
        return Measure(primal=primal, dual=dual, qp_gap=gap, violation=viol, full=full,
                       warm=warm)

    def candidate(self, m):
        """The repaired point (dense problems), else the first rounding that holds."""
        if self.repair and self.st.dense:
            x = _repair_test(self.problem, self.st, m.dual, self.tol, self.gap_tol)
            if x is not None:
                return Candidate(x, " (x repaired to exact feasibility)", dict(repaired=True))
        if self.round_digits:
            r, x = _rounding_test(self.problem, self.st, m.dual, self.tol, self.gap_tol,
                                  self.round_digits)
            if r is not None:
                return Candidate(x, f" (x rounded to {r} decimals)", dict(rounded_digits=r))
        return None

    def stage_x(self):
        return S.packed(self.st)

    def certify(self, m, deadline):
        if self.st.shift_x is not None:
            return _certify_implied(self.problem, self.st, deadline)
        return _certify(self.problem, self.st, S.packed(self.st), self.dual, self.neg_bty,
                        deadline)

    def active_rows(self):
        return _active_rows(self.problem, self.st, self.order, self.block)

    def rescale(self, gamma):
        S.rescale(self.st, gamma)
        self.moved = True

    def record(self, m, outcome, loop):
        self.viol, self.last_full = outcome.violation, m.full
        self.last_candidate = outcome.candidate
        return dict(iteration=loop.it, seconds=loop.elapsed(), primal=m.primal, dual=m.dual,
                    gap=outcome.lp_gap, qp_gap=m.qp_gap, max_violation=outcome.violation,
                    full_check=bool(m.full), active_constraints=self.nnz,
                    memory_bytes=self.mem, gamma=self.st.gamma)

    def after(self, m, outcome, loop):
        st, it = self.st, loop.it
        outcome.next_gamma = P.next_gamma(st.gamma, self.late_gamma, outcome)
        if outcome.next_gamma is not None:
            S.rescale(st, outcome.next_gamma)
            self.moved = True
            self.counters["gamma_now"] = outcome.next_gamma
            self.stage_start = it
        scale = max(1.0, float(np.max(np.abs(st.x))))
        stalled = self.smax <= _config.DYKSTRA_STALL_STEP * scale
        if m.warm and (stalled or m.qp_gap <= _config.DYKSTRA_CONTINUATION_GAP
                       or it - self.stage_start >= _config.DYKSTRA_CONTINUATION_PASSES):
            self.stage += 1
            S.rescale(st, self.gammas[self.stage])
            self.moved = True
            self.counters["stage"] = self.stage
            self.stage_start = it
        elif stalled:
            return Status.STALLED, f"no change in pass {it}"
        return None

    def memory_stop(self, max_memory):
        if self.mem > max_memory:
            return f"dual storage exceeds max_memory ({self.mem} bytes)"
        return None

    def between(self, m, loop):
        if self.extrapolate and loop.it % _config.DYKSTRA_EXTRAPOLATE_EVERY == 0:
            self.moved |= bool(S.extrapolate(self.st, m.dual))

    def save(self):
        S.write_checkpoint(self.checkpoint, self.st, self.counters, self.options,
                           self.problem, self.digest)

    # -- the end
    def answer(self, status, loop, lp_stage, final):
        st, problem, history = self.st, self.problem, loop.history
        x_full = S.packed(st)
        if status == Status.OPTIMAL:
            x, viol = lp_stage.x, self.viol
        else:
            x, viol = x_full, self.viol
            if status == Status.INTERRUPTED or not history or not self.last_full:
                viol = problem.max_violation(x)
        suffix = ""
        if self.stage < len(self.gammas) - 1:
            suffix = f" (in the continuation stage gamma = {st.gamma:.6g})"
        primal, dual, neg_bty, qp_gap = self.primal, self.dual, self.neg_bty, self.qp_gap
        if self.moved and st.shift_x is None:
            # since the last pass (a rescale, an extrapolation): its values are stale
            primal, dual, neg_bty = S.current_objectives(st)
            qp_gap = _regularised.rel_gap(primal, dual, self.floor)
        certify = None
        if st.shift_x is not None:
            def certify(until):
                return _certify_implied(problem, st, until)
        elif np.isfinite(dual):
            def certify(until):
                return _certify(problem, st, x_full, dual, neg_bty, until)
        fields = dict(qp_primal=float(primal), qp_dual=float(dual),
                      qp_gap=float(qp_gap), gamma=st.gamma, gammas=list(self.gammas),
                      lam=st.lam, rounded_digits=None, repaired=False,
                      dual_memory_bytes=S.dual_bytes(st, self.bufs))
        if self.last_candidate is not None:
            fields.update(self.last_candidate.fields)
        return Answer(x=x, violation=float(viol), fields=fields, certify=certify,
                      suffix=suffix)


def _active_rows(problem, st, order, block):
    """The constraints holding a positive dual (:class:`.core.polish.ActiveRows`).

    Packed layouts (lexicographic and parallel orders) give none: the polish then
    starts from the separated rows of the iterate.
    """
    from .core.polish import ActiveRows

    if not st.dense:
        z = np.concatenate([st.z_tri, st.z_wed])
        ids = np.flatnonzero(z > 0.0)
        return ActiveRows(family=ids, duals=dict(family=z[ids]))
    if st.idx is None or order != "diagonal":
        return ActiveRows(triangles=np.empty((0, 3), dtype=np.int64))
    from . import _active_kernels as A
    from . import _layouts as L

    n = st.n
    to_packed = np.empty_like(st.idx)
    to_packed[st.idx] = np.arange(st.idx.shape[0])
    off = L.diagonal_offsets(n)
    if st.z_dense is not None:
        tri, z = A.dense_active_triangles(st.z_dense, st.rows, off, to_packed)
    else:
        tri, z = A.sparse_active_triangles(st.tri_pos, st.tri_val,
                                           L.diagonal_rows(n, block), off, to_packed)
    return ActiveRows(triangles=tri, duals=dict(triangles=z))


def _rounding_test(problem, st, dual, tol, gap_tol, digits):
    """Entrywise rounding test (V §5.4): the first ``r`` whose rounded ``x`` is feasible
    within ``tol`` and has QP objective within ``gap_tol`` of ``D(y)``."""
    from . import _triangle_sparse as T

    xp = S.packed(st)
    for r in digits:
        xr = np.round(xp, int(r))
        if st.dense and T.triangle_violation_exceeds(xr, st.n, tol):
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

    xr = repair_dense(problem, S.packed(st))
    if xr is None or problem.max_violation(xr) > tol:
        return None
    if _regularised.rel_gap(_qp_primal_of_packed(st, xr), dual) > gap_tol:
        return None
    return xr


def _qp_primal_of_packed(st, xr):
    """QP objective of a packed point ``xr`` (with the best ``f = |x - d|`` for l1)."""
    g = st.gamma
    xl = np.empty_like(xr)
    if st.idx is not None:
        xl[st.idx] = xr
    else:
        xl[:] = xr
    e = xl if st.delta is None else xl - st.delta
    if st.shift_x is not None:  # the recentred QP (l1)
        cx, cf = _regularised.centre(st)
        ex, ef = xl - cx, np.abs(e) - cf
        quad = _regularised.wdot(st.w, ex, ex) + _regularised.wdot(st.w, ef, ef)
        return _regularised.wdot(st.w, np.abs(e), None) + quad / (2 * g)
    quad = _regularised.wdot(st.w, e, e)
    if st.f is not None:
        quad *= 2.0
        lin = _regularised.wdot(st.w, np.abs(e), None)
    elif st.cost is not None:
        lin = _regularised.wdot(st.cost, xl, None)
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

    f = None if st.f is None else S.packed(st, st.f)
    return certify(problem, RegularisedIterate(
        x_full, f, S.packed(st, st.w), st.gamma, dual, neg_bty, st.lam,
        st.raised), deadline=deadline)


def _certify_implied(problem, st, deadline=None):
    """:func:`_certify` of a recentred run (:func:`._regularised.recentre`): the same
    duals' iterate of the QP centred at the targets (:func:`._regularised.implied_iterate`),
    whose certificate is a bound on the LP whatever the centre."""
    implied = _regularised.implied_state(st)
    _, dual, neg_bty = S.current_objectives(implied)
    return _certify(problem, implied, S.packed(implied), dual, neg_bty, deadline)


# ------------------------------------------------------------------------- the run
def drive(problem, *, gamma, lam, tol, gap_tol, max_iter, time_limit, order, block,
          check_every, round_digits, threads, max_memory, callback, checkpoint,
          checkpoint_every, resume, duals, interleave, extrapolate, repair, continuation,
          polish, gamma_growth, proximal=None, seed=None, verbose=False):
    """Set up and run a dykstra solve (the options of :func:`.dykstra.solve_dykstra`,
    checked; ``seed`` and ``verbose`` are accepted and unused: the method is
    deterministic and the library does not print); the raw answer for
    :func:`.core.result.complete`."""
    entered = time.perf_counter()
    import numba

    order = S.ALIASES.get(order, order)
    if extrapolate or continuation:  # the gamma-growth stages unless proximal is named
        proximal = 0 if proximal is None else proximal
        if proximal:
            raise InvalidParameterError(
                "proximal recentring excludes extrapolate=True and the continuation in "
                "gamma; pass one of them")
    proximal, gamma, gamma_growth, late_gamma = P.resolve(
        problem, proximal, P.DYKSTRA_PASSES, ("dense",), gamma, gamma_growth, P.DYKSTRA_GAMMA,
        P.DYKSTRA_LATE_GAMMA)
    extrapolate = False if proximal else extrapolate
    st = S.setup(problem, gamma, lam, order)
    gammas = S.continuation_gammas(continuation, st)
    n = problem.n
    if block is None:
        block = _config.DYKSTRA_BLOCK if order != "parallel" else min(64, max(8, n // 8))
    block = int(block)
    use_dense = S.dense_duals(duals, order, st.dense, st.n, extrapolate is not False,
                             max_memory)
    if extrapolate and not use_dense:
        raise InvalidParameterError(
            "extrapolate=True needs dense triangle duals (duals='dense' or 'auto' on a "
            "problem small enough for them)")
    extrapolate = use_dense and extrapolate is not False
    if interleave is None:
        interleave = 16 if st.sum_value is not None else 1
    interleave = int(interleave) if order == "diagonal" else 1
    options = dict(order=order, block=block, tol=float(tol), gap_tol=float(gap_tol),
                   gamma=st.gamma, lam=st.lam, interleave=interleave,
                   gammas=[float(g) for g in gammas], proximal=proximal)
    counters = dict(kind=st.kind, n=n, iteration=0, seconds=0.0, stage=0)
    digest = problem_digest(problem) if (checkpoint or resume) is not None else None
    if resume is not None:
        _resume(resume, st, problem, digest, options, counters, gammas)
    stage = counters["stage"]
    if resume is None and len(gammas) > 1:
        S.rescale(st, gammas[0])  # all duals are still 0
    st.gamma = counters.get("gamma_now", gammas[stage])
    bufs = S.work_buffers(st, order, block, use_dense, extrapolate)
    want = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    strategy = DykstraStrategy(
        problem, st, order=order, block=block, bufs=bufs, interleave=interleave,
        gammas=gammas, stage=stage, counters=counters, options=options,
        check_every=check_every, tol=tol, gap_tol=gap_tol, repair=repair,
        round_digits=round_digits, extrapolate=extrapolate, checkpoint=checkpoint,
        digest=digest, proximal=proximal, late_gamma=late_gamma)
    strategy.stage_start = counters["iteration"]
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish,
                       gamma_growth=gamma_growth, threads=want, max_memory=max_memory)
    P.start(lp_stage, counters, proximal, None)
    strategy.floor = lp_stage.floor
    out = iterate(strategy, problem, lp_stage, counters, tol=tol, gap_tol=gap_tol,
                  max_iter=max_iter, time_limit=time_limit, callback=callback, threads=want,
                  checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                  max_memory=max_memory, entered=entered)
    return out


def _resume(path, st, problem, digest, options, counters, gammas):
    """Restore the state and the counters of a checkpoint; refuse other options."""
    meta = S.read_checkpoint(path, st, problem, digest)
    if meta.get("opt_order") != options["order"] or meta.get("opt_block") != options["block"]:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with order={meta.get('opt_order')!r}, "
            f"block={meta.get('opt_block')}; resume with the same options")
    if meta.get("opt_interleave", options["interleave"]) != options["interleave"]:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with interleave="
            f"{meta.get('opt_interleave')}; resume with the same options")
    if "opt_gammas" in meta and meta["opt_gammas"] != options["gammas"]:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with the continuation stages "
            f"gamma={meta['opt_gammas']}; resume with the same options")
    if meta.get("opt_proximal", 0) != options["proximal"]:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with proximal={meta.get('opt_proximal', 0)}; "
            f"resume with the same options")
    counters["iteration"] = int(meta["iteration"])
    counters["seconds"] = float(meta["seconds"])
    counters["history"] = header_history(path, meta)
    counters["stall_watch"] = meta.get("stall_watch")
    counters["stage_gaps"] = meta.get("stage_gaps")
    # a checkpoint without stages holds an iterate of the final gamma
    counters["stage"] = header_field(path, meta, "stage", "count", len(gammas) - 1)
    if counters["stage"] >= len(gammas):
        raise InputError(f"cannot resume from {path}: its header field 'stage' is "
                         f"{counters['stage']}, beyond the {len(gammas)} stages")
    if "gamma_now" in meta:  # an LP stage with a grown gamma (arrays at its scale)
        counters["gamma_now"] = header_field(path, meta, "gamma_now", "positive")
