"""Exact LP optima and dual certificates, the reference of the solve-contract tests.

An iterative backend's answer is judged against the exact optimum ``LP*`` of the same
problem (:func:`exact_lp`):

* ``LP*`` itself comes from ``metricopt.solve(problem, method="highs",
  lp_algorithm="simplex", tol=1e-9)``;
* ``dual_l1``, the l1 norm of an optimal dual of the constraints a returned ``x`` may
  violate (the metric rows, the sum row of sparsest cut, the bounds of the pair
  variables), comes from the same LP built here with ``highspy`` (the rows of
  :mod:`metricopt.solvers.core.lp_matrix`, the objective's linearisation rows left out).

Why the dual: a point ``x`` that violates no constraint by more than ``v`` is feasible
for the LP whose constraints are all loosened by ``v``. The original optimal dual is
feasible for that LP's dual, with objective ``LP* - v * dual_l1``, so by weak duality
``objective(x) >= LP* - v * dual_l1`` (:func:`below_optimum_slack`). The objective of
an almost feasible point can be below ``LP*``, but by no more than that. For sparse
(MET(G)) problems the full LP is the embedding in K_n: a point of the edges with cycle
violation ``v`` extends (shortest paths, capped at the upper bound) to a point of K_n
with triangle violation ``v``, so the same bound holds.

The bundled graphs' values (:data:`BUNDLED_EXACT`) were computed once by
:func:`compute_exact` (``python tests/exact_values.py`` prints the table again);
``tests/test_lp_contract.py`` recomputes the small ones and checks them against
:data:`problem_bank.BUNDLED_VALUES`. Random instances are computed on demand and cached
per key in :data:`CACHE`.
"""

from typing import NamedTuple

import numpy as np

__all__ = [
    "BUNDLED_EXACT",
    "CACHE",
    "ExactLP",
    "below_optimum_slack",
    "compute_exact",
    "exact_lp",
    "lp_with_duals",
    "relative",
]


class ExactLP(NamedTuple):
    """Exact optimum of one LP and the l1 norm of an optimal dual (see the module doc)."""

    value: float
    dual_l1: float
    source: str


#: (problem, graph) -> ExactLP, problems as in :func:`problem_bank.bundled_problem`
#: ("cc-jaccard", "cc-unit", "sc", "cd", "mn1-jaccard"). ``value``: ``metricopt.solve``
#: with HiGHS's dual simplex, tol 1e-9 (interior point with crossover for sparsest cut on
#: football, ``source`` says so); ``dual_l1``: the dual of the same LP built by
#: :func:`lp_with_duals` (its value agrees with ``value`` to 1e-9 relative).
BUNDLED_EXACT = {
    # `python tests/exact_values.py` (seconds: both exact solves, 2-core machine)
    ('cc-jaccard', 'karate'): ExactLP(21.670386596299302, 145.1261058016965, 'highs simplex'),  # 0.5 s
    ('cc-unit', 'karate'): ExactLP(38.5, 484.0, 'highs simplex'),  # 0.1 s
    ('sc', 'karate'): ExactLP(0.9379310344827587, 62.551724137931046, 'highs simplex'),  # 0.8 s
    ('cd', 'karate'): ExactLP(39.0, 39.0, 'highs simplex'),  # 0.1 s
    ('mn1-jaccard', 'karate'): ExactLP(21.670386596299792, 141.55352750298528, 'highs simplex'),  # 0.3 s
    ('cc-jaccard', 'dolphins'): ExactLP(42.73374279068539, 200.51317632351507, 'highs simplex'),  # 5.7 s
    ('cc-unit', 'dolphins'): ExactLP(79.5, 1732.0, 'highs simplex'),  # 0.7 s
    ('sc', 'dolphins'): ExactLP(0.4320557491289199, 145.82926829268294, 'highs simplex'),  # 55.9 s
    ('cd', 'dolphins'): ExactLP(79.5, 79.5, 'highs simplex'),  # 0.0 s
    ('mn1-jaccard', 'dolphins'): ExactLP(42.73374279069032, 97.71658690184478, 'highs simplex'),  # 7.8 s
    ('cc-jaccard', 'lesmis'): ExactLP(60.18450410835044, 545.3610839409315, 'highs simplex'),  # 9.4 s
    ('cc-unit', 'lesmis'): ExactLP(91.5, 2743.0, 'highs simplex'),  # 1.0 s
    ('sc', 'lesmis'): ExactLP(0.34477611940298486, 240.90298507462686, 'highs simplex'),  # 195.8 s
    ('cd', 'lesmis'): ExactLP(104.0, 150.0, 'highs simplex'),  # 0.0 s
    ('mn1-jaccard', 'lesmis'): ExactLP(60.18450410835058, 414.8387606342207, 'highs simplex'),  # 28.0 s
    ('cc-jaccard', 'football'): ExactLP(81.21313579170123, 699.2657020875987, 'highs simplex'),  # 74.1 s
    ('cc-unit', 'football'): ExactLP(273.00000000008095, 6009.0, 'highs simplex'),  # 7.8 s
    ('sc', 'football'): ExactLP(2.1174603174603677, 492.3231746031744, 'highs ipm'),  # 234.6 s
    ('cd', 'football'): ExactLP(294.0, 319.0, 'highs simplex'),  # 0.1 s
    ('mn1-jaccard', 'football'): ExactLP(81.21313579175852, 351.7707348123282, 'highs simplex'),  # 209.2 s
}

#: key -> ExactLP of the instances computed during a test run.
CACHE = {}


def relative(a, b):
    """``(a - b) / max(|b|, 1e-300)``: the signed error of ``a`` relative to ``b``."""
    return (a - b) / max(abs(b), 1e-300)


def below_optimum_slack(exact, violation):
    """How far below ``exact.value`` the objective of a point violating by ``violation``
    can be (weak duality, see the module docstring), with room for rounding."""
    return max(violation, 0.0) * exact.dual_l1 * (1 + 1e-6) + 1e-9 * max(abs(exact.value), 1.0)


def lp_with_duals(problem, lp_algorithm="simplex", tol=1e-9):
    """Solve the full LP of ``problem`` with ``highspy``; return ``(value, dual_l1)``.

    ``dual_l1`` sums the absolute row duals of the metric rows and the sum row and the
    absolute reduced costs of the pair columns (not those of the auxiliary columns and
    rows of an l1 objective, which a point with ``t = |x - d|`` meets exactly).

    Parameters
    ----------
    problem : MetricProblem
        An LP (objective ``linear`` or ``l1``).
    lp_algorithm : {"simplex", "ipm"}
    tol : float
        HiGHS's primal and dual feasibility tolerance.

    Returns
    -------
    value : float
    dual_l1 : float
    """
    import highspy

    from metricopt._stdout import native_stdout_to_stderr
    from metricopt.problems import n_pairs
    from metricopt.solvers.core import lp_matrix as lpm

    if problem.objective == "l2":
        raise ValueError("lp_with_duals: the problem is a QP")
    if problem.structure == "sparse":
        x_columns = lpm.embedding_columns(problem)
        n_x = n_pairs(problem.n)
    else:
        x_columns = np.arange(problem.n_variables, dtype=np.int64)
        n_x = problem.n_variables
    obj = lpm.objective_model(problem, x_columns, n_x)
    with native_stdout_to_stderr(discard=True):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", lp_algorithm)
    h.setOptionValue("primal_feasibility_tolerance", tol)
    h.setOptionValue("dual_feasibility_tolerance", tol)
    h.setOptionValue("ipm_optimality_tolerance", min(tol, 1e-8))
    empty_i, empty_f = np.zeros(0, np.int32), np.zeros(0)
    h.addCols(obj.cost.size, obj.cost, obj.lower, obj.upper, 0, empty_i, empty_i, empty_f)
    h.changeObjectiveOffset(float(obj.offset))

    def add(block):
        if block is not None and block.n_rows:
            h.addRows(block.n_rows, block.lower, block.upper, block.n_nonzeros, block.starts,
                      block.index, block.value)

    add(obj.rows)
    skip = 0 if obj.rows is None else obj.rows.n_rows
    if problem.sum_value is not None:
        add(lpm.sum_row(x_columns, problem.sum_value))
    blocks = (lpm.edge_family_blocks(problem) if problem.structure == "edges"
              else lpm.dense_triangle_blocks(problem.n))
    for block in blocks:
        add(block)
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"lp_with_duals: HiGHS returned {h.modelStatusToString(status)}")
    sol = h.getSolution()
    row_dual = np.asarray(sol.row_dual, dtype=np.float64)
    col_dual = np.asarray(sol.col_dual, dtype=np.float64)
    dual_l1 = float(np.abs(row_dual[skip:]).sum() + np.abs(col_dual[:n_x]).sum())
    return float(h.getInfo().objective_function_value), dual_l1


def compute_exact(problem, lp_algorithm="simplex"):
    """:class:`ExactLP` of ``problem``: the value from ``metricopt.solve`` (HiGHS,
    ``lp_algorithm``, tol 1e-9), the dual norm from :func:`lp_with_duals`."""
    import metricopt

    res = metricopt.solve(problem, method="highs", lp_algorithm=lp_algorithm, tol=1e-9)
    if res.status_name != "optimal":
        raise RuntimeError(f"exact LP not solved: {res.status_name}: {res.message}")
    value, dual_l1 = lp_with_duals(problem, lp_algorithm=lp_algorithm)
    if not abs(value - res.fun) <= 1e-7 * max(abs(res.fun), 1.0):
        raise RuntimeError(f"the two exact solves disagree: {res.fun!r} and {value!r}")
    return ExactLP(float(res.fun), dual_l1, f"highs {lp_algorithm}")


def exact_lp(problem, key):
    """:class:`ExactLP` of ``problem``, cached under ``key`` (a hashable naming the
    instance); a bundled-graph key ``(problem, graph)`` is looked up in
    :data:`BUNDLED_EXACT` first."""
    if key in BUNDLED_EXACT:
        return BUNDLED_EXACT[key]
    if key not in CACHE:
        CACHE[key] = compute_exact(problem)
    return CACHE[key]


#: LPs whose exact solve uses the interior-point method (the dual simplex takes many
#: minutes on them; crossover still gives a vertex and its duals).
IPM_CASES = {("sc", "football")}


def _main():
    import sys
    import time
    import warnings

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from problem_bank import BUNDLED_GRAPHS, bundled_problem

    warnings.simplefilter("ignore")
    problems = ("cc-jaccard", "cc-unit", "sc", "cd", "mn1-jaccard")
    only = sys.argv[1:]
    print("BUNDLED_EXACT = {")
    for graph in BUNDLED_GRAPHS:
        for prob in problems:
            if only and f"{prob}:{graph}" not in only:
                continue
            t = time.perf_counter()
            algo = "ipm" if (prob, graph) in IPM_CASES else "simplex"
            ex = compute_exact(bundled_problem(prob, graph), lp_algorithm=algo)
            print(f"    ({prob!r}, {graph!r}): ExactLP({ex.value!r}, {ex.dual_l1!r}, "
                  f"{ex.source!r}),  # {time.perf_counter() - t:.1f} s", flush=True)
    print("}")


if __name__ == "__main__":
    _main()

