"""Project and Forget on the support-sized layout of correlation clustering.

The iterate lists the *run's pairs*: the problem's explicit pairs first, then every bulk
pair a violated constraint brought in (:mod:`metricopt.problems.support`). Every other
pair sits at ``x = d = 1``, ``f = 0``, its two duals of ``f >= |x - d|`` equal: the
fixed point of its own rows that the dense run reaches after its first pass, and which
no remembered constraint moves. The QP values, the certificate and the LP objective of
those pairs are 0 (the module docstring of :mod:`metricopt.problems.support`), so the
sums over the run's pairs are those of the whole problem.

One oracle call is the support scan of :mod:`metricopt.problems._support_scan`, in
``O(wedges of the pairs below 1)``: it returns the exact largest violation and every
inequality violated by more than ``0.01 tol``; a bulk pair among their sides joins the
run's pairs at its fixed point. Then the passes of the dense mode
(:func:`._pf_passes.dense_passes`): one over every pair's own rows, then over the
remembered triangles and their pairs only, until they have done the scan's work. The
loop, stages, limits and records are the core's (:mod:`.core.driver`).

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
"""

import dataclasses
import time

import numpy as np

from .._memory import check_memory, format_bytes
from ..exceptions import InputError
from ..problems._support_scan import (
    pair_keys,
    pair_table,
    support_neighbours,
    table_grow,
)
from ..problems.support import SupportPoint
from . import _checkpoint, _regularised
from . import _pf_oracles as O
from . import _proximal as P
from ._pf_checkpoint import (
    read_header,
    read_state,
    read_triangle_list,
    resumed_counters,
    write_checkpoint,
)
from ._pf_passes import pair_pass
from ._pf_strategy import ProjectForgetState, ProjectForgetStrategy
from ._support_kernels import (
    complete_part,
    distinct_sorted,
    keyed_merge,
    list_keys,
    missing_keys,
    positions_part,
    row_keys,
)
from ._support_local import LocalSupportScan
from ._support_polish import SupportSpace
from .core.driver import iterate
from .core.stage import LPStage

_MASK = (1 << 29) - 1

__all__ = ["SupportState", "SupportScanner", "SupportStrategy", "drive_support",
           "estimate_support_memory"]

#: Bytes per run pair: ``x, f, delta, w, winv``, four pair duals, the nodes and the
#: table's two slots (at most half full).
BYTES_PER_PAIR = 8 * 9 + 16 + 2 * 16
#: A bulk pair within this of its fixed point (relative to gamma for ``f`` and the
#: duals) that no remembered constraint names leaves the run (:meth:`SupportState.drop`).
FIXED_POINT_TOL = 1e-13
#: The run pairs are compacted when at least this share of them is idle.
IDLE_SHARE = 0.25
#: Projection passes per oracle call by default. The support scan is cheap, so an oracle
#: call soon beats passes to convergence (the dense mode's schedule, up to 1000 per call):
#: Jaccard cc at tol 1e-2, gap_tol 2e-2 (one thread, machine shared): power 38.1 -> 8.2 s
#: (12 -> 16 calls), ca-GrQc 110 -> 51.6 s (13 -> 22 calls); 300 passes: ca-GrQc 66.4 s;
#: 30 passes: power 125.8 s (36 calls, then the polish).
PASSES = 100
#: Bytes per violated constraint while an oracle call sorts and merges them: the scan's
#: rows and their keys, then (the rows freed, the keys sorted in place) the positions.
ROW_BYTES = 16 + 8 + 12
#: Bytes of a run's peak per explicit pair and per wedge of the target-0 pairs, in the
#: estimate (:func:`estimate_support_memory`).
BYTES_PER_WEDGE = 80


@dataclasses.dataclass(eq=False)
class SupportState(ProjectForgetState):
    """:class:`._pf_strategy.ProjectForgetState` over the run's pairs: their nodes
    ``pi < pj``, the table of their keys and the bulk model of the pairs not listed."""

    pi: np.ndarray = None
    pj: np.ndarray = None
    table: tuple = None
    bulk: object = None
    floor: float = 0.0

    def point(self):
        """The iterate as a :class:`~metricopt.problems.support.SupportPoint` (a copy)."""
        return SupportPoint(self.n, np.stack([self.pi, self.pj], axis=1), self.x.copy(),
                            float(self.bulk.value))

    def grow(self, keys):
        """Add the bulk pairs ``keys`` (new, distinct) at their fixed point: ``x = d = 1``,
        ``f = -gamma`` taken to ``0`` by one pass over their own rows, as in the dense run."""
        k = keys.shape[0]
        if k == 0:
            return
        n = self.n
        pi, pj = keys // n, keys % n
        w0 = self.bulk.pair_weights(pi, pj)
        w = np.maximum(w0, self.floor)
        self.raised += float(np.sum(w - w0))
        one = float(self.bulk.value)
        new = dataclasses.replace(
            self, x=np.full(k, one), f=np.full(k, -self.gamma), delta=np.full(k, one), w=w,
            winv=1.0 / w, z_pair=np.zeros((4, k)), sum_value=None)
        pair_pass(new)
        self.table = table_grow(self.table, keys, self.nvar)
        self.pi = np.concatenate([self.pi, pi])
        self.pj = np.concatenate([self.pj, pj])
        for name in ("x", "f", "delta", "w", "winv"):
            setattr(self, name, np.concatenate([getattr(self, name), getattr(new, name)]))
        if self.shift_x is not None:  # centred at their fixed point (1, 0): no shift
            self.shift_x = np.concatenate([self.shift_x, np.zeros(k)])
            self.shift_f = np.concatenate([self.shift_f, np.zeros(k)])
        self.z_pair = np.concatenate([self.z_pair, new.z_pair], axis=1)
        self.nvar += k

    def idle_grown(self, referenced, n_explicit):
        """Mask of the bulk pairs back at their fixed point (``x = 1``, ``f = 0``, the
        bound rows' duals 0, to round-off) that no remembered constraint names."""
        scale = max(self.gamma, 1.0)
        idle = ~referenced
        idle[:n_explicit] = False
        z = self.z_pair
        if self.shift_x is not None:  # and a recentred QP's centre there
            idle &= (np.abs(self.shift_x) <= FIXED_POINT_TOL) & (
                np.abs(self.shift_f) <= FIXED_POINT_TOL * scale)
        return (idle & (np.abs(self.x - self.bulk.value) <= FIXED_POINT_TOL)
                & (np.abs(self.f) <= FIXED_POINT_TOL * scale)
                & (z[2] <= FIXED_POINT_TOL * scale * self.w)
                & (z[3] <= FIXED_POINT_TOL * scale * self.w))

    def drop(self, mask):
        """Remove the run pairs of ``mask`` (they return to the bulk); the new position of
        every pair, -1 for those removed."""
        keep = ~mask
        new_pos = np.full(self.nvar, -1, dtype=np.int64)
        new_pos[keep] = np.arange(int(keep.sum()))
        for name in ("x", "f", "delta", "w", "winv", "pi", "pj") + (
                () if self.shift_x is None else ("shift_x", "shift_f")):
            setattr(self, name, np.ascontiguousarray(getattr(self, name)[keep]))
        self.z_pair = np.ascontiguousarray(self.z_pair[:, keep])
        self.nvar = int(keep.sum())
        self.table = pair_table(pair_keys(self.pi, self.pj, self.n))
        return new_pos


def setup_support(problem, gamma, lam):
    """The run's state over the problem's explicit pairs (:func:`._regularised.setup`)."""
    from .. import _config

    pairs = problem.pairs
    st = _regularised.setup(problem, gamma, lam, state=SupportState, kind=problem.kind,
                            n=problem.n, nvar=int(pairs.shape[0]), structure="support",
                            layout="support")
    st.pi = np.ascontiguousarray(pairs[:, 0], dtype=np.int64)
    st.pj = np.ascontiguousarray(pairs[:, 1], dtype=np.int64)
    st.table = pair_table(pair_keys(st.pi, st.pj, problem.n))
    st.bulk = problem.bulk
    wmax = float(np.max(problem.weights, initial=0.0))
    st.floor = _config.DYKSTRA_MIN_WEIGHT * max(wmax, 1.0)
    return st


class SupportScanner:
    """The support scan as project-forget's dense oracle: ``(list, worst, found)``.

    ``scan`` runs it: a :class:`._support_local.LocalSupportScan` on this machine's
    threads, or a :class:`._dask_support.DaskSupportScan` on a cluster; both find the
    serial scan's rows in its order.
    """

    def __init__(self, st, add_tol, max_memory, scan, threads=1):
        self.st, self.add_tol, self.max_memory = st, add_tol, max_memory
        self.scan, self.threads = scan, max(1, int(threads))
        self.last_work = 0.0
        self.last_bytes = 0
        self.grown = 0

    def _scan(self, x, active, stop):
        """``(rows, worst)`` of the support scan (None: stopped)."""
        st = self.st
        n, bulk = st.n, float(st.bulk.value)
        csr = support_neighbours(st.pi, st.pj, x, n, bulk)
        held = 8 * st.nvar * 14 + active.nbytes if self.max_memory is not None else 0

        def check(count):
            check_memory(held + ROW_BYTES * count, f"the violated triangles found by the "
                         f"support scan on {n} nodes ({count})", self.max_memory)

        return self.scan(st.pi, st.pj, x, n, bulk, st.table, csr, self.add_tol, check, stop)

    def _positions(self, keys):
        """``ta, tb, tc`` of the rows ``keys`` (sorted, distinct; as
        :func:`._support_kernels.row_positions`), in shares on the run's threads; the bulk
        pairs among their sides join the run first."""
        from .._threads import run_workers

        st, n, r = self.st, self.st.n, keys.shape[0]
        ta, tb, tc = (np.empty(r, dtype=np.int32) for _ in range(3))
        shares = min(max(r // 100_000, 1), 8 * self.threads)
        bounds = np.linspace(0, r, shares + 1).astype(np.int64)
        lacking = run_workers(lambda t: positions_part(
            keys, n, *st.table, bounds[t], bounds[t + 1], ta, tb, tc), shares, self.threads)
        if sum(lacking):  # bulk pairs join the run first
            missing = np.unique(missing_keys(keys, n, ta, tb, tc, sum(lacking)))
            st.grow(missing)
            self.grown += int(missing.size)
        run_workers(lambda t: complete_part(keys, n, *st.table, bounds[t], bounds[t + 1],
                                            ta, tb, tc), shares, self.threads)
        return ta, tb, tc

    def __call__(self, x, active, stop=None):
        st = self.st
        n = st.n
        # the dense mode's pass schedule: passes until they have done a full scan's
        # work (in practice until they converge, or 1000), whatever the scan cost
        self.last_work = n * (n - 1) * (n - 2) / 6
        found = self._scan(x, active, stop)
        if found is None:
            return None
        rows, worst = found
        count = rows.shape[0]
        # the rows as their keys, sorted and distinct (in place: 8 bytes a row once the
        # 16 of the rows are freed), then their pairs' positions
        keys = row_keys(rows, n)
        del rows, found
        keys.sort()
        keys = keys[: distinct_sorted(keys)]
        ta, tb, tc = self._positions(keys)
        ca, cb, cc, cz = active.views()
        ck = list_keys(ca, cb, cc, active.nc, st.pi, st.pj, n)
        ta, tb, tc, tz, m = keyed_merge(ca, cb, cc, cz, ck, active.nc, ta, tb, tc, keys,
                                        keys.shape[0])
        self.last_bytes = int(ROW_BYTES * count + active.nbytes + 20 * m)
        return O.TriangleList(ta, tb, tc, tz, nc=m), float(worst), int(keys.shape[0])


class SupportStrategy(ProjectForgetStrategy):
    """Project-forget's strategy over the run's pairs (module docstring)."""

    scan = None  # the scanner's scan (:class:`SupportScanner`), closed at the end

    def stage_x(self):
        return self.st.point()

    def violation(self, x):
        return max(float(self.problem.max_violation(x)), 0.0)

    def active_rows(self):
        from ._pf_list import MAX_POSITION
        from .core.polish import ActiveRows

        ta, tb, tc, tz = self.active.views()
        keep = tz > 0.0
        side = (tc[keep] >> 29).astype(np.int64)
        a, b, c = (t[keep].astype(np.int64) for t in (ta, tb, tc & (MAX_POSITION - 1)))
        tri = np.where(side[:, None] == 0, np.stack([a, b, c], 1),
                       np.where(side[:, None] == 1, np.stack([b, a, c], 1),
                                np.stack([c, a, b], 1)))
        return ActiveRows(triangles=tri, duals=dict(triangles=tz[keep]),
                          space=SupportSpace(self.problem, self.st))

    def advance(self, m, outcome, loop):
        moved = super().advance(m, outcome, loop)
        if moved and not outcome.done:
            self._shrink()
        return moved

    def _shrink(self):
        """Return the idle bulk pairs to the bulk when they are :data:`IDLE_SHARE` of the
        run pairs or more (memory follows the support, not its history)."""
        st, lst = self.st, self.active
        ta, tb, tc, _ = lst.views()
        referenced = np.zeros(st.nvar, dtype=bool)
        for t in (ta, tb, tc & _MASK):
            referenced[t] = True
        idle = st.idle_grown(referenced, self.problem.pairs.shape[0])
        if idle.sum() < IDLE_SHARE * st.nvar:
            return
        new_pos = st.drop(idle)
        lst.ta[: lst.nc] = new_pos[ta]
        lst.tb[: lst.nc] = new_pos[tb]
        lst.tc[: lst.nc] = new_pos[tc & _MASK] | (tc & ~_MASK)

    def record(self, m, outcome, loop):
        out = super().record(m, outcome, loop)
        out["support_pairs"] = int(self.st.nvar)
        return out

    def save(self):
        st = self.st
        write_checkpoint(self.checkpoint, st, self.active, dict(self.counters, raised=st.raised),
                         self.problem, self.digest, extra=dict(pi=st.pi, pj=st.pj))

    def close(self):
        if self.scan is not None:
            self.scan.close()

    def answer(self, status, loop, lp_stage, final):
        ans = super().answer(status, loop, lp_stage, final)
        ans.fields["support_pairs"] = int(self.st.nvar)
        return ans


def estimate_support_memory(problem):
    """Estimated peak bytes a support-sized run adds: :data:`BYTES_PER_PAIR` per explicit
    pair and :data:`BYTES_PER_WEDGE` per wedge of the pairs with target 0 (the first oracle
    call meets those wedges, and the rows it keeps and the bulk pairs it brings in grow
    with them). Fitted to the measured growth of the peak (``benchmarks/README.md``,
    "Support-sized layout"): 0.8-1.7 times it on ca-CondMat, ca-AstroPh and the 91k-node
    generated graph with Jaccard weights, 0.6-0.8 times with unit weights."""
    pairs = problem.pairs
    zero = np.asarray(problem.target) == 0.0
    deg = np.bincount(pairs[zero].ravel(), minlength=problem.n).astype(np.float64)
    wedges = float(np.sum(deg * (deg - 1.0)) / 2.0)
    k = int(pairs.shape[0])
    return int(BYTES_PER_PAIR * k + BYTES_PER_WEDGE * (k + wedges) + 24 * problem.n)


def drive_support(problem, *, gamma, lam, tol, gap_tol, max_iter, time_limit, passes, threads,
                  max_memory, callback, checkpoint, checkpoint_every, resume, polish,
                  gamma_growth, scheduler, proximal=None, seed=None, verbose=False):
    """Set up and run project-forget on a support-sized problem (the options of
    :func:`.project_forget.solve_project_forget`); the raw answer for
    :func:`.core.result.complete`."""
    entered = time.perf_counter()
    import numba

    nthreads = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    need = estimate_support_memory(problem)
    check_memory(need, f"project-forget on {problem!r}", max_memory)
    proximal, gamma, gamma_growth = P.resolve_project_forget(problem, proximal, gamma,
                                                             gamma_growth)
    st = setup_support(problem, gamma, lam)
    counters = dict(kind=st.kind, n=st.n, nvar=st.nvar, gamma=st.gamma,
                    gamma_start=st.gamma, iteration=0, seconds=0.0)
    digest = _checkpoint.problem_digest(problem) if (checkpoint or resume) is not None \
        else None
    active = O.TriangleList()
    if resume is not None:
        meta, active = read_support_checkpoint(resume, st, problem, digest)
        resumed_counters(counters, meta, resume)
    if scheduler is not None:
        from ._dask_support import DaskSupportScan

        scan = DaskSupportScan(scheduler)
    else:
        scan = LocalSupportScan(nthreads)
    scanner = SupportScanner(st, 0.01 * float(tol), max_memory, scan, nthreads)
    strategy = SupportStrategy(
        problem, st, oracle=None, scanner=scanner, active=active, counters=counters,
        passes=PASSES if passes is None else passes, tol=tol, checkpoint=checkpoint,
        digest=digest, need=need)
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish,
                       gamma_growth=gamma_growth, threads=nthreads, max_memory=max_memory)
    strategy.floor = lp_stage.floor
    strategy.scan = scan
    P.start(lp_stage, counters, proximal, resume, counters.get("proximal"))
    strategy.proximal = proximal
    return iterate(strategy, problem, lp_stage, counters, tol=tol, gap_tol=gap_tol,
                   max_iter=max_iter, time_limit=time_limit, callback=callback,
                   threads=nthreads, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                   max_memory=max_memory, entered=entered)


def read_support_checkpoint(path, st, problem, digest):
    """Restore a support-sized run from a checkpoint: the run pairs (the explicit ones
    first, as :func:`setup_support` lists them, then the bulk pairs that joined, each once),
    their QP arrays and the triangle list; every array is checked against ``problem``.

    The grown pairs' targets and weights are not stored: they are the bulk's
    (:meth:`SupportState.grow`), recomputed here from their nodes.
    """
    meta, data = read_header(path, st, problem, digest)
    n, k = st.n, st.nvar

    def load(name, dtype, **bounds):
        return _checkpoint.state_array(path, data, name, dtype=dtype, **bounds).copy()

    pi, pj = load("pi", np.int64, low=0, high=n), load("pj", np.int64, low=0, high=n)
    if pi.shape != pj.shape or pi.size < k or np.any(pi >= pj) or not (
            np.array_equal(pi[:k], st.pi) and np.array_equal(pj[:k], st.pj)):
        raise InputError(f"cannot resume from {path}: its run pairs 'pi', 'pj' do not start "
                         f"with this problem's {k} explicit pairs, each as i < j")
    keys = pair_keys(pi, pj, n)
    if np.unique(keys).size != keys.size:
        raise InputError(f"cannot resume from {path}: its run pairs repeat a pair")
    st.grow(keys[k:])
    st.raised = _checkpoint.header_field(path, meta, "raised", "seconds")
    read_state(path, data, st)
    return meta, read_triangle_list(path, data, st.nvar)


def memory_text(problem):
    """One line on the estimate, for ``info``."""
    return f"{format_bytes(estimate_support_memory(problem))} (support-sized layout)"
