"""The seeded community-graph generator (:mod:`metricopt.datasets._synthetic`)."""

import networkx as nx
import numpy as np
import pytest

from metricopt.datasets import community_graph, graph_statistics


@pytest.fixture(scope="module")
def g2000():
    return community_graph(2000, seed=0)


def test_same_seed_same_graph_other_seed_other_graph(g2000):
    again = community_graph(2000, seed=0)
    assert np.array_equal(again.edges, g2000.edges)
    assert not np.array_equal(community_graph(2000, seed=1).edges, g2000.edges)


def test_simple_connected_and_labelled_in_order(g2000):
    e = g2000.edges
    assert np.all(e[:, 0] < e[:, 1])  # no loops, each pair once as (u, v), u < v
    keys = e[:, 0] * g2000.n + e[:, 1]
    assert np.all(np.diff(keys) > 0)  # sorted, no duplicates
    assert g2000.labels.tolist() == list(range(g2000.n))
    nxg = nx.Graph(e.tolist())
    assert nxg.number_of_nodes() == g2000.n and nx.is_connected(nxg)


def test_statistics_near_com_amazon_shape(g2000):
    s = graph_statistics(g2000)
    assert 1700 <= s["nodes"] <= 2000
    assert 2.4 <= s["edges_per_node"] <= 3.2
    assert 0.33 <= s["average_clustering"] <= 0.50
    assert s["max_degree"] >= 8 * 2 * s["edges_per_node"]  # heavy-tailed degrees
    assert s["triangles"] > 0 and s["open_wedges"] > s["triangles"]


def test_statistics_match_networkx(g2000):
    nxg = nx.Graph(g2000.edges.tolist())
    s = graph_statistics(g2000)
    assert s["average_clustering"] == pytest.approx(nx.average_clustering(nxg), rel=1e-12)
    assert s["triangles"] == sum(nx.triangles(nxg).values()) // 3
    wedges = sum(d * (d - 1) // 2 for _, d in nxg.degree())
    assert s["open_wedges"] == wedges - 3 * s["triangles"]


def test_size_exponent_sets_clustering():
    low = graph_statistics(community_graph(3000, size_exponent=2.5, seed=2))
    high = graph_statistics(community_graph(3000, size_exponent=4.5, seed=2))
    assert low["average_clustering"] < high["average_clustering"]


def test_bad_sizes_raise():
    with pytest.raises(ValueError, match="min_size"):
        community_graph(100, min_size=1)
    with pytest.raises(ValueError, match="min_size"):
        community_graph(100, min_size=10, max_size=5)
