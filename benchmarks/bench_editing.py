"""Cluster editing (unit cc): certified ratio before and after the editing bound and search (markdown).

Usage::

    nice -n 5 python benchmarks/bench_editing.py [--graphs jazz,netscience,USAir97,ca-GrQc]
        [--seed 0] [--lp-time 240] [--iterations-per-node 20] [--starts 4]
        [--largest-component] [--data-dir DIR] [--out FILE]

What it measures
----------------
Per graph, read whole (every component, ``--keep-all-components``; with
``--largest-component``, its largest component only):

* before: :func:`metricopt.pipeline.run` with unit weights (method ``highs-lazy``,
  seeded): its LP value, certified bound ``LB`` and returned (refined) clustering;
* the editing search (:func:`metricopt.rounding.editing_search.search_cluster_editing`)
  from the run's clustering, budget in iterations per node and starts (no seconds);
* the editing bound (:func:`metricopt.solvers.editing_lp.cluster_editing_bound`):
  components split, critical cliques merged, components of at most 16 cliques solved by
  exhaustion, the others by the triangle LP plus star 2-partition rows (each LP at most
  ``--lp-time`` seconds, and stopped once it reaches the searched clustering's cost on
  its component), with the count of components per relaxation;
* ratios: clustering / bound, before (``refined / LB``) and after (``search / max(LB,
  editing bound)``: both bounds are certified); and each part's seconds.

The table is printed on stdout and, with ``--out``, rewritten after every graph.
Timings on a shared machine are indicative only.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from _data import data_dir

GRAPHS = "jazz,netscience,USAir97,ca-GrQc"
HEADER = ("| graph | n | m | components | LP | LB before | clustering before | ratio before | "
          "editing bound (relaxations) | clustering after | ratio after | run s | bound s | search s |")


def run_graph(graph, args):
    from metricopt import pipeline
    from metricopt.bounds.editing_exact import components
    from metricopt.rounding.editing_search import search_cluster_editing
    from metricopt.solvers.editing_lp import cluster_editing_bound

    path = data_dir(args.data_dir) / f"{graph}.txt"
    source = str(path) if path.exists() else graph
    t0 = time.perf_counter()
    outcome = pipeline.run(source, "cc", method="highs-lazy", problem_params={"weights": "unit"},
                           solver_options={"seed": args.seed}, rounding={"seed": args.seed},
                           read_options={"keep_all_components": not args.largest_component})
    t_run = time.perf_counter() - t0
    rep = outcome.report
    g = outcome.data
    lb, lp = rep["lower_bound"], rep["lp_value"]
    before = rep["rounding"]["refined_objective"]
    labels = np.asarray(outcome.rounding.labels)
    t0 = time.perf_counter()
    search = search_cluster_editing(g.n, g.edges, labels, seed=args.seed, n_starts=args.starts,
                                    iterations_per_node=args.iterations_per_node)
    t_search = time.perf_counter() - t0
    # as `solve --relaxation editing`: a component's LP stops once it reaches the search's cost
    t0 = time.perf_counter()
    bound = cluster_editing_bound(g.n, g.edges, time_limit=args.lp_time, threads=1,
                                  clustering=search.labels)
    t_bound = time.perf_counter() - t0
    if search.objective_before != round(before):
        print(f"{graph}: the run's objective {before} differs from the editing cost "
              f"{search.objective_before}", file=sys.stderr)
    for d in bound.components:
        if d["relaxation"] != "exhaustive":
            print(f"{graph}: component {d['component']} ({d['nodes']} nodes, {d['cliques']} cliques): "
                  f"{d['relaxation']} {d['value']:.2f}, {d.get('rounds')} rounds, {d.get('rows')} rows "
                  f"({d.get('star_rows')} stars), {d.get('stopped')}, {d.get('seconds', 0):.1f} s",
                  file=sys.stderr)
    rel = ", ".join(f"{k} {v}" for k, v in sorted(bound.relaxations.items()))
    n_comp = int(components(g.n, g.edges).max()) + 1
    # both bounds are certified: the better one certifies the clustering
    best = max(bound.bound, lb)
    return (f"| {graph} | {g.n} | {g.m} | {n_comp} | {lp:.6g} | {lb:.6g} | {before:.0f} | "
            f"{before / lb:.4f} | {bound.bound} ({rel}) | {search.objective} | "
            f"{search.objective / best:.4f} | {t_run:.1f} | {t_bound:.1f} | {t_search:.1f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lp-time", type=float, default=240.0)
    parser.add_argument("--iterations-per-node", type=int, default=20)
    parser.add_argument("--starts", type=int, default=4)
    parser.add_argument("--largest-component", action="store_true")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import metricopt

    lines = [f"metricopt {metricopt.__version__}, python {platform.python_version()}, "
             f"numpy {np.__version__}, {os.cpu_count()} cores (shared), seed {args.seed}, "
             f"LP time {args.lp_time:g} s per component, {args.starts} starts x "
             f"{args.iterations_per_node} iterations per node", "", HEADER,
             "|" + "---|" * (HEADER.count("|") - 1)]
    for graph in args.graphs.split(","):
        start = time.perf_counter()
        lines.append(run_graph(graph, args))
        print(f"{graph}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
