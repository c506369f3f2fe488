"""Turning raw edge entries into a simple undirected graph (V §8.2).

Self-loops are dropped, duplicate and reciprocal entries merged (weights averaged; pairs
whose entries disagree are counted in the summary and announced by a warning), and by
default only the largest connected component is kept.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from metricopt.exceptions import InputError, MetricOptWarning
from metricopt.graph import Graph

__all__ = ["build_graph"]


def build_graph(
    records, path, *, keep_all_components=False, name="graph", fmt="edgelist", gzipped=False
):
    """Pre-process parsed entries into a :class:`~metricopt.graph.Graph`.

    Parameters
    ----------
    records : Records
        Parsed entries (see ``metricopt.io._records``).
    path : str or Path
        The input file, used in error messages and the summary.
    keep_all_components : bool, default=False
        Keep every component instead of the largest one.
    name : str, default="graph"
    fmt : str, default="edgelist"
    gzipped : bool, default=False

    Returns
    -------
    Graph
    """
    if records.n_lines == 0:
        raise InputError(f"{path}: no edges found")
    n = records.n
    loops = records.src == records.dst
    weights = None if records.weights is None else records.weights[~loops]
    edges, weights, n_entries, conflicts, opposite = _merge(records.src[~loops],
                                                            records.dst[~loops], weights, n)
    if len(edges) == 0:
        raise InputError(f"{path}: the largest connected component has only one node")
    n_comp, comp = connected_components(_adjacency(edges, n), directed=False)
    keep = np.ones(n, dtype=bool) if keep_all_components else comp == _largest(comp)
    kept_edges, kept_weights, kept_n = _restrict(edges, weights, keep)
    summary = {
        "path": str(path),
        "format": fmt,
        "gzip": bool(gzipped),
        "weighted": weights is not None,
        "input_lines": int(records.n_lines),
        "input_nodes": int(n),
        "input_edges": int(len(edges)),
        "self_loops": int(loops.sum()),
        "duplicates": int(n_entries - len(edges)),
        "conflicting_duplicates": conflicts,
        "opposite_sign_duplicates": opposite,
        "components": int(n_comp),
        "kept_nodes": int(kept_n),
        "kept_edges": int(len(kept_edges)),
        "dropped_nodes": int(n - kept_n),
        "dropped_edges": int(len(edges) - len(kept_edges)),
        "keep_all_components": bool(keep_all_components),
    }
    summary["message"] = _message(summary)
    if conflicts:
        signs = f", {opposite} of them with opposite signs" if opposite else ""
        warnings.warn(f"{path}: {_plural(conflicts, 'pair')} listed more than once with "
                      f"different weights{signs}; each pair gets the mean of its weights",
                      MetricOptWarning, stacklevel=3)
    return Graph(kept_n, kept_edges, records.labels[keep], kept_weights, name=name, summary=summary)


def _merge(src, dst, weights, n):
    """Unique pairs ``u < v`` sorted lexicographically; weights averaged per pair.

    Returns the edges, their weights, the number of entries, and the numbers of pairs
    whose entries disagree: with different weights, and with weights of opposite signs.
    """
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keys, inverse, counts = np.unique(lo * np.int64(n) + hi, return_inverse=True, return_counts=True)
    edges = np.column_stack([keys // n, keys % n]).astype(np.int64)
    conflicts = opposite = 0
    if weights is not None:
        inverse = inverse.ravel()
        mean = np.bincount(inverse, weights=weights, minlength=len(keys)) / counts
        high = np.full(len(keys), -np.inf)
        low = np.full(len(keys), np.inf)
        np.maximum.at(high, inverse, weights)
        np.minimum.at(low, inverse, weights)
        conflicts = int(np.count_nonzero(high != low))
        opposite = int(np.count_nonzero((low < 0) & (high > 0)))
        weights = mean
    return edges, weights, len(src), conflicts, opposite


def _adjacency(edges, n):
    ones = np.ones(len(edges), dtype=np.int8)
    return sp.csr_matrix((ones, (edges[:, 0], edges[:, 1])), shape=(n, n))


def _largest(comp):
    """The largest component; ties go to the one holding the smallest node id."""
    sizes = np.bincount(comp)
    return comp[np.argmax(sizes[comp] == sizes.max())]


def _restrict(edges, weights, keep):
    new_id = np.cumsum(keep) - 1
    mask = keep[edges[:, 0]]
    kept = new_id[edges[mask]]
    return kept, (None if weights is None else weights[mask]), int(keep.sum())


def _plural(count, word, plural=None):
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _message(s):
    read = s["input_lines"] - s["duplicates"]
    loops, pairs = _plural(s["self_loops"], "self-loop"), _plural(s["duplicates"], "duplicate pair")
    dropped = f"{loops} and {pairs}"
    kept = f"{_plural(s['kept_nodes'], 'node')}, {_plural(s['kept_edges'], 'edge')}"
    if s["components"] == 1:
        which = "the single component"
    elif s["keep_all_components"]:
        which = f"all {s['components']} components"
    else:
        which = f"the largest of {s['components']} components"
    conflicting = ""
    if s.get("conflicting_duplicates"):
        conflicting = (f" ({s['conflicting_duplicates']} with different weights, averaged"
                       + (f"; {s['opposite_sign_duplicates']} of opposite signs"
                          if s.get("opposite_sign_duplicates") else "") + ")")
    return (
        f"read {_plural(s['input_nodes'], 'node')} and {_plural(read, 'edge')}; "
        f"dropped {dropped}{conflicting}; kept {which} ({kept})"
    )
