"""Cluster deletion at 10^4 and 10^5 nodes on generated graphs shaped like com-Amazon (markdown).

Usage::

    python benchmarks/bench_cd_scale.py [--sizes 10000,100000] [--methods auto,dykstra]
        [--time-limit SECONDS] [--seed 0] [--quick] [--out FILE]

What it measures
----------------
SNAP's com-Amazon (334,863 nodes, 925,872 edges, average clustering 0.40) cannot be
downloaded on these machines, so each case is a graph of :func:`metricopt.datasets.
community_graph` (planted overlapping communities with com-Amazon's edges per node,
clustering and heavy-tailed degrees; its docstring gives the measured statistics) of the
given size, seeded. Each case runs in a fresh process, as a user's script would: build
the cluster-deletion LP (:func:`metricopt.build_problem`), :func:`metricopt.solve` at the
default tolerances, and :func:`metricopt.round_solution` (20 pivot tries and the local
search, the defaults). Columns: the graph's nodes, edges, triangles and open wedges; the
method (``auto``'s pick, and each further one of ``--methods``; ``dykstra`` was
``auto``'s pick for cluster deletion at every size before ``highs-lazy`` took the large
ones); seconds to build, solve (the certificate
included), of which certificates, and to round and refine; the LP value, the certified
lower bound, the certified gap ``(LP - LB) / LB``, the clustering's objective (deleted
edges), the certified ratio ``objective / LB`` and the process's peak RSS.

``--quick`` runs a 500-node graph only (what ``tests/test_benchmarks.py`` runs). The
table is printed on stdout and, with ``--out``, rewritten after every case.

Reference timing: the combinatorial STC-LP bound of Balmaseda, Xu, Cao & Veldt (ICML
2024) took 465 s on com-Amazon and 629 s on com-DBLP; that bound is the open-wedge LP
(no triangle rows), a relaxation of this one.
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

HEADER = ("| nodes | edges | triangles | open wedges | method | build s | solve s | certificate s "
          "| rounding s | LP value | lower bound | gap | clustering | certified ratio "
          "| peak RSS GiB | status |")


def run_case(n, method, seed, time_limit):
    """One case, in this process: a dict of the measured figures."""
    import metricopt
    from metricopt.datasets import community_graph, graph_statistics

    graph = community_graph(n, seed=seed)
    stats = graph_statistics(graph)
    t0 = time.perf_counter()
    problem = metricopt.build_problem("cd", graph)
    t1 = time.perf_counter()
    res = metricopt.solve(problem, method=method, seed=seed, time_limit=time_limit)
    t2 = time.perf_counter()
    rnd = metricopt.round_solution(problem, res, seed=seed)
    t3 = time.perf_counter()
    cert = res.get("certificate_seconds", res.get("certify_seconds")) or 0.0
    lb, lp = res.lower_bound, res.fun
    return dict(
        nodes=stats["nodes"], edges=stats["edges"], triangles=stats["triangles"],
        open_wedges=stats["open_wedges"], method=res.method, build=t1 - t0, solve=t2 - t1,
        certificate=float(cert), rounding=t3 - t2, lp=lp, lb=lb,
        gap=None if not lb else (lp - lb) / lb, objective=rnd.objective,
        ratio=None if not lb else rnd.objective / lb, status=res.status_name,
        rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2 ** 30)


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def row(c):
    return (f"| {c['nodes']:,} | {c['edges']:,} | {c['triangles']:,} | {c['open_wedges']:,} "
            f"| {c['method']} | {c['build']:.1f} | {c['solve']:.1f} | {c['certificate']:.2f} "
            f"| {c['rounding']:.1f} | {c['lp']:.2f} | {_fmt(c['lb'], '.2f')} "
            f"| {_fmt(c['gap'], '.1e')} | {c['objective']:.0f} | {_fmt(c['ratio'], '.4f')} "
            f"| {c['rss']:.2f} | {c['status']} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated node counts")
    ap.add_argument("--methods", default="auto", help="comma-separated methods")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per solve")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a 500-node graph only")
    ap.add_argument("--out", default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one is not None:  # a child process: one case, one JSON line
        print(json.dumps(run_case(args.one, args.methods, args.seed, args.time_limit)))
        return 0
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    lines = [f"Generated com-Amazon-shaped graphs (seed {args.seed}); {platform.node()}, "
             f"{os.cpu_count()} CPUs; each case in its own process.", "", HEADER,
             "|" + "---|" * (HEADER.count("|") - 1)]
    cases = [(n, m) for n in sizes for m in args.methods.split(",") if m]
    for n, method in cases:
        print(f"case n={n} {method}", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--methods", method,
                               "--seed", str(args.seed), "--time-limit", str(args.time_limit)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            lines.append(f"| {n:,} (generated) | | | | {method} | failed: exit "
                         f"{proc.returncode} |")
        else:
            lines.append(row(json.loads(proc.stdout.splitlines()[-1])))
        if args.out:
            with open(args.out, "w") as fh:
                fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
