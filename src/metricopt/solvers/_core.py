"""Validation of the options the iterative backends share, one message format."""

import numbers

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["check_options", "check_choice", "bad_value"]


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


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


def check_options(caller, **values):
    """Validate the options the iterative backends share; raise
    :class:`~metricopt.exceptions.InvalidParameterError` naming the first bad one.

    Known names: ``tol``, ``gap_tol``, ``checkpoint_every``, ``gamma_growth`` (floats
    > 0; growth > 1), ``gamma``, ``lam``, ``time_limit`` (float > 0 or None),
    ``max_iter`` (int >= 1), ``threads``, ``passes``, ``check_every`` (int >= 1 or None),
    ``polish`` (bool or "auto").
    """
    def bad(name, value, what):
        raise bad_value(caller, name, value, what)

    for name, val in values.items():
        if name in ("tol", "gap_tol", "checkpoint_every"):
            if not _real(val) or not val > 0:
                bad(name, val, "a float > 0")
        elif name == "gamma_growth":
            if not _real(val) or not val > 1:
                bad(name, val, "a float > 1")
        elif name in ("gamma", "lam", "time_limit"):
            if val is not None and (not _real(val) or not val > 0):
                bad(name, val, "a float > 0 or None")
        elif name == "max_iter":
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < 1:
                bad(name, val, "an int >= 1")
        elif name in ("threads", "passes", "check_every"):
            if val is not None and (not isinstance(val, (int, np.integer))
                                    or isinstance(val, bool) or val < 1):
                bad(name, val, "an int >= 1" + (" or None" if name != "check_every" else ""))
        elif name == "polish":
            if val not in (True, False, "auto"):
                bad(name, val, "True, False or 'auto'")
        else:  # pragma: no cover - programming error
            raise TypeError(f"check_options: unknown option {name!r}")
