"""Graph objects in (networkx, igraph, scipy.sparse, numpy, pandas), clusters out by label,
networkx and GraphML/GEXF exports, and the errors for objects of the wrong kind."""

import csv
import re
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import metricopt
from metricopt import pipeline
from metricopt.cli import cli
from metricopt.datasets import bundled_path
from metricopt.exceptions import InputError, InvalidParameterError, MetricOptWarning
from metricopt.io import clusters_by_label, read_dissimilarity, read_graph, to_networkx

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def karate_nx():
    """The bundled karate file as a networkx graph with integer nodes."""
    return nx.read_edgelist(bundled_path("karate"), nodetype=int, comments="#")


def karate_inputs():
    graph = karate_nx()
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=sorted(graph), weight=None)
    inputs = {
        "networkx": lambda: graph,
        "scipy.sparse": lambda: adjacency,
        "numpy": lambda: adjacency.toarray(),
        "pandas": lambda: nx.to_pandas_edgelist(graph)[["source", "target"]],
    }
    return inputs


def igraph_karate():
    ig = pytest.importorskip("igraph")
    return ig.Graph.TupleList(karate_nx().edges())


def solve_cc(source):
    problem = metricopt.build_problem("cc", source)
    result = metricopt.solve(problem, method="highs")
    rounding = metricopt.round_solution(problem, result, seed=0)
    return problem, result, rounding


@pytest.fixture(scope="module")
def from_file():
    return solve_cc("karate")


def by_str_label(problem, rounding):
    return {str(k): v for k, v in clusters_by_label(problem, rounding).items()}


@pytest.mark.parametrize("kind", [*karate_inputs(), "igraph"])
def test_every_object_gives_the_file_answer(kind, from_file):
    source = igraph_karate() if kind == "igraph" else karate_inputs()[kind]()
    problem, result, rounding = solve_cc(source)
    f_problem, f_result, f_rounding = from_file
    assert problem.n == f_problem.n == 34
    assert result.fun == pytest.approx(f_result.fun, rel=1e-12)
    assert result.lower_bound == pytest.approx(f_result.lower_bound, rel=1e-9)
    assert rounding.objective == pytest.approx(f_rounding.objective, rel=1e-12)
    ours = by_str_label(problem, rounding)
    if kind in ("scipy.sparse", "numpy"):  # rows 0..33 are the file's nodes 1..34
        ours = {str(int(k) + 1): v for k, v in ours.items()}
    assert ours == by_str_label(f_problem, f_rounding)


def test_networkx_labels_weights_and_summary():
    graph = nx.Graph(name="toy")
    graph.add_edge("a", "b", sign=1)
    graph.add_edge("b", "c", sign=-1)
    graph.add_edge("c", "a", sign=2)
    graph.add_edge("x", "y", sign=1)  # a second component
    g = read_graph(graph, weight="sign")
    assert g.name == "toy" and g.n == 3 and g.is_signed
    assert g.labels.tolist() == ["a", "b", "c"]
    assert sorted(zip(g.labels[g.edges[:, 0]], g.labels[g.edges[:, 1]], g.weights)) == [
        ("a", "b", 1.0), ("a", "c", 2.0), ("b", "c", -1.0)]
    assert "the largest of 2 components" in g.summary["message"]
    assert g.summary["format"] == "networkx"
    assert read_graph(graph, weight="sign", keep_all_components=True).n == 5
    assert read_graph(graph).weights is None  # no 'weight' attribute
    assert read_graph(graph, weight="sign", weighted=False).weights is None


def test_directed_and_multi_graphs_merge_like_files():
    digraph = nx.DiGraph()
    digraph.add_edge(1, 2, weight=1.0)
    digraph.add_edge(2, 1, weight=-1.0)
    digraph.add_edge(2, 3, weight=1.0)
    digraph.add_edge(3, 3, weight=1.0)
    with pytest.warns(MetricOptWarning, match=r"^networkx graph: 1 pair listed more than once "
                                              r"with different weights, 1 of them with opposite"):
        g = read_graph(digraph)
    assert (g.n, g.m) == (3, 2)
    assert g.summary["self_loops"] == 1 and g.summary["duplicates"] == 1
    multi = nx.MultiGraph([(1, 2), (1, 2), (2, 3)])
    g = read_graph(multi)
    assert (g.m, g.summary["duplicates"]) == (2, 1)


def test_integer_labels_are_ordered_numerically_like_files():
    graph = nx.Graph([(10, 2), (2, 33), (33, 10)])
    assert read_graph(graph).labels.tolist() == [2, 10, 33]
    frame = pd.DataFrame({"source": ["b", "a"], "target": ["a", "c"]})
    assert read_graph(frame).labels.tolist() == ["b", "a", "c"]


def test_missing_weights_on_some_edges_are_one_with_a_warning():
    graph = nx.Graph()
    graph.add_edge(0, 1, weight=-2.0)
    graph.add_edge(1, 2)
    with pytest.warns(MetricOptWarning, match="1 edge has no 'weight' attribute; weight 1"):
        g = read_graph(graph)
    assert g.weights.tolist() == [-2.0, 1.0]


def test_matrices_symmetric_or_not_and_weights():
    a = np.array([[0, 2, 0], [2, 0, -1], [0, -1, 0]], dtype=float)
    g = read_graph(a)
    assert (g.n, g.m, g.summary["duplicates"]) == (3, 2, 0)
    assert g.weights.tolist() == [2.0, -1.0] and g.labels.tolist() == [0, 1, 2]
    assert read_graph(sp.csr_array(a)).weights.tolist() == [2.0, -1.0]
    upper = np.triu(a)  # one entry per edge: not symmetric, same graph
    assert read_graph(upper).weights.tolist() == [2.0, -1.0]
    unit = (a != 0).astype(int)
    assert read_graph(unit).weights is None
    assert read_graph(unit, weighted=True).weights.tolist() == [1.0, 1.0]


def test_igraph_names_and_weights():
    ig = pytest.importorskip("igraph")
    graph = ig.Graph(edges=[(0, 1), (1, 2), (2, 0)], directed=True)
    graph.vs["name"] = ["x", "y", "z"]
    graph.es["sign"] = [1.0, -1.0, None]
    with pytest.warns(MetricOptWarning, match="^igraph graph: 1 edge has no 'sign' attribute"):
        g = read_graph(graph, weight="sign")
    assert g.labels.tolist() == ["x", "y", "z"]
    assert g.weights.tolist() == [1.0, 1.0, -1.0]  # (x,y), (x,z), (y,z)


def test_pandas_weight_column():
    frame = pd.DataFrame({"source": [1, 2, 3], "target": [2, 3, 1], "w": [1.0, -1.0, 0.5]})
    g = read_graph(frame, weight="w")
    assert g.weights.tolist() == [1.0, 0.5, -1.0]  # edges (1,2), (1,3), (2,3)
    assert read_graph(frame).weights is None


@pytest.mark.parametrize("source, message", [
    (nx.empty_graph(3), r"^networkx graph: no edges found$"),
    (nx.Graph([(0, 0)]), r"^networkx graph: the largest connected component has only one node$"),
    (nx.Graph([(0, 1, {"weight": float("nan")})]),
     r"^networkx graph: edge \(0, 1\): weight is not finite \(nan\)$"),
    (nx.Graph([(0, 1, {"weight": "heavy"})]),
     r"^networkx graph: edge \(0, 1\): weight 'heavy' is not a number$"),
    (np.ones((2, 3)), r"^numpy array: expected a square adjacency matrix, got shape \(2, 3\)$"),
    (np.array([[0, np.inf], [np.inf, 0]]), r"^numpy array: entry \[0, 1\] is not finite \(inf\)$"),
    (sp.csr_array(np.zeros((3, 3))), r"^scipy.sparse matrix: no edges found$"),
    (pd.DataFrame({"u": [1], "v": [2]}),
     r"^pandas DataFrame: needs the columns 'source' and 'target' .*; it has 'u', 'v'$"),
    (pd.DataFrame({"source": [1, None], "target": [2, 3]}),
     r"^pandas DataFrame, row 1: missing node name$"),
    (pd.DataFrame({"source": [1, 2], "target": [2, 3], "weight": [1, "x"]}),
     r"^pandas DataFrame, row 1: weight 'x' is not a number$"),
])
def test_object_errors_are_one_line_and_name_the_object(source, message):
    with pytest.raises(InputError, match=message):
        read_graph(source)


def test_wrong_objects_say_what_was_expected():
    with pytest.raises(InvalidParameterError, match=r"graph object .*Got list instead"):
        read_graph([(0, 1)])
    with pytest.raises(InvalidParameterError, match="fmt"):
        read_graph(karate_nx(), fmt="mtx")
    with pytest.raises(InvalidParameterError, match=r"Got networkx\.Graph instead"):
        metricopt.problems.correlation_clustering(karate_nx())
    with pytest.raises(InvalidParameterError, match=r"Got networkx\.Graph instead"):
        metricopt.problems.metric_nearness(karate_nx())
    # through build_problem the object is read first: mn gets the Jaccard transform
    problem = metricopt.build_problem("mn", karate_nx(), p=1)
    assert problem.params["source"] == "jaccard" and problem.n == 34


@pytest.mark.parametrize("wrong", [karate_nx(), "karate", np.eye(3), None, 3.5])
def test_solve_refuses_anything_but_a_problem(wrong):
    with pytest.raises(TypeError, match=r"must be a metricopt MetricProblem \(from "
                                        r"metricopt.build_problem\)"):
        metricopt.solve(wrong, method="highs")


def test_distance_matrices_for_metric_nearness(tmp_path):
    from scipy.spatial.distance import pdist, squareform

    points = np.random.default_rng(0).random((7, 2))
    condensed = pdist(points)
    square = squareform(condensed)
    np.save(tmp_path / "d.npy", square)
    expected = metricopt.build_problem("mn", read_dissimilarity(tmp_path / "d.npy"))
    for source in (square, condensed):
        problem = metricopt.build_problem("mn", source)
        assert problem.structure == "dense" and problem.labels.tolist() == list(range(7))
        np.testing.assert_array_equal(problem.target, expected.target)
    with pytest.raises(InputError, match="condensed distance vector"):
        read_dissimilarity(np.ones(4))
    with pytest.raises(InputError, match=r"^numpy array: the matrix is not symmetric"):
        read_dissimilarity(np.array([[0, 1.0], [2.0, 0]]))
    # a sparse matrix given to mn is a weighted graph: only its pairs are variables
    sparse = sp.csr_array(np.array([[0, 2.0, 0], [2.0, 0, 3.0], [0, 3.0, 0]]))
    assert metricopt.build_problem("mn", sparse).structure == "sparse"


def test_clusters_by_label_and_to_networkx(from_file):
    problem, result, rounding = solve_cc(karate_nx())
    clusters = clusters_by_label(problem, rounding)
    assert set(clusters) == set(range(1, 35))
    assert [clusters[lab] for lab in problem.labels] == rounding.labels.tolist()
    graph = karate_nx()
    assert to_networkx(problem, rounding, graph=graph) is graph
    assert nx.get_node_attributes(graph, "cluster") == clusters
    fresh = to_networkx(problem, rounding, attribute="community")
    assert nx.utils.graphs_equal(nx.Graph(fresh.edges), nx.Graph(karate_nx().edges))
    assert nx.get_node_attributes(fresh, "community") == clusters
    with pytest.raises(InvalidParameterError, match=r"lacks 32 of the problem's nodes \(first: 3\)"):
        to_networkx(problem, rounding, graph=nx.path_graph(3))


def test_cut_by_label_and_mn_has_none():
    problem = metricopt.build_problem("sc", karate_nx())
    rounding = metricopt.round_solution(problem, metricopt.solve(problem, method="highs"), seed=0)
    cut = clusters_by_label(problem, rounding)
    assert sum(cut.values()) == int(rounding.in_cut.sum()) == rounding.side_sizes[0]
    assert nx.get_node_attributes(to_networkx(problem, rounding), "in_cut") == cut
    mn = metricopt.build_problem("mn", np.array([[0, 1.0], [1.0, 0]]))
    with pytest.raises(metricopt.exceptions.UnsupportedProblemError, match="metric nearness"):
        clusters_by_label(mn, np.zeros(2))


def test_pipeline_run_takes_an_object_and_exports(tmp_path):
    graph = karate_nx()
    export = tmp_path / "karate.gexf"
    outcome = pipeline.run(graph, "cc", method="highs", rounding={"seed": 0}, export=export)
    assert outcome.report["graph"]["source"] == "networkx graph"
    assert outcome.report["files"]["export"] == str(export)
    clusters = outcome.clusters_by_label()
    read_back = nx.read_gexf(export)
    assert {int(k): v for k, v in nx.get_node_attributes(read_back, "cluster").items()} == clusters
    assert nx.get_node_attributes(outcome.to_networkx(), "cluster") == clusters
    with pytest.raises(InvalidParameterError, match="export format"):
        pipeline.run(graph, "cc", method="highs", export=tmp_path / "x.txt")


def read_clusters_csv(path):
    with open(path, newline="") as fh:
        return {row["node"]: int(row["cluster"]) for row in csv.DictReader(fh)}


@pytest.mark.parametrize("name, reader", [("k.graphml", nx.read_graphml),
                                          ("k.gexf", nx.read_gexf),
                                          ("k.graphml.gz", nx.read_graphml)])
def test_export_round_trips_through_networkx(runner, tmp_path, name, reader):
    out, export = tmp_path / "run", tmp_path / name
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "highs", "--seed", "0",
                                 "--out", str(out), "--export", str(export), "--quiet"])
    assert result.exit_code == 0, result.output + result.stderr
    assert result.stdout == ""
    graph = reader(export)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (34, 78)
    assert nx.get_node_attributes(graph, "cluster") == read_clusters_csv(out / "clusters.csv")


def test_export_of_a_cut_and_usage_errors(runner, tmp_path):
    export = tmp_path / "cut.graphml"
    result = runner.invoke(cli, ["solve", "sc", "karate", "--method", "highs", "--seed", "0",
                                 "--export", str(export), "--quiet"])
    assert result.exit_code == 0, result.stderr
    sides = nx.get_node_attributes(nx.read_graphml(export), "in_cut")
    assert len(sides) == 34 and set(sides.values()) == {0, 1}
    for args, message in ((["mn", "karate", "--export", "x.graphml"], "does not apply to mn"),
                          (["cc", "karate", "--export", "x.csv"], "must end in .graphml or .gexf")):
        result = runner.invoke(cli, ["solve", *args])
        assert result.exit_code == 2 and message in result.stderr


def test_readme_networkx_example_runs(capsys):
    code = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "networkx" in b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the example reads without a warning
        exec(compile(code, "README.md", "exec"), {})
    n_clusters, same = capsys.readouterr().out.split()
    assert int(n_clusters) >= 2 and same == "True"
