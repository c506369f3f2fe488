"""Kernels compiled once per machine: compile seconds of runs 1 and 3, and pass speed, before/after.

Usage::

    python benchmarks/bench_kernel_cache.py BEFORE [AFTER] [--graphs karate,gen-2000]
        [--methods dykstra,pf-dense,...] [--runs 3] [--time-limit 2] [--no-compile]
        [--no-speed] [--repeat 3] [--threads 2]

Each revision is checked out into a temporary git worktree (AFTER defaults to the
working tree; a directory holding a checkout is used as it is;
:func:`compare_revisions.revision_trees`).

Compile table: for each revision, case and run, ``metricopt solve`` runs in a fresh
process with that revision's ``src`` first on ``PYTHONPATH`` and a numba cache of its
own per revision and case (``NUMBA_CACHE_DIR``, empty before run 1, as on a fresh
install); the table gives the report's ``compile_seconds`` (the warm-up that compiles or
loads the kernels, before the solve clock) of runs 1 and ``--runs``. Runs alternate
between the revisions. Cases: ``dykstra``, ``pf-dense`` (project-forget, dense Jaccard
``cc``), ``pf-signed`` (project-forget, signed sparse ``cc``), ``lighttouch``, ``highs``
and ``highs-lazy``, each with ``--time-limit`` seconds, on ``karate`` (its edges signed
at random, 30% negative, seed 0, for the signed case; ``--max-iter 1`` but for
``highs``) and ``gen-N``: the Slashdot-shaped
generated graph of ``N`` nodes of ``bench_signed_graphs.py`` (its largest component;
without its signs for the Jaccard cases). ``highs`` and ``highs-lazy`` solve the signed
``cc`` on ``gen-N`` (the dense LP of 2,000 nodes has 4e9 rows).

Speed table: the threaded scans on ``--threads`` threads, best of ``--repeat``, in a
fresh process per revision (alternating), after one untimed call: the dense full scan of
project-forget (``full_scan``, pruned and unpruned) and ``dense_max_violation`` on
noisy Euclidean distances of ``n`` points (``bench_pruned_scan.py``), the signed path
search (``search_cycles`` over all edges of ``generated_problem(N)`` at ``x`` = 1 on the
negative edges, 0 on the positive ones: the first oracle call of a solve; and at uniform
random ``x``, where the searches run long), and dykstra's
parallel-order triangle pass (``triangle_pass_parallel``, passes 2-4 from ``x = d``).
Each row checks that both revisions return the same output (digests).

Prints markdown tables on stdout. Only ratios within one run mean anything on a
shared machine.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from compare_revisions import revision_trees  # noqa: E402

METHODS = ("dykstra", "pf-dense", "pf-signed", "lighttouch", "highs", "highs-lazy")
#: (backend, signed input) of each case
CASES = {"dykstra": ("dykstra", False), "pf-dense": ("project-forget", False),
         "pf-signed": ("project-forget", True), "lighttouch": ("lighttouch", False),
         "highs": ("highs", False), "highs-lazy": ("highs-lazy", False)}


def write_graphs(graph, tmp):
    """``(unsigned_path, signed_path)`` edge lists of ``graph`` in ``tmp``."""
    if graph == "karate":
        from metricopt import read_graph

        g = read_graph("karate")
        edges = np.asarray(g.edges)
        signs = np.where(np.random.default_rng(0).random(len(edges)) < 0.3, -1, 1)
    else:
        from bench_signed_graphs import generated_graph

        g = generated_graph(int(graph.split("-")[1]))
        edges = np.asarray(g.edges)
        signs = np.asarray(g.weights).astype(int)
    paths = []
    for name, cols in (("unsigned", [edges]), ("signed", [edges, signs])):
        path = os.path.join(tmp, f"{graph}-{name}.txt")
        np.savetxt(path, np.column_stack(cols), fmt="%d")
        paths.append(path)
    return paths


def compile_run(src, cache, method, graph_file, out, limit):
    env = dict(os.environ, PYTHONPATH=src, NUMBA_CACHE_DIR=cache)
    backend = CASES[method][0]
    short = [] if backend == "highs" else ["--max-iter", "1"]
    proc = subprocess.run([sys.executable, "-m", "metricopt", "solve", "cc", graph_file,
                           "--method", backend, "--seed", "0", "--time-limit", str(limit),
                           *short, "--json", "--quiet", "--out", out], capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1:]
    rep = json.loads(proc.stdout)
    return float(rep["compile_seconds"]), None


def compile_table(trees, args, tmp):
    graphs = args.graphs.split(",")
    methods = args.methods.split(",")
    files = {g: write_graphs(g, tmp) for g in graphs}
    got = {}
    for run in range(1, args.runs + 1):
        for g in graphs:
            for m in methods:
                signed = CASES[m][1] or (g != "karate" and m in ("highs", "highs-lazy"))
                path = files[g][1 if signed else 0]
                for label, src in trees:
                    cache = os.path.join(tmp, f"cache-{label}-{g}-{m}")
                    os.makedirs(cache, exist_ok=True)
                    out = os.path.join(tmp, f"out-{label}-{g}-{m}-{run}")
                    sec, err = compile_run(src, cache, m, path, out, args.time_limit)
                    got[label, g, m, run] = sec
                    print(f"  run {run} {g} {m} {label}: "
                          f"{'failed ' + str(err) if sec is None else f'{sec:.2f} s'}",
                          file=sys.stderr, flush=True)
    labels = [lb for lb, _ in trees]
    last = args.runs

    def cell(v):
        return "failed" if v is None else f"{v:.2f}"

    print("| graph | case | " + " | ".join(
        f"{lb} run 1 | {lb} run {last}" for lb in labels) + " |")
    print("|---|---|" + "---:|" * (2 * len(labels)))
    for g in graphs:
        for m in methods:
            cells = " | ".join(f"{cell(got[lb, g, m, 1])} | {cell(got[lb, g, m, last])}"
                               for lb in labels)
            print(f"| {g} | {m} | {cells} |")
    print()


_SPEED = r"""
import hashlib, json, sys, time, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numba
warnings.simplefilter("ignore")
case, size, threads, repeat = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))

def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]

def best(fn):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out

if case.startswith("scan") or case == "maxviol":
    from metricopt.solvers import _pf_scan as D
    from metricopt.solvers._pf_oracles import full_scan
    from metricopt.solvers._layouts import diagonal_offsets
    n = size
    rng = np.random.default_rng(0)
    pts = rng.random((n, 2))
    off = diagonal_offsets(n)
    x = np.empty(n * (n - 1) // 2)
    for s in range(1, n):
        d = np.hypot(*(pts[s:] - pts[:-s]).T) + rng.normal(0, 1e-3, n - s)
        x[off[s]:off[s] + n - s] = d
    if case == "maxviol":
        sec, out = best(lambda: D.dense_max_violation(x, n))
        dig = repr(float(out))
    else:
        chunk = 0 if case == "scan-unpruned" else D.CHUNK
        rows = D.scan_rows(n, 16, threads)
        sec, out = best(lambda: full_scan(x, n, 1e-3, rows, chunk=chunk))
        dig = digest(out[0]) + f" {out[1]!r}"
elif case.startswith("paths"):
    from bench_signed_graphs import generated_problem
    from metricopt.solvers._cycle_search import CycleGraph, search_cycles
    prob = generated_problem(size)
    g = CycleGraph.from_problem(prob)
    if case == "paths":
        x = np.array(prob.target, dtype=np.float64)  # 1 on the negative edges, 0 elsewhere
    else:  # uniform values: long searches, many violated cycles
        x = np.random.default_rng(0).random(prob.pairs.shape[0])
    sec, out = best(lambda: search_cycles(g, x, g.edges, 1e-3, threads, 1024))
    dig = digest(out[:2]) + f" {out[2]!r}"
elif case == "dykstra":
    from metricopt.solvers._dykstra_parallel import NWORKERS, schedule, triangle_pass_parallel
    n = size
    bsize = min(64, max(8, n // 8))
    rng = np.random.default_rng(0)
    m = n * (n - 1) // 2
    x0 = rng.random(m)
    winv = np.ones(m)
    sched = schedule(n, bsize)
    def passes():
        x = x0.copy()
        cur_p = np.zeros((NWORKERS, 1024), dtype=np.int64)
        cur_v = np.zeros((NWORKERS, 1024))
        cnt = np.zeros(NWORKERS, dtype=np.int64)
        nxt_p = np.empty((NWORKERS, 1024), dtype=np.int64)
        nxt_v = np.empty((NWORKERS, 1024))
        p, v, cnt, a, s = triangle_pass_parallel(x, winv, n, bsize, cur_p, cur_v, cnt, nxt_p,
                                                 nxt_v, sched)
        t = time.perf_counter()
        for _ in range(3):
            p2, v2, cnt, a, s = triangle_pass_parallel(x, winv, n, bsize, p, v, cnt, cur_p,
                                                       cur_v, sched)
            cur_p, cur_v, p, v = p, v, p2, v2
        return time.perf_counter() - t, x
    passes()
    times = []
    for _ in range(repeat):
        sec, x = passes()
        times.append(sec)
    sec = min(times) / 3
    dig = digest([x])
print(json.dumps(dict(seconds=sec, digest=dig)))
"""


def speed_run(src, case, size, args):
    proc = subprocess.run([sys.executable, "-c", _SPEED, src, HERE, case, str(size),
                           str(args.threads), str(args.repeat)], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=os.path.join(
                              tempfile.gettempdir(), "bench-kernel-cache-" +
                              src.replace("/", "_"))))
    if proc.returncode != 0:
        raise SystemExit(f"{case} {size} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def speed_table(trees, args):
    def sizes(text):
        return [int(v) for v in text.split(",") if v]

    cases = [(c, n) for c in ("scan-unpruned", "scan-pruned", "maxviol")
             for n in sizes(args.scan_sizes)]
    cases += [(c, n) for c in ("paths", "paths-random") for n in sizes(args.path_sizes)]
    cases += [("dykstra", n) for n in sizes(args.dykstra_sizes)]
    names = {"scan-unpruned": "dense full scan, unpruned", "scan-pruned": "dense full scan, pruned",
             "maxviol": "dense_max_violation", "paths": "signed path search (all edges)",
             "paths-random": "signed path search, uniform x",
             "dykstra": "dykstra parallel pass"}
    (b_label, b_src), (a_label, a_src) = trees
    print(f"| kernel | n | {b_label} s | {a_label} s | {a_label} / {b_label} | same output |")
    print("|---|---:|---:|---:|---:|---|")
    for case, size in cases:
        before = speed_run(b_src, case, size, args)
        after = speed_run(a_src, case, size, args)
        same = "yes" if before["digest"] == after["digest"] else \
            f"no ({before['digest']} / {after['digest']})"
        print(f"| {names[case]} | {size} | {before['seconds']:.3f} | {after['seconds']:.3f} "
              f"| {after['seconds'] / before['seconds']:.2f} | {same} |", flush=True)
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--graphs", default="karate,gen-2000")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=2.0)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scan-sizes", default="1000,2000")
    ap.add_argument("--path-sizes", default="5000,20000")
    ap.add_argument("--dykstra-sizes", default="600,1000")
    args = ap.parse_args(argv)
    with revision_trees(args.before, args.after) as (before, after), \
            tempfile.TemporaryDirectory() as tmp:
        trees = [("before", os.path.join(before, "src")), ("after", os.path.join(after, "src"))]
        if not args.no_compile:
            compile_table(trees, args, tmp)
        if not args.no_speed:
            speed_table(trees, args)


if __name__ == "__main__":
    main()
