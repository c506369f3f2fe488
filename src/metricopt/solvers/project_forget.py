"""Project and Forget: an active-set Bregman method for metric-constrained QPs.

The backend ``"project-forget"`` (Sonthalia & Gilbert [1]_, Alg. 1-3, App. 8 Alg. 6-7)
minimises the same quadratic regularisation of the LP as the ``dykstra`` backend,
``c'v + (1/2 gamma) (v - delta)' W (v - delta)`` (V §6), but never visits the whole
constraint family. Each outer iteration

1. calls a separation **oracle** that returns violated metric constraints together with
   the exact largest violation of the current ``x``;
2. appends them to a flat **active list** (offsets, variable ids, duals, types: numpy
   arrays grown by doubling, never one Python object per constraint) and makes several
   Hildreth **projection passes** over it (PF §1.3: with the quadratic divergence the
   step is ``c = min(violation / sum(1/w), z)`` in the paper's sign convention), each
   followed by one pass over the per-variable constraints (``f >= |x - d|``, bounds,
   the sparsest-cut sum) whose duals are kept densely and never forgotten;
3. **forgets** the constraints whose dual returned to zero.

Oracles by problem structure:

``"sparse"`` (MET(G): signed ``cc``, ``mn`` from a weighted edge list)
    Two tiers (:class:`_CycleOracle`). First the graph's triangles, listed once (three
    inequalities each): while one is violated by more than ``tol`` their violated
    inequalities are the answer, at most 10 calls in a row. Then path searches: for
    every edge ``e = (a, b)`` a bidirectional Dijkstra with the current ``x`` as
    lengths (negative values count as 0, zero lengths are kept), bounded by ``x_e``
    itself, edges dealt to the threads with per-thread buffers; when
    ``x_e > dist(a, b)`` the cycle ``e`` + path is returned (PF §2.1 returns the same
    cycles from one full Dijkstra per source; two half-radius balls per edge are far
    smaller than one ball per source in a small-world graph,
    :func:`metricopt.problems._cycles.separate_edges`). Far from feasibility (the last
    search found violations above ``10 tol``) a search takes the first path of length
    at most ``x_e / 4`` it meets; then it proves the shortest path, and only such an
    exact call ends a QP stage. Passes per oracle call: ``5 min(t, 15)`` at iteration
    ``t`` (75 from t = 15 on, as PF Alg. 7).
``"edges"`` (``cd``)
    A scan of the problem's explicit triangle and wedge lists.
``"dense"`` (``K_n``: Jaccard ``cc``, dense ``mn``, ``sc``)
    A read-only scan of all triangles in the ``dykstra`` backend's diagonal order and
    pair layout, split over the threads (:mod:`._pf_dense`); it returns the exact
    largest violation and merges every inequality violated by more than
    ``0.01 tol`` into the remembered list (20 bytes per constraint: three int32 pair
    positions, the side in two spare bits, a float64 dual; no duplicates). Then one
    pass over every pair's own constraints, and passes over the remembered list and
    the pairs it touches only (gathered into contiguous arrays), forgetting after each,
    until a pass changes no dual (relative ``1e-13``), 1000 passes, or until the passes
    have done as much work as the scan (``sc``, whose sum constraint couples all pairs,
    passes over all pairs). Work is counted in operations, never measured by the clock
    (:func:`_scan_work`, :func:`_pass_work`), so a run repeats exactly on any machine,
    load and thread count.
    The remembered list holds only constraints whose dual stayed positive, so it is
    small: about 1.5e5 constraints (3 MB) at convergence on ca-GrQc (n = 4158).
    PF Alg. 6 projects while it scans; a serial projecting scan in this order was
    measured at 37 CPU seconds per scan on ca-GrQc with violation 0.225 left after
    three scans, while the read-only scan runs on all threads and, with the passes
    converged in between, reaches violation 0.01 in 7 scans (``benchmarks/README.md``).

Stopping: a QP stage ends when the oracle's exact violation is at most ``tol`` and the
relative QP primal-dual gap at most ``gap_tol``; the run is ``optimal`` when the
certified LP gap is at most ``gap_tol`` too (:mod:`._core`: certificate, then the LP
polish on the remembered constraints, then a larger ``gamma``).
The default ``tol = 1e-4`` is tighter than the 0.01 of the papers' benchmarks (PF §4.2,
App. 8), which the benchmarks pass explicitly.

Certified lower bound on the LP optimum (``lower_bound``): the best of the dual bound
``(D(y) - offset) / (1 + A)`` (V §6) and V Thm 5 / Cor 6 at a self-certified budget,
both computed by :mod:`metricopt.bounds` from the same full-precision pair ``(x, z)``
at the end of the run, as in the ``dykstra`` backend (see :func:`_certify`, which also
states why the Thm 5 box is valid for MET(G)). On ca-GrQc (Jaccard ``cc``,
``gamma = 1``) it certifies ``fun / lower_bound = 1.11``.

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
.. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
.. [3] Hildreth, C. (1957). A quadratic programming procedure. Naval Res. Logist. Q.
       4(1), 79-85.
"""

import contextlib
import sys
import time
import warnings

import numpy as np

from .._memory import check_memory, format_bytes
from ..exceptions import ConvergenceWarning, InputError, InvalidParameterError
from ..result import Status
from ._base import Solver
from ._checkpoint import (header_field, header_history, problem_digest, read_checkpoint,
                          state_array, write_checkpoint)
from . import _regularised
from ._core import IterationLoop, LPStage, check_options

__all__ = ["ProjectForgetSolver", "solve_project_forget"]


# ------------------------------------------------------------------- active list
class _ActiveList:
    """Flat growable list of constraints: offsets, variable ids, types and duals."""

    def __init__(self, cap_c=1024, cap_m=4096):
        self.off = np.zeros(cap_c + 1, dtype=np.int64)
        self.mem = np.empty(cap_m, dtype=np.int64)
        self.kind = np.empty(cap_c, dtype=np.uint8)
        self.z = np.empty(cap_c, dtype=np.float64)
        self.nc = 0
        self.nm = 0

    def _reserve(self, nc, nm):
        if nc > self.z.shape[0]:
            cap = max(nc, 2 * self.z.shape[0])
            off = np.zeros(cap + 1, dtype=np.int64)
            off[: self.nc + 1] = self.off[: self.nc + 1]
            kind = np.empty(cap, dtype=np.uint8)
            kind[: self.nc] = self.kind[: self.nc]
            z = np.empty(cap)
            z[: self.nc] = self.z[: self.nc]
            self.off, self.kind, self.z = off, kind, z
        if nm > self.mem.shape[0]:
            mem = np.empty(max(nm, 2 * self.mem.shape[0]), dtype=np.int64)
            mem[: self.nm] = self.mem[: self.nm]
            self.mem = mem

    def append(self, off, mem, kind, z=None):
        """Append constraints given as a flat list (duals zero unless ``z``)."""
        k = off.shape[0] - 1
        if k <= 0:
            return
        nm = int(off[-1] - off[0])
        self._reserve(self.nc + k, self.nm + nm)
        self.mem[self.nm: self.nm + nm] = mem[off[0]: off[-1]]
        self.off[self.nc + 1: self.nc + k + 1] = off[1:] - off[0] + self.nm
        self.kind[self.nc: self.nc + k] = kind
        self.z[self.nc: self.nc + k] = 0.0 if z is None else z
        self.nc += k
        self.nm += nm

    def project(self, x, winv):
        from . import _pf_kernels as K

        return K.project_active(x, winv, self.off, self.mem, self.kind, self.z, self.nc)

    def forget(self):
        from . import _pf_kernels as K

        self.nc, self.nm = (int(v) for v in K.forget_inactive(
            self.off, self.mem, self.kind, self.z, self.nc))

    def bz(self):
        """``sum_t b_t z_t`` over the list (covering constraints have ``b = -1``)."""
        if self.nc == 0:
            return 0.0
        return -float(self.z[: self.nc][self.kind[: self.nc] == 1].sum())

    @property
    def nbytes(self):
        return int(self.off.nbytes + self.mem.nbytes + self.kind.nbytes + self.z.nbytes)

    def arrays(self):
        return dict(act_off=self.off[: self.nc + 1].copy(), act_mem=self.mem[: self.nm].copy(),
                    act_kind=self.kind[: self.nc].copy(), act_z=self.z[: self.nc].copy())

    @classmethod
    def from_arrays(cls, off, mem, kind, z):
        lst = cls(max(1024, kind.shape[0]), max(4096, mem.shape[0]))
        lst.append(off, mem, kind, z)
        return lst


# ------------------------------------------------------------------------- setup
def _setup(problem, gamma, lam):
    """Work arrays of the regularised QP (:func:`._regularised.setup`, as ``dykstra``)."""
    st = dict(kind=problem.kind, n=problem.n, nvar=problem.n_variables,
              structure=problem.structure)
    st.update(_regularised.setup(problem, gamma, lam))
    return st


_LAYOUT_KEYS = ("x", "f", "delta", "w", "winv", "cost")


def _setup_layout(problem, gamma, lam):
    """:func:`_setup` of a dense problem, every per-pair array built straight in the
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

    st = dict(kind=problem.kind, n=n, nvar=problem.n_variables, structure="dense")
    st.update(_regularised.setup(problem, gamma, lam, lay=lay))
    if st["sum_value"] is None:
        st["winv"] = None
    st["layout"] = "diagonal"
    return st


def _pair_pass(st):
    """One pass over the per-variable constraints (dense duals, never forgotten)."""
    from ._constraint_kernels import pair_pass, sum_step

    from ._constraint_kernels import pair_pass_weights

    x, f = st["x"], st["f"]
    step, scale = (pair_pass, st["winv"]) if st["winv"] is not None \
        else (pair_pass_weights, st["w"])
    _, _, vmax, smax = step(
        x, scale, f if f is not None else x,
        st["delta"] if st["delta"] is not None else x, st["z_pair"], st["lower"],
        st["upper"], f is not None, st["has_lower"], st["has_upper"])
    if st["sum_value"] is not None:
        st["z_sum"], a, m = sum_step(x, st["winv"], st["z_sum"], float(st["sum_value"]))
        vmax, smax = max(vmax, a), max(smax, m)
    return float(vmax), float(smax)


def _objectives(st, active, with_neg_bty=False):
    """QP primal and dual values of the current iterate (:func:`._regularised.objectives`;
    with ``with_neg_bty`` also ``-b'y``), from the active list's and the pairs' duals."""
    primal, dual, neg_bty = _regularised.objectives(st, active.bz() + _regularised.pair_bz(st))
    return (primal, dual, neg_bty) if with_neg_bty else (primal, dual)


def _certify(problem, st, dual, neg_bty, deadline=None):
    """Certified lower bound on the LP optimum (:func:`metricopt.bounds.certify`) from
    the pair ``(x, z)`` of ``st``. The rows this backend keeps implicitly all have duals
    ``>= 0`` (Hildreth steps) and the forgotten ones a zero dual, so ``y`` is a valid
    multiplier of the full LP.

    ``st`` in problem order, or, for dense l1 problems, in the diagonal layout: that
    certificate is a sum over the pairs in any order, so it runs on the layout's arrays
    (with their targets) and no problem-order copy of the iterate is made.
    """
    from ..bounds import RegularisedIterate, certify

    layout = "layout" in st
    target = st["delta"] if layout and problem.objective == "l1" else None
    if layout and target is None:
        st = _unlayout(st, "dense", problem.n)
    return certify(problem, RegularisedIterate(
        st["x"], st["f"], st["w"], st["gamma"], dual, neg_bty, st.get("lam"), st["raised"],
        target), deadline=deadline)


# ----------------------------------------------------------------------- oracles
class _CycleOracle:
    """Separation of MET(G) in two tiers: the graph's triangles, then paths.

    Each call first scans the graph's triangles (an explicit list, three inequalities
    each: :func:`._pf_kernels.edge_oracle`). While some triangle is violated by more
    than ``tol`` their violated inequalities are the answer (not a full check: the
    cycle inequalities of longer cycles were not looked at), at most
    :attr:`MAX_STREAK` calls in a row. Otherwise one bounded bidirectional search per
    edge runs (:func:`metricopt.problems._cycles.separate_edges`): while the last such
    call found violations above ``EXACT_BELOW * tol`` each search takes the first path
    it meets that is short enough (at most ``ACCEPT * x_e``: not a full check); after
    that the searches prove shortest paths, and their largest violation is the exact
    one. The triangles are cheap and short cycles are what the LP's solution rests on;
    far from feasibility, when the positive edges are near 0, the shortest paths are
    long chains of near-zero edges (57-96 edges on average on a 20,000-node signed
    graph), costly to prove shortest.

    The triangle streak and the last path search's violation are part of the run's
    state (``counters``: a resumed run makes the same calls).

    With ``scheduler`` the searches are run on a Dask cluster
    (:class:`._dask_oracle.DaskCycleSearch`); the cycles are the same either way.
    """

    #: Triangle-only calls in a row before the path searches run anyway.
    MAX_STREAK = 10
    #: The path searches are exact (a full check) once the last of them found no
    #: violation above ``EXACT_BELOW * tol``; before, each search takes the first path
    #: of length at most ``ACCEPT * x_e`` it meets
    #: (:func:`metricopt.problems._cycles.separate_edges`).
    EXACT_BELOW = 10.0
    ACCEPT = 0.25

    def __init__(self, problem, threads, add_tol, tol, scheduler=None):
        from ..problems._wedges import csr_triangles
        from ._cycle_search import CycleGraph

        self.graph = CycleGraph.from_problem(problem)
        g = self.graph
        self.triangles = csr_triangles(problem.n, g.indptr, g.nbrs, g.eids,
                                       MAX_TRIANGLES_PER_EDGE * max(g.pairs.shape[0], 1))
        self.no_wedges = np.empty((0, 2), dtype=np.int64)
        self.threads = threads
        self.add_tol = add_tol
        self.tol = tol
        self.streak = 0
        self.last_worst = None
        self.cap = max(4096, 4 * self.graph.pairs.shape[0] // max(threads, 1))
        self.remote = None
        if scheduler is not None:
            from ._dask_oracle import DaskCycleSearch

            self.remote = DaskCycleSearch(self.graph, scheduler)

    def __call__(self, x, stop=None):
        """``(off, mem, kind, worst, full)``: the cycles found, their largest violation,
        and whether it is the exact largest violation of any cycle inequality.

        ``stop`` (callable or None) is asked between the parts of a local path search
        (:func:`._cycle_search.search_cycles_until`) and while a cluster's shares run;
        a search it ends returns None and leaves the schedule's state as it was (the
        call is dropped).
        """
        from . import _pf_kernels as K
        from ._cycle_search import canonical_cycles, search_cycles_until

        off, mem, kind, worst = K.edge_oracle(x, self.triangles, self.no_wedges, self.add_tol)
        self.last_bytes = int(self.triangles.nbytes + off.nbytes + mem.nbytes)
        if worst > self.tol and self.streak < self.MAX_STREAK:  # never without triangles
            self.streak += 1
            return off, mem, kind, float(worst), False
        self.streak = 0
        exact = self.last_worst is not None and self.last_worst <= self.EXACT_BELOW * self.tol
        accept = 0.0 if exact else self.ACCEPT
        if self.remote is not None:
            got = self.remote(x, self.add_tol, accept, stop=stop)
            if got is None:
                return None
            off, mem, worst = got
            self.last_bytes = self.remote.last_bytes
        else:
            off, mem, worst, self.cap, self.last_bytes, complete = search_cycles_until(
                self.graph, x, self.add_tol, self.threads, self.cap, accept=accept,
                stop=stop)
            if not complete:
                return None
        self.last_worst = worst
        off, mem = canonical_cycles(off, mem)
        k = off.shape[0] - 1
        return off, mem, np.zeros(k, dtype=np.uint8), worst, exact

    def close(self):
        """Release the cluster connection, if any."""
        if self.remote is not None:
            self.remote.close()


class _EdgeOracle:
    """Scan of the explicit triangle and wedge lists (cluster deletion)."""

    def __init__(self, problem, add_tol):
        self.tri = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
        self.wed = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
        self.add_tol = add_tol
        self.last_bytes = 0

    def __call__(self, x, stop=None):
        """As :meth:`_CycleOracle.__call__`; one scan, ``stop`` is not asked."""
        from . import _pf_kernels as K

        off, mem, kind, worst = K.edge_oracle(x, self.tri, self.wed, self.add_tol)
        return off, mem, kind, float(worst), True


class _TriangleList:
    """Remembered triangle inequalities of the dense mode (:mod:`._pf_dense` layout).

    Four parallel arrays ``ta, tb, tc`` (int32) and ``z`` (float64) in visiting order,
    20 bytes per constraint; the same interface as :class:`_ActiveList`.
    """

    def __init__(self, ta=None, tb=None, tc=None, z=None, nc=0):
        if ta is None:
            ta = tb = tc = np.empty(0, dtype=np.int32)
            z = np.empty(0)
        self.ta, self.tb, self.tc, self.z = ta, tb, tc, z
        self.nc = int(nc)

    def project(self, x, winv):
        from ._pf_list import dense_project

        vmax, smax = dense_project(x, winv, self.ta, self.tb, self.tc, self.z, self.nc)
        return vmax, smax, self.nc

    def forget(self):
        from ._pf_list import dense_forget

        self.nc = int(dense_forget(self.ta, self.tb, self.tc, self.z, self.nc))

    def bz(self):
        """``sum_t b_t z_t``: triangle rows have ``b = 0``."""
        return 0.0

    def views(self):
        k = self.nc
        return self.ta[:k], self.tb[:k], self.tc[:k], self.z[:k]

    @property
    def nbytes(self):
        return int(self.ta.nbytes + self.tb.nbytes + self.tc.nbytes + self.z.nbytes)

    def arrays(self):
        return dict(zip(("tri_a", "tri_b", "tri_c", "tri_z"), (a.copy() for a in self.views())))

    @classmethod
    def from_arrays(cls, ta, tb, tc, z):
        return cls(*(np.ascontiguousarray(a) for a in (ta, tb, tc, z)), nc=z.shape[0])


class _DenseOracle:
    """PF Alg. 6 oracle on ``K_n``: a read-only scan (:func:`._pf_dense.dense_detect`)
    on ``threads`` threads that returns the exact largest violation and merges every
    inequality violated by more than ``add_tol`` into the remembered list.

    Output rows grow by doubling; every growth is checked against ``max_memory``
    (the estimate in the error counts the rows, the remembered list and the per-pair
    arrays) or, without it, the new rows against the memory available now.
    """

    def __init__(self, n, fixed, add_tol, max_memory, threads, block=16):
        from ._pf_scan import diagonal_offsets, scan_rows

        self.n, self.add_tol, self.max_memory, self.block = n, add_tol, max_memory, block
        self.threads = max(1, int(threads))
        self.off = diagonal_offsets(n)
        self.rows = scan_rows(n, block, self.threads)
        self.cap = 3 * block * n + 1024
        self.fixed = int(fixed)  # bytes held by the run besides the lists
        self.last_bytes = 0
        self.last_work = 0.0  # triplets the last scan visited (for the pass schedule)

    def __call__(self, x, active, stop=None):
        """``(active, worst, found)``: the list merged with the violated triangles found,
        their largest violation and count; None when ``stop()`` ended a full scan
        (:func:`full_scan`; the list is then untouched)."""
        from ._pf_list import dense_merge, support_layout

        support = support_layout(x, self.off, self.n)
        if support is None:
            got = self._full_scan(x, active, stop)
            if got is None:
                return None
            found, worst = got
        else:
            found, worst = self._support_scan(x, active, support)
        # the pass schedule counts the full scan's triplets either way (variant c)
        self.last_work = self.n * (self.n - 1) * (self.n - 2) / 6
        k = int(found[0].shape[0])
        self.last_bytes = int(sum(o.nbytes for o in found) + active.nbytes
                              + 20 * (active.nc + k))
        ca, cb, cc, cz = active.views()
        ta, tb, tc, tz, m = dense_merge(ca, cb, cc, cz, active.nc, found[0], found[1],
                                        found[2], k, self.off, self.n, self.block)
        return _TriangleList(ta, tb, tc, tz, nc=m), worst, k

    def _support_scan(self, x, active, support):
        """Violated constraints by the support scan (:func:`._pf_dense.support_detect`),
        sorted into the visiting order; ``(found, worst)``."""
        from ._pf_list import support_detect, visit_keys

        data = support[:-1]
        none = np.empty(0, dtype=np.int32)
        k, worst = support_detect(x, self.off, self.n, self.add_tol, *data, none, none, none)
        held = self.fixed + active.nbytes if self.max_memory is not None else 0
        check_memory(held + 20 * k, f"the violated triangles found by project-forget's "
                                    f"dense oracle on {self.n} nodes ({k})", self.max_memory)
        outs = [np.empty(k, dtype=np.int32) for _ in range(3)]
        support_detect(x, self.off, self.n, self.add_tol, *data, *outs)
        order = np.argsort(visit_keys(*outs, self.off, self.n, self.block), kind="stable")
        return [o[order] for o in outs], float(worst)

    def _full_scan(self, x, active, stop=None):
        """Violated constraints by the threaded full scan (:func:`full_scan`), in the
        visiting order; ``(found, worst)``, or None when ``stop`` ended it. Every
        growth of the output rows is checked: with a max_memory the whole run counts;
        without, the new rows are compared with what the machine has free now (the rest
        is allocated already)."""
        T = self.threads

        def check(cap, so_far):
            held = self.fixed + active.nbytes + 12 * T * cap // 2 \
                if self.max_memory is not None else 0
            check_memory(held + 12 * T * cap,
                         f"the violated triangles found by project-forget's dense oracle on "
                         f"{self.n} nodes ({so_far} so far)", self.max_memory)

        got = full_scan(x, self.n, self.add_tol, self.rows, cap=self.cap, block=self.block,
                        before_growth=check, stop=stop)
        if got is None:
            return None
        found, worst, _, _, self.cap = got
        return found, worst


#: A full scan asked to ``stop`` runs in parts of about this many triplets per worker
#: (0.7 s unpruned at SCAN_NS_PER_TRIPLET; each part starts and joins the scan's threads,
#: which a loaded machine can delay by a scheduler slice, so parts are sized by work).
SCAN_PART_TRIPLETS = 250_000_000


def full_scan(x, n, add_tol, rows, *, chunk=None, cap=None, block=16, before_growth=None,
              stop=None):
    """:func:`._pf_dense.dense_detect` run to the end: a worker whose output row is full
    stops, the rows double (what was found is kept), and the scan resumes.

    With ``stop`` (a callable) each worker's rows are scanned in consecutive parts of
    about :data:`SCAN_PART_TRIPLETS` triplets and ``stop()`` is asked after each; when
    true the scan ends and None is returned. The parts change nothing else: a worker
    appends its rows' finds in row order whatever its parts, and the pruning is exact.

    Parameters
    ----------
    x : ndarray
        Diagonal layout.
    n : int
    add_tol : float
    rows : tuple
        :func:`._pf_dense.scan_rows` for ``block`` and the number of workers.
    chunk : int or None
        Pruning chunk (default :data:`._pf_dense.CHUNK`; 0: no pruning).
    cap : int or None
        Starting length of each worker's output row (default ``3 block n + 1024``).
    before_growth : callable or None
        ``before_growth(new_cap, found_so_far)`` before the rows grow (a memory check).
    stop : callable or None

    Returns
    -------
    found : list of three int32 arrays
        The constraints in visiting order (the list layout of :mod:`._pf_dense`).
    worst : float
    skipped, stretches : int
        Stretches skipped by the pruning, and met.
    cap : int
        The final row length (a good start for the next scan).
    """
    from ._pf_scan import CHUNK, chunk_extremes, dense_detect, diagonal_offsets

    chunk = CHUNK if chunk is None else int(chunk)
    row_sb, row_s2, starts = rows
    T = starts.shape[0] - 1
    cap = 3 * block * n + 1024 if cap is None else int(cap)
    off = diagonal_offsets(n)
    # block bounds: skip what cannot violate
    lo, hi = chunk_extremes(x, n, chunk) if chunk > 0 else (np.empty(0), np.empty(0))
    pos = starts[:-1].copy()
    count = np.zeros(T, dtype=np.int64)
    worst = np.zeros(T)
    outs = [np.empty((T, cap), dtype=np.int32) for _ in range(3)]
    skipped = met = 0
    # each call scans worker t's rows pos[t] .. ends[t + 1] - 1
    per_row = n * (n - 1) * (n - 2) / 6 / max(row_sb.shape[0], 1)
    step = max(1, int(SCAN_PART_TRIPLETS / max(per_row, 1.0))) if stop is not None \
        else row_sb.shape[0] + 1
    ends = starts.copy()
    while True:
        np.minimum(starts[1:], pos + step, out=ends[1:])
        s, m = dense_detect(x, off, n, block, add_tol, row_sb, row_s2, ends, pos,
                            outs[0], outs[1], outs[2], count, worst, lo, hi, chunk)
        skipped, met = skipped + s, met + m
        if np.all(pos >= starts[1:]):
            break
        if np.all(pos >= ends[1:]):  # a part done, no row full
            if stop():
                return None
            continue
        if stop is not None and stop():
            return None
        cap *= 2  # a worker ran full: larger rows, keep what was found
        if before_growth is not None:
            before_growth(cap, int(count.sum()))
        new = [np.empty((T, cap), dtype=np.int32) for _ in range(3)]
        for a, b in zip(new, outs):
            for t in range(T):
                a[t, : count[t]] = b[t, : count[t]]
        outs = new
    found = [np.concatenate([o[t, : count[t]] for t in range(T)]) for o in outs]
    return found, float(worst.max(initial=0.0)), int(skipped), int(met), cap


_PAIR_KEYS = ("x", "winv", "f", "delta")

# Relative cost of the dense oracle and of a projection pass, in nanoseconds of one
# thread of the reference machine (2-core Xeon, ``benchmarks/pf_pass_costs.py``). They
# only set how many passes follow a scan, so that passes and scans take comparable
# time; the clock never does (a schedule must not depend on the machine's load).
SCAN_NS_PER_TRIPLET = 2.8  # dense_detect, per triplet of K_n
MERGE_NS_PER_ROW = 40.0  # dense_merge, per remembered or found constraint
PASS_NS_PER_TRIANGLE = 11.0  # one Hildreth step and its forget test
PASS_NS_PER_PAIR = 2.0  # one pass over a pair's own constraints


def _scan_work(triplets, rows):
    """Work of one dense oracle call that visits ``triplets`` triplets (all of ``K_n``
    for the full scan, the wedges for the support scan) and merges ``rows``
    constraints."""
    return SCAN_NS_PER_TRIPLET * triplets + MERGE_NS_PER_ROW * rows


def _pass_work(triangles, pairs):
    """Work of one projection pass over ``triangles`` listed constraints and ``pairs``."""
    return PASS_NS_PER_TRIANGLE * triangles + PASS_NS_PER_PAIR * pairs


def _dense_passes(st, active, k_max, budget, deadline):
    """Projection passes over the remembered triangles and their pairs only.

    The pairs that occur in the list are gathered into contiguous arrays
    (:func:`._pf_dense.localise`); each pass projects the list, then the per-pair
    constraints of those pairs, then forgets. The other pairs' constraints do not
    interact with the list; they get one pass per outer iteration (the caller's full
    pair pass). Stops after ``k_max`` passes, once the passes' work
    (:func:`_pass_work`) reaches ``budget`` (at least 2 passes), at ``deadline``, or
    when a pass changes no dual by more than ``1e-13`` (relative).

    Returns ``(active, passes, smax)``.
    """
    from ._pf_list import globalise, localise

    if active.nc == 0:
        return active, 0, 0.0
    used, la, lb, lc = localise(active.ta, active.tb, active.tc, active.nc, st["nvar"])
    sub = {k: (None if st[k] is None else st[k][used]) for k in _PAIR_KEYS}
    if sub["winv"] is None:
        sub["winv"] = 1.0 / st["w"][used]
    sub["z_pair"] = np.ascontiguousarray(st["z_pair"][:, used])
    for k in ("lower", "upper", "has_lower", "has_upper"):
        sub[k] = st[k]
    sub["sum_value"] = None
    lst = _TriangleList(la, lb, lc, active.z[: active.nc].copy(), active.nc)
    scale = max(1.0, float(np.max(np.abs(sub["x"]))))
    smax_all = 0.0
    work = 0.0
    p = 0
    while p < k_max:
        work += _pass_work(lst.nc, used.shape[0])
        _, smax, _ = lst.project(sub["x"], sub["winv"])
        _, s2 = _pair_pass(sub)
        lst.forget()
        p += 1
        smax_all = max(smax_all, smax, s2)
        if max(smax, s2) <= 1e-13 * scale:
            break
        if (deadline is not None and time.perf_counter() >= deadline) or \
                (p >= 2 and work >= budget):
            break
    st["x"][used] = sub["x"]
    if st["f"] is not None:
        st["f"][used] = sub["f"]
    st["z_pair"][:, used] = sub["z_pair"]
    ta, tb, tc = globalise(used, lst.ta, lst.tb, lst.tc, lst.nc)
    return _TriangleList(ta, tb, tc, lst.z[: lst.nc].copy(), lst.nc), p, smax_all


# ------------------------------------------------------------ checkpoint / resume
def _write_checkpoint(path, st, active, counters, problem, digest):
    """Write the whole iteration state (:mod:`metricopt.solvers._checkpoint`)."""
    arrays = dict(x=st["x"], z_pair=st["z_pair"], z_sum=np.array(st["z_sum"]), f=st["f"])
    arrays.update(active.arrays())
    return write_checkpoint(path, backend="project-forget", problem=problem, digest=digest,
                            meta=counters, arrays=arrays)


def _read_checkpoint(path, st, problem, digest):
    """Restore ``st`` and the active list from a checkpoint; every array is checked
    against this problem (:func:`._checkpoint.state_array`), so a damaged or partial
    file is refused."""
    from ._pf_list import MAX_POSITION

    meta, data = read_checkpoint(path, backend="project-forget", problem=problem,
                                 digest=digest)
    first = header_field(path, meta, "gamma_start", "positive",
                         meta.get("gamma") if "gamma" in meta else None)
    if first != st["gamma"]:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with gamma={first}; resume with the same gamma")
    # an LP stage may have grown gamma: the arrays are at its scale
    st["gamma"] = header_field(path, meta, "gamma", "positive")
    header_field(path, meta, "triangle_streak", "count", 0)
    worst = meta.get("path_worst")  # the cycle search's last answer (may be -inf)
    if worst is not None and (not isinstance(worst, (int, float)) or isinstance(worst, bool)
                              or worst != worst):
        raise InputError(f"cannot resume from {path}: its header field 'path_worst' is "
                         f"{worst!r}, not a number or null")

    def load(name, shape=None, dtype=np.float64, **bounds):
        return state_array(path, data, name, dtype=dtype, shape=shape, **bounds).copy()

    nvar = st["x"].shape[0]
    st["x"] = load("x", st["x"].shape)
    st["z_pair"] = load("z_pair", st["z_pair"].shape)
    st["z_sum"] = float(load("z_sum", ()))
    if st["f"] is not None:
        st["f"] = load("f", st["f"].shape)
    if problem.structure == "dense":
        ta = load("tri_a", dtype=np.int32, low=0, high=nvar)
        tb = load("tri_b", ta.shape, np.int32, low=0, high=nvar)
        tc = load("tri_c", ta.shape, np.int32, low=0, high=3 * MAX_POSITION)
        if tc.size and (tc & (MAX_POSITION - 1)).max() >= nvar:
            raise InputError(f"cannot resume from {path}: its array 'tri_c' holds "
                             f"positions outside [0, {nvar})")
        active = _TriangleList.from_arrays(ta, tb, tc, load("tri_z", ta.shape))
    else:
        kind = load("act_kind", dtype=np.uint8, low=0, high=2)
        off = load("act_off", (kind.shape[0] + 1,), np.int64, low=0)
        mem = load("act_mem", dtype=np.int64, low=0, high=nvar)
        if off[0] != 0 or off[-1] != mem.shape[0] or np.any(np.diff(off) < 1):
            raise InputError(f"cannot resume from {path}: its array 'act_off' does not "
                             f"delimit the constraints' members")
        active = _ActiveList.from_arrays(off, mem, kind, load("act_z", kind.shape))
    return meta, active


# ------------------------------------------------------------------------ memory
#: Remembered triangles of a dense run per ``n^2``, in the estimate (twice: a merge
#: holds the old and the new list). Measured at gamma = 1 and 10, Jaccard cc: ca-GrQc
#: 0.010, ca-HepTh 0.0045 (at most); the oracle checks every growth beyond it.
REMEMBERED_PER_NODE_PAIR = 0.1


def estimate_memory(problem, threads=1):
    """Estimated peak bytes a project-forget run adds to the process on ``problem``.

    Per-variable arrays (12 float64 vectors), the oracle's buffers and an active list
    of a typical size: ``4 m`` cycles of 8 edges and the triangle tier's list and
    answer (sparse), the explicit lists (edges).
    Dense (:func:`_dense_pair_arrays`): the problem's own per-pair arrays (a dense
    problem's are often not resident until a run reads them), the iterate's in the
    diagonal layout (``x``, ``w``, four pair duals, and ``f``, ``delta``, ``cost``,
    ``1 / w`` as the problem has them), a problem-order answer of a QP stage (l1
    problems are certified on the layout's own arrays, others on problem-order copies),
    the scan's output rows and chunk extremes (``16 / CHUNK`` bytes per pair,
    :func:`._pf_dense.chunk_extremes`), and :data:`REMEMBERED_PER_NODE_PAIR` ``n^2``
    remembered triangles of 20 bytes. Jaccard ``cc``: 88 bytes per pair and the lists;
    measured 85-102 bytes per pair added by the solve (``benchmarks/bench_project_forget.py``).
    """
    nvar = problem.n_variables
    n = problem.n
    base = 12 * 8 * nvar
    per_con = 8 + 8 + 1 + 8  # offset, dual, type, one id
    if problem.structure == "sparse":
        m = nvar
        csr = 3 * 8 * 2 * m + 8 * n
        # per thread: two searches' node arrays and heaps (problems._cycles.search_buffers)
        oracle = threads * (50 * n + 64 * m) + 3 * 8 * 4 * m
        active = 2 * 4 * m * (per_con + 7 * 8)
        t = _triangle_tier_size(problem)
        # the list, and one call's answer with every inequality violated
        triangles = 24 * t + 3 * t * (per_con + 2 * 8)
        return int(base + csr + oracle + active + triangles)
    if problem.structure == "edges":
        t3 = 3 * len(problem.triangles)
        w = len(problem.wedges)
        explicit = 8 * (3 * t3 // 3 * 3 + 2 * w)
        return int(base + explicit + 2 * (t3 + w) * (per_con + 2 * 8))
    from ._pf_list import BYTES_PER_CONSTRAINT
    from ._pf_scan import CHUNK

    rows = 12 * max(threads, 1) * (3 * 16 * n + 1024)
    bounds = 16 * (nvar // max(CHUNK, 1) + n)
    return int(8 * nvar * sum(_dense_pair_arrays(problem)) + rows + bounds
               + 2 * BYTES_PER_CONSTRAINT * REMEMBERED_PER_NODE_PAIR * n * n)


#: The sparse oracle's triangle tier is used when the graph has at most this many
#: triangles per edge (the list then takes at most 768 bytes per edge, about the active
#: list's share in the estimate); denser graphs go to the exact separation directly.
#: Generated Slashdot and Epinions shapes: 2.1 and 2.2; SNAP's soc-sign-epinions: 5.8.
MAX_TRIANGLES_PER_EDGE = 32


def _triangle_tier_size(problem):
    """Triangles the sparse oracle lists (0 when there are more than
    :data:`MAX_TRIANGLES_PER_EDGE` per edge: no triangle tier)."""
    from ..problems._cycles import edge_csr
    from ..problems._wedges import csr_triangle_count

    pairs = np.ascontiguousarray(problem.pairs, dtype=np.int64)
    t = csr_triangle_count(problem.n, *edge_csr(problem.n, pairs))
    return t if t <= MAX_TRIANGLES_PER_EDGE * max(pairs.shape[0], 1) else 0


def _dense_pair_arrays(problem):
    """``(problem, state, transient)``: float64 arrays per pair of a dense run (see
    :func:`estimate_memory`)."""
    own = sum(a is not None for a in (problem.cost, problem.weights, problem.target))
    l1 = problem.objective == "l1"
    has_sum = problem.sum_value is not None
    linear = problem.objective == "linear"
    state = 2 + 4 + l1 + (problem.objective != "linear") + linear + has_sum
    # a stage's answer (the best one so far is the latest's object or released before
    # the certificate; briefly both), and for a certificate of a problem other than l1
    # its problem-order copies of the layout's arrays. Fitted with the rest to the
    # measured peaks: estimate / peak 0.96-1.14 on Jaccard cc (ca-GrQc, power, ca-HepTh,
    # ca-HepPh; benchmarks/README.md, "Scale")
    transient = 1 + (0 if l1 else state - 4)
    return own, state, transient


def _peak_rss():
    """Peak resident bytes of this process (``ru_maxrss``), or None where unknown (no
    :mod:`resource` module: Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


# ------------------------------------------------------------------------ driver
def _check_option_values(*, tol, gap_tol, max_iter, time_limit, passes, threads, gamma, lam,
                         checkpoint_every, polish, gamma_growth):
    """The checks of :func:`solve_project_forget`'s options that need no problem."""
    check_options("solve_project_forget", tol=tol, gap_tol=gap_tol, max_iter=max_iter,
                  time_limit=time_limit, passes=passes, threads=threads, gamma=gamma, lam=lam,
                  checkpoint_every=checkpoint_every, polish=polish, gamma_growth=gamma_growth)


def solve_project_forget(problem, *, gamma=None, lam=None, tol=1e-4, gap_tol=1e-4,
                         max_iter=1000, time_limit=None, passes=None, threads=None, seed=None,
                         max_memory=None, callback=None, verbose=False, checkpoint=None,
                         checkpoint_every=60.0, resume=None, polish="auto", gamma_growth=10.0,
                         scheduler=None):
    """Solve the quadratic regularisation of a metric LP by Project and Forget.

    Parameters
    ----------
    problem : MetricProblem
        Sparse (MET(G)), edge-list (``cd``) or dense problem.
    gamma : float or None
        Regularisation ``c'x + (1/2 gamma) x'Wx``: default 1 (``cc``, ``mn`` p = 1, ``cd``),
        5 (``sc``); ignored for ``mn`` with p = 2.
    lam : float or None
        Sparsest cut: weight of the non-edges in ``W`` (default ``1/n``).
    tol : float, default=1e-4
        Largest allowed violation of any constraint by the returned ``x`` (measured
        exactly: shortest paths, the explicit lists, or a full triangle check).
    gap_tol : float, default=1e-4
        Largest allowed certified LP gap ``(c'x - lower_bound) / |lower_bound|`` of an
        ``optimal`` answer, at an ``x`` violating nothing by more than ``tol``. A QP
        stage ends when its own relative gap ``|P - D| / max(|P|, |D|)`` (V §5.3) is
        within ``gap_tol`` too; then the point is certified (:mod:`._core`), and if
        the LP gap is missed the run polishes and/or raises ``gamma`` (see ``polish``
        and ``gamma_growth``). The QP gap is reported as ``qp_gap``.
    max_iter : int, default=1000
        Oracle calls (outer iterations).
    time_limit : float or None
        Seconds; checked after every projection pass.
    passes : int or None
        Projection passes over the active list per oracle call; default ``5 min(t, 15)``
        at iteration ``t`` (sparse and edges); dense: until converged, at most 1000
        (see the module docstring).
    threads : int or None
        Threads of the shortest-path oracle and of the dense scan (default: all
        cores). The result does not depend on it.
    seed : None
        Accepted for interface compatibility; the method is deterministic.
    max_memory : int or None
        Bytes allowed: the run is refused (``MemoryLimitError``) when the estimate
        exceeds it, and stops with status ``limit`` when the active list outgrows it.
    callback : callable or None
        Called once per outer iteration with its record (see ``history``).
    verbose : bool
        Accepted for interface compatibility (the library does not print).
    checkpoint : str or None
        Path of a checkpoint (:mod:`metricopt.solvers._checkpoint`: an ``.npz`` of numbers
        with a JSON header, bound to this problem instance by a digest, never pickled)
        written every ``checkpoint_every`` seconds, at the end and on
        ``KeyboardInterrupt``: x, the pair and sum duals, and the active list (node ids
        and duals), about 24 bytes per variable plus the active list.
    checkpoint_every : float, default=60.0
        Seconds between two checkpoints (the clock decides only when one is written).
    resume : str or None
        Checkpoint to continue from (same problem, backend and ``gamma``); a file that is
        not such a checkpoint raises :class:`~metricopt.exceptions.InputError`.
    polish : bool or "auto", default="auto"
        When a converged QP stage misses ``gap_tol``, solve the LP restricted to the
        constraints holding a positive dual exactly (HiGHS; violated rows are separated
        and added until none is left) and certify it from its LP dual
        (:mod:`._polish`). ``"auto"``: when the restricted LP fits in memory, except
        for sparsest cut (its restricted LP needed over 30 separation rounds on jazz and
        USAir97, where gamma growth certifies a gap of 1e-5 in 1.5 s and 9 s). Once a polish has reached the LP optimum it is not repeated.
    gamma_growth : float, default=10.0
        Factor by which ``gamma`` grows when a converged QP stage misses ``gap_tol``
        and the polish did not close it; the duals (and ``x - delta``, ``f``) are scaled
        exactly (:func:`_rescale`, as in ``dykstra``), so the next stage starts where this one ended
        (exact regularisation: beyond some ``gamma`` the QP solution is an LP
        solution). ``gamma`` stops growing at ``1e8``.
    scheduler : str, distributed.Client or None
        Sparse problems (MET(G)) only: run the shortest-path oracle on this Dask cluster
        (a scheduler address such as ``tcp://host:8786``, or a client). The graph is
        sent to the workers once, ``x`` once per oracle call; the projections stay
        here. The cycles found, and so the result, are those of a local run
        (:mod:`._dask_oracle`).

    Returns
    -------
    dict
        ``x``, ``fun`` (LP objective of ``x``; for ``mn`` with p = 2 the QP objective),
        ``lower_bound`` (the best certified bound met in the run), ``bound_details``,
        ``gap`` (certified LP gap), ``polish``, ``certificates``, ``certify_seconds``, ``lp_approx_ratio``, ``qp_primal``,
        ``qp_dual``, ``qp_gap``, ``max_violation``, ``status``, ``message``, ``nit``,
        ``history`` (per iteration: iteration, seconds, primal, dual, gap,
        max_violation, full_check, active_constraints, memory_bytes,
        constraints_found, remembered, oracle_seconds, passes), ``gamma``, ``lam``,
        ``peak_memory``, ``active_constraints``, ``memory_estimate``, ``elapsed``.

    References
    ----------
    .. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving
           large-scale metric constrained problems. arXiv:2005.03853.
    """
    entered = time.perf_counter()
    _check_option_values(tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                         passes=passes, threads=threads, gamma=gamma, lam=lam,
                         checkpoint_every=checkpoint_every, polish=polish,
                         gamma_growth=gamma_growth)
    import numba

    nthreads = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    need = estimate_memory(problem, nthreads)
    check_memory(need, f"project-forget on {problem!r}", max_memory)

    if scheduler is not None and problem.structure != "sparse":
        raise InvalidParameterError(
            f"a scheduler runs the shortest-path oracle of sparse (MET(G)) problems on a "
            f"Dask cluster; this problem is {problem.structure}, whose triangle scans stay "
            f"local (see 'Scale' in benchmarks/README.md)")
    st = _setup(problem, gamma, lam) if problem.structure != "dense" \
        else _setup_layout(problem, gamma, lam)
    add_tol = 0.01 * float(tol)
    mode = problem.structure
    scanner = None
    if mode == "sparse":
        oracle = _CycleOracle(problem, nthreads, add_tol, tol, scheduler)
    elif mode == "edges":
        oracle = _EdgeOracle(problem, add_tol)
    else:
        from ._pf_list import MAX_POSITION

        if st["nvar"] >= MAX_POSITION:
            raise InvalidParameterError(
                f"project-forget's dense mode handles at most {MAX_POSITION - 1} pairs; this "
                f"problem has {st['nvar']} (n = {problem.n})")
        oracle = None
        scanner = _DenseOracle(problem.n, 8 * st["nvar"] * sum(_dense_pair_arrays(problem)),
                               add_tol, max_memory, nthreads)

    counters = dict(kind=st["kind"], n=st["n"], nvar=st["nvar"], gamma=st["gamma"],
                    gamma_start=st["gamma"], iteration=0, seconds=0.0)
    digest = problem_digest(problem) if (checkpoint or resume) is not None else None
    if resume is not None:
        meta, active = _read_checkpoint(resume, st, problem, digest)
        counters["iteration"] = int(meta["iteration"])
        counters["seconds"] = float(meta["seconds"])
        counters["triangle_streak"] = int(meta.get("triangle_streak", 0))
        counters["path_worst"] = meta.get("path_worst")
        counters["history"] = header_history(resume, meta)
    else:
        active = _ActiveList() if oracle is not None else _TriangleList()

    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish,
                       gamma_growth=gamma_growth, threads=nthreads, max_memory=max_memory)
    # the time limit counts the setup too, and the certificates end by its allowance
    counters["seconds"] = float(counters["seconds"]) + (time.perf_counter() - entered)
    final = None
    primal = dual = gap = np.nan
    measured = False  # the run ended at the x its last scan measured
    bounded = False  # max_violation is an upper bound, not measured
    viol = np.inf
    full = False
    loop = IterationLoop(
        "oracle calls", counters, max_iter=max_iter, time_limit=time_limit,
        callback=callback, threads=nthreads, checkpoint_every=checkpoint_every,
        save=None if checkpoint is None else
        (lambda: _write_checkpoint(checkpoint, st, active, counters, problem, digest)))
    with loop, contextlib.closing(oracle) if hasattr(oracle, "close") else contextlib.nullcontext():
        if time_limit is not None:
            from . import finish_allowance

            # the certificate's search ends at 3/4 of the allowance: the rest is for
            # the answer's measurement and objective
            final = loop.deadline + 0.75 * finish_allowance(time_limit)
        while loop.next():
            it = loop.it
            # a Ctrl-C takes effect between two iterations (x, duals and counters of a
            # checkpoint belong together), or ends the oracle call, which changes nothing
            # and is then dropped
            with loop.iteration():
                t0 = time.perf_counter()
                if oracle is not None:
                    # the cycle oracle's schedule is part of the state (a resumed run
                    # makes the same calls)
                    if mode == "sparse":
                        oracle.streak = counters.get("triangle_streak", 0)
                        oracle.last_worst = counters.get("path_worst")
                    got = oracle(st["x"], stop=loop.stopping)
                    if got is None:  # time limit or Ctrl-C during the (read-only) search
                        loop.drop()
                        loop.out_of_time()
                        break
                    off, mem, kind, worst, full = got
                    if mode == "sparse":
                        counters["triangle_streak"] = oracle.streak
                        counters["path_worst"] = oracle.last_worst
                    found = off.shape[0] - 1
                    viol = max(worst, problem.bound_violation(st["x"]))
                else:
                    rows = active.nc
                    got = scanner(st["x"], active, stop=loop.stopping)
                    if got is None:  # time limit or Ctrl-C during the (read-only) scan
                        loop.drop()
                        loop.out_of_time()
                        break
                    active, worst, found = got
                    scan_work = _scan_work(scanner.last_work, rows + found)
                    full = True
                    viol = max(worst, problem.bound_violation(st["x"]))
                scan_s = time.perf_counter() - t0
                primal, dual = _objectives(st, active)
                gap = _regularised.rel_gap(primal, dual, lp_stage.floor)
                if not (np.isfinite(primal) and np.isfinite(dual)):
                    loop.stop(Status.NUMERICAL, "non-finite objective")
                    break
                done = False
                next_gamma = None
                lp_gap_now = np.nan
                if full and viol <= tol and gap <= gap_tol:  # the QP stage has converged
                    x_stage = _current_x(st, mode, problem.n)
                    done, next_gamma = lp_stage.finish(
                        x_stage,
                        lambda: _certify(problem, st, dual,
                                         _objectives(st, active, with_neg_bty=True)[2],
                                         final),
                        lambda: _active_rows(active, mode, problem.n), loop.deadline,
                        st["gamma"])
                    lp_gap_now = lp_stage.gap(problem.objective_value(lp_stage.x))
                    if done and lp_stage.x is not x_stage:  # the polish's answer
                        viol = _violation(problem, lp_stage.x, mode)
                    del x_stage
                    if next_gamma is not None:
                        _rescale(st, active, next_gamma)
                        counters["gamma"] = next_gamma
                        # x moved: the path searches start over far from feasibility
                        counters["path_worst"] = None
                # a dense run out of time after its scan ends at the x the scan measured
                # (no O(n^3) measurement past the limit); the iteration, which changed no
                # x and no dual, does not count (a checkpoint resumes it)
                measured = (not done and oracle is None and next_gamma is None
                            and loop.deadline is not None
                            and time.perf_counter() >= loop.deadline)
                if measured:
                    loop.drop()
                    loop.out_of_time()
                    break
                smax_all = 0.0
                npass = 0
                if not done and oracle is None and st["sum_value"] is None:
                    # every pair's own constraints once, then passes over the remembered
                    # triangles and their pairs only
                    _, s_pairs = _pair_pass(st)
                    active, npass, smax_all = _dense_passes(
                        st, active, passes if passes is not None else 1000,
                        scan_work if passes is None else np.inf, loop.deadline)
                    smax_all = max(smax_all, s_pairs)
                elif not done:
                    if oracle is not None:
                        active.append(off, mem, kind)
                    # projection passes over the active list, forgetting after each (Alg. 7)
                    k = passes if passes is not None else (5 * min(it, 15) if oracle is not None
                                                           else 1000)
                    work = 0.0
                    for p in range(k):
                        work += _pass_work(active.nc, st["nvar"])
                        _, smax, _ = active.project(st["x"], st["winv"])
                        _, s2 = _pair_pass(st)
                        active.forget()
                        smax_all = max(smax_all, smax, s2)
                        npass = p + 1
                        if loop.deadline is not None and time.perf_counter() >= loop.deadline:
                            break
                        if passes is None and oracle is None and p >= 1 \
                                and work >= scan_work:
                            break
                mem_bytes = int(max(active.nbytes, scanner.last_bytes if oracle is None else 0)
                                + getattr(oracle, "last_bytes", 0) + 8 * 12 * st["nvar"])
                loop.record(dict(
                    iteration=it, seconds=loop.elapsed(), primal=primal, dual=dual,
                    gap=lp_gap_now, qp_gap=gap, max_violation=float(viol),
                    full_check=bool(full), gamma=st["gamma"], active_constraints=int(active.nc),
                    memory_bytes=mem_bytes, constraints_found=int(found),
                    remembered=int(active.nc), oracle_seconds=float(scan_s), passes=int(npass)))
                if done:
                    how = " (x from the LP on the active constraints)" if lp_stage.polished else ""
                    loop.stop(Status.OPTIMAL, f"certified LP gap {max(lp_gap_now, 0.0):.2e} "
                                              f"<= gap_tol in {it} oracle calls{how}")
                    break
                if found == 0 and smax_all == 0.0:
                    loop.stop(Status.STALLED, f"no change in iteration {it}")
                    break
                if loop.out_of_time():
                    break
                if max_memory is not None and mem_bytes > max_memory:
                    loop.stop(Status.LIMIT, f"active list exceeds max_memory "
                                            f"({format_bytes(mem_bytes)})")
                    break
                loop.checkpoint_if_due()
    status, message, history, it = loop.status, loop.message, loop.history, loop.it

    # sums over the pairs (any common order: the dense layout's too)
    primal, dual, neg_bty = _objectives(st, active, with_neg_bty=True)
    gap = _regularised.rel_gap(primal, dual, lp_stage.floor)
    n_active = int(active.nc)
    # the answer and the certificate need x, f and the weights only: free the rest first
    del active, oracle, scanner
    st["z_pair"] = None
    if status == Status.OPTIMAL:
        x = lp_stage.x  # its violation was measured when the run ended
    else:
        x = _current_x(st, mode, problem.n)
        if not measured and final is not None and time.perf_counter() >= final:
            # past the allowance: no exact scan (O(n^3) dense, shortest paths sparse)
            viol, bounded = _violation_bound(problem, x), True
        elif not measured:
            viol = _violation(problem, x, mode)
        x, viol = lp_stage.answer_at_limit(x, viol)
    fun = problem.objective_value(x)
    if status != Status.OPTIMAL:
        # an interrupted run ends at once: its certificate takes one pass over the pairs
        # (the multiplier search stops at its first value, still certified)
        until = time.perf_counter() if status == Status.INTERRUPTED else final
        lp_stage.offer_bound(*_certify(problem, st, dual, neg_bty, until))
    lb = lp_stage.best_bound
    out = dict(x=x, fun=fun, status=status, message=message, nit=it,
               max_violation=float(viol), qp_primal=float(primal), qp_dual=float(dual),
               qp_gap=float(gap), history=history, gamma=st["gamma"], lam=st.get("lam"),
               lower_bound=lb, bound_details=lp_stage.best_details, gap=lp_stage.gap(fun),
               polish=lp_stage.polishes, certificates=lp_stage.certificates,
               certify_seconds=lp_stage.certify_seconds, **lp_stage.summary(),
               lp_approx_ratio=(fun / lb) if (lb is not None and lb > 0) else None,
               active_constraints=n_active, peak_memory=_peak_rss(),
               memory_estimate=need, elapsed=loop.elapsed())
    if bounded:
        out["violation_bounded"] = True
        message += (" (max_violation is an upper bound: the exact measurement did not fit "
                    "in the time limit's allowance)")
        out["message"] = message
    if status not in (Status.OPTIMAL, Status.INTERRUPTED):
        from .dykstra import _missed

        out["message"] = message + _missed(out, tol, gap_tol)
        warnings.warn(f"project-forget: {out['message']}", ConvergenceWarning, stacklevel=3)
    return out


def _violation_bound(problem, x):
    """An upper bound on the largest violation of ``x``, O(n_variables): a cycle row
    ``x_e <= sum of the others`` is violated by at most ``max(x) - 2 min(x)`` when
    ``x >= 0`` (else by at most ``max(x) - (n - 1) min(x)``)."""
    if x.size == 0:
        return problem.bound_violation(x)
    hi, lo = float(x.max()), float(x.min())
    cycle = hi - 2.0 * lo if lo >= 0.0 else hi - (problem.n - 1) * lo
    return max(cycle, problem.bound_violation(x), 0.0)


def _violation(problem, x, mode):
    """Exact largest violation of ``x`` (problem order); dense problems through the
    threaded scan of :mod:`._pf_dense` in the diagonal layout."""
    if mode != "dense":
        return max(float(problem.max_violation(x)), 0.0)
    from ..problems._triangles import support_graph
    from ._layouts import packed_to_diagonal
    from ._pf_scan import dense_max_violation

    if support_graph(x, problem.n, 0.0) is not None:  # the support scan is cheaper
        return max(float(problem.max_violation(x)), 0.0)
    xl = packed_to_diagonal(x, problem.n, np.empty_like(x))
    return max(float(dense_max_violation(xl, problem.n)), problem.bound_violation(x), 0.0)


def _current_x(st, mode, n):
    """The iterate's ``x`` in problem order (a copy)."""
    from ._layouts import diagonal_to_packed

    return diagonal_to_packed(st["x"], n, np.empty_like(st["x"])) if mode == "dense" \
        else st["x"].copy()


def _unlayout(st, mode, n):
    """A view of ``st`` with the per-pair arrays in problem order (for the certificate)."""
    if mode != "dense":
        return st
    from ._layouts import diagonal_to_packed

    view = dict(st)
    del view["layout"]
    for k in _LAYOUT_KEYS:
        if st[k] is not None:
            view[k] = diagonal_to_packed(st[k], n, np.empty_like(st[k]))
    return view


def _rescale(st, active, gamma):
    """Move the iterate to the QP with regularisation ``gamma`` (see
    :func:`metricopt.solvers.dykstra._rescale`): every dual, ``x - x0`` and ``f`` scale
    by ``gamma / gamma_old``, which keeps ``x = x0 - W^{-1} A' z`` exact because
    ``x0 = delta + gamma u`` and ``f0 = -gamma`` are affine in ``gamma``."""
    ratio = gamma / st["gamma"]
    if st["delta"] is None:
        st["x"] *= ratio
    else:
        st["x"][:] = st["delta"] + ratio * (st["x"] - st["delta"])
    if st["f"] is not None:
        st["f"] *= ratio
    st["z_pair"] *= ratio
    st["z_sum"] *= ratio
    active.z[: active.nc] *= ratio
    st["gamma"] = gamma


def _active_rows(active, mode, n):
    """The remembered constraints as LP rows (:class:`._polish.ActiveRows`)."""
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


class ProjectForgetSolver(Solver):
    """Project and Forget: active-set Bregman projections (Sonthalia & Gilbert 2020)."""

    name = "project-forget"
    description = ("Project and Forget active-set projections: shortest-path cycle oracle on "
                   "MET(G), triangle/wedge scans (cd), parallel triangle scans (dense)")
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "sparse", "edges")
    objectives = ("linear", "l1", "l2")
    check_values = staticmethod(_check_option_values)

    def estimate_memory(self, problem):
        """Estimated peak bytes (see :func:`estimate_memory`)."""
        return estimate_memory(problem)

    def warm_up_kernels(self, problem):
        """The dense mode's support scan and exact violation (:func:`._pf_list.warm_up`)."""
        if problem.structure == "dense":
            from ._pf_list import warm_up

            warm_up()

    def run(self, problem, *, gamma=None, lam=None, tol=1e-4, gap_tol=1e-4, max_iter=1000,
            time_limit=None, passes=None, threads=None, seed=None, max_memory=None,
            callback=None, verbose=False, checkpoint=None, checkpoint_every=60.0, resume=None,
            polish="auto", gamma_growth=10.0, scheduler=None):
        """Solve ``problem``; see :func:`solve_project_forget` for the options."""
        return solve_project_forget(
            problem, gamma=gamma, lam=lam, tol=tol, gap_tol=gap_tol, max_iter=max_iter,
            time_limit=time_limit, passes=passes, threads=threads, seed=seed,
            max_memory=max_memory, callback=callback, verbose=verbose, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, resume=resume, polish=polish,
            gamma_growth=gamma_growth, scheduler=scheduler)

    def cite(self):
        """Reference of the method."""
        return ("Sonthalia & Gilbert (2020), Project and Forget: solving large-scale metric "
                "constrained problems, arXiv:2005.03853")

