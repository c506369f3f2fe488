"""The open-wedge relaxation of correlation clustering (``relaxation="wedges"``).

Its optimum is checked against the same LP built here from a plain enumeration of the
open wedges and solved by ``scipy.optimize.linprog``; it never exceeds the full LP's
optimum, and the certified lower bound never exceeds either.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from metricopt.cli import cli
from metricopt.exceptions import InvalidParameterError, UnsupportedProblemError
from metricopt.graph import Graph
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.problems._pairs import pair_index
from metricopt.problems._wedges import open_wedge_count, open_wedge_rows
from metricopt.solvers import choose_method, solve
from metricopt.solvers.highs import estimate_memory

pytest.importorskip("highspy", reason="the wedge LP is solved by the HiGHS backends")

_GRAPHS = ("karate", "dolphins", "lesmis")


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    labels = np.array([str(i) for i in range(n)], dtype=object)
    return Graph(n, np.array(edges, dtype=np.int64).reshape(-1, 2), labels, name=f"random{seed}")


def _naive_wedges(graph):
    """Set of (non-edge, edge, edge) packed-index triples, by brute force."""
    n = graph.n
    adj = [set() for _ in range(n)]
    for u, v in graph.edges:
        adj[u].add(v)
        adj[v].add(u)
    out = set()
    for k in range(n):
        for i in adj[k]:
            for j in adj[k]:
                if i < j and j not in adj[i]:
                    out.add((int(pair_index(i, j, n)), *sorted((int(pair_index(i, k, n)),
                                                                int(pair_index(j, k, n))))))
    return out


def _linprog_wedge_lp(graph, weights, resolution=None):
    """The wedge LP from first principles: min sum w |x - d| over 0 <= x <= 1 with
    x_ij <= x_ik + x_jk on every open wedge (d = 1 - adjacency, so |x - d| is linear)."""
    n = graph.n
    npairs = n * (n - 1) // 2
    is_edge = np.zeros(npairs, dtype=bool)
    is_edge[pair_index(graph.edges[:, 0], graph.edges[:, 1], n)] = True
    if weights == "unit":
        w = np.ones(npairs)
    else:  # lambda: edges 1 - R, non-edges R
        w = np.where(is_edge, 1.0 - resolution, resolution)
    # w x on edges (d = 0), w (1 - x) on non-edges (d = 1)
    c = np.where(is_edge, w, -w)
    constant = float(w[~is_edge].sum())
    rows = sorted(_naive_wedges(graph))
    if not rows:
        return constant
    r = np.array(rows)
    k = len(rows)
    a = sp.csr_matrix((np.tile([1.0, -1.0, -1.0], k), r.ravel(), np.arange(0, 3 * k + 1, 3)),
                      shape=(k, npairs))
    res = scipy.optimize.linprog(c, A_ub=a, b_ub=np.zeros(k), bounds=(0.0, 1.0), method="highs")
    assert res.status == 0
    return float(res.fun) + constant


def _cases():
    for name in _GRAPHS:
        yield pytest.param(name, "unit", None, id=f"{name}-unit")
    yield pytest.param("karate", "lambda", 0.3, id="karate-lambda")
    for seed in range(4):
        yield pytest.param(("random", seed), "unit", None, id=f"random{seed}-unit")
    yield pytest.param(("random", 7), "lambda", 0.4, id="random7-lambda")


def _graph(spec):
    if isinstance(spec, tuple):
        seed = spec[1]
        return _random_graph(12 + 3 * seed, 0.3, seed)
    return read_graph(spec)


@pytest.mark.parametrize("spec, weights, resolution", list(_cases()))
def test_wedge_lp_value_bound_and_full_lp(spec, weights, resolution):
    graph = _graph(spec)
    params = dict(weights=weights) if resolution is None else dict(weights=weights,
                                                                   resolution=resolution)
    wedge = build_problem("cc", graph, relaxation="wedges", **params)
    full = build_problem("cc", graph, **params)
    reference = _linprog_wedge_lp(graph, weights, resolution)
    full_res = solve(full, method="highs", lp_algorithm="simplex")
    assert full_res.status_name == "optimal"
    scale = max(1.0, abs(reference))
    for method in ("highs", "highs-lazy", "auto"):
        res = solve(wedge, method=method)
        assert res.status_name == "optimal", res.message
        assert res.method in ("highs", "highs-lazy")
        assert abs(res.fun - reference) <= 1e-8 * scale
        # a relaxation: never above the full LP, and the certificate below both
        assert res.fun <= full_res.fun + 1e-8 * scale
        assert res.lower_bound <= reference + 1e-9 * scale
        assert res.lower_bound <= full_res.fun + 1e-9 * scale
        assert res.lower_bound >= reference - 1e-6 * scale
        assert res.max_violation <= 1e-9
        assert wedge.max_violation(res.x) == res.max_violation


def test_wedge_lp_is_strictly_weaker_somewhere():
    """A 6-node graph whose full LP needs a triangle inequality of no open wedge: full
    LP 3, wedge LP 2.5 (found by a search over small random graphs)."""
    g = Graph(6, np.array([(0, 3), (0, 4), (2, 3), (2, 5), (3, 4), (3, 5), (4, 5)]),
              np.array(list("abcdef"), dtype=object))
    full = solve(build_problem("cc", g, weights="unit"), method="highs")
    wedge = solve(build_problem("cc", g, weights="unit", relaxation="wedges"), method="highs")
    assert full.fun == pytest.approx(3.0, abs=1e-9)
    assert wedge.fun == pytest.approx(_linprog_wedge_lp(g, "unit"), abs=1e-9)
    assert wedge.fun == pytest.approx(2.5, abs=1e-9)
    assert wedge.lower_bound <= wedge.fun + 1e-12


@pytest.mark.parametrize("spec", ["karate", "football", ("random", 3)])
def test_open_wedge_rows_match_brute_force(spec):
    graph = _graph(spec)
    rows = open_wedge_rows(graph)
    got = {(int(a), *sorted((int(b), int(c)))) for a, b, c in rows}
    assert len(got) == len(rows) == open_wedge_count(graph)
    assert got == _naive_wedges(graph)


def test_rows_are_the_triangles_the_targets_violate():
    """At x = d (edges 0, non-edges 1) exactly the open-wedge rows are violated."""
    g = read_graph("karate")
    p = build_problem("cc", g, weights="unit", relaxation="wedges")
    r = p.rows
    assert np.all(p.target[r[:, 0]] - p.target[r[:, 1]] - p.target[r[:, 2]] == 1.0)
    full = build_problem("cc", g, weights="unit")
    assert full.max_violation(full.target) == 1.0


def test_max_violation_counts_the_wedge_rows_only():
    """A point that breaks a closed triangle but no open wedge is feasible for it."""
    g = Graph(3, np.array([(0, 1), (1, 2), (0, 2)]), np.array(list("abc"), dtype=object))
    p = build_problem("cc", g, weights="unit", relaxation="wedges")
    assert len(p.rows) == 0
    x = np.array([1.0, 0.0, 0.0])  # x_01 = 1 > x_02 + x_12 = 0
    assert p.max_violation(x) == 0.0
    assert build_problem("cc", g, weights="unit").max_violation(x) == 1.0


def test_problem_describes_itself():
    p = build_problem("cc", read_graph("karate"), weights="unit", relaxation="wedges")
    assert p.params["relaxation"] == "wedges"
    fams = p.constraint_families()
    assert fams[0]["name"] == "open wedge" and fams[0]["count"] == len(p.rows) == p.n_constraints
    assert "relaxation" not in build_problem("cc", read_graph("karate"), weights="unit").params


@pytest.mark.parametrize("weights", ["jaccard", "modularity"])
def test_other_weights_are_refused(weights):
    with pytest.raises(InvalidParameterError, match="wedges"):
        build_problem("cc", read_graph("karate"), weights=weights, relaxation="wedges")


def test_unknown_relaxation_is_refused():
    with pytest.raises(InvalidParameterError, match="relaxation"):
        build_problem("cc", read_graph("karate"), weights="unit", relaxation="cycles")


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_projection_backends_refuse(method):
    p = build_problem("cc", read_graph("karate"), weights="unit", relaxation="wedges")
    with pytest.raises(UnsupportedProblemError, match="open-wedge"):
        solve(p, method=method)


def test_auto_picks_by_rows_per_pair_and_says_why():
    p = build_problem("cc", read_graph("lesmis"), weights="unit", relaxation="wedges")
    method, reason = choose_method(p)
    assert method == "highs" and "open-wedge" in reason
    # K_{6,6}: every non-edge pair has 6 common neighbours, 2.7 rows per pair
    edges = np.array([(i, j) for i in range(6) for j in range(6, 12)])
    g = Graph(12, edges, np.arange(12).astype(str).astype(object))
    p = build_problem("cc", g, weights="unit", relaxation="wedges")
    method, reason = choose_method(p)
    assert method == "highs-lazy" and "open-wedge" in reason
    res = solve(p)
    assert res.method == "highs-lazy" and res.status_name == "optimal"
    assert res.fun == pytest.approx(_linprog_wedge_lp(g, "unit"), abs=1e-8)


def test_memory_estimate_counts_rows_and_pairs():
    small = build_problem("cc", read_graph("karate"), weights="unit", relaxation="wedges")
    big = build_problem("cc", read_graph("football"), weights="unit", relaxation="wedges")
    assert estimate_memory(small) < estimate_memory(big)
    assert estimate_memory(big, lazy=True) == estimate_memory(big)


def test_cli_solve_reports_the_relaxation(runner, out_dir):
    res = runner.invoke(cli, ["solve", "cc", "karate", "--weights", "unit", "--relaxation",
                               "wedges", "--out", str(out_dir)], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    report = json.loads((out_dir / "report.json").read_text())
    assert report["problem"]["params"]["relaxation"] == "wedges"
    assert "open-wedge" in res.stderr
    assert report["lower_bound"] <= report["lp_value"] + 1e-9
    assert report["rounded_objective"] >= report["lower_bound"]


def test_cli_relaxation_usage_errors(runner):
    res = runner.invoke(cli, ["solve", "sc", "karate", "--relaxation", "wedges"])
    assert res.exit_code == 2
    assert "--relaxation does not apply to sc" in res.stderr
    res = runner.invoke(cli, ["bound", "cc", "karate", "--relaxation", "wedges"])
    assert res.exit_code == 2
    assert "Invalid value for '--relaxation': wedges needs --weights unit or lambda" in res.stderr


@pytest.mark.slow
def test_memory_estimate_within_20_percent_of_peak(tmp_path):
    """A 3,000-node random graph solved in a fresh process: the estimate is within 20%
    of the process's peak resident memory."""
    script = textwrap.dedent("""
        import json, resource, sys
        import numpy as np
        from metricopt.graph import Graph
        from metricopt.problems import build_problem
        from metricopt.solvers import solve
        from metricopt.solvers.highs import estimate_memory
        rng = np.random.default_rng(1)
        n = 3000
        e = np.unique(np.sort(rng.integers(0, n, (9000, 2)), axis=1), axis=0)
        e = e[e[:, 0] < e[:, 1]]
        g = Graph(n, e, np.arange(n).astype(str).astype(object), name="r")
        p = build_problem("cc", g, weights="unit", relaxation="wedges")
        res = solve(p, method="highs", threads=1)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps(dict(est=estimate_memory(p), peak=peak, status=res.status_name)))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert rec["status"] == "optimal"
    assert 0.8 * rec["peak"] <= rec["est"] <= 1.2 * rec["peak"]


@pytest.mark.parametrize("method", ["highs", "highs-lazy", "auto"])
def test_no_open_wedge_gives_zero(method):
    """Two disjoint triangles have no open wedge: the wedge LP is 0 at x = targets."""
    g = Graph(6, np.array([(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]),
              np.arange(6).astype(str).astype(object))
    p = build_problem("cc", g, weights="unit", relaxation="wedges")
    assert p.rows.shape == (0, 3)
    res = solve(p, method=method)
    assert res.status_name == "optimal"
    assert res.fun == 0.0 and res.lower_bound == 0.0
    assert np.array_equal(res.x, p.target)
