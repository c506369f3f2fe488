"""Phases of a time-limited run: solve (and how far past the limit), rounding, refinement.

One :func:`metricopt.pipeline.run` of ``cc`` (Jaccard weights) with ``--method`` and
``--time-limit``; prints one JSON line with the seconds of each phase from its report
(``solve_seconds``, ``solver_extras.time_overrun``, ``rounding.seconds`` and its
``tries_run``, the refinement's seconds, ``compile_seconds``), the wall time after the
input was read (less the kernel loading), the bound and the rounded objective. Run it with
``PYTHONPATH`` pointing at each revision in turn, alternating, to compare them.

Run: ``python benchmarks/bench_time_limit.py GRAPH SECONDS [--method project-forget]
[--layout support] [--threads 2] [--out DIR] [--label NAME]``.
"""

import argparse
import json
import tempfile
import time
import warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--method", default="project-forget")
    ap.add_argument("--layout", default=None, help="cc layout (default: auto)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    from metricopt.pipeline import run

    stages = {}
    out = args.out or tempfile.mkdtemp()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params = {} if args.layout is None else dict(layout=args.layout)
        opts = dict(time_limit=args.seconds)
        if args.threads is not None:
            opts["threads"] = args.threads
        o = run(args.graph, "cc", method=args.method, out=out, force=True,
                problem_params=params, solver_options=opts,
                on_stage=lambda s, i: stages.setdefault(s, time.perf_counter() - t0))
    wall = time.perf_counter() - t0
    r, extras = o.report, o.report["solver_extras"]
    print(json.dumps(dict(
        label=args.label, limit=args.seconds, read=stages["read"], compile=r["compile_seconds"],
        solve=r["solve_seconds"], past_limit=extras.get("time_overrun"),
        certificate_stopped=extras.get("certificate_stopped"),
        rounding=o.rounding.get("elapsed"), tries=o.rounding.get("tries_run"),
        refine=r["rounding"]["refine"].get("seconds"),
        after_read=wall - stages["read"] - r["compile_seconds"], lower_bound=r["lower_bound"],
        rounded=r["rounded_objective"], iterations=r["iterations"], status=r["status_name"],
        layout=o.problem.structure, peak_memory=extras.get("peak_memory"))))


if __name__ == "__main__":
    main()
