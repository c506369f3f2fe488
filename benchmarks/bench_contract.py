"""Does every run meet the contract? Bundled graphs x problems x backends x tolerances.

Usage::

    python benchmarks/bench_contract.py [--before REV] [--graphs karate,dolphins]
        [--kinds cc,cc-unit,sc,cd] [--methods dykstra,project-forget,lighttouch]
        [--gaps 1e-2,1e-4,1e-6] [--time-limit 120] [--threads 2] [--jobs 1] [--quick]

Every combination is solved by ``metricopt.solve`` in a fresh process (the kernels
loaded first, outside the clock) with ``gap_tol`` from ``--gaps`` and the backend's
default ``tol``, except ``gap_tol`` 1e-6, which runs with ``tol`` 1e-8 (the redesign
issue's tight setting); ``--time-limit`` stops a run. The table lists, per combination,
the status, seconds, iterations, certified gap and violation, and whether the answer
meets the contract (``optimal``, with what ended it: the QP ``stages``, the ``polish``
or a ``rounding`` within gap_tol of the bound); a run that is not ``optimal`` is a *stall* (a limit
reached, a stall, numerical trouble) unless it was refused before it started. With
``--before REV`` each combination also runs on that git revision (or checkout
directory), side by side in one run, and the counts of stalls are compared. ``--jobs N``
runs N combinations at once (each its own process with ``--threads`` threads; the table
keeps its order); seconds are then measured under that load. ``--quick``
runs karate, cc, dykstra and project-forget at gap_tol 1e-4 only. A graph named
``gen:ba-N-M``, ``gen:plc-N`` or ``gen:gnp-N`` is a seeded random graph (networkx:
Barabasi-Albert with ``M`` edges per node, powerlaw-cluster with 2 edges and triangle
probability 0.3, G(n, p) with p = 0.035; seed 1; its largest component).
"""

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _data import data_dir  # noqa: E402
from compare_revisions import ROOT, revision_trees  # noqa: E402

DATA = str(data_dir())
#: The bundled graphs of at most 500 nodes (largest component), smallest first.
GRAPHS = ("karate", "dolphins", "lesmis", "polbooks", "adjnoun", "football", "jazz",
          "celegansneural", "USAir97", "netscience", "celegans_metabolic", "Harvard500")

_CHILD = r"""
import json, math, os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import metricopt
kind, name, data, method = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
gap_tol, limit, threads = float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
warnings.simplefilter("ignore")
params = dict(weights="unit") if kind == "cc-unit" else {}
kind = "cc" if kind == "cc-unit" else kind
path = os.path.join(data, name + ".txt")
if name.startswith("gen:"):  # a seeded random graph: gen:ba-N-M, gen:plc-N, gen:gnp-N
    import networkx as nx
    gen, n, *more = name[4:].split("-")
    n = int(n)
    make = dict(ba=lambda: nx.barabasi_albert_graph(n, int(more[0]), seed=1),
                plc=lambda: nx.powerlaw_cluster_graph(n, 2, 0.3, seed=1),
                gnp=lambda: nx.gnp_random_graph(n, 0.035, seed=1))[gen]
    graph = metricopt.read_graph(make())
else:
    graph = metricopt.read_graph(path if os.path.exists(path) else name)
try:
    problem = metricopt.build_problem(kind, graph, **params)
    warm = metricopt.build_problem(kind, metricopt.read_graph("karate"), **params)
    metricopt.solve(warm, method=method, max_iter=3, threads=threads)
    opts = dict(gap_tol=gap_tol, threads=threads, time_limit=limit)
    if gap_tol <= 1e-6:
        opts["tol"] = 1e-8
    t = time.perf_counter()
    res = metricopt.solve(problem, method=method, **opts)
    sec = time.perf_counter() - t
except Exception as exc:  # refused before it starts (unsupported, memory)
    print(json.dumps(dict(status="refused", reason=f"{type(exc).__name__}: {exc}"[:120])))
    raise SystemExit(0)
gap = res.get("gap")
msg = res.get("message", "")
ended = ("rounding" if ("rounded clustering" in msg or "rounded cut" in msg)
         else "polish" if "x from the LP on" in msg else "stages")
print(json.dumps(dict(status=res["status_name"], seconds=sec, nit=res["nit"], ended=ended,
                      gap=None if gap is None else float(gap),
                      violation=float(res["max_violation"]), fun=float(res["fun"]))))
"""


def run(src, kind, name, method, gap, args):
    out = subprocess.run([sys.executable, "-c", _CHILD, src, kind, name, DATA, method,
                          str(gap), str(args.time_limit), str(args.threads)],
                         capture_output=True, text=True, timeout=args.time_limit * 3 + 300)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        return dict(status="error", reason=(out.stderr.strip().splitlines() or ["?"])[-1][:120])
    return json.loads(lines[-1])


def cell(r):
    if r["status"] in ("refused", "error"):
        return f"{r['status']}: {r['reason']}"
    how = f" ({r['ended']})" if r["status"] == "optimal" and "ended" in r else ""
    return (f"{r['status']}{how}, {r['seconds']:.1f} s, {r['nit']} it, gap {r['gap']:.1e}, "
            f"viol {r['violation']:.1e}")


def stalled(r):
    return r["status"] not in ("optimal", "refused")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=None)
    ap.add_argument("--graphs", default=",".join(GRAPHS))
    ap.add_argument("--kinds", default="cc,cc-unit,sc,cd")
    ap.add_argument("--methods", default="dykstra,project-forget,lighttouch")
    ap.add_argument("--gaps", default="1e-2,1e-4,1e-6")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.graphs, args.kinds, args.gaps = "karate", "cc", "1e-4"
        args.methods, args.time_limit = "dykstra,project-forget", 60.0
    combos = [(g, k, m, float(gap)) for g in args.graphs.split(",")
              for k in args.kinds.split(",") for m in args.methods.split(",")
              for gap in args.gaps.split(",")]
    with revision_trees(args.before, None) if args.before else _here() as trees:
        before, after = trees
        head = "| graph | problem | method | gap_tol |"
        head += " before |" if before else ""
        print(f"time limit {args.time_limit:g} s, {args.threads} threads\n")
        print(head + " after |")
        print("|---" * (head.count("|") + 0) + "|")
        stalls = [0, 0]

        def both(combo):
            g, k, m, gap = combo
            b = run(os.path.join(before, "src"), k, g, m, gap, args) if before else None
            return b, run(os.path.join(after, "src"), k, g, m, gap, args)

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for (g, k, m, gap), (b, a) in zip(combos, pool.map(both, combos)):
                row = f"| {g} | {k} | {m} | {gap:g} |"
                if before:
                    stalls[0] += stalled(b)
                    row += f" {cell(b)} |"
                stalls[1] += stalled(a)
                print(row + f" {cell(a)} |", flush=True)
        print("\nruns not optimal (not refused): "
              + (f"before {stalls[0]}, " if before else "") + f"after {stalls[1]} "
              f"of {len(combos)}")


class _here:
    def __enter__(self):
        return None, ROOT

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
