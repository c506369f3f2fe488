"""Readers for graphs (edge lists, Matrix Market) and dissimilarity matrices."""

from metricopt.io.graphs import FORMATS, detect_format, read_dissimilarity, read_graph

__all__ = ["FORMATS", "detect_format", "read_dissimilarity", "read_graph"]
