"""A clustering or cut as a mapping, on a networkx graph, and in GraphML or GEXF files.

The rounding of a problem numbers its nodes ``0..n-1``; these functions give the answer
back under the node labels of the input (a file's labels, a graph object's nodes).
"""

import io
from pathlib import Path

import numpy as np

from metricopt.exceptions import InvalidParameterError, UnsupportedProblemError

__all__ = ["EXPORT_FORMATS", "clusters_by_label", "to_networkx", "export_format", "write_export"]

#: File formats of :func:`write_export`: name -> the suffix that selects it.
EXPORT_FORMATS = {"graphml": ".graphml", "gexf": ".gexf"}


def _values(problem, rounding):
    """Per-node values of the answer (cluster id, or 1 for the side S of a cut) and the
    attribute name they are written under by default."""
    if problem.kind == "mn":
        raise UnsupportedProblemError("metric nearness has no clustering: its answer is the "
                                      "metric itself (the solve result's x)")
    if problem.kind == "sc":
        if not hasattr(rounding, "get") or rounding.get("in_cut") is None:
            raise InvalidParameterError("The 'rounding' parameter must be the rounding of a "
                                        "sparsest-cut problem (with an 'in_cut' field).")
        values, default = rounding["in_cut"], "in_cut"
    else:
        values = rounding.get("labels") if hasattr(rounding, "get") else rounding
        default = "cluster"
    values = np.asarray(values)
    if values.shape != (problem.n,):
        raise InvalidParameterError(
            f"The 'rounding' parameter must assign one value to each of the problem's "
            f"{problem.n} nodes. Got shape {values.shape} instead.")
    return values.astype(np.int64), default


def clusters_by_label(problem, rounding):
    """The rounded answer as ``{node label: cluster}``.

    Parameters
    ----------
    problem : MetricProblem
        The problem that was rounded (its ``labels`` are the input's node labels).
    rounding : Rounding or array-like of shape (n,)
        From :func:`metricopt.round_solution`, or cluster ids in the problem's node order.

    Returns
    -------
    dict
        Node label -> integer cluster id (``cc``, ``cd``), or -> 1 for the nodes in the
        side ``S`` of the cut and 0 for the others (``sc``, as in ``cut.csv``). Nodes
        that pre-processing dropped (other components) are absent.

    Raises
    ------
    UnsupportedProblemError
        For metric nearness, which has no clustering.

    Examples
    --------
    >>> import networkx as nx, metricopt
    >>> problem = metricopt.build_problem("cd", nx.barbell_graph(3, 0))
    >>> result = metricopt.solve(problem, method="highs")
    >>> rounding = metricopt.round_solution(problem, result, seed=0)
    >>> clusters_by_label(problem, rounding)
    {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 1}
    """
    values, _ = _values(problem, rounding)
    return {label: int(v) for label, v in zip(problem.labels, values)}


def to_networkx(problem, rounding, *, graph=None, attribute=None):
    """A networkx graph with the rounded answer as a node attribute.

    Parameters
    ----------
    problem : MetricProblem
    rounding : Rounding or array-like of shape (n,)
        As for :func:`clusters_by_label`.
    graph : networkx graph or None, default=None
        The graph to write the attribute on, in place (typically the graph the problem
        was read from; its nodes are the problem's labels). ``None``: a new
        ``networkx.Graph`` of the pre-processed graph: its nodes and edges, with the
        edge weights, if any, as the ``weight`` attribute.
    attribute : str or None, default=None
        Name of the node attribute; ``None``: ``"cluster"`` (``cc``, ``cd``) or
        ``"in_cut"`` (``sc``, 1 for the side ``S``).

    Returns
    -------
    networkx.Graph
        ``graph`` itself when given. Its nodes that pre-processing dropped get no
        attribute.

    Raises
    ------
    InvalidParameterError
        If ``graph`` is given and lacks a node of the problem.
    """
    import networkx as nx

    values, default = _values(problem, rounding)
    attribute = default if attribute is None else attribute
    if not isinstance(attribute, str) or not attribute:
        raise InvalidParameterError(
            f"The 'attribute' parameter of to_networkx must be a non-empty str or None. "
            f"Got {attribute!r} instead.")
    if graph is None:
        graph = _pre_processed(problem, nx)
    else:
        absent = [lab for lab in problem.labels if lab not in graph]
        if absent:
            raise InvalidParameterError(
                f"The 'graph' parameter of to_networkx lacks {len(absent)} of the problem's "
                f"nodes (first: {absent[0]!r}); pass the graph the problem was read from.")
    nx.set_node_attributes(graph, {lab: int(v) for lab, v in zip(problem.labels, values)},
                           attribute)
    return graph


def _pre_processed(problem, nx):
    graph = nx.Graph(name=problem.name)
    graph.add_nodes_from(problem.labels)
    data = problem.graph
    if data is None or not hasattr(data, "edges"):
        return graph
    u, v = data.labels[data.edges[:, 0]], data.labels[data.edges[:, 1]]
    if data.weights is None:
        graph.add_edges_from(zip(u, v))
    else:
        graph.add_weighted_edges_from(zip(u, v, data.weights.tolist()))
    return graph


def export_format(path):
    """The export format of ``path`` from its suffix (``.graphml``, ``.gexf``, either
    optionally followed by ``.gz``), or ``None`` when the suffix names none."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for fmt, suffix in EXPORT_FORMATS.items():
        if name.endswith(suffix):
            return fmt
    return None


def write_export(path, problem, rounding, *, attribute=None):
    """Write the pre-processed graph with the answer as a node attribute.

    Parameters
    ----------
    path : str or os.PathLike
        Ends in ``.graphml`` or ``.gexf`` (networkx's writers; ``.gz`` compresses). Node
        ids are the labels as strings; edges carry ``weight`` when the graph has weights.
    problem : MetricProblem
    rounding : Rounding or array-like of shape (n,)
    attribute : str or None, default=None
        As for :func:`to_networkx`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InvalidParameterError
        If the suffix names no export format.
    """
    import gzip

    import networkx as nx

    from metricopt.io.reports import atomic_write

    fmt = export_format(path)
    if fmt is None:
        raise InvalidParameterError(
            f"cannot tell the export format of {str(path)!r}: use a name ending in "
            f"{' or '.join(EXPORT_FORMATS.values())} (optionally .gz)")
    graph = to_networkx(problem, rounding, attribute=attribute)
    buf = io.BytesIO()
    (nx.write_graphml if fmt == "graphml" else nx.write_gexf)(graph, buf)
    data = buf.getvalue()
    path = Path(path)
    if path.name.lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return path
