"""Checkpoint size and cost: the shared format against plain dense .npz, side by side.

For each case the backend runs a few iterations and writes a checkpoint; the script then
reads its state back and times, on the same arrays, one write in the current format
(mostly-zero float arrays as positions and values, JSON header) and one plain
``np.savez`` of every array dense (the layout earlier versions wrote), plus one read.
"Share at the default cadence" is one write per ``checkpoint_every`` = 60 s of solving.

Usage::

    python benchmarks/bench_checkpoint.py [--data DIR] [--repeat 3] [--quick]

``--quick`` runs each backend on the bundled karate instead (a check that the script
works, with numbers of no interest).

Prints a Markdown table on stdout.
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

import metricopt
from _data import data_dir
from metricopt.solvers._checkpoint import problem_digest, read_checkpoint, write_checkpoint
from metricopt.solvers.dykstra import solve_dykstra
from metricopt.solvers.project_forget import solve_project_forget

DEFAULT_DATA = data_dir()
CADENCE = 60.0

CASES = [
    # (label, graph file, kind, backend, iterations)
    ("dykstra sc USAir97 (n 332, dense duals + extrapolation)", "USAir97.txt", "sc", "dykstra", 30),
    ("dykstra cc jazz (n 198)", "jazz.txt", "cc", "dykstra", 20),
    ("dykstra sc jazz, sparse duals", "jazz.txt", "sc", "dykstra-sparse", 20),
    ("project-forget cc polbooks (n 105)", "polbooks.txt", "cc", "project-forget", 10),
    ("project-forget cc email (n 1133)", "email.txt", "cc", "project-forget", 3),
]
QUICK_CASES = [
    ("dykstra sc karate", "karate", "sc", "dykstra", 3),
    ("project-forget cc karate", "karate", "cc", "project-forget", 2),
]


def _run(problem, backend, iterations, path):
    if backend.startswith("dykstra"):
        opts = {"duals": "sparse"} if backend.endswith("sparse") else {}
        t0 = time.perf_counter()
        res = solve_dykstra(problem, max_iter=iterations, checkpoint=path, **opts)
        return "dykstra", res, time.perf_counter() - t0
    t0 = time.perf_counter()
    res = solve_project_forget(problem, max_iter=iterations, checkpoint=path)
    return "project-forget", res, time.perf_counter() - t0


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the bundled karate only")
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, fname, kind, backend, iterations in QUICK_CASES if args.quick else CASES:
            graph = metricopt.read_graph(fname if args.quick else str(args.data / fname))
            problem = metricopt.build_problem(kind, graph)
            path = os.path.join(tmp, "ck.npz")
            name, res, solve_s = _run(problem, backend, iterations, path)
            digest = problem_digest(problem)
            digest_s = _best(lambda: problem_digest(problem), args.repeat)
            meta, arrays = read_checkpoint(path, backend=name, problem=problem, digest=digest)
            size_new = os.path.getsize(path)
            write_s = _best(lambda: write_checkpoint(path, backend=name, problem=problem,
                                                     digest=digest, meta=meta, arrays=arrays),
                            args.repeat)
            read_s = _best(lambda: read_checkpoint(path, backend=name, problem=problem,
                                                   digest=digest), args.repeat)
            dense_path = os.path.join(tmp, "dense.npz")

            def write_dense():
                with open(dense_path, "wb") as fh:
                    np.savez(fh, **arrays)
                    fh.flush()
                    os.fsync(fh.fileno())

            dense_s = _best(write_dense, args.repeat)
            size_old = os.path.getsize(dense_path)
            per_iter = solve_s / max(int(res["nit"]), 1)
            rows.append((label, problem.n_variables, size_old, size_new, dense_s, write_s,
                         read_s, digest_s, per_iter, write_s / CADENCE))

    print("| case | pairs | dense .npz (before) | checkpoint (now) | write before / now (s) "
          "| read (s) | digest (s) | one iteration (s) | share at 60 s cadence |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (label, nvar, size_old, size_new, dense_s, write_s, read_s, digest_s, per_iter,
         share) in rows:
        print(f"| {label} | {nvar:,} | {size_old / 2**20:.1f} MiB | {size_new / 2**20:.1f} MiB "
              f"| {dense_s:.3f} / {write_s:.3f} | {read_s:.3f} | {digest_s:.4f} "
              f"| {per_iter:.3f} | {100 * share:.2f}% |")


if __name__ == "__main__":
    main()
