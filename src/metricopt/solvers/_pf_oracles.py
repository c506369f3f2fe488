"""The active lists and the separation oracles of project-forget, and its work model.

The remembered constraints (:class:`ActiveList` of cycles and wedges, :class:`TriangleList`
of dense triangles), the oracles that find violated ones (:class:`CycleOracle` on MET(G),
:class:`EdgeOracle` on explicit lists, :class:`DenseOracle` and :func:`full_scan` on all
triplets of ``K_n``), and the work counts that set how many projection passes follow a
scan (:func:`scan_work`, :func:`pass_work`).
"""

import numpy as np

from .._memory import check_memory

__all__ = ["ActiveList", "TriangleList", "CycleOracle", "EdgeOracle", "DenseOracle",
           "full_scan", "scan_work", "pass_work", "MAX_TRIANGLES_PER_EDGE",
           "estimate_memory", "dense_pair_arrays"]

#: The sparse oracle's triangle tier is used when the graph has at most this many
#: triangles per edge (the list then takes at most 768 bytes per edge, about the active
#: list's share in the estimate); denser graphs go to the exact separation directly.
#: Generated Slashdot and Epinions shapes: 2.1 and 2.2; SNAP's soc-sign-epinions: 5.8.
MAX_TRIANGLES_PER_EDGE = 32


# ------------------------------------------------------------------- active list
class ActiveList:
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



# ----------------------------------------------------------------------- oracles
class CycleOracle:
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


class EdgeOracle:
    """Scan of the explicit triangle and wedge lists (cluster deletion)."""

    def __init__(self, problem, add_tol):
        self.tri = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
        self.wed = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
        self.add_tol = add_tol
        self.last_bytes = 0

    def __call__(self, x, stop=None):
        """As :meth:`CycleOracle.__call__`; one scan, ``stop`` is not asked."""
        from . import _pf_kernels as K

        off, mem, kind, worst = K.edge_oracle(x, self.tri, self.wed, self.add_tol)
        return off, mem, kind, float(worst), True


class TriangleList:
    """Remembered triangle inequalities of the dense mode (:mod:`._pf_list` layout).

    Four parallel arrays ``ta, tb, tc`` (int32) and ``z`` (float64) in visiting order,
    20 bytes per constraint; the same interface as :class:`ActiveList`.
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


class DenseOracle:
    """PF Alg. 6 oracle on ``K_n``: a read-only scan (:func:`._pf_scan.dense_detect`)
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
        return TriangleList(ta, tb, tc, tz, nc=m), worst, k

    def _support_scan(self, x, active, support):
        """Violated constraints by the support scan (:func:`._pf_list.support_detect`),
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
    """:func:`._pf_scan.dense_detect` run to the end: a worker whose output row is full
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
        :func:`._pf_scan.scan_rows` for ``block`` and the number of workers.
    chunk : int or None
        Pruning chunk (default :data:`._pf_scan.CHUNK`; 0: no pruning).
    cap : int or None
        Starting length of each worker's output row (default ``3 block n + 1024``).
    before_growth : callable or None
        ``before_growth(new_cap, found_so_far)`` before the rows grow (a memory check).
    stop : callable or None

    Returns
    -------
    found : list of three int32 arrays
        The constraints in visiting order (the list layout of :mod:`._pf_list`).
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



# Relative cost of the dense oracle and of a projection pass, in nanoseconds of one
# thread of the reference machine (2-core Xeon, ``benchmarks/pf_pass_costs.py``). They
# only set how many passes follow a scan, so that passes and scans take comparable
# time; the clock never does (a schedule must not depend on the machine's load).
SCAN_NS_PER_TRIPLET = 2.8  # dense_detect, per triplet of K_n
MERGE_NS_PER_ROW = 40.0  # dense_merge, per remembered or found constraint
PASS_NS_PER_TRIANGLE = 11.0  # one Hildreth step and its forget test
PASS_NS_PER_PAIR = 2.0  # one pass over a pair's own constraints


def scan_work(triplets, rows):
    """Work of one dense oracle call that visits ``triplets`` triplets (all of ``K_n``
    for the full scan, the wedges for the support scan) and merges ``rows``
    constraints."""
    return SCAN_NS_PER_TRIPLET * triplets + MERGE_NS_PER_ROW * rows


def pass_work(triangles, pairs):
    """Work of one projection pass over ``triangles`` listed constraints and ``pairs``."""
    return PASS_NS_PER_TRIANGLE * triangles + PASS_NS_PER_PAIR * pairs


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
    Dense (:func:`dense_pair_arrays`): the problem's own per-pair arrays (a dense
    problem's are often not resident until a run reads them), the iterate's in the
    diagonal layout (``x``, ``w``, four pair duals, and ``f``, ``delta``, ``cost``,
    ``1 / w`` as the problem has them), a problem-order answer of a QP stage (l1
    problems are certified on the layout's own arrays, others on problem-order copies),
    the scan's output rows and chunk extremes (``16 / CHUNK`` bytes per pair,
    :func:`._pf_scan.chunk_extremes`), and :data:`REMEMBERED_PER_NODE_PAIR` ``n^2``
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
        t = triangle_tier_size(problem)
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
    return int(8 * nvar * sum(dense_pair_arrays(problem)) + rows + bounds
               + 2 * BYTES_PER_CONSTRAINT * REMEMBERED_PER_NODE_PAIR * n * n)




def triangle_tier_size(problem):
    """Triangles the sparse oracle lists (0 when there are more than
    :data:`MAX_TRIANGLES_PER_EDGE` per edge: no triangle tier)."""
    from ..problems._cycles import edge_csr
    from ..problems._wedges import csr_triangle_count

    pairs = np.ascontiguousarray(problem.pairs, dtype=np.int64)
    t = csr_triangle_count(problem.n, *edge_csr(problem.n, pairs))
    return t if t <= MAX_TRIANGLES_PER_EDGE * max(pairs.shape[0], 1) else 0


def dense_pair_arrays(problem):
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
