"""The reader table: each input format, the suffixes that name it, and its parser.

Every reader of a file goes through this table: :func:`metricopt.io.read_graph` and
:func:`metricopt.io.read_dissimilarity`, and the dataset fetcher, which converts a
download in any of these formats into a cached edge list. The names are
:data:`metricopt.io.FORMATS`, in the same order.

A graph parser is called as ``parse(content, path, weighted)`` with the file's text (its
bytes for a binary format) and returns :class:`~metricopt.io._records.Records`;
``weighted`` is ``read_graph``'s parameter (``None``: the format's default, ``False``:
ignore weights). A matrix parser is called as ``parse(data, path)`` with the file's
bytes and returns ``(values, labels)``.
"""

import os
from dataclasses import dataclass
from typing import Any, Callable

from metricopt.io._edgelist import parse_edgelist
from metricopt.io._gml import parse_gml
from metricopt.io._mat import parse_mat
from metricopt.io._matrix import matrix_from_csv, matrix_from_npy
from metricopt.io._mtx import parse_mtx
from metricopt.io._pajek import parse_pajek
from metricopt.io._source import format_suffix

__all__ = ["Reader", "READERS", "detect_format"]


@dataclass(frozen=True)
class Reader:
    """One input format.

    Attributes
    ----------
    fmt : str
        Its name, a value of ``read_graph``'s ``fmt`` parameter.
    suffixes : tuple of str
        File suffixes (lower case, after removing ``.gz``) that name it.
    parse : callable
        The parser (see the module docstring).
    binary : bool
        The parser takes the file's bytes, not its text.
    matrix : bool
        A dense dissimilarity matrix, not a graph.
    """

    fmt: str
    suffixes: tuple[str, ...]
    parse: Callable[..., Any]
    binary: bool = False
    matrix: bool = False


def _edgelist(text, path, weighted):
    return parse_edgelist(text, path, parse_weights=weighted is not False)


def _mtx(text, path, weighted):
    return parse_mtx(text, path, keep_values=weighted is True)


def _gml(text, path, weighted):
    return parse_gml(text, path)


def _pajek(text, path, weighted):
    return parse_pajek(text, path)


def _mat(data, path, weighted):
    return parse_mat(data, path, keep_values=weighted is True)


#: Input formats by name, in the order of :data:`metricopt.io.FORMATS`.
READERS = {r.fmt: r for r in (
    Reader("edgelist", (".txt", ".tsv", ".edges", ".el"), _edgelist),
    Reader("mtx", (".mtx", ".mm"), _mtx),
    Reader("gml", (".gml",), _gml),
    Reader("pajek", (".net",), _pajek),
    Reader("mat", (".mat",), _mat, binary=True),
    Reader("npy", (".npy",), matrix_from_npy, binary=True, matrix=True),
    Reader("matrix-csv", (".csv",), matrix_from_csv, binary=True, matrix=True),
)}

_BY_SUFFIX = {suffix: r.fmt for r in READERS.values() for suffix in r.suffixes}


def detect_format(path: "str | os.PathLike[str]") -> str:
    """The format of ``path`` from its suffix (``.gz`` removed); ``"edgelist"`` by default.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str
        One of :data:`READERS` (:data:`metricopt.io.FORMATS`).
    """
    return _BY_SUFFIX.get(format_suffix(path), "edgelist")
