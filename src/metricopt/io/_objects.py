"""In-memory inputs: graph objects, adjacency matrices, edge tables, distance arrays.

Each reader turns an object into the same :class:`~metricopt.io._records.Records` the file
parsers produce (one entry per edge as given, before any merging), so that
:func:`~metricopt.io._preprocess.build_graph` applies the same pre-processing, summary and
warnings to every input. Errors start with a short name of the object (``"networkx
graph"``, ``"scipy.sparse matrix"``, ...) where a file's errors start with its path.

networkx, pandas and scipy are dependencies of metricopt; igraph is not, and is only
recognised (never imported) here: an igraph graph brings its own module.
"""

import math
import numbers
import warnings

import numpy as np

from metricopt.exceptions import InputError, InvalidParameterError, MetricOptWarning
from metricopt.io._records import Records

__all__ = ["object_kind", "describe_object", "records_from_object", "dissimilarity_values"]

#: Kind of in-memory input -> the name its errors and the summary use.
_WHERE = {
    "networkx": "networkx graph",
    "igraph": "igraph graph",
    "scipy.sparse": "scipy.sparse matrix",
    "numpy": "numpy array",
    "pandas": "pandas DataFrame",
}

#: Columns of an edge table.
SOURCE, TARGET = "source", "target"


def object_kind(obj):
    """The kind of an in-memory input, or ``None`` when ``obj`` is not one.

    Returns
    -------
    {"networkx", "igraph", "scipy.sparse", "numpy", "pandas"} or None
    """
    module = type(obj).__module__ or ""
    root = module.split(".")[0]
    if root == "networkx" and hasattr(obj, "edges") and hasattr(obj, "nodes"):
        return "networkx"
    if root == "igraph" and hasattr(obj, "get_edgelist"):
        return "igraph"
    if root == "pandas" and hasattr(obj, "columns"):
        return "pandas"
    if root == "scipy" and hasattr(obj, "tocoo"):
        return "scipy.sparse"
    if isinstance(obj, np.ndarray):
        return "numpy"
    return None


def describe_object(kind):
    """The name of an input of ``kind`` in messages and in ``Graph.summary["path"]``."""
    return _WHERE[kind]


def records_from_object(obj, kind, *, weight="weight", weighted=None):
    """Edge entries of an in-memory graph, before pre-processing.

    Parameters
    ----------
    obj : networkx graph, igraph graph, scipy.sparse matrix, ndarray or DataFrame
    kind : str
        From :func:`object_kind`.
    weight : str or None, default="weight"
        Edge attribute (networkx, igraph) or column (DataFrame) holding the weights;
        ``None``: the graph is unweighted. Ignored for matrices (the entries are the
        weights).
    weighted : bool or None, default=None
        As for :func:`metricopt.io.read_graph`: ``None`` keeps the weights the input
        has, ``True`` keeps them (unit weights when it has none), ``False`` drops them.

    Returns
    -------
    Records
    name : str or None
        The object's own name (a networkx graph's ``name``), if it has one.
    """
    where = _WHERE[kind]
    if kind == "networkx":
        records, name = _from_networkx(obj, where, weight), (obj.graph.get("name") or None)
    elif kind == "igraph":
        records, name = _from_igraph(obj, where, weight), None
    elif kind == "pandas":
        records, name = _from_frame(obj, where, weight), None
    else:
        records, name = _from_matrix(obj, kind, where), None
    records.weights = _choose(records, weighted, kind)
    return records, (name if isinstance(name, str) else None)


def _choose(records, weighted, kind):
    """Apply ``weighted``; a 0/1 adjacency matrix counts as unweighted."""
    weights = records.weights
    if weighted is False:
        return None
    if weights is None:
        return np.ones(records.n_lines) if weighted is True else None
    if weighted is None and kind in ("scipy.sparse", "numpy") and np.all(weights == 1.0):
        return None
    return weights


# ------------------------------------------------------------------ node labels
def _is_integer(label):
    return isinstance(label, numbers.Integral) and not isinstance(label, (bool, np.bool_))


def _node_order(nodes):
    """Positions of ``nodes`` in internal order: numeric when every label is an integer
    (as for files), else the given order."""
    if len(nodes) and all(_is_integer(x) for x in nodes):
        return sorted(range(len(nodes)), key=lambda i: int(nodes[i]))
    return list(range(len(nodes)))


def _relabel(nodes):
    """The internal id of each position of ``nodes``, and the labels in internal order."""
    order = np.asarray(_node_order(nodes), dtype=np.int64)
    rank = np.empty(len(nodes), dtype=np.int64)
    rank[order] = np.arange(len(nodes), dtype=np.int64)
    labels = np.empty(len(nodes), dtype=object)
    labels[:] = [nodes[i] for i in order]
    return rank, labels


def _encode(nodes, us, vs):
    """Internal ids of the endpoints ``us``, ``vs`` of the edges, and the labels."""
    rank, labels = _relabel(nodes)
    index = {node: int(r) for node, r in zip(nodes, rank)}
    src = np.fromiter((index[u] for u in us), dtype=np.int64, count=len(us))
    dst = np.fromiter((index[v] for v in vs), dtype=np.int64, count=len(vs))
    return src, dst, labels


def _check_unique(nodes, where):
    if len(set(nodes)) != len(nodes):
        raise InputError(f"{where}: node names are not unique")


# ------------------------------------------------------------------ weights
def _weight_value(value, where, what):
    """A weight as a float; a one-line error naming the edge otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, str)):
        raise InputError(f"{where}: {what}: weight {value!r} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{where}: {what}: weight {value!r} is not a number") from None
    if not math.isfinite(number):
        raise InputError(f"{where}: {what}: weight is not finite ({number})")
    return number


def _attribute_weights(values, edges, where, weight):
    """Weights from per-edge attribute values (``None`` where an edge has none).

    An attribute that no edge has gives ``None``; edges without it among edges with it
    get weight 1, announced by a warning (as networkx reads them).
    """
    missing = sum(v is None for v in values)
    if missing == len(values):
        return None
    out = np.empty(len(values), dtype=np.float64)
    for k, (value, (u, v)) in enumerate(zip(values, edges)):
        out[k] = 1.0 if value is None else _weight_value(value, where, f"edge ({u!r}, {v!r})")
    if missing:
        edge_word = "edge has" if missing == 1 else "edges have"
        warnings.warn(f"{where}: {missing} {edge_word} no {weight!r} attribute; weight 1 used "
                      f"for {'it' if missing == 1 else 'them'}", MetricOptWarning, stacklevel=5)
    return out


# ------------------------------------------------------------------ readers
def _from_networkx(graph, where, weight):
    nodes = list(graph.nodes)
    if weight is None:
        edges = [(u, v) for u, v in graph.edges()]
        values = None
    else:
        triples = list(graph.edges(data=weight, default=None))
        edges = [(u, v) for u, v, _ in triples]
        values = [w for _, _, w in triples]
    src, dst, labels = _encode(nodes, [u for u, _ in edges], [v for _, v in edges])
    weights = None if values is None else _attribute_weights(values, edges, where, weight)
    return Records(src, dst, labels, weights, len(edges))


def _from_igraph(graph, where, weight):
    n = graph.vcount()
    nodes = graph.vs["name"] if "name" in graph.vs.attributes() else list(range(n))
    _check_unique(nodes, where)
    edges = graph.get_edgelist()
    rank, labels = _relabel(nodes)
    ends = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    src, dst = rank[ends[:, 0]], rank[ends[:, 1]]
    weights = None
    if weight is not None and weight in graph.es.attributes():
        named = [(nodes[u], nodes[v]) for u, v in edges]
        weights = _attribute_weights(list(graph.es[weight]), named, where, weight)
    return Records(src, dst, labels, weights, len(edges))


def _from_frame(frame, where, weight):
    import pandas as pd

    missing = [c for c in (SOURCE, TARGET) if c not in frame.columns]
    if missing:
        columns = ", ".join(repr(str(c)) for c in frame.columns) or "none"
        raise InputError(f"{where}: needs the columns 'source' and 'target' (and optionally "
                         f"{weight!r} for the weights); it has {columns}")
    u = frame[SOURCE].to_numpy(dtype=object)
    v = frame[TARGET].to_numpy(dtype=object)
    both = np.empty(2 * len(u), dtype=object)
    both[0::2], both[1::2] = u, v
    absent = pd.isna(both)
    if absent.any():
        row = frame.index[int(np.argmax(absent)) // 2]
        raise InputError(f"{where}, row {row!r}: missing node name")
    codes, uniques = pd.factorize(both)
    rank, labels = _relabel(list(uniques))
    codes = rank[codes]
    weights = None
    if weight is not None and weight in frame.columns:
        weights = _column_weights(frame, weight, where)
    return Records(codes[0::2].copy(), codes[1::2].copy(), labels, weights, len(u))


def _column_weights(frame, column, where):
    import pandas as pd

    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.argmax(bad))
        row, value = frame.index[k], raw.iloc[k]
        if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, bool):
            raise InputError(f"{where}, row {row!r}: weight is not finite ({float(value)})")
        raise InputError(f"{where}, row {row!r}: weight {value!r} is not a number")
    return values


def _from_matrix(matrix, kind, where):
    """Edges from the nonzero entries of a square adjacency matrix.

    A symmetric matrix gives each edge once (its upper triangle, diagonal included);
    any other matrix gives one entry per nonzero, and the pre-processing merges the
    two entries of a pair as for an edge list's reciprocal lines.
    """
    import scipy.sparse as sp

    shape = matrix.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"{where}: expected a square adjacency matrix, got shape {tuple(shape)}")
    if kind == "numpy" and matrix.dtype.kind not in "biuf":
        raise InputError(f"{where}: expected a real numeric matrix, got dtype {matrix.dtype}")
    coo = sp.coo_matrix(matrix, dtype=np.float64)
    coo.sum_duplicates()
    coo.eliminate_zeros()
    bad = ~np.isfinite(coo.data)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{where}: entry [{coo.row[k]}, {coo.col[k]}] is not finite "
                         f"({coo.data[k]})")
    csr = coo.tocsr()
    if (csr != csr.T).nnz == 0:
        coo = sp.triu(csr, format="coo")
    row = coo.row.astype(np.int64)
    col = coo.col.astype(np.int64)
    order = np.lexsort((col, row))
    labels = np.empty(shape[0], dtype=object)
    labels[:] = list(range(shape[0]))
    return Records(row[order], col[order], labels, coo.data[order].astype(np.float64),
                   int(len(order)))


# ------------------------------------------------------------------ distances
def dissimilarity_values(obj, kind):
    """A square float matrix from a dense array or a condensed distance vector.

    Parameters
    ----------
    obj : ndarray
        A square 2-D array, or the condensed 1-D form of
        :func:`scipy.spatial.distance.pdist` (length ``n (n - 1) / 2``).
    kind : str
        From :func:`object_kind`.

    Returns
    -------
    values : ndarray of shape (n, n)
    where : str
    """
    if kind != "numpy":
        expected = "a numpy array (square, or condensed as from scipy.spatial.distance.pdist)"
        if kind == "scipy.sparse":
            expected += "; a scipy.sparse matrix is a weighted graph: use read_graph"
        raise InvalidParameterError(
            f"The 'path' parameter of read_dissimilarity must be a path or {expected}. "
            f"Got {_WHERE.get(kind, 'an object')} instead.")
    where = _WHERE[kind]
    if obj.dtype.kind not in "biuf":
        raise InputError(f"{where}: expected a real numeric matrix, got dtype {obj.dtype}")
    values = np.array(obj, dtype=np.float64)
    if values.ndim == 1:
        n = int(round((1 + math.sqrt(1 + 8 * values.size)) / 2))
        if n * (n - 1) // 2 != values.size or values.size == 0:
            raise InputError(f"{where}: a 1-D array must be a condensed distance vector of "
                             f"length n(n-1)/2; got length {values.size}")
        square = np.zeros((n, n))
        iu = np.triu_indices(n, 1)
        square[iu] = values
        square.T[iu] = values
        values = square
    if values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise InputError(f"{where}: expected a square matrix, got shape {tuple(values.shape)}")
    if values.shape[0] < 2:
        raise InputError(f"{where}: the matrix must be at least 2 x 2, got "
                         f"{values.shape[0]} x {values.shape[1]}")
    return values, where
