"""What the two HiGHS backends share: their option checks, memory estimate and records.

``highs`` (:mod:`.highs`) and ``highs-lazy`` (:mod:`.highs_lazy`) take the same options,
accept an optimum by the same tests (:func:`_acceptance`) and estimate their memory
with one model (:func:`estimate_memory`); the HiGHS model itself is
:mod:`metricopt.solvers.core.exact_lp`.
"""

import math
import time

import numpy as np

from .._signals import by_signal
from ..problems._pairs import n_pairs
from ..result import Status
from .core import options as opt
from .core.exact_lp import DEFAULT_GAP_TOL, MEMORY_MODEL, model_bytes

__all__ = ["LP_ALGORITHMS", "LAZY_LP_ALGORITHMS", "DEFAULT_TOL", "PDLP_TOL", "DEFAULT_GAP_TOL",
           "OPTIONS", "LAZY_OPTIONS",
           "MEMORY_MODEL", "ROWS_MODEL", "LAZY_CLUSTER_EDITING_ROWS", "estimate_memory"]

LP_ALGORITHMS = ("auto", "simplex", "ipm", "pdlp")
#: ``highs-lazy`` re-solves warm-started; PDLP, a first-order method, would start over
#: every round and stop short of the accuracy the separation needs.
LAZY_LP_ALGORITHMS = ("auto", "simplex", "ipm")
#: Default ``tol`` (largest constraint violation accepted) of the simplex and
#: interior-point methods, and of PDLP.
DEFAULT_TOL = 1e-9
PDLP_TOL = 1e-6


# ------------------------------------------------------------- memory model
def _resolve_algorithm(problem, lp_algorithm, *, lazy):
    """The HiGHS solver to use: ``"simplex"``, ``"ipm"`` or ``"qp"``.

    ``"auto"`` follows the measurements in :class:`.highs.HighsSolver`: the dual simplex for
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
    The full model's size is exact (:func:`metricopt.solvers.core.lp_matrix.model_size`);
    the bytes per row, nonzero and column (:data:`~.core.exact_lp.MEMORY_MODEL`) come from the peak
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
    from .core import lp_matrix as lpm

    algorithm = _resolve_algorithm(problem, lp_algorithm, lazy=lazy)
    if problem.rows is not None:
        # highs-lazy adds at most every row too: the same bound
        return _rows_bytes(problem)
    size = lpm.model_size(problem)
    if lazy and restricted_columns(problem) and algorithm != "qp":
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
        return (model_bytes(algorithm, round_rows, 3 * round_rows, round_rows)
                + 64 * n_x)
    if lazy:
        n_x = problem.n_variables
        aux = size["cols"] - (n_pairs(problem.n) if problem.structure != "edges" else n_x)
        cols = n_x + aux
        rows = 2 * aux + (problem.sum_value is not None)
        nnz = 4 * aux + (n_x if problem.sum_value is not None else 0)
        if problem.structure == "dense":
            from ._sc_paths import start_rows

            # sparsest cut starts from its path rows (one round, with the repair's
            # n x n distances)
            paths = start_rows(problem) if problem.sum_value is not None else 0
            round_rows, round_nnz = n_x + paths, 3 * (n_x + paths)
            workspace = 64 * n_x + (8 * problem.n**2 if paths else 0)
        elif problem.structure == "sparse":
            round_rows = n_x
            round_nnz = 8 * n_x
            workspace = 64 * n_x + 48 * problem.n
        else:
            fam_rows, fam_nnz = lpm.edge_family_size(problem)
            round_rows, round_nnz = fam_rows, fam_nnz
            workspace = 40 * fam_rows
        return model_bytes(algorithm, rows + round_rows, nnz + round_nnz, cols) + workspace
    if algorithm != "qp" and problem.sum_value is not None and problem.structure == "dense":
        from ._sc_paths import applies, count_path_rows

        if applies(problem):  # highs solves sparsest cut's path rows (and repairs by paths)
            n_x, paths = problem.n_variables, count_path_rows(problem)
            return (model_bytes(algorithm, paths + 1, 3 * paths + n_x, n_x)
                    + 8 * problem.n ** 2 + 64 * n_x)
    nullspace = size["cols"] if algorithm == "qp" else 0
    block = 40 * min(size["rows"], lpm.DEFAULT_BLOCK_ROWS)
    return model_bytes(algorithm, size["rows"], size["nonzeros"], size["cols"],
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


def restricted_columns(problem):
    """True when the lazy model needs columns only for the pairs its rows touch: dense
    l1 problems, whose other pairs sit at their targets (:class:`~.core.exact_lp.RestrictedModel`)."""
    return (problem.structure == "dense" and problem.objective == "l1"
            and problem.sum_value is None)


# ------------------------------------------------------------ option checks
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


#: The options of ``highs`` (:meth:`.highs.HighsSolver.driver`), declared once.
OPTIONS = _options(None, "Simplex / interior-point / PDLP / QP iteration limit.", opt.Option(
    "lp_algorithm", "choice", default="auto", choices=LP_ALGORITHMS,
    doc="auto: the interior-point method (with crossover) for LPs with a sum row (sparsest "
        "cut), the dual simplex method otherwise; pdlp: HiGHS's first-order method."))
#: The options of ``highs-lazy`` (:meth:`.highs_lazy.HighsLazySolver.driver`), declared once.
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


def _solve_interruptible(model, *args, where=""):
    """``model.solve(*args)``; a Ctrl-C, SIGTERM or SIGHUP (HiGHS stops at its next
    iteration, :meth:`~metricopt.solvers.core.exact_lp.ExactModel.solve`) gives status
    ``INTERRUPTED`` and no point, so that the run returns what it has certified (the
    bound of HiGHS's duals, the rounds before), as the iterative backends do."""
    try:
        return model.solve(*args)
    except KeyboardInterrupt as exc:
        return Status.INTERRUPTED, f"interrupted{by_signal(exc)}{where}.", None, math.nan


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
    elif math.isfinite(lower_bound) and max_violation <= tol:
        message += f" Certified lower bound {lower_bound:.10g} (relative gap {gap:.3g})."
    elif math.isfinite(lower_bound):  # the gap of a point violating more than tol: unknown
        message += f" Certified lower bound {lower_bound:.10g}."
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
