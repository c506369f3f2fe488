"""The jobs behind the commands: run, evaluate, describe.

:func:`run` (``_run``) is what ``metricopt solve`` and ``metricopt bound`` call, and what
batch runs call once per instance: read a graph, build a relaxation, solve it, round it,
report, write. :func:`evaluate_file` (``_evaluate``) backs ``metricopt evaluate``;
:func:`describe`, :func:`solver_table` and :func:`option_help` (``_info``) back
``metricopt info`` and ``metricopt solvers``. ``_report`` builds a run's report and
``_common`` holds what the jobs share (certified ratios, scores in other units, builder
parameters). Nothing here prints: progress goes to the ``callback`` and ``on_stage``
hooks, results come back as plain dicts.

The fields of ``report.json`` (:data:`REPORT_FIELDS`) are documented with the code that
writes and reads the file, :mod:`metricopt.io.reports`.

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

from ..io.reports import REPORT_FIELDS, SUMMARY_OMIT
from ._common import objective_scores, problem_parameters
from ._evaluate import evaluate_file
from ._info import describe, option_help, solver_table
from ._run import RunOutcome, check_run_arguments, run

__all__ = ["RunOutcome", "run", "check_run_arguments", "evaluate_file", "describe", "solver_table",
           "option_help", "problem_parameters", "objective_scores",
           "REPORT_FIELDS", "SUMMARY_OMIT"]
