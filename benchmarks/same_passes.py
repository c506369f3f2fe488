"""Same passes on two revisions: does a refactor of the dykstra driver cost time?

Usage::

    python benchmarks/same_passes.py BEFORE_CHECKOUT [AFTER_CHECKOUT]
        [--cases sc:jazz:40,sc:USAir97:60,cc:USAir97:25] [--repeats 3]

Each checkout is a directory holding a ``src/metricopt`` tree (for example a
``git worktree add /tmp/before REV``; AFTER defaults to this repository). Every case
``KIND:GRAPH:PASSES`` runs ``solve_dykstra(problem, max_iter=PASSES)`` in a fresh process
after a three-pass warm-up, alternating the revisions, ``--repeats`` times; the table gives
the best time of each, their ratio, and whether the returned ``x`` is the same bit for bit
(SHA-1). Pick a pass count that ends before the first QP stage does (the newer code may then
polish or change gamma, and the two runs are no longer the same computation).
"""

import argparse
import json
import os
import subprocess
import sys

from _data import data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = str(data_dir())

_CHILD = r"""
import hashlib, json, os, sys, time, warnings
sys.path.insert(0, os.path.join(sys.argv[1], "src"))
warnings.simplefilter("ignore")
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.solvers.dykstra import solve_dykstra
kind, name, passes, data = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
path = os.path.join(data, name + ".txt")
problem = build_problem(kind, read_graph(path if os.path.exists(path) else name))
solve_dykstra(problem, max_iter=3)
t = time.perf_counter()
res = solve_dykstra(problem, max_iter=passes)
print(json.dumps(dict(seconds=time.perf_counter() - t, nit=res["nit"],
                      digest=hashlib.sha1(res["x"].tobytes()).hexdigest())))
"""


def run(root, kind, name, passes, data):
    out = subprocess.run([sys.executable, "-c", _CHILD, root, kind, name, str(passes), data],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after", nargs="?", default=ROOT)
    parser.add_argument("--cases", default="sc:jazz:40,sc:USAir97:60,cc:USAir97:25")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", default=DATA)
    args = parser.parse_args()
    print("| case | passes | before s | after s | after/before | same x |")
    print("|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        kind, name, passes = case.split(":")
        best = {"before": float("inf"), "after": float("inf")}
        digest = {}
        for _ in range(args.repeats):
            for label, root in (("before", args.before), ("after", args.after)):
                rec = run(root, kind, name, int(passes), args.data_dir)
                best[label] = min(best[label], rec["seconds"])
                digest[label] = rec["digest"]
        same = "yes" if digest["before"] == digest["after"] else "no"
        print(f"| {kind} {name} | {passes} | {best['before']:.3f} | {best['after']:.3f} | "
              f"{best['after'] / best['before']:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
