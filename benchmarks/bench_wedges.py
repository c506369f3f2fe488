"""The open-wedge LP beside the full LP of unit-weight correlation clustering (markdown).

Usage::

    python benchmarks/bench_wedges.py [--graphs ca-GrQc,ca-HepTh,polblogs,SmaGri,Roget]
        [--time-limit 600] [--threads 2] [--data-dir DIR] [--out FILE]

For every graph, three runs, each in a fresh process through ``bench_lp.py --one``
(same options, same measurement: solve seconds without compilation, peak RSS of the
process from ``os.wait4``): the full LP (``cc --weights unit``, ``method="auto"``, which
picks ``highs-lazy``), and the open-wedge LP (``--relaxation wedges``, the STC+ LP of
Veldt, ICML 2022) with ``highs`` (every row at once) and with ``highs-lazy`` (the most
violated row per pair each round). Targets: certified gap 1e-6, violation 1e-9. One
table: the wedge LP's certified bound and time next to the full LP's value and time,
their ratios, and each run's memory estimate over its measured peak.

Published (Veldt 2022, Gurobi, lazy constraints): full LP ca-GrQc 80.9 s, ca-HepTh
625.5 s; STC+ LP 16 s and 65 s.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_lp  # noqa: E402  (the runner of one case in a fresh process)

GRAPHS = "ca-GrQc,ca-HepTh,polblogs,SmaGri,Roget"
#: column label -> (case kind, bench_lp method)
RUNS = {
    "full": ("cc-unit", "auto"),
    "wedge highs": ("cc-wedges", "highs-simplex"),
    "wedge lazy": ("cc-wedges", "highs-lazy"),
}


def _run(graph, label, args):
    kind, method = RUNS[label]
    case = dict(kind=kind, graph=graph, gap=1e-6, violation=1e-9, limit=args.time_limit)
    rec = bench_lp.run_child(case, method, args.threads, args.data_dir,
                             1.5 * args.time_limit + 180)
    return bench_lp.complete(rec, case, method)


def _cell(rec, spec=".2f"):
    if rec["status"] != "optimal":
        return f"{rec['status']}"
    return bench_lp._f(rec.get("seconds"), spec)


def _mem(rec):
    est, peak = rec.get("memory_estimate"), rec.get("peak_rss")
    if not est or not peak:
        return "-"
    return f"{est / 2**30:.2f} / {peak / 2**30:.2f} ({est / peak:.2f})"


def table(rows):
    out = ["| graph | full LP value | full LP s | wedge LP bound | wedge s (highs) | "
           "wedge s (highs-lazy) | bound / LP | full s / best wedge s | "
           "memory est / peak GiB: full; wedge highs; wedge lazy |",
           "|---|---|---|---|---|---|---|---|---|"]
    for graph, recs in rows:
        full, wh, wl = recs["full"], recs["wedge highs"], recs["wedge lazy"]
        bound = max((r["lower_bound"] for r in (wh, wl) if r.get("lower_bound") is not None),
                    default=None)
        ratio = None if bound is None or not full.get("fun") else bound / full["fun"]
        times = [r["seconds"] for r in (wh, wl) if r["status"] == "optimal"]
        speed = (None if not times or full["status"] != "optimal"
                 else full["seconds"] / min(times))
        out.append(f"| {graph} | {bench_lp._f(full.get('fun'), '.10g')} | {_cell(full)} | "
                   f"{bench_lp._f(bound, '.10g')} | {_cell(wh)} | {_cell(wl)} | "
                   f"{bench_lp._f(ratio, '.6f')} | {bench_lp._f(speed, '.2f')} | "
                   f"{_mem(full)}; {_mem(wh)}; {_mem(wl)} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=GRAPHS, help=f"comma-separated (default: {GRAPHS})")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default=bench_lp.DATA)
    ap.add_argument("--out", default=None, help="also write the markdown to this file")
    args = ap.parse_args(argv)
    args.highs_lazy = False
    info = bench_lp.machine_info(args)
    print(info, file=sys.stderr, flush=True)
    rows = []
    for graph in filter(None, (g.strip() for g in args.graphs.split(","))):
        recs = {}
        for label in RUNS:
            recs[label] = rec = _run(graph, label, args)
            print(f"{graph} {label}: {rec['status']}, {bench_lp._f(rec.get('seconds'), '.2f')} s, "
                  f"fun {bench_lp._f(rec.get('fun'), '.10g')}, LB "
                  f"{bench_lp._f(rec.get('lower_bound'), '.10g')}, memory {_mem(rec)}",
                  file=sys.stderr, flush=True)
        rows.append((graph, recs))
        text = f"{info}\n\n{table(rows)}\n"
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(text)
    print(f"{info}\n\n{table(rows)}")


if __name__ == "__main__":
    main()
