"""Dykstra's proximal recentring against its gamma-growth stages, side by side (markdown).

Usage::

    python benchmarks/bench_proximal.py [--graphs celegans_metabolic,Harvard500,...]
        [--weights jaccard] [--gaps 1e-4] [--time-limit 300] [--data-dir DIR] [--out FILE]

What it measures
----------------
Per graph and ``gap_tol``, ``cc`` with ``--method dykstra`` twice, at the same time in two
processes of one thread each (so that the machine's load is the same for both):

* growth: ``proximal=0``, the stages of growing gamma (1, 10, 100, ...), the extrapolation
  and the LP polish (dykstra's default before the recentring);
* proximal: the default, the QP recentred at the iterate every 5 passes at gamma 10
  (:func:`metricopt.solvers._regularised.recentre`), polishing only restricted LPs of at
  most 20,000 rows.

Reported: status, seconds of the solve, passes, certified LP gap and LP value of each, and
the ratio of the seconds. The table is printed on stdout and, with ``--out``, rewritten
after every case. Timings on a shared machine are indicative only.
"""

import argparse
import multiprocessing
import os
import platform
import sys
from pathlib import Path

from _data import data_dir

GRAPHS = "celegans_metabolic,Harvard500,celegansneural,USAir97,adjnoun,jazz,netscience"
HEADER = ("| graph | n | weights | gap_tol | growth: status, passes | s | gap | proximal: "
          "status, passes | s | gap | growth / proximal (s) | LP value growth / proximal |")


def _solve(job):
    path, weights, gap, limit, proximal = job
    import metricopt

    g = metricopt.read_graph(path)
    problem = metricopt.build_problem("cc", g, weights=weights)
    opts = {} if proximal else {"proximal": 0}
    res = metricopt.solve(problem, method="dykstra", gap_tol=gap, time_limit=limit,
                          threads=1, **opts)
    return dict(n=g.n, status=res.status_name, nit=res.nit, s=res.elapsed, gap=res.gap,
                fun=res.fun)


def run_case(pool, graph, weights, gap, args):
    path = data_dir(args.data_dir) / f"{graph}.txt"
    path = str(path) if path.exists() else graph
    a, b = pool.map(_solve, [(path, weights, gap, args.time_limit, p) for p in (False, True)])
    return (f"| {graph} | {a['n']} | {weights} | {gap:g} | {a['status']}, {a['nit']} | "
            f"{a['s']:.1f} | {a['gap']:.1e} | {b['status']}, {b['nit']} | {b['s']:.1f} | "
            f"{b['gap']:.1e} | {a['s'] / max(b['s'], 1e-9):.2f} | {a['fun']:.6f} / "
            f"{b['fun']:.6f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--weights", default="jaccard")
    parser.add_argument("--gaps", default="1e-4")
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    os.environ["NUMBA_NUM_THREADS"] = "1"
    import metricopt

    lines = [f"metricopt {metricopt.__version__}, python {platform.python_version()}, "
             f"{os.cpu_count()} cores (shared); one thread per run, the two runs at once", "",
             HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        for graph in args.graphs.split(","):
            for gap in (float(v) for v in args.gaps.split(",")):
                lines.append(run_case(pool, graph, args.weights, gap, args))
                print(lines[-1], flush=True)
                if args.out:
                    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
