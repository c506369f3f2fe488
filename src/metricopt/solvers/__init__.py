"""One dispatcher, one result type, a registry of backends in preference order.

>>> import metricopt
>>> g = metricopt.read_graph("karate")
>>> res = metricopt.solve(metricopt.build_problem("cc", g, weights="unit"), method="highs")
>>> round(res.fun, 6)
38.5
"""

import importlib
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..exceptions import (
    InvalidParameterError,
    MetricOptWarning,
    SolverNotAvailableError,
    UnsupportedProblemError,
)
from ..result import STATUS_MESSAGES, SolveResult, Status
from ._base import Solver, set_registry
from .core.loop import finish_allowance
from .core.result import complete

if TYPE_CHECKING:
    from ..problems import MetricProblem

__all__ = ["solve", "resolve_method", "MethodChoice", "get_solver", "available_solvers",
           "registered_solvers", "choose_method", "applicable_options", "check_option_values",
           "check_solver_options", "declared_options", "solver_option_names", "Solver", "SOLVER_SPECS"]

#: Backends in preference order: name -> (module, class). Imported on first use so that
#: listing the solvers does not import numba kernels or native libraries.
SOLVER_SPECS = {
    "highs": ("metricopt.solvers.highs", "HighsSolver"),
    "highs-lazy": ("metricopt.solvers.highs_lazy", "HighsLazySolver"),
    "dykstra": ("metricopt.solvers.dykstra", "DykstraSolver"),
    "project-forget": ("metricopt.solvers.project_forget", "ProjectForgetSolver"),
    "lighttouch": ("metricopt.solvers.lighttouch", "LightTouchSolver"),
}

_INSTANCES: dict[str, Solver] = {}


def registered_solvers():
    """Names of every registered backend, in preference order."""
    return list(SOLVER_SPECS)


def get_solver(method):
    """The :class:`Solver` registered under ``method`` (case-insensitive), or an instance."""
    if isinstance(method, Solver):
        return method
    if not isinstance(method, str):
        raise InvalidParameterError(
            f"The 'method' parameter of solve must be a str among {registered_solvers()} or a Solver. "
            f"Got {method!r} instead."
        )
    name = method.lower()
    if name not in SOLVER_SPECS:
        raise InvalidParameterError(
            f"Unknown method {method!r}; choose one of: auto, {', '.join(SOLVER_SPECS)}"
        )
    if name not in _INSTANCES:
        module, cls = SOLVER_SPECS[name]
        _INSTANCES[name] = getattr(importlib.import_module(module), cls)()
    return _INSTANCES[name]


set_registry(get_solver)


def available_solvers():
    """Names of the registered backends whose dependencies are installed."""
    return [name for name in SOLVER_SPECS if get_solver(name).is_available()]


#: Largest constraint matrix (rows) for which ``auto`` prefers the exact LP. Measured on
#: 2 threads (benchmarks/README.md): dykstra with its LP polish reaches the certified
#: LP optimum of Jaccard cc on lesmis (219k rows) in 0.5 s and football (741k) in 0.7 s,
#: where HiGHS takes 4.7 s and 19.6 s (simplex) or 2.7 s and 23 s (PDLP); on karate
#: (18k rows) both take well under 0.1 s and the exact LP needs no compiled kernels.
EXACT_ROW_LIMIT = 20_000

#: The open-wedge relaxation goes to ``highs-lazy`` (the most violated row per pair each
#: round) above this many rows per pair they touch, else to ``highs`` (all rows at once).
#: Measured in one run of benchmarks/bench_wedges.py (a loaded 2-core machine), highs /
#: highs-lazy seconds: ca-GrQc (1.1 rows per pair) 5.4 / 14.8, ca-HepTh (1.1) 14.9 / 26.7,
#: SmaGri (1.4) 2.3 / 2.9, Roget (1.1) 0.41 / 0.46, polblogs (3.5) 428 / 102.
LAZY_ROWS_PER_PAIR = 2.0

#: Cluster deletion goes to ``highs-lazy`` from this many edges (its variables) when the
#: first round fits in memory: its rows are a scan of the triangle and wedge family, and
#: HiGHS's dual simplex method, warm-started round after round, reaches the exact LP
#: where dykstra's violation decays slowly. Measured (2 threads, time limit 120 s),
#: dykstra / highs-lazy seconds: jazz (2,742 edges) 0.67 / 1.03, power (6,594) 0.09 /
#: 0.19, ca-GrQc (13,422) 35.7 / 1.1, ca-HepTh (24,806) 0.91 / 3.3, a generated
#: community graph (25,389) 1.6 / 3.8, another (~76,000) 254 / 15, ca-CondMat (91,286)
#: not in 120 / 51, a 91,319-node one (253,912) not in 600 / 194 (one thread). Dense
#: graphs stay with dykstra (:data:`CD_LAZY_ROWS_PER_EDGE`).
CD_LAZY_EDGES = 10_000
#: ... unless they have more triangle and wedge rows than this per edge: the first round
#: adds every open wedge, and Vassar85 (121 rows per edge; 119,161 edges) needs about
#: 20 GiB there, where dykstra takes 6.6 s. The sparse graphs above have 3-22 (com-Amazon
#: about 27).
CD_LAZY_ROWS_PER_EDGE = 40

#: HiGHS's QP solver fails on the full metric-nearness QP from about n = 30 (it reports
#: non-convexity), so ``auto`` only hands it QPs below this size.
EXACT_QP_NODES = 20


def choose_method(problem, *, max_memory=None):
    """Pick a backend for ``problem`` from its size and structure, and say why.

    Rules, in order: a problem given by its rows (the open-wedge relaxation) goes to
    ``highs``, which adds them all at once, unless they number more than
    :data:`LAZY_ROWS_PER_PAIR` per pair they touch (then ``highs-lazy``); small LPs (at
    most :data:`EXACT_ROW_LIMIT` constraint rows; a MET(G) problem counts the rows of
    its embedding in K_n, which ``highs`` solves, so up to 34 nodes) and tiny
    QPs go to the exact ``highs`` backend when its memory estimate fits; MET(G) problems
    (cycle inequalities) go to ``project-forget``, whose memory is linear in the edges;
    unit-weight correlation clustering too large for dykstra's dense triangle duals goes
    to ``highs-lazy`` (:func:`_cluster_editing`), and so does cluster deletion from
    :data:`CD_LAZY_EDGES` edges when its first round fits and it has at most
    :data:`CD_LAZY_ROWS_PER_EDGE` rows per edge; other dense LPs that large go to
    ``project-forget`` too (its passes visit only the remembered constraints; a sparse-dual
    dykstra pass over 1.2e10 triplets on ca-GrQc takes about 30 s); other problems go to
    ``dykstra`` when its estimate fits, else to ``project-forget``.

    ``lighttouch`` is never chosen: to a certified LP gap of 1e-4 it was slower than the
    best backend on every benchmark case (Jaccard cc football 4.3 s against dykstra's
    0.25 s, netscience 8.5 s against project-forget's 2.1 s, jazz not in 60 s; mn with
    p = 2, n = 500, 17.7 s against 3.0 s), its warm start helped only on netscience, and
    its early answers violate by 0.03-1.05 (benchmarks/README.md, "LightTouch").

    Returns
    -------
    method : str
    reason : str
    """
    from .._memory import available_memory, format_bytes

    budget = available_memory() if max_memory is None else max_memory
    if getattr(problem, "rows", None) is not None:
        need = get_solver("highs").estimate_memory(problem)
        n_rows = len(problem.rows)
        touched = int(np.unique(problem.rows).size) if n_rows else 0
        if n_rows > LAZY_ROWS_PER_PAIR * touched:
            return "highs-lazy", (
                f"the open-wedge relaxation: {n_rows:,} rows on {touched:,} pairs, so the most "
                f"violated row per pair each round (about {format_bytes(need)} at most)")
        return "highs", (f"the open-wedge relaxation: its {n_rows:,} rows on {touched:,} pairs "
                         f"in one HiGHS model (about {format_bytes(need)})")
    if problem.structure == "support":
        need = get_solver("project-forget").estimate_memory(problem)
        return "project-forget", (
            f"the support-sized layout on {problem.n:,} nodes: the support scan and an active "
            f"list, pairs stored only where x leaves 1 (about {format_bytes(need)})")
    ncons = problem.n_constraints
    what = "constraints"
    if ncons is None and problem.structure == "sparse":
        # highs solves MET(G) as the same LP on K_n: as small as a dense one of that size
        from .core.lp_matrix import model_size

        ncons = model_size(problem)["rows"]
        what = f"triangle rows of MET(G) embedded in K_{problem.n}"
    small_qp = not problem.is_qp or problem.n <= EXACT_QP_NODES
    if ncons is not None and ncons <= EXACT_ROW_LIMIT and small_qp:
        need = get_solver("highs").estimate_memory(problem)
        if need is not None and need <= budget:
            return "highs", (f"{ncons} {what}: small enough for the exact LP "
                             f"(about {format_bytes(need)})")
    if problem.kind == "cd" and CD_LAZY_EDGES <= problem.n_variables and \
            problem.n_constraints <= CD_LAZY_ROWS_PER_EDGE * problem.n_variables:
        lazy = get_solver("highs-lazy").estimate_memory(problem)
        if lazy is not None and lazy <= budget:
            return "highs-lazy", (
                f"cluster deletion on {problem.n_variables:,} edges: the exact LP with the "
                f"violated triangle and wedge rows added round by round (about "
                f"{format_bytes(lazy)} to start)")
    if problem.structure == "sparse":
        return "project-forget", ("cycle inequalities of MET(G): shortest-path separation with "
                                  "an active list, memory linear in the number of edges")
    if problem.structure == "dense" and problem.objective != "l2":
        from .core.memory import dense_duals_fit

        if not dense_duals_fit(problem.n) and _cluster_editing(problem):
            lazy = get_solver("highs-lazy").estimate_memory(problem)
            if lazy is not None and lazy <= budget:
                return "highs-lazy", (
                    f"unit-weight correlation clustering on {problem.n} nodes: the exact LP "
                    f"from the open wedges, columns only for the pairs its rows touch "
                    f"(about {format_bytes(lazy)} to start)")
        if not dense_duals_fit(problem.n):
            return "project-forget", (
                f"{problem.n} nodes: too many for dykstra's dense triangle duals, so only the "
                f"violated constraints are kept (a full dykstra pass would visit "
                f"{problem.n * (problem.n - 1) * (problem.n - 2) // 6:,} triplets)")
    need = get_solver("dykstra").estimate_memory(problem)
    if need is not None and need <= budget:
        what = "constraints" if ncons is not None else "constraint family"
        polish = " with the LP polish" if problem.objective != "l2" else ""
        return "dykstra", (f"{ncons if ncons is not None else 'cycle'} {what}: cyclic projections"
                           f"{polish} fit in memory (about {format_bytes(need)})")
    return "project-forget", (f"dykstra would need about {format_bytes(need)} of "
                              f"{format_bytes(budget)}; only violated constraints are kept")


def _cluster_editing(problem):
    """Unit-weight correlation clustering (cluster editing): one weight, 0/1 targets.

    Its LP is nearly integral and HiGHS's dual simplex method, warm-started round after
    round from the open wedges, solves it exactly in seconds at sizes where the projection
    methods take minutes (``highs-lazy``: ca-GrQc, n = 4,158, 8.3 s; ca-HepTh, 8,638,
    24 s); on small graphs dykstra is faster (jazz: 1.8 s against 14 s).
    """
    if problem.kind != "cc" or problem.objective != "l1" or problem.weights is None:
        return False
    w = np.asarray(problem.weights)
    d = np.asarray(problem.target)
    return bool(w.size and np.all(w == w[0]) and np.all((d == 0.0) | (d == 1.0)))


def _is_auto(method):
    return method is None or (isinstance(method, str) and method.lower() == "auto")


def declared_options(method=None):
    """The declarations of the options the command line and manifests may give.

    Parameters
    ----------
    method : str, Solver or None
        A backend: its options; ``None`` or ``"auto"``: every backend's, each name with
        the declaration of the first backend (in preference order) that has it.

    Returns
    -------
    dict
        Option name -> :class:`~metricopt.solvers.core.options.Option`, hidden ones
        (``callback``) left out.
    """
    solvers = [get_solver(name) for name in SOLVER_SPECS] if _is_auto(method) \
        else [get_solver(method)]
    found = {}
    for solver in solvers:
        for option in solver.options:
            if not option.hidden:
                found.setdefault(option.name, option)
    return found


def solver_option_names():
    """Every option name some registered backend accepts (hidden ones, such as
    ``callback``, excluded)."""
    return set(declared_options())


def check_option_values(method, options):
    """Check the values of ``options`` for ``method`` before any input is read.

    An explicit backend checks them all (:meth:`Solver.check_options`). For ``"auto"``
    each option is checked by every backend that accepts it, since ``auto`` may pick any
    of them; names no backend accepts are left to :func:`applicable_options`.

    Parameters
    ----------
    method : str, Solver or None
    options : dict

    Raises
    ------
    InvalidParameterError
        Its ``parameter`` names the first option whose value is refused.
    """
    options = {k: v for k, v in options.items() if k != "callback"}
    if not _is_auto(method):
        get_solver(method).check_options(options)
        return
    for name, value in options.items():
        for backend in SOLVER_SPECS:
            solver = get_solver(backend)
            if name not in solver.default_options():
                continue
            try:
                solver.check_options({name: value})
            except InvalidParameterError as exc:
                if exc.parameter is None:
                    raise
                raise InvalidParameterError(
                    f"{exc} (with method 'auto', every method that takes {name!r} must "
                    f"accept its value)", parameter=exc.parameter, value=exc.value,
                    requirement=f"{exc.requirement} (for method {solver.name!r})") from None


def applicable_options(solver, options, *, chosen_by_auto=False):
    """The options ``solver`` accepts, checked.

    With an explicitly chosen backend an option it does not accept is an error. When
    ``auto`` chose it, an option that only other backends accept (a gap tolerance for the
    exact LP, a checkpoint for a direct solver) is dropped with a
    :class:`~metricopt.exceptions.MetricOptWarning`, so that the common options work
    whichever backend ``auto`` picks; a name no backend accepts is still an error.

    Parameters
    ----------
    solver : Solver
    options : dict
    chosen_by_auto : bool, default=False

    Returns
    -------
    dict
    """
    accepted = solver.default_options()
    unknown = sorted(set(options) - set(accepted))
    if unknown and chosen_by_auto:
        nowhere = sorted(set(unknown) - solver_option_names())
        if not nowhere:
            for key in unknown:
                warnings.warn(f"option {key!r} does not apply to method {solver.name!r}, "
                              f"which auto chose; ignored", MetricOptWarning, stacklevel=3)
            return {k: v for k, v in options.items() if k in accepted}
        unknown = nowhere
    if unknown:
        raise InvalidParameterError(
            f"Unknown option(s) for method {solver.name!r}: {', '.join(unknown)}. "
            f"Valid options: {', '.join(sorted(k for k in accepted if k != 'callback'))}"
        )
    return dict(options)


def check_solver_options(method, options):
    """Check the names and values of ``options`` for ``method`` before any input is read.

    An explicit backend must accept every name (:func:`applicable_options`); with
    ``"auto"`` each must be an option of some backend. The values are checked by
    :func:`check_option_values`.

    Raises
    ------
    InvalidParameterError
    """
    if _is_auto(method):
        unknown = sorted(set(options) - solver_option_names() - {"callback"})
        if unknown:
            raise InvalidParameterError(f"Unknown option(s) for every method: "
                                        f"{', '.join(unknown)}")
    else:
        applicable_options(get_solver(method), options)
    check_option_values(method, options)


class MethodChoice(tuple):
    """``(solver, reason)``: the backend :func:`resolve_method` chose and why (``reason``
    None for a backend named by the caller). Passed as ``method`` to :func:`solve`, it is
    used as is, so that a caller that announces the choice first (the pipeline's
    progress) does not choose again."""

    __slots__ = ()

    def __new__(cls, solver, reason):
        return super().__new__(cls, (solver, reason))


def resolve_method(problem, method, options=None):
    """The backend that solves ``problem`` for ``method``, and why.

    Parameters
    ----------
    problem : MetricProblem
    method : str, Solver, MethodChoice or None
        A registered name, ``"auto"`` / None (:func:`choose_method`), a backend, or an
        earlier choice.
    options : dict or None
        The run's options (``max_memory`` bounds the choice).

    Returns
    -------
    MethodChoice
    """
    if isinstance(method, MethodChoice):
        return method
    reason = None
    if method is None or (isinstance(method, str) and method.lower() == "auto"):
        method, reason = choose_method(problem, max_memory=(options or {}).get("max_memory"))
    return MethodChoice(get_solver(method), reason)


def solve(problem: "MetricProblem", method: "str | Solver | None" = None, *,
          callback: "Callable[[dict[str, Any]], object] | None" = None, warm_up: bool = True,
          **options: Any) -> SolveResult:
    """Solve a metric-constrained relaxation.

    Parameters
    ----------
    problem : MetricProblem
        From :func:`metricopt.build_problem`.
    method : str, Solver, MethodChoice or None
        A registered backend (see :func:`registered_solvers`), ``"auto"``/``None`` to pick
        one from the problem's size and structure (the reason is the result's
        ``auto_reason``), a :class:`Solver` instance, or a choice made earlier by
        :func:`resolve_method`.
    callback : callable or None
        Called with each iteration record (a dict) as the backend progresses. The
        iterative backends also call it when an LP polish starts and when each of its
        rounds ends: those records have ``stage="polish"``, ``polish_round`` (0 at the
        start), ``rows``, ``gamma``, ``iteration`` and ``seconds``, and after a round
        ``lp_value`` (the round's LP optimum, a certified lower bound) and
        ``max_violation``; they are not iterations (``history`` leaves them out).
    warm_up : bool, default=True
        Compile (or load from numba's cache) the backend's kernels on a six-node
        instance of the same form before the clock starts (:mod:`._warmup`), so that
        ``elapsed`` and the iteration records measure the solve alone; the time spent
        is ``compile_seconds``.
    **options
        Backend options. Unknown names raise :class:`InvalidParameterError`; with
        ``"auto"``, options that only other backends accept are dropped with a warning
        (see :func:`applicable_options`).

    Returns
    -------
    SolveResult
    """
    from ..problems._checks import check_problem

    check_problem(problem, "solve")
    solver, reason = resolve_method(problem, method, options)
    if not solver.is_available():
        mods = ", ".join(solver.REQUIRED_MODULES)
        raise SolverNotAvailableError(
            f"method {solver.name!r} needs {mods}; install it with: pip install {mods}"
        )
    ok, why = solver.supports(problem)
    if not ok:
        raise UnsupportedProblemError(why)

    accepted = solver.default_options()
    options = applicable_options(solver, options, chosen_by_auto=reason is not None)
    if "callback" in accepted:
        options["callback"] = callback
    elif callback is not None:
        warnings.warn(f"method {solver.name!r} ignores the progress callback", MetricOptWarning, stacklevel=2)

    compile_seconds = 0.0
    if warm_up:
        from ._warmup import warm_up as _warm_up

        compile_seconds = _warm_up(solver, problem, options)
    earlier = []
    if options.get("resume") is not None:  # read now: the run may overwrite the file
        from ._checkpoint import read_history

        earlier = read_history(options["resume"])
    start = time.perf_counter()
    raw = solver.run(problem, **options)
    elapsed = time.perf_counter() - start

    merged = {k: v for k, v in accepted.items() if k != "callback"}
    merged.update({k: v for k, v in options.items() if k != "callback"})
    res = SolveResult()
    res.update(raw)
    res.setdefault("status", Status.OPTIMAL)
    res.setdefault("message", STATUS_MESSAGES.get(res["status"], ""))
    # the objective, the settled bound, the gap and the optimal decision: once, here
    # the backend's effective tol where it resolves a default (HiGHS: per algorithm)
    complete(problem, res, backend=solver.name, tol=res.get("tol", merged.get("tol")),
             gap_tol=merged.get("gap_tol"), stacklevel=3)
    res["success"] = res["status"] == Status.OPTIMAL
    res["status_name"] = Status.NAMES.get(res["status"], str(res["status"]))
    res["method"] = solver.name
    res.setdefault("elapsed", elapsed)
    res["compile_seconds"] = compile_seconds
    if options.get("resume") is not None:
        # a resumed backend's clock (elapsed, the records' seconds) continues the
        # interrupted run's: the seconds spent before this call
        res["resumed_seconds"] = max(0.0, float(res["elapsed"]) - elapsed)
    res.setdefault("history", [])
    if earlier:  # a resumed run's records continue the interrupted one's
        res["history"] = earlier + res["history"]
    res.setdefault("nit", len(res["history"]))
    res["options"] = merged
    if reason is not None:
        res["auto_reason"] = reason
    _note_overrun(res, options.get("time_limit"), elapsed)
    return res


def _note_overrun(res, time_limit, elapsed):
    """Say in the result when a run ended more than :func:`finish_allowance` seconds
    past ``time_limit`` (``time_overrun``, seconds, and a note in the message)."""
    if time_limit is None:
        return
    over = float(elapsed) - float(time_limit)
    res["time_overrun"] = max(over, 0.0)
    if over > finish_allowance(time_limit):
        res["message"] = (f"{res.get('message', '')} (ended {over:.1f} s past the time limit "
                          f"of {float(time_limit):g} s: a pass, an external solver call or "
                          f"the certificate in progress was finished)")


# keep numpy referenced for doctest namespaces
_ = np
