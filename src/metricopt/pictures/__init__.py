"""Pictures of the answer: the clustering (or cut) a run found, and its certificate.

:func:`plot_clusters` draws them for a run outcome, a fitted estimator or a run
directory and writes each as PNG and SVG (atomically) into the run directory or a given
one:

``clusters-matrix``
    the adjacency (signed weight) matrix, rows and columns ordered by cluster, cluster
    blocks outlined, binned to at most 600 x 600 pixels (memory ``O(m)`` at any ``n``);
``clusters-sizes`` (``cc``, ``cd``) or ``cut-sides`` (``sc``)
    the distribution of cluster sizes, or the cut's two sides with its sparsity and
    conductance;
``certificate``
    lower bound, LP value, rounded and refined objective on one axis, with the
    certified ratio (:func:`certificate_figure` compares several runs);
``clusters-network``
    a node-link drawing coloured by cluster (seeded spring layout), for graphs of at most
    :data:`MAX_NODES` nodes; above that a :class:`~metricopt.exceptions.MetricOptWarning`
    says so and the matrix picture stands in for it.

The ``*_figure`` functions return the matplotlib figures (Agg canvas, pyplot untouched)
for an :class:`Answer` (see :func:`answer_of`).
"""

import warnings
from pathlib import Path

from ..exceptions import InputError, MetricOptWarning
from ._answer import Answer, answer_of, read_run
from ._certificate import certificate_figure, certificate_values
from ._matrix import binned_matrix, cluster_order, matrix_figure
from ._network import MAX_NODES, network_figure
from ._save import FORMATS, png_bytes, save_figure
from ._sizes import cut_figure, cut_measures, sizes_figure

__all__ = ["Answer", "answer_of", "read_run", "plot_clusters", "cluster_figures",
           "matrix_figure", "sizes_figure", "cut_figure", "cut_measures",
           "certificate_figure", "certificate_values", "network_figure", "cluster_order",
           "binned_matrix", "PICTURES", "MAX_NODES", "png_bytes"]

#: The pictures of an answer, by file stem.
PICTURES = ("clusters-matrix", "clusters-sizes", "cut-sides", "certificate", "clusters-network")


def cluster_figures(answer, *, seed=0, max_nodes=MAX_NODES):
    """Yield ``(stem, figure)`` for each picture of an answer (see the module docstring).

    A graph above ``max_nodes`` nodes gets no node-link drawing: a
    :class:`~metricopt.exceptions.MetricOptWarning` says so.
    """
    yield "clusters-matrix", matrix_figure(answer)
    if answer.kind == "sc":
        yield "cut-sides", cut_figure(answer)
    else:
        yield "clusters-sizes", sizes_figure(answer)
    yield "certificate", certificate_figure([(answer.name, answer.report)])
    try:
        yield "clusters-network", network_figure(answer, seed=seed, max_nodes=max_nodes)
    except InputError as exc:
        warnings.warn(f"no node-link drawing: {exc}", MetricOptWarning, stacklevel=3)


def plot_clusters(result, out=None, *, graph=None, formats=FORMATS, dpi=100, seed=0,
                  max_nodes=MAX_NODES):
    """Draw the pictures of a run's answer and write them as PNG and SVG.

    Parameters
    ----------
    result : RunOutcome, fitted estimator, Answer, str or os.PathLike
        What :func:`metricopt.pipeline.run` returned, an estimator after ``fit``, or a
        run directory.
    out : str or os.PathLike or None, default=None
        Directory for the files. Default: the run directory (of a directory given, or of
        an outcome written with ``out``); required otherwise.
    graph : str, os.PathLike, object or None, default=None
        For a run directory: the graph, when the one its report names cannot be read.
    formats : sequence of {"png", "svg"}, default=("png", "svg")
    dpi : int, default=100
    seed : int, default=0
        Seed of the node-link layout.
    max_nodes : int, default=MAX_NODES
        Largest graph drawn as nodes and links.

    Returns
    -------
    dict of str to list of pathlib.Path
        Picture stem (:data:`PICTURES`) -> the files written.

    Raises
    ------
    InputError
        A run without a clustering or cut, a graph that cannot be read, or no ``out``.
    """
    answer = answer_of(result, graph=graph)
    if out is None:
        if isinstance(result, (str, Path)) or hasattr(result, "__fspath__"):
            out = result
        else:
            out = getattr(getattr(result, "result_", result), "out", None)
    if out is None:
        raise InputError("give a directory for the pictures (out=...)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for stem, fig in cluster_figures(answer, seed=seed, max_nodes=max_nodes):
        written[stem] = save_figure(fig, out / stem, formats, dpi)
    return written
