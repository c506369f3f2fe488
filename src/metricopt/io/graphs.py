"""Reading graphs and dissimilarity matrices from files, bundled datasets or objects.

Formats (detected from the suffix after removing ``.gz``; any file may be gzipped; the
parsers are the reader table of :mod:`metricopt.io._readers`):

========== ========================== ==================================================
fmt        suffixes                   content
========== ========================== ==================================================
edgelist   .txt .tsv .edges .el, any  ``u v`` or ``u v weight`` per line (SNAP style)
mtx        .mtx .mm                   Matrix Market coordinate (pattern/real/integer)
gml        .gml                       GML ``node``/``edge`` lists; node ids as labels
pajek      .net                       Pajek ``*Vertices``/``*Edges``/``*Arcs`` (lists too)
mat        .mat                       MATLAB file holding a sparse matrix (``Problem.A``)
npy        .npy                       square 2-D array: a dissimilarity matrix
matrix-csv .csv                       square numeric matrix, optional header of labels
========== ========================== ==================================================

Node labels of ``mtx``, ``pajek`` and ``mat`` files are the 1-based row or vertex numbers
(``"1".."N"``), and every declared node exists, with or without edges; so are the
declared nodes of a ``gml`` file. Only ``edgelist``, ``mtx`` and ``mat`` carry weights.

In memory, :func:`read_graph` takes a networkx or igraph graph, a scipy.sparse or numpy
adjacency matrix or a pandas edge table, and :func:`read_dissimilarity` a numpy distance
matrix (square or condensed); see :mod:`metricopt.io._objects`.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, cast

import numpy as np

from metricopt._choices import FORMATS
from metricopt.exceptions import InvalidParameterError, MetricOptWarning
from metricopt.graph import Dissimilarity, Graph, GraphSource
from metricopt.io._matrix import make_dissimilarity
from metricopt.io._names import find_named, known_names
from metricopt.io._objects import (
    describe_object,
    dissimilarity_values,
    object_kind,
    records_from_object,
)
from metricopt.io._preprocess import build_graph
from metricopt.io._readers import READERS, detect_format
from metricopt.io._source import (
    STDIN,
    STDIN_NAME,
    base_name,
    decode_text,
    format_suffix,
    read_bytes,
    read_stdin,
    resolve_source,
)

__all__ = ["FORMATS", "read_graph", "read_dissimilarity", "read_input", "detect_format"]

_MATRIX_FORMATS = tuple(fmt for fmt, reader in READERS.items() if reader.matrix)


def read_graph(source: GraphSource, *, fmt: str | None = None, weighted: bool | None = None,
               keep_all_components: bool = False, name: str | None = None,
               weight: str | None = "weight") -> Graph | Dissimilarity:
    """Read a graph (or a dense dissimilarity matrix) and make it simple.

    Parameters
    ----------
    source : str, os.PathLike or graph object
        A file path, ``"-"`` for standard input (an edge list unless ``fmt`` names
        another format; gzip data is decompressed), the name of a bundled dataset (see
        :func:`metricopt.datasets.bundled_names`; an existing path wins over a dataset
        name), or an object in memory: a networkx graph (any of its four classes), an
        igraph graph, a square scipy.sparse or numpy adjacency matrix (nonzero entries
        are edges), or a pandas DataFrame with columns ``source`` and ``target`` (one
        row per edge). Directed graphs, multi-edges and self-loops are made simple as
        for files. A metricopt :class:`~metricopt.graph.Graph` or
        :class:`~metricopt.graph.Dissimilarity` is returned unchanged.
    fmt : {"edgelist", "mtx", "gml", "pajek", "mat", "npy", "matrix-csv"} or None, default=None
        File format; ``None`` detects it from the suffix (see :func:`detect_format`).
        Must be ``None`` for an object.
    weighted : bool or None, default=None
        ``None``: an edge list's third column becomes the weights, Matrix Market and
        MATLAB values are dropped; an object's ``weight`` attribute or column becomes
        the weights when it has one, and a matrix's entries do unless they are all 1.
        ``True``: keep weights (unit weights when the input has none).
        ``False``: drop them.
    keep_all_components : bool, default=False
        Keep every connected component instead of only the largest one.
    name : str or None, default=None
        Name of the result; defaults to the dataset name or the file name without its
        suffixes (``ca-GrQc.txt.gz`` -> ``"ca-GrQc"``), for a networkx graph to its
        ``name``, else ``"graph"``.
    weight : str or None, default="weight"
        Objects only: the edge attribute (networkx, igraph) or column (DataFrame) that
        holds the weights (signed weights for correlation clustering, dissimilarities
        for metric nearness); ``None``: ignore any. A networkx edge without it among
        edges with it gets weight 1, with a warning, as networkx reads such graphs.

    Returns
    -------
    Graph or Dissimilarity
        A :class:`~metricopt.graph.Dissimilarity` for the ``npy`` and ``matrix-csv``
        formats (``weighted`` and ``keep_all_components`` do not apply to them), a
        :class:`~metricopt.graph.Graph` otherwise.

    Raises
    ------
    InputError
        With a one-line message. A missing source gives ``"File not found: SOURCE"``,
        followed for a bare word (no folder, no suffix) by ``" (and no bundled dataset
        of that name; bundled: dolphins, ...)"``. Other messages start with the path:
        ``"PATH, line K: cannot parse 'LINE'"`` (K is the 1-based line number in the
        file, comments included), ``"PATH, line K: weight is not finite"``,
        ``"PATH: no edges found"`` (no data line or entry at all),
        ``"PATH: the largest connected component has only one node"`` (only
        self-loops), and errors for directories, unreadable, binary, non-UTF-8 or
        non-gzip files.
    InvalidParameterError
        A parameter has an invalid value.

    Notes
    -----
    Pre-processing follows Veldt et al. (§8.2): self-loops are dropped; duplicate and
    reciprocal entries of a pair are merged into one edge whose weight is the mean of
    the listed weights; then only the largest connected component is kept (ties: the
    one holding the smallest internal node id). Node labels stay the strings of the
    file, and an object's nodes themselves (a networkx graph's nodes, an igraph
    graph's ``name`` vertex attribute or else its vertex ids, a DataFrame's
    ``source`` and ``target`` values, a matrix's row numbers); internal ids ``0..n-1``
    follow numeric order when every label is an integer, and order of first
    appearance (an object's node order) otherwise. Matrix Market nodes are
    ``"1".."N"``, all declared nodes included. ``Graph.summary`` records what was done,
    with a one-line ``summary["message"]``; errors and warnings about an object start
    with its kind (``"networkx graph: no edges found"``).

    Examples
    --------
    >>> g = read_graph("karate")
    >>> g.n, g.m
    (34, 78)
    >>> import networkx as nx
    >>> read_graph(nx.path_graph(4)).labels.tolist()
    [0, 1, 2, 3]
    """
    fmt, weighted = _check_params(fmt, weighted, keep_all_components, name)
    _check_weight(weight)
    if isinstance(source, (Graph, Dissimilarity)):
        return source
    if isinstance(source, str) and source == STDIN:
        return _read_stdin(fmt, weighted, keep_all_components, name)
    kind = object_kind(source)
    if kind is not None:
        if fmt is not None:
            raise InvalidParameterError(
                f"The 'fmt' parameter of read_graph applies to files; it must be None for "
                f"a {describe_object(kind)}. Got {fmt!r} instead.")
        where = describe_object(kind)
        records, own_name = records_from_object(source, kind, weight=weight, weighted=weighted)
        return build_graph(records, where, keep_all_components=keep_all_components,
                           name=name or own_name or "graph", fmt=kind)
    path, dataset = resolve_source(source, find_named, known_names())
    fmt = fmt or detect_format(path)
    name = name or dataset or base_name(path)
    reader = READERS[fmt]
    if reader.matrix:
        _warn_ignored(weighted, keep_all_components)
        return _read_matrix(path, fmt, name)
    data, gzipped = read_bytes(path)
    records = reader.parse(data if reader.binary else decode_text(data, path), path, weighted)
    records.weights = _choose_weights(records, weighted)
    return build_graph(
        records, path, keep_all_components=keep_all_components, name=name, fmt=fmt, gzipped=gzipped
    )


def read_dissimilarity(path: str | os.PathLike[str] | np.ndarray | Dissimilarity, *,
                       fmt: str | None = None, name: str | None = None) -> Dissimilarity:
    """Read a dense dissimilarity matrix for metric nearness.

    Parameters
    ----------
    path : str, os.PathLike or ndarray
        A ``.npy`` file holding a square 2-D numeric array, or a CSV file (``,`` or
        whitespace separated) holding a square numeric matrix with an optional header
        row of labels; either may be gzipped. Or a numpy array: square, or the
        condensed vector of :func:`scipy.spatial.distance.pdist`.
    fmt : {"npy", "matrix-csv"} or None, default=None
        ``None``: ``npy`` for a ``.npy`` suffix, ``matrix-csv`` otherwise. Must be
        ``None`` for an array.
    name : str or None, default=None
        Defaults to the file name without its suffixes (``"matrix"`` for an array).

    Returns
    -------
    Dissimilarity
        Symmetrised (mean of the two triangles), with a zero diagonal; labels from the
        header, else ``"0".."n-1"`` (the integers ``0..n-1`` for an array).

    Raises
    ------
    InputError
        If the matrix is not square, is smaller than 2 x 2, has a non-finite entry, is
        not symmetric within a relative 1e-9, or has a negative off-diagonal entry.
    """
    if fmt is not None and fmt not in _MATRIX_FORMATS:
        raise InvalidParameterError(
            f"The 'fmt' parameter of read_dissimilarity must be 'npy', 'matrix-csv' or None. "
            f"Got {fmt!r} instead."
        )
    if isinstance(path, Dissimilarity):
        return path
    kind = object_kind(path)
    if kind is not None:
        if fmt is not None:
            raise InvalidParameterError(
                f"The 'fmt' parameter of read_dissimilarity applies to files; it must be "
                f"None for an array. Got {fmt!r} instead.")
        values, where = dissimilarity_values(path, kind)
        return make_dissimilarity(values, list(range(values.shape[0])), where,
                                  name=name or "matrix", fmt=kind, gzipped=False)
    path, _ = resolve_source(path, lambda _: None, [])
    fmt = fmt or ("npy" if format_suffix(path) == ".npy" else "matrix-csv")
    return _read_matrix(path, fmt, name or base_name(path))


def read_input(source: GraphSource, kind: str | None = None,
               **read_options: Any) -> Graph | Dissimilarity:
    """The input of problem ``kind``: :func:`read_graph`, except for metric nearness
    given a dense numpy array, which is a distance matrix (:func:`read_dissimilarity`).

    Parameters
    ----------
    source : str, os.PathLike or object
        Anything :func:`read_graph` or :func:`read_dissimilarity` reads.
    kind : {"cc", "sc", "mn", "cd"} or None, default=None
    **read_options
        Passed to :func:`read_graph` (of them only ``name`` applies to a distance
        matrix; the others are then ignored with a warning).

    Returns
    -------
    Graph or Dissimilarity
    """
    if kind == "mn" and object_kind(source) == "numpy":
        name = read_options.pop("name", None)
        read_options.pop("weight", None)
        _warn_ignored(read_options.get("weighted"), read_options.get("keep_all_components"))
        if read_options.get("fmt") is not None:
            raise InvalidParameterError(
                "The 'fmt' parameter applies to files; it must be None for an array. "
                f"Got {read_options['fmt']!r} instead.")
        return read_dissimilarity(cast(np.ndarray, source), name=name)
    return read_graph(source, **read_options)


def _read_stdin(fmt, weighted, keep_all_components, name):
    """Standard input (the source ``"-"``), in format ``fmt`` (default: an edge list)."""
    fmt = fmt or "edgelist"
    name = name or "stdin"
    reader = READERS[fmt]
    data, gzipped = read_stdin()
    if reader.matrix:
        _warn_ignored(weighted, keep_all_components)
        values, labels = reader.parse(data, STDIN_NAME)
        return make_dissimilarity(values, labels, STDIN_NAME, name=name, fmt=fmt,
                                  gzipped=gzipped)
    content = data if reader.binary else decode_text(data, STDIN_NAME)
    records = reader.parse(content, STDIN_NAME, weighted)
    records.weights = _choose_weights(records, weighted)
    return build_graph(records, STDIN_NAME, keep_all_components=keep_all_components, name=name,
                       fmt=fmt, gzipped=gzipped)


def _read_matrix(path, fmt, name):
    data, gzipped = read_bytes(path)
    values, labels = READERS[fmt].parse(data, path)
    return make_dissimilarity(values, labels, path, name=name, fmt=fmt, gzipped=gzipped)


def _choose_weights(records, weighted):
    if weighted is False:
        return None
    if weighted is True and records.weights is None:
        return np.ones(records.n_lines, dtype=np.float64)
    return records.weights


def _warn_ignored(weighted, keep_all_components):
    if weighted is not None or keep_all_components:
        warnings.warn(
            "'weighted' and 'keep_all_components' do not apply to a dissimilarity matrix; ignored",
            MetricOptWarning,
            stacklevel=3,
        )


def _check_weight(weight):
    if weight is not None and not isinstance(weight, str):
        raise InvalidParameterError(
            f"The 'weight' parameter of read_graph must be a str or None. Got {weight!r} instead."
        )


def _check_params(fmt, weighted, keep_all_components, name):
    if fmt is not None and fmt not in FORMATS:
        choices = ", ".join(repr(f) for f in FORMATS)
        raise InvalidParameterError(
            f"The 'fmt' parameter of read_graph must be one of {choices} or None. Got {fmt!r} instead."
        )
    if weighted is not None and not isinstance(weighted, (bool, np.bool_)):
        raise InvalidParameterError(
            "The 'weighted' parameter of read_graph must be True, False or None. "
            f"Got {weighted!r} instead."
        )
    if not isinstance(keep_all_components, (bool, np.bool_)):
        raise InvalidParameterError(
            "The 'keep_all_components' parameter of read_graph must be a bool. "
            f"Got {keep_all_components!r} instead."
        )
    if name is not None and not isinstance(name, str):
        raise InvalidParameterError(
            f"The 'name' parameter of read_graph must be a str or None. Got {name!r} instead."
        )
    return fmt, (None if weighted is None else bool(weighted))
