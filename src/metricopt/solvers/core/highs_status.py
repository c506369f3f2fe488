"""HiGHS model statuses mapped onto :class:`metricopt.result.Status`.

Keyed by the name of the ``highspy.HighsModelStatus`` member, so this module does not
import highspy. The HiGHS status and its own text stay in the message.
"""

from ...result import Status

__all__ = ["HIGHS_STATUS", "map_status"]

#: HighsModelStatus name -> (Status code, sentence).
HIGHS_STATUS = {
    "kNotset": (Status.NUMERICAL, "HiGHS returned no status."),
    "kLoadError": (Status.NUMERICAL, "HiGHS could not load the model."),
    "kModelError": (Status.NUMERICAL, "HiGHS found an error in the model."),
    "kPresolveError": (Status.NUMERICAL, "HiGHS failed in presolve."),
    "kSolveError": (Status.NUMERICAL, "HiGHS failed to solve the model."),
    "kPostsolveError": (Status.NUMERICAL, "HiGHS failed in postsolve."),
    "kModelEmpty": (Status.OPTIMAL, "The model is empty."),
    "kOptimal": (Status.OPTIMAL, "Optimal solution found."),
    "kInfeasible": (Status.INFEASIBLE, "The problem is infeasible."),
    # The relaxations are bounded below, so this means infeasible.
    "kUnboundedOrInfeasible": (Status.INFEASIBLE, "The problem is infeasible or unbounded."),
    "kUnbounded": (Status.UNBOUNDED, "The problem is unbounded."),
    "kObjectiveBound": (Status.LIMIT, "The objective bound was reached."),
    "kObjectiveTarget": (Status.LIMIT, "The objective target was reached."),
    "kTimeLimit": (Status.LIMIT, "Time limit reached."),
    "kIterationLimit": (Status.LIMIT, "Iteration limit reached."),
    "kUnknown": (Status.NUMERICAL, "HiGHS stopped without an optimality certificate."),
    "kSolutionLimit": (Status.LIMIT, "Solution limit reached."),
    "kInterrupt": (Status.INTERRUPTED, "Interrupted."),
    "kHighsInterrupt": (Status.INTERRUPTED, "Interrupted."),
    "kMemoryLimit": (Status.LIMIT, "HiGHS reached its memory limit."),
}


def map_status(model_status, highs_text=""):
    """``(status, message)`` for a ``highspy.HighsModelStatus``.

    Parameters
    ----------
    model_status : highspy.HighsModelStatus
    highs_text : str
        HiGHS's own description (``Highs.modelStatusToString``).

    Returns
    -------
    status : int
    message : str
        Our sentence followed by ``(HiGHS model status NAME: TEXT)``.
    """
    name = getattr(model_status, "name", str(model_status))
    code, text = HIGHS_STATUS.get(name, (Status.NUMERICAL, "Unrecognised HiGHS status."))
    detail = f"HiGHS model status {name}" + (f": {highs_text}" if highs_text else "")
    return code, f"{text} ({detail})"
