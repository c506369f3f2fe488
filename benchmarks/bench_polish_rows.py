"""The LP polish from a given number of active rows per column (markdown).

Usage::

    nice -n 5 python benchmarks/bench_polish_rows.py [--graphs ca-GrQc,power,celegansneural,USAir97]
        [--per-column 0.5,0.75,1,1.25,1.5,2] [--dense-cap default] [--tol 1e-4]
        [--gap-tol 1e-4] [--threads 2] [--data-dir DIR] [--out FILE]

What it measures
----------------
Per graph, Jaccard cc (``auto`` layout: support-sized for ca-GrQc and power, dense for the
small graphs) is solved with project-forget at the given tolerances until the run hands
its active rows to the polish for the first time (:meth:`metricopt.solvers.core.stage.
LPStage.try_polish`); the run stops there. The same rows are then polished once per value
of ``--per-column``: :func:`metricopt.solvers.core.polish.polish_rows` keeps the strongest
``value x columns`` rows (between its ``MIN_ROWS`` and ``MAX_ROWS``) and
:func:`metricopt.solvers.core.polish.polish` solves and separates them until its answer
meets ``tol`` and ``gap_tol``. ``--dense-cap`` does the same for the dense layout's cap on
the dual simplex iterations before the interior-point method
(:data:`metricopt.solvers.core.polish.DENSE_MAX_SIMPLEX_ITERATIONS`; ``inf``: no cap, the
budget of 0.25 per row alone; ``0``: the interior-point method from the start). The table
gives, per value, the starting rows, the rounds, the first round's seconds, the whole
polish's seconds, its status and the certified LP gap of its answer. A value marked ``*``
is the default.

The table is printed on stdout and, with ``--out``, rewritten after every graph.
Timings on a shared machine are indicative only; compare values within one graph.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from _data import data_dir

GRAPHS = "ca-GrQc,power,celegansneural,USAir97"
HEADER = ("| graph | layout | n | gamma | active rows | rows per column | dense simplex cap | "
          "start rows | rounds | round 1 s | polish s | status | certified gap |")


class _Captured(BaseException):
    """Ends the solve at its first polish, with the rows it would polish."""

    def __init__(self, problem, rows, gamma):
        super().__init__()
        self.problem, self.rows, self.gamma = problem, rows, gamma


def first_polish_rows(graph, args):
    """``(problem, active rows, gamma)`` of the first polish of the run, or None."""
    from metricopt import build_problem, read_graph, solve
    from metricopt.solvers.core import polish as P
    from metricopt.solvers.core import stage

    path = data_dir(args.data_dir) / f"{graph}.txt"
    problem = build_problem("cc", read_graph(str(path) if path.exists() else graph),
                            weights="jaccard")

    seen = {}
    original_try, original_rows, original_polish = (stage.LPStage.try_polish,
                                                    P.polish_rows, P.polish)

    def watch_try(self, active, deadline, gamma, **kwargs):
        seen["gamma"] = gamma
        return original_try(self, active, deadline, gamma, **kwargs)

    def watch_rows(problem, active, max_memory=None):
        seen["every"] = active
        return original_rows(problem, active, max_memory)

    def capture(problem, rows, **kwargs):
        if "every" not in seen:  # the kernels' warm-up on a tiny instance
            return original_polish(problem, rows, **kwargs)
        # the rows the stage logic decided to polish: the whole active set they came from
        raise _Captured(problem, seen["every"], seen["gamma"])

    stage.LPStage.try_polish, P.polish_rows, P.polish = watch_try, watch_rows, capture
    try:
        solve(problem, "project-forget", tol=args.tol, gap_tol=args.gap_tol,
              threads=args.threads)
    except _Captured as got:
        return got.problem, got.rows, got.gamma
    finally:
        stage.LPStage.try_polish, P.polish_rows, P.polish = (original_try, original_rows,
                                                             original_polish)
    return None


def polish_once(problem, rows, per_column, cap, args):
    """One polish of ``rows`` with ``per_column`` rows per column kept and the dense
    simplex cap ``cap`` (None: the default): a dict of figures."""
    from metricopt.result import Status
    from metricopt.solvers.core import polish as P
    from metricopt.solvers.core.gap import GAP_FLOOR, lp_gap, objective_scale

    name = "SUPPORT_ROWS_PER_COLUMN" if problem.structure == "support" else "ROWS_PER_COLUMN"
    default = getattr(P, name)
    setattr(P, name, per_column)
    try:
        start, why = P.polish_rows(problem, rows)
    finally:
        setattr(P, name, default)
    if start is None:
        return dict(start=0, rounds=0, first=np.nan, seconds=0.0, status=f"skipped: {why}",
                    gap=np.nan, default=per_column == default)
    rounds = []
    default_cap = P.DENSE_MAX_SIMPLEX_ITERATIONS
    if cap is not None:
        P.DENSE_MAX_SIMPLEX_ITERATIONS = cap
    t0 = time.perf_counter()
    try:
        res = P.polish(problem, start, tol=args.tol, gap_tol=args.gap_tol,
                       threads=args.threads,
                       callback=lambda *a: rounds.append(time.perf_counter()))
    finally:
        P.DENSE_MAX_SIMPLEX_ITERATIONS = default_cap
    seconds = time.perf_counter() - t0
    gap = np.nan
    if res["x"] is not None and res["lower_bound"] is not None:
        gap = lp_gap(problem.objective_value(res["x"]), res["lower_bound"],
                     GAP_FLOOR * objective_scale(problem))
    return dict(start=start.n_rows, rounds=res["rounds"],
                first=(rounds[0] - t0) if rounds else np.nan, seconds=seconds,
                status=Status.NAMES[res["status"]], gap=gap, default=per_column == default)


def run_graph(graph, args):
    got = first_polish_rows(graph, args)
    if got is None:
        return [f"| {graph} | - | - | - | - | - | - | - | - | - | ended before a polish | - |"]
    problem, rows, gamma = got
    from metricopt.solvers.core import polish as P

    out = []
    caps = [None if v == "default" else (2 ** 62 if v == "inf" else int(float(v)))
            for v in args.dense_cap.split(",")]
    if problem.structure != "dense":
        caps = [None]  # the cap is the dense layout's
    for per_column in (float(v) for v in args.per_column.split(",")):
        for cap in caps:
            r = polish_once(problem, rows, per_column, cap, args)
            mark = "*" if r["default"] else ""
            shown = P.DENSE_MAX_SIMPLEX_ITERATIONS if cap is None else cap
            cap_text = ("-" if problem.structure != "dense" else
                        "none" if shown >= 2 ** 62 else f"{shown:,}")
            cap_text += "*" if problem.structure == "dense" and shown == \
                P.DENSE_MAX_SIMPLEX_ITERATIONS else ""
            out.append(f"| {graph} | {problem.structure} | {problem.n} | {gamma:g} | "
                       f"{rows.n_rows:,} | {per_column:g}{mark} | {cap_text} | "
                       f"{r['start']:,} | {r['rounds']} | {r['first']:.1f} | "
                       f"{r['seconds']:.1f} | {r['status']} | {r['gap']:.1e} |")
            print(out[-1], file=sys.stderr)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--per-column", default="0.5,0.75,1,1.25,1.5,2")
    parser.add_argument("--dense-cap", default="default",
                        help="comma-separated DENSE_MAX_SIMPLEX_ITERATIONS values (inf, 0, "
                             "or 'default')")
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--gap-tol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import metricopt

    lines = [f"metricopt {metricopt.__version__}, python {platform.python_version()}, "
             f"numpy {np.__version__}, {os.cpu_count()} cores (shared), {args.threads} threads, "
             f"tol {args.tol:g}, gap_tol {args.gap_tol:g}", "", HEADER,
             "|" + "---|" * (HEADER.count("|") - 1)]
    for graph in args.graphs.split(","):
        start = time.perf_counter()
        lines.extend(run_graph(graph, args))
        print(f"{graph}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
