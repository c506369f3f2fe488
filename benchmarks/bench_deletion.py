"""Cluster deletion: certified ratio of the default run and of ``--relaxation editing`` (markdown).

Usage::

    python benchmarks/bench_deletion.py [--graphs karate,dolphins,...,Vassar85]
        [--seed 0] [--time-limit S] [--threads 2] [--data-dir DIR] [--out FILE]

What it measures
----------------
Per graph (its largest component, as ``metricopt solve cd`` reads it), one process each,
both runs side by side:

* before: :func:`metricopt.pipeline.run` of ``cd`` at the defaults (seeded): the LP
  value, its certified bound ``LB``, the returned (refined) clustering and its certified
  ratio ``clustering / LB``;
* after: the same run with ``relaxation="editing"``: the deletion bound (the LP with the
  neighbourhood independent-set rows, :mod:`metricopt.solvers.deletion_lp`; with
  ``--time-limit``, at most that many seconds), how its LP stopped, its rounds and rows,
  the rounding of its point, and the certified ratio ``clustering / max(LB, bound)``;
* the seconds of each run (the "after" run includes the whole "before" work).

The table is printed on stdout and, with ``--out``, rewritten after every graph.
Timings on a shared machine are indicative only.
"""

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from _data import data_dir

GRAPHS = "karate,dolphins,lesmis,football,jazz,netscience,USAir97,email,polblogs,Vassar85"
HEADER = ("| graph | n | m | LP = LB | clustering before | ratio before | deletion bound | "
          "LP stopped (rounds, rows) | clustering after | ratio after | before s | after s | "
          "bound s |")


def _child(source, editing, seed, time_limit, threads):
    """One run in this process; prints its numbers as one JSON line."""
    import warnings

    from metricopt import pipeline
    from metricopt.solvers import deletion_lp

    seen = {}
    real = deletion_lp.cluster_deletion_bound

    def bound(*args, **kwargs):
        res = real(*args, **kwargs)
        seen.update(rounds=res.rounds, rows=res.rows, stopped=res.stopped)
        return res

    deletion_lp.cluster_deletion_bound = bound
    params = {"relaxation": "editing"} if editing else {}
    options = {"seed": seed, "threads": threads}
    if time_limit is not None:
        options["time_limit"] = time_limit
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pipeline.run(source, "cd", problem_params=params, solver_options=options,
                           rounding={"seed": seed})
    rep = out.report
    print(json.dumps(dict(n=rep["graph"]["n"], m=rep["graph"]["m"], lp=rep["lp_value"],
                          lb=rep["lower_bound"], clustering=rep["rounded_objective"],
                          ratio=rep["approximation_ratio"], editing=rep["editing"],
                          seconds=time.perf_counter() - t0, **seen)))


def _run(source, editing, args):
    cmd = [sys.executable, __file__, "--child", source, "--seed", str(args.seed),
           "--threads", str(args.threads)]
    if editing:
        cmd.append("--editing")
    if args.time_limit is not None:
        cmd += ["--time-limit", str(args.time_limit)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{source}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def row(graph, args):
    path = data_dir(args.data_dir) / f"{graph}.txt"
    source = str(path) if path.exists() else graph
    before = _run(source, False, args)
    after = _run(source, True, args)
    ed = after["editing"]
    return (f"| {graph} | {before['n']:,} | {before['m']:,} | {before['lb']:.1f} | "
            f"{before['clustering']:.0f} | {before['ratio']:.4f} | {ed['bound']:,} | "
            f"{after['stopped']} ({after['rounds']}, {after['rows']:,}) | "
            f"{after['clustering']:.0f} | {after['ratio']:.4f}"
            f"{' (optimal)' if ed['exact'] else ''} | {before['seconds']:.1f} | "
            f"{after['seconds']:.1f} | {ed['seconds']:.1f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--editing", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child, args.editing, args.seed, args.time_limit, args.threads)
        return
    lines = [f"Python {platform.python_version()}, seed {args.seed}, threads {args.threads}, "
             f"time limit {args.time_limit}", "", HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    print("\n".join(lines), flush=True)
    for graph in args.graphs.split(","):
        line = row(graph, args)
        lines.append(line)
        print(line, flush=True)
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
