"""The MET(G) oracle on a Dask cluster finds what the local oracle finds."""

import numpy as np
import pytest

from metricopt.problems import build_problem
from metricopt.result import Status
from metricopt.solvers._cycle_search import CycleGraph, canonical_cycles, search_cycles
from test_lp_contract import random_signed_graph

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as lc, distributed.Client(lc) as client:
        yield client


def _problem(seed=3, n=60, m=200):
    return build_problem("cc", random_signed_graph(seed, n, m), weights="signed")


def test_serial_kernel_and_any_split_find_the_same_cycles():
    prob = _problem()
    graph = CycleGraph.from_problem(prob)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, prob.pairs.shape[0])
    ref = canonical_cycles(*search_cycles(graph, x, graph.edges, 1e-9, 2, 64)[:2])
    serial = canonical_cycles(*search_cycles(graph, x, graph.edges, 1e-9, 3, 8,
                                             parallel=False)[:2])
    assert ref[0].shape[0] > 5  # the random x violates many cycles
    for a, b in zip(ref, serial):
        np.testing.assert_array_equal(a, b)
    # three shares searched separately, concatenated in any order: same canonical list
    from metricopt.solvers._cycle_search import concat_cycles

    parts = [search_cycles(graph, x, graph.edges[k::3], 1e-9, 1, 16)[:2] for k in (2, 0, 1)]
    merged = canonical_cycles(*concat_cycles(parts))
    for a, b in zip(ref, merged):
        np.testing.assert_array_equal(a, b)


def test_cluster_oracle_matches_local(cluster):
    from metricopt.solvers._dask_oracle import DaskCycleSearch

    prob = _problem(seed=5)
    graph = CycleGraph.from_problem(prob)
    x = np.random.default_rng(1).uniform(0, 1, prob.pairs.shape[0])
    off, mem, worst, _, _ = search_cycles(graph, x, graph.edges, 1e-9, 2, 64)
    remote = DaskCycleSearch(graph, cluster)
    roff, rmem, rworst = remote(x, 1e-9, stop=lambda: False)
    asked = []
    assert remote(x, 1e-9, stop=lambda: not asked.append(1)) is None and asked == [1]
    remote.close()
    assert rworst == worst
    for a, b in zip(canonical_cycles(off, mem), canonical_cycles(roff, rmem)):
        np.testing.assert_array_equal(a, b)


def test_solve_on_cluster_equals_local_solve(cluster):
    from metricopt.solvers import solve

    prob = _problem(seed=7, n=40, m=110)
    local = solve(prob, method="project-forget", tol=1e-6, gap_tol=1e-6)
    remote = solve(prob, method="project-forget", tol=1e-6, gap_tol=1e-6,
                   scheduler=cluster.scheduler.address)
    assert local["status"] == remote["status"] == Status.OPTIMAL
    for key in ("fun", "lower_bound", "nit", "max_violation"):
        assert local[key] == remote[key], key
    np.testing.assert_array_equal(local["x"], remote["x"])


def test_dense_problem_refuses_a_scheduler():
    from metricopt.exceptions import InvalidParameterError
    from metricopt.solvers import solve
    from problem_bank import bundled_graph

    prob = build_problem("cc", bundled_graph("karate"))
    with pytest.raises(InvalidParameterError, match="sparse"):
        solve(prob, method="project-forget", scheduler="tcp://127.0.0.1:1")


def test_cli_scheduler_gives_the_local_answer(cluster, tmp_path):
    """``solve --scheduler``: same report numbers and byte-identical clusters.csv."""
    import json

    from click.testing import CliRunner

    from metricopt.cli import cli
    from test_same_answer import NUMBERS, _signed_file

    source = _signed_file(tmp_path)
    outs = {}
    for name, extra in (("local", []), ("cluster", ["--scheduler", cluster.scheduler.address])):
        out = tmp_path / name
        with distributed.get_task_stream(client=cluster) as stream:
            res = CliRunner().invoke(cli, ["solve", "cc", source, "--weights", "signed",
                                           "--method", "project-forget", "--seed", "0",
                                           "--out", str(out), *extra])
        assert res.exit_code == 0, res.output
        searched = sum("search_share" in str(t["key"]) for t in stream.data)
        assert (searched > 0) == bool(extra), searched
        report = json.loads((out / "report.json").read_text())
        outs[name] = ({k: report[k] for k in NUMBERS}, (out / "clusters.csv").read_bytes())
    assert outs["local"] == outs["cluster"]


def test_support_layout_on_cluster_equals_local_solve(cluster):
    """The support scan on the cluster (:mod:`metricopt.solvers._dask_support`): the same
    run, number for number."""
    from metricopt.datasets import load_bundled
    from metricopt.solvers import solve

    prob = build_problem("cc", load_bundled("karate"), weights="jaccard", layout="support")
    opts = dict(method="project-forget", tol=1e-6, gap_tol=1e-6)
    local = solve(prob, **opts)
    with distributed.get_task_stream(client=cluster) as stream:
        remote = solve(prob, scheduler=cluster.scheduler.address, **opts)
    assert any("scan_share" in str(task["key"]) for task in stream.data)
    assert local["status"] == remote["status"] == Status.OPTIMAL
    for key in ("fun", "lower_bound", "nit", "max_violation", "support_pairs"):
        assert local[key] == remote[key], key
    np.testing.assert_array_equal(local["x"].pairs, remote["x"].pairs)
    np.testing.assert_array_equal(local["x"].values, remote["x"].values)
