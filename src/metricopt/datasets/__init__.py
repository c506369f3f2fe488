"""Datasets: small graphs bundled with the package, a registry of public graphs to fetch,
and seeded generators of graphs shaped like them.

The bundled files are read by :mod:`metricopt.io`; this package registers with it how a
dataset name resolves to a file (bundled, else fetched into the cache), so that
``read_graph("karate")`` works. The modules behind the names below are imported on
first use, so ``import metricopt`` (which imports this package) stays quick.

>>> from metricopt.datasets import load_bundled
>>> load_bundled("karate").n
34
"""

import importlib

from metricopt.io._names import register_name_lookup

_BUNDLED = ("bundled_names", "bundled_path")
# registry of downloadable graphs (SNAP, SuiteSparse, Newman netdata) and the fetch cache
_REGISTRY = ("Dataset", "cache_dir", "cached_path", "dataset_names", "get_dataset", "registry",
             "resolve_dataset")
_FETCH = ("DatasetError", "DownloadError", "FetchResult", "VerificationError", "fetch")
# seeded generators of graphs shaped like SNAP networks
_SYNTHETIC = ("community_graph", "graph_statistics")
_LAZY = {
    **{name: "metricopt.datasets._bundled" for name in _BUNDLED},
    **{name: "metricopt.datasets._registry" for name in _REGISTRY},
    **{name: "metricopt.datasets._fetch" for name in _FETCH},
    **{name: "metricopt.datasets._synthetic" for name in _SYNTHETIC},
}

__all__ = ["load_bundled", *_BUNDLED, *sorted(_REGISTRY + _FETCH + _SYNTHETIC)]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)


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
    from metricopt.datasets._bundled import bundled_path
    from metricopt.io import read_graph

    read_graph_kwargs.setdefault("name", name)
    return read_graph(bundled_path(name), **read_graph_kwargs)


def _find_dataset(name):
    """A bundled copy of dataset ``name``, else a fetched copy in the cache, else None.

    A registered dataset that has not been fetched yet raises an error that says how
    to fetch it.
    """
    from metricopt.datasets._bundled import find_bundled
    from metricopt.datasets._registry import dataset_names, resolve_dataset
    from metricopt.exceptions import InputError

    found = find_bundled(name) or resolve_dataset(name)
    if found is None and name in dataset_names():
        raise InputError(
            f"dataset {name!r} is not downloaded yet; run: metricopt datasets fetch {name} "
            f"(or, offline: metricopt datasets fetch {name} --from FILE)"
        )
    return found


def _bundled_names():
    from metricopt.datasets._bundled import bundled_names

    return bundled_names()


register_name_lookup(_find_dataset, _bundled_names)
