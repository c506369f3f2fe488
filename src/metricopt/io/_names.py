"""Names the graph readers take besides paths, looked up through a registered function.

``read_graph("karate")`` reads a dataset by name, but what a name means (a bundled file,
a copy in the download cache, a registered dataset not fetched yet) is the business of
:mod:`metricopt.datasets`, which sits above :mod:`metricopt.io`: it registers its lookup
here when it is imported, and the package root imports it. :mod:`metricopt.io` never
imports :mod:`metricopt.datasets`.
"""

__all__ = ["register_name_lookup", "find_named", "known_names"]

_LOOKUP = {"find": None, "names": None}


def register_name_lookup(find, names):
    """Register how the readers resolve a name that is not an existing path.

    Parameters
    ----------
    find : callable
        ``find(name)`` returns the path of the file that ``name`` stands for, or
        ``None`` when it stands for none; it may raise ``InputError`` to say why a known
        name cannot be read yet.
    names : callable
        ``names()`` returns the names to list in the error for a missing bare name.
    """
    _LOOKUP.update(find=find, names=names)


def find_named(name):
    """The path that ``name`` stands for, or ``None`` (also when no lookup is registered)."""
    find = _LOOKUP["find"]
    return None if find is None else find(name)


def known_names():
    """The names a missing bare name's error lists (empty when no lookup is registered)."""
    names = _LOOKUP["names"]
    return [] if names is None else list(names())
