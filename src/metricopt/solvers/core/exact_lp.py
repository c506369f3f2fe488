"""The exact LP on a set of rows: a HiGHS model, with a certified bound from its duals.

:class:`ExactModel` holds one relaxation (the objective's columns and any rows added to
it) and solves it with HiGHS; :meth:`ExactModel.certified_bound` turns HiGHS's row
duals into a lower bound on the LP optimum of the *full* problem, valid whatever subset
of its rows the model holds. :class:`RestrictedModel` grows the columns with the rows
(dense l1 problems: only the pairs some row touches are columns). The LP polish
(:mod:`.polish`) and both HiGHS backends (``highs``, ``highs-lazy``) build on them;
:func:`model_bytes` is the memory model of a HiGHS solve they check before building.
"""

import math
import time
from types import SimpleNamespace

import numpy as np

from ..._stdout import native_stdout_to_stderr
from ...result import Status
from .highs_status import map_status
from .loop import interrupt_deferred, signals_held_here

__all__ = ["DEFAULT_GAP_TOL", "MEMORY_MODEL", "EMPTY_F", "EMPTY_I", "ExactModel",
           "RestrictedModel", "model_bytes"]

#: Default ``gap_tol`` of the HiGHS backends: the largest certified relative gap accepted
#: (PDLP's stopping tolerance is derived from it).
DEFAULT_GAP_TOL = 1e-6

# ------------------------------------------------------------- memory model
#: Peak resident bytes of a HiGHS 1.15 solve (PDLP: 1.16), modelled as
#: ``base + per_row * rows + per_nonzero * nonzeros + per_col * cols`` (see
#: :func:`metricopt.solvers.highs.estimate_memory` for the measurements). The active-set
#: QP solver adds a dense null-space matrix, counted at up to ``cols**2`` doubles.
MEMORY_MODEL = {
    "simplex": dict(base=64 * 2**20, per_row=1300.0, per_nonzero=40.0, per_col=4000.0),
    "ipm": dict(base=64 * 2**20, per_row=1000.0, per_nonzero=40.0, per_col=12000.0),
    "pdlp": dict(base=64 * 2**20, per_row=560.0, per_nonzero=40.0, per_col=4000.0),
    "qp": dict(base=64 * 2**20, per_row=1300.0, per_nonzero=40.0, per_col=4000.0),
}


def model_bytes(algorithm, rows, nonzeros, cols, *, nullspace=0):
    """Estimated peak bytes of a HiGHS solve of ``rows`` rows, ``nonzeros`` nonzeros and
    ``cols`` columns with ``algorithm`` (:data:`MEMORY_MODEL`); ``nullspace``: the
    active-set QP's null-space dimension."""
    coef = MEMORY_MODEL[algorithm]
    total = (coef["base"] + coef["per_row"] * rows + coef["per_nonzero"] * nonzeros
             + coef["per_col"] * cols)
    if nullspace:
        total += 8.0 * nullspace * nullspace  # dense reduced Hessian of the active-set QP
    return int(total)

# ------------------------------------------------------------ HiGHS driving
#: HiGHS refuses feasibility tolerances below this.
_HIGHS_MIN_TOL = 1e-10
#: Primal feasibility tolerance handed to HiGHS's active-set QP solver at the least; the
#: answer is then held to the requested ``tol`` by metricopt's own constraint check.
_HIGHS_QP_TOL = 1e-7
EMPTY_I = np.zeros(0, dtype=np.int32)
EMPTY_F = np.zeros(0, dtype=np.float64)


class ExactModel:
    """A ``highspy.Highs`` instance holding one relaxation, with timing and sizes.

    ``opts`` needs ``tol`` (a float), ``verbose``, ``seed`` and ``threads``; PDLP also
    reads ``gap_tol`` (default :data:`DEFAULT_GAP_TOL`). After :meth:`solve`,
    :meth:`duals` gives HiGHS's row multipliers and :meth:`certified_bound` a lower
    bound on the LP optimum of the *full* problem computed from them, valid whatever
    subset of its rows the model holds.
    """

    def __init__(self, problem, objective, opts, algorithm):
        import highspy

        self.highspy = highspy
        # highspy >= 1.16 prints a banner here, before output_flag can be set
        with native_stdout_to_stderr(discard=not opts["verbose"]):
            self.h = h = highspy.Highs()
            h.setOptionValue("output_flag", bool(opts["verbose"]))
        self.algorithm = algorithm
        self.solve_seconds = 0.0
        self.total_iterations = 0
        h.setOptionValue("random_seed", int(opts["seed"]) % 2**31)  # HiGHS's is an int32
        tol = max(opts["tol"], _HIGHS_MIN_TOL)
        if algorithm == "qp":
            # HiGHS >= 1.16 re-checks the active-set QP's answer against this tolerance
            # and calls answers with infeasibilities of ~1e-8 in its own measure a solve
            # error, although the point meets ``tol`` in ours; the run checks its x
            h.setOptionValue("primal_feasibility_tolerance", max(tol, _HIGHS_QP_TOL))
        else:
            h.setOptionValue("primal_feasibility_tolerance", tol)
        h.setOptionValue("dual_feasibility_tolerance", tol)
        h.setOptionValue("ipm_optimality_tolerance", min(1e-8, tol))
        if opts["threads"] is not None:
            h.setOptionValue("threads", int(opts["threads"]))
            # HiGHS sizes one process-wide thread pool at its first solve
            h.resetGlobalScheduler(True)
        if algorithm == "pdlp":
            # HiGHS 1.16's PDLP stops on kkt_tolerance (pdlp_optimality_tolerance is
            # read but has no effect); the answer is then checked by metricopt
            gap_tol = float(opts.get("gap_tol", DEFAULT_GAP_TOL))
            h.setOptionValue("kkt_tolerance", max(min(tol, gap_tol), _HIGHS_MIN_TOL))
        if algorithm == "qp":
            h.setOptionValue("solver", "qpasm")
            # the active-set QP gives up beyond this null-space dimension by default
            h.setOptionValue("qp_nullspace_limit", max(4000, int(objective.cost.size)))
        else:
            h.setOptionValue("solver", algorithm)
        ncol = objective.cost.size
        h.addCols(ncol, objective.cost, objective.lower, objective.upper, 0, EMPTY_I, EMPTY_I, EMPTY_F)
        h.changeObjectiveOffset(float(objective.offset))
        if objective.hessian_diag is not None:
            diag = np.zeros(ncol)
            diag[: objective.hessian_diag.size] = objective.hessian_diag
            nz = np.flatnonzero(diag).astype(np.int32)
            start = np.searchsorted(nz, np.arange(ncol)).astype(np.int32)
            h.passHessian(ncol, nz.size, self.highspy.HessianFormat.kTriangular, start, nz, diag[nz])
        h.ensureRowwise()
        self.n_rows = 0
        self.n_nonzeros = 0

    def add(self, block):
        if block is None or block.n_rows == 0:
            return
        self.h.addRows(block.n_rows, block.lower, block.upper, block.n_nonzeros,
                       block.starts, block.index, block.value)
        self.n_rows += block.n_rows
        self.n_nonzeros += block.n_nonzeros

    def solve(self, deadline, iteration_limit=None):
        """Run HiGHS until ``deadline`` (a ``perf_counter`` value or ``None``)."""
        h = self.h
        if deadline is not None:
            # HiGHS's time limit counts the object's run time over all solves
            h.setOptionValue("time_limit", h.getRunTime() + max(deadline - time.perf_counter(), 0.0))
        if iteration_limit is not None:
            h.setOptionValue("simplex_iteration_limit", int(iteration_limit))
            h.setOptionValue("ipm_iteration_limit", int(iteration_limit))
            h.setOptionValue("qp_iteration_limit", int(iteration_limit))
            h.setOptionValue("pdlp_iteration_limit", int(iteration_limit))
        t0 = time.perf_counter()
        # a Ctrl-C (or SIGTERM, SIGHUP) is held while HiGHS runs, which stops at its next
        # simplex or interior-point iteration; the held signal then takes its course
        with interrupt_deferred() as held, native_stdout_to_stderr():
            self._held = held
            if signals_held_here():
                self._watch_interrupts()
            h.run()
        self.solve_seconds += time.perf_counter() - t0
        model_status = h.getModelStatus()
        status, message = map_status(model_status, h.modelStatusToString(model_status))
        info = h.getInfo()
        # per-solve counts; -1 where a method did not run
        self.total_iterations += sum(max(int(c), 0) for c in (
            info.simplex_iteration_count, info.ipm_iteration_count, info.qp_iteration_count,
            info.pdlp_iteration_count))
        x = None
        if info.primal_solution_status > 0 or model_status == self.highspy.HighsModelStatus.kOptimal:
            x = np.array(h.getSolution().col_value, dtype=np.float64)
        return status, message, x, float(info.objective_function_value)

    def _watch_interrupts(self):
        """Subscribe, once, HiGHS's simplex and interior-point interrupt callbacks (where
        highspy has their events; elsewhere HiGHS runs to its end) to the signals held by
        :meth:`solve`."""
        if getattr(self, "_watching", False):
            return
        self._watching = True

        def ask(event):
            if self._held:
                event.interrupt()

        for name in ("cbSimplexInterrupt", "cbIpmInterrupt"):
            hook = getattr(self.h, name, None)
            if hook is not None:
                hook.subscribe(ask)

    def iterations(self):
        """HiGHS iterations (simplex, interior point, QP, PDLP) over every solve so far."""
        return self.total_iterations

    def duals(self):
        """HiGHS's row multipliers of the last solve, or ``None`` if it has none.

        Returns
        -------
        ndarray of shape (n_rows,) or None
            In HiGHS's convention: reduced costs ``c - A'y``; ``y >= 0`` on rows at
            their lower side, ``<= 0`` at their upper side (the clipping of
            :func:`~metricopt.bounds.lp_dual_bound` enforces it).
        """
        sol = self.h.getSolution()
        if not sol.dual_valid:
            return None
        y = np.array(sol.row_dual, dtype=np.float64)
        return y if y.shape == (self.h.getNumRow(),) else None

    def matrix(self):
        """The model's rows: ``(A, row_lower, row_upper)``, ``A`` a scipy CSC matrix.

        Read back from HiGHS's copy of the model (what was passed to :meth:`add`);
        numpy arrays throughout, no Python lists (about 0.3 s for 2.2M nonzeros).
        """
        import scipy.sparse as sp

        h = self.h
        n_col, n_row, nnz = h.getNumCol(), h.getNumRow(), h.getNumNz()
        if n_row == 0 or nnz == 0 or n_col == 0:
            a = sp.csc_matrix((n_row, n_col), dtype=np.float64)
        else:
            _, start, index, value = h.getColsEntries(n_col, np.arange(n_col, dtype=np.int32))
            indptr = np.empty(n_col + 1, dtype=np.int64)
            indptr[:n_col] = start[:n_col]
            indptr[n_col] = nnz
            a = sp.csc_matrix((np.asarray(value[:nnz], dtype=np.float64), np.asarray(index[:nnz]),
                               indptr), shape=(n_row, n_col))
        if n_row:
            _, _, row_lower, row_upper, _ = h.getRows(n_row, np.arange(n_row, dtype=np.int32))
        else:
            row_lower = row_upper = EMPTY_F
        return a, np.asarray(row_lower, dtype=np.float64), np.asarray(row_upper, dtype=np.float64)

    def certified_bound(self, problem, objective):
        """A certified lower bound on the LP optimum of ``problem`` from the last solve.

        Weak duality (:func:`~metricopt.bounds.lp_dual_bound`) with HiGHS's row duals,
        the model's rows as HiGHS holds them, and the box of
        :func:`~metricopt.solvers.core.lp_matrix.certificate_box`: no reduced cost,
        objective value or tolerance of HiGHS is used. The rows may be any subset of the
        problem's (a lazy or restricted model): the missing rows have multiplier 0 and
        the box contains an optimum of the full LP, so the bound holds for the full LP.

        Parameters
        ----------
        problem : MetricProblem
        objective : ObjectiveModel
            The one the model was built from.

        Returns
        -------
        bound : float
            ``nan`` for QPs (no LP certificate: the caller keeps its own bound) and when
            HiGHS has no dual values; ``-inf`` when the box leaves a reduced cost
            unbounded.
        details : dict
            The :class:`~metricopt.bounds.BoundResult` fields (``certified``,
            ``rounding``, ``clipped``, ``note``...) and ``seconds``, or ``reason`` when
            no bound was computed.
        """
        from ...bounds import lp_dual_bound
        from . import lp_matrix as lpm

        t0 = time.perf_counter()
        box = lpm.certificate_box(problem, objective)
        if box is None:
            return math.nan, dict(certified=False, reason="a QP has no LP-dual certificate")
        y = self.duals()
        if y is None:
            return math.nan, dict(certified=False, reason="HiGHS has no dual values")
        a, row_lower, row_upper = self.matrix()
        res = lp_dual_bound(objective.cost, a, row_lower, row_upper, y, box[0], box[1],
                            offset=objective.offset)
        details = dict(res)
        details["seconds"] = time.perf_counter() - t0
        return float(res.value), details


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
        from .lp_matrix import objective_model

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

    Used by the polish (:mod:`.polish`), by ``highs-lazy`` and by ``highs`` on a
    problem given by its rows (dense l1 problems: only the pairs some row touches are
    columns, see Notes).

    Parameters
    ----------
    problem : MetricProblem
    opts : dict
        ``tol``, ``verbose``, ``seed``, ``threads`` (as :class:`ExactModel`).
    algorithm : {"simplex", "ipm", "pdlp"}, default="simplex"
    columns : object, optional
        The columns' numbering when the rows name a backend's own variables (the
        :class:`_Columns` interface); default: the problem's variables.

    Notes
    -----
    For dense l1 problems (correlation clustering, l1 metric nearness) only the pairs
    that some row of the model touches become columns: any other pair is free in the
    restricted LP, where ``w |x - d|`` is smallest at ``x = d`` with value 0, so the
    restricted optimum is that of the model and its full ``x`` is ``d`` outside it.
    Rows added later bring their pairs in as new columns. Sparsest cut keeps every pair
    (the row ``sum(x) = n`` couples them); sparse (MET(G)) and edge problems have one
    column per variable anyway.
    """

    def __init__(self, problem, opts, algorithm="simplex", columns=None):
        self.problem = problem
        self.algorithm = algorithm
        self.crossover = False  # the interior-point method's answer made a vertex
        self.cols = _Columns(problem) if columns is None else columns
        self.c_cost, self.c_lo, self.c_hi = [], [], []
        self.offset = 0.0
        self.n_cols = 0
        empty = SimpleNamespace(cost=np.zeros(0), lower=np.zeros(0), upper=np.zeros(0),
                                offset=0.0, hessian_diag=None)
        self.model = ExactModel(problem, empty, {"gap_tol": 1e-6, **opts}, algorithm)
        # HiGHS's presolve finds little to remove in a restricted LP and costs a fifth
        # of the time (lesmis, football, polbooks: 0.45 -> 0.32 s, 0.28 -> 0.25 s,
        # 0.19 -> 0.16 s of polish)
        self.model.h.setOptionValue("presolve", "off")
        self.cols.xcol = np.empty(0, dtype=np.int64)
        if not self.cols.restricted:
            self._add_columns(self.cols.pairs)
            if problem.sum_value is not None:
                from .lp_matrix import sum_row

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
        h.addCols(ncol, obj.cost, obj.lower, obj.upper, 0, EMPTY_I, EMPTY_I, EMPTY_F)
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
        from ...bounds import optimum_box

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
        from ...bounds import lp_dual_bound

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
