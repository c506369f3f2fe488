"""Start-up costs: ``--help``, and each backend's kernels on an empty and a warm cache.

For every backend, ``metricopt solve cc karate`` runs in a fresh process twice: first
with an empty numba cache (``NUMBA_CACHE_DIR`` pointing at a new directory, as on a
fresh install), then again with the cache that run filled. The table gives the report's
``compile_seconds`` (kernels compiled or loaded by the warm-up, before the solve clock),
``solve_seconds``, the rest of the run (reading, rounding and its kernels, writing) and
the process's wall time. ``--help`` is timed as the median of several fresh processes.

Usage::

    python benchmarks/bench_startup.py [--repeat 7] [--methods highs,dykstra,...] [--quick]

``--quick`` skips the empty-cache runs (each compiles every kernel it needs, about a
minute) and runs each method once with numba's usual cache: a check that the script works.

Prints Markdown tables on stdout.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METHODS = ("highs", "highs-lazy", "dykstra", "project-forget")


def _run(args, env):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "metricopt", *args], capture_output=True,
                          text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"metricopt {' '.join(args)} failed: {proc.stderr.strip()}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--problem", default="cc")
    ap.add_argument("--graph", default="karate")
    ap.add_argument("--quick", action="store_true",
                    help="no empty-cache runs: each method once with numba's usual cache")
    args = ap.parse_args()

    env = dict(os.environ)
    helps = [_run(["--help"], env) for _ in range(args.repeat)]
    print(f"`metricopt --help`: median {statistics.median(helps):.3f} s "
          f"(min {min(helps):.3f}, max {max(helps):.3f}; {args.repeat} fresh processes)\n")

    print(f"| method ({args.problem} {args.graph}) | numba cache | compile_seconds "
          f"| solve_seconds | rest of run | process wall |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            cache = Path(tmp) / f"cache-{method}"
            cache.mkdir()
            run_env = env if args.quick else dict(env, NUMBA_CACHE_DIR=str(cache))
            for label in ("usual",) if args.quick else ("empty", "warm"):
                out = Path(tmp) / f"run-{method}-{label}"
                wall = _run(["solve", args.problem, args.graph, "--method", method,
                             "--seed", "0", "--quiet", "--out", str(out)], run_env)
                rep = json.loads((out / "report.json").read_text())
                comp, solve, total = (rep["compile_seconds"], rep["solve_seconds"],
                                      rep["total_seconds"])
                print(f"| {method} | {label} | {comp:.2f} | {solve:.3f} "
                      f"| {total - comp - solve:.2f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()
