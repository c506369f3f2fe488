"""The backend interface every solver implements."""

import importlib
import importlib.util
import inspect

__all__ = ["Solver", "COMMON_OPTIONS"]

#: Options every backend accepts (a backend may ignore some; it then warns).
COMMON_OPTIONS = ("time_limit", "max_iter", "seed", "threads", "max_memory", "callback", "verbose")


class Solver:
    """Base class of the backends registered in :mod:`metricopt.solvers`.

    A backend declares its name, the third-party modules it needs (imported lazily) and
    what it can solve, and implements :meth:`run`, a flat keyword function that returns a
    plain dict (the dispatcher wraps it in a :class:`~metricopt.result.SolveResult`).

    Attributes
    ----------
    name : str
    description : str
    REQUIRED_MODULES : tuple of str
    exact : bool
        True when the backend returns an exact optimum (its lower bound is the optimum).
    structures : tuple of str
        Problem structures handled ("dense", "sparse", "edges").
    objectives : tuple of str
        Objective forms handled ("linear", "l1", "l2").
    explicit_rows : bool
        True when the backend solves a dense problem whose constraints are a given list
        of rows (``MetricProblem.rows``, the open-wedge relaxation) rather than the full
        triangle family.
    """

    name = None
    description = ""
    REQUIRED_MODULES = ()
    exact = False
    structures = ("dense", "sparse", "edges")
    objectives = ("linear", "l1", "l2")
    explicit_rows = False

    def is_available(self):
        """True when every required module is installed.

        The modules are found, not imported, so that listing the backends stays fast
        (numba alone takes a fifth of a second to import).
        """
        try:
            return all(importlib.util.find_spec(mod) is not None for mod in self.REQUIRED_MODULES)
        except (ImportError, ValueError):
            return False

    def supports(self, problem):
        """Return ``(ok, reason)``: whether this backend can solve ``problem``."""
        if problem.structure not in self.structures:
            return False, f"{self.name} does not handle {problem.structure} problems"
        if problem.objective not in self.objectives:
            return False, f"{self.name} does not handle {problem.objective} objectives"
        if getattr(problem, "rows", None) is not None and not self.explicit_rows:
            return False, (f"{self.name} solves the full triangle family only; the open-wedge "
                           f"relaxation (a given list of rows) needs method 'highs' or "
                           f"'highs-lazy'")
        return True, ""

    def estimate_memory(self, problem):
        """Estimated peak bytes to solve ``problem`` (``None`` if unknown)."""
        return None

    def warm_up_options(self, problem, options):
        """Options for the small warm-up solve (:mod:`metricopt.solvers._warmup`) that
        select the same kernels as ``options`` do on ``problem``."""
        return dict(options)

    def warm_up_kernels(self, problem):
        """Load the kernels a solve may call that the small warm-up solve ``problem``
        (:mod:`metricopt.solvers._warmup`) does not reach; none by default."""

    def run(self, problem, **options):  # pragma: no cover - interface
        """Solve ``problem``; return a dict of SolveResult fields."""
        raise NotImplementedError

    #: The backend's checks of option values that need no problem: a function whose
    #: keyword arguments are named as :meth:`run`'s options and that raises
    #: :class:`~metricopt.exceptions.InvalidParameterError` (with ``parameter`` set) for
    #: the first bad one. :meth:`run` calls the same function.
    check_values = None

    def check_options(self, options):
        """Check the values of ``options`` before any input is read.

        The options not given take their defaults; checks that need the problem (its
        size, structure or memory) wait for :meth:`run`.

        Parameters
        ----------
        options : dict
            Option name -> value; every name must be one of :meth:`default_options`.

        Raises
        ------
        InvalidParameterError
            Its ``parameter`` names the first option whose value is refused.
        """
        if self.check_values is None:
            return
        values = {**self.default_options(), **options}
        wanted = inspect.signature(self.check_values).parameters
        self.check_values(**{k: v for k, v in values.items() if k in wanted})

    def default_options(self):
        """Option names and defaults, read from :meth:`run`'s keyword-only signature."""
        sig = inspect.signature(self.run)
        return {
            name: (None if p.default is inspect.Parameter.empty else p.default)
            for name, p in sig.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }

    def cite(self):
        """Reference of the method, for reports."""
        return ""

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"
