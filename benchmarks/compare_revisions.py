"""Before/after table: the same dykstra cases on two git revisions, side by side in one run.

Usage::

    python benchmarks/compare_revisions.py BEFORE [AFTER] [--cases sc:jazz,cc:jazz]
        [--time-limit SECONDS]

Each revision is checked out into a temporary git worktree (AFTER defaults to the working
tree) and every case runs in a fresh process with that revision's ``src`` first on
``sys.path``, after a warm-up solve that loads the numba kernels. Cases alternate between
the revisions, so that a change of machine load hits both. Prints a markdown table with
passes, solve seconds and the after/before ratio. Case ``KIND:GRAPH`` solves the problem
with the issue's parameters (sc: gamma 5, lambda 1/n, tol 1e-8; cc: Jaccard, tol 1e-6;
gap 1e-4) and the backend's defaults otherwise; ``--time-limit`` stops both revisions'
runs after that many seconds (such rows say "limit").
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.environ.get("METRICOPT_DATA", "/work/shared/data")

_CHILD = r"""
import json, os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
from metricopt.io import read_graph
from metricopt.problems import build_problem
from metricopt.solvers.dykstra import solve_dykstra
kind, name, data = sys.argv[2], sys.argv[3], sys.argv[4]
limit = float(sys.argv[5]) if sys.argv[5] != "none" else None
path = os.path.join(data, name + ".txt")
graph = read_graph(path if os.path.exists(path) else name)
opts = dict(gamma=5.0, tol=1e-8) if kind == "sc" else dict(tol=1e-6)
warnings.simplefilter("ignore")
solve_dykstra(build_problem(kind, read_graph("karate")), max_iter=12)
problem = build_problem(kind, graph)
t = time.perf_counter()
res = solve_dykstra(problem, gap_tol=1e-4, time_limit=limit, **opts)
sec = time.perf_counter() - t
print(json.dumps(dict(passes=res["nit"], seconds=sec, fun=float(res["fun"]),
                      status="limit" if res["status"] == 1 else str(res["status"]),
                      violation=float(res["max_violation"]))))
"""


def run(src, kind, name, limit=None):
    out = subprocess.run([sys.executable, "-c", _CHILD, src, kind, name, DATA,
                          "none" if limit is None else str(limit)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(rev, tmp):
    path = os.path.join(tmp, rev.replace("/", "_"))
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", path, rev],
                   check=True)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--cases", default="sc:jazz,cc:jazz")
    ap.add_argument("--time-limit", type=float, default=None)
    args = ap.parse_args(argv)
    cases = [c.split(":") for c in args.cases.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        trees = []
        try:
            trees.append(worktree(args.before, tmp))
            after = ROOT if args.after is None else worktree(args.after, tmp)
            if args.after is not None:
                trees.append(after)
            print(f"| case | before ({args.before}) passes | s | after ({args.after or 'working tree'}) "
                  "passes | s | after / before (s) | LP value before / after |")
            print("|---|---|---|---|---|---|---|")
            for kind, name in cases:
                b = run(os.path.join(trees[0], "src"), kind, name, args.time_limit)
                a = run(os.path.join(after, "src"), kind, name, args.time_limit)

                def passes(r):
                    return f"{r['passes']}" + (" (limit)" if r["status"] == "limit" else "")

                print(f"| {kind} {name} | {passes(b)} | {b['seconds']:.2f} | {passes(a)} | "
                      f"{a['seconds']:.2f} | {a['seconds'] / b['seconds']:.3f} | "
                      f"{b['fun']:.6g} / {a['fun']:.6g} |", flush=True)
        finally:
            for t in trees:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", t],
                               check=False)


if __name__ == "__main__":
    main()
