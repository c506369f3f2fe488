"""The support-sized cc layout against the dense one, and alone beyond the dense wall (markdown).

Usage::

    nice -n 5 python benchmarks/bench_support.py [--equality GRAPHS] [--large GRAPHS]
        [--weights jaccard,unit] [--tol 1e-4] [--gap-tol 1e-4] [--time-limit 1800]
        [--dense GRAPHS] [--threads 2] [--data-dir DIR] [--out FILE] [--quick]

What it measures
----------------
*Equality* (``--equality``, graphs read as usual: largest component): for each graph
and weight mode, :func:`metricopt.solve` with ``method="project-forget"`` on the dense
problem and on the support-sized one (``layout="support"``), at ``tol = 1e-8`` and
``gap_tol = 1e-9`` so that both end at the LP optimum; the relative differences of the
LP values and of the certified bounds, both statuses, the pairs each stores and the
seconds of each (side by side in one process, one after the other).

*Large graphs* (``--large``; those also in ``--dense`` once more with the dense layout,
side by side): one fresh process per graph, weight mode and layout, so that its
peak memory is its own (``community-N``: the seeded com-Amazon-shaped graph of
:func:`metricopt.datasets.community_graph` with ``N`` nodes before its largest component
is taken): read, build with ``layout="support"``, solve with the defaults
(``--tol``, ``--gap-tol``) with project-forget (what ``auto`` picks for the support-sized
layout; the dense rows with the same backend), and report status, LP value,
certified bound and gap, violation, oracle calls, the run's pairs at the end (all pairs for
the dense layout), peak resident memory and bytes per run pair (the peak less the resident
memory before the problem was built, over the run pairs), and the seconds of
reading and building, of the solve, and of its certificates and polish.

The table is printed on stdout and, with ``--out``, rewritten after every row.
Timings on a shared machine are indicative only.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from _data import data_dir

EQUALITY = "karate,dolphins,lesmis,football,polbooks,adjnoun,jazz,netscience,USAir97"
LARGE = "ca-GrQc,power,ca-HepTh,ca-HepPh,ca-AstroPh,ca-CondMat"
EQ_HEADER = ("| graph | weights | n | dense LP | rel. diff LP | rel. diff bound | status dense / "
             "support | stored pairs dense / support | dense s | support s |")
LARGE_HEADER = ("| graph | weights | layout | n | m | status | LP value | bound | gap | violation | "
                "oracle calls | run pairs | peak RSS | bytes / run pair | build s | solve s | "
                "certificate s | polish s |")


def _source(name, data_dir):
    path = data_dir / f"{name}.txt"
    return str(path) if path.exists() else name


def _read(name, data_dir):
    from metricopt.datasets import community_graph, load_bundled
    from metricopt.io import read_graph

    if name.startswith("community-"):  # a seeded com-Amazon-shaped graph of that many nodes
        return community_graph(int(name.split("-", 1)[1]), seed=0)
    path = data_dir / f"{name}.txt"
    return read_graph(str(path)) if path.exists() else load_bundled(name)


def equality_row(name, weights, args):
    import warnings

    from metricopt import solve
    from metricopt.problems import build_problem

    g = _read(name, data_dir(args.data_dir))
    opts = dict(method="project-forget", tol=1e-8, gap_tol=1e-9, threads=args.threads,
                time_limit=args.time_limit)
    out = {}
    for layout in ("dense", "support"):
        p = build_problem("cc", g, weights=weights, layout=layout)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = solve(p, **opts)
        out[layout] = (r, time.perf_counter() - t0)
    (rd, td), (rs, ts) = out["dense"], out["support"]

    def rel(a, b):
        return abs(a - b) / max(abs(a), 1e-300)

    return (f"| {name} | {weights} | {g.n} | {rd['fun']:.10g} | {rel(rd['fun'], rs['fun']):.1e} | "
            f"{rel(rd['lower_bound'], rs['lower_bound']):.1e} | {rd['status_name']} / "
            f"{rs['status_name']} | {g.n * (g.n - 1) // 2:,} / {rs['support_pairs']:,} | "
            f"{td:.2f} | {ts:.2f} |")


def large_child(name, weights, args):
    """One large case, in this (fresh) process; prints one JSON line."""
    import resource
    import warnings

    from metricopt import solve
    from metricopt.problems import build_problem

    scale = 1 if sys.platform == "darwin" else 1024
    t0 = time.perf_counter()
    g = _read(name, data_dir(args.data_dir))
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale  # before the problem
    p = build_problem("cc", g, weights=weights, layout=args.layout)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()

    def progress(rec):
        gap = rec.get("gap") or float("nan")
        print(f"{name} {weights}: call {rec['iteration']} {rec['seconds']:.1f} s violation "
              f"{rec['max_violation']:.2e} gap {gap:.2e} remembered {rec.get('remembered', 0):,} "
              f"pairs {rec.get('support_pairs', 0):,} gamma {rec['gamma']:g}", file=sys.stderr,
              flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(p, method="project-forget", tol=args.tol, gap_tol=args.gap_tol,
                  threads=args.threads, time_limit=args.time_limit, callback=progress)
    t_solve = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    print(json.dumps(dict(
        graph=name, weights=weights, n=g.n, m=g.m, status=r["status_name"], fun=r["fun"],
        bound=r["lower_bound"], gap=r["gap"], violation=r["max_violation"], nit=r["nit"],
        pairs=r.get("support_pairs") or g.n * (g.n - 1) // 2, peak=peak, base=base, layout=args.layout,
        build=t_build, solve=t_solve,
        certify=r.get("certify_seconds", 0.0), polish=r.get("polish_seconds", 0.0),
        method=r["method"])))


def large_row(name, weights, args, layout="support"):
    cmd = [sys.executable, __file__, "--child", f"{name}:{weights}", "--layout", layout,
           "--tol", str(args.tol),
           "--gap-tol", str(args.gap_tol), "--threads", str(args.threads), "--time-limit",
           str(args.time_limit)]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        return f"| {name} | {weights} | failed: {tail[0]} |"
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    gib = d["peak"] / 2**30
    per = (d["peak"] - d["base"]) / max(d["pairs"] or 1, 1)
    bound = "-" if d["bound"] is None else f"{d['bound']:.8g}"
    return (f"| {name} | {weights} | {layout} | {d['n']:,} | {d['m']:,} | {d['status']} | {d['fun']:.8g} | "
            f"{bound} | {d['gap']:.1e} | {d['violation']:.1e} | {d['nit']} | {d['pairs']:,} | "
            f"{gib:.2f} GiB | {per:.0f} | {d['build']:.1f} | {d['solve']:.1f} | "
            f"{d['certify']:.1f} | {d['polish']:.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--equality", default=EQUALITY, help="graphs of the equality table ('' for none)")
    ap.add_argument("--large", default=LARGE, help="graphs of the large table ('' for none)")
    ap.add_argument("--weights", default="jaccard,unit")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--gap-tol", type=float, default=1e-4)
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true", help="karate only, no large table")
    ap.add_argument("--dense", default="", help="graphs of the large table also solved with "
                                                 "the dense layout, side by side")
    ap.add_argument("--layout", default="support", help=argparse.SUPPRESS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        name, weights = args.child.split(":")
        large_child(name, weights, args)
        return 0
    if args.quick:
        args.equality, args.large = "karate", ""
    weights = [w for w in args.weights.split(",") if w]
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores; threads {args.threads}.", ""]

    def flush():
        text = "\n".join(lines)
        if args.out:
            Path(args.out).write_text(text + "\n")

    if args.equality:
        lines += ["Equality (tol 1e-8, gap_tol 1e-9, project-forget on both layouts):", "",
                  EQ_HEADER, "|" + "---|" * (EQ_HEADER.count("|") - 1)]
        for name in args.equality.split(","):
            for w in weights:
                lines.append(equality_row(name, w, args))
                print(lines[-1], file=sys.stderr, flush=True)
                flush()
        lines.append("")
    if args.large:
        lines += [f"Large graphs (layout support, tol {args.tol:g}, gap_tol {args.gap_tol:g}, "
                  f"time limit {args.time_limit:g} s):", "", LARGE_HEADER,
                  "|" + "---|" * (LARGE_HEADER.count("|") - 1)]
        for name in args.large.split(","):
            for w in weights:
                for layout in ("support", "dense") if name in args.dense.split(",") \
                        else ("support",):
                    lines.append(large_row(name, w, args, layout))
                    print(lines[-1], file=sys.stderr, flush=True)
                    flush()
    flush()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
