"""``metricopt info`` and ``metricopt solvers``: sizes, memory and the backends' options."""

from ..io.reports import to_jsonable
from ._common import _graph_section, problem_parameters
from ._editing import lp_params

__all__ = ["describe", "solver_table", "option_help"]


def _load_solver(name):
    from ..solvers import get_solver

    try:
        return get_solver(name), None
    except ImportError as exc:
        return None, f"cannot be imported ({exc})"


def option_help(solver):
    """One line about each option of a backend, from its declarations
    (:attr:`~metricopt.solvers.Solver.options`, :mod:`metricopt.solvers.core.options`).

    Parameters
    ----------
    solver : Solver

    Returns
    -------
    dict
        Option name -> its one-line description, hidden options (``callback``) left out.
    """
    return {o.name: o.doc for o in solver.options if not o.hidden}


def option_values(solver):
    """What each option of a backend accepts, in words (``"a float > 0"``), hidden
    options left out."""
    return {o.name: o.requirement for o in solver.options if not o.hidden}


def solver_table():
    """Describe every registered backend, in preference order.

    Returns
    -------
    list of dict
        ``name``, ``available``, ``exact``, ``description``, ``structures``,
        ``objectives``, ``options`` (name -> default), ``option_help`` (name -> one
        line, see :func:`option_help`) and ``option_values`` (name -> what it accepts),
        all from the backend's declarations.
    """
    from ..solvers import registered_solvers

    rows = []
    for name in registered_solvers():
        solver, error = _load_solver(name)
        if solver is None:
            rows.append({"name": name, "available": False, "exact": None,
                         "description": error, "structures": [], "objectives": [], "options": {},
                         "option_help": {}, "option_values": {}})
            continue
        hidden = {o.name for o in solver.options if o.hidden}
        options = {k: v for k, v in solver.default_options().items() if k not in hidden}
        rows.append({
            "name": name,
            "available": bool(solver.is_available()),
            "exact": bool(solver.exact),
            "description": solver.description,
            "structures": list(solver.structures),
            "objectives": list(solver.objectives),
            "options": to_jsonable(options),
            "option_help": option_help(solver),
            "option_values": option_values(solver),
        })
    return rows


def _backend_rows(problem, budget):
    from ..solvers import registered_solvers

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


def _problem_entry(kind, problem, budget):
    return {
        "kind": kind,
        "structure": problem.structure,
        "objective": problem.objective,
        "params": dict(problem.params),
        "n_variables": problem.n_variables,
        "n_constraints": problem.n_constraints,
        "constraint_families": problem.constraint_families(),
        "backends": _backend_rows(problem, budget),
    }


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
        dict per kind with ``kind``,
        ``structure``, ``objective``, ``n_variables``, ``n_constraints``,
        ``constraint_families`` and ``backends`` (method, available, supported, reason,
        memory_bytes, fits), and for a dense ``cc`` whose support-sized layout applies,
        ``other_layout``: the same for that layout (``n_variables``: its explicit
        pairs); or ``kind`` and ``error`` when the problem cannot be built for this input.
    """
    from .._memory import available_memory
    from ..exceptions import MetricOptError
    from ..io import read_graph
    from ..problems import BUILDERS, build_problem

    data = read_graph(source, **dict(read_options or {}))
    budget = available_memory() if max_memory is None else int(max_memory)
    params = dict(problem_params or {})
    problems = []
    for kind in kinds or list(BUILDERS):
        accepted = problem_parameters(kind)
        kw = lp_params({k: v for k, v in params.items() if k in accepted})
        if max_memory is not None and "max_memory" in accepted:
            kw["max_memory"] = int(max_memory)
        try:
            problem = build_problem(kind, data, **kw)
        except MetricOptError as exc:
            problems.append({"kind": kind, "error": str(exc)})
            continue
        entry = _problem_entry(kind, problem, budget)
        if kind == "cc" and "layout" not in kw and problem.structure == "dense":
            # the support-sized layout too, when it applies: the user may pick it
            try:
                other = build_problem(kind, data, **kw, layout="support")
            except MetricOptError:
                other = None
            if other is not None:
                entry["other_layout"] = _problem_entry(kind, other, budget)
        problems.append(entry)
    graph = _graph_section(data, source, dict(read_options or {}))
    return to_jsonable({"graph": graph, "memory_budget": budget, "problems": problems})
