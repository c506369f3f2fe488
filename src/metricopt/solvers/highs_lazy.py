"""HiGHS on a growing set of metric constraints, added round by round (``highs-lazy``).

It starts from the bounds and the objective alone and adds violated metric constraints
round by round, re-solving warm-started from the previous basis (V §8.1.1); the model
and the separation are those of :mod:`metricopt.solvers.core`.
"""

import math
import time

import numpy as np

from .._memory import available_memory, check_memory
from ..exceptions import MemoryLimitError
from ..result import Status
from ._base import Solver
from ._highs_common import (
    _REFERENCES,
    LAZY_LP_ALGORITHMS,
    LAZY_OPTIONS,
    MEMORY_MODEL,
    _acceptance,
    _certified_gap,
    _check_options,
    _default_tol,
    _memory_text,
    _record,
    _resolve_algorithm,
    _solve_interruptible,
    estimate_memory,
    restricted_columns,
)
from .core.exact_lp import ExactModel, RestrictedModel, model_bytes
from .core.separation import Separator

__all__ = ["HighsLazySolver"]

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
    terms are 0 (:class:`~.core.exact_lp.RestrictedModel`), so the first round is x = targets and
    unit-weight ``cc`` starts from its open wedges; the dense separation then visits only
    the wedges of the pairs below the bulk value of x (the support scan of
    :mod:`metricopt.problems._triangles`). A problem given by its rows (the open-wedge
    relaxation) is separated over those rows only, the most violated one per pair each
    round. The loop stops when no constraint is violated by more than ``tol``. Every
    round's value is the optimum of a relaxation, hence a lower bound on the LP/QP
    optimum. For LPs ``lower_bound`` is certified instead: each round's row duals give a
    weak-duality bound on the *full* LP (the rows not yet added have multiplier 0;
    :meth:`~.core.exact_lp.ExactModel.certified_bound`), computed without trusting HiGHS's tolerances, and
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
            Seconds. When reached the status is ``LIMIT`` (at a Ctrl-C ``INTERRUPTED``);
            ``x`` and ``lower_bound`` are those of the last round HiGHS finished.
        max_iter : int or None, default=None
            Most rounds (HiGHS solves); ``nit`` counts the rounds HiGHS finished.
        threads, verbose, seed
            As :meth:`.highs.HighsSolver.driver`.
        max_memory : int or None, default=None
            Bytes allowed (default: what the machine has available). Checked before the
            first round and before rows are added; a round that would not fit ends the
            run with status ``LIMIT``.
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
            As :meth:`.highs.HighsSolver.run`, with ``nit`` the number of rounds,
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
        paths, seed_paths, algorithm = _path_start(
            problem, opts["lp_algorithm"], _resolve_algorithm(problem, opts["lp_algorithm"], lazy=True))
        opts["tol"] = _default_tol(opts["tol"], algorithm)
        need = estimate_memory(problem, lp_algorithm=opts["lp_algorithm"], lazy=True)
        check_memory(need, f"{_memory_text(problem, self.name)}: the first round", opts["max_memory"])

        model = _lazy_model(problem, opts, algorithm)
        separator = Separator(problem, opts["tol"], opts["max_rows_per_round"])
        used = need + (_seed_path_rows(problem, model, algorithm, need, opts["max_memory"],
                                       _memory_text(problem, self.name)) if seed_paths else 0)
        history, best_x, best_value = [], None, math.nan
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
            run_status, run_message, x, value = _solve_interruptible(model, deadline,
                                                                     where=f" in round {rounds}")
            round_bound = math.nan
            if is_lp and run_status != Status.INTERRUPTED:
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
            if paths and not converged:
                xr = _path_repair(problem, x, best_bound, opts["gap_tol"])
                if xr is not None:
                    x = best_x = xr
                    run_message += "; x repaired by shortest paths"
                    max_violation = max(problem.max_violation(xr), problem.bound_violation(xr))
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
                _emit(history, rec, opts["callback"])
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
                _emit(history, rec, opts["callback"])
                if opts["max_iter"] is not None and rounds >= opts["max_iter"]:
                    status, message = Status.LIMIT, f"Round limit ({opts['max_iter']}) reached."
                else:
                    status, message = Status.NUMERICAL, (
                        f"Stalled: the violated constraints (largest {max_violation:.3g}) are all in "
                        f"the model already; HiGHS's tolerances do not reach tol={tol:g}.")
                break
            nnz = sum(b.n_nonzeros for b in blocks)
            extra = model_bytes(algorithm, added, nnz, 0) - MEMORY_MODEL[algorithm]["base"]
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
                _emit(history, rec, opts["callback"])
                status, message = Status.LIMIT, f"Memory limit: {exc}"
                break
            used += extra
            model.add_blocks(blocks)
            separator.commit()
            _emit(history, rec, opts["callback"])

        return dict(_answer(problem, model, best_x, best_value, best_bound, certificate, certificate_seconds,
                            status, message, history, is_lp, algorithm, need), tol=tol)  # the tol used


def _emit(history, rec, callback):
    """Keep a round's record and hand it to the callback."""
    history.append(rec)
    if callback is not None:
        callback(rec)


def _path_start(problem, lp_algorithm, algorithm):
    """Sparsest cut (:mod:`._sc_paths`): ``(paths, seed, algorithm)``: whether every
    round's point has the exact repair by shortest paths, whether the model starts from
    the path rows (:func:`._sc_paths.start_rows`), and the method: one interior-point
    solve of them beats the dual simplex method (Barabasi-Albert, n = 200, m = 396: 46 s
    against more than 120 s)."""
    from . import _sc_paths

    paths = algorithm != "qp" and _sc_paths.applies(problem)
    seed = paths and _sc_paths.start_rows(problem) > 0
    if seed and lp_algorithm == "auto":
        algorithm = "ipm"
    return paths, seed, algorithm


def _seed_path_rows(problem, model, algorithm, need, max_memory, what):
    """Add sparsest cut's path rows to ``model`` once they fit; their bytes."""
    from . import _sc_paths
    from .core import lp_matrix as lpm

    rows = _sc_paths.path_rows(problem)
    extra = model_bytes(algorithm, len(rows), 3 * len(rows), 0) - MEMORY_MODEL[algorithm]["base"]
    check_memory(need + extra, f"{what}: the path rows ({len(rows):,})", max_memory)
    model.add_blocks([lpm.triangle_rows(rows)])
    return extra


def _path_repair(problem, x, bound, gap_tol):
    """The round's point repaired by shortest paths (exactly feasible) when its certified
    gap against ``bound`` meets ``gap_tol``, else None."""
    from . import _sc_paths

    xr = _sc_paths.repair_by_paths(problem, x)
    if xr is None or not _certified_gap(problem, problem.objective_value(xr), bound) <= gap_tol:
        return None
    return xr


def _answer(problem, model, best_x, best_value, best_bound, certificate, certificate_seconds,
            status, message, history, is_lp, algorithm, need):
    """The lazy run's result fields from its last round's model and its best bound."""
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
    :class:`~.core.exact_lp.RestrictedModel`)."""

    def __init__(self, problem, opts, algorithm):
        from .core import lp_matrix as lpm

        self.problem = problem
        n_x = problem.n_variables
        self.n_x = n_x
        x_columns = np.arange(n_x, dtype=np.int64)
        self.objective = lpm.objective_model(problem, x_columns, n_x)
        self.model = ExactModel(problem, self.objective, opts, algorithm)
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


def _lazy_model(problem, opts, algorithm):
    if restricted_columns(problem) and algorithm != "qp":
        model = RestrictedModel(problem, opts, algorithm)
        model.model.h.setOptionValue("presolve", "choose")
        return model
    return _FullModel(problem, opts, algorithm)
