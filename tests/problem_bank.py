"""Reference problems with known optima, shared by the tests of every backend.

``BANK`` holds 3-6 node instances of every problem kind and structure whose LP/QP
optimum was derived by hand (the derivation is in each entry's ``why``); where the
optimal ``x`` is unique it is given too. ``BUNDLED_VALUES`` holds optima on the bundled
graphs: values published in the papers, and values computed by the exact HiGHS
backends (``highs`` and ``highs-lazy`` agree on them to 1e-9).

Use :func:`bank_problem` to build an instance and :func:`bundled_problem` for the
bundled graphs.
"""

import numpy as np

from metricopt.graph import Dissimilarity, Graph
from metricopt.io import read_graph
from metricopt.problems import build_problem

__all__ = [
    "BANK",
    "BUNDLED_GRAPHS",
    "BUNDLED_VALUES",
    "bank_problem",
    "bundled_graph",
    "bundled_problem",
    "make_graph",
    "make_matrix",
]


def make_graph(n, edges, weights=None, name="bank"):
    """A :class:`Graph` from an edge list ``[(u, v), ...]`` (any order, u != v)."""
    edges = np.array([sorted(e) for e in edges], dtype=np.int64).reshape(-1, 2)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
    return Graph(n=n, edges=edges[order], labels=np.array([str(i) for i in range(n)], dtype=object),
                 weights=w, name=name)


def make_matrix(values, weights=None, name="bank"):
    """A :class:`Dissimilarity` from a symmetric array."""
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    return Dissimilarity(values=values, labels=np.array([str(i) for i in range(n)], dtype=object),
                         weights=None if weights is None else np.asarray(weights, dtype=np.float64),
                         name=name)


def _sym(n, entries):
    a = np.zeros((n, n))
    for (i, j), v in entries.items():
        a[i, j] = a[j, i] = v
    return a


_STAR = [(0, 1), (0, 2), (0, 3)]  # K_{1,3}, centre 0
_P3 = [(0, 1), (1, 2)]
_C4 = [(0, 1), (1, 2), (2, 3), (0, 3)]
_BOWTIE = [(0, 1), (0, 2), (1, 2), (2, 3), (2, 4), (3, 4)]

#: name -> dict(kind, data (callable -> Graph/Dissimilarity), params, value, x (or None),
#: structure, why).
BANK = {
    "cc-unit-p3": dict(
        kind="cc", data=lambda: make_graph(3, _P3), params=dict(weights="unit"),
        structure="dense", value=1.0, x=None,
        why="cost x01 + x12 + 1 - x02 >= 1 because x02 <= x01 + x12; x = 0 attains it",
    ),
    "cc-unit-star": dict(
        kind="cc", data=lambda: make_graph(4, _STAR), params=dict(weights="unit"),
        structure="dense", value=1.5, x=np.array([0.5, 0.5, 0.5, 1.0, 1.0, 1.0]),
        why="with S = sum of edge values, the leaf-pair triangles give cost >= 3 - S and "
            "cost >= S, so >= 1.5; x = 1/2 on edges, 1 on leaf pairs attains it (unique)",
    ),
    "cc-signed-k4": dict(
        kind="cc", data=lambda: make_graph(4, _STAR + [(1, 2), (1, 3), (2, 3)], [1, 1, 1, -1, -1, -1]),
        params=dict(weights="signed"), structure="sparse", value=1.5, x=None,
        why="the signed form of cc-unit-star: every pair present",
    ),
    "cc-signed-k4-pendant": dict(
        kind="cc",
        data=lambda: make_graph(5, _STAR + [(1, 2), (1, 3), (2, 3), (1, 4)], [1, 1, 1, -1, -1, -1, 2.0]),
        params=dict(weights="signed"), structure="sparse", value=1.5, x=None,
        why="cc-signed-k4 plus a positive pendant edge on no cycle (x = 0 there); pairs "
            "(0,4), (2,4), (3,4) are absent",
    ),
    "cc-signed-c5": dict(
        kind="cc",
        data=lambda: make_graph(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)], [3, 3, 3, 3, -2]),
        params=dict(weights="signed"), structure="sparse", value=2.0, x=np.zeros(5),
        why="one negative edge (weight 2) on a 5-cycle of positive weight-3 edges: the "
            "cycle inequality gives 2 (1 - x04) + 3 sum(others) >= 2; x = 0 attains it",
    ),
    "sc-p3": dict(
        kind="sc", data=lambda: make_graph(3, _P3), params={}, structure="dense", value=1.5, x=None,
        why="3 = sum x <= 2 (x01 + x12); phi* = 3 * 1 / (1 * 2) = 1.5",
    ),
    "sc-c4": dict(
        kind="sc", data=lambda: make_graph(4, _C4), params={}, structure="dense", value=2.0, x=None,
        why="2 x02 <= E and 2 x13 <= E give 4 = sum x <= 2E; the cut {0,1} attains 2",
    ),
    "sc-star": dict(
        kind="sc", data=lambda: make_graph(4, _STAR), params={}, structure="dense", value=4.0 / 3.0,
        x=None,
        why="each leaf pair is at most the sum of its two edges, so 4 = sum x <= 3E",
    ),
    "sc-k4": dict(
        kind="sc", data=lambda: make_graph(4, _STAR + [(1, 2), (1, 3), (2, 3)]), params={},
        structure="dense", value=4.0, x=None,
        why="every pair is an edge, so the objective is sum x = n = 4",
    ),
    "cd-triangle": dict(
        kind="cd", data=lambda: make_graph(3, [(0, 1), (0, 2), (1, 2)]), params={}, structure="edges",
        value=0.0, x=np.zeros(3), why="a clique: no wedge, x = 0",
    ),
    "cd-p3": dict(
        kind="cd", data=lambda: make_graph(3, _P3), params={}, structure="edges", value=1.0, x=None,
        why="one wedge x01 + x12 >= 1",
    ),
    "cd-star": dict(
        kind="cd", data=lambda: make_graph(4, _STAR), params={}, structure="edges", value=1.5,
        x=np.array([0.5, 0.5, 0.5]),
        why="three wedges x_i + x_j >= 1 summed: 2 sum x >= 3",
    ),
    "cd-c4": dict(
        kind="cd", data=lambda: make_graph(4, _C4), params={}, structure="edges", value=2.0, x=None,
        why="four wedges, each edge in two of them: 2 sum x >= 4",
    ),
    "cd-bowtie": dict(
        kind="cd", data=lambda: make_graph(5, _BOWTIE), params={}, structure="edges", value=2.0,
        x=None,
        why="wedges (x02 + x23), (x12 + x24) >= 1 already give 2; deleting 23, 24 attains it",
    ),
    "mn1-matrix": dict(
        kind="mn", data=lambda: make_matrix(_sym(3, {(0, 1): 1, (0, 2): 1, (1, 2): 3}),
                                            _sym(3, {(0, 1): 2, (0, 2): 2, (1, 2): 1})),
        params=dict(p=1), structure="dense", value=1.0, x=np.array([1.0, 1.0, 2.0]),
        why="x12 <= x01 + x02 is violated by 1; moving x12 costs 1 per unit, the others 2",
    ),
    "mn1-matrix-inside": dict(
        kind="mn", data=lambda: make_matrix(_sym(4, {(0, 1): 0.5, (0, 2): 0.5, (1, 2): 2.5,
                                                    (0, 3): 1.0, (1, 3): 1.0, (2, 3): 1.0}),
                                            _sym(4, {(0, 1): 3, (0, 2): 3, (1, 2): 1,
                                                    (0, 3): 9, (1, 3): 9, (2, 3): 9})),
        params=dict(p=1), structure="dense", value=1.5,
        x=np.array([0.5, 0.5, 1.0, 1.0, 1.0, 1.0]),
        why="targets strictly inside the bounds (auxiliary |x - d| columns): x12 = 2.5 "
            "exceeds x01 + x02 = 1 and x13 + x23 = 2; lowering x12 costs 1 per unit, raising "
            "x01 or x02 costs 3 and x13 or x23 costs 9, so x12 -> 1 at cost 1.5 (unique)",
    ),
    "mn2-matrix": dict(
        kind="mn", data=lambda: make_matrix(_sym(3, {(0, 1): 1, (0, 2): 1, (1, 2): 3})),
        params=dict(p=2), structure="dense", value=1.0 / 3.0,
        x=np.array([4.0, 4.0, 8.0]) / 3.0,
        why="projection of d onto the half-space x12 <= x01 + x02: step 1/3 along (-1, -1, 1)",
    ),
    "mn2-matrix-weighted": dict(
        kind="mn", data=lambda: make_matrix(_sym(3, {(0, 1): 1, (0, 2): 1, (1, 2): 3}),
                                            _sym(3, {(0, 1): 1, (0, 2): 1, (1, 2): 2})),
        params=dict(p=2), structure="dense", value=0.4, x=np.array([1.4, 1.4, 2.8]),
        why="W-projection onto a.x <= 0, a = (-1, -1, 1): lambda = 1 / (a W^-1 a) = 0.4, "
            "x = d - lambda W^-1 a, value lambda^2 a W^-1 a = 0.4",
    ),
    "mn1-edges": dict(
        kind="mn", data=lambda: make_graph(4, _C4, [1.0, 1.0, 1.0, 5.0]), params=dict(p=1),
        structure="sparse", value=2.0, x=None,
        why="the 4-cycle inequality x03 <= x01 + x12 + x23 is violated by 2, at unit cost",
    ),
    "mn2-edges": dict(
        kind="mn", data=lambda: make_graph(4, _C4, [1.0, 1.0, 1.0, 5.0]), params=dict(p=2),
        structure="sparse", value=1.0, x=np.array([1.5, 4.5, 1.5, 1.5]),
        why="projection onto the cycle half-space: step 2/4 along (-1, -1, -1, 1); edges "
            "sorted (0,1), (0,3), (1,2), (2,3)",
    ),
}

def bank_problem(name):
    """Build the :class:`MetricProblem` of bank entry ``name``."""
    entry = BANK[name]
    return build_problem(entry["kind"], entry["data"](), **entry["params"])


# -------------------------------------------------------------- bundled graphs
BUNDLED_GRAPHS = ("karate", "dolphins", "lesmis", "football")

#: (problem, graph) -> (LP optimum, source). Problems: "cc-jaccard", "cc-unit", "sc",
#: "cd". "paper" values are the reference numbers of the project's design (V, and the
#: paper rule of the Jaccard transform); "highs" values were computed here by both
#: exact backends.
BUNDLED_VALUES = {
    ("cc-jaccard", "karate"): (21.6703866, "paper"),
    ("cc-jaccard", "dolphins"): (42.733742791, "highs"),
    ("cc-jaccard", "lesmis"): (60.184504108, "highs"),
    ("cc-jaccard", "football"): (81.213135792, "highs"),
    ("cc-unit", "karate"): (38.5, "paper"),
    ("cc-unit", "dolphins"): (79.5, "highs"),
    ("cc-unit", "lesmis"): (91.5, "paper"),
    ("sc", "karate"): (0.9379310, "paper"),
    ("sc", "dolphins"): (124.0 / 287.0, "highs"),
    ("sc", "lesmis"): (0.3447761, "paper"),
    ("cd", "karate"): (39.0, "paper"),
    ("cd", "dolphins"): (79.5, "highs"),
    ("cd", "lesmis"): (104.0, "paper"),
    ("cd", "football"): (294.0, "paper"),
}


def bundled_graph(name):
    """A bundled graph (largest component, unweighted), via :func:`metricopt.io.read_graph`."""
    return read_graph(name)


def bundled_problem(problem, graph):
    """Build ``problem`` ("cc-jaccard", "cc-unit", "sc", "cd", "mn1-jaccard") on a bundled graph."""
    g = bundled_graph(graph)
    if problem == "cc-jaccard":
        return build_problem("cc", g, weights="jaccard")
    if problem == "cc-unit":
        return build_problem("cc", g, weights="unit")
    if problem == "mn1-jaccard":
        return build_problem("mn", g, p=1, source="jaccard")
    return build_problem(problem, g)
