"""Cluster editing search: the numba kernel against the former full-sweep search (markdown).

Usage::

    python benchmarks/bench_editing_search.py [--graphs jazz,USAir97,ca-GrQc,ca-HepTh]
        [--iterations-per-node 5] [--starts 2] [--seed 0] [--data-dir DIR] [--out FILE]

What it measures
----------------
Per graph (read whole, every component), both searches side by side in one process from
the same start (every node alone) with the same budget (perturbations per node and
starts; components of at most 16 critical cliques solved exactly by both):

* before: :func:`metricopt.rounding.editing_search._ils_reference`, the former iterated
  local search, whose local search sweeps the whole component after every perturbation;
* after: :func:`metricopt.rounding.editing_search._ils`, the kernel
  (:mod:`metricopt.rounding._editing_search_kernels`): moves cost their neighbourhood,
  the local search follows a work list, rejected perturbations are undone from a log.

Reported: the cluster-editing cost each returns and its seconds (the kernel compiled
before the clock starts). The table is printed on stdout and, with ``--out``, rewritten
after every graph. Timings on a shared machine are indicative only.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from _data import data_dir

GRAPHS = "jazz,USAir97,ca-GrQc,ca-HepTh"
HEADER = ("| graph | n | m | budget (per node x starts) | cost before | s before | cost after | "
          "s after | before / after (s) |")


def _search(g, args, reference):
    from metricopt.rounding import editing_search as es

    if reference:
        def ils(n, edges, labels, seed, iterations):
            return es._ils_reference(n, edges, labels, np.random.default_rng(seed), iterations)
    else:
        ils = es._ils
    saved = es._ils
    es._ils = ils
    try:
        t0 = time.perf_counter()
        r = es.search_cluster_editing(g.n, g.edges, None, seed=args.seed, n_starts=args.starts,
                                      iterations_per_node=args.iterations_per_node)
        return r.objective, time.perf_counter() - t0
    finally:
        es._ils = saved


def run_graph(graph, args):
    import metricopt

    path = data_dir(args.data_dir) / f"{graph}.txt"
    g = metricopt.read_graph(str(path) if path.exists() else graph, keep_all_components=True)
    before, t_before = _search(g, args, True)
    after, t_after = _search(g, args, False)
    return (f"| {graph} | {g.n} | {g.m} | {args.iterations_per_node} x {args.starts} | {before} | "
            f"{t_before:.1f} | {after} | {t_after:.1f} | {t_before / max(t_after, 1e-9):.1f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--iterations-per-node", type=int, default=5)
    parser.add_argument("--starts", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import metricopt
    from metricopt.rounding.editing_search import search_cluster_editing

    search_cluster_editing(30, [[i, i + 1] for i in range(29)] + [[0, 2], [5, 7]], seed=0,
                           exact_nodes=0, iterations_per_node=1, n_starts=1)  # compile
    lines = [f"metricopt {metricopt.__version__}, python {platform.python_version()}, "
             f"numpy {np.__version__}, {os.cpu_count()} cores (shared), seed {args.seed}", "",
             HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    for graph in args.graphs.split(","):
        lines.append(run_graph(graph, args))
        print(lines[-1], flush=True)
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
