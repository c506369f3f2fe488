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
    Single-source shortest paths with the current ``x`` as lengths (negative values
    count as 0, zero lengths are kept), source by source in parallel with per-thread
    buffers; for each edge ``e = (s, u)`` with ``x_e > dist(s, u)`` the cycle ``e`` +
    shortest path is returned (PF §2.1). Each Dijkstra stops once its distance exceeds
    the largest ``x`` on the source's edges. Passes per oracle call:
    ``5 min(t, 15)`` at iteration ``t`` (75 from t = 15 on, as PF Alg. 7).
``"edges"`` (``cd``)
    A scan of the problem's explicit triangle and wedge lists.
``"dense"`` (``K_n``: Jaccard ``cc``, dense ``mn``, ``sc``)
    One pass over all triangles that projects violated inequalities as it finds them
    and remembers them (PF Alg. 6); then passes over the remembered list only, as many
    as fit in the time the scan took (at least 2).

Stopping: the oracle's exact violation (sparse, edges; dense: confirmed by a full
check) at most ``tol`` and the relative QP primal-dual gap at most ``gap_tol``.
The default ``tol = 1e-4`` is tighter than the 0.01 of the papers' benchmarks (PF §4.2,
App. 8), which the benchmarks pass explicitly.

Certified lower bound on the LP optimum (weak duality, V §7): the dual value
``D(y) = -b'y - (1/2 gamma) v'Wv`` of the current duals, divided by ``1 + A`` with the
a-priori term ``A = E / gamma`` for l1 objectives (``E`` bounds ``|x - d|`` at an LP
optimum: 1 for ``cc``), ``1 / (2 gamma)`` for ``cd``; ``D(y)`` itself for ``mn`` with
``p = 2``; for ``sc`` the Lagrangian bound ``n min_p (c + A_T'y)_p`` of the metric duals
over the simplex ``{x >= 0, sum x = n}``.

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

import os
import resource
import tempfile
import time
import warnings

import numpy as np

from .._memory import check_memory, format_bytes
from ..exceptions import ConvergenceWarning, InvalidParameterError
from ..result import Status
from ._base import Solver

__all__ = ["ProjectForgetSolver", "solve_project_forget"]

_MIN_WEIGHT = 1e-12


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
    """Work arrays of the regularised QP (same regularisation as ``dykstra``, V §6)."""
    nvar = problem.n_variables
    st = dict(kind=problem.kind, n=problem.n, nvar=nvar, structure=problem.structure)
    f = delta = cost = None
    raised = 0.0
    if problem.objective in ("l1", "l2"):
        g = (1.0 if gamma is None else float(gamma)) if problem.objective == "l1" else 0.5
        w0 = np.ascontiguousarray(problem.weights, dtype=np.float64)
        w = np.maximum(w0, _MIN_WEIGHT * max(float(w0.max(initial=0.0)), 1.0))
        raised = float(np.sum(w - w0))
        delta = np.ascontiguousarray(problem.target, dtype=np.float64).copy()
        x = delta.copy()
        if problem.objective == "l1":
            f = np.full(nvar, -g)
    elif problem.kind == "sc":
        g = 5.0 if gamma is None else float(gamma)
        lm = 1.0 / problem.n if lam is None else float(lam)
        cost = np.ascontiguousarray(problem.cost, dtype=np.float64)
        w = np.where(cost > 0, 1.0, lm)
        x = -g * cost / w
        st["lam"] = lm
    else:
        g = 1.0 if gamma is None else float(gamma)
        cost = np.ascontiguousarray(problem.cost, dtype=np.float64)
        w = np.ones(nvar)
        x = -g * cost
    st.update(gamma=g, x=x, x0=x.copy(), f=f, delta=delta, w=w, winv=1.0 / w, cost=cost,
              raised=raised)
    st["has_lower"] = bool(np.isfinite(problem.lower))
    st["has_upper"] = bool(np.isfinite(problem.upper))
    st["lower"] = float(problem.lower) if st["has_lower"] else 0.0
    st["upper"] = float(problem.upper) if st["has_upper"] else 0.0
    st["z_pair"] = np.zeros((4, nvar))
    st["z_sum"] = 0.0
    st["sum_value"] = problem.sum_value
    return st


def _pair_pass(st):
    """One pass over the per-variable constraints (dense duals, never forgotten)."""
    from ._dykstra_kernels import pair_pass, sum_step

    x, f = st["x"], st["f"]
    _, _, vmax, smax = pair_pass(
        x, st["winv"], f if f is not None else x,
        st["delta"] if st["delta"] is not None else x, st["z_pair"], st["lower"],
        st["upper"], f is not None, st["has_lower"], st["has_upper"])
    if st["sum_value"] is not None:
        st["z_sum"], a, m = sum_step(x, st["winv"], st["z_sum"], float(st["sum_value"]))
        vmax, smax = max(vmax, a), max(smax, m)
    return float(vmax), float(smax)


def _objectives(st, active):
    """QP primal and dual values of the current iterate (V eq. 15; see ``dykstra``)."""
    g, w, x = st["gamma"], st["w"], st["x"]
    z = st["z_pair"]
    bz = active.bz()
    if st["f"] is not None:
        bz += float(np.dot(st["delta"], z[0] - z[1]))
    if st["has_lower"]:
        bz -= st["lower"] * float(z[2].sum())
    if st["has_upper"]:
        bz += st["upper"] * float(z[3].sum())
    if st["sum_value"] is not None:
        bz += float(st["sum_value"]) * st["z_sum"]
    e = x if st["delta"] is None else x - st["delta"]
    quad = float(np.dot(w, e * e))
    lin = 0.0
    if st["f"] is not None:
        quad += float(np.dot(w, st["f"] * st["f"]))
        lin = float(np.dot(w, st["f"]))
    elif st["cost"] is not None:
        lin = float(np.dot(st["cost"], x))
    neg_bty = -bz / g
    if st["delta"] is not None:
        neg_bty -= float(np.dot(w, st["delta"] * e)) / g
    return lin + quad / (2 * g), neg_bty - quad / (2 * g)


def _rel_gap(primal, dual):
    return abs(primal - dual) / max(abs(primal), abs(dual), 1e-300)


def _bound_violation(problem, x):
    worst = 0.0
    if x.size:
        if np.isfinite(problem.lower):
            worst = max(worst, float(np.max(problem.lower - x)))
        if np.isfinite(problem.upper):
            worst = max(worst, float(np.max(x - problem.upper)))
    if problem.sum_value is not None:
        worst = max(worst, abs(float(x.sum()) - problem.sum_value))
    return worst


def _certify(problem, st, active, dual):
    """Certified lower bound on the LP optimum from the current duals (module docstring).

    Returns ``(lower_bound, details)``; ``lower_bound`` is ``None`` when no valid bound
    is known for the problem.
    """
    g = st["gamma"]
    if not np.isfinite(dual):
        return None, dict(method="none", reason="non-finite dual value")
    if problem.objective == "l2":
        d = st["delta"]
        span = max(float(d.max(initial=0.0)) - min(st["lower"], 0.0), 0.0)
        lb = dual - st["raised"] * span * span
        return float(lb), dict(method="dual", dual=float(dual), apriori=0.0)
    if problem.objective == "l1":
        d = st["delta"]
        lo = st["lower"] if st["has_lower"] else float(d.min(initial=0.0))
        hi = float(d.max(initial=0.0))
        if st["has_upper"]:
            hi = min(hi, st["upper"])
        hi = max(hi, lo)
        emax = float(np.max(np.maximum(np.abs(hi - d), np.abs(d - lo)), initial=0.0))
        a = emax / g
        lb = dual / (1.0 + a) - st["raised"] * emax
        return float(lb), dict(method="dual/apriori", dual=float(dual), apriori=a)
    if problem.kind == "cd":
        a = 1.0 / (2.0 * g)
        return float(dual / (1.0 + a)), dict(method="dual/apriori", dual=float(dual), apriori=a)
    if problem.kind == "sc" and problem.sum_value is not None and st["has_lower"] \
            and st["lower"] == 0.0:
        # A_T' z = W (v0 - v) + z_lower - z_upper - z_sum (identity of Hildreth iterates)
        atz = st["w"] * (st["x0"] - st["x"]) + st["z_pair"][2] - st["z_pair"][3] - st["z_sum"]
        red = st["cost"] + atz / g
        lb = float(problem.sum_value) * float(red.min())
        return lb, dict(method="lagrangian-simplex", dual=float(dual))
    return None, dict(method="none", reason="no bound for this problem")


# ----------------------------------------------------------------------- oracles
class _CycleOracle:
    """Shortest-path separation of MET(G), streamed over sources (see the kernels)."""

    def __init__(self, problem, threads, add_tol):
        from ..problems._cycles import edge_csr

        pairs = np.ascontiguousarray(problem.pairs, dtype=np.int64)
        self.pairs = pairs
        self.indptr, self.nbrs, self.eids = edge_csr(problem.n, pairs)
        hi = np.maximum(pairs[:, 0], pairs[:, 1])
        lo = np.minimum(pairs[:, 0], pairs[:, 1])
        has_upper = np.zeros(problem.n, dtype=bool)
        has_upper[lo[hi > lo]] = True
        self.srcs = np.flatnonzero(has_upper).astype(np.int64)
        self.threads = threads
        self.add_tol = add_tol
        self.cap = max(4096, 4 * pairs.shape[0] // max(threads, 1))

    def __call__(self, x):
        from . import _pf_kernels as K

        T = self.threads
        pos = np.arange(T, dtype=np.int64)
        ncyc = np.zeros(T, dtype=np.int64)
        nmem = np.zeros(T, dtype=np.int64)
        worst = np.zeros(T)
        cap = self.cap
        mem = np.empty((T, cap), dtype=np.int64)
        off = np.zeros((T, cap + 1), dtype=np.int64)
        viol = np.empty((T, cap))
        ns = self.srcs.shape[0]
        while True:
            K.cycle_oracle(self.indptr, self.nbrs, self.eids, self.pairs, x, self.srcs, pos,
                           self.add_tol, mem, off, viol, ncyc, nmem, worst)
            if np.all(pos >= ns):
                break
            cap *= 2  # a worker ran full: larger rows, keep what was found
            mem2 = np.empty((T, cap), dtype=np.int64)
            off2 = np.zeros((T, cap + 1), dtype=np.int64)
            viol2 = np.empty((T, cap))
            for t in range(T):
                mem2[t, : nmem[t]] = mem[t, : nmem[t]]
                off2[t, : ncyc[t] + 1] = off[t, : ncyc[t] + 1]
                viol2[t, : ncyc[t]] = viol[t, : ncyc[t]]
            mem, off, viol = mem2, off2, viol2
        self.cap = cap
        k = int(ncyc.sum())
        offs = [np.zeros(1, dtype=np.int64)]
        mems = []
        base = 0
        for t in range(T):
            offs.append(off[t, 1: ncyc[t] + 1] + base)
            mems.append(mem[t, : nmem[t]])
            base += int(nmem[t])
        flat_off = np.concatenate(offs)
        flat_mem = np.concatenate(mems) if mems else np.empty(0, dtype=np.int64)
        # canonical order (by violated edge id): independent of the thread count
        order = np.argsort(flat_mem[flat_off[:-1]], kind="stable").astype(np.int64)
        flat_off, flat_mem = K.gather_cycles(flat_off, flat_mem, order)
        self.last_bytes = int(mem.nbytes + off.nbytes + viol.nbytes
                              + T * (self.indptr.shape[0] * 33 + self.nbrs.shape[0] * 16))
        return flat_off, flat_mem, np.zeros(k, dtype=np.uint8), float(worst.max(initial=0.0))


class _EdgeOracle:
    """Scan of the explicit triangle and wedge lists (cluster deletion)."""

    def __init__(self, problem, add_tol):
        self.tri = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
        self.wed = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
        self.add_tol = add_tol
        self.last_bytes = 0

    def __call__(self, x):
        from . import _pf_kernels as K

        off, mem, kind, worst = K.edge_oracle(x, self.tri, self.wed, self.add_tol)
        return off, mem, kind, float(worst)


def _dense_scan(st, active, add_tol, bufs, max_memory):
    """PF Alg. 6 oracle: one projecting pass over every triangle, merged with the
    remembered list (kept in visiting order); returns the new list and the largest
    violation met."""
    from . import _pf_kernels as K

    n = st["n"]
    i, j, cursor = 0, 1, 0
    mems, zs = [], []
    vmax = 0.0
    ncur = active.nc
    cur_mem = active.mem[: 3 * ncur]
    cur_z = active.z[:ncur]
    while i < n:
        mem, z = bufs
        c, i, j, cursor, v = K.triangle_scan(st["x"], st["winv"], n, i, j, cur_mem, cur_z,
                                             cursor, ncur, add_tol, mem, z)
        vmax = max(vmax, float(v))
        mems.append(mem[: 3 * c].copy())
        zs.append(z[:c].copy())
        if i < n:  # the buffers ran full: continue from (i, j) with larger ones
            cap = 2 * z.shape[0]
            kept = sum(a.nbytes for a in mems) + sum(a.nbytes for a in zs)
            check_memory(kept + active.nbytes + 32 * cap + 8 * 12 * st["nvar"],
                         f"the remembered triangle list of project-forget on {n} nodes "
                         f"(row {i} of the first scan)", max_memory)
            bufs[0] = np.empty(3 * cap, dtype=np.int64)
            bufs[1] = np.empty(cap)
    mem = np.concatenate(mems)
    z = np.concatenate(zs)
    new = _ActiveList(max(1024, z.shape[0]), max(4096, mem.shape[0]))
    new.append(3 * np.arange(z.shape[0] + 1, dtype=np.int64), mem,
               np.zeros(z.shape[0], dtype=np.uint8), z)
    return new, vmax


# ------------------------------------------------------------ checkpoint / resume
def _write_checkpoint(path, st, active, counters):
    """Write the whole iteration state atomically (temp file + os.replace)."""
    arrays = dict(x=st["x"], z_pair=st["z_pair"], z_sum=np.array(st["z_sum"]))
    if st["f"] is not None:
        arrays["f"] = st["f"]
    arrays.update(active.arrays())
    arrays["meta_keys"] = np.array(list(counters), dtype="U32")
    arrays["meta_vals"] = np.array([repr(v) for v in counters.values()], dtype="U256")
    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".ckpt-", suffix=".npz", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_checkpoint(path, st):
    import ast

    with np.load(path, allow_pickle=False) as data:
        meta = {str(k): ast.literal_eval(str(v))
                for k, v in zip(data["meta_keys"], data["meta_vals"])}
        if (meta.get("kind"), meta.get("n"), meta.get("nvar")) != (st["kind"], st["n"],
                                                                   st["nvar"]):
            raise InvalidParameterError(
                f"checkpoint {path!r} belongs to a {meta.get('kind')} problem on "
                f"{meta.get('n')} nodes with {meta.get('nvar')} variables, not to this "
                f"{st['kind']} problem on {st['n']} nodes with {st['nvar']} variables")
        if meta.get("gamma") != st["gamma"]:
            raise InvalidParameterError(
                f"checkpoint {path!r} was written with gamma={meta.get('gamma')}; resume with "
                f"the same gamma")
        st["x"] = np.ascontiguousarray(data["x"], dtype=np.float64).copy()
        st["z_pair"] = np.ascontiguousarray(data["z_pair"]).copy()
        st["z_sum"] = float(data["z_sum"])
        if st["f"] is not None:
            st["f"] = np.ascontiguousarray(data["f"]).copy()
        active = _ActiveList.from_arrays(data["act_off"], data["act_mem"], data["act_kind"],
                                         data["act_z"])
    return meta, active


# ------------------------------------------------------------------------ memory
def estimate_memory(problem, threads=1):
    """Estimated peak bytes of a project-forget run on ``problem``.

    Per-variable arrays (12 float64 vectors), the oracle's buffers and an active list
    of a typical size: ``4 m`` cycles of 8 edges (sparse), the explicit lists (edges),
    ``2 n^2`` triangles (dense; PF §4.2 reports about ``n^2`` remembered constraints).
    """
    nvar = problem.n_variables
    n = problem.n
    base = 12 * 8 * nvar
    per_con = 8 + 8 + 1 + 8  # offset, dual, type, one id
    if problem.structure == "sparse":
        m = nvar
        csr = 3 * 8 * 2 * m + 8 * n
        oracle = threads * (33 * n + 32 * m) + 3 * 8 * 4 * m
        active = 2 * 4 * m * (per_con + 7 * 8)
        return int(base + csr + oracle + active)
    if problem.structure == "edges":
        t3 = 3 * len(problem.triangles)
        w = len(problem.wedges)
        explicit = 8 * (3 * t3 // 3 * 3 + 2 * w)
        return int(base + explicit + 2 * (t3 + w) * (per_con + 2 * 8))
    return int(base + 2 * 2 * n * n * (per_con + 2 * 8))


def _peak_rss():
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


# ------------------------------------------------------------------------ driver
def _check_options(tol, gap_tol, max_iter, time_limit, passes, threads, gamma, lam,
                   checkpoint_every):
    def bad(name, value, what):
        raise InvalidParameterError(
            f"The '{name}' parameter of solve_project_forget must be {what}. "
            f"Got {value!r} instead.")

    for name, val in (("tol", tol), ("gap_tol", gap_tol)):
        if not isinstance(val, (int, float)) or isinstance(val, bool) or not val > 0:
            bad(name, val, "a float > 0")
    if not isinstance(max_iter, (int, np.integer)) or isinstance(max_iter, bool) or max_iter < 1:
        bad("max_iter", max_iter, "an int >= 1")
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0):
        bad("time_limit", time_limit, "a float > 0 or None")
    if passes is not None and (not isinstance(passes, (int, np.integer)) or passes < 1):
        bad("passes", passes, "an int >= 1 or None")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        bad("threads", threads, "an int >= 1 or None")
    for name, val in (("gamma", gamma), ("lam", lam)):
        if val is not None and not (isinstance(val, (int, float)) and val > 0):
            bad(name, val, "a float > 0 or None")
    if not (isinstance(checkpoint_every, (int, float)) and checkpoint_every > 0):
        bad("checkpoint_every", checkpoint_every, "a float > 0")


def solve_project_forget(problem, *, gamma=None, lam=None, tol=1e-4, gap_tol=1e-4,
                         max_iter=1000, time_limit=None, passes=None, threads=None, seed=None,
                         max_memory=None, callback=None, verbose=False, checkpoint=None,
                         checkpoint_every=60.0, resume=None):
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
        Largest allowed relative gap between the QP primal and dual values.
    max_iter : int, default=1000
        Oracle calls (outer iterations).
    time_limit : float or None
        Seconds; checked after every projection pass.
    passes : int or None
        Projection passes over the active list per oracle call; default ``5 min(t, 15)``
        at iteration ``t`` (sparse and edges), as many as fit in the scan's time (dense).
    threads : int or None
        Threads of the shortest-path oracle (default: all cores). The result does not
        depend on it.
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
        Path of an ``.npz`` checkpoint written every ``checkpoint_every`` seconds, at the
        end and on ``KeyboardInterrupt``.
    checkpoint_every : float, default=60.0
    resume : str or None
        Checkpoint to continue from (same problem and ``gamma``).

    Returns
    -------
    dict
        ``x``, ``fun`` (LP objective of ``x``; for ``mn`` with p = 2 the QP objective),
        ``lower_bound``, ``bound_details``, ``lp_approx_ratio``, ``qp_primal``,
        ``qp_dual``, ``qp_gap``, ``max_violation``, ``status``, ``message``, ``nit``,
        ``history`` (per iteration: iteration, seconds, primal, dual, gap,
        max_violation, full_check, active_constraints, memory_bytes,
        constraints_found, remembered), ``gamma``, ``lam``, ``peak_memory``,
        ``active_constraints``.

    References
    ----------
    .. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving
           large-scale metric constrained problems. arXiv:2005.03853.
    """
    _check_options(tol, gap_tol, max_iter, time_limit, passes, threads, gamma, lam,
                   checkpoint_every)
    import numba

    nthreads = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    need = estimate_memory(problem, nthreads)
    check_memory(need, f"project-forget on {problem!r}", max_memory)

    st = _setup(problem, gamma, lam)
    add_tol = 0.01 * float(tol)
    mode = problem.structure
    if mode == "sparse":
        oracle = _CycleOracle(problem, nthreads, add_tol)
    elif mode == "edges":
        oracle = _EdgeOracle(problem, add_tol)
    else:
        oracle = None
        cap = max(3 * problem.n, 1 << 16)
        scan_bufs = [np.empty(3 * cap, dtype=np.int64), np.empty(cap)]

    counters = dict(kind=st["kind"], n=st["n"], nvar=st["nvar"], gamma=st["gamma"],
                    iteration=0, seconds=0.0)
    if resume is not None:
        meta, active = _read_checkpoint(resume, st)
        counters["iteration"] = int(meta["iteration"])
        counters["seconds"] = float(meta["seconds"])
    else:
        active = _ActiveList()

    history = []
    status, message = Status.LIMIT, ""
    primal = dual = gap = np.nan
    viol = np.inf
    full = False
    old_threads = numba.get_num_threads()
    start = time.perf_counter() - counters["seconds"]
    last_ckpt = time.perf_counter()
    it = counters["iteration"]
    try:
        numba.set_num_threads(nthreads)
        while True:
            if it >= max_iter:
                status, message = Status.LIMIT, f"iteration limit ({max_iter} oracle calls)"
                break
            it += 1
            t0 = time.perf_counter()
            if oracle is not None:
                off, mem, kind, worst = oracle(st["x"])
                found = off.shape[0] - 1
                viol = max(worst, _bound_violation(problem, st["x"]))
                full = True
            else:
                before = active.nc
                active, worst = _dense_scan(st, active, add_tol, scan_bufs, max_memory)
                found = max(active.nc - before, 0)
                _pair_pass(st)
                full = False
                viol = max(worst, _bound_violation(problem, st["x"]))
            scan_s = time.perf_counter() - t0
            primal, dual = _objectives(st, active)
            gap = _rel_gap(primal, dual)
            if not (np.isfinite(primal) and np.isfinite(dual)):
                status, message = Status.NUMERICAL, "non-finite objective"
                break
            if oracle is None and viol <= tol and gap <= gap_tol:
                viol = max(problem.max_violation(st["x"]), 0.0)
                full = True
            done = full and viol <= tol and gap <= gap_tol
            if not done:
                if oracle is not None:
                    active.append(off, mem, kind)
                # projection passes over the active list, forgetting after each (Alg. 7)
                k = passes if passes is not None else (5 * min(it, 15) if oracle is not None
                                                       else 1000)
                tp = time.perf_counter()
                smax_all = 0.0
                for p in range(k):
                    _, smax, _ = active.project(st["x"], st["winv"])
                    _, s2 = _pair_pass(st)
                    active.forget()
                    smax_all = max(smax_all, smax, s2)
                    if time_limit is not None and time.perf_counter() - start >= time_limit:
                        break
                    if passes is None and oracle is None and p >= 1 \
                            and time.perf_counter() - tp >= scan_s:
                        break
            elapsed = time.perf_counter() - start
            mem_bytes = int(active.nbytes + getattr(oracle, "last_bytes", 0) + 8 * 12 * st["nvar"])
            rec = dict(iteration=it, seconds=elapsed, primal=primal, dual=dual, gap=gap,
                       max_violation=float(viol), full_check=bool(full),
                       active_constraints=int(active.nc), memory_bytes=mem_bytes,
                       constraints_found=int(found), remembered=int(active.nc))
            history.append(rec)
            counters.update(iteration=it, seconds=elapsed)
            if callback is not None:
                callback(dict(rec))
            if done:
                status, message = Status.OPTIMAL, f"converged in {it} oracle calls"
                break
            if found == 0 and smax_all == 0.0:
                status, message = Status.STALLED, f"no change in iteration {it}"
                break
            if time_limit is not None and elapsed >= time_limit:
                status, message = Status.LIMIT, f"time limit ({time_limit} s) reached"
                break
            if max_memory is not None and mem_bytes > max_memory:
                status, message = Status.LIMIT, (
                    f"active list exceeds max_memory ({format_bytes(mem_bytes)})")
                break
            if checkpoint is not None and time.perf_counter() - last_ckpt >= checkpoint_every:
                _write_checkpoint(checkpoint, st, active, counters)
                last_ckpt = time.perf_counter()
    except KeyboardInterrupt:
        status, message = Status.INTERRUPTED, f"interrupted in iteration {it}"
        counters.update(iteration=it, seconds=time.perf_counter() - start)
    finally:
        numba.set_num_threads(old_threads)
    if checkpoint is not None:
        _write_checkpoint(checkpoint, st, active, counters)

    x = st["x"].copy()
    if status != Status.OPTIMAL or not full:
        viol = problem.max_violation(x)
    primal, dual = _objectives(st, active)
    gap = _rel_gap(primal, dual)
    if status not in (Status.OPTIMAL, Status.INTERRUPTED):
        warnings.warn(f"project-forget: {message}", ConvergenceWarning, stacklevel=3)
    fun = problem.objective_value(x)
    lb, details = _certify(problem, st, active, dual)
    return dict(x=x, fun=fun, status=status, message=message, nit=it,
                max_violation=float(viol), qp_primal=float(primal), qp_dual=float(dual),
                qp_gap=float(gap), history=history, gamma=st["gamma"], lam=st.get("lam"),
                lower_bound=lb, bound_details=details,
                lp_approx_ratio=(fun / lb) if (lb is not None and lb > 0) else None,
                active_constraints=int(active.nc), peak_memory=_peak_rss(),
                memory_estimate=need, elapsed=time.perf_counter() - start)


class ProjectForgetSolver(Solver):
    """Project and Forget: active-set Bregman projections (Sonthalia & Gilbert 2020)."""

    name = "project-forget"
    description = ("Project and Forget active-set projections: shortest-path cycle oracle on "
                   "MET(G), triangle/wedge scans (cd), projecting triangle scans (dense)")
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "sparse", "edges")
    objectives = ("linear", "l1", "l2")

    def estimate_memory(self, problem):
        """Estimated peak bytes (see :func:`estimate_memory`)."""
        return estimate_memory(problem)

    def run(self, problem, *, gamma=None, lam=None, tol=1e-4, gap_tol=1e-4, max_iter=1000,
            time_limit=None, passes=None, threads=None, seed=None, max_memory=None,
            callback=None, verbose=False, checkpoint=None, checkpoint_every=60.0, resume=None):
        """Solve ``problem``; see :func:`solve_project_forget` for the options."""
        return solve_project_forget(
            problem, gamma=gamma, lam=lam, tol=tol, gap_tol=gap_tol, max_iter=max_iter,
            time_limit=time_limit, passes=passes, threads=threads, seed=seed,
            max_memory=max_memory, callback=callback, verbose=verbose, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, resume=resume)

    def cite(self):
        """Reference of the method."""
        return ("Sonthalia & Gilbert (2020), Project and Forget: solving large-scale metric "
                "constrained problems, arXiv:2005.03853")

