"""``metricopt info`` and ``metricopt solvers``: sizes, memory and the backends' options."""

from ..io.reports import to_jsonable
from ._common import _graph_section, problem_parameters

__all__ = ["describe", "solver_table", "option_help"]


def _load_solver(name):
    from ..solvers import get_solver

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

    from .._docstrings import first_sentence, parameter_docs, referenced_functions

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
    from ..solvers import registered_solvers

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
