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

The certified ratios of a report (``approximation_ratio``, ``lp_approx_ratio``) and the
scores in a problem's other units are defined in :mod:`metricopt.pipeline._common`.
"""

from ..io.reports import REPORT_FIELDS, SUMMARY_OMIT
from ._common import objective_scores, problem_parameters
from ._evaluate import evaluate_file
from ._info import describe, option_help, solver_table
from ._run import RunOutcome, check_run_arguments, run

__all__ = ["RunOutcome", "run", "check_run_arguments", "evaluate_file", "describe", "solver_table",
           "option_help", "problem_parameters", "objective_scores",
           "REPORT_FIELDS", "SUMMARY_OMIT"]
