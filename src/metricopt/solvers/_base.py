"""The backend interface every solver implements."""

import importlib
import importlib.util
import inspect

from .core.options import check_driver, check_values, defaults, resolve, signature

__all__ = ["Solver", "set_registry"]

#: The registry's lookup (:func:`metricopt.solvers.get_solver`), set by the dispatcher when
#: it is imported: a backend reaches another through :meth:`Solver.other`, never by
#: importing it or the registry.
_REGISTRY = []


def set_registry(get_solver):
    """Let :meth:`Solver.other` find backends by name with ``get_solver``."""
    _REGISTRY[:] = [get_solver]


class Solver:
    """Base class of the backends registered in :mod:`metricopt.solvers`.

    A backend declares its name, the third-party modules it needs (imported lazily), what
    it can solve and its :attr:`options`, and implements :meth:`driver`, a flat keyword
    function that returns a plain dict (the dispatcher wraps it in a
    :class:`~metricopt.result.SolveResult`). :meth:`run` checks the options and fills in
    their defaults before it calls the driver.

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
            if problem.structure == "support":
                return False, (f"{self.name} does not handle the support-sized layout "
                               f"(layout='support'): use method 'project-forget', or build "
                               f"the problem with layout='dense'")
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

    #: The backend's options (:class:`~metricopt.solvers.core.options.Option`), declared
    #: once: :meth:`run`'s signature, :meth:`default_options`, :meth:`check_options`, the
    #: command line's flags and ``metricopt solvers METHOD`` are derived from them.
    options = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "options" not in cls.__dict__ or "run" in cls.__dict__:
            return
        driver = inspect.getattr_static(cls, "driver")
        driver = getattr(driver, "__func__", driver)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD
                   for p in inspect.signature(driver).parameters.values()):
            check_driver(driver, cls.options)

        def run(self, problem, **options):
            return Solver.run(self, problem, **options)

        run.__doc__ = f"Solve ``problem`` with {cls.__name__}'s options (see :attr:`options`)."
        run.__qualname__ = f"{cls.__qualname__}.run"
        run.__signature__ = signature(cls.options, leading=("self", "problem"))
        cls.run = run

    def driver(self, problem, **options):  # pragma: no cover - interface
        """Solve ``problem`` with every option given (checked, defaults filled in by
        :meth:`run`); return a dict of SolveResult fields. A plain function
        (``staticmethod``) or a method."""

    def warm_up_kernels(self, problem):
        """Load the kernels a solve may call that the small warm-up solve ``problem``
        (:mod:`metricopt.solvers._warmup`) does not reach; none by default."""

        raise NotImplementedError

    #: The name of the backend's public function (``"solve_dykstra"``), if it has one.
    public = None

    @staticmethod
    def other(name):
        """Another registered backend, by name: for a backend that hands its answer on
        (lighttouch's finishing stage runs ``dykstra``). The registry is the
        dispatcher's, which is imported with any backend (its package)."""
        return _REGISTRY[0](name)

    @property
    def caller(self):
        """The name refused option values are reported against: the backend's public
        function (``solve_dykstra``), else the backend's name."""
        return self.public or self.name

    def run(self, problem, **options):
        """Solve ``problem``: ``options`` checked against :attr:`options`, the others at
        their defaults, then the driver; return a dict of SolveResult fields."""
        return self.driver(problem, **resolve(self.caller, self.options, options))

    def check_options(self, options):
        """Check the values of ``options`` before any input is read.

        Checks that need the problem (its size, structure or memory) wait for
        :meth:`run`.

        Parameters
        ----------
        options : dict
            Option name -> value; names not among :attr:`options` are left alone.

        Raises
        ------
        InvalidParameterError
            Its ``parameter`` names the first option whose value is refused.
        """
        check_values(self.caller, self.options, options)

    def default_options(self):
        """Option names and defaults, in the order of :attr:`options`."""
        return defaults(self.options)

    def option(self, name):
        """The declaration of option ``name`` (``KeyError`` when it has none)."""
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def cite(self):
        """Reference of the method, for reports."""
        return ""

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"
