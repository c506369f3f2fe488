"""The backends' options, declared once.

A backend lists its options as :class:`Option` declarations (on its
:class:`~metricopt.solvers.Solver` class, ``options = (...)``), most of them taken from the
common declarations below with the backend's own default and one line of its own. Everything
else is derived from that list: the check of the values (:func:`check_values`, one message
format), the defaults, the Python signature of ``Solver.run`` and of the public ``solve_X``
function (:func:`signature`, :func:`takes_options`), the command line's flags and their help,
``metricopt solvers METHOD``, and the parsing of a value written as text
(:meth:`Option.parse`), which the command line and batch manifests share.

>>> from metricopt.solvers.core.options import TOL, check_values
>>> tol = TOL.replace(default=1e-6)
>>> tol.parse("1e-8"), tol.requirement
(1e-08, 'a float > 0')
>>> check_values("f", (tol,), {"tol": -1.0})
Traceback (most recent call last):
...
metricopt.exceptions.InvalidParameterError: The 'tol' parameter of f must be a float > 0. Got -1.0 instead.
"""

import dataclasses
import functools
import inspect
import json
import math
import numbers
import os
import re

import numpy as np

from ...exceptions import InvalidParameterError

__all__ = ["Option", "KINDS", "COMMON", "bad_value", "check_choice", "check_options",
           "check_values", "resolve", "defaults", "signature", "takes_options", "check_driver",
           "parse_value", "GAMMA", "LAM", "TOL", "GAP_TOL", "MAX_ITER", "TIME_LIMIT", "THREADS",
           "SEED", "MAX_MEMORY", "CHECKPOINT", "CHECKPOINT_EVERY", "RESUME", "CALLBACK",
           "VERBOSE", "POLISH", "GAMMA_GROWTH", "CHECK_EVERY", "SCHEDULER"]

#: Kinds of value: what :meth:`Option.check` accepts and :meth:`Option.parse` reads.
KINDS = ("float", "int", "bool", "choice", "bytes", "file", "existing-file", "str",
         "callable", "any")

#: Largest seed: the report stores it in an int64 column.
MAX_SEED = 2**63 - 1
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_NONE = ("none", "null")
_METAVARS = {"float": "FLOAT", "int": "INTEGER", "bool": "BOOLEAN", "bytes": "SIZE",
             "file": "FILE", "existing-file": "FILE", "str": "TEXT", "any": "VALUE"}


def bad_value(caller, name, value, requirement):
    """The :class:`~metricopt.exceptions.InvalidParameterError` for option ``name`` of
    ``caller``, which must be ``requirement`` (``"an int >= 1"``) and is ``value``."""
    return InvalidParameterError(
        f"The {name!r} parameter of {caller} must be {requirement}. Got {value!r} instead.",
        parameter=name, value=value, requirement=requirement)


def check_choice(caller, name, value, choices):
    """Raise :func:`bad_value` unless ``value`` is one of ``choices``."""
    if isinstance(value, str) and value in choices:
        return
    raise bad_value(caller, name, value, f"one of {', '.join(map(repr, choices))}")


def _real(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value))


def _integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_))


def _number_text(value):
    """``2**63 - 1`` for the large powers of two less one, else ``g`` formatting."""
    if isinstance(value, int) and value > 2**31 and (value + 1) & value == 0:
        return f"2**{(value + 1).bit_length() - 1} - 1"
    return f"{value:g}"


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a backend.

    Parameters
    ----------
    name : str
        The keyword argument (``gap_tol``).
    kind : str
        One of :data:`KINDS`: ``"float"`` (a finite real), ``"int"``, ``"bool"``,
        ``"choice"`` (one of ``choices``), ``"bytes"`` (a size; text such as ``8G``),
        ``"file"`` (a path to write), ``"existing-file"`` (a path to read), ``"str"``,
        ``"callable"`` or ``"any"`` (not checked here; text read as JSON when it can be).
    default : object
        The value when the option is not given.
    low, high : float or None
        The range of a ``float``, ``int`` or ``bytes`` option (``None``: unbounded).
    low_open, high_open : bool
        Whether the bound itself is excluded.
    choices : tuple
        The values of a ``choice`` option (strings, or strings and booleans).
    none : bool
        Whether ``None`` is allowed (written ``none`` or ``null`` in text).
    doc : str
        One line about the option (``metricopt solvers METHOD``; for the common
        declarations below also the help of the command line's flag).
    flag : str or None
        The command line's flag of its own (``"--lambda"``); ``None``: given as
        ``--option NAME=VALUE``.
    hidden : bool
        Not given from the command line or a manifest, and not listed (``callback``).
    metavar : str or None
        The flag's value in ``--help`` (default: from ``kind``).
    """

    name: str
    kind: str
    default: object = None
    low: object = None
    high: object = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    none: bool = False
    doc: str = ""
    flag: object = None
    hidden: bool = False
    metavar: object = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name!r}: unknown kind {self.kind!r}")
        if (self.kind == "choice") != bool(self.choices):
            raise ValueError(f"option {self.name!r}: choices go with kind 'choice' only")

    def replace(self, **changes):
        """A copy with ``changes`` (a backend's own ``default`` and ``doc``)."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------ what is accepted
    @property
    def requirement(self):
        """What a value must be, in words (``"an int >= 1 or None"``)."""
        kind = self.kind
        if kind == "choice":
            if all(isinstance(c, str) for c in self.choices):
                text = f"one of {', '.join(map(repr, self.choices))}"
            else:
                *first, last = self.choices
                text = f"{', '.join(map(repr, first))} or {last!r}"
        elif kind in ("float", "int", "bytes"):
            text = {"float": "a float", "int": "an int", "bytes": "a number of bytes"}[kind]
            low, high = self.low, self.high
            if low is not None and high is not None:
                text += (f" in {'(' if self.low_open else '['}{_number_text(low)}, "
                         f"{_number_text(high)}{')' if self.high_open else ']'}")
            elif low is not None:
                text += f" {'>' if self.low_open else '>='} {_number_text(low)}"
            elif high is not None:
                text += f" {'<' if self.high_open else '<='} {_number_text(high)}"
        else:
            text = {"bool": "a bool", "file": "a path", "existing-file": "a path",
                    "str": "a str", "callable": "a callable", "any": "any value"}[kind]
        return text + " or None" if self.none and kind != "any" else text

    def accepts(self, value):
        """Whether ``value`` is valid (see :meth:`check`)."""
        if value is None:
            return self.none or self.kind == "any"
        kind = self.kind
        if kind == "any":
            return True
        if kind == "choice":
            if all(isinstance(c, str) for c in self.choices):
                return isinstance(value, str) and value in self.choices
            try:
                return any(value == c and isinstance(value, (str, bool, np.bool_, int))
                           for c in self.choices)
            except (TypeError, ValueError):
                return False
        if kind == "bool":
            return isinstance(value, (bool, np.bool_))
        if kind == "callable":
            return callable(value)
        if kind == "str":
            return isinstance(value, str)
        if kind in ("file", "existing-file"):
            return isinstance(value, (str, os.PathLike))
        if kind == "int" and not _integer(value):
            return False
        if kind in ("float", "bytes") and not _real(value):
            return False
        if self.low is not None and not (value > self.low if self.low_open
                                         else value >= self.low):
            return False
        if self.high is not None and not (value < self.high if self.high_open
                                          else value <= self.high):
            return False
        return True

    def check(self, value, caller):
        """Raise :func:`bad_value` (``InvalidParameterError`` naming the option) unless
        ``value`` is valid."""
        if not self.accepts(value):
            raise bad_value(caller, self.name, value, self.requirement)

    # ------------------------------------------------------------------- text
    def parse(self, text):
        """The value written as ``text`` (on the command line or in a manifest).

        A value that is not a string is returned as it is (a TOML manifest's numbers).
        ``none``/``null`` is ``None`` where allowed; ``bytes`` take a unit (``8G``,
        ``512M``, ``1.5GiB``); booleans are ``true``/``false``; ``any`` is read as JSON
        when it can be, else kept as text. The value is not checked against the range
        (:meth:`check` does that).

        Raises
        ------
        InvalidParameterError
            The text is not a value of this kind (``parameter`` names the option).
        """
        if not isinstance(text, str):
            return text
        raw = text.strip()
        if self.none and raw.lower() in _NONE:
            return None
        kind = self.kind
        try:
            if kind == "float":
                return float(raw)
            if kind == "int":
                return int(raw)
            if kind == "bool":
                return {"true": True, "false": False}[raw.lower()]
            if kind == "choice":
                for choice in self.choices:
                    if raw == choice or (isinstance(choice, bool)
                                         and raw.lower() == str(choice).lower()):
                        return choice
                return raw
            if kind == "bytes":
                match = _SIZE.match(raw)
                if not match:
                    raise ValueError(raw)
                return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
        except (ValueError, KeyError):
            what = {"float": "a number", "int": "an integer", "bool": "true or false",
                    "bytes": "a size (examples: 8G, 512M, 1048576)"}[kind]
            raise InvalidParameterError(f"{text!r} is not {what}", parameter=self.name,
                                        value=text, requirement=self.requirement) from None
        if kind == "any":
            return parse_value(raw)
        return text

    @property
    def cli_metavar(self):
        """The flag's value in ``--help``."""
        if self.metavar is not None:
            return self.metavar
        if self.kind == "choice":
            return "[" + "|".join(str(c).lower() if isinstance(c, bool) else c
                                  for c in self.choices) + "]"
        return _METAVARS.get(self.kind, "VALUE")


def parse_value(text, option=None):
    """A value written as text: by ``option``'s declaration (:meth:`Option.parse`), or,
    without one, as JSON when it can be (numbers, ``true``, ``false``, ``null``), else
    the text itself. A value that is not a string is returned as it is."""
    if option is not None:
        return option.parse(text)
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


# ------------------------------------------------------------------ a list of options
def _by_name(options):
    return {option.name: option for option in options}


def check_values(caller, options, values):
    """Check ``values`` (name -> value) against the declarations ``options``, in their
    order; names not declared are left alone.

    Raises
    ------
    InvalidParameterError
        For the first refused value, naming it (``parameter``, ``value``,
        ``requirement``), in the format of :func:`bad_value`.
    """
    for option in options:
        if option.name in values:
            option.check(values[option.name], caller)


def defaults(options):
    """Option name -> default, in the declarations' order."""
    return {option.name: option.default for option in options}


def resolve(caller, options, values):
    """Every option of ``options``: ``values`` checked, the others at their defaults.

    Raises
    ------
    InvalidParameterError
        A name that is not declared, or a refused value.
    """
    unknown = sorted(set(values) - set(_by_name(options)))
    if unknown:
        valid = ", ".join(o.name for o in options if not o.hidden)
        raise InvalidParameterError(f"Unknown option(s) for {caller}: {', '.join(unknown)}. "
                                    f"Valid options: {valid}")
    check_values(caller, options, values)
    return {**defaults(options), **values}


def signature(options, leading=("problem",)):
    """The :class:`inspect.Signature` of a function that takes ``leading`` positional
    arguments and then ``options`` as keywords with their defaults."""
    params = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
              for name in leading]
    params += [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default)
               for o in options]
    return inspect.Signature(params)


def check_driver(fn, options):
    """Raise ``TypeError`` unless ``fn``'s keyword-only parameters are exactly the
    declared options (a driver that names its options in its signature)."""
    named = [name for name, p in inspect.signature(fn).parameters.items()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    declared = [o.name for o in options]
    if set(named) != set(declared):
        raise TypeError(f"{fn.__qualname__} takes {sorted(set(named) - set(declared))} "
                        f"beyond its declared options and lacks "
                        f"{sorted(set(declared) - set(named))}")


def takes_options(options):
    """Decorator: the public function of a backend whose driver names ``options``.

    The returned function takes ``(problem, **options)``: it checks them against the
    declarations, fills in the defaults and calls the driver with every option. Its
    ``__signature__`` is derived from ``options`` and ``__wrapped__`` is the driver.
    """
    def decorate(fn):
        check_driver(fn, options)

        @functools.wraps(fn)
        def public(problem, **values):
            return fn(problem, **resolve(fn.__name__, options, values))

        public.__signature__ = signature(options)
        public.options = tuple(options)
        return public
    return decorate


# ---------------------------------------------------- the options backends share
GAMMA = Option("gamma", "float", low=0, low_open=True, none=True, flag="--gamma",
               doc="QP regularisation gamma of the projection methods (V §4-6).")
LAM = Option("lam", "float", low=0, low_open=True, none=True, flag="--lambda",
             doc="sc: QP weight of the non-edge pairs (projection methods; default 1/n).")
TOL = Option("tol", "float", low=0, low_open=True, flag="--tol",
             doc="Primal feasibility tolerance (iterative backends).")
GAP_TOL = Option("gap_tol", "float", low=0, low_open=True, flag="--gap-tol",
                 doc="Relative primal-dual gap tolerance (iterative backends).")
MAX_ITER = Option("max_iter", "int", low=1, flag="--max-iter",
                  doc="Iteration limit (passes, or lazy rounds).")
TIME_LIMIT = Option(
    "time_limit", "float", low=0, low_open=True, none=True, flag="--time-limit",
    doc="Wall-clock limit for the solve, in seconds: its setup, iterations and final "
        "certificate, which ends within max(1 s, 10%) after the limit (a weaker bound, "
        "still certified; the one-off loading of the kernels before it is not counted). "
        "Rounding and refinement have their own budget, --round-time-limit.")
THREADS = Option("threads", "int", low=1, high=4096, none=True, flag="--threads",
                 doc="Threads the backend may use.")
SEED = Option("seed", "int", low=0, high=MAX_SEED, none=True, flag="--seed",
              doc="Random seed, 0 to 2**63 - 1 (backend and rounding; default 0, so the same "
                  "command gives the same answer); the report records it.")
MAX_MEMORY = Option("max_memory", "bytes", low=0, low_open=True, none=True,
                    flag="--max-memory",
                    doc="Memory allowance, e.g. 8G or 512M (default: what is available).")
CHECKPOINT = Option("checkpoint", "file", none=True, flag="--checkpoint",
                    doc="Save the backend's state to this file now and then (iterative "
                        "backends).")
CHECKPOINT_EVERY = Option("checkpoint_every", "float", default=60.0, low=0, low_open=True,
                          flag="--checkpoint-every", metavar="SECONDS",
                          doc="Seconds between two checkpoints (with --checkpoint).  "
                              "[default: 60]")
RESUME = Option("resume", "existing-file", none=True, flag="--resume",
                doc="Resume from a checkpoint file written by --checkpoint.")
CALLBACK = Option("callback", "callable", none=True, hidden=True,
                  doc="Called with each iteration record (a dict).")
VERBOSE = Option("verbose", "bool", default=False,
                 doc="Accepted for interface compatibility (the library does not print).")
POLISH = Option("polish", "choice", default="auto", choices=(True, False, "auto"),
                doc="Solve the LP restricted to the active constraints exactly and certify "
                    "it from its dual; unless false, a rounded clustering or cut within "
                    "gap_tol of the bound may be the answer (an integral LP point).")
GAMMA_GROWTH = Option("gamma_growth", "float", default=10.0, low=1, low_open=True,
                      doc="Factor by which gamma grows when a converged QP stage misses "
                          "gap_tol and the polish did not close it.")
CHECK_EVERY = Option("check_every", "int", low=1,
                     doc="Iterations between full O(n^3) violation checks.")
SCHEDULER = Option("scheduler", "any", flag="--scheduler", metavar="ADDRESS",
                   doc="Dask scheduler (tcp://host:8786) that runs project-forget's "
                       "shortest-path oracle on sparse signed or weighted graphs, or its "
                       "support scan (support-sized layout); the result is that of a local "
                       "run.")

#: The common declarations by name, in the order of the command line's flags.
COMMON = _by_name((GAMMA, LAM, TOL, GAP_TOL, MAX_ITER, TIME_LIMIT, THREADS, SEED, MAX_MEMORY,
                   CHECKPOINT, CHECKPOINT_EVERY, RESUME, SCHEDULER, CALLBACK, VERBOSE, POLISH,
                   GAMMA_GROWTH, CHECK_EVERY))

#: The names :func:`check_options` knows, with their declarations.
_CHECKED = {**{name: COMMON[name] for name in ("tol", "gap_tol", "checkpoint_every",
                                               "gamma_growth", "gamma", "lam", "time_limit",
                                               "max_iter", "polish")},
            "threads": THREADS.replace(high=None),
            "check_every": CHECK_EVERY,
            "passes": Option("passes", "int", low=1, none=True)}


def check_options(caller, **values):
    """Validate the options the iterative backends share; raise
    :class:`~metricopt.exceptions.InvalidParameterError` naming the first bad one.

    Known names: ``tol``, ``gap_tol``, ``checkpoint_every``, ``gamma_growth`` (floats
    > 0; growth > 1), ``gamma``, ``lam``, ``time_limit`` (float > 0 or None),
    ``max_iter`` (int >= 1), ``threads``, ``passes`` (int >= 1 or None), ``check_every``
    (int >= 1), ``polish`` (bool or "auto"): the common declarations.
    """
    for name, value in values.items():
        if name not in _CHECKED:  # pragma: no cover - programming error
            raise TypeError(f"check_options: unknown option {name!r}")
        _CHECKED[name].check(value, caller)
