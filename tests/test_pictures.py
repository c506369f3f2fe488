"""Pictures of the answer: the binned matrix, cut measures, files written, the plot command."""

import shutil
import xml.etree.ElementTree as ET

import networkx as nx
import numpy as np
import pytest
from matplotlib.image import imread

from metricopt import pipeline
from metricopt.exceptions import InputError, MetricOptWarning
from metricopt.graph import Graph
from metricopt.io._rundir import RUN_FILES
from metricopt.pictures import (
    PICTURES,
    Answer,
    answer_of,
    binned_matrix,
    certificate_figure,
    cluster_order,
    cut_measures,
    matrix_figure,
    network_figure,
    plot_clusters,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """karate: cc and sc, exact (HiGHS), written to run directories."""
    root = tmp_path_factory.mktemp("picture-runs")
    for kind in ("cc", "sc"):
        pipeline.run("karate", kind, method="highs", solver_options={"seed": 0},
                     out=root / f"karate-{kind}")
    return root


def graph_of(edges, n, weights=None):
    edges = np.array(sorted(tuple(sorted(e)) for e in edges), dtype=np.int64)
    return Graph(n=n, edges=edges, labels=np.arange(n), weights=weights, name="g")


def dense_density(graph, order, p):
    """The binned matrix the slow way: the dense adjacency, permuted and block-averaged."""
    a = graph.adjacency(weighted=graph.is_signed).toarray()
    if graph.is_signed:
        a = np.sign(a)
    a = a[np.ix_(order, order)]
    pixel = np.arange(graph.n) * p // graph.n
    out = np.zeros((p, p))
    for i in range(p):
        for j in range(p):
            block = a[np.ix_(pixel == i, pixel == j)]
            pairs = block.size - (np.sum(pixel == i) if i == j else 0)
            out[i, j] = block.sum() / pairs if pairs else 0.0
    return out


def assert_png(path, min_bytes=5_000):
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > min_bytes
    image = imread(path)
    assert np.ptp(image[..., :3]) > 0.5  # not a blank canvas


# ------------------------------------------------------------------ the matrix
def test_cluster_order_puts_larger_clusters_first():
    labels = np.array([2, 0, 1, 1, 2, 1, 0, 2, 2])
    order, bounds, sizes = cluster_order(labels)
    assert sizes.tolist() == [4, 3, 2] and bounds.tolist() == [0, 4, 7, 9]
    assert labels[order].tolist() == [2, 2, 2, 2, 1, 1, 1, 0, 0]
    assert order[:4].tolist() == [0, 4, 7, 8]  # node order kept inside a cluster


@pytest.mark.parametrize("p", [12, 5, 3])
@pytest.mark.parametrize("signed", [False, True])
def test_binned_matrix_is_the_block_average_of_the_dense_matrix(p, signed):
    g = nx.gnm_random_graph(12, 30, seed=1)
    weights = np.where(np.arange(30) % 3 == 0, -1.0, 2.0) if signed else None
    graph = graph_of(g.edges(), 12, weights)
    order = np.random.default_rng(0).permutation(12)
    image = binned_matrix(graph, order, max_pixels=p)
    np.testing.assert_allclose(image, dense_density(graph, order, p), atol=1e-12)


def test_binned_matrix_memory_does_not_grow_with_n():
    n = 50_000  # a dense float matrix would take 20 GB
    ring = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    graph = graph_of(ring.tolist(), n)
    image = binned_matrix(graph, np.arange(n), max_pixels=400)
    assert image.shape == (400, 400)
    w = n // 400
    pairs = np.full((400, 400), w * w)
    np.fill_diagonal(pairs, w * (w - 1))
    assert (image * pairs).sum() == pytest.approx(2 * n, rel=1e-9)  # every edge counted


def test_matrix_figure_outlines_the_blocks():
    graph = graph_of(nx.barbell_graph(5, 0).edges(), 10)
    answer = Answer("cc", graph, [0] * 5 + [1] * 5, {}, "barbell")
    fig = matrix_figure(answer)
    boxes = fig.axes[0].collections[0]
    assert len(boxes.get_paths()) == 2 and "2 clusters" in fig.get_suptitle()


# ------------------------------------------------------------------ cut and certificate
def test_cut_measures():
    graph = graph_of(nx.barbell_graph(4, 0).edges(), 8)  # two K4 joined by one edge
    side = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    m = cut_measures(graph, side)
    assert (m["size_s"], m["size_rest"], m["cut_edges"]) == (4, 4, 1)
    assert (m["edges_s"], m["edges_rest"]) == (6, 6)
    assert m["sparsity"] == pytest.approx(8 * 1 / 16)
    assert m["conductance"] == pytest.approx(1 / 13)  # volumes 13 and 13


def test_certificate_figure_compares_runs(runs):
    from metricopt.io.reports import read_report_json

    reports = [(name, read_report_json(runs / name / "report.json"))
               for name in ("karate-cc", "karate-sc")]
    ax = certificate_figure(reports).axes[0]
    assert "own lower bound" in ax.get_xlabel()  # two problems: drawn relative to the bound
    texts = [t.get_text() for t in ax.texts]
    assert sum(t.startswith("ratio ") for t in texts) == 2
    one = certificate_figure(reports[:1]).axes[0]
    assert one.get_xlabel().startswith("objective")


# ------------------------------------------------------------------ files and sources
def test_plot_clusters_of_an_outcome_and_of_a_run_directory(runs, tmp_path):
    outcome = pipeline.run("karate", "cc", method="highs", solver_options={"seed": 0})
    written = plot_clusters(outcome, tmp_path / "pics")
    assert set(written) == {"clusters-matrix", "clusters-sizes", "certificate",
                            "clusters-network"}
    for paths in written.values():
        png, svg = paths
        assert_png(png)
        assert ET.parse(svg).getroot().tag.endswith("svg")
        assert png.parent == tmp_path / "pics"
    from_dir = answer_of(runs / "karate-cc")
    np.testing.assert_array_equal(from_dir.labels, answer_of(outcome).labels)
    written = plot_clusters(runs / "karate-sc")
    assert "cut-sides" in written and "clusters-sizes" not in written
    assert all(p.parent == runs / "karate-sc" for paths in written.values() for p in paths)
    for name in (p.name for paths in written.values() for p in paths):
        assert name in RUN_FILES  # replaced by a run with --force like its other files
    assert set(PICTURES) >= set(written)


def test_large_graphs_get_no_node_link_drawing(runs, tmp_path):
    answer = answer_of(runs / "karate-cc")
    with pytest.raises(InputError, match="matrix picture"):
        network_figure(answer, max_nodes=20)
    with pytest.warns(MetricOptWarning, match="no node-link drawing"):
        written = plot_clusters(answer, tmp_path, max_nodes=20, formats=("png",))
    assert "clusters-network" not in written and not (tmp_path / "clusters-network.png").exists()


def test_run_directory_whose_graph_moved(runs, tmp_path):
    import json

    from metricopt.datasets import bundled_path

    moved = tmp_path / "moved"
    shutil.copytree(runs / "karate-cc", moved)
    report = json.loads((moved / "report.json").read_text())
    report["graph"]["source"] = str(tmp_path / "gone.txt")
    report["graph"]["summary"]["path"] = str(tmp_path / "gone.txt")
    (moved / "report.json").write_text(json.dumps(report))
    with pytest.raises(InputError, match="--graph FILE"):
        answer_of(moved)
    answer = answer_of(moved, graph=bundled_path("karate"))
    assert answer.graph.n == 34
    with pytest.raises(InputError, match="nodes, the run's had 34"):
        answer_of(moved, graph=nx.path_graph(5))


def test_bound_only_run_has_nothing_to_draw(tmp_path):
    pipeline.run("karate", "cc", method="highs", bound_only=True, out=tmp_path / "b")
    with pytest.raises(InputError, match="nothing to draw"):
        plot_clusters(tmp_path / "b")


# ------------------------------------------------------------------ command line
def test_cli_plot_clusters_and_the_default_subcommand(runs, runner, tmp_path):
    from metricopt.cli import cli

    result = runner.invoke(cli, ["plot", "clusters", str(runs / "karate-cc"), "-o",
                                 str(tmp_path / "o"), "--format", "png"])
    assert result.exit_code == 0, result.output
    printed = result.stdout.split()
    assert len(printed) == 4 and all(p.endswith(".png") for p in printed)
    for path in printed:
        assert_png(tmp_path / "o" / path.split("/")[-1])
    plain = runner.invoke(cli, ["plot", str(runs / "karate-cc")])  # still the convergence
    assert plain.exit_code == 0 and plain.stdout.strip().endswith("convergence.png")
    both = runner.invoke(cli, ["plot", "clusters", str(runs / "karate-cc"), str(runs / "karate-sc"),
                               "-o", str(tmp_path)])
    assert both.exit_code == 2
    bad = runner.invoke(cli, ["plot", "clusters", str(tmp_path)])
    assert bad.exit_code == 1 and bad.stderr.startswith("Error: ")


@pytest.mark.filterwarnings("ignore:signed has 3 negative weights")
def test_signed_graph_pictures(tmp_path):
    signed = tmp_path / "signed.txt"
    signed.write_text("1 2 1\n2 3 1\n1 3 1\n3 4 -1\n4 5 1\n5 6 1\n4 6 1\n6 1 -1\n2 5 -1\n")
    outcome = pipeline.run(str(signed), "cc", method="highs", solver_options={"seed": 0})
    answer = answer_of(outcome)
    assert answer.graph.is_signed
    image = binned_matrix(answer.graph, cluster_order(answer.labels)[0])
    assert image.min() < 0 < image.max()  # negative pairs drawn apart from positive ones
    written = plot_clusters(outcome, tmp_path / "p", formats=("png",))
    assert_png(written["clusters-network"][0])
    assert "signed" in matrix_figure(answer).get_suptitle()


def test_cli_plot_certificate_compares_runs(runs, runner, tmp_path):
    from metricopt.cli import cli

    out = tmp_path / "cmp.png"
    result = runner.invoke(cli, ["plot", "certificate", str(runs), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [str(out)]
    assert_png(out)
    bad = runner.invoke(cli, ["plot", "certificate", str(tmp_path / "none")])
    assert bad.exit_code == 2
