"""Exceptions and warnings raised by metricopt.

Policy (one place, so every module follows it):

* bad input data (unreadable file, empty graph, NaN weights) -> :class:`InputError`;
* a bad parameter value or an unknown option key -> :class:`InvalidParameterError`
  (also a ``ValueError`` and ``TypeError``, as in scikit-learn);
* a problem/method pair a backend cannot handle -> :class:`UnsupportedProblemError`;
* a backend whose dependency is missing -> :class:`SolverNotAvailableError`;
* an instance that would not fit in memory -> :class:`MemoryLimitError`;
* non-convergence is a *status* on the result plus a :class:`ConvergenceWarning`,
  never an exception.

Every exception derives from :class:`MetricOptError`; the command-line interface turns
it into a one-line ``Error: ...`` message and exit code 1.
"""

__all__ = [
    "MetricOptError",
    "InputError",
    "InvalidParameterError",
    "UnsupportedProblemError",
    "SolverNotAvailableError",
    "MemoryLimitError",
    "MetricOptWarning",
    "ConvergenceWarning",
]


class MetricOptError(Exception):
    """Base class of every error metricopt raises on purpose."""


class InputError(MetricOptError):
    """The input data (a graph or matrix file, or arrays) is unusable."""


class InvalidParameterError(MetricOptError, ValueError, TypeError):
    """A parameter has an invalid value, or an option name is unknown.

    Attributes
    ----------
    parameter : str or None
        The parameter whose value is refused, when the error is about one value (the
        command line then names its flag).
    value : object
        The refused value (with ``parameter``).
    requirement : str or None
        What the value must be, e.g. ``"an int >= 1"`` (with ``parameter``).
    """

    def __init__(self, message, *, parameter=None, value=None, requirement=None):
        super().__init__(message)
        self.parameter, self.value, self.requirement = parameter, value, requirement


class UnsupportedProblemError(MetricOptError, NotImplementedError):
    """The chosen backend cannot solve this kind of problem."""


class SolverNotAvailableError(MetricOptError):
    """The chosen backend needs a package that is not installed."""


class MemoryLimitError(MetricOptError, MemoryError):
    """The instance would need more memory than allowed."""


class MetricOptWarning(UserWarning):
    """An option was ignored or a result needs the user's attention."""


class ConvergenceWarning(MetricOptWarning):
    """An iterative backend stopped before reaching its tolerances."""


def type_name(obj):
    """``module.Class`` of an object (``list``, ``networkx.Graph``), for error messages.

    Types of the standard library keep their bare name; others are qualified by their
    top-level package, so that a networkx ``Graph`` is not mistaken for metricopt's.
    """
    cls = type(obj)
    root = (cls.__module__ or "").split(".")[0]
    return cls.__name__ if root == "builtins" else f"{root}.{cls.__name__}"
