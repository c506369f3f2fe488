"""Problem builders: shapes, constraint families, and the kernels they rely on."""

import itertools

import networkx as nx
import numpy as np
import pytest

from metricopt.exceptions import InputError, InvalidParameterError
from metricopt.graph import Dissimilarity, Graph
from metricopt.problems import build_problem, n_pairs, pair_index
from metricopt.problems._cycles import max_cycle_violation, violated_cycles
from metricopt.problems._pairs import packed_to_square, square_to_packed
from metricopt.problems._triangles import max_triangle_violation, violated_triangles
from metricopt.problems._wedges import triangles_and_wedges


def graph_from_nx(g, weights=None):
    g = nx.convert_node_labels_to_integers(g)
    edges = np.array(sorted(tuple(sorted(e)) for e in g.edges()), dtype=np.int64)
    return Graph(n=g.number_of_nodes(), edges=edges, labels=[str(i) for i in range(g.number_of_nodes())],
                 weights=weights, name="test")


@pytest.fixture
def karate():
    return graph_from_nx(nx.karate_club_graph())


def test_pair_index_matches_triu_order():
    n = 7
    r, c = np.triu_indices(n, 1)
    assert np.array_equal(pair_index(r, c, n), np.arange(n_pairs(n)))
    assert np.array_equal(pair_index(c, r, n), np.arange(n_pairs(n)))
    x = np.random.default_rng(0).random(n_pairs(n))
    assert np.array_equal(square_to_packed(packed_to_square(x, n)), x)


def naive_jaccard(g, delta=0.05, eps=0.01):
    n = g.n
    nbr = [set() for _ in range(n)]
    for u, v in g.edges:
        nbr[u].add(v)
        nbr[v].add(u)
    edges = {tuple(e) for e in g.edges.tolist()}
    w, d = [], []
    for i, j in itertools.combinations(range(n), 2):
        union = len(nbr[i] | nbr[j])
        jac = len(nbr[i] & nbr[j]) / union if union else 0.0
        s = np.log((1 + (jac - delta)) / (1 - (jac - delta)))
        if s > 0:
            z = s + eps
        elif s < 0:
            z = s - eps
        else:
            z = eps if (i, j) in edges else -eps
        w.append(abs(z))
        d.append(1.0 if z < 0 else 0.0)
    return np.array(w), np.array(d)


def test_jaccard_weights_match_naive(karate):
    p = build_problem("cc", karate)
    w, d = naive_jaccard(karate)
    np.testing.assert_allclose(p.weights, w, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(p.target, d)
    assert p.structure == "dense" and p.objective == "l1"
    assert p.params["weights"] == "jaccard"


def test_jaccard_zero_score_gets_epsilon_by_edge():
    # delta chosen so that some pair has J == delta exactly: on the path 0-1-2-3 the
    # non-edges (0, 2) and (1, 3) have J = 1/2, the other pairs J = 0
    g = graph_from_nx(nx.path_graph(4))
    p = build_problem("cc", g, delta=0.5)
    w, d = naive_jaccard(g, delta=0.5)
    assert np.count_nonzero(np.isclose(w, 0.01)) >= 2  # S == 0: the epsilon rule
    np.testing.assert_allclose(p.weights, w)
    np.testing.assert_array_equal(p.target, d)


def test_unit_weights(karate):
    p = build_problem("cc", karate, weights="unit")
    assert np.all(p.weights == 1)
    assert p.target.sum() == n_pairs(34) - 78


def test_signed_is_sparse():
    g = graph_from_nx(nx.cycle_graph(5), weights=np.array([1.0, -2.0, 1.0, 1.0, 0.5]))
    p = build_problem("cc", g)
    assert p.structure == "sparse" and p.n_variables == 5 and p.n_constraints is None
    np.testing.assert_array_equal(p.target, [0, 1, 0, 0, 0])
    np.testing.assert_array_equal(p.weights, [1, 2, 1, 1, 0.5])
    with pytest.raises(InputError):
        build_problem("cc", graph_from_nx(nx.cycle_graph(5)), weights="signed")


def test_sparsest_cut(karate):
    p = build_problem("sc", karate)
    assert p.sum_value == 34 and p.cost.sum() == 78 and p.objective == "linear"
    assert p.n_constraints == 3 * 34 * 33 * 32 // 6 + 1


def test_cluster_deletion_matches_networkx(karate):
    tri, wed = triangles_and_wedges(karate)
    g = nx.karate_club_graph()
    assert len(tri) == sum(nx.triangles(g).values()) // 3
    deg = karate.degrees()
    assert len(wed) == int(sum(d * (d - 1) // 2 for d in deg)) - 3 * len(tri)
    e = karate.edges
    for a, b, c in tri:
        nodes = set(e[a]) | set(e[b]) | set(e[c])
        assert len(nodes) == 3
    for a, b in wed:
        centre = set(e[a]) & set(e[b])
        assert len(centre) == 1
        ends = (set(e[a]) | set(e[b])) - centre
        assert not g.has_edge(*ends)
    p = build_problem("cd", karate)
    assert p.n_constraints == 3 * len(tri) + len(wed)
    assert p.max_violation(np.zeros(78)) == pytest.approx(1.0)
    assert p.max_violation(np.full(78, 0.5)) == pytest.approx(0.0)


def test_metric_nearness_sources(karate):
    rng = np.random.default_rng(1)
    a = rng.random((6, 6))
    a = a + a.T
    np.fill_diagonal(a, 0)
    m = build_problem("mn", Dissimilarity(values=a, labels=list("abcdef")), p=2)
    assert m.structure == "dense" and m.objective == "l2" and m.n_variables == 15
    np.testing.assert_array_equal(m.target, square_to_packed(a))
    j = build_problem("mn", karate, p=1)
    cc = build_problem("cc", karate)
    np.testing.assert_array_equal(j.weights, cc.weights)
    w = graph_from_nx(nx.cycle_graph(4), weights=np.array([1.0, 2.0, 1.0, 5.0]))
    s = build_problem("mn", w, p=1)
    assert s.structure == "sparse"
    neg = graph_from_nx(nx.cycle_graph(4), weights=np.array([1.0, -2.0, 1.0, 5.0]))
    with pytest.raises(InputError, match="non-negative"):
        build_problem("mn", neg)
    with pytest.raises(InvalidParameterError):
        build_problem("mn", karate, p=3)


def test_bad_kind_and_options(karate):
    with pytest.raises(InvalidParameterError, match="'kind'"):
        build_problem("xx", karate)
    with pytest.raises(InvalidParameterError, match="unexpected keyword"):
        build_problem("sc", karate, gamma=3)
    with pytest.raises(InvalidParameterError, match="'delta'"):
        build_problem("cc", karate, delta=2.0)


def test_memory_guard(karate):
    from metricopt.exceptions import MemoryLimitError

    with pytest.raises(MemoryLimitError, match="needs about"):
        build_problem("cc", karate, max_memory=1000)


def naive_max_triangle_violation(x, n):
    sq = packed_to_square(x, n)
    worst = 0.0
    for i, j, k in itertools.permutations(range(n), 3):
        worst = max(worst, sq[i, j] - sq[i, k] - sq[k, j])
    return worst


@pytest.mark.parametrize("seed", range(5))
def test_triangle_kernels_match_naive(seed):
    rng = np.random.default_rng(seed)
    n = 7
    x = rng.random(n_pairs(n))
    assert max_triangle_violation(x, n) == pytest.approx(naive_max_triangle_violation(x, n), abs=1e-15)
    rows, viol, total = violated_triangles(x, n, tol=0.0)
    np.testing.assert_allclose(viol, x[rows[:, 0]] - x[rows[:, 1]] - x[rows[:, 2]])
    assert len(np.unique(rows[:, 0])) == len(rows)
    assert total >= len(rows)
    if total:
        assert viol.max() == pytest.approx(max_triangle_violation(x, n))


@pytest.mark.parametrize("seed", range(5))
def test_cycle_kernels_match_networkx(seed):
    rng = np.random.default_rng(seed)
    g = nx.gnm_random_graph(12, 25, seed=seed)
    graph = graph_from_nx(g)
    x = rng.random(graph.m)
    x[rng.random(graph.m) < 0.2] = 0.0  # zero lengths must count as edges
    h = nx.Graph()
    for (u, v), val in zip(graph.edges, x):
        h.add_edge(int(u), int(v), weight=float(val))
    dist = dict(nx.all_pairs_dijkstra_path_length(h))
    expect = max(0.0, max(val - dist[u][v] for (u, v), val in zip(graph.edges.tolist(), x)))
    assert max_cycle_violation(x, graph.n, graph.edges) == pytest.approx(expect, abs=1e-12)
    offsets, members, viol = violated_cycles(x, graph.n, graph.edges, tol=1e-12)
    for c in range(len(offsets) - 1):
        cyc = members[offsets[c]:offsets[c + 1]]
        assert viol[c] == pytest.approx(x[cyc[0]] - x[cyc[1:]].sum())
        # the cycle closes: every node has even degree
        deg = np.bincount(graph.edges[cyc].ravel(), minlength=graph.n)
        assert np.all(deg % 2 == 0)
