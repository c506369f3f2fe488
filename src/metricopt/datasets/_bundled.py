"""Tiny graphs shipped inside the package (``datasets/data/NAME.txt``).

Each file is a SNAP-style edge list whose header records where it came from.
"""

import atexit
import contextlib
import functools
from importlib.resources import as_file, files
from pathlib import Path

from metricopt.exceptions import InvalidParameterError

__all__ = ["BUNDLED", "bundled_names", "bundled_path", "find_bundled"]

#: Names of the bundled datasets.
BUNDLED = ("dolphins", "football", "karate", "lesmis")

_files = contextlib.ExitStack()
atexit.register(_files.close)


def bundled_names():
    """Names of the bundled datasets, sorted.

    Returns
    -------
    list of str
    """
    return sorted(BUNDLED)


def find_bundled(name):
    """Path of the bundled dataset ``name``, or ``None`` if there is none."""
    return _path(name) if name in BUNDLED else None


def bundled_path(name):
    """Filesystem path of a bundled dataset's edge list.

    Parameters
    ----------
    name : str
        One of :func:`bundled_names`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InvalidParameterError
        If there is no bundled dataset of that name.
    """
    if name not in BUNDLED:
        raise InvalidParameterError(
            f"Unknown bundled dataset {name!r}; bundled: {', '.join(bundled_names())}"
        )
    return _path(name)


@functools.cache
def _path(name):
    resource = files(__package__).joinpath("data", f"{name}.txt")
    return Path(_files.enter_context(as_file(resource)))
