"""Readers for graphs (edge lists, Matrix Market) and dissimilarity matrices.

The readers are imported on first use (they load pandas and scipy); :data:`FORMATS` is
available without them.
"""

import importlib

from metricopt._choices import FORMATS

__all__ = ["FORMATS", "detect_format", "read_dissimilarity", "read_graph"]

_LAZY = ("detect_format", "read_dissimilarity", "read_graph")


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("metricopt.io.graphs"), name)
    globals()[name] = value
    return value
