"""``metricopt solve`` and ``metricopt bound``: read, build, solve, round, report, write.

:func:`run` is also what batch runs call once per instance. Nothing here prints:
progress goes to the ``callback`` and ``on_stage`` hooks.
"""

import contextlib
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._signals import interrupt_cause, interrupted_by
from ..exceptions import InvalidParameterError
from ..io._rundir import RunDirExistsError, claim_run_dir, existing_run_files, remove_run_files
from ..io.reports import (
    report_summary,
    write_clusters_csv,
    write_cut_csv,
    write_iterations_csv,
    write_report_json,
    write_solution_npz,
)
from ..result import Status
from ..solvers.core.loop import CheckpointNotWritten
from ._editing import check_editing, editing_step, lp_params
from ._report import _build_report

if TYPE_CHECKING:
    from ..graph import Dissimilarity, Graph
    from ..problems import MetricProblem
    from ..result import SolveResult
    from ..rounding import Rounding

__all__ = ["RunOutcome", "run", "check_run_arguments"]

_ROUNDING_KEYS = ("method", "n_tries", "seed", "refine", "time_limit")


@dataclass
class RunOutcome:
    """Everything one :func:`run` produced.

    Attributes
    ----------
    report : dict
        The run report (its fields: :mod:`metricopt.io.reports`).
    data : Graph or Dissimilarity
    problem : MetricProblem
    result : SolveResult
    rounding : Rounding or None
        ``None`` for bounds only, metric nearness, or a solve without a solution.
    out : pathlib.Path or None
        The output directory, when one was given.
    files : dict
        Output kind -> path of each file written.
    editing : dict or None
        With ``relaxation="editing"``: the cluster-editing bound and search
        (:func:`metricopt.pipeline._editing.editing_step`).
    """

    report: dict[str, Any]
    data: "Graph | Dissimilarity"
    problem: "MetricProblem"
    result: "SolveResult"
    rounding: "Rounding | None" = None
    out: Path | None = None
    editing: dict[str, Any] | None = None
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        """The report without the fields in :data:`~metricopt.io.reports.SUMMARY_OMIT`,
        as plain JSON types (:func:`~metricopt.io.reports.report_summary`)."""
        return report_summary(self.report)

    @property
    def interrupted(self) -> bool:
        """True when the solve was stopped by the user."""
        return self.result.get("status") == Status.INTERRUPTED

    def clusters_by_label(self):
        """The rounded answer as ``{node label: cluster}`` (``sc``: 1 for the side S).

        See :func:`metricopt.io.clusters_by_label`; raises for a run without rounding.
        """
        from ..io.exports import clusters_by_label

        return clusters_by_label(self.problem, self._rounding())

    def to_networkx(self, graph=None, attribute=None):
        """A networkx graph with the rounded answer as a node attribute.

        See :func:`metricopt.io.to_networkx` for ``graph`` and ``attribute``.
        """
        from ..io.exports import to_networkx

        return to_networkx(self.problem, self._rounding(), graph=graph, attribute=attribute)

    def _rounding(self):
        if self.rounding is None:
            raise InvalidParameterError("this run has no rounded answer (bounds only, metric "
                                        "nearness, or no solution)")
        return self.rounding


def _layout_for_method(kind, method, params):
    """``params`` with ``layout="dense"`` when the user named a backend without the
    support-sized layout and left the layout to ``auto`` (a user of ``--method highs-lazy``
    on a large graph gets the layout that backend solves)."""
    from ..solvers import get_solver

    if kind != "cc" or params.get("layout", "auto") != "auto" or method in (None, "auto"):
        return params
    try:
        solver = get_solver(method)
    except Exception:  # noqa: BLE001 - an unknown method is reported by the solve
        return params
    if "support" not in solver.structures:
        params["layout"] = "dense"
    return params


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
        Passed to :func:`metricopt.problems.build_problem`; ``relaxation="editing"``
        (``cc`` with unit weights, ``cd``) builds the full LP and adds the certified
        cluster-editing or cluster-deletion bound and search
        (:mod:`metricopt.pipeline._editing`; the report's ``editing``).
    solver_options : dict or None
        Passed to :func:`metricopt.solve`; only the options given here reach the backend.
    rounding : dict or None
        Keys ``method`` (default ``"auto"``), ``n_tries`` (default 20), ``seed``
        (default: the solver's ``seed`` option, else 0, so that the same call gives the
        same clustering; the report records it), ``refine`` (default ``"auto"``) and
        ``time_limit`` (seconds for the rounding and its refinement; default: the
        solver's ``time_limit`` option, else none; see
        :func:`metricopt.rounding.round_solution`). With ``method="leiden"`` the answer is
        Leiden's clustering and the LP roundings of ``"auto"`` run too, for comparison
        (``per_method`` in the report).
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
        loaded, before the solve clock starts), ``"round"`` (the rounding options),
        ``"editing"`` (a dict with the problem's ``kind``: the cluster-editing or
        cluster-deletion bound and search of ``relaxation="editing"``) and ``"write"``
        (the output directory).
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
    from ..io import read_input
    from ..problems import build_problem
    from ..solvers import applicable_options, resolve_method, solve

    start = time.perf_counter()
    stage = on_stage or (lambda name, info: None)
    solver_options = dict(solver_options or {})
    callback = solver_options.pop("callback", callback)
    round_opts = _rounding_options(rounding, solver_options)
    check_run_arguments(kind, method, solver_options,
                        None if bound_only else round_opts["method"],
                        problem_params=problem_params)
    _check_export(export, kind, bound_only)
    read_options = dict(read_options or {})
    out = _prepare_out(out)
    _check_destinations(export=export, checkpoint=solver_options.get("checkpoint"))
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
                params = _layout_for_method(kind, method, dict(problem_params or {}))
                editing = params.get("relaxation") == "editing"
                params = lp_params(params)  # the full LP; the editing step below
                problem = build_problem(kind, data, **params)
                stage("build", problem)
                choice = resolve_method(problem, method, solver_options)
                solver, reason = choice
                name = solver.name
                solver_options = applicable_options(solver, solver_options,
                                                    chosen_by_auto=reason is not None)
                stage("solve", {"method": name, "auto_reason": reason})
                accepts = "callback" in solver.default_options()
                try:
                    stage("compile", {"method": name})  # a signal from here on: a report
                    result = solve(problem, choice, callback=callback if accepts else None,
                                   **solver_options)
                except Exception as exc:
                    _reraise_unless_interrupt(exc)
                    result = _interrupted_result(name, solver_options, interrupt_cause(exc))
                except KeyboardInterrupt as exc:  # the warm-up, or a backend without a loop
                    result = _interrupted_result(name, solver_options, exc)
                if reason is not None:  # an interrupted result: solve() set it otherwise
                    result.setdefault("auto_reason", reason)
                rounded = None
                if _should_round(kind, result, bound_only):
                    stage("round", dict(round_opts))
                    try:
                        rounded = _round(problem, result.x, round_opts)
                    except Exception as exc:
                        _reraise_unless_interrupt(exc)
                        _mark_interrupted(result, interrupt_cause(exc), "during the rounding")
                    except KeyboardInterrupt as exc:  # the solve's answer is kept
                        _mark_interrupted(result, exc, "during the rounding")
                editing_out = None
                if editing and result.get("status") != Status.INTERRUPTED:
                    stage("editing", {"kind": kind})
                    try:
                        editing_out = editing_step(data, problem, rounded, seed=round_opts["seed"],
                                                   time_limit=solver_options.get("time_limit"))
                    except Exception as exc:
                        _reraise_unless_interrupt(exc)
                        _mark_interrupted(result, interrupt_cause(exc), "during the editing bound")
                    except KeyboardInterrupt as exc:  # the solve's and rounding's answers are kept
                        _mark_interrupted(result, exc, "during the editing bound")
        finally:
            for w in caught:  # recorded for the report, then passed on to the caller
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

        outcome = RunOutcome(report={}, data=data, problem=problem, result=result,
                             rounding=rounded, out=out, editing=editing_out)
        outcome.report = _build_report(outcome, source, read_options, solver, caught, command,
                                       round_opts)
        failed = [(Path(w.message.error.filename), w.message.error) for w in caught
                  if isinstance(w.message, CheckpointNotWritten)]  # (path, OSError)
        if out is not None:
            stage("write", out)
            remove_run_files(out)  # with force: no file of the earlier run stays
            outcome.files = _write_outputs(outcome, failed)
            outcome.report["files"] = {k: p.name for k, p in outcome.files.items()}
        if export is not None and rounded is not None:
            from ..io.exports import write_export

            stage("write", export)
            try:
                outcome.files["export"] = write_export(export, problem, rounded)
                outcome.report["files"]["export"] = str(export)
            except OSError as exc:
                failed.append((Path(export), exc))
        # a resumed run's solve seconds include the runs before (as its iterations.csv
        # does): so does its total
        outcome.report["total_seconds"] = time.perf_counter() - start + float(
            result.get("resumed_seconds") or 0.0)
        if out is not None:
            try:
                write_report_json(outcome.report, out / "report.json")
            except OSError as exc:
                failed.append((out / "report.json", exc))
                outcome.files.pop("report", None)
        if failed:
            raise _write_error(failed, outcome.files)
        return outcome


def check_run_arguments(kind, method, solver_options, round_method=None, *,
                        problem_params=None):
    """Check a run's arguments before any input is read.

    Parameters
    ----------
    kind : str
    method : str
        A registered backend or ``"auto"``.
    solver_options : dict
    round_method : str or None
        The rounding method, or ``None`` when nothing is rounded.
    problem_params : dict or None
        The problem builder's parameters (only ``relaxation`` and ``weights`` are
        checked here; the builder checks the rest).

    Raises
    ------
    InvalidParameterError
        An unknown problem kind or method, an option the explicitly chosen backend (or,
        for ``auto``, every backend) does not accept, an option value a backend refuses
        (:func:`metricopt.solvers.check_solver_options`; ``parameter`` names it), the
        open-wedge relaxation with weights or a method it does not go with, or a
        rounding method that does not apply to ``kind``.
    """
    from ..problems import BUILDERS
    from ..rounding import METHODS as ROUNDING_METHODS
    from ..solvers import check_solver_options

    if kind not in BUILDERS:
        raise InvalidParameterError(f"Unknown problem {kind!r}; choose one of: "
                                    f"{', '.join(BUILDERS)}")
    check_solver_options(method, solver_options)
    check_editing(kind, problem_params or {})
    _check_relaxation(kind, method, problem_params or {})
    if round_method is not None and kind != "mn":
        valid = ("auto", *ROUNDING_METHODS[kind])
        if str(round_method).lower() not in valid:
            raise InvalidParameterError(f"Rounding method {round_method!r} does not apply to "
                                        f"{kind}; choose one of: {', '.join(valid)}")
        if str(round_method).lower() == "leiden":
            from ..rounding.leiden import require_leiden

            require_leiden()


def _check_relaxation(kind, method, params):
    """The open-wedge relaxation is cc's, and needs 0/1 targets and a backend that takes
    its rows."""
    from .._choices import WEDGE_WEIGHTS
    from ..solvers import get_solver, registered_solvers

    if params.get("relaxation") != "wedges":
        return
    if kind != "cc":
        raise InvalidParameterError(
            f"relaxation='wedges' (the open-wedge LP) is cc's; {kind} has the relaxations "
            f"'full' and 'editing'", parameter="relaxation", value="wedges",
            requirement="used with cc")
    weights = params.get("weights", "auto")
    if weights not in WEDGE_WEIGHTS:
        raise InvalidParameterError(
            f"relaxation='wedges' (the open-wedge LP) needs weights "
            f"{' or '.join(map(repr, WEDGE_WEIGHTS))}, whose targets are 1 - adjacency; "
            f"got weights={weights!r}", parameter="relaxation", value="wedges",
            requirement=f"used with weights {' or '.join(map(repr, WEDGE_WEIGHTS))}")
    if method is not None and not (isinstance(method, str) and method.lower() == "auto"):
        solver = get_solver(method)
        if not solver.explicit_rows:
            takers = [n for n in registered_solvers() if get_solver(n).explicit_rows]
            raise InvalidParameterError(
                f"{solver.name} solves the full triangle family only; the open-wedge "
                f"relaxation (a given list of rows) needs method "
                f"{' or '.join(map(repr, takers))}", parameter="relaxation", value="wedges",
                requirement=f"used with method {' or '.join(map(repr, takers))}")


def _check_export(export, kind, bound_only):
    """An export file needs a rounded answer and a suffix that names its format."""
    if export is None:
        return
    from ..io.exports import EXPORT_FORMATS, export_format

    if bound_only or kind == "mn":
        what = "a bound-only run" if bound_only else "metric nearness"
        raise InvalidParameterError(f"export writes a clustering or cut; {what} has none")
    if export_format(export) is None:
        raise InvalidParameterError(
            f"cannot tell the export format of {str(export)!r}: use a name ending in "
            f"{' or '.join(EXPORT_FORMATS.values())} (optionally .gz)")


def _check_destinations(**paths):
    """Files a run will write (``export``, ``checkpoint``): their directory must exist
    and be writable, and the name must not be a directory; checked before the input is
    read, so that a long solve does not end in an error it could have had at once."""
    import os

    for what, path in paths.items():
        if path is None:
            continue
        path = Path(path)
        parent = path.parent
        if path.is_dir():
            raise InvalidParameterError(f"cannot write the {what} file {path}: it is a "
                                        f"directory")
        if not parent.is_dir():
            raise InvalidParameterError(f"cannot write the {what} file {path}: the directory "
                                        f"{parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidParameterError(f"cannot write the {what} file {path}: no permission "
                                        f"to write in {parent}")


def _reraise_unless_interrupt(exc):
    """Raise ``exc`` again unless it wraps a ``KeyboardInterrupt``."""
    if interrupt_cause(exc) is None:
        raise exc


def _interrupted_result(name, options, exc):
    """The result of a solve stopped before its loop began (while the kernels were being
    compiled, or in a backend that keeps no iterate): nothing to keep but the fact."""
    from ..result import SolveResult

    res = SolveResult(x=None, status=Status.INTERRUPTED, success=False, nit=0, history=[],
                      method=name, options={k: v for k, v in options.items() if k != "callback"})
    _mark_interrupted(res, exc, "before the solve had an iterate (while loading the kernels, "
                                "or in a backend that keeps none)")
    return res


def _mark_interrupted(result, exc, when):
    result["status"] = Status.INTERRUPTED
    result["status_name"] = Status.NAMES.get(Status.INTERRUPTED, "interrupted")
    result["success"] = False
    earlier = result.get("message")
    result["message"] = (f"interrupted by {interrupted_by(exc)} {when}"
                         + (f"; the solve had ended: {earlier}" if earlier else ""))


def _write_error(failed, written):
    """One ``OSError`` naming the first file that could not be written, and saying which
    were."""
    path, exc = failed[0]
    names = ", ".join(p.name for k, p in written.items() if k != "export")
    note = f" ({names} written)" if names else ""
    return OSError(exc.errno, f"{exc.strerror or exc}{note}", str(path))


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
    from ..rounding.refine import check_refine_method

    check_refine_method(opts["refine"])
    if opts.get("time_limit") is None:  # a time-limited run is time-limited throughout
        opts["time_limit"] = solver_options.get("time_limit")
    if opts.get("seed") is None:
        opts["seed"] = solver_options.get("seed")
    if opts["seed"] is None:  # the same command gives the same clusters
        opts["seed"] = 0
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


def _should_round(kind, result, bound_only):
    if bound_only or kind == "mn" or result.get("x") is None:
        return False
    return result.get("status") != Status.INTERRUPTED


def _round(problem, x, opts):
    from ..rounding import round_solution

    compare = "auto" if str(opts["method"]).lower() == "leiden" else None
    return round_solution(problem, x, method=opts["method"], n_tries=opts["n_tries"],
                          seed=opts["seed"], compare=compare, refine=opts["refine"],
                          time_limit=opts["time_limit"])


def _write_outputs(outcome, failed):
    """Write the run's files but ``report.json``; one that fails is appended to
    ``failed`` and the others are still written (the report, written last, lists them)."""
    out, problem, result, rounded = outcome.out, outcome.problem, outcome.result, outcome.rounding
    files = {}

    def attempt(key, name, write, *args):
        try:
            write(*args, out / name)
            files[key] = out / name
        except OSError as exc:
            failed.append((out / name, exc))

    attempt("iterations", "iterations.csv", write_iterations_csv, result.get("history", []))
    if rounded is not None and rounded.get("in_cut") is not None and problem.kind == "sc":
        attempt("cut", "cut.csv", write_cut_csv, problem.labels, rounded["in_cut"])
    elif rounded is not None:
        attempt("clusters", "clusters.csv", write_clusters_csv, problem.labels,
                rounded["labels"])
    if result.get("x") is not None:
        attempt("solution", "solution.npz", write_solution_npz, problem, result["x"])
    files["report"] = out / "report.json"
    return files
