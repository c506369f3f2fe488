"""Active-set polish: the LP restricted to the constraints a projection method found.

A projection method (``dykstra``, ``project-forget``) solving the regularised QP of a
metric LP learns which constraints matter long before its iterate is an LP solution:
the rows with a positive dual. Handing exactly those rows to an exact LP solver (HiGHS)
gives the optimum of a relaxation of the LP; if that point violates no other
constraint it is an LP optimum, otherwise the violated rows are separated and added
(the lazy method of V §8.1.1, started from the projection method's active set rather
than from nothing). Its LP dual, certified by :func:`metricopt.bounds.lp_dual_bound`,
is the tight lower bound the QP dual cannot give (the QP's Lagrangian bound lags by
``O(1/gamma)``).

Measured on Jaccard correlation clustering (2 threads), the polish started after 30
dykstra passes at ``gamma = 1`` from the strongest 5,875 (lesmis) and 12,601 (football)
active rows reaches the LP optimum in 4 rounds and 0.12 s, against 5 s and 20 s for
HiGHS's simplex method on the full LP and 1.8 s and 14 s for its PDLP
(``benchmarks/README.md``).

Columns. For dense l1 problems (correlation clustering, l1 metric nearness) only the
pairs that some row of the model touches become columns: any other pair is free in the
restricted LP, where ``w |x - d|`` is smallest at ``x = d`` with value 0, so the
restricted optimum is that of the model and its full ``x`` is ``d`` outside it. Rows
separated later bring their pairs in as new columns. Sparsest cut keeps every pair (the
row ``sum(x) = n`` couples them); sparse (MET(G)) and edge problems have one column per
variable anyway.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355, §8.1.1.
"""

import time
from types import SimpleNamespace

import numpy as np

from ..result import Status

__all__ = ["ActiveRows", "RestrictedModel", "polish", "polish_rows"]

#: The polish starts from at most this many of the strongest active rows per column of
#: the restricted LP (a basic optimum has at most one row with a nonzero dual per
#: column), and at least :data:`MIN_ROWS`. Jaccard cc on jazz (18k columns, 382k
#: positive QP duals): all rows 7-24 s of HiGHS; the strongest 50k, 0.55 s, 3 rounds;
#: lesmis: the strongest 20k rows 0.45 s, 5k rows 0.14 s (4 rounds either way).
ROWS_PER_COLUMN = 2.0
MIN_ROWS = 5_000
#: Never more than this many starting rows (HiGHS's memory and time grow with them).
MAX_ROWS = 400_000
#: Separation rounds before the polish gives up (the caller then goes on iterating).
MAX_ROUNDS = 30
#: Dual simplex iterations per row (at least :data:`MIN_SIMPLEX_ITERATIONS`) before the
#: polish switches to HiGHS's interior-point method without crossover for the rest of its
#: rounds. The simplex method warm-starts between rounds and is exact, but degenerate
#: restricted LPs stall it; the interior-point method starts over every round but its
#: time per round grows slowly. Jaccard cc from project-forget's rows at gamma = 1
#: (tol 1e-3), to the LP optimum: jazz (36k rows) simplex only, 0.5 s; USAir97 (77k)
#: 29.9 s (switching to PDLP instead: 11.2 s; the simplex method alone: 171 s); power
#: (57k) 30.2 s (PDLP: about 300 s); ca-GrQc (176k) 290 s (PDLP: 474 s; the simplex
#: method alone: not done in 400 s). PDLP's time varies too much across the family.
#: Iteration counts, not seconds, decide, so the same run gives the same answer.
SIMPLEX_ITERATIONS_PER_ROW = 0.25
MIN_SIMPLEX_ITERATIONS = 5_000

class ActiveRows:
    """Constraints a projection method keeps active, as LP rows in problem variables.

    Parameters
    ----------
    triangles : ndarray of shape (k, 3), optional
        Packed pair (or variable) indices ``(a, b, c)`` of ``x_a <= x_b + x_c``.
    cycles : tuple (offsets, members), optional
        Flat cycles, the long edge first (``x_e <= sum of the rest``).
    family : ndarray, optional
        Ids of an edge problem's triangle and wedge family
        (:func:`metricopt.solvers._lp_matrix.edge_family_rows`).
    wedges : ndarray of shape (k, 2), optional
        Covering rows ``x_a + x_b >= 1`` (cluster deletion's open wedges).
    duals : dict, optional
        The projection method's dual of each row, per form (same keys), used by
        :meth:`strongest` to keep the rows that matter most.
    """

    _FORMS = ("triangles", "cycles", "family", "wedges")

    def __init__(self, triangles=None, cycles=None, family=None, wedges=None, duals=None):
        self.triangles = triangles
        self.cycles = cycles
        self.family = family
        self.wedges = wedges
        self.duals = duals or {}

    def _count(self, form):
        data = getattr(self, form)
        if data is None:
            return 0
        return int(data[0].shape[0] - 1) if form == "cycles" else int(len(data))

    @property
    def n_rows(self):
        return sum(self._count(form) for form in self._FORMS)

    def strongest(self, k):
        """The ``k`` rows with the largest duals (all when there are at most ``k``, or
        when the duals are unknown).

        A basic optimal solution of an LP has at most as many rows with a nonzero dual
        as columns, while the QP's duals spread over many more rows (most of them
        tiny: Jaccard cc on jazz, 382k positive duals, median 5e-4 of a largest 0.44):
        its strongest rows are the LP's likely active set, and separation adds any row
        that was missed.
        """
        if self.n_rows <= k or not self.duals:
            return self
        values = np.concatenate([np.asarray(self.duals[f], dtype=np.float64)
                                 for f in self._FORMS if self._count(f)])
        cut = np.partition(values, values.size - k)[values.size - k]
        kept = {}
        for form in self._FORMS:
            if not self._count(form):
                continue
            keep = np.flatnonzero(np.asarray(self.duals[form]) >= cut)
            data = getattr(self, form)
            if form == "cycles":
                off, members = data
                lengths = np.diff(off)[keep]
                new_off = np.r_[0, np.cumsum(lengths)].astype(np.int64)
                pos = np.repeat(off[keep] - new_off[:-1], lengths) + np.arange(new_off[-1])
                kept[form] = (new_off, members[pos])
            else:
                kept[form] = data[keep]
        return ActiveRows(**kept)

    def blocks(self, problem):
        """The rows as :class:`~metricopt.solvers._lp_matrix.RowBlock` objects."""
        from . import _lp_matrix as lpm

        out = []
        if self._count("triangles"):
            out.append(lpm.triangle_rows(self.triangles))
        if self._count("cycles"):
            out.append(lpm.cycle_rows(*self.cycles))
        if self._count("family"):
            out.extend(lpm.edge_family_rows(problem, self.family))
        if self._count("wedges"):
            out.append(lpm._uniform_block(np.asarray(self.wedges, dtype=np.int64),
                                          (1.0, 1.0), 1.0, np.inf))
        return out


def polish_rows(problem, active, max_memory=None):
    """The rows to start the polish from, or None when it is not worth trying.

    The strongest ``ROWS_PER_COLUMN`` rows per column (:meth:`ActiveRows.strongest`),
    between :data:`MIN_ROWS` and :data:`MAX_ROWS`, if the model fits in half the memory
    allowed (by the memory model of HiGHS's simplex or interior-point method, whichever
    is larger: the polish may switch to the latter).

    Returns
    -------
    rows : ActiveRows or None
    reason : str
        Why not, when ``rows`` is None.
    """
    from .._memory import available_memory, format_bytes
    from .highs import _model_bytes

    if problem.objective == "l2":
        return None, "a QP needs no LP polish"
    if problem.structure == "dense" and problem.objective == "l1":
        tri = active.triangles
        cols = int(np.unique(tri).size) if tri is not None and len(tri) else 0
    else:
        cols = problem.n_variables
    k = int(min(max(ROWS_PER_COLUMN * cols, MIN_ROWS), MAX_ROWS))
    rows = active.strongest(k)
    # the polish may switch to the interior-point method (SIMPLEX_ITERATIONS_PER_ROW),
    # whose memory grows faster with the columns: count the larger of the two
    need = max(_model_bytes(algorithm, 2 * rows.n_rows + 2 * cols, 4 * rows.n_rows + 3 * cols,
                            2 * cols) for algorithm in ("simplex", "ipm"))
    budget = available_memory() if max_memory is None else max_memory
    if budget is not None and need > budget / 2:
        return None, f"the restricted LP needs about {format_bytes(need)}"
    return rows, ""


class _Columns:
    """Model columns of the problem's variables (all, or the pairs rows touch)."""

    def __init__(self, problem):
        self.problem = problem
        nvar = problem.n_variables
        self.restricted = problem.structure == "dense" and problem.objective == "l1"
        self.of = np.full(nvar, -1, dtype=np.int64)
        self.pairs = np.empty(0, dtype=np.int64)
        if not self.restricted:
            self.of[:] = np.arange(nvar)
            self.pairs = np.arange(nvar, dtype=np.int64)

    def objective(self, pairs):
        """The objective model of ``pairs`` (new columns), in column order."""
        from ._lp_matrix import objective_model

        p = self.problem
        view = SimpleNamespace(
            objective=p.objective, lower=p.lower, upper=p.upper, constant=0.0,
            cost=None if p.cost is None else np.asarray(p.cost)[pairs],
            weights=None if p.weights is None else np.asarray(p.weights)[pairs],
            target=None if p.target is None else np.asarray(p.target)[pairs])
        return objective_model(view, np.arange(pairs.size, dtype=np.int64), pairs.size)

    def bring_in(self, ids):
        """Give the variables ``ids`` columns; return the new ones (sorted, unique)."""
        ids = np.unique(np.asarray(ids, dtype=np.int64).ravel())
        new = ids[self.of[ids] < 0]
        return new

    def full_x(self, z):
        """The problem's ``x`` from a model solution ``z`` (targets outside the model)."""
        if not self.restricted:
            return np.ascontiguousarray(z[self.xcol])
        x = np.array(self.problem.target, dtype=np.float64)
        x[self.pairs] = z[self.xcol]
        return x


class RestrictedModel:
    """A HiGHS model over growing columns and rows (columns made as rows need them).

    Used by the polish and by ``highs-lazy`` (dense l1 problems: only the pairs some
    row touches are columns, see the module docstring).

    Parameters
    ----------
    problem : MetricProblem
    opts : dict
        ``tol``, ``verbose``, ``seed``, ``threads`` (as :class:`.highs._Model`).
    algorithm : {"simplex", "ipm", "pdlp"}, default="simplex"
    """

    def __init__(self, problem, opts, algorithm="simplex"):
        from .highs import _Model

        self.problem = problem
        self.algorithm = algorithm
        self.crossover = False  # the interior-point method's answer made a vertex
        self.cols = _Columns(problem)
        self.c_cost, self.c_lo, self.c_hi = [], [], []
        self.offset = 0.0
        self.n_cols = 0
        empty = SimpleNamespace(cost=np.zeros(0), lower=np.zeros(0), upper=np.zeros(0),
                                offset=0.0, hessian_diag=None)
        self.model = _Model(problem, empty, {"gap_tol": 1e-6, **opts}, algorithm)
        # HiGHS's presolve finds little to remove in a restricted LP and costs a fifth
        # of the time (lesmis, football, polbooks: 0.45 -> 0.32 s, 0.28 -> 0.25 s,
        # 0.19 -> 0.16 s of polish)
        self.model.h.setOptionValue("presolve", "off")
        self.cols.xcol = np.empty(0, dtype=np.int64)
        if not self.cols.restricted:
            self._add_columns(self.cols.pairs)
            if problem.sum_value is not None:
                from ._lp_matrix import sum_row

                self._add_rows(sum_row(self.cols.xcol, problem.sum_value))

    def _add_columns(self, pairs):
        """Columns (and objective rows) for the problem variables ``pairs``."""
        if pairs.size == 0:
            return
        obj = self.cols.objective(pairs)
        k = pairs.size
        base = self.n_cols
        ncol = obj.cost.size
        h = self.model.h
        from .highs import _EMPTY_F, _EMPTY_I

        h.addCols(ncol, obj.cost, obj.lower, obj.upper, 0, _EMPTY_I, _EMPTY_I, _EMPTY_F)
        self.offset += float(obj.offset)
        h.changeObjectiveOffset(self.offset)
        self.c_cost.append(obj.cost)
        self.c_lo.append(obj.lower)
        self.c_hi.append(obj.upper)
        # x columns of these pairs are base .. base+k-1; auxiliary ones follow
        self.cols.of[pairs] = base + np.arange(k)
        if self.cols.restricted:
            self.cols.pairs = np.concatenate([self.cols.pairs, pairs])
            self.cols.xcol = np.concatenate([self.cols.xcol, base + np.arange(k)])
        else:
            self.cols.xcol = base + np.arange(k)
        self.n_cols += ncol
        if obj.rows is not None:  # |x - d| <= t rows, in this block's column numbers
            self._add_rows(obj.rows._replace(index=(obj.rows.index + base).astype(np.int32)))

    def _add_rows(self, block):
        self.model.add(block)

    @property
    def n_rows(self):
        return self.model.n_rows

    @property
    def n_nonzeros(self):
        return self.model.n_nonzeros

    def solve(self, deadline):
        """Solve the model; returns ``(status, message, x, value)`` with ``x`` the
        problem's full vector (targets outside the model) or None."""
        if self.n_cols == 0:  # nothing to solve yet: every pair at its target
            return (Status.OPTIMAL, "no rows yet: every pair at its target",
                    self.cols.full_x(np.zeros(0)), float(self.problem.constant))
        status, message, z, value = self.model.solve(deadline)
        return status, message, (None if z is None else self.cols.full_x(z)), value

    def add_blocks(self, blocks):
        """Add row blocks given in problem-variable ids (columns created as needed)."""
        for block in blocks:
            if block is None or block.n_rows == 0:
                continue
            ids = np.asarray(block.index, dtype=np.int64)
            self._add_columns(self.cols.bring_in(ids))
            self._add_rows(block._replace(index=self.cols.of[ids].astype(np.int32)))

    def certificate_box(self):
        """A finite box of the model's columns that holds an LP optimum.

        Pair columns: the problem's bounds where finite, else the box its optimum is
        known to lie in (:func:`metricopt.bounds.optimum_box`); the auxiliary column
        ``t >= |x - d|`` of a pair: ``[0, max(d - lo, hi - d)]``.
        """
        from ..bounds import optimum_box

        lo_x, hi_x = optimum_box(self.problem)
        col_lo = np.concatenate(self.c_lo).copy()
        col_hi = np.concatenate(self.c_hi).copy()
        xcol = self.cols.xcol
        col_lo[xcol] = np.maximum(col_lo[xcol], lo_x)
        col_hi[xcol] = np.minimum(col_hi[xcol], hi_x)
        aux = np.ones(self.n_cols, dtype=bool)
        aux[xcol] = False
        if aux.any():
            d = np.asarray(self.problem.target, dtype=np.float64)
            span = float(np.max(np.maximum(d - lo_x, hi_x - d), initial=0.0))
            col_lo[aux] = np.maximum(col_lo[aux], 0.0)
            col_hi[aux] = np.minimum(col_hi[aux], span)
        return col_lo, col_hi

    def certified_bound(self):
        """Lower bound on the full LP from HiGHS's row duals (:func:`lp_dual_bound`).

        Variables without a column are free in the restricted LP and contribute
        ``min w |x - d| = 0`` (dense l1 problems only; others have every column).
        """
        from ..bounds import lp_dual_bound

        t0 = time.perf_counter()
        if self.n_cols == 0:  # no rows yet: each term w |x - d| is at its minimum, 0
            return float(self.problem.constant), dict(
                certified=True, rounding=0.0, note="no rows: every pair at its target",
                seconds=time.perf_counter() - t0)
        y = self.model.duals()
        if y is None:
            return float("nan"), dict(reason="HiGHS gave no dual values")
        a, lo, hi = self.model.matrix()
        cost = np.concatenate(self.c_cost)
        col_lo, col_hi = self.certificate_box()
        res = lp_dual_bound(cost, a, lo, hi, y, col_lo, col_hi,
                            offset=self.offset + float(self.problem.constant))
        details = dict(res)
        details["seconds"] = time.perf_counter() - t0
        return float(res["value"]), details


def polish(problem, active, *, tol, gap_tol=1e-4, deadline=None, threads=None,
           max_rounds=MAX_ROUNDS, callback=None):
    """Solve the LP on ``active`` rows exactly, separating violated rows until none is.

    Parameters
    ----------
    problem : MetricProblem
        An LP (linear or l1 objective).
    active : ActiveRows
    tol : float
        Largest violation accepted for the answer (HiGHS's own tolerances are 1e-9).
    gap_tol : float, default=1e-4
        The certified gap wanted; sets the interior-point method's optimality tolerance
        when the polish switches to it (see :data:`SIMPLEX_ITERATIONS_PER_ROW`).
    deadline : float or None
        ``time.perf_counter()`` value at which to stop.
    threads : int or None
    max_rounds : int
    callback : callable or None
        Called with ``(round, value, max_violation, rows)`` after each round.

    Returns
    -------
    dict
        ``status`` (OPTIMAL when the answer violates nothing by more than ``tol``),
        ``x`` (problem order; None if HiGHS gave no point), ``lower_bound`` (certified
        from the LP dual of the round that met ``tol``, or of round ``max_rounds``;
        valid for the full LP either way; None otherwise), ``bound_details``, ``max_violation``, ``rounds``, ``rows``,
        ``columns``, ``seconds``, ``message``.
    """
    from .highs import _Separator

    t0 = time.perf_counter()
    opts = dict(verbose=False, seed=0, tol=1e-9, threads=threads)
    rm = RestrictedModel(problem, opts)
    rm.add_blocks(active.blocks(problem))
    sep = _Separator(problem, max(tol, 1e-9), None)
    out = dict(status=Status.LIMIT, x=None, lower_bound=None, bound_details={},
               max_violation=np.inf, rounds=0, message="")
    for rnd in range(1, max_rounds + 1):
        if deadline is not None and time.perf_counter() >= deadline:
            out["message"] = "time limit reached in the polish"
            break
        status, message, x, value = _solve(rm, tol, gap_tol, deadline)
        if status != Status.OPTIMAL or x is None:
            out["status"] = Status.LIMIT if status == Status.LIMIT else Status.NUMERICAL
            out["message"] = f"restricted LP: {message}"
            break
        out["rounds"] = rnd
        blocks, worst = sep.separate(x)
        worst = max(worst, problem.bound_violation(x))
        if rm.n_cols and (worst <= tol or rnd == max_rounds):
            # the bound of this round's relaxation (certified only where it is used:
            # adding rows discards HiGHS's duals)
            lb, details = rm.certified_bound()
            if np.isfinite(lb) and (out["lower_bound"] is None or lb > out["lower_bound"]):
                out["lower_bound"], out["bound_details"] = lb, details
        out["x"], out["max_violation"] = x, float(worst)
        if callback is not None:
            callback(rnd, value, worst, rm.model.n_rows)
        if worst <= tol:
            out["status"] = Status.OPTIMAL
            out["message"] = f"restricted LP optimal after {rnd} rounds"
            break
        if not any(b is not None and b.n_rows for b in blocks):
            if rm.algorithm == "ipm" and not rm.crossover:
                # the interior point meets the model's rows only to its own tolerance:
                # the same round again, with crossover to a vertex
                rm.crossover = True
                continue
            out["status"], out["message"] = Status.NUMERICAL, (
                f"violated rows (largest {worst:.3g}) are in the restricted LP already")
            break
        rm.add_blocks(blocks)
        sep.commit()
    else:
        out["message"] = f"no LP optimum after {max_rounds} separation rounds"
    out.update(rows=int(rm.model.n_rows), columns=int(rm.n_cols),
               seconds=time.perf_counter() - t0, lp_algorithm=rm.algorithm)
    return out


def _solve(rm, tol, gap_tol, deadline):
    """One round: the dual simplex method within its iteration budget, else (from then
    on) the interior-point method without crossover."""
    h = rm.model.h
    if rm.n_cols and rm.algorithm == "ipm":
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "on" if rm.crossover else "off")
        h.setOptionValue("ipm_optimality_tolerance", max(min(1e-7, 0.01 * gap_tol), 1e-10))
        return rm.solve(deadline)
    if rm.n_cols and rm.algorithm == "simplex":
        budget = max(MIN_SIMPLEX_ITERATIONS, int(SIMPLEX_ITERATIONS_PER_ROW * rm.model.n_rows))
        h.setOptionValue("simplex_iteration_limit", budget)
        result = rm.solve(deadline)
        if result[0] != Status.LIMIT or (deadline is not None and time.perf_counter() >= deadline):
            return result
        rm.algorithm = "ipm"
        return _solve(rm, tol, gap_tol, deadline)
    return rm.solve(deadline)
