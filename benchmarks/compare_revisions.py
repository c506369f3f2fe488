"""Before/after table: the same cases on two git revisions, side by side in one run.

Usage::

    python benchmarks/compare_revisions.py BEFORE [AFTER] [--cases sc:jazz,cc:jazz]
        [--method dykstra] [--tol 1e-6] [--gap 1e-4] [--threads 2] [--time-limit SECONDS]

Each revision is checked out into a temporary git worktree (AFTER defaults to the working
tree; a revision that names a directory is used as a checkout as it is, so that
``compare_revisions.py . --cases cc:karate`` is a quick run of this tree alone) and every
case runs in a fresh process with that revision's ``src`` first on ``sys.path``, after a
warm-up solve that loads the numba kernels. Cases alternate between the revisions, so that a
change of machine load hits both. Prints a markdown table with iterations, status, solve
seconds, the after/before ratio, the LP value and the certified gap ``(fun - lower_bound) /
|lower_bound|`` of each. Case ``KIND:GRAPH`` (``cc`` Jaccard, ``cc-unit``, ``sc``, ``cd``;
``signed:N``, signed ``cc`` on the generated Slashdot-shaped graph of N nodes of
``bench_signed_graphs.py``) solves the problem with ``metricopt.solve`` and ``--method``
(default ``dykstra``; sparsest cut with gamma 5 and tol 1e-8 for dykstra, as in its issue),
``tol``, ``gap_tol``, ``threads`` and the backend's defaults otherwise; ``--time-limit``
stops both revisions' runs after that many seconds.
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile

from _data import data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = str(data_dir())

_CHILD = r"""
import json, math, os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import metricopt
from metricopt.io import read_graph
from metricopt.problems import build_problem
kind, name, data, method = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[6]
limit = float(sys.argv[5]) if sys.argv[5] != "none" else None
tol, gap, threads = float(sys.argv[7]), float(sys.argv[8]), int(sys.argv[9])
opts = dict(tol=tol, gap_tol=gap, threads=threads)
warnings.simplefilter("ignore")
if kind == "signed":  # a generated signed graph of NAME nodes (bench_signed_graphs.py)
    sys.path.insert(0, sys.argv[10])
    from bench_signed_graphs import generated_problem
    warm, problem = generated_problem(300), generated_problem(int(name))
else:
    path = os.path.join(data, name + ".txt")
    graph = read_graph(path if os.path.exists(path) else name)
    params = dict(weights="unit") if kind == "cc-unit" else {}
    kind = "cc" if kind == "cc-unit" else kind
    if kind == "sc" and method == "dykstra":
        opts.update(gamma=5.0, tol=1e-8)
    warm = build_problem(kind, read_graph("karate"), **params)
    problem = build_problem(kind, graph, **params)
metricopt.solve(warm, method=method, max_iter=12, threads=threads)
t = time.perf_counter()
res = metricopt.solve(problem, method=method, time_limit=limit, **opts)
sec = time.perf_counter() - t
lb = res.get("lower_bound")
lb = float(lb) if lb is not None else math.nan
print(json.dumps(dict(passes=res["nit"], seconds=sec, fun=float(res["fun"]), lower_bound=lb,
                      status=res["status_name"], violation=float(res["max_violation"]))))
"""


def run(src, kind, name, limit, args):
    out = subprocess.run([sys.executable, "-c", _CHILD, src, kind, name, DATA,
                          "none" if limit is None else str(limit), args.method, str(args.tol),
                          str(args.gap), str(args.threads), HERE], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(rev, tmp):
    if os.path.isdir(os.path.join(rev, "src", "metricopt")):  # a checkout already
        return os.path.abspath(rev)
    path = os.path.join(tmp, rev.replace("/", "_"))
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", path, rev],
                   check=True)
    return path


@contextlib.contextmanager
def revision_trees(before, after=None):
    """``(before_root, after_root)``: temporary git worktrees of the two revisions
    (``after`` None: this working tree), removed on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        trees = []
        try:
            trees.append(worktree(before, tmp))
            if after is not None:
                trees.append(worktree(after, tmp))
            yield trees[0], ROOT if after is None else trees[1]
        finally:
            for t in trees:
                if t.startswith(tmp):  # made here, not a checkout given
                    subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", t],
                                   check=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--cases", default="sc:jazz,cc:jazz")
    ap.add_argument("--method", default="dykstra")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--gap", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=None)
    args = ap.parse_args(argv)
    cases = [c.split(":") for c in args.cases.split(",")]
    with revision_trees(args.before, args.after) as (before, after):
        print(f"method {args.method}, tol {args.tol:g}, gap_tol {args.gap:g}, "
              f"threads {args.threads}\n")
        print(f"| case | before ({args.before}) iterations, status | s | after "
              f"({args.after or 'working tree'}) iterations, status | s | after / before (s) "
              "| LP value before / after | certified gap before / after |")
        print("|---|---|---|---|---|---|---|---|")
        for kind, name in cases:
            b = run(os.path.join(before, "src"), kind, name, args.time_limit, args)
            a = run(os.path.join(after, "src"), kind, name, args.time_limit, args)

            def passes(r):
                return f"{r['passes']}, {r['status']} (violation {r['violation']:.1e})"

            def gap(r):
                return (r["fun"] - r["lower_bound"]) / max(abs(r["lower_bound"]), 1e-300)

            print(f"| {kind} {name} | {passes(b)} | {b['seconds']:.2f} | {passes(a)} | "
                  f"{a['seconds']:.2f} | {a['seconds'] / b['seconds']:.3f} | "
                  f"{b['fun']:.8g} / {a['fun']:.8g} | {gap(b):.1e} / {gap(a):.1e} |",
                  flush=True)


if __name__ == "__main__":
    main()
