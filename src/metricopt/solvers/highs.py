"""Exact LP/QP solutions with HiGHS: the full constraint matrix, or rows added lazily.

``highs`` builds every constraint row and solves once; it is the reference the
iterative backends are tested against. ``highs-lazy`` starts from the bounds and the
objective alone and adds violated metric constraints round by round, re-solving
warm-started from the previous basis (V §8.1.1).
"""

import math
import time

import numpy as np

from .._memory import available_memory, check_memory
from .._stdout import native_stdout_to_stderr
from ..exceptions import MemoryLimitError
from ..problems._pairs import n_pairs
from ..result import Status
from ._base import Solver
from ._highs_status import map_status
from .core import options as opt

__all__ = ["HighsSolver", "HighsLazySolver", "estimate_memory"]

LP_ALGORITHMS = ("auto", "simplex", "ipm", "pdlp")
#: ``highs-lazy`` re-solves warm-started; PDLP, a first-order method, would start over
#: every round and stop short of the accuracy the separation needs.
LAZY_LP_ALGORITHMS = ("auto", "simplex", "ipm")
#: Default ``tol`` (largest constraint violation accepted) of the simplex and
#: interior-point methods, and of PDLP.
DEFAULT_TOL = 1e-9
PDLP_TOL = 1e-6
#: Default ``gap_tol``: the largest certified relative gap accepted.
DEFAULT_GAP_TOL = 1e-6

# ------------------------------------------------------------- memory model
#: Peak resident bytes of a HiGHS 1.15 solve (PDLP: 1.16), modelled as
#: ``base + per_row * rows + per_nonzero * nonzeros + per_col * cols`` (see
#: :func:`estimate_memory` for the measurements). The active-set QP solver adds a dense
#: null-space matrix, counted at up to ``cols**2`` doubles.
MEMORY_MODEL = {
    "simplex": dict(base=64 * 2**20, per_row=1300.0, per_nonzero=40.0, per_col=4000.0),
    "ipm": dict(base=64 * 2**20, per_row=1000.0, per_nonzero=40.0, per_col=12000.0),
    "pdlp": dict(base=64 * 2**20, per_row=560.0, per_nonzero=40.0, per_col=4000.0),
    "qp": dict(base=64 * 2**20, per_row=1300.0, per_nonzero=40.0, per_col=4000.0),
}


def _model_bytes(algorithm, rows, nonzeros, cols, *, nullspace=0):
    coef = MEMORY_MODEL[algorithm]
    total = (coef["base"] + coef["per_row"] * rows + coef["per_nonzero"] * nonzeros
             + coef["per_col"] * cols)
    if nullspace:
        total += 8.0 * nullspace * nullspace  # dense reduced Hessian of the active-set QP
    return int(total)


def _resolve_algorithm(problem, lp_algorithm, *, lazy):
    """The HiGHS solver to use: ``"simplex"``, ``"ipm"`` or ``"qp"``.

    ``"auto"`` follows the measurements in :class:`HighsSolver`: the dual simplex for
    lazy rounds (warm starts) and for the full correlation-clustering, metric-nearness
    and cluster-deletion LPs; the interior-point method for LPs with the equality row
    ``sum(x) = n`` of sparsest cut.
    """
    if problem.objective == "l2":
        return "qp"
    if lp_algorithm != "auto":
        return lp_algorithm
    if lazy:
        return "simplex"
    return "ipm" if problem.sum_value is not None else "simplex"


def estimate_memory(problem, *, lp_algorithm="auto", lazy=False):
    """Estimated peak bytes of solving ``problem`` with HiGHS.

    Parameters
    ----------
    problem : MetricProblem
    lp_algorithm : {"auto", "simplex", "ipm", "pdlp"}
    lazy : bool
        Estimate for ``highs-lazy`` (the objective, the bounds, the separation buffers
        and one round of rows) instead of the full constraint matrix.

    Returns
    -------
    int

    Notes
    -----
    The full model's size is exact (:func:`metricopt.solvers._lp_matrix.model_size`);
    the bytes per row, nonzero and column (:data:`MEMORY_MODEL`) come from the peak
    resident memory of HiGHS 1.15 solving full LPs, minus the process's size before the
    model was built. Dual simplex, bytes per row: cluster deletion on email (96k rows)
    1348, jazz (103k) 1301, SmaGri (181k) 1258, ca-GrQc (228k) 1641, ca-HepTh (297k)
    1618, polblogs (1.34M rows, 1.9 GiB) 1482; Jaccard correlation clustering on
    dolphins (113k) 1304, lesmis (219k) 1289, football (741k, 1.0 GiB) 1478. Interior
    point (with crossover): 620-1210 bytes per row on the same kind of LPs. PDLP
    (HiGHS 1.16, two threads), rows and nonzeros together: lesmis 746, polbooks (562k
    rows) 599, football 576 bytes per row, about 40% of the simplex method's. The model
    gives 20.5 GB for the 14.4M-row cluster-deletion LP of Vassar85 (31M nonzeros),
    which was reported to peak near 18 GB: the estimate errs on the safe side by about
    15%. A dense problem given by its rows (the open-wedge relaxation of cc) has its own
    model, of the whole run's peak (:data:`ROWS_MODEL`), for both methods: ``highs-lazy``
    adds at most every row.
    """
    from . import _lp_matrix as lpm

    algorithm = _resolve_algorithm(problem, lp_algorithm, lazy=lazy)
    if problem.rows is not None:
        # highs-lazy adds at most every row too: the same bound
        return _rows_bytes(problem)
    size = lpm.model_size(problem)
    if lazy and _restricted_columns(problem) and algorithm != "qp":
        rows = _cluster_editing_rows(problem)
        if rows is not None:
            coef = ROWS_MODEL
            return int(coef["base"] + coef["per_pair"] * problem.n_variables
                       + coef["per_row"] * rows)
        # columns only for the pairs rows touch; per pair: x, the targets, the column
        # map and the separation's best row (about 64 bytes); rows and columns as the
        # rounds add them, each round checked before it is added
        n_x = problem.n_variables
        target = np.asarray(problem.target, dtype=np.float64)
        low = int(np.count_nonzero(target < target.max())) if n_x else 0
        # (unit cc: about as many columns as rows at the end; 4 rows per edge covers
        # ca-GrQc's 78k and ca-HepTh's 184k final rows: peaks 0.88 and 2.71 GB measured,
        # 0.90 and 3.0 GB estimated)
        round_rows = min(n_x, 4 * low)
        return (_model_bytes(algorithm, round_rows, 3 * round_rows, round_rows)
                + 64 * n_x)
    if lazy:
        n_x = problem.n_variables
        aux = size["cols"] - (n_pairs(problem.n) if problem.structure != "edges" else n_x)
        cols = n_x + aux
        rows = 2 * aux + (problem.sum_value is not None)
        nnz = 4 * aux + (n_x if problem.sum_value is not None else 0)
        if problem.structure == "dense":
            round_rows, round_nnz = n_x, 3 * n_x
            workspace = 64 * n_x
        elif problem.structure == "sparse":
            round_rows = n_x
            round_nnz = 8 * n_x
            workspace = 64 * n_x + 48 * problem.n
        else:
            fam_rows, fam_nnz = lpm.edge_family_size(problem)
            round_rows, round_nnz = fam_rows, fam_nnz
            workspace = 40 * fam_rows
        return _model_bytes(algorithm, rows + round_rows, nnz + round_nnz, cols) + workspace
    nullspace = size["cols"] if algorithm == "qp" else 0
    block = 40 * min(size["rows"], lpm.DEFAULT_BLOCK_ROWS)
    return _model_bytes(algorithm, size["rows"], size["nonzeros"], size["cols"],
                        nullspace=nullspace) + block


#: Peak resident bytes of a whole run on a dense problem given by its rows (the
#: open-wedge LP), modelled as ``base + per_pair * pairs + per_row * rows``: the
#: process with its libraries, the dense vectors (weights, targets, ``x`` and its
#: copies), and per row HiGHS's model and factorisation, the row list and its blocks.
#: Fitted to ``metricopt.solve(..., method="highs")`` on unit cc (HiGHS 1.16, dual
#: simplex, two threads), measured / modelled peak: ca-GrQc (8.6M pairs, 85k rows)
#: 0.78 / 0.78 GB, ca-HepTh (37M, 214k) 2.40 / 2.40 GB, polblogs (0.75M, 1.04M rows)
#: 2.09 / 2.08 GB, SmaGri (0.52M, 164k) 0.52 / 0.52 GB, Roget (0.49M, 30k) 0.29 /
#: 0.29 GB. The columns (one per pair a row touches, at most the rows plus the edges)
#: added nothing measurable.
ROWS_MODEL = dict(base=205 * 2**20, per_pair=49.0, per_row=1800.0)


def _rows_bytes(problem):
    """Estimated peak bytes of a dense problem with explicit ``rows`` (one model with
    every row; columns only for the pairs the rows touch; see :data:`ROWS_MODEL`)."""
    coef = ROWS_MODEL
    return int(coef["base"] + coef["per_pair"] * problem.n_variables
               + coef["per_row"] * len(problem.rows))


#: Rows that ``highs-lazy`` holds at the end of the full LP of unit-weight (or LambdaCC)
#: correlation clustering: ``min(per_wedge * open wedges, per_edge * edges)``, the whole
#: run's peak then modelled by :data:`ROWS_MODEL`. Rows a peak implies (ROWS_MODEL
#: inverted), against open wedges and edges: ca-GrQc 146k (85k wedges, 13k edges), ca-HepTh
#: 404k (214k, 25k), polblogs 546k (1.04M, 17k), SmaGri 183k (164k, 5k), Roget 40k (30k,
#: 4k); the model's estimate / measured peak: 1.03, 1.00, 1.01, 0.94, 1.10
#: (``benchmarks/bench_wedges.py``); on graphs outside the fit, ``metricopt bound cc
#: --weights unit --method highs-lazy``: USAir97 1.10, email 1.27, jazz 1.32 (peaks under
#: 0.4 GiB, where the process's own 205 MiB dominate; the error is on the safe side). The
#: rows grow with the open wedges on sparse graphs and with the edges where the wedges are
#: many per edge (polblogs: 62).
LAZY_CLUSTER_EDITING_ROWS = dict(per_wedge=1.9, per_edge=33.0)


def _cluster_editing_rows(problem):
    """Estimated final rows of ``highs-lazy`` on the full LP of unit or LambdaCC cc
    (:data:`LAZY_CLUSTER_EDITING_ROWS`), or None for other problems."""
    params = getattr(problem, "params", None) or {}
    graph = getattr(problem, "graph", None)
    if (problem.kind != "cc" or params.get("weights") not in ("unit", "lambda")
            or graph is None or problem.rows is not None):
        return None
    from ..problems._wedges import open_wedge_count

    coef = LAZY_CLUSTER_EDITING_ROWS
    return min(coef["per_wedge"] * open_wedge_count(graph), coef["per_edge"] * graph.m)


# ------------------------------------------------------------ options
def _options(tol, max_iter_doc, lp_algorithm, extra=()):
    return (
        opt.TOL.replace(default=tol, none=True, doc=(
            "Largest constraint violation accepted (measured by metricopt on the returned x); "
            "also HiGHS's primal and dual feasibility tolerance (at least 1e-10, HiGHS's "
            "minimum).")),
        opt.TIME_LIMIT.replace(doc="Seconds, model building included."),
        opt.MAX_ITER.replace(none=True, doc=max_iter_doc),
        opt.THREADS.replace(doc="HiGHS threads (None: HiGHS's choice)."),
        opt.MAX_MEMORY.replace(doc="Bytes allowed (default: what the machine has available)."),
        opt.VERBOSE.replace(doc="Let HiGHS log to the console."),
        opt.SEED.replace(default=0, doc="Random seed in [0, 2**63); HiGHS's own is "
                                        "seed % 2**31."),
        opt.CALLBACK,
        lp_algorithm,
        *extra,
        opt.GAP_TOL.replace(default=DEFAULT_GAP_TOL, doc=(
            "Largest certified relative gap (fun - lower_bound) / max(|fun|, |lower_bound|) "
            "accepted as optimal (LPs).")),
    )


#: The options of ``highs`` (:meth:`HighsSolver.driver`), declared once.
OPTIONS = _options(None, "Simplex / interior-point / PDLP / QP iteration limit.", opt.Option(
    "lp_algorithm", "choice", default="auto", choices=LP_ALGORITHMS,
    doc="auto: the interior-point method (with crossover) for LPs with a sum row (sparsest "
        "cut), the dual simplex method otherwise; pdlp: HiGHS's first-order method."))
#: The options of ``highs-lazy`` (:meth:`HighsLazySolver.driver`), declared once.
LAZY_OPTIONS = _options(DEFAULT_TOL, "Most rounds (HiGHS solves).", opt.Option(
    "lp_algorithm", "choice", default="auto", choices=LAZY_LP_ALGORITHMS,
    doc="auto: the dual simplex method, which re-solves from the previous basis; the "
        "interior-point method starts over every round."), extra=(opt.Option(
        "max_rows_per_round", "int", low=1, none=True,
        doc="Add at most this many of the most violated rows per round (None: all "
            "separated rows)."),))


def _check_options(caller, *, tol, time_limit, max_iter, threads, max_memory, verbose, seed,
                   callback, lp_algorithm, max_rows_per_round=None, gap_tol=DEFAULT_GAP_TOL,
                   algorithms=LP_ALGORITHMS):
    """The options as the drivers use them (checked by ``Solver.run`` against
    :data:`OPTIONS` or :data:`LAZY_OPTIONS`): numbers as float and int, ``seed`` None
    as 0."""
    def number(value, kind):
        return None if value is None else kind(value)

    return dict(tol=number(tol, float), time_limit=number(time_limit, float),
                max_iter=number(max_iter, int), threads=number(threads, int),
                max_memory=number(max_memory, int), verbose=bool(verbose),
                seed=0 if seed is None else int(seed), callback=callback,
                lp_algorithm=lp_algorithm, max_rows_per_round=number(max_rows_per_round, int),
                gap_tol=float(gap_tol))


def _default_tol(tol, algorithm):
    """``tol``, or its default for ``algorithm`` when ``None``."""
    if tol is not None:
        return tol
    return PDLP_TOL if algorithm == "pdlp" else DEFAULT_TOL


def _certified_gap(problem, fun, lower_bound):
    """The certified LP gap of :func:`metricopt.solvers.core.stage.lp_gap`; ``nan`` when
    ``fun`` or ``lower_bound`` is missing."""
    from .core.stage import GAP_FLOOR, lp_gap, objective_scale

    if not (math.isfinite(fun) and not math.isnan(lower_bound)):
        return math.nan
    return lp_gap(fun, lower_bound, GAP_FLOOR * objective_scale(problem))


def _judge_optimum(status, message, max_violation, gap, tol, gap_tol, fun, lower_bound,
                   certificate, hint=""):
    """``(status, message)`` of a one-model solve after the contract's checks: an optimum
    HiGHS reported that misses ``tol`` or ``gap_tol`` becomes ``NUMERICAL`` (with
    ``hint``); any other answer with a finite bound names it in the message."""
    if status == Status.OPTIMAL:
        missed = _acceptance(max_violation, gap, tol, gap_tol, fun, lower_bound,
                             certificate.get("rounding", 0.0))
        if missed:
            return Status.NUMERICAL, f"HiGHS reported an optimum, but {missed}.{hint} ({message})"
    elif math.isfinite(lower_bound):
        message += f" Certified lower bound {lower_bound:.10g} (relative gap {gap:.3g})."
    return status, message


def _acceptance(max_violation, gap, tol, gap_tol, fun=math.nan, lower_bound=math.nan, slack=0.0):
    """Why a point HiGHS called optimal is not accepted: ``""`` when it is.

    The gap test also passes when ``fun - lower_bound`` is within ``slack``, the rounding
    allowance of the certificate (an optimum of 0 certified as ``-3e-14``).
    """
    missed = []
    if not max_violation <= tol:
        missed.append(f"its largest constraint violation {max_violation:.3g} exceeds tol={tol:g}")
    if not (gap <= gap_tol or fun - lower_bound <= slack):
        missed.append(f"the certified relative gap {gap:.3g} exceeds gap_tol={gap_tol:g}")
    return " and ".join(missed)


# ------------------------------------------------------------ HiGHS driving
#: HiGHS refuses feasibility tolerances below this.
_HIGHS_MIN_TOL = 1e-10
#: Primal feasibility tolerance handed to HiGHS's active-set QP solver at the least; the
#: answer is then held to the requested ``tol`` by metricopt's own constraint check.
_HIGHS_QP_TOL = 1e-7
_EMPTY_I = np.zeros(0, dtype=np.int32)
_EMPTY_F = np.zeros(0, dtype=np.float64)


class _Model:
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
        h.addCols(ncol, objective.cost, objective.lower, objective.upper, 0, _EMPTY_I, _EMPTY_I, _EMPTY_F)
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
        with native_stdout_to_stderr():  # a verbose run logs to file descriptor 1
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
            row_lower = row_upper = _EMPTY_F
        return a, np.asarray(row_lower, dtype=np.float64), np.asarray(row_upper, dtype=np.float64)

    def certified_bound(self, problem, objective):
        """A certified lower bound on the LP optimum of ``problem`` from the last solve.

        Weak duality (:func:`~metricopt.bounds.lp_dual_bound`) with HiGHS's row duals,
        the model's rows as HiGHS holds them, and the box of
        :func:`~metricopt.solvers._lp_matrix.certificate_box`: no reduced cost,
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
        from ..bounds import lp_dual_bound
        from . import _lp_matrix as lpm

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


def _record(iteration, start, value, gap, max_violation, active, added, dual=None):
    return dict(iteration=int(iteration), seconds=time.perf_counter() - start, primal=value,
                dual=value if dual is None else float(dual), gap=gap,
                max_violation=float(max_violation), full_check=True,
                active_constraints=int(active), constraints_added=int(added))


def _memory_text(problem, name):
    return (f"method {name!r} on {problem.kind} problem {problem.name!r} "
            f"(n={problem.n}, {problem.n_variables} variables)")


_REFERENCES = """
    References
    ----------
    .. [1] Huangfu, Q., & Hall, J. A. J. (2018). Parallelizing the dual revised simplex
           method. Math. Prog. Comp. 10, 119-142. https://doi.org/10.1007/s12532-017-0130-5
    .. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
           333-355. https://doi.org/10.1137/18M1217152
    .. [3] Applegate, D., Díaz, M., Hinder, O., Lu, H., Lubin, M., O'Donoghue, B., &
           Schudy, W. (2021). Practical large-scale linear programming using primal-dual
           hybrid gradient. NeurIPS 34. arXiv:2106.04756. Its C implementation in HiGHS:
           Lu, H., Yang, J., et al. (2023). cuPDLP-C. arXiv:2312.14832.
"""


# ------------------------------------------------------------------ solvers
class HighsSolver(Solver):
    """The exact LP/QP optimum from HiGHS with every constraint row built up front.

    Dense problems get all ``3 * C(n, 3)`` triangle rows; cluster deletion its triangle
    (three orientations) and open-wedge rows. A dense problem given by its rows (the
    open-wedge relaxation of correlation clustering, ``MetricProblem.rows``) gets those
    rows and columns only for the pairs they touch (the other pairs sit at their targets,
    as in ``highs-lazy``). A sparse problem (the cycle inequalities
    of MET(G)) is solved as the equivalent dense problem on K_n, where the pairs absent
    from the graph have weight 0: every point of MET(G) inside the bounds extends to a
    metric on K_n (the shortest-path metric, capped at the upper bound 1 for
    correlation clustering), so the optimum is the same; ``x`` comes back on the
    graph's pairs only.

    Objectives: linear as given; an l1 term whose target lies at or beyond a bound
    (the 0/1 targets of correlation clustering in ``[0, 1]``) is linear on the box, any
    other gets an auxiliary ``t >= |x - d|``; l2 is a QP with Hessian ``diag(2 w)``.
    The memory needed is estimated before anything is built. The LP lower bound is
    certified from HiGHS's row duals by weak duality, without trusting HiGHS's
    tolerances (see :meth:`driver`); ``lp_algorithm="pdlp"`` runs HiGHS's first-order
    method, whose answer is accepted only if it passes the same checks.

    Notes
    -----
    CPU seconds of ``highs`` / ``highs-lazy`` on the bundled graphs (HiGHS 1.15, the
    project's 2-core machine; default options; rows in the final model in brackets):

    ============  ====================  ====================  =====================  =====================
    graph         cc, Jaccard weights   cc, unit weights      sparsest cut           cluster deletion
    ============  ====================  ====================  =====================  =====================
    karate        0.09 / 0.08 (1771)    0.08 / 0.03 (361)     0.33 / 0.84 (2887)     0.02 / 0.02 (393)
    dolphins      2.1 / 0.27 (3604)     0.40 / 0.03 (495)     4.5 / 17 (9688)        0.03 / 0.02 (638)
    lesmis        7.3 / 1.2 (9237)      0.76 / 0.06 (1259)    11 / 57 (18202)        0.03 / 0.03 (1449)
    football      25 / 0.83 (16042)     5.1 / 0.12 (2840)     94 / 166 (39411)       0.07 / 0.04 (3537)
    ============  ====================  ====================  =====================  =====================

    The full models have ``3 C(n, 3)`` rows (740,715 for football). Lazy sparsest cut
    needs one round per few pairs (5024 rounds on football), as V §8.1.1 observed: most
    triangle rows end up tight. HiGHS's active-set QP solver fails on the full triangle
    family from about 30 points on (it reports a non-convex reduced Hessian); the
    result then has status ``NUMERICAL`` and ``highs-lazy`` is the way to solve it.
    """ + _REFERENCES

    name = "highs"
    description = "exact LP/QP with the full constraint matrix (HiGHS)"
    REQUIRED_MODULES = ("highspy",)
    exact = True
    explicit_rows = True
    options = OPTIONS

    def estimate_memory(self, problem, lp_algorithm="auto"):
        """Estimated peak bytes (see :func:`metricopt.solvers.highs.estimate_memory`)."""
        return estimate_memory(problem, lp_algorithm=lp_algorithm, lazy=False)

    def cite(self):
        return "HiGHS (Huangfu & Hall 2018), https://highs.dev"

    def driver(self, problem, *, tol, time_limit, max_iter, threads, max_memory, verbose, seed,
               callback, lp_algorithm, gap_tol):
        """Solve ``problem`` exactly.

        Parameters
        ----------
        problem : MetricProblem
        tol : float or None, default=None
            Largest constraint violation accepted (measured by metricopt on the returned
            ``x``); also HiGHS's primal and dual feasibility tolerance (at least 1e-10,
            HiGHS's minimum). ``None``: 1e-9, or 1e-6 for ``lp_algorithm="pdlp"``.
        time_limit : float or None, default=None
            Seconds, model building included. When reached the status is ``LIMIT`` and
            ``x`` is HiGHS's current iterate, if it has one.
        max_iter : int or None, default=None
            Simplex / interior-point / PDLP / QP iteration limit.
        threads : int or None, default=None
            HiGHS threads (``None``: HiGHS's choice). HiGHS keeps one thread pool per
            process; giving ``threads`` rebuilds it.
        max_memory : int or None, default=None
            Bytes allowed (default: what the machine has available). Checked against
            :func:`estimate_memory` before anything is built.
        verbose : bool, default=False
            Let HiGHS log to the console.
        seed : int, default=0
            Random seed in [0, 2**63); HiGHS's own is ``seed % 2**31``.
        callback : callable or None
            Called once with the iteration record.
        lp_algorithm : {"auto", "simplex", "ipm", "pdlp"}, default="auto"
            ``"auto"`` uses the interior-point method (with crossover) for LPs with a
            sum row (sparsest cut) and the dual simplex method otherwise. ``"pdlp"`` is
            HiGHS's first-order primal-dual method (PDLP [3]_, cuPDLP-C on the CPU),
            stopped at the KKT tolerance ``min(tol, gap_tol)``: it needs about half
            the memory of the simplex method and no factorisation. HiGHS seconds with
            ``threads=2`` (HiGHS 1.16, project machine shared with other jobs, load
            about 3, default tolerances), correlation clustering with Jaccard weights,
            simplex / ipm / pdlp: lesmis (219k rows) 7.7 / 12.3 / 2.7 s, polbooks
            (562k) 16.0 / - / 6.8 s, football (741k) 29 / 52 / 23 s. Certified
            relative gaps: simplex and ipm about 1e-12; pdlp 2e-8 (lesmis), 2e-12
            (polbooks), 1e-9 (football), with largest violations 3e-8, 0, 7e-8 (a KKT
            tolerance of 1e-3 instead leaves 1.5e-4 and a gap of 2e-5 on lesmis).
            Earlier one-core figures (HiGHS 1.15), simplex / ipm:
            karate 0.06 / 0.41 s, dolphins 1.8 / 3.0 s, lesmis 5.5 / 7.6 s, football
            36 / 69 s; sparsest cut: karate 0.18 / 0.34 s, dolphins 30 / 3.8 s, lesmis
            158 / 19 s; cluster deletion: under 0.05 s either way. QPs always use
            HiGHS's active-set solver.
        gap_tol : float, default=1e-6
            Largest certified relative gap ``(fun - lower_bound) / max(|fun|,
            |lower_bound|)`` accepted as optimal (LPs; see Notes).

        Returns
        -------
        dict
            ``x, fun, lower_bound, status, message, nit`` (HiGHS iterations),
            ``history, max_violation, n_rows, highs_seconds`` and ``n_cols``,
            ``n_nonzeros``, ``lp_algorithm``, ``build_seconds``, ``memory_estimate``,
            ``highs_objective`` (HiGHS's own objective value), ``certified_gap``,
            ``certificate`` (the details of :meth:`_Model.certified_bound`) and
            ``certificate_seconds``.

        Notes
        -----
        ``lower_bound`` of an LP is certified: weak duality from HiGHS's row duals
        over a box known to hold an optimum (:func:`~metricopt.bounds.lp_dual_bound`,
        :func:`~metricopt.solvers._lp_matrix.certificate_box`), recomputed in float64
        from the model's data with a rounding allowance, so it never exceeds the LP
        optimum, whatever HiGHS's tolerances and wherever it stopped (time or iteration
        limit: the bound of its current duals). The status is ``OPTIMAL`` only when
        HiGHS reports an optimum, ``x`` violates no constraint by more than ``tol``
        and the certified gap is at most ``gap_tol``; otherwise ``NUMERICAL`` with a
        message saying which was missed and by how much (a difference
        ``fun - lower_bound`` within the certificate's rounding allowance, as for an
        optimum of 0, passes whatever its relative size). The certificate costs about
        0.5 s on the 741k-row football LP (1-3% of the solve). For the l2 QP of metric
        nearness there is no LP certificate: ``lower_bound`` is HiGHS's optimum,
        trusted to its tolerances, and ``gap_tol`` is not used.
        """
        from . import _lp_matrix as lpm

        opts = _check_options("highs", tol=tol, time_limit=time_limit, max_iter=max_iter,
                              threads=threads, max_memory=max_memory, verbose=verbose, seed=seed,
                              callback=callback, lp_algorithm=lp_algorithm, gap_tol=gap_tol)
        start = time.perf_counter()
        deadline = None if opts["time_limit"] is None else start + opts["time_limit"]
        algorithm = _resolve_algorithm(problem, opts["lp_algorithm"], lazy=False)
        opts["tol"] = tol = _default_tol(opts["tol"], algorithm)
        need = estimate_memory(problem, lp_algorithm=opts["lp_algorithm"])
        if problem.rows is not None:
            check_memory(need, f"{_memory_text(problem, self.name)}: the model of its "
                         f"{len(problem.rows):,} rows", opts["max_memory"])
            return _solve_rows(problem, opts, algorithm, start, deadline, need)
        size = lpm.model_size(problem)
        check_memory(need, f"{_memory_text(problem, self.name)}: the full model has {size['rows']:,} rows "
                     f"and {size['nonzeros']:,} nonzeros, which", opts["max_memory"])

        if problem.structure == "sparse":
            x_columns = lpm.embedding_columns(problem)
            n_x = n_pairs(problem.n)
        else:
            x_columns = np.arange(problem.n_variables, dtype=np.int64)
            n_x = problem.n_variables
        objective = lpm.objective_model(problem, x_columns, n_x)
        model = _Model(problem, objective, opts, algorithm)
        model.add(objective.rows)
        if problem.sum_value is not None:
            model.add(lpm.sum_row(x_columns, problem.sum_value))
        if problem.structure == "edges":
            blocks = lpm.edge_family_blocks(problem)
        else:
            blocks = lpm.dense_triangle_blocks(problem.n)
        for block in blocks:
            model.add(block)
            if deadline is not None and time.perf_counter() > deadline:
                break
        build_seconds = time.perf_counter() - start

        solved = not (deadline is not None and time.perf_counter() > deadline)
        if solved:
            status, message, z, value = model.solve(deadline, opts["max_iter"])
        else:
            status, message = Status.LIMIT, "Time limit reached while building the model."
            z, value = None, math.nan
        if algorithm == "qp" and status == Status.NUMERICAL:
            message += (" HiGHS's active-set QP solver can fail on the full triangle family of "
                        "all but small instances; method 'highs-lazy' adds only the rows it needs.")
        x = None if z is None else np.ascontiguousarray(z[x_columns])
        fun = problem.objective_value(x) if x is not None else math.nan
        max_violation = problem.max_violation(x) if x is not None else math.nan
        if algorithm == "qp":
            certificate = dict(certified=False, reason="a QP has no LP-dual certificate")
            if status == Status.OPTIMAL and not max_violation <= tol:
                status = Status.NUMERICAL
                message = (f"HiGHS's QP answer violates a constraint by {max_violation:.3g}, more "
                           f"than tol={tol:g}; method 'highs-lazy' re-checks every round. "
                           f"({message})")
            lower_bound = fun if status == Status.OPTIMAL else math.nan
            gap = 0.0 if status == Status.OPTIMAL else math.nan
        else:
            if solved:
                lower_bound, certificate = model.certified_bound(problem, objective)
            else:
                lower_bound, certificate = math.nan, dict(certified=False, reason="not solved")
            gap = _certified_gap(problem, fun, lower_bound)
            status, message = _judge_optimum(
                status, message, max_violation, gap, tol, opts["gap_tol"], fun, lower_bound,
                certificate, hint=(" Lower tol, or use lp_algorithm='simplex'."
                                   if algorithm == "pdlp" else ""))
        rec = _record(1, start, fun if x is not None else math.nan,
                      gap, max_violation, model.n_rows, model.n_rows, dual=lower_bound)
        if opts["callback"] is not None:
            opts["callback"](rec)
        return dict(
            x=x, fun=fun, lower_bound=lower_bound, status=status, message=message,
            nit=model.iterations(), history=[rec], max_violation=max_violation,
            n_rows=model.n_rows, n_cols=int(objective.cost.size), n_nonzeros=model.n_nonzeros,
            highs_seconds=model.solve_seconds, build_seconds=build_seconds,
            lp_algorithm=algorithm, memory_estimate=need, highs_objective=value,
            certified_gap=gap, certificate=certificate,
            certificate_seconds=float(certificate.get("seconds", 0.0)),
        )


def _solve_rows(problem, opts, algorithm, start, deadline, need):
    """``highs`` on a dense problem given by its rows (the open-wedge relaxation): one
    model with every row and columns only for the pairs they touch; the other pairs sit
    at their targets, where their terms are 0 (:class:`._polish.RestrictedModel`)."""
    from . import _lp_matrix as lpm
    from ._polish import RestrictedModel

    tol = opts["tol"]
    model = RestrictedModel(problem, opts, algorithm)
    model.model.h.setOptionValue("presolve", "choose")
    model.add_blocks([lpm.triangle_rows(problem.rows)])
    build_seconds = time.perf_counter() - start
    if opts["max_iter"] is not None:
        for name in ("simplex", "ipm", "pdlp"):
            model.model.h.setOptionValue(f"{name}_iteration_limit", int(opts["max_iter"]))
    status, message, x, value = model.solve(deadline)
    fun = problem.objective_value(x) if x is not None else math.nan
    max_violation = problem.max_violation(x) if x is not None else math.nan
    lower_bound, certificate = model.certified_bound()
    gap = _certified_gap(problem, fun, lower_bound)
    status, message = _judge_optimum(status, message, max_violation, gap, tol, opts["gap_tol"],
                                     fun, lower_bound, certificate)
    rec = _record(1, start, fun, gap, max_violation, model.n_rows, model.n_rows,
                  dual=lower_bound)
    if opts["callback"] is not None:
        opts["callback"](rec)
    return dict(
        x=x, fun=fun, lower_bound=lower_bound, status=status, message=message,
        nit=model.model.iterations(), history=[rec], max_violation=max_violation,
        n_rows=model.n_rows, n_cols=int(model.n_cols), n_nonzeros=model.n_nonzeros,
        highs_seconds=model.model.solve_seconds, build_seconds=build_seconds,
        lp_algorithm=algorithm, memory_estimate=need, highs_objective=value,
        certified_gap=gap, certificate=certificate,
        certificate_seconds=float(certificate.get("seconds", 0.0)),
    )


class HighsLazySolver(Solver):
    """HiGHS on a growing set of metric constraints (V §8.1.1).

    Round 1 solves the objective and bounds alone (and the sum row of sparsest cut).
    Each round then separates the constraints the solution violates and adds them as
    rows; HiGHS keeps its basis, so the dual simplex method re-solves from where it
    stopped. Separation: for dense problems the most violated triangle inequality of
    every pair (:func:`~metricopt.problems._triangles.violated_triangles`); for sparse
    problems one cycle through every edge longer than its shortest path
    (:func:`~metricopt.problems._cycles.violated_cycles`); for cluster deletion a scan
    of the triangle and wedge rows. On dense l1 problems (``cc``, ``mn`` with p = 1) only
    the pairs some row touches are columns; the others sit at their targets, where their
    terms are 0 (:class:`._polish.RestrictedModel`), so the first round is x = targets and
    unit-weight ``cc`` starts from its open wedges; the dense separation then visits only
    the wedges of the pairs below the bulk value of x (the support scan of
    :mod:`metricopt.problems._triangles`). A problem given by its rows (the open-wedge
    relaxation) is separated over those rows only, the most violated one per pair each
    round. The loop stops when no constraint is violated by more than ``tol``. Every
    round's value is the optimum of a relaxation, hence a lower bound on the LP/QP
    optimum. For LPs ``lower_bound`` is certified instead: each round's row duals give a
    weak-duality bound on the *full* LP (the rows not yet added have multiplier 0;
    :meth:`_Model.certified_bound`), computed without trusting HiGHS's tolerances, and
    the best over the rounds is reported.
    """ + _REFERENCES

    name = "highs-lazy"
    description = "exact LP/QP adding violated metric constraints round by round (HiGHS)"
    REQUIRED_MODULES = ("highspy",)
    exact = True
    explicit_rows = True
    options = LAZY_OPTIONS

    def estimate_memory(self, problem, lp_algorithm="auto"):
        """Estimated bytes of the first rounds (see :func:`estimate_memory`)."""
        return estimate_memory(problem, lp_algorithm=lp_algorithm, lazy=True)

    def cite(self):
        return "HiGHS (Huangfu & Hall 2018) with lazy constraint generation (Veldt et al. 2019, §8.1.1)"

    def driver(self, problem, *, tol, time_limit, max_iter, threads, max_memory, verbose, seed,
               callback, lp_algorithm, max_rows_per_round, gap_tol):
        """Solve ``problem`` by adding violated constraints lazily.

        Parameters
        ----------
        problem : MetricProblem
        tol : float, default=1e-9
            Largest violation accepted; also HiGHS's primal and dual feasibility
            tolerance (at least 1e-10).
        time_limit : float or None, default=None
            Seconds. When reached the status is ``LIMIT``; ``x`` and ``lower_bound`` are
            those of the last round HiGHS finished.
        max_iter : int or None, default=None
            Most rounds (HiGHS solves); ``nit`` counts the rounds HiGHS finished.
        threads : int or None, default=None
        max_memory : int or None, default=None
            Bytes allowed (default: what the machine has available). Checked before the
            first round and before rows are added; a round that would not fit ends the
            run with status ``LIMIT``.
        verbose : bool, default=False
        seed : int, default=0
        callback : callable or None
            Called with each round's record.
        lp_algorithm : {"auto", "simplex", "ipm"}, default="auto"
            ``"auto"`` is the dual simplex method, which re-solves from the previous
            basis; the interior-point method starts over every round. Measured (HiGHS
            1.15, project machine): Jaccard correlation clustering on lesmis, simplex
            1.1 s, ipm 5.0 s; sparsest cut on dolphins, simplex 17 s, ipm over 6 min.
        max_rows_per_round : int or None, default=None
            Add at most this many of the most violated rows per round (``None``: all
            separated rows: one per pair for dense problems, one cycle per edge for
            sparse ones, every violated row for cluster deletion).
        gap_tol : float, default=1e-6
            Largest certified relative gap ``(fun - lower_bound) / max(|fun|,
            |lower_bound|)`` accepted as optimal once no constraint is violated by more
            than ``tol`` (LPs); a converged run that misses it has status ``NUMERICAL``.

        Returns
        -------
        dict
            As :meth:`HighsSolver.driver`, with ``nit`` the number of rounds,
            ``highs_iterations`` the HiGHS iterations over all rounds,
            ``highs_objective`` the last round's HiGHS objective and
            ``certificate_seconds`` the time spent on certificates over all rounds.
            Each record's ``primal`` is the round's HiGHS objective and ``dual`` its
            certified bound.
        """

        opts = _check_options("highs-lazy", tol=tol, time_limit=time_limit, max_iter=max_iter,
                              threads=threads, max_memory=max_memory, verbose=verbose, seed=seed,
                              callback=callback, lp_algorithm=lp_algorithm,
                              max_rows_per_round=max_rows_per_round, gap_tol=gap_tol,
                              algorithms=LAZY_LP_ALGORITHMS)
        start = time.perf_counter()
        deadline = None if opts["time_limit"] is None else start + opts["time_limit"]
        algorithm = _resolve_algorithm(problem, opts["lp_algorithm"], lazy=True)
        opts["tol"] = _default_tol(opts["tol"], algorithm)
        need = estimate_memory(problem, lp_algorithm=opts["lp_algorithm"], lazy=True)
        check_memory(need, f"{_memory_text(problem, self.name)}: the first round", opts["max_memory"])

        model = _lazy_model(problem, opts, algorithm)
        separator = _Separator(problem, opts["tol"], opts["max_rows_per_round"])
        used = need
        history = []
        best_x, best_value = None, math.nan
        is_lp = algorithm != "qp"
        best_bound, certificate, certificate_seconds = -math.inf, {}, 0.0
        status, message = Status.NUMERICAL, ""
        tol = opts["tol"]
        rounds = 0
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                status, message = Status.LIMIT, "Time limit reached."
                break
            rounds += 1
            run_status, run_message, x, value = model.solve(deadline)
            round_bound = math.nan
            if is_lp:
                round_bound, details = model.certified_bound()
                certificate_seconds += details.get("seconds", 0.0)
                if round_bound > best_bound:
                    best_bound, certificate = round_bound, details
            if run_status != Status.OPTIMAL or x is None:
                status, message = run_status, run_message
                break
            best_x, best_value = x, value
            blocks, max_violation = separator.separate(x)
            max_violation = max(max_violation, problem.bound_violation(x))
            converged = max_violation <= tol
            added = 0 if converged else sum(b.n_rows for b in blocks)
            if not converged and opts["max_iter"] is not None and rounds >= opts["max_iter"]:
                added = 0
            gap = math.nan
            if converged:
                gap = _certified_gap(problem, problem.objective_value(x), best_bound) if is_lp else 0.0
            rec = _record(rounds, start, value, gap, max_violation,
                          model.n_rows + added, added, dual=round_bound if is_lp else None)
            if converged:
                history.append(rec)
                if opts["callback"] is not None:
                    opts["callback"](rec)
                status, message = Status.OPTIMAL, (
                    f"Converged: no constraint violated by more than {tol:g} after {rounds} rounds. "
                    f"({run_message})")
                missed = _acceptance(max_violation, gap, tol, opts["gap_tol"],
                                     problem.objective_value(x), best_bound,
                                     certificate.get("rounding", 0.0))
                if missed:
                    status, message = Status.NUMERICAL, (
                        f"No constraint violated by more than {tol:g} after {rounds} rounds, "
                        f"but {missed}. ({run_message})")
                break
            if added == 0:
                history.append(rec)
                if opts["callback"] is not None:
                    opts["callback"](rec)
                if opts["max_iter"] is not None and rounds >= opts["max_iter"]:
                    status, message = Status.LIMIT, f"Round limit ({opts['max_iter']}) reached."
                else:
                    status, message = Status.NUMERICAL, (
                        f"Stalled: the violated constraints (largest {max_violation:.3g}) are all in "
                        f"the model already; HiGHS's tolerances do not reach tol={tol:g}.")
                break
            nnz = sum(b.n_nonzeros for b in blocks)
            extra = _model_bytes(algorithm, added, nnz, 0) - MEMORY_MODEL[algorithm]["base"]
            if problem.rows is not None:
                extra = 0  # the estimate counts every one of the given rows already
            try:
                if opts["max_memory"] is not None:
                    check_memory(used + extra, f"round {rounds + 1} ({model.n_rows + added:,} rows)",
                                 opts["max_memory"])
                else:
                    check_memory(extra, f"round {rounds + 1} ({added:,} more rows)", available_memory())
            except MemoryLimitError as exc:
                rec["constraints_added"] = 0
                rec["active_constraints"] = model.n_rows
                history.append(rec)
                if opts["callback"] is not None:
                    opts["callback"](rec)
                status, message = Status.LIMIT, f"Memory limit: {exc}"
                break
            used += extra
            model.add_blocks(blocks)
            separator.commit()
            history.append(rec)
            if opts["callback"] is not None:
                opts["callback"](rec)

        x = best_x
        fun = problem.objective_value(x) if x is not None else math.nan
        max_violation = problem.max_violation(x) if x is not None else math.nan
        if is_lp:
            lower_bound = best_bound if best_bound > -math.inf else math.nan
            if not certificate:
                certificate = dict(certified=False, reason="no round gave dual values")
        else:
            lower_bound = best_value
            certificate = dict(certified=False, reason="a QP has no LP-dual certificate")
        return dict(
            x=x, fun=fun, lower_bound=lower_bound, status=status, message=message, nit=len(history),
            history=history, max_violation=max_violation, n_rows=model.n_rows,
            n_cols=int(model.n_cols), n_nonzeros=model.n_nonzeros,
            highs_seconds=model.model.solve_seconds, highs_iterations=model.model.iterations(),
            lp_algorithm=algorithm, memory_estimate=need, highs_objective=best_value,
            certified_gap=_certified_gap(problem, fun, lower_bound) if is_lp else math.nan,
            certificate=certificate, certificate_seconds=certificate_seconds,
            constraints_added=int(sum(r["constraints_added"] for r in history)),
        )


class _FullModel:
    """The lazy method's model with a column for every variable (the interface of
    :class:`._polish.RestrictedModel`)."""

    def __init__(self, problem, opts, algorithm):
        from . import _lp_matrix as lpm

        self.problem = problem
        n_x = problem.n_variables
        self.n_x = n_x
        x_columns = np.arange(n_x, dtype=np.int64)
        self.objective = lpm.objective_model(problem, x_columns, n_x)
        self.model = _Model(problem, self.objective, opts, algorithm)
        self.model.add(self.objective.rows)
        if problem.sum_value is not None:
            self.model.add(lpm.sum_row(x_columns, problem.sum_value))
        self.n_cols = int(self.objective.cost.size)

    @property
    def n_rows(self):
        return self.model.n_rows

    @property
    def n_nonzeros(self):
        return self.model.n_nonzeros

    def add_blocks(self, blocks):
        for block in blocks:
            self.model.add(block)

    def solve(self, deadline):
        status, message, z, value = self.model.solve(deadline)
        return status, message, (None if z is None else np.ascontiguousarray(z[: self.n_x])), value

    def certified_bound(self):
        return self.model.certified_bound(self.problem, self.objective)


def _restricted_columns(problem):
    """True when the lazy model needs columns only for the pairs its rows touch: dense
    l1 problems, whose other pairs sit at their targets (:mod:`._polish`)."""
    return (problem.structure == "dense" and problem.objective == "l1"
            and problem.sum_value is None)


def _lazy_model(problem, opts, algorithm):
    if _restricted_columns(problem) and algorithm != "qp":
        from ._polish import RestrictedModel

        model = RestrictedModel(problem, opts, algorithm)
        model.model.h.setOptionValue("presolve", "choose")
        return model
    return _FullModel(problem, opts, algorithm)


# --------------------------------------------------------------- separation
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(v):
    """splitmix64 finaliser, elementwise on uint64 (wrap-around arithmetic)."""
    v = np.asarray(v, dtype=np.uint64)
    with np.errstate(over="ignore"):
        v = v + np.uint64(0x9E3779B97F4A7C15)
        v = (v ^ (v >> np.uint64(30))) * _MIX1
        v = (v ^ (v >> np.uint64(27))) * _MIX2
        return v ^ (v >> np.uint64(31))


class _Separator:
    """Finds violated metric rows of a problem and remembers which are in the model.

    ``separate(x)`` returns the row blocks to add and the largest metric violation;
    ``commit()`` marks the rows of the last call as added. Rows already in the model
    are never added twice (a row HiGHS satisfies only to its own tolerance could
    otherwise come back every round).
    """

    def __init__(self, problem, tol, max_rows):
        from . import _lp_matrix as lpm

        self.problem = problem
        self.tol = tol
        self.max_rows = max_rows
        self.keys = np.empty(0, dtype=np.uint64)
        self.pending = None
        if problem.rows is not None:
            self.in_model = np.zeros(len(problem.rows), dtype=bool)
        elif problem.structure == "edges":
            self.in_model = np.zeros(lpm.edge_family_size(problem)[0], dtype=bool)

    def _keep(self, keys, viol):
        """Indices of new rows to add, most violated first, capped at ``max_rows``."""
        fresh = np.flatnonzero((viol > self.tol) & ~np.isin(keys, self.keys))
        if self.max_rows is not None and fresh.size > self.max_rows:
            top = np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]
            fresh = fresh[top]
        return fresh

    def separate(self, x):
        from ..problems._cycles import violated_cycles
        from ..problems._triangles import violated_triangles
        from . import _lp_matrix as lpm

        p = self.problem
        if p.rows is not None:
            r = p.rows
            viol = x[r[:, 0]] - x[r[:, 1]] - x[r[:, 2]]
            worst = max(float(viol.max()), 0.0) if viol.size else 0.0
            fresh = np.flatnonzero((viol > self.tol) & ~self.in_model)
            # the most violated new row of each long side, as for the full family
            order = np.lexsort((-viol[fresh], r[fresh, 0]))
            fresh = fresh[order]
            first = np.ones(fresh.size, dtype=bool)
            first[1:] = r[fresh[1:], 0] != r[fresh[:-1], 0]
            fresh = fresh[first]
            if self.max_rows is not None and fresh.size > self.max_rows:
                fresh = fresh[np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]]
            fresh.sort()
            self.pending = ("ids", fresh)
            return [lpm.triangle_rows(r[fresh])], worst
        if p.structure == "dense":
            rows, viol, _ = violated_triangles(x, p.n, 0.0)
            worst = float(viol.max()) if viol.size else 0.0
            bc = np.sort(rows[:, 1:], axis=1)
            keys = _mix(rows[:, 0].astype(np.uint64) ^ _mix(bc[:, 0].astype(np.uint64) ^ _mix(bc[:, 1])))
            sel = self._keep(keys, viol)
            self.pending = ("keys", keys[sel])
            return [lpm.triangle_rows(rows[sel])], worst
        if p.structure == "sparse":
            offsets, members, viol = violated_cycles(x, p.n, p.pairs, 0.0)
            worst = float(viol.max()) if viol.size else 0.0
            if viol.size == 0:
                self.pending = ("keys", np.empty(0, dtype=np.uint64))
                return [], worst
            with np.errstate(over="ignore"):
                member_hash = np.add.reduceat(_mix(members.astype(np.uint64)), offsets[:-1])
            keys = _mix(_mix(members[offsets[:-1]].astype(np.uint64)) ^ member_hash)
            sel = self._keep(keys, viol)
            self.pending = ("keys", keys[sel])
            lengths = np.diff(offsets)[sel]
            new_offsets = np.zeros(sel.size + 1, dtype=np.int64)
            np.cumsum(lengths, out=new_offsets[1:])
            # gather the members of the selected cycles without a Python loop
            pos = np.repeat(offsets[:-1][sel] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
            return [lpm.cycle_rows(new_offsets, members[pos])], worst
        viol = lpm.edge_family_violations(p, x)
        worst = max(float(viol.max()), 0.0) if viol.size else 0.0
        fresh = np.flatnonzero((viol > self.tol) & ~self.in_model)
        if self.max_rows is not None and fresh.size > self.max_rows:
            fresh = fresh[np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]]
        fresh.sort()
        self.pending = ("ids", fresh)
        return lpm.edge_family_rows(p, fresh), worst

    def commit(self):
        kind, data = self.pending
        if kind == "ids":
            self.in_model[data] = True
        else:
            self.keys = np.union1d(self.keys, data)
        self.pending = None

