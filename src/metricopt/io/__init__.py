"""Readers for graphs (edge lists, Matrix Market, GML, Pajek, MATLAB, graph objects) and
dissimilarity matrices, one table of formats (:data:`READERS`); the writers of run
outputs (:mod:`metricopt.io.reports`, which also holds the ``report.json`` schema) and
those that put a clustering back on a graph.

io sits below :mod:`metricopt.datasets`, which registers how a dataset name resolves to a
file (:mod:`metricopt.io._names`), and never imports it.

The readers are imported on first use (they load pandas and scipy); :data:`FORMATS` is
available without them.
"""

import importlib

from metricopt._choices import FORMATS

__all__ = ["FORMATS", "READERS", "EXPORT_FORMATS", "detect_format", "read_dissimilarity", "read_graph",
           "read_input", "clusters_by_label", "to_networkx", "write_export"]

_LAZY = {
    "READERS": "metricopt.io._readers",
    "detect_format": "metricopt.io._readers",
    "read_dissimilarity": "metricopt.io.graphs",
    "read_graph": "metricopt.io.graphs",
    "read_input": "metricopt.io.graphs",
    "EXPORT_FORMATS": "metricopt.io.exports",
    "clusters_by_label": "metricopt.io.exports",
    "to_networkx": "metricopt.io.exports",
    "write_export": "metricopt.io.exports",
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
