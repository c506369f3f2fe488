"""Readers for graphs (edge lists, Matrix Market, graph objects) and dissimilarity
matrices, and the writers that put a clustering back on a graph.

The readers are imported on first use (they load pandas and scipy); :data:`FORMATS` is
available without them.
"""

import importlib

from metricopt._choices import FORMATS

__all__ = ["FORMATS", "EXPORT_FORMATS", "detect_format", "read_dissimilarity", "read_graph",
           "read_input", "clusters_by_label", "to_networkx", "write_export"]

_LAZY = {
    "detect_format": "metricopt.io.graphs",
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
