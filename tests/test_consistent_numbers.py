"""The numbers of one run never contradict each other, and a time limit bounds the run.

The reported bound is settled once, in the dispatcher (:mod:`metricopt.solvers.core.settle`);
the summary states one ratio; the final certificate and the rounding keep to budgets.
"""

import itertools
import json
import random
import warnings

import networkx as nx
import numpy as np
import pytest

import metricopt
from metricopt import build_problem, read_graph, solve
from metricopt.cli import cli
from metricopt.problems import MetricProblem
from metricopt.solvers.core.settle import objective_floor, settle_bound


def _solve_cli(runner, args):
    result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _ratio_statements(stderr):
    return stderr.count("certified ratio") + stderr.count("no ratio is certified")


def _write(path, lines):
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


# ------------------------------------------------------------------ reproductions
def test_cancelling_signed_pair_is_optimal_with_one_ratio(runner, tmp_path):
    """A pair listed as +1 and -1 weighs 0: the run is optimal, its bound is not above
    its LP value, and the summary states one certified ratio."""
    path = _write(tmp_path / "s.txt", ["1 2 1", "1 2 -1", "2 3 1", "1 3 -1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep, err = _solve_cli(runner, ["solve", "cc", path, "--json", "--seed", "0"])
    assert rep["status_name"] == "optimal"
    assert rep["lower_bound"] <= rep["lp_value"] == 0.0
    assert rep["gap"] == 0.0
    assert "stalled" not in err
    assert "certified ratio    1.000000" in err
    assert _ratio_statements(err) == 1


def test_cancelling_pair_is_no_variable():
    path_lines = [(0, 1, 1.0), (0, 1, -1.0), (1, 2, 1.0), (0, 2, -1.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cancelling duplicates are warned about
        g = metricopt.read_graph(_edges_graph(path_lines))
    p = build_problem("cc", g, weights="signed")
    assert p.n_variables == 2 and np.all(p.weights > 0)


def _edges_graph(lines):
    import pandas as pd

    return pd.DataFrame(lines, columns=["source", "target", "weight"])


def test_zero_weight_pairs_do_not_stall_project_forget():
    """Pairs of weight 0 once took the projections 1000 oracle calls without converging."""
    lines = [(0, 1, 1.0), (0, 2, -1.0), (0, 3, 0.0), (1, 2, 0.0), (1, 3, 1.0), (2, 3, 1.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = metricopt.read_graph(_edges_graph(lines))
        p = build_problem("cc", g, weights="signed")
        pf = solve(p, method="project-forget")
        exact = solve(p, method="highs")
    assert pf.status_name == "optimal" and pf.nit < 50
    assert pf.fun == pytest.approx(exact.fun, abs=1e-6)


def test_qp_gap_floor_ends_a_stage_at_an_lp_optimum_of_zero():
    """QP values of round-off size (1e-12, apart by 1e-16) count as converged."""
    from metricopt.solvers._regularised import rel_gap

    assert rel_gap(2.0e-12, 2.00022e-12) > 1e-4
    assert rel_gap(2.0e-12, 2.00022e-12, 2e-7) < 1e-8
    assert rel_gap(1.0, 1.5, 2e-7) == pytest.approx(1 / 3)


def test_sparsest_cut_bound_of_a_disconnected_graph_is_not_negative(runner, tmp_path):
    """HiGHS certifies LP* = 0 as -7e-14; every sc objective is a sum of x >= 0."""
    path = _write(tmp_path / "two.txt", ["1 2", "2 3", "1 3", "4 5", "5 6", "4 6", "6 7"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep, err = _solve_cli(runner, ["solve", "sc", path, "--keep-all-components",
                                       "--json", "--seed", "0"])
        res = solve(build_problem("sc", read_graph(path, keep_all_components=True)),
                    method="highs")
    assert rep["lower_bound"] == 0.0 == rep["lp_value"]
    assert _ratio_statements(err) == 1
    assert res.lower_bound == 0.0
    assert "raised to 0" in res.bound_settled and "raised to 0" in res.bound_details["settled"]


def test_dolphins_sparsest_cut_bound_warns_of_no_round_off(runner):
    """lp_value 5.2e-8 below the bound (x within tol of feasibility) is no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep, err = _solve_cli(runner, ["bound", "sc", "dolphins", "--json"])
    assert rep["status_name"] == "optimal"
    assert not any("lies below the certified lower bound" in w for w in rep["warnings"])
    assert "lies below the certified lower bound" not in err


def test_time_limit_warning_is_printed_once(runner, monkeypatch):
    """Also when the dispatcher appends the overrun note to the backend's message (here
    forced: no allowance)."""
    import metricopt.solvers as solvers

    monkeypatch.setattr(solvers, "finish_allowance", lambda time_limit: -1.0)
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "project-forget",
                                 "--time-limit", "0.001", "--seed", "0"])
    assert result.exit_code == 0, result.stderr
    assert "past the time limit" in result.stderr
    assert result.stderr.count("stopped early") == 1
    assert "Warning: project-forget:" not in result.stderr


# ----------------------------------------------------------------- settle_bound
def _cc(weights, constant=0.0):
    w = np.asarray(weights, dtype=np.float64)
    return MetricProblem(kind="cc", n=3, labels=np.arange(3), structure="dense",
                         objective="l1", weights=w, target=np.zeros(3), lower=0.0,
                         upper=1.0, constant=constant)


def test_settle_lowers_round_off_only_and_never_raises_to_lp_value():
    p = _cc([1.0, 1.0, 1.0])
    assert settle_bound(p, 1.0, 1.0 + 1e-12, 3.0)[0] == 1.0  # round-off: lowered
    bound, note = settle_bound(p, 1.0, 1.0 + 1e-6, 3.0)  # x infeasible: kept
    assert bound == 1.0 + 1e-6 and note is None
    assert settle_bound(p, 1.0, 0.5, 3.0) == (0.5, None)  # below: kept, never raised
    bound, note = settle_bound(p, 0.0, 2.1e-16, 2.0)  # an optimum of 0
    assert bound == 0.0 and "round-off" in note and "2.1" in note


def test_settle_raises_to_the_objective_floor_only_where_it_holds():
    assert settle_bound(_cc([1.0, 2.0, 0.5]), 0.0, -7e-14, 3.5)[0] == 0.0
    assert settle_bound(_cc([1.0, 2.0, 0.5], constant=-4.0), 0.0, -7.0, 3.5)[0] == -4.0
    assert objective_floor(_cc([1.0, -1.0, 1.0])) is None
    assert settle_bound(_cc([1.0, -1.0, 1.0]), 0.0, -7e-14, 3.0) == (-7e-14, None)
    assert settle_bound(_cc([1.0, 1.0, 1.0]), None, None, 3.0) == (None, None)


# --------------------------------------------------- every tiny instance, summarised
def _tiny_instances(max_nodes, signed_nodes):
    """(weights, lines) of every graph on 2..max_nodes nodes with an edge (networkx's
    atlas: each isomorphism class once) for unit and Jaccard weights, and, on at most
    ``signed_nodes`` nodes, every assignment of +1, -1 and 0 to its edges."""
    for g in nx.graph_atlas_g():
        n = g.number_of_nodes()
        if not 2 <= n <= max_nodes or g.number_of_edges() == 0:
            continue
        edges = list(g.edges())
        for weights in ("unit", "jaccard"):
            yield weights, [f"{u} {v}" for u, v in edges]
        if n <= signed_nodes:
            for signs in itertools.product((1, -1, 0), repeat=len(edges)):
                yield "signed", [f"{u} {v} {s}" for (u, v), s in zip(edges, signs)]


def _five_node_signed_sample(count, seed=0):
    rng = random.Random(seed)
    graphs = [g for g in nx.graph_atlas_g() if g.number_of_nodes() == 5 and g.number_of_edges()]
    for _ in range(count):
        g = rng.choice(graphs)
        yield "signed", [f"{u} {v} {rng.choice((1, -1, 0))}" for u, v in g.edges()]


def _check_summary(runner, tmp_path, weights, lines):
    path = _write(tmp_path / "g.txt", lines)
    args = ["solve", "cc", path, "--json", "--seed", "1"]
    if weights != "signed":
        args += ["--weights", weights]
    result = runner.invoke(cli, [str(a) for a in args])
    where = f"{weights} {lines}"
    assert result.exit_code == 0, (where, result.stderr)
    rep = json.loads(result.stdout)
    assert rep["status_name"] == "optimal", (where, rep["message"])
    assert rep["lower_bound"] is not None and rep["lower_bound"] <= rep["lp_value"], where
    assert _ratio_statements(result.stderr) == 1, (where, result.stderr)
    assert rep["approximation_ratio"] is not None, where


def test_every_instance_up_to_three_nodes_and_a_sample_of_four_and_five(runner, tmp_path):
    """Status optimal, bound <= LP value, one ratio statement: every unit and Jaccard
    graph on 2-5 nodes, every signed one (+1, -1, 0 per edge) on 2-3 nodes, and a seeded
    sample of signed ones on 4 and 5 nodes (all of them: the slow test below)."""
    cases = list(_tiny_instances(5, 3))
    rng = random.Random(0)
    four = [c for c in _tiny_instances(4, 4) if c[0] == "signed" and len(c[1]) and
            max(int(t) for line in c[1] for t in line.split()[:2]) == 3]
    cases += rng.sample(four, 40) + list(_five_node_signed_sample(40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for weights, lines in cases:
            _check_summary(runner, tmp_path, weights, lines)


@pytest.mark.slow
def test_every_signed_instance_up_to_four_nodes_and_many_of_five(runner, tmp_path):
    cases = [c for c in _tiny_instances(4, 4) if c[0] == "signed"]
    cases += list(_five_node_signed_sample(1000, seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for weights, lines in cases:
            _check_summary(runner, tmp_path, weights, lines)
