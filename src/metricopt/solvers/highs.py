"""Exact LP/QP solutions with HiGHS: the full constraint matrix, or rows added lazily.

``highs`` builds every constraint row and solves once; it is the reference the
iterative backends are tested against. ``highs-lazy`` starts from the bounds and the
objective alone and adds violated metric constraints round by round, re-solving
warm-started from the previous basis (V §8.1.1).
"""

import math
import numbers
import time

import numpy as np

from .._memory import available_memory, check_memory
from .._stdout import native_stdout_to_stderr
from ..exceptions import InvalidParameterError, MemoryLimitError
from ..problems._pairs import n_pairs
from ..result import Status
from ._base import Solver
from ._highs_status import map_status

__all__ = ["HighsSolver", "HighsLazySolver", "estimate_memory"]

LP_ALGORITHMS = ("auto", "simplex", "ipm")

# ------------------------------------------------------------- memory model
#: Peak resident bytes of a HiGHS 1.15 solve, modelled as
#: ``base + per_row * rows + per_nonzero * nonzeros + per_col * cols`` (see
#: :func:`estimate_memory` for the measurements). The active-set QP solver adds a dense
#: null-space matrix, counted at up to ``cols**2`` doubles.
MEMORY_MODEL = {
    "simplex": dict(base=64 * 2**20, per_row=1300.0, per_nonzero=40.0, per_col=4000.0),
    "ipm": dict(base=64 * 2**20, per_row=1000.0, per_nonzero=40.0, per_col=12000.0),
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
    lp_algorithm : {"auto", "simplex", "ipm"}
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
    point (with crossover): 620-1210 bytes per row on the same kind of LPs. The model
    gives 20.5 GB for the 14.4M-row cluster-deletion LP of Vassar85 (31M nonzeros),
    which was reported to peak near 18 GB: the estimate errs on the safe side by about
    15%.
    """
    from . import _lp_matrix as lpm

    algorithm = _resolve_algorithm(problem, lp_algorithm, lazy=lazy)
    size = lpm.model_size(problem)
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


# ------------------------------------------------------------ option checks
def _bad(name, caller, what, value):
    return InvalidParameterError(
        f"The {name!r} parameter of {caller} must be {what}. Got {value!r} instead."
    )


def _check_options(caller, *, tol, time_limit, max_iter, threads, max_memory, verbose, seed,
                   callback, lp_algorithm, max_rows_per_round=None):
    def real(value, name, allow_none=False):
        if value is None and allow_none:
            return None
        ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
              and math.isfinite(value) and value > 0)
        if not ok:
            raise _bad(name, caller, "a float in the range (0, inf)" + (" or None" if allow_none else ""),
                       value)
        return float(value)

    def integer(value, name, low):
        if value is None:
            return None
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
            raise _bad(name, caller, f"an int in the range [{low}, inf) or None", value)
        return int(value)

    tol = real(tol, "tol")
    time_limit = real(time_limit, "time_limit", allow_none=True)
    max_iter = integer(max_iter, "max_iter", 1)
    threads = integer(threads, "threads", 1)
    max_memory = None if max_memory is None else int(real(max_memory, "max_memory"))
    max_rows_per_round = integer(max_rows_per_round, "max_rows_per_round", 1)
    if not isinstance(verbose, (bool, np.bool_)):
        raise _bad("verbose", caller, "a bool", verbose)
    if seed is None:
        seed = 0
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or not 0 <= seed < 2**31:
        raise _bad("seed", caller, "an int in the range [0, 2**31) or None", seed)
    if callback is not None and not callable(callback):
        raise _bad("callback", caller, "a callable or None", callback)
    if lp_algorithm not in LP_ALGORITHMS:
        raise _bad("lp_algorithm", caller, f"one of {', '.join(map(repr, LP_ALGORITHMS))}", lp_algorithm)
    return dict(tol=tol, time_limit=time_limit, max_iter=max_iter, threads=threads,
                max_memory=max_memory, verbose=bool(verbose), seed=int(seed), callback=callback,
                lp_algorithm=lp_algorithm, max_rows_per_round=max_rows_per_round)


# ------------------------------------------------------------ HiGHS driving
#: HiGHS refuses feasibility tolerances below this.
_HIGHS_MIN_TOL = 1e-10
#: Primal feasibility tolerance handed to HiGHS's active-set QP solver at the least; the
#: answer is then held to the requested ``tol`` by metricopt's own constraint check.
_HIGHS_QP_TOL = 1e-7
_EMPTY_I = np.zeros(0, dtype=np.int32)
_EMPTY_F = np.zeros(0, dtype=np.float64)


class _Model:
    """A ``highspy.Highs`` instance holding one relaxation, with timing and sizes."""

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
        h.setOptionValue("random_seed", int(opts["seed"]))
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
        t0 = time.perf_counter()
        with native_stdout_to_stderr():  # a verbose run logs to file descriptor 1
            h.run()
        self.solve_seconds += time.perf_counter() - t0
        model_status = h.getModelStatus()
        status, message = map_status(model_status, h.modelStatusToString(model_status))
        info = h.getInfo()
        # per-solve counts; -1 where a method did not run
        self.total_iterations += sum(max(int(c), 0) for c in (
            info.simplex_iteration_count, info.ipm_iteration_count, info.qp_iteration_count))
        x = None
        if info.primal_solution_status > 0 or model_status == self.highspy.HighsModelStatus.kOptimal:
            x = np.array(h.getSolution().col_value, dtype=np.float64)
        return status, message, x, float(info.objective_function_value)

    def iterations(self):
        """HiGHS iterations (simplex, interior point, QP) over every solve so far."""
        return self.total_iterations



def _record(iteration, start, value, gap, max_violation, active, added):
    return dict(iteration=int(iteration), seconds=time.perf_counter() - start, primal=value, dual=value,
                gap=gap, max_violation=float(max_violation), full_check=True,
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
"""


# ------------------------------------------------------------------ solvers
class HighsSolver(Solver):
    """The exact LP/QP optimum from HiGHS with every constraint row built up front.

    Dense problems get all ``3 * C(n, 3)`` triangle rows; cluster deletion its triangle
    (three orientations) and open-wedge rows. A sparse problem (the cycle inequalities
    of MET(G)) is solved as the equivalent dense problem on K_n, where the pairs absent
    from the graph have weight 0: every point of MET(G) inside the bounds extends to a
    metric on K_n (the shortest-path metric, capped at the upper bound 1 for
    correlation clustering), so the optimum is the same; ``x`` comes back on the
    graph's pairs only.

    Objectives: linear as given; an l1 term whose target lies at or beyond a bound
    (the 0/1 targets of correlation clustering in ``[0, 1]``) is linear on the box, any
    other gets an auxiliary ``t >= |x - d|``; l2 is a QP with Hessian ``diag(2 w)``.
    The memory needed is estimated before anything is built.

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

    def estimate_memory(self, problem, lp_algorithm="auto"):
        """Estimated peak bytes (see :func:`metricopt.solvers.highs.estimate_memory`)."""
        return estimate_memory(problem, lp_algorithm=lp_algorithm, lazy=False)

    def cite(self):
        return "HiGHS (Huangfu & Hall 2018), https://highs.dev"

    def run(self, problem, *, tol=1e-9, time_limit=None, max_iter=None, threads=None,
            max_memory=None, verbose=False, seed=0, callback=None, lp_algorithm="auto"):
        """Solve ``problem`` exactly.

        Parameters
        ----------
        problem : MetricProblem
        tol : float, default=1e-9
            HiGHS primal and dual feasibility tolerance (at least 1e-10, HiGHS's minimum).
        time_limit : float or None, default=None
            Seconds, model building included. When reached the status is ``LIMIT`` and
            ``x`` is HiGHS's current iterate, if it has one.
        max_iter : int or None, default=None
            Simplex / interior-point / QP iteration limit.
        threads : int or None, default=None
            HiGHS threads (``None``: HiGHS's choice). HiGHS keeps one thread pool per
            process; giving ``threads`` rebuilds it.
        max_memory : int or None, default=None
            Bytes allowed (default: what the machine has available). Checked against
            :func:`estimate_memory` before anything is built.
        verbose : bool, default=False
            Let HiGHS log to the console.
        seed : int, default=0
            HiGHS's random seed.
        callback : callable or None
            Called once with the iteration record.
        lp_algorithm : {"auto", "simplex", "ipm"}, default="auto"
            ``"auto"`` uses the interior-point method (with crossover) for LPs with a
            sum row (sparsest cut) and the dual simplex method otherwise. Measured on
            one core of the project machine (HiGHS 1.15, presolve on): correlation
            clustering with Jaccard weights, simplex / ipm: karate 0.06 / 0.41 s,
            dolphins 1.8 / 3.0 s, lesmis 5.5 / 7.6 s, football 36 / 69 s; sparsest cut:
            karate 0.18 / 0.34 s, dolphins 30 / 3.8 s, lesmis 158 / 19 s; cluster
            deletion: under 0.05 s either way. QPs always use HiGHS's active-set solver.

        Returns
        -------
        dict
            ``x, fun, lower_bound, status, message, nit`` (HiGHS iterations),
            ``history, max_violation, n_rows, highs_seconds`` and ``n_cols``,
            ``n_nonzeros``, ``lp_algorithm``, ``build_seconds``, ``memory_estimate``.
        """
        from . import _lp_matrix as lpm

        opts = _check_options("highs", tol=tol, time_limit=time_limit, max_iter=max_iter,
                              threads=threads, max_memory=max_memory, verbose=verbose, seed=seed,
                              callback=callback, lp_algorithm=lp_algorithm)
        start = time.perf_counter()
        deadline = None if opts["time_limit"] is None else start + opts["time_limit"]
        algorithm = _resolve_algorithm(problem, opts["lp_algorithm"], lazy=False)
        need = estimate_memory(problem, lp_algorithm=opts["lp_algorithm"])
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

        if deadline is not None and time.perf_counter() > deadline:
            status, message, z, value = Status.LIMIT, "Time limit reached while building the model.", None, math.nan
        else:
            status, message, z, value = model.solve(deadline, opts["max_iter"])
        if algorithm == "qp" and status == Status.NUMERICAL:
            message += (" HiGHS's active-set QP solver can fail on the full triangle family of "
                        "all but small instances; method 'highs-lazy' adds only the rows it needs.")
        x = None if z is None else np.ascontiguousarray(z[x_columns])
        fun = problem.objective_value(x) if x is not None else math.nan
        max_violation = problem.max_violation(x) if x is not None else math.nan
        if algorithm == "qp" and status == Status.OPTIMAL and not max_violation <= opts["tol"]:
            status = Status.NUMERICAL
            message = (f"HiGHS's QP answer violates a constraint by {max_violation:.3g}, more "
                       f"than tol={opts['tol']:g}; method 'highs-lazy' re-checks every round. "
                       f"({message})")
        if status == Status.OPTIMAL:
            lower_bound = fun
        else:
            lower_bound = math.nan
        rec = _record(1, start, value if status == Status.OPTIMAL else math.nan,
                      0.0 if status == Status.OPTIMAL else math.nan, max_violation, model.n_rows, model.n_rows)
        if opts["callback"] is not None:
            opts["callback"](rec)
        return dict(
            x=x, fun=fun, lower_bound=lower_bound, status=status, message=message,
            nit=model.iterations(), history=[rec], max_violation=max_violation,
            n_rows=model.n_rows, n_cols=int(objective.cost.size), n_nonzeros=model.n_nonzeros,
            highs_seconds=model.solve_seconds, build_seconds=build_seconds,
            lp_algorithm=algorithm, memory_estimate=need,
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
    of the triangle and wedge rows. The loop stops when no constraint is violated by
    more than ``tol``. Every round's value is the optimum of a relaxation, hence a
    lower bound on the LP/QP optimum; the last one is ``lower_bound``.
    """ + _REFERENCES

    name = "highs-lazy"
    description = "exact LP/QP adding violated metric constraints round by round (HiGHS)"
    REQUIRED_MODULES = ("highspy",)
    exact = True

    def estimate_memory(self, problem, lp_algorithm="auto"):
        """Estimated bytes of the first rounds (see :func:`estimate_memory`)."""
        return estimate_memory(problem, lp_algorithm=lp_algorithm, lazy=True)

    def cite(self):
        return "HiGHS (Huangfu & Hall 2018) with lazy constraint generation (Veldt et al. 2019, §8.1.1)"

    def run(self, problem, *, tol=1e-9, time_limit=None, max_iter=None, threads=None,
            max_memory=None, verbose=False, seed=0, callback=None, lp_algorithm="auto",
            max_rows_per_round=None):
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

        Returns
        -------
        dict
            As :meth:`HighsSolver.run`, with ``nit`` the number of rounds and
            ``highs_iterations`` the HiGHS iterations over all rounds.
        """
        from . import _lp_matrix as lpm

        opts = _check_options("highs-lazy", tol=tol, time_limit=time_limit, max_iter=max_iter,
                              threads=threads, max_memory=max_memory, verbose=verbose, seed=seed,
                              callback=callback, lp_algorithm=lp_algorithm,
                              max_rows_per_round=max_rows_per_round)
        start = time.perf_counter()
        deadline = None if opts["time_limit"] is None else start + opts["time_limit"]
        algorithm = _resolve_algorithm(problem, opts["lp_algorithm"], lazy=True)
        need = estimate_memory(problem, lp_algorithm=opts["lp_algorithm"], lazy=True)
        check_memory(need, f"{_memory_text(problem, self.name)}: the first round", opts["max_memory"])

        n_x = problem.n_variables
        x_columns = np.arange(n_x, dtype=np.int64)
        objective = lpm.objective_model(problem, x_columns, n_x)
        model = _Model(problem, objective, opts, algorithm)
        model.add(objective.rows)
        if problem.sum_value is not None:
            model.add(lpm.sum_row(x_columns, problem.sum_value))
        separator = _Separator(problem, opts["tol"], opts["max_rows_per_round"])
        used = need
        history = []
        best_x, best_value = None, math.nan
        status, message = Status.NUMERICAL, ""
        tol = opts["tol"]
        rounds = 0
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                status, message = Status.LIMIT, "Time limit reached."
                break
            rounds += 1
            run_status, run_message, z, value = model.solve(deadline)
            if run_status != Status.OPTIMAL or z is None:
                status, message = run_status, run_message
                break
            x = np.ascontiguousarray(z[:n_x])
            best_x, best_value = x, value
            blocks, max_violation = separator.separate(x)
            max_violation = max(max_violation, problem.bound_violation(x))
            converged = max_violation <= tol
            added = 0 if converged else sum(b.n_rows for b in blocks)
            if not converged and opts["max_iter"] is not None and rounds >= opts["max_iter"]:
                added = 0
            rec = _record(rounds, start, value, 0.0 if converged else math.nan, max_violation,
                          model.n_rows + added, added)
            if converged:
                history.append(rec)
                if opts["callback"] is not None:
                    opts["callback"](rec)
                status, message = Status.OPTIMAL, (
                    f"Converged: no constraint violated by more than {tol:g} after {rounds} rounds. "
                    f"({run_message})")
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
            for block in blocks:
                model.add(block)
            separator.commit()
            history.append(rec)
            if opts["callback"] is not None:
                opts["callback"](rec)

        x = best_x
        fun = problem.objective_value(x) if x is not None else math.nan
        max_violation = problem.max_violation(x) if x is not None else math.nan
        return dict(
            x=x, fun=fun, lower_bound=best_value, status=status, message=message, nit=len(history),
            history=history, max_violation=max_violation, n_rows=model.n_rows,
            n_cols=int(objective.cost.size), n_nonzeros=model.n_nonzeros,
            highs_seconds=model.solve_seconds, highs_iterations=model.iterations(),
            lp_algorithm=algorithm, memory_estimate=need,
            constraints_added=int(sum(r["constraints_added"] for r in history)),
        )


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
        if problem.structure == "edges":
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

