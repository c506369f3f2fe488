"""Datasets: small graphs bundled with the package.

>>> from metricopt.datasets import load_bundled
>>> load_bundled("karate").n
34
"""

from metricopt.datasets._bundled import bundled_names, bundled_path

__all__ = ["bundled_names", "bundled_path", "load_bundled"]


def load_bundled(name, **read_graph_kwargs):
    """Read a bundled dataset as a :class:`~metricopt.graph.Graph`.

    Parameters
    ----------
    name : str
        One of :func:`bundled_names`.
    **read_graph_kwargs
        Passed to :func:`metricopt.io.read_graph` (``name`` defaults to the dataset name).

    Returns
    -------
    Graph
    """
    from metricopt.io import read_graph  # metricopt.io imports this package

    read_graph_kwargs.setdefault("name", name)
    return read_graph(bundled_path(name), **read_graph_kwargs)


# Registry of downloadable graphs (SNAP, SuiteSparse, Newman netdata) and the fetch cache;
# the fetching code (urllib, archives, numpy) is imported on first use.
from metricopt.datasets._registry import (  # noqa: E402
    Dataset,
    cache_dir,
    cached_path,
    dataset_names,
    get_dataset,
    registry,
    resolve_dataset,
)

_FETCH_NAMES = ("DatasetError", "DownloadError", "FetchResult", "VerificationError", "fetch")


def __getattr__(name):
    if name not in _FETCH_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module("metricopt.datasets._fetch"), name)
    globals()[name] = value
    return value


__all__ += [
    "Dataset",
    "DatasetError",
    "DownloadError",
    "FetchResult",
    "VerificationError",
    "cache_dir",
    "cached_path",
    "dataset_names",
    "fetch",
    "get_dataset",
    "registry",
    "resolve_dataset",
]
