"""The exact LP/QP optimum with HiGHS, every constraint row built up front (``highs``).

It is the reference the iterative backends are tested against; ``highs-lazy``
(:mod:`.highs_lazy`) adds the rows round by round instead. Both drive the model of
:mod:`metricopt.solvers.core.exact_lp`.
"""

import math
import time

import numpy as np

from .._memory import check_memory
from ..problems._pairs import n_pairs
from ..result import Status
from . import _sc_paths
from ._base import Solver
from ._highs_common import (
    _REFERENCES,
    OPTIONS,
    _certified_gap,
    _check_options,
    _default_tol,
    _judge_optimum,
    _memory_text,
    _record,
    _resolve_algorithm,
    _solve_interruptible,
    estimate_memory,
)
from .core.exact_lp import ExactModel, RestrictedModel

__all__ = ["HighsSolver", "estimate_memory"]


# ------------------------------------------------------------------ solvers
class HighsSolver(Solver):
    """The exact LP/QP optimum from HiGHS with every constraint row built up front.

    Dense problems get all ``3 * C(n, 3)`` triangle rows, except sparsest cut on a
    connected graph: its path rows ``x_ij <= x_ik + x_kj`` over the edges ``(k, j)`` (at
    most ``2 m n``) hold the same optimum and its answer is repaired by shortest paths
    (:mod:`._sc_paths`), so the LP is the full one, smaller. Cluster deletion gets its
    triangle (three orientations) and open-wedge rows. A dense problem given by its rows (the
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

    The full models have ``3 C(n, 3)`` rows (740,715 for football). The sparsest-cut
    column is from before the path rows: lazy sparsest cut then needed one round per few
    pairs (5024 rounds on football), as V §8.1.1 observed: most triangle rows end up
    tight. With the path rows (HiGHS 1.16, 2 threads, one run, before -> after):
    ``highs`` karate 0.3 -> 0.1 s, dolphins 4.9 -> 1.0 s, lesmis 12.2 -> 2.6 s, polbooks
    71.8 -> 17.8 s, football 105.0 -> 33.2 s (``benchmarks/README.md``).
    HiGHS's active-set QP solver fails on the full triangle family from about 30 points
    on (it reports a non-convex reduced Hessian); the result then has status
    ``NUMERICAL`` and ``highs-lazy`` is the way to solve it.
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
            ``x`` is HiGHS's current iterate, if it has one. At a Ctrl-C HiGHS stops at
            its next iteration: status ``INTERRUPTED``, no ``x``, the bound of its duals.
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
            ``certificate`` (the details of
            :meth:`~.core.exact_lp.ExactModel.certified_bound`) and ``certificate_seconds``.

        Notes
        -----
        ``lower_bound`` of an LP is certified: weak duality from HiGHS's row duals
        over a box known to hold an optimum (:func:`~metricopt.bounds.lp_dual_bound`,
        :func:`~metricopt.solvers.core.lp_matrix.certificate_box`), recomputed in float64
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
        from .core import lp_matrix as lpm

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
        if algorithm != "qp" and _sc_paths.applies(problem):
            rows = _sc_paths.path_rows(problem)
            check_memory(need, f"{_memory_text(problem, self.name)}: the model of its "
                         f"{len(rows):,} path rows", opts["max_memory"])
            return _solve_rows(problem, opts, algorithm, start, deadline, need, rows)
        size = lpm.model_size(problem)
        check_memory(need, f"{_memory_text(problem, self.name)}: the full model has {size['rows']:,} rows "
                     f"and {size['nonzeros']:,} nonzeros, which", opts["max_memory"])

        model, objective, x_columns = _full_model(problem, opts, algorithm, deadline)
        build_seconds = time.perf_counter() - start

        solved = not (deadline is not None and time.perf_counter() > deadline)
        if solved:
            status, message, z, value = _solve_interruptible(model, deadline, opts["max_iter"])
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
        rec = _record(1, start, fun if x is not None else math.nan,  # a gap at x within tol
                      gap if max_violation <= tol else math.nan, max_violation, model.n_rows,
                      model.n_rows, dual=lower_bound)
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
            tol=tol,  # the effective one (its default depends on the algorithm)
        )


def _solve_rows(problem, opts, algorithm, start, deadline, need, paths=None):
    """``highs`` on a dense problem given by its rows (the open-wedge relaxation), or on
    sparsest cut's ``paths`` rows: one model with every row and columns only for the
    pairs they touch; the other pairs sit at their targets, where their terms are 0
    (:class:`~.core.exact_lp.RestrictedModel`; sparsest cut has every pair and its sum
    row). The path rows hold the LP's optimum and the answer is repaired by shortest
    paths (:mod:`._sc_paths`), so it is the whole LP's."""
    from .core import lp_matrix as lpm

    tol = opts["tol"]
    model = RestrictedModel(problem, opts, algorithm)
    model.model.h.setOptionValue("presolve", "choose")
    model.add_blocks([lpm.triangle_rows(problem.rows if paths is None else paths)])
    build_seconds = time.perf_counter() - start
    if opts["max_iter"] is not None:
        for name in ("simplex", "ipm", "pdlp"):
            model.model.h.setOptionValue(f"{name}_iteration_limit", int(opts["max_iter"]))
    status, message, x, value = model.solve(deadline)
    if paths is not None and x is not None:
        repaired = _sc_paths.repair_by_paths(problem, x)
        x = x if repaired is None else repaired
    fun = problem.objective_value(x) if x is not None else math.nan
    max_violation = problem.max_violation(x) if x is not None else math.nan
    lower_bound, certificate = model.certified_bound()
    gap = _certified_gap(problem, fun, lower_bound)
    status, message = _judge_optimum(status, message, max_violation, gap, tol, opts["gap_tol"],
                                     fun, lower_bound, certificate)
    rec = _record(1, start, fun, gap if max_violation <= tol else math.nan, max_violation,
                  model.n_rows, model.n_rows, dual=lower_bound)
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
        tol=tol,  # the effective one (its default depends on the algorithm)
    )


def _full_model(problem, opts, algorithm, deadline):
    """The HiGHS model of the whole LP: the objective's rows, the sum row, then every
    triangle (or explicit) row block until ``deadline``; ``(model, objective,
    x_columns)``, ``x_columns`` the model columns of the LP's variables (MET(G) is
    embedded in the LP on ``K_n``)."""
    from .core import lp_matrix as lpm

    if problem.structure == "sparse":
        x_columns = lpm.embedding_columns(problem)
        n_x = n_pairs(problem.n)
    else:
        x_columns = np.arange(problem.n_variables, dtype=np.int64)
        n_x = problem.n_variables
    objective = lpm.objective_model(problem, x_columns, n_x)
    model = ExactModel(problem, objective, opts, algorithm)
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
    return model, objective, x_columns
