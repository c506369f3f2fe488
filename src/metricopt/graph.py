"""In-memory graph and dissimilarity types used by every other module.

A :class:`Graph` is always simple and undirected: nodes are ``0..n-1`` internally,
``labels[i]`` is the node's label in the input file (or the node itself, for a graph
object such as a networkx graph), and each edge is stored once as
``(u, v)`` with ``u < v``, sorted lexicographically.
"""

import os
from dataclasses import dataclass, field
from typing import Any, TypeAlias, Union

import numpy as np

__all__ = ["Graph", "Dissimilarity", "GraphSource"]


@dataclass(eq=False)
class Graph:
    """A simple undirected graph with optional edge weights.

    Parameters
    ----------
    n : int
        Number of nodes.
    edges : ndarray of shape (m, 2), dtype int64
        Each edge once, ``edges[:, 0] < edges[:, 1]``, sorted lexicographically.
    labels : ndarray of shape (n,), dtype object
        Original node labels (strings as read from a file; the nodes of a graph object,
        the row numbers of a matrix).
    weights : ndarray of shape (m,) or None
        Edge weights when the input carried them (signed for correlation clustering,
        positive dissimilarities for metric nearness); ``None`` for unweighted input.
    name : str
        A short name (the file stem or dataset name).
    summary : dict
        What pre-processing did (input nodes/edges, self-loops and duplicates dropped,
        components dropped); see :func:`metricopt.io.read_graph`.
    """

    n: int
    edges: np.ndarray
    labels: np.ndarray
    weights: np.ndarray | None = None
    name: str = "graph"
    summary: dict = field(default_factory=dict)

    def __post_init__(self):
        self.edges = np.ascontiguousarray(self.edges, dtype=np.int64).reshape(-1, 2)
        if self.weights is not None:
            self.weights = np.ascontiguousarray(self.weights, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=object)

    @property
    def m(self):
        """Number of edges."""
        return int(self.edges.shape[0])

    @property
    def is_signed(self):
        """True when the graph has weights and at least one is negative."""
        return self.weights is not None and bool(np.any(self.weights < 0))

    def adjacency(self, weighted=False):
        """Symmetric CSR adjacency matrix (entries 1, or the weights if ``weighted``)."""
        u, v = self.edges[:, 0], self.edges[:, 1]
        data = self.weights if (weighted and self.weights is not None) else np.ones(self.m)
        import scipy.sparse as sp

        a = sp.coo_matrix(
            (np.concatenate([data, data]), (np.concatenate([u, v]), np.concatenate([v, u]))),
            shape=(self.n, self.n),
        )
        return a.tocsr()

    def degrees(self):
        """Node degrees, shape (n,)."""
        return np.bincount(self.edges.ravel(), minlength=self.n)

    def __repr__(self):
        kind = "signed" if self.is_signed else ("weighted" if self.weights is not None else "unweighted")
        return f"Graph(name={self.name!r}, n={self.n}, m={self.m}, {kind})"


@dataclass(eq=False)
class Dissimilarity:
    """A dense symmetric dissimilarity matrix for metric nearness.

    Parameters
    ----------
    values : ndarray of shape (n, n)
        Symmetric, finite, non-negative; the diagonal is ignored.
    labels : ndarray of shape (n,), dtype object
    weights : ndarray of shape (n, n) or None
        Optional positive weights (default: all ones).
    name : str
    summary : dict
    """

    values: np.ndarray
    labels: np.ndarray
    weights: np.ndarray | None = None
    name: str = "matrix"
    summary: dict = field(default_factory=dict)

    def __post_init__(self):
        self.values = np.ascontiguousarray(self.values, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=object)

    @property
    def n(self):
        return int(self.values.shape[0])

    def __repr__(self):
        return f"Dissimilarity(name={self.name!r}, n={self.n})"


#: What :func:`metricopt.read_graph` and :func:`metricopt.build_problem` take: a path, a
#: bundled dataset's name, ``"-"`` (standard input), a :class:`Graph` or
#: :class:`Dissimilarity`, or a graph object in memory (networkx, igraph, scipy.sparse,
#: numpy, pandas; ``Any``, as most of these libraries ship no types).
GraphSource: TypeAlias = Union[str, "os.PathLike[str]", Graph, Dissimilarity, Any]
