"""The main job: read a graph, build a relaxation, solve it, round it, report, write.

:func:`run` is what ``metricopt solve`` and ``metricopt bound`` call, and what batch runs
call once per instance. :func:`evaluate_file`, :func:`describe` and :func:`solver_table`
back ``metricopt evaluate``, ``metricopt info`` and ``metricopt solvers``. Nothing here
prints: progress goes to the ``callback`` and ``on_stage`` hooks, results come back as
plain dicts.

Report fields (``report.json``; the names are stable)
------------------------------------------------------
``metricopt_version``, ``versions`` (python, numpy, scipy, numba, highspy, click),
``created`` (ISO 8601, UTC), ``command`` (argv, or null), ``graph`` {name, source, n, m
(null for a dissimilarity matrix), read_options, summary}, ``problem`` {kind, structure,
objective, n_variables, n_constraints (null for cycle families), params}, ``method``,
``options``, ``auto_reason``, ``status``, ``status_name``, ``success``, ``message``,
``lp_value``, ``lower_bound``, ``rounded_objective``, ``approximation_ratio``,
``lp_approx_ratio``, ``scores`` (the rounded objective and the bound in the problem's
other units, e.g. ``modularity`` and ``modularity_upper_bound``; null when it has none),
``gap``, ``max_violation``, ``iterations``, ``solve_seconds``,
``compile_seconds`` (kernels compiled or loaded before the solve clock started),
``total_seconds``, ``peak_memory_bytes``, ``rounding`` {method, requested_method,
n_tries, seed, n_clusters, per_method, per_method_ratio, objective (the rounding's),
refined_objective, refine {method, candidates, moves, merges, sweeps, layout, stopped,
seconds}}
(null without rounding; ``rounded_objective`` and ``approximation_ratio`` are the
refined answer's, which ``clusters.csv`` / ``cut.csv`` hold),
``solver_extras``, ``warnings``, ``files``.

``approximation_ratio = rounded_objective / lower_bound`` is certified: the optimum lies
between ``lower_bound`` and ``rounded_objective``. ``lp_approx_ratio = lp_value /
lower_bound`` says how far the returned relaxation value can be from the LP optimum (1.0
for an exact backend that reached optimality). Every objective is non-negative, so when
the numerator is 0 the ratio is 1.0 (the answer is optimal); when the lower bound is 0 or
negative and the numerator is positive, or either value is missing, the ratio is null. A
ratio below 1 by round-off (relative 1e-9) is 1.0; a numerator clearly below the bound
means the bound is not valid for it: the ratio is null and a warning says so (except
``lp_approx_ratio``, whose ``lp_value`` of a slightly infeasible ``x`` can lie below the
LP optimum: it keeps the measured value).

Objectives with a constant part (LambdaCC with degrees, modularity) are solved, bounded
and rounded in their non-negative correlation-clustering form (see
:mod:`metricopt.problems.resolution`), so the ratio keeps its meaning; ``scores`` maps
the values into the problem's other units, where a bound may be an upper bound (the
modularity of every clustering is at most ``modularity_upper_bound``).
"""

import contextlib
import importlib.metadata
import inspect
import platform
import secrets
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .exceptions import InputError, InvalidParameterError, MetricOptWarning
from .io._rundir import RunDirExistsError, claim_run_dir, existing_run_files, remove_run_files
from .io.reports import (
    read_clusters,
    read_cut,
    read_report_json,
    to_jsonable,
    write_clusters_csv,
    write_cut_csv,
    write_iterations_csv,
    write_report_json,
    write_solution_npz,
)
from .result import Status

__all__ = ["RunOutcome", "run", "check_run_arguments", "evaluate_file", "describe", "solver_table",
           "option_help", "problem_parameters", "objective_scores",
           "REPORT_FIELDS", "SUMMARY_OMIT"]

#: Top-level fields of ``report.json``, in order (stable names).
REPORT_FIELDS = (
    "metricopt_version", "versions", "created", "command", "graph", "problem", "method",
    "options", "auto_reason", "status", "status_name", "success", "message", "lp_value",
    "lower_bound", "rounded_objective", "approximation_ratio", "lp_approx_ratio", "scores", "gap",
    "max_violation", "iterations", "solve_seconds", "compile_seconds", "total_seconds",
    "peak_memory_bytes",
    "rounding", "solver_extras", "warnings", "files",
)

#: Report fields left out of :attr:`RunOutcome.summary` (the ``--json`` output).
SUMMARY_OMIT = ("versions", "command")

_VERSIONED = ("numpy", "scipy", "numba", "highspy", "click")
_ROUNDING_KEYS = ("method", "n_tries", "seed", "refine")
_RESULT_FIELDS = {
    "compile_seconds",
    "x", "fun", "lower_bound", "status", "status_name", "success", "message", "nit",
    "max_violation", "elapsed", "method", "history", "options", "gap", "auto_reason",
    "lp_approx_ratio",
}


@dataclass
class RunOutcome:
    """Everything one :func:`run` produced.

    Attributes
    ----------
    report : dict
        The run report (see the module docstring for its fields).
    data : Graph or Dissimilarity
    problem : MetricProblem
    result : SolveResult
    rounding : Rounding or None
        ``None`` for bounds only, metric nearness, or a solve without a solution.
    out : pathlib.Path or None
        The output directory, when one was given.
    files : dict
        Output kind -> path of each file written.
    """

    report: dict
    data: object
    problem: object
    result: object
    rounding: object = None
    out: Path | None = None
    files: dict = field(default_factory=dict)

    @property
    def summary(self):
        """The report without the fields in :data:`SUMMARY_OMIT`, as plain JSON types."""
        return to_jsonable({k: v for k, v in self.report.items() if k not in SUMMARY_OMIT})

    @property
    def interrupted(self):
        """True when the solve was stopped by the user."""
        return self.result.get("status") == Status.INTERRUPTED

    def clusters_by_label(self):
        """The rounded answer as ``{node label: cluster}`` (``sc``: 1 for the side S).

        See :func:`metricopt.io.clusters_by_label`; raises for a run without rounding.
        """
        from .io.exports import clusters_by_label

        return clusters_by_label(self.problem, self._rounding())

    def to_networkx(self, graph=None, attribute=None):
        """A networkx graph with the rounded answer as a node attribute.

        See :func:`metricopt.io.to_networkx` for ``graph`` and ``attribute``.
        """
        from .io.exports import to_networkx

        return to_networkx(self.problem, self._rounding(), graph=graph, attribute=attribute)

    def _rounding(self):
        if self.rounding is None:
            raise InvalidParameterError("this run has no rounded answer (bounds only, metric "
                                        "nearness, or no solution)")
        return self.rounding


def run(source, kind, *, method="auto", problem_params=None, solver_options=None,
        rounding=None, out=None, read_options=None, callback=None, bound_only=False,
        command=None, on_stage=None, force=False, export=None):
    """Read, build, solve, round and report one instance.

    Parameters
    ----------
    source : str, os.PathLike or object
        A graph or matrix file, a bundled dataset name, or a graph object (anything
        :func:`metricopt.io.read_input` reads for ``kind``).
    kind : {"cc", "sc", "mn", "cd"}
    method : str, default="auto"
        A registered backend or ``"auto"``.
    problem_params : dict or None
        Passed to :func:`metricopt.problems.build_problem`.
    solver_options : dict or None
        Passed to :func:`metricopt.solve`; only the options given here reach the backend.
    rounding : dict or None
        Keys ``method`` (default ``"auto"``), ``n_tries`` (default 20) and ``seed``
        (default: the solver's ``seed`` option, else fresh entropy that the report
        records). With ``method="leiden"`` the answer is Leiden's clustering and the LP
        roundings of ``"auto"`` run too, for comparison (``per_method`` in the report).
    out : str or os.PathLike or None
        Directory for ``report.json``, ``iterations.csv``, ``clusters.csv`` or
        ``cut.csv``, and ``solution.npz``; created if needed. The run claims it (a lock
        file, see :mod:`metricopt.io._rundir`): a directory another run is writing to
        raises ``RunDirBusyError``, one that holds an earlier run's files
        ``RunDirExistsError`` unless ``force``.
    read_options : dict or None
        Passed to :func:`metricopt.io.read_graph`.
    callback : callable or None
        Called with each iteration record, if the backend reports progress.
    bound_only : bool, default=False
        Stop after the solve: no rounding, no clustering file.
    command : list of str or None
        The command line, recorded in the report.
    on_stage : callable or None
        Called as ``on_stage(stage, info)`` with stage ``"read"`` (info: the data),
        ``"build"`` (the problem), ``"solve"`` (a dict with ``method`` and
        ``auto_reason``), ``"compile"`` (the backend's kernels are being compiled or
        loaded, before the solve clock starts), ``"round"`` (the rounding options) and
        ``"write"`` (the output directory).
    force : bool, default=False
        Replace the files of an earlier run in ``out`` (they are removed when the new
        run writes its own, so a run that fails first leaves them in place).
    export : str or os.PathLike or None
        A ``.graphml`` or ``.gexf`` file (optionally ``.gz``) to write the pre-processed
        graph to, with the cluster (``cc``, ``cd``) or the cut side (``sc``: ``in_cut``)
        as a node attribute (:func:`metricopt.io.write_export`); recorded in the
        report's ``files`` by its path. Not for bounds only or metric nearness.

    Returns
    -------
    RunOutcome

    Raises
    ------
    MetricOptError
        Bad input, parameter or option, an unavailable backend, or too little memory.
    """
    from .io import read_input
    from .problems import build_problem
    from .solvers import applicable_options, solve

    start = time.perf_counter()
    stage = on_stage or (lambda name, info: None)
    solver_options = dict(solver_options or {})
    callback = solver_options.pop("callback", callback)
    round_opts = _rounding_options(rounding, solver_options)
    check_run_arguments(kind, method, solver_options,
                        None if bound_only else round_opts["method"])
    _check_export(export, kind, bound_only)
    read_options = dict(read_options or {})
    out = _prepare_out(out)
    with contextlib.ExitStack() as claimed:
        if out is not None:
            claimed.enter_context(claim_run_dir(out))
            earlier = existing_run_files(out)
            if earlier and not force:
                raise RunDirExistsError(
                    f"{out} holds the files of another run ({', '.join(earlier)}); use "
                    f"--force (force=True) to replace them, or another directory")
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                data = read_input(source, kind, **read_options)
                stage("read", data)
                problem = build_problem(kind, data, **dict(problem_params or {}))
                stage("build", problem)
                name, reason, solver = _resolve_method(method, problem, solver_options)
                solver_options = applicable_options(solver, solver_options,
                                                    chosen_by_auto=reason is not None)
                stage("solve", {"method": name, "auto_reason": reason})
                stage("compile", {"method": name})
                accepts = "callback" in solver.default_options()
                result = solve(problem, name, callback=callback if accepts else None,
                               **solver_options)
                if reason is not None:
                    result["auto_reason"] = reason
                rounded = None
                if _should_round(kind, result, bound_only):
                    stage("round", dict(round_opts))
                    rounded = _round(problem, result.x, round_opts)
        finally:
            for w in caught:  # recorded for the report, then passed on to the caller
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

        outcome = RunOutcome(report={}, data=data, problem=problem, result=result,
                             rounding=rounded, out=out)
        outcome.report = _build_report(outcome, source, read_options, solver, caught, command,
                                       round_opts)
        if out is not None:
            stage("write", out)
            remove_run_files(out)  # with force: no file of the earlier run stays
            outcome.files = _write_outputs(outcome)
            outcome.report["files"] = {k: p.name for k, p in outcome.files.items()}
        if export is not None and rounded is not None:
            from .io.exports import write_export

            stage("write", export)
            outcome.files["export"] = write_export(export, problem, rounded)
            outcome.report["files"]["export"] = str(export)
        outcome.report["total_seconds"] = time.perf_counter() - start
        if out is not None:
            write_report_json(outcome.report, out / "report.json")
        return outcome


# ------------------------------------------------------------------ run helpers
def check_run_arguments(kind, method, solver_options, round_method=None):
    """Check a run's arguments before any input is read.

    Parameters
    ----------
    kind : str
    method : str
        A registered backend or ``"auto"``.
    solver_options : dict
    round_method : str or None
        The rounding method, or ``None`` when nothing is rounded.

    Raises
    ------
    InvalidParameterError
        An unknown problem kind or method, an option the explicitly chosen backend (or,
        for ``auto``, every backend) does not accept, or a rounding method that does not
        apply to ``kind``.
    """
    from .problems import BUILDERS
    from .rounding import METHODS as ROUNDING_METHODS
    from .solvers import applicable_options, get_solver, solver_option_names

    if kind not in BUILDERS:
        raise InvalidParameterError(f"Unknown problem {kind!r}; choose one of: "
                                    f"{', '.join(BUILDERS)}")
    if method is None or (isinstance(method, str) and method.lower() == "auto"):
        unknown = sorted(set(solver_options) - solver_option_names())
        if unknown:
            raise InvalidParameterError(f"Unknown option(s) for every method: "
                                        f"{', '.join(unknown)}")
    else:
        applicable_options(get_solver(method), solver_options)
    if round_method is not None and kind != "mn":
        valid = ("auto", *ROUNDING_METHODS[kind])
        if str(round_method).lower() not in valid:
            raise InvalidParameterError(f"Rounding method {round_method!r} does not apply to "
                                        f"{kind}; choose one of: {', '.join(valid)}")
        if str(round_method).lower() == "leiden":
            from .rounding.leiden import require_leiden

            require_leiden()


def _check_export(export, kind, bound_only):
    """An export file needs a rounded answer and a suffix that names its format."""
    if export is None:
        return
    from .io.exports import EXPORT_FORMATS, export_format

    if bound_only or kind == "mn":
        what = "a bound-only run" if bound_only else "metric nearness"
        raise InvalidParameterError(f"export writes a clustering or cut; {what} has none")
    if export_format(export) is None:
        raise InvalidParameterError(
            f"cannot tell the export format of {str(export)!r}: use a name ending in "
            f"{' or '.join(EXPORT_FORMATS.values())} (optionally .gz)")


def _rounding_options(rounding, solver_options):
    opts = dict(rounding or {})
    unknown = sorted(set(opts) - set(_ROUNDING_KEYS))
    if unknown:
        raise InvalidParameterError(
            f"Unknown rounding option(s): {', '.join(unknown)}. Valid: {', '.join(_ROUNDING_KEYS)}"
        )
    opts.setdefault("method", "auto")
    opts.setdefault("n_tries", 20)
    opts.setdefault("refine", "auto")
    from .rounding.refine import check_refine_method

    check_refine_method(opts["refine"])
    if opts.get("seed") is None:
        opts["seed"] = solver_options.get("seed")
    if opts["seed"] is None:  # fresh, but recorded in the report (and fits an int64 column)
        opts["seed"] = secrets.randbits(63)
    return opts


def _prepare_out(out):
    if out is None:
        return None
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError(
            f"cannot create output directory {out}: {exc.strerror or exc}"
        ) from None
    return out


def _resolve_method(method, problem, options):
    from .solvers import choose_method, get_solver

    reason = None
    if method is None or (isinstance(method, str) and method.lower() == "auto"):
        method, reason = choose_method(problem, max_memory=options.get("max_memory"))
    solver = get_solver(method)
    return solver.name, reason, solver


def _should_round(kind, result, bound_only):
    if bound_only or kind == "mn" or result.get("x") is None:
        return False
    return result.get("status") != Status.INTERRUPTED


def _round(problem, x, opts):
    from .rounding import round_solution

    compare = "auto" if str(opts["method"]).lower() == "leiden" else None
    return round_solution(problem, x, method=opts["method"], n_tries=opts["n_tries"],
                          seed=opts["seed"], compare=compare, refine=opts["refine"])


#: A ratio below 1 by at most this relative amount is round-off of an optimal answer
#: (objective and bound equal up to floating point) and is reported as 1.
RATIO_ROUNDOFF = 1e-9


def _ratio(numerator, lower_bound):
    """Certified ratio ``numerator / lower_bound``; see the module docstring.

    A ratio below 1 by round-off (:data:`RATIO_ROUNDOFF`) is 1. A numerator clearly below
    the bound means the bound is not a lower bound of this objective: no ratio is
    certified (``None``), and :func:`bound_exceeds` says so.
    """
    if numerator is None or lower_bound is None:
        return None
    numerator, lower_bound = float(numerator), float(lower_bound)
    if not (np.isfinite(numerator) and np.isfinite(lower_bound)):
        return None
    if numerator == 0.0:
        return 1.0
    if lower_bound > 0.0:
        ratio = numerator / lower_bound
        if ratio < 1.0:
            return 1.0 if ratio >= 1.0 - RATIO_ROUNDOFF else None
        return ratio
    return None


def bound_exceeds(numerator, lower_bound):
    """True when ``lower_bound`` lies clearly above ``numerator`` (it cannot be a bound)."""
    if numerator is None or lower_bound is None:
        return False
    numerator, lower_bound = float(numerator), float(lower_bound)
    if not (np.isfinite(numerator) and np.isfinite(lower_bound)):
        return False
    return numerator < lower_bound - RATIO_ROUNDOFF * abs(lower_bound)


def _lp_value_below_bound(lp_value, lower_bound, max_violation):
    """Why ``lp_value`` lies below ``lower_bound``, or None when it does not.

    The bound holds for every feasible point; ``x`` may violate constraints by up to the
    tolerance, and then its value can be slightly below the LP optimum (or, with no
    violation, below by round-off). The report says so next to the numbers.
    """
    if lp_value is None or lower_bound is None:
        return None
    lp_value, lower_bound = float(lp_value), float(lower_bound)
    if not (np.isfinite(lp_value) and np.isfinite(lower_bound)) or lp_value >= lower_bound:
        return None
    relative = (lower_bound - lp_value) / max(abs(lower_bound), 1e-300)
    viol = None if max_violation is None else float(max_violation)
    why = (f"the returned x violates constraints by up to {viol:.3g}, and such a point can "
           f"score below the LP optimum; every feasible point scores at least the bound"
           if viol is not None and viol > 0.0 else "round-off in the objective's sum")
    return (f"lp_value {lp_value:.10g} lies below the certified lower bound "
            f"{lower_bound:.10g} (relative {relative:.2g}): {why}")


def _versions():
    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _package_version():
    try:
        return importlib.metadata.version("metricopt")
    except importlib.metadata.PackageNotFoundError:
        from . import __version__

        return __version__


def _peak_memory_bytes():
    """Peak resident memory of this process (``ru_maxrss``), or None where unknown."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if platform.system() == "Darwin" else int(peak) * 1024


def _source_text(source, data):
    """How the report names the input: the path or dataset name, or for an object the
    kind the reader recorded (``"networkx graph"``)."""
    if isinstance(source, (str, Path)) or hasattr(source, "__fspath__"):
        return str(source)
    return str((data.summary or {}).get("path", type(source).__name__))


def _graph_section(data, source, read_options):
    return {
        "name": data.name,
        "source": _source_text(source, data),
        "n": int(data.n),
        "m": int(data.m) if hasattr(data, "m") else None,
        "read_options": read_options,
        "summary": dict(data.summary),
    }


def _problem_section(problem):
    return {
        "kind": problem.kind,
        "structure": problem.structure,
        "objective": problem.objective,
        "n_variables": problem.n_variables,
        "n_constraints": problem.n_constraints,
        "params": dict(problem.params),
    }


def _rounding_section(rounded, requested, lower_bound):
    from .rounding.refine import refine_section

    if rounded is None:
        return None
    per_method = rounded.get("per_method")
    return {
        "method": rounded.get("method"),
        "requested_method": requested["method"],
        "n_tries": rounded.get("n_tries", requested["n_tries"]),
        "seed": rounded.get("seed", requested["seed"]),
        "n_clusters": rounded.get("n_clusters"),
        "per_method": per_method,
        "per_method_ratio": None if per_method is None else {
            name: _ratio(value, lower_bound) for name, value in per_method.items()},
        **refine_section(rounded),
    }


def objective_scores(problem, objective=None, lower_bound=None):
    """An objective value and a lower bound in the problem's other units.

    Parameters
    ----------
    problem : MetricProblem
        Its ``units`` (``name -> (scale, offset)``) define the other units.
    objective : float or None
        The objective of a clustering.
    lower_bound : float or None
        A certified lower bound on the objective.

    Returns
    -------
    dict or None
        ``name`` (the clustering's value) and ``name_lower_bound`` or, for a negative
        scale, ``name_upper_bound`` (valid for every clustering), for each unit given a
        finite value; ``None`` when the problem has no other units.
    """
    units = getattr(problem, "units", None) or {}
    if not units:
        return None
    out = {}
    for name, (scale, offset) in units.items():
        if objective is not None and np.isfinite(float(objective)):
            out[name] = scale * float(objective) + offset
        if lower_bound is not None and np.isfinite(float(lower_bound)):
            side = "lower" if scale > 0 else "upper"
            out[f"{name}_{side}_bound"] = scale * float(lower_bound) + offset
    return out


def _solver_extras(result):
    scalar = (str, bool, int, float, np.integer, np.floating, np.bool_, type(None))
    return {k: v for k, v in result.items() if k not in _RESULT_FIELDS and isinstance(v, scalar)}


def _build_report(outcome, source, read_options, solver, caught, command, round_opts):
    result, rounded = outcome.result, outcome.rounding
    lp_value = result.get("fun")
    lower_bound = result.get("lower_bound")
    if lower_bound is None and solver.exact and result.get("success"):
        lower_bound = lp_value
    lp_ratio = result.get("lp_approx_ratio")
    if lp_ratio is None:
        exact_opt = solver.exact and result.get("success") and lower_bound == lp_value
        lp_ratio = 1.0 if exact_opt else _ratio(lp_value, lower_bound)
        if lp_ratio is None and bound_exceeds(lp_value, lower_bound):
            # an x that violates constraints can have a value below the LP optimum
            lp_ratio = float(lp_value) / float(lower_bound)
    elif 1.0 - RATIO_ROUNDOFF <= lp_ratio < 1.0:
        lp_ratio = 1.0
    below = _lp_value_below_bound(lp_value, lower_bound, result.get("max_violation"))
    if below is not None:
        warnings.warn(below, MetricOptWarning, stacklevel=2)
    rounded_objective = None if rounded is None else rounded.get("objective")
    if bound_exceeds(rounded_objective, lower_bound):
        warnings.warn(f"the rounded objective {rounded_objective:.10g} lies below the lower "
                      f"bound {lower_bound:.10g}; no ratio is certified", MetricOptWarning,
                      stacklevel=2)
    return {
        "metricopt_version": _package_version(),
        "versions": _versions(),
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": list(command) if command is not None else None,
        "graph": _graph_section(outcome.data, source, read_options),
        "problem": _problem_section(outcome.problem),
        "method": result.get("method"),
        "options": result.get("options", {}),
        "auto_reason": result.get("auto_reason"),
        "status": result.get("status"),
        "status_name": result.get("status_name"),
        "success": bool(result.get("success")),
        "message": result.get("message"),
        "lp_value": lp_value,
        "lower_bound": lower_bound,
        "rounded_objective": rounded_objective,
        "approximation_ratio": _ratio(rounded_objective, lower_bound),
        "lp_approx_ratio": lp_ratio,
        "scores": objective_scores(outcome.problem, rounded_objective, lower_bound),
        "gap": result.get("gap"),
        "max_violation": result.get("max_violation"),
        "iterations": result.get("nit"),
        "solve_seconds": result.get("elapsed"),
        "compile_seconds": result.get("compile_seconds"),
        "total_seconds": None,
        "peak_memory_bytes": _peak_memory_bytes(),
        "rounding": _rounding_section(rounded, round_opts, lower_bound),
        "solver_extras": _solver_extras(result),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]
        + ([] if below is None else [f"{MetricOptWarning.__name__}: {below}"]),
        "files": {},
    }


def _write_outputs(outcome):
    out, problem, result, rounded = outcome.out, outcome.problem, outcome.result, outcome.rounding
    files = {}
    files["iterations"] = out / "iterations.csv"
    write_iterations_csv(result.get("history", []), files["iterations"])
    if rounded is not None and rounded.get("in_cut") is not None and problem.kind == "sc":
        files["cut"] = out / "cut.csv"
        write_cut_csv(problem.labels, rounded["in_cut"], files["cut"])
    elif rounded is not None:
        files["clusters"] = out / "clusters.csv"
        write_clusters_csv(problem.labels, rounded["labels"], files["clusters"])
    if result.get("x") is not None:
        files["solution"] = out / "solution.npz"
        write_solution_npz(problem, result["x"], files["solution"])
    files["report"] = out / "report.json"
    return files


# ------------------------------------------------------------------ evaluate
def problem_parameters(kind):
    """Names of the keyword parameters the builder of ``kind`` accepts.

    Parameters
    ----------
    kind : {"cc", "sc", "mn", "cd"}

    Returns
    -------
    set of str
    """
    from .problems import BUILDERS

    sig = inspect.signature(BUILDERS[kind])
    return {name for name, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


def _params_from_report(report, kind, params, path):
    rep_problem = report.get("problem") or {}
    if rep_problem.get("kind") != kind:
        raise InputError(f"{path}: the report is for problem {rep_problem.get('kind')!r}, not {kind!r}")
    accepted = problem_parameters(kind)
    merged = {k: v for k, v in (rep_problem.get("params") or {}).items() if k in accepted}
    for key, value in params.items():
        if key in merged and merged[key] != value:
            raise InputError(
                f"{path}: the lower bound is for {key}={merged[key]!r}, not {key}={value!r}"
            )
        merged[key] = value
    return merged


def evaluate_file(source, kind, path, *, problem_params=None, read_options=None,
                  lower_bound=None, report=None, refine="none", seed=None, refined_out=None):
    """Score a clustering or cut file and, given a lower bound, certify its ratio.

    Parameters
    ----------
    source : str or os.PathLike
        The graph (path or bundled dataset name).
    kind : {"cc", "sc", "cd"}
    path : str or os.PathLike
        A clustering (``node,cluster``) or, for ``sc``, a cut (``node,in_cut``) file;
        CSV or whitespace-separated.
    problem_params, read_options : dict or None
        As for :func:`run`.
    lower_bound : float or None
        A certified lower bound on the optimum.
    report : str or os.PathLike or None
        A ``report.json``; its lower bound and problem parameters are used (parameters
        given explicitly must agree with it), and its graph size must match.
    refine : {"none", "local", "auto"}, default="none"
        Also improve the clustering or cut by local search
        (:func:`metricopt.rounding.refine_clustering`, :func:`~metricopt.rounding.refine_cut`)
        and report the refined answer beside the given one.
    seed : int or None
        Seeds the refinement's node orders.
    refined_out : str or os.PathLike or None
        Write the refined clustering (``node,cluster``) or cut (``node,in_cut``) here.

    Returns
    -------
    dict
        ``graph``, ``problem``, ``file``, ``objective``, ``lower_bound``,
        ``approximation_ratio`` (null without a usable bound), ``scores`` (the
        objective and bound in the problem's other units, e.g. the modularity; null
        when it has none; see :func:`objective_scores`) and ``n_clusters``
        (``cut_size``, the number of nodes in ``S``, for ``sc``).
    """
    from .io import read_input
    from .problems import build_problem
    from .rounding import evaluate

    from .rounding.refine import check_refine_method

    refine = check_refine_method(refine)
    if refined_out is not None and refine == "none":
        raise InvalidParameterError("refined_out needs refine='local'")
    params = dict(problem_params or {})
    read_options = dict(read_options or {})
    rep = None
    if report is not None:
        if lower_bound is not None:
            raise InvalidParameterError("give either a lower bound or a report, not both")
        rep = read_report_json(report)
        params = _params_from_report(rep, kind, params, report)
        lower_bound = rep.get("lower_bound")
        if lower_bound is None:
            raise InputError(f"{report}: the report has no lower bound")
    data = read_input(source, kind, **read_options)
    if rep is not None:
        _check_same_graph(rep, data, report)
    problem = build_problem(kind, data, **params)
    out = {"graph": {"name": data.name, "source": _source_text(source, data), "n": int(data.n),
                     "m": int(data.m) if hasattr(data, "m") else None},
           "problem": {"kind": kind, "params": dict(problem.params)}, "file": str(path)}
    if kind == "sc":
        in_cut = read_cut(path, problem.labels)
        objective = evaluate(problem, in_cut=in_cut)
        out["cut_size"] = int(np.count_nonzero(in_cut))
    else:
        labels = read_clusters(path, problem.labels)
        objective = evaluate(problem, labels=labels)
        out["n_clusters"] = int(labels.max()) + 1 if labels.size else 0
    if lower_bound is not None and not np.isfinite(float(lower_bound)):
        raise InvalidParameterError(f"the lower bound {lower_bound!r} is not a finite number")
    if bound_exceeds(objective, lower_bound):
        warnings.warn(f"the given lower bound {float(lower_bound):.10g} exceeds this "
                      f"{'cut' if kind == 'sc' else 'clustering'}'s objective "
                      f"{float(objective):.10g}: it is not a valid lower bound for this "
                      f"problem and its parameters, so no ratio is certified",
                      MetricOptWarning, stacklevel=2)
    out.update(objective=float(objective), lower_bound=lower_bound,
               approximation_ratio=_ratio(objective, lower_bound),
               scores=objective_scores(problem, objective, lower_bound))
    if refine != "none":
        out["refined"] = _refined_section(problem, in_cut if kind == "sc" else labels, seed,
                                          lower_bound, refined_out)
    return to_jsonable(out)


def _refined_section(problem, answer, seed, lower_bound, refined_out):
    """Refine a given clustering or cut and describe the result (``evaluate --refine``)."""
    from .rounding import refine_clustering, refine_cut

    if problem.kind == "sc":
        res = refine_cut(problem, answer)
        size = {"cut_size": int(np.count_nonzero(res.in_cut))}
    else:
        res = refine_clustering(problem, answer, seed=seed)
        size = {"n_clusters": res.n_clusters}
    if refined_out is not None:
        if problem.kind == "sc":
            write_cut_csv(problem.labels, res.in_cut, refined_out)
        else:
            write_clusters_csv(problem.labels, res.labels, refined_out)
    return {"objective": res.objective, "approximation_ratio": _ratio(res.objective, lower_bound),
            "scores": objective_scores(problem, res.objective, lower_bound), **size,
            "moves": res.moves, "merges": res.merges, "sweeps": res.sweeps, "stopped": res.stopped,
            "seconds": res.elapsed, "file": None if refined_out is None else str(refined_out)}


def _check_same_graph(rep, data, path):
    graph = rep.get("graph") or {}
    m = int(data.m) if hasattr(data, "m") else None
    if graph.get("n") != data.n or graph.get("m") != m:
        raise InputError(
            f"{path}: the report is for a graph with n={graph.get('n')}, m={graph.get('m')}, "
            f"but {data.name} has n={data.n}, m={m}"
        )


# ------------------------------------------------------------------ info
def _load_solver(name):
    from .solvers import get_solver

    try:
        return get_solver(name), None
    except ImportError as exc:
        return None, f"cannot be imported ({exc})"


def _resolve(module, dotted):
    """The callable a docstring reference names inside ``module``, or None.

    Only names of the module itself are followed (``solve_dykstra``,
    ``HighsSolver.run``): nothing is imported, so listing options stays quick.
    """
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if callable(obj) else None


def option_help(solver):
    """One line about each option of a backend, from its numpydoc docstrings.

    The options are documented once, in the Parameters section of the backend's
    ``run`` method or of a function of its module that the docstring refers to
    (``see :func:`solve_dykstra```); the first such description of each option is used.

    Parameters
    ----------
    solver : Solver

    Returns
    -------
    dict
        Option name -> the first sentence of its description (``""`` when none of
        these docstrings describes it).
    """
    import sys

    from ._docstrings import first_sentence, parameter_docs, referenced_functions

    run = type(solver).run
    module = sys.modules[type(solver).__module__]
    names = [k for k in solver.default_options() if k != "callback"]
    found = {}
    for ref in [None, *referenced_functions(run)]:
        source = run if ref is None else _resolve(module, ref)
        docs = parameter_docs(source) if source is not None else {}
        for name in names:
            if not found.get(name) and docs.get(name, ("", ""))[1]:
                found[name] = first_sentence(docs[name][1])
        if all(found.get(name) for name in names):
            break
    return {name: found.get(name, "") for name in names}


def solver_table():
    """Describe every registered backend, in preference order.

    Returns
    -------
    list of dict
        ``name``, ``available``, ``exact``, ``description``, ``structures``,
        ``objectives``, ``options`` (name -> default) and ``option_help`` (name -> one
        line from the backend's docstring, see :func:`option_help`).
    """
    from .solvers import registered_solvers

    rows = []
    for name in registered_solvers():
        solver, error = _load_solver(name)
        if solver is None:
            rows.append({"name": name, "available": False, "exact": None,
                         "description": error, "structures": [], "objectives": [], "options": {},
                         "option_help": {}})
            continue
        options = {k: v for k, v in solver.default_options().items() if k != "callback"}
        rows.append({
            "name": name,
            "available": bool(solver.is_available()),
            "exact": bool(solver.exact),
            "description": solver.description,
            "structures": list(solver.structures),
            "objectives": list(solver.objectives),
            "options": to_jsonable(options),
            "option_help": option_help(solver),
        })
    return rows


def _backend_rows(problem, budget):
    from .solvers import registered_solvers

    rows = []
    for name in registered_solvers():
        solver, error = _load_solver(name)
        if solver is None:
            rows.append({"method": name, "available": False, "supported": False,
                         "reason": error, "memory_bytes": None, "fits": None})
            continue
        ok, why = solver.supports(problem)
        need = solver.estimate_memory(problem) if ok else None
        rows.append({
            "method": name,
            "available": bool(solver.is_available()),
            "supported": bool(ok),
            "reason": why or None,
            "memory_bytes": None if need is None else int(need),
            "fits": None if need is None else bool(need <= budget),
        })
    return rows


def describe(source, *, kinds=None, read_options=None, problem_params=None, max_memory=None):
    """Sizes of a graph's relaxations and the memory each backend would need.

    Parameters
    ----------
    source : str or os.PathLike
    kinds : list of str or None
        Problems to describe (default: all four).
    read_options : dict or None
    problem_params : dict or None
        Passed to each builder that accepts them.
    max_memory : int or None
        Memory allowance in bytes (default: what the machine has available).

    Returns
    -------
    dict
        ``graph`` {name, source, n, m, summary}, ``memory_budget`` and ``problems``: one
        dict per kind with ``kind``, ``structure``, ``objective``, ``n_variables``,
        ``n_constraints``, ``constraint_families`` and ``backends`` (method, available,
        supported, reason, memory_bytes, fits), or ``kind`` and ``error`` when the
        problem cannot be built for this input.
    """
    from ._memory import available_memory
    from .exceptions import MetricOptError
    from .io import read_graph
    from .problems import BUILDERS, build_problem

    data = read_graph(source, **dict(read_options or {}))
    budget = available_memory() if max_memory is None else int(max_memory)
    params = dict(problem_params or {})
    problems = []
    for kind in kinds or list(BUILDERS):
        accepted = problem_parameters(kind)
        kw = {k: v for k, v in params.items() if k in accepted}
        if max_memory is not None and "max_memory" in accepted:
            kw["max_memory"] = int(max_memory)
        try:
            problem = build_problem(kind, data, **kw)
        except MetricOptError as exc:
            problems.append({"kind": kind, "error": str(exc)})
            continue
        problems.append({
            "kind": kind,
            "structure": problem.structure,
            "objective": problem.objective,
            "params": dict(problem.params),
            "n_variables": problem.n_variables,
            "n_constraints": problem.n_constraints,
            "constraint_families": problem.constraint_families(),
            "backends": _backend_rows(problem, budget),
        })
    graph = _graph_section(data, source, dict(read_options or {}))
    return to_jsonable({"graph": graph, "memory_budget": budget, "problems": problems})
