"""The support-sized correlation-clustering layout: its closed forms against the dense
sums, its scan against brute force, and its solves against the dense solves and the exact
LP values."""

import warnings

import numpy as np
import pytest

from exact_values import BUNDLED_EXACT
from metricopt import solve
from metricopt.datasets import load_bundled as load_dataset
from metricopt.exceptions import InvalidParameterError, UnsupportedProblemError
from metricopt.graph import Graph
from metricopt.problems import build_problem
from metricopt.problems._pairs import pair_index
from metricopt.problems._support_scan import (
    pair_keys,
    pair_table,
    reference_violations,
    scan_support,
    support_neighbours,
    table_grow,
    table_lookup,
)
from metricopt.problems.support import SupportPoint, clustering_cost
from metricopt.rounding.objectives import cc_cost
from metricopt.solvers._support_kernels import keyed_merge, reference_merge, row_keys

MODES = [("jaccard", {}), ("unit", {}), ("lambda", dict(resolution=0.3)),
         ("lambda-degree", dict(resolution=0.01)), ("modularity", {})]


def _pair(name, weights, **kw):
    g = load_dataset(name)
    return (build_problem("cc", g, weights=weights, layout="dense", **kw),
            build_problem("cc", g, weights=weights, layout="support", **kw))


@pytest.mark.parametrize("weights,kw", MODES)
def test_explicit_and_bulk_pairs_are_the_dense_pairs(weights, kw):
    dense, sup = _pair("lesmis", weights, **kw)
    n = dense.n
    idx = pair_index(sup.pairs[:, 0], sup.pairs[:, 1], n)
    assert np.array_equal(dense.weights[idx], sup.weights)
    assert np.array_equal(dense.target[idx], sup.target)
    bulk = np.ones(dense.weights.size, dtype=bool)
    bulk[idx] = False
    i, j = np.triu_indices(n, 1)
    np.testing.assert_allclose(sup.bulk.pair_weights(i[bulk], j[bulk]), dense.weights[bulk],
                               rtol=1e-15, atol=0)
    assert np.all(dense.target[bulk] == sup.bulk.value)
    assert sup.units.keys() == dense.units.keys()
    for key in sup.units:
        np.testing.assert_allclose(sup.units[key], dense.units[key], rtol=1e-12)


@pytest.mark.parametrize("weights,kw", MODES)
def test_closed_form_costs_and_objectives(weights, kw):
    dense, sup = _pair("football", weights, **kw)
    rng = np.random.default_rng(1)
    n = dense.n
    for clusters in (1, 3, 12, n):
        labels = rng.integers(0, clusters, n)
        np.testing.assert_allclose(clustering_cost(sup, labels), cc_cost(dense, labels),
                                   rtol=1e-12)
    i, j = np.triu_indices(n, 1)
    for share in (0.0, 0.01, 0.3):
        sel = np.sort(rng.choice(i.size, int(share * i.size), replace=False))
        point = SupportPoint(n, np.stack([i[sel], j[sel]], 1), rng.random(sel.size))
        x = point.to_packed()
        np.testing.assert_allclose(sup.objective_value(point), dense.objective_value(x),
                                   rtol=1e-12)
        assert sup.max_violation(point) == pytest.approx(dense.max_violation(x), abs=1e-14)
        assert sup.bound_violation(point) == dense.bound_violation(x)


def _random_point(rng, n, share, low=0.0, high=1.0):
    i, j = np.triu_indices(n, 1)
    sel = rng.random(i.size) < share
    return i[sel], j[sel], rng.uniform(low, high, sel.sum())


def _serial_scan(seed, n_max, share_min):
    """A random support point (values mostly in [0, bulk), some above it, above 2 bulk or
    below 0), its table and support graph, and the rows and worst of one serial scan."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, n_max))
    bulk = float(rng.choice([1.0, 0.7]))
    low, high = [(0.0, bulk), (-0.2, 1.3 * bulk), (-0.1, 2.5 * bulk)][seed % 3]
    pi, pj, x = _random_point(rng, n, rng.uniform(share_min, 0.9), low, high)
    tol = float(rng.choice([0.0, 0.05]))
    table = pair_table(pair_keys(pi, pj, n))
    csr = support_neighbours(pi, pj, x, n, bulk)
    count, worst = scan_support(pi, pj, x, n, bulk, *table, *csr, tol,
                                np.empty((0, 4), dtype=np.int32))
    rows = np.empty((count, 4), dtype=np.int32)
    scan_support(pi, pj, x, n, bulk, *table, *csr, tol, rows)
    return (pi, pj, x, n, bulk, tol, table, csr), rows, worst


@pytest.mark.parametrize("seed", range(12))
def test_support_scan_finds_every_violated_inequality(seed):
    (pi, pj, x, n, bulk, tol, _, _), rows, worst = _serial_scan(seed, 14, 0.1)
    want, want_worst = reference_violations(pi, pj, x, n, bulk, tol)
    assert {tuple(r) for r in rows} == want
    assert worst == pytest.approx(want_worst, abs=1e-12)



@pytest.mark.parametrize("seed", range(9))
@pytest.mark.parametrize("k", [1, 3, 50])
def test_scan_shares_concatenate_to_the_whole_scan(seed, k):
    """The Dask shares (:mod:`metricopt.solvers._dask_support`), run here one by one, find
    the rows of one local scan in its order, and its largest violation."""
    from metricopt.solvers._dask_support import scan_share, work_ranges

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    bulk = float(rng.choice([1.0, 0.7]))
    low, high = [(0.0, bulk), (-0.2, 1.3 * bulk), (-0.1, 2.5 * bulk)][seed % 3]
    pi, pj, x = _random_point(rng, n, rng.uniform(0.1, 0.9), low, high)
    table = pair_table(pair_keys(pi, pj, n))
    csr = support_neighbours(pi, pj, x, n, bulk)
    count, worst = scan_support(pi, pj, x, n, bulk, *table, *csr, 0.0,
                                np.empty((0, 4), dtype=np.int32))
    rows = np.empty((count, 4), dtype=np.int32)
    scan_support(pi, pj, x, n, bulk, *table, *csr, 0.0, rows)
    bounds = work_ranges(csr[0], csr[1], k)
    assert bounds[0] == 0 and bounds[-1] == n and np.all(np.diff(bounds) > 0)
    shares = [(lo, hi, False) for lo, hi in zip(bounds[:-1], bounds[1:])] + [(0, 0, True)]
    data = (pi, pj, x, *table, *csr)
    counted = [scan_share(data, n, bulk, 0.0, *share, None) for share in shares]
    parts = [scan_share(data, n, bulk, 0.0, *share, c) for share, (c, _) in zip(shares, counted)]
    np.testing.assert_array_equal(np.concatenate(parts), rows)
    assert max(w for _, w in counted) == worst

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threaded_local_scan_is_the_serial_scan(seed, threads):
    """The local scan on threads (:mod:`metricopt.solvers._support_local`) finds the rows
    of one serial scan in its order, and its largest violation, with any thread count."""
    from metricopt.solvers._support_local import LocalSupportScan

    (pi, pj, x, n, bulk, tol, table, csr), rows, worst = _serial_scan(seed, 60, 0.05)
    count = rows.shape[0]
    counted = []
    scan = LocalSupportScan(threads)
    try:
        got, got_worst = scan(pi, pj, x, n, bulk, table, csr, tol, check=counted.append)
        np.testing.assert_array_equal(got, rows)
        assert got_worst == worst and counted == [count]
        # a stop asked for before the first share: nothing is scanned, None comes back
        assert scan(pi, pj, x, n, bulk, table, csr, tol, stop=lambda: True) is None
    finally:
        scan.close()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shares", [1, 3])
def test_row_positions_from_sorted_keys_are_the_reference_positions(seed, shares):
    """The rows as sorted distinct keys, one lookup per pair in shares
    (:func:`positions_part`, :func:`missing_keys`, :func:`complete_part`): the lacking keys
    of :func:`missing_pairs` and, once they joined the table, the positions of
    :func:`row_positions`, row for row in key order."""
    from metricopt.solvers._support_kernels import (
        complete_part,
        distinct_sorted,
        missing_keys,
        missing_pairs,
        positions_part,
        row_positions,
    )

    rng = np.random.default_rng(seed)
    n = 40
    abc = np.sort(np.array([rng.choice(n, 3, replace=False) for _ in range(500)]), axis=1)
    rows = np.concatenate([abc, rng.integers(0, 3, (500, 1))], axis=1).astype(np.int32)
    rows = np.concatenate([rows, rows[:50]])  # some rows twice, as a scan may find them
    i, j = np.triu_indices(n, 1)
    listed = np.sort(rng.choice(i.size, i.size // 2, replace=False))
    keys0 = pair_keys(i[listed], j[listed], n)
    table = pair_table(keys0)
    want_missing = np.unique(missing_pairs(rows, n, *table))
    keys = row_keys(rows, n)
    keys.sort()
    keys = keys[: distinct_sorted(keys)]
    assert np.array_equal(keys, np.unique(row_keys(rows, n)))
    r = keys.shape[0]
    ta, tb, tc = (np.empty(r, dtype=np.int32) for _ in range(3))
    bounds = np.linspace(0, r, shares + 1).astype(np.int64)
    lacking = sum(positions_part(keys, n, *table, bounds[t], bounds[t + 1], ta, tb, tc)
                  for t in range(shares))
    np.testing.assert_array_equal(np.unique(missing_keys(keys, n, ta, tb, tc, lacking)),
                                  want_missing)
    grown = table_grow(table, want_missing, keys0.size)
    for t in range(shares):
        complete_part(keys, n, *grown, bounds[t], bounds[t + 1], ta, tb, tc)
    wa, wb, wc, wk = row_positions(rows, n, *grown)
    first = np.unique(wk, return_index=True)[1]
    for got, want in zip((ta, tb, tc), (wa, wb, wc)):
        np.testing.assert_array_equal(got, want[first])


def test_pair_table_grows_and_finds_every_key():
    rng = np.random.default_rng(0)
    keys = rng.choice(10**9, 3000, replace=False).astype(np.int64)
    table = pair_table(keys[:10])
    start = 10
    for stop in (11, 100, 1000, 3000):
        table = table_grow(table, keys[start:stop], start)
        start = stop
    assert np.array_equal(table_lookup(*table, keys), np.arange(3000))
    others = np.setdiff1d(rng.choice(10**9, 500), keys)
    assert np.all(table_lookup(*table, others) == -1)


def test_keyed_merge_matches_the_reference():
    rng = np.random.default_rng(3)
    old_k = np.unique(rng.integers(0, 200, 60))
    new_k = np.unique(rng.integers(0, 200, 60))
    ca, cb, cc = (rng.integers(0, 99, old_k.size).astype(np.int32) for _ in range(3))
    cz = rng.random(old_k.size)
    na, nb, nc = (rng.integers(0, 99, new_k.size).astype(np.int32) for _ in range(3))
    ta, tb, tc, tz, m = keyed_merge(ca, cb, cc, cz, old_k, old_k.size, na, nb, nc, new_k,
                                    new_k.size)
    old = [(k, (a, b, c), z) for k, a, b, c, z in zip(old_k, ca, cb, cc, cz)]
    new = [(k, (a, b, c), 0.0) for k, a, b, c in zip(new_k, na, nb, nc)]
    want = reference_merge(old, new)
    assert m == len(want)
    got = [(a, b, c) for a, b, c in zip(ta[:m], tb[:m], tc[:m])]
    assert got == [row for _, row, _ in want]
    assert np.array_equal(tz[:m], [z for _, _, z in want])


def test_row_keys_order_triangles_then_sides():
    rows = np.array([[0, 1, 2, 2], [0, 1, 2, 0], [0, 1, 3, 1]], dtype=np.int64)
    keys = row_keys(rows, 4)
    assert list(np.argsort(keys)) == [1, 0, 2]


@pytest.mark.parametrize("name,weights,kw", [
    ("karate", "jaccard", {}), ("lesmis", "jaccard", {}), ("dolphins", "unit", {}),
    ("football", "unit", {}), ("lesmis", "lambda", dict(resolution=0.3)),
    ("karate", "modularity", {}), ("dolphins", "lambda-degree", dict(resolution=0.01))])
def test_support_solve_gives_the_dense_lp_value_and_bound(name, weights, kw):
    dense, sup = _pair(name, weights, **kw)
    opts = dict(method="project-forget", tol=1e-8, gap_tol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rd, rs = solve(dense, **opts), solve(sup, **opts)
    assert rd["status_name"] == rs["status_name"] == "optimal"
    assert rs["fun"] == pytest.approx(rd["fun"], rel=1e-9)
    assert rs["lower_bound"] == pytest.approx(rd["lower_bound"], rel=1e-9)
    assert isinstance(rs["x"], SupportPoint)
    assert rs["max_violation"] <= 1e-8
    key = (f"cc-{weights}", name)
    if key in BUNDLED_EXACT:
        exact = BUNDLED_EXACT[key].value
        assert rs["lower_bound"] <= exact * (1 + 1e-9)
        assert rs["fun"] == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("max_iter", [1, 3, 8])
def test_bound_of_a_stopped_support_run_is_below_the_lp(max_iter):
    sup = build_problem("cc", load_dataset("lesmis"), weights="jaccard", layout="support")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(sup, method="project-forget", max_iter=max_iter, polish=False)
    exact = BUNDLED_EXACT[("cc-jaccard", "lesmis")].value
    assert r["lower_bound"] is not None and r["lower_bound"] <= exact
    assert r["fun"] == pytest.approx(sup.objective_value(r["x"]))


def test_support_layout_refuses_what_it_cannot_hold():
    g = load_dataset("karate")
    with pytest.raises(InvalidParameterError, match="layout='support'"):
        build_problem("cc", g, weights="unit", relaxation="wedges", layout="support")
    signed = Graph(n=3, edges=[(0, 1), (1, 2)], labels=np.arange(3), weights=[1.0, -1.0])
    with pytest.raises(InvalidParameterError, match="layout='support'"):
        build_problem("cc", signed, weights="signed", layout="support")
    sup = build_problem("cc", g, weights="unit", layout="support")
    with pytest.raises(UnsupportedProblemError, match="support-sized"):
        solve(sup, method="dykstra")


def test_auto_layout_is_dense_on_small_graphs():
    p = build_problem("cc", load_dataset("karate"))
    assert p.structure == "dense"


def test_auto_layout_follows_size_and_sparsity():
    from metricopt.datasets import community_graph

    g = community_graph(3000, seed=0)  # about 2,700 nodes, sparse: support
    assert g.n >= 2000
    for weights in ("jaccard", "unit"):
        assert build_problem("cc", g, weights=weights).structure == "support"
    assert build_problem("cc", g, weights="signed" if g.is_signed else "unit",
                         layout="dense").structure == "dense"
    small = community_graph(1500, seed=0)  # below 2,000 nodes: dense
    assert build_problem("cc", small).structure == "dense"


def _cliques(sizes, seed=0):
    """A graph of cliques joined in a ring by one edge each (node labels shuffled)."""
    rng = np.random.default_rng(seed)
    edges, start = [], 0
    for k in sizes:
        i, j = np.triu_indices(k, 1)
        edges.append(np.stack([i + start, j + start], 1))
        start += k
    heads = np.cumsum([0] + list(sizes[:-1]))
    edges.append(np.stack([heads, np.roll(heads, -1)], 1))
    e = np.concatenate(edges)
    perm = rng.permutation(start)
    e = np.sort(perm[e], axis=1)
    return Graph(n=start, edges=np.unique(e, axis=0), labels=np.arange(start))


@pytest.mark.parametrize("seed", range(4))
def test_near_pairs_are_counted_exactly(seed):
    """:func:`count_near_pairs` counts the pattern of ``triu(A + A A, 1)``."""
    import scipy.sparse as sp

    from metricopt.datasets import community_graph
    from metricopt.problems._support_scan import count_near_pairs

    rng = np.random.default_rng(seed)
    g = community_graph(int(rng.integers(200, 800)), seed=seed) if seed % 2 \
        else _cliques(list(rng.integers(2, 30, 20)), seed)
    a = g.adjacency()
    want = sp.triu(a + a @ a, k=1).nnz
    assert count_near_pairs(g) == want


def test_auto_layout_counts_pairs_not_wedges():
    """Cliques: many wedges per pair with a common neighbour. 2,000 nodes in cliques of
    50: 2.35 million wedges, over 5% of the 2 million pairs, but 49,000 pairs, under it:
    support-sized (ca-HepPh: 15.4 million wedges, 1.6 million pairs)."""
    g = _cliques([50] * 40)
    deg = g.degrees().astype(float)
    wedges = float(deg @ (deg - 1) / 2)
    assert g.n == 2000 and wedges > 0.05 * g.n * (g.n - 1) / 2
    assert build_problem("cc", g).structure == "support"
    assert build_problem("cc", _cliques([1000, 1000])).structure == "dense"


def test_a_named_backend_without_the_layout_keeps_dense():
    from metricopt.pipeline._run import _layout_for_method

    assert _layout_for_method("cc", "highs-lazy", {}) == {"layout": "dense"}
    assert _layout_for_method("cc", "project-forget", {}) == {}
    assert _layout_for_method("cc", "auto", {}) == {}
    assert _layout_for_method("cc", "highs", {"layout": "support"}) == {"layout": "support"}
    assert _layout_for_method("sc", "highs", {}) == {}


def test_cli_refuses_a_method_without_the_layout_before_reading(runner):
    from metricopt.cli import cli

    res = runner.invoke(cli, ["solve", "cc", "karate", "--layout", "support", "--method",
                              "dykstra"])
    assert res.exit_code == 2
    assert "--layout" in res.stderr and "project-forget" in res.stderr


@pytest.mark.parametrize("stop", [2, 5])
def test_support_checkpoint_resumes_to_the_same_answer(tmp_path, stop):
    """A run stopped after ``stop`` calls and resumed ends where the uninterrupted run
    does, bit for bit (lesmis: 1,249 explicit pairs, 2,580 run pairs after call 2)."""
    sup = build_problem("cc", load_dataset("lesmis"), weights="jaccard", layout="support")
    opts = dict(method="project-forget", passes=10, polish=False)
    path = str(tmp_path / "ck.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve(sup, max_iter=12, **opts)
        solve(sup, max_iter=stop, checkpoint=path, **opts)
        again = solve(sup, max_iter=12, resume=path, **opts)
    assert again["nit"] == ref["nit"]
    assert again["support_pairs"] == ref["support_pairs"] > sup.pairs.shape[0]
    np.testing.assert_array_equal(again["x"].pairs, ref["x"].pairs)
    np.testing.assert_array_equal(again["x"].values, ref["x"].values)
    assert again["lower_bound"] == ref["lower_bound"]


def test_support_checkpoint_is_refused_by_another_problem(tmp_path):
    from metricopt.exceptions import InputError

    g = load_dataset("lesmis")
    sup = build_problem("cc", g, weights="jaccard", layout="support")
    path = str(tmp_path / "ck.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solve(sup, method="project-forget", max_iter=3, checkpoint=path)
        other = build_problem("cc", g, weights="unit", layout="support")
        with pytest.raises(InputError):
            solve(other, method="project-forget", max_iter=3, resume=path)
