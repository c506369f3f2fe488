"""Project and Forget's MET(G) oracle locally and on a Dask cluster, side by side.

For each case, one run with the local oracle (``threads`` numba threads) and one with
``scheduler=`` a ``LocalCluster`` of ``--workers`` single-threaded worker processes on
the same machine; both at tol = gap_tol = 1e-2 (the scale issue's tolerances). Columns:
wall seconds, oracle seconds (sum of the per-call ``oracle_seconds`` records) and their
share, oracle calls, LP value, certified bound, and whether ``x`` and the rounded
clustering (pivot, seed 0) are identical to the local run's.

A second table prices a *dense* scan on a cluster: every oracle call would ship ``x``
(``8 C(n, 2)`` bytes) to each worker. It times a broadcast ``scatter`` of such a vector
to the cluster's workers against one local read-only scan (the exact largest triangle
violation, one thread: ``problems._triangles.max_triangle_violation``) of the same ``n``;
a cluster of W workers would split the scan W ways, so it pays when ship / scan is well
below 1 - 1/W.

Cases (``--cases``): ``hepth-signed`` (the signed ca-HepTh of
``bench_project_forget.py``), ``hepth-signed-quick`` (its 3000-edge subgraph), ``gen-N``
(a generated signed graph on N nodes, ``bench_signed_graphs.py`` shape), and
``NAME-support`` (Jaccard correlation clustering of a bundled or data graph in the
support-sized layout, whose support scan the cluster runs: ``grqc-support`` is ca-GrQc).

Run: ``python benchmarks/bench_dask_oracle.py [--cases hepth-signed] [--workers 2]
[--threads 2] [--dense-n 2000,4158] [--quick]``. ``--workers 0`` starts no cluster: the
local runs alone, no dense table. ``--quick`` (a check that the script works, with no data
files and no cluster): the warm-up and the cases on ``gen-200`` and ``--workers 0``, unless
the other flags say otherwise.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_project_forget import DATA, _problem  # noqa: E402
from metricopt.result import Status  # noqa: E402


def _case(name):
    if name == "hepth-signed":
        return _problem(f"{DATA}/ca-HepTh.txt", "signed")
    if name == "hepth-signed-quick":
        return _problem(("ca-HepTh", 3000), "signed")
    if name.startswith("gen-"):
        from bench_signed_graphs import generated_problem

        return generated_problem(int(name[4:]))
    if name.endswith("-support"):
        from metricopt import build_problem, read_graph

        graph = name[: -len("-support")]
        graph = {"grqc": "ca-GrQc", "hepth": "ca-HepTh"}.get(graph, graph)
        path = f"{DATA}/{graph}.txt"
        return build_problem("cc", read_graph(path if os.path.exists(path) else graph),
                             layout="support")
    raise SystemExit(f"unknown case {name!r}")


def _solve(prob, threads, scheduler):
    from metricopt.rounding import round_solution
    from metricopt.solvers import solve

    t0 = time.perf_counter()
    res = solve(prob, method="project-forget", tol=1e-2, gap_tol=1e-2, threads=threads,
                scheduler=scheduler)
    wall = time.perf_counter() - t0
    oracle = float(sum(r["oracle_seconds"] for r in res["history"]))
    labels = round_solution(prob, res["x"], method="pivot", n_tries=5, seed=0)["labels"]
    return res, wall, oracle, labels


def _warm_up(threads, client, quick=False):
    """Compile the kernels (local threads, and the workers' serial ones) outside the timings."""
    for prob in (_case("gen-200") if quick else _problem(("ca-HepTh", 400), "signed"),
                 _case("karate-support")):
        _solve(prob, threads, None)
        if client is not None:
            _solve(prob, threads, client)


def _same_x(a, b):
    """Whether two answers' ``x`` are identical (arrays, or support points)."""
    if hasattr(a, "pairs"):
        return np.array_equal(a.pairs, b.pairs) and np.array_equal(a.values, b.values)
    return np.array_equal(a, b)


def _solver_rows(cases, threads, client, quick=False):
    _warm_up(threads, client, quick)
    print("| case | n, listed pairs | oracle | calls | wall s | oracle s | oracle share | LP value "
          "| lower bound | status | same x and clusters |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in cases:
        prob = _case(name)
        ref = None
        for where, sched in (("local", None), ("cluster", client))[:1 if client is None else 2]:
            res, wall, oracle, labels = _solve(prob, threads, sched)
            same = "-" if ref is None else (
                "yes" if _same_x(ref[0]["x"], res["x"])
                and np.array_equal(ref[1], labels) else "NO")
            if ref is None:
                ref = (res, labels)
            print(f"| {name} | {prob.n}, {prob.pairs.shape[0]} | {where} | {res['nit']} "
                  f"| {wall:.1f} | {oracle:.1f} | {oracle / wall:.0%} | {res['fun']:.6f} "
                  f"| {res['lower_bound']:.6f} | {Status.NAMES[res['status']]} | {same} |",
                  flush=True)


def _dense_rows(sizes, client, threads):
    from metricopt.problems._triangles import max_triangle_violation

    workers = len(client.nthreads())
    print()
    print("| n | x bytes | broadcast to workers s | one local serial scan s | ship / scan |")
    print("|---|---|---|---|---|")
    for n in sizes:
        rng = np.random.default_rng(n)
        x = rng.uniform(0.0, 1.0, n * (n - 1) // 2)
        t0 = time.perf_counter()
        fut = client.scatter(x, broadcast=True, hash=False)
        client.replicate([fut], n=workers)
        ship = time.perf_counter() - t0
        client.cancel([fut])
        max_triangle_violation(rng.uniform(0.0, 1.0, 1770), 60)  # compile outside the timing
        t0 = time.perf_counter()
        max_triangle_violation(x, n)
        scan = time.perf_counter() - t0
        print(f"| {n} | {x.nbytes / 2**20:.0f} MiB | {ship:.2f} | {scan:.2f} "
              f"| {ship / scan:.3f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=None, help="default: hepth-signed (--quick: gen-200)")
    ap.add_argument("--workers", type=int, default=None,
                    help="default: 2 (--quick: 0, no cluster)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dense-n", default=None, help="default: 2000,4158 (--quick: 100)")
    ap.add_argument("--quick", action="store_true", help="small generated instances only")
    args = ap.parse_args(argv)
    for name, default, quick in (("cases", "hepth-signed", "gen-200"), ("workers", 2, 0),
                                 ("dense_n", "2000,4158", "100")):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else default)
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    if args.workers == 0:  # the local oracle alone
        if args.cases:
            _solver_rows(args.cases.split(","), args.threads, None, args.quick)
        return
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if args.cases:
            _solver_rows(args.cases.split(","), args.threads, client, args.quick)
        if args.dense_n:
            _dense_rows([int(v) for v in args.dense_n.split(",")], client, args.threads)


if __name__ == "__main__":
    main()
