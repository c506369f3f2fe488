"""Project and Forget as a strategy of the iterative driver (:mod:`.core.driver`).

One iteration is one oracle call (a separation of the constraints the iterate violates,
:mod:`._pf_oracles`) followed by projection passes over the remembered constraints, each
pass forgetting those whose dual is zero (PF Alg. 7). This module holds the iterate's
arrays (:func:`setup`, in the diagonal layout for dense problems), the passes, the
checkpoint and the exact measurements; :class:`ProjectForgetStrategy` ties them to the
shared loop and stages.
"""

import dataclasses
import sys
import time

import numpy as np

from .._memory import check_memory, format_bytes
from ..exceptions import InvalidParameterError
from ..result import Status
from . import _checkpoint, _regularised
from . import _pf_oracles as O
from . import _proximal as P
from ._pf_checkpoint import read_checkpoint, resumed_counters, write_checkpoint
from ._pf_passes import dense_passes, list_passes, pair_pass
from .core.driver import Answer, Candidate, Measure, Strategy, iterate
from .core.stage import LPStage

__all__ = ["ProjectForgetState", "ProjectForgetStrategy", "drive", "setup", "violation_bound",
           "peak_rss"]


# ------------------------------------------------------------------------- setup
@dataclasses.dataclass(eq=False)
class ProjectForgetState(_regularised.QPState):
    """A project-forget run's arrays: the QP's (:class:`._regularised.QPState`), in the
    diagonal layout for dense problems (``layout``; None: problem order). The remembered
    constraints and their duals are the active list's (:mod:`._pf_oracles`)."""

    kind: str = None
    n: int = 0
    nvar: int = 0
    structure: str = None
    layout: str = None


def setup(problem, gamma, lam):
    """Work arrays of the regularised QP (:func:`._regularised.setup`, as ``dykstra``)."""
    return _regularised.setup(problem, gamma, lam, state=ProjectForgetState,
                              kind=problem.kind, n=problem.n, nvar=problem.n_variables,
                              structure=problem.structure)


_LAYOUT_KEYS = ("x", "f", "delta", "w", "winv", "cost")


def setup_layout(problem, gamma, lam):
    """:func:`setup` of a dense problem, every per-pair array built straight in the
    diagonal layout (the mapping is computed on the fly: no index array, no
    problem-order copy). ``winv`` is dropped when there is no sum row: the kernels that
    see every pair form ``1 / w`` a chunk at a time
    (:func:`._constraint_kernels.pair_pass_weights`), the passes over the remembered
    triangles from the gathered ``w`` of their pairs."""
    from ._layouts import packed_to_diagonal

    n = problem.n

    def lay(a):
        a = np.ascontiguousarray(a, dtype=np.float64)
        return packed_to_diagonal(a, n, np.empty_like(a))

    st = _regularised.setup(problem, gamma, lam, lay=lay, state=ProjectForgetState,
                            kind=problem.kind, n=n, nvar=problem.n_variables,
                            structure="dense", layout="diagonal")
    if st.sum_value is None:
        st.winv = None
    return st


def objectives(st, active, with_neg_bty=False):
    """QP primal and dual values of the current iterate (:func:`._regularised.objectives`;
    with ``with_neg_bty`` also ``-b'y``), from the active list's and the pairs' duals."""
    primal, dual, neg_bty = _regularised.objectives(st, active.bz() + _regularised.pair_bz(st))
    return (primal, dual, neg_bty) if with_neg_bty else (primal, dual)


def certify_iterate(problem, st, dual, neg_bty, deadline=None):
    """Certified lower bound on the LP optimum (:func:`metricopt.bounds.certify`) from
    the pair ``(x, z)`` of ``st``. The rows this backend keeps implicitly all have duals
    ``>= 0`` (Hildreth steps) and the forgotten ones a zero dual, so ``y`` is a valid
    multiplier of the full LP.

    ``st`` in problem order, or, for dense l1 problems, in the diagonal layout: that
    certificate is a sum over the pairs in any order, so it runs on the layout's arrays
    (with their targets) and no problem-order copy of the iterate is made.
    """
    from ..bounds import RegularisedIterate, certify

    layout = st.layout is not None
    target = st.delta if layout and problem.objective == "l1" else None
    if layout and target is None:
        st = unlayout(st, "dense", problem.n)
    return certify(problem, RegularisedIterate(
        st.x, st.f, st.w, st.gamma, dual, neg_bty, st.lam, st.raised,
        target), deadline=deadline)


def peak_rss():
    """Peak resident bytes of this process (``ru_maxrss``), or None where unknown (no
    :mod:`resource` module: Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def violation_bound(problem, x):
    """An upper bound on the largest violation of ``x``, O(n_variables): a cycle row
    ``x_e <= sum of the others`` is violated by at most ``max(x) - 2 min(x)`` when
    ``x >= 0`` (else by at most ``max(x) - (n - 1) min(x)``)."""
    if problem.structure == "support":
        lo, hi = x.min_max()
    elif x.size == 0:
        return problem.bound_violation(x)
    else:
        hi, lo = float(x.max()), float(x.min())
    cycle = hi - 2.0 * lo if lo >= 0.0 else hi - (problem.n - 1) * lo
    return max(cycle, problem.bound_violation(x), 0.0)


def violation(problem, x, mode):
    """Exact largest violation of ``x`` (problem order); dense problems through the
    threaded scan of :mod:`._pf_scan` in the diagonal layout."""
    if mode != "dense":
        return max(float(problem.max_violation(x)), 0.0)
    from ..problems._triangles import support_graph
    from ._layouts import packed_to_diagonal
    from ._pf_scan import dense_max_violation

    if support_graph(x, problem.n, 0.0) is not None:  # the support scan is cheaper
        return max(float(problem.max_violation(x)), 0.0)
    xl = packed_to_diagonal(x, problem.n, np.empty_like(x))
    return max(float(dense_max_violation(xl, problem.n)), problem.bound_violation(x), 0.0)


def current_x(st, mode, n):
    """The iterate's ``x`` in problem order (a copy)."""
    from ._layouts import diagonal_to_packed

    if mode == "support":
        return st.point()
    return diagonal_to_packed(st.x, n, np.empty_like(st.x)) if mode == "dense" \
        else st.x.copy()


def unlayout(st, mode, n):
    """A view of ``st`` with the per-pair arrays in problem order (for the certificate)."""
    if mode != "dense":
        return st
    from ._layouts import diagonal_to_packed

    return dataclasses.replace(st, layout=None, **{
        k: diagonal_to_packed(getattr(st, k), n, np.empty_like(getattr(st, k)))
        for k in _LAYOUT_KEYS if getattr(st, k) is not None})


def rescale(st, active, gamma):
    """Move the iterate to the QP with regularisation ``gamma`` (see
    :func:`metricopt.solvers.dykstra._rescale`): every dual, ``x - x0`` and ``f`` scale
    by ``gamma / gamma_old``, which keeps ``x = x0 - W^{-1} A' z`` exact because
    ``x0 = delta + gamma u`` and ``f0 = -gamma`` are affine in ``gamma``."""
    ratio = gamma / st.gamma
    cx, cf = _regularised.centre(st)  # (delta, None) unless recentred
    if cx is None:
        st.x *= ratio
    else:
        st.x[:] = cx + ratio * (st.x - cx)
    if cf is not None:
        st.f[:] = cf + ratio * (st.f - cf)
    elif st.f is not None:
        st.f *= ratio
    st.z_pair *= ratio
    st.z_sum *= ratio
    active.z[: active.nc] *= ratio
    st.gamma = gamma


def active_rows(active, mode, n):
    """The remembered constraints as LP rows (:class:`.core.polish.ActiveRows`)."""
    from .core.polish import ActiveRows

    if mode == "dense":
        from ._pf_list import MAX_POSITION

        ta, tb, tc, tz = active.views()
        keep = tz > 0.0
        ta, tb, tc, tz = ta.astype(np.int64), tb.astype(np.int64), tc.astype(np.int64), tz[keep]
        ta, tb, tc = ta[keep], tb[keep], tc[keep]
        side = tc >> 29
        tc = tc & (MAX_POSITION - 1)
        from ._layouts import diagonal_positions_to_packed

        a, b, c = (diagonal_positions_to_packed(t, n) for t in (ta, tb, tc))
        tri = np.where(side[:, None] == 0, np.stack([a, b, c], 1),
                       np.where(side[:, None] == 1, np.stack([b, a, c], 1),
                                np.stack([c, a, b], 1)))
        return ActiveRows(triangles=tri, duals=dict(triangles=tz))
    k = active.nc
    off, mem, kind, z = active.off[: k + 1], active.mem[: active.nm], active.kind[:k], active.z[:k]
    keep = z > 0.0
    lengths = np.diff(off)
    cyc = np.flatnonzero(keep & (kind == 0))
    wed = np.flatnonzero(keep & (kind == 1))
    new_off = np.r_[0, np.cumsum(lengths[cyc])].astype(np.int64)
    # gather the members of the kept cycles without a Python loop
    members = mem[np.repeat(off[cyc] - new_off[:-1], lengths[cyc]) + np.arange(new_off[-1])]
    wedges = np.stack([mem[off[wed]], mem[off[wed] + 1]], 1) if wed.size else None
    return ActiveRows(cycles=(new_off, members), wedges=wedges,
                      duals=dict(cycles=z[cyc], wedges=z[wed]))


# ------------------------------------------------------------------- the strategy
class ProjectForgetStrategy(Strategy):
    """The state and steps of one project-forget run (see
    :func:`.project_forget.solve_project_forget`)."""

    name = "project-forget"
    unit = "oracle calls"
    floor_checks = 3  # polblogs: 5.5 s a measurement, as much as a call

    def __init__(self, problem, st, *, oracle, scanner, active, counters, passes, tol,
                 checkpoint, digest, need):
        self.problem, self.st, self.mode = problem, st, problem.structure
        self.oracle, self.scanner, self.active = oracle, scanner, active
        self.counters, self.passes, self.tol = counters, passes, tol
        self.checkpoint, self.digest, self.need = checkpoint, digest, need
        self.floor = 0.0
        self.gap_tol = None
        self._paths = None  # sparsest cut's repair by shortest paths applies (lazily known)
        self.viol = self.scan_viol = np.inf
        self.measured = False  # the run ended at the x its last scan measured
        self.found = self.npass = self.mem_bytes = 0
        self.smax_all = self.scan_s = self.scan_work = 0.0
        self.stopping = None  # the loop's, set by :meth:`measure`
        self.proximal = 0  # oracle calls between two recentrings (0: never)

    @property
    def gamma(self):
        return self.st.gamma

    # -- one iteration
    def measure(self, loop):
        st, problem, counters = self.st, self.problem, self.counters
        # a Ctrl-C or the time limit ends the oracle call, which changes nothing and is
        # then dropped
        t0 = time.perf_counter()
        self.stopping = loop.stopping  # asked by the long steps of this iteration
        if self.oracle is not None:
            # the cycle oracle's schedule is part of the state (a resumed run makes the
            # same calls)
            if self.mode == "sparse":
                self.oracle.streak = counters.get("triangle_streak", 0)
                self.oracle.last_worst = counters.get("path_worst")
            got = self.oracle(st.x, stop=loop.stopping)
            if got is None:
                return None
            self.off, self.mem, self.kind, worst, full = got
            if self.mode == "sparse":
                counters["triangle_streak"] = self.oracle.streak
                counters["path_worst"] = self.oracle.last_worst
            self.found = self.off.shape[0] - 1
        else:
            rows = self.active.nc
            got = self.scanner(st.x, self.active, stop=loop.stopping)
            if got is None:
                return None
            self.active, worst, self.found = got
            self.scan_work = O.scan_work(self.scanner.last_work, rows + self.found)
            full = True
        viol = max(worst, problem.bound_violation(st.x))
        self.scan_viol = viol
        self.scan_s = time.perf_counter() - t0
        primal, dual, gap = self._qp_values()
        if not (np.isfinite(primal) and np.isfinite(dual)):
            return Measure(numerical="non-finite objective")
        return Measure(primal=primal, dual=dual, qp_gap=gap, violation=viol, full=full)

    def _qp_values(self):
        """QP primal, dual and relative gap; of a recentred QP (``proximal``) the gap adds
        its last proximal step (both vanish only at an LP solution)."""
        st = self.st
        if st.shift_x is None:
            primal, dual = objectives(st, self.active)
            return primal, dual, _regularised.rel_gap(primal, dual, self.floor)
        return P.centred_values(st, self.active.bz() + _regularised.pair_bz(st), self.floor)

    def _certified(self):
        """``(state, QP dual, -b'y)`` certified (recentred: :func:`._regularised.implied_state`)."""
        st = self.st if self.st.shift_x is None else _regularised.implied_state(self.st)
        return (st, *objectives(st, self.active, with_neg_bty=True)[1:])

    def stage_x(self):
        return current_x(self.st, self.mode, self.problem.n)

    def candidate(self, m):
        """Sparsest cut: the iterate repaired by shortest paths (exactly feasible,
        :func:`._sc_paths.repair_by_paths`) when its QP objective is within ``gap_tol`` of
        the QP dual, as dykstra's metric repair test (the violation of project-forget's
        sparsest-cut iterates can hover above ``tol`` long after the QP gap holds)."""
        if self.proximal:  # the repaired iterate, for the stage to certify
            x = P.repaired(self.problem, m.violation, self.stage_x, self.violation, self.tol,
                           self.mode == "dense", self.stopping)
            return None if x is None else Candidate(x, " (x repaired to exact feasibility)",
                                                    dict(repaired=True))
        if self.mode != "dense" or self.problem.sum_value is None or self.gap_tol is None:
            return None
        from . import _sc_paths
        from ._layouts import packed_to_diagonal
        if self._paths is None:
            self._paths = _sc_paths.applies(self.problem)
        if not self._paths:
            return None
        xr = _sc_paths.repair_by_paths(self.problem, self.stage_x())
        if xr is None or not self.problem.max_violation(xr) <= self.tol:
            return None
        xd = packed_to_diagonal(xr, self.problem.n, np.empty_like(xr))
        primal = _regularised.objectives(self.st, 0.0, x=xd)[0]
        if not _regularised.rel_gap(primal, m.dual, self.floor) <= self.gap_tol:
            return None
        return Candidate(xr, " (x repaired by shortest paths)", dict(repaired=True))

    def certify(self, m, deadline):
        return certify_iterate(self.problem, *self._certified(), deadline)

    def active_rows(self):
        return active_rows(self.active, self.mode, self.problem.n)

    def violation(self, x):
        return violation(self.problem, x, self.mode)

    def rescale(self, gamma):
        rescale(self.st, self.active, gamma)

    def advance(self, m, outcome, loop):
        st, active = self.st, self.active
        if outcome.next_gamma is not None:
            rescale(st, active, outcome.next_gamma)
            self.counters["gamma"] = outcome.next_gamma
            # x moved: the path searches start over far from feasibility
            self.counters["path_worst"] = None
        # a dense run out of time after its scan ends at the x the scan measured (no
        # O(n^3) measurement past the limit); the iteration, which changed no x and no
        # dual, does not count (a checkpoint resumes it)
        self.measured = (not outcome.done and self.oracle is None
                         and outcome.next_gamma is None and loop.deadline is not None
                         and time.perf_counter() >= loop.deadline)
        if self.measured:
            return False
        self.smax_all, self.npass = 0.0, 0
        if not outcome.done:
            if self.proximal and loop.it % self.proximal == 0:
                _regularised.recentre(st)  # the QP's centre moves to the measured iterate
            self._passes(loop, active)
        self.mem_bytes = int(max(self.active.nbytes,
                                 self.scanner.last_bytes if self.oracle is None else 0)
                             + getattr(self.oracle, "last_bytes", 0) + 8 * 12 * st.nvar)
        return True

    def _passes(self, loop, active):
        """The projection passes that follow the oracle call (:mod:`._pf_passes`)."""
        st, passes = self.st, self.passes
        # the support-sized layout recentres per call only: ca-GrQc hovered at violation
        # 0.2-0.4 with PF_PASSES (limit at 240 s, against optimal in 83 s)
        every = P.PF_PASSES if self.proximal and self.problem.structure == "dense" else 0
        if self.oracle is None and st.sum_value is None:
            # every pair's own constraints once, then passes over the remembered
            # triangles and their pairs only
            _, s_pairs = pair_pass(st)
            self.active, self.npass, smax_all = dense_passes(
                st, active, passes if passes is not None else 1000,
                self.scan_work if passes is None else np.inf, loop.deadline, every)
            self.smax_all = max(smax_all, s_pairs)
            return
        if self.oracle is not None:
            active.append(self.off, self.mem, self.kind)
        k = passes if passes is not None else (5 * min(loop.it, 15) if self.oracle is not None
                                               else 1000)
        budget = self.scan_work if passes is None and self.oracle is None else np.inf
        self.npass, smax_all = list_passes(st, active, k, budget, loop.deadline)
        self.smax_all = max(self.smax_all, smax_all)

    def record(self, m, outcome, loop):
        self.viol = outcome.violation
        return dict(
            iteration=loop.it, seconds=loop.elapsed(), primal=m.primal, dual=m.dual,
            gap=outcome.lp_gap, qp_gap=m.qp_gap, max_violation=float(outcome.violation),
            full_check=bool(m.full), gamma=self.st.gamma,
            active_constraints=int(self.active.nc), memory_bytes=self.mem_bytes,
            constraints_found=int(self.found), remembered=int(self.active.nc),
            oracle_seconds=float(self.scan_s), passes=int(self.npass))

    def after(self, m, outcome, loop):
        if self.found == 0 and self.smax_all == 0.0:
            return Status.STALLED, f"no change in iteration {loop.it}"
        return None

    def memory_stop(self, max_memory):
        if self.mem_bytes > max_memory:
            return f"active list exceeds max_memory ({format_bytes(self.mem_bytes)})"
        return None

    def save(self):
        write_checkpoint(self.checkpoint, self.st, self.active, self.counters, self.problem,
                         self.digest)

    def close(self):
        if hasattr(self.oracle, "close"):
            self.oracle.close()

    # -- the end
    def answer(self, status, loop, lp_stage, final):
        st, problem = self.st, self.problem
        self.close()
        # sums over the pairs (any common order: the dense layout's too)
        primal, dual, gap = self._qp_values()
        cst, cdual, neg_bty = self._certified()
        n_active = int(self.active.nc)
        # the answer and the certificate need x, f and the weights only: free the rest
        self.active = self.oracle = self.scanner = None
        st.z_pair = cst.z_pair = None
        suffix, bounded = "", False
        if status == Status.OPTIMAL:
            x, viol = lp_stage.x, self.viol  # measured when the run ended
        else:
            x, viol = current_x(st, self.mode, problem.n), self.scan_viol
            # an interrupted run with a point met within tol returns that point
            # (:meth:`.core.stage.LPStage.answer_at_limit`) unless a cheap bound says the
            # iterate is within tol too: it ends at once
            interrupted = status == Status.INTERRUPTED and lp_stage.feasible_x is not None
            # the exact scan takes about what the last oracle call's scan took (28 s on
            # ca-HepPh's dense layout): past the limit it runs only if it ends by `final`
            if not self.measured and (interrupted or (
                    final is not None and time.perf_counter() + self.scan_s >= final)):
                # past the allowance: no exact scan (O(n^3) dense, shortest paths sparse)
                viol = violation_bound(problem, x)
                # the iterate is the answer only within tol or with no such point met
                bounded = viol <= self.tol or lp_stage.feasible_x is None
            elif not self.measured:
                viol = violation(problem, x, self.mode)
        fields = dict(qp_primal=float(primal), qp_dual=float(dual), qp_gap=float(gap),
                      gamma=st.gamma, lam=st.lam, active_constraints=n_active,
                      memory_estimate=self.need)
        if bounded:
            fields["violation_bounded"] = True
            why = ("the run was interrupted before the exact measurement"
                   if status == Status.INTERRUPTED
                   else "the exact measurement did not fit in the time limit's allowance")
            suffix = f" (max_violation is an upper bound: {why})"
        return Answer(x=x, violation=viol, fields=fields, suffix=suffix,
                      certify=lambda until: certify_iterate(problem, cst, cdual, neg_bty, until))

    def late_fields(self):
        return dict(peak_memory=peak_rss())


# ------------------------------------------------------------------------- the run
def drive(problem, *, gamma, lam, tol, gap_tol, max_iter, time_limit, passes, threads,
          max_memory, callback, checkpoint, checkpoint_every, resume, polish, gamma_growth,
          scheduler, proximal=None, seed=None, verbose=False):
    """Set up and run a project-forget solve (the options of
    :func:`.project_forget.solve_project_forget`, checked; ``seed`` and ``verbose`` are
    accepted and unused); the raw answer for :func:`.core.result.complete`."""
    entered = time.perf_counter()
    import numba

    nthreads = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    need = O.estimate_memory(problem, nthreads)
    check_memory(need, f"project-forget on {problem!r}", max_memory)
    if scheduler is not None and problem.structure != "sparse":
        raise InvalidParameterError(
            f"a scheduler runs the shortest-path oracle of sparse (MET(G)) problems on a "
            f"Dask cluster; this problem is {problem.structure}, whose triangle scans stay "
            f"local (see 'Scale' in benchmarks/README.md)")
    proximal, gamma, gamma_growth = P.resolve_project_forget(problem, proximal, gamma,
                                                             gamma_growth)
    st = setup(problem, gamma, lam) if problem.structure != "dense" \
        else setup_layout(problem, gamma, lam)
    oracle, scanner = _oracles(problem, st, tol, nthreads, max_memory, scheduler)
    counters = dict(kind=st.kind, n=st.n, nvar=st.nvar, gamma=st.gamma,
                    gamma_start=st.gamma, iteration=0, seconds=0.0)
    digest = _checkpoint.problem_digest(problem) if (checkpoint or resume) is not None \
        else None
    if resume is not None:
        meta, active = read_checkpoint(resume, st, problem, digest)
        resumed_counters(counters, meta, resume)
    else:
        active = O.ActiveList() if oracle is not None else O.TriangleList()
    strategy = ProjectForgetStrategy(
        problem, st, oracle=oracle, scanner=scanner, active=active, counters=counters,
        passes=passes, tol=tol, checkpoint=checkpoint, digest=digest, need=need)
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish,
                       gamma_growth=gamma_growth, threads=nthreads, max_memory=max_memory)
    strategy.floor, strategy.gap_tol = lp_stage.floor, gap_tol
    P.start(lp_stage, counters, proximal, resume, counters.get("proximal"))
    strategy.proximal = proximal
    return iterate(strategy, problem, lp_stage, counters, tol=tol, gap_tol=gap_tol,
                   max_iter=max_iter, time_limit=time_limit, callback=callback,
                   threads=nthreads, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                   max_memory=max_memory, entered=entered)


def _oracles(problem, st, tol, nthreads, max_memory, scheduler):
    """``(oracle, scanner)``: the separation of sparse and edge problems, or the dense
    triangle scan (the other None)."""
    add_tol = 0.01 * float(tol)
    if problem.structure == "sparse":
        return O.CycleOracle(problem, nthreads, add_tol, tol, scheduler), None
    if problem.structure == "edges":
        return O.EdgeOracle(problem, add_tol), None
    from ._pf_list import MAX_POSITION
    if st.nvar >= MAX_POSITION:
        raise InvalidParameterError(
            f"project-forget's dense mode handles at most {MAX_POSITION - 1} pairs; this "
            f"problem has {st.nvar} (n = {problem.n})")
    return None, O.DenseOracle(problem.n, 8 * st.nvar * sum(O.dense_pair_arrays(problem)),
                               add_tol, max_memory, nthreads)
